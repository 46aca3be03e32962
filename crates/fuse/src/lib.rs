//! # antsched-fuse: unmodified programs on an emulated disk
//!
//! `antsched mount BACKING MOUNTPOINT` shows the directory `BACKING` again at `MOUNTPOINT`,
//! through FUSE, with one difference: the data of every file lies on an emulated 7,200 rpm
//! disk (a model from `antsched-disk`, the SOSP 2001 paper's IBM Deskstar 34GXP by default),
//! and every read and write waits for that disk, in the order a scheduler of `antsched-core`
//! chooses, on behalf of the process that made it. So `cat`, `grep`, `fio` or `sqlite3` run
//! unchanged on a disk with real seeks and rotations, and deceptive idleness (and its cure,
//! anticipation) can be seen with one's own tools.
//!
//! ## How a read travels
//!
//! ```text
//!  grep ──read(2)──▶ kernel FUSE ──READ(pid, offset, size)──▶ fuser thread (one of 16)
//!                                                               │ context = process of pid
//!                                                               │ layout: offset → sectors
//!        ┌──────────────────────────────────────────────────────┤
//!        ▼                                                      ▼
//!  pread(backing file)                           antsched-io Runtime (one event loop)
//!  (the real bytes)                              Scheduler.enqueue / poll_dispatch
//!        │                                       disk model: finishes at t
//!        └──────────── both done ──────────────▶ reply to the kernel ──▶ grep
//! ```
//!
//! - [`layout`]: where each file lies on the disk: laid out at mount time in directory-tree
//!   order (a directory's files side by side, as FFS keeps them), new and growing files get
//!   the next free extents.
//! - [`contexts`]: who asked: the FUSE request's pid, made into a process (`--context tgid`,
//!   the default), a thread (`pid`) or a user (`uid`); exits are seen through pidfds and
//!   reported to the scheduler (`context_exited`) at once.
//! - [`fs`]: the pass-through file system (every inode an `O_PATH` descriptor reached one
//!   name at a time from the backing root: nothing outside `BACKING` is reachable, symbolic
//!   links are confined), and the read-only `MOUNTPOINT/.antsched/stats.json`.
//! - [`report`]: the per-context statistics, in the JSON of docs/architecture.md.
//!
//! ## Page cache or not
//!
//! By default the kernel's page cache and read-ahead apply, as on any local file system (the
//! paper's "read" case); `--readahead KIB` sets the kernel's read-ahead window for the mount
//! (FUSE's `max_readahead`). With `--direct-io` every file is opened `FOPEN_DIRECT_IO`: each
//! `read(2)` reaches the disk as it is, with no cache and no read-ahead (the paper's `mmap`
//! case, where each process has one request outstanding). A program that opens with
//! `O_DIRECT` (fio's `direct=1`) bypasses the cache either way.
//!
//! ## Behind a loop device: one context
//!
//! A loop device over a file on the mount (`losetup --direct-io=on`) reaches the server from
//! the loop driver's worker, a kernel thread: the mount sees one context (a `kworker` thread,
//! which may change within a run) whatever the programs above the loop device are, and, since
//! the kernel waits for each FUSE request of that worker's direct I/O before sending the next,
//! one request at a time even under libaio at depth 8 (`bench/kernel-peers.sh` measures it).
//! [`MountConfig::async_dio`] (`--async-dio`, FUSE's `FUSE_ASYNC_DIO`) lets the worker's
//! requests through together, still as one context; programs in separate blkio cgroups get a
//! loop worker each. Per-process scheduling and anticipation need the programs on the mount.
//!
//! ## Using it as a library
//!
//! [`check`] validates the paths and the machine without changing anything; [`mount`] lays
//! the tree out, starts the runtime and mounts; [`Mount::serve`] answers requests until the
//! file system is unmounted (by [`Unmounter::unmount`], by `umount`, or by the command's
//! SIGINT/SIGTERM handler) and returns the final statistics.
//!
//! ## Requirements
//!
//! Linux with FUSE (`/dev/fuse`) and io_uring; root, or `fusermount3` for a user mount (then
//! `--allow-other` needs `user_allow_other` in `/etc/fuse.conf`). Run as root, the server
//! creates each new entry as the user who asked for it (`setfsuid`, `setfsgid` and the
//! groups of that thread, which need `CAP_SETUID` and `CAP_SETGID`); run as another user,
//! every new entry is that user's. The server holds a descriptor per inode the kernel
//! knows, so the open-files limit bounds how many files the kernel may hold at once.

pub mod contexts;
pub mod fs;
pub mod layout;
pub mod record;
pub mod report;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use antsched_io::{Backend, Options, Runtime, Store};
use fuser::{Config, MountOption, SessionACL};

pub use contexts::{ContextInfo, ContextKind, Contexts};
pub use layout::{Layout, Placement};
pub use report::{MountContext, MountReport};

/// Whether the kernel's page cache applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// The page cache and its read-ahead apply; `Some(kib)` sets the read-ahead window.
    PageCache { readahead_kib: Option<u32> },
    /// Every request reaches the disk as the program made it (`FOPEN_DIRECT_IO`).
    DirectIo,
}

/// What to mount and how.
#[derive(Clone, Debug)]
pub struct MountConfig {
    pub backing: PathBuf,
    pub mountpoint: PathBuf,
    /// A disk model: a preset name or a DiskSim `.parv` file.
    pub disk: String,
    /// A scheduler SPEC, `NAME[:key=value,...]`.
    pub scheduler: String,
    pub cache: CacheMode,
    pub context: ContextKind,
    pub allow_other: bool,
    /// FUSE request threads: how many requests can be served (and waiting on the disk) at
    /// once. The kernel's limit on background requests (read-ahead) in flight is as many,
    /// and at least 16 (fuser's default).
    pub threads: usize,
    /// Offer the kernel FUSE's asynchronous direct I/O (`FUSE_ASYNC_DIO`): an asynchronous
    /// `O_DIRECT` request (libaio, io_uring, a loop device's worker) is sent on without the
    /// caller waiting for it, so one caller can have several requests before the scheduler,
    /// and a synchronous one larger than a FUSE request (128 KiB) goes as its pieces at once.
    /// Off by default: the kernel then serves each caller's direct I/O one FUSE request
    /// at a time.
    pub async_dio: bool,
    /// Seed of schedulers that draw lots.
    pub seed: u64,
    /// Write every disk request to this file, as a fio version 3 I/O log (see [`record`]).
    pub record: Option<PathBuf>,
    pub record_format: record::RecordFormat,
}

impl MountConfig {
    pub fn new(backing: impl Into<PathBuf>, mountpoint: impl Into<PathBuf>) -> MountConfig {
        MountConfig {
            backing: backing.into(),
            mountpoint: mountpoint.into(),
            disk: "deskstar-34gxp".into(),
            scheduler: "as-aged-sptf".into(),
            cache: CacheMode::PageCache {
                readahead_kib: None,
            },
            context: ContextKind::Tgid,
            allow_other: false,
            threads: 16,
            async_dio: false,
            seed: 1,
            record: None,
            record_format: record::RecordFormat::Fio,
        }
    }
}

/// Why a mount could not be made (nothing was mounted or left behind).
#[derive(Debug, thiserror::Error)]
pub enum MountError {
    #[error("the backing directory {path} does not exist")]
    BackingMissing { path: PathBuf },
    #[error("the backing path {path} is not a directory")]
    BackingNotDir { path: PathBuf },
    #[error("cannot read the backing directory {path}: {source}")]
    BackingUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the mount point {path} does not exist (create an empty directory there)")]
    MountpointMissing { path: PathBuf },
    #[error("the mount point {path} is not a directory")]
    MountpointNotDir { path: PathBuf },
    #[error("the mount point {path} is not empty ({entries} entries): mount on an empty directory, so nothing there is hidden")]
    MountpointNotEmpty { path: PathBuf, entries: usize },
    #[error("something is already mounted at {path} ({what}); unmount it first (umount {path})")]
    AlreadyMounted { path: PathBuf, what: String },
    #[error("the mount point {mountpoint} is inside the backing directory {backing}: the mount would contain itself")]
    MountpointInsideBacking {
        mountpoint: PathBuf,
        backing: PathBuf,
    },
    #[error("no FUSE here: {0} (load the module with `modprobe fuse`, or in a container give it the device /dev/fuse)")]
    NoFuse(String),
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Disk(#[from] antsched_sim::SimError),
    #[error(transparent)]
    Scheduler(#[from] antsched_core::SpecError),
    #[error(transparent)]
    Layout(#[from] layout::PlanError),
    #[error(transparent)]
    Runtime(#[from] antsched_io::SetupError),
    #[error("mounting at {path} failed: {source}")]
    Mount {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the recording {path}: {source}")]
    Record {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("serving the mount failed: {0}")]
    Serve(std::io::Error),
}

/// The checked, canonical paths.
#[derive(Clone, Debug)]
pub struct Checked {
    pub backing: PathBuf,
    pub mountpoint: PathBuf,
}

/// Checks everything that can be checked before mounting, changing nothing: the backing
/// directory exists and can be listed; the mount point is an empty directory with nothing
/// mounted on it and is not inside the backing directory; `/dev/fuse` is the FUSE device and
/// can be opened.
pub fn check(cfg: &MountConfig) -> Result<Checked, MountError> {
    let b = &cfg.backing;
    let meta = match std::fs::metadata(b) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(MountError::BackingMissing { path: b.clone() })
        }
        Err(source) => {
            return Err(MountError::BackingUnreadable {
                path: b.clone(),
                source,
            })
        }
    };
    if !meta.is_dir() {
        return Err(MountError::BackingNotDir { path: b.clone() });
    }
    let backing = std::fs::canonicalize(b).map_err(|source| MountError::BackingUnreadable {
        path: b.clone(),
        source,
    })?;
    std::fs::read_dir(&backing)
        .and_then(|mut d| d.next().transpose())
        .map_err(|source| MountError::BackingUnreadable {
            path: b.clone(),
            source,
        })?;

    let m = &cfg.mountpoint;
    let mountpoint = match std::fs::canonicalize(m) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(MountError::MountpointMissing { path: m.clone() })
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => {
            return Err(MountError::AlreadyMounted {
                path: m.clone(),
                what: "a FUSE file system whose server is gone".into(),
            })
        }
        Err(source) => {
            return Err(MountError::Io {
                path: m.clone(),
                source,
            })
        }
    };
    match std::fs::metadata(&mountpoint) {
        Ok(md) if md.is_dir() => {}
        // A FUSE mount whose server was killed (kill -9): the path resolves, but looking at
        // it fails with ENOTCONN. Say what is there and how to recover, not "not a directory".
        Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => {
            return Err(MountError::AlreadyMounted {
                path: m.clone(),
                what: "a FUSE file system whose server is gone".into(),
            })
        }
        _ => return Err(MountError::MountpointNotDir { path: m.clone() }),
    }
    if let Some(what) = mounted_at(&mountpoint) {
        return Err(MountError::AlreadyMounted {
            path: m.clone(),
            what,
        });
    }
    let entries = std::fs::read_dir(&mountpoint)
        .map_err(|source| MountError::Io {
            path: m.clone(),
            source,
        })?
        .count();
    if entries > 0 {
        return Err(MountError::MountpointNotEmpty {
            path: m.clone(),
            entries,
        });
    }
    if mountpoint.starts_with(&backing) {
        return Err(MountError::MountpointInsideBacking {
            mountpoint: m.clone(),
            backing: b.clone(),
        });
    }
    fuse_device_ok().map_err(MountError::NoFuse)?;
    Ok(Checked {
        backing,
        mountpoint,
    })
}

/// Whether `/dev/fuse` is the FUSE device (character device 10:229) and opens for reading
/// and writing; `Err` says why not.
pub fn fuse_device_ok() -> Result<(), String> {
    let path = Path::new("/dev/fuse");
    let meta = std::fs::metadata(path).map_err(|e| format!("/dev/fuse: {e}"))?;
    let rdev = meta.rdev();
    if !meta.file_type().is_char_device() || (libc::major(rdev), libc::minor(rdev)) != (10, 229) {
        return Err(format!(
            "/dev/fuse is not the FUSE device (it is device {}:{})",
            libc::major(rdev),
            libc::minor(rdev)
        ));
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map(|_| ())
        .map_err(|e| format!("cannot open /dev/fuse: {e}"))
}

/// What is mounted at `path`, if anything (from `/proc/self/mountinfo`).
fn mounted_at(path: &Path) -> Option<String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        let point = unescape(f.get(4)?);
        if Path::new(&point) != path {
            return None;
        }
        let dash = f.iter().position(|x| *x == "-")?;
        Some(format!(
            "{} from {}",
            f.get(dash + 1).unwrap_or(&"?"),
            f.get(dash + 2).unwrap_or(&"?")
        ))
    })
}

/// The FUSE connection number (the minor of the mount's device) of the mount at `path`.
fn connection_of(path: &Path) -> Option<u32> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().rev().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        if Path::new(&unescape(f.get(4)?)) != path {
            return None;
        }
        f.get(2)?.split_once(':')?.1.parse().ok()
    })
}

/// Undoes mountinfo's octal escapes (`\040` for a space, ...).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A mounted file system, not yet serving ([`Mount::serve`] serves it).
pub struct Mount {
    session: fuser::Session<fs::AntFs>,
    shared: Arc<fs::Shared>,
    placed: Vec<Placement>,
    unmounter: Unmounter,
}

/// Where the FUSE control file system (fusectl) lists the connections.
const CONNECTIONS: &str = "/sys/fs/fuse/connections";

/// Writes connection `n`'s abort file under `connections`; a missing file is told apart:
/// the control file system is not mounted there, or the connection has already ended.
fn abort_connection(connections: &Path, n: u32) -> std::io::Result<()> {
    let file = connections.join(n.to_string()).join("abort");
    std::fs::write(&file, b"1").map_err(|e| {
        if e.kind() != std::io::ErrorKind::NotFound {
            return e;
        }
        let listed = std::fs::read_dir(connections).is_ok_and(|mut d| d.next().is_some());
        std::io::Error::new(
            e.kind(),
            if listed {
                format!("{}: the connection has already ended", file.display())
            } else {
                format!(
                    "{}: the FUSE control file system is not mounted there (mount -t fusectl none {})",
                    file.display(),
                    connections.display()
                )
            },
        )
    })
}

/// Unmounts a mount from any thread (cloneable).
#[derive(Clone, Debug)]
pub struct Unmounter {
    path: PathBuf,
    /// The FUSE connection's number (the mount's device minor), for `abort`.
    connection: Option<u32>,
    done: Arc<Mutex<bool>>,
}

impl Unmounter {
    /// Unmounts; fails with `EBUSY` while a process has a file or its working directory in
    /// the mount (then [`detach`](Self::detach) or wait).
    pub fn unmount(&self) -> std::io::Result<()> {
        self.umount(0)
    }

    /// Detaches the mount now (`MNT_DETACH`): new accesses fail, and the file system ends
    /// when the last process using it lets go.
    pub fn detach(&self) -> std::io::Result<()> {
        self.umount(libc::MNT_DETACH)
    }

    /// Ends the FUSE connection at once (`/sys/fs/fuse/connections/N/abort`): requests in
    /// progress fail with `ENOTCONN`. The last resort.
    pub fn abort(&self) -> std::io::Result<()> {
        let n = self
            .connection
            .ok_or_else(|| std::io::Error::other("the FUSE connection number is unknown"))?;
        abort_connection(Path::new(CONNECTIONS), n)
    }

    fn umount(&self, flags: libc::c_int) -> std::io::Result<()> {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        if *done {
            return Ok(());
        }
        let c = CString::new(self.path.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: a valid C string.
        if unsafe { libc::umount2(c.as_ptr(), flags) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EPERM) {
                // Not root: the setuid helper does it.
                let ok = std::process::Command::new("fusermount3")
                    .arg("-u")
                    .args(if flags & libc::MNT_DETACH != 0 {
                        &["-z"][..]
                    } else {
                        &[][..]
                    })
                    .arg(&self.path)
                    .status()
                    .is_ok_and(|s| s.success());
                if !ok {
                    return Err(e);
                }
            } else {
                return Err(e);
            }
        }
        *done = true;
        Ok(())
    }

    /// The mount point.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Mounts `cfg.backing` at `cfg.mountpoint`: checks ([`check`]), lays the tree out, starts
/// the runtime with the scheduler on the emulated disk, and mounts. Nothing is left mounted
/// or running if it fails.
pub fn mount(cfg: &MountConfig) -> Result<Mount, MountError> {
    let checked = check(cfg)?;
    let model = antsched_sim::disk_model(&cfg.disk)?;
    let root = fs::open_root(&checked.backing).map_err(|source| MountError::BackingUnreadable {
        path: cfg.backing.clone(),
        source,
    })?;
    // Laid out from the descriptor that is served: the same tree, whatever its path does.
    let (layout, placed) = Layout::plan_at(&root, &checked.backing, model.capacity_sectors())?;
    // Everything that can fail on bad input fails before anything is started.
    antsched_core::registry::resolve(&antsched_core::Spec::parse(&cfg.scheduler)?)?;
    let backend = Backend::emulated(model, Store::discard());
    let env = backend.build_env(cfg.seed);
    let sched = antsched_core::build(&cfg.scheduler, &env)?;
    let record = cfg
        .record
        .as_deref()
        .map(|p| {
            record::Recorder::create(p, cfg.record_format).map_err(|source| MountError::Record {
                path: p.to_path_buf(),
                source,
            })
        })
        .transpose()?;
    // The event loop in the real-time class where allowed (root): its deadlines (the disk's
    // completions, anticipation's timeouts) are what the programs on the mount feel, and a
    // busy machine would otherwise make it wake late. It sleeps between deadlines, so it
    // takes no time from the programs it serves.
    let rt = Arc::new(Runtime::start(
        backend,
        sched,
        Options {
            realtime_priority: Some(2),
            ..Options::default()
        },
    )?);
    let on_exit = {
        let rt = Arc::downgrade(&rt);
        move |ctx| {
            if let Some(rt) = rt.upgrade() {
                rt.context_exited(ctx);
            }
        }
    };
    let contexts = Contexts::start(cfg.context, on_exit).map_err(|e| {
        MountError::Runtime(antsched_io::SetupError::Other(format!(
            "cannot watch for process exits: {e}"
        )))
    })?;
    let (cache, readahead_kib) = match cfg.cache {
        CacheMode::DirectIo => ("direct-io", None),
        CacheMode::PageCache { readahead_kib } => ("page-cache", readahead_kib),
    };
    let shared = Arc::new(fs::Shared {
        rt,
        contexts,
        io: report::IoStats::default(),
        layout: Mutex::new(layout),
        settings: report::Settings {
            context_kind: format!("{:?}", cfg.context).to_lowercase(),
            cache: cache.into(),
            readahead_kib,
            async_dio: cfg.async_dio,
            backing: checked.backing.display().to_string(),
            mountpoint: checked.mountpoint.display().to_string(),
        },
        record,
    });
    let fs = fs::AntFs::new(
        shared.clone(),
        root,
        checked.backing.clone(),
        cfg.cache == CacheMode::DirectIo,
        readahead_kib.map(|k| k.saturating_mul(1024)),
        u16::try_from(cfg.threads.max(16)).unwrap_or(u16::MAX),
        cfg.async_dio,
    )
    .map_err(|source| MountError::BackingUnreadable {
        path: cfg.backing.clone(),
        source,
    })?;
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName(format!("antsched:{}", checked.backing.display())),
        MountOption::Subtype("antsched".into()),
        MountOption::DefaultPermissions,
        MountOption::RW,
        MountOption::NoDev,
        MountOption::NoSuid,
    ];
    config.acl = if cfg.allow_other {
        SessionACL::All
    } else {
        SessionACL::Owner
    };
    config.n_threads = Some(cfg.threads.max(1));
    config.clone_fd = true;
    let session = fuser::Session::new(fs, &checked.mountpoint, &config).map_err(|source| {
        shared.contexts.stop();
        MountError::Mount {
            path: cfg.mountpoint.clone(),
            source,
        }
    })?;
    // From mountinfo, not stat: a stat of the mount point would be a request to this very
    // server, which is not serving yet.
    let connection = connection_of(&checked.mountpoint);
    Ok(Mount {
        session,
        shared,
        placed,
        unmounter: Unmounter {
            path: checked.mountpoint,
            connection,
            done: Arc::new(Mutex::new(false)),
        },
    })
}

impl Mount {
    /// The files laid out at mount time, in layout order.
    pub fn placements(&self) -> &[Placement] {
        &self.placed
    }

    /// A handle that unmounts this mount from any thread.
    pub fn unmounter(&self) -> Unmounter {
        self.unmounter.clone()
    }

    /// A function that gives the statistics now (what `stats.json` shows), usable from any
    /// thread while the mount is served.
    pub fn reporter(&self) -> impl Fn() -> MountReport + Send + Sync + 'static {
        let s = self.shared.clone();
        move || s.report()
    }

    /// Serves requests until the file system is unmounted, then stops the runtime and
    /// returns the final statistics.
    pub fn serve(self) -> Result<MountReport, MountError> {
        let Mount {
            session,
            shared,
            unmounter,
            ..
        } = self;
        let served = match session.run() {
            // The kernel ends the connection at unmount. A read that was taking a request
            // from its queue at that instant gets ECONNABORTED rather than ENODEV (the
            // connection's processing queue is already shut, `fuse_dev_do_read`), and fuser
            // passes it on as an error; either way the connection is over, the same end.
            Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => Ok(()),
            other => other,
        };
        // The kernel has let go: whatever was accepted has been answered.
        *unmounter.done.lock().unwrap_or_else(|e| e.into_inner()) = true;
        shared.contexts.stop();
        let report = shared.report();
        let recorded = shared.record.as_ref().map(|r| {
            r.finish(shared.rt.clock().now())
                .map_err(|source| MountError::Record {
                    path: r.path().to_path_buf(),
                    source,
                })
        });
        shared.rt.close();
        if let Some(Err(e)) = recorded {
            return Err(e);
        }
        served.map_err(MountError::Serve)?;
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second signal's abort names why it could not write the abort file: the control file
    /// system is not mounted (no connections listed), or the connection has already ended.
    #[test]
    fn abort_says_why_the_control_file_is_missing() {
        let dir = std::env::temp_dir().join(format!("antsched-fusectl-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let e = abort_connection(&dir, 7).unwrap_err().to_string();
        assert!(
            e.contains("not mounted there") && e.contains("fusectl"),
            "{e}"
        );
        std::fs::create_dir_all(dir.join("3")).unwrap();
        let e = abort_connection(&dir, 7).unwrap_err().to_string();
        assert!(e.contains("already ended"), "{e}");
        std::fs::write(dir.join("3/abort"), b"").unwrap();
        abort_connection(&dir, 3).unwrap();
        assert_eq!(std::fs::read(dir.join("3/abort")).unwrap(), b"1");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
