//! The schedulers antsched is judged against, as faithful re-implementations of the Linux
//! kernels' scheduling logic in the sans-IO [`Scheduler`] interface:
//!
//! | name | what | follows |
//! |---|---|---|
//! | `deadline` | sorted + FIFO lists, batches, read/write expiry | 2.6.10–2.6.29 `deadline-iosched.c` |
//! | `linux-as` | the anticipatory scheduler as the Linux/CAS paper measured it (2.6.9) | 2.6.11 `as-iosched.c`, the same rules |
//! | `linux-as-2.6.32` | the anticipatory scheduler with its cooperating-process rules | 2.6.16–2.6.32 `as-iosched.c` |
//! | `cas` | Cooperative AS (Linux/CAS paper, section 4) | the paper; 2.6.32 for its open constants |
//! | `cfq` | time-sliced CFQ | 2.6.29 `cfq-iosched.c` |
//! | `bfq` | Budget Fair Queueing, B-WF2Q+, with `low_latency` and stable merging | 6.x `bfq-iosched.c`, `bfq-wf2q.c` |
//!
//! Each implements [`Scheduler`] directly: they have their own idling logic and owe nothing to
//! the anticipation core ([`crate::Anticipatory`]). What they share lives here: the sorted
//! list and FIFO with the one-way elevator ([`sorted`]), the fixed-point decayed think-time
//! and seek means ([`iohist`]), and the accounting of idling as [`AnticipationStats`]
//! ([`idle`]).
//!
//! Every tunable has the name Linux's sysfs gives it, and its default; each scheduler also
//! takes antsched's `depth` (requests the device accepts at once, 1 by default). The registry
//! finds them through [`catalog`] and [`build`]: adding a peer is adding an entry to
//! [`PEERS`].
//!
//! ## Timers without a clock
//! The kernels arm timers (AS's `antic_timer`, CFQ's and BFQ's `idle_slice_timer`). A
//! sans-IO scheduler cannot be woken by itself, so each peer runs any timer that is due, at
//! its own time, at the start of every entry point, and reports the timer through
//! [`Scheduler::poll_timeout`] while requests are pending. With nothing pending nobody waits
//! for the timer, so it is not reported; its effects (statistics, expiring a queue) happen at
//! the next call, as of the time it was due.
//!
//! [`AnticipationStats`]: crate::AnticipationStats

pub mod anticipatory;
pub mod bfq;
pub mod cfq;
pub mod deadline;
pub mod idle;
pub mod iohist;
pub mod sorted;

use crate::registry::tunables::DEPTH;
use crate::registry::{SchedulerInfo, TunableInfo, TunableKind, Tunables};
use crate::request::{Op, Request};
use crate::scheduler::Scheduler;

/// Whether Linux treats `req` as synchronous (`rq_is_sync`): every read (read-ahead included:
/// the block layer cannot tell it apart), and writes the issuer waits for.
pub fn is_sync(req: &Request) -> bool {
    req.op == Op::Read || req.sync
}

/// One peer: its catalog entry and how to build it from resolved tunables.
pub struct Peer {
    pub name: &'static str,
    pub summary: &'static str,
    /// Its own tunables; `depth` is added by [`catalog`].
    pub tunables: &'static [&'static TunableInfo],
    pub build: fn(&str, &Tunables) -> Box<dyn Scheduler>,
}

/// Every peer.
pub static PEERS: &[Peer] = &[
    deadline::PEER,
    anticipatory::LINUX_AS,
    anticipatory::LINUX_AS_2_6_32,
    anticipatory::CAS,
    cfq::PEER,
    bfq::PEER,
];

/// The peers' catalog entries.
pub fn catalog() -> Vec<SchedulerInfo> {
    PEERS
        .iter()
        .map(|p| {
            let mut tunables: Vec<&'static TunableInfo> = p.tunables.to_vec();
            tunables.push(&DEPTH);
            SchedulerInfo {
                name: p.name,
                summary: p.summary,
                tunables,
            }
        })
        .collect()
}

/// Builds the peer called `kind`, if there is one, under the name `name` (the SPEC as given).
pub fn build(kind: &str, name: &str, t: &Tunables) -> Option<Box<dyn Scheduler>> {
    PEERS
        .iter()
        .find(|p| p.name == kind)
        .map(|p| (p.build)(name, t))
}

/// A duration tunable that may be 0.
pub(crate) const DURATION: TunableKind = TunableKind::Duration { positive: false };
/// A duration tunable that must be above 0.
pub(crate) const POSITIVE: TunableKind = TunableKind::Duration { positive: true };

/// An integer tunable in `[min, max]`.
pub(crate) const fn integer(min: u64, max: u64) -> TunableKind {
    TunableKind::Integer { min, max }
}

/// `INT_MAX`, the upper bound of most sysfs integers.
pub(crate) const INT_MAX: u64 = i32::MAX as u64;
