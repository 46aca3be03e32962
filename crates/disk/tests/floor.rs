//! The positioning floor (`DeviceModel::media_positioning_floor`) is a lower bound: after any
//! history of reads and writes, sequential and random, on every built-in drive and every
//! DiskSim drive in `data/disksim/`, no request outside the floor's cached ranges is priced
//! below the floor at its distance from the head, near the head (where the read-ahead has
//! carried the arm on) or far from it.

use std::path::PathBuf;

use antsched_disk::presets::{hdd_preset, PRESET_NAMES};
use antsched_disk::{load_disksim, DeviceModel, DiskOp, DiskRequest, HddModel};
use proptest::prelude::*;

const DISKSIM: &[&str] = &[
    "atlas10k",
    "atlas_III",
    "barracuda",
    "cheetah4LP",
    "dec_rz26",
    "hp_c2247a",
    "hp_c2490a",
    "hp_c3323a",
    "ibm18es",
    "st41601n",
];

fn drive(i: usize) -> HddModel {
    let hdds: Vec<&str> = PRESET_NAMES
        .iter()
        .copied()
        .filter(|n| hdd_preset(n).is_some())
        .collect();
    match hdds.get(i) {
        Some(name) => hdd_preset(name).unwrap(),
        None => {
            let name = DISKSIM[(i - hdds.len()) % DISKSIM.len()];
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/disksim");
            load_disksim(dir.join(format!("{name}.parv"))).unwrap()
        }
    }
}

/// A place on the disk: `at` (a fraction of the capacity, in millionths) or, if `near`,
/// within a few hundred sectors of `head`.
fn place(cap: u64, head: u64, near: Option<i32>, at: u32, sectors: u64) -> u64 {
    let lbn = match near {
        Some(off) => head.saturating_add_signed(i64::from(off)),
        None => cap / 1_000_000 * u64::from(at),
    };
    lbn.min(cap - sectors)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_request_outside_the_cache_costs_less_than_the_floor(
        which in 0usize..20,
        history in proptest::collection::vec(
            (0u8..4, 0u32..1_000_000, 1u64..256, prop_oneof![Just(0u64), 0u64..3_000_000]),
            1..40,
        ),
        probes in proptest::collection::vec(
            (proptest::option::of(-3_000i32..3_000), 0u32..1_000_000, 1u64..256, any::<bool>()),
            1..30,
        ),
    ) {
        let mut d = drive(which);
        let cap = d.capacity_sectors();
        let (mut now, mut head) = (0u64, 0u64);
        for &(kind, at, sectors, gap) in &history {
            // Sequential reads and writes (which start the read-ahead and fill segments),
            // random ones elsewhere.
            let sequential = kind % 2 == 0;
            let lbn = place(cap, head, sequential.then_some(0), at, sectors);
            let op = if kind < 2 { DiskOp::Read } else { DiskOp::Write };
            let done = d.submit(&DiskRequest { op, lbn, sectors: sectors as u32 }, now);
            head = lbn + sectors;
            now = done.finish + gap;
            let floor = d.media_positioning_floor(head, now).expect("a disk has a floor");
            let mut asked: Vec<(u64, u64, bool)> = probes
                .iter()
                .map(|&(near, at, sectors, write)| (place(cap, head, near, at, sectors), sectors, write))
                .collect();
            // Just past what the cache holds too: where the read-ahead carries the arm.
            for &(_, end) in &floor.cached {
                asked.push((end.min(cap - 8), 8, false));
                asked.push((end.min(cap - 8), 8, true));
            }
            for (lbn, sectors, write) in asked {
                if floor.cached.iter().any(|&(start, end)| (start..end).contains(&lbn)) {
                    continue;
                }
                let op = if write { DiskOp::Write } else { DiskOp::Read };
                let req = DiskRequest { op, lbn, sectors: sectors as u32 };
                let cost = d.media_positioning_time(&req, now);
                let bound = floor.at(head.abs_diff(lbn));
                prop_assert!(
                    bound <= cost,
                    "drive {which}: {op:?} of {sectors} at {lbn}, {} from the head at {head}: \
                     priced {cost} ns, floor {bound} ns",
                    head.abs_diff(lbn)
                );
            }
        }
    }
}

/// The floor is worth having: far from the head it is most of a long seek, where it would
/// let SPTF stop looking.
#[test]
fn the_floor_far_away_is_a_long_seek() {
    let mut d = hdd_preset("deskstar-34gxp").unwrap();
    let cap = d.capacity_sectors();
    let done = d.submit(
        &DiskRequest {
            op: DiskOp::Read,
            lbn: 0,
            sectors: 128,
        },
        0,
    );
    let floor = d.media_positioning_floor(128, done.finish).unwrap();
    let far = floor.at(cap - 1_000);
    let full_stroke = d.params().seek.time_ms(d.layout().max_cyl());
    assert!(
        far as f64 > 0.9 * full_stroke * 1e6,
        "floor {far} ns across the disk, full stroke {full_stroke} ms"
    );
    assert!(floor.at(0) < 1_000_000, "near the head: {} ns", floor.at(0));
}
