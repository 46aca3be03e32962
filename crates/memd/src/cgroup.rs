//! Memory cgroups that antsched makes itself (cgroup v1): the groups `antsched mem run`
//! runs a command in, under one parent, [`RUN_PARENT`], that antsched owns.
//!
//! antsched never changes a group it did not make: the daemon only reads the groups it is
//! told to govern ([`crate::CgroupSource`]), and what is written here (a new directory, its
//! `memory.limit_in_bytes`, a process moved into its `cgroup.procs`) is written only to a
//! group this module created. A [`RunGroup`] removes its directory when dropped.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::source::MEMCG_V1_ROOT;

/// The directory under the v1 memory hierarchy in which antsched makes its groups.
pub const RUN_PARENT: &str = "/sys/fs/cgroup/memory/antsched";

/// Where the cgroup2 hierarchy is mounted beside v1 (systemd's "hybrid" layout). On this
/// kind of machine it has no controllers, but every group in it has a `memory.pressure`: a
/// group of antsched's gets a *twin* there, holding the same processes, for per-group PSI.
pub const UNIFIED_ROOT: &str = "/sys/fs/cgroup/unified";

/// The `memory.pressure` of the cgroup2 twin of the v1 group `v1_dir` (the group at the same
/// path under [`UNIFIED_ROOT`]), when there is one.
pub fn pressure_twin(v1_dir: &Path) -> Option<PathBuf> {
    let dir = v1_dir.canonicalize().ok()?;
    let rel = dir.strip_prefix(MEMCG_V1_ROOT).ok()?;
    if rel.as_os_str().is_empty() {
        return None;
    }
    let file = Path::new(UNIFIED_ROOT).join(rel).join("memory.pressure");
    file.is_file().then_some(file)
}

/// Where `antsched mem run`, run by process `pid`, makes its group: inside `pid`'s own v1
/// memory group when that lies under [`RUN_PARENT`] (a `mem run` inside a `mem run`), else
/// under [`RUN_PARENT`]. A nested group is charged to and limited by the outer one, so one
/// domain (the outer group, with the machine's size as its limit) can hold a program and a
/// hog beside it as two governed groups, and the daemon enforce their weights against each
/// other (section 5.1.2) as the thesis's kernel did between two processes on one machine.
pub fn run_parent_of(pid: u32) -> PathBuf {
    crate::enforce::memory_group_of(pid)
        .filter(|g| g.starts_with(RUN_PARENT) && g.as_path() != Path::new(RUN_PARENT))
        .unwrap_or_else(|| PathBuf::from(RUN_PARENT))
}

/// Why a group could not be made, used or removed. Every message names the path.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error(
        "{root} is not a cgroup v1 memory hierarchy (it has no memory.limit_in_bytes); \
         antsched makes its groups there"
    )]
    NoHierarchy { root: PathBuf },
    #[error("{path}: {what}: {source}")]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: no process {pid} to move into the group")]
    NoProcess { path: PathBuf, pid: u32 },
    #[error(
        "{path}: the group still has processes ({pids}) after {waited:?}; it is left in place"
    )]
    Busy {
        path: PathBuf,
        pids: String,
        waited: Duration,
    },
    #[error("bad size {text:?}: {why} (a number of bytes with an optional K, M, G or T suffix, powers of 1024: 256M)")]
    Size { text: String, why: &'static str },
}

/// A size as users write it: bytes, or with `K`, `M`, `G` or `T` (powers of 1024, optionally
/// followed by `B` or `iB`).
pub fn parse_size(text: &str) -> Result<u64, CgroupError> {
    let bad = |why| CgroupError::Size {
        text: text.to_string(),
        why,
    };
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits == 0 {
        return Err(bad("it does not start with a number"));
    }
    let n: u64 = t[..digits]
        .parse()
        .map_err(|_| bad("the number is too large"))?;
    let shift = match t[digits..].to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(bad("unknown suffix")),
    };
    let v = n
        .checked_mul(1u64 << shift)
        .ok_or_else(|| bad("the size is too large"))?;
    if v == 0 {
        return Err(bad("a limit must be above zero"));
    }
    Ok(v)
}

/// A memory cgroup antsched made; removed (its directory) on drop.
#[derive(Debug)]
pub struct RunGroup {
    dir: PathBuf,
    /// The cgroup2 twin (same name under `UNIFIED_ROOT/antsched`), for the group's PSI.
    twin: Option<PathBuf>,
    removed: bool,
}

impl RunGroup {
    /// Makes `<parent>/<name>` with `limit` (bytes) when given, after checking that the v1
    /// hierarchy `parent` lies in is there. `parent` is made when missing (it is antsched's
    /// own); `name` must be new (an existing group is never taken over).
    pub fn create(parent: &Path, name: &str, limit: Option<u64>) -> Result<Self, CgroupError> {
        let root = parent.parent().unwrap_or(Path::new(MEMCG_V1_ROOT));
        if !root.join("memory.limit_in_bytes").is_file() {
            return Err(CgroupError::NoHierarchy {
                root: root.to_path_buf(),
            });
        }
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(CgroupError::Io {
                path: parent.join(name),
                what: "not a group name",
                source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
            });
        }
        match std::fs::create_dir(parent) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => {
                return Err(CgroupError::Io {
                    path: parent.to_path_buf(),
                    what: "cannot make antsched's parent group",
                    source,
                })
            }
        }
        if !parent.join("memory.limit_in_bytes").is_file() {
            return Err(CgroupError::NoHierarchy {
                root: parent.to_path_buf(),
            });
        }
        let dir = parent.join(name);
        std::fs::create_dir(&dir).map_err(|source| CgroupError::Io {
            path: dir.clone(),
            what: "cannot make the group",
            source,
        })?;
        let mut group = Self {
            dir,
            twin: None,
            removed: false,
        };
        group.twin = make_twin(parent, name);
        if let Some(limit) = limit {
            group.write(
                "memory.limit_in_bytes",
                &limit.to_string(),
                "cannot set the limit",
            )?;
        }
        Ok(group)
    }

    /// The group's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    fn write(&self, file: &str, value: &str, what: &'static str) -> Result<(), CgroupError> {
        let path = self.dir.join(file);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|source| CgroupError::Io {
                path: path.clone(),
                what,
                source,
            })?;
        f.write_all(value.as_bytes())
            .map_err(|source| CgroupError::Io { path, what, source })
    }

    /// The cgroup2 twin's directory, where one could be made.
    pub fn twin(&self) -> Option<&Path> {
        self.twin.as_deref()
    }

    /// Moves process `pid` (all its threads) into the group, and into its twin.
    pub fn add(&self, pid: u32) -> Result<(), CgroupError> {
        if let Some(twin) = &self.twin {
            let path = twin.join("cgroup.procs");
            let _ = std::fs::write(&path, pid.to_string());
        }
        match self.write("cgroup.procs", &pid.to_string(), "cannot move the process") {
            Err(CgroupError::Io { path, source, .. })
                if source.raw_os_error() == Some(rustix::io::Errno::SRCH.raw_os_error()) =>
            {
                Err(CgroupError::NoProcess { path, pid })
            }
            r => r,
        }
    }

    /// The group's `cgroup.procs` (and its twin's), open for writing: a process that writes
    /// `0` to one moves itself in (what a child does between fork and exec).
    pub fn procs_files(&self) -> Result<Vec<std::fs::File>, CgroupError> {
        let mut files = Vec::new();
        for dir in std::iter::once(&self.dir).chain(self.twin.as_ref()) {
            let path = dir.join("cgroup.procs");
            files.push(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(|source| CgroupError::Io {
                        path,
                        what: "cannot open",
                        source,
                    })?,
            );
        }
        Ok(files)
    }

    /// The processes in the group now.
    pub fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Removes the group, waiting up to `wait` for processes that are exiting to leave it.
    /// A group that still has processes then is left in place, with an error that says so.
    pub fn remove(mut self, wait: Duration) -> Result<(), CgroupError> {
        self.removed = true;
        let v1 = remove_dir(&self.dir, wait);
        let twin = match &self.twin {
            Some(t) => remove_dir(t, wait),
            None => Ok(()),
        };
        v1.and(twin)
    }
}

/// Makes the cgroup2 twin `UNIFIED_ROOT/<parent's name>/<name>`, best effort: a machine
/// without the unified mount (or with it read-only) just has no per-group PSI.
fn make_twin(parent: &Path, name: &str) -> Option<PathBuf> {
    let unified = Path::new(UNIFIED_ROOT);
    if !unified.join("cgroup.procs").is_file() || parent.parent() != Some(Path::new(MEMCG_V1_ROOT))
    {
        return None;
    }
    let twin_parent = unified.join(parent.file_name()?);
    match std::fs::create_dir(&twin_parent) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    let twin = twin_parent.join(name);
    std::fs::create_dir(&twin).ok()?;
    Some(twin)
}

fn remove_dir(dir: &Path, wait: Duration) -> Result<(), CgroupError> {
    let start = Instant::now();
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => {
                if start.elapsed() >= wait {
                    let pids: Vec<String> = std::fs::read_to_string(dir.join("cgroup.procs"))
                        .map(|t| t.lines().map(str::to_string).collect())
                        .unwrap_or_default();
                    if pids.is_empty() {
                        return Err(CgroupError::Io {
                            path: dir.to_path_buf(),
                            what: "cannot remove the group",
                            source,
                        });
                    }
                    return Err(CgroupError::Busy {
                        path: dir.to_path_buf(),
                        pids: pids.join(" "),
                        waited: wait,
                    });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

impl Drop for RunGroup {
    fn drop(&mut self) {
        if !self.removed {
            let _ = remove_dir(&self.dir, Duration::from_secs(2));
            if let Some(t) = &self.twin {
                let _ = remove_dir(t, Duration::from_secs(2));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("1g").unwrap(), 1 << 30);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64KiB").unwrap(), 64 << 10);
        for bad in ["", "M", "12Q", "0", "99999999999999999999", "-1M"] {
            let e = parse_size(bad).unwrap_err().to_string();
            assert!(e.contains("bad size"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_parent_outside_a_memory_hierarchy_is_named() {
        let e = RunGroup::create(Path::new("/tmp/antsched-no-such/x"), "g", None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/tmp/antsched-no-such is not a cgroup v1"),
            "{e}"
        );
    }
}
