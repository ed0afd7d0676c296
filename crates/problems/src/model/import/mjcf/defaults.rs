//! MJCF default classes (MJCF reference, "default"): the top-level `<default>` is class
//! `main`; a nested `<default class="c">` inherits its parent's values; an element takes
//! its own attribute, else its `class`'s, else the `childclass` of its nearest body or
//! frame, else `main`'s. An unknown class is refused (MuJoCo: "unknown default class").

use super::super::description::ModelError;
use super::schema::{check_attributes, check_children};
use super::tree::{El, Files};
use std::collections::HashMap;

/// The kinds of element a class gives values to: the slot and the tags that fill it
/// (the actuator shortcuts share one slot, as MuJoCo's one actuator default per class).
const SLOTS: [(&str, &[&str]); 6] = [
    ("joint", &["joint"]),
    ("geom", &["geom"]),
    ("site", &["site"]),
    ("equality", &["equality"]),
    ("tendon", &["tendon"]),
    (
        "actuator",
        &[
            "general",
            "motor",
            "position",
            "velocity",
            "intvelocity",
            "damper",
            "cylinder",
        ],
    ),
];

/// Children of `<default>` without dynamics, skipped.
const SKIPPED: [&str; 6] = ["mesh", "material", "camera", "light", "pair", "muscle"];

#[derive(Debug, Default)]
struct Class {
    parent: Option<String>,
    values: HashMap<&'static str, Vec<(String, String)>>,
}

/// Every class of the file.
#[derive(Debug, Default)]
pub struct Defaults {
    classes: HashMap<String, Class>,
}

impl Defaults {
    /// The classes of the `<default>` sections of `root`.
    pub fn read(files: &Files, root: &El) -> Result<Self, ModelError> {
        let mut d = Defaults::default();
        d.classes.insert("main".into(), Class::default());
        for top in root.all("default") {
            if let Some(c) = top.attr("class").filter(|c| *c != "main") {
                return Err(files.err(top, format!("the top-level <default> has class \"{c}\""), "the top-level <default> is class main: remove `class`, or nest this class inside it"));
            }
            d.class(files, top, "main", None)?;
        }
        Ok(d)
    }

    fn class(
        &mut self, files: &Files, el: &El, name: &str, parent: Option<&str>,
    ) -> Result<(), ModelError> {
        check_attributes(files, el, "default", true)?;
        let mut allowed: Vec<&str> = vec!["default"];
        SLOTS
            .iter()
            .for_each(|(_, tags)| allowed.extend_from_slice(tags));
        check_children(files, el, &allowed, &SKIPPED)?;
        let class = self.classes.entry(name.to_string()).or_default();
        class.parent = parent.map(str::to_string);
        for c in &el.children {
            if let Some((slot, _)) = SLOTS
                .iter()
                .find(|(_, tags)| tags.contains(&c.tag.as_str()))
            {
                let tag = if c.tag == "equality" {
                    "equality"
                } else {
                    c.tag.as_str()
                };
                check_attributes(files, c, tag, true)?;
                let v = class.values.entry(slot).or_default();
                v.retain(|(k, _)| c.attr(k).is_none());
                v.extend(c.attrs.iter().cloned());
            }
        }
        for c in el.all("default") {
            let Some(child) = c.attr("class").filter(|s| !s.is_empty()) else {
                return Err(files.err(
                    c,
                    "a nested <default> without `class`",
                    "give the class a name: <default class=\"…\">",
                ));
            };
            if self.classes.contains_key(child) {
                return Err(files.err(
                    c,
                    format!("default class \"{child}\" is defined twice"),
                    "give each class its own name",
                ));
            }
            self.class(files, c, child, Some(name))?;
        }
        Ok(())
    }

    /// Whether `class` is defined.
    pub fn has(&self, class: &str) -> bool {
        self.classes.contains_key(class)
    }

    /// The value class `class` (or an ancestor) gives `attr` of `slot` elements.
    pub fn value(&self, class: &str, slot: &str, attr: &str) -> Option<&str> {
        let mut at = self.classes.get(class);
        while let Some(c) = at {
            if let Some(v) = c
                .values
                .get(slot)
                .and_then(|v| v.iter().find(|(k, _)| k == attr))
            {
                return Some(v.1.as_str());
            }
            at = c.parent.as_deref().and_then(|p| self.classes.get(p));
        }
        None
    }
}

/// An element read through its class: its own attributes first, then the class chain.
pub struct Styled<'a> {
    /// The element.
    pub el: &'a El,
    /// Its slot in the classes (`joint`, `geom`, …).
    pub slot: &'static str,
    /// The class that applies.
    pub class: String,
    defaults: &'a Defaults,
}

impl<'a> Styled<'a> {
    /// `el` with the class its `class` attribute names, else `childclass` (the nearest
    /// body's or frame's), refusing an unknown class.
    pub fn new(
        files: &Files, defaults: &'a Defaults, el: &'a El, slot: &'static str, childclass: &str,
    ) -> Result<Self, ModelError> {
        let class = el.attr("class").unwrap_or(childclass).to_string();
        if !defaults.has(&class) {
            return Err(files.err(
                el,
                format!("default class \"{class}\" is not defined"),
                "define it in <default> (<default class=\"…\">), or fix the name",
            ));
        }
        Ok(Self {
            el,
            slot,
            class,
            defaults,
        })
    }
    /// The attribute `attr`: written on the element, or from its class.
    pub fn get(&self, attr: &str) -> Option<&'a str> {
        self.el
            .attr(attr)
            .or_else(|| self.defaults.value(&self.class, self.slot, attr))
    }
}
