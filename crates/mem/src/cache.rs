//! A reusable adaptive cache policy (sections 4.7 and 6.2.3).
//!
//! An application cache whose entries can be regenerated (query results, decoded images,
//! rendered pages) keeps, per entry, what the cost rule needs: the cost of freeing it, the
//! cost of regenerating it, the probability it is used again, and when it was last used.
//! On each notification the policy releases entries whose amortized cost (Eq. 4.3) is below
//! the paging cost at the severity the application is told (Eq. 4.2), cheapest first, a few
//! MB per round; then the driver re-checks S before the next round, because releasing too much
//! at once cost the thesis's database up to 47% (section 6.2.6, lesson 1). While S is below
//! S_max the cache does not grow past what it holds (new entries replace the cheapest); when S
//! returns to S_max it may grow again.
//!
//! The policy holds no memory itself: it tracks keys and sizes and tells the application which
//! keys to drop. The same type with a fixed limit and no notifications is a conventional
//! cache, so the experiments compare replacement orders on equal terms (section 6.2.6,
//! lesson 2: least amortized cost first beat LRU by about 20%).

use std::hash::Hash;

use antsched_core::Nanos;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::cost::{ChunkCost, PagingCost};

/// The probability that a result is used again while keeping it is worth it, priced by how
/// often it was asked: the thesis's database noted each buffer's "frequency of access to guess
/// the probability of future accesses" (section 6.2.3). Without it Eq. 4.3 ranks results by
/// recency alone, and a rarely asked result that happens to be recent outlives a popular one
/// that happens to be idle: LRU, where section 4.5's equilibrium assumes the frequency order
/// (T ≈ 1/F(M)).
///
/// p = 1 - exp(-rate * horizon), where rate = `asks_before` / `life_s` (the asks of this
/// result before the one that brought it in, over the asker's life so far, at least 1 s) and
/// horizon = `regen_cost_s` / `paging_per_s`: the idle time after which a result of this
/// regeneration cost is cheaper to drop than to page, at the paging cost per second of
/// holding it (Eq. 4.2) at the severity last told (Eq. 4.3 with p = 1 against Eq. 4.2). The
/// ask that brought the result in is certain to have happened and is not counted: counting it
/// would price every rarely asked result as if it were asked once a life, which favours the
/// cache that keeps the rarer results (the one niced less) and bends the weighted
/// equilibrium. Before any notification (`paging_per_s` None) there is no horizon, and p is 1.
///
/// The simulator's caches (`sim`) and the real programs (`examples/zipf-cache`) both price
/// their entries with this one rule.
pub fn reuse_by_frequency(
    asks_before: u64,
    life_s: f64,
    regen_cost_s: f64,
    paging_per_s: Option<f64>,
) -> f64 {
    let Some(paging) = paging_per_s else {
        return 1.0;
    };
    let horizon = regen_cost_s / paging.max(f64::MIN_POSITIVE);
    let rate = asks_before as f64 / life_s.max(1.0);
    -(-rate * horizon).exp_m1()
}

/// Which entry goes first when the cache must shrink (section 6.2.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReleaseOrder {
    /// Least recently used first.
    Lru,
    /// Among the [`LOOKAHEAD`] least recently used, the cheapest to regenerate first: LRU that
    /// spares an expensive result that happens to be old.
    LruLookahead,
    /// Least amortized cost (Eq. 4.3) first: the thesis's policy.
    LeastAmortizedCost,
}

/// How far LRU with look-ahead looks.
pub const LOOKAHEAD: usize = 16;

/// What an entry costs, as the application knows it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EntryCost {
    pub free_cost_s: f64,
    pub regen_cost_s: f64,
    pub reuse_p: f64,
}

/// The policy's settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheConfig {
    /// At most this much is released per round before S is checked again: "a few MB" (4 MiB).
    pub round_bytes: u64,
    pub order: ReleaseOrder,
    /// A fixed capacity (a conventional cache), or none: the cache is bounded only by the
    /// severity.
    pub max_bytes: Option<u64>,
    /// Whether the cache follows notifications at all.
    pub adaptive: bool,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            round_bytes: 4 << 20,
            order: ReleaseOrder::LeastAmortizedCost,
            max_bytes: None,
            adaptive: true,
        }
    }
}

#[derive(Clone, Debug)]
struct Entry<K> {
    key: K,
    bytes: u64,
    cost: EntryCost,
    last_access: Nanos,
    /// Its release queue, fixed by its cost when it was inserted.
    queue: u32,
    /// Its insertion sequence: the order key after `last_access`.
    seq: u64,
}

/// An entry's place, aligned to the processor's cache line: with small keys an entry is 64
/// bytes, one line, where unaligned it straddled two.
#[derive(Clone, Debug)]
#[repr(align(64))]
struct Slot<K>(Option<Entry<K>>);

// The simulator's key: its entries must stay one line each.
const _: () = assert!(std::mem::size_of::<Slot<u32>>() == 64);

/// A slot's neighbours in its queue (NIL at the ends). Kept apart from the entries, eight
/// bytes a slot, so that the links of a large cache stay in the processor's cache: a hit's
/// move to the back of its queue rewrites its neighbours' links, which as fields of their
/// entries were two cache misses a hit.
#[derive(Clone, Copy, Debug)]
struct Link {
    prev: u32,
    next: u32,
}

impl<K> Entry<K> {
    fn chunk(&self) -> ChunkCost {
        ChunkCost {
            free_cost_s: self.cost.free_cost_s,
            regen_cost_s: self.cost.regen_cost_s,
            reuse_p: self.cost.reuse_p,
            last_access: self.last_access,
        }
    }
}

/// What one release round did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Round<K> {
    /// The keys to drop, in the order they were chosen.
    pub released: Vec<K>,
    pub bytes: u64,
    /// More entries were cheaper than paging than one round may release: run another round
    /// once S has been checked again.
    pub more: bool,
}

/// The adaptive cache policy over keys `K`.
#[derive(Clone, Debug)]
pub struct AdaptiveCache<K> {
    config: CacheConfig,
    index: FxHashMap<K, u32>,
    slots: Vec<Slot<K>>,
    /// Each slot's [`Link`].
    links: Vec<Link>,
    free_slots: Vec<u32>,
    /// The release queues, each a list of slots least recently used first (by last access,
    /// then insertion sequence). Time only moves forward for a real caller, so a touched or
    /// new entry goes to the back in O(1); a caller that goes back in time pays a walk. The LRU orders keep one; least amortized cost keeps one per [`cost bin`]
    /// (the thesis's database kept its pages "in application-level bins by amortized cost",
    /// section 6.2.3), so that the cheapest entry is the cheapest of the bins' heads and a
    /// round never scans the whole cache.
    ///
    /// [`cost bin`]: cost_bin
    queues: Vec<Queue>,
    /// Which queues hold entries, a bit each: the cheapest entry is looked for only there.
    occupied: [u64; COST_BINS.div_ceil(64)],
    next_seq: u64,
    bytes: u64,
    /// The size the cache holds to while S is below S_max, set by the last release round.
    pressure_limit: Option<u64>,
    /// A cap set from outside the cost rule (a baseline controller's trim), if any.
    hold: Option<u64>,
}

/// Cost bins per doubling of an entry's value (C_f + p * C_r): within a bin values differ by
/// at most 2^(1/4), about 19%, so taking a bin's least recently used entry as its cheapest
/// is wrong by at most that much.
const BINS_PER_OCTAVE: f64 = 4.0;
/// The cheapest value with a bin of its own, s (1 ns); cheaper (and free) entries share bin 0.
const MIN_VALUE_S: f64 = 1e-9;
/// Bins up to values of about 10^6 s; dearer entries share the last.
const COST_BINS: usize = 208;

/// No slot.
const NIL: u32 = u32::MAX;

/// A release queue: the first and last slot of its list, and a copy of what the head entry
/// costs and its order key. [`AdaptiveCache::cheapest`] compares every occupied queue's head
/// once per victim; reading them from this array instead of from each head's slot spares a
/// cache miss per queue (a round or an eviction looks at up to [`COST_BINS`] heads).
#[derive(Clone, Copy, Debug)]
struct Queue {
    head: u32,
    tail: u32,
    /// The head entry's cost and last access (meaningless while the queue is empty).
    head_cost: ChunkCost,
    /// The head entry's insertion sequence.
    head_seq: u64,
}

impl Queue {
    const EMPTY: Queue = Queue {
        head: NIL,
        tail: NIL,
        head_cost: ChunkCost {
            free_cost_s: 0.0,
            regen_cost_s: 0.0,
            reuse_p: 0.0,
            last_access: 0,
        },
        head_seq: 0,
    };
}

/// The cost bin of an entry worth `value_s` to keep (Eq. 4.3's numerator).
fn cost_bin(value_s: f64) -> usize {
    if value_s.is_nan() || value_s <= MIN_VALUE_S {
        return 0;
    }
    let octaves = (value_s / MIN_VALUE_S).log2();
    ((octaves * BINS_PER_OCTAVE) as usize + 1).min(COST_BINS - 1)
}

impl<K: Hash + Eq + Clone> AdaptiveCache<K> {
    pub fn new(config: CacheConfig) -> Self {
        let queues = match config.order {
            ReleaseOrder::LeastAmortizedCost => COST_BINS,
            ReleaseOrder::Lru | ReleaseOrder::LruLookahead => 1,
        };
        Self {
            config,
            index: FxHashMap::default(),
            slots: Vec::new(),
            links: Vec::new(),
            free_slots: Vec::new(),
            queues: vec![Queue::EMPTY; queues],
            occupied: [0; COST_BINS.div_ceil(64)],
            next_seq: 0,
            bytes: 0,
            pressure_limit: None,
            hold: None,
        }
    }

    /// The release queue of an entry that costs `cost`.
    fn queue_for(&self, cost: &EntryCost) -> usize {
        match self.config.order {
            ReleaseOrder::LeastAmortizedCost => {
                cost_bin(cost.free_cost_s + cost.reuse_p * cost.regen_cost_s)
            }
            ReleaseOrder::Lru | ReleaseOrder::LruLookahead => 0,
        }
    }

    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The size the cache may not pass now: the fixed capacity, or while under pressure the
    /// size the last round left.
    pub fn limit(&self) -> Option<u64> {
        [self.config.max_bytes, self.pressure_limit, self.hold]
            .into_iter()
            .flatten()
            .min()
    }

    /// Caps the cache from outside the cost rule (a controller that trims on its own signal),
    /// dropping entries in the release order down to the cap; `None` lifts the cap.
    pub fn hold_at(&mut self, cap: Option<u64>, now: Nanos) -> Vec<K> {
        self.hold = cap;
        match cap {
            Some(cap) => self.evict_to(cap, now),
            None => Vec::new(),
        }
    }

    /// A lookup: a hit refreshes the entry's last access.
    pub fn get(&mut self, key: &K, now: Nanos) -> bool {
        let Some(&slot) = self.index.get(key) else {
            return false;
        };
        self.touch(slot, now);
        true
    }

    pub fn contains(&self, key: &K) -> bool {
        self.index.contains_key(key)
    }

    fn touch(&mut self, slot: u32, now: Nanos) {
        let e = self.entry_mut(slot);
        let q = e.queue as usize;
        let last_access = now.max(e.last_access);
        if last_access == e.last_access {
            return;
        }
        e.last_access = last_access;
        self.unlink(q, slot);
        self.link(q, slot);
    }

    /// The order key of a slot in its queue.
    fn key_of(&self, slot: u32) -> (Nanos, u64) {
        let e = self.entry(slot);
        (e.last_access, e.seq)
    }

    /// Puts `slot` into queue `q` after the last entry whose key is not greater than its own.
    fn link(&mut self, q: usize, slot: u32) {
        let key = self.key_of(slot);
        let mut after = self.queues[q].tail;
        while after != NIL && self.key_of(after) > key {
            after = self.links[after as usize].prev;
        }
        let before = if after == NIL {
            self.queues[q].head
        } else {
            self.links[after as usize].next
        };
        self.links[slot as usize] = Link {
            prev: after,
            next: before,
        };
        if after == NIL {
            self.queues[q].head = slot;
        } else {
            self.links[after as usize].next = slot;
        }
        if before == NIL {
            self.queues[q].tail = slot;
        } else {
            self.links[before as usize].prev = slot;
        }
        if self.queues[q].head == slot && self.queues[q].tail == slot {
            self.occupied[q / 64] |= 1 << (q % 64);
        }
        self.refresh_head(q);
    }

    fn unlink(&mut self, q: usize, slot: u32) {
        let Link { prev: p, next: n } = self.links[slot as usize];
        if p == NIL {
            self.queues[q].head = n;
        } else {
            self.links[p as usize].next = n;
        }
        if n == NIL {
            self.queues[q].tail = p;
        } else {
            self.links[n as usize].prev = p;
        }
        if self.queues[q].head == NIL {
            self.occupied[q / 64] &= !(1 << (q % 64));
        } else {
            self.refresh_head(q);
        }
    }

    /// Copies queue `q`'s head entry's cost and order key into the queue (see [`Queue`]).
    fn refresh_head(&mut self, q: usize) {
        let head = self.queues[q].head;
        let e = self.entry(head);
        let (cost, seq) = (e.chunk(), e.seq);
        let queue = &mut self.queues[q];
        queue.head_cost = cost;
        queue.head_seq = seq;
    }

    /// The slots of queue `q`, least recently used first.
    fn iter_queue(&self, q: usize) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(
            (self.queues[q].head != NIL).then_some(self.queues[q].head),
            move |&s| {
                let n = self.links[s as usize].next;
                (n != NIL).then_some(n)
            },
        )
    }

    /// Whether an entry of `bytes` may be cached at all (it is not larger than the limit).
    pub fn admits(&self, bytes: u64) -> bool {
        self.limit().is_none_or(|l| bytes <= l)
    }

    /// The keys to drop so that `bytes` more fit under the limit, chosen in the release order;
    /// they are removed from the policy. Empty when there is room (or no limit).
    pub fn evict_for(&mut self, bytes: u64, now: Nanos) -> Vec<K> {
        let mut out = Vec::new();
        let Some(limit) = self.limit() else {
            return out;
        };
        while self.bytes + bytes > limit && !self.is_empty() {
            let Some(slot) = self.victim(now) else { break };
            out.push(self.remove_slot(slot));
        }
        out
    }

    /// Drops entries in the release order until the cache holds at most `target` bytes (a
    /// baseline's trim); they are removed from the policy.
    pub fn evict_to(&mut self, target: u64, now: Nanos) -> Vec<K> {
        let mut out = Vec::new();
        while self.bytes > target && !self.is_empty() {
            let Some(slot) = self.victim(now) else { break };
            out.push(self.remove_slot(slot));
        }
        out
    }

    /// Adds an entry (after [`evict_for`](Self::evict_for)); replaces an entry of the same key.
    pub fn insert(&mut self, key: K, bytes: u64, cost: EntryCost, now: Nanos) {
        if let Some(&slot) = self.index.get(&key) {
            self.remove_slot(slot);
        }
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            self.slots.push(Slot(None));
            self.links.push(Link {
                prev: NIL,
                next: NIL,
            });
            (self.slots.len() - 1) as u32
        });
        let q = self.queue_for(&cost);
        self.slots[slot as usize].0 = Some(Entry {
            key: key.clone(),
            bytes,
            cost,
            last_access: now,
            queue: q as u32,
            seq: self.next_seq,
        });
        self.link(q, slot);
        self.next_seq += 1;
        self.index.insert(key, slot);
        self.bytes += bytes;
    }

    /// Drops an entry the application removed on its own.
    pub fn remove(&mut self, key: &K) -> bool {
        match self.index.get(key) {
            Some(&slot) => {
                self.remove_slot(slot);
                true
            }
            None => false,
        }
    }

    fn remove_slot(&mut self, slot: u32) -> K {
        let q = self.entry(slot).queue as usize;
        self.unlink(q, slot);
        let e = self.slots[slot as usize].0.take().expect("indexed slot");
        self.index.remove(&e.key);
        self.free_slots.push(slot);
        self.bytes -= e.bytes;
        e.key
    }

    /// Which entry of an LRU window goes: the first (LRU) or the cheapest to regenerate.
    fn pick(&self, window: &[u32]) -> Option<usize> {
        if self.config.order == ReleaseOrder::Lru {
            return (!window.is_empty()).then_some(0);
        }
        (0..window.len()).min_by(|&a, &b| {
            let ca = self.entry(window[a]).cost.regen_cost_s;
            let cb = self.entry(window[b]).cost.regen_cost_s;
            ca.total_cmp(&cb)
        })
    }

    /// The next entry to go, in the release order.
    fn victim(&self, now: Nanos) -> Option<u32> {
        match self.config.order {
            ReleaseOrder::Lru | ReleaseOrder::LruLookahead => {
                let window: Vec<u32> = self.iter_queue(0).take(LOOKAHEAD).collect();
                self.pick(&window).map(|i| window[i])
            }
            ReleaseOrder::LeastAmortizedCost => self.cheapest(now).map(|(_, slot)| slot),
        }
    }

    fn entry(&self, slot: u32) -> &Entry<K> {
        self.slots[slot as usize].0.as_ref().expect("indexed slot")
    }

    fn entry_mut(&mut self, slot: u32) -> &mut Entry<K> {
        self.slots[slot as usize].0.as_mut().expect("indexed slot")
    }

    /// The entry of least amortized cost and its cost: the cheapest of the cost bins' least
    /// recently used entries (ties to the older entry). A plain loop over the occupied bits
    /// and the heads' copies in `queues`: this runs once per entry released or evicted.
    fn cheapest(&self, now: Nanos) -> Option<(f64, u32)> {
        let mut best: Option<(f64, Nanos, u64, u32)> = None;
        for (word, &bits) in self.occupied.iter().enumerate() {
            let mut rest = bits;
            while rest != 0 {
                let q = &self.queues[word * 64 + rest.trailing_zeros() as usize];
                rest &= rest - 1;
                let cand = (
                    q.head_cost.amortized(now),
                    q.head_cost.last_access,
                    q.head_seq,
                    q.head,
                );
                let better = best.is_none_or(|b| {
                    cand.0
                        .total_cmp(&b.0)
                        .then((cand.1, cand.2).cmp(&(b.1, b.2)))
                        .is_lt()
                });
                if better {
                    best = Some(cand);
                }
            }
        }
        best.map(|(cost, _, _, slot)| (cost, slot))
    }

    /// One release round at the severity this application is told (section 6.2.3): release,
    /// in the release order, entries whose amortized cost is below the paging cost, until
    /// `round_bytes` are released; then hold the size if anything was released, or lift the
    /// hold when nothing was cheaper than paging or S is at S_max (grow back).
    pub fn release_round(
        &mut self,
        severity_s: f64,
        s_max: f64,
        paging: &PagingCost,
        now: Nanos,
    ) -> Round<K> {
        let mut round = Round {
            released: Vec::new(),
            bytes: 0,
            more: false,
        };
        if !self.config.adaptive {
            return round;
        }
        let threshold = paging.amortized(severity_s);
        // Release in the order, while the next entry is cheaper than paging and fits in
        // the round: never more than asked (a round that cannot take the next entry whole
        // stops there and says there is more).
        if self.config.order == ReleaseOrder::LeastAmortizedCost {
            while let Some((cost, slot)) = self.cheapest(now) {
                if cost >= threshold {
                    break;
                }
                if round.bytes + self.entry(slot).bytes > self.config.round_bytes {
                    round.more = true;
                    break;
                }
                round.bytes += self.entry(slot).bytes;
                round.released.push(self.remove_slot(slot));
            }
        } else {
            let look = if self.config.order == ReleaseOrder::Lru {
                1
            } else {
                LOOKAHEAD
            };
            let mut chosen = Vec::new();
            {
                let mut bytes = 0;
                let mut lru = self.iter_queue(0);
                let mut window: Vec<u32> = Vec::with_capacity(look);
                loop {
                    window.extend(lru.by_ref().take(look - window.len()));
                    let Some(i) = self.pick(&window) else { break };
                    let slot = window.remove(i);
                    if self.entry(slot).chunk().amortized(now) >= threshold {
                        break;
                    }
                    if bytes + self.entry(slot).bytes > self.config.round_bytes {
                        round.more = true;
                        break;
                    }
                    bytes += self.entry(slot).bytes;
                    chosen.push(slot);
                }
            }
            for slot in chosen {
                round.bytes += self.entry(slot).bytes;
                round.released.push(self.remove_slot(slot));
            }
        }
        // Shrink or grow until the criterion is met (section 4.7, tier 2): a round that
        // released something holds the size, so that new entries replace the cheapest instead
        // of pushing S further down; a round that found nothing cheaper than paging lets the
        // cache grow again. The cache settles where its marginal entry costs what paging
        // costs: the weighted equilibrium of section 4.5.
        //
        // At S_max the rule still releases what is cheaper than paging (tier 2: buffers older
        // than S), but never holds: there is no pressure to hold against, and the cache grows
        // back.
        self.pressure_limit = if round.released.is_empty() || severity_s >= s_max {
            None
        } else {
            Some(self.bytes)
        };
        round
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const S: Nanos = 1_000_000_000;
    const PAGING: PagingCost = PagingCost {
        disk_service_s: 0.01,
        disk_queue: 1.0,
    };

    fn cost(regen: f64) -> EntryCost {
        EntryCost {
            free_cost_s: 0.0,
            regen_cost_s: regen,
            reuse_p: 1.0,
        }
    }

    /// The frequency pricing: p is 1 before any notification, 0 for a result never asked
    /// before, and 1 - exp(-rate * horizon) otherwise, rising with the asks and with the
    /// regeneration cost, falling as paging gets dearer (a smaller S).
    #[test]
    fn reuse_by_frequency_prices_by_asks_horizon_and_paging() {
        assert_eq!(reuse_by_frequency(7, 100.0, 0.005, None), 1.0);
        assert_eq!(reuse_by_frequency(0, 100.0, 0.005, Some(1e-4)), 0.0);
        // 10 asks in 100 s, horizon 0.005 / 1e-4 = 50 s: 1 - e^-5.
        let p = reuse_by_frequency(10, 100.0, 0.005, Some(1e-4));
        assert!((p - (1.0 - (-5.0f64).exp())).abs() < 1e-12, "{p}");
        assert!(reuse_by_frequency(20, 100.0, 0.005, Some(1e-4)) > p);
        assert!(reuse_by_frequency(10, 100.0, 0.010, Some(1e-4)) > p);
        assert!(reuse_by_frequency(10, 100.0, 0.005, Some(1e-3)) < p);
        // A life under a second counts as one.
        assert_eq!(
            reuse_by_frequency(1, 0.001, 0.005, Some(1e-2)),
            reuse_by_frequency(1, 1.0, 0.005, Some(1e-2))
        );
    }

    /// Section 6.2.3: a round releases what is cheaper than paging, cheapest first, keeps what
    /// is dearer, and holds the size while S < S_max; S back at S_max lifts the hold.
    #[test]
    fn section_6_2_3_a_round_releases_cheap_entries_first_and_holds_the_size() {
        let mut c = AdaptiveCache::new(CacheConfig::default());
        c.insert("old-cheap", 4096, cost(0.001), 0);
        c.insert("old-dear", 4096, cost(10.0), 0);
        c.insert("new-cheap", 4096, cost(0.001), 999 * S);
        let r = c.release_round(512.0, 3600.0, &PAGING, 1000 * S);
        assert_eq!(r.released, vec!["old-cheap"]);
        assert!(!r.more);
        assert_eq!(c.limit(), Some(8192));
        // Under the hold a new entry replaces the cheapest one.
        assert_eq!(c.evict_for(4096, 1000 * S), vec!["new-cheap"]);
        c.insert("newer", 4096, cost(0.001), 1000 * S);
        assert_eq!(c.bytes(), 8192);
        // Back at S_max: nothing released, the hold is lifted.
        let r = c.release_round(3600.0, 3600.0, &PAGING, 1001 * S);
        assert!(r.released.is_empty());
        assert_eq!(c.limit(), None);
        assert!(c.evict_for(1 << 30, 1001 * S).is_empty());
    }

    /// Section 6.2.6, lesson 1: a few MB per round, then S is checked again.
    #[test]
    fn section_6_2_6_a_round_releases_at_most_round_bytes() {
        let mut c = AdaptiveCache::new(CacheConfig {
            round_bytes: 10 * 4096,
            ..Default::default()
        });
        for i in 0..100 {
            c.insert(i, 4096, cost(1e-6), 0);
        }
        let r = c.release_round(100.0, 3600.0, &PAGING, 100 * S);
        assert_eq!(r.bytes, 10 * 4096);
        assert!(r.more);
        assert_eq!(c.len(), 90);
    }

    /// Section 6.2.6, lesson 2: the three orders pick different victims.
    #[test]
    fn section_6_2_6_release_orders() {
        let fill = |order| {
            let mut c = AdaptiveCache::new(CacheConfig {
                order,
                max_bytes: Some(3 * 4096),
                ..Default::default()
            });
            c.insert("oldest-dear", 4096, cost(1.0), 0);
            c.insert("old-cheap", 4096, cost(0.001), S);
            c.insert("new-mid", 4096, cost(0.01), 500 * S);
            c.evict_for(4096, 1000 * S)
        };
        assert_eq!(fill(ReleaseOrder::Lru), vec!["oldest-dear"]);
        assert_eq!(fill(ReleaseOrder::LruLookahead), vec!["old-cheap"]);
        assert_eq!(fill(ReleaseOrder::LeastAmortizedCost), vec!["old-cheap"]);
    }

    #[test]
    fn hits_refresh_and_a_fixed_cache_ignores_notifications() {
        let mut c = AdaptiveCache::new(CacheConfig {
            adaptive: false,
            max_bytes: Some(2 * 4096),
            order: ReleaseOrder::Lru,
            ..Default::default()
        });
        c.insert(1, 4096, cost(1e-6), 0);
        c.insert(2, 4096, cost(1e-6), S);
        assert!(c.get(&1, 2 * S));
        assert!(!c.get(&3, 2 * S));
        assert_eq!(c.evict_for(4096, 3 * S), vec![2]);
        assert!(c
            .release_round(1.0, 3600.0, &PAGING, 4 * S)
            .released
            .is_empty());
        assert!(!c.admits(3 * 4096));
    }

    /// A controller's cap (the baselines): entries go in the release order down to it, new
    /// ones must fit under it, and lifting it lets the cache grow.
    #[test]
    fn hold_at_trims_to_the_cap_and_lifting_it_allows_growth() {
        let mut c = AdaptiveCache::new(CacheConfig {
            order: ReleaseOrder::Lru,
            ..Default::default()
        });
        for i in 0..4 {
            c.insert(i, 4096, cost(1.0), i as Nanos * S);
        }
        assert_eq!(c.hold_at(Some(2 * 4096), 10 * S), vec![0, 1]);
        assert_eq!(c.limit(), Some(2 * 4096));
        assert_eq!(c.evict_for(4096, 10 * S), vec![2]);
        assert!(c.hold_at(None, 11 * S).is_empty());
        assert_eq!(c.limit(), None);
    }

    proptest! {
        /// A released cache never frees more than a round allows, and its byte count is the
        /// sum of what it holds.
        #[test]
        fn a_round_never_frees_more_than_asked(
            sizes in proptest::collection::vec((1u64..20_000, 0.0f64..0.1, 0u64..1000), 1..200),
            round in 1u64..200_000, severity in 1.0f64..3600.0, order in 0..3u8,
        ) {
            let order = [ReleaseOrder::Lru, ReleaseOrder::LruLookahead, ReleaseOrder::LeastAmortizedCost][order as usize];
            let mut c = AdaptiveCache::new(CacheConfig { round_bytes: round, order, ..Default::default() });
            let mut total = 0;
            for (i, &(b, regen, t)) in sizes.iter().enumerate() {
                c.insert(i, b, cost(regen), t * S);
                total += b;
            }
            let r = c.release_round(severity, 3600.0, &PAGING, 2000 * S);
            prop_assert!(r.bytes <= round);
            prop_assert_eq!(c.bytes() + r.bytes, total);
            prop_assert_eq!(r.released.len() + c.len(), sizes.len());
            for k in &r.released { prop_assert!(!c.contains(k)); }
        }

        /// LRU gives entries back in the order of their last access, whatever order the
        /// caller's times came in (the queues are sorted lists, kept in O(1) when time only
        /// moves forward).
        #[test]
        fn lru_releases_in_last_access_order(
            inserts in proptest::collection::vec(0u64..1000, 1..100),
            gets in proptest::collection::vec((0usize..100, 0u64..2000), 0..200),
        ) {
            let mut c = AdaptiveCache::new(CacheConfig { order: ReleaseOrder::Lru, ..Default::default() });
            let mut last = std::collections::HashMap::new();
            for (i, &t) in inserts.iter().enumerate() {
                c.insert(i, 4096, cost(1.0), t * S);
                last.insert(i, t * S);
            }
            for &(k, t) in &gets {
                if c.get(&k, t * S) {
                    let l = last.get_mut(&k).unwrap();
                    *l = (*l).max(t * S);
                }
            }
            let order = c.evict_to(0, 3000 * S);
            prop_assert_eq!(order.len(), inserts.len());
            for w in order.windows(2) {
                prop_assert!(last[&w[0]] <= last[&w[1]], "{:?} before {:?}", w[0], w[1]);
            }
        }

        /// Least amortized cost first, through the cost bins: no entry kept costs less than
        /// an entry released divided by a bin's width (2^(1/4)).
        #[test]
        fn least_amortized_cost_first_is_within_a_bin_of_exact(
            entries in proptest::collection::vec((1e-6f64..1.0, 0u64..1000), 2..300),
            round in 1u64..100, severity in 1.0f64..3600.0,
        ) {
            let mut c = AdaptiveCache::new(CacheConfig { round_bytes: round * 4096, ..Default::default() });
            for (i, &(regen, t)) in entries.iter().enumerate() {
                c.insert(i, 4096, cost(regen), t * S);
            }
            let now = 2000 * S;
            let amortized = |i: usize| cost(entries[i].0).regen_cost_s / ((now - entries[i].1 * S) as f64 / 1e9);
            let r = c.release_round(severity, 3600.0, &PAGING, now);
            let dearest_released = r.released.iter().map(|&i| amortized(i)).fold(0.0, f64::max);
            let width = 2f64.powf(1.0 / BINS_PER_OCTAVE) * (1.0 + 1e-9);
            for i in (0..entries.len()).filter(|i| c.contains(i)) {
                prop_assert!(amortized(i) * width >= dearest_released,
                    "kept {i} at {} while releasing one at {dearest_released}", amortized(i));
            }
        }
    }
}
