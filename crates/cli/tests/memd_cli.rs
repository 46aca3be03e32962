//! `antsched memd` and `antsched mem status` as a user (or systemd) runs them: the built
//! binary on a temporary socket, stopped by SIGTERM.

mod common;
use common::{bin, cannot_run, scratch, start_memd, succeed, Daemon};

use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn memd_serves_status_and_stops_on_sigterm() {
    let dir = scratch("run");
    let sock = dir.join("memd.sock");
    let mut d = start_memd(&sock, "200ms", &[], Stdio::piped(), &[]);
    let out = succeed(
        bin()
            .args(["mem", "status", "--json", "--socket"])
            .arg(&sock),
    );
    let all: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // One object per domain; the machine first.
    let v = &all[0];
    assert_eq!(v["domain"], "machine", "{all}");
    for key in antsched_mem::record::KEYS {
        assert!(v.get(key).is_some_and(|x| !x.is_null()), "{key}: {v}");
    }
    assert_eq!(v["estimator"], "turnover");
    let s = v["severity_s"].as_f64().unwrap();
    assert!((5.0..=3600.0).contains(&s), "{v}");

    let out = succeed(bin().args(["mem", "status", "--socket"]).arg(&sock));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("domain         machine\nseverity "),
        "{text}"
    );
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
    assert!(log.contains("client 1 listed the domains"), "{log}");
    assert!(
        log.contains("client 2 listed the domains' nice values"),
        "{log}"
    );
    assert!(log.contains("client 3 subscribed to machine"), "{log}");
    assert!(log.contains("stopped; removed"), "{log}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = scratch("bad");
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
        .args(["memd", "--cgroup"])
        .arg(&dir)
        .arg("--socket")
        .arg(dir.join("memd.sock"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("is not a memory cgroup: it has neither v1's memory.limit_in_bytes"),
        "{err}"
    );

    let out = bin()
        .args(["mem", "status", "--socket"])
        .arg(dir.join("memd.sock"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("is antsched memd running?"), "{err}");
    assert!(!dir.join("memd.sock").exists());

    let out = bin()
        .args(["mem", "watch", "--socket"])
        .arg(dir.join("memd.sock"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("is antsched memd running?"), "{err}");
    for (flag, value, says) in [
        (
            "--interval",
            "0",
            "--interval \"0\": the interval must be above zero",
        ),
        ("--duration", "soon", "--duration \"soon\""),
    ] {
        let out = bin()
            .args(["mem", "watch", flag, value, "--socket"])
            .arg(dir.join("memd.sock"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{err}");
    }
    let out = bin()
        .args(["mem", "watch", "--plot"])
        .arg(dir.join("missing/watch"))
        .arg("--socket")
        .arg(dir.join("memd.sock"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("missing does not exist"),
        "{err}"
    );
}

/// `--s-max` scales S_max: no domain's S nor candidate age passes it (the machine's S is
/// S_max itself when free memory is above tau); a value below S_min or without a unit is an
/// error that names the flag.
#[test]
fn s_max_is_scaled_and_checked() {
    let dir = scratch("smax");
    for (value, says) in [
        ("1s", "--s-max \"1s\": S_max must be at least S_min, 5 s"),
        ("0", "--s-max \"0\": S_max must be at least S_min, 5 s"),
        ("60", "--s-max \"60\": \"60\" has no unit"),
        ("soon", "--s-max \"soon\""),
    ] {
        let out = bin()
            .args(["memd", "--s-max", value, "--socket"])
            .arg(dir.join("memd.sock"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{value}: {err}"
        );
        assert!(!dir.join("memd.sock").exists());
    }
    let sock = dir.join("memd.sock");
    let _d = start_memd(
        &sock,
        "100ms",
        &["--s-max".as_ref(), "60s".as_ref()],
        Stdio::null(),
        &[],
    );
    std::thread::sleep(Duration::from_millis(300));
    let out = succeed(
        bin()
            .args(["mem", "status", "--json", "--socket"])
            .arg(&sock),
    );

    let all: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &all[0];
    let s = v["severity_s"].as_f64().unwrap();
    let age = v["candidate_age_s"].as_f64().unwrap();
    assert!((5.0..=60.0).contains(&s) && age <= 60.0, "{v}");
    if v["tier"] == "plenty" {
        assert_eq!(s, 60.0, "{v}");
    }
}

/// Starts `antsched memd` on `sock` with a tick of `interval`, its log discarded.
fn memd(sock: &std::path::Path, interval: &str) -> Daemon {
    start_memd(sock, interval, &[], Stdio::null(), &[])
}

/// A file that exists and holds more than nothing.
fn non_empty(path: &std::path::Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() > 0)
}

/// `antsched mem watch` against a running memd: with `--json`, one object a line with the
/// record's keys and the domain, records in time order; the plot written on exit, at the
/// end of `--duration` or on SIGTERM; an unknown domain named.
#[test]
fn mem_watch_prints_json_lines_and_writes_the_plot() {
    let dir = scratch("watch");
    let sock = dir.join("memd.sock");
    let _d = memd(&sock, "200ms");

    let stem = dir.join("watch");
    let out = bin()
        .args([
            "mem",
            "watch",
            "--duration",
            "2s",
            "--interval",
            "250ms",
            "--json",
        ])
        .arg("--plot")
        .arg(&stem)
        .arg("--socket")
        .arg(&sock)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    // A line at the start and one every 250 ms for 2 s.
    assert!(lines.len() >= 5, "{stdout}");
    for v in &lines {
        for key in antsched_mem::record::KEYS {
            assert!(v.get(key).is_some_and(|x| !x.is_null()), "{key}: {v}");
        }
        assert_eq!(v["domain"], "machine", "{v}");
        assert_eq!(v["estimator"], "turnover", "{v}");
    }
    let times: Vec<u64> = lines.iter().map(|v| v["time"].as_u64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    // The daemon's tick is 200 ms: two seconds show several records, not one.
    assert!(times.first() < times.last(), "{times:?}");
    for ext in ["png", "svg"] {
        assert!(non_empty(&stem.with_extension(ext)), "{ext}\n{stderr}");
    }
    let png = std::fs::read(stem.with_extension("png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");

    // Without --duration it runs until SIGTERM, then writes the plot and exits 0.
    let stem = dir.join("until-term");
    let mut watch = Daemon(
        bin()
            .args(["mem", "watch", "--interval", "100ms", "--plot"])
            .arg(&stem)
            .arg("--socket")
            .arg(&sock)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stdout = std::io::BufReader::new(watch.0.stdout.take().unwrap());
    let mut header = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut header).unwrap();
    assert!(header.trim_start().starts_with("time_s"), "{header}");
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    assert!(first.contains("turnover"), "{first}");
    // SAFETY: signalling the child this test started, by its pid.
    unsafe { libc::kill(watch.0.id() as libc::pid_t, libc::SIGTERM) };
    let status = watch.0.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(watch.0.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{status:?}: {err}");
    assert!(err.contains("signal 15"), "{err}");
    for ext in ["png", "svg"] {
        assert!(non_empty(&stem.with_extension(ext)), "{ext}\n{err}");
    }

    let out = bin()
        .args(["mem", "watch", "--domain", "/no/such/group", "--socket"])
        .arg(&sock)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("no domain \"/no/such/group\""),
        "{err}"
    );
}

/// Whether this machine and user can make v1 memory groups; says why not when not.
fn can_make_memory_groups() -> bool {
    if !std::path::Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").is_file() {
        cannot_run("no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory");
        return false;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        cannot_run("not root: cannot make a memory cgroup");
        return false;
    }
    true
}

/// `antsched mem run` puts CMD in a new group with the limit asked, a running memd governs
/// it (its status lists the group), the group is gone when CMD exits, and the exit status
/// is CMD's.
#[test]
fn mem_run_runs_a_command_in_a_governed_group_and_removes_it() {
    if !can_make_memory_groups() {
        return;
    }
    let dir = scratch("memrun");
    let sock = dir.join("memd.sock");
    let _d = memd(&sock, "100ms");
    // CMD prints its memory cgroup, waits until memd's status lists that group, then
    // exits 7.
    let script = format!(
        "g=$(grep ':memory:' /proc/self/cgroup | cut -d: -f3); echo \"$g\"; \
         cat /sys/fs/cgroup/memory$g/memory.limit_in_bytes; \
         for i in $(seq 100); do {bin} mem status --json --socket {sock} | grep -q \"memory$g\\\"\" && echo governed && break; sleep 0.1; done; \
         {bin} mem status --json --socket {sock} > {status}; exit 7",
        bin = env!("CARGO_BIN_EXE_antsched"),
        sock = sock.display(),
        status = dir.join("status.json").display()
    );
    let out = bin()
        .args(["mem", "run", "--limit", "64M", "--nice", "10", "--socket"])
        .arg(&sock)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{stdout}\n{stderr}");
    let mut lines = stdout.lines();
    let group = lines.next().unwrap();
    assert!(group.starts_with("/antsched/run-"), "{stdout}");
    assert_eq!(lines.next(), Some("67108864"), "{stdout}");
    assert_eq!(lines.next(), Some("governed"), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("memd governs /sys/fs/cgroup/memory/antsched/run-"),
        "{stderr}"
    );
    assert!(
        stderr.contains("memd set nice 10 cgroup /sys/fs/cgroup/memory/antsched/run-"),
        "{stderr}"
    );
    // The status shows the group with its nice, weight, class, usage and weighted age.
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("status.json")).unwrap()).unwrap();
    let g = all
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["domain"].as_str().is_some_and(|d| d.ends_with(group)))
        .unwrap_or_else(|| panic!("the group in {all}"));
    assert_eq!(g["nice"], 10.0, "{g}");
    let weight = g["weight"].as_f64().unwrap();
    assert!((weight - 2f64.powf(7.5)).abs() < 1e-6, "{g}");
    assert_eq!(g["class"], "normal", "{g}");
    assert!(g["usage_bytes"].as_u64().is_some_and(|u| u > 0), "{g}");
    let age = g["candidate_age_s"].as_f64().unwrap();
    assert!(
        (g["weighted_age_s"].as_f64().unwrap() - age * weight).abs() < 1e-6 * age * weight,
        "{g}"
    );
    // The machine has none of them.
    assert!(all[0].get("nice").is_none(), "{all}");
    assert!(
        stderr.contains("removed /sys/fs/cgroup/memory/antsched/run-"),
        "{stderr}"
    );
    assert!(!std::path::Path::new(&format!("/sys/fs/cgroup/memory{group}")).exists());

    // Without a daemon it still runs; bad input is named.
    let out = bin()
        .args(["mem", "run", "--socket"])
        .arg(dir.join("none.sock"))
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("running without it"));
    let out = bin()
        .args(["mem", "run", "--nice", "20", "--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--nice 20: memory nice 20 is outside -20..=19"),
        "{err}"
    );
    let out = bin()
        .args(["mem", "run", "--limit", "lots", "--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("bad size \"lots\""),
        "{err}"
    );
}

/// A `mem run` inside a `mem run` group nests: the inner group is made inside the outer one
/// (so it is charged to and limited by it), the daemon governs both, and both are gone when
/// the commands exit.
#[test]
fn mem_run_inside_a_mem_run_group_nests_its_group() {
    if !can_make_memory_groups() {
        return;
    }
    let dir = scratch("memrun-nest");
    let sock = dir.join("memd.sock");
    let _d = memd(&sock, "100ms");
    let bin_path = env!("CARGO_BIN_EXE_antsched");
    let inner = format!(
        "grep ':memory:' /proc/self/cgroup | cut -d: -f3; \
         {bin_path} mem status --json --socket {sock} > {status}",
        sock = sock.display(),
        status = dir.join("status.json").display()
    );
    let out = bin()
        .args(["mem", "run", "--limit", "64M", "--socket"])
        .arg(&sock)
        .args(["--", bin_path, "mem", "run", "--nice", "14", "--socket"])
        .arg(&sock)
        .args(["--", "sh", "-c", &inner])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let group = stdout.lines().next().unwrap_or_default();
    let parts: Vec<&str> = group.split('/').collect();
    assert!(
        parts.len() == 4
            && parts[1] == "antsched"
            && parts[2].starts_with("run-")
            && parts[3].starts_with("run-"),
        "{stdout}"
    );
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("status.json")).unwrap()).unwrap();
    let domains: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["domain"].as_str())
        .collect();
    let outer = format!("/sys/fs/cgroup/memory/{}/{}", parts[1], parts[2]);
    assert!(domains.contains(&outer.as_str()), "{all}");
    let nested = all
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["domain"].as_str().is_some_and(|d| d.ends_with(group)))
        .unwrap_or_else(|| panic!("the nested group in {all}"));
    assert_eq!(nested["class"], "low", "{nested}");
    assert!(!std::path::Path::new(&outer).exists(), "{outer} is left");
}

/// `antsched mem nice`: a good request is confirmed with the weight; a nice out of range, a
/// missing process, a group outside antsched's parent and a missing daemon are each an
/// error that names what was wrong, with a non-zero exit, and the daemon keeps serving.
#[test]
fn mem_nice_sets_a_nice_and_names_what_is_wrong() {
    let dir = scratch("nice");
    let sock = dir.join("memd.sock");
    let mut d = memd(&sock, "200ms");
    let nice = |args: &[&str]| {
        let out = bin()
            .args(["mem", "nice"])
            .args(args)
            .arg("--socket")
            .arg(&sock)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let me = std::process::id().to_string();
    let (ok, out, err) = nice(&["-n", "4", &me]);
    assert!(ok, "{err}");
    assert_eq!(out, format!("nice 4 pid {me} weight 8\n"));

    let (ok, _, err) = nice(&["-n", "25", &me]);
    assert!(
        !ok && err.contains("-n 25: memory nice 25 is outside -20..=19"),
        "{err}"
    );
    let (ok, _, err) = nice(&["-n", "-21", &me]);
    assert!(
        !ok && err.contains("memory nice -21 is outside -20..=19"),
        "{err}"
    );
    let missing = (u32::MAX >> 1).to_string();
    let (ok, _, err) = nice(&["-n", "5", &missing]);
    assert!(
        !ok && err.contains(&format!("the daemon refused: no process {missing}")),
        "{err}"
    );
    let (ok, _, err) = nice(&["-n", "5", "--cgroup", "/sys/fs/cgroup/memory"]);
    assert!(!ok && err.contains("is not a group under"), "{err}");
    let (ok, _, err) = nice(&[
        "-n",
        "5",
        "--cgroup",
        "/sys/fs/cgroup/memory/antsched/../..",
    ]);
    assert!(!ok && err.contains("the daemon refused"), "{err}");
    let (ok, _, err) = nice(&["-n", "5", &me, "--cgroup", "/x"]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");
    assert!(d.0.try_wait().unwrap().is_none(), "memd exited");
    let out = bin()
        .args(["mem", "status", "--socket"])
        .arg(&sock)
        .output()
        .unwrap();
    assert!(out.status.success(), "the daemon stopped serving");

    let out = bin()
        .args(["mem", "nice", "-n", "3", &me, "--socket"])
        .arg(dir.join("none.sock"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("is antsched memd running?"),
        "{err}"
    );
}
