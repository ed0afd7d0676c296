//! Published references against the measured rows: each class's reference note and the
//! rows shown beside it.

use crate::book::Book;
use crate::data::Run;
use crate::error::ReportError;
use crate::role::Role;
use crate::sections::context::Context;

/// Against references and targets: for every experiment with a `[report]` target or
/// note, the reference note and a table of its runs' measure values against the target.
pub(crate) fn references_section(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    let roles = &c.roles;
    b.heading("Against references and targets", 2);
    b.paragraph(
        "Each experiment that declares an accuracy measure in its spec ([report]): the reference it is measured against \
         and that reference's own accuracy (the spec's note, with its source), then every run of the selection — or, for \
         more than 12 runs, the most accurate run of each method variant — with its value and whether it meets the target.",
    );
    // A role without a target or a note (the tuning map) has nothing to compare against.
    for (res, role) in roles
        .iter()
        .filter(|(_, r)| r.spec.target.is_some() || r.spec.note.is_some())
    {
        b.heading(&format!("{} — {}", res.name, role.spec.measure), 3);
        if let Some(n) = &role.spec.note {
            b.paragraph(n);
        }
        let rows: Vec<Vec<String>> = shown_runs(role)
            .iter()
            .map(|r| reference_row(role, r))
            .collect();
        b.table(
            &[
                "problem",
                "method",
                "h",
                &role.spec.measure,
                "wall [s]",
                &role.target_text(),
            ],
            &rows,
        );
    }
    Ok(())
}

/// The runs listed in a references table: all of the role's runs, or for more than 12 the
/// most accurate successful run of each method variant.
pub(crate) fn shown_runs<'a>(role: &Role<'a>) -> Vec<&'a Run> {
    if role.runs.len() <= 12 {
        return role.runs.clone();
    }
    let mut best: Vec<&Run> = Vec::new();
    for r in role.runs.iter().copied().filter(|r| r.ok()) {
        let Some(v) = role.value(r) else { continue };
        match best.iter_mut().find(|x| x.variant == r.variant) {
            Some(slot) => {
                if role.value(slot).is_none_or(|bv| role.better(v, bv)) {
                    *slot = r;
                }
            }
            None => best.push(r),
        }
    }
    best
}

/// One row of a references table: problem, variant, step, measure value (or `failed`),
/// wall time and whether the run meets the target.
pub(crate) fn reference_row(role: &Role, r: &Run) -> Vec<String> {
    vec![
        r.problem_key(),
        r.variant.clone(),
        r.step_label(),
        if r.ok() {
            role.value(r).map_or("—".into(), |v| format!("{v:.6e}"))
        } else {
            "failed".into()
        },
        format!("{:.3}", r.wall_seconds),
        match role.meets(r) {
            Some(true) => "meets target".into(),
            Some(false) => "misses target".into(),
            None => "—".into(),
        },
    ]
}
