//! Budgets: how much service a queue may receive in one turn, what it is charged, and how
//! its next budget follows from why its turn ended (`bfq_max_budget`, `bfq_serv_to_charge`,
//! `bfq_bfqq_update_budg_for_activation`, `bfq_bfqq_is_slow`, `bfq_bfqq_charge_time`,
//! `__bfq_bfqq_recalc_budget`).
//!
//! Budgets are in sectors, so a queue's share does not depend on where its data lies on the
//! disk. The feedback sizes a queue's budget to what it uses in a turn: a queue that keeps
//! emptying its backlog early gets small budgets (short turns, low latency for the others),
//! one that exhausts them gets larger ones (long sequential runs, high throughput). Queues that
//! are slow for their budget are charged by time instead, so that seeky queues cannot buy
//! disk time cheaply.

use super::*;

impl Bfq {
    /// `bfq_max_budget`: the default until the estimates are trusted.
    pub(super) fn max_budget_now(&self) -> u64 {
        if self.budgets_assigned < STATS_MIN_BUDGETS {
            DEFAULT_MAX_BUDGET
        } else {
            self.max_budget
        }
    }

    /// `bfq_min_budget`.
    pub(super) fn min_budget(&self) -> u64 {
        self.max_budget_now() / 32
    }

    /// `bfq_serv_to_charge`.
    pub(super) fn serv_to_charge(&self, key: QueueKey, rq: &Request) -> u64 {
        let sectors = u64::from(rq.sectors);
        let sync_or_raised = self
            .queues
            .get(&key)
            .is_some_and(|q| q.sync || q.wr_coeff > 1);
        if sync_or_raised || self.asymmetric(key) {
            sectors
        } else {
            sectors * ASYNC_CHARGE_FACTOR
        }
    }

    /// `bfq_may_expire_for_budg_timeout`.
    pub(super) fn may_expire_for_budget_timeout(&self, key: QueueKey, now: Nanos) -> bool {
        let Some(q) = self.queues.get(&key) else {
            return false;
        };
        let budget = self.st.entity(key).map_or(0, |e| e.budget) as i64;
        (!q.wait_request || self.st.budget_left(key) >= budget / 3) && now >= q.budget_timeout
    }

    /// `bfq_bfqq_update_budg_for_activation`: a queue with requests again. Returns whether it
    /// wants to preempt the queue in service: it expired without a budget reason, came back
    /// within three idle windows of its last completion, and still has budget.
    pub(super) fn update_budget_for_activation(
        &mut self,
        key: QueueKey,
        arrived_in_time: bool,
    ) -> bool {
        let left = self.st.budget_left(key);
        let charge = self
            .queues
            .get(&key)
            .and_then(|q| q.next_rq.and_then(|id| q.list.get(id)))
            .map(|rq| self.serv_to_charge(key, rq))
            .unwrap_or(0);
        let Some(q) = self.queues.get_mut(&key) else {
            return false;
        };
        let max_budget = q.max_budget;
        let Some(e) = self.st.entity_mut(key) else {
            return false;
        };
        if q.non_blocking_wait_rq && arrived_in_time && left > 0 {
            // The queue was idled for too short a time by the scheduler, not by itself:
            // give it back what is left of its budget, with back-shifted stamps.
            e.budget = (left as u64).min(max_budget);
            e.service = 0;
            return true;
        }
        e.service = 0;
        e.budget = max_budget.max(charge);
        q.non_blocking_wait_rq = false;
        false
    }

    /// `bfq_bfqq_is_slow`: whether to charge the queue by time, and for how long (ms) it was
    /// in service.
    pub(super) fn is_slow(&self, key: QueueKey, compensate: bool, now: Nanos) -> (bool, u64) {
        let Some(q) = self.queues.get(&key) else {
            return (false, 0);
        };
        if !q.sync {
            return (false, 0);
        }
        let mut slow = Self::seeky(q);
        let end = if compensate {
            self.last_idling_start
        } else {
            now
        };
        let elapsed = end.saturating_sub(self.last_budget_start);
        if elapsed < MS {
            // Too short to tell: charge an idle window (rotational).
            return (slow, self.cfg.slice_idle / MS);
        }
        if elapsed > 20 * MS {
            // Long enough to judge by the service received: less than half the largest
            // budget in more than 20 ms is slow.
            let service = self.st.entity(key).map_or(0, |e| e.service);
            slow = service < self.max_budget / 2;
        }
        (slow, elapsed / MS)
    }

    /// `bfq_bfqq_charge_time`, with the budget timeout charging the full `max_budget` (see
    /// the module documentation).
    pub(super) fn charge_time(&mut self, key: QueueKey, time_ms: u64) {
        let timeout_ms = (self.cfg.timeout_sync / MS).max(1);
        let max_budget = self.max_budget;
        let Some(e) = self.st.entity_mut(key) else {
            return;
        };
        let mut charge = e.service;
        if time_ms > 0 {
            charge = max_budget * time_ms.min(timeout_ms) / timeout_ms;
        }
        charge = charge.max(e.service);
        // Increase the budget to avoid inconsistencies.
        if charge > e.budget {
            e.budget = charge;
        }
        let extra = charge - e.service;
        self.served(key, extra);
    }

    /// `__bfq_bfqq_recalc_budget`: budget feedback at expiry.
    pub(super) fn recalc_budget(&mut self, key: QueueKey, reason: Expiration) {
        let min_budget = self.min_budget();
        let device_max = self.max_budget;
        let Some(q) = self.queues.get(&key) else {
            return;
        };
        // A raised queue gets small budgets, close to what it asks for: short, frequent turns.
        let mut budget = if q.wr_coeff == 1 {
            q.max_budget
        } else {
            2 * min_budget
        };
        let service = self.st.entity(key).map_or(0, |e| e.service);
        if q.sync && q.wr_coeff == 1 {
            budget = match reason {
                // The queue emptied and stayed idle: give it less, unless it still had
                // requests in flight (then it was not idle, we were too impatient).
                Expiration::TooIdle if q.dispatched > 0 => (budget * 2).min(device_max),
                Expiration::TooIdle if budget > 5 * min_budget => budget - 4 * min_budget,
                Expiration::TooIdle => min_budget,
                // Slow (or the device is): a larger budget gives it more time next turn.
                Expiration::BudgetTimeout => (budget * 2).min(device_max),
                // It used all it had and wants more: grow fast.
                Expiration::BudgetExhausted => (budget * 4).min(device_max),
                // It got what it needed.
                Expiration::NoMoreRequests => service.max(min_budget),
                Expiration::Preempted => return,
            };
        } else if !q.sync {
            budget = device_max;
        }
        let auto = self.cfg.max_budget == 0;
        let trusted = self.budgets_assigned >= STATS_MIN_BUDGETS;
        let charge = q
            .next_rq
            .and_then(|id| q.list.get(id))
            .map(|rq| self.serv_to_charge(key, rq));
        let Some(q) = self.queues.get_mut(&key) else {
            return;
        };
        q.max_budget = budget;
        if trusted && auto {
            q.max_budget = q.max_budget.min(device_max);
        }
        let max_budget = q.max_budget;
        if let (Some(charge), Some(e)) = (charge, self.st.entity_mut(key)) {
            e.budget = max_budget.max(charge);
        }
    }

    /// The estimate changed: with `max_budget` 0, the largest budget follows it.
    pub(super) fn update_max_budget(&mut self) {
        if self.cfg.max_budget == 0 {
            self.max_budget = self.rate.max_budget(self.cfg.timeout_sync);
        }
    }
}
