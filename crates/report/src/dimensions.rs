//! The dimensions an experiment sweeps beyond problem, method and step (threads inside a
//! cell, cells side by side, repeats, method parameters a label hides): every runs table
//! of the report and of `summary.md` shows each one that tells its rows apart, so that no
//! two rows print alike (a thread sweep's rows used to print as identical pairs).

use crate::data::{Results, Run};
use std::collections::HashSet;

/// One extra column of a runs table.
pub struct Dimension {
    /// Column header.
    pub header: &'static str,
    /// The row's value.
    pub value: fn(&Run) -> String,
}

/// What every runs table shows first: problem (with its parameters), method variant, step.
pub fn base_key(r: &Run) -> String {
    format!("{}|{}|{}", r.problem_key(), r.variant, r.step_label())
}

const THREADS: Dimension = Dimension {
    header: "threads",
    value: |r| r.cell_threads().to_string(),
};
const SIDE_BY_SIDE: Dimension = Dimension {
    header: "side by side",
    value: |r| r.batch_threads().map_or("—".into(), |k| k.to_string()),
};
const REPEAT: Dimension = Dimension {
    header: "repeat",
    value: |r| r.runs_behind_times().to_string(),
};
const PARAMS: Dimension = Dimension {
    header: "params",
    value: |r| r.params.clone(),
};
const CELL: Dimension = Dimension {
    header: "cell",
    value: |r| r.cell.to_string(),
};

/// The extra columns `res`'s runs tables need: each swept dimension that varies over
/// its rows (threads, side by side), `repeat` when times are medians of several runs,
/// `params` when a label hides parameters that differ, and the cell index as a last
/// resort when rows would still print alike.
pub fn swept(res: &Results) -> Vec<Dimension> {
    let runs = &res.runs;
    let varies = |f: fn(&Run) -> String| runs.iter().map(f).collect::<HashSet<_>>().len() > 1;
    let mut out = Vec::new();
    for d in [THREADS, SIDE_BY_SIDE] {
        if varies(d.value) {
            out.push(d);
        }
    }
    if runs.iter().any(|r| r.runs_behind_times() > 1) {
        out.push(REPEAT);
    }
    if !distinct(runs, &out) {
        out.push(PARAMS);
        if !distinct(runs, &out) {
            out.pop();
            out.push(CELL);
        }
    }
    out
}

/// Whether the rows print distinctly with the base key and `extra` columns.
fn distinct(runs: &[Run], extra: &[Dimension]) -> bool {
    let key = |r: &Run| {
        let mut k = base_key(r);
        for d in extra {
            k.push('|');
            k.push_str(&(d.value)(r));
        }
        k
    };
    runs.iter().map(key).collect::<HashSet<_>>().len() == runs.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cell: u64, threads: usize, sweep: usize) -> Run {
        Run {
            cell,
            problem: "planar-chain".into(),
            problem_params: "{\"links\":1000}".into(),
            variant: "baumgarte".into(),
            h: 1e-3,
            threads: threads as u64,
            sweep_threads: sweep as u64,
            repeat: 3,
            ..Run::default()
        }
    }

    #[test]
    fn a_thread_sweep_shows_both_thread_columns_and_the_repeats() {
        let res = Results {
            runs: vec![run(0, 1, 1), run(1, 2, 1), run(2, 1, 2), run(3, 2, 2)],
            ..Results::default()
        };
        let headers: Vec<&str> = swept(&res).iter().map(|d| d.header).collect();
        assert_eq!(headers, ["threads", "side by side", "repeat"]);
        assert!(distinct(&res.runs, &swept(&res)));
    }

    #[test]
    fn rows_alike_in_every_column_fall_back_to_the_cell() {
        let res = Results {
            runs: vec![run(0, 1, 1), run(1, 1, 1)],
            ..Results::default()
        };
        let headers: Vec<&str> = swept(&res).iter().map(|d| d.header).collect();
        assert_eq!(headers, ["repeat", "cell"]);
    }
}
