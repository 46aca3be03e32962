//! Estimator curve JSON (`estimator=curve:FILE`): parse and validate, then ask the estimator
//! for positioning times across the range of distances.
#![no_main]

use antsched_core::PositioningCurve;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(curve) = PositioningCurve::from_json(text, "fuzz.json") else {
        return;
    };
    for d in [0, 1, 7, 1 << 10, 1 << 20, 1 << 32, u64::MAX / 2, u64::MAX] {
        let _ = curve.time_at(d);
    }
    for p in curve.points.clone() {
        let _ = curve.time_at(p.distance);
        let _ = curve.time_at(p.distance.saturating_add(1));
    }
});
