//! Which queue owns the disk: the round-robin service tree, time slices, and preemption
//! (`cfq_service_tree_add`, `cfq_slice_offset`, `cfq_slice_used`, `__cfq_slice_expired`,
//! `cfq_select_queue`, `cfq_should_preempt`, `cfq_preempt_queue`).
//!
//! A queue that becomes busy joins the tree at the current time plus an offset that grows
//! with the number of busy queues (so a newcomer does not jump the queues already waiting)
//! plus what was left or overrun of its previous slice; the first queue of the tree becomes
//! active and keeps the disk until its slice is used, it has nothing left and no reason to
//! idle, or another queue preempts it.

use super::*;

impl Cfq {
    /// `cfq_prio_slice` for priority `prio`.
    pub(super) fn prio_slice(&self, sync: bool, prio: i64) -> i64 {
        let base = if sync {
            self.cfg.slice_sync
        } else {
            self.cfg.slice_async
        } as i64;
        base + base / SLICE_SCALE as i64 * (4 - prio)
    }

    /// `cfq_slice_offset`: "just an approximation, should be ok".
    pub(super) fn slice_offset(&self, sync: bool) -> i64 {
        // Saturating: a million busy queues times an hour's slice passes i64 (the kernel's
        // int would wrap; the tree's order only needs "far behind").
        (self.busy_queues.saturating_sub(1) as i64)
            .saturating_mul(self.prio_slice(true, 0) - self.prio_slice(sync, IOPRIO))
    }

    /// `cfq_slice_used`.
    pub(super) fn slice_used(&self, key: QueueKey, now: Nanos) -> bool {
        let Some(q) = self.queues.get(&key) else {
            return false;
        };
        if q.slice_new {
            return false;
        }
        q.slice_end.is_none_or(|end| now >= end)
    }

    /// `cfq_service_tree_add`.
    pub(super) fn service_tree_add(&mut self, key: QueueKey, add_front: bool, now: Nanos) {
        let sync = self.queues.get(&key).is_some_and(|q| q.sync);
        let offset = self.slice_offset(sync);
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        let rb_key = if add_front {
            i64::MIN
        } else {
            let now = i64::try_from(now).unwrap_or(i64::MAX);
            let k = offset.saturating_add(now).saturating_add(q.slice_resid);
            q.slice_resid = 0;
            k
        };
        if let Some(old) = q.tree_key {
            if old.0 == rb_key {
                return; // same position, nothing more to do
            }
            self.tree.remove(&old);
        }
        self.tree_seq += 1;
        let pos = (rb_key, self.tree_seq);
        q.tree_key = Some(pos);
        self.tree.insert(pos, key);
    }

    /// `cfq_resort_rr_list`.
    pub(super) fn resort_rr_list(&mut self, key: QueueKey, now: Nanos) {
        if self.queues.get(&key).is_some_and(|q| q.on_rr) {
            self.service_tree_add(key, false, now);
        }
    }

    /// `cfq_del_cfqq_rr`: the queue has no requests left.
    pub(super) fn del_rr(&mut self, key: QueueKey) {
        if let Some(q) = self.queues.get_mut(&key) {
            if q.on_rr {
                q.on_rr = false;
                if let Some(pos) = q.tree_key.take() {
                    self.tree.remove(&pos);
                }
                self.busy_queues -= 1;
            }
        }
    }

    /// `__cfq_set_active_queue`.
    pub(super) fn set_active(&mut self, key: Option<QueueKey>) {
        if let Some(q) = key.and_then(|k| self.queues.get_mut(&k)) {
            q.slice_end = None;
            q.fifo_checked = false;
            q.slice_new = true;
        }
        self.active = key;
    }

    /// `__cfq_slice_expired`: the active queue's slice ends.
    pub(super) fn slice_expired(&mut self, timed_out: bool, now: Nanos) {
        let Some(key) = self.active else {
            return;
        };
        if let Some(q) = self.queues.get_mut(&key) {
            if q.wait_request {
                self.idle_timer = None;
            }
            q.must_dispatch = false;
            q.wait_request = false;
            // Store what was left of this slice, if the queue idled or timed out.
            if timed_out && !q.slice_new {
                if let Some(end) = q.slice_end {
                    let at = |t: Nanos| i64::try_from(t).unwrap_or(i64::MAX);
                    q.slice_resid = at(end).saturating_sub(at(now));
                }
            }
        }
        self.resort_rr_list(key, now);
        self.active = None;
        let cic = self.active_cic.take();
        self.prune_queue(key);
        if let Some(c) = cic {
            self.prune_context(c);
        }
    }

    /// `cfq_select_queue`: the queue to dispatch from, `None` to wait.
    pub(super) fn select_queue(&mut self, now: Nanos) -> Option<QueueKey> {
        if let Some(key) = self.active {
            let keep = if self.slice_used(key, now) {
                false // the active queue has run out of time
            } else {
                let q = self.queues.get(&key)?;
                if !q.list.is_empty() {
                    return Some(key);
                }
                // No requests pending: if it still has requests in flight or is idling for a
                // new one, let that happen (or time out) before choosing another queue.
                self.idle_timer.is_some() || (q.dispatched > 0 && q.idle_window)
            };
            if keep {
                return None;
            }
            self.slice_expired(false, now);
        }
        let next = self.tree.values().next().copied();
        self.set_active(next);
        next
    }

    /// `cfq_should_preempt`: should a request `rq` for queue `new` end the active slice?
    pub(super) fn should_preempt(&self, new: QueueKey, rq: &Request, now: Nanos) -> bool {
        let Some(active) = self.active.filter(|&a| a != new) else {
            return false;
        };
        if self.slice_used(active, now) {
            return true;
        }
        let Some(q) = self.queues.get(&active) else {
            return false;
        };
        // A synchronous request preempts an asynchronous slice.
        if is_sync(rq) && !q.sync {
            return true;
        }
        if !q.wait_request {
            return false;
        }
        // As good as what we expect from the active queue: let it preempt (`cfq_rq_close`).
        self.active_cic
            .and_then(|c| self.contexts.get(&c))
            .is_some_and(|cic| {
                sample_valid(cic.seek.samples)
                    && distance(self.last_position, rq.sector) <= cic.seek.mean
            })
    }

    /// `cfq_preempt_queue`: `key` takes the disk, at the front of the service tree.
    pub(super) fn preempt_queue(&mut self, key: QueueKey, now: Nanos) {
        self.slice_expired(true, now);
        self.service_tree_add(key, true, now);
        if let Some(q) = self.queues.get_mut(&key) {
            q.slice_end = None;
            q.slice_new = true;
        }
    }
}
