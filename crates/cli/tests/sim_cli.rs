//! `antsched sim`, `antsched paper` and `antsched schedulers` as a user runs them.

mod common;
use common::{bin, repo, scratch, succeed};
use std::process::Command;

#[test]
fn sim_prints_a_row_per_scheduler_and_writes_the_json_keys() {
    let dir = scratch("sim");
    let json = dir.join("out.json");
    let out = succeed(
        bin()
            .arg("sim")
            .arg(repo().join("examples/jobs/two-readers-alternate.fio"))
            .args([
                "--scheduler",
                "aged-sptf",
                "--scheduler",
                "as-aged-sptf:timer_tick=500us",
            ])
            .arg("--json")
            .arg(&json),
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("aged-sptf") && table.contains("as-aged-sptf:timer_tick=500us"),
        "{table}"
    );
    // Piped: no progress bar on stderr.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        for key in [
            "scheduler",
            "disk",
            "throughput_mb_s",
            "utilization",
            "contexts",
            "anticipation",
            "sim",
        ] {
            assert!(!r[key].is_null(), "missing {key}");
        }
        let c = &r["contexts"][0];
        for key in ["name", "class", "bytes", "throughput_mb_s", "share"] {
            assert!(!c[key].is_null(), "missing contexts[].{key}");
        }
        for key in ["p50", "p99", "max"] {
            assert!(c["latency_ms"][key].is_number(), "missing latency_ms.{key}");
        }
        for key in ["waits", "hits", "timeouts"] {
            assert!(
                r["anticipation"][key].is_number(),
                "missing anticipation.{key}"
            );
        }
        for key in ["requests", "wall_s", "requests_per_s"] {
            assert!(r["sim"][key].is_number(), "missing sim.{key}");
        }
    }
    // The anticipatory run is the faster one.
    assert!(runs[1]["throughput_mb_s"].as_f64() > runs[0]["throughput_mb_s"].as_f64());
}

#[test]
fn sim_rejects_bad_input_with_the_line_and_writes_nothing() {
    let dir = scratch("bad");
    let job = dir.join("bad.fio");
    std::fs::write(&job, "[a]\nrw=read\nsize=1g\nblocksize_range=4k-8k\n").unwrap();
    let json = dir.join("out.json");
    let out = bin()
        .arg("sim")
        .arg(&job)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad.fio:4") && err.contains("blocksize_range"),
        "{err}"
    );
    assert!(!json.exists(), "a failed run wrote its JSON");

    let ok = repo().join("examples/jobs/two-readers-seq.fio");
    let out = bin()
        .arg("sim")
        .arg(&ok)
        .args(["--scheduler", "as-foo"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("as-foo") && err.contains("as-aged-sptf"),
        "{err}"
    );

    let out = bin()
        .arg("sim")
        .arg(&ok)
        .args(["--disk", "floppy"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("floppy") && err.contains("deskstar-34gxp"),
        "{err}"
    );

    let out = bin()
        .arg("sim")
        .arg(dir.join("missing.fio"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("missing.fio"));
}

#[test]
fn paper_quick_writes_the_report_plots_jobs_and_json() {
    let dir = scratch("paper");
    let json = dir.join("paper.json");
    let out = succeed(
        bin()
            .args(["paper", "--part", "disk", "--quick", "--out"])
            .arg(dir.join("out"))
            .arg("--json")
            .arg(&json),
    );
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("fig4-access-patterns") && table.contains("ratio"),
        "{table}"
    );
    let o = dir.join("out");
    let report = std::fs::read_to_string(o.join("report.md")).unwrap();
    for plot in ["fig4", "fig5", "fig6", "fig7", "fig13", "shares"] {
        for ext in ["png", "svg"] {
            let f = o.join(format!("{plot}.{ext}"));
            assert!(
                f.metadata().map(|m| m.len() > 1000).unwrap_or(false),
                "{} missing",
                f.display()
            );
        }
        assert!(
            report.contains(&format!("({plot}.png)")),
            "report does not link {plot}"
        );
    }
    assert!(o.join("jobs/fig4-access-patterns-seq-mmap.fio").is_file());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let e = v["experiments"].as_array().unwrap();
    assert!(e.len() >= 9);
    for x in e {
        assert!(x["id"].is_string() && x["paper"].is_object() && x["measured"].is_object());
    }
    common::every_large_difference_has_a_reason(&report, &v);
    // No scratch directory left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&o)
        .unwrap()
        .filter_map(|d| d.ok())
        .filter(|d| d.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty());
}

/// The report's prose follows the options: with another disk, seed and spacing, its reasons
/// and notes quote that run's spacing and disk, and none of the default suite's (issue 16).
#[test]
fn paper_prose_follows_the_options() {
    let dir = scratch("paper-options");
    succeed(
        bin()
            .args([
                "paper",
                "--part",
                "disk",
                "--quick",
                "--disk",
                "cheetah-15k",
                "--fast-disk",
                "deskstar-34gxp",
                "--seed",
                "3",
                "--file-spacing",
                "3072",
                "--out",
            ])
            .arg(&dir),
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    // The prose after the tables' header lines: reasons, modelling notes, comparison notes.
    let prose: Vec<&str> = report.lines().filter(|l| l.starts_with("- ")).collect();
    assert!(
        prose.iter().any(|l| l.contains("3072 MiB apart")),
        "{report}"
    );
    assert!(
        prose.iter().any(|l| l.contains("`cheetah-15k` model")),
        "{report}"
    );
    // The spacing sweep's rows are about its own distances, the default among them.
    let sweep = |l: &str| {
        antsched_paper::SPACING_SWEEP_MIB
            .iter()
            .any(|m| l.starts_with(&format!("- {m} MiB apart:")))
    };
    for l in prose.iter().filter(|l| !sweep(l)) {
        assert!(
            !l.contains("6144 MiB") && !l.contains("6 GB"),
            "the default spacing in: {l}"
        );
    }
}

#[test]
fn schedulers_lists_every_name_with_its_tunables() {
    let out = succeed(bin().arg("schedulers"));

    let s = String::from_utf8(out.stdout).unwrap();
    for name in [
        "noop",
        "as-aged-sptf",
        "as-stride-combo",
        "lottery",
        "think_threshold=3ms",
        "age_bound=1s",
        "tau=1s",
    ] {
        assert!(s.contains(name), "{name} missing");
    }
}

/// Runs `cmd`, which must fail, and returns what it said on stderr.
fn failing(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(!out.status.success(), "succeeded: {cmd:?}");
    assert!(out.stdout.is_empty(), "the work went ahead: {cmd:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn errors_are_one_clear_message_and_bad_destinations_are_refused_before_the_work() {
    let dir = scratch("dest");
    let ok = repo().join("examples/jobs/two-readers-seq.fio");
    // A destination in a missing directory: refused at once, with the user's path, and no
    // backtrace even where a developer's RUST_BACKTRACE=1 would make anyhow print one.
    let err = failing(
        bin()
            .arg("sim")
            .arg(&ok)
            .arg("--json")
            .arg(dir.join("missing/out.json"))
            .env("RUST_BACKTRACE", "1"),
    );
    assert!(
        err.starts_with("error: cannot write ") && err.contains("missing/out.json"),
        "{err}"
    );
    assert!(!err.contains("backtrace"), "{err}");
    // A directory where a file should go: neither output is written.
    let err = failing(
        bin()
            .args(["disk", "validate"])
            .arg(repo().join("data/disksim/ibm18es.parv"))
            .arg(repo().join("data/disksim/ibm18es.trace"))
            .arg("--json")
            .arg(dir.join("v.json"))
            .arg("--per-request")
            .arg(&dir),
    );
    assert!(err.contains("is a directory"), "{err}");
    assert!(
        !dir.join("v.json").exists(),
        "one output written, the other refused"
    );
    // A file that does not fit on the disk is the job file's error, named once.
    let job = dir.join("big.fio");
    std::fs::write(&job, "[a]\nrw=read\nsize=100g\n").unwrap();
    let err =
        failing(
            bin()
                .arg("sim")
                .arg(&job)
                .args(["--scheduler", "sptf", "--scheduler", "as-sptf"]),
        );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("big.fio") && err.contains("disk holds"),
        "{err}"
    );
    // A bad duration says what a duration looks like.
    let err = failing(
        bin()
            .arg("sim")
            .arg(&ok)
            .args(["--scheduler", "as-aged-sptf:age_bound=-1s"]),
    );
    assert!(err.contains("as in 500us"), "{err}");
}

#[test]
fn a_reader_that_stops_early_ends_the_listing_quietly() {
    use std::io::Read;
    // `antsched schedulers | head -0`: the reader is gone before the first line is written.
    let mut child = bin()
        .arg("schedulers")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    child.wait().unwrap();
    assert!(err.is_empty(), "{err}");
}

#[test]
fn control_characters_in_bad_input_are_escaped_in_errors() {
    let dir = scratch("control");
    let job = dir.join("nul.fio");
    std::fs::write(&job, "[a]\nsi\0ze=1m\nrw=read\n").unwrap();
    let err = failing(bin().arg("sim").arg(&job));
    assert!(
        !err.contains('\0'),
        "a raw NUL reached the terminal: {err:?}"
    );
    assert!(err.contains("si\\u{0}ze"), "{err}");
    // An escape sequence in a value cannot drive the terminal either.
    std::fs::write(&job, "[a]\nsize=1m\nrw=\x1b[2Jread\n").unwrap();
    let err = failing(bin().arg("sim").arg(&job));
    assert!(!err.contains('\x1b'), "{err:?}");
    assert!(err.contains("\\u{1b}[2Jread"), "{err}");
}

/// `calibrate --per-decade 4294967295` once planned billions of reads before its first one.
#[test]
fn calibration_plans_are_bounded_before_they_are_built() {
    let err = failing(
        bin()
            .args(["calibrate", "--emulate", "deskstar-34gxp"])
            .args(["--per-decade", "4294967295"]),
    );
    assert!(
        err.contains("--per-decade") && err.contains("1..=1000"),
        "{err}"
    );
    let err = failing(
        bin()
            .args(["calibrate", "--emulate", "deskstar-34gxp"])
            .args(["--per-decade", "1000", "--pairs", "1000"]),
    );
    assert!(err.contains("at most 100000"), "{err}");
    let err = failing(
        bin()
            .args(["calibrate", "--emulate", "deskstar-34gxp"])
            .args(["--per-decade", "50", "--pairs", "1000", "--repeats", "3"]),
    );
    assert!(
        err.contains("--repeats 3") && err.contains("at most 100000"),
        "{err}"
    );
    let err = failing(
        bin()
            .args(["calibrate", "--emulate", "deskstar-34gxp"])
            .args(["--repeats", "0"]),
    );
    assert!(err.contains("--repeats"), "{err}");
}

/// A job past a limit is refused before it runs, naming the option, its cost and the
/// `--limit` that allows it; with that `--limit` it runs. A bad `--limit` is a clear error.
#[test]
fn limit_raises_a_job_limit_for_sim_and_run() {
    let dir = scratch("limit");
    let job = dir.join("job.fio");
    std::fs::write(
        &job,
        "[w]\nrw=write\nbs=64k\nsize=1m\nantsched_writeback_interval=500us\n",
    )
    .unwrap();
    let command = |cmd: &str| {
        let mut c = bin();
        c.arg(cmd).arg(&job);
        if cmd == "run" {
            c.args(["--backend", "emulated:deskstar-34gxp", "--dir"])
                .arg(dir.join("files"));
        }
        c
    };
    for cmd in ["sim", "run"] {
        let out = command(cmd).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{cmd}: {stderr}");
        assert!(
            stderr.contains("antsched_writeback_interval")
                && stderr.contains("--limit writeback_interval=500000ns"),
            "{cmd}: {stderr}"
        );
        assert!(
            !dir.join("files").exists(),
            "{cmd}: refused before any file was made"
        );
        let out = command(cmd).args(["--limit", "nope=1"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("--limit nope=1: unknown limit `nope`"),
            "{cmd}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    succeed(bin().arg("sim").arg(&job).args([
        "--scheduler",
        "noop",
        "--limit",
        "writeback_interval=500us",
    ]));
}

/// `paper --file-spacing 0` was blamed on the suite's own job files (`cas-table1.fio:19: job
/// cat: file 200mb-file overlaps file file`); a spacing too large for the disk likewise.
#[test]
fn paper_file_spacing_errors_name_the_option() {
    let dir = scratch("spacing");
    for spacing in [
        "0",
        "1",
        "2047",
        "100000000",
        "17592186044416",
        "18446744073709551615",
    ] {
        let err = failing(
            bin()
                .args(["paper", "--quick", "--out"])
                .arg(&dir)
                .args(["--file-spacing", spacing]),
        );
        assert!(
            err.starts_with(&format!("error: --file-spacing {spacing} MiB")),
            "{spacing}: {err}"
        );
        assert!(err.contains("2048 MiB"), "{spacing}: {err}");
    }
    assert!(
        !dir.join("report.md").exists(),
        "the report was written before the refusal"
    );
}

/// Issue 17, item 11: huge pauses and tunables wrapped to wrong answers or overflowed in the
/// schedulers; each is now refused, naming the option or tunable and its limit.
#[test]
fn huge_pauses_and_tunables_are_refused_naming_them() {
    let dir = scratch("huge");
    let job = dir.join("delay.fio");
    std::fs::write(
        &job,
        "[a]\nrw=read\nbs=4k\nsize=1m\nantsched_issue_delay=18446744073709551615ns\n",
    )
    .unwrap();
    let err = failing(bin().arg("sim").arg(&job));
    assert!(
        err.contains("delay.fio:5") && err.contains("antsched_issue_delay") && err.contains("1h"),
        "{err}"
    );
    let ok = repo().join("examples/jobs/two-readers-seq.fio");
    for spec in [
        "bfq:slice_idle=18446744073709551615ns",
        "bfq:timeout_sync=9223372036854775807ns",
        "cfq:slice_sync=9223372036854775807ns",
        "as-sptf:think_bucket=9223372036854775807ns",
    ] {
        let err = failing(bin().arg("sim").arg(&ok).args(["--scheduler", spec]));
        let key = spec.split([':', '=']).nth(1).unwrap();
        assert!(
            err.contains(key) && err.contains("at most 3600s"),
            "{spec}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// `--disk /dev/zero` read until memory ran out (1.7 GB in 5 s); every input antsched reads
/// by path is bounded, and a larger one is refused saying so.
#[test]
fn endless_input_files_are_refused_at_a_bound() {
    let ok = repo().join("examples/jobs/stride-1-2.fio");
    for (args, needle) in [
        (vec!["sim", "/dev/zero"], "larger than 256 MiB"),
        (vec!["sim", "--disk", "/dev/zero"], "larger than 256 MiB"),
        (
            vec!["sim", "--scheduler", "as-sptf:estimator=/dev/zero"],
            "larger than 64 MiB",
        ),
        (vec!["mem", "simulate", "/dev/zero"], "larger than 256 MiB"),
    ] {
        let mut cmd = bin();
        cmd.args(&args);
        if args[0] == "sim" && args[1] != "/dev/zero" {
            cmd.arg(&ok);
        }
        let err = failing(&mut cmd);
        assert!(
            err.contains("/dev/zero") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn sim_replays_a_trace_under_each_scheduler_with_the_json_of_a_job() {
    let dir = scratch("sim-trace");
    let json = dir.join("out.json");
    succeed(
        bin()
            .args(["sim", "--trace"])
            .arg(repo().join("examples/traces/perf-dd-ext4-loop.txt"))
            .args(["--scheduler", "clook", "--scheduler", "as-aged-sptf"])
            .args(["--replay", "open", "--time-scale", "2"])
            .arg("--json")
            .arg(&json),
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["sim"]["requests"], 88);
        assert!(r["contexts"][0]["name"]
            .as_str()
            .unwrap()
            .starts_with("pid "));
    }
}

#[test]
fn a_trace_and_a_job_together_or_a_bad_trace_are_clear_errors() {
    let both = bin()
        .arg("sim")
        .arg(repo().join("examples/jobs/two-readers-alternate.fio"))
        .arg("--trace")
        .arg(repo().join("examples/traces/spc.csv"))
        .output()
        .unwrap();
    assert!(!both.status.success());
    assert!(String::from_utf8_lossy(&both.stderr).contains("cannot be used with"));
    let dir = scratch("sim-bad-trace");
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "0,1,512,r,0.0\n0,2,512,q,0.1\n").unwrap();
    let out = bin()
        .args(["sim", "--format", "spc", "--trace"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.csv:2: spc trace: expected an opcode `r` or `w` (field 4)"),
        "{err}"
    );
}
