//! BFQ's low-latency heuristics (`low_latency`, Linux's default 1): weight raising of
//! interactive and soft real-time queues, the detection of large bursts of queue creations,
//! and stable queue merging (the last one does not depend on `low_latency` in the kernel).
//!
//! - **Interactive raising** (`bfq_bfqq_handle_idle_busy_switch`,
//!   `bfq_update_bfqq_wr_on_rq_arrival`). A synchronous queue that becomes busy after being
//!   idle for more than `bfq_wr_min_idle_time` (2 s; a new queue counts as idle for ever) is
//!   taken for an application starting up: its weight is multiplied by `bfq_wr_coeff` (30)
//!   for `bfq_wr_duration`, the time the reference application (LibreOffice Writer) takes to
//!   start on a device of this peak rate (7 s at the reference rotational rate, scaled by
//!   reference rate / peak rate, within 3 and 25 s). The raising ends early once the queue
//!   has received `max_service_from_wr` (120000 sectors, more than the reference start-up
//!   reads): an I/O-bound process reads that much much faster than a starting application,
//!   and would otherwise steal throughput and make BFQ idle for nothing
//!   (`bfq_update_wr_data`).
//! - **Soft real-time raising** (`bfq_bfqq_softrt_next_start`). A queue that stays empty
//!   long enough for its service since it last became busy to fit in a rate of
//!   `bfq_wr_max_softrt_rate` (7000 sectors/s) is taken for a periodic, soft real-time
//!   application (a player): when it next becomes busy, and is not totally seeky (random
//!   reads look periodic too), its weight is raised 30 × 100 for `bfq_wr_rt_max_time`
//!   (300 ms), renewed at every such arrival.
//! - **While raised** a queue gets budgets of two minimum budgets, so that the share it is
//!   owed comes in small, frequent turns; its budget timeout is 30 times longer (for an
//!   interactive raising); it is not charged by time; it is idled for at least 20 ms; and
//!   idling for it counts as needed for service guarantees when non-raised queues are busy
//!   (they would take the disk while it thinks). Conversely, idling "boosts throughput
//!   without issues" only when no raised queue is busy (`idling_boosts_thr_without_issues`):
//!   idling for a non-raised queue would delay the raised ones.
//! - **Bursts** (`bfq_handle_burst`). Queues created within `bfq_burst_interval` (180 ms)
//!   of each other form a burst; once a burst reaches `bfq_large_burst_thresh` (8) queues,
//!   they and the later ones of the burst are *in a large burst* and are not raised: many
//!   processes started at once (a `git grep`, a boot) want throughput, not the latency of
//!   any one of them.
//! - **Stable merging** (`bfq_do_or_sched_stable_merge`, `bfq_setup_stable_merge`,
//!   `bfq_merge_bfqqs`, kernel 5.12 on). A synchronous queue created within the burst
//!   interval of the previous one (of the same group) is likely to cooperate with it
//!   (threads of one program, a QEMU's I/O threads). On a rotational disk BFQ waits
//!   `bfq_late_stable_merging` (600 ms) and then, at the queue's next request, merges it
//!   with that one unless idling for it would boost throughput without issues: a merged
//!   queue serves both processes' requests as one queue, in elevator order, without idling
//!   between them. A stable merge is never undone (`stably_merged`). As the kernel checks
//!   `idling_boosts_thr_without_issues`, two sequential readers are merged only while a
//!   raised queue is busy, which with `low_latency` is the case at 600 ms; seeky queues are
//!   merged with or without it.

use super::*;

/// `bfq_wr_coeff`.
pub const WR_COEFF: u64 = 30;
/// `BFQ_SOFTRT_WEIGHT_FACTOR`.
const SOFTRT_WEIGHT_FACTOR: u64 = 100;
/// `bfq_wr_rt_max_time`.
const WR_RT_MAX_TIME: Nanos = 300 * MS;
/// `bfq_wr_min_idle_time`.
pub const WR_MIN_IDLE_TIME: Nanos = 2_000 * MS;
/// `bfq_wr_min_inter_arr_async`.
const WR_MIN_INTER_ARR_ASYNC: Nanos = 500 * MS;
/// `bfq_wr_max_softrt_rate`, sectors per second.
const WR_MAX_SOFTRT_RATE: u64 = 7_000;
/// `max_service_from_wr`, sectors.
pub const MAX_SERVICE_FROM_WR: u64 = 120_000;
/// `ref_wr_duration[0]`: the reference interactive raising on a rotational device.
const REF_WR_DURATION: Nanos = 7_000 * MS;
/// The limits of `bfq_wr_duration`.
const WR_DURATION_MIN: Nanos = 3_000 * MS;
const WR_DURATION_MAX: Nanos = 25_000 * MS;
/// `bfq_burst_interval`.
pub const BURST_INTERVAL: Nanos = 180 * MS;
/// `bfq_large_burst_thresh`.
pub const LARGE_BURST_THRESH: usize = 8;
/// `bfq_activation_stable_merging` and `bfq_late_stable_merging`.
const ACTIVATION_STABLE_MERGING: Nanos = 600 * MS;
pub const LATE_STABLE_MERGING: Nanos = 600 * MS;
/// A queue idle this long after its last budget timeout leaves its burst.
pub(super) const BURST_FORGET: Nanos = 10_000 * MS;
/// A jiffy, at the kernel's default `CONFIG_HZ` (250).
const JIFFY: Nanos = 4 * MS;

impl Bfq {
    /// `bfq_wr_duration`: reference duration × reference rate / peak rate, in 3 to 25 s.
    pub fn wr_duration(&self) -> Nanos {
        let prod = u128::from(peak_rate::REF_RATE_ROTATIONAL) * u128::from(REF_WR_DURATION);
        let dur = prod / u128::from(self.rate.peak_rate.max(1));
        (dur.min(u128::from(WR_DURATION_MAX)) as Nanos).max(WR_DURATION_MIN)
    }

    /// `wr_busy_queues`: busy queues being weight-raised.
    pub(super) fn wr_busy_queues(&self) -> usize {
        self.wr_busy
    }

    /// Keeps `wr_busy` in step with queue `key`, after anything that may have changed whether
    /// it is busy or raised.
    pub(super) fn count_wr_busy(&mut self, key: QueueKey) {
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        let now = q.busy && q.wr_coeff > 1;
        if now != q.wr_busy {
            q.wr_busy = now;
            if now {
                self.wr_busy += 1;
            } else {
                self.wr_busy -= 1;
            }
        }
    }

    /// `wr_busy` counted afresh, for tests to hold the count to.
    #[cfg(test)]
    pub(super) fn recount_wr_busy(&self) -> usize {
        self.queues
            .values()
            .filter(|q| q.busy && q.wr_coeff > 1)
            .count()
    }

    /// Whether `class` stands for a BFQ group (a cgroup given a weight): the group's entity,
    /// not the queue's, competes with the other groups, and raising never touches it.
    pub(super) fn grouped(&self, class: ClassId) -> bool {
        self.class_weights.contains_key(&class)
    }

    /// `bfqq->entity.parent`: the group of a queue, `None` for the root group.
    pub(super) fn parent(&self, key: QueueKey) -> Option<ClassId> {
        self.queues
            .get(&key)
            .map(|q| q.class)
            .filter(|&c| self.grouped(c))
    }

    /// `bfq_bfqq_idle_for_long_time`. A new queue's budget timeout is minus infinity
    /// (`bfq_smallest_from_now`), and it has not been set before its first activation.
    pub(super) fn idle_for_long_time(q: &BfqQueue, now: Nanos) -> bool {
        q.dispatched == 0
            && (q.just_created || now > q.budget_timeout.saturating_add(WR_MIN_IDLE_TIME))
    }

    /// `BFQQ_TOTALLY_SEEKY`.
    fn totally_seeky(q: &BfqQueue) -> bool {
        q.seek_history == u32::MAX
    }

    /// What `bfq_bfqq_handle_idle_busy_switch` decides about raising before the budget
    /// update: (in a large burst, soft real-time, interactive, raised or deserving it).
    pub(super) fn raising_candidate(&self, key: QueueKey, now: Nanos) -> (bool, bool, bool, bool) {
        let Some(q) = self.queues.get(&key) else {
            return (false, false, false, false);
        };
        let in_burst = q.in_large_burst;
        let soft_rt =
            !Self::totally_seeky(q) && !in_burst && now > q.soft_rt_next_start && q.dispatched == 0;
        let interactive = !in_burst && Self::idle_for_long_time(q, now);
        // Only stable merging is modelled, so a shared queue is always stably merged and may
        // be raised (`bfqq_non_merged_or_stably_merged`).
        let deserves =
            self.cfg.low_latency && (q.wr_coeff > 1 || (q.sync && (interactive || soft_rt)));
        (in_burst, soft_rt, interactive, deserves)
    }

    /// `bfq_update_bfqq_wr_on_rq_arrival`.
    pub(super) fn update_wr_on_arrival(
        &mut self,
        key: QueueKey,
        old_wr_coeff: u64,
        (in_burst, soft_rt, interactive, deserves): (bool, bool, bool, bool),
        now: Nanos,
    ) {
        let duration = self.wr_duration();
        let min_budget = self.min_budget();
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        if old_wr_coeff == 1 && deserves {
            if interactive {
                q.service_from_wr = 0;
                q.wr_coeff = WR_COEFF;
                q.wr_cur_max_time = duration;
            } else {
                q.wr_start_at_switch_to_srt = None;
                q.wr_coeff = WR_COEFF * SOFTRT_WEIGHT_FACTOR;
                q.wr_cur_max_time = WR_RT_MAX_TIME;
            }
            // A budget close to its backlog: its turns come soon and end soon.
            if let Some(e) = self.st.entity_mut(key) {
                e.budget = e.budget.min(2 * min_budget);
            }
        } else if old_wr_coeff > 1 {
            if interactive {
                q.wr_coeff = WR_COEFF;
                q.wr_cur_max_time = duration;
            } else if in_burst {
                q.wr_coeff = 1;
            } else if soft_rt {
                // Still soft real-time: recharge its raising before it ends, so that it does
                // not lose it with requests pending.
                if q.wr_cur_max_time != WR_RT_MAX_TIME {
                    q.wr_start_at_switch_to_srt = Some(q.last_wr_start_finish);
                    q.wr_cur_max_time = WR_RT_MAX_TIME;
                    q.wr_coeff = WR_COEFF * SOFTRT_WEIGHT_FACTOR;
                }
                q.last_wr_start_finish = now;
            }
        }
        self.count_wr_busy(key);
    }

    /// The end of `bfq_add_request`: a busy asynchronous queue that gets a request long after
    /// its previous one is raised, and `last_wr_start_finish` holds the last arrival of a
    /// queue that is not raised, or the start of its raising.
    pub(super) fn wr_after_add(
        &mut self,
        key: QueueKey,
        was_busy: bool,
        old_wr_coeff: u64,
        sync_rq: bool,
        interactive: bool,
        now: Nanos,
    ) {
        if !self.cfg.low_latency {
            return;
        }
        let duration = self.wr_duration();
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        if was_busy
            && old_wr_coeff == 1
            && !sync_rq
            && now
                > q.last_wr_start_finish
                    .saturating_add(WR_MIN_INTER_ARR_ASYNC)
        {
            q.wr_coeff = WR_COEFF;
            q.wr_cur_max_time = duration;
        }
        if old_wr_coeff == 1 || q.wr_coeff == 1 || interactive {
            q.last_wr_start_finish = now;
        }
        self.count_wr_busy(key);
    }

    /// `bfq_bfqq_end_wr`.
    pub(super) fn end_wr(&mut self, key: QueueKey, now: Nanos) {
        if let Some(q) = self.queues.get_mut(&key) {
            q.wr_coeff = 1;
            q.wr_cur_max_time = 0;
            q.last_wr_start_finish = now;
        }
        self.count_wr_busy(key);
    }

    /// `bfq_update_wr_data`, after a dispatch from the queue in service: end its raising if
    /// it is in a large burst, its time is up (a soft real-time raising falls back to an
    /// interactive one still running), or it has had the service of the reference start-up;
    /// and apply the weight at once.
    pub(super) fn update_wr_data(&mut self, key: QueueKey, now: Nanos) {
        let duration = self.wr_duration();
        let Some(q) = self.queues.get(&key) else {
            return;
        };
        if q.wr_coeff > 1 {
            if q.in_large_burst {
                self.end_wr(key, now);
            } else if now > q.last_wr_start_finish.saturating_add(q.wr_cur_max_time) {
                let interactive_over = q
                    .wr_start_at_switch_to_srt
                    .is_none_or(|t| now > t.saturating_add(duration));
                if q.wr_cur_max_time != WR_RT_MAX_TIME || interactive_over {
                    self.end_wr(key, now);
                } else if let Some(q) = self.queues.get_mut(&key) {
                    // `switch_back_to_interactive_wr`: raised before and after.
                    q.wr_coeff = WR_COEFF;
                    q.wr_cur_max_time = duration;
                    q.last_wr_start_finish = q.wr_start_at_switch_to_srt.unwrap_or(now);
                }
            }
            if let Some(q) = self.queues.get(&key) {
                if q.wr_coeff > 1
                    && q.wr_cur_max_time != WR_RT_MAX_TIME
                    && q.service_from_wr > MAX_SERVICE_FROM_WR
                {
                    self.end_wr(key, now);
                }
            }
        }
        // `__bfq_entity_update_weight_prio` when raised-ness and weight disagree.
        let Some(q) = self.queues.get(&key) else {
            return;
        };
        if self.grouped(q.class) {
            return;
        }
        let base = self.weight_of(q.class);
        let raised = q.wr_coeff > 1;
        let weight = self.queue_weight(key);
        let Some(cur) = self.st.entity(key).map(|e| e.weight) else {
            return;
        };
        if (cur > base) != raised {
            self.weights_tree_remove(key);
            self.st.set_weight(key, weight);
            if !raised {
                self.weights_tree_add(key);
            }
        }
    }

    /// `bfq_bfqq_softrt_next_start`: the earliest time at which the queue, becoming busy,
    /// would have received its service since it last became busy at no more than the
    /// soft real-time rate; and not before an idle window (plus 4 jiffies) from now.
    pub(super) fn softrt_next_start(&self, q: &BfqQueue, now: Nanos) -> Nanos {
        let at_rate = q.last_idle_bklogged
            + q.service_from_backlogged.saturating_mul(1_000_000_000) / WR_MAX_SOFTRT_RATE;
        q.soft_rt_next_start
            .max(at_rate)
            .max(now + self.cfg.slice_idle + 4 * JIFFY)
    }

    /// `bfq_set_budget_timeout`'s coefficient: an interactive queue's weight over its
    /// original one (a soft real-time queue's turns are short by nature).
    pub(super) fn timeout_coeff(q: &BfqQueue) -> u64 {
        if q.wr_cur_max_time == WR_RT_MAX_TIME {
            1
        } else {
            q.wr_coeff.max(1)
        }
    }

    /// `__bfq_set_in_service_queue`: a soft real-time queue that waited for service past its
    /// budget timeout does not lose the raising time it spent waiting.
    pub(super) fn wr_on_set_in_service(&mut self, key: QueueKey, now: Nanos) {
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        if now > q.last_wr_start_finish
            && q.wr_coeff > 1
            && q.wr_cur_max_time == WR_RT_MAX_TIME
            && now > q.budget_timeout
        {
            if q.budget_timeout > q.last_wr_start_finish {
                q.last_wr_start_finish += now - q.budget_timeout;
            } else {
                q.last_wr_start_finish = now;
            }
        }
    }

    /// `bfq_update_io_seektime`'s rule for soft real-time queues: one that turns totally
    /// seeky is not periodic but random.
    pub(super) fn wr_on_seek(&mut self, key: QueueKey, now: Nanos) {
        let duration = self.wr_duration();
        let Some(q) = self.queues.get(&key) else {
            return;
        };
        if !(q.wr_coeff > 1 && q.wr_cur_max_time == WR_RT_MAX_TIME && Self::totally_seeky(q)) {
            return;
        }
        if q.wr_start_at_switch_to_srt
            .is_none_or(|t| now > t.saturating_add(duration))
        {
            self.end_wr(key, now);
        } else if let Some(q) = self.queues.get_mut(&key) {
            q.wr_coeff = WR_COEFF;
            q.wr_cur_max_time = duration;
            q.last_wr_start_finish = q.wr_start_at_switch_to_srt.unwrap_or(now);
        }
    }

    /// `bfq_handle_burst`, for a queue just created (`bfq_init_rq`).
    pub(super) fn handle_burst(&mut self, key: QueueKey, now: Nanos) {
        let Some(q) = self.queues.get(&key) else {
            return;
        };
        if q.in_large_burst || self.burst_list.contains(&key) {
            return;
        }
        let parent = self.parent(key);
        let late = self
            .last_ins_in_burst
            .is_none_or(|t| t.saturating_add(BURST_INTERVAL) < now);
        if late || parent != self.burst_parent {
            // The burst is over; this queue may start the next one (`bfq_reset_burst_list`).
            self.large_burst = false;
            self.burst_list.clear();
            if self.busy_queues == 0 {
                self.burst_list.push(key);
                self.burst_size = 1;
            } else {
                self.burst_size = 0;
            }
            self.burst_parent = parent;
        } else if self.large_burst {
            if let Some(q) = self.queues.get_mut(&key) {
                q.in_large_burst = true;
            }
        } else {
            // `bfq_add_to_burst`.
            self.burst_size += 1;
            if self.burst_size == LARGE_BURST_THRESH {
                self.large_burst = true;
                for k in std::mem::take(&mut self.burst_list)
                    .into_iter()
                    .chain([key])
                {
                    if let Some(q) = self.queues.get_mut(&k) {
                        q.in_large_burst = true;
                    }
                }
            } else {
                self.burst_list.push(key);
            }
        }
        self.last_ins_in_burst = Some(now);
    }

    /// Whether `key` is in a large burst (to inspect).
    pub fn in_large_burst(&self, key: QueueKey) -> bool {
        self.queues.get(&key).is_some_and(|q| q.in_large_burst)
    }

    /// A queue's weight-raising coefficient (1: not raised), to inspect.
    pub fn wr_coeff(&self, key: QueueKey) -> Option<u64> {
        self.queues.get(&key).map(|q| q.wr_coeff)
    }

    /// The queue that serves `ctx`'s synchronous requests (its own, or the one it was
    /// merged into), to inspect.
    pub fn queue_of(&self, ctx: ContextId) -> QueueKey {
        self.redirect
            .get(&ctx)
            .copied()
            .unwrap_or(QueueKey::Sync(ctx))
    }

    /// `bfq_do_or_sched_stable_merge`, for a new synchronous queue of `ctx`: remember it as
    /// the group's last created queue, or, if the last one was created within the burst
    /// interval, schedule a merge with it (rotational: decided later, see
    /// [`Self::setup_cooperator`]).
    pub(super) fn schedule_stable_merge(&mut self, key: QueueKey, ctx: ContextId, now: Nanos) {
        let parent = self.parent(key);
        let last = self
            .last_created
            .get(&parent)
            .copied()
            .and_then(|k| self.queues.get(&k).map(|q| (k, q.creation_time)));
        match last {
            Some((last, created)) if created.saturating_add(ACTIVATION_STABLE_MERGING) >= now => {
                if created.saturating_add(BURST_INTERVAL) >= now && last != key {
                    self.stable_merge.insert(ctx, last);
                }
            }
            _ => {
                self.last_created.insert(parent, key);
            }
        }
    }

    /// `bfq_setup_cooperator` (its stable-merge part) and `bfq_setup_stable_merge`, for a
    /// request of `ctx` arriving for `key`: the queue the request goes to.
    pub(super) fn setup_cooperator(
        &mut self,
        key: QueueKey,
        ctx: ContextId,
        now: Nanos,
    ) -> QueueKey {
        let Some(&target) = self.stable_merge.get(&ctx) else {
            return key;
        };
        let Some(q) = self.queues.get(&key) else {
            return key;
        };
        if !q.sync || q.just_created || now <= q.creation_time.saturating_add(LATE_STABLE_MERGING) {
            return key;
        }
        self.stable_merge.remove(&ctx);
        // Not if idling for the queue would boost throughput without hurting raised queues:
        // merged, it would lose its idling.
        let alive = |k: QueueKey| self.queues.get(&k).is_some_and(|q| q.alive());
        if self.idling_boosts_throughput(key) || !alive(key) || !alive(target) {
            return key;
        }
        // `bfq_setup_merge`.
        if target == key || self.parent(key) != self.parent(target) {
            return key;
        }
        self.merge(key, target);
        target
    }

    /// `bfq_merge_bfqqs`: the processes of `from` are redirected to `to`, which inherits
    /// `from`'s raising if it has none; `from` loses its process references.
    fn merge(&mut self, from: QueueKey, to: QueueKey) {
        let Some(f) = self.queues.get_mut(&from) else {
            return;
        };
        let members = std::mem::take(&mut f.members);
        let io_bound = f.io_bound;
        f.io_bound = false;
        let wr = (
            f.wr_coeff,
            f.wr_cur_max_time,
            f.last_wr_start_finish,
            f.wr_start_at_switch_to_srt,
        );
        if f.wr_coeff > 1 {
            f.wr_coeff = 1;
        }
        f.just_created = false;
        let Some(t) = self.queues.get_mut(&to) else {
            return;
        };
        if io_bound {
            t.io_bound = true;
        }
        if t.wr_coeff == 1 && wr.0 > 1 {
            (
                t.wr_coeff,
                t.wr_cur_max_time,
                t.last_wr_start_finish,
                t.wr_start_at_switch_to_srt,
            ) = wr;
        }
        t.coop = true;
        for c in members {
            if !t.members.contains(&c) {
                t.members.push(c);
            }
            if to == QueueKey::Sync(c) {
                self.redirect.remove(&c);
            } else {
                self.redirect.insert(c, to);
            }
            if self.stable_merge.get(&c) == Some(&to) {
                self.stable_merge.remove(&c);
            }
        }
        // `bfq_reassign_last_bfqq`.
        for v in self.last_created.values_mut() {
            if *v == from {
                *v = to;
            }
        }
        self.merges += 1;
        self.count_wr_busy(from);
        self.count_wr_busy(to);
        self.release_process_ref(from);
    }

    /// How many stable merges were made, to inspect.
    pub fn merges(&self) -> u64 {
        self.merges
    }
}
