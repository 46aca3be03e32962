//! When BFQ keeps the disk idle for the queue in service (`bfq_better_to_idle`,
//! `bfq_arm_slice_timer`, `bfq_idle_slice_timer`), and what it learns of the device and the
//! queues to decide it: whether weights differ (`bfq_asymmetric_scenario`, from the busy
//! queues' weights, `queue_weights_tree`) and whether the device queues internally
//! (`bfq_update_hw_tag`).
//!
//! Idling pays in two cases. It *boosts throughput* when the disk is rotational and does not
//! queue, or when the queue is sequential, I/O-bound and thinks briefly: its next request
//! will come soon and close by. It is *needed for service guarantees* when the queue's weight
//! is not the smallest among busy queues (otherwise a queue that waits a moment would lose
//! its turn to queues that are always backlogged, and its share with it) or when it is the
//! only busy queue. A queue whose process has exited is never idled for.

use super::*;

impl Bfq {
    pub(super) fn seeky(q: &BfqQueue) -> bool {
        q.seek_history.count_ones() > 19
    }

    /// `bfq_asymmetric_scenario`: weights differ among busy queues, and `key` does not have
    /// the smallest (a queue with the smallest weight cannot be harmed by the others).
    pub(super) fn asymmetric(&self, key: QueueKey) -> bool {
        let Some(q) = self.queues.get(&key) else {
            return false;
        };
        let weight = self.st.entity(key).map_or(0, |e| e.weight);
        let smallest =
            q.in_weights_tree && self.weights.keys().next().is_some_and(|&w| w == weight);
        !smallest && self.weights.len() > 1
    }

    /// `idling_boosts_thr_without_issues`.
    pub(super) fn idling_boosts_throughput(&self, key: QueueKey) -> bool {
        let Some(q) = self.queues.get(&key) else {
            return false;
        };
        if !q.alive() {
            return false;
        }
        let rotational_without_queueing = self.hw_tag == 0;
        let sequential_and_io_bound = !Self::seeky(q) && q.io_bound && q.has_short_ttime;
        // On a rotational disk (the `!nonrot` in the kernel's second test is always true).
        // Not with raised queues busy: idling for this one would delay them, and they are
        // the ones that need low latency.
        (rotational_without_queueing || sequential_and_io_bound) && self.wr_busy_queues() == 0
    }

    /// `idling_needed_for_service_guarantees`. A raised queue is idled for when queues that
    /// are not raised are busy (they would take the disk while it thinks, and its raising
    /// would be for nothing), or when the device holds many requests of others.
    pub(super) fn idling_needed_for_guarantees(&self, key: QueueKey) -> bool {
        let Some(q) = self.queues.get(&key).filter(|q| q.alive()) else {
            return false;
        };
        let raised = q.wr_coeff > 1
            && (self.wr_busy_queues() < self.busy_queues
                || self.in_flight.len() >= q.dispatched + 4);
        raised || self.asymmetric(key) || self.busy_queues == 1
    }

    /// `bfq_better_to_idle`.
    pub(super) fn better_to_idle(&self, key: QueueKey) -> bool {
        let Some(q) = self.queues.get(&key) else {
            return false;
        };
        if !q.alive() {
            return false;
        }
        if self.cfg.strict_guarantees {
            return true;
        }
        if self.cfg.slice_idle == 0 || !q.sync {
            return false;
        }
        self.idling_boosts_throughput(key) || self.idling_needed_for_guarantees(key)
    }

    /// `bfq_bfqq_must_idle`.
    pub(super) fn must_idle(&self, key: QueueKey) -> bool {
        self.queues.get(&key).is_some_and(|q| q.list.is_empty()) && self.better_to_idle(key)
    }

    /// Counts the queue's weight among the busy queues' (`bfq_weights_tree_add`), unless it
    /// is raised: a raised queue is not part of the symmetric scenario in the first place.
    /// A queue of a group stands for its group, whose weight is never raised.
    pub(super) fn weights_tree_add(&mut self, key: QueueKey) {
        let weight = self
            .st
            .entity(key)
            .map_or_else(|| self.queue_weight(key), |e| e.weight);
        let grouped = self.queues.get(&key).is_some_and(|q| self.grouped(q.class));
        if let Some(q) = self.queues.get_mut(&key) {
            if !q.in_weights_tree && (grouped || q.wr_coeff == 1) {
                q.in_weights_tree = true;
                *self.weights.entry(weight).or_insert(0) += 1;
            }
        }
    }

    pub(super) fn weights_tree_remove(&mut self, key: QueueKey) {
        let weight = self.st.entity(key).map_or(0, |e| e.weight);
        if let Some(q) = self.queues.get_mut(&key) {
            if q.in_weights_tree {
                q.in_weights_tree = false;
                if let Some(n) = self.weights.get_mut(&weight) {
                    *n -= 1;
                    if *n == 0 {
                        self.weights.remove(&weight);
                    }
                }
            }
        }
    }

    /// `bfq_arm_slice_timer`.
    pub(super) fn arm_slice_timer(&mut self, now: Nanos) {
        let Some(key) = self.in_service else {
            return;
        };
        let seeky = self.queues.get(&key).is_some_and(Self::seeky);
        let asymmetric = self.asymmetric(key);
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        q.wait_request = true;
        let mut sl = self.cfg.slice_idle;
        // Do not idle long for a seeky queue, unless weights differ; a raised queue's process
        // may think longer (an application starting), so wait for it at least 20 ms.
        if seeky && q.wr_coeff == 1 && !asymmetric {
            sl = sl.min(BFQ_MIN_TT);
        } else if q.wr_coeff > 1 {
            sl = sl.max(20 * MS);
        }
        self.last_idling_start = now;
        self.idle_timer = Some(now + sl);
    }

    /// `bfq_update_hw_tag`, on each completion.
    pub(super) fn update_hw_tag(&mut self) {
        let in_driver = self.in_flight.len();
        self.max_rq_in_driver = self.max_rq_in_driver.max(in_driver);
        if self.hw_tag == 1 || in_driver + self.queued <= HW_QUEUE_THRESHOLD {
            return;
        }
        // A queue with short think times and few requests says nothing about the device.
        if let Some(q) = self.in_service.and_then(|k| self.queues.get(&k)) {
            if q.has_short_ttime
                && q.dispatched + q.list.len() < HW_QUEUE_THRESHOLD
                && in_driver < HW_QUEUE_THRESHOLD
            {
                return;
            }
        }
        self.hw_tag_samples += 1;
        if self.hw_tag_samples <= HW_QUEUE_SAMPLES {
            return;
        }
        self.hw_tag = i8::from(self.max_rq_in_driver > HW_QUEUE_THRESHOLD);
        self.max_rq_in_driver = 0;
        self.hw_tag_samples = 0;
    }

    /// `bfq_idle_slice_timer`, at its time `at`.
    pub(super) fn run_timer(&mut self, now: Nanos) {
        self.reap();
        let Some(at) = self.idle_timer.filter(|&t| t <= now) else {
            return;
        };
        self.idle_timer = None;
        self.meter.end(at, true);
        let Some(key) = self.in_service else {
            return;
        };
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        q.wait_request = false;
        let reason = if at >= q.budget_timeout {
            // Also "too idle", but the timeout matters more for the budget feedback.
            Expiration::BudgetTimeout
        } else if q.list.is_empty() {
            Expiration::TooIdle
        } else {
            return;
        };
        self.expire(key, true, reason, at);
    }
}
