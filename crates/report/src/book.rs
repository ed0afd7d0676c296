//! The combined report, laid out once into three documents from stored results only:
//! `report.pdf` (A4 pages, vector figures, text kept as text), its Markdown twin
//! `index.md` (PNG figures) and the HTML body of `index.html` (SVG figures beside it,
//! sortable tables). Material marked web-only ([`Book::set_paper`]) — the full per-run
//! figures — goes to the Markdown and HTML but not onto paper. Pages are SVG documents composed here — text lines, monospace tables, the
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
pub(crate) const SANS_EM: f64 = 0.56;
const MONO_EM: f64 = 0.602;

pub(crate) fn esc(s: &str) -> String {
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
        for long in para.split_whitespace() {
            // A word longer than the width is cut into pieces of the width.
            let chars: Vec<char> = long.chars().collect();
            for word in chars
                .chunks(width.max(1))
                .map(|c| c.iter().collect::<String>())
            {
                let word = word.as_str();
                let len = line.chars().count();
                if len > 0 && len + 1 + word.chars().count() > width {
                    out.push(std::mem::take(&mut line));
                }
                if !line.is_empty() {
                    line.push(' ');
                }
                line.push_str(word);
            }
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
    html: String,
    /// Whether the PDF receives what is laid out now (false: Markdown and HTML only).
    paper: bool,
    /// Section titles with their page numbers (1-based; 0 for web-only sections).
    pub toc: Vec<(usize, String, usize)>,
}

/// The three documents a [`Book`] lays out.
pub struct Laid {
    /// The PDF pages as SVG documents.
    pub pages: Vec<String>,
    /// The Markdown text.
    pub md: String,
    /// The HTML body (sections, tables, figures), without head or contents.
    pub html: String,
}

/// A figure to lay out: its SVG file, the path of its PNG and SVG relative to the report
/// root (without extension), and its caption.
pub struct FigureRef<'a> {
    /// The SVG file.
    pub svg: &'a Path,
    /// `<experiment>/figures/<stem>`, relative to the report root.
    pub rel_stem: String,
    /// Caption.
    pub caption: String,
}

/// An SVG document split for nesting: width, height and inner markup.
type SplitSvg = (f64, f64, String);

/// A figure to lay out, with its SVG read (none when it cannot be read).
type LoadedFigure<'a> = (&'a FigureRef<'a>, Option<SplitSvg>);

/// The HTML id of the `k`-th heading.
pub fn anchor(k: usize) -> String {
    format!("s{k}")
}

/// Inline Markdown-ish code spans (`x`) as `<code>`, the rest escaped.
fn html_text(s: &str) -> String {
    esc(s)
        .split('`')
        .enumerate()
        .map(|(k, part)| {
            if k % 2 == 1 {
                format!("<code>{part}</code>")
            } else {
                part.to_string()
            }
        })
        .collect()
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
            html: String::new(),
            paper: true,
            toc: Vec::new(),
        }
    }

    /// From now on, lay out for paper too (`true`, the default) or only for the Markdown
    /// and HTML documents (`false`).
    pub fn set_paper(&mut self, paper: bool) {
        self.paper = paper;
    }

    /// Pages laid out so far (the current one counted if it has content).
    pub fn pages_so_far(&self) -> usize {
        self.pages.len() + usize::from(!self.body.is_empty())
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
        if self.paper && self.y + h > BOTTOM {
            self.page_break();
        }
    }

    fn line(&mut self, x: f64, size: f64, bold: bool, mono: bool, colour: &str, text: &str) {
        if !self.paper {
            return;
        }
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

    /// A heading; level 1 starts a new page; levels 1 and 2 enter the table of contents.
    pub fn heading(&mut self, text: &str, level: usize) {
        let size = match level {
            1 => 17.0,
            2 => 12.5,
            _ => 10.5,
        };
        if level == 1 && self.paper {
            self.page_break();
        } else if self.paper {
            self.y += 4.0;
        }
        self.ensure(size * 3.0);
        for l in wrap(text, ((PAGE_W - 2.0 * MARGIN) / (SANS_EM * size)) as usize) {
            self.line(MARGIN, size, true, false, "#111", &l);
        }
        if self.paper {
            self.y += 3.0;
        }
        let page = if self.paper { self.page_number() } else { 0 };
        let id = anchor(self.toc.len());
        if level <= 2 {
            self.toc.push((level, text.to_string(), page));
        }
        let _ = writeln!(self.md, "\n{} {}\n", "#".repeat(level), text);
        let h = level.clamp(1, 4);
        if level <= 2 {
            let _ = writeln!(self.html, "<h{h} id=\"{id}\">{}</h{h}>", esc(text));
        } else {
            let _ = writeln!(self.html, "<h{h}>{}</h{h}>", esc(text));
        }
    }

    /// A paragraph of running text.
    pub fn paragraph(&mut self, text: &str) {
        let size = 9.0;
        for l in wrap(text, ((PAGE_W - 2.0 * MARGIN) / (SANS_EM * size)) as usize) {
            self.ensure(size * 1.4);
            self.line(MARGIN, size, false, false, "#111", &l);
        }
        if self.paper {
            self.y += 4.0;
        }
        let _ = writeln!(self.md, "{text}\n");
        let _ = writeln!(self.html, "<p>{}</p>", html_text(text));
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
        if self.paper {
            self.y += 3.0;
        }
        let _ = writeln!(self.md, "```text\n{text}\n```\n");
        let _ = writeln!(self.html, "<pre>{}</pre>", esc(text));
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
        if self.paper {
            self.y += 6.0;
        }
        self.html_table(headers, rows);
        self.md_table(headers, rows);
    }

    fn md_table(&mut self, headers: &[&str], rows: &[Vec<String>]) {
        let _ = writeln!(self.md, "| {} |", headers.join(" | "));
        let _ = writeln!(self.md, "|{}|", vec!["---"; headers.len()].join("|"));
        for r in rows {
            let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
            let _ = writeln!(self.md, "| {} |", cells.join(" | "));
        }
        let _ = writeln!(self.md);
    }

    /// A table of prose cells that wrap inside their columns (DejaVu Sans, 7 pt) instead
    /// of being clipped; `fractions` are the columns' shares of the text width. Rows stay
    /// whole; the header repeats on every page.
    pub fn table_wrapped(&mut self, headers: &[&str], rows: &[Vec<String>], fractions: &[f64]) {
        if self.paper {
            let text_w = PAGE_W - 2.0 * MARGIN;
            let total: f64 = fractions.iter().sum();
            let widths: Vec<f64> = fractions.iter().map(|f| f / total * text_w).collect();
            let head: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
            self.ensure(60.0);
            self.wrapped_row(&head, &widths, true);
            for r in rows {
                if !self.wrapped_row_fits(r, &widths) {
                    self.page_break();
                    self.wrapped_row(&head, &widths, true);
                }
                self.wrapped_row(r, &widths, false);
            }
            self.y += 6.0;
        }
        self.html_table(headers, rows);
        self.md_table(headers, rows);
    }

    /// The lines of each cell of a wrapped row, and the row's height.
    fn wrapped_cells(cells: &[String], widths: &[f64]) -> (Vec<Vec<String>>, f64) {
        const SIZE: f64 = 7.0;
        let lines: Vec<Vec<String>> = cells
            .iter()
            .zip(widths)
            .map(|(c, w)| wrap(c, ((w - 4.0) / (SANS_EM * SIZE)).max(4.0) as usize))
            .collect();
        let n = lines.iter().map(Vec::len).max().unwrap_or(1).max(1);
        (lines, n as f64 * SIZE * 1.35 + 3.0)
    }

    fn wrapped_row_fits(&self, cells: &[String], widths: &[f64]) -> bool {
        self.y + Self::wrapped_cells(cells, widths).1 <= BOTTOM
    }

    /// One wrapped row at the current position, with a rule under it.
    fn wrapped_row(&mut self, cells: &[String], widths: &[f64], bold: bool) {
        let (lines, h) = Self::wrapped_cells(cells, widths);
        let top = self.y;
        let mut x = MARGIN;
        for (cell, w) in lines.iter().zip(widths) {
            self.y = top;
            for l in cell {
                self.line(x, 7.0, bold, false, "#111", l);
            }
            x += w;
        }
        self.y = top + h;
        let _ = write!(
            self.body,
            r##"<line x1="{MARGIN}" y1="{y:.1}" x2="{x2}" y2="{y:.1}" stroke="{c}" stroke-width="{sw}"/>"##,
            y = self.y - 1.5,
            x2 = PAGE_W - MARGIN,
            c = if bold { "#555" } else { "#ddd" },
            sw = if bold { 0.6 } else { 0.4 },
        );
    }

    /// A table in HTML: sortable (a click on a header sorts by that column, numbers as
    /// numbers), full cells.
    fn html_table(&mut self, headers: &[&str], rows: &[Vec<String>]) {
        self.html.push_str("<table class=\"sortable\"><thead><tr>");
        for h in headers {
            let _ = write!(self.html, "<th>{}</th>", esc(h));
        }
        self.html.push_str("</tr></thead><tbody>\n");
        for r in rows {
            self.html.push_str("<tr>");
            for c in r.iter().take(headers.len()) {
                let _ = write!(self.html, "<td>{}</td>", esc(c));
            }
            self.html.push_str("</tr>\n");
        }
        self.html.push_str("</tbody></table>\n");
    }

    /// A figure at the full text width (vector in the PDF), its PNG in the Markdown and its
    /// SVG in the HTML.
    pub fn figure(&mut self, fig: &FigureRef) {
        self.figures(std::slice::from_ref(fig), 1);
    }

    /// Figures as small multiples: `cols` per row (1 or 2), rows kept whole on a page,
    /// each panel with its caption below; in the HTML a grid, in the Markdown one image
    /// after another.
    pub fn figures(&mut self, figs: &[FigureRef], cols: usize) {
        let cols = cols.clamp(1, 2);
        let loaded: Vec<LoadedFigure> = figs
            .iter()
            .map(|f| {
                let svg = if self.paper {
                    std::fs::read_to_string(f.svg)
                        .ok()
                        .and_then(|t| split_svg(&t))
                } else {
                    None
                };
                (f, svg)
            })
            .collect();
        if self.paper {
            for row in loaded.chunks(cols) {
                self.figure_row(row, cols);
            }
        }
        let _ = writeln!(self.html, "<div class=\"grid{cols}\">");
        for f in figs {
            let _ = writeln!(self.md, "![{}]({}.png)\n", f.caption, f.rel_stem);
            let _ = writeln!(
                self.html,
                "<figure><a href=\"{0}.svg\"><img src=\"{0}.svg\" alt=\"{1}\" loading=\"lazy\"></a><figcaption>{1}</figcaption></figure>",
                esc(&f.rel_stem),
                esc(&f.caption)
            );
        }
        self.html.push_str("</div>\n");
    }

    /// The height a `heading` of `level` takes on paper: the space above, its wrapped
    /// lines and the space below (as `heading` advances `y`).
    fn heading_height(text: &str, level: usize) -> f64 {
        let size = if level == 2 { 12.5 } else { 10.5 };
        let lines = wrap(text, ((PAGE_W - 2.0 * MARGIN) / (SANS_EM * size)) as usize).len();
        4.0 + lines as f64 * size * 1.35 + 3.0
    }

    /// `figure_beside` on paper: the figure in the left column; the text, then the
    /// figure's caption, in the right one. The block's height is the taller column's.
    fn paper_figure_beside(&mut self, heading: &str, fig: &FigureRef, text: &str) {
        const GAP: f64 = 12.0;
        const SIZE: f64 = 8.5;
        const CAPTION: f64 = 7.0;
        let col_w = (PAGE_W - 2.0 * MARGIN - GAP) / 2.0;
        let svg = std::fs::read_to_string(fig.svg)
            .ok()
            .and_then(|t| split_svg(&t));
        let max_h = (BOTTOM - MARGIN) * 0.5;
        let (dw, dh) = svg.as_ref().map_or((col_w, 20.0), |(w, h, _)| {
            let scale = (col_w / w).min(max_h / h);
            (w * scale, h * scale)
        });
        let lines = wrap(text, (col_w / (SANS_EM * SIZE)) as usize);
        let caption = wrap(&fig.caption, (col_w / (SANS_EM * CAPTION)) as usize);
        let text_h = lines.len() as f64 * SIZE * 1.35 + 4.0 + caption.len() as f64 * CAPTION * 1.35;
        let block_h = dh.max(text_h);
        // The heading stays on the page of its figure.
        self.ensure(Self::heading_height(heading, 2) + block_h);
        self.heading(heading, 2);
        let top = self.y;
        match &svg {
            Some((w, h, inner)) => {
                let _ = write!(
                    self.body,
                    r#"<svg x="{MARGIN:.1}" y="{top:.1}" width="{dw:.1}" height="{dh:.1}" viewBox="0 0 {w} {h}">{inner}</svg>"#
                );
            }
            None => self.line(
                MARGIN,
                CAPTION,
                false,
                false,
                "#a00",
                &format!("({} could not be read)", fig.svg.display()),
            ),
        }
        // The text column starts at the figure's top (the error line above moved `y`).
        self.y = top;
        for l in &lines {
            self.line(MARGIN + col_w + GAP, SIZE, false, false, "#111", l);
        }
        self.y += 4.0;
        for l in &caption {
            self.line(MARGIN + col_w + GAP, CAPTION, false, false, "#333", l);
        }
        self.y = top + block_h + 6.0;
    }

    /// A level-2 `heading`, then a figure in the left column with `text` wrapped beside
    /// it in the right one (on paper, kept on one page with the heading; on screen a
    /// two-column block; in the Markdown the text, then the image).
    pub fn figure_beside(&mut self, heading: &str, fig: &FigureRef, text: &str) {
        if self.paper {
            self.paper_figure_beside(heading, fig, text);
        } else {
            self.heading(heading, 2);
        }
        let _ = writeln!(
            self.md,
            "{text}\n\n![{}]({}.png)\n",
            fig.caption, fig.rel_stem
        );
        let _ = writeln!(
            self.html,
            "<div class=\"grid2\"><figure><a href=\"{0}.svg\"><img src=\"{0}.svg\" alt=\"{1}\" loading=\"lazy\"></a><figcaption>{1}</figcaption></figure><p>{2}</p></div>",
            esc(&fig.rel_stem),
            esc(&fig.caption),
            html_text(text)
        );
    }

    /// One row of small multiples on the current page (a new one if the row does not fit):
    /// each SVG nested at the column width, capped at 55 % of the text height.
    fn figure_row(&mut self, row: &[LoadedFigure], cols: usize) {
        const GAP: f64 = 12.0;
        const CAPTION: f64 = 7.0;
        let text_w = PAGE_W - 2.0 * MARGIN;
        let col_w = (text_w - GAP * (cols as f64 - 1.0)) / cols as f64;
        let max_h = (BOTTOM - MARGIN) * if cols == 1 { 0.9 } else { 0.55 };
        let chars = (col_w / (SANS_EM * CAPTION)) as usize;
        let sizes: Vec<(f64, f64, usize)> = row
            .iter()
            .map(|(f, svg)| {
                let (w, h) = svg.as_ref().map_or((col_w, 20.0), |(w, h, _)| (*w, *h));
                let scale = (col_w / w).min(max_h / h);
                (w * scale, h * scale, wrap(&f.caption, chars).len())
            })
            .collect();
        let row_h = sizes
            .iter()
            .map(|(_, h, lines)| h + 6.0 + *lines as f64 * CAPTION * 1.35)
            .fold(0.0, f64::max);
        self.ensure(row_h + 6.0);
        let top = self.y;
        for (k, ((f, svg), (dw, dh, _))) in row.iter().zip(&sizes).enumerate() {
            let x = MARGIN + k as f64 * (col_w + GAP) + (col_w - dw) / 2.0;
            match svg {
                Some((w, h, inner)) => {
                    let _ = write!(
                        self.body,
                        r#"<svg x="{x:.1}" y="{top:.1}" width="{dw:.1}" height="{dh:.1}" viewBox="0 0 {w} {h}">{inner}</svg>"#
                    );
                }
                None => {
                    self.y = top;
                    self.line(
                        x,
                        CAPTION,
                        false,
                        false,
                        "#a00",
                        &format!("({} could not be read)", f.svg.display()),
                    );
                }
            }
            self.y = top + dh + 4.0;
            for l in wrap(&f.caption, chars) {
                self.line(
                    MARGIN + k as f64 * (col_w + GAP),
                    CAPTION,
                    false,
                    false,
                    "#333",
                    &l,
                );
            }
        }
        self.y = top + row_h + 6.0;
    }

    /// A link for the screen documents only (Markdown and HTML): `text` pointing at `href`.
    pub fn link_only(&mut self, text: &str, href: &str) {
        let _ = writeln!(self.md, "[{text}]({href})\n");
        let _ = writeln!(
            self.html,
            "<p><a href=\"{}\">{}</a></p>",
            esc(href),
            esc(text)
        );
    }

    /// Finish: the PDF pages, the Markdown and the HTML body.
    pub fn finish(mut self) -> Laid {
        self.page_break();
        Laid {
            pages: self.pages,
            md: self.md,
            html: self.html,
        }
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
        assert_eq!(wrap("abcdefghij x", 4), vec!["abcd", "efgh", "ij x"]);
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
        let laid = b.finish();
        assert!(laid.pages.len() >= 2);
        assert!(laid.pages.iter().all(|p| p.contains("footer text")));
        assert!(laid.md.contains("# One"));
        assert!(laid.html.contains("<h1 id=\"s0\">One</h1>"));
    }

    #[test]
    fn web_only_material_stays_off_paper() {
        let mut b = Book::new("f");
        b.heading("Main", 1);
        b.paragraph("on paper");
        b.set_paper(false);
        b.heading("Web", 1);
        for _ in 0..200 {
            b.paragraph("web only");
        }
        b.table(&["a", "b"], &[vec!["1".into(), "x<y".into()]]);
        assert_eq!(b.toc.last().map(|t| t.2), Some(0));
        let laid = b.finish();
        assert_eq!(laid.pages.len(), 1);
        assert!(!laid.pages[0].contains("web only"));
        assert!(laid.html.contains("<td>x&lt;y</td>"));
        assert!(laid.html.contains("class=\"sortable\""));
    }
}
