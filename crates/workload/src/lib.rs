//! What antsched's drivers run, and what they report: workloads with no clock and no engine.
//!
//! antsched runs one scheduler in three worlds (see `docs/architecture.md`, "Three worlds,
//! one scheduler"), and in each of them a workload issues the requests. This crate says what
//! a workload is and what it asks of the disk, and leaves *when* to the driver: it holds the
//! fio subset users write workloads in, where the files lie on the disk, what each issuer does
//! next, the page cache's read-ahead and delayed writes, the block-level traces people already
//! have, and the report of a run in the JSON other tools read.
//!
//! It is not a simulator and not a runtime: nothing here keeps time, waits, or serves a
//! request. The discrete-event engine that drives a workload on virtual time is `antsched-sim`;
//! the real-time issuers of `antsched run` are `antsched-io`'s; the FUSE mount
//! (`antsched-fuse`) reports in [`report`]'s shape and records [`trace`]s. Each of them calls
//! this crate as it calls `antsched-core` for the scheduling.
//!
//! ## The pieces
//!
//! - [`fio`]: the workload description. [`fio::parse`] turns a job file into a typed
//!   [`fio::JobFile`], with errors that name the file, the line and the option.
//! - [`compile`]: places the job file's files on the disk ([`layout`]) and makes one
//!   [`Issuer`] per job clone, with its regions, class and seed: the [`Workload`].
//! - [`issuer`]: what an issuer does next (offsets, reads or writes, think times).
//! - [`cache`]: the page cache's read-ahead and delayed writes, as bookkeeping the driver
//!   consults.
//! - [`driver`]: one issuer's application I/O turned into disk requests (read-ahead and its
//!   waiters, dirty data and write-back, contexts that exit), sans-IO, for the simulator and
//!   the runtime alike.
//! - [`report`]: what a run reports, in the JSON shape docs/architecture.md fixes.
//! - [`trace`]: block-level traces (perf script, blkparse, MSR, SPC, fio logs, DiskSim),
//!   parsed as they stream, sans-IO.
#![forbid(unsafe_code)]

pub mod cache;
pub mod driver;
pub mod fio;
pub mod issuer;
pub mod layout;
pub mod numbered;
pub mod report;
pub mod trace;
mod workload;

pub use workload::{compile, ClassSpec, Issuer, Region, Workload};
