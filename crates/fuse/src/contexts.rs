//! Who issued a request: from the FUSE request's pid and uid to a scheduling context, and
//! telling the scheduler when a context has gone away.
//!
//! Every FUSE request carries the thread id (`pid`) and the user id of the task that caused
//! it. `--context` chooses what a context is (the paper's "process", Linux's `io_context`):
//!
//! - `tgid` (the default): the process, i.e. the thread group, read from the `Tgid:` line of
//!   `/proc/PID/status` once per thread and cached. All threads of one process share its
//!   anticipation statistics, as Linux's `io_context` is shared by `CLONE_IO` threads.
//! - `pid`: each thread on its own.
//! - `uid`: each user (a coarse "resource container").
//!
//! ## Exits
//!
//! Anticipation must stop waiting for a process that is gone (the anticipation core hears it
//! through `context_exited`; Linux AS does the same from `exit_io_context`). Each process (or
//! thread, for `pid`) that issues a request is watched with a **pidfd**
//! (`pidfd_open(2)`, Linux 5.3; `PIDFD_THREAD` for single threads, Linux 6.9): the
//! descriptor becomes readable the moment the process exits, and one thread waits on all of
//! them with `epoll`. So an exit is reported within microseconds, not at the next poll of
//! `/proc`, and a process whose pid is reused later is a new context (the pidfd refers to
//! the process, not to the number). The pidfd is opened while the process's request is
//! being served, so the process cannot have exited and had its pid reused in between. A
//! context of kind `uid` exits when every process that issued requests under it has. Where
//! `PIDFD_THREAD` is missing (kernels before 6.9), a `pid` context is watched through its
//! process and exits with it.
//!
//! Requests with pid 0 (issued by the kernel on no process's behalf) share one context,
//! named `kernel`, which never exits.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use antsched_core::ContextId;
use rustc_hash::{FxHashMap, FxHashSet};

/// What one scheduling context is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ContextKind {
    /// One thread.
    Pid,
    /// One process (thread group).
    #[default]
    Tgid,
    /// One user.
    Uid,
}

impl std::str::FromStr for ContextKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "pid" => Ok(ContextKind::Pid),
            "tgid" => Ok(ContextKind::Tgid),
            "uid" => Ok(ContextKind::Uid),
            other => Err(format!(
                "unknown context kind {other:?}: give pid (each thread), tgid (each process) or uid (each user)"
            )),
        }
    }
}

/// What is known of a context, for the statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextInfo {
    /// The process (or thread) name from `/proc/PID/comm`, or the user name.
    pub name: String,
    /// The pid (thread or process id) for `pid` and `tgid` contexts.
    pub pid: Option<u32>,
    pub uid: u32,
    pub exited: bool,
}

const KERNEL_KEY: u64 = u64::MAX;
/// `PIDFD_THREAD` (= `O_EXCL`): a pidfd for one thread rather than its whole process.
const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;

struct Inner {
    by_key: FxHashMap<u64, ContextId>,
    info: BTreeMap<u32, ContextInfo>,
    /// pidfd -> (context, watched pid).
    watches: FxHashMap<RawFd, (ContextId, u32, OwnedFd)>,
    /// Watched pids of each live context.
    members: FxHashMap<ContextId, FxHashSet<u32>>,
    /// Thread id -> thread group id.
    tgid: FxHashMap<u32, u32>,
    next: u32,
    exits: u64,
}

/// The contexts seen so far, and the thread that watches for their exits.
pub struct Contexts {
    kind: ContextKind,
    inner: Arc<Mutex<Inner>>,
    epoll: Arc<OwnedFd>,
    stop: Arc<AtomicBool>,
    watcher: Mutex<Option<JoinHandle<()>>>,
}

fn lock(m: &Mutex<Inner>) -> std::sync::MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Contexts {
    /// Starts watching; `on_exit` is called (from the watcher thread) for each context that
    /// went away.
    pub fn start(
        kind: ContextKind,
        on_exit: impl Fn(ContextId) + Send + 'static,
    ) -> std::io::Result<Contexts> {
        // SAFETY: epoll_create1 returns a new descriptor or -1.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let epoll = Arc::new(unsafe { OwnedFd::from_raw_fd(fd) });
        let inner = Arc::new(Mutex::new(Inner {
            by_key: FxHashMap::default(),
            info: BTreeMap::new(),
            watches: FxHashMap::default(),
            members: FxHashMap::default(),
            tgid: FxHashMap::default(),
            next: 1,
            exits: 0,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (inner, epoll, stop) = (inner.clone(), epoll.clone(), stop.clone());
            std::thread::Builder::new()
                .name("antsched-exits".into())
                .spawn(move || watch(&inner, &epoll, &stop, &on_exit))?
        };
        Ok(Contexts {
            kind,
            inner,
            epoll,
            stop,
            watcher: Mutex::new(Some(watcher)),
        })
    }

    pub fn kind(&self) -> ContextKind {
        self.kind
    }

    /// The context of a request from thread `pid` of user `uid`.
    pub fn resolve(&self, pid: u32, uid: u32) -> ContextId {
        if pid == 0 {
            return self.get_or_create(KERNEL_KEY, 0, uid, || "kernel".into(), None);
        }
        match self.kind {
            ContextKind::Pid => {
                self.get_or_create(u64::from(pid), pid, uid, || comm(pid), Some(pid))
            }
            ContextKind::Tgid => {
                let tgid = self.tgid_of(pid);
                self.get_or_create(u64::from(tgid), tgid, uid, || comm(tgid), Some(tgid))
            }
            ContextKind::Uid => {
                let tgid = self.tgid_of(pid);
                self.get_or_create(u64::from(uid), tgid, uid, || user_name(uid), None)
            }
        }
    }

    fn tgid_of(&self, pid: u32) -> u32 {
        if let Some(t) = lock(&self.inner).tgid.get(&pid) {
            return *t;
        }
        let t = read_tgid(pid).unwrap_or(pid);
        lock(&self.inner).tgid.insert(pid, t);
        t
    }

    /// The context for `key`, making it (and watching `member`) if it is new; for `uid`
    /// contexts also watches `member` if it is a process not yet seen.
    fn get_or_create(
        &self,
        key: u64,
        member: u32,
        uid: u32,
        name: impl FnOnce() -> String,
        pid: Option<u32>,
    ) -> ContextId {
        let mut g = lock(&self.inner);
        let ctx = match g.by_key.get(&key) {
            Some(c) => *c,
            None => {
                let c = ContextId(g.next);
                g.next += 1;
                g.by_key.insert(key, c);
                g.info.insert(
                    c.0,
                    ContextInfo {
                        name: name(),
                        pid,
                        uid,
                        exited: false,
                    },
                );
                g.members.insert(c, FxHashSet::default());
                c
            }
        };
        if key == KERNEL_KEY {
            return ctx;
        }
        let known = g.members.get(&ctx).is_some_and(|m| m.contains(&member));
        if !known {
            match self.open_pidfd(member) {
                Ok(fd) => {
                    let raw = fd.as_raw_fd();
                    let mut ev = libc::epoll_event {
                        events: libc::EPOLLIN as u32,
                        u64: raw as u64,
                    };
                    // SAFETY: both descriptors are open; `ev` is a valid event.
                    let r = unsafe {
                        libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, raw, &mut ev)
                    };
                    if r == 0 {
                        g.watches.insert(raw, (ctx, member, fd));
                        g.members.entry(ctx).or_default().insert(member);
                    }
                }
                Err(_) => {
                    // The process is already gone (it was killed while its request was
                    // queued): nothing will come from it; leave the context to be reused.
                }
            }
        }
        ctx
    }

    fn open_pidfd(&self, pid: u32) -> std::io::Result<OwnedFd> {
        let flags = if self.kind == ContextKind::Pid {
            PIDFD_THREAD
        } else {
            0
        };
        let open = |flags: libc::c_uint| {
            // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, flags) };
            if fd < 0 {
                Err(std::io::Error::last_os_error())
            } else {
                // SAFETY: a fresh descriptor nobody else owns.
                Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
            }
        };
        match open(flags) {
            Err(e) if flags != 0 && e.raw_os_error() == Some(libc::EINVAL) => {
                // No PIDFD_THREAD before Linux 6.9: watch the thread's process instead.
                let tgid = read_tgid(pid).unwrap_or(pid);
                // SAFETY: as above.
                let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, tgid as libc::pid_t, 0) };
                if fd < 0 {
                    Err(std::io::Error::last_os_error())
                } else {
                    // SAFETY: as above.
                    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
                }
            }
            r => r,
        }
    }

    /// Every context seen, by id.
    pub fn all(&self) -> Vec<(ContextId, ContextInfo)> {
        lock(&self.inner)
            .info
            .iter()
            .map(|(id, i)| (ContextId(*id), i.clone()))
            .collect()
    }

    /// How many contexts have been reported as exited.
    pub fn exits(&self) -> u64 {
        lock(&self.inner).exits
    }

    /// Stops the watcher thread.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self
            .watcher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = t.join();
        }
    }
}

impl Drop for Contexts {
    fn drop(&mut self) {
        self.stop();
    }
}

fn watch(inner: &Mutex<Inner>, epoll: &OwnedFd, stop: &AtomicBool, on_exit: &dyn Fn(ContextId)) {
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; 32];
    while !stop.load(Ordering::SeqCst) {
        // A timeout only to notice `stop`; exits wake the wait at once.
        // SAFETY: `events` is a valid buffer of 32 entries.
        let n = unsafe {
            libc::epoll_wait(
                epoll.as_raw_fd(),
                events.as_mut_ptr(),
                events.len() as i32,
                200,
            )
        };
        if n <= 0 {
            continue;
        }
        let mut gone = Vec::new();
        {
            let mut g = lock(inner);
            for ev in &events[..n as usize] {
                let raw = ev.u64 as RawFd;
                let Some((ctx, pid, fd)) = g.watches.remove(&raw) else {
                    continue;
                };
                // SAFETY: removing a descriptor we registered; it is closed right after.
                unsafe {
                    libc::epoll_ctl(
                        epoll.as_raw_fd(),
                        libc::EPOLL_CTL_DEL,
                        raw,
                        std::ptr::null_mut(),
                    )
                };
                drop(fd);
                // Threads of the exited process may get their ids reused.
                g.tgid.retain(|tid, tgid| *tid != pid && *tgid != pid);
                let empty = g.members.get_mut(&ctx).is_none_or(|m| {
                    m.remove(&pid);
                    m.is_empty()
                });
                if empty {
                    g.members.remove(&ctx);
                    g.by_key.retain(|_, c| *c != ctx);
                    if let Some(i) = g.info.get_mut(&ctx.0) {
                        i.exited = true;
                    }
                    g.exits += 1;
                    gone.push(ctx);
                }
            }
        }
        for ctx in gone {
            on_exit(ctx);
        }
    }
}

fn read_tgid(pid: u32) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

fn comm(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim_end().to_string())
        .unwrap_or_else(|_| format!("pid {pid}"))
}

fn user_name(uid: u32) -> String {
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|p| {
            p.lines().find_map(|l| {
                let mut f = l.split(':');
                let name = f.next()?;
                let id: u32 = f.nth(1)?.parse().ok()?;
                (id == uid).then(|| name.to_string())
            })
        })
        .unwrap_or_else(|| format!("uid {uid}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_process_is_one_context_and_its_exit_is_reported_at_once() {
        let (tx, rx) = mpsc::channel();
        let c = Contexts::start(ContextKind::Tgid, move |ctx| {
            let _ = tx.send(ctx);
        })
        .unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("0.3")
            .spawn()
            .unwrap();
        let pid = child.id();
        // A real request comes from a running program; here, wait until the child has
        // become `sleep` (spawn may return before the exec).
        while comm(pid) != "sleep" {
            std::thread::sleep(Duration::from_millis(1));
        }
        let a = c.resolve(pid, 0);
        assert_eq!(c.resolve(pid, 0), a, "same process, same context");
        let me = c.resolve(std::process::id(), 0);
        assert_ne!(me, a);
        let info = c.all().into_iter().find(|(id, _)| *id == a).unwrap().1;
        assert_eq!((info.name.as_str(), info.pid), ("sleep", Some(pid)));
        child.wait().unwrap();
        let gone = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert_eq!(gone, a);
        assert_eq!(c.exits(), 1);
        let info = c.all().into_iter().find(|(id, _)| *id == a).unwrap().1;
        assert!(info.exited);
        // The watcher must not report the test process itself.
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        c.stop();
    }

    #[test]
    fn kinds_parse_and_the_kernel_has_its_own_context() {
        assert_eq!("pid".parse::<ContextKind>().unwrap(), ContextKind::Pid);
        assert!("process"
            .parse::<ContextKind>()
            .unwrap_err()
            .contains("tgid"));
        let c = Contexts::start(ContextKind::Uid, |_| {}).unwrap();
        let k = c.resolve(0, 0);
        let me = c.resolve(std::process::id(), 0);
        assert_ne!(k, me);
        let names: Vec<String> = c.all().into_iter().map(|(_, i)| i.name).collect();
        assert!(names.contains(&"kernel".to_string()));
        assert!(names.contains(&"root".to_string()) || names.iter().any(|n| n.starts_with("uid")));
    }
}
