//! The contents on paper: room reserved where [`Book::contents`] is called (the rest of
//! that page and as many pages as the expected entries need), filled when the book is
//! finished with every level-1 and level-2 heading after it — title and page number, in
//! columns — each entry a link to its heading's page.

use super::{Book, Link, BOTTOM, MARGIN, TEXT_W};
use crate::metrics::{self, Face};

/// Layouts tried, first that fits: (type size, columns).
const LAYOUTS: [(f64, usize); 6] = [(8.0, 2), (7.5, 2), (7.0, 2), (7.0, 3), (6.5, 3), (6.0, 3)];
/// The gap between columns (pt).
const GAP: f64 = 14.0;
/// The indent of a level-2 entry (pt).
const INDENT: f64 = 9.0;

/// One entry placed: the mark it lists, its page (0-based), column left edge, top and
/// width, and its title's lines.
struct Placed {
    mark: usize,
    page: usize,
    x: f64,
    y: f64,
    /// The column's width.
    w: f64,
    lines: Vec<String>,
}

/// The line height at type size `size`.
fn line_h(size: f64) -> f64 {
    size * 1.3
}

impl Book {
    /// The contents: a "Contents" heading (paper only) and below it the room for the
    /// entries — the rest of this page and enough pages more for `expected` entries at
    /// 7 pt in two columns — filled at [`Book::finish`]. What follows starts on a new
    /// page. Screen documents keep their own contents (index.md, the HTML's side bar).
    pub fn contents(&mut self, expected: usize) {
        if !self.paper {
            return;
        }
        let screen = self.screen;
        self.screen = false;
        self.heading("Contents", 2);
        self.screen = screen;
        let per_column = |h: f64| (h / line_h(7.0)).floor() as usize;
        let here = 2 * per_column(BOTTOM - self.y);
        let page = 2 * per_column(BOTTOM - MARGIN);
        let extra = expected.saturating_sub(here).div_ceil(page.max(1));
        self.contents = Some(super::Slot {
            page: self.pages.len(),
            top: self.y,
            extra,
            from: self.marks.len(),
        });
        self.page_break();
        self.pages.extend(std::iter::repeat_n(String::new(), extra));
    }

    /// Set the contents into the room reserved for them (at the first layout of
    /// [`LAYOUTS`] that holds every entry; should none, the smallest with as many as fit
    /// and a line saying how many more the outline has).
    pub(super) fn set_contents(&mut self) {
        let Some(slot) = self.contents else {
            return;
        };
        let entries: Vec<usize> = (slot.from..self.marks.len())
            .filter(|&k| self.marks[k].level <= 2)
            .collect();
        let mut placed = Vec::new();
        let mut size = 0.0;
        for (s, cols) in LAYOUTS {
            size = s;
            placed = self.place_entries(&entries, slot, s, cols);
            if placed.len() == entries.len() {
                break;
            }
        }
        let left = entries.len() - placed.len();
        for p in &placed {
            self.set_entry(p, size);
        }
        if left > 0 {
            let note = format!("… and {left} more headings: see the PDF's bookmarks.");
            let last = slot.page + slot.extra;
            self.on_page(last, |b| {
                b.y = BOTTOM - line_h(size);
                b.line(MARGIN, size, Face::Sans, "#555", &note, MARGIN + TEXT_W);
            });
        }
    }

    /// Place `entries` column by column in the reserved room at `size` in `cols`
    /// columns; the entries that fit, in order.
    fn place_entries(
        &self, entries: &[usize], slot: super::Slot, size: f64, cols: usize,
    ) -> Vec<Placed> {
        let col_w = (TEXT_W - GAP * (cols as f64 - 1.0)) / cols as f64;
        let mut out = Vec::new();
        let mut area = (0, 0);
        let mut y = slot.top;
        for &m in entries {
            let lines = self.entry_lines(m, size, col_w);
            let h = lines.len() as f64 * line_h(size)
                + if self.marks[m].level == 1 { 2.0 } else { 0.0 };
            loop {
                if y + h <= BOTTOM {
                    break;
                }
                area.1 += 1;
                if area.1 == cols {
                    area = (area.0 + 1, 0);
                }
                if area.0 > slot.extra {
                    return out;
                }
                y = if area.0 == 0 { slot.top } else { MARGIN };
            }
            out.push(Placed {
                mark: m,
                page: slot.page + area.0,
                x: MARGIN + area.1 as f64 * (col_w + GAP),
                y,
                w: col_w,
                lines,
            });
            y += h;
        }
        out
    }

    /// The lines of entry `m` in a column `col_w` wide: its title wrapped to the column
    /// less its indent and the room of its page number.
    fn entry_lines(&self, m: usize, size: f64, col_w: f64) -> Vec<String> {
        let mark = &self.marks[m];
        let face = if mark.level == 1 {
            Face::SansBold
        } else {
            Face::Sans
        };
        let indent = if mark.level == 1 { 0.0 } else { INDENT };
        let number = metrics::width(&(mark.page + 1).to_string(), Face::Sans, size);
        metrics::wrap(&mark.title, face, size, col_w - indent - number - 6.0)
    }

    /// Set one placed entry: its title lines, its page number at the column's right edge
    /// on its last line, and its link.
    fn set_entry(&mut self, p: &Placed, size: f64) {
        let mark = self.marks[p.mark].clone();
        let (face, indent) = if mark.level == 1 {
            (Face::SansBold, 0.0)
        } else {
            (Face::Sans, INDENT)
        };
        let number = (mark.page + 1).to_string();
        let right = p.x + p.w;
        self.on_page(p.page, |b| {
            b.y = p.y + if mark.level == 1 { 2.0 } else { 0.0 };
            let last = p.lines.len().saturating_sub(1);
            for (k, l) in p.lines.iter().enumerate() {
                if k == last {
                    let w = metrics::width(&number, Face::Sans, size);
                    b.put(right - w, size, Face::Sans, "#333", &number, right);
                }
                b.put(p.x + indent, size, face, "#124", l, right);
                b.y += line_h(size);
            }
        });
        let h = p.lines.len() as f64 * line_h(size) + 2.0;
        self.links.push(Link {
            page: p.page,
            rect: (p.x, p.y, right, p.y + h),
            target: p.mark,
        });
    }

    /// Run `f` with the finished page `page` as the current page body.
    fn on_page(&mut self, page: usize, f: impl FnOnce(&mut Book)) {
        let Some(body) = self.pages.get_mut(page).map(std::mem::take) else {
            return;
        };
        let current = std::mem::replace(&mut self.body, body);
        let (y, writing) = (self.y, self.writing);
        self.writing = Some(page);
        f(self);
        self.writing = writing;
        self.y = y;
        let body = std::mem::replace(&mut self.body, current);
        self.pages[page] = body;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_list_the_headings_with_their_pages_and_link_to_them() {
        let mut b = Book::new("f");
        b.heading("Title", 1);
        b.paragraph("intro");
        b.contents(10);
        b.heading("Part one", 1);
        b.heading("Section", 2);
        b.heading("Subsection", 3);
        for _ in 0..120 {
            b.paragraph("text");
        }
        b.heading("Part two", 1);
        let laid = b.finish();
        let p = &laid.pages;
        let titles: Vec<(&str, usize)> =
            p.marks.iter().map(|m| (m.title.as_str(), m.page)).collect();
        assert_eq!(
            titles,
            vec![
                ("Title", 0),
                ("Contents", 0),
                ("Part one", 1),
                ("Section", 1),
                ("Subsection", 1),
                ("Part two", 4)
            ]
        );
        // Three entries (levels 1 and 2 after the contents), each a link to its heading.
        let targets: Vec<usize> = p.links.iter().map(|l| l.target).collect();
        assert_eq!(targets, vec![2, 3, 5]);
        assert!(p.links.iter().all(|l| l.page == 0));
        assert!(p.svgs[0].contains(">Part two</text>") && p.svgs[0].contains(">5</text>"));
        assert!(p.overflows.is_empty(), "{:?}", p.overflows);
    }
}
