//! Idling for the active queue's next request (`cfq_arm_slice_timer`,
//! `cfq_idle_slice_timer`), and the per-process and per-device knowledge that decides it: the
//! idle window (`cfq_update_idle_window`) and whether the device queues internally
//! (`cfq_update_hw_tag`).
//!
//! Idling is CFQ's answer to deceptive idleness: a process that reads synchronously has
//! nothing queued at the moment its request completes, and without a short wait for it the
//! rest of its slice would go to others, at the price of a seek each way.

use super::*;

impl Cfq {
    /// `cfq_arm_slice_timer`: the active queue just emptied; idle for its next request?
    pub(super) fn arm_slice_timer(&mut self, now: Nanos) {
        let Some(key) = self.active else {
            return;
        };
        let cic = self.active_cic.and_then(|c| self.contexts.get(&c));
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        // Idling disabled, by hand or by the process's history.
        if self.cfg.slice_idle == 0 || !q.idle_window {
            return;
        }
        // Still requests with the driver: do not idle.
        if !self.in_flight.is_empty() {
            return;
        }
        // The task has exited: do not wait.
        let Some(cic) = cic.filter(|c| !c.exited) else {
            return;
        };
        q.must_dispatch = true;
        q.wait_request = true;
        let mut sl = self.cfg.slice_idle;
        if sample_valid(cic.seek.samples) && cic.seeky() {
            sl = sl.min(CFQ_MIN_TT);
        }
        self.idle_timer = Some(now + sl);
    }

    /// `cfq_idle_slice_timer`, run at its time `at`.
    pub(super) fn run_timer(&mut self, now: Nanos) {
        let Some(at) = self.idle_timer.filter(|&t| t <= now) else {
            return;
        };
        self.idle_timer = None;
        self.meter.end(at, true);
        let Some(key) = self.active else {
            return;
        };
        if !self.slice_used(key, at) {
            // Only expire if other queues have requests pending.
            if self.busy_queues == 0 {
                return;
            }
            // Not expired and has a request pending: let it dispatch.
            if let Some(q) = self.queues.get_mut(&key) {
                if !q.list.is_empty() {
                    q.must_dispatch = true;
                    return;
                }
            }
        }
        self.slice_expired(false, at);
    }

    /// `cfq_update_idle_window`.
    pub(super) fn update_idle_window(&mut self, key: QueueKey, ctx: ContextId) {
        let (slice_idle, hw_tag) = (self.cfg.slice_idle, self.hw_tag);
        let (Some(q), Some(cic)) = (self.queues.get_mut(&key), self.contexts.get(&ctx)) else {
            return;
        };
        if !q.sync {
            return;
        }
        if cic.exited || slice_idle == 0 || (hw_tag && cic.seeky()) {
            q.idle_window = false;
        } else if sample_valid(cic.ttime.samples) {
            q.idle_window = cic.ttime.mean <= slice_idle;
        }
    }

    /// `cfq_update_hw_tag`: under enough load, learn whether the device queues (peak depth
    /// of 5 or more over 50 completions).
    pub(super) fn update_hw_tag(&mut self) {
        let in_driver = self.in_flight.len();
        self.rq_in_driver_peak = self.rq_in_driver_peak.max(in_driver);
        if self.queued <= HW_QUEUE_MIN && in_driver <= HW_QUEUE_MIN {
            return;
        }
        self.hw_tag_samples += 1;
        if self.hw_tag_samples <= 50 {
            return;
        }
        self.hw_tag = self.rq_in_driver_peak >= HW_QUEUE_MIN;
        self.hw_tag_samples = 0;
        self.rq_in_driver_peak = 0;
    }
}
