//! `antsched run` and `antsched calibrate` as a user runs them: output, JSON, and errors that
//! leave nothing half-written.

mod common;
use common::{bin, scratch, succeed};

use std::path::PathBuf;

/// io_uring runs here, or the test should skip (fail in CI, `ANTSCHED_REQUIRE_FUSE=1`).
fn io_uring_or_skip(test: &str) -> bool {
    match antsched_io::io_uring_available() {
        Ok(()) => true,
        Err(why) if std::env::var("ANTSCHED_REQUIRE_FUSE").as_deref() == Ok("1") => {
            panic!("{test}: {why}, and ANTSCHED_REQUIRE_FUSE=1 requires it")
        }
        Err(why) => {
            eprintln!("skipping {test}: {why}");
            false
        }
    }
}

#[test]
fn run_writes_the_sim_json_plus_the_timer_overshoot() {
    if !io_uring_or_skip("run_writes_the_sim_json") {
        return;
    }
    let d = scratch("run");
    let job = d.join("job.fio");
    std::fs::write(
        &job,
        "[global]\nrw=read\nbs=64k\nsize=8m\nioengine=psync\n[a]\nfilename=a.dat\n[b]\nfilename=b.dat\n",
    )
    .unwrap();
    let json = d.join("out.json");
    let out = succeed(
        bin()
            .args([
                "run",
                job.to_str().unwrap(),
                "--backend",
                "emulated:deskstar-34gxp",
                "--dir",
            ])
            .arg(d.join("files"))
            .args([
                "--scheduler",
                "noop",
                "--runtime",
                "500ms",
                "--compare-sim",
                "--json",
            ])
            .arg(&json),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("timer p50/p99 us") && stdout.contains("run/sim"),
        "{stdout}"
    );
    assert!(stderr.contains("created"), "the files were made: {stderr}");
    assert!(
        !stderr.contains('\r'),
        "no progress bar when not on a terminal"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let r = &v["runs"][0];
    for key in [
        "scheduler",
        "disk",
        "throughput_mb_s",
        "utilization",
        "contexts",
        "anticipation",
    ] {
        assert!(!r[key].is_null(), "{key} missing: {r}");
    }
    for key in ["p50", "p99"] {
        assert!(r["timer_overshoot_us"][key].is_f64(), "{r}");
    }
    assert_eq!(r["disk"], "deskstar-34gxp");
    assert_eq!(r["verify"]["mismatches"], 0);
    assert!(r["verify"]["bytes_checked"].as_u64().unwrap() > 0);
    let c = &r["contexts"][0];
    for key in [
        "name",
        "class",
        "bytes",
        "throughput_mb_s",
        "share",
        "latency_ms",
    ] {
        assert!(!c[key].is_null(), "{key} missing: {c}");
    }
    assert!(v["sim"]["runs"][0]["throughput_mb_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn run_replays_a_trace_in_real_time_beside_its_simulation() {
    if !io_uring_or_skip("run_replays_a_trace") {
        return;
    }
    let d = scratch("run-trace");
    let json = d.join("out.json");
    let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/traces/spc.csv");
    let out = succeed(
        bin()
            .args([
                "run",
                "--trace",
                trace,
                "--backend",
                "emulated:deskstar-34gxp",
            ])
            .args([
                "--scheduler",
                "clook",
                "--replay",
                "open",
                "--compare-sim",
                "--json",
            ])
            .arg(&json),
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("run/sim"), "{stdout}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let (real, sim) = (&v["runs"][0], &v["sim"]["runs"][0]);
    // The sample's ten records: three ASUs, each record replayed once, as the simulator does.
    let ios = |r: &serde_json::Value| -> Vec<(String, u64)> {
        r["contexts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["ios"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(ios(real), ios(sim));
    assert_eq!(ios(real).len(), 3, "{real}");
    assert_eq!(real["bytes"], sim["bytes"]);
    assert!(real["timer_overshoot_us"]["samples"].as_u64().unwrap() > 0);
}

#[test]
fn bad_input_fails_clearly_and_writes_nothing() {
    let d = scratch("bad");
    let json = d.join("never.json");
    let job = d.join("job.fio");
    std::fs::write(&job, "[a]\nrw=read\nbs=64k\nsize=1m\nfilename=a.dat\n").unwrap();
    let bad_job = d.join("bad.fio");
    std::fs::write(&bad_job, "[a]\nrw=sideways\n").unwrap();
    let bad_trace = d.join("bad.csv");
    std::fs::write(&bad_trace, "0,8,4096,r,0.0\n0,16,4096,q,0.001\n").unwrap();
    let far_trace = d.join("far.csv");
    std::fs::write(&far_trace, "0,8,4096,r,0.0\n0,999999999999,4096,r,0.001\n").unwrap();
    let trace = |t: &PathBuf, more: &[&str]| -> Vec<String> {
        let mut v = vec!["run".to_string(), "--trace".into(), t.display().to_string()];
        v.extend(more.iter().map(|m| m.to_string()));
        v
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (trace(&d.join("missing.csv"), &[]), "missing.csv"),
        (
            trace(&bad_trace, &["--format", "spc"]),
            "bad.csv:2: spc trace",
        ),
        (
            trace(&far_trace, &["--format", "spc"]),
            "far.csv:2: the request at sector",
        ),
        (trace(&far_trace, &["--time-scale", "0"]), "--time-scale"),
        (
            trace(&far_trace, &["--format", "tape"]),
            "unknown trace format",
        ),
        (
            trace(&far_trace, &["--compare-sim", "--runtime", "1s"]),
            "--compare-sim with --trace",
        ),
        (
            vec!["run".into(), d.join("missing.fio").display().to_string()],
            "missing.fio",
        ),
        (
            vec!["run".into(), bad_job.display().to_string()],
            "bad.fio:2",
        ),
        (
            vec![
                "run".into(),
                job.display().to_string(),
                "--scheduler".into(),
                "as-nonsense".into(),
            ],
            "as-nonsense",
        ),
        (
            vec![
                "run".into(),
                job.display().to_string(),
                "--scheduler".into(),
                "noop:depth=0".into(),
            ],
            "depth",
        ),
        (
            vec![
                "run".into(),
                job.display().to_string(),
                "--runtime".into(),
                "10".into(),
            ],
            "--runtime",
        ),
        (
            vec![
                "run".into(),
                job.display().to_string(),
                "--backend".into(),
                "floppy:a".into(),
            ],
            "emulated:NAME",
        ),
        (
            vec![
                "run".into(),
                job.display().to_string(),
                "--backend".into(),
                "emulated:no-such-disk".into(),
            ],
            "no-such-disk",
        ),
        (
            vec![
                "run".into(),
                job.display().to_string(),
                "--backend".into(),
                "file:/dev/null".into(),
            ],
            "emulated:NAME",
        ),
    ];
    for (mut args, expect) in cases {
        if !args.iter().any(|a| a == "--backend") {
            args.extend(["--backend".into(), "emulated:deskstar-34gxp".into()]);
        }
        args.extend(["--dir".into(), d.join("files").display().to_string()]);
        args.extend(["--json".into(), json.display().to_string()]);
        let out = bin().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            err.contains(expect),
            "{args:?}: expected {expect:?} in {err}"
        );
        assert!(!json.exists(), "{args:?} wrote {}", json.display());
    }
    let out = bin()
        .args(["calibrate", "--emulate", "no-such-disk", "--out"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-disk"));
    let out = bin()
        .arg("calibrate")
        .arg(d.join("missing.img"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.img"));
    assert!(!json.exists());
}

#[test]
fn calibrate_measures_an_emulated_disk_and_a_real_file() {
    if !io_uring_or_skip("calibrate_measures") {
        return;
    }
    let d = scratch("cal");
    // Emulated: a coarse plan (2 distances per decade, 1 read each) keeps it to a second.
    let curve = d.join("curve.json");
    let out = succeed(
        bin()
            .args([
                "calibrate",
                "--emulate",
                "deskstar-34gxp",
                "--pairs",
                "1",
                "--per-decade",
                "2",
                "--out",
            ])
            .arg(&curve),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("accuracy_within_20pct"), "{stdout}");
    let c = antsched_core::PositioningCurve::load(&curve).unwrap();
    assert!(c.accuracy_within_20pct.is_some());
    // Three passes by default, their spread and the confidence in the output and the JSON.
    let q = c
        .calibration
        .as_ref()
        .expect("the calibration's quality is in the JSON");
    assert_eq!(q["passes"], 3, "{q}");
    assert_eq!(q["pass_accuracy"].as_array().map(Vec::len), Some(3), "{q}");
    for key in [
        "spread_median",
        "spread_max",
        "confidence",
        "wake_late_p50_us",
        "wake_late_p99_us",
        "late_fraction",
        "remeasured",
        "disturbed_fraction",
    ] {
        assert!(q[key].is_number(), "{key}: {q}");
    }
    assert!(
        stdout.contains("passes: 3") && stdout.contains("confidence"),
        "{stdout}"
    );
    // A seek across the disk costs more than a short hop, milliseconds on a 7,200 rpm disk.
    assert!(
        c.time_at(30_000_000) > c.time_at(100).max(2_000_000),
        "{c:?}"
    );
    // The curve is what a scheduler SPEC reads.
    let spec = format!("as-sptf:estimator={}", curve.display());
    assert!(antsched_core::build(&spec, &Default::default()).is_ok());

    // A real file on this machine: 8 MiB of data (holes would not touch the device).
    let img = d.join("real.img");
    let data: Vec<u8> = (0..8u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&img, data).unwrap();
    let real_curve = d.join("real.json");
    let mut out = bin()
        .args([
            "calibrate",
            img.to_str().unwrap(),
            "--pairs",
            "2",
            "--per-decade",
            "3",
            "--out",
        ])
        .arg(&real_curve)
        .output()
        .unwrap();
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("O_DIRECT") {
        eprintln!("the temporary directory refuses O_DIRECT; calibrating buffered");
        out = bin()
            .args([
                "calibrate",
                img.to_str().unwrap(),
                "--buffered",
                "--pairs",
                "2",
                "--per-decade",
                "3",
                "--out",
            ])
            .arg(&real_curve)
            .output()
            .unwrap();
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = antsched_core::PositioningCurve::load(&real_curve).unwrap();
    assert!(!c.points.is_empty());
    assert!(
        c.accuracy_within_20pct.is_none(),
        "no model to score a real device against"
    );
}

/// Ctrl-C during a comparison once exited 130 with nothing, even after earlier schedulers had
/// finished. Now the finished rows are printed and their JSON written, marked interrupted.
#[test]
fn an_interrupted_run_reports_the_schedulers_that_finished() {
    use std::io::{BufRead, BufReader};
    if !io_uring_or_skip("an_interrupted_run_reports") {
        return;
    }
    let d = scratch("interrupt");
    let job = d.join("job.fio");
    std::fs::write(&job, "[a]\nrw=read\nbs=64k\nsize=8m\nfilename=a.dat\n").unwrap();
    let json = d.join("out.json");
    let mut cmd = bin();
    cmd.args([
        "run",
        job.to_str().unwrap(),
        "--backend",
        "emulated:deskstar-34gxp",
    ])
    .arg("--dir")
    .arg(d.join("files"))
    .args(["--runtime", "300ms", "--json"])
    .arg(&json);
    for _ in 0..20 {
        cmd.args(["--scheduler", "noop"]);
    }
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The job's files are made first; the twenty 300 ms runs take six seconds after that.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.contains("created"), "{line}");
    std::thread::sleep(std::time::Duration::from_secs(3));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert_eq!(out.status.code(), Some(130), "{rest}");
    assert!(rest.contains("interrupted"), "{rest}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let n = v["runs"].as_array().unwrap().len();
    assert!((1..20).contains(&n), "{n} runs finished of 20 in 3 s");
    assert_eq!(v["interrupted"], true);
    assert_eq!(stdout.matches("noop").count(), n, "{stdout}");
}

/// Peak resident memory, in KiB, of `antsched ARGS` (from the kernel's accounting of the
/// child, as `/usr/bin/time -f %M` reports it), and its standard error.
#[allow(clippy::zombie_processes)] // reaped by wait4, which std's Child does not know of
fn peak_rss_kib(args: &[&std::ffi::OsStr]) -> (i64, String) {
    let err = tempfile_path("stderr");
    let child = bin()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: zeroed is a valid rusage; wait4 fills it for our own child, which we reap here
    // (std's Child is never waited for afterwards).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    let stderr = std::fs::read_to_string(&err).unwrap();
    let _ = std::fs::remove_file(&err);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "antsched failed: {stderr}"
    );
    (usage.ru_maxrss, stderr)
}

fn tempfile_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("antsched-cli-{}-{name}", std::process::id()))
}

/// `antsched run` once mapped and locked the job's whole files: two 1 GB files cost 2.1 GB
/// resident for a 5 s run, and two 2 GB files were killed in a 3 GB cgroup. The same short job
/// (2 MiB read) over an 8 MiB file and over a 2 GiB file must cost the same memory: what is
/// in flight, not the file. The 2 GiB file is sparse, with the job's content where the job
/// reads and where `antsched run` samples it to decide the file is whole (so it is reused,
/// not written out).
#[test]
fn run_memory_does_not_grow_with_file_size() {
    use std::io::{Seek, SeekFrom, Write};
    if !io_uring_or_skip("run_memory_does_not_grow_with_file_size") {
        return;
    }
    let d = scratch("rss");
    let files = d.join("files");
    std::fs::create_dir_all(&files).unwrap();
    const BIG: u64 = 2 << 30;
    {
        let seed = antsched_io::content::seed_of("big.dat");
        let mut f = std::fs::File::create(files.join("big.dat")).unwrap();
        f.set_len(BIG).unwrap();
        let mut buf = vec![0u8; 4 << 20];
        antsched_io::content::fill(seed, 0, &mut buf);
        f.write_all(&buf).unwrap();
        let sectors = BIG / 512;
        let mut sector = vec![0u8; 512];
        for k in 0..64u64 {
            let s = k * (sectors - 1) / 63;
            antsched_io::content::fill(seed, s * 512, &mut sector);
            f.seek(SeekFrom::Start(s * 512)).unwrap();
            f.write_all(&sector).unwrap();
        }
    }
    let run = |name: &str, size: &str| {
        let job = d.join(format!("{name}.fio"));
        std::fs::write(
            &job,
            format!(
                "[a]\nrw=read\nbs=64k\nsize={size}\nioengine=psync\nnumber_ios=32\nfilename={name}.dat\n"
            ),
        )
        .unwrap();
        let args: Vec<std::ffi::OsString> = vec![
            "run".into(),
            job.into(),
            "--backend".into(),
            "emulated:deskstar-34gxp".into(),
            "--dir".into(),
            files.clone().into(),
            "--scheduler".into(),
            "noop".into(),
            "--no-realtime".into(),
        ];
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        peak_rss_kib(&args)
    };
    let (small, _) = run("small", "8m");
    let (big, stderr) = run("big", "2g");
    assert!(
        !stderr.contains("created"),
        "the sparse file was taken as whole, not rewritten: {stderr}"
    );
    eprintln!("peak resident: {small} KiB with an 8 MiB file, {big} KiB with a 2 GiB file");
    assert!(
        big < small + 64 * 1024,
        "a 2 MiB read of a 2 GiB file took {big} KiB resident, against {small} KiB for an \
         8 MiB file: memory grows with the file"
    );
}
