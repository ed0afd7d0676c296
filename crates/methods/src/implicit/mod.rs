//! Implicit, symplectic and collocation methods on the index-3 and index-2 forms: Gauss,
//! Lobatto IIIA–B, Radau IIA (RADAU5's algorithm), GGL, generalized-α, implicit Euler and
//! RATTLE, with the Butcher tableaux they share (`tableau`).

pub mod alf;
pub mod bdf;
pub mod gauss;
pub mod gauss_index2;
pub mod gauss_index3;
pub mod generalized_alpha;
pub mod ggl;
pub mod implicit_euler;
pub mod implicit_form;
pub mod lobatto;
pub mod radau;
pub mod rattle;
mod rattle_kick;
pub mod tableau;
