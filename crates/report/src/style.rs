//! Fonts and colours shared by every figure.

use plotters::style::{FontStyle, RGBColor};
use std::sync::Once;

/// The font family name used in figures (SVG `font-family`, PDF font database).
pub const FAMILY: &str = "sans-serif";

static FONTS: Once = Once::new();

/// Register DejaVu Sans with plotters' `ab_glyph` text renderer (once per process).
pub fn register_fonts() {
    FONTS.call_once(|| {
        // A failure here only loses text in PNGs; the PDF test catches it.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FAMILY, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// A colour-blind-safe palette (Okabe & Ito 2008, plus two darker tones).
const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
    RGBColor(120, 60, 20),
    RGBColor(100, 100, 100),
];

/// Colours of method variants: every label seen in the whole report gets its own
/// palette entry, in sorted order, so a method has the same colour in every figure of
/// every experiment (and no two methods of one figure share one while the palette lasts).
#[derive(Clone, Debug, Default)]
pub struct Colours {
    map: std::collections::BTreeMap<String, RGBColor>,
}

impl Colours {
    /// Assign colours to `labels` (duplicates ignored).
    pub fn new<'a>(labels: impl IntoIterator<Item = &'a str>) -> Self {
        let mut all: Vec<&str> = labels.into_iter().collect();
        all.sort_unstable();
        all.dedup();
        let map = all
            .into_iter()
            .enumerate()
            .map(|(i, l)| (l.to_string(), PALETTE[i % PALETTE.len()]))
            .collect();
        Self { map }
    }
    /// The colour of `label` (grey if unknown).
    pub fn of(&self, label: &str) -> RGBColor {
        self.map
            .get(label)
            .copied()
            .unwrap_or(RGBColor(128, 128, 128))
    }
}

/// File-name-safe slug.
pub fn slug(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    while out.contains("__") {
        out = out.replace("__", "_");
    }
    out.trim_matches('_').to_string()
}
