//! B-WF2Q+, the fair-queueing engine of BFQ (`block/bfq-wf2q.c`), flat: one service tree of
//! queues, no groups.
//!
//! Each queue is an *entity* with a weight, a budget (sectors it may consume in one turn),
//! the service it has received in its current turn, and virtual start and finish times.
//! The tree has a virtual time `vtime`, which advances by `service / wsum` as sectors are
//! served (`wsum` is the sum of the weights of the entities on the tree), so it measures the
//! service each unit of weight would have had in the ideal fluid system.
//!
//! - **Stamps.** An entity activated from idle starts at `S = vtime` (or its old finish time
//!   if that is later: it was served ahead of its share and must wait for the others) and
//!   finishes at `F = S + budget / weight`.
//! - **Selection.** An entity is *eligible* when `S <= vtime`; the next one served is the
//!   eligible entity with the smallest `F`. If none is eligible, `vtime` jumps to the
//!   smallest `S`, so the engine never idles by itself (`bfq_calc_vtime_jump`).
//! - **Requeue.** When the in-service queue expires with requests left, it is charged what it
//!   received: `S <- S + service / weight`, `F <- S + budget / weight`.
//! - **Idle tree.** An entity that empties keeps its stamps on the idle tree until `vtime`
//!   passes its `F`; if it comes back before, it resumes from `F`, so going idle for a moment
//!   does not earn it a better place (`__bfq_deactivate_entity`, `bfq_forget_idle`).
//! - **Back-shifting.** A synchronous queue cannot issue its next request before the previous
//!   one completes; if BFQ did not idle for it, the request arrives "late" and plain WF2Q+
//!   would stamp it at the current `vtime`, pushing the queue back for the scheduler's own
//!   delay. BFQ (the paper's section 3.4) stamps such a queue, re-activated within its
//!   idle window after it expired without a budget reason, from its old finish time instead:
//!   `S <- F_old`, as if it had never left. Mainline then pushes `S` and `F` up just enough
//!   for `F` to reach `vtime`, so that queues that often enjoy back-shifting cannot drift far
//!   below the others (`__bfq_activate_entity`, `bfq_update_fin_time_enqueue`).
//!
//! Timestamps are fixed point: a service of `s` sectors at weight `w` is `(s << 22) / w`
//! (`WFQ_SERVICE_SHIFT`). In 64 bits they do not wrap within any run we can simulate, so
//! plain comparisons stand for the kernel's wrap-safe `bfq_gt`.

use std::collections::{BTreeMap, HashMap};

use super::QueueKey;

/// `WFQ_SERVICE_SHIFT`.
const SERVICE_SHIFT: u32 = 22;

/// `bfq_delta`: `service` sectors at `weight` in virtual time.
fn delta(service: u64, weight: u64) -> u64 {
    (service << SERVICE_SHIFT) / weight.max(1)
}

/// Which tree an entity is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tree {
    None,
    Active,
    Idle,
}

/// `struct bfq_entity`.
#[derive(Clone, Debug)]
pub struct Entity {
    pub weight: u64,
    pub start: u64,
    pub finish: u64,
    /// Sectors it may receive in its current turn.
    pub budget: u64,
    /// Sectors it has received in its current turn.
    pub service: u64,
    /// Its queue's weight-raising coefficient, which divides the back-shift correction.
    pub wr_coeff: u64,
    tree: Tree,
    /// Counted in `wsum` (`on_st`): active, idle, or in service.
    on_st: bool,
    /// Position on its tree.
    pos: (u64, u64),
}

/// `struct bfq_service_tree` plus the `sched_data` of the root group.
#[derive(Debug, Default)]
pub struct ServiceTree {
    entities: HashMap<QueueKey, Entity>,
    /// Active entities by (finish, arrival), with their start time (fixed while on the tree),
    /// so that the lookups need not consult `entities`.
    active: BTreeMap<(u64, u64), (QueueKey, u64)>,
    idle: BTreeMap<(u64, u64), QueueKey>,
    seq: u64,
    pub vtime: u64,
    pub wsum: u64,
    /// The entity in service (`in_service_entity`).
    in_service: Option<QueueKey>,
    /// The entity to serve next (`next_in_service`), kept up to date as the kernel does.
    next_in_service: Option<QueueKey>,
}

impl ServiceTree {
    pub fn add(&mut self, key: QueueKey, weight: u64) {
        self.entities.entry(key).or_insert(Entity {
            weight,
            start: 0,
            finish: 0,
            budget: 0,
            service: 0,
            wr_coeff: 1,
            tree: Tree::None,
            on_st: false,
            pos: (0, 0),
        });
    }

    /// Forgets an entity that is on no tree.
    pub fn remove(&mut self, key: QueueKey) {
        if self
            .entities
            .get(&key)
            .is_some_and(|e| e.tree == Tree::None && !e.on_st)
            && self.in_service != Some(key)
        {
            self.entities.remove(&key);
        }
    }

    pub fn entity(&self, key: QueueKey) -> Option<&Entity> {
        self.entities.get(&key)
    }

    pub fn entity_mut(&mut self, key: QueueKey) -> Option<&mut Entity> {
        self.entities.get_mut(&key)
    }

    /// `budget - service`.
    pub fn budget_left(&self, key: QueueKey) -> i64 {
        self.entities
            .get(&key)
            .map_or(0, |e| e.budget as i64 - e.service as i64)
    }

    fn insert(&mut self, key: QueueKey, tree: Tree) {
        self.seq += 1;
        let seq = self.seq;
        let Some(e) = self.entities.get_mut(&key) else {
            return;
        };
        e.pos = (e.finish, seq);
        e.tree = tree;
        match tree {
            Tree::Active => {
                self.active.insert(e.pos, (key, e.start));
            }
            Tree::Idle => {
                self.idle.insert(e.pos, key);
            }
            Tree::None => {}
        }
    }

    fn extract(&mut self, key: QueueKey) {
        let Some(e) = self.entities.get_mut(&key) else {
            return;
        };
        match e.tree {
            Tree::Active => {
                self.active.remove(&e.pos);
            }
            Tree::Idle => {
                self.idle.remove(&e.pos);
            }
            Tree::None => {}
        }
        e.tree = Tree::None;
    }

    /// `bfq_forget_entity`: no longer counted in `wsum`.
    fn forget(&mut self, key: QueueKey) {
        if let Some(e) = self.entities.get_mut(&key) {
            if e.on_st {
                e.on_st = false;
                self.wsum -= e.weight;
            }
        }
    }

    /// `bfq_forget_idle`: drop idle entities whose finish time `vtime` has passed.
    fn forget_idle(&mut self) {
        let last_idle = self.idle.keys().next_back().map(|p| p.0);
        if self.active.is_empty() {
            if let Some(last) = last_idle.filter(|&f| f <= self.vtime) {
                // Forget the whole idle tree, moving vtime to the last idle finish time.
                self.vtime = last;
            }
        }
        if let Some((&pos, &key)) = self.idle.iter().next() {
            if pos.0 <= self.vtime {
                self.extract(key);
                self.forget(key);
            }
        }
    }

    /// `bfq_update_vtime`.
    fn update_vtime(&mut self, v: u64) {
        if v > self.vtime {
            self.vtime = v;
            self.forget_idle();
        }
    }

    /// `bfq_update_fin_time_enqueue`: apply a weight change, stamp `F` from the budget, and
    /// insert into the active tree.
    fn fin_time_enqueue(&mut self, key: QueueKey, weight: u64, backshifted: bool) {
        let vtime = self.vtime;
        let Some(e) = self.entities.get_mut(&key) else {
            return;
        };
        if e.weight != weight {
            if e.on_st {
                self.wsum = self.wsum - e.weight + weight;
            }
            e.weight = weight;
        }
        e.finish = e.start + delta(e.budget, e.weight);
        // Push back-shifted stamps up just enough for F to reach vtime: back-shifted queues
        // that are often idle could otherwise fall far below vtime and then monopolize the
        // device.
        if backshifted && vtime > e.finish {
            // A raised queue is pushed up less: its weight is meant to get it ahead.
            let d = (vtime - e.finish) / e.wr_coeff.max(1);
            e.start += d;
            e.finish += d;
        }
        self.insert(key, Tree::Active);
    }

    /// `__bfq_activate_entity`: a true activation of an entity with no requests.
    /// `non_blocking_wait_rq`: it expired without a budget reason and came back in time, so
    /// its stamps are back-shifted.
    pub fn activate(&mut self, key: QueueKey, weight: u64, non_blocking_wait_rq: bool) {
        let vtime = self.vtime;
        let Some(e) = self.entities.get(&key) else {
            return;
        };
        let backshifted = non_blocking_wait_rq && vtime > e.finish;
        let min_vstart = if backshifted { e.finish } else { vtime };
        if self.in_service == Some(key) || e.tree == Tree::Active {
            self.requeue(key, weight);
            return;
        }
        if e.tree == Tree::Idle {
            self.extract(key);
            if let Some(e) = self.entities.get_mut(&key) {
                e.start = min_vstart.max(e.finish);
            }
        } else if let Some(e) = self.entities.get_mut(&key) {
            e.start = min_vstart;
            if !e.on_st {
                e.on_st = true;
                self.wsum += e.weight;
            }
        }
        self.fin_time_enqueue(key, weight, backshifted);
    }

    /// `__bfq_requeue_entity`: reposition an active entity, or requeue the in-service one
    /// charging it the service it received.
    pub fn requeue(&mut self, key: QueueKey, weight: u64) {
        let in_service = self.in_service == Some(key);
        if in_service {
            if let Some(e) = self.entities.get_mut(&key) {
                e.finish = e.start + delta(e.service, e.weight);
                e.start = e.finish;
            }
        }
        self.extract(key);
        self.fin_time_enqueue(key, weight, false);
    }

    /// `__bfq_deactivate_entity`: the entity leaves the schedule; onto the idle tree if
    /// `ins_into_idle_tree` and it finishes after `vtime`.
    pub fn deactivate(&mut self, key: QueueKey, ins_into_idle_tree: bool) {
        let Some(e) = self.entities.get(&key) else {
            return;
        };
        if !e.on_st {
            return;
        }
        if self.in_service == Some(key) {
            if let Some(e) = self.entities.get_mut(&key) {
                e.finish = e.start + delta(e.service, e.weight);
            }
            self.in_service = None;
        }
        self.extract(key);
        let finish = self.entities.get(&key).map_or(0, |e| e.finish);
        if !ins_into_idle_tree || finish <= self.vtime {
            self.forget(key);
        } else {
            self.insert(key, Tree::Idle);
        }
    }

    /// `__bfq_entity_update_weight_prio` for an entity in service or on a tree: a new weight,
    /// counted in `wsum` at once.
    pub fn set_weight(&mut self, key: QueueKey, weight: u64) {
        if let Some(e) = self.entities.get_mut(&key) {
            if e.on_st {
                self.wsum = self.wsum - e.weight + weight;
            }
            e.weight = weight;
        }
    }

    /// `bfq_bfqq_served`: `served` sectors go to `key`.
    pub fn served(&mut self, key: QueueKey, served: u64) {
        if let Some(e) = self.entities.get_mut(&key) {
            e.service += served;
        }
        if self.wsum > 0 {
            self.vtime += delta(served, self.wsum);
        }
        self.forget_idle();
    }

    /// `bfq_lookup_next_entity`: the eligible entity with the smallest finish time, making one
    /// eligible first by moving `vtime` if nothing is in service (or the in-service entity is
    /// expiring).
    fn lookup_next(&mut self, expiration: bool) -> Option<QueueKey> {
        let min_start = self.active.values().map(|&(_, start)| start).min()?;
        let new_vtime = self.vtime.max(min_start);
        if self.in_service.is_none() || expiration {
            self.update_vtime(new_vtime);
        }
        self.active
            .values()
            .find(|&&(_, start)| start <= new_vtime)
            .map(|&(key, _)| key)
    }

    /// `bfq_update_next_in_service`: `new` was just activated or requeued.
    pub fn update_next_in_service(&mut self, new: Option<QueueKey>, expiration: bool) {
        if let Some(n) = new.filter(|&n| Some(n) != self.next_in_service) {
            let change = match self.next_in_service.and_then(|c| self.entities.get(&c)) {
                None => true,
                Some(cur) => self
                    .entities
                    .get(&n)
                    .is_some_and(|e| e.start <= self.vtime && cur.finish > e.finish),
            };
            if change {
                self.next_in_service = Some(n);
                return;
            }
        }
        self.next_in_service = self.lookup_next(expiration);
    }

    /// An entity left the schedule: if it was the next one, find another.
    pub fn deactivated(&mut self, key: QueueKey, expiration: bool) {
        if self.next_in_service == Some(key) {
            self.update_next_in_service(None, expiration);
        }
    }

    /// `bfq_get_next_queue`: put the next entity in service.
    pub fn get_next(&mut self) -> Option<QueueKey> {
        let key = match self.next_in_service {
            Some(k) => k,
            None => self.lookup_next(false)?,
        };
        self.in_service = Some(key);
        if let Some(e) = self.entities.get_mut(&key) {
            e.service = 0;
        }
        self.extract(key);
        self.update_next_in_service(None, false);
        Some(key)
    }

    /// `__bfq_bfqd_reset_in_service`.
    pub fn reset_in_service(&mut self) {
        self.in_service = None;
    }

    pub fn in_service(&self) -> Option<QueueKey> {
        self.in_service
    }

    /// Whether the entity is counted in the schedule (active, idle or in service).
    pub fn on_tree(&self, key: QueueKey) -> bool {
        self.entities.get(&key).is_some_and(|e| e.on_st)
    }

    /// Whether the entity is on the active tree.
    pub fn is_active(&self, key: QueueKey) -> bool {
        self.entities
            .get(&key)
            .is_some_and(|e| e.tree == Tree::Active)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ContextId;

    fn key(n: u32) -> QueueKey {
        QueueKey::Sync(ContextId(n))
    }

    #[test]
    fn serves_the_eligible_entity_with_the_smallest_finish() {
        let mut st = ServiceTree::default();
        for (k, w) in [(1, 100), (2, 200)] {
            st.add(key(k), w);
            st.entity_mut(key(k)).unwrap().budget = 1000;
            st.activate(key(k), w, false);
            st.update_next_in_service(Some(key(k)), false);
        }
        // Same start, F = S + 1000/w: the heavier one finishes first.
        assert_eq!(st.get_next(), Some(key(2)));
        assert_eq!(st.wsum, 300);
    }

    #[test]
    fn a_requeued_entity_is_charged_its_service() {
        let mut st = ServiceTree::default();
        st.add(key(1), 100);
        st.entity_mut(key(1)).unwrap().budget = 1000;
        st.activate(key(1), 100, false);
        st.update_next_in_service(Some(key(1)), false);
        assert_eq!(st.get_next(), Some(key(1)));
        st.served(key(1), 400);
        st.requeue(key(1), 100);
        let e = st.entity(key(1)).unwrap();
        assert_eq!(e.start, delta(400, 100));
        assert_eq!(e.finish, e.start + delta(1000, 100));
    }
}
