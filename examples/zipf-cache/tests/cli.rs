//! The `zipf-cache` binary as the bench runs it, without root: a short run with a fixed and an
//! adaptive cache (no memd), the JSON and the timeline; a run that follows a daemon on a
//! temporary socket (in this process, with a source the test sets) and releases at the S it is
//! told; and bad input, each an error that names it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use antsched_core::Nanos;
use antsched_mem::cost::PagingCost;
use antsched_mem::record::{Estimator, Observation};
use antsched_mem::sim::Popularity;
use antsched_mem::SeverityConfig;
use antsched_memd::{Config, Daemon, ObservationSource, SourceError};
use antsched_zipf_cache::run::{run, MissWork, RunConfig};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zipf-cache"))
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("zipf-cache-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

#[test]
fn a_fixed_cache_run_writes_its_json_and_timeline() {
    let dir = scratch("fixed");
    let (json, csv) = (dir.0.join("r.json"), dir.0.join("r.csv"));
    let out = bin()
        .args([
            "run",
            "--keys",
            "20000",
            "--duration",
            "1.5",
            "--fixed",
            "2M",
            "--window",
            "0.5",
            "--json",
        ])
        .arg(&json)
        .arg("--timeline")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for key in [
        "queries",
        "hits",
        "hit_rate",
        "queries_per_s",
        "miss_ms_measured",
        "peak_cache_mb",
        "cache_mb_mean",
        "second_half",
        "windows",
        "notifications",
        "released_mb",
    ] {
        assert!(r.get(key).is_some(), "{key}: {r}");
    }
    assert_eq!(r["policy"], "fixed:2M");
    assert!(r["hits"].as_u64().unwrap() > 0, "{r}");
    assert!(r["peak_cache_mb"].as_f64().unwrap() <= 2.0, "{r}");
    assert_eq!(r["windows"].as_array().unwrap().len(), 3, "{r}");
    // A miss sleeps C_r (0.2 ms by default): measured at least that.
    assert!(r["miss_ms_measured"].as_f64().unwrap() >= 0.2, "{r}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("time_s,severity_s,cache_mb,entries,rss_mb,queries,hits")
    );
    assert!(lines.count() >= 10, "{text}");
}

#[test]
fn an_adaptive_cache_without_memd_grows_and_says_so() {
    let out = bin()
        .args([
            "run",
            "--keys",
            "5000",
            "--duration",
            "0.5",
            "--miss-work",
            "spin",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("no one tells the cache S"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("zipf-cache adaptive: "), "{text}");
}

#[test]
fn bad_input_is_an_error_that_names_it() {
    let dir = scratch("bad");
    for (args, says) in [
        (vec!["--alpha", "0"], "--alpha 0"),
        (vec!["--keys", "0"], "--keys 0"),
        (vec!["--miss-ms=-1"], "--miss-ms -1"),
        (vec!["--duration", "0"], "--duration 0"),
        (vec!["--window", "nan"], "--window NaN"),
        (vec!["--s-max", "1"], "--s-max 1"),
        (vec!["--paging-disk-ms", "0"], "--paging-disk-ms 0"),
        (vec!["--round-mb", "0"], "--round-mb 0"),
        (vec!["--fixed", "lots"], "--fixed lots"),
        (vec!["--miss-work", "nap"], "nap"),
        (
            vec!["--popularity", "power-law", "--alpha", "1.2"],
            "must be below 1 with --popularity power-law",
        ),
        (vec!["--popularity", "pareto"], "pareto"),
    ] {
        let out = bin().arg("run").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{args:?}: {err}"
        );
    }
    let missing = dir.0.join("memd.sock");
    let out = bin()
        .args(["run", "--duration", "1", "--domain", "machine", "--socket"])
        .arg(&missing)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("cannot subscribe to memd's machine domain"),
        "{err}"
    );
    // An output that cannot be written is refused before the run, not after it.
    let t = std::time::Instant::now();
    let out = bin()
        .args(["run", "--duration", "30", "--json"])
        .arg(dir.0.join("missing/r.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("missing/r.json"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(10));
    for (args, says) in [
        (vec!["--mb-s", "0"], "--mb-s 0"),
        (vec!["--mb-s", "1"], "cannot open the stream file"),
    ] {
        let out = bin()
            .args(["stream", "--file"])
            .arg(dir.0.join("missing"))
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{args:?}: {err}"
        );
    }
}

/// The machine as the test sets it: no free memory, a candidate age of 12 s (so S = 12 s,
/// under S_max: the daemon repeats its notification every second).
struct Pressed(Arc<Mutex<f64>>);

impl ObservationSource for Pressed {
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
        Ok(Observation {
            free_bytes: 0,
            total_bytes: 1 << 30,
            candidate_age_s: *self.0.lock().unwrap(),
            paging: PagingCost {
                disk_service_s: 0.0001,
                disk_queue: 1.0,
            },
            estimator: Estimator::Exact,
            time: now,
        })
    }
}

/// The program follows a daemon: it is woken by the 1 s repeat, runs release rounds at the S
/// the page says (the timeline shows it), and releases what the cost rule prices below paging.
#[test]
fn the_cache_follows_memd_and_releases_at_the_s_it_is_told() {
    let dir = scratch("memd");
    let socket = dir.0.join("memd.sock");
    let age = Arc::new(Mutex::new(12.0));
    let config = Config {
        interval: Duration::from_millis(50),
        severity: SeverityConfig {
            s_max: 60.0,
            ..Default::default()
        },
        ..Config::new(&socket)
    };
    let mut daemon = Daemon::bind(config, Box::new(Pressed(age.clone()))).unwrap();
    let stopper = daemon.stopper();
    let thread = std::thread::spawn(move || daemon.run());
    let report = run(&RunConfig {
        keys: 20_000,
        alpha: 0.8,
        popularity: Popularity::Zipf,
        miss_ms: 0.2,
        miss_work: MissWork::Sleep,
        duration: Duration::from_secs_f64(2.5),
        socket: Some(socket.clone()),
        domain: Some(Path::new("machine").to_path_buf()),
        s_max: 60.0,
        paging_disk_ms: Some(0.1),
        fixed_bytes: None,
        round_bytes: 4 << 20,
        wait_file: None,
        seed: 3,
        window: Duration::from_secs(1),
        json: None,
        timeline: Some(dir.0.join("t.csv")),
    })
    .unwrap();
    stopper.stop();
    thread.join().unwrap().unwrap();
    assert!(report.memd);
    assert!(report.notifications >= 2, "{report:?}");
    assert!(report.rounds >= report.notifications, "{report:?}");
    // Values asked once before nothing else are priced p = 0 and go in the next round.
    assert!(report.released_mb > 0.0, "{report:?}");
    assert_eq!(report.second_half.severity_s_mean, Some(12.0), "{report:?}");
    assert!(report.hits > 0 && report.peak_cache_mb > 0.0, "{report:?}");
}
