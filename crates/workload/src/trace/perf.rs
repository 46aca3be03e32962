//! `perf script` output of the block tracepoints:
//!
//! ```text
//!   dd 24967 [001] 14951.940002:    block:block_rq_issue: 7,0 RA 262144 () 32770 + 512 0x2,0,4 [dd]
//!   ksoftirqd/0    14 [000] 14951.940839: block:block_rq_complete: 7,0 RA () 32770 + 512 0x2,0,4 [0]
//! ```
//!
//! The fields after the event name differ between kernels (the byte count of an issue and the
//! trailing I/O priority came later), so they are found by shape: the device is the first
//! field, the `rwbs` flags the second, the sector and length around the `+`. The process is
//! the task the issue event fired in (the command may contain spaces, so the pid is read from
//! the right of the part before the `[cpu]`). Other events are skipped; so are requests that
//! are neither reads nor writes (flushes, discards).

use std::collections::VecDeque;

use antsched_core::Op;

use super::pair::Pairer;
use super::{cut, decimal_ns, int, LineParser, Record};

#[derive(Default)]
pub struct Perf {
    pairs: Pairer,
}

enum Event {
    Issue,
    Complete,
}

/// The fields of a block event after its name: the device, the operation and whether it is
/// synchronous if it is a read or a write, the sector, the number of sectors.
pub(crate) type BlockFields = (u32, Option<(Op, bool)>, u64, u64);

pub(crate) fn block_fields(rest: &[&str]) -> Result<BlockFields, String> {
    let dev = rest
        .first()
        .ok_or("a device major,minor after the event name")?;
    let device = device(dev)?;
    let rwbs = rest.get(1).ok_or("the rwbs flags after the device")?;
    let plus = rest
        .iter()
        .position(|&t| t == "+")
        .ok_or("`SECTOR + SECTORS` in the event")?;
    if plus < 1 || plus + 1 >= rest.len() {
        return Err("`SECTOR + SECTORS` in the event".into());
    }
    let sector: u64 = int(rest[plus - 1], "the sector before `+`")?;
    let sectors: u64 = int(rest[plus + 1], "the number of sectors after `+`")?;
    let op = rwbs_op(rwbs).map(|op| (op, op == Op::Read || rwbs.contains('S')));
    Ok((device, op, sector, sectors))
}

/// `major,minor` as one number, `major << 20 | minor` (the kernel's `dev_t`).
pub(crate) fn device(s: &str) -> Result<u32, String> {
    let bad = || format!("a device `major,minor`, found {:?}", cut(s));
    let (ma, mi) = s.split_once(',').ok_or_else(bad)?;
    let ma: u32 = ma.parse().map_err(|_| bad())?;
    let mi: u32 = mi.parse().map_err(|_| bad())?;
    if ma >= 1 << 12 || mi >= 1 << 20 {
        return Err(bad());
    }
    Ok(ma << 20 | mi)
}

/// The operation the `rwbs` flags name: a read or a write, else none (flush, discard, ...).
pub(crate) fn rwbs_op(rwbs: &str) -> Option<Op> {
    if rwbs.contains('D') {
        None // a discard, not data
    } else if rwbs.contains('W') {
        Some(Op::Write)
    } else if rwbs.contains('R') {
        Some(Op::Read)
    } else {
        None
    }
}

impl LineParser for Perf {
    fn line(&mut self, line: &str, number: u64, out: &mut VecDeque<Record>) -> Result<(), String> {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return Ok(());
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = tokens.iter().position(|t| t.starts_with("block:")) else {
            return Err(format!(
                "a `block:` tracepoint event, found {:?}",
                cut(line)
            ));
        };
        let event = match tokens[at] {
            "block:block_rq_issue:" => Event::Issue,
            "block:block_rq_complete:" => Event::Complete,
            _ => return Ok(()), // other block events say nothing this replay needs
        };
        // Before the event: COMM... PID [CPU] SECS.FRAC:
        let time = at
            .checked_sub(1)
            .and_then(|k| tokens[k].strip_suffix(':'))
            .ok_or("a timestamp `SECS.FRAC:` before the event name")?;
        let time = decimal_ns(time, 1_000_000_000)
            .ok_or_else(|| format!("a timestamp in seconds, found {:?}", cut(time)))?;
        let mut k = at - 1;
        if k > 0 && tokens[k - 1].starts_with('[') {
            k -= 1; // the CPU, if perf printed it
        }
        let pid = k
            .checked_sub(1)
            .map(|k| tokens[k])
            .ok_or("the pid of the task before the timestamp")?;
        let pid: u32 = int(pid, "the pid of the task before the timestamp")?;
        let (device, op, sector, sectors) = block_fields(&tokens[at + 1..])?;
        match event {
            Event::Issue => {
                let Some((op, sync)) = op else { return Ok(()) };
                if sectors == 0 {
                    return Ok(());
                }
                self.pairs.issue(
                    Record {
                        time,
                        pid: Some(pid),
                        device,
                        op,
                        sync,
                        sector,
                        bytes: sectors
                            .checked_mul(512)
                            .ok_or("a number of sectors that fits")?,
                        completed: None,
                        line: number,
                    },
                    out,
                );
            }
            Event::Complete => self.pairs.complete(device, sector, time, out),
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut VecDeque<Record>) {
        self.pairs.finish(out);
    }
}
