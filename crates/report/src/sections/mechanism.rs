//! "Your own mechanism": the experiments `driftlab compare-methods` wrote for a user's model
//! file, first among the results when present.

use crate::book::Book;
use crate::error::ReportError;
use crate::sections::context::Context;
use crate::sections::recommendations::recommendation;

/// How to put a user's own mechanism through the same comparison, and which of this
/// folder's experiments are such comparisons (their recommendations are in the section
/// before).
pub(crate) fn your_mechanism_section(b: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    let roles = &c.roles;
    b.heading("Your own mechanism", 2);
    b.paragraph(
        "One command compares the stabilizations on a mechanism of your own: driftlab compare-methods FILE.urdf \
         (or an SDF or driftlab TOML model, docs/model-file.md; --root floating for a free base, --size quick for a first look). \
         It checks the file (a bad one is refused with the element, line and fix before anything runs), writes a spec \
         of Baumgarte, projection, generalized-α, RATTLE, projected Gauss s = 2 and Radau IIA in every coordinate \
         choice the model allows (joint, body, natural) into a folder of its own, runs it, and writes its report there, \
         where the rule of the previous section recommends the fastest run whose relative energy error stays within 1e-4; \
         report a folder of several comparisons with driftlab report --dir.",
    );
    let mine: Vec<String> = roles
        .iter()
        .filter_map(|(res, role)| {
            let class = role.spec.class.as_deref()?;
            class
                .starts_with("your mechanism")
                .then(|| format!("{} ({})", res.name, recommendation(res, role)))
        })
        .collect();
    b.paragraph(&if mine.is_empty() {
        "No such comparison is in this folder yet.".to_string()
    } else {
        format!("In this folder: {}", mine.join(" "))
    });
    Ok(())
}
