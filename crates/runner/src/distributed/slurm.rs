//! A sweep as a Slurm job array: `driftlab slurm SPEC --shards N` writes
//!
//! * `OUT/slurm/spec.toml` — the spec as submitted (the tasks read this copy, so an edit
//!   of the original after submission cannot mix two specs: a resumed shard checks the
//!   hash);
//! * `OUT/slurm/array.sbatch` — `#SBATCH --array=0-(N-1)`; task I runs
//!   `driftlab run spec.toml --shard I/N --out OUT/shard-I --resume` (so a task that is
//!   requeued or rerun after a time limit continues its journal);
//! * `OUT/slurm/merge.sbatch` — `driftlab merge OUT/shard-* --out OUT`;
//! * `OUT/slurm/submit.sh` — submits the array and the merge with
//!   `--dependency=afterok:<array job>`, and prints both job ids.
//!
//! Slurm is the engine (scheduling, requeueing, accounting); driftlab only shards
//! deterministically and merges (`shard.rs`).

use crate::error::RunnerError;
use std::path::{Path, PathBuf};

/// A job array to write.
#[derive(Clone, Debug)]
pub struct SlurmJob {
    /// The spec file.
    pub spec: PathBuf,
    /// Result folder (shards go to `shard-I` inside it, the merge to it).
    pub out: PathBuf,
    /// Number of shards (array tasks).
    pub shards: usize,
    /// Wall-time limit per task (`--time`, Slurm's format, e.g. `02:00:00`).
    pub time: String,
    /// CPUs per task (cells side by side in a shard).
    pub cpus_per_task: usize,
    /// Named size, if any.
    pub size: Option<String>,
    /// Partition, if any.
    pub partition: Option<String>,
    /// The `driftlab` binary the tasks run (absolute).
    pub binary: PathBuf,
}

/// Single-quote `s` for a POSIX shell.
fn quoted(s: &Path) -> String {
    format!("'{}'", s.display().to_string().replace('\'', "'\\''"))
}

impl SlurmJob {
    /// Refuse values Slurm or the shards cannot take, naming the option.
    fn validate(&self) -> Result<(), String> {
        if self.shards == 0 || self.shards > 100_000 {
            return Err(format!(
                "--shards {}: give 1 … 100000 array tasks",
                self.shards
            ));
        }
        if self.cpus_per_task == 0 || self.cpus_per_task > crate::spec::MAX_THREADS {
            return Err(format!(
                "--cpus-per-task {}: give 1 … {}",
                self.cpus_per_task,
                crate::spec::MAX_THREADS
            ));
        }
        let time_ok = !self.time.is_empty()
            && self
                .time
                .chars()
                .all(|c| c.is_ascii_digit() || c == ':' || c == '-');
        if !time_ok {
            return Err(format!(
                "--time `{}`: give Slurm's form, e.g. 30, 02:00:00 or 1-12:00:00",
                self.time
            ));
        }
        Ok(())
    }

    /// The `#SBATCH` lines every script shares.
    fn common(&self, name: &str, log: &str) -> String {
        let mut s = format!(
            "#!/bin/bash\n#SBATCH --job-name={name}\n#SBATCH --time={}\n#SBATCH --output={}\n",
            self.time,
            self.out.join("slurm").join(log).display()
        );
        if let Some(p) = &self.partition {
            s.push_str(&format!("#SBATCH --partition={p}\n"));
        }
        s
    }

    /// The array script.
    fn array_script(&self, spec: &Path) -> String {
        let size = self
            .size
            .as_ref()
            .map_or(String::new(), |s| format!(" --size {s}"));
        format!(
            "{}#SBATCH --array=0-{}\n#SBATCH --cpus-per-task={}\nset -euo pipefail\n\
             i=\"$SLURM_ARRAY_TASK_ID\"\n\
             exec {} run {} --shard \"$i/{}\" --out {}/shard-\"$i\" --threads \"${{SLURM_CPUS_PER_TASK:-{}}}\" --resume{size}\n",
            self.common("driftlab-shards", "shard-%a.log"),
            self.shards - 1,
            self.cpus_per_task,
            quoted(&self.binary),
            quoted(spec),
            self.shards,
            quoted(&self.out),
            self.cpus_per_task,
        )
    }

    /// The merge script.
    fn merge_script(&self) -> String {
        let dirs: Vec<String> = (0..self.shards)
            .map(|i| quoted(&self.out.join(format!("shard-{i}"))))
            .collect();
        format!(
            "{}#SBATCH --cpus-per-task=1\nset -euo pipefail\nexec {} merge {} --out {}\n",
            self.common("driftlab-merge", "merge.log"),
            quoted(&self.binary),
            dirs.join(" "),
            quoted(&self.out)
        )
    }

    /// The submission script: the array, then the merge after it succeeded.
    fn submit_script(&self) -> String {
        let dir = self.out.join("slurm");
        format!(
            "#!/bin/bash\n# Submit the shards as a job array and the merge after them.\nset -euo pipefail\n\
             array=$(sbatch --parsable {})\n\
             merge=$(sbatch --parsable --dependency=afterok:\"${{array%%;*}}\" {})\n\
             echo \"array job $array, merge job $merge\"\n",
            quoted(&dir.join("array.sbatch")),
            quoted(&dir.join("merge.sbatch"))
        )
    }

    /// Write the scripts (and the spec copy) to `OUT/slurm/`; returns their paths.
    pub fn write(&self) -> Result<Vec<PathBuf>, RunnerError> {
        self.validate().map_err(|message| RunnerError::Spec {
            path: self.spec.display().to_string(),
            message,
        })?;
        let dir = self.out.join("slurm");
        let werr = |p: &Path, e: std::io::Error| RunnerError::Write {
            path: p.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(&dir).map_err(|e| werr(&dir, e))?;
        let spec = dir.join("spec.toml");
        std::fs::copy(&self.spec, &spec).map_err(|e| werr(&self.spec, e))?;
        let files = [
            ("array.sbatch", self.array_script(&spec)),
            ("merge.sbatch", self.merge_script()),
            ("submit.sh", self.submit_script()),
        ];
        let mut written = vec![spec];
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|e| werr(&path, e))?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
            }
            written.push(path);
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> SlurmJob {
        SlurmJob {
            spec: "/x/s.toml".into(),
            out: "/r/it's".into(),
            shards: 4,
            time: "01:00:00".into(),
            cpus_per_task: 2,
            size: Some("quick".into()),
            partition: None,
            binary: "/b/driftlab".into(),
        }
    }

    #[test]
    fn the_array_runs_each_shard_resumable_and_the_merge_waits_for_it() {
        let j = job();
        let a = j.array_script(Path::new("/r/it's/slurm/spec.toml"));
        assert!(a.contains("#SBATCH --array=0-3\n"), "{a}");
        assert!(
            a.contains("--shard \"$i/4\" --out '/r/it'\\''s'/shard-\"$i\""),
            "{a}"
        );
        assert!(a.contains("--resume --size quick"), "{a}");
        let m = j.merge_script();
        assert!(
            m.contains("merge '/r/it'\\''s/shard-0' '/r/it'\\''s/shard-1'"),
            "{m}"
        );
        assert!(j.submit_script().contains("--dependency=afterok:"));
    }

    #[test]
    fn bad_options_are_named() {
        let bad = |f: fn(&mut SlurmJob)| {
            let mut j = job();
            f(&mut j);
            j.validate().unwrap_err()
        };
        assert!(bad(|j| j.shards = 0).starts_with("--shards 0"));
        assert!(bad(|j| j.cpus_per_task = 0).starts_with("--cpus-per-task 0"));
        assert!(bad(|j| j.time = "1h; rm -rf /".into()).starts_with("--time"));
    }
}
