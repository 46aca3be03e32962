//! fio job files: parse, then lay the jobs out on a disk and set up (not run) the simulation,
//! which is what `antsched sim` does before its first event.
#![no_main]

use antsched_sim::SharedDevice;
use antsched_workload::fio;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(jobs) = fio::parse(text, "fuzz.fio") else {
        return;
    };
    let disk = antsched_disk::preset("deskstar-34gxp").expect("built-in disk");
    let Ok(work) = antsched_workload::compile(&jobs, disk.capacity_sectors(), 1) else {
        return;
    };
    let device = SharedDevice::new(disk);
    let sched = antsched_core::build("as-aged-sptf", &device.build_env(1)).expect("built-in SPEC");
    let _ = antsched_sim::engine::Simulation::new(&jobs, &work, sched, device);
});
