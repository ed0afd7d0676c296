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
pub(crate) fn two_lines(title: &str) -> Vec<String> {
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

/// Marker shapes of curves: a colour always gets the same shape (a style of [`style`] by
/// its place there, any other colour by its RGB), so a method keeps colour and marker in
/// every figure of the report, and curves stay apart in greyscale print. No shape is a
/// cross: × marks only where a failed run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// Filled circle.
    Circle,
    /// Filled square.
    Square,
    /// Filled triangle, point up.
    Triangle,
    /// Filled diamond.
    Diamond,
    /// Filled triangle, point down.
    TriangleDown,
    /// Hollow circle.
    Ring,
    /// Hollow square.
    HollowSquare,
    /// Hollow triangle, point up.
    HollowTriangle,
}

/// The eight marker shapes, in the order styles take them.
pub const MARKERS: [Marker; 8] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Ring,
    Marker::HollowSquare,
    Marker::HollowTriangle,
];

/// Okabe & Ito's colour-blind-safe palette (2008), its eight hues in an order that puts
/// the most different first (blue, vermillion, bluish green, reddish purple, orange, sky
/// blue, black, yellow).
pub const HUES: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

/// How many curve styles there are: each of the 8 hues in 8 tones.
pub const N_STYLES: usize = 64;

/// Curve style `k` (modulo [`N_STYLES`]): hue `k mod 8` in tone `k div 8` (the hue
/// itself, then darker shades: no tone lighter than the hue, so every curve keeps its
/// contrast on white) with marker `(k + k div 8) mod 8`. The first 8 styles differ in
/// both hue and marker, and any two of the 64 in hue, tone or marker: 8 series in one
/// figure stay apart in colour, in shape and in greyscale.
pub fn style(k: usize) -> (RGBColor, Marker) {
    const TONES: [f64; 8] = [1.0, 0.62, 0.8, 0.45, 0.9, 0.7, 0.55, 0.35];
    let k = k % N_STYLES;
    let (hue, tone) = (k % 8, k / 8);
    let base = HUES[hue];
    // Black has no darker shade: its tones are greys instead.
    let shade = |c: u8| {
        if hue == 6 {
            (f64::from(tone as u8) * 22.0).round() as u8
        } else {
            (f64::from(c) * TONES[tone]).round() as u8
        }
    };
    (
        RGBColor(shade(base.0), shade(base.1), shade(base.2)),
        MARKERS[(hue + tone) % 8],
    )
}

/// The marker shape of a curve of colour `c`.
pub fn marker_of(c: RGBColor) -> Marker {
    (0..N_STYLES)
        .map(style)
        .find(|(colour, _)| *colour == c)
        .map_or_else(
            || MARKERS[(c.0 as usize * 7 + c.1 as usize * 3 + c.2 as usize) % 8],
            |(_, m)| m,
        )
}

/// The style index of colour `c`, if it is one of the styles' colours.
fn style_of(c: RGBColor) -> Option<usize> {
    (0..N_STYLES).find(|&k| style(k).0 == c)
}

/// Colours of methods and their variants: every method id (`taylor+projection` counts as
/// its own method) seen in the whole report gets its own style ([`style`]: hue, tone and
/// marker), in sorted order, so a method has the same colour and marker in every figure
/// of every experiment; variants of one method (parameter sweeps) take the styles after
/// the methods', so that no two curves share one.
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
            map.insert(m.to_string(), style(k).0);
        }
        let mut next = methods.len();
        for (m, v) in &pairs {
            if v != m && !map.contains_key(*v) {
                map.insert(v.to_string(), style(next).0);
                next += 1;
            }
        }
        Self { map }
    }

    /// Colours for the curves of one figure: the first variant of each method keeps the
    /// method's report-wide style while that style's hue is not yet taken in the figure;
    /// every other curve takes the first hue not yet taken (in its own tone), and once all
    /// 8 hues are, the first style not yet taken. So up to 8 curves of a figure differ in
    /// hue and marker, and no two curves share a style.
    pub fn local<'a>(&self, pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Colours {
        let mut pairs: Vec<(&str, &str)> = pairs.into_iter().collect();
        pairs.sort_unstable();
        pairs.dedup();
        let mut used: Vec<usize> = Vec::new();
        let mut map = std::collections::BTreeMap::new();
        let mut later = Vec::new();
        for (k, (m, v)) in pairs.iter().enumerate() {
            let first = k == 0 || pairs[k - 1].0 != *m;
            let own =
                style_of(self.of(m)).filter(|s| first && !used.iter().any(|u| u % 8 == s % 8));
            match own {
                Some(s) => {
                    used.push(s);
                    map.insert(v.to_string(), style(s).0);
                    map.insert(m.to_string(), style(s).0);
                }
                None => later.push(v.to_string()),
            }
        }
        for v in later {
            let free_hue = (0..8).find(|h| !used.iter().any(|u| u % 8 == *h));
            let free = free_hue.or_else(|| (0..N_STYLES).find(|s| !used.contains(s)));
            if let Some(s) = free {
                used.push(s);
                map.insert(v, style(s).0);
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
    fn styles_are_distinct_and_the_first_eight_differ_in_hue_and_marker() {
        let all: Vec<(RGBColor, Marker)> = (0..N_STYLES).map(style).collect();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
                assert_ne!(a.0, b.0, "colours of two styles coincide");
            }
            assert_eq!(marker_of(a.0), a.1);
        }
        let first: Vec<&(RGBColor, Marker)> = all.iter().take(8).collect();
        for (i, a) in first.iter().enumerate() {
            for b in &first[i + 1..] {
                assert!(a.0 != b.0 && a.1 != b.1);
            }
        }
        // Any two of the first 8 hues are far apart (RGB distance above 60).
        for (i, a) in HUES.iter().enumerate() {
            for b in &HUES[i + 1..] {
                let d = [
                    a.0 as f64 - b.0 as f64,
                    a.1 as f64 - b.1 as f64,
                    a.2 as f64 - b.2 as f64,
                ];
                assert!(
                    d.iter().map(|x| x * x).sum::<f64>().sqrt() > 60.0,
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn a_figure_of_ten_variants_of_two_methods_keeps_them_apart() {
        let pairs: Vec<(String, String)> = (0..10)
            .map(|k| {
                (
                    if k < 5 { "baumgarte" } else { "penalty" }.to_string(),
                    format!("v{k}"),
                )
            })
            .collect();
        let global = Colours::new(pairs.iter().map(|(m, v)| (m.as_str(), v.as_str())));
        let local = global.local(pairs.iter().map(|(m, v)| (m.as_str(), v.as_str())));
        let styles: Vec<usize> = pairs
            .iter()
            .map(|(_, v)| style_of(local.of(v)).unwrap_or(usize::MAX))
            .collect();
        let mut hues: Vec<usize> = styles.iter().take(8).map(|s| s % 8).collect();
        hues.sort_unstable();
        hues.dedup();
        assert_eq!(hues.len(), 8, "{styles:?}");
        let mut all = styles.clone();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 10, "{styles:?}");
    }

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
