//! What the runner derives from finished rows before it writes them: fitted orders of an
//! h sweep ([`orders`]), the optima over an ensemble's settings ([`optima`]), and the
//! judgement of a reference solution against its own invariants ([`mod@reference`]).

pub mod optima;
pub mod orders;
pub mod reference;
