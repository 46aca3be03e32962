//! Helpers of the mount tests: skipping where FUSE cannot run (failing instead under
//! `ANTSCHED_REQUIRE_FUSE=1`), temporary directories, serving a mount on a thread, and
//! running real programs.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;

use antsched_fuse::{MountConfig, MountError, MountReport, Unmounter};

/// Whether this test can run here. Prints why not and returns false, or panics under
/// `ANTSCHED_REQUIRE_FUSE=1` (CI), where a skipped mount test would hide a broken machine.
pub fn fuse_or_skip(test: &str, tools: &[&str]) -> bool {
    let why = (|| {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Some("not root (mounting and the permission checks need root)".to_string());
        }
        if let Err(e) = antsched_fuse::fuse_device_ok() {
            return Some(e);
        }
        if let Err(e) = antsched_io::io_uring_available() {
            return Some(e);
        }
        for t in tools {
            let found = Command::new("sh")
                .arg("-c")
                .arg(format!("command -v {t}"))
                .output()
                .is_ok_and(|o| o.status.success());
            if !found {
                return Some(format!(
                    "{t} is not installed (apt-get install fuse3 fio sqlite3)"
                ));
            }
        }
        None
    })();
    match why {
        None => true,
        Some(why) if std::env::var("ANTSCHED_REQUIRE_FUSE").as_deref() == Ok("1") => {
            panic!("{test}: cannot run ({why}) and ANTSCHED_REQUIRE_FUSE=1 forbids skipping")
        }
        Some(why) => {
            eprintln!("skipping {test}: {why}");
            false
        }
    }
}

/// A fresh directory under the system's temporary directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(what: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "antsched-fuse-test-{}-{}-{what}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.0.join(p)
    }

    /// `backing/` and `mnt/` inside it, made: what every mount test starts from.
    pub fn backing_and_mountpoint(&self) -> (PathBuf, PathBuf) {
        let (b, m) = (self.join("backing"), self.join("mnt"));
        std::fs::create_dir_all(&b).unwrap();
        std::fs::create_dir_all(&m).unwrap();
        (b, m)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // A test that failed with its mount still up: detach it before removing anything
        // (remove_dir_all would otherwise delete the backing files through the mount).
        if let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") {
            for l in info.lines() {
                if let Some(point) = l.split(' ').nth(4) {
                    if Path::new(point).starts_with(&self.0) {
                        let _ = Command::new("umount").arg("-l").arg(point).status();
                    }
                }
            }
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A mount being served on its own thread.
pub struct Served {
    pub mountpoint: PathBuf,
    pub unmounter: Unmounter,
    pub reporter: Box<dyn Fn() -> MountReport + Send + Sync>,
    thread: Option<JoinHandle<Result<MountReport, Box<MountError>>>>,
}

/// A configuration for tests where timing is not the point: a fast disk, a simple scheduler.
pub fn fast_config(backing: &Path, mountpoint: &Path) -> MountConfig {
    let mut c = MountConfig::new(backing, mountpoint);
    c.disk = "nvme-ssd".into();
    c.scheduler = "noop".into();
    c
}

pub fn serve(cfg: &MountConfig) -> Served {
    let mount = antsched_fuse::mount(cfg).expect("mount");
    let unmounter = mount.unmounter();
    let reporter = Box::new(mount.reporter());
    let thread = std::thread::spawn(move || mount.serve().map_err(Box::new));
    Served {
        mountpoint: cfg.mountpoint.clone(),
        unmounter,
        reporter,
        thread: Some(thread),
    }
}

impl Served {
    /// Unmounts and returns the final statistics.
    pub fn unmount(mut self) -> MountReport {
        // Tests run as threads of one process, and a sibling test that spawns a program
        // copies every descriptor of the process into its child until the child's exec
        // closes them (they are close-on-exec, not absent). A file this test has just
        // closed on the mount can still be open in such a child for a moment, and the
        // unmount then fails with EBUSY: CI saw it once. Retry for a bounded time; a mount
        // that stays busy longer is a real leak and fails the test.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            match self.unmounter.unmount() {
                Ok(()) => break,
                Err(e)
                    if e.raw_os_error() == Some(libc::EBUSY)
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(50))
                }
                Err(e) => panic!("unmount: {e}"),
            }
        }
        self.thread
            .take()
            .unwrap()
            .join()
            .expect("the serving thread")
            .expect("serve")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = self.unmounter.detach();
            let _ = t.join();
        }
    }
}

/// Runs a shell command line, returning its output (stdout, stderr and status).
pub fn sh(cmd: &str) -> Output {
    Command::new("sh").arg("-c").arg(cmd).output().unwrap()
}

/// Runs a shell command line that must succeed; returns its stdout.
pub fn sh_ok(cmd: &str) -> String {
    let o = sh(cmd);
    assert!(
        o.status.success(),
        "`{cmd}` failed ({}): {}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The SHA-256 of a file, by `sha256sum`.
pub fn sha256(path: &Path) -> String {
    let out = sh_ok(&format!("sha256sum '{}'", path.display()));
    out.split_whitespace().next().unwrap().to_string()
}

/// Deterministic, non-repeating bytes.
pub fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Whether anything is mounted at `path`.
pub fn is_mounted(path: &Path) -> bool {
    let canon = std::fs::canonicalize(path).unwrap_or(path.to_path_buf());
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|l| l.split(' ').nth(4).is_some_and(|p| Path::new(p) == canon))
}
