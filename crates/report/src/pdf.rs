//! SVG → PDF with svg2pdf, text kept as text (DejaVu Sans embedded as a subset).

use crate::error::ReportError;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use svg2pdf::usvg::{self, fontdb};

/// The font database shared by every PDF: DejaVu Sans (regular, bold) and Sans Mono.
pub(crate) fn font_db() -> Arc<fontdb::Database> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_data(dejavu::sans::regular().to_vec());
        db.load_font_data(dejavu::sans::bold().to_vec());
        db.load_font_data(dejavu::sans_mono::regular().to_vec());
        db.set_monospace_family("DejaVu Sans Mono");
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

/// One page converted: its svg2pdf chunk, the chunk's XObject and the page size.
type ConvertedPage = (pdf_writer::Chunk, pdf_writer::Ref, (f32, f32));

/// Convert one SVG page into a PDF chunk (text kept as text); `label` names it in errors.
fn convert_page(
    svg: &str, opts: &usvg::Options, label: &str,
) -> Result<ConvertedPage, ReportError> {
    let err = |message: String| ReportError::Draw {
        figure: label.to_string(),
        message,
    };
    let tree = usvg::Tree::from_str(svg, opts).map_err(|e| err(e.to_string()))?;
    let (chunk, svg_ref) = svg2pdf::to_chunk(&tree, svg2pdf::ConversionOptions::default())
        .map_err(|e| err(format!("{e:?}")))?;
    let size = tree.size();
    Ok((chunk, svg_ref, (size.width(), size.height())))
}

/// Assemble SVG pages (A4, 595 × 842 pt user units) into one PDF at `out`: each page is
/// converted by svg2pdf into a form XObject (text kept as text) — the pages side by side
/// on the machine's cores — and drawn full-page.
pub fn pages_to_pdf(pages: &[String], out: &Path) -> Result<(), ReportError> {
    use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref};
    let figure = out.display().to_string();
    let opts = usvg::Options {
        fontdb: font_db(),
        font_family: "DejaVu Sans".into(),
        ..Default::default()
    };
    let numbered: Vec<(usize, &String)> = pages.iter().enumerate().collect();
    let converted = crate::in_parallel(&numbered, |(k, svg)| {
        convert_page(svg, &opts, &format!("{figure} page {}", k + 1))
    });
    let mut alloc = Ref::new(1);
    let catalog_id = alloc.bump();
    let tree_id = alloc.bump();
    let mut pdf = Pdf::new();
    let mut page_ids = Vec::new();
    let mut chunks = Vec::new();
    for page in converted {
        let (chunk, svg_ref, (width, height)) = page?;
        let mut map = std::collections::HashMap::new();
        let chunk = chunk.renumber(|old| *map.entry(old).or_insert_with(|| alloc.bump()));
        let svg_id = map
            .get(&svg_ref)
            .copied()
            .ok_or_else(|| ReportError::Draw {
                figure: figure.clone(),
                message: "svg2pdf chunk lost its XObject".into(),
            })?;
        let page_id = alloc.bump();
        let content_id = alloc.bump();
        let mut content = Content::new();
        content
            .transform([width, 0.0, 0.0, height, 0.0, 0.0])
            .x_object(Name(b"S1"));
        pdf.stream(content_id, &content.finish());
        let mut page = pdf.page(page_id);
        page.media_box(Rect::new(0.0, 0.0, width, height));
        page.parent(tree_id);
        page.contents(content_id);
        page.resources().x_objects().pair(Name(b"S1"), svg_id);
        page.finish();
        page_ids.push(page_id);
        chunks.push(chunk);
    }
    pdf.catalog(catalog_id).pages(tree_id);
    pdf.pages(tree_id)
        .kids(page_ids.iter().copied())
        .count(page_ids.len() as i32);
    for c in &chunks {
        pdf.extend(c);
    }
    std::fs::write(out, pdf.finish()).map_err(|e| ReportError::io(out, e))
}
