# Conveniences over the two README commands (`just` is optional: every recipe is one cargo line;
# `cargo install just --locked` installs it).

# Run every experiment in experiments/ and build the figures under reports/ (or OUT).
run-experiments size="full" out="reports":
    cargo run --profile experiments -p driftlab-cli -- run-experiments --size {{size}} --out {{out}}

# The test suite (what CI runs).
test:
    cargo test --workspace

# Criterion per-step benchmarks on the planar chain.
bench:
    cargo bench -p driftlab-methods

# Rebuild figures and summaries from stored results only.
report:
    cargo run --profile experiments -p driftlab-cli -- report

# Lints as CI expects them.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
