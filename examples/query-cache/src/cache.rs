//! The query-result cache: result rows serialized into a `Vec<u8>` per query, the policy of
//! `antsched_mem::cache::AdaptiveCache` deciding which go. The policy only tracks keys and
//! sizes; this type holds the memory, so that what the policy says it released is really
//! freed: an entry's bytes are its vector's capacity, and dropping the vector gives them back
//! to the allocator. [`trim`] then hands the allocator's free pages back to the kernel, which
//! the cgroup sees as free memory.

use antsched_core::Nanos;
use antsched_mem::cache::{AdaptiveCache, CacheConfig, EntryCost};
use antsched_mem::cost::PagingCost;
use rustc_hash::FxHashMap;

/// Gives the C library's free memory back to the kernel (glibc's `malloc_trim(0)`: the top
/// of each arena, and free pages inside them by `madvise`). Freed results are a few KiB each,
/// below glibc's mmap threshold, so without this the pages they held stay in the process.
pub fn trim() {
    // SAFETY: malloc_trim takes no pointers and may be called from any thread.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::malloc_trim(0);
    }
}

/// What a release (a round of the cost rule, or a controller's trim) freed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Released {
    pub entries: usize,
    pub bytes: u64,
    /// The policy has more entries below the paging cost than one round may release.
    pub more: bool,
}

pub struct ResultCache {
    policy: AdaptiveCache<u32>,
    data: FxHashMap<u32, Vec<u8>>,
    /// Sum of the held vectors' capacities: equal to the policy's bytes at every return.
    held: u64,
}

impl ResultCache {
    pub fn new(config: CacheConfig) -> Self {
        Self {
            policy: AdaptiveCache::new(config),
            data: FxHashMap::default(),
            held: 0,
        }
    }

    /// Bytes held (the vectors' capacities).
    pub fn bytes(&self) -> u64 {
        self.held
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// A lookup; a hit refreshes the entry.
    pub fn get(&mut self, key: u32, now: Nanos) -> Option<&[u8]> {
        if self.policy.get(&key, now) {
            self.data.get(&key).map(Vec::as_slice)
        } else {
            None
        }
    }

    fn drop_keys(&mut self, keys: Vec<u32>) -> Released {
        let mut r = Released::default();
        for k in keys {
            if let Some(v) = self.data.remove(&k) {
                r.entries += 1;
                r.bytes += v.capacity() as u64;
                self.held -= v.capacity() as u64;
            }
        }
        debug_assert_eq!(self.held, self.policy.bytes());
        r
    }

    /// Caches `value` under `key` if the policy admits it, evicting in the release order to
    /// make room. Returns what was evicted (no trim: the room is for this entry).
    pub fn insert(
        &mut self,
        key: u32,
        mut value: Vec<u8>,
        cost: EntryCost,
        now: Nanos,
    ) -> Released {
        value.shrink_to_fit();
        let bytes = value.capacity() as u64;
        if bytes == 0 || !self.policy.admits(bytes) {
            return Released::default();
        }
        let victims = self.policy.evict_for(bytes, now);
        let r = self.drop_keys(victims);
        if let Some(old) = self.data.remove(&key) {
            self.held -= old.capacity() as u64;
        }
        self.policy.insert(key, bytes, cost, now);
        self.data.insert(key, value);
        self.held += bytes;
        debug_assert_eq!(self.held, self.policy.bytes());
        r
    }

    /// One release round of the cost rule at severity `severity_s` (section 6.2.3).
    pub fn release_round(
        &mut self,
        severity_s: f64,
        s_max: f64,
        paging: &PagingCost,
        now: Nanos,
    ) -> Released {
        let round = self.policy.release_round(severity_s, s_max, paging, now);
        let more = round.more;
        let mut r = self.drop_keys(round.released);
        r.more = more;
        r
    }

    /// A controller's cap (PSI levels, halving): drops entries down to it; `None` lifts it.
    pub fn hold_at(&mut self, cap: Option<u64>, now: Nanos) -> Released {
        let keys = self.policy.hold_at(cap, now);
        self.drop_keys(keys)
    }

    /// The size the policy holds the cache to now, if any.
    pub fn limit(&self) -> Option<u64> {
        self.policy.limit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn cost(regen: f64) -> EntryCost {
        EntryCost {
            free_cost_s: 0.0,
            regen_cost_s: regen,
            reuse_p: 0.5,
        }
    }

    /// The bytes accounting: what is held is the sum of the capacities, and an eviction
    /// frees exactly the capacities it says.
    #[test]
    fn bytes_are_capacities_and_evictions_free_what_they_say() {
        let mut c = ResultCache::new(CacheConfig {
            max_bytes: Some(10_000),
            adaptive: false,
            ..Default::default()
        });
        let mut total = 0;
        for k in 0..5u32 {
            let v = vec![k as u8; 1000 + k as usize * 100];
            total += v.len() as u64;
            assert_eq!(
                c.insert(k, v, cost(0.001), k as Nanos * S),
                Released::default()
            );
        }
        assert_eq!(c.bytes(), total);
        assert_eq!(c.get(2, 10 * S).map(|v| v.len()), Some(1200));
        // 6,000 more bytes need room: the policy's victims are freed and counted.
        let before = c.bytes();
        let r = c.insert(9, vec![9; 6000], cost(0.001), 11 * S);
        assert!(r.entries > 0);
        assert_eq!(c.bytes(), before - r.bytes + 6000);
        assert!(c.bytes() <= 10_000);
        // A value larger than the capacity is not cached at all.
        assert_eq!(
            c.insert(10, vec![0; 20_000], cost(1.0), 12 * S),
            Released::default()
        );
        assert!(c.get(10, 12 * S).is_none());
        let all = c.hold_at(Some(0), 13 * S);
        assert_eq!(all.bytes, c.bytes() + all.bytes);
        assert_eq!(c.bytes(), 0);
        assert!(c.is_empty());
    }

    /// A round under a given S releases exactly the entries the cost rule (Eq. 4.3 against
    /// Eq. 4.2) says are cheaper than paging, and frees their bytes.
    #[test]
    fn a_round_releases_what_the_cost_rule_says() {
        let paging = PagingCost {
            disk_service_s: 0.010,
            disk_queue: 1.0,
        };
        let mut c = ResultCache::new(CacheConfig::default());
        let now = 1000 * S;
        // Idle 500 s: 0.5 * regen / 500 against 2 * 0.010 / S.
        let regens = [1e-4, 1e-3, 1e-2, 1e-1, 1.0];
        for (k, &r) in regens.iter().enumerate() {
            c.insert(k as u32, vec![1; 4096], cost(r), now - 500 * S);
        }
        let severity = 100.0;
        let threshold = 2.0 * 0.010 / severity;
        let expected: Vec<usize> = (0..regens.len())
            .filter(|&k| 0.5 * regens[k] / 500.0 < threshold)
            .collect();
        let r = c.release_round(severity, 3600.0, &paging, now);
        assert_eq!(r.entries, expected.len());
        assert_eq!(r.bytes, 4096 * expected.len() as u64);
        for k in 0..regens.len() {
            assert_eq!(
                c.get(k as u32, now).is_none(),
                expected.contains(&k),
                "entry {k}"
            );
        }
        // At S_max nothing goes and the hold is lifted: the cache may grow back.
        assert_eq!(c.release_round(3600.0, 3600.0, &paging, now).entries, 0);
        assert_eq!(c.limit(), None);
    }
}
