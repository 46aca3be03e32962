//! DiskSim's ASCII input format (`tracetype ascii`), one request per line:
//!
//! ```text
//! 0.000000 0 1052672 16 1
//! ```
//!
//! Fields, separated by white space: arrival time in milliseconds, device number, block
//! number (512-byte sectors), size in blocks, flags (bit 0 set for a read, clear for a
//! write). No process ids: the record's device is the device number, and the replay makes one
//! context per device, as DiskSim itself treats each device's requests as one stream.

use std::collections::VecDeque;

use antsched_core::Op;

use super::{cut, decimal_ns, fields, int, LineParser, Record};

pub struct DiskSim;

impl LineParser for DiskSim {
    fn line(&mut self, line: &str, number: u64, out: &mut VecDeque<Record>) -> Result<(), String> {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        let (f, n) = fields::<5>(line.split_whitespace());
        if n != 5 {
            return Err(format!(
                "5 fields `TIME_MS DEVNO BLKNO SIZE FLAGS`, found {} in {:?}",
                n,
                cut(line)
            ));
        }
        let time = decimal_ns(f[0], 1_000_000)
            .ok_or_else(|| format!("an arrival time in ms (field 1), found {:?}", cut(f[0])))?;
        let device: u32 = int(f[1], "a device number (field 2)")?;
        let sector: u64 = int(f[2], "a block number (field 3)")?;
        let blocks: u64 = int(f[3], "a size in 512-byte blocks (field 4)")?;
        let flags: u64 = int(f[4], "flags (field 5)")?;
        if blocks == 0 {
            return Ok(());
        }
        out.push_back(Record {
            time,
            pid: None,
            device,
            op: if flags & 1 == 1 { Op::Read } else { Op::Write },
            sync: flags & 1 == 1,
            sector,
            bytes: blocks
                .checked_mul(512)
                .ok_or("a size in blocks that fits (field 4)")?,
            completed: None,
            line: number,
        });
        Ok(())
    }
}
