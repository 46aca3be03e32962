//! Where each logical block lives on the platters: zones, tracks, skews and spare sectors.
//!
//! A disk is a stack of `surfaces` platter sides; the heads move together, so the set of tracks
//! under them at one arm position is a *cylinder*. Outer cylinders are longer, so drives group
//! cylinders into *zones* that each hold a fixed number of sectors per track: more outside, fewer
//! inside. That is why the media rate falls as the LBN grows.
//!
//! Logical blocks fill a track, then the next surface of the same cylinder, then the next
//! cylinder (optionally in a serpentine order, so that a cylinder switch needs no head switch).
//! The first sector of each track is rotated forward by the *track skew* (after a head switch) or
//! the *cylinder skew* (after a one-cylinder seek): while the head switches, the platter keeps
//! turning, and without skew the first sector of the next track would just have passed, costing
//! a whole revolution. Skews are why a sequential transfer crosses tracks at little cost.
//!
//! Drives also keep *spare* sectors to replace bad ones. DiskSim's schemes put them at the end of
//! each track (scheme 3), cylinder (scheme 2), range of cylinders (scheme 8), zone (scheme 9) or
//! of the disk (scheme 7), or keep whole spare tracks at the end of each zone (scheme 1), and
//! *slip* the LBNs past each defective sector (or, with spare tracks, track) found at format
//! time; the lists of slipped sectors come from the real drive. We follow the same arithmetic as DiskSim's `layout_g1`, so a
//! block lands on the same cylinder, surface and sector as in DiskSim.

/// A physical block address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pbn {
    pub cyl: u32,
    pub head: u32,
    pub sector: u32,
}

/// How spare sectors are laid out (a subset of DiskSim's `Sparing scheme used`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sparing {
    /// No spares; no slips allowed (DiskSim scheme 0).
    None,
    /// `spares` sectors at the end of every range of `cyls` cylinders; slips are absorbed
    /// within their range (scheme 8; scheme 2 is the same with ranges of one cylinder).
    PerRange { cyls: u32 },
    /// `spares` sectors at the end of each zone; slips are absorbed within the zone (scheme 9).
    PerZone,
    /// Spares at the end of the disk: slips shift every later block of the zone (scheme 7).
    AtEnd,
    /// `spares` sectors at the end of every cylinder (DiskSim scheme 2). It maps like
    /// `PerRange { cyls: 1 }` (scheme 8 with ranges of one cylinder), but DiskSim's
    /// `g1_map_pbn_skew` also turns every later track of the zone one sector further per slip
    /// on an earlier cylinder: a drive that slips a sector within its cylinder formats the
    /// following tracks one sector later, so that the skew still hides the head switch.
    PerCylinder,
    /// `spares` sectors at the end of every track (scheme 3); slips are absorbed within their
    /// track and, as with [`Sparing::PerCylinder`], turn every later track one sector further.
    PerTrack,
    /// `spares` whole *tracks* at the end of each zone (scheme 1). The slip list then names
    /// whole tracks (counted from the zone's first track) that the drive skipped at format time:
    /// drives of the early 1990s replaced a track with a defect by a spare track rather than
    /// slipping single sectors.
    Tracks,
}

impl Sparing {
    /// Every scheme, `PerRange` with ranges of `range_cyls` cylinders: for tests that must hold
    /// whatever the drive's sparing.
    #[cfg(test)]
    pub(crate) fn every(range_cyls: u32) -> [Sparing; 7] {
        [
            Sparing::None,
            Sparing::PerRange { cyls: range_cyls },
            Sparing::PerZone,
            Sparing::AtEnd,
            Sparing::PerCylinder,
            Sparing::PerTrack,
            Sparing::Tracks,
        ]
    }
}

/// In which order the surfaces of a cylinder are filled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SurfaceOrder {
    /// Surface 0 to n-1 on every cylinder (DiskSim mapping 0).
    Normal,
    /// Odd cylinders (counted from the zone's first) run n-1 down to 0 (mapping 1).
    SerpentinePerZone,
    /// Odd cylinders (absolute) run n-1 down to 0 (mapping 2).
    SerpentineAbsolute,
}

/// One zone (DiskSim's "band").
#[derive(Clone, Debug, PartialEq)]
pub struct Zone {
    pub first_cyl: u32,
    pub last_cyl: u32,
    /// Physical sectors per track.
    pub spt: u32,
    /// Track skew, in sectors.
    pub track_skew: u32,
    /// Cylinder skew, in sectors.
    pub cyl_skew: u32,
    /// Angular offset of the zone's first block, in sectors.
    pub first_offset: u32,
    /// Sectors at the front of the zone that hold no LBN (drive management area).
    pub dead_space: u64,
    /// Spare sectors per sparing region (see [`Sparing`]).
    pub spares: u64,
    /// Slipped (skipped) physical sectors, counted from the zone's first sector, ascending.
    pub slips: Vec<u64>,
    /// First LBN of the zone (computed by [`Layout::new`]).
    pub first_lbn: u64,
    /// LBNs in the zone (computed by [`Layout::new`]).
    pub lbns: u64,
}

impl Zone {
    /// A zone without spares, slips or dead space.
    pub fn simple(first_cyl: u32, last_cyl: u32, spt: u32, track_skew: u32, cyl_skew: u32) -> Zone {
        Zone {
            first_cyl,
            last_cyl,
            spt,
            track_skew,
            cyl_skew,
            first_offset: 0,
            dead_space: 0,
            spares: 0,
            slips: Vec::new(),
            first_lbn: 0,
            lbns: 0,
        }
    }

    fn cyls(&self) -> u64 {
        (self.last_cyl - self.first_cyl + 1) as u64
    }
}

/// A layout problem found while building the layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError(pub String);

/// The whole LBN-to-physical map.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub surfaces: u32,
    pub sparing: Sparing,
    pub order: SurfaceOrder,
    pub zones: Vec<Zone>,
    capacity: u64,
    max_cyl: u32,
}

impl Layout {
    /// Builds a layout, computing each zone's LBN range as DiskSim's `layout_g1` does.
    pub fn new(
        surfaces: u32,
        sparing: Sparing,
        order: SurfaceOrder,
        mut zones: Vec<Zone>,
    ) -> Result<Layout, LayoutError> {
        if surfaces == 0 {
            return Err(LayoutError("a disk needs at least one surface".into()));
        }
        if zones.is_empty() {
            return Err(LayoutError("a disk needs at least one zone".into()));
        }
        let mut next = 0u64;
        let mut prev_last: Option<u32> = None;
        for (i, z) in zones.iter_mut().enumerate() {
            if z.last_cyl < z.first_cyl {
                return Err(LayoutError(format!(
                    "zone {i}: last cylinder {} is before first cylinder {}",
                    z.last_cyl, z.first_cyl
                )));
            }
            if let Some(p) = prev_last {
                if z.first_cyl <= p {
                    return Err(LayoutError(format!(
                        "zone {i}: first cylinder {} overlaps the previous zone (which ends at {p})",
                        z.first_cyl
                    )));
                }
            }
            prev_last = Some(z.last_cyl);
            if z.spt == 0 {
                return Err(LayoutError(format!(
                    "zone {i}: blocks per track must be > 0"
                )));
            }
            let phys = z.cyls() * surfaces as u64 * z.spt as u64;
            let lost = match sparing {
                Sparing::None => {
                    if !z.slips.is_empty() {
                        return Err(LayoutError(format!(
                            "zone {i}: slips need a sparing scheme; scheme 0 has no spares"
                        )));
                    }
                    0
                }
                Sparing::PerRange { cyls } => z.spares * (z.cyls() / cyls as u64),
                Sparing::PerZone => z.spares,
                Sparing::AtEnd => z.slips.len() as u64,
                Sparing::PerCylinder => z.spares * z.cyls(),
                Sparing::PerTrack => z.spares * z.cyls() * surfaces as u64,
                Sparing::Tracks => z.spares * z.spt as u64,
            };
            if z.slips.windows(2).any(|w| w[0] >= w[1]) {
                return Err(LayoutError(format!("zone {i}: slips must be ascending")));
            }
            // Under track sparing a slip is a track number, elsewhere a sector number.
            let slip_units = match sparing {
                Sparing::Tracks => z.cyls() * surfaces as u64,
                _ => phys,
            };
            if let Some(&s) = z.slips.last() {
                if s >= slip_units {
                    return Err(LayoutError(format!(
                        "zone {i}: slip {s} lies beyond the zone's {slip_units} physical {}",
                        if sparing == Sparing::Tracks {
                            "tracks"
                        } else {
                            "sectors"
                        }
                    )));
                }
            }
            // Each slipped track takes one of the zone's spare tracks (DiskSim refuses more
            // slips than spares: the last LBNs would land past the zone).
            if sparing == Sparing::Tracks && z.slips.len() as u64 > z.spares {
                return Err(LayoutError(format!(
                    "zone {i}: {} slipped tracks but only {} spare tracks",
                    z.slips.len(),
                    z.spares
                )));
            }
            let lbns = phys.checked_sub(z.dead_space + lost).ok_or_else(|| {
                LayoutError(format!("zone {i}: spares and dead space exceed the zone"))
            })?;
            let per_region = match sparing {
                Sparing::PerRange { cyls } => Some(cyls as u64 * surfaces as u64 * z.spt as u64),
                Sparing::PerCylinder => Some(surfaces as u64 * z.spt as u64),
                Sparing::PerTrack => Some(z.spt as u64),
                _ => None,
            };
            if let Some(per_region) = per_region {
                if z.spares >= per_region {
                    return Err(LayoutError(format!(
                        "zone {i}: {} spares, not fewer than the {per_region} sectors of a sparing region",
                        z.spares
                    )));
                }
            }
            z.first_lbn = next;
            z.lbns = lbns;
            next += lbns;
        }
        let max_cyl = zones.last().map(|z| z.last_cyl).unwrap_or(0);
        Ok(Layout {
            surfaces,
            sparing,
            order,
            zones,
            capacity: next,
            max_cyl,
        })
    }

    /// Total LBNs.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The same layout exposing only the first `count` LBNs (a drive may declare fewer blocks
    /// than its zones hold).
    pub fn with_exposed_capacity(mut self, count: u64) -> Layout {
        self.capacity = count.min(self.capacity);
        self
    }

    /// First LBN of the track holding `lbn` (slips within the track are ignored).
    pub fn track_start(&self, lbn: u64) -> u64 {
        let p = self.lbn_to_pbn(lbn);
        lbn.saturating_sub(p.sector as u64)
    }

    /// Highest physical cylinder.
    pub fn max_cyl(&self) -> u32 {
        self.max_cyl
    }

    /// Index of the zone holding `lbn` (which must be below capacity).
    #[inline]
    pub fn zone_of(&self, lbn: u64) -> usize {
        let i = self.zones.partition_point(|z| z.first_lbn <= lbn);
        i.saturating_sub(1)
    }

    /// Sparing region of a zone: (physical sectors per region, spare sectors per region).
    #[inline]
    fn region(&self, z: &Zone) -> (u64, u64) {
        let cyl_sz = self.surfaces as u64 * z.spt as u64;
        match self.sparing {
            Sparing::PerRange { cyls } => (cyls as u64 * cyl_sz, z.spares),
            Sparing::PerZone => (z.cyls() * cyl_sz, z.spares),
            Sparing::PerCylinder => (cyl_sz, z.spares),
            Sparing::PerTrack => (z.spt as u64, z.spares),
            // Spare tracks lie past the zone's last LBN, so no region boundary falls inside.
            Sparing::None | Sparing::AtEnd | Sparing::Tracks => (z.cyls() * cyl_sz, 0),
        }
    }

    /// Physical sector index within the zone (0 = first sector of the zone's first track) of
    /// `lbn`, which must lie in zone `zi`.
    #[inline]
    fn phys_in_zone(&self, zi: usize, lbn: u64) -> u64 {
        let z = &self.zones[zi];
        let o = lbn - z.first_lbn + z.dead_space;
        if self.plain(z) {
            // What the arithmetic below gives, without its divisions (see the test
            // `plain_zones_skip_the_region_arithmetic`).
            return o;
        }
        if self.sparing == Sparing::Tracks {
            // Whole tracks are slipped: the block keeps its sector and moves one track further
            // per skipped track at or before its own (DiskSim's ltop for track sparing).
            let spt = z.spt as u64;
            let mut track = o / spt;
            for &sl in &z.slips {
                if sl <= track {
                    track += 1;
                } else {
                    break;
                }
            }
            return track * spt + o % spt;
        }
        self.phys_by_regions(z, o)
    }

    /// No spare sectors and no slips in zone `z`: its LBNs fill its sectors in order after
    /// the dead space, and every sparing region ends on a track boundary. Most zones are
    /// plain, and locating a block in one needs none of the region arithmetic.
    #[inline]
    fn plain(&self, z: &Zone) -> bool {
        z.slips.is_empty() && self.region(z).1 == 0
    }

    /// Physical sector index within zone `z` of the block `o` LBNs (dead space included)
    /// into it, for any sparing scheme but [`Sparing::Tracks`].
    fn phys_by_regions(&self, z: &Zone, o: u64) -> u64 {
        let (p, s) = self.region(z);
        let per = p - s;
        let r = o / per;
        let k = o % per;
        let start = r * p;
        let mut slipped = 0u64;
        // Slips are ascending: each one at or before the block's position (counting the slips
        // already passed) pushes the block one sector further, as in DiskSim's ltop.
        for &sl in &z.slips {
            if sl < start {
                continue;
            }
            if sl - start <= k + slipped {
                slipped += 1;
            } else {
                break;
            }
        }
        start + k + slipped
    }

    fn pbn_of_phys(&self, z: &Zone, phys: u64) -> Pbn {
        let cyl_sz = self.surfaces as u64 * z.spt as u64;
        let rel_cyl = (phys / cyl_sz) as u32;
        let track = ((phys % cyl_sz) / z.spt as u64) as u32;
        let cyl = z.first_cyl + rel_cyl;
        Pbn {
            cyl,
            head: self.head_of_track(z, cyl, track),
            sector: (phys % z.spt as u64) as u32,
        }
    }

    #[inline]
    fn reversed(&self, z: &Zone, cyl: u32) -> bool {
        match self.order {
            SurfaceOrder::Normal => false,
            SurfaceOrder::SerpentinePerZone => (cyl - z.first_cyl) % 2 == 1,
            SurfaceOrder::SerpentineAbsolute => cyl % 2 == 1,
        }
    }

    #[inline]
    fn head_of_track(&self, z: &Zone, cyl: u32, track: u32) -> u32 {
        if self.reversed(z, cyl) {
            self.surfaces - 1 - track
        } else {
            track
        }
    }

    /// Maps an LBN to its physical location.
    pub fn lbn_to_pbn(&self, lbn: u64) -> Pbn {
        let zi = self.zone_of(lbn);
        let phys = self.phys_in_zone(zi, lbn);
        self.pbn_of_phys(&self.zones[zi], phys)
    }

    /// Maps an LBN and tells how many consecutive LBNs from it lie on the same track, in
    /// physically consecutive sectors (a slip ends the run: the head passes the slipped sector
    /// without transferring).
    #[inline]
    pub fn locate(&self, lbn: u64) -> Located {
        let zi = self.zone_of(lbn);
        let z = &self.zones[zi];
        let phys = self.phys_in_zone(zi, lbn);
        let spt = z.spt as u64;
        let track_end = (phys / spt + 1) * spt;
        // The run ends at the track end, the next slip, the region's unused spares, or the
        // zone's last LBN.
        let mut run_end = track_end;
        if self.sparing != Sparing::Tracks {
            if let Some(&sl) = z.slips.iter().find(|&&s| s > phys) {
                run_end = run_end.min(sl);
            }
        }
        // LBNs left in the sparing region: past them the next LBN lies after the region's
        // spare sectors, not in the next physical sector. A plain zone's regions end on track
        // boundaries, which bound the run already.
        let left_in_region = if self.plain(z) {
            u64::MAX
        } else {
            self.left_in_region(z, lbn - z.first_lbn + z.dead_space)
        };
        let run = (run_end - phys)
            .min(z.first_lbn + z.lbns - lbn)
            .min(left_in_region);
        Located {
            zone: zi,
            pbn: self.pbn_of_phys(z, phys),
            run: run as u32,
        }
    }

    /// LBNs from the block `o` LBNs (dead space included) into zone `z` to the end of its
    /// sparing region.
    fn left_in_region(&self, z: &Zone, o: u64) -> u64 {
        let (p, spares) = self.region(z);
        let per = p - spares;
        per - o % per
    }

    /// Angular position of the start of `sector` on the given track, in sectors of that track
    /// (0..spt), as DiskSim's `g1_map_pbn_skew` computes it: the zone's offset, plus one track
    /// skew per track switch and one cylinder skew per cylinder switch since the zone's start.
    #[inline]
    pub fn sector_angle(&self, zone: usize, cyl: u32, head: u32, sector: u32) -> u32 {
        let z = &self.zones[zone];
        let rel_cyl = (cyl - z.first_cyl) as u64;
        let track = self.head_of_track(z, cyl, head) as u64;
        let switches = track + (self.surfaces as u64 - 1) * rel_cyl;
        let spt = z.spt as u64;
        // Under per-cylinder and per-track sparing, each slip on an earlier cylinder (or, per
        // track, an earlier track) of the zone turns this track one sector further, as
        // DiskSim's `g1_map_pbn_skew` assumes (see [`Sparing::PerCylinder`]).
        let slip_turns = match self.sparing {
            Sparing::PerCylinder => z
                .slips
                .partition_point(|&s| s < rel_cyl * self.surfaces as u64 * spt),
            Sparing::PerTrack => z
                .slips
                .partition_point(|&s| s < (rel_cyl * self.surfaces as u64 + track) * spt),
            _ => 0,
        } as u64;
        ((z.first_offset as u64
            + switches * z.track_skew as u64
            + rel_cyl * z.cyl_skew as u64
            + slip_turns
            + sector as u64)
            % spt) as u32
    }

    /// Zone index of a physical cylinder (cylinders between zones belong to no zone; they are
    /// treated as part of the zone before them for transfer-rate questions).
    pub fn zone_of_cyl(&self, cyl: u32) -> usize {
        let i = self.zones.partition_point(|z| z.first_cyl <= cyl);
        i.saturating_sub(1)
    }
}

/// An LBN's place and how far it runs on its track.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    pub zone: usize,
    pub pbn: Pbn,
    /// LBNs from this one that follow it in consecutive sectors of the same track.
    pub run: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// In a plain zone (no spares, no slips) under every sparing scheme, the region
        /// arithmetic that `phys_in_zone` and `locate` skip would give the block's offset as
        /// its sector and would not end its run before the track does.
        #[test]
        fn plain_zones_skip_the_region_arithmetic(
            surfaces in 1u32..5,
            scheme in 0usize..7,
            cyls in 1u32..9,
            spt in 1u32..70,
            dead in 0u64..100,
            offsets in proptest::collection::vec(0u64..100_000, 1..50),
        ) {
            let sparing = Sparing::every(3)[scheme];
            let mut z = Zone::simple(0, cyls - 1, spt, 0, 0);
            z.dead_space = dead;
            let Ok(l) = Layout::new(surfaces, sparing, SurfaceOrder::Normal, vec![z]) else {
                return Ok(());
            };
            prop_assume!(l.capacity() > 0);
            let z = &l.zones[0];
            prop_assert!(l.plain(z));
            for o in offsets {
                let o = z.dead_space + o % l.capacity();
                if sparing != Sparing::Tracks {
                    prop_assert_eq!(l.phys_by_regions(z, o), o);
                }
                let track_end = (o / u64::from(spt) + 1) * u64::from(spt);
                prop_assert!(l.left_in_region(z, o) >= track_end - o);
            }
        }
    }

    #[test]
    fn track_sparing_skips_slipped_tracks_and_keeps_spare_tracks_at_the_zone_end() {
        let mut z = Zone::simple(0, 9, 10, 0, 0);
        z.spares = 2;
        z.slips = vec![1];
        let l = Layout::new(2, Sparing::Tracks, SurfaceOrder::Normal, vec![z]).unwrap();
        // 20 tracks of 10 sectors, 2 of them spare.
        assert_eq!(l.capacity(), 180);
        // Track 1 (cylinder 0, head 1) is slipped: LBN 10 lands on track 2 (cylinder 1).
        assert_eq!(
            l.lbn_to_pbn(9),
            Pbn {
                cyl: 0,
                head: 0,
                sector: 9
            }
        );
        assert_eq!(
            l.lbn_to_pbn(10),
            Pbn {
                cyl: 1,
                head: 0,
                sector: 0
            }
        );
        assert_eq!(
            l.lbn_to_pbn(179),
            Pbn {
                cyl: 9,
                head: 0,
                sector: 9
            }
        );
        let mut z = Zone::simple(0, 9, 10, 0, 0);
        z.spares = 1;
        z.slips = vec![1, 2];
        assert!(Layout::new(2, Sparing::Tracks, SurfaceOrder::Normal, vec![z]).is_err());
    }

    #[test]
    fn per_track_sparing_keeps_spares_at_each_track_end_and_slips_turn_later_tracks() {
        let mut z = Zone::simple(0, 9, 10, 0, 0);
        z.spares = 1;
        z.slips = vec![3];
        let l = Layout::new(2, Sparing::PerTrack, SurfaceOrder::Normal, vec![z]).unwrap();
        assert_eq!(l.capacity(), 20 * 9);
        // The slipped sector 3 pushes sectors 3.. of track 0 one further, into the spare.
        assert_eq!(
            l.lbn_to_pbn(2),
            Pbn {
                cyl: 0,
                head: 0,
                sector: 2
            }
        );
        assert_eq!(
            l.lbn_to_pbn(3),
            Pbn {
                cyl: 0,
                head: 0,
                sector: 4
            }
        );
        assert_eq!(
            l.lbn_to_pbn(8),
            Pbn {
                cyl: 0,
                head: 0,
                sector: 9
            }
        );
        // Nine LBNs per track: LBN 9 starts track 1.
        assert_eq!(
            l.lbn_to_pbn(9),
            Pbn {
                cyl: 0,
                head: 1,
                sector: 0
            }
        );
        // The slip on track 0 turns track 1 one sector further (DiskSim's g1_map_pbn_skew).
        assert_eq!(l.sector_angle(0, 0, 1, 0), 1);
        assert_eq!(l.sector_angle(0, 0, 0, 0), 0);
    }

    #[test]
    fn simple_layout_maps_tracks_then_surfaces_then_cylinders() {
        let l = Layout::new(
            2,
            Sparing::None,
            SurfaceOrder::Normal,
            vec![
                Zone::simple(0, 9, 100, 10, 20),
                Zone::simple(10, 19, 50, 5, 10),
            ],
        )
        .unwrap();
        assert_eq!(l.capacity(), 10 * 2 * 100 + 10 * 2 * 50);
        assert_eq!(
            l.lbn_to_pbn(0),
            Pbn {
                cyl: 0,
                head: 0,
                sector: 0
            }
        );
        assert_eq!(
            l.lbn_to_pbn(100),
            Pbn {
                cyl: 0,
                head: 1,
                sector: 0
            }
        );
        assert_eq!(
            l.lbn_to_pbn(200),
            Pbn {
                cyl: 1,
                head: 0,
                sector: 0
            }
        );
        assert_eq!(
            l.lbn_to_pbn(2000),
            Pbn {
                cyl: 10,
                head: 0,
                sector: 0
            }
        );
        let loc = l.locate(150);
        assert_eq!(loc.run, 50);
        // skew: track 1 of cylinder 0 starts 10 sectors later, cylinder 1 track 0 is 1 track
        // switch + 1 cylinder skew later.
        assert_eq!(l.sector_angle(0, 0, 1, 0), 10);
        assert_eq!(l.sector_angle(0, 1, 0, 0), 30);
    }

    #[test]
    fn slips_push_blocks_within_their_range() {
        let mut z = Zone::simple(0, 3, 10, 0, 0);
        z.spares = 2;
        z.slips = vec![5];
        let l = Layout::new(
            1,
            Sparing::PerRange { cyls: 2 },
            SurfaceOrder::Normal,
            vec![z],
        )
        .unwrap();
        // 2 ranges of 20 sectors, 18 LBNs each.
        assert_eq!(l.capacity(), 36);
        assert_eq!(l.lbn_to_pbn(4).sector, 4);
        assert_eq!(l.lbn_to_pbn(5).sector, 6);
        assert_eq!(l.locate(4).run, 1);
        assert_eq!(
            l.lbn_to_pbn(18),
            Pbn {
                cyl: 2,
                head: 0,
                sector: 0
            }
        );
    }

    #[test]
    fn serpentine_reverses_odd_cylinders() {
        let l = Layout::new(
            3,
            Sparing::None,
            SurfaceOrder::SerpentinePerZone,
            vec![Zone::simple(0, 3, 10, 1, 2)],
        )
        .unwrap();
        assert_eq!(
            l.lbn_to_pbn(30),
            Pbn {
                cyl: 1,
                head: 2,
                sector: 0
            }
        );
        assert_eq!(
            l.lbn_to_pbn(50),
            Pbn {
                cyl: 1,
                head: 0,
                sector: 0
            }
        );
    }
}
