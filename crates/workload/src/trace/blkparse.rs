//! `blkparse`'s default text output:
//!
//! ```text
//!   8,0    3        1     0.000000000  4162  Q   R 1052672 + 8 [dd]
//!   8,0    3        5     0.000006371  4162  D   R 1052672 + 8 [dd]
//!   8,0    0        1     0.000151522     0  C   R 1052672 + 8 [0]
//! ```
//!
//! Fields: device, CPU, sequence number, seconds, pid, action, rwbs, then for request events
//! `SECTOR + SECTORS [COMMAND]`. A request arrives at the scheduler at its `Q` (queued) event,
//! issued by the process that queued it, so that is the record's time and process; a trace
//! without `Q` events (blktrace told to keep only some) takes its `D` (issued to the driver)
//! events instead. Whichever of the two comes first in the trace decides. `C` is the
//! completion. Other actions (merges, plugs, splits, messages) are skipped, and so is the
//! summary blkparse prints at the end.

use std::collections::VecDeque;

use super::pair::Pairer;
use super::perf::{block_fields, device};
use super::{cut, decimal_ns, int, LineParser, Record};

#[derive(Default)]
pub struct Blkparse {
    pairs: Pairer,
    /// The action that marks a request's arrival, `Q` or `D`, once the trace has shown one.
    arrival: Option<String>,
    /// The summary at the end has begun.
    summary: bool,
}

impl LineParser for Blkparse {
    fn line(&mut self, line: &str, number: u64, out: &mut VecDeque<Record>) -> Result<(), String> {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || self.summary {
            return Ok(());
        }
        if line.starts_with("CPU") || line.starts_with("Total (") {
            self.summary = true;
            return Ok(());
        }
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() < 7 {
            return Err(format!(
                "`DEV CPU SEQ SECS PID ACTION RWBS ...`, found {:?}",
                cut(line)
            ));
        }
        device(t[0])?;
        int::<u32>(t[1], "the CPU after the device")?;
        int::<u64>(t[2], "the sequence number after the CPU")?;
        let time = decimal_ns(t[3], 1_000_000_000).ok_or_else(|| {
            format!(
                "a time in seconds after the sequence number, found {:?}",
                cut(t[3])
            )
        })?;
        let pid: u32 = int(t[4], "the pid after the time")?;
        let action = t[5];
        let is_arrival = match &self.arrival {
            Some(a) => a == action,
            None if action == "Q" || action == "D" => {
                self.arrival = Some(action.to_string());
                true
            }
            None => false,
        };
        if !is_arrival && action != "C" {
            return Ok(());
        }
        // Device, rwbs, then SECTOR + SECTORS.
        let mut fields = vec![t[0]];
        fields.extend_from_slice(&t[6..]);
        let (device, op, sector, sectors) = match block_fields(&fields) {
            Ok(f) => f,
            // A request with no sectors (a flush: `C FN [0]`) has nothing to replay.
            Err(_) if !t[6..].contains(&"+") => return Ok(()),
            Err(e) => return Err(e),
        };
        if action == "C" {
            self.pairs.complete(device, sector, time, out);
            return Ok(());
        }
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
        Ok(())
    }

    fn finish(&mut self, out: &mut VecDeque<Record>) {
        self.pairs.finish(out);
    }
}
