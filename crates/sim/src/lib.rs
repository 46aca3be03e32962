//! The discrete-event simulator of antsched.
//!
//! antsched runs one scheduler implementation in three worlds: simulated, emulated and real (see
//! `docs/architecture.md`). This crate is the simulated world: a discrete-event simulator on virtual
//! nanoseconds that drives a scheduler from `antsched-core` against a device model, running the
//! workloads of `antsched-workload` (fio job files, traces) with the file-system effects the
//! paper depends on (read-ahead, delayed writes, request splitting) timed on its clock.
//! Everything here is deterministic for a given seed.
//!
//! What a workload is (the fio subset, file placement, issuers, the page-cache model, traces)
//! and what a run reports are `antsched-workload`'s; this crate only says when each thing
//! happens. The paper's experiments, which run on this simulator, are `antsched-paper`'s.
//!
//! ## The pieces
//!
//! - [`engine`]: the event loop on virtual nanoseconds; the scheduler decides, the device
//!   ([`device`]) serves. [`engine::Replay`] replays a trace as an issuer kind of the engine,
//!   open or closed loop, one context per process of the trace.
//!
//! [`simulate`] runs one job file under one scheduler on one device model; [`replay`] one
//! trace.
#![forbid(unsafe_code)]

pub mod device;
pub mod engine;

use antsched_disk::DeviceModel;
use antsched_workload::report::RunReport;
use antsched_workload::{fio, trace};

pub use device::SharedDevice;

/// Why a simulation could not run. Every variant names what and where.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Fio(#[from] fio::FioError),
    #[error(transparent)]
    Spec(#[from] antsched_core::SpecError),
    #[error(transparent)]
    DiskSim(#[from] antsched_disk::DiskSimError),
    #[error(transparent)]
    Trace(#[from] trace::TraceError),
    #[error("unknown disk {name:?}: give a built-in model ({}) or the path of a DiskSim .parv file", valid.join(", "))]
    UnknownDisk { name: String, valid: Vec<String> },
    #[error(
        "the run's virtual time would pass 2^64 ns (about 584 years): a think time, \
         antsched_issue_delay or write-back interval this long never lets the jobs end; give \
         shorter ones"
    )]
    TimeOverflow,
}

/// A device model by built-in name (`deskstar-34gxp`) or DiskSim `.parv` path.
pub fn disk_model(name_or_path: &str) -> Result<Box<dyn DeviceModel>, SimError> {
    if let Some(m) = antsched_disk::preset(name_or_path) {
        return Ok(m);
    }
    let path = std::path::Path::new(name_or_path);
    if path.extension().is_some_and(|e| e == "parv") || path.exists() {
        return Ok(Box::new(antsched_disk::load_disksim(path)?));
    }
    Err(SimError::UnknownDisk {
        name: name_or_path.to_string(),
        valid: antsched_disk::presets()
            .iter()
            .map(|p| p.name.to_string())
            .collect(),
    })
}

/// Runs `jobs` under each of `specs`, in parallel, each on a fresh copy of `disk`.
/// `progress(i, share)` is called now and then with the share of run `i` done (0 to 1), and
/// with 1 when it ends (for progress bars). Results come back in the order of `specs`.
///
/// The job's layout on the disk is the same under every scheduler, so it is compiled once: a
/// job that does not fit is the outer error, reported before any run, not once per scheduler.
pub fn simulate_each(
    jobs: &fio::JobFile,
    disk: &dyn DeviceModel,
    specs: &[String],
    seed: u64,
    progress: &(dyn Fn(usize, f64) + Sync),
) -> Result<Vec<Result<RunReport, SimError>>, SimError> {
    use rayon::prelude::*;
    let workload = antsched_workload::compile(jobs, disk.capacity_sectors(), seed)?;
    let models: Vec<Box<dyn DeviceModel>> = specs.iter().map(|_| disk.clone_box()).collect();
    Ok(models
        .into_par_iter()
        .zip(specs.par_iter())
        .enumerate()
        .map(|(i, (m, spec))| {
            let r = run_compiled(
                jobs,
                &workload,
                m,
                spec,
                seed,
                Some(&|share| progress(i, share)),
            );
            progress(i, 1.0);
            r
        })
        .collect())
}

/// Runs `jobs` under the scheduler `spec` on `disk` (a fresh model: it is consumed), with
/// `seed` for every random choice. Same inputs, same report (but for the wall-clock speed).
pub fn simulate(
    jobs: &fio::JobFile,
    disk: Box<dyn DeviceModel>,
    spec: &str,
    seed: u64,
) -> Result<RunReport, SimError> {
    let workload = antsched_workload::compile(jobs, disk.capacity_sectors(), seed)?;
    run_compiled(jobs, &workload, disk, spec, seed, None)
}

/// Replays a trace under each of `specs`, in parallel, each on a fresh copy of `disk` and with
/// its own reader of the trace from `open` (the trace is streamed, never held): the replay of
/// `antsched sim --trace`. `progress` as for [`simulate_each`].
pub fn replay_each(
    open: &(dyn Fn() -> Result<engine::Replay<'static>, SimError> + Sync),
    disk: &dyn DeviceModel,
    specs: &[String],
    seed: u64,
    progress: &(dyn Fn(usize, f64) + Sync),
) -> Vec<Result<RunReport, SimError>> {
    use rayon::prelude::*;
    let models: Vec<Box<dyn DeviceModel>> = specs.iter().map(|_| disk.clone_box()).collect();
    models
        .into_par_iter()
        .zip(specs.par_iter())
        .enumerate()
        .map(|(i, (m, spec))| {
            let r = replay(open()?, m, spec, seed, &|share| progress(i, share));
            progress(i, 1.0);
            r
        })
        .collect()
}

/// Replays one trace under the scheduler `spec` on `disk` (a fresh model: it is consumed).
pub fn replay(
    trace: engine::Replay<'_>,
    disk: Box<dyn DeviceModel>,
    spec: &str,
    seed: u64,
    progress: &dyn Fn(f64),
) -> Result<RunReport, SimError> {
    let device = SharedDevice::new(disk);
    // A trace's think times were measured on a real clock: `wait_slack=auto` allows for
    // their latencies as it does in a real-time run.
    let env = antsched_core::BuildEnv {
        real_clock: true,
        ..device.build_env(seed)
    };
    let sched = antsched_core::build(spec, &env)?;
    let mut report = engine::Simulation::replay(trace, sched, device)?
        .progress(progress)
        .run()?;
    report.seed = seed;
    Ok(report)
}

/// [`simulate`] with the workload already compiled for this disk and seed.
fn run_compiled(
    jobs: &fio::JobFile,
    workload: &antsched_workload::Workload,
    disk: Box<dyn DeviceModel>,
    spec: &str,
    seed: u64,
    progress: Option<&dyn Fn(f64)>,
) -> Result<RunReport, SimError> {
    let device = SharedDevice::new(disk);
    let env = device.build_env(seed);
    let sched = antsched_core::build(spec, &env)?;
    let mut sim = engine::Simulation::new(jobs, workload, sched, device)?;
    // Without a listener the engine never works out how far it is.
    if let Some(p) = progress {
        sim = sim.progress(p);
    }
    let mut report = sim.run()?;
    report.seed = seed;
    Ok(report)
}
