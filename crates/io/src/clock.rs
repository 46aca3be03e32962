//! The runtime's clock: `CLOCK_MONOTONIC` in nanoseconds since the runtime started.
//!
//! The scheduler, the emulated disk model and io_uring's absolute timeouts all use this one
//! clock, so "model time = real time" holds without conversion: a deadline the scheduler or
//! the model names is handed to the kernel as `epoch + deadline` on `CLOCK_MONOTONIC`, the
//! clock `IORING_TIMEOUT_ABS` measures by default.

use antsched_core::Nanos;

/// Nanoseconds on `CLOCK_MONOTONIC`.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A clock whose zero is the instant it was made.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    epoch: u64,
}

impl Clock {
    pub fn new() -> Self {
        Self {
            epoch: monotonic_ns(),
        }
    }

    /// Nanoseconds since the epoch.
    pub fn now(&self) -> Nanos {
        monotonic_ns().saturating_sub(self.epoch)
    }

    /// `t` (since the epoch) on `CLOCK_MONOTONIC`.
    pub fn to_monotonic(&self, t: Nanos) -> u64 {
        self.epoch + t
    }

    /// Blocks until `deadline` (since the epoch): sleeps on `clock_nanosleep(TIMER_ABSTIME)`
    /// until `spin` before it, then spins. Sleeping alone wakes late by the timer slack and
    /// the scheduler's wake-up latency (tens of microseconds); think times of a few hundred
    /// microseconds decide whether anticipation pays, so the last stretch is spun.
    pub fn sleep_until(&self, deadline: Nanos, spin: Nanos) {
        let now = self.now();
        if deadline <= now {
            return;
        }
        if deadline - now > spin {
            let t = self.to_monotonic(deadline - spin);
            let ts = libc::timespec {
                tv_sec: (t / 1_000_000_000) as libc::time_t,
                tv_nsec: (t % 1_000_000_000) as libc::c_long,
            };
            // SAFETY: `ts` is a valid timespec; a null remainder is allowed with TIMER_ABSTIME.
            // EINTR only ends the sleep early, and the spin below covers the rest.
            unsafe {
                libc::clock_nanosleep(
                    libc::CLOCK_MONOTONIC,
                    libc::TIMER_ABSTIME,
                    &ts,
                    std::ptr::null_mut(),
                )
            };
        }
        while self.now() < deadline {
            std::hint::spin_loop();
        }
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

/// Asks the kernel to fire this thread's timers exactly (timer slack of 1 ns instead of the
/// default 50 us, which would otherwise be added to every sleep).
pub fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and affects only the calling thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Puts the calling thread in the `SCHED_FIFO` real-time class at `priority` (1 to 99), so
/// that it runs as soon as it wakes instead of waiting for a time slice behind ordinary
/// threads (a compiler on every core delays an ordinary thread's wake-up by milliseconds).
/// Needs root or `CAP_SYS_NICE`; the error says why it was refused. Every thread the runtime
/// runs this way blocks or spins only up to a deadline, so it cannot monopolize a core, and
/// the kernel's real-time throttling bounds it anyway.
pub fn set_realtime(priority: i32) -> std::io::Result<()> {
    set_class(libc::SCHED_FIFO, priority)
}

/// Puts the calling thread back in the ordinary class (`SCHED_OTHER`), from the real-time one
/// [`set_realtime`] put it in.
pub fn set_ordinary() -> std::io::Result<()> {
    set_class(libc::SCHED_OTHER, 0)
}

fn set_class(policy: libc::c_int, priority: i32) -> std::io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
    let r = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
