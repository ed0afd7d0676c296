//! SVG → PDF with svg2pdf, text kept as text (DejaVu Sans and Sans Mono embedded as
//! subsets), and the combined report's navigation: the outline (bookmarks) of its
//! headings and the links of its contents page.
//!
//! The text layer: svg2pdf writes one ToUnicode entry per glyph of a font, the text of
//! the last cluster that glyph was drawn in. A letter carrying a combining mark (h̄, q̇)
//! is one cluster, so on a page that also sets the plain letter, the letter would copy
//! as the cluster or, in pdftotext, as nothing ("method" came back as "met od" beside
//! "h̄"). The book therefore sets every such cluster in a copy of its face under another
//! family name ([`cluster_family`]): each copy is a font of its own in the PDF, with its
//! own ToUnicode map, and the plain letters keep theirs.

use crate::book::{Link, Mark, Pages};
use crate::error::ReportError;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use svg2pdf::usvg::{self, fontdb};

/// How many copies of each face carry clusters: the k-th distinct cluster on one base
/// letter on one page is set in copy k (a page with more shares the last copy).
pub const CLUSTER_COPIES: usize = 6;

/// The family name of cluster copy `k` (1-based) of `family`.
pub fn cluster_family(family: &str, k: usize) -> String {
    format!("{family} C{k}")
}

/// The font database shared by every PDF: DejaVu Sans and Sans Mono (regular and bold),
/// and [`CLUSTER_COPIES`] copies of each under the families of [`cluster_family`].
pub(crate) fn font_db() -> Arc<fontdb::Database> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        db.load_font_data(dejavu::sans::regular().to_vec());
        db.load_font_data(dejavu::sans::bold().to_vec());
        db.load_font_data(dejavu::sans_mono::regular().to_vec());
        db.load_font_data(dejavu::sans_mono::bold().to_vec());
        let faces: Vec<fontdb::FaceInfo> = db.faces().cloned().collect();
        for face in faces {
            let Some((family, lang)) = face.families.first().cloned() else {
                continue;
            };
            for k in 1..=CLUSTER_COPIES {
                let mut copy = face.clone();
                copy.families = vec![(cluster_family(&family, k), lang)];
                copy.post_script_name = format!("{}-C{k}", face.post_script_name);
                db.push_face_info(copy);
            }
        }
        db.set_monospace_family("DejaVu Sans Mono");
        db.set_sans_serif_family("DejaVu Sans");
        Arc::new(db)
    })
    .clone()
}

fn options() -> usvg::Options<'static> {
    usvg::Options {
        fontdb: font_db(),
        font_family: "DejaVu Sans".into(),
        ..Default::default()
    }
}

/// Convert the SVG text `svg` to a one-page PDF at `out`.
pub fn svg_to_pdf(svg: &str, out: &Path) -> Result<(), ReportError> {
    let figure = out.display().to_string();
    let tree = usvg::Tree::from_str(svg, &options()).map_err(|e| ReportError::Draw {
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

/// Assemble the book's pages (A4, 595 × 842 pt user units) into one PDF at `out`: each
/// page is converted by svg2pdf into a form XObject (text kept as text) — the pages side
/// by side on the machine's cores — and drawn full-page; the headings become the outline
/// (bookmarks) and the contents entries links to their pages.
pub fn pages_to_pdf(pages: &Pages, out: &Path) -> Result<(), ReportError> {
    use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref};
    let figure = out.display().to_string();
    let opts = options();
    let numbered: Vec<(usize, &String)> = pages.svgs.iter().enumerate().collect();
    let converted = crate::in_parallel(&numbered, |(k, svg)| {
        convert_page(svg, &opts, &format!("{figure} page {}", k + 1))
    });
    let mut alloc = Ref::new(1);
    let catalog_id = alloc.bump();
    let tree_id = alloc.bump();
    let outline_id = alloc.bump();
    // Page ids first: the links and the outline point at pages by id.
    let page_ids: Vec<Ref> = (0..converted.len()).map(|_| alloc.bump()).collect();
    let mut pdf = Pdf::new();
    let mut chunks = Vec::new();
    let mut heights = Vec::new();
    for (k, page) in converted.into_iter().enumerate() {
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
        let content_id = alloc.bump();
        let mut content = Content::new();
        content
            .transform([width, 0.0, 0.0, height, 0.0, 0.0])
            .x_object(Name(b"S1"));
        pdf.stream(content_id, &content.finish());
        let annots = write_links(&mut pdf, &mut alloc, pages, k, &page_ids, height);
        let mut page = pdf.page(page_ids[k]);
        page.media_box(Rect::new(0.0, 0.0, width, height));
        page.parent(tree_id);
        page.contents(content_id);
        if !annots.is_empty() {
            page.annotations(annots);
        }
        page.resources().x_objects().pair(Name(b"S1"), svg_id);
        page.finish();
        chunks.push(chunk);
        heights.push(height);
    }
    let has_outline = write_outline(&mut pdf, &mut alloc, outline_id, &pages.marks, |m| {
        (page_ids.get(m.page).copied(), heights.get(m.page).copied())
    });
    let mut catalog = pdf.catalog(catalog_id);
    catalog.pages(tree_id);
    if has_outline {
        catalog
            .outlines(outline_id)
            .page_mode(pdf_writer::types::PageMode::UseOutlines);
    }
    catalog.finish();
    pdf.pages(tree_id)
        .kids(page_ids.iter().copied())
        .count(page_ids.len() as i32);
    for c in &chunks {
        pdf.extend(c);
    }
    std::fs::write(out, pdf.finish()).map_err(|e| ReportError::io(out, e))
}

/// The link annotations of page `k` (each a GoTo its target heading's page, at the
/// heading); returns their ids for the page's `/Annots`.
fn write_links(
    pdf: &mut pdf_writer::Pdf, alloc: &mut pdf_writer::Ref, pages: &Pages, k: usize,
    page_ids: &[pdf_writer::Ref], height: f32,
) -> Vec<pdf_writer::Ref> {
    use pdf_writer::types::{ActionType, AnnotationType};
    let mut ids = Vec::new();
    for link in pages.links.iter().filter(|l: &&Link| l.page == k) {
        let Some(target) = pages.marks.get(link.target) else {
            continue;
        };
        let Some(&dest_page) = page_ids.get(target.page) else {
            continue;
        };
        let id = alloc.bump();
        let (x0, y0, x1, y1) = link.rect;
        let mut annot = pdf.annotation(id);
        annot
            .subtype(AnnotationType::Link)
            .rect(pdf_writer::Rect::new(
                x0 as f32,
                height - y1 as f32,
                x1 as f32,
                height - y0 as f32,
            ))
            .border(0.0, 0.0, 0.0, None);
        annot
            .action()
            .action_type(ActionType::GoTo)
            .destination()
            .page(dest_page)
            .xyz(0.0, height - (target.y as f32 - 6.0).max(0.0), None);
        drop(annot);
        ids.push(id);
    }
    ids
}

/// The outline: one item per heading mark, nested by level (a level-3 heading under the
/// level-2 heading before it, and so on), each pointing at its page at the heading.
/// `locate` gives a mark's page id and page height. Returns whether any item was written.
fn write_outline(
    pdf: &mut pdf_writer::Pdf, alloc: &mut pdf_writer::Ref, outline_id: pdf_writer::Ref,
    marks: &[Mark], locate: impl Fn(&Mark) -> (Option<pdf_writer::Ref>, Option<f32>),
) -> bool {
    use pdf_writer::{Finish, TextStr};
    let tree = outline_tree(marks);
    if tree.roots.is_empty() {
        return false;
    }
    let ids: Vec<pdf_writer::Ref> = marks.iter().map(|_| alloc.bump()).collect();
    for (k, m) in marks.iter().enumerate() {
        let (Some(page), Some(height)) = locate(m) else {
            continue;
        };
        let mut item = pdf.outline_item(ids[k]);
        item.title(TextStr(&m.title));
        item.parent(tree.parent[k].map_or(outline_id, |p| ids[p]));
        let siblings = tree.parent[k].map_or(&tree.roots, |p| &tree.children[p]);
        let at = siblings.iter().position(|&s| s == k).unwrap_or(0);
        if at > 0 {
            item.prev(ids[siblings[at - 1]]);
        }
        if let Some(&next) = siblings.get(at + 1) {
            item.next(ids[next]);
        }
        if let (Some(&first), Some(&last)) = (tree.children[k].first(), tree.children[k].last()) {
            item.first(ids[first]);
            item.last(ids[last]);
            // Level-1 parts open, their sections closed (a negative count).
            let n = tree.children[k].len() as i32;
            item.count(if m.level <= 1 { n } else { -n });
        }
        item.dest()
            .page(page)
            .xyz(0.0, height - (m.y as f32 - 6.0).max(0.0), None);
        item.finish();
    }
    let open = tree.roots.len()
        + tree
            .roots
            .iter()
            .filter(|&&r| marks[r].level <= 1)
            .map(|&r| tree.children[r].len())
            .sum::<usize>();
    let mut outline = pdf.outline(outline_id);
    if let (Some(&first), Some(&last)) = (tree.roots.first(), tree.roots.last()) {
        outline.first(ids[first]).last(ids[last]);
    }
    outline.count(open as i32);
    true
}

/// The nesting of heading marks: each mark's parent (the nearest earlier mark of a lower
/// level), the children of each mark, and the top-level marks, all in document order.
pub(crate) struct OutlineTree {
    pub(crate) parent: Vec<Option<usize>>,
    pub(crate) children: Vec<Vec<usize>>,
    pub(crate) roots: Vec<usize>,
}

pub(crate) fn outline_tree(marks: &[Mark]) -> OutlineTree {
    let mut parent = vec![None; marks.len()];
    let mut children = vec![Vec::new(); marks.len()];
    let mut roots = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    for (k, m) in marks.iter().enumerate() {
        while stack.last().is_some_and(|&s| marks[s].level >= m.level) {
            stack.pop();
        }
        match stack.last() {
            Some(&p) => {
                parent[k] = Some(p);
                children[p].push(k);
            }
            None => roots.push(k),
        }
        stack.push(k);
    }
    OutlineTree {
        parent,
        children,
        roots,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(level: usize, title: &str) -> Mark {
        Mark {
            level,
            title: title.into(),
            page: 0,
            y: 100.0,
        }
    }

    #[test]
    fn outline_nests_by_level_and_skipped_levels_hang_under_the_nearest() {
        let marks = [
            mark(1, "A"),
            mark(2, "A.1"),
            mark(3, "A.1.a"),
            mark(2, "A.2"),
            mark(1, "B"),
            mark(3, "B..a"),
        ];
        let t = outline_tree(&marks);
        assert_eq!(t.roots, vec![0, 4]);
        assert_eq!(t.children[0], vec![1, 3]);
        assert_eq!(t.children[1], vec![2]);
        assert_eq!(t.parent[5], Some(4));
        assert_eq!(t.parent[3], Some(0));
    }
}
