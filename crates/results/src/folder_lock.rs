//! One writer per result folder: an advisory lock (`flock`) on `DIR/.driftlab.lock`,
//! held for as long as a run, a merge or a peer import writes the folder.
//!
//! The lock file names its owner (pid, host and what it does), so that a second writer
//! is refused with the owner named. The kernel releases the lock when its process ends,
//! however it ends (SIGKILL, out-of-memory killer, power cut of a node), so a folder whose
//! owner died is taken over by the next run without a stale-lock step; the file then
//! still names the dead owner, which the next run reports as taken over. On a normal
//! end the owner empties the file before it releases the lock.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The lock file's name inside a result folder.
pub const FILE: &str = ".driftlab.lock";

/// Who holds (or last held) a folder's lock, as its lock file says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Owner {
    /// Process id.
    pub pid: u32,
    /// Host name.
    pub host: String,
    /// What it does and since when (e.g. `driftlab run x.toml since 2026-12-04T10:00:00Z`).
    pub doing: String,
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} on host `{}`", self.pid, self.host)?;
        if !self.doing.is_empty() {
            write!(f, " ({})", self.doing)?;
        }
        Ok(())
    }
}

impl Owner {
    /// This process, doing `doing`.
    pub fn this_process(doing: &str) -> Self {
        Self {
            pid: std::process::id(),
            host: host_name(),
            doing: doing.to_string(),
        }
    }

    fn to_text(&self) -> String {
        format!(
            "pid={}\nhost={}\ndoing={}\n",
            self.pid,
            self.host,
            self.doing.replace('\n', " ")
        )
    }

    /// The owner a lock file's text names (`None` for an empty or foreign file).
    fn parse(text: &str) -> Option<Self> {
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_string)
        };
        Some(Self {
            pid: field("pid")?.trim().parse().ok()?,
            host: field("host").unwrap_or_default(),
            doing: field("doing").unwrap_or_default(),
        })
    }
}

/// This machine's host name (`unknown` where it cannot be read).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Why a folder could not be locked.
#[derive(Debug)]
pub enum LockError {
    /// A live process holds it.
    Busy(Owner),
    /// The lock file could not be created or locked.
    Io(std::io::Error),
}

/// The held lock of a result folder; released (and its file emptied) when dropped.
#[derive(Debug)]
pub struct FolderLock {
    file: File,
    path: PathBuf,
    /// The owner named in the file when the lock was taken over from a process that
    /// ended without releasing it.
    pub taken_over_from: Option<Owner>,
}

impl FolderLock {
    /// Lock `dir` (which must exist) for this process, doing `doing`; refused with the
    /// owner while a live process holds it.
    pub fn acquire(dir: &Path, doing: &str) -> Result<Self, LockError> {
        let path = dir.join(FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(LockError::Io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let owner = read_owner(&mut file).unwrap_or_default();
                return Err(LockError::Busy(owner));
            }
            Err(TryLockError::Error(e)) => return Err(LockError::Io(e)),
        }
        let previous = read_owner(&mut file);
        let me = Owner::this_process(doing);
        write_text(&mut file, &me.to_text()).map_err(LockError::Io)?;
        Ok(Self {
            file,
            path,
            taken_over_from: previous,
        })
    }

    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        // Emptied while still held: a file that names an owner and can be locked means
        // that owner ended without releasing it. Closing the file releases the lock.
        let _ = self.file.set_len(0);
    }
}

/// The live process that holds `dir`'s lock, if any (`None`: no lock file, or nobody
/// holds it). A probe: it takes the lock for an instant when it is free.
pub fn holder(dir: &Path) -> Option<Owner> {
    let mut file = OpenOptions::new().read(true).open(dir.join(FILE)).ok()?;
    match file.try_lock_shared() {
        Ok(()) => None,
        Err(_) => Some(read_owner(&mut file).unwrap_or_default()),
    }
}

fn read_owner(file: &mut File) -> Option<Owner> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    Owner::parse(&text)
}

fn write_text(file: &mut File, text: &str) -> std::io::Result<()> {
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(text.as_bytes())?;
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("driftlab-lock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("tmp dir");
        d
    }

    #[test]
    fn a_held_folder_is_refused_with_its_owner_and_free_again_after_release() {
        let dir = tmp("held");
        let first = FolderLock::acquire(&dir, "driftlab run a.toml").expect("free folder");
        assert!(first.taken_over_from.is_none());
        // flock is per open file description: a second open in this process conflicts
        // as another process's would.
        match FolderLock::acquire(&dir, "driftlab run b.toml") {
            Err(LockError::Busy(owner)) => {
                assert_eq!(owner.pid, std::process::id());
                assert_eq!(owner.doing, "driftlab run a.toml");
            }
            other => panic!("a held folder was not refused: {other:?}"),
        }
        assert_eq!(
            holder(&dir).map(|o| o.doing),
            Some("driftlab run a.toml".to_string())
        );
        drop(first);
        assert!(holder(&dir).is_none(), "released on drop");
        let again = FolderLock::acquire(&dir, "driftlab run b.toml").expect("free again");
        assert!(
            again.taken_over_from.is_none(),
            "a clean release leaves no owner"
        );
    }

    #[test]
    fn a_dead_owner_is_named_and_taken_over() {
        let dir = tmp("dead");
        // A lock file left by a process that ended without emptying it.
        std::fs::write(
            dir.join(FILE),
            "pid=999999\nhost=elsewhere\ndoing=driftlab run x\n",
        )
        .expect("write");
        let lock = FolderLock::acquire(&dir, "driftlab run y").expect("taken over");
        let old = lock
            .taken_over_from
            .clone()
            .expect("the dead owner is named");
        assert_eq!((old.pid, old.host.as_str()), (999_999, "elsewhere"));
    }
}
