//! Reading model files into a [`description::Model`]: driftlab's TOML, URDF, SDF and MJCF (with
//! loop closures), the shipped robots, the per-element checks, and the merge of fixed
//! joints; everything a file can get wrong is refused here, naming the element, its line
//! and the fix.

pub mod check;
pub mod description;
pub mod inertia;
pub mod merge;
pub mod mjcf;
pub mod robots;
pub mod sdf;
mod sdf_tree;
pub mod toml_model;
pub mod urdf;
mod xml;
