//! `antsched mount --record FILE`: every disk request the mount made, as a fio version 3 I/O
//! log (or blkparse text), so that a real program's run on the emulated disk can be replayed
//! under every scheduler (`antsched sim --trace FILE`, see `docs/traces.md`).
//!
//! A fio log has no process and no completion time, so its replay is one context; with
//! `--record-format blkparse` each request is a `Q` line (issue, with the mount's context
//! number as its pid) and a `C` line (completion), in the emulated disk's sectors, and the
//! replay has the mount's contexts and the think times between a completion and the next issue.
//!
//! The fio log names one file, [`DISK`], and its offsets are bytes of the emulated disk (sector
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

/// What `--record` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RecordFormat {
    #[default]
    Fio,
    Blkparse,
}

impl std::str::FromStr for RecordFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fio" => Ok(RecordFormat::Fio),
            "blkparse" => Ok(RecordFormat::Blkparse),
            _ => Err(format!("expected fio or blkparse, found {s:?}")),
        }
    }
}

/// The device blkparse lines name (major 254, minor 0: any will do, the replay maps every
/// device onto the one modelled disk).
const BLK_DEVICE: &str = "254,0";

pub struct Recorder {
    path: PathBuf,
    format: RecordFormat,
    /// The writer, and blkparse's sequence number.
    out: Mutex<(BufWriter<File>, u64)>,
}

impl Recorder {
    /// Creates (or truncates) `path` and writes the log's header.
    pub fn create(path: &Path, format: RecordFormat) -> std::io::Result<Recorder> {
        let mut out = BufWriter::new(File::create(path)?);
        if format == RecordFormat::Fio {
            writeln!(out, "fio version 3 iolog")?;
            writeln!(out, "0 {DISK} add")?;
            writeln!(out, "0 {DISK} open")?;
        }
        Ok(Recorder {
            path: path.to_path_buf(),
            format,
            out: Mutex::new((out, 0)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Notes the disk requests `runs` (sector, sectors) of one application I/O of context
    /// `ctx`, issued at `issued` and completed at `done` (ns since the mount's start). A
    /// failed write is said on stderr rather than failing the program's I/O: the recording
    /// is the observer, not the service.
    pub fn note(&self, op: Op, ctx: u32, issued: Nanos, done: Nanos, runs: &[(u64, u64)]) {
        let mut guard = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let (out, seq) = &mut *guard;
        for &(sector, sectors) in runs {
            let r = match self.format {
                RecordFormat::Fio => {
                    let action = if op == Op::Read { "read" } else { "write" };
                    writeln!(
                        out,
                        "{} {DISK} {action} {} {}",
                        issued / 1000,
                        sector * 512,
                        sectors * 512
                    )
                }
                RecordFormat::Blkparse => {
                    // Reads, and writes made synchronous (the mount waits for each).
                    let rwbs = if op == Op::Read { "R" } else { "WS" };
                    let secs = |t: Nanos| format!("{}.{:09}", t / 1_000_000_000, t % 1_000_000_000);
                    *seq += 2;
                    writeln!(
                        out,
                        "{BLK_DEVICE} 0 {} {} {ctx} Q {rwbs} {sector} + {sectors} [ctx{ctx}]",
                        *seq - 1,
                        secs(issued)
                    )
                    .and_then(|()| {
                        writeln!(
                            out,
                            "{BLK_DEVICE} 0 {} {} 0 C {rwbs} {sector} + {sectors} [0]",
                            *seq,
                            secs(done)
                        )
                    })
                }
            };
            if let Err(e) = r {
                eprintln!("antsched: recording to {}: {e}", self.path.display());
            }
        }
    }

    /// Writes out what is buffered, with the log's closing line.
    pub fn finish(&self, now: Nanos) -> std::io::Result<()> {
        let mut guard = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let (out, _) = &mut *guard;
        if self.format == RecordFormat::Fio {
            writeln!(out, "{} {DISK} close", now / 1000)?;
        }
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use antsched_workload::trace::{Format, TraceReader};

    /// What the mount records reads back, through the trace reader, as the disk requests it
    /// made: sectors of the emulated disk, issue times in microseconds.
    #[test]
    fn the_recording_is_a_fio_log_the_replay_reads() {
        let path =
            std::env::temp_dir().join(format!("antsched-record-{}.iolog", std::process::id()));
        let r = Recorder::create(&path, RecordFormat::Fio).unwrap();
        r.note(Op::Read, 3, 1_500_000, 9_000_000, &[(2048, 128), (9000, 8)]);
        r.note(Op::Write, 3, 2_000_000, 9_000_000, &[(4096, 16)]);
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

    #[test]
    fn the_blkparse_recording_keeps_contexts_and_completions() {
        let path = std::env::temp_dir().join(format!("antsched-record-{}.blk", std::process::id()));
        let r = Recorder::create(&path, RecordFormat::Blkparse).unwrap();
        r.note(Op::Read, 3, 1_500_000, 9_000_000, &[(2048, 128)]);
        r.note(Op::Write, 4, 2_000_000, 12_000_001, &[(4096, 16)]);
        r.finish(13_000_000).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let reader = TraceReader::open(text.as_bytes(), "rec", None).unwrap();
        assert_eq!(reader.format(), Format::Blkparse);
        let got: Vec<_> = reader
            .map(|r| r.unwrap())
            .map(|r| (r.pid, r.time, r.completed, r.sector, r.bytes, r.op, r.sync))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    Some(3),
                    1_500_000,
                    Some(9_000_000),
                    2048,
                    65536,
                    Op::Read,
                    true
                ),
                (
                    Some(4),
                    2_000_000,
                    Some(12_000_001),
                    4096,
                    8192,
                    Op::Write,
                    true
                ),
            ]
        );
    }
}
