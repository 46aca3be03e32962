//! A flash SSD: fixed latencies, internal parallelism, bandwidth.
//!
//! Flash has no arm and no platter: a read costs about the same wherever its data lies, so
//! positioning time is a constant and there is nothing for anticipation to save. The model keeps
//! only what shapes throughput: a per-operation latency (the flash read or program time plus
//! controller overhead), `channels` requests that can be in flight inside the device at once,
//! and a transfer bandwidth per channel. `submit` places a request on the channel that frees
//! first, so requests overlap up to `channels` deep.

use crate::{Completion, DeviceModel, DiskOp, DiskRequest, Nanos, ServiceBreakdown};

/// Parameters of an SSD.
#[derive(Clone, Debug, PartialEq)]
pub struct SsdParams {
    pub capacity_sectors: u64,
    pub read_latency_ns: Nanos,
    pub write_latency_ns: Nanos,
    pub channels: u32,
    /// Bandwidth of the whole device in bytes per second, shared evenly by the channels.
    pub bandwidth_bytes_per_s: f64,
}

/// A flash SSD.
#[derive(Clone, Debug)]
pub struct SsdModel {
    name: String,
    p: SsdParams,
    free_at: Vec<Nanos>,
}

impl SsdModel {
    pub fn new(name: impl Into<String>, p: SsdParams) -> SsdModel {
        let ch = p.channels.max(1) as usize;
        SsdModel {
            name: name.into(),
            p,
            free_at: vec![0; ch],
        }
    }

    pub fn params(&self) -> &SsdParams {
        &self.p
    }

    fn transfer_ns(&self, sectors: u32) -> Nanos {
        let per_channel = self.p.bandwidth_bytes_per_s / self.p.channels.max(1) as f64;
        (sectors as f64 * 512.0 / per_channel * 1e9).round() as Nanos
    }

    fn latency(&self, op: DiskOp) -> Nanos {
        match op {
            DiskOp::Read => self.p.read_latency_ns,
            DiskOp::Write => self.p.write_latency_ns,
        }
    }
}

impl DeviceModel for SsdModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn capacity_sectors(&self) -> u64 {
        self.p.capacity_sectors
    }

    fn submit(&mut self, req: &DiskRequest, now: Nanos) -> Completion {
        // The channel that frees first takes the request.
        let (i, &free) = self
            .free_at
            .iter()
            .enumerate()
            .min_by_key(|(_, &f)| f)
            .expect("at least one channel");
        let start = now.max(free);
        let lat = self.latency(req.op);
        let xfer = self.transfer_ns(req.sectors);
        let finish = start + lat + xfer;
        self.free_at[i] = finish;
        Completion {
            start,
            finish,
            service: ServiceBreakdown {
                overhead: lat,
                seek: 0,
                rotation: 0,
                transfer: xfer,
                cache_hit: false,
            },
        }
    }

    fn positioning_time(&self, req: &DiskRequest, _start: Nanos) -> Nanos {
        self.latency(req.op)
    }

    fn clone_box(&self) -> Box<dyn DeviceModel> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_overlap_up_to_the_channel_count() {
        let mut s = SsdModel::new(
            "t",
            SsdParams {
                capacity_sectors: 1 << 20,
                read_latency_ns: 100_000,
                write_latency_ns: 200_000,
                channels: 2,
                bandwidth_bytes_per_s: 1e9,
            },
        );
        let a = s.submit(&DiskRequest::read(0, 8), 0);
        let b = s.submit(&DiskRequest::read(100, 8), 0);
        let c = s.submit(&DiskRequest::read(200, 8), 0);
        assert_eq!(a.start, 0);
        assert_eq!(b.start, 0);
        assert_eq!(c.start, a.finish);
        // Position does not matter.
        assert_eq!(
            s.positioning_time(&DiskRequest::read(1 << 19, 8), c.finish),
            s.positioning_time(&DiskRequest::read(8, 8), c.finish)
        );
    }
}
