//! Validation traces (`antsched disk validate`): parse, then replay on a built-in drive.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(trace) = antsched_disk::validate::parse_trace(text, "fuzz.trace".as_ref()) else {
        return;
    };
    let mut model = antsched_disk::preset("deskstar-34gxp").expect("built-in disk");
    if let Ok(model_ms) = antsched_disk::validate::replay(&mut *model, &trace) {
        let measured: Vec<f64> = trace.iter().map(|r| r.measured_us / 1000.0).collect();
        let _ = antsched_disk::validate::demerit(&model_ms, &measured);
    }
});
