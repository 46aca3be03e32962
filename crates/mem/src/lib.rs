//! # antsched-mem
//!
//! The memory half of Iyer's thesis (chapters 3 to 6) as a deterministic core: no clock, no
//! files, no threads. Time and observations go in, decisions come out, in the manner of
//! `antsched-core` for the disk half. The simulator in [`sim`] drives it on virtual time;
//! `antsched memd` (crate `antsched-memd`) drives it on Linux from kernel signals.
//!
//! ## The pieces, in the order of the thesis
//!
//! - [`severity`]: the price of memory. S is the age of the page the system would evict next
//!   (the *candidate age*), ramped geometrically toward S_max while free memory is between 0
//!   and tau (Eq. 4.1, section 4.2), and the amortized paging cost of Eq. 4.2.
//! - [`notify`]: who is told, when: a subscriber hears when its S has doubled or halved since
//!   it was last told, and every second while S < S_max (section 4.6, SIGMEM).
//! - [`nice`]: memory nice values, their weights (2^(nice * 30 / 40)), the S each process sees
//!   and the three priority classes (sections 4.4 and 5.1.2 to 5.1.3).
//! - [`enforce`]: memory nice for processes that do not cooperate, on a driver that cannot
//!   change the kernel's replacement: which governed group gives memory first (the priority
//!   class, then the candidate age times the weight) and how much at a time (sections 5.1.2
//!   and 5.1.3).
//! - [`cost`]: the application's side of the bargain: free a chunk when its amortized cost
//!   (Eq. 4.3) is below the amortized paging cost (Eq. 4.2).
//! - [`cache`]: a reusable adaptive cache policy built on that rule (sections 4.7 and 6.2.3).
//! - [`replacement`]: the kernel's side: per-process age bins chained across processes,
//!   weights as chain shifts, priority classes, shared, clean and unmapped pages (chapter 5).
//! - [`kernel`] and [`estimate`]: what a Linux driver (`antsched memd`) needs from the kernel,
//!   sans-IO: parsers for `/proc/meminfo`, `/proc/vmstat`, PSI, `/proc/diskstats` and a cgroup
//!   v1 `memory.stat`; the turnover (Little's law) estimate of the kernel LRU's candidate age,
//!   checked against refaults; C_disk and the disk queue from two diskstats snapshots.
//! - [`record`]: the record every channel carries (the shared page, the eventfd wake-up,
//!   SIGMEM's payload, the JSON of `antsched mem status`).
//! - [`sim`]: the memory simulator: a machine, processes with page-reference streams, elastic
//!   caches, a garbage-collected heap, a malloc pool, a hog, and paging I/O through antsched's
//!   disk scheduler and disk model; the anchors' policies as baselines.
#![deny(unsafe_code)]

pub mod cache;
pub mod cost;
pub mod enforce;
pub mod estimate;
pub mod kernel;
pub mod mglru;
pub mod nice;
pub mod notify;
pub mod paper;
mod prefetch;
pub mod record;
pub mod replacement;
pub mod severity;
pub mod sim;

pub use nice::{MemNice, PriorityClass};
pub use replacement::{PageId, ProcId, Replacement, ReplacementConfig, Victim};
pub use severity::{SeverityConfig, Tier};
