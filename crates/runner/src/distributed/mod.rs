//! A spec run across machines: shards of its cells and their merge into one folder
//! ([`shard`]), and the Slurm job array that runs them ([`slurm`]).

pub mod shard;
pub mod slurm;
