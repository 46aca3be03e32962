//! `antsched memd` and `antsched mem status` as a user (or systemd) runs them: the built
//! binary on a temporary socket, stopped by SIGTERM.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_antsched"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("antsched-memd-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Removes a test's directory when the test passes.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Kills the daemon if a test fails half-way.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn memd_serves_status_and_stops_on_sigterm() {
    let dir = scratch("run");
    let _cleanup = Cleanup(dir.clone());
    let sock = dir.join("memd.sock");
    let mut d = Daemon(
        bin()
            .args(["memd", "--interval", "200ms", "--socket"])
            .arg(&sock)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !sock.exists() {
        assert!(Instant::now() < deadline, "no socket");
        assert!(d.0.try_wait().unwrap().is_none(), "memd exited");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = bin()
        .args(["mem", "status", "--json", "--socket"])
        .arg(&sock)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "version",
        "severity_s",
        "candidate_age_s",
        "free_bytes",
        "tau_bytes",
        "paging_cost",
        "disk_service_ms",
        "disk_queue",
        "tier",
        "estimator",
        "time",
    ] {
        assert!(v.get(key).is_some_and(|x| !x.is_null()), "{key}: {v}");
    }
    assert_eq!(v["estimator"], "turnover");
    let s = v["severity_s"].as_f64().unwrap();
    assert!((5.0..=3600.0).contains(&s), "{v}");

    let out = bin()
        .args(["mem", "status", "--socket"])
        .arg(&sock)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.starts_with("severity "), "{text}");
    assert!(text.contains("(estimator turnover)"), "{text}");

    // SIGTERM: a clean exit that removes the socket.
    // SAFETY: signalling the child this test started, by its pid.
    unsafe { libc::kill(d.0.id() as libc::pid_t, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = d.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "memd did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut log = String::new();
    std::io::Read::read_to_string(d.0.stderr.as_mut().unwrap(), &mut log).unwrap();
    assert!(status.success(), "{status:?}\n{log}");
    assert!(!sock.exists(), "{log}");
    assert!(log.contains("client 1 subscribed"), "{log}");
    assert!(log.contains("stopped; removed"), "{log}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = scratch("bad");
    let _cleanup = Cleanup(dir.clone());
    let out = bin()
        .args(["memd", "--socket"])
        .arg(dir.join("missing/memd.sock"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("the directory") && err.contains("missing does not exist"),
        "{err}"
    );

    let out = bin()
        .args(["memd", "--interval", "fast", "--socket"])
        .arg(dir.join("memd.sock"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--interval \"fast\""), "{err}");

    let out = bin()
        .args(["memd", "--disk", "nosuchdisk", "--socket"])
        .arg(dir.join("memd.sock"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no disk named \"nosuchdisk\""), "{err}");

    let out = bin()
        .args(["mem", "status", "--socket"])
        .arg(dir.join("memd.sock"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("is antsched memd running?"), "{err}");
    assert!(!dir.join("memd.sock").exists());
}
