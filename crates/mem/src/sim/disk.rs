//! Paging I/O through antsched's disk scheduler and disk model.
//!
//! Page-ins are synchronous reads of the faulting process (it waits for them), page-outs are
//! asynchronous writes of the pager. Both go through the same scheduler a fio job would meet,
//! so the priority inversion of section 5.3 (a niced-down process's page-outs delaying a
//! favoured process's page-ins) and anticipatory scheduling's answer to it (a synchronous
//! stream of page-ins is waited for instead of losing every decision to the writes) show in
//! the numbers.

use antsched_core::{ClassId, ContextId, Nanos, Op, Request, RequestId, Scheduler};
use antsched_sim::device::SharedDevice;

/// Sectors in a 4 KiB page.
pub const PAGE_SECTORS: u32 = 8;

/// The context of the pager's writes (processes are contexts 0..).
pub const PAGER: ContextId = ContextId(u32::MAX - 1);

/// The scheduler and the device, with the single request the device serves at a time.
pub struct PagingDisk {
    sched: Box<dyn Scheduler>,
    device: SharedDevice,
    next_id: u64,
    busy_until: Option<(Nanos, RequestId)>,
    /// Decayed mean service time of paging I/O, seconds (C_disk of Eq. 4.2).
    service_s: f64,
    /// Decayed mean queue length (l_diskq of Eq. 4.2).
    queue: f64,
    queue_at: Nanos,
    pub capacity_sectors: u64,
}

/// How fast the decayed means forget: a few seconds, "a recent interval" (section 4.3).
const MEMORY_NS: f64 = 2e9;

impl PagingDisk {
    pub fn new(disk: &str, scheduler: &str, seed: u64) -> Result<Self, String> {
        let model = antsched_sim::disk_model(disk).map_err(|e| e.to_string())?;
        let device = SharedDevice::new(model);
        let env = device.build_env(seed);
        let sched = antsched_core::build(scheduler, &env).map_err(|e| e.to_string())?;
        let capacity_sectors = device.capacity_sectors();
        Ok(Self {
            sched,
            device,
            next_id: 0,
            busy_until: None,
            service_s: 0.010,
            queue: 0.0,
            queue_at: 0,
            capacity_sectors,
        })
    }

    /// Queues a page-sized request; returns its id.
    pub fn submit(&mut self, ctx: ContextId, op: Op, sector: u64, now: Nanos) -> RequestId {
        self.observe_queue(now);
        let id = RequestId(self.next_id);
        self.next_id += 1;
        self.sched.enqueue(
            Request {
                id,
                context: ctx,
                class: ClassId(ctx.0),
                op,
                sector,
                sectors: PAGE_SECTORS,
                sync: op == Op::Read,
                issued: now,
                continuation: false,
            },
            now,
        );
        id
    }

    /// Sends the next request to the device if it is idle; returns when it will complete.
    pub fn dispatch(&mut self, now: Nanos) -> Option<(Nanos, RequestId)> {
        if self.busy_until.is_some() {
            return None;
        }
        let req = self.sched.poll_dispatch(now)?;
        let c = self.device.submit(&req, now);
        let service = c.finish.saturating_sub(c.start) as f64 / 1e9;
        self.service_s += (service - self.service_s) * 0.05;
        self.busy_until = Some((c.finish, req.id));
        Some((c.finish, req.id))
    }

    /// The device finished `id`.
    pub fn complete(&mut self, id: RequestId, now: Nanos) {
        self.observe_queue(now);
        self.busy_until = None;
        self.sched.complete(id, now);
    }

    /// When the scheduler wants to be asked again (an anticipation timeout).
    pub fn poll_timeout(&self) -> Option<Nanos> {
        self.sched.poll_timeout()
    }

    pub fn context_exited(&mut self, ctx: ContextId, now: Nanos) {
        self.sched.context_exited(ctx, now);
    }

    /// Requests queued or in service.
    pub fn depth(&self) -> usize {
        self.sched.pending() + self.sched.in_flight()
    }

    fn observe_queue(&mut self, now: Nanos) {
        let dt = now.saturating_sub(self.queue_at) as f64;
        let keep = (-dt / MEMORY_NS).exp();
        self.queue = self.queue * keep + self.depth() as f64 * (1.0 - keep);
        self.queue_at = now;
    }

    /// C_disk and l_diskq for Eq. 4.2.
    pub fn paging_cost(&mut self, now: Nanos) -> crate::cost::PagingCost {
        self.observe_queue(now);
        crate::cost::PagingCost {
            disk_service_s: self.service_s,
            // The decayed mean alone, as `iocost()` reports "the average disk queue length
            // over a recent interval" (section 4.6) and memd reads it from /proc/diskstats.
            // Taking the instant depth as well priced paging at the pager's own bursts (a
            // reclaim pass queues dozens of page-outs at once), and every cache then dropped
            // nearly all it held, well past the equilibrium, at each burst.
            disk_queue: self.queue,
        }
    }

    pub fn scheduler_name(&self) -> &str {
        self.sched.name()
    }
}
