//! The combined report, laid out once into three documents from stored results only:
//! `report.pdf` (A4 pages, vector figures, text kept as text), its Markdown twin
//! `index.md` (PNG figures) and the HTML body of `index.html` (SVG figures beside it,
//! sortable tables). Material marked web-only ([`Book::set_paper`]) — the full per-run
//! figures and tables — goes to the Markdown and HTML but not onto paper; material marked
//! paper-only ([`Book::set_screen`]) the other way round. Pages are SVG documents composed
//! here — text lines, tables whose every cell is measured against its box
//! ([`crate::metrics`]), the experiments' figure SVGs nested at scale — and converted by
//! [`crate::pdf::pages_to_pdf`] with an outline of the headings and the links of the
//! contents ([`Book::contents`]). Every page carries the provenance footer (git revision,
//! dirty flag, date, machine) and its number.

mod contents;
mod table;

use crate::metrics::{self, Face};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// A4 width (pt).
pub const PAGE_W: f64 = 595.0;
/// A4 height (pt).
pub const PAGE_H: f64 = 842.0;
const MARGIN: f64 = 46.0;
const BOTTOM: f64 = PAGE_H - 52.0;
/// The width of the text block (pt).
pub const TEXT_W: f64 = PAGE_W - 2.0 * MARGIN;

pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Split `text` into lines of at most `width` characters at spaces (a word longer than
/// the width is cut into pieces of the width). For plain-text output; the pages wrap by
/// measured widths ([`metrics::wrap`]).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    for para in text.split('\n') {
        let mut line = String::new();
        for long in para.split_whitespace() {
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

/// A heading on paper: its level, title, page (0-based) and top (pt from the page's top).
/// The PDF outline has one item per mark; the contents page lists levels 1 and 2.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// 1, 2 or 3.
    pub level: usize,
    /// The heading's text.
    pub title: String,
    /// The page it is on (0-based).
    pub page: usize,
    /// Its top on that page (pt from the top).
    pub y: f64,
}

/// A link on a page: a rectangle (x0, y0, x1, y1 in pt from the page's top left) that
/// leads to the heading `target` (an index into [`Pages::marks`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// The page it is on (0-based).
    pub page: usize,
    /// The clickable rectangle.
    pub rect: (f64, f64, f64, f64),
    /// The heading it leads to.
    pub target: usize,
}

/// A text set on paper: its page (0-based) and its characters, as typeset.
#[derive(Clone, Debug, PartialEq)]
pub struct Typeset {
    /// The page (0-based).
    pub page: usize,
    /// The text.
    pub text: String,
}

/// A text wider than its box (a table cell, a column, the text block).
#[derive(Clone, Debug, PartialEq)]
pub struct Overflow {
    /// The page (0-based).
    pub page: usize,
    /// The text.
    pub text: String,
    /// Its measured width (pt).
    pub width: f64,
    /// The room it had (pt).
    pub room: f64,
}

impl std::fmt::Display for Overflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "page {}: {:?} is {:.1} pt wide in {:.1} pt",
            self.page + 1,
            self.text,
            self.width,
            self.room
        )
    }
}

/// The PDF side of a laid-out book: the pages as SVG documents, the headings (outline),
/// the links, every text as typeset and every text that did not fit its box.
#[derive(Clone, Debug, Default)]
pub struct Pages {
    /// The pages as SVG documents.
    pub svgs: Vec<String>,
    /// The headings on paper, in order.
    pub marks: Vec<Mark>,
    /// The links (the contents' entries).
    pub links: Vec<Link>,
    /// Every text set on paper.
    pub typeset: Vec<Typeset>,
    /// The texts wider than their boxes (none, unless the layout has a fault).
    pub overflows: Vec<Overflow>,
}

impl Pages {
    /// The number of pages.
    pub fn len(&self) -> usize {
        self.svgs.len()
    }

    /// Whether there are no pages.
    pub fn is_empty(&self) -> bool {
        self.svgs.is_empty()
    }
}

/// Where the contents go: the rest of page `page` below `top`, and `extra` pages after it;
/// the entries are the marks from `from` on.
#[derive(Clone, Copy, Debug)]
struct Slot {
    page: usize,
    top: f64,
    extra: usize,
    from: usize,
}

/// The clusters (a letter with combining marks) set on one page, per face and base
/// letter, in order: the k-th is set in cluster copy k of its face.
type Clusters = HashMap<(Face, char), Vec<String>>;

/// A document being laid out.
pub struct Book {
    /// Finished page bodies (SVG markup without the page frame and footer).
    pages: Vec<String>,
    body: String,
    y: f64,
    footer: String,
    md: String,
    html: String,
    /// Whether the PDF receives what is laid out now (false: Markdown and HTML only).
    paper: bool,
    /// Whether the Markdown and HTML receive what is laid out now (false: PDF only).
    screen: bool,
    /// How many `set_paper(false)` are open.
    paper_off: usize,
    /// How many `set_screen(false)` are open.
    screen_off: usize,
    /// Section titles with their page numbers (1-based; 0 for web-only sections), as the
    /// screen documents list them.
    pub toc: Vec<(usize, String, usize)>,
    marks: Vec<Mark>,
    links: Vec<Link>,
    typeset: Vec<Typeset>,
    overflows: Vec<Overflow>,
    contents: Option<Slot>,
    clusters: HashMap<usize, Clusters>,
    /// The finished page being written into (the contents, the frames), if not the
    /// current one.
    writing: Option<usize>,
}

/// The three documents a [`Book`] lays out.
pub struct Laid {
    /// The PDF pages with their outline and links.
    pub pages: Pages,
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

/// `text` as it is set on paper ([`crate::cjk::printable`]) wrapped to `max` pt.
fn paper_wrap(text: &str, face: Face, size: f64, max: f64) -> Vec<String> {
    metrics::wrap(&crate::cjk::printable(text), face, size, max)
}

/// The SVG family of a face.
fn family(face: Face) -> &'static str {
    match face {
        Face::Mono | Face::MonoBold => "DejaVu Sans Mono",
        Face::Sans | Face::SansBold => "DejaVu Sans",
    }
}

/// `text` split into runs: plain characters, and clusters (a letter followed by
/// combining marks) one per run, flagged `true`.
fn cluster_runs(text: &str) -> Vec<(String, bool)> {
    let chars: Vec<char> = text.chars().collect();
    let mut runs: Vec<(String, bool)> = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        let mut end = k + 1;
        while end < chars.len() && metrics::is_combining(chars[end]) {
            end += 1;
        }
        let piece: String = chars[k..end].iter().collect();
        let cluster = end > k + 1;
        match runs.last_mut() {
            Some((s, false)) if !cluster => s.push_str(&piece),
            _ => runs.push((piece, cluster)),
        }
        k = end;
    }
    runs
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
            screen: true,
            paper_off: 0,
            screen_off: 0,
            toc: Vec::new(),
            marks: Vec::new(),
            links: Vec::new(),
            typeset: Vec::new(),
            overflows: Vec::new(),
            contents: None,
            clusters: HashMap::new(),
            writing: None,
        }
    }

    /// From now on, lay out for paper too (`true`, the default) or only for the Markdown
    /// and HTML documents (`false`). Calls pair and nest: paper is back on after as many
    /// `true` as there were `false` (a web-only section may hold web-only parts).
    pub fn set_paper(&mut self, paper: bool) {
        self.paper_off = if paper {
            self.paper_off.saturating_sub(1)
        } else {
            self.paper_off + 1
        };
        self.paper = self.paper_off == 0;
    }

    /// From now on, lay out for the Markdown and HTML documents too (`true`, the default)
    /// or only for paper (`false`); calls pair and nest as those of [`Book::set_paper`].
    pub fn set_screen(&mut self, screen: bool) {
        self.screen_off = if screen {
            self.screen_off.saturating_sub(1)
        } else {
            self.screen_off + 1
        };
        self.screen = self.screen_off == 0;
    }

    /// Pages laid out so far (the current one counted if it has content).
    pub fn pages_so_far(&self) -> usize {
        self.pages.len() + usize::from(!self.body.is_empty())
    }

    fn page_number(&self) -> usize {
        self.pages.len() + 1
    }

    fn md(&mut self, text: &str) {
        if self.screen {
            self.md.push_str(text);
        }
    }

    fn html(&mut self, text: &str) {
        if self.screen {
            self.html.push_str(text);
        }
    }

    /// Close the current page (if it has content).
    pub fn page_break(&mut self) {
        if self.body.is_empty() {
            return;
        }
        self.pages.push(std::mem::take(&mut self.body));
        self.y = MARGIN;
    }

    fn ensure(&mut self, h: f64) {
        if self.paper && self.y + h > BOTTOM {
            self.page_break();
        }
    }

    /// Set `text` at `x` on the current line (baseline `size` below `y`) in `face`,
    /// measured against `right`, the right edge of its box (an overflow is recorded).
    /// A letter with combining marks is set in a cluster copy of the face (see
    /// [`crate::pdf`]) so that the PDF's text layer keeps both it and the plain letter.
    fn put(&mut self, x: f64, size: f64, face: Face, colour: &str, text: &str, right: f64) {
        if !self.paper {
            return;
        }
        let text = crate::cjk::printable(text);
        let page = self.writing.unwrap_or(self.pages.len());
        let width = metrics::width(&text, face, size);
        if x + width > right + 0.01 {
            self.overflows.push(Overflow {
                page,
                text: text.clone(),
                width,
                room: right - x,
            });
        }
        self.typeset.push(Typeset {
            page,
            text: text.clone(),
        });
        let fam = family(face);
        let weight = if matches!(face, Face::SansBold | Face::MonoBold) {
            "bold"
        } else {
            "normal"
        };
        // Each cluster, and the text after it, is a text chunk of its own (an absolute
        // x): usvg shapes a chunk of several fonts' spans by merging glyph clusters,
        // which a cluster of two glyphs breaks.
        let mut content = String::new();
        let mut at = x;
        for (k, (run, cluster)) in cluster_runs(&text).into_iter().enumerate() {
            let fam_k = if cluster {
                crate::pdf::cluster_family(fam, self.cluster_copy(page, face, &run))
            } else {
                fam.to_string()
            };
            if k == 0 && !cluster {
                content.push_str(&esc(&run));
            } else {
                let _ = write!(
                    content,
                    r#"<tspan x="{at:.2}" font-family="{fam_k}">{}</tspan>"#,
                    esc(&run)
                );
            }
            at += metrics::width(&run, face, size);
        }
        let _ = write!(
            self.body,
            r#"<text x="{x:.1}" y="{y:.1}" font-family="{fam}" font-size="{size}" font-weight="{weight}" fill="{colour}" xml:space="preserve">{content}</text>"#,
            y = self.y + size,
        );
    }

    /// The cluster copy (1-based) that sets `cluster` on `page` in `face`.
    fn cluster_copy(&mut self, page: usize, face: Face, cluster: &str) -> usize {
        let base = cluster.chars().next().unwrap_or(' ');
        let seen = self
            .clusters
            .entry(page)
            .or_default()
            .entry((face, base))
            .or_default();
        let k = match seen.iter().position(|c| c == cluster) {
            Some(k) => k,
            None => {
                seen.push(cluster.to_string());
                seen.len() - 1
            }
        };
        (k + 1).min(crate::pdf::CLUSTER_COPIES)
    }

    /// One line of text at `x`, then down by a line; `right` is its box's right edge.
    fn line(&mut self, x: f64, size: f64, face: Face, colour: &str, text: &str, right: f64) {
        if !self.paper {
            return;
        }
        self.put(x, size, face, colour, text, right);
        self.y += size * 1.35;
    }

    /// A heading; level 1 starts a new page; levels 1 and 2 enter the screen documents'
    /// table of contents, levels 1 to 3 on paper the PDF outline (levels 1 and 2 the
    /// contents page).
    pub fn heading(&mut self, text: &str, level: usize) {
        let size = heading_size(level);
        if self.paper {
            if level == 1 {
                self.page_break();
            } else {
                self.y += 4.0;
            }
            self.ensure(size * 3.0);
            self.marks.push(Mark {
                level: level.clamp(1, 3),
                title: crate::cjk::printable(text),
                page: self.pages.len(),
                y: self.y,
            });
            for l in paper_wrap(text, Face::SansBold, size, TEXT_W) {
                self.line(MARGIN, size, Face::SansBold, "#111", &l, MARGIN + TEXT_W);
            }
            self.y += 3.0;
        }
        if !self.screen {
            return;
        }
        let page = if self.paper { self.page_number() } else { 0 };
        let id = anchor(self.toc.len());
        if level <= 2 {
            self.toc.push((level, text.to_string(), page));
        }
        self.md(&format!("\n{} {}\n\n", "#".repeat(level), text));
        let h = level.clamp(1, 4);
        if level <= 2 {
            self.html(&format!("<h{h} id=\"{id}\">{}</h{h}>\n", esc(text)));
        } else {
            self.html(&format!("<h{h}>{}</h{h}>\n", esc(text)));
        }
    }

    /// A paragraph of running text.
    pub fn paragraph(&mut self, text: &str) {
        let size = 9.0;
        if self.paper {
            for l in paper_wrap(text, Face::Sans, size, TEXT_W) {
                self.ensure(size * 1.4);
                self.line(MARGIN, size, Face::Sans, "#111", &l, MARGIN + TEXT_W);
            }
            self.y += 4.0;
        }
        self.md(&format!("{text}\n\n"));
        self.html(&format!("<p>{}</p>\n", html_text(text)));
    }

    /// Preformatted lines (equations), monospace, wrapped.
    pub fn pre(&mut self, text: &str) {
        let size = 7.5;
        if self.paper {
            let x = MARGIN + 8.0;
            for l in paper_wrap(text, Face::Mono, size, TEXT_W - 8.0) {
                self.ensure(size * 1.4);
                self.line(x, size, Face::Mono, "#223", &l, MARGIN + TEXT_W);
            }
            self.y += 3.0;
        }
        self.md(&format!("```text\n{text}\n```\n\n"));
        self.html(&format!("<pre>{}</pre>\n", esc(text)));
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
        if self.paper {
            let loaded: Vec<LoadedFigure> = figs
                .iter()
                .map(|f| {
                    let svg = std::fs::read_to_string(f.svg)
                        .ok()
                        .and_then(|t| split_svg(&t));
                    (f, svg)
                })
                .collect();
            for row in loaded.chunks(cols) {
                self.figure_row(row, cols);
            }
        }
        let mut md = String::new();
        let mut html = format!("<div class=\"grid{cols}\">\n");
        for f in figs {
            let _ = writeln!(md, "![{}]({}.png)\n", f.caption, f.rel_stem);
            let _ = writeln!(
                html,
                "<figure><a href=\"{0}.svg\"><img src=\"{0}.svg\" alt=\"{1}\" loading=\"lazy\"></a><figcaption>{1}</figcaption></figure>",
                esc(&f.rel_stem),
                esc(&f.caption)
            );
        }
        html.push_str("</div>\n");
        self.md(&md);
        self.html(&html);
    }

    /// The height a `heading` of `level` takes on paper: the space above, its wrapped
    /// lines and the space below (as `heading` advances `y`).
    fn heading_height(text: &str, level: usize) -> f64 {
        let size = heading_size(level);
        let lines = paper_wrap(text, Face::SansBold, size, TEXT_W).len();
        4.0 + lines as f64 * size * 1.35 + 3.0
    }

    /// A nested figure at (`x`, top), `dw` × `dh` pt, or a line naming the file that
    /// could not be read.
    fn nest(&mut self, fig: &FigureRef, svg: Option<&SplitSvg>, x: f64, size: (f64, f64)) {
        let top = self.y;
        match svg {
            Some((w, h, inner)) => {
                let _ = write!(
                    self.body,
                    r#"<svg x="{x:.1}" y="{top:.1}" width="{dw:.1}" height="{dh:.1}" viewBox="0 0 {w} {h}">{inner}</svg>"#,
                    dw = size.0,
                    dh = size.1
                );
            }
            None => {
                let text = format!("({} could not be read)", fig.svg.display());
                for l in paper_wrap(&text, Face::Sans, 7.0, size.0) {
                    self.line(x, 7.0, Face::Sans, "#a00", &l, x + size.0);
                }
            }
        }
        self.y = top;
    }

    /// `figure_beside` on paper: the figure in the left column (`FIGURE_SHARE` of the
    /// width: a figure at the full half grew the blocks past four to a page), the text,
    /// then the figure's caption, in the right one. The block's height is the taller
    /// column's.
    fn paper_figure_beside(&mut self, heading: &str, fig: &FigureRef, text: &str) {
        const GAP: f64 = 12.0;
        const SIZE: f64 = 8.5;
        const CAPTION: f64 = 7.0;
        const FIGURE_SHARE: f64 = 0.45;
        let col_w = (TEXT_W - GAP) * FIGURE_SHARE;
        let text_w = TEXT_W - GAP - col_w;
        let svg = std::fs::read_to_string(fig.svg)
            .ok()
            .and_then(|t| split_svg(&t));
        let max_h = (BOTTOM - MARGIN) * 0.5;
        let (dw, dh) = svg.as_ref().map_or((col_w, 20.0), |(w, h, _)| {
            let scale = (col_w / w).min(max_h / h);
            (w * scale, h * scale)
        });
        let lines = paper_wrap(text, Face::Sans, SIZE, text_w);
        let caption = paper_wrap(&fig.caption, Face::Sans, CAPTION, text_w);
        let text_h = lines.len() as f64 * SIZE * 1.35 + 4.0 + caption.len() as f64 * CAPTION * 1.35;
        let block_h = dh.max(text_h);
        // The heading stays on the page of its figure.
        self.ensure(Self::heading_height(heading, 2) + block_h);
        self.heading(heading, 2);
        let top = self.y;
        self.nest(fig, svg.as_ref(), MARGIN, (dw, dh));
        // The text column starts at the figure's top.
        self.y = top;
        let x = MARGIN + col_w + GAP;
        for l in &lines {
            self.line(x, SIZE, Face::Sans, "#111", l, x + text_w);
        }
        self.y += 4.0;
        for l in &caption {
            self.line(x, CAPTION, Face::Sans, "#333", l, x + text_w);
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
        self.md(&format!(
            "{text}\n\n![{}]({}.png)\n\n",
            fig.caption, fig.rel_stem
        ));
        self.html(&format!(
            "<div class=\"grid2\"><figure><a href=\"{0}.svg\"><img src=\"{0}.svg\" alt=\"{1}\" loading=\"lazy\"></a><figcaption>{1}</figcaption></figure><p>{2}</p></div>\n",
            esc(&fig.rel_stem),
            esc(&fig.caption),
            html_text(text)
        ));
    }

    /// One row of small multiples on the current page (a new one if the row does not fit):
    /// each SVG nested at the column width, capped at 55 % of the text height.
    fn figure_row(&mut self, row: &[LoadedFigure], cols: usize) {
        const GAP: f64 = 12.0;
        const CAPTION: f64 = 7.0;
        let col_w = (TEXT_W - GAP * (cols as f64 - 1.0)) / cols as f64;
        let max_h = (BOTTOM - MARGIN) * if cols == 1 { 0.9 } else { 0.55 };
        let sizes: Vec<(f64, f64, Vec<String>)> = row
            .iter()
            .map(|(f, svg)| {
                let (w, h) = svg.as_ref().map_or((col_w, 20.0), |(w, h, _)| (*w, *h));
                let scale = (col_w / w).min(max_h / h);
                let caption = paper_wrap(&f.caption, Face::Sans, CAPTION, col_w);
                (w * scale, h * scale, caption)
            })
            .collect();
        let row_h = sizes
            .iter()
            .map(|(_, h, lines)| h + 6.0 + lines.len() as f64 * CAPTION * 1.35)
            .fold(0.0, f64::max);
        self.ensure(row_h + 6.0);
        let top = self.y;
        for (k, ((f, svg), (dw, dh, caption))) in row.iter().zip(&sizes).enumerate() {
            let left = MARGIN + k as f64 * (col_w + GAP);
            self.y = top;
            self.nest(f, svg.as_ref(), left + (col_w - dw) / 2.0, (*dw, *dh));
            self.y = top + dh + 4.0;
            for l in caption {
                self.line(left, CAPTION, Face::Sans, "#333", l, left + col_w);
            }
        }
        self.y = top + row_h + 6.0;
    }

    /// A link for the screen documents only (Markdown and HTML): `text` pointing at `href`.
    pub fn link_only(&mut self, text: &str, href: &str) {
        self.md(&format!("[{text}]({href})\n\n"));
        self.html(&format!(
            "<p><a href=\"{}\">{}</a></p>\n",
            esc(href),
            esc(text)
        ));
    }

    /// The page frame of body `k` (0-based): the SVG document with the footer (wrapped to
    /// the text width less the page number) and the page number.
    fn frame(&mut self, k: usize) -> String {
        const SIZE: f64 = 6.5;
        self.body = std::mem::take(&mut self.pages[k]);
        self.writing = Some(k);
        let footer = self.footer.clone();
        let lines = paper_wrap(&footer, Face::Sans, SIZE, TEXT_W - 30.0);
        let top = PAGE_H - 26.0 - SIZE - (lines.len() as f64 - 1.0) * SIZE * 1.35;
        self.y = top;
        for l in &lines {
            self.line(MARGIN, SIZE, Face::Sans, "#555", l, MARGIN + TEXT_W - 30.0);
        }
        self.y = PAGE_H - 26.0 - 7.0;
        let number = (k + 1).to_string();
        let w = metrics::width(&number, Face::Sans, 7.0);
        self.put(
            MARGIN + TEXT_W - w,
            7.0,
            Face::Sans,
            "#555",
            &number,
            MARGIN + TEXT_W,
        );
        self.writing = None;
        let mut svg = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{PAGE_W}" height="{PAGE_H}" viewBox="0 0 {PAGE_W} {PAGE_H}"><rect width="{PAGE_W}" height="{PAGE_H}" fill="white"/>"#
        );
        svg.push_str(&std::mem::take(&mut self.body));
        let _ = write!(
            svg,
            r##"<line x1="{MARGIN}" y1="{y:.1}" x2="{x2}" y2="{y:.1}" stroke="#999" stroke-width="0.5"/></svg>"##,
            y = top - 3.5,
            x2 = PAGE_W - MARGIN,
        );
        svg
    }

    /// Finish: the PDF pages (with the contents set into their place, every page framed
    /// with its footer and number), the Markdown and the HTML body.
    pub fn finish(mut self) -> Laid {
        (self.paper, self.paper_off) = (true, 0);
        self.page_break();
        self.set_contents();
        let svgs: Vec<String> = (0..self.pages.len()).map(|k| self.frame(k)).collect();
        Laid {
            pages: Pages {
                svgs,
                marks: self.marks,
                links: self.links,
                typeset: self.typeset,
                overflows: self.overflows,
            },
            md: self.md,
            html: self.html,
        }
    }
}

/// The type size of a heading of `level` (pt).
fn heading_size(level: usize) -> f64 {
    match level {
        1 => 17.0,
        2 => 12.5,
        _ => 10.5,
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
    fn pages_break_and_carry_the_footer_and_their_number() {
        let mut b = Book::new("footer text");
        b.heading("One", 1);
        for _ in 0..200 {
            b.paragraph("line");
        }
        let laid = b.finish();
        assert!(laid.pages.len() >= 2);
        assert!(laid.pages.svgs.iter().all(|p| p.contains("footer text")));
        assert!(laid.pages.svgs[1].contains(">2</text>"));
        assert!(laid.md.contains("# One"));
        assert!(laid.html.contains("<h1 id=\"s0\">One</h1>"));
        assert!(laid.pages.overflows.is_empty());
    }

    #[test]
    fn web_only_material_stays_off_paper_and_paper_only_off_screen() {
        let mut b = Book::new("f");
        b.heading("Main", 1);
        b.paragraph("on paper");
        b.set_screen(false);
        b.heading("Paper", 2);
        b.paragraph("paper only");
        b.set_screen(true);
        b.set_paper(false);
        b.heading("Web", 1);
        for _ in 0..200 {
            b.paragraph("web only");
        }
        b.set_paper(false);
        b.paragraph("nested web only");
        b.set_paper(true);
        b.paragraph("still web only");
        b.table(&["a", "b"], &[vec!["1".into(), "x<y".into()]]);
        assert_eq!(b.toc.last().map(|t| t.2), Some(0));
        assert_eq!(b.toc.len(), 2, "{:?}", b.toc);
        let laid = b.finish();
        assert_eq!(laid.pages.len(), 1);
        assert!(!laid.pages.svgs[0].contains("web only"));
        assert!(laid.md.contains("still web only"));
        assert!(laid.pages.svgs[0].contains("paper only"));
        assert!(!laid.md.contains("paper only") && !laid.html.contains("Paper"));
        assert!(laid.html.contains("<td>x&lt;y</td>"));
        assert!(laid.html.contains("class=\"sortable\""));
        let titles: Vec<&str> = laid.pages.marks.iter().map(|m| m.title.as_str()).collect();
        assert_eq!(titles, vec!["Main", "Paper"]);
    }

    #[test]
    fn a_letter_with_a_mark_is_set_in_a_cluster_copy_per_page() {
        assert_eq!(
            cluster_runs("rtol (h\u{304} 2)"),
            vec![
                ("rtol (".to_string(), false),
                ("h\u{304}".to_string(), true),
                (" 2)".to_string(), false)
            ]
        );
        let mut b = Book::new("f");
        b.paragraph("method h\u{304} q\u{307} q\u{308} q\u{307}");
        let laid = b.finish();
        let page = &laid.pages.svgs[0];
        assert!(
            page.contains("font-family=\"DejaVu Sans C1\">h\u{304}<"),
            "{page}"
        );
        // q̇ twice in copy 1, q̈ in copy 2: one text per letter in each copy.
        assert_eq!(page.matches(r#"font-family="DejaVu Sans C1">q"#).count(), 2);
        assert_eq!(page.matches(r#"font-family="DejaVu Sans C2">q"#).count(), 1);
    }
}
