//! Checks of the laid-out report that tests (and anyone debugging a layout) can run on a
//! results folder: [`lay_out`] lays the combined report out without writing the PDF and
//! returns its pages with every text as typeset and every text wider than its box
//! ([`crate::book::Pages::overflows`]); [`svg_overflows`] measures every text of a figure
//! SVG against the figure's canvas, by the advance widths of the embedded faces.

use crate::book::{Book, Laid};
use crate::error::ReportError;
use crate::metrics::{self, Face};
use crate::sections::{Context, SECTIONS};
use std::path::Path;

/// Lay out the combined report over the complete experiment folders under `root` as
/// `driftlab report` does (the machine-readable tables under `root/tables` are written
/// as there), without converting the pages to PDF.
pub fn lay_out(root: &Path) -> Result<Laid, ReportError> {
    let survey = crate::folders::survey(root)?;
    let all: Vec<crate::data::Results> = survey
        .complete
        .iter()
        .map(|(d, _)| crate::data::Results::load(d))
        .collect::<Result<_, _>>()?;
    let mut c = Context::new(root, &all, &survey.unfinished);
    let mut b = Book::new("driftlab · layout check");
    for section in SECTIONS {
        (section.write)(&mut b, &mut c)?;
    }
    Ok(b.finish())
}

/// One `<text>` of an SVG: its attributes and its text.
struct SvgText<'a> {
    attrs: &'a str,
    text: String,
}

/// The value of attribute `name` in `attrs`.
fn attr<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let k = attrs.find(&key)? + key.len();
    let rest = &attrs[k..];
    Some(&rest[..rest.find('"')?])
}

fn num(attrs: &str, name: &str) -> Option<f64> {
    attr(attrs, name)?.trim_end_matches("px").parse().ok()
}

/// Every `<text>` element of `svg` (its inner text with tags of `<tspan>` removed and
/// entities decoded).
fn texts(svg: &str) -> Vec<SvgText<'_>> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(k) = rest.find("<text") {
        let after = &rest[k + 5..];
        let Some(open) = after.find('>') else { break };
        let Some(close) = after.find("</text>") else {
            break;
        };
        let inner = &after[open + 1..close];
        let mut text = String::new();
        let mut in_tag = false;
        for c in inner.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                _ if !in_tag => text.push(c),
                _ => {}
            }
        }
        let text = text
            .trim()
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&amp;", "&");
        out.push(SvgText {
            attrs: &after[..open],
            text,
        });
        rest = &after[close..];
    }
    out
}

/// The extent of a text along its line: `[start, end]` from its anchor point.
fn along(anchor: f64, width: f64, how: Option<&str>) -> (f64, f64) {
    match how {
        Some("middle") => (anchor - width / 2.0, anchor + width / 2.0),
        Some("end") => (anchor - width, anchor),
        _ => (anchor, anchor + width),
    }
}

/// The texts of a figure SVG (plotters' output: `x`, `y`, `font-size`, `text-anchor`,
/// `dy`, an optional `rotate(270, x, y)`) that reach outside the figure's canvas, each
/// described; empty when every text fits. A text is measured by the advance widths of
/// DejaVu Sans (bold where `font-weight="bold"`), its height as its font size.
pub fn svg_overflows(svg: &str) -> Vec<String> {
    let Some(root) = svg.find("<svg").map(|k| &svg[k..]) else {
        return vec!["no <svg> element".into()];
    };
    let root_attrs = &root[..root.find('>').unwrap_or(root.len())];
    let (w, h) = match (num(root_attrs, "width"), num(root_attrs, "height")) {
        (Some(w), Some(h)) => (w, h),
        _ => return vec!["the <svg> element has no width and height".into()],
    };
    let mut out = Vec::new();
    for t in texts(svg) {
        let (Some(x), Some(y), Some(size)) = (
            num(t.attrs, "x"),
            num(t.attrs, "y"),
            num(t.attrs, "font-size"),
        ) else {
            continue;
        };
        let face = Face::of(false, attr(t.attrs, "font-weight") == Some("bold"));
        let width = metrics::width(&t.text, face, size);
        let rotated = attr(t.attrs, "transform").is_some_and(|r| r.starts_with("rotate(270"));
        let ((x0, x1), (y0, y1)) = if rotated {
            // Read upwards from (x, y): along the line is −y; across it, x to x + size.
            let (a, b) = along(-y, width, attr(t.attrs, "text-anchor"));
            ((x, x + size), (-b, -a))
        } else {
            let top = match attr(t.attrs, "dy") {
                Some("0.76em") => y,
                Some("0.5ex") => y - size / 2.0,
                Some("-0.5ex") => y - size,
                _ => y - 0.8 * size,
            };
            (
                along(x, width, attr(t.attrs, "text-anchor")),
                (top, top + size),
            )
        };
        if x0 < -0.5 || x1 > w + 0.5 || y0 < -0.5 || y1 > h + 0.5 {
            out.push(format!(
                "{:?} spans x {x0:.0}..{x1:.0}, y {y0:.0}..{y1:.0} on a {w} × {h} canvas",
                t.text
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_past_the_edge_is_found_and_one_inside_is_not() {
        let svg = r#"<svg width="100" height="50" xmlns="x">
<text x="50" y="10" dy="0.76em" text-anchor="middle" font-family="sans-serif" font-size="10">fits</text>
<text x="95" y="30" dy="0.76em" text-anchor="start" font-family="sans-serif" font-size="10">too long</text>
<text x="5" y="25" dy="0.76em" text-anchor="middle" font-family="sans-serif" font-size="10" transform="rotate(270, 5, 25)">a rotated label far longer than the canvas</text>
</svg>"#;
        let found = svg_overflows(svg);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("\"too long\""), "{found:?}");
        assert!(found[1].starts_with("\"a rotated label"), "{found:?}");
    }
}
