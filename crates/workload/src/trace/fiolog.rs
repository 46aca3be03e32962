//! fio's I/O logs (`write_iolog=`), versions 2 and 3:
//!
//! ```text
//! fio version 3 iolog
//! 32 /tmp/f.dat add
//! 121 /tmp/f.dat open
//! 126 /tmp/f.dat read 196608 65536
//! 16442 /tmp/f.dat close
//! ```
//!
//! Version 2 lines are `FILE ACTION [OFFSET LENGTH]`, with no times but `wait` actions (the
//! offset field is microseconds to wait, relative to the previous wait); version 3 puts a
//! timestamp first, in microseconds from the start of the run, and has no `wait`. Offsets and
//! lengths are bytes. `add`, `open`, `close`, `sync`, `datasync` and `trim` issue no data
//! request and are skipped.
//!
//! Where on the disk: a log names files, not sectors. The first file the log names starts at
//! sector 0, as the simulator lays out a job file's first file; the n-th distinct file at
//! n x [`FILE_STRIDE`], since a log read as it streams cannot know how large each file will
//! get. A log of one file or one device (fio's usual) therefore addresses the disk as the job
//! did. A log is what one fio job did, one process with no pid written, so the replay makes
//! one context of it.

use std::collections::VecDeque;

use antsched_core::{Nanos, Op};
use rustc_hash::FxHashMap;

use super::{cut, int, LineParser, Record};

/// Bytes between the starts of the files of a log with several.
pub const FILE_STRIDE: u64 = 1 << 30;

#[derive(Default)]
pub struct FioLog {
    version: Option<u8>,
    /// Version 2's clock: the sum of the `wait`s so far.
    waited: Nanos,
    files: FxHashMap<String, u64>,
}

impl FioLog {
    fn base(&mut self, file: &str) -> u64 {
        let n = self.files.len() as u64;
        *self
            .files
            .entry(file.to_string())
            .or_insert(n * FILE_STRIDE)
    }
}

impl LineParser for FioLog {
    fn line(&mut self, line: &str, number: u64, out: &mut VecDeque<Record>) -> Result<(), String> {
        let text = line.trim();
        let Some(version) = self.version else {
            self.version = match text {
                "fio version 2 iolog" => Some(2),
                "fio version 3 iolog" => Some(3),
                _ => {
                    return Err(format!(
                        "the header `fio version 2 iolog` or `fio version 3 iolog`, found {:?}",
                        cut(text)
                    ))
                }
            };
            return Ok(());
        };
        if text.is_empty() {
            return Ok(());
        }
        let mut t: Vec<&str> = text.split_whitespace().collect();
        let time = if version == 3 {
            if t.len() < 3 {
                return Err(format!(
                    "`TIMESTAMP FILE ACTION [OFFSET LENGTH]`, found {:?}",
                    cut(text)
                ));
            }
            let us: u64 = int(t.remove(0), "a timestamp in microseconds (field 1)")?;
            us.checked_mul(1000).ok_or("a timestamp that fits")?
        } else {
            self.waited
        };
        // A file name may hold spaces: the action and numbers are read from the right.
        let management = ["add", "open", "close", "sync", "datasync"];
        let n = t.len();
        if n >= 2 && management.contains(&t[n - 1]) {
            if matches!(t[n - 1], "add" | "open") {
                self.base(&t[..n - 1].join(" "));
            }
            return Ok(());
        }
        if n < 4 {
            return Err(format!(
                "`FILE ACTION OFFSET LENGTH` or `FILE add|open|close`, found {:?}",
                cut(text)
            ));
        }
        let offset: u64 = int(t[n - 2], "an offset in bytes")?;
        let length: u64 = int(t[n - 1], "a length in bytes")?;
        let op = match t[n - 3] {
            "read" => Op::Read,
            "write" => Op::Write,
            "wait" if version == 2 => {
                self.waited = self.waited.saturating_add(offset.saturating_mul(1000));
                return Ok(());
            }
            "trim" | "sync" | "datasync" => return Ok(()),
            a => {
                return Err(format!(
                    "an action read, write, trim, sync, datasync{}, found {:?}",
                    if version == 2 { ", wait" } else { "" },
                    cut(a)
                ))
            }
        };
        if length == 0 {
            return Ok(());
        }
        let base = self.base(&t[..n - 3].join(" "));
        let at = base.checked_add(offset).ok_or("an offset that fits")?;
        out.push_back(Record {
            time,
            pid: None,
            device: 0,
            op,
            sync: true,
            sector: at / 512,
            bytes: length,
            completed: None,
            line: number,
        });
        Ok(())
    }
}
