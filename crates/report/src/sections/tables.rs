//! The paper's tables as files (CSV and LaTeX): recommendations, orders, claims.

use super::recommendations::recommendation_rows;
use crate::book::Book;
use crate::error::ReportError;
use crate::sections::context::Context;

/// The machine-readable tables of the recommendations, orders and claims:
/// `tables/{recommendations,orders,claims}.{csv,tex}` under the root (files, no pages).
pub(crate) fn write_paper_tables(_: &mut Book, c: &mut Context<'_>) -> Result<(), ReportError> {
    let (root, all, roles, verdicts) = (c.root, c.all, &c.roles, &c.verdicts);
    crate::paper_tables::write(
        root,
        "recommendations",
        &crate::verdicts::HEADERS,
        &recommendation_rows(roles),
    )?;
    crate::paper_tables::write(
        root,
        "orders",
        &crate::orders_table::HEADERS,
        &crate::orders_table::rows(all),
    )?;
    crate::claims::write_tables(root, verdicts)?;
    Ok(())
}
