//! Reading an XML model file (URDF, SDF) as untrusted input: the nesting is bounded before
//! the parser sees the text, every element a reader walks is held to the format's
//! specification ([`Shape`]: its attributes and children, each child once or many times),
//! and every refusal names the element's line.
//!
//! The rule that serves both real files and typos: an attribute or child the
//! specification defines is read (or refused when malformed, or duplicated where it may
//! appear once); a name within one or two edits of one the specification defines is a
//! typo and refused with the name it resembles (no default behind a typo); any other name
//! — a vendor extension such as `<self_filter>` or `<gazebo_reference>` — is skipped and
//! listed as a [`ModelNote`], which `describe`, the run's manifest and the terminal show.

use super::super::spatial::V3;
use super::description::{JointKind, ModelError, ModelNote, Origin};
use roxmltree::{Document, Node, ParsingOptions};
use std::cell::RefCell;

/// The deepest nesting of elements read. roxmltree's tokenizer recurses once per level
/// (about 0.5 kB of stack each in a debug build, measured: 20 000 levels overflow the
/// 8 MiB main stack), so the text is scanned for its depth first; 1 000 levels need about
/// 0.5 MiB, within a 2 MiB worker thread's stack. Robot files nest fewer than 10 levels.
pub const MAX_DEPTH: usize = 1000;

/// The most XML nodes (elements and text runs; attributes are not nodes) a file may hold:
/// a bound on the parser's memory before any model is built (a 16 MiB file of empty
/// elements has about 2 million).
pub const MAX_NODES: u32 = 4_000_000;

/// The most attributes one element may carry. roxmltree compares each new attribute with
/// the element's earlier ones, so an element of a million attributes (a 16 MiB file)
/// would cost 10¹² comparisons; a robot description's elements carry fewer than ten.
pub const MAX_ATTRIBUTES: usize = 256;

/// The parsed document, or an error saying that the file is not XML, or nests too deep,
/// and where.
pub fn parse<'a>(file: &str, text: &'a str) -> Result<Document<'a>, ModelError> {
    match scan(text, MAX_DEPTH) {
        Some(Excess::Depth(depth, line)) => {
            return Err(ModelError::at(
                file,
                &Origin {
                    element: format!("an element at depth {depth}"),
                    line: Some(line),
                },
                format!("the elements nest deeper than {MAX_DEPTH} levels"),
                "a robot description nests a few levels deep; remove the generated nesting (or check that this is the model file)",
            ))
        }
        Some(Excess::Attributes(count, line)) => {
            return Err(ModelError::at(
                file,
                &Origin {
                    element: "an element".into(),
                    line: Some(line),
                },
                format!("{count} attributes on one element, above the {MAX_ATTRIBUTES} driftlab reads"),
                "a robot description's elements carry a few attributes; check that this is the model file",
            ))
        }
        None => {}
    }
    let options = ParsingOptions {
        allow_dtd: false,
        nodes_limit: MAX_NODES,
    };
    Document::parse_with_options(text, options).map_err(|e| {
        let p = e.pos();
        ModelError::at(
            file,
            &Origin {
                element: format!("column {}", p.col),
                line: Some(p.row),
            },
            format!("not well-formed XML: {e}"),
            "give a URDF or SDF file (XML, no DTD, at most 4 000 000 nodes); a xacro file must be expanded with `xacro` first",
        )
    })
}

/// What a scan found beyond the reader's bounds, with the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Excess {
    /// Elements nested this deep.
    Depth(usize, u32),
    /// An element with this many attributes.
    Attributes(usize, u32),
}

fn line_at(b: &[u8], i: usize) -> u32 {
    let line = 1 + b[..i].iter().filter(|&&c| c == b'\n').count();
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// The first place where elements nest deeper than `limit` or an element carries more
/// than [`MAX_ATTRIBUTES`] attributes. A linear scan that knows comments, CDATA,
/// processing instructions, declarations and quoted attribute values; anything malformed
/// is left for the parser to report.
pub fn scan(text: &str, limit: usize) -> Option<Excess> {
    let b = text.as_bytes();
    let (mut i, mut depth) = (0usize, 0usize);
    let skip_to = |from: usize, end: &[u8]| -> usize {
        find(b, from, end).map_or(b.len(), |k| k + end.len())
    };
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        let rest = &b[i..];
        if rest.starts_with(b"<!--") {
            i = skip_to(i + 4, b"-->");
        } else if rest.starts_with(b"<![CDATA[") {
            i = skip_to(i + 9, b"]]>");
        } else if rest.starts_with(b"<?") {
            i = skip_to(i + 2, b"?>");
        } else if rest.starts_with(b"<!") {
            i = skip_to(i + 2, b">");
        } else if rest.starts_with(b"</") {
            depth = depth.saturating_sub(1);
            i = skip_to(i + 2, b">");
        } else {
            let (end, empty, attributes) = tag_end(b, i + 1);
            if attributes > MAX_ATTRIBUTES {
                return Some(Excess::Attributes(attributes, line_at(b, i)));
            }
            if !empty {
                depth += 1;
                if depth > limit {
                    return Some(Excess::Depth(depth, line_at(b, i)));
                }
            }
            i = end;
        }
    }
    None
}

fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|k| from + k)
}

/// The index after a start tag's `>` from `from` (past its name), quoted values skipped,
/// whether it is an empty-element tag (`/>`), and its attributes (its `=` outside quotes).
fn tag_end(b: &[u8], mut i: usize) -> (usize, bool, usize) {
    let mut quote: Option<u8> = None;
    let mut attributes = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'"' || c == b'\'' => quote = Some(c),
            None if c == b'=' => attributes += 1,
            None if c == b'>' => return (i + 1, i > 0 && b[i - 1] == b'/', attributes),
            None => {}
        }
        i += 1;
    }
    (b.len(), false, attributes)
}

/// What the format's specification allows on one element: its attributes, the children
/// it may have once, and those it may have any number of times.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// The element's tag (for messages).
    pub tag: &'static str,
    /// Attributes the specification defines.
    pub attrs: &'static [&'static str],
    /// Children that may appear at most once.
    pub once: &'static [&'static str],
    /// Children that may appear any number of times.
    pub many: &'static [&'static str],
}

/// The most notes kept per file; the rest are counted in a last one (a hostile file may
/// hold a million vendor elements).
pub const MAX_NOTES: usize = 1000;

/// One XML model file being read: its name, the document, the notes of what was skipped,
/// and the format (`URDF`, `SDF`) for messages.
pub struct Xml<'a, 'i> {
    /// The file.
    pub file: &'a str,
    /// The parsed document.
    pub doc: &'a Document<'i>,
    /// `URDF` or `SDF`.
    pub format: &'static str,
    /// Byte offset of every line's start, for a line number in O(log n).
    lines: Vec<usize>,
    notes: RefCell<(Vec<ModelNote>, usize)>,
}

impl<'a, 'i> Xml<'a, 'i> {
    /// A reader of `doc`, read from `file` in `format`.
    pub fn new(file: &'a str, doc: &'a Document<'i>, format: &'static str) -> Self {
        let text = doc.input_text().as_bytes();
        let lines = std::iter::once(0)
            .chain(
                text.iter()
                    .enumerate()
                    .filter(|(_, &c)| c == b'\n')
                    .map(|(k, _)| k + 1),
            )
            .collect();
        Self {
            file,
            doc,
            format,
            lines,
            notes: RefCell::new((Vec::new(), 0)),
        }
    }

    /// The notes taken (what was skipped, and why), the ones past [`MAX_NOTES`] counted
    /// in a last one.
    pub fn into_notes(self) -> Vec<ModelNote> {
        let (mut notes, more) = self.notes.into_inner();
        if more > 0 {
            notes.push(ModelNote {
                at: Origin {
                    element: "the file".into(),
                    line: None,
                },
                what: format!("{more} more notes like the ones above, not listed"),
            });
        }
        notes
    }

    /// Record a note at `node`.
    pub fn note(&self, node: Node, what: impl Into<String>) {
        self.note_at(&self.origin(node), what);
    }

    /// Record a note at `at`.
    pub fn note_at(&self, at: &Origin, what: impl Into<String>) {
        let mut notes = self.notes.borrow_mut();
        if notes.0.len() < MAX_NOTES {
            notes.0.push(ModelNote {
                at: at.clone(),
                what: what.into(),
            });
        } else {
            notes.1 += 1;
        }
    }

    /// `<tag name="…">` at its line; an element without a name is placed in its nearest
    /// named ancestor (`<limit> in <joint name="knee">`).
    pub fn origin(&self, node: Node) -> Origin {
        let start = node.range().start;
        let line = self.lines.partition_point(|&l| l <= start);
        Origin {
            element: element_name(node),
            line: Some(u32::try_from(line).unwrap_or(u32::MAX)),
        }
    }

    /// An error at `node`.
    pub fn err(&self, node: Node, what: impl Into<String>, fix: impl Into<String>) -> ModelError {
        ModelError::at(self.file, &self.origin(node), what, fix)
    }

    /// Hold `node` to `shape`: a typo of an attribute or child is refused, a child allowed
    /// once that appears twice is refused with both lines, a xacro element is refused
    /// (the file must be expanded), and any other name is skipped with a note.
    pub fn check(&self, node: Node, shape: &Shape) -> Result<(), ModelError> {
        self.check_attributes(node, shape)?;
        self.check_children(node, shape)
    }

    /// [`Xml::check`]'s attributes: read, refused as a typo, or noted.
    fn check_attributes(&self, node: Node, shape: &Shape) -> Result<(), ModelError> {
        for a in node.attributes() {
            let name = a.name();
            if a.namespace().is_none() && shape.attrs.contains(&name) {
                continue;
            }
            if a.namespace().is_none() {
                if let Some(like) = resembles(name, shape.attrs) {
                    return Err(self.err(
                        node,
                        format!("attribute `{name}` is not one of <{}>'s; it resembles `{like}`", shape.tag),
                        format!("write `{like}` (a misspelled attribute would fall back to its default); <{}> takes {}", shape.tag, listing(shape.attrs, "`", "`")),
                    ));
                }
            }
            self.note(
                node,
                format!(
                    "attribute `{}` skipped: not in the {} specification of <{}>",
                    qualified(a.namespace(), name),
                    self.format,
                    shape.tag
                ),
            );
        }
        Ok(())
    }

    /// [`Xml::check`]'s children: read (once where the specification says once), refused
    /// as a typo or a xacro macro, or noted.
    fn check_children(&self, node: Node, shape: &Shape) -> Result<(), ModelError> {
        let mut seen: Vec<(&str, Node)> = Vec::new();
        for c in elements(node) {
            let tag = c.tag_name().name();
            let namespaced = c.tag_name().namespace().is_some();
            if c.tag_name()
                .namespace()
                .is_some_and(|ns| ns.contains("xacro"))
            {
                return Err(self.err(
                    c,
                    format!("unexpanded xacro element <{tag}>"),
                    "this is a xacro macro: expand the file with `xacro` first",
                ));
            }
            if !namespaced && shape.once.contains(&tag) {
                if let Some((_, first)) = seen.iter().find(|(t, _)| *t == tag) {
                    return Err(self.err(
                        c,
                        format!(
                            "a second <{tag}> in <{}> (the first: line {})",
                            shape.tag,
                            self.origin(*first).line.unwrap_or(0)
                        ),
                        format!(
                            "<{}> takes one <{tag}>: remove or merge the other",
                            shape.tag
                        ),
                    ));
                }
                seen.push((tag, c));
                continue;
            }
            if !namespaced && shape.many.contains(&tag) {
                continue;
            }
            let known: Vec<&str> = shape.once.iter().chain(shape.many).copied().collect();
            if c.tag_name().namespace().is_none() {
                if let Some(like) = resembles(tag, &known) {
                    return Err(self.err(
                        c,
                        format!(
                            "element <{tag}> is not a child of <{}>; it resembles <{like}>",
                            shape.tag
                        ),
                        format!(
                            "write <{like}> (a misspelled element would be skipped); <{}> takes {}",
                            shape.tag,
                            listing(&known, "<", ">")
                        ),
                    ));
                }
            }
            self.note(
                c,
                format!(
                    "element <{}> skipped: not in the {} specification of <{}>",
                    qualified(c.tag_name().namespace(), tag),
                    self.format,
                    shape.tag
                ),
            );
        }
        Ok(())
    }

    /// The document's root element, refused unless it is `<tag>` (`fix`: what such a
    /// file looks like).
    pub fn root(&self, tag: &str, fix: &str) -> Result<Node<'a, 'i>, ModelError> {
        let root = self.doc.root_element();
        if root.tag_name().name() != tag {
            return Err(self.err(
                root,
                format!("the root element is <{}>", clip(root.tag_name().name())),
                fix,
            ));
        }
        Ok(root)
    }

    /// A required attribute.
    pub fn required(&self, node: Node<'a, 'i>, attr: &str) -> Result<&'a str, ModelError> {
        node.attribute(attr).ok_or_else(|| {
            self.err(
                node,
                format!("attribute `{attr}` is missing"),
                format!("give <{} {attr}=\"…\">", node.tag_name().name()),
            )
        })
    }

    /// One finite number, `text` of `attr` (an attribute or a child element's text).
    pub fn number(&self, node: Node, attr: &str, text: &str) -> Result<f64, ModelError> {
        let x: f64 = text.trim().parse().map_err(|_| {
            self.err(
                node,
                format!("`{attr}` = \"{}\" is not a number", clip(text)),
                "give a decimal number",
            )
        })?;
        if !x.is_finite() {
            return Err(self.err(
                node,
                format!("`{attr}` = \"{}\" is not finite", clip(text)),
                "give a finite number (NaN and inf are refused)",
            ));
        }
        Ok(x)
    }

    /// `count` finite numbers separated by white space.
    pub fn numbers(
        &self, node: Node, attr: &str, text: &str, count: usize,
    ) -> Result<Vec<f64>, ModelError> {
        let parts: Vec<&str> = text.split_whitespace().collect();
        if parts.len() != count {
            return Err(self.err(
                node,
                format!("`{attr}` = \"{}\" has {} numbers", clip(text), parts.len()),
                format!("give {count} numbers separated by spaces"),
            ));
        }
        parts.iter().map(|p| self.number(node, attr, p)).collect()
    }

    /// A 3-vector attribute, or `default` when absent.
    pub fn vec3(&self, node: Node, attr: &str, default: V3) -> Result<V3, ModelError> {
        match node.attribute(attr) {
            None => Ok(default),
            Some(t) => {
                let v = self.numbers(node, attr, t, 3)?;
                Ok([v[0], v[1], v[2]])
            }
        }
    }

    /// A scalar attribute, or `default` when absent.
    pub fn scalar(&self, node: Node, attr: &str, default: f64) -> Result<f64, ModelError> {
        match node.attribute(attr) {
            None => Ok(default),
            Some(t) => self.number(node, attr, t),
        }
    }

    /// The kind named by the `type` attribute of joint `j`: revolute, continuous,
    /// prismatic and fixed, which URDF and SDF share, or the format's own `(name, kind)`;
    /// any other type is refused with `supported` (what the format's reader takes) as the
    /// fix.
    pub fn joint_kind(
        &self, j: Node, own: (&str, JointKind), supported: &str,
    ) -> Result<JointKind, ModelError> {
        Ok(match self.required(j, "type")? {
            "revolute" => JointKind::Revolute,
            "continuous" => JointKind::Continuous,
            "prismatic" => JointKind::Prismatic,
            "fixed" => JointKind::Fixed,
            other if other == own.0 => own.1,
            other => {
                return Err(self.err(
                    j,
                    format!("joint type \"{}\" is not supported", clip(other)),
                    supported,
                ))
            }
        })
    }
}

/// `<tag name="…">`, or `<tag> in <parent name="…">` for an element without a name.
fn element_name(node: Node) -> String {
    let named = |n: Node| {
        let tag = clip(n.tag_name().name());
        n.attribute("name")
            .filter(|x| !x.is_empty())
            .map(|x| format!("<{tag} name=\"{}\">", clip(x)))
    };
    named(node).unwrap_or_else(|| {
        let tag = clip(node.tag_name().name());
        match node.ancestors().skip(1).find_map(named) {
            Some(a) => format!("<{tag}> in {a}"),
            None => format!("<{tag}>"),
        }
    })
}

/// The element children of `node`.
pub fn elements<'a, 'i>(node: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(|c| c.is_element())
}

/// Whether `node` is the specification's `<tag>` (no namespace: `<drake:joint>` is a
/// vendor's element, not a joint).
pub fn is(node: Node, tag: &str) -> bool {
    node.tag_name().name() == tag && node.tag_name().namespace().is_none()
}

/// The first child element called `tag` (no namespace).
pub fn child<'a, 'i>(node: Node<'a, 'i>, tag: &str) -> Option<Node<'a, 'i>> {
    elements(node).find(|c| is(*c, tag))
}

/// `text` cut to 60 characters for a message (a hostile value may be megabytes).
pub fn clip(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((k, _)) => format!("{}…", &text[..k]),
        None => text.to_string(),
    }
}

fn qualified(ns: Option<&str>, name: &str) -> String {
    match ns {
        Some(ns) => format!("{{{ns}}}{}", clip(name)),
        None => clip(name),
    }
}

pub fn listing(names: &[&str], open: &str, close: &str) -> String {
    if names.is_empty() {
        return "nothing".into();
    }
    names
        .iter()
        .map(|n| format!("{open}{n}{close}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The name of `known` that `name` is a typo of: within one edit (names of up to four
/// letters) or two (longer), counting a swap of neighbours as one edit.
pub fn resembles<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    let n = name.chars().count();
    if n > 64 {
        return None;
    }
    known
        .iter()
        .map(|k| (edits(name, k), *k))
        .filter(|(d, k)| *d > 0 && *d <= if n.min(k.chars().count()) <= 4 { 1 } else { 2 })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// neighbours, each one edit.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (n, m) = (a.len(), b.len());
    let mut d = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=m {
        d[0][j] = j;
    }
    for i in 1..=n {
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[n][m]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_measured_past_comments_quotes_and_empty_tags() {
        let ok = "<a><!-- <b><b><b> --><b x='<c>' y=\"/>\"/><![CDATA[<d><d>]]><?pi <e> ?></a>";
        assert_eq!(scan(ok, 2), None);
        let deep = format!("<r>\n{}{}</r>", "<g>".repeat(5), "</g>".repeat(5));
        assert_eq!(scan(&deep, 5), Some(Excess::Depth(6, 2)));
        assert_eq!(scan(&deep, 6), None);
    }

    #[test]
    fn a_typo_resembles_its_name_and_a_vendor_name_does_not() {
        assert_eq!(resembles("xzy", &["xyz", "rpy"]), Some("xyz"));
        assert_eq!(
            resembles("inertail", &["inertial", "visual"]),
            Some("inertial")
        );
        assert_eq!(
            resembles("self_filter", &["inertial", "visual", "collision"]),
            None
        );
        assert_eq!(resembles("rpy", &["xyz"]), None);
        assert_eq!(
            resembles("lower", &["lower", "upper"]),
            None,
            "a known name is no typo"
        );
    }

    #[test]
    fn an_element_of_many_attributes_is_refused_before_the_parser_compares_them() {
        let attrs: String = (0..300).map(|k| format!(" a{k}=\"1\"")).collect();
        let text = format!("<robot>\n<link{attrs}/></robot>");
        let e = parse("many.urdf", &text).unwrap_err();
        assert!(
            e.what
                .contains("300 attributes on one element, above the 256"),
            "{e}"
        );
        assert_eq!(e.at.line, Some(2));
        assert_eq!(
            scan("<a b='x=y' c=\"=\"/>", 5),
            None,
            "an `=` inside a value is no attribute"
        );
    }

    #[test]
    fn a_parse_past_the_depth_is_refused_before_the_parser_recurses() {
        let n = MAX_DEPTH + 1;
        let text = format!("<robot>{}{}</robot>", "<g>".repeat(n), "</g>".repeat(n));
        let e = parse("deep.urdf", &text).unwrap_err();
        assert!(e.what.contains("deeper than 1000 levels"), "{e}");
        assert_eq!(e.at.line, Some(1));
    }
}
