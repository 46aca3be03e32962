//! What the C tests share: a daemon on a temporary socket with a source the test sets, the
//! C compiler (or the reason there is none), and where cargo put the libraries.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use antsched_core::Nanos;
use antsched_mem::cost::PagingCost;
use antsched_mem::record::{Estimator, Observation};
use antsched_memd::{Config, Daemon, ObservationSource, SourceError, Stopper};

/// A domain the test sets: free bytes, total bytes and the candidate age.
#[derive(Clone)]
pub struct Fake(Arc<Mutex<(u64, u64, f64)>>);

impl Fake {
    pub fn new(free: u64, total: u64, age: f64) -> Self {
        Self(Arc::new(Mutex::new((free, total, age))))
    }
    pub fn set(&self, free: u64, total: u64, age: f64) {
        *self.0.lock().unwrap() = (free, total, age);
    }
}

impl ObservationSource for Fake {
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
        let (free, total, age) = *self.0.lock().unwrap();
        Ok(Observation {
            free_bytes: free,
            total_bytes: total,
            candidate_age_s: age,
            paging: PagingCost {
                disk_service_s: 0.008,
                disk_queue: 12.0,
            },
            estimator: Estimator::Exact,
            time: now,
        })
    }
}

/// A daemon on its own thread, stopped when dropped.
pub struct Running {
    pub socket: PathBuf,
    stopper: Stopper,
    thread: Option<JoinHandle<Result<(), antsched_memd::Error>>>,
}

impl Running {
    pub fn start(config: Config, source: Box<dyn ObservationSource>) -> Self {
        let socket = config.socket.clone();
        let mut daemon = Daemon::bind(config, source).unwrap();
        let stopper = daemon.stopper();
        let thread = std::thread::spawn(move || daemon.run());
        Self {
            socket,
            stopper,
            thread: Some(thread),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stopper.stop();
            let _ = t.join();
        }
    }
}

/// A 50 ms tick, no logging.
pub fn config(dir: &Path) -> Config {
    Config {
        interval: Duration::from_millis(50),
        log: false,
        ..Config::new(dir.join("memd.sock"))
    }
}

/// A directory of the test's own, removed when the test passes.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        let d =
            std::env::temp_dir().join(format!("antsched-memd-ffi-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Self(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `target/<profile>/deps`, where cargo put this crate's libraries when it built its tests
/// (beside the test binary; `cargo build` copies them one level up, `cargo test` does not).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().to_path_buf()
}

/// The C compiler, or why the test cannot run. A machine without one skips with the reason
/// printed; under `ANTSCHED_REQUIRE_FUSE=1` (CI, whose machines have cc) it fails instead.
pub fn cc_or_skip(test: &str) -> Option<String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    match Command::new(&cc).arg("--version").output() {
        Ok(o) if o.status.success() => Some(cc),
        other => {
            let why = format!("no C compiler ({cc}: {:?})", other.map(|o| o.status));
            if std::env::var("ANTSCHED_REQUIRE_FUSE").as_deref() == Ok("1") {
                panic!("{test}: {why}, and ANTSCHED_REQUIRE_FUSE=1 forbids skipping");
            }
            eprintln!("skipping {test}: {why}");
            None
        }
    }
}

/// Compiles `source` (C) to `out` with `args`; panics with the compiler's output.
pub fn compile(cc: &str, source: &Path, out: &Path, args: &[&str]) {
    let o = Command::new(cc)
        .arg("-std=c11")
        .arg("-D_GNU_SOURCE")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-O1")
        .arg("-o")
        .arg(out)
        .arg(source)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{cc} failed on {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}
