//! SVG → PDF with svg2pdf, text kept as text (DejaVu Sans embedded as a subset).

use crate::error::ReportError;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use svg2pdf::usvg::{self, fontdb};

fn font_db() -> Arc<fontdb::Database> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_data(dejavu::sans::regular().to_vec());
        db.load_font_data(dejavu::sans::bold().to_vec());
        db.set_sans_serif_family("DejaVu Sans");
        Arc::new(db)
    })
    .clone()
}

/// Convert the SVG text `svg` to a one-page PDF at `out`.
pub fn svg_to_pdf(svg: &str, out: &Path) -> Result<(), ReportError> {
    let figure = out.display().to_string();
    let opts = usvg::Options {
        fontdb: font_db(),
        font_family: "DejaVu Sans".into(),
        ..Default::default()
    };
    let tree = usvg::Tree::from_str(svg, &opts).map_err(|e| ReportError::Draw {
        figure: figure.clone(),
        message: e.to_string(),
    })?;
    let pdf = svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions::default(),
    )
    .map_err(|e| ReportError::Draw {
        figure: figure.clone(),
        message: format!("{e:?}"),
    })?;
    std::fs::write(out, pdf).map_err(|e| ReportError::io(out, e))
}
