//! The report's sections, registered in one list ([`SECTIONS`]) in report order, as the
//! methods are in the method catalog: a section is a function of the shared [`Context`]
//! that writes into the [`Book`], each in a file of its own (this folder, or the module of
//! its subject: claims, orders, tuning, the audit of soft constraints, failures). Adding a
//! section is one file and one line in [`SECTIONS`]; `compose::write_report` only walks
//! the list.

pub mod context;
pub mod experiment;
pub mod mechanism;
pub mod provenance;
pub mod recommendations;
pub mod references;
pub mod tables;
pub mod title;

use crate::book::Book;
use crate::error::ReportError;
pub use context::Context;

/// What a section does: write into the book (and, for some, files under the root).
pub type Write = fn(&mut Book, &mut Context<'_>) -> Result<(), ReportError>;

/// One registered section.
pub struct Section {
    /// A short name (for tests and for the reader of this list).
    pub id: &'static str,
    /// The section's writer.
    pub write: Write,
}

impl Section {
    /// The section `id` written by `write`.
    pub const fn new(id: &'static str, write: Write) -> Self {
        Self { id, write }
    }
}

/// The section that records where the main body ends (the appendices follow it).
pub const END_OF_MAIN_BODY: Section = Section::new("end-of-main-body", |b, c| {
    c.main_pages = b.pages_so_far();
    Ok(())
});

/// The table of contents: levels 1 and 2, one heading per experiment at a glance, and the
/// parts and sections of the body and the appendices (about 25).
fn contents(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    b.contents(c.all.len() + 25);
    Ok(())
}

/// Every section, in report order.
pub const SECTIONS: &[Section] = &[
    Section::new("title", title::title_section),
    Section::new("unfinished", title::unfinished_note),
    Section::new("contents", contents),
    Section::new("recommendations", recommendations::recommendations_section),
    Section::new("your-mechanism", mechanism::your_mechanism_section),
    Section::new("claims", |b, c| {
        crate::claims::section(b, &c.verdicts);
        Ok(())
    }),
    Section::new("paper-tables", tables::write_paper_tables),
    Section::new("orders", |b, c| {
        crate::orders_table::main_section(b, c.all);
        Ok(())
    }),
    Section::new("references", references::references_section),
    Section::new("tuning", |b, c| {
        crate::tuning::write(b, c.all);
        Ok(())
    }),
    Section::new("soft-audit", |b, c| {
        crate::soft_audit::write(b, c.all);
        Ok(())
    }),
    Section::new("failures", |b, c| {
        crate::failures::write(b, c.all);
        Ok(())
    }),
    Section::new("at-a-glance", |b, c| {
        crate::glance::section(b, c.all);
        Ok(())
    }),
    END_OF_MAIN_BODY,
    Section::new("orders-full", crate::appendix::orders),
    Section::new("experiments", crate::appendix::write),
    Section::new("provenance", provenance::provenance_section),
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
