//! The combined report: `report.pdf` (A4 pages, vector figures, text kept as text) and
//! its Markdown twin `index.md` (same content, PNG figures), laid out from stored results
//! only. Pages are SVG documents composed here — text lines, monospace tables, the
//! experiments' figure SVGs nested at scale — and converted by [`crate::pdf::pages_to_pdf`].
//! Every page carries the provenance footer (git revision, dirty flag, date, machine).

use std::fmt::Write as _;
use std::path::Path;

/// A4 width (pt).
pub const PAGE_W: f64 = 595.0;
/// A4 height (pt).
pub const PAGE_H: f64 = 842.0;
const MARGIN: f64 = 46.0;
const BOTTOM: f64 = PAGE_H - 52.0;
/// Average advance of DejaVu Sans per em (for wrapping), and the exact one of Sans Mono.
const SANS_EM: f64 = 0.56;
const MONO_EM: f64 = 0.602;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Split `text` into lines of at most `width` characters at spaces.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for para in text.split('\n') {
        let mut line = String::new();
        for word in para.split_whitespace() {
            let len = line.chars().count();
            if len > 0 && len + 1 + word.chars().count() > width {
                out.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push(line);
    }
    out
}

/// DejaVu has no CJK glyphs: runs of CJK characters (the seeds' Chinese titles in some
/// citations) become "[Chinese]" on paper; the Markdown keeps them.
fn printable(s: &str) -> String {
    let cjk = |c: char| matches!(c as u32, 0x2E80..=0x9FFF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF);
    let mut out = String::with_capacity(s.len());
    let mut in_run = false;
    for c in s.chars() {
        if cjk(c) {
            if !in_run {
                out.push_str("[Chinese]");
            }
            in_run = true;
        } else {
            in_run = false;
            out.push(c);
        }
    }
    out
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A document being laid out.
pub struct Book {
    pages: Vec<String>,
    body: String,
    y: f64,
    footer: String,
    md: String,
    /// Section titles with their page numbers (1-based).
    pub toc: Vec<(usize, String, usize)>,
}

impl Book {
    /// A new book whose pages carry `footer`.
    pub fn new(footer: &str) -> Self {
        Self {
            pages: Vec::new(),
            body: String::new(),
            y: MARGIN,
            footer: footer.to_string(),
            md: String::new(),
            toc: Vec::new(),
        }
    }

    fn page_number(&self) -> usize {
        self.pages.len() + 1
    }

    /// Close the current page (if it has content).
    pub fn page_break(&mut self) {
        if self.body.is_empty() {
            return;
        }
        let n = self.page_number();
        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{PAGE_W}" height="{PAGE_H}" viewBox="0 0 {PAGE_W} {PAGE_H}"><rect width="{PAGE_W}" height="{PAGE_H}" fill="white"/>"#
        );
        svg.push_str(&self.body);
        let _ = write!(
            svg,
            r##"<line x1="{MARGIN}" y1="{y}" x2="{x2}" y2="{y}" stroke="#999" stroke-width="0.5"/><text x="{MARGIN}" y="{ty}" font-family="DejaVu Sans" font-size="6.5" fill="#555">{f}</text><text x="{x2}" y="{ty}" font-family="DejaVu Sans" font-size="7" text-anchor="end" fill="#555">{n}</text></svg>"##,
            y = PAGE_H - 36.0,
            x2 = PAGE_W - MARGIN,
            ty = PAGE_H - 26.0,
            f = esc(&clip(&self.footer, 150)),
        );
        self.pages.push(svg);
        self.body.clear();
        self.y = MARGIN;
    }

    fn ensure(&mut self, h: f64) {
        if self.y + h > BOTTOM {
            self.page_break();
        }
    }

    fn line(&mut self, x: f64, size: f64, bold: bool, mono: bool, colour: &str, text: &str) {
        let fam = if mono {
            "DejaVu Sans Mono"
        } else {
            "DejaVu Sans"
        };
        let weight = if bold { "bold" } else { "normal" };
        let _ = write!(
            self.body,
            r#"<text x="{x:.1}" y="{y:.1}" font-family="{fam}" font-size="{size}" font-weight="{weight}" fill="{colour}" xml:space="preserve">{t}</text>"#,
            y = self.y + size,
            t = esc(&printable(text))
        );
        self.y += size * 1.35;
    }

    /// A heading; level 1 starts a new page and enters the table of contents.
    pub fn heading(&mut self, text: &str, level: usize) {
        let size = match level {
            1 => 17.0,
            2 => 12.5,
            _ => 10.5,
        };
        if level == 1 {
            self.page_break();
        } else {
            self.y += 4.0;
        }
        self.ensure(size * 3.0);
        for l in wrap(text, ((PAGE_W - 2.0 * MARGIN) / (SANS_EM * size)) as usize) {
            self.line(MARGIN, size, true, false, "#111", &l);
        }
        self.y += 3.0;
        if level <= 2 {
            self.toc.push((level, text.to_string(), self.page_number()));
        }
        let _ = writeln!(self.md, "\n{} {}\n", "#".repeat(level), text);
    }

    /// A paragraph of running text.
    pub fn paragraph(&mut self, text: &str) {
        let size = 9.0;
        for l in wrap(text, ((PAGE_W - 2.0 * MARGIN) / (SANS_EM * size)) as usize) {
            self.ensure(size * 1.4);
            self.line(MARGIN, size, false, false, "#111", &l);
        }
        self.y += 4.0;
        let _ = writeln!(self.md, "{text}\n");
    }

    /// Preformatted lines (equations), monospace, wrapped.
    pub fn pre(&mut self, text: &str) {
        let size = 7.5;
        for l in wrap(
            text,
            ((PAGE_W - 2.0 * MARGIN - 8.0) / (MONO_EM * size)) as usize,
        ) {
            self.ensure(size * 1.4);
            self.line(MARGIN + 8.0, size, false, true, "#223", &l);
        }
        self.y += 3.0;
        let _ = writeln!(self.md, "```text\n{text}\n```\n");
    }

    /// A table in monospace; columns wider than their share are clipped with "…" in the
    /// PDF (the Markdown keeps full cells). Headers repeat on every page.
    pub fn table(&mut self, headers: &[&str], rows: &[Vec<String>]) {
        let ncol = headers.len();
        let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
        for r in rows {
            for (k, c) in r.iter().enumerate().take(ncol) {
                widths[k] = widths[k].max(c.chars().count());
            }
        }
        let avail = |size: f64| ((PAGE_W - 2.0 * MARGIN) / (MONO_EM * size)) as usize;
        let mut size: f64 = 7.0;
        let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * (w.len().saturating_sub(1));
        while total(&widths) > avail(size) && size > 5.2 {
            size -= 0.3;
        }
        // Still too wide: shrink the widest columns.
        while total(&widths) > avail(size) {
            let (k, _) = widths
                .iter()
                .enumerate()
                .max_by_key(|(_, w)| **w)
                .unwrap_or((0, &0));
            if widths[k] <= 8 {
                break;
            }
            widths[k] -= 1;
        }
        let fmt_row = |cells: &[String]| {
            cells
                .iter()
                .enumerate()
                .take(ncol)
                .map(|(k, c)| format!("{:<w$}", clip(c, widths[k]), w = widths[k]))
                .collect::<Vec<_>>()
                .join("  ")
        };
        let head: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
        let head_line = fmt_row(&head);
        self.ensure(size * 4.0);
        self.line(MARGIN, size, true, true, "#111", &head_line);
        for r in rows {
            if self.y + size * 1.4 > BOTTOM {
                self.page_break();
                self.line(MARGIN, size, true, true, "#111", &head_line);
            }
            self.line(MARGIN, size, false, true, "#111", &fmt_row(r));
        }
        self.y += 6.0;
        let _ = writeln!(self.md, "| {} |", headers.join(" | "));
        let _ = writeln!(self.md, "|{}|", vec!["---"; ncol].join("|"));
        for r in rows {
            let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
            let _ = writeln!(self.md, "| {} |", cells.join(" | "));
        }
        let _ = writeln!(self.md);
    }

    /// A figure: the SVG at `svg` nested at page width (vector in the PDF), the PNG at
    /// `png_rel` (relative to the Markdown file) in the Markdown.
    pub fn figure(&mut self, svg: &Path, png_rel: &str, caption: &str) {
        let Ok(text) = std::fs::read_to_string(svg) else {
            self.paragraph(&format!("(figure {} could not be read)", svg.display()));
            return;
        };
        let Some((w, h, inner)) = split_svg(&text) else {
            self.paragraph(&format!(
                "(figure {} is not an SVG document)",
                svg.display()
            ));
            return;
        };
        let width = PAGE_W - 2.0 * MARGIN;
        let mut height = width * h / w;
        let max_h = BOTTOM - MARGIN - 30.0;
        let mut draw_w = width;
        if height > max_h {
            draw_w = width * max_h / height;
            height = max_h;
        }
        self.ensure(height + 24.0);
        let x = MARGIN + (width - draw_w) / 2.0;
        let _ = write!(
            self.body,
            r#"<svg x="{x:.1}" y="{y:.1}" width="{draw_w:.1}" height="{height:.1}" viewBox="0 0 {w} {h}">{inner}</svg>"#,
            y = self.y
        );
        self.y += height + 4.0;
        for l in wrap(
            caption,
            ((PAGE_W - 2.0 * MARGIN) / (SANS_EM * 8.0)) as usize,
        ) {
            self.line(MARGIN, 8.0, false, false, "#333", &l);
        }
        self.y += 6.0;
        let _ = writeln!(self.md, "![{caption}]({png_rel})\n");
    }

    /// Raw Markdown only (links that make no sense on paper).
    pub fn md_only(&mut self, text: &str) {
        let _ = writeln!(self.md, "{text}\n");
    }

    /// Finish: the page SVGs and the Markdown.
    pub fn finish(mut self) -> (Vec<String>, String) {
        self.page_break();
        (self.pages, self.md)
    }
}

/// `(width, height, inner markup)` of an SVG document (root `width`/`height` or viewBox).
fn split_svg(text: &str) -> Option<(f64, f64, String)> {
    let start = text.find("<svg")?;
    let open_end = start + text[start..].find('>')?;
    let tag = &text[start..open_end];
    let close = text.rfind("</svg>")?;
    let attr = |name: &str| -> Option<f64> {
        let k = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let rest = &tag[k..];
        let v = &rest[..rest.find('"')?];
        v.trim_end_matches("px").parse().ok()
    };
    let (w, h) = match (attr("width"), attr("height")) {
        (Some(w), Some(h)) => (w, h),
        _ => {
            let k = tag.find("viewBox=\"")? + 9;
            let vb: Vec<f64> = tag[k..]
                .split('"')
                .next()?
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            (*vb.get(2)?, *vb.get(3)?)
        }
    };
    Some((w, h, text[open_end + 1..close].to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_runs_are_named_not_dropped_silently() {
        assert_eq!(
            printable("seed 001 §3.5.2 (罚函数方法) and"),
            "seed 001 §3.5.2 ([Chinese]) and"
        );
    }

    #[test]
    fn wrap_respects_width_and_keeps_words() {
        let l = wrap("aaa bbb ccc ddd", 7);
        assert_eq!(l, vec!["aaa bbb", "ccc ddd"]);
    }

    #[test]
    fn split_svg_reads_size_and_inner() {
        let (w, h, inner) = split_svg(
            r#"<?xml version="1.0"?><svg width="900" height="600" xmlns="x"><rect/></svg>"#,
        )
        .unwrap_or_default();
        assert_eq!((w, h, inner.as_str()), (900.0, 600.0, "<rect/>"));
    }

    #[test]
    fn pages_break_and_carry_the_footer() {
        let mut b = Book::new("footer text");
        b.heading("One", 1);
        for _ in 0..200 {
            b.paragraph("line");
        }
        let (pages, md) = b.finish();
        assert!(pages.len() >= 2);
        assert!(pages.iter().all(|p| p.contains("footer text")));
        assert!(md.contains("# One"));
    }
}
