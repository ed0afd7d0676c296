//! The recommendation page: per problem class, the setting that meets its target on every
//! instance at the least step time, with its ties and the rule that picked it.

use crate::book::Book;
use crate::data::Results;
use crate::error::ReportError;
use crate::role::Role;
use crate::sections::context::Context;

/// Recommendations: per problem class (experiments whose `[report]` names a class), the
/// setting that meets the class's target on every instance at the least step time, with
/// its ties and the best setting of another method ([`crate::verdicts`]).
pub(crate) fn recommendations_section(
    b: &mut Book, c: &mut Context<'_>,
) -> Result<(), ReportError> {
    let roles = &c.roles;
    b.heading("Recommendations per problem class", 2);
    b.paragraph(RULE);
    if !roles.iter().any(|(_, r)| r.spec.class.is_some()) {
        b.paragraph(
            "No experiment in this folder declares a problem class ([report] class in its spec).",
        );
        return Ok(());
    }
    // On screen, one sortable table first (on paper the sentences below carry it, and
    // tables/recommendations.* has it for a paper).
    b.set_paper(false);
    b.table(&crate::verdicts::HEADERS, &recommendation_rows(roles));
    b.set_paper(true);
    for (res, role) in roles.iter().filter(|(_, r)| r.spec.class.is_some()) {
        b.heading(role.spec.class.as_deref().unwrap_or_default(), 3);
        b.paragraph(&recommendation(res, role));
    }
    Ok(())
}

/// The recommendation rule, as the report states it.
const RULE: &str = "Rule: a setting (a method with its parameters, its coordinate choice, and its step or tolerance) is \
    recommended for a problem class when its runs succeed and meet the class's target on every instance of the class, at \
    the least step time summed over the instances. Step time is the one cost of this report (recommendations, claims and \
    figures): the method's steps with the loop's checks, without the set-up and the benchmark's own metric evaluation. \
    Every time a recommendation rests on is measured with the cell alone on the machine, five times (after a warm-up run \
    for a cell under a second), and printed as the median with the range of the runs; settings whose ranges overlap are \
    a tie, and neither is called faster. Beside it stands the best setting of another method with its time ratio. Where \
    no setting meets the target on every instance, the best setting of each instance is given instead. Failed runs never \
    qualify (the experiment sections list them with their reasons).";

/// The recommendation of one problem class as sentences ([`crate::verdicts`]).
pub(crate) fn recommendation(res: &Results, role: &Role) -> String {
    crate::verdicts::ClassView::of(res, role).map_or_else(
        || format!("Experiment {} declares no target.", res.name),
        |v| v.sentences(res),
    )
}

/// The recommendation per problem class as table rows ([`crate::verdicts::HEADERS`]).
pub(crate) fn recommendation_rows(roles: &[(&Results, Role)]) -> Vec<Vec<String>> {
    roles
        .iter()
        .filter(|(_, r)| r.spec.class.is_some())
        .filter_map(|(res, role)| Some(crate::verdicts::ClassView::of(res, role)?.row(res)))
        .collect()
}
