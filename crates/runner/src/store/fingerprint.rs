//! A result folder's fingerprint: one 64-bit digest per experiment of everything
//! [`crate::store::compare::compare`] compares — `runs.parquet` and `members.parquet` without
//! their measured columns (times, heap), `traces.parquet`, `orders.csv` and (where present) `optima.csv` whole — so that
//! a refactor that must change no number is checked against a digest stored in the
//! repository (`tests/fingerprints/quick.txt`, `driftlab fingerprint --check`), not only
//! against a second run made on the same day.
//!
//! Floating-point values enter by their bits: a digest is equal only where every number is
//! bit for bit the same. Such numbers are reproducible on machines that execute the same
//! instructions; faer picks its SIMD kernels at run time, so the file records the
//! instruction level it was made on ([`simd_level`]) and a check on another level says so
//! instead of reporting every chaotic trajectory as a regression.

use crate::error::RunnerError;
use crate::store::compare::{read, COMPARED};
use polars::prelude::*;
use std::path::{Path, PathBuf};

/// FNV-1a, 64 bits (Fowler, Noll & Vo; parameters of the IETF draft
/// draft-eastlake-fnv-17, §2): stable across platforms and releases, unlike `std`'s hasher.
struct Fnv(u64);

impl Fnv {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
    fn word(&mut self, w: u64) {
        self.bytes(&w.to_le_bytes());
    }
    fn text(&mut self, s: &str) {
        self.word(s.len() as u64);
        self.bytes(s.as_bytes());
    }
}

/// Null, as no float's bits and no text's length can be: a tag before each value.
const NULL: u64 = 0;
const VALUE: u64 = 1;

/// Every value of `s` into `h`, floats by their bits, lists element by element.
fn series(h: &mut Fnv, s: &Series) -> PolarsResult<()> {
    h.text(s.name());
    h.word(s.len() as u64);
    match s.dtype() {
        DataType::Float64 => {
            for v in s.f64()?.iter() {
                match v {
                    Some(x) => {
                        h.word(VALUE);
                        h.word(x.to_bits());
                    }
                    None => h.word(NULL),
                }
            }
        }
        DataType::List(_) => {
            let list = s.list()?;
            for i in 0..list.len() {
                match list.get_as_series(i) {
                    Some(inner) => {
                        h.word(VALUE);
                        series(h, &inner)?;
                    }
                    None => h.word(NULL),
                }
            }
        }
        _ => {
            let text = s.cast(&DataType::String)?;
            for v in text.str()?.iter() {
                match v {
                    Some(t) => {
                        h.word(VALUE);
                        h.text(t);
                    }
                    None => h.word(NULL),
                }
            }
        }
    }
    Ok(())
}

/// The digest of one result folder.
pub fn digest(dir: &Path) -> Result<u64, RunnerError> {
    driftlab_results::folder_check::check(dir).map_err(|d| RunnerError::Folder {
        path: dir.display().to_string(),
        message: format!("damaged: {d}; a damaged folder has no fingerprint"),
    })?;
    let mut h = Fnv(Fnv::OFFSET);
    for (file, measured) in COMPARED {
        h.text(file);
        let Some(frame) = read(&dir.join(file))? else {
            h.word(NULL);
            continue;
        };
        for col in frame.columns() {
            if measured.iter().any(|m| m.name == col.name().as_str()) {
                continue;
            }
            series(&mut h, col.as_materialized_series()).map_err(|e| RunnerError::Resume {
                path: dir.join(file).display().to_string(),
                message: format!("cannot read column `{}`: {e}", col.name()),
            })?;
        }
    }
    h.text("orders.csv");
    match std::fs::read(dir.join("orders.csv")) {
        Ok(b) => h.bytes(&b),
        Err(_) => h.word(NULL),
    }
    // Only where present, so that the fingerprints of folders without optima are those
    // they had before the table existed.
    if let Ok(b) = std::fs::read(dir.join("optima.csv")) {
        h.text("optima.csv");
        h.bytes(&b);
    }
    Ok(h.0)
}

/// The result folders under `root` (its subfolders holding a `runs.parquet`, by name; or
/// `root` itself when it holds one).
pub fn folders(root: &Path) -> Result<Vec<(String, PathBuf)>, RunnerError> {
    if root.join("runs.parquet").exists() {
        let name = root
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into());
        return Ok(vec![(name, root.to_path_buf())]);
    }
    let refuse = |e: std::io::Error| RunnerError::Folder {
        path: root.display().to_string(),
        message: format!("cannot list it: {e}; give a folder of result folders"),
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root).map_err(refuse)? {
        let path = entry.map_err(refuse)?.path();
        if path.join("runs.parquet").exists() {
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into());
            out.push((name, path));
        }
    }
    out.sort();
    Ok(out)
}

/// The x86-64 instruction level faer's kernels can use here (`x86-64-v3`: AVX2 and FMA;
/// `x86-64-v2` otherwise), or the architecture's name elsewhere.
pub fn simd_level() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return "x86-64-v3";
        }
        "x86-64-v2"
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        std::env::consts::ARCH
    }
}

/// The fingerprint file's text: a header line with the instruction level, then one
/// `experiment  digest` line per folder.
pub fn render(entries: &[(String, u64)]) -> String {
    let mut s = format!("# driftlab fingerprint, simd {}\n", simd_level());
    for (name, d) in entries {
        s.push_str(&format!("{name} {d:016x}\n"));
    }
    s
}

/// What a check found: the folders the stored file lists whose digest differs or which
/// are missing (empty: all agree), the folders it does not list, and the stored file's
/// instruction level.
pub struct Check {
    /// One line per disagreement.
    pub differences: Vec<String>,
    /// Result folders present but not in the stored file (not judged).
    pub unlisted: Vec<String>,
    /// How many folders the stored file lists.
    pub listed: usize,
    /// The level the stored file was made on.
    pub stored_simd: String,
}

/// A stored fingerprint file: its instruction level and its `(folder, digest)` lines.
pub type Stored<'a> = (String, Vec<(&'a str, &'a str)>);

/// The stored file's instruction level and its `(folder, digest)` lines, or the first
/// line that is not what [`render`] writes (a malformed file is not a set of differences).
pub fn parse(stored: &str) -> Result<Stored<'_>, String> {
    let mut lines = stored.lines().enumerate();
    let simd = match lines.next() {
        Some((_, l)) if l.starts_with("# driftlab fingerprint, simd ") => {
            l["# driftlab fingerprint, simd ".len()..].trim().to_string()
        }
        _ => return Err("line 1 is not `# driftlab fingerprint, simd LEVEL`: not a file `driftlab fingerprint --write` made".into()),
    };
    let mut want: Vec<(&str, &str)> = Vec::new();
    for (k, l) in lines.filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty()) {
        let entry = l.rsplit_once(' ').filter(|(n, d)| {
            !n.is_empty() && d.len() == 16 && d.bytes().all(|b| b.is_ascii_hexdigit())
        });
        let Some((name, digest)) = entry else {
            let shown: String = l.chars().take(60).collect();
            return Err(format!(
                "line {}: `{shown}` is not `FOLDER DIGEST` (16 hex digits)",
                k + 1
            ));
        };
        if want.iter().any(|(n, _)| *n == name) {
            return Err(format!("line {}: folder `{name}` is listed twice", k + 1));
        }
        want.push((name, digest));
    }
    Ok((simd, want))
}

/// Compare `entries` with the stored fingerprint text `stored` (refused when malformed).
pub fn check(entries: &[(String, u64)], stored: &str) -> Result<Check, String> {
    let (stored_simd, want) = parse(stored)?;
    let (mut differences, mut unlisted) = (Vec::new(), Vec::new());
    for (name, d) in entries {
        let got = format!("{d:016x}");
        match want.iter().find(|(n, _)| n == name) {
            Some((_, w)) if *w == got => {}
            Some((_, w)) => differences.push(format!("{name}: {got}, stored {w}")),
            None => unlisted.push(name.clone()),
        }
    }
    for (n, _) in &want {
        if !entries.iter().any(|(name, _)| name == n) {
            differences.push(format!("{n}: stored, but no such result folder"));
        }
    }
    Ok(Check {
        differences,
        unlisted,
        listed: want.len(),
        stored_simd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FNV-1a 64's published test vectors (draft-eastlake-fnv-17, Appendix C): "" and "a".
    #[test]
    fn fnv_matches_the_published_vectors() {
        let mut h = Fnv(Fnv::OFFSET);
        h.bytes(b"");
        assert_eq!(h.0, 0xcbf2_9ce4_8422_2325);
        h.bytes(b"a");
        assert_eq!(h.0, 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn a_check_names_every_disagreement() {
        let stored = render(&[("a".into(), 1), ("b".into(), 2), ("gone".into(), 3)]);
        let c = check(
            &[("a".into(), 1), ("b".into(), 5), ("new".into(), 4)],
            &stored,
        )
        .expect("a well-formed file");
        assert_eq!(c.stored_simd, simd_level());
        assert_eq!(c.differences.len(), 2, "{:?}", c.differences);
        assert!(c.differences[0].starts_with("b: 0000000000000005, stored 0000000000000002"));
        assert!(c.differences[1].starts_with("gone:"));
        assert_eq!(c.unlisted, ["new"]);
    }

    #[test]
    fn a_malformed_stored_file_is_refused_not_compared() {
        let e = |text: &str| check(&[], text).err().unwrap_or_default();
        assert!(e("andrews 123\n").contains("line 1 is not"));
        let head = "# driftlab fingerprint, simd x86-64-v3\n";
        assert!(e(&format!("{head}andrews 12345\n")).contains("line 2: `andrews 12345` is not"));
        let twice = format!("{head}a 0000000000000001\na 0000000000000001\n");
        assert!(e(&twice).contains("line 3: folder `a` is listed twice"));
        assert!(check(&[], head).is_ok());
    }
}
