//! DiskSim parameter files: the input is read as a `.parv` file in `data/disksim` (so it can
//! `source` the real model files there), the drive model is built, and a few requests are
//! served on it (a seek across the disk, a rotation, a cache hit, a write).
#![no_main]

use antsched_disk::{DeviceModel, DiskRequest};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parv = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/disksim/fuzz.parv");
    let Ok(mut model) = antsched_disk::load_disksim_text(text, parv) else {
        return;
    };
    let cap = model.capacity_sectors();
    let mut now = 0;
    for req in [
        DiskRequest::read(0, 8),
        DiskRequest::read(cap.saturating_sub(8), 8),
        DiskRequest::read(cap / 2, 256),
        DiskRequest::read(cap / 2, 256),
        DiskRequest::write(cap / 3, 64),
        DiskRequest::read(1, 1),
    ] {
        if req.lbn + u64::from(req.sectors) > cap {
            continue;
        }
        let _ = model.positioning_time(&req, now);
        now = model.submit(&req, now).finish;
    }
});
