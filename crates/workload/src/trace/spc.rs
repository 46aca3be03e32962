//! The SPC / UMass trace repository's format (the "Financial" and "WebSearch" traces), one
//! CSV line per request:
//!
//! ```text
//! 0,20941264,8192,W,0.551706
//! ```
//!
//! Fields: ASU (application storage unit), LBA (512-byte blocks), size in bytes, opcode
//! (`r`/`R` or `w`/`W`), timestamp in seconds from the start. Some traces carry more fields
//! after these; they are ignored. There is no process id: an ASU is one application's storage
//! unit (SPC-1 drives each ASU with streams of its own), so the record's device is the ASU and
//! the replay makes one context per ASU.

use std::collections::VecDeque;

use antsched_core::Op;

use super::{comma_fields, cut, decimal_ns, int, LineParser, Record};

pub struct Spc;

impl LineParser for Spc {
    fn line(&mut self, line: &str, number: u64, out: &mut VecDeque<Record>) -> Result<(), String> {
        let line = line.trim_ascii();
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        let (f, n) = comma_fields::<5>(line);
        if n < 5 {
            return Err(format!(
                "5 fields `ASU,LBA,Size,Opcode,Timestamp`, found {} in {:?}",
                n,
                cut(line)
            ));
        }
        let device: u32 = int(f[0], "an ASU number (field 1)")?;
        let sector: u64 = int(f[1], "an LBA in 512-byte blocks (field 2)")?;
        let bytes: u64 = int(f[2], "a size in bytes (field 3)")?;
        let op = match f[3] {
            "r" | "R" => Op::Read,
            "w" | "W" => Op::Write,
            t => {
                return Err(format!(
                    "an opcode `r` or `w` (field 4), found {:?}",
                    cut(t)
                ))
            }
        };
        let time = decimal_ns(f[4], 1_000_000_000)
            .ok_or_else(|| format!("a timestamp in seconds (field 5), found {:?}", cut(f[4])))?;
        if bytes == 0 {
            return Ok(());
        }
        out.push_back(Record {
            time,
            pid: None,
            device,
            op,
            sync: op == Op::Read,
            sector,
            bytes,
            completed: None,
            line: number,
        });
        Ok(())
    }
}
