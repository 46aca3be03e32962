//! `antsched mem simulate` as a user runs it.

mod common;
use common::{bin, repo, scratch, succeed};

#[test]
fn mem_simulate_prints_the_processes_and_writes_the_design_keys() {
    let dir = scratch("ok");
    let json = dir.join("run.json");
    let out = succeed(
        bin()
            .args(["mem", "simulate"])
            .arg(repo().join("examples/memory/database-hog.toml"))
            .arg("--json")
            .arg(&json)
            .arg("--out")
            .arg(dir.join("plots")),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("db") && stdout.contains("page references"),
        "{stdout}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["policy"], "antsched");
    for key in ["name", "nice", "resident_mb", "hit_rate", "runtime_s"] {
        assert!(run["processes"][0].get(key).is_some(), "{key}");
    }
    assert!(run["severity"].as_array().unwrap().len() > 100);
    assert!(run["pages_read_back"].is_u64());
    assert!(run["sim"]["page_refs_per_s"].as_f64().unwrap() > 0.0);
    for f in ["severity.svg", "severity.png", "memory.svg", "memory.png"] {
        assert!(dir.join("plots").join(f).exists(), "{f}");
    }
}

#[test]
fn a_bad_scenario_names_the_file_line_and_key_and_writes_nothing() {
    let dir = scratch("bad");
    let good = std::fs::read_to_string(repo().join("examples/memory/database-hog.toml")).unwrap();
    let json = dir.join("run.json");
    for (bad, expect) in [
        (good.replace("alpha = 0.6", "alpha = 7"), "alpha"),
        (
            good.replace("size_mb = 150", "size_mb = 150\nqueries = 3"),
            "queries",
        ),
        (
            good.replace("memory_mb = 256", "memory_mb = -1"),
            "memory_mb",
        ),
        (
            good.replace("kind = \"antsched\"", "kind = \"magic\""),
            "policy.kind",
        ),
        (
            good.replace("queries = 120000", "queries = \"x\""),
            "line 17",
        ),
    ] {
        let path = dir.join("bad.toml");
        std::fs::write(&path, bad).unwrap();
        let out = bin()
            .args(["mem", "simulate"])
            .arg(&path)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("bad.toml") && err.contains(expect),
            "{expect}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(!json.exists());
    }
}

/// `antsched paper --part memory`: the thesis's chapter 6 rows beside ours, a reason for every
/// row off by more than 15%, plots, and scenario files that `antsched mem simulate` reruns.
#[test]
fn paper_memory_part_writes_rows_reasons_plots_and_rerunnable_scenarios() {
    let dir = scratch("paper");
    let json = dir.join("paper.json");
    let out = succeed(
        bin()
            .args(["paper", "--part", "memory", "--quick", "--out"])
            .arg(dir.join("out"))
            .arg("--json")
            .arg(&json),
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("mem-fig6.1") && !table.contains("fig4-access-patterns"));
    let o = dir.join("out");
    let report = std::fs::read_to_string(o.join("report.md")).unwrap();
    for id in [
        "mem-equilibrium",
        "mem-fig6.1",
        "mem-runtime-table",
        "mem-release-order",
        "mem-gc",
        "mem-baselines",
    ] {
        assert!(
            report.contains(&format!("## {id} ")),
            "no {id} in report.md"
        );
    }
    for plot in [
        "fig6_1-adaptive-severity",
        "fig6_1-adaptive-memory",
        "equilibrium",
        "runtime-table",
        "baselines",
        "gc-heap",
    ] {
        let f = o.join(format!("{plot}.png"));
        assert!(
            f.metadata().map(|m| m.len() > 1000).unwrap_or(false),
            "{} missing",
            f.display()
        );
        assert!(report.contains(&format!("({plot}.png)")));
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(v["memory"]["sim"]["page_refs_per_s"].as_f64().unwrap() > 0.0);
    let runs = v["memory"]["runs"].as_array().unwrap();
    assert!(runs
        .iter()
        .all(|r| r["policy"].is_string() && r["processes"].is_array()));
    common::every_large_difference_has_a_reason(&report, &v);
    // A scenario of the suite reruns as a user's scenario, with the same result.
    let rerun = bin()
        .args(["mem", "simulate", "--json"])
        .arg(dir.join("rerun.json"))
        .arg(o.join("scenarios/jvm-heap-220.toml"))
        .output()
        .unwrap();
    assert!(rerun.status.success());
    let again: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("rerun.json")).unwrap()).unwrap();
    let suite = runs.iter().find(|r| r["name"] == "jvm-heap-220").unwrap();
    assert_eq!(
        again["runs"][0]["processes"][0]["runtime_s"],
        suite["processes"][0]["runtime_s"]
    );
}

/// `memory_mb = -1e308` was printed back with 309 digits.
#[test]
fn huge_scenario_values_are_printed_compactly_in_errors() {
    let dir = scratch("compact");
    let s = dir.join("s.toml");
    std::fs::write(&s, "[machine]\nmemory_mb = -1e308\n").unwrap();
    let out = bin().args(["mem", "simulate"]).arg(&s).output().unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8(out.stderr).unwrap();
    assert!(e.contains("memory_mb") && e.contains("-1e308"), "{e}");
    assert!(e.len() < 300, "{} bytes: {e}", e.len());
}
