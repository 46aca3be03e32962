//! SNIA's MSR Cambridge traces (IOTTA repository), one CSV line per request:
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//! 128166372003061629,wdev,0,Read,3154059264,4096,3373
//! ```
//!
//! The timestamp is a Windows filetime (100 ns units since 1601), the response time is in the
//! same 100 ns units, offset and size are in bytes, the type is `Read` or `Write`. The traces
//! were taken below the file system cache and name no process, so the record's device is the
//! disk number, and the replay makes one context per disk: the request stream one volume saw.
//! A header line, if present, is skipped.

use std::collections::VecDeque;

use antsched_core::Op;

use super::{comma_fields, cut, int, LineParser, Record};

/// Windows filetime ticks are 100 ns.
const TICK: u64 = 100;

pub struct Msr;

impl LineParser for Msr {
    fn line(&mut self, line: &str, number: u64, out: &mut VecDeque<Record>) -> Result<(), String> {
        let line = line.trim_ascii();
        if line.is_empty() || line.starts_with('#') || line.starts_with("Timestamp,") {
            return Ok(());
        }
        let (f, n) = comma_fields::<7>(line);
        if n != 7 {
            return Err(format!(
                "7 fields `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, found {} in {:?}",
                n,
                cut(line)
            ));
        }
        let ticks: u64 = int(f[0], "a timestamp in 100 ns units (field 1)")?;
        let time = ticks
            .checked_mul(TICK)
            .ok_or("a timestamp that fits in 64 bits of ns (field 1)")?;
        let device: u32 = int(f[2], "a disk number (field 3)")?;
        let op = match f[3] {
            t if t.eq_ignore_ascii_case("read") => Op::Read,
            t if t.eq_ignore_ascii_case("write") => Op::Write,
            t => return Err(format!("`Read` or `Write` (field 4), found {:?}", cut(t))),
        };
        let offset: u64 = int(f[4], "an offset in bytes (field 5)")?;
        let bytes: u64 = int(f[5], "a size in bytes (field 6)")?;
        let response: u64 = int(f[6], "a response time in 100 ns units (field 7)")?;
        if bytes == 0 {
            return Ok(());
        }
        out.push_back(Record {
            time,
            pid: None,
            device,
            op,
            sync: op == Op::Read,
            sector: offset / 512,
            bytes,
            completed: response.checked_mul(TICK).and_then(|r| time.checked_add(r)),
            line: number,
        });
        Ok(())
    }
}
