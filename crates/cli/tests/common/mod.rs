//! What the command-line tests share: the binary, scratch directories, and checks.
// Each test file uses the part it needs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `antsched` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_antsched"))
}

/// Runs `cmd` and returns what it printed, failing the test with its standard error unless
/// it succeeded.
pub fn succeed(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The repository's root (for `examples/` and `data/`).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// An empty directory of this test process's own, under the system's temporary directory,
/// removed when the test ends, unless it fails: what a failed run left is kept to look at.
pub fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("antsched-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

/// A directory of [`scratch`]: a path, and the directory's removal when dropped.
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
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

/// A daemon the test started, killed if the test fails half-way.
pub struct Daemon(pub std::process::Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A test that cannot run here: skipped with the reason printed, or a failure under
/// `ANTSCHED_REQUIRE_FUSE=1` (CI, whose machines can run it). Returns true.
pub fn cannot_run(why: &str) -> bool {
    if std::env::var("ANTSCHED_REQUIRE_FUSE").as_deref() == Ok("1") {
        panic!("ANTSCHED_REQUIRE_FUSE=1 but the test cannot run: {why}");
    }
    eprintln!("skipping: {why}");
    true
}

/// Starts `antsched memd` on `sock` with a tick of `interval` and the `extra` arguments, its
/// stderr to `stderr`, and waits until `sock` and every path in `wait_for` exist (or it
/// exits, which fails the test). Its state file is beside the socket, so that it never
/// restores a real daemon's limits.
pub fn start_memd(
    sock: &std::path::Path,
    interval: &str,
    extra: &[&std::ffi::OsStr],
    stderr: std::process::Stdio,
    wait_for: &[&std::path::Path],
) -> Daemon {
    let mut d = Daemon(
        bin()
            .args(["memd", "--interval", interval, "--socket"])
            .arg(sock)
            .arg("--state")
            .arg(sock.with_file_name("memd.state"))
            .args(extra)
            .stderr(stderr)
            .spawn()
            .unwrap(),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !sock.exists() || !wait_for.iter().all(|p| p.exists()) {
        assert!(std::time::Instant::now() < deadline, "no socket");
        assert!(d.0.try_wait().unwrap().is_none(), "memd exited");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    d
}
