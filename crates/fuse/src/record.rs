//! `antsched mount --record FILE`: every disk request the mount made, as a fio version 3 I/O
//! log, so that a real program's run on the emulated disk can be replayed under every
//! scheduler (`antsched sim --trace FILE`, see `docs/traces.md`).
//!
//! The log names one file, [`DISK`], and its offsets are bytes of the emulated disk (sector
//! times 512), not of the files the program used: the replay places the first file a log names
//! at sector 0, so it addresses the disk exactly as the mount's layout did. Timestamps are
//! microseconds from the mount's start, at each request's issue (fio's v3 clock). A line is
//! written once the request has completed, so lines of concurrent requests may be slightly out
//! of order; the replay takes a time earlier than its predecessor's as no gap.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use antsched_core::{Nanos, Op};

/// The name the log gives the emulated disk.
pub const DISK: &str = "/dev/antsched";

pub struct Recorder {
    path: PathBuf,
    out: Mutex<BufWriter<File>>,
}

impl Recorder {
    /// Creates (or truncates) `path` and writes the log's header.
    pub fn create(path: &Path) -> std::io::Result<Recorder> {
        let mut out = BufWriter::new(File::create(path)?);
        writeln!(out, "fio version 3 iolog")?;
        writeln!(out, "0 {DISK} add")?;
        writeln!(out, "0 {DISK} open")?;
        Ok(Recorder {
            path: path.to_path_buf(),
            out: Mutex::new(out),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Notes the disk requests `runs` (sector, sectors) of one application I/O, issued at
    /// `issued` (ns since the mount's start). A failed write is said once, on stderr, rather
    /// than failing the program's I/O: the recording is the observer, not the service.
    pub fn note(&self, op: Op, issued: Nanos, runs: &[(u64, u64)]) {
        let action = match op {
            Op::Read => "read",
            Op::Write => "write",
        };
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        for &(sector, sectors) in runs {
            let r = writeln!(
                out,
                "{} {DISK} {action} {} {}",
                issued / 1000,
                sector * 512,
                sectors * 512
            );
            if let Err(e) = r {
                eprintln!("antsched: recording to {}: {e}", self.path.display());
            }
        }
    }

    /// Writes out what is buffered, with the log's closing line.
    pub fn finish(&self, now: Nanos) -> std::io::Result<()> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        writeln!(out, "{} {DISK} close", now / 1000)?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use antsched_sim::trace::{Format, TraceReader};

    /// What the mount records reads back, through the trace reader, as the disk requests it
    /// made: sectors of the emulated disk, issue times in microseconds.
    #[test]
    fn the_recording_is_a_fio_log_the_replay_reads() {
        let path =
            std::env::temp_dir().join(format!("antsched-record-{}.iolog", std::process::id()));
        let r = Recorder::create(&path).unwrap();
        r.note(Op::Read, 1_500_000, &[(2048, 128), (9000, 8)]);
        r.note(Op::Write, 2_000_000, &[(4096, 16)]);
        r.finish(3_000_000).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let reader = TraceReader::open(text.as_bytes(), "rec", None).unwrap();
        assert_eq!(reader.format(), Format::FioLog);
        let got: Vec<(u64, u64, u64, Op)> = reader
            .map(|r| r.unwrap())
            .map(|r| (r.time, r.sector, r.bytes, r.op))
            .collect();
        assert_eq!(
            got,
            vec![
                (1_500_000, 2048, 65536, Op::Read),
                (1_500_000, 9000, 4096, Op::Read),
                (2_000_000, 4096, 8192, Op::Write),
            ]
        );
    }
}
