//! A result folder's files: the lock that keeps one run per folder ([`folder`]), the
//! journal of finished runs ([`journal`]), atomic writes ([`atomic`]), the manifest
//! ([`manifest`]), the records of runs and members and the tables written from them
//! ([`record`], [`members`]), and the comparison and fingerprint of two folders' tables
//! ([`compare`], [`fingerprint`]). Nothing here runs a cell.

pub mod atomic;
pub mod compare;
pub mod fingerprint;
pub mod folder;
pub mod journal;
pub mod manifest;
pub mod members;
pub mod record;
