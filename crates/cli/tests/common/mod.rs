//! What the command-line tests share: the binary, scratch directories, and checks.
// Each test file uses the part it needs.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// The `antsched` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_antsched"))
}

/// The repository's root (for `examples/` and `data/`).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An empty directory of this test process's own, under the system's temporary directory.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("antsched-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

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
