//! The few system facts a run needs: its resident memory, its group's free memory, a mapping
//! of the database, and the memory hog.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::run::Hog;

pub const MEMCG_V1_ROOT: &str = "/sys/fs/cgroup/memory";

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// This process's resident memory and its anonymous part (resident minus file-backed), MiB.
pub fn rss_mb() -> (f64, f64) {
    let Ok(text) = std::fs::read_to_string("/proc/self/statm") else {
        return (0.0, 0.0);
    };
    let f: Vec<u64> = text
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let mb = |pages: u64| (pages * page_size()) as f64 / 1048576.0;
    match f.as_slice() {
        [_, resident, shared, ..] => (mb(*resident), mb(resident.saturating_sub(*shared))),
        _ => (0.0, 0.0),
    }
}

/// The peak resident memory (VmHWM), MiB.
pub fn peak_rss_mb() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// A v1 memory group's free memory: its limit minus its usage (as memd computes it).
pub fn group_free_bytes(group: &Path) -> Option<u64> {
    let read = |f: &str| -> Option<u64> {
        std::fs::read_to_string(group.join(f))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let limit = read("memory.limit_in_bytes")?;
    let usage = read("memory.usage_in_bytes")?;
    Some(limit.saturating_sub(usage))
}

/// A v1 memory group's limit and usage, bytes.
pub fn group_limit_usage(group: &Path) -> (Option<u64>, Option<u64>) {
    let read = |f: &str| -> Option<u64> {
        std::fs::read_to_string(group.join(f))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    (read("memory.limit_in_bytes"), read("memory.usage_in_bytes"))
}

/// A v1 memory group's peak usage.
pub fn group_peak_bytes(group: &Path) -> Option<u64> {
    std::fs::read_to_string(group.join("memory.max_usage_in_bytes"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// A read-only shared mapping of a whole file.
pub struct Mmap {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Mmap {
    pub fn file(path: &Path) -> anyhow::Result<Self> {
        use std::os::fd::AsRawFd;
        let f =
            std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let len = f
            .metadata()
            .with_context(|| format!("cannot stat {}", path.display()))?
            .len() as usize;
        if len == 0 {
            anyhow::bail!("{} is empty", path.display());
        }
        // Start cold: the file's pages that no one maps are dropped from the page cache, so
        // that the run reads them again and they are charged to this run's memory group (a
        // page stays charged to the group that first read it, which may be gone).
        // SAFETY: an advice on a descriptor we own.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        // SAFETY: a new read-only mapping of a file we opened; the kernel picks the address.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("cannot map {}", path.display()));
        }
        Ok(Self { ptr, len })
    }

    /// Reads one byte of every page: the whole file faulted in through the mapping.
    pub fn touch(&self) -> u64 {
        let step = page_size() as usize;
        let mut sum = 0u64;
        let mut off = 0;
        while off < self.len {
            // SAFETY: off < len, inside the mapping, which lives as long as self.
            sum = sum.wrapping_add(unsafe {
                std::ptr::read_volatile((self.ptr as *const u8).add(off))
            } as u64);
            off += step;
        }
        sum
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `file`, unmapped once.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// Starts the hog: this program's `hog` subcommand, a child in the same memory group (a
/// child inherits its parent's cgroups), killed by the kernel if this process dies first.
pub fn spawn_hog(h: &Hog) -> anyhow::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().context("cannot find this program to start the hog")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args([
        "hog",
        "--mb",
        &h.mb.to_string(),
        "--rate-mb-s",
        &h.rate_mb_s.to_string(),
    ]);
    // SAFETY: prctl is async-signal-safe; it only sets this child's parent-death signal.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn().context("cannot start the hog")
}

/// The hog: takes `mb` MiB of anonymous memory at `rate_mb_s`, then writes all of it every
/// `retouch` (so it stays hot, younger than any S), until it is killed.
pub fn hog(mb: u64, rate_mb_s: f64, retouch: Duration) -> ! {
    let start = Instant::now();
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    for i in 0..mb {
        chunks.push(vec![1u8; 1 << 20]);
        let due = Duration::from_secs_f64((i + 1) as f64 / rate_mb_s.max(1e-3));
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    eprintln!(
        "query-cache hog: {mb} MiB taken in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    let mut round = 0u8;
    loop {
        std::thread::sleep(retouch);
        round = round.wrapping_add(1);
        for c in &mut chunks {
            for b in c.iter_mut().step_by(4096) {
                *b = round;
            }
        }
    }
}
