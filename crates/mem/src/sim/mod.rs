//! The memory simulator: a machine with M MB, processes with page-reference streams, elastic
//! caches, a garbage-collected heap, a malloc pool and a hog, on virtual time; paging I/O goes
//! through antsched's disk scheduler and disk model. The anchors' policies run on the same
//! workloads as baselines. Deterministic for a scenario and a seed.

mod disk;
mod engine;
mod process;
pub mod report;
pub mod scenario;
mod workload;

pub use engine::PAGE;
pub use report::{MemReport, ProcReport, Reaction, Sample, SimStats};
pub use scenario::{parse_scenario, Policy, Scenario, ScenarioError};
pub use workload::{Popularity, Zipf};

/// Runs a scenario with a seed.
pub fn simulate(scenario: &Scenario, seed: u64) -> Result<MemReport, String> {
    Ok(engine::Engine::new(scenario, seed)?.run())
}

/// [`simulate`], calling `progress` now and then with the share of the run done (0 to 1).
pub fn simulate_with_progress(
    scenario: &Scenario,
    seed: u64,
    progress: &mut dyn FnMut(f64),
) -> Result<MemReport, String> {
    Ok(engine::Engine::new(scenario, seed)?.run_with_progress(progress))
}
