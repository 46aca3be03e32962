//! Tests of the replacement model, each named after the thesis section it checks.

use super::*;
use antsched_core::SEC;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

fn model() -> Replacement {
    Replacement::new(ReplacementConfig::default())
}

fn nice(n: i64) -> MemNice {
    MemNice::new(n).unwrap()
}

fn ok(r: &Replacement) {
    if let Err(e) = r.check_invariants() {
        panic!("invariants: {e}");
    }
}

/// Section 5.1.1: an untouched page enters bin k at S_min * 2^k (bin k is scanned every
/// S_min * 2^k), so its age as the bins say doubles from bin to bin and is right to a factor
/// of 2; the last bin keeps it.
#[test]
fn section_5_1_1_ages_double_bin_to_bin_under_scans() {
    let mut r = model();
    let p = r.alloc(0, true, 0);
    assert_eq!(r.bin_of(p, 0), Some(0));
    let mut entered = [None; 10];
    entered[0] = Some(0);
    while r.next_tick() <= 6000 * SEC {
        let t = r.next_tick();
        r.tick(t);
        ok(&r);
        let b = r.bin_of(p, 0).unwrap() as usize;
        entered[b].get_or_insert(t);
        // The candidate age is S_min * 2^bin: no timestamp, the bin is the age.
        assert_eq!(r.candidate(), Some((p, 5.0 * 2f64.powi(b as i32))));
    }
    for (k, e) in entered.iter().enumerate().skip(1) {
        assert_eq!(*e, Some((5 * SEC) << k), "bin {k}");
    }
    assert_eq!(r.bin_of(p, 0), Some(9));
    assert_eq!(r.candidate_age_s(), Some(2560.0));
}

/// Section 5.1.1: a page whose reference bit is found set at a scan of its bin goes back to
/// bin 0; the bit is only read at scans, so between scans the page keeps its bin.
#[test]
fn section_5_1_1_referenced_pages_return_to_bin_0() {
    let mut r = model();
    let p = r.alloc(0, true, 0);
    let hot = r.alloc(0, true, 0);
    let mut t = 0;
    while t < 40 * SEC {
        t = r.next_tick();
        r.reference(hot, 0);
        r.tick(t);
    }
    assert_eq!(r.bin_of(p, 0), Some(3));
    // Touched every 5 s, `hot` never leaves bin 0.
    assert_eq!(r.bin_of(hot, 0), Some(0));
    r.reference(p, 0);
    r.tick(79 * SEC);
    assert_eq!(r.bin_of(p, 0), Some(3), "bits are read at the bin's scan");
    r.tick(80 * SEC);
    assert_eq!(r.bin_of(p, 0), Some(0));
    assert_eq!(r.chain_of(p), Some(0));
    r.tick(85 * SEC);
    assert_eq!(
        r.bin_of(p, 0),
        Some(1),
        "the bit was cleared: it ages again"
    );
    ok(&r);
}

/// Section 5.1.2: a weight W multiplies ages by W, which is attaching the process's bins
/// log2 W chains further: nice 4 is weight 8, 3 chains.
#[test]
fn section_5_1_2_chain_shift_is_log2_of_the_weight() {
    let mut r = model();
    r.set_nice(1, nice(4));
    assert_eq!(nice(4).shift(), 3);
    let a = r.alloc(0, true, 0);
    let b = r.alloc(1, true, 0);
    assert_eq!(r.chain_of(a), Some(0));
    assert_eq!(r.chain_of(b), Some(3));
    assert_eq!(r.candidate(), Some((b, 40.0)));
    r.tick(20 * SEC);
    assert_eq!((r.bin_of(a, 0), r.bin_of(b, 1)), (Some(2), Some(2)));
    assert_eq!((r.chain_of(a), r.chain_of(b)), (Some(2), Some(5)));
    assert_eq!(r.candidate_age_s(), Some(160.0));
    // A page of the weight-1 process 3 bins older has the same scaled age.
    r.tick(160 * SEC);
    assert_eq!(r.bin_of(a, 0), Some(5));
    let c = r.alloc(1, true, 160 * SEC);
    r.tick(180 * SEC);
    assert_eq!(r.bin_of(c, 1), Some(2));
    assert_eq!(r.chain_of(c), r.chain_of(a));
    ok(&r);
}

/// Section 5.1.2: re-nicing re-attaches the process's bins to other chains; every page moves
/// with its bin, none is touched one by one.
#[test]
fn section_5_1_2_renice_moves_bins() {
    let mut r = model();
    let mut pages = Vec::new();
    for i in 0..4u64 {
        pages.push(r.alloc(0, i % 2 == 0, i * 10 * SEC));
        r.tick(i * 10 * SEC + 5 * SEC);
    }
    let before: Vec<i32> = pages.iter().map(|&p| r.chain_of(p).unwrap()).collect();
    let age = r.candidate_age_s().unwrap();
    r.set_nice(0, nice(8));
    assert_eq!(nice(8).shift(), 6);
    ok(&r);
    for (&p, &c) in pages.iter().zip(&before) {
        assert_eq!(r.chain_of(p), Some(c + 6));
    }
    assert_eq!(r.candidate_age_s(), Some(age * 64.0));
    r.set_nice(0, nice(-8));
    ok(&r);
    for (&p, &c) in pages.iter().zip(&before) {
        assert_eq!(r.chain_of(p), Some(c - 6));
    }
    r.set_nice(0, MemNice::NORMAL);
    let after: Vec<i32> = pages.iter().map(|&p| r.chain_of(p).unwrap()).collect();
    assert_eq!(after, before);
    assert_eq!(r.nice(0), Some(MemNice::NORMAL));
    ok(&r);
}

/// Section 5.1.3: a shift of B = 10 or more makes age ranges disjoint. A Low-class process
/// (nice +14) loses every page, even ones touched in the last 5 s, before a Normal process
/// loses its oldest; a High-class process (nice -14) never loses a page while a Normal one
/// has pages, however old its own are.
#[test]
fn section_5_1_3_classes_never_page_a_higher_class_while_a_lower_one_has_pages() {
    assert_eq!(nice(14).class(), crate::PriorityClass::Low);
    let mut r = model();
    r.set_nice(1, nice(14));
    let normal: Vec<_> = (0..20).map(|_| r.alloc(0, true, 0)).collect();
    r.tick(3000 * SEC);
    assert!(normal.iter().all(|&p| r.bin_of(p, 0) == Some(9)));
    let low: Vec<_> = (0..20).map(|_| r.alloc(1, true, 3000 * SEC)).collect();
    r.tick(3005 * SEC);
    for &p in &low {
        r.reference(p, 1);
    }
    for _ in 0..low.len() {
        let v = r.evict(3006 * SEC).unwrap();
        assert_eq!(v.owner, 1, "a Normal page went before a Low one");
        assert!(v.scaled_age_s > 2560.0);
        ok(&r);
    }
    assert_eq!(r.resident_of(1), 0);
    assert_eq!(r.evict(3006 * SEC).unwrap().owner, 0);

    let mut r = model();
    r.set_nice(2, nice(-14));
    assert_eq!(nice(-14).class(), crate::PriorityClass::High);
    let high: Vec<_> = (0..20).map(|_| r.alloc(2, true, 0)).collect();
    r.tick(4000 * SEC);
    assert!(high.iter().all(|&p| r.bin_of(p, 2) == Some(9)));
    let fresh: Vec<_> = (0..20).map(|_| r.alloc(3, true, 4000 * SEC)).collect();
    for _ in 0..fresh.len() {
        assert_eq!(r.evict(4000 * SEC).unwrap().owner, 3);
    }
    assert_eq!(r.evict(4000 * SEC).unwrap().owner, 2);
    ok(&r);

    // The classes are disjoint for pages of the same kind. A clean page sits clean_shift
    // chains further, so a clean High page in its last bin (-10 + 9 + 1 = chain 0) ties with
    // a dirty Normal page in bin 0: the boundary chains overlap by clean_shift.
    let mut r = model();
    r.set_nice(2, nice(-14));
    let h = r.alloc(2, false, 0);
    r.tick(4000 * SEC);
    let n = r.alloc(3, true, 4000 * SEC);
    assert_eq!((r.chain_of(h), r.chain_of(n)), (Some(0), Some(0)));
}

/// Section 5.1.3: a lower class "cannot make a higher class page or adapt": the candidate
/// age a Normal process is priced by ignores a Low process's pages, however old they look
/// once scaled, and is the oldest Normal page's.
#[test]
fn section_5_1_3_a_lower_class_does_not_set_a_higher_class_candidate_age() {
    use crate::PriorityClass::{High, Low, Normal};
    let mut r = model();
    r.set_nice(1, nice(14));
    let _normal = r.alloc(0, true, 0);
    r.tick(40 * SEC);
    let _low = r.alloc(1, true, 40 * SEC);
    r.tick(45 * SEC);
    // The Low page is the system's candidate (its age scaled by 2^10)...
    let system = r.candidate_age_s().unwrap();
    assert_eq!(r.candidate().unwrap().0, _low);
    assert!(system > 5000.0, "{system}");
    // ... but a Normal process is priced by the Normal page's own age (40 s: bin 3).
    assert_eq!(r.candidate_age_for(Normal), Some(40.0));
    assert_eq!(r.candidate_age_for(Low), Some(system));
    // No High pages: nothing prices a High process.
    assert_eq!(r.candidate_age_for(High), None);
}

/// Section 5.1.3: processes whose shifted ranges overlap compete partly: nice 4 (3 chains)
/// pages go before nice 0 pages when, and only when, they are older once scaled by 8.
#[test]
fn section_5_1_3_overlapping_ranges_compete_on_scaled_age() {
    let mut r = model();
    r.set_nice(1, nice(4));
    let a = r.alloc(0, true, 0);
    r.tick(600 * SEC);
    assert_eq!(r.bin_of(a, 0), Some(6)); // it enters bin 7 at 640 s
    let b = r.alloc(1, true, 600 * SEC);
    r.tick(640 * SEC);
    // b: bin 3 + 3 = chain 6, a: chain 7: a is older when scaled.
    assert!(r.chain_of(a) > r.chain_of(b));
    assert_eq!(r.candidate().map(|c| c.0), Some(a));
    r.tick(1280 * SEC);
    // b: bin 8 + 3 = 11, a: bin 8: now b is the older, although 600 s younger.
    assert_eq!(r.candidate().map(|c| c.0), Some(b));
    ok(&r);
}

/// Section 5.1.4: ages are per mapping; a shared page's scaled age is the smallest over its
/// mappings of the mapping's age scaled by its process's weight, and the page sits on that
/// chain.
#[test]
fn section_5_1_4_shared_page_at_the_minimum_over_mappings() {
    let mut r = model();
    r.set_nice(1, nice(4)); // 3 chains
    let p = r.alloc(0, true, 0);
    r.tick(80 * SEC);
    assert_eq!((r.bin_of(p, 0), r.chain_of(p)), (Some(4), Some(4)));
    // A weight-8 process maps it: its mapping is young, 0 + 3 = 3 < 4.
    r.map_shared(p, 1, 80 * SEC);
    assert_eq!((r.bin_of(p, 1), r.chain_of(p)), (Some(0), Some(3)));
    assert_eq!(r.scaled_age_s(p), Some(40.0));
    assert!(r.placed_exactly(p));
    ok(&r);
    // Process 0 touches it; the scan that reads the bit puts its mapping in bin 0: min 0.
    r.reference(p, 0);
    r.tick(85 * SEC);
    assert_eq!((r.bin_of(p, 0), r.bin_of(p, 1)), (Some(0), Some(0)));
    assert_eq!(r.chain_of(p), Some(0));
    r.tick(90 * SEC);
    assert_eq!((r.bin_of(p, 0), r.bin_of(p, 1)), (Some(1), Some(1)));
    assert_eq!(r.chain_of(p), Some(1));
    // Only process 1 keeps using it: its scaled age is process 1's, 0 + 3.
    let mut t = 90 * SEC;
    while t < 400 * SEC {
        t = r.next_tick();
        r.reference(p, 1);
        r.tick(t);
        ok(&r);
    }
    assert_eq!(r.bin_of(p, 1), Some(0));
    assert!(r.bin_of(p, 0).unwrap() >= 5);
    assert_eq!(r.chain_of(p), Some(3));
    // Process 0 unmaps it: the page stays at process 1's scaled age, and 1 now owns it.
    assert_eq!(r.owner(p), Some(0));
    r.unmap(p, 0, t);
    assert_eq!(
        (r.owner(p), r.resident_of(1), r.resident_of(0)),
        (Some(1), 1, 0)
    );
    assert_eq!(r.chain_of(p), Some(3));
    ok(&r);
}

/// Section 5.1.4: re-nicing a process re-attaches its bins only; a shared page listed under
/// another process's bin takes the new weight into account at its next scan (the reference-
/// bit model: nothing is done per page outside scans).
#[test]
fn section_5_1_4_renice_of_another_mapper_is_seen_at_the_next_scan() {
    let mut r = model();
    let p = r.alloc(0, true, 0);
    r.tick(10 * SEC);
    r.map_shared(p, 1, 10 * SEC);
    r.tick(15 * SEC);
    // Both mappings: process 0 bin 1, process 1 bin 0 (its bit was just cleared).
    assert_eq!(r.chain_of(p), Some(0));
    r.set_nice(1, nice(8)); // 6 chains: now process 0's mapping, 1 + 0, is the minimum
    assert!(r.check_invariants().is_ok());
    assert!(!r.placed_exactly(p));
    r.tick(20 * SEC);
    assert!(r.placed_exactly(p));
    assert_eq!(r.chain_of(p), Some(2));
    ok(&r);
}

/// Section 5.2 (a): clean pages' ages count double: a separate bin set one chain further, so
/// they are preferred victims and report a doubled age.
#[test]
fn section_5_2_clean_pages_have_doubled_age() {
    let mut r = model();
    let dirty = r.alloc(0, true, 0);
    let clean = r.alloc(1, false, 0);
    assert_eq!((r.chain_of(dirty), r.chain_of(clean)), (Some(0), Some(1)));
    assert_eq!(r.candidate(), Some((clean, 10.0)));
    r.tick(40 * SEC);
    assert_eq!(r.scaled_age_s(dirty), Some(40.0));
    assert_eq!(r.scaled_age_s(clean), Some(80.0));
    r.set_dirty(clean, true);
    r.set_dirty(dirty, false);
    assert_eq!(r.candidate(), Some((dirty, 80.0)));
    let v = r.evict(40 * SEC).unwrap();
    assert_eq!((v.page, v.owner, v.dirty), (dirty, 0, false));
    assert!(r.evict(40 * SEC).unwrap().dirty);
    assert_eq!(r.resident(), 0);
    ok(&r);
}

/// Section 5.1.4: a page nobody maps goes to the unmapped bins at the unmapper's nice + 1
/// (as FreeBSD deactivates pages): ahead of the unmapper's own pages of the same age.
#[test]
fn section_5_1_4_unmapped_pages_bins_at_nice_plus_1() {
    let mut r = model();
    r.set_nice(0, nice(1)); // weight 2^0.75: shift 0; nice 2 is 2^1.5: shift 1
    let p = r.alloc(0, true, 0);
    let q = r.alloc(0, true, 0);
    r.tick(40 * SEC);
    assert_eq!((r.chain_of(p), r.chain_of(q)), (Some(3), Some(3)));
    r.unmap(p, 0, 41 * SEC);
    assert_eq!(r.is_unmapped(p), Some(true));
    assert_eq!(r.bin_of(p, NO_PROC), Some(3));
    assert_eq!(r.chain_of(p), Some(4));
    assert_eq!(r.candidate(), Some((p, 80.0)));
    assert_eq!((r.owner(p), r.resident_of(0)), (Some(0), 2));
    ok(&r);
    // The kernel touches it (read() of a cached file page): back to bin 0 at the next scan.
    r.reference(p, 7);
    r.tick(80 * SEC);
    assert_eq!(r.bin_of(p, NO_PROC), Some(0));
    assert_eq!(r.chain_of(p), Some(1));
    // Its unmapper exits: it stays cached, charged to nobody.
    assert_eq!(r.process_exited(0), vec![q]);
    assert_eq!((r.owner(p), r.resident()), (Some(NO_PROC), 1));
    ok(&r);
    // Mapped again, it leaves the unmapped bins.
    r.map_shared(p, 3, 81 * SEC);
    assert_eq!(
        (r.is_unmapped(p), r.owner(p), r.chain_of(p)),
        (Some(false), Some(3), Some(0))
    );
    ok(&r);
    // Nice 0's pages get nice 1, whose weight 2^0.75 truncates to the same shift: the +1
    // bias shows only where it crosses a power of two (see MemNice::shift).
    let mut r = model();
    let p = r.alloc(0, true, 0);
    r.unmap(p, 0, 0);
    assert_eq!(r.chain_of(p), Some(0));
}

/// Process exit: private pages are freed and returned, shared ones lose the mapping.
#[test]
fn process_exit_frees_private_pages_and_unmaps_shared_ones() {
    let mut r = model();
    let a = r.alloc(0, true, 0);
    let b = r.alloc(0, false, 0);
    let s = r.alloc(0, true, 0);
    r.map_shared(s, 1, 0);
    let other = r.alloc(1, true, 0);
    r.map_shared(other, 0, 0);
    assert_eq!((r.resident_of(0), r.resident_of(1)), (3, 1));
    assert_eq!(r.process_exited(0), vec![a, b]);
    assert_eq!(
        (r.resident(), r.resident_of(0), r.resident_of(1)),
        (2, 0, 2)
    );
    assert_eq!(r.owner(s), Some(1));
    assert_eq!(r.bin_of(other, 0), None);
    assert!(!r.is_resident(a));
    ok(&r);
    // Ids are reused.
    let c = r.alloc(2, true, 0);
    assert!(c == a || c == b);
    assert!(r.process_exited(0).is_empty());
    ok(&r);
}

/// Within a chain, victims are taken round-robin over the lists (processes) on it, FIFO in
/// each: deterministic, and no process of equal scaled age is drained before another.
#[test]
fn eviction_order_within_a_chain_is_round_robin_and_fifo() {
    let mut r = model();
    let a: Vec<_> = (0..3).map(|_| r.alloc(0, true, 0)).collect();
    let b: Vec<_> = (0..3).map(|_| r.alloc(1, true, 0)).collect();
    let order: Vec<_> = (0..6).map(|_| r.evict(0).unwrap().page).collect();
    assert_eq!(order, vec![a[0], b[0], a[1], b[1], a[2], b[2]]);
    assert_eq!(r.evict(0), None);
    assert_eq!(r.candidate(), None);
}

/// Idle time is skipped: a model with nothing to do jumps its schedule, and the scan grid of
/// an empty model starts when pages first arrive rather than replaying the past.
#[test]
fn idle_schedule_jumps_and_an_empty_model_does_not_replay_the_past() {
    let mut r = model();
    let p = r.alloc(0, true, 3600 * SEC);
    assert!(r.next_tick() > 3600 * SEC);
    r.tick(3610 * SEC);
    assert_eq!(r.bin_of(p, 0), Some(1));
    r.tick(1_000_000_000 * SEC);
    assert_eq!(r.bin_of(p, 0), Some(9));
    assert!(r.next_tick() > 1_000_000_000 * SEC);
    r.tick(Nanos::MAX);
    ok(&r);
}

/// A group's limit (the Senpai baseline) takes that process's oldest page, not the machine's
/// candidate, and nothing of a process with no pages.
#[test]
fn evict_of_takes_the_oldest_page_of_that_process_only() {
    let mut r = model();
    r.set_nice(0, nice(0));
    r.set_nice(1, nice(0));
    let old_other = r.alloc(1, true, 0);
    let old = r.alloc(0, true, 0);
    for _ in 0..4 {
        let t = r.next_tick();
        r.tick(t);
    }
    let young = r.alloc(0, true, r.next_tick());
    assert!(r.candidate().is_some());
    let v = r.evict_of(0, 0).unwrap();
    assert_eq!((v.page, v.owner), (old, 0));
    assert!(r.is_resident(old_other) && r.is_resident(young));
    assert_eq!(r.evict_of(0, 0).unwrap().page, young);
    assert!(r.evict_of(0, 0).is_none());
    assert!(r.evict_of(7, 0).is_none());
    ok(&r);
}

#[test]
fn config_is_validated() {
    assert!(ReplacementConfig::default().validate().is_ok());
    for bad in [
        ReplacementConfig {
            s_min: 0.0,
            ..Default::default()
        },
        ReplacementConfig {
            s_min: f64::NAN,
            ..Default::default()
        },
        ReplacementConfig {
            bins: 0,
            ..Default::default()
        },
        ReplacementConfig {
            bins: 33,
            ..Default::default()
        },
        ReplacementConfig {
            clean_shift: 17,
            ..Default::default()
        },
        ReplacementConfig {
            s_min: 1e9,
            bins: 32,
            ..Default::default()
        },
    ] {
        assert!(bad.validate().is_err(), "{bad:?}");
    }
    let r = Replacement::new(ReplacementConfig {
        s_min: 1.0,
        bins: 3,
        clean_shift: 0,
    });
    assert_eq!(r.next_tick(), SEC);
}

// ---- property tests ----------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    Alloc { owner: u32, dirty: bool },
    Map { page: usize, proc: u32 },
    Unmap { page: usize, proc: u32 },
    Reference { page: usize, proc: u32 },
    SetDirty { page: usize, dirty: bool },
    Release { page: usize },
    Tick { dt_ms: u64 },
    Evict,
    SetNice { proc: u32, nice: i64 },
    Exit { proc: u32 },
}

fn op() -> impl Strategy<Value = Op> {
    let proc = 0u32..5;
    let page = any::<usize>();
    prop_oneof![
        4 => (proc.clone(), any::<bool>()).prop_map(|(owner, dirty)| Op::Alloc { owner, dirty }),
        2 => (page, proc.clone()).prop_map(|(page, proc)| Op::Map { page, proc }),
        2 => (page, proc.clone()).prop_map(|(page, proc)| Op::Unmap { page, proc }),
        4 => (page, proc.clone()).prop_map(|(page, proc)| Op::Reference { page, proc }),
        1 => (page, any::<bool>()).prop_map(|(page, dirty)| Op::SetDirty { page, dirty }),
        1 => page.prop_map(|page| Op::Release { page }),
        3 => (0u64..40_000).prop_map(|dt_ms| Op::Tick { dt_ms }),
        2 => Just(Op::Evict),
        1 => (proc.clone(), -20i64..=19).prop_map(|(proc, nice)| Op::SetNice { proc, nice }),
        1 => proc.prop_map(|proc| Op::Exit { proc }),
    ]
}

/// The reference model: which processes map each resident page.
#[derive(Default)]
struct Shadow {
    mappers: BTreeMap<u32, BTreeSet<u32>>,
    allocs: usize,
    releases: usize,
    evictions: usize,
    freed: usize,
}

impl Shadow {
    fn pick(&self, i: usize) -> Option<u32> {
        (!self.mappers.is_empty())
            .then(|| *self.mappers.keys().nth(i % self.mappers.len()).unwrap())
    }
}

fn run(ops: Vec<Op>, cfg: ReplacementConfig) -> Result<(), TestCaseError> {
    let mut r = Replacement::new(cfg);
    let mut s = Shadow::default();
    let mut now: Nanos = 0;
    for op in ops {
        match op {
            Op::Alloc { owner, dirty } => {
                let p = r.alloc(owner, dirty, now);
                prop_assert!(
                    s.mappers.insert(p, BTreeSet::from([owner])).is_none(),
                    "id {p} reused while resident"
                );
                s.allocs += 1;
            }
            Op::Map { page, proc } => {
                if let Some(p) = s.pick(page) {
                    r.map_shared(p, proc, now);
                    s.mappers.get_mut(&p).unwrap().insert(proc);
                    prop_assert!(r.placed_exactly(p));
                }
            }
            Op::Unmap { page, proc } => {
                if let Some(p) = s.pick(page) {
                    r.unmap(p, proc, now);
                    s.mappers.get_mut(&p).unwrap().remove(&proc);
                    prop_assert_eq!(r.is_unmapped(p), Some(s.mappers[&p].is_empty()));
                }
            }
            Op::Reference { page, proc } => {
                if let Some(p) = s.pick(page) {
                    r.reference(p, proc);
                }
            }
            Op::SetDirty { page, dirty } => {
                if let Some(p) = s.pick(page) {
                    r.set_dirty(p, dirty);
                    prop_assert_eq!(r.is_dirty(p), Some(dirty));
                }
            }
            Op::Release { page } => {
                if let Some(p) = s.pick(page) {
                    r.release(p);
                    s.mappers.remove(&p);
                    s.releases += 1;
                }
            }
            Op::Tick { dt_ms } => {
                now += dt_ms * 1_000_000;
                r.tick(now);
                prop_assert!(r.next_tick() > now);
                // Right after a scan every page is where its mappings say (re-nices and
                // references pending only until then).
                for &p in s.mappers.keys() {
                    if s.mappers[&p].len() <= 1 {
                        prop_assert!(r.placed_exactly(p), "page {} misplaced", p);
                    }
                }
            }
            Op::Evict => {
                let cand = r.candidate();
                let max = s
                    .mappers
                    .keys()
                    .map(|&p| r.scaled_age_s(p).unwrap())
                    .fold(None, |m: Option<f64>, a| Some(m.map_or(a, |m| m.max(a))));
                prop_assert_eq!(
                    cand.map(|c| c.1),
                    max,
                    "candidate is not the oldest scaled page"
                );
                let v = r.evict(now);
                prop_assert_eq!(v.map(|v| (v.page, v.scaled_age_s)), cand);
                if let Some(v) = v {
                    prop_assert!(s.mappers.remove(&v.page).is_some());
                    s.evictions += 1;
                }
            }
            Op::SetNice { proc, nice } => r.set_nice(proc, MemNice::new(nice).unwrap()),
            Op::Exit { proc } => {
                let freed = r.process_exited(proc);
                let expect: Vec<u32> = s
                    .mappers
                    .iter()
                    .filter(|(_, m)| m.len() == 1 && m.contains(&proc))
                    .map(|(&p, _)| p)
                    .collect();
                prop_assert_eq!(&freed, &expect);
                for p in &freed {
                    s.mappers.remove(p);
                }
                for m in s.mappers.values_mut() {
                    m.remove(&proc);
                }
                s.freed += freed.len();
            }
        }
        if let Err(e) = r.check_invariants() {
            return Err(TestCaseError::fail(e));
        }
        prop_assert_eq!(r.resident(), s.allocs - s.releases - s.evictions - s.freed);
        prop_assert_eq!(r.resident(), s.mappers.len());
        for (&p, m) in &s.mappers {
            prop_assert!(r.is_resident(p));
            for &q in m {
                prop_assert!(r.bin_of(p, q).is_some());
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No sequence of operations loses or duplicates a page.
    #[test]
    fn random_operations_never_lose_or_duplicate_a_page(ops in prop::collection::vec(op(), 1..200)) {
        run(ops, ReplacementConfig::default())?;
    }

    /// The same with few bins, a short S_min and a wider clean shift, so that pages reach the
    /// last bin and the chains' extremes within a test.
    #[test]
    fn random_operations_with_few_bins(ops in prop::collection::vec(op(), 1..200)) {
        run(ops, ReplacementConfig { s_min: 1.0, bins: 3, clean_shift: 2 })?;
    }
}
