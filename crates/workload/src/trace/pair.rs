//! Pairs the issue and completion events of block tracepoints (perf, blkparse) into records,
//! in issue order, holding back at most [`WINDOW`] issued requests while their completions are
//! awaited: a trace is read in constant memory however long it is.

use std::collections::VecDeque;

use antsched_core::Nanos;
use rustc_hash::FxHashMap;

use super::Record;

/// Requests held back waiting for their completion. A request still waiting when this many
/// were issued after it is let go without one (its completion was lost, or merged into
/// another request's).
pub const WINDOW: usize = 4096;

#[derive(Default)]
pub struct Pairer {
    /// Issued requests in issue order; `window[k]` is the request numbered `first + k`.
    window: VecDeque<Record>,
    first: u64,
    /// Requests awaiting completion by (device, sector), oldest first.
    waiting: FxHashMap<(u32, u64), VecDeque<u64>>,
}

impl Pairer {
    pub fn issue(&mut self, r: Record, out: &mut VecDeque<Record>) {
        let n = self.first + self.window.len() as u64;
        self.waiting
            .entry((r.device, r.sector))
            .or_default()
            .push_back(n);
        self.window.push_back(r);
        self.release(out);
    }

    /// The request at `sector` of `device` completed at `t`: the oldest one issued there
    /// still waiting. A completion that matches none (issued before the trace began) is
    /// dropped.
    pub fn complete(&mut self, device: u32, sector: u64, t: Nanos, out: &mut VecDeque<Record>) {
        let key = (device, sector);
        let Some(q) = self.waiting.get_mut(&key) else {
            return;
        };
        let n = q.pop_front();
        if q.is_empty() {
            self.waiting.remove(&key);
        }
        if let Some(r) = n
            .and_then(|n| n.checked_sub(self.first))
            .and_then(|k| self.window.get_mut(k as usize))
        {
            // A completion stamped before its issue (clocks of two CPUs) is taken as instant.
            r.completed = Some(t.max(r.time));
        }
        self.release(out);
    }

    /// Lets go of the requests at the front that have their completion, or waited too long.
    fn release(&mut self, out: &mut VecDeque<Record>) {
        while let Some(front) = self.window.front() {
            if front.completed.is_none() && self.window.len() <= WINDOW {
                break;
            }
            let r = self.window.pop_front().expect("front exists");
            if r.completed.is_none() {
                self.forget(r.device, r.sector, self.first);
            }
            self.first += 1;
            out.push_back(r);
        }
    }

    fn forget(&mut self, device: u32, sector: u64, n: u64) {
        if let Some(q) = self.waiting.get_mut(&(device, sector)) {
            q.retain(|&m| m != n);
            if q.is_empty() {
                self.waiting.remove(&(device, sector));
            }
        }
    }

    /// The input ended: every request still held back goes, with or without completion.
    pub fn finish(&mut self, out: &mut VecDeque<Record>) {
        out.extend(self.window.drain(..));
        self.waiting.clear();
    }
}
