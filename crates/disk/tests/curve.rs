//! Calibrating a positioning-time curve on a model, as `antsched calibrate --emulate` will.

use antsched_disk::curve::{accuracy_within_20pct, fit, sample_model};
use antsched_disk::preset;

#[test]
fn a_curve_calibrated_on_the_34gxp_is_monotone_and_useful() {
    let d = preset("deskstar-34gxp").unwrap();
    let samples = sample_model(d.as_ref(), 8, 8, 12, 0, 42);
    assert!(samples.len() > 500);
    let mut c = fit(
        &samples,
        Some("calibrated on deskstar-34gxp (model)".into()),
    )
    .unwrap();
    assert!(c
        .points
        .windows(2)
        .all(|w| w[0].distance < w[1].distance && w[0].time_us <= w[1].time_us));
    // Far seeks cost about the average seek plus half a revolution, near ones much less.
    let far = c.time_us_at(30_000_000);
    let near = c.time_us_at(10);
    assert!(far > 10_000.0 && far < 20_000.0, "{far}");
    assert!(near < far);
    let acc = accuracy_within_20pct(&c, d.as_ref(), 2000, 7);
    // The paper's calibration was about 75% accurate; rotation makes single requests scatter.
    assert!(acc > 0.3 && acc <= 1.0, "accuracy {acc}");
    c.accuracy_within_20pct = Some(acc);
    // The JSON has exactly the fields antsched_core::PositioningCurve accepts.
    let v: serde_json::Value = serde_json::from_str(&c.to_json()).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(keys.len(), 3, "{keys:?}");
    for p in v["points"].as_array().unwrap() {
        assert_eq!(p.as_object().unwrap().len(), 2);
        assert!(p["distance"].is_u64() && p["time_us"].is_f64());
    }
    eprintln!(
        "34GXP curve: {} points, accuracy within 20%: {acc:.2}",
        c.points.len()
    );
}
