//! The file system: a pass-through of the backing directory whose reads and writes are
//! scheduled and timed by the runtime.
//!
//! ## Inodes and confinement
//!
//! Every inode the kernel knows is an `O_PATH` descriptor of the backing file, opened with
//! `O_NOFOLLOW` by name relative to its parent's descriptor, as libfuse's `passthrough_ll`
//! does. A FUSE name is one path component (the kernel resolves `.` and `..` itself, from its
//! own dentries, and never above the mount's root), so no operation of this server resolves a
//! path through the backing tree, follows a symbolic link, or climbs out of it: everything it
//! touches is reached from the backing root's descriptor one plain name at a time. Inodes
//! are counted as the kernel looks them up and forgets them; the descriptor is closed when
//! the count reaches zero. Files are opened by reopening the `O_PATH` descriptor through
//! `/proc/self/fd`, which names that very inode, not a path.
//!
//! Symbolic links are the one way a client could be sent elsewhere: the kernel follows a
//! link's target itself, from where the link is. [`readlink`](AntFs) therefore rewrites
//! targets so that they stay inside the mount, the way a `chroot` to the backing directory
//! would see them: an absolute target is taken relative to the backing root (a target that
//! spells out the backing directory's own path is understood as such), `..` never climbs above
//! the root, and the result is given as a relative path from the link's directory whose only
//! `..` components come first (so the kernel walks up real directories of the mount and
//! then down plain names). A link into the tree reads the same as before (up to `.`/`..`
//! normalisation); a link out of it lands on the same path inside the tree, or on nothing.
//!
//! That rewrite is right only from the directory it was made for, and FUSE's `readlink`
//! does not say which name of the link the kernel is following. So:
//! - a hard link to a symbolic link is refused through the mount (`EPERM`): a second name
//!   at another depth would climb out of the mount's root by the difference (the issue's
//!   `ln -P d1/.../d6/L L2; head L2` read the host's `/etc/passwd`);
//! - for links it cannot refuse (hard links made in BACKING, before or while mounted; a
//!   rename in BACKING the kernel has not revalidated yet, for up to the one-second entry
//!   TTL), the server keeps every directory the kernel has been told each inode is in
//!   (lookups, creations, renames through the mount; forgotten only with the inode), and a
//!   rewritten target that climbs more levels than the shallowest directory the kernel may
//!   be following it from is refused (`EPERM`) rather than served. A rename through the
//!   mount moves the backing entry and the kernel's dentry together, so the link reads as
//!   it should from its new place, except that a target climbing above the shallowest place
//!   the link (or a directory above it) has been seen at since the kernel last forgot it
//!   reads as `EPERM` until it is forgotten (`echo 2 > /proc/sys/vm/drop_caches`). The
//!   kernel caches no link targets (`FUSE_CACHE_SYMLINKS` is not negotiated), so each
//!   follow asks again.
//!
//! What is assumed: the mount is reached at its own root. A bind mount of a directory
//! inside it elsewhere would make that directory a root the kernel climbs out of.
//!
//! Permissions are checked by the kernel against the backing files' owners and modes
//! (`default_permissions`). An entry a user creates through the mount (file, directory,
//! link, pipe) is created *as* that user: the server runs as root, and the worker thread
//! takes the requester's file-system uid, gid and supplementary groups for the one system
//! call that makes it (`AsCaller`), so it is the user's from the moment it exists and
//! nothing is ever given away by name afterwards (a chown by name after creating lets a user
//! who can rename in the directory swap another of root's files under the name first).
//! Ownership changes (`chown`) act on the inode's own descriptor, never by name, and never
//! through a link. Without `--allow-other` the kernel lets only the mounting user in.
//!
//! ## Data
//!
//! A read or write of bytes `[offset, offset + len)` of a file becomes requests for the
//! disk sectors the [layout](crate::layout) gives those bytes (whole sectors; one request
//! per extent, later pieces marked as continuations), submitted to the runtime in the name
//! of the calling context, while the bytes themselves are moved with `pread`/`pwrite` on
//! the backing file (the runtime's store is a discard store: see
//! `antsched_io::Store::discard`). The FUSE request is answered when both are done: when
//! the emulated disk has completed the sectors (or later, if the backing file was slower).
//! Writes are write-through: the kernel sends each `write(2)` to the server (no write-back
//! cache is negotiated) and the caller returns once the emulated disk has completed it.
//! `fsync` waits for any write of the file still in the runtime (one racing it from another
//! thread), then `fsync`s the backing file.
//!
//! ## Files changed in BACKING while mounted
//!
//! The kernel keeps a file's pages in its page cache across opens (`FOPEN_KEEP_CACHE`), as a
//! local file system does; a file changed in BACKING by another program, not through the
//! mount, would then be served as its old cached pages mixed with new ones read since. The
//! server notes each file's version (modification and change times, size) after its own
//! changes and at every open and read, and:
//! - at an open, a file whose version changed behind the mount is opened without
//!   `FOPEN_KEEP_CACHE`, so the kernel drops its cached pages: it is read whole and new;
//! - for a file already open, the kernel (`FUSE_AUTO_INVAL_DATA`, negotiated at init)
//!   drops the cached pages of a file whose modification time or size changed when it
//!   next refreshes the attributes, which it does on a read at most the attribute TTL
//!   (1 s) after it last did;
//! - a change seen at an open or at a read that reaches the server is reported on the
//!   standard error.
//!
//! What is left, and stated: for up to the TTL after a change to a file that stays open,
//! a read may still combine cached old pages with new ones (the kernel answers cached
//! pages without asking); two writes within one tick of the kernel's clock that leave the
//! size alike look like one version; and `--direct-io` has no cache to go stale. A file
//! replaced by a rename in BACKING is a new inode, seen at the next lookup (entry TTL 1 s).
//!
//! ## `.antsched/stats.json`
//!
//! The root directory holds one more entry than the backing directory: `.antsched`, a
//! read-only directory that is not in the backing tree, with `stats.json`, a fresh snapshot
//! of the statistics at every open (served with direct I/O, so every reader sees its own
//! snapshot), in the JSON of `antsched sim --json`: `{"runs": [...]}` with the mount as its
//! one run ([`MountReport::to_json`](crate::report::MountReport::to_json)). A real
//! `.antsched` in the backing root is hidden by it.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirEntryExt, FileExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use antsched_core::{ClassId, ContextId, Op};
use antsched_io::{Ctx, IoBuf, Runtime};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData,
    ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
    WriteFlags,
};
use rustc_hash::FxHashMap;

use crate::contexts::Contexts;
use crate::layout::{FileKey, Layout, BLOCK};
use crate::report::{IoStats, Settings};

/// How long the kernel may cache attributes and names, and so how long after a change in
/// BACKING (not through the mount) the kernel may go on using the old ones (see the module
/// documentation).
const TTL: Duration = Duration::from_secs(1);
/// The virtual `.antsched` directory and its `stats.json`.
pub const STATS_DIR: &str = ".antsched";
pub const STATS_FILE: &str = "stats.json";
const VDIR: u64 = u64::MAX - 1;
const VSTATS: u64 = u64::MAX - 2;

/// What the file system, the exit watcher and the command share.
pub struct Shared {
    pub rt: Arc<Runtime>,
    pub contexts: Contexts,
    pub io: IoStats,
    pub layout: Mutex<Layout>,
    pub settings: Settings,
    /// `--record`: the log every disk request is written to.
    pub record: Option<crate::record::Recorder>,
}

impl Shared {
    /// The statistics now, as JSON text.
    pub fn report(&self) -> crate::report::MountReport {
        let rt = self.rt.stats();
        self.io.report(
            &rt,
            &self.contexts.all(),
            self.contexts.exits(),
            &self.settings,
        )
    }
}

struct Node {
    fd: Arc<OwnedFd>,
    key: FileKey,
    kind: FileType,
    nlookup: u64,
    /// Every directory the kernel has been told this inode is an entry of since it learned
    /// of it (lookups, creations, links, renames through the mount): the places its dentries
    /// can be. Never shrunk before the kernel forgets the inode, so that the shallowest of
    /// them is never deeper than a dentry the kernel still follows (see `readlink`).
    parents: Vec<u64>,
}

struct Inodes {
    nodes: FxHashMap<u64, Node>,
    by_key: FxHashMap<FileKey, u64>,
    next: u64,
}

enum Handle {
    File {
        file: File,
        key: FileKey,
    },
    Dir {
        entries: Vec<(u64, FileType, OsString)>,
    },
    Stats {
        data: Vec<u8>,
    },
}

struct Handles {
    map: FxHashMap<u64, Arc<Handle>>,
    /// Open file handles per backing file: its blocks are freed only when the last name
    /// and the last handle are gone.
    open: FxHashMap<FileKey, u32>,
}

/// The FUSE file system.
pub struct AntFs {
    shared: Arc<Shared>,
    root: Arc<OwnedFd>,
    root_key: FileKey,
    /// The backing directory's canonical path (for absolute symlink targets that name it).
    backing: PathBuf,
    inodes: Mutex<Inodes>,
    handles: Mutex<Handles>,
    next_fh: AtomicU64,
    /// Writes handed to the runtime and not yet completed, per file: `fsync` waits for them.
    writing: Mutex<FxHashMap<FileKey, u32>>,
    written: Condvar,
    direct_io: bool,
    readahead: Option<u32>,
    /// The kernel's limit on background requests (read-ahead, asynchronous direct I/O) in
    /// flight to this server; see `init`.
    max_background: u16,
    /// Offer `FUSE_ASYNC_DIO`; see `init`.
    async_dio: bool,
    /// Per backing file, its version (see [`Version`]) as the server last saw it: after
    /// its own changes, at opens and at reads. A file found at another version changed in
    /// BACKING behind the mount, and the kernel's cached pages of it are stale.
    versions: Mutex<FxHashMap<FileKey, Version>>,
    /// Create new entries as the user who asked (when running as root).
    chown: bool,
    /// The server's own supplementary groups, given back after acting as a user.
    server_groups: Vec<libc::gid_t>,
}

fn errno_of(e: &std::io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

fn last_errno() -> Errno {
    errno_of(&std::io::Error::last_os_error())
}

/// Whether `name` in `parent` belongs to the mount's own read-only `.antsched` directory
/// (the directory itself, or anything in it), which no change may touch.
fn reserved(parent: INodeNo, name: &OsStr) -> bool {
    parent.0 == VDIR || (parent.0 == INodeNo::ROOT.0 && name == STATS_DIR)
}

fn cstr(name: &OsStr) -> Result<CString, Errno> {
    CString::new(name.as_bytes()).map_err(|_| Errno::EINVAL)
}

fn proc_path(fd: RawFd) -> CString {
    CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL in a number")
}

/// `fstatat(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)`: the inode the descriptor is.
fn stat_fd(fd: RawFd) -> Result<libc::stat, Errno> {
    // SAFETY: an all-zero `stat` is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is writable; the empty path is a valid C string.
    let r = unsafe {
        libc::fstatat(
            fd,
            c"".as_ptr(),
            &mut st,
            libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r == 0 {
        Ok(st)
    } else {
        Err(last_errno())
    }
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`.
fn stat_at(dir: RawFd, name: &CString) -> Result<libc::stat, Errno> {
    // SAFETY: as in `stat_fd`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is writable and `name` a valid C string.
    let r = unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if r == 0 {
        Ok(st)
    } else {
        Err(last_errno())
    }
}

fn kind_of(mode: libc::mode_t) -> FileType {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => FileType::Directory,
        libc::S_IFLNK => FileType::Symlink,
        libc::S_IFIFO => FileType::NamedPipe,
        libc::S_IFSOCK => FileType::Socket,
        libc::S_IFCHR => FileType::CharDevice,
        libc::S_IFBLK => FileType::BlockDevice,
        _ => FileType::RegularFile,
    }
}

fn time(sec: i64, nsec: i64) -> SystemTime {
    if sec >= 0 {
        UNIX_EPOCH + Duration::new(sec as u64, nsec as u32)
    } else {
        UNIX_EPOCH - Duration::from_secs(sec.unsigned_abs()) + Duration::from_nanos(nsec as u64)
    }
}

fn attr_of(ino: u64, st: &libc::stat) -> FileAttr {
    FileAttr {
        ino: INodeNo(ino),
        size: st.st_size as u64,
        blocks: st.st_blocks as u64,
        atime: time(st.st_atime, st.st_atime_nsec),
        mtime: time(st.st_mtime, st.st_mtime_nsec),
        ctime: time(st.st_ctime, st.st_ctime_nsec),
        crtime: time(st.st_ctime, st.st_ctime_nsec),
        kind: kind_of(st.st_mode),
        perm: (st.st_mode & 0o7777) as u16,
        nlink: st.st_nlink as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        rdev: st.st_rdev as u32,
        blksize: BLOCK as u32,
        flags: 0,
    }
}

fn virtual_attr(ino: u64, size: u64) -> FileAttr {
    let now = SystemTime::now();
    let dir = ino == VDIR;
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: now,
        mtime: now,
        ctime: now,
        crtime: now,
        kind: if dir {
            FileType::Directory
        } else {
            FileType::RegularFile
        },
        perm: if dir { 0o555 } else { 0o444 },
        nlink: if dir { 2 } else { 1 },
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: BLOCK as u32,
        flags: 0,
    }
}

fn timespec(t: Option<TimeOrNow>) -> libc::timespec {
    match t {
        None => libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
        Some(TimeOrNow::Now) => libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_NOW,
        },
        Some(TimeOrNow::SpecificTime(t)) => {
            let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
            libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            }
        }
    }
}

/// Rewrites a symbolic link's `target` so that, followed from the link's directory `dir`
/// (its components below the mount's root), it stays inside the mount: see the module
/// documentation. `backing` is the backing directory's canonical path.
pub fn confine_link(dir: &[OsString], target: &Path, backing: &Path) -> PathBuf {
    let mut at: Vec<OsString> = Vec::new();
    let rest: &Path = if target.is_absolute() {
        // An absolute target that spells out the backing directory means a place in it;
        // any other absolute target is read as if the backing directory were `/`.
        target.strip_prefix(backing).unwrap_or(target)
    } else {
        at.extend(dir.iter().cloned());
        target
    };
    for c in rest.components() {
        match c {
            Component::Normal(n) => at.push(n.to_os_string()),
            Component::ParentDir => {
                at.pop(); // never above the root
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    let common = dir.iter().zip(&at).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..dir.len() {
        out.push("..");
    }
    for c in &at[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// What identifies a state of a file's contents: its modification and change times and
/// its size. Any write to it, by anyone, changes the modification time (to the kernel's
/// clock tick: two writes in one tick can look the same), and anything that sets the
/// modification time back changes the change time.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Version {
    mtime: (i64, i64),
    ctime: (i64, i64),
    size: i64,
}

impl Version {
    fn of(st: &libc::stat) -> Version {
        Version {
            mtime: (st.st_mtime, st.st_mtime_nsec),
            ctime: (st.st_ctime, st.st_ctime_nsec),
            size: st.st_size,
        }
    }
}

/// The calling thread's supplementary groups.
fn own_groups() -> std::io::Result<Vec<libc::gid_t>> {
    // SAFETY: a null list with size 0 asks for the count.
    let n = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut g = vec![0; n as usize];
    // SAFETY: `g` has room for `n` groups.
    let n = unsafe { libc::getgroups(n, g.as_mut_ptr()) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    g.truncate(n as usize);
    Ok(g)
}

/// The supplementary groups of process (or thread) `pid`, from `/proc/PID/status`; `None` if
/// it is gone. FUSE tells the server only the requester's uid, gid and pid.
fn groups_of(pid: u32) -> Option<Vec<libc::gid_t>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Groups:"))?;
    line.split_whitespace().map(|g| g.parse().ok()).collect()
}

/// `setgroups` for the calling thread only. glibc's `setgroups` changes every thread of the
/// process (it broadcasts set*id calls, as POSIX wants): the raw system call changes one.
fn set_thread_groups(groups: &[libc::gid_t]) -> bool {
    // SAFETY: `groups` is a valid list of its length.
    unsafe { libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) == 0 }
}

/// The calling thread acting, for the file system, as a user: its file-system uid and gid
/// (`setfsuid`/`setfsgid`, which are per thread) and supplementary groups (per thread, by
/// the raw system call) are the requester's until the guard is dropped.
///
/// Why: the server runs as root, and an entry it creates for a user must be that user's
/// from the moment it exists. Creating as root and then changing the owner by name (what
/// this server did) lets a user who can write in the directory (without the sticky bit)
/// put another file under that name in between and be given it: root's files changed
/// owner in a race. Created under the user's fsuid, the entry is theirs at birth (and
/// its group is the kernel's choice, the directory's when that is set-group-id), nothing
/// is ever chowned afterwards, and the backing file system checks the user's own
/// permissions once more. Changing the fsuid from 0 also drops the thread's file
/// capabilities (`CAP_DAC_OVERRIDE`, `CAP_CHOWN`, ...) until it is set back.
struct AsCaller<'a> {
    uid: libc::uid_t,
    gid: libc::gid_t,
    groups: &'a [libc::gid_t],
}

impl<'a> AsCaller<'a> {
    fn become_user(
        uid: u32,
        gid: u32,
        pid: u32,
        server_groups: &'a [libc::gid_t],
    ) -> Result<AsCaller<'a>, Errno> {
        // SAFETY: these have no preconditions.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        // A process that is gone has no groups to read: its primary group only (the kernel
        // has already checked its permission with all of them; this check can only be
        // stricter).
        let groups = groups_of(pid).unwrap_or_else(|| vec![gid]);
        let guard = AsCaller {
            uid: euid,
            gid: egid,
            groups: server_groups,
        };
        if !set_thread_groups(&groups) {
            return Err(Errno::EPERM);
        }
        // SAFETY: per-thread credential calls; the guard sets them back on drop.
        unsafe {
            libc::setfsgid(gid);
            libc::setfsuid(uid);
        }
        // setfsuid/setfsgid report no error: read back what took effect (an invalid id,
        // -1, changes nothing and returns the current one).
        // SAFETY: as above.
        let (now_uid, now_gid) = unsafe { (libc::setfsuid(u32::MAX), libc::setfsgid(u32::MAX)) };
        if now_uid as u32 != uid || now_gid as u32 != gid {
            return Err(Errno::EPERM); // the guard puts back what did change
        }
        Ok(guard)
    }
}

impl Drop for AsCaller<'_> {
    fn drop(&mut self) {
        // SAFETY: per-thread credential calls back to the server's own identity, which
        // root may always take.
        let ok = unsafe {
            libc::setfsuid(self.uid);
            libc::setfsgid(self.gid);
            libc::setfsuid(u32::MAX) as u32 == self.uid
                && libc::setfsgid(u32::MAX) as u32 == self.gid
                && set_thread_groups(self.groups)
        };
        if !ok {
            // A worker thread left acting as a user would serve the next request with the
            // wrong identity: stop rather than do that.
            eprintln!("antsched mount: cannot restore the server's credentials; aborting");
            std::process::abort();
        }
    }
}

impl AntFs {
    pub fn new(
        shared: Arc<Shared>,
        root: OwnedFd,
        backing: PathBuf,
        direct_io: bool,
        readahead: Option<u32>,
        max_background: u16,
        async_dio: bool,
    ) -> Result<AntFs, std::io::Error> {
        let st =
            stat_fd(root.as_raw_fd()).map_err(|e| std::io::Error::from_raw_os_error(e.code()))?;
        // SAFETY: geteuid has no preconditions.
        let root_user = unsafe { libc::geteuid() } == 0;
        Ok(AntFs {
            shared,
            root: Arc::new(root),
            root_key: (st.st_dev, st.st_ino),
            backing,
            inodes: Mutex::new(Inodes {
                nodes: FxHashMap::default(),
                by_key: FxHashMap::default(),
                next: 2,
            }),
            handles: Mutex::new(Handles {
                map: FxHashMap::default(),
                open: FxHashMap::default(),
            }),
            next_fh: AtomicU64::new(1),
            writing: Mutex::new(FxHashMap::default()),
            written: Condvar::new(),
            direct_io,
            readahead,
            max_background,
            async_dio,
            versions: Mutex::new(FxHashMap::default()),
            chown: root_user,
            server_groups: own_groups()?,
        })
    }

    fn inodes(&self) -> std::sync::MutexGuard<'_, Inodes> {
        self.inodes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_writing(&self) -> std::sync::MutexGuard<'_, FxHashMap<FileKey, u32>> {
        self.writing.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn handles(&self) -> std::sync::MutexGuard<'_, Handles> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The descriptor, backing key and kind of inode `ino`.
    fn node(&self, ino: INodeNo) -> Result<(Arc<OwnedFd>, FileKey, FileType), Errno> {
        if ino.0 == INodeNo::ROOT.0 {
            return Ok((self.root.clone(), self.root_key, FileType::Directory));
        }
        if ino.0 == VDIR || ino.0 == VSTATS {
            return Err(Errno::EROFS);
        }
        let g = self.inodes();
        let n = g.nodes.get(&ino.0).ok_or(Errno::ESTALE)?;
        Ok((n.fd.clone(), n.key, n.kind))
    }

    /// The backing directory and C name of an entry about to be made: `EROFS` in the
    /// mount's own `.antsched` directory.
    fn changeable_entry(
        &self,
        parent: INodeNo,
        name: &OsStr,
    ) -> Result<(Arc<OwnedFd>, CString), Errno> {
        if reserved(parent, name) {
            return Err(Errno::EROFS);
        }
        Ok((self.dir_fd(parent)?, cstr(name)?))
    }

    fn dir_fd(&self, ino: INodeNo) -> Result<Arc<OwnedFd>, Errno> {
        let (fd, _, kind) = self.node(ino)?;
        if kind != FileType::Directory {
            return Err(Errno::ENOTDIR);
        }
        Ok(fd)
    }

    fn handle(&self, fh: FileHandle) -> Result<Arc<Handle>, Errno> {
        self.handles().map.get(&fh.0).cloned().ok_or(Errno::EBADF)
    }

    fn add_handle(&self, h: Handle) -> u64 {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        let mut g = self.handles();
        if let Handle::File { key, .. } = &h {
            *g.open.entry(*key).or_default() += 1;
        }
        g.map.insert(fh, Arc::new(h));
        fh
    }

    fn is_open(&self, key: FileKey) -> bool {
        self.handles().open.get(&key).is_some_and(|n| *n > 0)
    }

    /// Looks `name` up in directory `parent` and counts one more kernel reference to it.
    fn lookup_entry(
        &self,
        parent_ino: INodeNo,
        parent: &OwnedFd,
        name: &OsStr,
    ) -> Result<FileAttr, Errno> {
        if name.is_empty() || name == "." || name == ".." || name.as_bytes().contains(&b'/') {
            return Err(Errno::EINVAL);
        }
        let c = cstr(name)?;
        // SAFETY: `parent` is an open directory descriptor and `c` a valid C string.
        let fd = unsafe {
            libc::openat(
                parent.as_raw_fd(),
                c.as_ptr(),
                libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(last_errno());
        }
        // SAFETY: a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let st = stat_fd(fd.as_raw_fd())?;
        Ok(self.register(parent_ino, fd, &st))
    }

    /// The entry for the open regular file `file` (whose status is `st`), counted as a
    /// lookup: for a file just created, whatever its name has become since.
    fn entry_of_fd(
        &self,
        parent: INodeNo,
        file: &File,
        st: &libc::stat,
    ) -> Result<FileAttr, Errno> {
        let path = proc_path(file.as_raw_fd());
        // SAFETY: valid C string; the /proc magic link names the very inode `file` is.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(last_errno());
        }
        // SAFETY: a fresh descriptor we own.
        Ok(self.register(parent, unsafe { OwnedFd::from_raw_fd(fd) }, st))
    }

    /// Counts one more kernel reference to the inode `fd` is (status `st`), which the kernel
    /// is about to know as an entry of directory `parent`, making it known if it is new.
    fn register(&self, parent: INodeNo, fd: OwnedFd, st: &libc::stat) -> FileAttr {
        let key = (st.st_dev, st.st_ino);
        let mut g = self.inodes();
        let ino = match g.by_key.get(&key).copied() {
            Some(ino) => {
                if let Some(n) = g.nodes.get_mut(&ino) {
                    n.nlookup += 1;
                    if !n.parents.contains(&parent.0) {
                        n.parents.push(parent.0);
                    }
                }
                ino
            }
            None => {
                let ino = g.next;
                g.next += 1;
                g.nodes.insert(
                    ino,
                    Node {
                        fd: Arc::new(fd),
                        key,
                        kind: kind_of(st.st_mode),
                        nlookup: 1,
                        parents: vec![parent.0],
                    },
                );
                g.by_key.insert(key, ino);
                ino
            }
        };
        attr_of(ino, st)
    }

    /// Records the version of a file the server has just changed itself (written,
    /// truncated, renamed...), if it tracks it: its own changes are not changes behind the
    /// mount.
    fn note_own_change(&self, st: &libc::stat) {
        let key = (st.st_dev, st.st_ino);
        let mut v = self.versions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = v.get_mut(&key) {
            *old = Version::of(st);
        }
    }

    /// As [`note_own_change`](Self::note_own_change), for a file known by its key (after an
    /// unlink or rename, which change its change time): through the kernel's descriptor of
    /// it, if the kernel knows it.
    fn note_own_change_of(&self, st: Option<&libc::stat>) {
        let Some(st) = st else { return };
        let fd = {
            let g = self.inodes();
            g.by_key
                .get(&(st.st_dev, st.st_ino))
                .and_then(|ino| g.nodes.get(ino))
                .map(|n| n.fd.clone())
        };
        if let Some(now) = fd.and_then(|fd| stat_fd(fd.as_raw_fd()).ok()) {
            self.note_own_change(&now);
        }
    }

    /// Compares a file's version now with the one last seen and records it: `true` if it
    /// changed behind the mount (and says so on the standard error: the kernel may have
    /// served, or be about to serve, cached pages of the old contents with new ones).
    fn changed_behind(&self, key: FileKey, st: &libc::stat, ino: INodeNo) -> bool {
        // With direct I/O the kernel caches no pages, so there is nothing to go stale. A
        // write of the server's own in flight changes the file before it is noted: no
        // judgement then (the write notes its version while still counted in flight).
        if self.direct_io || self.lock_writing().contains_key(&key) {
            return false;
        }
        let now = Version::of(st);
        let before = self
            .versions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, now);
        let changed = before.is_some_and(|b| b != now);
        if changed {
            eprintln!(
                "antsched mount: a file (inode {}, mount inode {}) changed in the backing directory, not through the mount; the kernel's cached pages of it are dropped (at this open, or within a second for files already open)",
                key.1, ino.0
            );
        }
        changed
    }

    /// How a regular file is opened: with direct I/O if so mounted; else through the page
    /// cache, kept across opens as a local file system keeps it, unless the file changed in
    /// BACKING since the kernel may have cached it (`stale`): then without
    /// `FOPEN_KEEP_CACHE`, which makes the kernel drop the file's cached pages at this open.
    fn open_flags(&self, stale: bool) -> FopenFlags {
        if self.direct_io {
            FopenFlags::FOPEN_DIRECT_IO
        } else if stale {
            FopenFlags::empty()
        } else {
            FopenFlags::FOPEN_KEEP_CACHE
        }
    }

    /// Records that the kernel may see the backing inode `st` (if it knows it) in directory
    /// `parent`.
    fn add_parent(&self, st: Option<&libc::stat>, parent: INodeNo) {
        let Some(st) = st else { return };
        let mut g = self.inodes();
        if let Some(ino) = g.by_key.get(&(st.st_dev, st.st_ino)).copied() {
            if let Some(n) = g.nodes.get_mut(&ino) {
                if !n.parents.contains(&parent.0) {
                    n.parents.push(parent.0);
                }
            }
        }
    }

    /// The fewest levels below the mount's root at which the kernel may hold a dentry of
    /// directory `ino`, as far as this server has told it (see [`Node::parents`]); 0 for
    /// anything it cannot account for, which is the safe answer.
    fn kernel_depth(g: &Inodes, ino: u64, seen: &mut Vec<u64>) -> usize {
        if ino == INodeNo::ROOT.0 {
            return 0;
        }
        let Some(n) = g.nodes.get(&ino) else {
            return 0;
        };
        if seen.contains(&ino) || seen.len() > 4096 {
            return usize::MAX; // a cycle among stale parents is no real place
        }
        seen.push(ino);
        let d = n
            .parents
            .iter()
            .map(|p| Self::kernel_depth(g, *p, seen).saturating_add(1))
            .min()
            .unwrap_or(0);
        seen.pop();
        d
    }

    /// The fewest levels below the mount's root of any directory the kernel may follow the
    /// symbolic link `ino` from.
    fn link_depth(&self, ino: u64) -> usize {
        let g = self.inodes();
        let Some(n) = g.nodes.get(&ino) else {
            return 0;
        };
        let mut seen = Vec::new();
        let d = n
            .parents
            .iter()
            .map(|p| Self::kernel_depth(&g, *p, &mut seen))
            .min()
            .unwrap_or(0);
        if d == usize::MAX {
            0
        } else {
            d
        }
    }

    /// Makes this thread act as the requesting user for the file system until the guard
    /// is dropped, when the server runs as root (see [`AsCaller`]); `None` otherwise.
    fn as_caller(&self, req: &Request) -> Result<Option<AsCaller<'_>>, Errno> {
        if !self.chown {
            return Ok(None);
        }
        AsCaller::become_user(req.uid(), req.gid(), req.pid(), &self.server_groups).map(Some)
    }

    /// Frees a file's blocks once its last name and handle are gone.
    fn maybe_release(&self, key: FileKey, nlink_now: u64) {
        if nlink_now == 0 && !self.is_open(key) {
            self.shared
                .layout
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .release(key);
        }
    }

    fn ctx(&self, req: &Request) -> (ContextId, Ctx) {
        let c = self.shared.contexts.resolve(req.pid(), req.uid());
        (
            c,
            Ctx {
                context: c,
                class: ClassId(c.0),
            },
        )
    }

    /// Submits the disk requests for bytes `[offset, offset + len)` of `key`, runs `io`
    /// (the real transfer) meanwhile, waits for both, and records the statistics.
    fn timed<T>(
        &self,
        req: &Request,
        op: Op,
        span: Span,
        io: impl FnOnce() -> Result<T, Errno>,
    ) -> Result<T, Errno> {
        let Span {
            key,
            offset,
            len,
            file_len,
        } = span;
        worker_class(&self.shared.rt);
        let (context, ctx) = self.ctx(req);
        let runs = {
            let mut l = self.shared.layout.lock().unwrap_or_else(|e| e.into_inner());
            match l.ensure(key, file_len) {
                Ok(()) => {}
                Err(_) if op == Op::Write => return Err(Errno::ENOSPC),
                // A file that grew behind the mount's back and no longer fits: serve it,
                // timing what has a place.
                Err(_) => {}
            }
            l.runs(key, offset, len)
        };
        let rt = &self.shared.rt;
        if op == Op::Write {
            *self.lock_writing().entry(key).or_default() += 1;
        }
        let issued = rt.clock().now();
        let tickets: Vec<_> = runs
            .iter()
            .enumerate()
            .map(|(i, (sector, sectors))| {
                rt.submit(
                    ctx,
                    op,
                    *sector,
                    IoBuf::zeroed((*sectors * 512) as usize),
                    true,
                    i > 0,
                )
            })
            .collect();
        let result = io();
        let mut failed = false;
        // When the runtime completed the last of them: the completion the scheduler saw, and
        // the one a recording gives, as a block trace gives the device's. This thread wakes
        // later (after the real transfer too), and a think time measured from then would be
        // shorter than the one the scheduler learnt from.
        let mut completed = issued;
        for t in tickets {
            match t.wait() {
                Ok(d) => completed = completed.max(d.completed_at),
                Err(_) => failed = true,
            }
        }
        let done = rt.clock().now();
        if op == Op::Write {
            let mut w = self.lock_writing();
            if let Some(n) = w.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    w.remove(&key);
                }
            }
            self.written.notify_all();
        }
        let value = result?;
        if failed {
            return Err(Errno::EIO);
        }
        if !runs.is_empty() {
            self.shared.io.record(context, len, issued, done);
        }
        if let Some(r) = &self.shared.record {
            r.note(op, context.0, issued, completed, &runs);
        }
        Ok(value)
    }
}

/// Bytes `[offset, offset + len)` of the backing file `key`, whose length is (or becomes)
/// `file_len`.
#[derive(Clone, Copy)]
struct Span {
    key: FileKey,
    offset: u64,
    len: u64,
    file_len: u64,
}

fn pread_full(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

impl Filesystem for AntFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // The kernel compares a file's modification time and size whenever it refreshes its
        // attributes (at most a TTL after the last time) and drops the cached pages of a
        // file whose modification time changed: a file changed in BACKING while open is not
        // served from stale pages for longer than that. (Writes through the mount change
        // the time as well, so a written file's pages are dropped too at the next refresh.)
        // A kernel without it (before 3.x) keeps only the check at open.
        let _ = config.add_capabilities(InitFlags::FUSE_AUTO_INVAL_DATA);
        if let Some(bytes) = self.readahead {
            // The kernel offers its largest read-ahead; ask for what the user chose, or the
            // kernel's largest if that is less.
            if let Err(max) = config.set_max_readahead(bytes.max(1)) {
                let _ = config.set_max_readahead(max);
            }
        }
        // The kernel holds read-ahead beyond this many background requests in its own queue,
        // where the scheduler cannot see them: with more processes reading ahead than that,
        // a process's next read-ahead would wait behind the others' however the scheduler
        // chose. As many as the server has request threads (the congestion threshold
        // follows, at 3/4).
        let _ = config.set_max_background(self.max_background.max(1));
        // Without FUSE_ASYNC_DIO the kernel waits for each FUSE request of an O_DIRECT read
        // or write before sending the next, even for a caller that asked not to wait (libaio,
        // io_uring, a loop device's worker): such a caller has one request before the
        // scheduler at a time. With it, those requests are sent as background requests
        // (within max_background) and the caller goes on. Opt-in (`--async-dio`), since it
        // also sends the pieces of one large synchronous O_DIRECT request at once.
        if self.async_dio {
            if let Err(unsupported) = config.add_capabilities(InitFlags::FUSE_ASYNC_DIO) {
                eprintln!(
                    "antsched mount: the kernel does not offer asynchronous direct I/O ({unsupported:?}); serving without it"
                );
            }
        }
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if parent.0 == INodeNo::ROOT.0 && name == STATS_DIR {
            return reply.entry(&TTL, &virtual_attr(VDIR, 0), Generation(0));
        }
        if parent.0 == VDIR {
            return if name == STATS_FILE {
                let len = self.shared.report().to_json().len() as u64;
                reply.entry(&Duration::ZERO, &virtual_attr(VSTATS, len), Generation(0))
            } else {
                reply.error(Errno::ENOENT)
            };
        }
        let r = self
            .dir_fd(parent)
            .and_then(|p| self.lookup_entry(parent, &p, name));
        match r {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn forget(&self, _req: &Request, ino: INodeNo, nlookup: u64) {
        let mut g = self.inodes();
        let gone = match g.nodes.get_mut(&ino.0) {
            Some(n) => {
                n.nlookup = n.nlookup.saturating_sub(nlookup);
                (n.nlookup == 0).then_some(n.key)
            }
            None => None,
        };
        if let Some(key) = gone {
            g.nodes.remove(&ino.0);
            g.by_key.remove(&key);
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match ino.0 {
            VDIR => return reply.attr(&TTL, &virtual_attr(VDIR, 0)),
            VSTATS => {
                let len = self.shared.report().to_json().len() as u64;
                return reply.attr(&Duration::ZERO, &virtual_attr(VSTATS, len));
            }
            _ => {}
        }
        match self
            .node(ino)
            .and_then(|(fd, _, _)| stat_fd(fd.as_raw_fd()))
        {
            Ok(st) => reply.attr(&TTL, &attr_of(ino.0, &st)),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let r = (|| -> Result<libc::stat, Errno> {
            let (fd, key, kind) = self.node(ino)?;
            let raw = fd.as_raw_fd();
            let path = proc_path(raw);
            if let Some(mode) = mode {
                if kind == FileType::Symlink {
                    return Err(Errno::EOPNOTSUPP);
                }
                // SAFETY: valid C string; chmod follows the /proc magic link to this inode.
                if unsafe { libc::chmod(path.as_ptr(), mode & 0o7777) } != 0 {
                    return Err(last_errno());
                }
            }
            if uid.is_some() || gid.is_some() {
                let (u, g) = (uid.unwrap_or(u32::MAX), gid.unwrap_or(u32::MAX));
                // SAFETY: valid descriptor; AT_EMPTY_PATH changes the inode it names.
                let r = unsafe {
                    libc::fchownat(
                        raw,
                        c"".as_ptr(),
                        u,
                        g,
                        libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW,
                    )
                };
                if r != 0 {
                    return Err(last_errno());
                }
            }
            if let Some(size) = size {
                // Room on the emulated disk first, before the backing file changes: a size
                // the disk cannot hold is refused with the file as it was (the backing tree
                // must still fit at the next mount, which lays every file out by its size).
                // Never a link's size (truncate through /proc would follow it in BACKING).
                if kind == FileType::Symlink {
                    return Err(Errno::EINVAL);
                }
                if kind == FileType::RegularFile {
                    self.shared
                        .layout
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .ensure(key, size)
                        .map_err(|_| Errno::ENOSPC)?;
                }
                let open = fh.and_then(|f| self.handle(f).ok());
                let r = match open.as_deref() {
                    Some(Handle::File { file, .. }) => file.set_len(size).map_err(|e| errno_of(&e)),
                    _ => {
                        // SAFETY: valid C string naming this inode.
                        if unsafe { libc::truncate(path.as_ptr(), size as libc::off_t) } == 0 {
                            Ok(())
                        } else {
                            Err(last_errno())
                        }
                    }
                };
                // The file's blocks are its size's, whether the change happened or not.
                let now = if r.is_ok() {
                    size
                } else {
                    stat_fd(raw).map_or(size, |st| st.st_size as u64)
                };
                self.shared
                    .layout
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .truncate(key, now);
                r?;
            }
            if atime.is_some() || mtime.is_some() {
                let ts = [timespec(atime), timespec(mtime)];
                // SAFETY: valid descriptor/path and two timespecs.
                let r = if kind == FileType::Symlink {
                    unsafe { libc::utimensat(raw, c"".as_ptr(), ts.as_ptr(), libc::AT_EMPTY_PATH) }
                } else {
                    unsafe { libc::utimensat(libc::AT_FDCWD, path.as_ptr(), ts.as_ptr(), 0) }
                };
                if r != 0 {
                    return Err(last_errno());
                }
            }
            let st = stat_fd(raw)?;
            self.note_own_change(&st);
            Ok(st)
        })();
        match r {
            Ok(st) => reply.attr(&TTL, &attr_of(ino.0, &st)),
            Err(e) => reply.error(e),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        let r = (|| -> Result<Vec<u8>, Errno> {
            let (fd, _, kind) = self.node(ino)?;
            if kind != FileType::Symlink {
                return Err(Errno::EINVAL);
            }
            let raw = fd.as_raw_fd();
            let mut buf = vec![0u8; libc::PATH_MAX as usize];
            // SAFETY: `buf` is writable for its length; the empty path reads the link `raw` is.
            let n =
                unsafe { libc::readlinkat(raw, c"".as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                return Err(last_errno());
            }
            buf.truncate(n as usize);
            let target = PathBuf::from(OsStr::from_bytes(&buf));
            // Where the link is: the kernel's name for it, below the backing root.
            let here =
                std::fs::read_link(format!("/proc/self/fd/{raw}")).map_err(|e| errno_of(&e))?;
            let rel = here
                .strip_prefix(&self.backing)
                .map_err(|_| Errno::EACCES)?;
            let dir: Vec<OsString> = rel
                .parent()
                .map(|p| p.iter().map(|c| c.to_os_string()).collect())
                .unwrap_or_default();
            let confined = confine_link(&dir, &target, &self.backing);
            // The kernel follows the result from the directory of the dentry it walked
            // through, which is the backing file's directory above only if the two agree.
            // They may not: a second name at another depth (a hard link made in BACKING), or
            // a rename in BACKING the kernel has not seen yet. The result climbs `up` levels
            // and then only descends, so it stays inside the mount from any directory at
            // least `up` levels deep: refuse it if the kernel may be following it from a
            // shallower one (it would climb out of the mount's root into the host).
            let up = confined
                .components()
                .take_while(|c| *c == Component::ParentDir)
                .count();
            if up > self.link_depth(ino.0) {
                return Err(Errno::EPERM);
            }
            Ok(confined.into_os_string().into_vec())
        })();
        match r {
            Ok(t) => reply.data(&t),
            Err(e) => reply.error(e),
        }
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let r = (|| {
            if parent.0 == VDIR {
                return Err(Errno::EROFS);
            }
            let fmt = mode & libc::S_IFMT;
            if fmt != libc::S_IFREG && fmt != libc::S_IFIFO && fmt != libc::S_IFSOCK {
                return Err(Errno::EPERM); // no device nodes on a mount of data
            }
            let p = self.dir_fd(parent)?;
            let c = cstr(name)?;
            let user = self.as_caller(req)?;
            // SAFETY: valid descriptor and C string.
            let r = unsafe { libc::mknodat(p.as_raw_fd(), c.as_ptr(), mode, u64::from(rdev)) };
            let r = if r == 0 { Ok(()) } else { Err(last_errno()) };
            drop(user);
            r?;
            self.lookup_entry(parent, &p, name)
        })();
        match r {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        let r = (|| {
            let (p, c) = self.changeable_entry(parent, name)?;
            let user = self.as_caller(req)?;
            // SAFETY: valid descriptor and C string.
            let r = unsafe { libc::mkdirat(p.as_raw_fd(), c.as_ptr(), mode) };
            let r = if r == 0 { Ok(()) } else { Err(last_errno()) };
            drop(user);
            r?;
            self.lookup_entry(parent, &p, name)
        })();
        match r {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let r = (|| {
            let (p, c) = self.changeable_entry(parent, name)?;
            let st = stat_at(p.as_raw_fd(), &c)?;
            // SAFETY: valid descriptor and C string.
            if unsafe { libc::unlinkat(p.as_raw_fd(), c.as_ptr(), 0) } != 0 {
                return Err(last_errno());
            }
            self.note_own_change_of(Some(&st));
            if st.st_mode & libc::S_IFMT == libc::S_IFREG {
                self.maybe_release((st.st_dev, st.st_ino), st.st_nlink.saturating_sub(1));
            }
            Ok(())
        })();
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let r = (|| {
            let (p, c) = self.changeable_entry(parent, name)?;
            // SAFETY: valid descriptor and C string.
            if unsafe { libc::unlinkat(p.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) } != 0 {
                return Err(last_errno());
            }
            Ok(())
        })();
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn symlink(
        &self,
        req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let r = (|| {
            if reserved(parent, link_name) {
                return Err(Errno::EROFS);
            }
            let p = self.dir_fd(parent)?;
            let c = cstr(link_name)?;
            let t = cstr(target.as_os_str())?;
            // SAFETY: valid descriptor and C strings. The target is stored as given; it is
            // confined when read (readlink).
            let user = self.as_caller(req)?;
            let r = unsafe { libc::symlinkat(t.as_ptr(), p.as_raw_fd(), c.as_ptr()) };
            let r = if r == 0 { Ok(()) } else { Err(last_errno()) };
            drop(user);
            r?;
            self.lookup_entry(parent, &p, link_name)
        })();
        match r {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let r = (|| {
            if reserved(parent, name) || reserved(newparent, newname) {
                return Err(Errno::EROFS);
            }
            let p = self.dir_fd(parent)?;
            let np = self.dir_fd(newparent)?;
            let (c, nc) = (cstr(name)?, cstr(newname)?);
            let replaced = stat_at(np.as_raw_fd(), &nc).ok();
            // The kernel is about to see the entry in its new directory (and, for an
            // exchange, the other in the old one): record it before it can follow it there.
            let moved = stat_at(p.as_raw_fd(), &c).ok();
            self.add_parent(moved.as_ref(), newparent);
            if flags.contains(RenameFlags::RENAME_EXCHANGE) {
                self.add_parent(replaced.as_ref(), parent);
            }
            // SAFETY: valid descriptors and C strings.
            let r = unsafe {
                libc::renameat2(
                    p.as_raw_fd(),
                    c.as_ptr(),
                    np.as_raw_fd(),
                    nc.as_ptr(),
                    flags.bits(),
                )
            };
            if r != 0 {
                return Err(last_errno());
            }
            self.note_own_change_of(moved.as_ref());
            self.note_own_change_of(replaced.as_ref());
            if let Some(st) = replaced {
                if !flags.contains(RenameFlags::RENAME_EXCHANGE)
                    && st.st_mode & libc::S_IFMT == libc::S_IFREG
                {
                    self.maybe_release((st.st_dev, st.st_ino), st.st_nlink.saturating_sub(1));
                }
            }
            Ok(())
        })();
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn link(
        &self,
        _req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let r = (|| {
            if reserved(newparent, newname) {
                return Err(Errno::EROFS);
            }
            let (fd, _, kind) = self.node(ino)?;
            // A symbolic link's target is confined for the directory it is in (readlink): a
            // second name in another directory would be followed from a place it was not
            // confined for, and a target that climbs would climb out of the mount there.
            if kind == FileType::Symlink {
                return Err(Errno::EPERM);
            }
            let np = self.dir_fd(newparent)?;
            let nc = cstr(newname)?;
            // SAFETY: valid descriptors and C strings; AT_EMPTY_PATH links the inode `fd` is.
            let r = unsafe {
                libc::linkat(
                    fd.as_raw_fd(),
                    c"".as_ptr(),
                    np.as_raw_fd(),
                    nc.as_ptr(),
                    libc::AT_EMPTY_PATH,
                )
            };
            if r != 0 {
                return Err(last_errno());
            }
            if let Ok(st) = stat_fd(fd.as_raw_fd()) {
                self.note_own_change(&st);
            }
            self.lookup_entry(newparent, &np, newname)
        })();
        match r {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        if ino.0 == VSTATS {
            if flags.0 & libc::O_ACCMODE != libc::O_RDONLY {
                return reply.error(Errno::EROFS);
            }
            let data = self.shared.report().to_json();
            let fh = self.add_handle(Handle::Stats { data });
            return reply.opened(FileHandle(fh), FopenFlags::FOPEN_DIRECT_IO);
        }
        let r = (|| {
            let (fd, key, kind) = self.node(ino)?;
            if kind == FileType::Directory {
                return Err(Errno::EISDIR);
            }
            if kind == FileType::Symlink {
                return Err(Errno::ELOOP);
            }
            // The bytes are moved with pread/pwrite at the offsets the kernel gives: no
            // O_APPEND (pwrite would ignore the offset), no O_DIRECT (alignment is the
            // kernel's business on the mount, not the backing file's), and the /proc magic
            // link must be followed (no O_NOFOLLOW).
            let keep = flags.0
                & !(libc::O_CREAT
                    | libc::O_EXCL
                    | libc::O_NOCTTY
                    | libc::O_APPEND
                    | libc::O_DIRECT
                    | libc::O_NOFOLLOW);
            let path = proc_path(fd.as_raw_fd());
            // SAFETY: valid C string; the result is a new descriptor or -1.
            let f = unsafe { libc::open(path.as_ptr(), keep | libc::O_CLOEXEC) };
            if f < 0 {
                return Err(last_errno());
            }
            // SAFETY: a fresh descriptor we own.
            let file = File::from(unsafe { OwnedFd::from_raw_fd(f) });
            let st = stat_fd(file.as_raw_fd())?;
            let stale = self.changed_behind(key, &st, ino);
            Ok((self.add_handle(Handle::File { file, key }), stale))
        })();
        match r {
            Ok((fh, stale)) => reply.opened(FileHandle(fh), self.open_flags(stale)),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let r = (|| -> Result<Vec<u8>, Errno> {
            let h = self.handle(fh)?;
            match &*h {
                Handle::Stats { data } => {
                    let start = (offset as usize).min(data.len());
                    let end = (start + size as usize).min(data.len());
                    Ok(data[start..end].to_vec())
                }
                Handle::Dir { .. } => Err(Errno::EISDIR),
                Handle::File { file, key } => {
                    let st = stat_fd(file.as_raw_fd())?;
                    // Said, not silent: pages of this read or the kernel's cache may mix
                    // old contents and new until the kernel drops them.
                    self.changed_behind(*key, &st, ino);
                    let file_len = st.st_size as u64;
                    if offset >= file_len {
                        return Ok(Vec::new());
                    }
                    let len = u64::from(size).min(file_len - offset);
                    let mut buf = vec![0u8; len as usize];
                    let span = Span {
                        key: *key,
                        offset,
                        len,
                        file_len,
                    };
                    let got = self.timed(req, Op::Read, span, || {
                        pread_full(file, &mut buf, offset).map_err(|e| errno_of(&e))
                    })?;
                    buf.truncate(got);
                    Ok(buf)
                }
            }
        })();
        match r {
            Ok(d) => reply.data(&d),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let r = (|| -> Result<u32, Errno> {
            let h = self.handle(fh)?;
            let Handle::File { file, key } = &*h else {
                return Err(Errno::EBADF);
            };
            let end = offset + data.len() as u64;
            let file_len = file.metadata().map_err(|e| errno_of(&e))?.len().max(end);
            let span = Span {
                key: *key,
                offset,
                len: data.len() as u64,
                file_len,
            };
            self.timed(req, Op::Write, span, || {
                file.write_all_at(data, offset).map_err(|e| errno_of(&e))?;
                // Noted while the write still counts as in flight, so that no reader takes
                // the server's own write for a change behind the mount.
                if let Ok(st) = stat_fd(file.as_raw_fd()) {
                    self.note_own_change(&st);
                }
                Ok(())
            })?;
            Ok(data.len() as u32)
        })();
        match r {
            Ok(n) => reply.written(n),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // Every write was completed by the emulated disk before it returned.
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let h = {
            let mut g = self.handles();
            let h = g.map.remove(&fh.0);
            if let Some(Handle::File { key, .. }) = h.as_deref() {
                if let Some(n) = g.open.get_mut(key) {
                    *n -= 1;
                    if *n == 0 {
                        g.open.remove(key);
                    }
                }
            }
            h
        };
        if let Some(Handle::File { file, key }) = h.as_deref() {
            // The last handle of a file with no name left: its blocks are free now.
            if let Ok(m) = file.metadata() {
                use std::os::unix::fs::MetadataExt;
                self.maybe_release(*key, m.nlink());
            }
        }
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        // Flush through the runtime: every write of this file handed to it has completed
        // on the emulated disk (writes are write-through, so only writes racing this fsync
        // from other threads can still be in flight); then the backing file's own
        // durability. The emulated drive's write-back cache is not flushed: the runtime has
        // no cache-flush request, so the drive's destaging is timed as it happens, not
        // forced here.
        let r = self.handle(fh).and_then(|h| match &*h {
            Handle::File { file, key } => {
                let mut w = self.lock_writing();
                while w.contains_key(key) {
                    w = self.written.wait(w).unwrap_or_else(|e| e.into_inner());
                }
                drop(w);
                if datasync {
                    file.sync_data()
                } else {
                    file.sync_all()
                }
                .map_err(|e| errno_of(&e))
            }
            _ => Ok(()),
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if ino.0 == VDIR {
            let entries = vec![
                (VDIR, FileType::Directory, OsString::from(".")),
                (INodeNo::ROOT.0, FileType::Directory, OsString::from("..")),
                (VSTATS, FileType::RegularFile, OsString::from(STATS_FILE)),
            ];
            let fh = self.add_handle(Handle::Dir { entries });
            return reply.opened(FileHandle(fh), FopenFlags::empty());
        }
        let r = (|| {
            let fd = self.dir_fd(ino)?;
            let mut entries = vec![
                (ino.0, FileType::Directory, OsString::from(".")),
                (ino.0, FileType::Directory, OsString::from("..")),
            ];
            if ino.0 == INodeNo::ROOT.0 {
                entries.push((VDIR, FileType::Directory, OsString::from(STATS_DIR)));
            }
            // Listing through /proc/self/fd names this directory's inode, not a path.
            let rd = std::fs::read_dir(format!("/proc/self/fd/{}", fd.as_raw_fd()))
                .map_err(|e| errno_of(&e))?;
            for e in rd {
                let e = e.map_err(|e| errno_of(&e))?;
                let name = e.file_name();
                if ino.0 == INodeNo::ROOT.0 && name == STATS_DIR {
                    continue; // hidden by the virtual one
                }
                let kind = e
                    .file_type()
                    .ok()
                    .and_then(FileType::from_std)
                    .unwrap_or(FileType::RegularFile);
                entries.push((e.ino(), kind, name));
            }
            Ok(self.add_handle(Handle::Dir { entries }))
        })();
        match r {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let h = match self.handle(fh) {
            Ok(h) => h,
            Err(e) => return reply.error(e),
        };
        let Handle::Dir { entries } = &*h else {
            return reply.error(Errno::ENOTDIR);
        };
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(*ino), (i + 1) as u64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.handles().map.remove(&fh.0);
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let r = self.dir_fd(ino).and_then(|fd| {
            File::open(format!("/proc/self/fd/{}", fd.as_raw_fd()))
                .and_then(|d| d.sync_all())
                .map_err(|e| errno_of(&e))
        });
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        // SAFETY: an all-zero statvfs is a valid value to be overwritten.
        let mut sv: libc::statvfs = unsafe { std::mem::zeroed() };
        let path = proc_path(self.root.as_raw_fd());
        // SAFETY: valid C string and writable struct.
        if unsafe { libc::statvfs(path.as_ptr(), &mut sv) } != 0 {
            return reply.error(last_errno());
        }
        // Space is the emulated disk's (capped by what the backing file system has left):
        // what the mount can really hold.
        let (cap, free) = {
            let l = self.shared.layout.lock().unwrap_or_else(|e| e.into_inner());
            (l.capacity_bytes() / BLOCK, l.free_bytes() / BLOCK)
        };
        let backing_free = sv.f_bavail * sv.f_frsize / BLOCK;
        let free = free.min(backing_free);
        reply.statfs(
            cap,
            free,
            free,
            sv.f_files,
            sv.f_ffree,
            BLOCK as u32,
            sv.f_namemax as u32,
            BLOCK as u32,
        );
    }

    fn access(&self, _req: &Request, ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        // With default_permissions the kernel checks access itself; this is only reached
        // where it asks anyway, and existence is what is left to check.
        match ino.0 {
            VDIR | VSTATS => reply.ok(),
            _ => match self.node(ino) {
                Ok(_) => reply.ok(),
                Err(e) => reply.error(e),
            },
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let r = (|| -> Result<(), Errno> {
            let h = self.handle(fh)?;
            let Handle::File { file, key } = &*h else {
                return Err(Errno::EBADF);
            };
            // Only what keeps the layout's rule (a file's blocks are its size's): growing,
            // reserving within the size, and punching holes. Collapsing or inserting ranges
            // would move data the emulated disk has placed.
            let keep = libc::FALLOC_FL_KEEP_SIZE;
            if mode & !(keep | libc::FALLOC_FL_PUNCH_HOLE) != 0
                || (mode & libc::FALLOC_FL_PUNCH_HOLE != 0 && mode & keep == 0)
            {
                return Err(Errno::EOPNOTSUPP);
            }
            let end = offset.checked_add(length).ok_or(Errno::EFBIG)?;
            let grows = mode & keep == 0;
            let before = stat_fd(file.as_raw_fd())?.st_size as u64;
            if grows {
                // As for a truncate: the emulated disk must hold the new size before the
                // backing file is touched.
                self.shared
                    .layout
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .ensure(*key, end)
                    .map_err(|_| Errno::ENOSPC)?;
            }
            let off = libc::off_t::try_from(offset).map_err(|_| Errno::EFBIG)?;
            let len = libc::off_t::try_from(length).map_err(|_| Errno::EFBIG)?;
            // SAFETY: a valid open descriptor.
            let r = unsafe { libc::fallocate(file.as_raw_fd(), mode, off, len) };
            let err = (r != 0).then(last_errno);
            if err.is_some() && grows {
                // A backing file system that runs out of room part way may leave the file
                // longer (ext4 does): a failed call leaves the file as it was.
                let _ = file.set_len(before);
            }
            if grows {
                let now = stat_fd(file.as_raw_fd()).map_or(end, |st| st.st_size as u64);
                self.shared
                    .layout
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .truncate(*key, now);
            }
            if let Ok(st) = stat_fd(file.as_raw_fd()) {
                self.note_own_change(&st);
            }
            err.map_or(Ok(()), Err)
        })();
        match r {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let r = (|| {
            let (p, c) = self.changeable_entry(parent, name)?;
            let keep = flags & !(libc::O_APPEND | libc::O_DIRECT | libc::O_NOCTTY);
            // As the caller: the file is theirs from the moment it exists (and an existing
            // file of that name is opened with their permissions, not root's).
            let user = self.as_caller(req)?;
            // SAFETY: valid descriptor and C string; O_NOFOLLOW: never create through a link.
            let f = unsafe {
                libc::openat(
                    p.as_raw_fd(),
                    c.as_ptr(),
                    keep | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                    mode,
                )
            };
            let f = if f < 0 { Err(last_errno()) } else { Ok(f) };
            drop(user);
            // SAFETY: a fresh descriptor we own.
            let file = File::from(unsafe { OwnedFd::from_raw_fd(f?) });
            let st = stat_fd(file.as_raw_fd())?;
            // The entry the kernel is told of is the file just opened, not whatever has the
            // name by now (someone may have renamed another file over it).
            let attr = self.entry_of_fd(parent, &file, &st)?;
            let key = (st.st_dev, st.st_ino);
            // Without O_EXCL, the name may have been an existing file: judged as at open.
            let stale = self.changed_behind(key, &st, attr.ino);
            let fh = self.add_handle(Handle::File { file, key });
            Ok((attr, fh, stale))
        })();
        match r {
            Ok((a, fh, stale)) => reply.created(
                &TTL,
                &a,
                Generation(0),
                FileHandle(fh),
                self.open_flags(stale),
            ),
            Err(e) => reply.error(e),
        }
    }
}

/// Opens the backing root as an `O_PATH` directory descriptor.
pub fn open_root(path: &Path) -> std::io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: valid C string; returns a new descriptor or -1.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Keeps the calling FUSE worker in the real-time class (`SCHED_FIFO`, below the event loop's
/// priority) while the device's requests take a millisecond or more, where allowed (root); in
/// the ordinary class otherwise.
///
/// A completion reaches the program through the worker that waits for it, and the program's
/// next request through a worker that reads it from the kernel: two wake-ups on the path that
/// anticipation times. On a busy machine an ordinary thread's wake-up may wait for the running
/// thread's time slice (the mount's recordings on two busy cores show such delays at 1.5 to
/// 1.6 ms), which outlasts the wait for the next request (its 95th-percentile think time and
/// 1 ms), so the disk went to another process at every such delay. On a disk the workers sleep
/// through their requests, and the class costs the programs nothing. On a device that answers
/// in a tenth of a millisecond (`--disk nvme-ssd`) the workers are much of what keeps the CPU
/// busy, a wake-up delay is no longer small beside a request, and there the class took the CPU
/// from the programs: four fio readers beside a busy loop made 7,595 to 8,229 requests a second
/// in three runs (10,272 in a fourth, which left the busy loop a sixth of its work), where
/// ordinary workers made 8,805 to 9,347.
fn worker_class(rt: &Runtime) {
    thread_local! {
        /// The class this worker last asked for: `Some(true)` real-time.
        static REALTIME: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
    }
    let want = rt.recent_latency().is_none_or(|l| l >= antsched_core::MS);
    REALTIME.with(|r| {
        if r.get() != Some(want) {
            r.set(Some(want));
            let _ = if want {
                antsched_io::clock::set_realtime(1)
            } else {
                antsched_io::clock::set_ordinary()
            };
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(parts: &[&str]) -> Vec<OsString> {
        parts.iter().map(OsString::from).collect()
    }

    #[test]
    fn links_inside_the_tree_keep_their_meaning() {
        let b = Path::new("/srv/backing");
        assert_eq!(
            confine_link(&dir(&["a"]), Path::new("b/c"), b),
            Path::new("b/c")
        );
        assert_eq!(
            confine_link(&dir(&["a", "x"]), Path::new("../y"), b),
            Path::new("../y")
        );
        assert_eq!(confine_link(&dir(&[]), Path::new("./f"), b), Path::new("f"));
        assert_eq!(
            confine_link(&dir(&["a"]), Path::new(".."), b),
            Path::new("..")
        );
        assert_eq!(
            confine_link(&dir(&["a"]), Path::new("."), b),
            Path::new(".")
        );
    }

    #[test]
    fn links_out_of_the_tree_are_confined_to_it() {
        let b = Path::new("/srv/backing");
        // Absolute targets are read as if the backing directory were the root.
        assert_eq!(
            confine_link(&dir(&[]), Path::new("/etc/passwd"), b),
            Path::new("etc/passwd")
        );
        assert_eq!(
            confine_link(&dir(&["a", "b"]), Path::new("/etc/passwd"), b),
            Path::new("../../etc/passwd")
        );
        // `..` stops at the root.
        assert_eq!(
            confine_link(&dir(&["a"]), Path::new("../../../etc/shadow"), b),
            Path::new("../etc/shadow")
        );
        assert_eq!(confine_link(&dir(&[]), Path::new(".."), b), Path::new("."));
        // A path through a link component is normalised first, so no `..` is left after a
        // name (the kernel would apply it after following the link).
        assert_eq!(
            confine_link(&dir(&[]), Path::new("l/../../x"), b),
            Path::new("x")
        );
        // An absolute target naming the backing directory itself means a place inside it.
        assert_eq!(
            confine_link(&dir(&["a"]), Path::new("/srv/backing/a/f"), b),
            Path::new("f")
        );
    }
}
