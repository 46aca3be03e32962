//! The discrete-event simulator of antsched, and the workloads it runs.
//!
//! antsched runs one scheduler implementation in three worlds: simulated, emulated and real (see
//! `DESIGN.md`). This crate is the simulated world: a discrete-event simulator on virtual
//! nanoseconds that drives a scheduler from `antsched-core` against a device model, with the
//! workloads that issue requests to it (fio job files, synthetic processes, traces), the
//! file-system effects the paper depends on (read-ahead, request splitting), the metrics of a
//! run, and the experiments of the paper. Everything here is deterministic for a given seed.
//!
//! What is here so far:
//!
//! - [`fio`]: the workload description. Users write workloads as fio job files, so the same file
//!   runs simulated (`antsched sim`), emulated (`antsched run`) and for real (`fio` itself);
//!   [`fio::parse`] turns one into a typed [`fio::JobFile`], with errors that name the line.
//!
//! The simulator proper (event queue, contexts, device, metrics) builds on that model.
#![forbid(unsafe_code)]

pub mod fio;
