//! A socket that speaks systemd's memory-pressure protocol, so that programs that honour
//! `$MEMORY_PRESSURE_WATCH` (every `sd_event_add_memory_pressure` user, GLib from 2.86) act
//! on antsched's decisions without a change.
//!
//! The protocol (<https://systemd.io/MEMORY_PRESSURE/>): `$MEMORY_PRESSURE_WATCH` names a path;
//! where it is an `AF_UNIX` stream socket the program connects, writes the base64-decoded
//! `$MEMORY_PRESSURE_WRITE` (a PSI trigger such as `some 200000 2000000`) and then treats any
//! data it can read as one pressure event, reading and discarding it. sd-event's default
//! handler then calls `sd_event_trim_memory()` (`malloc_trim` and the program's own cache
//! drops).
//!
//! The daemon accepts such connections on a second socket (`Config::pressure_socket`),
//! reads and ignores what they write (the trigger describes a PSI threshold; here the
//! threshold is the thesis's rule, and a flood beyond [`MAX_INPUT`] bytes drops the
//! connection), and writes one byte (`\n`) when the connection's [`Notifier`] says:
//!
//! - **S halved** since it was last told: a real rise in pressure, always an event;
//! - **the 1 s repeat, only while S < S_max / 2** ([`REPEAT_BELOW`]).
//!
//! Not on a doubling: the protocol has one degree, "pressure", and no "relief" message; an
//! event there would make the program drop caches just as memory became cheaper. Not on
//! the repeat in the upper half of the ramp, because a systemd program's reaction to an event
//! is all-or-nothing (trim the heap, drop caches): repeated each second while S is still
//! within a factor of two of S_max (memory merely past tau, the candidate page still old) it
//! would throw away caches that are worth more than the memory they hold. Below S_max / 2
//! the pressure is real and the periodic trim is the thesis's behaviour.
//!
//! The domain a connection hears is that of its peer: the memory cgroup of the pid behind
//! the socket (`SO_PEERCRED`, `/proc/PID/cgroup`) when the daemon governs that group (a
//! program started by `antsched mem run --memory-pressure`), the machine otherwise.

use std::io::{ErrorKind, Read};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use antsched_core::Nanos;
use antsched_mem::notify::{Notifier, Reason};
use rustix::event::{PollFd, PollFlags};
use rustix::net::SendFlags;

use crate::MEMCG_V1_ROOT;

/// Where the CLI makes the pressure socket when asked for it without a path.
pub const DEFAULT_PRESSURE_SOCKET: &str = "/run/antsched/memory-pressure.sock";

/// The repeat is an event only below this share of S_max.
pub const REPEAT_BELOW: f64 = 0.5;

/// What a connection may write in all (its trigger line) before it is dropped.
pub const MAX_INPUT: usize = 4096;

/// Whether a notification is an event on this protocol (see the module's documentation).
pub fn is_event(reason: Reason, severity_s: f64, s_max: f64) -> bool {
    match reason {
        Reason::Halved => true,
        Reason::Repeat => severity_s < s_max * REPEAT_BELOW,
        Reason::Doubled | Reason::Relieved => false,
    }
}

struct Conn {
    stream: UnixStream,
    domain: u64,
    notifier: Notifier,
    received: usize,
}

/// The listening socket and its connections.
pub struct Server {
    listener: UnixListener,
    path: PathBuf,
    ino: (u64, u64),
    conns: Vec<Conn>,
    max: usize,
}

impl Server {
    /// Listens at `path` (the same rules as the daemon's own socket: a stale socket is
    /// replaced, a live one or another file never). At most `max` connections are served.
    pub fn bind(path: &Path, max: usize) -> Result<Self, crate::Error> {
        let listener = crate::daemon::listen(path)?;
        let meta = std::fs::metadata(path).map_err(|source| crate::Error::Bind {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self {
            listener,
            path: path.to_path_buf(),
            ino: (meta.dev(), meta.ino()),
            conns: Vec::new(),
            max,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many programs are connected.
    pub fn len(&self) -> usize {
        self.conns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.conns.is_empty()
    }

    /// Adds the listener and every connection to a poll set, in the order [`handle`]
    /// expects their events.
    ///
    /// [`handle`]: Self::handle
    pub fn poll_fds<'a>(&'a self, fds: &mut Vec<PollFd<'a>>) {
        fds.push(PollFd::new(&self.listener, PollFlags::IN));
        for c in &self.conns {
            fds.push(PollFd::new(&c.stream, PollFlags::IN));
        }
    }

    /// Serves the events of the descriptors [`poll_fds`] added: reads and discards what
    /// connections wrote (dropping those that closed, erred or wrote too much), then accepts
    /// new ones, each on the domain `domain_of` gives the peer's memory cgroup (None: not
    /// governed, the machine). Returns lines to log.
    ///
    /// [`poll_fds`]: Self::poll_fds
    pub fn handle(
        &mut self,
        revents: &[PollFlags],
        machine: u64,
        domain_of: impl Fn(&str) -> Option<u64>,
        fresh: &Notifier,
    ) -> Vec<String> {
        let mut log = Vec::new();
        let mut keep = Vec::with_capacity(self.conns.len());
        for (i, c) in self.conns.iter_mut().enumerate() {
            let ev = revents.get(i + 1).copied().unwrap_or_else(PollFlags::empty);
            keep.push(ev.is_empty() || read_input(c));
        }
        let mut k = keep.into_iter();
        self.conns.retain(|_| k.next().unwrap_or(true));
        if revents.first().is_some_and(|e| !e.is_empty()) {
            loop {
                match self.listener.accept() {
                    Ok((stream, _)) => {
                        if self.conns.len() >= self.max {
                            log.push(format!(
                                "pressure socket: refused a connection ({} served, the limit)",
                                self.max
                            ));
                            continue;
                        }
                        if stream.set_nonblocking(true).is_err() {
                            continue;
                        }
                        let domain = peer_cgroup(&stream)
                            .and_then(|g| domain_of(&g))
                            .unwrap_or(machine);
                        self.conns.push(Conn {
                            stream,
                            domain,
                            notifier: fresh.clone(),
                            received: 0,
                        });
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    // WouldBlock, or an error of that one connection (EMFILE: the next poll
                    // tries again).
                    Err(_) => break,
                }
            }
        }
        log
    }

    /// Forgets the connections on domains that are gone (they are closed: the program sees
    /// the end of the stream).
    pub fn forget_domains(&mut self, gone: &[u64]) {
        self.conns.retain(|c| !gone.contains(&c.domain));
    }

    /// When the next 1 s repeat may be due, if any.
    pub fn next_due(&self) -> Option<Nanos> {
        self.conns
            .iter()
            .filter_map(|c| c.notifier.poll_timeout())
            .min()
    }

    /// Writes an event to every connection whose Notifier says so and for which the rule of
    /// this protocol makes it one.
    pub fn notify(&mut self, now: Nanos, s_max: f64, severity_of: impl Fn(u64) -> Option<f64>) {
        for c in &mut self.conns {
            let Some(s) = severity_of(c.domain) else {
                continue;
            };
            if let Some(n) =
                c.notifier
                    .observe_early(s, now, crate::daemon::repeat_slack(&c.notifier))
            {
                if is_event(n.reason, s, s_max) {
                    // Non-blocking: a program that does not read has one event pending
                    // already (a full buffer loses nothing it would act on).
                    let _ = rustix::net::send(
                        &c.stream,
                        b"\n",
                        SendFlags::NOSIGNAL | SendFlags::DONTWAIT,
                    );
                }
            }
        }
    }
}

impl Drop for Server {
    /// Removes the socket, if it is still the one this server made.
    fn drop(&mut self) {
        if let Ok(m) = std::fs::symlink_metadata(&self.path) {
            if (m.dev(), m.ino()) == self.ino {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// Reads what a connection wrote. False: drop it (closed, erred, or wrote more than a
/// trigger line).
fn read_input(c: &mut Conn) -> bool {
    let mut buf = [0u8; 512];
    loop {
        match (&c.stream).read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                c.received += n;
                if c.received > MAX_INPUT {
                    return false;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
}

/// The v1 memory cgroup of the process behind `stream`, as a path under
/// [`MEMCG_V1_ROOT`]: the name the daemon gives the domain of a group it governs.
fn peer_cgroup(stream: &UnixStream) -> Option<String> {
    let cred = rustix::net::sockopt::socket_peercred(stream).ok()?;
    let text =
        std::fs::read_to_string(format!("/proc/{}/cgroup", cred.pid.as_raw_nonzero())).ok()?;
    let path = format!("{MEMCG_V1_ROOT}{}", memory_cgroup(&text)?);
    // The daemon names a group by its canonical path.
    Some(
        std::fs::canonicalize(&path)
            .map(|p| p.display().to_string())
            .unwrap_or(path),
    )
}

/// The path of the `memory` controller's line of a `/proc/PID/cgroup`.
fn memory_cgroup(text: &str) -> Option<&str> {
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        ctrl.split(',').any(|c| c == "memory").then_some(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_halvings_and_the_repeat_in_the_lower_half() {
        assert!(is_event(Reason::Halved, 3000.0, 3600.0));
        assert!(!is_event(Reason::Doubled, 200.0, 3600.0));
        assert!(!is_event(Reason::Repeat, 2000.0, 3600.0));
        assert!(is_event(Reason::Repeat, 1799.0, 3600.0));
    }

    #[test]
    fn the_memory_line_of_proc_pid_cgroup() {
        let text = "12:cpuset:/\n4:memory:/antsched/run-7\n0::/user.slice\n";
        assert_eq!(memory_cgroup(text), Some("/antsched/run-7"));
        assert_eq!(memory_cgroup("0::/x\n"), None);
    }
}
