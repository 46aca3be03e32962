//! The cost rule of section 4.3: an application frees a chunk of memory when what freeing it
//! costs, amortized over the time the chunk has sat unused (Eq. 4.3), is below what the system
//! would pay to page it out and back in, amortized over the severity (Eq. 4.2).
//!
//! Both sides are in seconds of work per second of holding the memory. The rule needs no
//! target size: each application compares its own costs with one published number, and the
//! system settles where the marginal chunks of every application cost the same to keep
//! (the water-filling equilibrium of section 4.5).

use antsched_core::Nanos;
use serde::{Deserialize, Serialize};

/// The thesis's `iocost()` counts disk queueing only when the queue is longer than this, to
/// stay conservative (section 4.6): a short queue is ordinary, not a sign of paging.
pub const QUEUE_COUNTED_ABOVE: f64 = 10.0;

/// What the system publishes about paging I/O: the average service time of a paging I/O
/// (C_disk) and the average disk queue length over a recent interval (l_diskq).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PagingCost {
    pub disk_service_s: f64,
    pub disk_queue: f64,
}

impl PagingCost {
    /// l_diskq as Eq. 4.2 uses it: 1 (the I/O itself) unless the queue is longer than
    /// [`QUEUE_COUNTED_ABOVE`].
    pub fn queue_factor(&self) -> f64 {
        if self.disk_queue > QUEUE_COUNTED_ABOVE {
            self.disk_queue
        } else {
            1.0
        }
    }

    /// Eq. 4.2: C_paging = 2 * C_disk * l_diskq / S. The factor 2 is the page-out and the later
    /// page-in; S is the severity *this process* is told (already divided by its weight).
    pub fn amortized(&self, severity_s: f64) -> f64 {
        2.0 * self.disk_service_s * self.queue_factor() / severity_s.max(f64::MIN_POSITIVE)
    }
}

/// What an application knows about one chunk of memory it could free (section 4.3).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkCost {
    /// C_f: the work of freeing it (unlinking, `madvise`), seconds.
    pub free_cost_s: f64,
    /// C_r: the work of regenerating it if it is needed again, seconds.
    pub regen_cost_s: f64,
    /// p: the probability it is needed again.
    pub reuse_p: f64,
    /// When it was last used.
    pub last_access: Nanos,
}

/// Below this idle time a chunk counts as used just now: its amortized cost is that of one
/// millisecond, so a chunk touched at `now` is never free to drop.
const MIN_IDLE_S: f64 = 1e-3;

impl ChunkCost {
    /// Eq. 4.3: C_app = (C_f + p * C_r) / T, T the time since last access.
    pub fn amortized(&self, now: Nanos) -> f64 {
        let idle = now.saturating_sub(self.last_access) as f64 / 1e9;
        (self.free_cost_s + self.reuse_p * self.regen_cost_s) / idle.max(MIN_IDLE_S)
    }
}

/// The rule: free the chunk when that is cheaper than paging (C_app < C_paging).
pub fn should_release(chunk: &ChunkCost, paging: &PagingCost, severity_s: f64, now: Nanos) -> bool {
    chunk.amortized(now) < paging.amortized(severity_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    /// Eq. 4.2 and the `iocost()` rule of section 4.6.
    #[test]
    fn section_4_3_eq_4_2_paging_cost() {
        let p = PagingCost {
            disk_service_s: 0.010,
            disk_queue: 4.0,
        };
        assert!((p.amortized(512.0) - 2.0 * 0.010 / 512.0).abs() < 1e-15);
        let busy = PagingCost {
            disk_queue: 40.0,
            ..p
        };
        assert!((busy.amortized(512.0) - 2.0 * 0.010 * 40.0 / 512.0).abs() < 1e-15);
        // More pressure (smaller S), dearer paging.
        assert!(p.amortized(10.0) > p.amortized(3600.0));
    }

    /// Section 4.3's rule on both sides, with the thesis's figure: the first buffer the
    /// database freed cost 0.877 ms of regeneration and had been idle 238 s (about 4e-6 per
    /// second), against a paging cost of 2 * 10 ms / 512 s (about 4e-5).
    #[test]
    fn section_4_3_the_cost_rule_on_both_sides() {
        let paging = PagingCost {
            disk_service_s: 0.010,
            disk_queue: 1.0,
        };
        let now = 1000 * S;
        let cheap = ChunkCost {
            free_cost_s: 0.0,
            regen_cost_s: 0.000877,
            reuse_p: 1.0,
            last_access: now - 238 * S,
        };
        assert!((cheap.amortized(now) - 0.000877 / 238.0).abs() < 1e-12);
        assert!(should_release(&cheap, &paging, 512.0, now));
        // The same buffer used a second ago is worth keeping.
        let hot = ChunkCost {
            last_access: now - S,
            ..cheap
        };
        assert!(!should_release(&hot, &paging, 512.0, now));
        // An expensive result (0.1 s to recompute) idle 238 s stays: let the pager take it.
        let dear = ChunkCost {
            regen_cost_s: 0.1,
            ..cheap
        };
        assert!(!should_release(&dear, &paging, 512.0, now));
        // ... unless the system is thrashing.
        assert!(should_release(&dear, &paging, 0.5, now));
        // A chunk that will never be reused costs only its freeing.
        let dead = ChunkCost {
            reuse_p: 0.0,
            ..dear
        };
        assert!(should_release(&dead, &paging, 512.0, now));
        // Touched at `now`: never free to drop, whatever its cost.
        let fresh = ChunkCost {
            last_access: now,
            regen_cost_s: 1e-6,
            ..cheap
        };
        assert!(!should_release(&fresh, &paging, 3600.0, now));
    }
}
