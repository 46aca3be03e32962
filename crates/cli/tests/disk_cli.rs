//! `antsched disks` and `antsched disk validate` as a user runs them.

mod common;
use common::{bin, scratch, succeed};

use std::path::PathBuf;

fn data_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim");
    assert!(
        dir.join("ibm18es.parv").is_file(),
        "DiskSim data not found at {}",
        dir.display()
    );
    dir
}

#[test]
fn disks_lists_every_preset() {
    let out = succeed(bin().arg("disks"));

    let s = String::from_utf8(out.stdout).unwrap();
    for name in [
        "deskstar-34gxp",
        "cheetah-15k",
        "ultrastar-hc310",
        "sata-ssd",
        "nvme-ssd",
    ] {
        assert!(s.contains(name), "{s}");
    }
}

#[test]
fn validate_prints_both_demerits_and_writes_csv_and_json() {
    let dir = data_dir();
    let tmp = scratch("ok");
    let csv = tmp.join("per-request.csv");
    let json = tmp.join("report.json");
    let out = succeed(
        bin()
            .args(["disk", "validate"])
            .arg(dir.join("ibm18es.parv"))
            .arg(dir.join("ibm18es.trace"))
            .arg("--json")
            .arg(&json)
            .arg("--per-request")
            .arg(&csv),
    );
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.contains("demerit") && s.contains("DiskSim 4.0: 0.136 ms"),
        "{s}"
    );
    let c = std::fs::read_to_string(&csv).unwrap();
    let mut lines = c.lines();
    assert_eq!(
        lines.next(),
        Some("index,op,sector,sectors,measured_ms,model_ms")
    );
    assert_eq!(lines.count(), 10_000);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(j["demerit_ms"].as_f64().unwrap() <= 0.136);
    std::fs::remove_dir_all(tmp).ok();
}

#[test]
fn a_bad_trace_line_fails_with_file_and_line_and_writes_nothing() {
    let dir = data_dir();
    let tmp = scratch("bad");
    let trace = tmp.join("bad.trace");
    let mut text = std::fs::read_to_string(dir.join("ibm18es.trace")).unwrap();
    text.push_str("R Hit notanumber 4 100.0 100.0\n");
    std::fs::write(&trace, text).unwrap();
    let csv = tmp.join("out.csv");
    let out = bin()
        .args(["disk", "validate"])
        .arg(dir.join("ibm18es.parv"))
        .arg(&trace)
        .arg("--per-request")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(
        e.contains("bad.trace:10001") && e.contains("block number"),
        "{e}"
    );
    assert!(!csv.exists());
    std::fs::remove_dir_all(tmp).ok();
}

#[test]
fn a_missing_model_file_is_a_clear_error() {
    let out = bin()
        .args([
            "disk",
            "validate",
            "/nonexistent/x.parv",
            "/nonexistent/x.trace",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(e.contains("/nonexistent/x.parv"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

/// `-1e308` in a DiskSim file was printed back with 309 digits.
#[test]
fn huge_disksim_values_are_printed_compactly_in_errors() {
    let dir = data_dir();
    let tmp = scratch("compact");
    for f in ["atlas10k.parv", "atlas10k.model", "atlas10k.seek"] {
        std::fs::copy(dir.join(f), tmp.join(f)).unwrap();
    }
    let specs = std::fs::read_to_string(dir.join("atlas10k.diskspecs")).unwrap();
    let bad = specs.replace(
        "Per-request overhead time = 0.000000",
        "Per-request overhead time = -1e308",
    );
    assert_ne!(
        bad, specs,
        "the test's parameter is gone from atlas10k.diskspecs"
    );
    std::fs::write(tmp.join("atlas10k.diskspecs"), bad).unwrap();
    let out = bin()
        .args(["disk", "validate"])
        .arg(tmp.join("atlas10k.parv"))
        .arg(dir.join("atlas10k.trace"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(
        e.contains("Per-request overhead time") && e.contains("-1e308"),
        "{e}"
    );
    assert!(e.len() < 400, "{} bytes: {e}", e.len());
    std::fs::remove_dir_all(tmp).ok();
}

/// A trace's service time of 1e308 us reached the report as a mean of 309 digits; times no
/// drive takes are refused with the line.
#[test]
fn trace_times_no_drive_takes_are_refused_with_the_line() {
    let dir = data_dir();
    let tmp = scratch("hugetime");
    for (name, line, what) in [
        ("serv.trace", "W Hit 0 4 1e308 1\n", "service time"),
        ("gap.trace", "R Miss 0 4 100 1e300\n", "interarrival time"),
    ] {
        let trace = tmp.join(name);
        std::fs::write(&trace, format!("R Hit 8 4 100 100\n{line}")).unwrap();
        let out = bin()
            .args(["disk", "validate"])
            .arg(dir.join("ibm18es.parv"))
            .arg(&trace)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{name} accepted");
        let e = String::from_utf8(out.stderr).unwrap();
        assert!(e.contains(&format!("{name}:2")) && e.contains(what), "{e}");
        assert!(e.len() < 400, "{} bytes: {e}", e.len());
    }
    std::fs::remove_dir_all(tmp).ok();
}
