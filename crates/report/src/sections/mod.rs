//! The report's sections, registered in one list ([`SECTIONS`]) in report order, as the
//! methods are in the method catalog: a section is a function of the shared [`Context`]
//! that writes into the [`Book`]. Adding a section is one function (in its own file) and
//! one line here; `compose::write_report` only walks the list.

use crate::book::Book;
use crate::claims::Verdict;
use crate::compose::{self, Role};
use crate::data::Results;
use crate::error::ReportError;
use crate::folders::Unfinished;
use std::path::Path;

/// What every section may read: the report's folder, the experiments, the folders left
/// out, the first experiment's manifest, the experiments' `[report]` roles, the claims'
/// verdicts, and the page on which the main body ended (set by the section that ends it).
pub struct Context<'a> {
    /// The report's folder (sections that write files write under it).
    pub root: &'a Path,
    /// Every complete experiment, in report order.
    pub all: &'a [Results],
    /// The folders whose runs are not complete, each with why.
    pub unfinished: &'a [Unfinished],
    /// The first experiment's `manifest.json` (provenance: version, revision, machine).
    pub first: serde_json::Value,
    /// The experiments that declare a `[report]` role, resolved against their rows.
    pub roles: Vec<(&'a Results, Role<'a>)>,
    /// Every `[[claims]]` entry's verdict from data.
    pub verdicts: Vec<Verdict>,
    /// The last page of the main body (0 until [`END_OF_MAIN_BODY`] has run).
    pub main_pages: usize,
}

impl<'a> Context<'a> {
    /// The context of a report over `all` under `root`.
    pub fn new(root: &'a Path, all: &'a [Results], unfinished: &'a [Unfinished]) -> Self {
        Self {
            root,
            all,
            unfinished,
            first: all
                .first()
                .map(|r| compose::manifest(&r.dir))
                .unwrap_or(serde_json::Value::Null),
            roles: all.iter().filter_map(|r| Some((r, Role::of(r)?))).collect(),
            verdicts: crate::claims::all_verdicts(all),
            main_pages: 0,
        }
    }
}

/// What a section does: write into the book (and, for some, files under the root).
pub type Write = fn(&mut Book, &mut Context<'_>) -> Result<(), ReportError>;

/// One registered section.
pub struct Section {
    /// A short name (for tests and for the reader of this list).
    pub id: &'static str,
    /// The section's writer.
    pub write: Write,
}

/// The section that records where the main body ends (the appendices follow it).
pub const END_OF_MAIN_BODY: Section = Section {
    id: "end-of-main-body",
    write: |b, c| {
        c.main_pages = b.pages_so_far();
        Ok(())
    },
};

/// Every section, in report order.
pub const SECTIONS: &[Section] = &[
    Section {
        id: "title",
        write: compose::title_section,
    },
    Section {
        id: "unfinished",
        write: compose::unfinished_note,
    },
    Section {
        id: "contents",
        write: |b, c| {
            // Levels 1 and 2: one heading per experiment at a glance, and the parts and
            // sections of the body and the appendices (about 25).
            b.contents(c.all.len() + 25);
            Ok(())
        },
    },
    Section {
        id: "recommendations",
        write: compose::recommendations_section,
    },
    Section {
        id: "your-mechanism",
        write: compose::your_mechanism_section,
    },
    Section {
        id: "claims",
        write: |b, c| {
            crate::claims::section(b, &c.verdicts);
            Ok(())
        },
    },
    Section {
        id: "paper-tables",
        write: compose::write_paper_tables,
    },
    Section {
        id: "orders",
        write: |b, c| {
            crate::orders_table::main_section(b, c.all);
            Ok(())
        },
    },
    Section {
        id: "references",
        write: compose::references_section,
    },
    Section {
        id: "tuning",
        write: |b, c| {
            crate::tuning::write(b, c.all);
            Ok(())
        },
    },
    Section {
        id: "soft-audit",
        write: |b, c| {
            crate::soft_audit::write(b, c.all);
            Ok(())
        },
    },
    Section {
        id: "failures",
        write: |b, c| {
            crate::failures::write(b, c.all);
            Ok(())
        },
    },
    Section {
        id: "at-a-glance",
        write: |b, c| {
            crate::glance::section(b, c.all);
            Ok(())
        },
    },
    END_OF_MAIN_BODY,
    Section {
        id: "orders-full",
        write: crate::appendix::orders,
    },
    Section {
        id: "experiments",
        write: crate::appendix::write,
    },
    Section {
        id: "provenance",
        write: compose::provenance_section,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each section once, the main body's end before the appendices.
    #[test]
    fn sections_are_unique_and_the_appendices_follow_the_main_body() {
        let ids: Vec<&str> = SECTIONS.iter().map(|s| s.id).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len(), "{ids:?}");
        let end = ids.iter().position(|i| *i == END_OF_MAIN_BODY.id);
        let appendix = ids.iter().position(|i| *i == "experiments");
        assert!(end.is_some() && end < appendix, "{ids:?}");
    }
}
