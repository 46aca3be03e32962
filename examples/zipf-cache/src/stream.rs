//! A file streamed through the page cache at a set rate, in a loop: the turnover that gives a
//! memory group without swap a finite candidate age (anonymous memory cannot be reclaimed
//! there, so a group of caches alone would sit at S_max until the OOM killer came).

use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;

const CHUNK: usize = 1 << 20;

/// Reads `path` from the start again and again at `mb_s` MiB/s until `stop` is set (or for
/// ever). Its cached pages are dropped first, so that what it reads is charged to this
/// process's memory group. Returns the bytes read.
pub fn stream(path: &Path, mb_s: f64, stop: &AtomicBool) -> anyhow::Result<u64> {
    anyhow::ensure!(
        mb_s.is_finite() && mb_s > 0.0,
        "--mb-s {mb_s}: must be more than 0"
    );
    let mut f = std::fs::File::open(path)
        .with_context(|| format!("cannot open the stream file {}", path.display()))?;
    let len = f.metadata()?.len();
    anyhow::ensure!(len > 0, "{} is empty", path.display());
    // SAFETY: advice on a descriptor we hold.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    let mut buf = vec![0u8; CHUNK];
    let start = Instant::now();
    let mut total = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(0))?;
            continue;
        }
        total += n as u64;
        let due = Duration::from_secs_f64(total as f64 / (mb_s * 1048576.0));
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn streams_at_the_rate_and_loops() {
        let dir = std::env::temp_dir().join(format!("zipf-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f");
        std::fs::write(&file, vec![1u8; 3 << 20]).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let f = file.clone();
        let t = Instant::now();
        let h = std::thread::spawn(move || stream(&f, 20.0, &s));
        std::thread::sleep(Duration::from_millis(500));
        stop.store(true, Ordering::Relaxed);
        let bytes = h.join().unwrap().unwrap();
        let mb = bytes as f64 / 1048576.0;
        let secs = t.elapsed().as_secs_f64();
        // 20 MiB/s for about half a second: about 10 MiB, more than the 3 MiB file (it looped).
        assert!(mb > 5.0 && mb < 20.0 * secs + 2.0, "{mb} MiB in {secs} s");
        assert!(stream(&file, 0.0, &stop).is_err());
        assert!(stream(&dir.join("missing"), 1.0, &stop)
            .unwrap_err()
            .to_string()
            .contains("cannot open the stream file"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
