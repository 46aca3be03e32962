//! The daemon's state file: every group file it has changed and not yet put back (a
//! `memory.limit_in_bytes` lowered by an enforcement step, a `memory.swappiness` set to 0 to
//! shield a higher class, see `enforce`), with the original value, so that a daemon killed in
//! the middle of enforcement (SIGKILL, a crash, the machine's OOM killer) leaves nothing
//! behind once the next one starts: the next daemon writes each original value back before it
//! serves anything.
//!
//! The file is written before the limit is lowered and rewritten after it is restored, each
//! time whole, to a temporary file in the same directory that is then renamed over it: a
//! reader (the next daemon) finds either the old list or the new one, never half of one.
//!
//! ```text
//! antsched-memd-state 1
//! limit /sys/fs/cgroup/memory/antsched/run-42 9223372036854771712
//! swappiness /sys/fs/cgroup/memory/antsched/run-41 60
//! ```
//!
//! Only groups under the parent the daemon was allowed to govern ([`crate::RUN_PARENT`])
//! are ever restored: a state file that names anything else (edited, or from another
//! configuration) is reported and that line ignored.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The first line of a state file: its format and version.
const HEADER: &str = "antsched-memd-state 1";

/// Where the daemon keeps its state unless told otherwise.
pub const DEFAULT_STATE: &str = "/run/antsched/memd.state";

/// Why the state file could not be read or written. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("state file {path}: {what}: {source}")]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("state file {path}: line {line}: {why} (expected {HEADER:?}, then lines `limit PATH BYTES` or `swappiness PATH VALUE`)")]
    Format {
        path: PathBuf,
        line: usize,
        why: String,
    },
}

/// A group file the daemon changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Knob {
    /// `memory.limit_in_bytes`.
    Limit,
    /// `memory.swappiness`.
    Swappiness,
}

impl Knob {
    pub fn file(self) -> &'static str {
        match self {
            Knob::Limit => "memory.limit_in_bytes",
            Knob::Swappiness => "memory.swappiness",
        }
    }

    /// The word that starts its lines in the state file, and names it in the log.
    pub fn keyword(self) -> &'static str {
        match self {
            Knob::Limit => "limit",
            Knob::Swappiness => "swappiness",
        }
    }
}

/// The files changed and not yet restored, as the file on disk holds them.
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
    /// (What, group directory) -> its value before the daemon changed it.
    changed: BTreeMap<(Knob, PathBuf), u64>,
}

/// What [`StateFile::open`] did with what a previous daemon left.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Group files written back, with the value.
    pub restored: Vec<(Knob, PathBuf, u64)>,
    /// Lines not acted on, and why (a group gone, a path outside the parent).
    pub skipped: Vec<String>,
}

impl StateFile {
    /// Opens the state at `path`: restores every limit a previous daemon recorded (under
    /// `parent` only) and leaves the file empty of entries. A missing file is a first start.
    /// A file that does not parse is an error: the daemon does not start over a state it
    /// cannot read, since limits it cannot restore may be in it.
    pub fn open(path: &Path, parent: &Path) -> Result<(Self, Recovered), StateError> {
        let mut recovered = Recovered::default();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(StateError::Io {
                    path: path.to_path_buf(),
                    what: "cannot read it",
                    source,
                })
            }
        };
        let mut state = Self {
            path: path.to_path_buf(),
            changed: BTreeMap::new(),
        };
        if let Some(text) = text {
            let entries = parse(path, &text)?;
            let parent = parent
                .canonicalize()
                .unwrap_or_else(|_| parent.to_path_buf());
            for (knob, group, original) in entries {
                if !group.starts_with(&parent) || group == parent {
                    recovered.skipped.push(format!(
                        "{}: not a group under {}; left alone",
                        group.display(),
                        parent.display()
                    ));
                    continue;
                }
                match write_knob(&group, knob, original) {
                    Ok(()) => recovered.restored.push((knob, group, original)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => recovered
                        .skipped
                        .push(format!("{}: the group is gone", group.display())),
                    Err(e) => {
                        // Kept: the next start (or this daemon's exit) tries again.
                        recovered.skipped.push(format!(
                            "{}: cannot restore its {} {original}: {e}; kept in the state",
                            group.display(),
                            knob.file()
                        ));
                        state.changed.insert((knob, group), original);
                    }
                }
            }
        }
        state.save()?;
        Ok((state, recovered))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The limits changed and not restored.
    pub fn entries(&self) -> impl Iterator<Item = (&Path, u64)> {
        self.entries_of(Knob::Limit)
    }

    /// The `knob` files changed and not restored.
    pub fn entries_of(&self, knob: Knob) -> impl Iterator<Item = (&Path, u64)> {
        self.changed
            .iter()
            .filter(move |((k, _), _)| *k == knob)
            .map(|((_, p), v)| (p.as_path(), *v))
    }

    /// Records `original` as the limit of `group` before the daemon changes it: on disk
    /// before this returns. A group already recorded keeps its first original.
    pub fn remember(&mut self, group: &Path, original: u64) -> Result<(), StateError> {
        self.remember_of(Knob::Limit, group, original)
    }

    /// [`Self::remember`] for any `knob`.
    pub fn remember_of(
        &mut self,
        knob: Knob,
        group: &Path,
        original: u64,
    ) -> Result<(), StateError> {
        let key = (knob, group.to_path_buf());
        if self.changed.contains_key(&key) {
            return Ok(());
        }
        self.changed.insert(key.clone(), original);
        self.save().inspect_err(|_| {
            self.changed.remove(&key);
        })
    }

    /// The limit of `group` is back to its original (or the group is gone).
    pub fn forget(&mut self, group: &Path) -> Result<(), StateError> {
        if self
            .changed
            .remove(&(Knob::Limit, group.to_path_buf()))
            .is_some()
        {
            self.save()?;
        }
        Ok(())
    }

    /// Writes every original back and forgets the ones written (or whose group is gone).
    /// Returns what could not be restored.
    pub fn restore_all(&mut self) -> Vec<String> {
        let mut failed = self.restore_where(|_| true);
        failed.extend(self.restore_of(Knob::Swappiness, |_| true));
        failed
    }

    /// [`Self::restore_all`] for the limits of the groups `which` picks.
    pub fn restore_where(&mut self, which: impl Fn(&Path) -> bool) -> Vec<String> {
        self.restore_of(Knob::Limit, which)
    }

    /// Writes back the `knob` files of the groups `which` picks, and forgets those written
    /// (or whose group is gone). Returns what could not be restored.
    pub fn restore_of(&mut self, knob: Knob, which: impl Fn(&Path) -> bool) -> Vec<String> {
        let mut failed = Vec::new();
        let entries: Vec<(PathBuf, u64)> = self
            .entries_of(knob)
            .filter(|(p, _)| which(p))
            .map(|(p, v)| (p.to_path_buf(), v))
            .collect();
        if entries.is_empty() {
            return failed;
        }
        for (group, original) in entries {
            match write_knob(&group, knob, original) {
                Ok(()) => {
                    self.changed.remove(&(knob, group));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    self.changed.remove(&(knob, group));
                }
                Err(e) => failed.push(format!(
                    "{}: cannot restore its {} {original}: {e}",
                    group.display(),
                    knob.file()
                )),
            }
        }
        if let Err(e) = self.save() {
            failed.push(e.to_string());
        }
        failed
    }

    /// Writes the file whole, to a temporary file renamed over it.
    fn save(&self) -> Result<(), StateError> {
        let io = |what| {
            move |source| StateError::Io {
                path: self.path.clone(),
                what,
                source,
            }
        };
        let mut text = format!("{HEADER}\n");
        for ((knob, group), original) in &self.changed {
            text.push_str(&format!(
                "{} {} {original}\n",
                knob.keyword(),
                group.display()
            ));
        }
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut f = std::fs::File::create(&tmp).map_err(io("cannot create its temporary file"))?;
        // No fsync: the file has to outlive the daemon, not the machine. After a reboot the
        // groups it names are gone with their limits.
        f.write_all(text.as_bytes())
            .map_err(io("cannot write its temporary file"))?;
        std::fs::rename(&tmp, &self.path).map_err(io("cannot rename the temporary file over it"))
    }
}

fn parse(path: &Path, text: &str) -> Result<Vec<(Knob, PathBuf, u64)>, StateError> {
    let bad = |line: usize, why: String| StateError::Format {
        path: path.to_path_buf(),
        line,
        why,
    };
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim() == HEADER => {}
        Some((_, h)) => return Err(bad(1, format!("unknown header {h:?}"))),
        // An empty file: a daemon died between creating and writing it, before any change.
        None => return Ok(Vec::new()),
    }
    let mut entries = Vec::new();
    for (i, line) in lines {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some((knob, rest)) = [Knob::Limit, Knob::Swappiness]
            .into_iter()
            .find_map(|k| Some((k, line.strip_prefix(k.keyword())?.strip_prefix(' ')?)))
        else {
            return Err(bad(i + 1, format!("unknown entry {line:?}")));
        };
        let Some((group, value)) = rest.rsplit_once(' ') else {
            return Err(bad(i + 1, format!("no value in {line:?}")));
        };
        let value: u64 = value
            .parse()
            .map_err(|_| bad(i + 1, format!("{value:?} is not a number")))?;
        entries.push((knob, PathBuf::from(group), value));
    }
    Ok(entries)
}

/// Writes `bytes` to the `memory.limit_in_bytes` of the v1 group at `group`.
pub(crate) fn write_limit(group: &Path, bytes: u64) -> std::io::Result<()> {
    write_knob(group, Knob::Limit, bytes)
}

/// Writes `value` to the `knob` file of the v1 group at `group`.
pub(crate) fn write_knob(group: &Path, knob: Knob, value: u64) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(group.join(knob.file()))?;
    f.write_all(value.to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("antsched-state-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A fake group: a directory with a `memory.limit_in_bytes` file.
    fn fake_group(parent: &Path, name: &str, limit: u64) -> PathBuf {
        let g = parent.join(name);
        std::fs::create_dir_all(&g).unwrap();
        std::fs::write(g.join("memory.limit_in_bytes"), limit.to_string()).unwrap();
        g
    }

    fn limit(g: &Path) -> u64 {
        std::fs::read_to_string(g.join("memory.limit_in_bytes"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// What a daemon killed mid-step leaves is restored by the next one, under the parent
    /// only, and the file is then empty of entries.
    #[test]
    fn a_killed_daemons_limits_are_restored_at_the_next_start() {
        let d = dir("restore");
        let parent = d.join("antsched");
        let a = fake_group(&parent, "a", 1000);
        let outside = fake_group(&d, "other", 1000);
        let path = d.join("memd.state");
        {
            let (mut s, r) = StateFile::open(&path, &parent).unwrap();
            assert!(r.restored.is_empty() && r.skipped.is_empty());
            s.remember(&a, 5000).unwrap();
            s.remember(&a, 7000).unwrap(); // the first original stays
            std::mem::forget(s); // killed: nothing restored
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            format!("{HEADER}\nlimit {} 5000\n", a.display()),
            "{text}"
        );
        // A line naming a group outside the parent is never acted on.
        std::fs::write(
            &path,
            format!(
                "{text}limit {} 1\nlimit {}/gone 1\n",
                outside.display(),
                parent.display()
            ),
        )
        .unwrap();
        let (s, r) = StateFile::open(&path, &parent).unwrap();
        assert_eq!(r.restored, [(Knob::Limit, a.clone(), 5000)]);
        assert_eq!(limit(&a), 5000);
        assert_eq!(limit(&outside), 1000);
        assert_eq!(r.skipped.len(), 2, "{:?}", r.skipped);
        assert!(
            r.skipped[0].contains("not a group under"),
            "{:?}",
            r.skipped
        );
        assert!(r.skipped[1].contains("gone"), "{:?}", r.skipped);
        assert_eq!(s.entries().count(), 0);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{HEADER}\n")
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    /// A shield's `memory.swappiness` is recorded and restored like a limit, on its own line.
    #[test]
    fn a_killed_daemons_swappiness_is_restored_at_the_next_start() {
        let d = dir("swappiness");
        let parent = d.join("antsched");
        let a = fake_group(&parent, "a", 1000);
        std::fs::write(a.join("memory.swappiness"), "0").unwrap();
        let path = d.join("memd.state");
        {
            let (mut s, _) = StateFile::open(&path, &parent).unwrap();
            s.remember(&a, 5000).unwrap();
            s.remember_of(Knob::Swappiness, &a, 60).unwrap();
            assert_eq!(s.entries().count(), 1, "limits only");
            assert_eq!(s.entries_of(Knob::Swappiness).count(), 1);
            std::mem::forget(s);
        }
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{HEADER}\nlimit {0} 5000\nswappiness {0} 60\n", a.display())
        );
        let (s, r) = StateFile::open(&path, &parent).unwrap();
        assert_eq!(
            r.restored,
            [
                (Knob::Limit, a.clone(), 5000),
                (Knob::Swappiness, a.clone(), 60)
            ]
        );
        assert_eq!(
            std::fs::read_to_string(a.join("memory.swappiness")).unwrap(),
            "60"
        );
        assert_eq!(s.entries_of(Knob::Swappiness).count(), 0);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn restore_all_and_forget_empty_the_file() {
        let d = dir("all");
        let parent = d.join("antsched");
        let a = fake_group(&parent, "a", 10);
        let b = fake_group(&parent, "b", 20);
        let path = d.join("memd.state");
        let (mut s, _) = StateFile::open(&path, &parent).unwrap();
        s.remember(&a, 100).unwrap();
        s.remember(&b, 200).unwrap();
        s.forget(&b).unwrap();
        assert_eq!(limit(&b), 20);
        assert!(s.restore_all().is_empty());
        assert_eq!(limit(&a), 100);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{HEADER}\n")
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_file_that_does_not_parse_is_an_error_naming_it() {
        let d = dir("bad");
        let path = d.join("memd.state");
        for (text, want) in [
            ("something else\n", "line 1: unknown header"),
            ("antsched-memd-state 1\nlimit /x\n", "line 2: no value"),
            (
                "antsched-memd-state 1\nlimit /x y\n",
                "line 2: \"y\" is not a number",
            ),
            ("antsched-memd-state 1\nrm -rf /\n", "line 2: unknown entry"),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = StateFile::open(&path, &d).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("state file {}", path.display())),
                "{e}"
            );
            assert!(e.contains(want), "{text:?}: {e}");
        }
        let e = StateFile::open(&d.join("no-dir/memd.state"), &d)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot create its temporary file"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
