//! What AS knows of each process (`struct as_io_context`) and of processes in general, and
//! how a request updates it (`as_update_iohist`, `as_update_thinktime`, `as_update_seekdist`).
//!
//! A process's *think time* is the time from the completion of its last synchronous request
//! to the arrival of its next one, 0 if it still had one queued (then it was not thinking);
//! its *seek distance* is from the end of its last request to the start of the next. Both are
//! means with 7/8 decay. The same means over processes' first samples (`new_ttime_mean`,
//! `new_seek_mean`) stand in for a process that has none yet, and `exit_prob` counts how
//! often a process waited on died before issuing again.

use super::*;

/// `struct as_io_context`: what AS knows of one context.
#[derive(Clone, Debug)]
pub(super) struct IoContext {
    /// `AS_TASK_RUNNING`: the process has not exited.
    pub(super) running: bool,
    /// `AS_TASK_IOSTARTED`: it has issued a synchronous request.
    pub(super) iostarted: bool,
    /// `AS_TASK_IORUNNING`: a synchronous request of it has completed.
    pub(super) iorunning: bool,
    pub(super) nr_queued: usize,
    /// Requests in the device (not in the kernel's structure: it frees the context by
    /// reference count; we prune it when nothing refers to it).
    pub(super) in_device: usize,
    pub(super) last_end_request: Nanos,
    /// End of its last synchronous request.
    pub(super) last_request_pos: u64,
    pub(super) ttime: ThinkTime,
    pub(super) seek: SeekDistance,
}

impl IoContext {
    pub(super) fn new() -> Self {
        Self {
            running: true,
            iostarted: false,
            iorunning: false,
            nr_queued: 0,
            in_device: 0,
            last_end_request: 0,
            last_request_pos: 0,
            ttime: ThinkTime::default(),
            seek: SeekDistance::default(),
        }
    }
}

/// The scheduler-wide statistics (fixed point, 256 = 1.0).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Globals {
    /// Probability that a context waited on exits before issuing again (`exit_prob`).
    pub(super) exit_prob: u64,
    /// 2.6.32: probability that an exited context is not followed by a cooperating request
    /// (`exit_no_coop`).
    pub(super) exit_no_coop: u64,
    /// CAS: the "cooperative exit probability", that a cooperating context's close request
    /// follows the one awaited.
    pub(super) coop_exit_prob: u64,
    pub(super) new_ttime_total: u64,
    pub(super) new_ttime_mean: Nanos,
    pub(super) new_seek_total: u64,
    pub(super) new_seek_mean: u64,
}

impl AnticipatoryScheduler {
    /// `as_update_iohist`: a synchronous request `rq` tells about `ctx`'s think time and seek
    /// distance. Called for the issuer on arrival, and by 2.6.32 and CAS also for the
    /// anticipated context when a cooperating context's close request arrives.
    pub(super) fn update_iohist(&mut self, ctx: ContextId, rq: &Request, now: Nanos) {
        if !is_sync(rq) {
            return;
        }
        let g = &mut self.g;
        let Some(aic) = self.contexts.get_mut(&ctx) else {
            return;
        };
        if aic.iorunning || aic.iostarted {
            // Read-to-read think time: 0 if the process still has a request queued.
            let mut think = 0;
            if aic.iorunning && aic.nr_queued == 0 {
                think = now
                    .saturating_sub(aic.last_end_request)
                    .min(MAX_THINKTIME - JIFFY);
            }
            if aic.ttime.samples == 0 {
                // A context's first think time feeds the prior for new contexts, and shows
                // that it did not exit: exit_prob decays.
                g.new_ttime_total = (7 * g.new_ttime_total + ONE * think) / 8;
                g.new_ttime_mean = g.new_ttime_total / ONE;
                g.exit_prob = 7 * g.exit_prob / 8;
            }
            aic.ttime.record(think);
            let seek = distance(aic.last_request_pos, rq.sector);
            if aic.seek.samples == 0 {
                g.new_seek_total = (7 * g.new_seek_total + ONE * seek) / 8;
                g.new_seek_mean = g.new_seek_total / ONE;
            }
            aic.seek.record(seek);
        }
        aic.last_request_pos = rq.end();
        aic.iostarted = true;
    }

    /// Forgets `ctx` once nothing refers to it (the kernel frees an `io_context` when its
    /// last reference goes).
    pub(super) fn prune(&mut self, ctx: ContextId) {
        if self.io_context == Some(ctx) {
            return;
        }
        if let Some(c) = self.contexts.get(&ctx) {
            if !c.running && c.nr_queued == 0 && c.in_device == 0 {
                self.contexts.remove(&ctx);
            }
        }
    }
}
