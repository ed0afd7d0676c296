//! What every section reads ([`Context`]): built once per report.

use crate::claims::Verdict;
use crate::data::Results;
use crate::folders::Unfinished;
use crate::role::{manifest, Role};
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
    /// The last page of the main body (0 until `END_OF_MAIN_BODY` (the section list) has run).
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
                .map(|r| manifest(&r.dir))
                .unwrap_or(serde_json::Value::Null),
            roles: all.iter().filter_map(|r| Some((r, Role::of(r)?))).collect(),
            verdicts: crate::claims::all_verdicts(all),
            main_pages: 0,
        }
    }
}
