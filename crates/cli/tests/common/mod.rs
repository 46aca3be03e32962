//! Checks shared by the command-line tests.

/// Every row of `antsched paper --json`'s experiments that is off the paper by more than 15%
/// is named in a reason line (`- quantity: why`) of the report.
pub fn every_large_difference_has_a_reason(report: &str, json: &serde_json::Value) {
    for x in json["experiments"].as_array().expect("experiments[]") {
        for r in x["rows"].as_array().expect("rows[]") {
            let off = r["ratio"]
                .as_f64()
                .is_some_and(|q| !(0.85..=1.15).contains(&q));
            let q = r["quantity"].as_str().expect("a quantity");
            let named = |l: &str| {
                l.strip_prefix("- ")
                    .is_some_and(|l| l.starts_with(q) || l.contains(&format!("; {q}")))
            };
            assert!(
                !off || report.lines().any(named),
                "report.md gives no reason for {q}"
            );
        }
    }
}
