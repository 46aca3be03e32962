//! The page-cache effects the paper's results depend on: sequential read-ahead for buffered
//! reads, and delayed writes flushed by a write-back daemon.
//!
//! ## Read-ahead (section 4.1)
//!
//! FreeBSD 4.3 "transparently issues asynchronous prefetch requests if the access pattern is
//! detected to be sequential on disk". The model: when a read starts exactly where the
//! context's previous read ended, on the disk as well as in the file, the context is reading
//! sequentially, and the kernel reads ahead in windows of `window` bytes with asynchronous
//! reads. The next window is issued as soon as the application reads into the last one
//! requested (Linux marks that point with `PG_readahead`; FreeBSD's cluster read-ahead runs a
//! cluster ahead the same way), so while the application waits for one window the next is
//! already queued, and a seek-reducing scheduler finds it next to the head at every decision:
//! prefetch is what hides deceptive idleness from sequential `read`ers (section 2.1). The
//! read-ahead stops at the end of the disk-contiguous run: where a large file's next region lies elsewhere
//! (`antsched_extent`), the next read is not sequential on disk, prefetch "temporarily assumes
//! non-sequential access and conservatively backs off", and that read is synchronous. Those
//! moments are where anticipation still helps a prefetching reader (the paper's +5%).
//!
//! ## Delayed writes
//!
//! A buffered write only dirties the page cache and returns. A write-back daemon wakes every
//! `antsched_writeback_interval` and writes all dirty data out as asynchronous writes, in disk
//! order. A writer whose dirty and in-flight data reach `antsched_dirty_limit` blocks until
//! write-back brings it under: Linux's `balance_dirty_pages` throttling, reduced to one limit.

use antsched_core::RequestId;

/// Read-ahead state of one context.
#[derive(Debug, Default)]
pub struct ReadAhead {
    /// Where the previous read ended: (region, file offset, sector after it).
    last: Option<(usize, u64, u64)>,
    /// Region and file-offset range requested ahead (in flight or arrived).
    region: usize,
    start: u64,
    end: u64,
    /// Prefetch pieces not yet arrived: (start, end, request).
    in_flight: Vec<(u64, u64, RequestId)>,
}

/// What a read needs from the disk.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ReadPlan {
    /// File-offset range to read synchronously, if any.
    pub missing: Option<(u64, u64)>,
    /// Prefetch pieces in flight that the read must wait for.
    pub wait_for: Vec<RequestId>,
    /// File-offset range to prefetch asynchronously, if any.
    pub prefetch: Option<(u64, u64)>,
}

impl ReadAhead {
    /// Plans a read of `[offset, offset + len)` in `region`, whose first sector is
    /// `start_sector` and whose last byte ends the disk run at `run_end` (file offset), with
    /// a read-ahead window of `window` bytes and the region ending at `region_end`.
    #[allow(clippy::too_many_arguments)]
    pub fn plan(
        &mut self,
        region: usize,
        offset: u64,
        len: u64,
        start_sector: u64,
        end_sector: u64,
        run_end: u64,
        region_end: u64,
        window: u64,
    ) -> ReadPlan {
        let end = offset + len;
        let sequential = self.last == Some((region, offset, start_sector));
        if !sequential || self.region != region {
            // Back off: forget what was prefetched (pieces in flight arrive unused).
            self.region = region;
            self.start = offset;
            self.end = offset;
            self.in_flight.clear();
        }
        let mut plan = ReadPlan::default();
        let have = if self.start <= offset && offset < self.end {
            self.end
        } else {
            offset
        };
        if have < end {
            plan.missing = Some((have, end));
        }
        plan.wait_for = self
            .in_flight
            .iter()
            .filter(|&&(s, e, _)| s < end.min(have) && e > offset)
            .map(|&(_, _, id)| id)
            .collect();
        if sequential {
            let ahead = self.end.max(end);
            // The read reaches into the last window requested: request the next one.
            if end + window > ahead {
                let target = (ahead + window).min(run_end).min(region_end);
                if ahead < target {
                    plan.prefetch = Some((ahead, target));
                    self.end = target;
                }
            }
        }
        self.end = self.end.max(end);
        self.start = end;
        self.last = Some((region, end, end_sector));
        plan
    }

    /// Records a prefetch piece sent to the disk.
    pub fn prefetching(&mut self, start: u64, end: u64, id: RequestId) {
        self.in_flight.push((start, end, id));
    }

    /// A prefetch piece arrived.
    pub fn arrived(&mut self, id: RequestId) {
        self.in_flight.retain(|&(_, _, x)| x != id);
    }
}

/// Dirty data of one buffered writer: runs of sectors in the order written, coalesced.
#[derive(Debug, Default)]
pub struct Dirty {
    pub runs: Vec<(u64, u64)>,
    /// Bytes dirty and not yet sent to the disk.
    pub bytes: u64,
    /// Bytes being written back.
    pub in_flight: u64,
}

impl Dirty {
    pub fn add(&mut self, sector: u64, sectors: u64) {
        match self.runs.last_mut() {
            Some((s, n)) if *s + *n == sector => *n += sectors,
            _ => self.runs.push((sector, sectors)),
        }
        self.bytes += sectors * 512;
    }

    /// Takes every dirty run, in disk order, for write-back.
    pub fn take(&mut self) -> Vec<(u64, u64)> {
        let mut runs = std::mem::take(&mut self.runs);
        runs.sort_unstable();
        self.in_flight += self.bytes;
        self.bytes = 0;
        runs
    }

    pub fn held(&self) -> u64 {
        self.bytes + self.in_flight
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

    /// Plans a read of 64 KiB at `off` in a contiguous 1 GiB file starting at sector 0.
    fn read(ra: &mut ReadAhead, off: u64) -> ReadPlan {
        ra.plan(
            0,
            off,
            64 * K,
            off / 512,
            (off + 64 * K) / 512,
            1 << 30,
            1 << 30,
            128 * K,
        )
    }

    #[test]
    fn a_sequential_reader_prefetches_a_window_ahead() {
        let mut ra = ReadAhead::default();
        let p = read(&mut ra, 0);
        assert_eq!(p.missing, Some((0, 64 * K)));
        assert_eq!(p.prefetch, None, "one read is not a pattern");
        let p = read(&mut ra, 64 * K);
        assert_eq!(p.missing, Some((64 * K, 128 * K)));
        assert_eq!(p.prefetch, Some((128 * K, 256 * K)));
        ra.prefetching(128 * K, 256 * K, RequestId(7));
        // Reading into that window requests the next one while it waits for this one: at
        // the moment the first arrives, the second is already queued.
        let p = read(&mut ra, 128 * K);
        assert_eq!(p.missing, None);
        assert_eq!(p.wait_for, vec![RequestId(7)]);
        assert_eq!(p.prefetch, Some((256 * K, 384 * K)));
        ra.prefetching(256 * K, 384 * K, RequestId(8));
        ra.arrived(RequestId(7));
        let p = read(&mut ra, 192 * K);
        assert_eq!((p.missing, p.wait_for.len()), (None, 0));
        assert_eq!(p.prefetch, None, "a whole window is still ahead");
    }

    #[test]
    fn a_jump_backs_off() {
        let mut ra = ReadAhead::default();
        read(&mut ra, 0);
        read(&mut ra, 64 * K);
        let p = read(&mut ra, 10 << 20);
        assert_eq!(p.missing, Some((10 << 20, (10 << 20) + 64 * K)));
        assert_eq!(p.prefetch, None);
    }

    #[test]
    fn prefetch_stops_at_the_end_of_a_disk_run() {
        let mut ra = ReadAhead::default();
        ra.plan(0, 0, 64 * K, 0, 128, 100 * K, 1 << 30, 128 * K);
        let p = ra.plan(0, 64 * K, 64 * K, 128, 256, 100 * K, 1 << 30, 128 * K);
        assert_eq!(p.prefetch, None, "the run ends before the read does");
    }

    #[test]
    fn dirty_runs_coalesce_and_flush_in_disk_order() {
        let mut d = Dirty::default();
        d.add(100, 8);
        d.add(108, 8);
        d.add(10, 8);
        assert_eq!(d.take(), vec![(10, 8), (100, 16)]);
        assert_eq!((d.bytes, d.in_flight), (0, 24 * 512));
    }
}
