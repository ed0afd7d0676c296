//! Chinese text on paper (placeholder; filled in below).

use svg2pdf::usvg::fontdb;

/// Load a CJK font into `db` if one is readable.
pub(crate) fn load(_db: &mut fontdb::Database) {}

/// `s` as set on paper: runs of CJK characters become "[Chinese]".
pub(crate) fn printable(s: &str) -> String {
    let cjk = |c: char| matches!(c as u32, 0x2E80..=0x9FFF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF);
    let mut out = String::with_capacity(s.len());
    let mut in_run = false;
    for c in s.chars() {
        if cjk(c) {
            if !in_run {
                out.push_str("[Chinese]");
            }
            in_run = true;
        } else {
            in_run = false;
            out.push(c);
        }
    }
    out
}
