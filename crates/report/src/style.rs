//! Fonts and colours shared by every figure.

use plotters::style::{FontStyle, IntoFont, IntoTextStyle, RGBColor};
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

/// Figure width in pixels. Figures are drawn at this width and nested into the PDF either
/// at half the text width (small multiples, 245 pt) or at the full width (503 pt), so the
/// font sizes below print at 6–8 pt in a small multiple and 12–15 pt at full width.
pub const FIG_W: u32 = 640;
/// Panel titles (px).
pub const TITLE_PX: u32 = 19;
/// The smallest size a long panel title is shrunk to so that it fits its panel (px).
pub const MIN_TITLE_PX: u32 = 11;

/// Whether `text` at `px` fits `width` pixels on `area`.
fn fits<DB: plotters::prelude::DrawingBackend>(
    area: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>, text: &str, px: u32,
    width: u32,
) -> bool {
    let style = (FAMILY, px).into_font().into_text_style(area);
    area.estimate_text_size(text, &style)
        .is_ok_and(|(w, _)| w <= width)
}

/// `title` laid out to fit `width` pixels: the JSON quotes of problem parameters dropped,
/// then one line at the largest size from [`TITLE_PX`] down to [`MIN_TITLE_PX`] that fits,
/// else two lines broken at the separator nearest the middle (` — `, `, `, or a space) at
/// the largest size both fit, else those two lines at the smallest size with their ends
/// elided (`…`). A title wider than its panel was clipped at both ends.
pub fn fit_title<DB: plotters::prelude::DrawingBackend>(
    area: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>, title: &str, width: u32,
) -> (Vec<String>, u32) {
    let title = title.replace('"', "");
    let sizes = || (MIN_TITLE_PX..=TITLE_PX).rev();
    if let Some(px) = sizes().find(|&px| fits(area, &title, px, width)) {
        return (vec![title], px);
    }
    let lines = two_lines(&title);
    if let Some(px) = sizes().find(|&px| lines.iter().all(|l| fits(area, l, px, width))) {
        return (lines, px);
    }
    let elided = lines
        .iter()
        .map(|l| {
            if fits(area, l, MIN_TITLE_PX, width) {
                return l.clone();
            }
            let chars: Vec<char> = l.chars().collect();
            (1..chars.len())
                .rev()
                .map(|k| format!("{}…", chars[..k].iter().collect::<String>()))
                .find(|t| fits(area, t, MIN_TITLE_PX, width))
                .unwrap_or_default()
        })
        .collect();
    (elided, MIN_TITLE_PX)
}

/// `title` split in two at the separator (`, `, ` — ` or a space) that balances the two
/// lines best (the shorter longest line); the separator's mark ends the first line.
fn two_lines(title: &str) -> Vec<String> {
    let chars = |t: &str| t.chars().count();
    let best = [", ", " — ", " "]
        .iter()
        .flat_map(|sep| title.match_indices(sep).map(|(i, _)| (i, sep.len())))
        .min_by_key(|&(i, n)| chars(&title[..i + n]).max(chars(&title[i + n..])));
    match best {
        Some((i, n)) => vec![
            title[..i + n].trim_end().to_string(),
            title[i + n..].trim_start().to_string(),
        ],
        None => vec![title.to_string()],
    }
}

/// Draw `title` fitted to `area` less `margin` pixels each side ([`fit_title`]) at its
/// top; the area below it.
pub fn titled<DB: plotters::prelude::DrawingBackend>(
    area: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>, title: &str, margin: u32,
) -> Result<plotters::prelude::DrawingArea<DB, plotters::coord::Shift>, String> {
    let width = area.dim_in_pixel().0.saturating_sub(2 * margin);
    let (lines, px) = fit_title(area, title, width);
    let mut rest = area.clone();
    for line in &lines {
        rest = rest.titled(line, (FAMILY, px)).map_err(|e| e.to_string())?;
    }
    Ok(rest)
}

/// Axis descriptions with units (px).
pub const AXIS_PX: u32 = 17;
/// Tick labels (px).
pub const TICK_PX: u32 = 16;
/// Legend entries (px).
pub const LEGEND_PX: u32 = 15;

/// Marker shapes of sweep curves: a colour always gets the same shape (palette colours by
/// their place in the palette, mixed shades by their RGB), so a method keeps colour and
/// marker in every figure of the report, and curves stay apart in greyscale print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// Filled circle.
    Circle,
    /// Filled triangle.
    Triangle,
    /// Hollow triangle.
    HollowTriangle,
    /// Diagonal cross.
    Cross,
    /// Hollow circle.
    Ring,
}

/// The marker shape of a curve of colour `c`.
pub fn marker_of(c: RGBColor) -> Marker {
    const SHAPES: [Marker; 5] = [
        Marker::Circle,
        Marker::Triangle,
        Marker::HollowTriangle,
        Marker::Cross,
        Marker::Ring,
    ];
    let k = PALETTE
        .iter()
        .position(|p| *p == c)
        .unwrap_or(c.0 as usize * 7 + c.1 as usize * 3 + c.2 as usize);
    SHAPES[k % SHAPES.len()]
}

/// Okabe & Ito's colour-blind-safe palette (2008) first, then darker and lighter tones
/// of distinct hues, so that up to 18 methods of one report get distinct colours.
const PALETTE: [RGBColor; 18] = [
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
    RGBColor(128, 0, 128),
    RGBColor(0, 100, 0),
    RGBColor(178, 34, 34),
    RGBColor(0, 0, 139),
    RGBColor(255, 105, 180),
    RGBColor(128, 128, 0),
    RGBColor(0, 139, 139),
    RGBColor(160, 82, 45),
];

/// Colours of methods and their variants: every method id (`taylor+projection` counts as
/// its own method) seen in the whole report gets its own palette hue, in sorted order, so
/// a method has the same colour in every figure of every experiment; variants of one
/// method (parameter sweeps) are lighter shades of that hue.
#[derive(Clone, Debug, Default)]
pub struct Colours {
    map: std::collections::BTreeMap<String, RGBColor>,
}

impl Colours {
    /// Assign colours to `(method, variant)` pairs (duplicates ignored).
    pub fn new<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut pairs: Vec<(&str, &str)> = pairs.into_iter().collect();
        pairs.sort_unstable();
        pairs.dedup();
        let mut methods: Vec<&str> = pairs.iter().map(|p| p.0).collect();
        methods.dedup();
        let mut map = std::collections::BTreeMap::new();
        for (k, m) in methods.iter().enumerate() {
            let base = PALETTE[k % PALETTE.len()];
            map.insert(m.to_string(), base);
            let variants: Vec<&str> = pairs
                .iter()
                .filter(|p| p.0 == *m && p.1 != *m)
                .map(|p| p.1)
                .collect();
            for (j, v) in variants.iter().enumerate() {
                // First variant: the hue itself; later ones mixed towards white.
                let f = (0.3 * j as f64).min(0.7);
                let mix = |c: u8| (c as f64 + f * (255.0 - c as f64)).round() as u8;
                map.insert(
                    v.to_string(),
                    RGBColor(mix(base.0), mix(base.1), mix(base.2)),
                );
            }
        }
        Self { map }
    }
    /// Colours for the curves of one problem's figures: the first variant of each method
    /// keeps the method's report-wide colour, further variants (parameter sweeps of the
    /// same method) take palette colours not yet used there, so that no two curves of a
    /// figure share a colour while the palette lasts.
    pub fn local<'a>(&self, pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Colours {
        let mut pairs: Vec<(&str, &str)> = pairs.into_iter().collect();
        pairs.sort_unstable();
        pairs.dedup();
        let mut used: Vec<RGBColor> = Vec::new();
        let mut map = std::collections::BTreeMap::new();
        let mut later = Vec::new();
        for (k, (m, v)) in pairs.iter().enumerate() {
            let first = k == 0 || pairs[k - 1].0 != *m;
            let base = self.of(m);
            if first && !used.contains(&base) {
                used.push(base);
                map.insert(v.to_string(), base);
                map.insert(m.to_string(), base);
            } else {
                later.push(v.to_string());
            }
        }
        let mut free = PALETTE
            .iter()
            .copied()
            .filter(|c| !used.contains(c))
            .collect::<Vec<_>>()
            .into_iter()
            .cycle();
        for v in later {
            if let Some(c) = free.next() {
                map.insert(v, c);
            }
        }
        Colours { map }
    }

    /// The colour of a method or variant label (grey if unknown).
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

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::{IntoDrawingArea, SVGBackend};

    #[test]
    fn a_long_title_fits_its_panel_in_two_lines_with_nothing_lost() {
        register_fonts();
        let mut svg = String::new();
        let area = SVGBackend::with_string(&mut svg, (FIG_W, 300)).into_drawing_area();
        let title = "Max relative energy error vs omega_n — baumgarte on planar-chain {\"disturbance\":{\"duration\":0.001,\"force\":[0.0,-50.0],\"time\":0.5},\"links\":3}";
        let (lines, px) = fit_title(&area, title, FIG_W - 24);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(px >= MIN_TITLE_PX);
        assert!(
            lines.iter().all(|l| fits(&area, l, px, FIG_W - 24)),
            "{lines:?} at {px}"
        );
        assert_eq!(
            lines.concat().replace(' ', ""),
            title.replace(['"', ' '], ""),
            "nothing dropped"
        );
        let (short, px) = fit_title(&area, "Position residual — pendulum", FIG_W - 24);
        assert_eq!((short.len(), px), (1, TITLE_PX));
    }
}
