//! SIGMEM: the notification as a real-time signal, for programs that do not speak the
//! daemon's socket protocol (the thesis's section 4.6 delivered the way its kernel did).
//!
//! A process registers a pid (its own, or a child it started: `antsched mem run --sigmem`)
//! with `antsched-memd 1 sigmem PID SIGNO [DOMAIN]`. From then on the daemon queues SIGNO to
//! that process on the same rule as the eventfd (the [`Notifier`]: S halved or doubled since
//! it was last told, and every second while S < S_max), with `si_code` `SI_QUEUE` and
//! `si_value.sival_int` = S in **milliseconds**, capped at `i32::MAX` (S_max, 3600 s, is
//! 3 600 000 ms: far below the cap; milliseconds and not seconds because S near the bottom of
//! the ramp is a few seconds and an integer of seconds would lose the halvings there).
//!
//! Rules, each for a reason:
//!
//! - **Only real-time signals** (libc's `SIGRTMIN..=SIGRTMAX` as the daemon sees them): they
//!   queue instead of merging and carry the payload; a standard signal could be SIGKILL.
//! - **Only a pid the requester may signal**: the socket's `SO_PEERCRED` uid must be root or
//!   the target's real or saved uid (kill(2)'s rule); the daemon is root and would otherwise
//!   signal anyone for anyone.
//! - **A pidfd**, taken at registration: the signal goes through `pidfd_send_signal`, so a
//!   process that exited and whose pid was reused is never signalled (the send fails with
//!   ESRCH and the registration is dropped silently). The one window left: a pid that is
//!   reused between the requester naming it and the daemon opening the pidfd (a requester that
//!   names a process it does not hold, such as an exited child it has reaped) registers the new
//!   process, subject to the same uid check.
//! - **Never the default action**: a real-time signal that is not caught terminates its
//!   target. Before each send the daemon reads the target's `SigCgt` (`/proc/PID/status`)
//!   and skips the notification when the signal has no handler, so a program that registers
//!   before it installs its handler (`mem run --sigmem` registers CMD right after it starts)
//!   is not killed; the notification is not lost for good either, since the Notifier is only
//!   advanced when a signal is sent. A blocked signal does not count: glibc blocks every
//!   signal in a thread while it creates another (`pthread_create`), so a mask read at that
//!   moment says nothing, and a signal queued then would be delivered, uncaught, once the
//!   mask is restored (a test saw exactly that). A program that consumes SIGMEM with
//!   `signalfd` or `sigwaitinfo` therefore also installs a handler (any one: a blocked
//!   signal stays pending for the descriptor). The one window left: a program that resets
//!   the handler to the default between the daemon's look and the send.
//! - At most [`MAX_REGISTRATIONS`]; dead ones are swept before a new one is refused.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use antsched_core::Nanos;
use antsched_mem::notify::Notifier;

/// The default SIGMEM is `SIGRTMIN + DEFAULT_OFFSET` of the program's own libc (glibc's
/// SIGRTMIN is 34, musl's 35, both computed at run time: the libc reserves the first few for
/// its threads). 8 leaves the low real-time signals, which programs and libraries tend to take
/// first, alone.
pub const DEFAULT_OFFSET: i32 = 8;

/// Registrations held at once.
pub const MAX_REGISTRATIONS: usize = 1024;

/// The default SIGMEM of this process's libc: `SIGRTMIN + 8` (42 with glibc).
pub fn default_signal() -> i32 {
    libc::SIGRTMIN() + DEFAULT_OFFSET
}

/// The payload of a notification at severity `s`: S in ms, capped at `i32::MAX`, never
/// negative.
pub fn payload(severity_s: f64) -> i32 {
    let ms = (severity_s * 1e3).round();
    if ms.is_nan() || ms <= 0.0 {
        0
    } else if ms >= f64::from(i32::MAX) {
        i32::MAX
    } else {
        ms as i32
    }
}

/// `sigmem PID SIGNO [DOMAIN]`'s arguments: the pid, the signal (0 to unregister) and the
/// domain named, if any.
pub fn parse(arg: &str) -> Result<(i32, i32, Option<String>), String> {
    let usage = || format!("\"sigmem\" needs \"PID SIGNO [DOMAIN]\", got {arg:?}");
    let mut words = arg.splitn(3, ' ');
    let pid: i32 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or_else(usage)?;
    let signo: i32 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or_else(usage)?;
    if pid <= 0 {
        return Err(format!("sigmem: no such process {pid}"));
    }
    let (lo, hi) = (libc::SIGRTMIN(), libc::SIGRTMAX());
    if signo != 0 && !(lo..=hi).contains(&signo) {
        return Err(format!(
            "sigmem: signal {signo} is not a real-time signal ({lo} to {hi}; 0 unregisters)"
        ));
    }
    let domain = words.next().filter(|d| !d.is_empty()).map(str::to_string);
    Ok((pid, signo, domain))
}

struct Entry {
    pid: i32,
    pidfd: OwnedFd,
    signo: i32,
    domain: u64,
    notifier: Notifier,
    /// Who it is (pid and start time) and its memory group, taken when it registered, as a
    /// subscriber's are when it subscribes: the nice it is subject to is looked up from them.
    process: crate::enforce::Process,
    group: Option<std::path::PathBuf>,
    /// The memory nice its notifier runs on: it is sent S / W, as its page would show.
    nice: antsched_mem::MemNice,
}

/// The processes registered for SIGMEM.
#[derive(Default)]
pub struct Registry {
    entries: Vec<Entry>,
}

impl Registry {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Registers `pid` for `signo` on `domain` at the request of `peer` (or unregisters it
    /// when `signo` is 0). A pid registered again is replaced. The error is the reason to tell
    /// the requester.
    pub fn register(
        &mut self,
        peer: &UnixStream,
        pid: i32,
        signo: i32,
        domain: u64,
        fresh: &Notifier,
    ) -> Result<(), String> {
        let cred = rustix::net::sockopt::socket_peercred(peer)
            .map_err(|e| format!("sigmem: cannot tell who asks (SO_PEERCRED): {e}"))?;
        let target = rustix::process::Pid::from_raw(pid).ok_or("sigmem: pid 0")?;
        // The pidfd first, so that the uid checked below is that of the process it pins.
        let pidfd = rustix::process::pidfd_open(target, rustix::process::PidfdFlags::empty())
            .map_err(|e| format!("sigmem: no process {pid}: {e}"))?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map_err(|e| format!("sigmem: no process {pid}: {e}"))?;
        let uids = status_field(&status, "Uid:")
            .ok_or_else(|| format!("sigmem: /proc/{pid}/status has no Uid line"))?;
        let asker = cred.uid.as_raw();
        let uids: Vec<u32> = uids
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        // kill(2): real or saved uid of the target.
        let allowed = asker == 0 || uids.first() == Some(&asker) || uids.get(2) == Some(&asker);
        if !allowed {
            return Err(format!(
                "sigmem: uid {asker} may not signal process {pid} (not its owner, not root)"
            ));
        }
        self.entries.retain(|e| e.pid != pid);
        if signo == 0 {
            return Ok(());
        }
        if self.entries.len() >= MAX_REGISTRATIONS {
            self.sweep();
            if self.entries.len() >= MAX_REGISTRATIONS {
                return Err(format!(
                    "sigmem: already {MAX_REGISTRATIONS} processes registered (the limit)"
                ));
            }
        }
        self.entries.push(Entry {
            pid,
            pidfd,
            signo,
            domain,
            notifier: fresh.clone(),
            process: crate::enforce::Process::of(pid as u32),
            group: crate::enforce::memory_group_of(pid as u32),
            nice: antsched_mem::MemNice::default(),
        });
        Ok(())
    }

    /// Drops the registrations of processes that exited (their pidfd is readable).
    fn sweep(&mut self) {
        let mut fds: Vec<rustix::event::PollFd<'_>> = self
            .entries
            .iter()
            .map(|e| rustix::event::PollFd::new(&e.pidfd, rustix::event::PollFlags::IN))
            .collect();
        if rustix::event::poll(&mut fds, Some(&rustix::time::Timespec::default())).is_err() {
            return;
        }
        let dead: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
        drop(fds);
        let mut i = 0;
        self.entries.retain(|_| {
            i += 1;
            !dead[i - 1]
        });
    }

    /// Forgets the registrations on domains that are gone.
    pub fn forget_domains(&mut self, gone: &[u64]) {
        self.entries.retain(|e| !gone.contains(&e.domain));
    }

    /// When the next 1 s repeat is due (ns of CLOCK_MONOTONIC), if any.
    pub fn next_due(&self) -> Option<Nanos> {
        self.entries
            .iter()
            .filter_map(|e| e.notifier.poll_timeout())
            .min()
    }

    /// Signals every registered process whose Notifier says so. Returns a line to log for
    /// each registration dropped for a reason other than its process having exited.
    /// Sends SIGMEM to each registered process whose notification rule says so, with the S
    /// it sees: its domain's (`severity_of`) divided by the weight of its memory nice
    /// (`nice_of`), as a subscriber's page shows it (section 4.3, "Nicing"); a change of nice
    /// rescales what it was last told, so the renice alone sends nothing.
    pub(crate) fn notify(
        &mut self,
        now: Nanos,
        severity_of: impl Fn(u64) -> Option<f64>,
        nice_of: impl Fn(crate::enforce::Process, Option<&std::path::Path>) -> antsched_mem::MemNice,
    ) -> Vec<String> {
        let mut log = Vec::new();
        let mut dead = Vec::new();
        for e in &mut self.entries {
            let Some(s) = severity_of(e.domain) else {
                continue;
            };
            let nice = nice_of(e.process, e.group.as_deref());
            if nice != e.nice {
                e.notifier.rescale(e.nice.weight() / nice.weight());
                e.nice = nice;
            }
            let s = nice.scaled_severity(s);
            // A look at the state first: Notifier::observe advances it, which must only
            // happen when the signal is sent.
            let mut probe = e.notifier.clone();
            if probe
                .observe_early(s, now, crate::daemon::repeat_slack(&e.notifier))
                .is_none()
            {
                continue;
            }
            match catches(e.pid, e.signo) {
                Some(true) => {}
                // No handler: the signal would kill it; try again later.
                Some(false) => continue,
                None => {
                    dead.push(e.pid);
                    continue;
                }
            }
            e.notifier = probe;
            match send(&e.pidfd, e.signo, payload(s)) {
                Ok(()) => {}
                Err(rustix::io::Errno::SRCH) => dead.push(e.pid),
                Err(err) => {
                    log.push(format!("sigmem: process {} dropped: {err}", e.pid));
                    dead.push(e.pid);
                }
            }
        }
        self.entries.retain(|e| !dead.contains(&e.pid));
        log
    }
}

/// The text after `key` on its line of a `/proc/PID/status`.
fn status_field<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .map(str::trim)
}

/// Whether process `pid` has a handler for `signo` (`SigCgt`); None when it is gone.
fn catches(pid: i32, signo: i32) -> Option<bool> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let bit = 1u64 << (signo - 1);
    Some(
        status_field(&status, "SigCgt:")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .is_some_and(|m| m & bit != 0),
    )
}

/// The kernel's `siginfo_t` for `SI_QUEUE` (the `_rt` member of its union), padded to its
/// 128 bytes. libc's `siginfo_t` has no constructor for these fields.
#[repr(C)]
struct QueueInfo {
    si_signo: i32,
    si_errno: i32,
    si_code: i32,
    /// The union that follows holds pointers: 8-aligned on 64-bit targets.
    #[cfg(target_pointer_width = "64")]
    _pad: i32,
    si_pid: i32,
    si_uid: u32,
    /// `sival_int` is at the start of `union sigval` whatever the byte order.
    sival_int: i32,
    _rest: [u8; INFO_REST],
}

/// The bytes of `siginfo_t` after `sival_int`.
const INFO_REST: usize = 128
    - 6 * 4
    - if cfg!(target_pointer_width = "64") {
        4
    } else {
        0
    };

const _: () = assert!(std::mem::size_of::<QueueInfo>() == 128);

/// `pidfd_send_signal(pidfd, signo, {SI_QUEUE, sival_int = value})`: sigqueue(3) through a
/// pidfd.
fn send(pidfd: &OwnedFd, signo: i32, value: i32) -> Result<(), rustix::io::Errno> {
    let info = QueueInfo {
        si_signo: signo,
        si_errno: 0,
        si_code: libc::SI_QUEUE,
        #[cfg(target_pointer_width = "64")]
        _pad: 0,
        si_pid: std::process::id() as i32,
        si_uid: rustix::process::getuid().as_raw(),
        sival_int: value,
        _rest: [0; INFO_REST],
    };
    // SAFETY: the system call reads 128 bytes of siginfo from `info`, which is that size and
    // lives across the call; the descriptor is a pidfd this registry owns.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            signo,
            &info as *const QueueInfo,
            0u32,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(rustix::io::Errno::from_raw_os_error(
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_is_milliseconds_capped() {
        assert_eq!(payload(3600.0), 3_600_000);
        assert_eq!(payload(1.2345), 1235);
        assert_eq!(payload(1e9), i32::MAX);
        assert_eq!(payload(-1.0), 0);
        assert_eq!(payload(f64::NAN), 0);
    }

    #[test]
    fn arguments_parse_and_only_real_time_signals_pass() {
        let rt = libc::SIGRTMIN() + DEFAULT_OFFSET;
        assert_eq!(parse(&format!("42 {rt}")), Ok((42, rt, None)));
        assert_eq!(
            parse(&format!("42 {rt} /sys/fs/cgroup/memory/a b")),
            Ok((42, rt, Some("/sys/fs/cgroup/memory/a b".into())))
        );
        assert_eq!(parse("42 0"), Ok((42, 0, None)));
        assert!(parse("42 9")
            .unwrap_err()
            .contains("not a real-time signal"));
        assert!(parse("0 40").unwrap_err().contains("no such process"));
        assert!(parse("x 40").unwrap_err().contains("PID SIGNO"));
        assert!(parse("42").unwrap_err().contains("PID SIGNO"));
    }
}
