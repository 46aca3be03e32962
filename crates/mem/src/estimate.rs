//! Estimating what the severity needs from a kernel that does not report it: the candidate age
//! of the kernel's LRU (the turnover estimate, checked against refaults) and the paging cost's
//! inputs C_disk and l_diskq (from two snapshots of `/proc/diskstats`).
//!
//! Sans-IO like the rest of the crate: a driver parses the kernel's files with [`crate::kernel`]
//! and hands the snapshots in with the time it took them.
//!
//! ## The turnover estimate (Little's law)
//!
//! Linux does not say how old the page it will evict next is (no MGLRU and no free DAMON on
//! the machines this was written for; see `../shared/notes/adaptive-memory-anchors.md` 8.1).
//! But it counts every page its LRU reclaim takes (`pgsteal_anon` and `pgsteal_file` in
//! `/proc/vmstat`, which count all LRU reclaim, global and cgroup-limit), and it says how big
//! the LRU is. In a steady state the LRU is a queue that pages enter on a fault and leave on
//! reclaim, so by Little's law the time a page spends in it is the LRU's size over the rate at
//! which pages leave:
//!
//! ```text
//! candidate age ~ LRU pages / reclaim rate (pages per second)
//! ```
//!
//! Under LRU a page is reclaimed when it has gone unreferenced for as long as it takes to fall
//! from the head to the tail, so that time is the candidate age. The rate is smoothed with an
//! exponential moving average (time constant [`TurnoverConfig::smoothing_s`]); when the kernel
//! reclaimed nothing for [`TurnoverConfig::quiet_s`] the age is infinite (no pressure, S =
//! S_max). Anonymous pages count only where there is swap: without it they cannot be reclaimed.
//!
//! ## The refault cross-check
//!
//! A refault (`workingset_refault_*`) is a fault on a page the kernel evicted recently enough to
//! remember it (its shadow entry survives about one LRU's worth of further evictions). The ratio
//! of refaults to reclaimed pages says whether the estimate can be trusted:
//!
//! - many refaults per reclaimed page ([`RefaultCheck::TooOld`]): what the kernel evicts comes
//!   back within about one turnover, so the evicted pages were not idle for as long as the
//!   estimate says; the estimate overstates the age (the LRU is too small for the working set).
//! - almost none ([`RefaultCheck::TooYoung`]): what was evicted was not wanted again; those
//!   pages were idle at least as long as the estimate, likely longer. A burst of reclaim of cold
//!   pages (a hog allocating) raises the rate, and with it makes the Little's-law age young.
//! - refaults without reclaim ([`RefaultCheck::OutsideReclaim`]): pages were evicted by
//!   something the counters do not see. On the project's machines that is the platform's DAMON
//!   pageout of idle unmapped page cache; it is not pressure, and the estimate does not move.
//!
//! The check is reported beside the estimate, never folded into it: a driver publishes the
//! turnover age and says what the refaults think of it.

use antsched_core::Nanos;

use crate::cost::PagingCost;
use crate::kernel::{Counters, DiskStats, ParseError};
use crate::record::Estimator;

/// What the turnover estimate needs from one instant: the LRU's size, and the cumulative
/// counts of pages reclaimed and refaulted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LruSnapshot {
    /// Pages on the LRU lists reclaim takes from.
    pub lru_pages: u64,
    /// Cumulative pages reclaimed from them.
    pub reclaimed: u64,
    /// Cumulative refaults of pages evicted from them.
    pub refaults: u64,
}

impl LruSnapshot {
    /// The machine's LRU from `/proc/vmstat`: file pages, and anonymous ones where `swap` is
    /// true (with no swap they cannot be reclaimed). Reclaim is `pgsteal_anon + pgsteal_file`;
    /// kernels before 5.8 lack those, and there `pgsteal_kswapd + pgsteal_direct` (and
    /// `pgsteal_khugepaged`, `pgsteal_proactive` where present) is the same total.
    pub fn from_vmstat(v: &Counters, swap: bool) -> Result<Self, ParseError> {
        let mut lru = v
            .require("nr_inactive_file")?
            .saturating_add(v.require("nr_active_file")?);
        let mut refaults = v.require("workingset_refault_file")?;
        if swap {
            lru = lru
                .saturating_add(v.require("nr_inactive_anon")?)
                .saturating_add(v.require("nr_active_anon")?);
            refaults = refaults.saturating_add(v.get("workingset_refault_anon").unwrap_or(0));
        }
        let reclaimed = match v.sum_present(&["pgsteal_anon", "pgsteal_file"]) {
            Some(n) => n,
            None => v
                .sum_present(&[
                    "pgsteal_kswapd",
                    "pgsteal_direct",
                    "pgsteal_khugepaged",
                    "pgsteal_proactive",
                ])
                .ok_or(ParseError::Missing {
                    file: crate::kernel::Source::Vmstat,
                    key: "pgsteal_file",
                })?,
        };
        Ok(Self {
            lru_pages: lru,
            reclaimed,
            refaults,
        })
    }
}

/// The turnover estimate's input for one cgroup v1 memory group, from its `memory.stat` and
/// `memory.failcnt`.
///
/// A v1 `memory.stat` has no `pgsteal_*`: the reclaim counters it has are `pgpgin` and
/// `pgpgout`, which count *charge and uncharge events*, every one of them: a page freed by
/// its process (`munmap`, exit, truncation, `POSIX_FADV_DONTNEED`) is uncharged as much as a
/// page that limit reclaim took, and a large folio counts once. Two facts about v1 let the
/// reclaim be told apart well enough:
///
/// - a v1 group is reclaimed only when a charge would take it past its limit (there is no
///   background reclaim per group), and every such charge adds one to `memory.failcnt`;
/// - so the uncharges of an interval in which `failcnt` did not move are frees, not reclaim.
///
/// The cumulative reclaim is therefore the sum of Δ`pgpgout` over the intervals in which
/// `failcnt` rose. Frees that fall in such an interval are counted as reclaim (the age comes
/// out younger than it is), and large folios undercount it (older); the refault check
/// (`workingset_refault_*`, which v1 does have per group) says which way it errs. The LRU is
/// the group's own `inactive_file + active_file` (bytes, turned into 4 KiB pages), with the
/// anonymous lists where there is swap. The group's limit covers its children, so the
/// hierarchical `total_*` counters are the ones taken (the group's own where a kernel lacks
/// them).
#[derive(Clone, Debug, Default)]
pub struct MemcgV1Lru {
    prev: Option<(u64, u64)>,
    reclaimed: u64,
}

/// Bytes per page in the pages the estimator counts.
const PAGE: u64 = 4096;

impl MemcgV1Lru {
    pub fn new() -> Self {
        Self::default()
    }

    /// The snapshot of a group whose `memory.stat` is `stat` and `memory.failcnt` is
    /// `failcnt` now. A counter that went backwards (the group was re-created) starts a new
    /// base without counting anything.
    pub fn observe(
        &mut self,
        stat: &Counters,
        failcnt: u64,
        swap: bool,
    ) -> Result<LruSnapshot, ParseError> {
        let pick = |total: &'static str, own: &'static str| -> Result<u64, ParseError> {
            match stat.get(total) {
                Some(v) => Ok(v),
                None => stat.require(own),
            }
        };
        let mut lru_bytes = pick("total_inactive_file", "inactive_file")?
            .saturating_add(pick("total_active_file", "active_file")?);
        let mut refaults = pick("total_workingset_refault_file", "workingset_refault_file")?;
        if swap {
            lru_bytes = lru_bytes
                .saturating_add(pick("total_inactive_anon", "inactive_anon")?)
                .saturating_add(pick("total_active_anon", "active_anon")?);
            refaults = refaults.saturating_add(
                stat.get("total_workingset_refault_anon")
                    .or_else(|| stat.get("workingset_refault_anon"))
                    .unwrap_or(0),
            );
        }
        let pgpgout = pick("total_pgpgout", "pgpgout")?;
        if let Some((out, fail)) = self.prev {
            if pgpgout >= out && failcnt > fail {
                self.reclaimed = self.reclaimed.saturating_add(pgpgout - out);
            }
        }
        self.prev = Some((pgpgout, failcnt));
        Ok(LruSnapshot {
            lru_pages: lru_bytes / PAGE,
            reclaimed: self.reclaimed,
            refaults,
        })
    }

    /// Reclaim the driver caused itself, `bytes` taken from the group by lowering its limit
    /// below its usage (memory nice enforcement). A limit write reclaims without a failed
    /// charge, so `failcnt` does not move and [`observe`](Self::observe) would not count it;
    /// yet it is the group's candidates being evicted, and the turnover estimate must see it
    /// for the enforcement to reach the thesis's equilibrium (section 4.5: a niced-down
    /// group's age falls as it gives, until its weighted age meets the others'). The
    /// `pgpgout` base moves by the same pages, so an interval in which the kernel also
    /// reclaimed at the limit does not count them twice.
    pub fn add_reclaimed(&mut self, bytes: u64) {
        let pages = bytes / PAGE;
        self.reclaimed = self.reclaimed.saturating_add(pages);
        if let Some((out, _)) = &mut self.prev {
            *out = out.saturating_add(pages);
        }
    }
}

impl LruSnapshot {
    /// A cgroup v2 group's LRU from its `memory.stat`: its file pages (`inactive_file +
    /// active_file`, bytes), and anonymous ones where `swap` is true. Unlike v1, v2 counts the
    /// group's reclaim itself: `pgsteal` (pages, the subtree's, since 4.x), so the turnover
    /// estimate is the machine's rule applied to the group. Refaults are
    /// `workingset_refault_file` (+ `_anon` with swap), or `workingset_refault` on kernels
    /// before 5.9.
    pub fn from_memcg_v2_stat(stat: &Counters, swap: bool) -> Result<Self, ParseError> {
        let mut lru_bytes = stat
            .require("inactive_file")?
            .saturating_add(stat.require("active_file")?);
        let mut refaults = match stat.get("workingset_refault_file") {
            Some(v) => v,
            None => stat.require("workingset_refault")?,
        };
        if swap {
            lru_bytes = lru_bytes
                .saturating_add(stat.require("inactive_anon")?)
                .saturating_add(stat.require("active_anon")?);
            refaults = refaults.saturating_add(stat.get("workingset_refault_anon").unwrap_or(0));
        }
        Ok(Self {
            lru_pages: lru_bytes / PAGE,
            reclaimed: stat.require("pgsteal")?,
            refaults,
        })
    }
}

/// The tunables of the turnover estimate and its refault check.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TurnoverConfig {
    /// Time constant of the reclaim rate's moving average, seconds. 10 s: ten of the
    /// daemon's 1 s ticks, long enough to smooth a tick's noise and short enough that a
    /// hog's onset shows within a few seconds.
    pub smoothing_s: f64,
    /// No reclaim for this long: the candidate age is infinite. 30 s.
    pub quiet_s: f64,
    /// Refaults per reclaimed page at or above which the estimate is [`RefaultCheck::TooOld`].
    /// 0.5: half of what is evicted comes straight back.
    pub too_old_ratio: f64,
    /// At or below which it is [`RefaultCheck::TooYoung`]. 0.01.
    pub too_young_ratio: f64,
    /// Fewer pages reclaimed than this within the smoothing window: too little evidence for
    /// a verdict ([`RefaultCheck::Insufficient`]). 256 pages (1 MiB of 4 KiB pages).
    pub min_reclaimed: f64,
}

impl Default for TurnoverConfig {
    fn default() -> Self {
        Self {
            smoothing_s: 10.0,
            quiet_s: 30.0,
            too_old_ratio: 0.5,
            too_young_ratio: 0.01,
            min_reclaimed: 256.0,
        }
    }
}

/// What the refaults say about a turnover estimate (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RefaultCheck {
    /// Too few pages reclaimed lately to judge.
    Insufficient,
    /// Refaults per reclaimed page between the two thresholds.
    Consistent { ratio: f64 },
    /// Evicted pages come back soon: the estimate overstates the candidate's age.
    TooOld { ratio: f64 },
    /// Evicted pages do not come back: the candidates were idle at least this long.
    TooYoung { ratio: f64 },
    /// Refaults while the kernel reclaimed nothing: evictions the counters do not see (the
    /// platform's DAMON). Not pressure; the estimate stands.
    OutsideReclaim { refaults: u64 },
}

impl RefaultCheck {
    /// A short name for logs and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            RefaultCheck::Insufficient => "insufficient",
            RefaultCheck::Consistent { .. } => "consistent",
            RefaultCheck::TooOld { .. } => "too_old",
            RefaultCheck::TooYoung { .. } => "too_young",
            RefaultCheck::OutsideReclaim { .. } => "outside_reclaim",
        }
    }
}

/// One turnover estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TurnoverEstimate {
    /// LRU pages over the smoothed reclaim rate, seconds; infinite when the kernel has not
    /// reclaimed lately.
    pub candidate_age_s: f64,
    /// The smoothed reclaim rate, pages per second.
    pub reclaim_rate: f64,
    /// The smoothed refault rate, pages per second.
    pub refault_rate: f64,
    pub lru_pages: u64,
    /// Pages reclaimed and refaulted since the previous snapshot.
    pub reclaimed: u64,
    pub refaults: u64,
    pub check: RefaultCheck,
    /// Always [`Estimator::Turnover`]: said so that a record built from it names it.
    pub estimator: Estimator,
}

/// The turnover estimator of one LRU (the machine's, or one memory cgroup's).
#[derive(Clone, Debug)]
pub struct Turnover {
    config: TurnoverConfig,
    prev: Option<(Nanos, LruSnapshot)>,
    reclaim_rate: f64,
    refault_rate: f64,
    last_reclaim: Option<Nanos>,
}

impl Turnover {
    pub fn new(config: TurnoverConfig) -> Self {
        Self {
            config,
            prev: None,
            reclaim_rate: 0.0,
            refault_rate: 0.0,
            last_reclaim: None,
        }
    }

    /// A new snapshot taken at `now`. The first gives an infinite age (no rate seen yet). A
    /// counter that went backwards (a group re-created) counts as no change, and the snapshot
    /// becomes the new base.
    pub fn observe(&mut self, now: Nanos, snap: LruSnapshot) -> TurnoverEstimate {
        let c = self.config;
        let (reclaimed, refaults) = match self.prev {
            Some((t, p)) if now > t => {
                let dt = (now - t) as f64 / 1e9;
                let reclaimed = snap.reclaimed.saturating_sub(p.reclaimed);
                let refaults = snap.refaults.saturating_sub(p.refaults);
                // An exact exponential average over an interval of any length: a sample
                // weighs 1 - e^(-dt / T).
                let alpha = 1.0 - (-dt / c.smoothing_s).exp();
                self.reclaim_rate += alpha * (reclaimed as f64 / dt - self.reclaim_rate);
                self.refault_rate += alpha * (refaults as f64 / dt - self.refault_rate);
                (reclaimed, refaults)
            }
            _ => (0, 0),
        };
        if reclaimed > 0 {
            self.last_reclaim = Some(now);
        }
        let quiet = match self.last_reclaim {
            None => true,
            Some(t) => now.saturating_sub(t) as f64 / 1e9 >= c.quiet_s,
        };
        if quiet {
            self.reclaim_rate = 0.0;
        }
        self.prev = Some((now, snap));
        let candidate_age_s = if self.reclaim_rate > 0.0 {
            snap.lru_pages as f64 / self.reclaim_rate
        } else {
            f64::INFINITY
        };
        let check = if self.reclaim_rate == 0.0 {
            if refaults > 0 {
                RefaultCheck::OutsideReclaim { refaults }
            } else {
                RefaultCheck::Insufficient
            }
        } else if self.reclaim_rate * c.smoothing_s < c.min_reclaimed {
            RefaultCheck::Insufficient
        } else {
            let ratio = self.refault_rate / self.reclaim_rate;
            if ratio >= c.too_old_ratio {
                RefaultCheck::TooOld { ratio }
            } else if ratio <= c.too_young_ratio {
                RefaultCheck::TooYoung { ratio }
            } else {
                RefaultCheck::Consistent { ratio }
            }
        };
        TurnoverEstimate {
            candidate_age_s,
            reclaim_rate: self.reclaim_rate,
            refault_rate: self.refault_rate,
            lru_pages: snap.lru_pages,
            reclaimed,
            refaults,
            check,
            estimator: Estimator::Turnover,
        }
    }
}

/// Where a disk estimate's service time came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskBasis {
    /// The I/Os completed since the previous snapshot.
    Window,
    /// Nothing completed in the window (or there was none): the mean since boot.
    SinceBoot,
    /// The device has never completed an I/O: no service time is known.
    None,
}

/// C_disk and l_diskq of one device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiskEstimate {
    /// Eq. 4.2's inputs: the mean service time per completed I/O and the mean queue length.
    pub paging: PagingCost,
    pub basis: DiskBasis,
    /// I/Os completed in the window.
    pub completed: u64,
}

/// The paging cost's disk inputs from two `/proc/diskstats` snapshots of one device, as
/// iostat computes its service time and average queue size:
///
/// - C_disk = Δ(ms doing I/O) / Δ(I/Os completed): the time the device was busy per request
///   it finished. With several requests in flight it is less than one request's latency,
///   which is what paging one more page costs the device.
/// - l_diskq = Δ(weighted ms) / Δ(wall ms): the time-averaged number of requests in flight.
///
/// The two snapshots are the newest and the newest one at least [`DiskCost::window`] older
/// (or the oldest kept): the kernel counts busy time in whole milliseconds, and over one 1 s
/// tick a fast device's few I/Os often add up to 0 ms. When the window saw no I/O, or its
/// busy time is below that resolution, C_disk is the mean since boot.
#[derive(Clone, Debug)]
pub struct DiskCost {
    window: Nanos,
    history: std::collections::VecDeque<(Nanos, DiskStats)>,
}

impl Default for DiskCost {
    fn default() -> Self {
        Self::with_window(10_000_000_000)
    }
}

impl DiskCost {
    /// A 10 s window.
    pub fn new() -> Self {
        Self::default()
    }

    /// A window of `window` ns; 0 compares each snapshot with the one before it.
    pub fn with_window(window: Nanos) -> Self {
        Self {
            window,
            history: Default::default(),
        }
    }

    pub fn window(&self) -> Nanos {
        self.window
    }

    /// A snapshot of the device taken at `now`. The first gives the since-boot service time
    /// and the queue length in flight at that instant. Counters that went backwards (the
    /// device was re-created) restart the history.
    pub fn observe(&mut self, now: Nanos, s: &DiskStats) -> DiskEstimate {
        if let Some((_, last)) = self.history.back() {
            if s.completed() < last.completed()
                || s.io_ms < last.io_ms
                || s.weighted_ms < last.weighted_ms
            {
                self.history.clear();
            }
        }
        self.history.retain(|(t, _)| *t < now);
        while self.history.len() >= 2 && self.history[1].0.saturating_add(self.window) <= now {
            self.history.pop_front();
        }
        let since_boot = || {
            if s.completed() > 0 {
                (s.io_ms as f64 / s.completed() as f64, DiskBasis::SinceBoot)
            } else {
                (0.0, DiskBasis::None)
            }
        };
        let (service_ms, basis, queue, completed) = match self.history.front() {
            Some((t, p)) => {
                let completed = s.completed() - p.completed();
                let busy = s.io_ms - p.io_ms;
                let wall_ms = (now - t) as f64 / 1e6;
                let queue = (s.weighted_ms - p.weighted_ms) as f64 / wall_ms;
                if completed > 0 && busy > 0 {
                    (
                        busy as f64 / completed as f64,
                        DiskBasis::Window,
                        queue,
                        completed,
                    )
                } else {
                    let (ms, b) = since_boot();
                    (ms, b, queue, completed)
                }
            }
            None => {
                let (ms, b) = since_boot();
                (ms, b, s.in_flight as f64, 0)
            }
        };
        self.history.push_back((now, s.clone()));
        DiskEstimate {
            paging: PagingCost {
                disk_service_s: service_ms / 1e3,
                disk_queue: queue,
            },
            basis,
            completed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{parse_diskstats, parse_vmstat};

    const S: Nanos = 1_000_000_000;

    /// A v1 group: uncharges count as reclaim only in intervals where the group hit its
    /// limit (failcnt rose); frees in a quiet interval do not.
    #[test]
    fn memcg_v1_reclaim_is_pgpgout_while_the_limit_is_hit() {
        let stat = |out: u64| {
            crate::kernel::parse_memcg_v1_stat(&format!(
                "inactive_file 8192\nactive_file 4096\nworkingset_refault_file 3\n\
                 pgpgout 1\ntotal_inactive_file 40960\ntotal_active_file 40960\n\
                 total_workingset_refault_file 7\ntotal_pgpgout {out}\n"
            ))
            .unwrap()
        };
        let mut m = MemcgV1Lru::new();
        let a = m.observe(&stat(100), 5, false).unwrap();
        assert_eq!(a, snap(20, 0, 7));
        // Frees: pgpgout moved, failcnt did not.
        assert_eq!(m.observe(&stat(150), 5, false).unwrap().reclaimed, 0);
        // Limit reclaim: both moved.
        assert_eq!(m.observe(&stat(400), 9, false).unwrap().reclaimed, 250);
        // A re-created group: counters went back, nothing counted, a new base.
        assert_eq!(m.observe(&stat(10), 1, false).unwrap().reclaimed, 250);
        assert_eq!(m.observe(&stat(30), 2, false).unwrap().reclaimed, 270);
        // The driver took 100 pages by lowering the limit: counted once, though the kernel
        // also reclaimed 50 at the limit in the same interval.
        m.add_reclaimed(100 * PAGE);
        assert_eq!(m.observe(&stat(180), 3, false).unwrap().reclaimed, 420);
        // The real file of this machine parses, and its keys are the ones read.
        let real = crate::kernel::parse_memcg_v1_stat(include_str!(
            "../fixtures/linux-6.18/memcg-v1-memory.stat"
        ))
        .unwrap();
        let s = MemcgV1Lru::new().observe(&real, 0, true).unwrap();
        assert!(s.lru_pages > 0, "{s:?}");
        let e = MemcgV1Lru::new()
            .observe(&crate::kernel::Counters::default(), 0, false)
            .unwrap_err();
        assert!(e.to_string().contains("inactive_file"), "{e}");
    }

    fn snap(lru: u64, reclaimed: u64, refaults: u64) -> LruSnapshot {
        LruSnapshot {
            lru_pages: lru,
            reclaimed,
            refaults,
        }
    }

    /// Little's law on a steady stream: 100,000 pages on the LRU, 1,000 reclaimed a second,
    /// so a page spends 100 s on it.
    #[test]
    fn turnover_is_lru_size_over_reclaim_rate() {
        let mut t = Turnover::new(TurnoverConfig::default());
        let first = t.observe(0, snap(100_000, 5_000, 0));
        assert_eq!(first.candidate_age_s, f64::INFINITY);
        assert_eq!(first.check, RefaultCheck::Insufficient);
        assert_eq!(first.estimator, Estimator::Turnover);
        let mut e = first;
        for i in 1..=100 {
            e = t.observe(i * S, snap(100_000, 5_000 + 1_000 * i, 30 * i));
        }
        assert!((e.reclaim_rate - 1000.0).abs() < 1.0, "{e:?}");
        assert!((e.candidate_age_s - 100.0).abs() < 0.1, "{e:?}");
        assert_eq!(e.reclaimed, 1000);
        // 3% of what is evicted comes back: between the thresholds.
        match e.check {
            RefaultCheck::Consistent { ratio } => assert!((ratio - 0.03).abs() < 1e-3),
            other => panic!("{other:?}"),
        }
    }

    /// The average follows a change of rate with its time constant, whatever the tick.
    #[test]
    fn the_rate_average_does_not_depend_on_the_tick() {
        let run = |tick: Nanos| {
            let mut t = Turnover::new(TurnoverConfig::default());
            let mut e = t.observe(0, snap(10_000, 0, 0));
            let mut now = 0;
            while now < 10 * S {
                now += tick;
                e = t.observe(now, snap(10_000, 500 * now / S, 0));
            }
            e.reclaim_rate
        };
        let (fast, slow) = (run(S / 10), run(2 * S));
        // 1 - 1/e of the way to 500 after one time constant.
        assert!(
            (fast - 500.0 * (1.0 - (-1.0f64).exp())).abs() < 1.0,
            "{fast}"
        );
        assert!((fast - slow).abs() < 1.0, "{fast} {slow}");
    }

    /// No reclaim for the quiet window: the age is infinite, and refaults meanwhile are
    /// evictions outside reclaim (the platform's DAMON), not pressure.
    #[test]
    fn quiet_reclaim_means_an_infinite_age_and_refaults_outside_reclaim() {
        let mut t = Turnover::new(TurnoverConfig::default());
        t.observe(0, snap(50_000, 0, 0));
        let busy = t.observe(S, snap(50_000, 10_000, 0));
        assert!(busy.candidate_age_s.is_finite());
        let mut e = busy;
        for i in 2..=40 {
            e = t.observe(i * S, snap(50_000, 10_000, 7 * i));
            if i < 31 {
                assert!(e.candidate_age_s.is_finite(), "{i}: {e:?}");
                // Decaying, so the age grows.
                assert!(e.candidate_age_s > busy.candidate_age_s);
            }
        }
        assert_eq!(e.candidate_age_s, f64::INFINITY);
        assert_eq!(e.check, RefaultCheck::OutsideReclaim { refaults: 7 });
    }

    #[test]
    fn refaults_say_too_old_or_too_young() {
        let run = |refaults_per_s: u64| {
            let mut t = Turnover::new(TurnoverConfig::default());
            let mut e = t.observe(0, snap(20_000, 0, 0));
            for i in 1..=30 {
                e = t.observe(i * S, snap(20_000, 2_000 * i, refaults_per_s * i));
            }
            e.check
        };
        assert!(
            matches!(run(1_500), RefaultCheck::TooOld { ratio } if (ratio - 0.75).abs() < 0.01)
        );
        assert!(matches!(run(0), RefaultCheck::TooYoung { ratio } if ratio == 0.0));
        // A trickle of reclaim is too little evidence.
        let mut t = Turnover::new(TurnoverConfig::default());
        t.observe(0, snap(20_000, 0, 0));
        assert_eq!(
            t.observe(S, snap(20_000, 3, 0)).check,
            RefaultCheck::Insufficient
        );
    }

    #[test]
    fn counters_that_go_backwards_restart_the_base() {
        let mut t = Turnover::new(TurnoverConfig::default());
        t.observe(0, snap(1_000, 500, 0));
        let e = t.observe(S, snap(1_000, 10, 0));
        assert_eq!(e.reclaimed, 0);
        let e = t.observe(2 * S, snap(1_000, 110, 0));
        assert_eq!(e.reclaimed, 100);
    }

    /// The machine's LRU from real vmstat: file pages only without swap.
    #[test]
    fn lru_snapshot_from_real_vmstat() {
        let v = parse_vmstat(include_str!("../fixtures/linux-6.18/vmstat.0")).unwrap();
        let s = LruSnapshot::from_vmstat(&v, false).unwrap();
        assert_eq!(s.lru_pages, 401_882 + 389_659);
        assert_eq!(s.reclaimed, 0);
        assert_eq!(s.refaults, 3_202_488);
        let with_swap = LruSnapshot::from_vmstat(&v, true).unwrap();
        assert_eq!(with_swap.lru_pages, s.lru_pages + 55_896 + 397);
        // An old kernel's counters.
        let old = parse_vmstat(
            "nr_inactive_file 10\nnr_active_file 5\nworkingset_refault 3\n\
             workingset_refault_file 3\npgsteal_kswapd 7\npgsteal_direct 2\n",
        )
        .unwrap();
        assert_eq!(LruSnapshot::from_vmstat(&old, false).unwrap().reclaimed, 9);
        let e = LruSnapshot::from_vmstat(&parse_vmstat("nr_active_file 5\n").unwrap(), false)
            .unwrap_err();
        assert!(e.to_string().contains("no nr_inactive_file line"), "{e}");
    }

    /// Two real snapshots of this machine's disk 1.084 s apart, around a direct read and a
    /// sync: 163 reads, 204 writes and 10 discards completed in 44 ms of busy time, and
    /// 1,168 weighted ms.
    #[test]
    fn disk_cost_from_two_real_diskstats_snapshots() {
        let vda = |text: &str| {
            parse_diskstats(text)
                .unwrap()
                .into_iter()
                .find(|d| d.name == "vda")
                .unwrap()
        };
        let a = vda(include_str!("../fixtures/linux-6.18/diskstats.0"));
        let b = vda(include_str!("../fixtures/linux-6.18/diskstats.1"));
        let mut d = DiskCost::with_window(0);
        let first = d.observe(0, &a);
        assert_eq!(first.basis, DiskBasis::SinceBoot);
        let boot_ms = 54_972.0 / (840_450.0 + 71_180.0 + 105_538.0);
        assert!((first.paging.disk_service_s * 1e3 - boot_ms).abs() < 1e-12);
        assert_eq!(first.paging.disk_queue, 0.0);
        let e = d.observe(1_084_000_000, &b);
        assert_eq!(e.basis, DiskBasis::Window);
        assert_eq!(e.completed, 163 + 204 + 10);
        assert!(
            (e.paging.disk_service_s * 1e3 - 44.0 / 377.0).abs() < 1e-12,
            "{e:?}"
        );
        assert!(
            (e.paging.disk_queue - 1168.0 / 1084.0).abs() < 1e-9,
            "{e:?}"
        );
        // An idle window: the since-boot mean, an empty queue.
        let idle = d.observe(2_084_000_000, &b);
        assert_eq!(
            (idle.basis, idle.completed, idle.paging.disk_queue),
            (DiskBasis::SinceBoot, 0, 0.0)
        );
        // A device that never did I/O.
        let loop0 = DiskStats {
            name: "loop0".into(),
            ..DiskStats::default()
        };
        let e = DiskCost::new().observe(0, &loop0);
        assert_eq!((e.basis, e.paging.disk_service_s), (DiskBasis::None, 0.0));
    }

    /// Over a window, the oldest snapshot within it is the base: a tick whose busy time
    /// rounds to 0 ms does not make C_disk 0.
    #[test]
    fn disk_cost_over_a_window() {
        let at = |completed: u64, io_ms: u64, weighted_ms: u64| DiskStats {
            name: "sda".into(),
            reads: completed,
            io_ms,
            weighted_ms,
            ..DiskStats::default()
        };
        let mut d = DiskCost::with_window(3 * S);
        d.observe(0, &at(1000, 100, 100));
        // One tick: 10 I/Os, 0 ms busy: below resolution, the since-boot mean.
        let e = d.observe(S, &at(1010, 100, 100));
        assert_eq!(e.basis, DiskBasis::SinceBoot);
        assert!((e.paging.disk_service_s - 0.1 / 1010.0).abs() < 1e-12);
        // Over three ticks: 30 I/Os in 3 ms.
        d.observe(2 * S, &at(1020, 102, 106));
        let e = d.observe(3 * S, &at(1030, 103, 109));
        assert_eq!((e.basis, e.completed), (DiskBasis::Window, 30));
        assert!((e.paging.disk_service_s - 0.0001).abs() < 1e-12, "{e:?}");
        assert!((e.paging.disk_queue - 9.0 / 3000.0).abs() < 1e-12, "{e:?}");
        // The window slides: the base is now the snapshot at 1 s.
        let e = d.observe(4 * S, &at(1040, 104, 109));
        assert_eq!(e.completed, 30);
        // A device re-created: counters restart.
        let e = d.observe(5 * S, &at(5, 1, 1));
        assert_eq!((e.basis, e.completed), (DiskBasis::SinceBoot, 0));
    }

    /// A cgroup v2 group's LRU and reclaim come from its own `memory.stat` (sizes in bytes,
    /// `pgsteal` in pages): file pages only without swap, anonymous ones too with it.
    #[test]
    fn a_v2_groups_lru_and_reclaim_come_from_its_memory_stat() {
        let stat =
            crate::kernel::parse_memcg_v2_stat(include_str!("../fixtures/memcg-v2-memory.stat"))
                .unwrap();
        let s = LruSnapshot::from_memcg_v2_stat(&stat, false).unwrap();
        assert_eq!(s.lru_pages, (120586240 + 34603008) / 4096);
        assert_eq!((s.reclaimed, s.refaults), (48765, 1843));
        let with_swap = LruSnapshot::from_memcg_v2_stat(&stat, true).unwrap();
        assert_eq!(
            with_swap.lru_pages,
            (120586240 + 34603008 + 88014848 + 65536) / 4096
        );
        // A kernel before 5.9 has one refault counter.
        let old = crate::kernel::parse_memcg_v2_stat(
            "inactive_file 4096\nactive_file 0\nworkingset_refault 7\npgsteal 3\n",
        )
        .unwrap();
        let s = LruSnapshot::from_memcg_v2_stat(&old, false).unwrap();
        assert_eq!((s.lru_pages, s.reclaimed, s.refaults), (1, 3, 7));
        // No pgsteal: an error naming the key.
        let none = crate::kernel::parse_memcg_v2_stat("inactive_file 0\nactive_file 0\n").unwrap();
        let e = LruSnapshot::from_memcg_v2_stat(&none, false).unwrap_err();
        assert!(e.to_string().contains("workingset_refault"), "{e}");
    }
}
