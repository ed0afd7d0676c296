//! One channel for threads (issue 48 item 4): no source file of the workspace's crates
//! calls a faer function that reads or writes faer's process-wide parallelism. Those
//! functions (faer 0.24.4: `src/linalg/solvers.rs`, `src/sparse/solvers.rs`,
//! `src/linalg/reductions/determinant.rs`, read with `grep get_global_parallelism`) would
//! make a cell's threads depend on what some other part of a program set, and a program
//! embedding the library inherit a setting. The workspace calls faer's low-level kernels
//! with the parallelism given (`driftlab-solver`'s `dense/blocked.rs`, `kkt/pivoted.rs`).
//! A bench may set the global for itself (it is its own program); `src/` may not.

use std::path::{Path, PathBuf};

/// Calls that read (or set) faer's global parallelism, as they appear in source.
const GLOBAL_READERS: &[&str] = &[
    "set_global_parallelism",
    "get_global_parallelism",
    ".partial_piv_lu(",
    ".full_piv_lu(",
    ".thin_svd(",
    ".svd(",
    ".singular_values(",
    ".self_adjoint_eigen(",
    ".self_adjoint_eigenvalues(",
    ".eigen(",
    ".eigenvalues(",
    ".llt(",
    ".ldlt(",
    ".lblt(",
    ".qr(",
    ".col_piv_qr(",
    ".determinant(",
    ".sp_lu(",
    ".sp_cholesky(",
    ".sp_qr(",
    "Lu::try_new_with_symbolic",
    "Llt::try_new_with_symbolic",
    "Ldlt::try_new_with_symbolic",
    "Qr::try_new_with_symbolic",
    "sp_solve_lower_triangular_in_place",
    "sp_solve_upper_triangular_in_place",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_crate_source_reads_faers_global_parallelism() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in std::fs::read_dir(&crates).expect("read crates/").flatten() {
        rust_files(&krate.path().join("src"), &mut files);
    }
    assert!(
        files.len() > 100,
        "found only {} source files under {}",
        files.len(),
        crates.display()
    );
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read source");
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for call in GLOBAL_READERS.iter().filter(|c| code.contains(*c)) {
                found.push(format!("{}:{}: {call}", file.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "faer calls that read its process-wide parallelism (call the low-level kernel with \
         a Par, as dense/blocked.rs does):\n{}",
        found.join("\n")
    );
}
