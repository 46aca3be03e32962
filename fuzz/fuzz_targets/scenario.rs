//! Memory scenarios (`antsched mem simulate`): parse and check, then what the simulator does
//! before it starts: each process's memory nice, and the machine's scheduler on its disk (for a
//! built-in disk; a path would make the fuzzer read arbitrary files).
#![no_main]

use antsched_sim::SharedDevice;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(scenario) = antsched_mem::sim::parse_scenario(text, "fuzz.toml") else {
        return;
    };
    for p in &scenario.processes {
        let _ = scenario.nice_of(p);
    }
    if let Some(disk) = antsched_disk::preset(&scenario.machine.disk) {
        let device = SharedDevice::new(disk);
        let _ = antsched_core::build(&scenario.machine.scheduler, &device.build_env(1));
    }
});
