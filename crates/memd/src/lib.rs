//! # antsched-memd
//!
//! `antsched memd`, the severity service of Iyer's thesis on Linux, and the client library
//! that talks to it.
//!
//! Linux has no severity system call and no SIGMEM: nothing tells a program how expensive
//! memory is right now. This crate is the driver that gives a Linux machine that number. The
//! decisions are all made by the sans-IO core in `antsched-mem`; this crate only does the I/O
//! around it:
//!
//! 1. **Observe.** Once a tick (1 s by default) an [`ObservationSource`] reads the domain. The
//!    one that reads the machine is [`ProcSource`]: free memory is `MemFree` of
//!    `/proc/meminfo`, and since this kind of kernel does not say how old the page it will evict
//!    next is, the candidate age is the *turnover* estimate (LRU pages over the rate at which
//!    the kernel reclaims them, Little's law, [`antsched_mem::estimate::Turnover`]) from
//!    `/proc/vmstat`, checked against refaults. C_disk and the disk queue for the paging cost
//!    come from two successive `/proc/diskstats` lines of the root file system's disk.
//! 2. **Decide.** [`antsched_mem::record::SeverityRecord::new`] turns the observation into the
//!    record (Eq. 4.1 with tau = 10% of `MemTotal`, Eq. 4.2, the tier), and a
//!    [`antsched_mem::notify::Notifier`] per client decides when to wake it (S halved or
//!    doubled since it was last told, or every second while S < S_max).
//! 3. **Publish.** The record goes on a shared page ([`page`]): a sealed memfd that each client
//!    receives over the daemon's Unix socket and maps read-only, laid out as a latched sequence
//!    lock so that reading it takes a few loads and no system call. Each client also receives an
//!    eventfd of its own, which the daemon signals.
//!
//! ## The protocol
//!
//! A client connects to the socket ([`DEFAULT_SOCKET`] unless told otherwise) and sends the
//! line [`HELLO`]. The daemon answers `ok 1\n` with two descriptors attached (`SCM_RIGHTS`):
//! the page's memfd and the client's eventfd; or `error: <why>\n` and closes. The client keeps
//! the socket open for as long as it wants notifications; sending anything else afterwards is
//! an error that drops it. [`connect`] does all of that:
//!
//! ```no_run
//! let client = antsched_memd::connect("/run/antsched/memd.sock")?;
//! println!("{:?}", client.current());
//! client.wait(Some(std::time::Duration::from_secs(5)))?;
//! # Ok::<(), antsched_memd::ClientError>(())
//! ```
//!
//! ## Running the daemon
//!
//! ```no_run
//! use antsched_memd::{Config, Daemon, DiskChoice, ProcSource};
//! let source = ProcSource::new("/proc", DiskChoice::Root)?;
//! let mut daemon = Daemon::bind(Config::new("/tmp/memd.sock"), Box::new(source))?;
//! let stopper = daemon.stopper(); // stopper.stop() from another thread ends run()
//! daemon.run()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Domains
//!
//! The machine is one domain; every cgroup v1 memory group the daemon governs is another
//! ([`CgroupSource`]: free is its limit minus its usage, tau 10% of its limit, the candidate
//! age the turnover estimate of its own LRU), with its own page and subscribers. A client's
//! hello names its domain (`antsched-memd 1 domain NAME`; the machine by default);
//! `antsched-memd 1 list` names them all; `antsched-memd 1 govern PATH` adds a group under
//! the parent the daemon allows ([`RUN_PARENT`], where `antsched mem run` makes its groups
//! with [`RunGroup`]). Where a domain has a PSI file the daemon registers a trigger on it and
//! wakes on a stall; PSI `full` avg10 of 10% or more is the thrashing tier.
//!
//! ## Programs that hold no subscription
//!
//! [`sigmem`]: a registered process is sent a real-time signal with S in ms in its payload, on
//! the same rule. [`pressure_socket`]: systemd's memory-pressure protocol, for programs that
//! honour `$MEMORY_PRESSURE_WATCH`. The C ABI and the `LD_PRELOAD` library are the crates
//! `antsched-memd-c` and `antsched-memd-preload`.
//!
//! ## Memory nice
//!
//! `antsched-memd 1 nice N pid P` and `antsched-memd 1 nice N cgroup PATH` ([`set_nice`]) set
//! a process's or a governed group's memory nice. Each subscriber has a page of its own with
//! its domain's record as it sees it (S divided by its weight) and its eventfd runs the
//! notification rule on that S. With a state file ([`Config::state_file`], [`state`]), the
//! daemon also enforces the weights on groups it governs on request ([`enforce`]): while a
//! domain's free memory is below tau it steps the `memory.limit_in_bytes` of the group with
//! the largest (class, candidate age times weight) below its usage by a few MB and back,
//! recording each original limit first and restoring it at exit and at its next start.
//!
//! ## What is not here yet
//!
//! cgroup v2 groups are domains (`--cgroup`), but `mem run` makes v1 groups only and v2's
//! `memory.reclaim` is not used. The only kernel setting the daemon
//! writes is the limit of a group under [`RUN_PARENT`] it was asked to govern, while
//! enforcing; only [`RunGroup`] (used by `antsched mem run`) makes, fills and removes groups,
//! and only its own.

pub mod cgroup;
pub mod client;
pub mod daemon;
pub mod enforce;
mod limit_writer;
pub mod page;
pub mod pressure_socket;
pub mod sigmem;
pub mod source;
pub mod state;

pub use cgroup::{
    parse_size, pressure_twin, run_parent_of, CgroupError, RunGroup, RUN_PARENT, UNIFIED_ROOT,
};
pub use client::{
    connect, connect_domain, connect_group, domain_nices, govern, list_domains, register_sigmem,
    set_nice, Client, ClientError,
};
pub use daemon::{Config, Daemon, Error, Governor, Stopper, DEFAULT_PSI_TRIGGER, MACHINE};
pub use enforce::NiceTarget;
pub use pressure_socket::DEFAULT_PRESSURE_SOCKET;
pub use source::{
    CgroupSource, DiskChoice, ObservationSource, ProcSource, SourceError, MEMCG_V1_ROOT,
};
pub use state::{StateError, StateFile, DEFAULT_STATE};

/// Where the daemon listens unless told otherwise.
pub const DEFAULT_SOCKET: &str = "/run/antsched/memd.sock";

/// The line a client sends first: the protocol's name and version.
pub const HELLO: &str = "antsched-memd 1\n";

/// Nanoseconds of CLOCK_MONOTONIC: the clock of the record's `time`, comparable across
/// processes on one machine (a client can tell how old the record it reads is).
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(t.tv_nsec as u64)
}
