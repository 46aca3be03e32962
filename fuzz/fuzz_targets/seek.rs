//! DiskSim `.seek` tables (sourced by a model file through `Full seek curve`): parse, then
//! read the curve across the whole range of distances, as the drive model does per seek.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(curve) = antsched_disk::disksim::parse_seek(text, "fuzz.seek".as_ref()) else {
        return;
    };
    for d in [0, 1, 2, 100, 10_000, 1 << 20, u32::MAX - 1, u32::MAX] {
        let _ = curve.time_ms(d);
    }
});
