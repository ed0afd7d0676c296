//! Links SUNDIALS IDA when the `ida` feature is on. Debian's runtime package
//! (`libsundials-ida6`) ships `libsundials_ida.so.6` without the unversioned symlink of the
//! -dev package, so the library is named by file; `SUNDIALS_IDA_LIB` (a file name) and
//! `SUNDIALS_LIB_DIR` override it for SUNDIALS 6.x installed elsewhere.
fn main() {
    println!("cargo:rerun-if-env-changed=SUNDIALS_IDA_LIB");
    println!("cargo:rerun-if-env-changed=SUNDIALS_LIB_DIR");
    if std::env::var_os("CARGO_FEATURE_IDA").is_none() {
        return;
    }
    if let Ok(dir) = std::env::var("SUNDIALS_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    let lib = std::env::var("SUNDIALS_IDA_LIB").unwrap_or_else(|_| "libsundials_ida.so.6".into());
    println!("cargo:rustc-link-lib=dylib:+verbatim={lib}");
}
