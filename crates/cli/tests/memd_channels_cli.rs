//! `antsched memd --pressure-socket` and `antsched mem run --sigmem --memory-pressure` as a
//! user runs them: the built binary on temporary sockets.

mod common;
use common::{bin, cannot_run, scratch, start_memd};

use std::process::Stdio;

/// CMD sees `$MEMORY_PRESSURE_WATCH` naming memd's pressure socket and systemd's default
/// trigger in `$MEMORY_PRESSURE_WRITE`; `mem run` registers it for SIGMEM on its group's
/// domain; the pressure socket goes with the daemon on SIGTERM; a signal that is not a
/// real-time one is refused before anything runs.
#[test]
fn mem_run_points_cmd_at_the_pressure_socket_and_registers_sigmem() {
    if !std::path::Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").is_file() {
        cannot_run("no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory");
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        cannot_run("not root: cannot make a memory cgroup");
        return;
    }
    let dir = scratch("channels");
    let sock = dir.join("memd.sock");
    let pressure = dir.join("memory-pressure.sock");
    let mut d = start_memd(
        &sock,
        "100ms",
        &["--pressure-socket".as_ref(), pressure.as_os_str()],
        Stdio::piped(),
        &[&pressure],
    );
    let out = bin()
        .args(["mem", "run", "--sigmem", "--memory-pressure"])
        .arg(&pressure)
        .arg("--socket")
        .arg(&sock)
        .args([
            "--",
            "sh",
            "-c",
            "echo \"$MEMORY_PRESSURE_WATCH\"; echo \"$MEMORY_PRESSURE_WRITE\"",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout,
        format!("{}\nc29tZSAyMDAwMDAgMjAwMDAwMAA=\n", pressure.display())
    );
    let rt = libc::SIGRTMIN() + 8;
    assert!(stderr.contains(&format!("SIGMEM {rt} to ")), "{stderr}");

    let out = bin()
        .args(["mem", "run", "--sigmem", "9", "--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--sigmem \"9\": not a real-time signal"),
        "{err}"
    );

    // SAFETY: signalling the daemon this test started and has not reaped.
    unsafe { libc::kill(d.0.id() as i32, libc::SIGTERM) };
    let status = d.0.wait().unwrap();
    let mut log = String::new();
    std::io::Read::read_to_string(&mut d.0.stderr.take().unwrap(), &mut log).unwrap();
    assert!(status.success(), "{status}\n{log}");
    assert!(
        log.contains(&format!(
            "serving the systemd memory-pressure protocol at {}",
            pressure.display()
        )),
        "{log}"
    );
    assert!(
        log.contains(" sigmem ")
            && log.contains(&format!(" {rt} /sys/fs/cgroup/memory/antsched/run-")),
        "{log}"
    );
    assert!(!pressure.exists() && !sock.exists());
}
