//! An MJCF file and the files it `<include>`s as one element tree, each element with its
//! file and line: MuJoCo splices an included file's top-level children in place of the
//! `<include>` (MJCF reference, "include"), with the path relative to the including file.
//! A missing file, a cycle, too many files or elements, and a file whose root is not
//! `<mujoco>` are refused naming the `<include>` and its line.

use super::super::description::{ModelError, Origin};
use super::super::xml::{self, clip, Xml};
use roxmltree::Node;

/// The most files one model may read (itself and its includes).
pub const MAX_FILES: usize = 64;

/// The most elements one model may hold after its includes are spliced in (a dm_control
/// humanoid holds about 300).
pub const MAX_ELEMENTS: usize = 200_000;

/// Reads an included file: its path as written (already joined to the including file's
/// folder) to its text, or why not.
pub type Loader<'l> = &'l dyn Fn(&str) -> Result<String, String>;

/// One element: tag, attributes in document order, element children (includes spliced
/// in), and where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct El {
    /// Tag.
    pub tag: String,
    /// Attributes in document order.
    pub attrs: Vec<(String, String)>,
    /// Element children.
    pub children: Vec<El>,
    /// Index of its file in [`Files::names`].
    pub file: usize,
    /// 1-based line.
    pub line: u32,
}

impl El {
    /// The attribute `name`, if written on this element.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    /// `<tag name="…">` for messages.
    pub fn label(&self) -> String {
        match self.attr("name").filter(|n| !n.is_empty()) {
            Some(n) => format!("<{} name=\"{}\">", clip(&self.tag), clip(n)),
            None => format!("<{}>", clip(&self.tag)),
        }
    }
    /// The children with tag `tag`.
    pub fn all<'a>(&'a self, tag: &'a str) -> impl Iterator<Item = &'a El> + 'a {
        self.children.iter().filter(move |c| c.tag == tag)
    }
}

/// The files read, in the order they were read (the first is the model file).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Files {
    /// Their names as given (includes joined to their includer's folder).
    pub names: Vec<String>,
}

impl Files {
    /// Where `el` is, for messages.
    pub fn origin(&self, el: &El) -> Origin {
        Origin {
            element: el.label(),
            line: Some(el.line),
        }
    }
    /// An error at `el`, in its own file.
    pub fn err(&self, el: &El, what: impl Into<String>, fix: impl Into<String>) -> ModelError {
        ModelError::at(&self.names[el.file], &self.origin(el), what, fix)
    }
}

/// The model's element tree, includes spliced in, and the files read.
pub fn load(file: &str, text: &str, loader: Loader) -> Result<(El, Files), ModelError> {
    let mut reader = Reader {
        files: Files::default(),
        stack: Vec::new(),
        loader,
        elements: 0,
    };
    let root = reader.document(file, text, None)?;
    Ok((root, reader.files))
}

struct Reader<'l> {
    files: Files,
    /// The files being read, outermost first (a cycle is an include of one of them).
    stack: Vec<String>,
    loader: Loader<'l>,
    elements: usize,
}

impl Reader<'_> {
    /// Parse `file` and convert its `<mujoco>` root; `from` is the `<include>` that named it.
    fn document(&mut self, file: &str, text: &str, from: Option<&El>) -> Result<El, ModelError> {
        if self.files.names.len() >= MAX_FILES {
            let at = from.map(|e| self.files.origin(e)).unwrap_or_default();
            return Err(ModelError::at(
                file,
                &at,
                format!("more than {MAX_FILES} files included"),
                "include fewer files (or check for a generated include chain)",
            ));
        }
        let index = self.files.names.len();
        self.files.names.push(file.to_string());
        self.stack.push(file.to_string());
        let doc = xml::parse(file, text)?;
        let x = Xml::new(file, &doc, "MJCF");
        let root = x.root(
            "mujoco",
            "an MJCF file has <mujoco> as its root element (an included file too)",
        )?;
        let el = self.element(&x, root, index)?;
        self.stack.pop();
        Ok(el)
    }

    /// `node` and its element children, `<include>`s replaced by their files' children.
    fn element(&mut self, x: &Xml, node: Node, file: usize) -> Result<El, ModelError> {
        self.elements += 1;
        let line = x.origin(node).line.unwrap_or(0);
        let mut el = El {
            tag: node.tag_name().name().to_string(),
            attrs: node
                .attributes()
                .map(|a| (a.name().to_string(), a.value().to_string()))
                .collect(),
            children: Vec::new(),
            file,
            line,
        };
        if self.elements > MAX_ELEMENTS {
            return Err(self.files.err(&el, format!("more than {MAX_ELEMENTS} elements"), "an MJCF model of a robot holds a few thousand elements; check that this is the model file"));
        }
        for c in node.children().filter(|c| c.is_element()) {
            let child = self.element(x, c, file)?;
            if child.tag == "include" {
                let included = self.include(&child)?;
                el.children.extend(included.children);
            } else {
                el.children.push(child);
            }
        }
        Ok(el)
    }

    /// The `<mujoco>` root of the file `inc` names.
    fn include(&mut self, inc: &El) -> Result<El, ModelError> {
        let Some(name) = inc.attr("file").filter(|f| !f.is_empty()) else {
            return Err(self.files.err(
                inc,
                "<include> without `file`",
                "give file=\"path\", relative to this file's folder",
            ));
        };
        if let Some((k, _)) = inc.attrs.iter().find(|(k, _)| k != "file") {
            return Err(self.files.err(
                inc,
                format!("<include> takes `file` only, not `{}`", clip(k)),
                "remove the attribute",
            ));
        }
        if !inc.children.is_empty() {
            return Err(self.files.err(
                inc,
                "<include> has children",
                "an include is empty: <include file=\"…\"/>",
            ));
        }
        let path = joined(&self.files.names[inc.file], name);
        if self.stack.iter().any(|f| same_file(f, &path)) {
            return Err(self.files.err(
                inc,
                format!(
                    "including \"{}\" again makes a cycle ({} → {})",
                    clip(name),
                    self.stack.join(" → "),
                    clip(&path)
                ),
                "remove the include that leads back to an including file",
            ));
        }
        let text = (self.loader)(&path).map_err(|e| {
            self.files.err(inc, format!("cannot read the included file \"{}\": {e}", clip(&path)), "give the path relative to the including file's folder, and ship the file beside it")
        })?;
        self.document(&path, &text, Some(inc))
    }
}

/// `name` relative to the folder of `including` (an absolute `name` as given).
pub fn joined(including: &str, name: &str) -> String {
    let p = std::path::Path::new(name);
    if p.is_absolute() {
        return name.to_string();
    }
    match std::path::Path::new(including).parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(p).to_string_lossy().into_owned(),
        _ => name.to_string(),
    }
}

/// Whether two paths name the same file (`a/./b.xml` and `a/b.xml`).
fn same_file(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let mut parts: Vec<&str> = Vec::new();
        for c in s.split('/') {
            match c {
                "." | "" => {}
                ".." if parts.last().is_some_and(|p| *p != "..") => {
                    parts.pop();
                }
                c => parts.push(c),
            }
        }
        parts.join("/")
    };
    norm(a) == norm(b)
}
