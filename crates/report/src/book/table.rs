//! Tables on paper, every cell measured against its box: a table whose columns fit the
//! text block in monospace (7 or 6.5 pt, one line per cell) is set so, its columns aligned;
//! any other is set in DejaVu Sans at 7 pt with its cells wrapped inside their columns —
//! never cut. Rows stay whole on a page (a row taller than a page continues on the next);
//! the header repeats on every page. On screen every table is a sortable HTML table with
//! full cells, and a Markdown table.

use super::{esc, Book, BOTTOM, MARGIN, TEXT_W};
use crate::metrics::{self, Face};
use std::fmt::Write as _;

/// Monospace sizes tried, largest first.
const MONO_SIZES: [f64; 2] = [7.0, 6.5];
/// The type sizes of a wrapped table, largest first: the first at which every column
/// gets its widest word.
const PROSE: [f64; 2] = [7.0, 6.5];

/// A wrapped table's columns: their widths and the type size.
struct Grid {
    widths: Vec<f64>,
    size: f64,
}
/// The space right of a wrapped cell's text (pt).
const PAD: f64 = 5.0;

/// The header and rows as set on paper ([`crate::cjk::printable`]): measured as printed.
fn as_printed(headers: &[&str], rows: &[Vec<String>]) -> (Vec<String>, Vec<Vec<String>>) {
    let print = |c: &str| crate::cjk::printable(c);
    (
        headers.iter().map(|h| print(h)).collect(),
        rows.iter()
            .map(|r| r.iter().map(|c| print(c)).collect())
            .collect(),
    )
}

/// The cells of row `r` for `n` columns (missing cells empty, extra cells dropped).
fn cells(r: &[String], n: usize) -> Vec<String> {
    (0..n)
        .map(|k| r.get(k).cloned().unwrap_or_default())
        .collect()
}

/// Monospace layout: the first size at which every column at its widest cell, two
/// character widths apart, fits the text block; the size and the columns' widths.
fn mono_layout(head: &[String], rows: &[Vec<String>]) -> Option<(f64, Vec<f64>)> {
    let n = head.len();
    MONO_SIZES.iter().find_map(|&size| {
        let widths: Vec<f64> = (0..n)
            .map(|k| {
                rows.iter()
                    .map(|r| metrics::width(r.get(k).map_or("", |c| c), Face::Mono, size))
                    .fold(metrics::width(&head[k], Face::MonoBold, size), f64::max)
            })
            .collect();
        let gap = 2.0 * metrics::advance(' ', Face::Mono) * size;
        let total = widths.iter().sum::<f64>() + gap * n.saturating_sub(1) as f64;
        (total <= TEXT_W).then_some((size, widths))
    })
}

/// The widest piece of `text` a wrap does not break (a word, or the part of an
/// identifier between its good break places: [`metrics::pieces`]) in `face` at `size`.
fn widest_word(text: &str, face: Face, size: f64) -> f64 {
    text.split_whitespace()
        .flat_map(metrics::pieces)
        .map(|w| metrics::width(&w, face, size))
        .fold(0.0, f64::max)
}

/// Per column of a wrapped table: its natural width (the widest cell on one line) and its
/// least width (its widest word, at most a quarter of the text block: a longer word is
/// broken at its `-+_/,=` or, failing those, between characters), both with the cell's
/// padding.
fn natural_and_least(head: &[String], rows: &[Vec<String>], size: f64) -> (Vec<f64>, Vec<f64>) {
    let n = head.len();
    let col = |k: usize| {
        std::iter::once((&head[k], Face::SansBold)).chain(
            rows.iter()
                .filter_map(move |r| r.get(k))
                .map(|c| (c, Face::Sans)),
        )
    };
    let natural = (0..n)
        .map(|k| {
            col(k)
                .map(|(c, f)| metrics::width(c, f, size))
                .fold(0.0, f64::max)
                + PAD
        })
        .collect();
    let least = (0..n)
        .map(|k| {
            col(k)
                .map(|(c, f)| widest_word(c, f, size))
                .fold(0.0, f64::max)
                .min(TEXT_W / 4.0)
                + PAD
        })
        .collect();
    (natural, least)
}

/// Column widths for a wrapped table: natural widths (one line per cell) at the first size
/// of [`PROSE`] where they fit; else, as a browser lays out an automatic table, at the
/// first size where every column gets its widest word, every column its least width plus
/// a share of the remaining room in proportion to what it lacks of its natural width. If even the least widths do not fit
/// at the smallest size, those scaled down to the text width (long words then break).
fn prose_grid(head: &[String], rows: &[Vec<String>]) -> Grid {
    let mut last = Grid {
        widths: Vec::new(),
        size: PROSE[PROSE.len() - 1],
    };
    // One line per cell at any of the sizes beats wrapped cells at a larger one.
    for size in PROSE {
        let (natural, _) = natural_and_least(head, rows, size);
        if natural.iter().sum::<f64>() <= TEXT_W {
            return Grid {
                widths: natural,
                size,
            };
        }
    }
    for size in PROSE {
        let (natural, least) = natural_and_least(head, rows, size);
        let (sum_n, sum_l): (f64, f64) = (natural.iter().sum(), least.iter().sum());
        if sum_l <= TEXT_W {
            let share = (TEXT_W - sum_l) / (sum_n - sum_l);
            let widths = natural
                .iter()
                .zip(&least)
                .map(|(n, l)| l + (n - l) * share)
                .collect();
            return Grid { widths, size };
        }
        last.widths = least.iter().map(|l| l * TEXT_W / sum_l).collect();
    }
    last
}

/// Raise every column below its least width to it, taking the difference from the
/// columns above theirs in proportion to their slack (as far as the slack goes: a
/// column left narrower than a word gets the word broken).
fn raise_to_least(widths: &mut [f64], least: &[f64]) {
    let deficit: f64 = widths
        .iter()
        .zip(least)
        .map(|(w, l)| (l - w).max(0.0))
        .sum();
    let slack: f64 = widths
        .iter()
        .zip(least)
        .map(|(w, l)| (w - l).max(0.0))
        .sum();
    if deficit <= 0.0 || slack <= 0.0 {
        return;
    }
    let take = (deficit / slack).min(1.0);
    let give = (slack / deficit).min(1.0);
    for (w, l) in widths.iter_mut().zip(least) {
        if *w < *l {
            *w += (l - *w) * give;
        } else {
            *w -= (*w - l) * take;
        }
    }
}

impl Book {
    /// A table: on paper in monospace if its columns fit, else in wrapped prose cells
    /// (nothing is cut either way); on screen a sortable HTML table and a Markdown table
    /// with full cells.
    pub fn table(&mut self, headers: &[&str], rows: &[Vec<String>]) {
        if self.paper {
            let (head, paper_rows) = as_printed(headers, rows);
            let rows = &paper_rows;
            match mono_layout(&head, rows) {
                Some((size, widths)) => self.mono_table(&head, rows, size, &widths),
                None => self.prose_table(&head, rows, &prose_grid(&head, rows)),
            }
        }
        self.html_table(headers, rows);
        self.md_table(headers, rows);
    }

    /// A table of prose cells that wrap inside their columns (DejaVu Sans, 7 pt);
    /// `fractions` are the columns' shares of the text width, widened where a column is
    /// narrower than its longest word. Rows stay whole; the header repeats on every page.
    pub fn table_wrapped(&mut self, headers: &[&str], rows: &[Vec<String>], fractions: &[f64]) {
        if self.paper {
            let (head, paper_rows) = as_printed(headers, rows);
            let rows = &paper_rows;
            let total: f64 = fractions.iter().take(head.len()).sum::<f64>().max(1e-9);
            let mut widths: Vec<f64> = (0..head.len())
                .map(|k| fractions.get(k).copied().unwrap_or(0.0) / total * TEXT_W)
                .collect();
            let least = |size| natural_and_least(&head, rows, size).1;
            let size = PROSE
                .into_iter()
                .find(|&s| least(s).iter().sum::<f64>() <= TEXT_W)
                .unwrap_or(PROSE[PROSE.len() - 1]);
            raise_to_least(&mut widths, &least(size));
            self.prose_table(&head, rows, &Grid { widths, size });
        }
        self.html_table(headers, rows);
        self.md_table(headers, rows);
    }

    /// A monospace table: each cell at its column's left edge, one line per cell.
    fn mono_table(&mut self, head: &[String], rows: &[Vec<String>], size: f64, widths: &[f64]) {
        let gap = 2.0 * metrics::advance(' ', Face::Mono) * size;
        let xs: Vec<f64> = widths
            .iter()
            .scan(MARGIN, |x, w| {
                let at = *x;
                *x += w + gap;
                Some(at)
            })
            .collect();
        let n = head.len();
        self.ensure(size * 4.0);
        self.mono_row(head, &xs, widths, size, Face::MonoBold);
        for r in rows {
            if self.y + size * 1.4 > BOTTOM {
                self.page_break();
                self.mono_row(head, &xs, widths, size, Face::MonoBold);
            }
            self.mono_row(&cells(r, n), &xs, widths, size, Face::Mono);
        }
        self.y += 6.0;
    }

    fn mono_row(&mut self, cells: &[String], xs: &[f64], widths: &[f64], size: f64, face: Face) {
        for ((c, x), w) in cells.iter().zip(xs).zip(widths) {
            self.put(*x, size, face, "#111", c, x + w);
        }
        self.y += size * 1.4;
    }

    /// A wrapped table on `grid`.
    fn prose_table(&mut self, head: &[String], rows: &[Vec<String>], grid: &Grid) {
        let n = head.len();
        let (head_lines, head_h) = wrapped_cells(head, grid, Face::SansBold);
        let first = rows
            .first()
            .map_or(0.0, |r| wrapped_cells(&cells(r, n), grid, Face::Sans).1);
        self.ensure(head_h + first.min(BOTTOM - MARGIN - head_h));
        self.prose_row(&head_lines, head_h, grid, true);
        for r in rows {
            let (lines, h) = wrapped_cells(&cells(r, n), grid, Face::Sans);
            self.prose_lines(&lines, h, grid, (&head_lines, head_h));
        }
        self.y += 6.0;
    }

    /// One wrapped row: on this page if it fits, else on the next (after the header);
    /// a row taller than a page is set page by page.
    fn prose_lines(
        &mut self, lines: &[Vec<String>], h: f64, grid: &Grid, head: (&[Vec<String>], f64),
    ) {
        let line_h = grid.size * 1.35;
        let mut lines = lines.to_vec();
        let mut h = h;
        loop {
            if self.y + h <= BOTTOM {
                self.prose_row(&lines, h, grid, false);
                return;
            }
            let room = ((BOTTOM - self.y - 3.0) / line_h).floor() as usize;
            let fresh = ((BOTTOM - MARGIN - head.1 - 3.0) / line_h).floor() as usize;
            let rows_left = lines.iter().map(Vec::len).max().unwrap_or(0);
            if room >= 1 && rows_left > fresh {
                let now: Vec<Vec<String>> = lines
                    .iter()
                    .map(|c| c.iter().take(room).cloned().collect())
                    .collect();
                self.prose_row(&now, room as f64 * line_h + 3.0, grid, false);
                lines = lines
                    .iter()
                    .map(|c| c.iter().skip(room).cloned().collect())
                    .collect();
                h = lines.iter().map(Vec::len).max().unwrap_or(1) as f64 * line_h + 3.0;
            }
            self.page_break();
            self.prose_row(head.0, head.1, grid, true);
        }
    }

    /// One wrapped row at the current position, with a rule under it.
    fn prose_row(&mut self, lines: &[Vec<String>], h: f64, grid: &Grid, bold: bool) {
        let face = if bold { Face::SansBold } else { Face::Sans };
        let top = self.y;
        let mut x = MARGIN;
        for (cell, w) in lines.iter().zip(&grid.widths) {
            self.y = top;
            for l in cell {
                self.line(x, grid.size, face, "#111", l, x + w - PAD);
            }
            x += w;
        }
        self.y = top + h;
        let _ = write!(
            self.body,
            r##"<line x1="{MARGIN}" y1="{y:.1}" x2="{x2:.1}" y2="{y:.1}" stroke="{c}" stroke-width="{sw}"/>"##,
            y = self.y - 1.5,
            x2 = MARGIN + grid.widths.iter().sum::<f64>().min(TEXT_W),
            c = if bold { "#555" } else { "#ddd" },
            sw = if bold { 0.6 } else { 0.4 },
        );
    }

    fn md_table(&mut self, headers: &[&str], rows: &[Vec<String>]) {
        let mut md = format!("| {} |\n", headers.join(" | "));
        let _ = writeln!(md, "|{}|", vec!["---"; headers.len()].join("|"));
        for r in rows {
            let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
            let _ = writeln!(md, "| {} |", cells.join(" | "));
        }
        md.push('\n');
        self.md(&md);
    }

    /// A table in HTML: sortable (a click on a header sorts by that column, numbers as
    /// numbers), full cells.
    fn html_table(&mut self, headers: &[&str], rows: &[Vec<String>]) {
        let mut html = String::from("<table class=\"sortable\"><thead><tr>");
        for h in headers {
            let _ = write!(html, "<th>{}</th>", esc(h));
        }
        html.push_str("</tr></thead><tbody>\n");
        for r in rows {
            html.push_str("<tr>");
            for c in r.iter().take(headers.len()) {
                let _ = write!(html, "<td>{}</td>", esc(c));
            }
            html.push_str("</tr>\n");
        }
        html.push_str("</tbody></table>\n");
        self.html(&html);
    }
}

/// The lines of each cell of a wrapped row (wrapped to the column less its padding),
/// and the row's height.
fn wrapped_cells(cells: &[String], grid: &Grid, face: Face) -> (Vec<Vec<String>>, f64) {
    let lines: Vec<Vec<String>> = cells
        .iter()
        .zip(&grid.widths)
        .map(|(c, w)| metrics::wrap(c, face, grid.size, w - PAD))
        .collect();
    let n = lines.iter().map(Vec::len).max().unwrap_or(1).max(1);
    (lines, n as f64 * grid.size * 1.35 + 3.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_narrow_table_is_monospace_and_a_wide_one_wraps() {
        let head = strings(&["a", "b"]);
        let rows = vec![strings(&["1", "two"])];
        assert_eq!(mono_layout(&head, &rows).map(|l| l.0), Some(7.0));
        let long = "diverged at t = 1.82: ‖q‖∞ = 1.2881448683081406e8 exceeds the bound ".repeat(2);
        let rows = vec![strings(&["diverged", "112", &long])];
        assert!(mono_layout(&strings(&["kind", "rows", "example"]), &rows).is_none());
        let grid = prose_grid(&strings(&["kind", "rows", "example"]), &rows);
        let widths = &grid.widths;
        assert!(
            (widths.iter().sum::<f64>() - TEXT_W).abs() < 1e-6,
            "{widths:?}"
        );
        // The short columns get their natural widths, the long one the rest.
        let (natural, _) = natural_and_least(&strings(&["kind", "rows", "example"]), &rows, 7.0);
        assert!((widths[1] - natural[1]).abs() < 1e-9, "{widths:?}");
        assert!(widths[2] > 350.0, "{widths:?}");
    }

    #[test]
    fn a_column_is_widened_to_its_longest_word() {
        let mut widths = vec![20.0, 200.0];
        raise_to_least(&mut widths, &[40.0, 50.0]);
        assert_eq!(widths, vec![40.0, 180.0]);
    }

    #[test]
    fn nothing_is_cut_in_either_layout() {
        let mut b = Book::new("f");
        let head = ["fail_kind", "rows", "experiments (rows)", "example"];
        let row = strings(&[
            "stage-iteration-diverged",
            "7",
            "iftomm-a02 (4), maximal-vs-reduced (1), recovery (2), velocity-projection+projection (9)",
            "stage iteration diverged at t = 0.7000000000000001: the corrector's contraction θ = 1.7 ≥ 1",
        ]);
        b.table(&head, &vec![row.clone(); 80]);
        b.table(&["x", "y"], &[strings(&["1", "2"])]);
        b.table_wrapped(&head, std::slice::from_ref(&row), &[0.05, 0.05, 0.1, 0.8]);
        let laid = b.finish();
        assert!(
            laid.pages.overflows.is_empty(),
            "{:?}",
            laid.pages.overflows
        );
        let text: String = laid.pages.typeset.iter().map(|t| t.text.as_str()).collect();
        for cell in &row {
            let squeezed: String = cell.split_whitespace().collect();
            assert!(text.replace(' ', "").contains(&squeezed), "{cell}");
        }
        assert!(
            laid.pages.len() >= 2,
            "80 wrapped rows take more than a page"
        );
    }
}
