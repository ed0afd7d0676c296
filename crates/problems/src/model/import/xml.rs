//! Reading numbers and attributes out of an XML model file (URDF, SDF) with the line of
//! every element, so that a refusal names where to look.

use super::super::spatial::V3;
use super::description::{JointKind, ModelError, Origin};
use roxmltree::{Document, Node};

/// The parsed document, or an error saying that the file is not XML and where.
pub fn parse<'a>(file: &str, text: &'a str) -> Result<Document<'a>, ModelError> {
    Document::parse(text).map_err(|e| {
        let p = e.pos();
        ModelError::at(
            file,
            &Origin {
                element: format!("column {}", p.col),
                line: Some(p.row),
            },
            format!("not well-formed XML: {e}"),
            "give a URDF or SDF file (XML); a xacro file must be expanded with `xacro` first",
        )
    })
}

/// `<tag name="…">` at its line.
pub fn origin(doc: &Document, node: Node) -> Origin {
    let name = node.attribute("name").unwrap_or("");
    let tag = node.tag_name().name();
    Origin {
        element: if name.is_empty() {
            format!("<{tag}>")
        } else {
            format!("<{tag} name=\"{name}\">")
        },
        line: Some(doc.text_pos_at(node.range().start).row),
    }
}

/// The element children of `node`.
pub fn elements<'a, 'i>(node: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(|c| c.is_element())
}

/// The first child element called `tag`.
pub fn child<'a, 'i>(node: Node<'a, 'i>, tag: &str) -> Option<Node<'a, 'i>> {
    elements(node).find(|c| c.tag_name().name() == tag)
}

/// Refuse any child element of `node` not in `known`.
pub fn only(file: &str, doc: &Document, node: Node, known: &[&str]) -> Result<(), ModelError> {
    for c in elements(node) {
        let tag = c.tag_name().name();
        if !known.contains(&tag) {
            let ns = c.tag_name().namespace().unwrap_or("");
            let fix = if ns.contains("xacro") {
                "this is a xacro macro: expand the file with `xacro` first".to_string()
            } else {
                format!(
                    "driftlab reads {} inside <{}>; remove <{tag}> or convert it",
                    known
                        .iter()
                        .map(|k| format!("<{k}>"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    node.tag_name().name()
                )
            };
            return Err(ModelError::at(
                file,
                &origin(doc, c),
                format!("unsupported element <{tag}>"),
                fix,
            ));
        }
    }
    Ok(())
}

/// A required attribute.
pub fn required<'a>(
    file: &str, doc: &Document, node: Node<'a, '_>, attr: &str,
) -> Result<&'a str, ModelError> {
    node.attribute(attr).ok_or_else(|| {
        ModelError::at(
            file,
            &origin(doc, node),
            format!("attribute `{attr}` is missing"),
            format!("give <{} {attr}=\"…\">", node.tag_name().name()),
        )
    })
}

/// The kind named by the `type` attribute of joint `j`: revolute, continuous, prismatic
/// and fixed, which URDF and SDF share, or the format's own `(name, kind)`; any other
/// type is refused with `supported` (what the format's reader takes) as the fix.
pub fn joint_kind(
    file: &str, doc: &Document, j: Node, own: (&str, JointKind), supported: &str,
) -> Result<JointKind, ModelError> {
    Ok(match required(file, doc, j, "type")? {
        "revolute" => JointKind::Revolute,
        "continuous" => JointKind::Continuous,
        "prismatic" => JointKind::Prismatic,
        "fixed" => JointKind::Fixed,
        other if other == own.0 => own.1,
        other => {
            return Err(ModelError::at(
                file,
                &origin(doc, j),
                format!("joint type \"{other}\" is not supported"),
                supported,
            ))
        }
    })
}

/// One finite number.
pub fn number(
    file: &str, doc: &Document, node: Node, attr: &str, text: &str,
) -> Result<f64, ModelError> {
    let x: f64 = text.trim().parse().map_err(|_| {
        ModelError::at(
            file,
            &origin(doc, node),
            format!("`{attr}` = \"{text}\" is not a number"),
            "give a decimal number",
        )
    })?;
    if !x.is_finite() {
        return Err(ModelError::at(
            file,
            &origin(doc, node),
            format!("`{attr}` = \"{text}\" is not finite"),
            "give a finite number (NaN and inf are refused)",
        ));
    }
    Ok(x)
}

/// `count` finite numbers separated by white space.
pub fn numbers(
    file: &str, doc: &Document, node: Node, attr: &str, text: &str, count: usize,
) -> Result<Vec<f64>, ModelError> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    if parts.len() != count {
        return Err(ModelError::at(
            file,
            &origin(doc, node),
            format!("`{attr}` = \"{text}\" has {} numbers", parts.len()),
            format!("give {count} numbers separated by spaces"),
        ));
    }
    parts
        .iter()
        .map(|p| number(file, doc, node, attr, p))
        .collect()
}

/// A 3-vector attribute, or `default` when absent.
pub fn vec3(
    file: &str, doc: &Document, node: Node, attr: &str, default: V3,
) -> Result<V3, ModelError> {
    match node.attribute(attr) {
        None => Ok(default),
        Some(t) => {
            let v = numbers(file, doc, node, attr, t, 3)?;
            Ok([v[0], v[1], v[2]])
        }
    }
}

/// A scalar attribute, or `default` when absent.
pub fn scalar(
    file: &str, doc: &Document, node: Node, attr: &str, default: f64,
) -> Result<f64, ModelError> {
    match node.attribute(attr) {
        None => Ok(default),
        Some(t) => number(file, doc, node, attr, t),
    }
}
