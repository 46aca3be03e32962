//! What the tests in real memory groups share: the skip rule, the hog (this test binary run
//! again, serving commands on its stdin), a cold file to read through the page cache, and a
//! daemon in a thread of the test process.
//!
//! Each test file that uses the hog has a `#[test] fn hog_helper()` that calls
//! [`hog_helper_main`]: the hog is that test, selected by name, in a child process.

// Each test binary uses part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use antsched_core::Nanos;
use antsched_mem::record::Observation;
use antsched_memd::{connect_domain, ObservationSource, ProcSource, SourceError, Stopper};
use rustix::fs::Advice;

pub const MIB: u64 = 1 << 20;

/// Skips `test` (printing why) unless the CI flag says this machine must run it.
pub fn cannot_run(test: &str, why: &str) {
    if std::env::var("ANTSCHED_REQUIRE_FUSE").as_deref() == Ok("1") {
        panic!("ANTSCHED_REQUIRE_FUSE=1 but the {test} test cannot run: {why}");
    }
    eprintln!("skipping: {why}");
}

/// This binary again, running one helper test. On drop its stdin is closed (a hog's loop
/// ends, a daemon helper stops and restores), it gets 5 s to exit, then it is killed.
pub struct Helper {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Its replies, read by a thread so that a helper that does not answer fails the test
    /// instead of hanging it.
    replies: std::sync::mpsc::Receiver<String>,
}

impl Helper {
    pub fn spawn(helper: &str, env: &[(&str, String)]) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", helper, "--nocapture", "--test-threads=1"])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // The harness's own lines come too, and its "test hog_helper ... " may share a
            // line with the reply.
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(at) = line.find("HOG ") {
                    if tx.send(line[at + 4..].trim().to_string()).is_err() {
                        return;
                    }
                }
            }
        });
        Self {
            child,
            stdin,
            replies,
        }
    }

    /// The hog: [`hog_helper_main`] in a child, waiting on its stdin (so the test can move it
    /// into a group before it reads or allocates anything).
    pub fn hog() -> Self {
        Self::spawn("hog_helper", &[("ANTSCHED_MEMD_HOG", "1".into())])
    }

    /// Sends one command and returns what follows its `HOG ok`.
    pub fn say(&mut self, command: &str) -> String {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{command}").unwrap();
        stdin.flush().unwrap();
        match self.replies.recv_timeout(Duration::from_secs(120)) {
            Ok(reply) => match reply.strip_prefix("ok") {
                Some(rest) => rest.trim().to_string(),
                None => panic!("{command:?}: {reply}"),
            },
            Err(e) => panic!("the helper did not answer {command:?}: {e}"),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, and reap it.
    pub fn kill_9(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The hog's side, a command a line:
/// - `cache PATH KEEP` reads the file twice through the page cache (the group fills to its
///   limit and the kernel reclaims it, which is the turnover the estimate needs), then drops
///   all but its first KEEP bytes from the cache and reads those again, so that they are in
///   the group's cache;
/// - `read PATH` reads it once; `reread PATH` reads it again and again in a thread;
/// - `alloc N` allocates and touches N more bytes of anonymous memory and keeps them;
/// - `map N` does the same in a mapping of its own, and `unmap` gives the last such mapping
///   back to the kernel at once (glibc would keep freed blocks of that size in its heap);
/// - `subscribe SOCKET DOMAIN` subscribes this process; `severity` answers the `time` and S
///   of its page; `wait MS` the count of its eventfd after waiting up to MS ms;
/// - `exit` ends the loop.
///
/// Does nothing unless `ANTSCHED_MEMD_HOG` is set.
pub fn hog_helper_main() {
    if std::env::var_os("ANTSCHED_MEMD_HOG").is_none() {
        return;
    }
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut mapped: Vec<(usize, usize)> = Vec::new();
    let mut client = None;
    let mut buf = vec![0u8; 1 << 20];
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut reply = String::new();
        match words.as_slice() {
            ["cache", path, keep] => {
                let keep: u64 = keep.parse().unwrap();
                read_once(path, &mut buf, Advice::Random);
                read_once(path, &mut buf, Advice::Random);
                let f = std::fs::File::open(path).unwrap();
                let len = f.metadata().unwrap().len();
                rustix::fs::fadvise(
                    &f,
                    keep,
                    std::num::NonZeroU64::new(len - keep),
                    rustix::fs::Advice::DontNeed,
                )
                .unwrap();
                let mut f = std::fs::File::open(path).unwrap();
                let mut left = keep;
                while left > 0 {
                    let n = f.read(&mut buf[..left.min(1 << 20) as usize]).unwrap();
                    if n == 0 {
                        break;
                    }
                    left -= n as u64;
                }
            }
            ["read", path] => read_once(path, &mut buf, Advice::Normal),
            ["reread", path] => {
                let path = path.to_string();
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 1 << 20];
                    loop {
                        read_once(&path, &mut buf, Advice::Normal);
                    }
                });
            }
            ["alloc", n] => {
                let n: usize = n.parse().unwrap();
                let mut v = vec![0u8; n];
                for i in (0..n).step_by(4096) {
                    v[i] = 1;
                }
                kept.push(v);
            }
            ["map", n] => {
                let n: usize = n.parse().unwrap();
                // SAFETY: a new private anonymous mapping at an address the kernel picks.
                let p = unsafe {
                    rustix::mm::mmap_anonymous(
                        std::ptr::null_mut(),
                        n,
                        rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                        rustix::mm::MapFlags::PRIVATE,
                    )
                }
                .unwrap();
                for i in (0..n).step_by(4096) {
                    // SAFETY: within the n bytes just mapped writable.
                    unsafe { p.cast::<u8>().add(i).write_volatile(1) };
                }
                mapped.push((p as usize, n));
            }
            ["unmap"] => {
                let (p, n) = mapped.pop().expect("unmap without a mapping");
                // SAFETY: a mapping made by `map` above, unmapped once.
                unsafe { rustix::mm::munmap(p as *mut std::ffi::c_void, n) }.unwrap();
            }
            ["subscribe", socket, domain] => {
                client = Some(connect_domain(socket, domain).unwrap());
            }
            ["severity"] => {
                let r = client.as_ref().unwrap().current();
                reply = format!(" {} {}", r.time, r.severity_s);
            }
            ["wait", ms] => {
                let ms: u64 = ms.parse().unwrap();
                let woken = client
                    .as_ref()
                    .unwrap()
                    .wait(Some(Duration::from_millis(ms)))
                    .unwrap();
                reply = format!(" {woken}");
            }
            ["exit"] => break,
            other => panic!("hog: unknown command {other:?}"),
        }
        println!("HOG ok{reply}");
        std::io::stdout().flush().unwrap();
    }
    std::hint::black_box(&kept);
    // A `reread` thread may still run: end the process, not just this test.
    std::process::exit(0);
}

/// Reads the file at `path` through `buf` once, with `advice` for the kernel's read-ahead.
/// The streaming hog of a small group reads with `Advice::Random` (read-ahead off, no more
/// than one read of `buf` in flight): machines of this kind set `read_ahead_kb` to 8192, a
/// window as large as the PSI test's 8 MB group, whose pages under I/O cannot be reclaimed,
/// and a slab allocation in the group then OOM-killed the hog (seen on CI: "the helper did
/// not answer").
fn read_once(path: &str, buf: &mut [u8], advice: Advice) {
    let mut f = std::fs::File::open(path).unwrap();
    rustix::fs::fadvise(&f, 0, None, advice).unwrap();
    while f.read(buf).unwrap() > 0 {}
}

/// A file of `len` bytes on disk (not tmpfs, whose pages cannot be reclaimed) and not in the
/// page cache, so that a hog's reads charge its pages to the hog's group; removed on drop.
pub struct ColdFile(pub PathBuf);

impl ColdFile {
    pub fn new(tag: &str, len: u64) -> Self {
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("antsched-memd-{tag}-{}.dat", std::process::id()));
        let file = Self(path.clone());
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![7u8; 1 << 20];
        for _ in 0..len / MIB {
            f.write_all(&chunk).unwrap();
        }
        f.sync_all().unwrap();
        rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed).unwrap();
        file
    }

    pub fn arg(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for ColdFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A daemon running in a thread of the test process; stopped when dropped.
pub struct Running {
    pub stopper: Stopper,
    pub thread: Option<JoinHandle<Result<(), antsched_memd::Error>>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stopper.stop();
            let _ = t.join();
        }
    }
}

/// A number from one of a group's files (`memory.usage_in_bytes`, ...).
pub fn number(group: &Path, file: &str) -> u64 {
    std::fs::read_to_string(group.join(file))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// This machine's `/proc` with its free memory reported as all of it, so that the machine
/// domain is never under pressure and a test of enforcement within groups it made is not
/// disturbed by the machine's own page cache: on a machine that has run for a while,
/// `MemFree` sits near the kernel's watermarks, below tau (10% of memory), and the daemon
/// would also take from the niced-down groups for the machine's sake.
pub struct QuietMachine(pub ProcSource);

impl ObservationSource for QuietMachine {
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
        let mut o = self.0.observe(now)?;
        o.free_bytes = o.total_bytes;
        Ok(o)
    }

    fn describe(&self) -> String {
        self.0.describe()
    }
}
