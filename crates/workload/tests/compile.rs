//! Laying a job file out on a disk ([`antsched_workload::compile`]) on whole files: inputs
//! the fuzzer found too slow to place, kept as they were.

use antsched_workload::fio;

/// Found by the `fio` fuzz target (a timeout): with numjobs=65536 every clone is its own
/// class, and each clone's class was looked up by a scan of the classes so far, so laying the
/// job out took 10 s (and the named files likewise). The fuzzer's input is kept as it was.
#[test]
fn a_class_per_clone_is_laid_out_without_a_scan_per_clone() {
    let disk = antsched_disk::preset("deskstar-34gxp").unwrap();
    let fuzzed = std::str::from_utf8(include_bytes!("fuzz/numjobs-65536-classes.fio")).unwrap();
    for (name, text) in [
        ("numjobs-65536-classes.fio", fuzzed),
        (
            "plain.fio",
            "[a]\nrw=read\nbs=64k\nsize=64k\nnumjobs=65536\n",
        ),
    ] {
        // 65,536 clones of 4,096 reads each would take hours to simulate (the `ios` limit
        // says so); the layout is what this test times.
        let limits = fio::Limits {
            ios: u64::MAX,
            ..Default::default()
        };
        let jobs = fio::parse_with(text, name, &limits).unwrap();
        let t = std::time::Instant::now();
        let w = antsched_workload::compile(&jobs, disk.capacity_sectors(), 1).unwrap();
        let took = t.elapsed();
        assert!(
            w.classes.len() >= 65_536,
            "{name}: {} classes",
            w.classes.len()
        );
        assert!(
            took < std::time::Duration::from_secs(2),
            "{name}: {took:?} to lay out"
        );
    }
}
