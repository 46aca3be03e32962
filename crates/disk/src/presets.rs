//! Built-in drives.
//!
//! Each preset is built from datasheet figures (cited beside it): spindle speed, capacity,
//! surfaces, the media rate at the outer and inner edge, track-to-track / average / full-stroke
//! seek times, head switch, buffer size, command overheads and interface rate. Where a
//! datasheet is silent (zone boundaries, skews, per-command overheads) we derive the value the way
//! the drive's designers would: zones split the cylinders evenly with sectors per track falling
//! linearly from outer to inner rate, and the skews are the smallest whole number of sectors that
//! covers a head switch (track skew) or a one-cylinder seek (cylinder skew), so that a sequential
//! transfer loses only the switch time at each track boundary.
//!
//! The figures `antsched disks` prints (sequential rates, average seek) are computed from the
//! built models, not copied from the datasheets, so they show what the model really does.

use crate::hdd::{CacheParams, HddModel, HddParams, KeepRequest, Overheads, ReadAhead, WriteBack};
use crate::layout::{Layout, Sparing, SurfaceOrder, Zone};
use crate::seek::SeekCurve;
use crate::ssd::{SsdModel, SsdParams};
use crate::DeviceModel;

/// Key figures of a built-in model, computed from the model itself.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PresetInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// Spindle speed; `None` for flash.
    pub rpm: Option<f64>,
    pub capacity_bytes: u64,
    /// Sustained sequential media rate at the outer and inner edge (MB/s, 10^6 bytes), with
    /// track and cylinder switches counted.
    pub outer_mb_s: f64,
    pub inner_mb_s: f64,
    /// Mean seek over random pairs of cylinders (ms); 0 for flash.
    pub average_seek_ms: f64,
}

/// Names of the built-in models, in the order `antsched disks` lists them.
pub const PRESET_NAMES: &[&str] = &[
    "deskstar-34gxp",
    "cheetah-15k",
    "ultrastar-hc310",
    "sata-ssd",
    "nvme-ssd",
];

/// A built-in model by name.
pub fn preset(name: &str) -> Option<Box<dyn DeviceModel>> {
    match name {
        "sata-ssd" | "nvme-ssd" => ssd_preset(name).map(|s| Box::new(s) as Box<dyn DeviceModel>),
        _ => hdd_preset(name).map(|h| Box::new(h) as Box<dyn DeviceModel>),
    }
}

/// A built-in hard disk by name, as its concrete type.
pub fn hdd_preset(name: &str) -> Option<HddModel> {
    Some(match name {
        "deskstar-34gxp" => deskstar_34gxp(),
        "cheetah-15k" => cheetah_15k(),
        "ultrastar-hc310" => ultrastar_hc310(),
        _ => return None,
    })
}

/// A built-in SSD by name, as its concrete type.
pub fn ssd_preset(name: &str) -> Option<SsdModel> {
    Some(match name {
        "sata-ssd" => sata_ssd(),
        "nvme-ssd" => nvme_ssd(),
        _ => return None,
    })
}

/// Every built-in model with its key figures.
pub fn presets() -> Vec<PresetInfo> {
    PRESET_NAMES
        .iter()
        .map(|&name| {
            if let Some(h) = hdd_preset(name) {
                let zones = h.layout().zones.len();
                PresetInfo {
                    name,
                    description: description(name),
                    rpm: Some(h.params().rpm),
                    capacity_bytes: h.capacity_sectors() * 512,
                    outer_mb_s: h.zone_sustained_mb_s(0),
                    inner_mb_s: h.zone_sustained_mb_s(zones - 1),
                    average_seek_ms: h.average_seek_ms(),
                }
            } else {
                let s = ssd_preset(name).expect("every preset name builds");
                let p = s.params();
                PresetInfo {
                    name,
                    description: description(name),
                    rpm: None,
                    capacity_bytes: p.capacity_sectors * 512,
                    outer_mb_s: p.bandwidth_bytes_per_s / 1e6,
                    inner_mb_s: p.bandwidth_bytes_per_s / 1e6,
                    average_seek_ms: 0.0,
                }
            }
        })
        .collect()
}

fn description(name: &str) -> &'static str {
    match name {
        "deskstar-34gxp" => {
            "IBM Deskstar 34GXP DPTA-373420, 7,200 rpm IDE (the SOSP 2001 paper's disk)"
        }
        "cheetah-15k" => {
            "Seagate Cheetah X15 ST318451LW, 15,000 rpm Ultra160 SCSI (paper section 4.8)"
        }
        "ultrastar-hc310" => {
            "WD Ultrastar DC HC310 4 TB HUS726T4TALA6L4, 7,200 rpm CMR SATA (2018-)"
        }
        "sata-ssd" => "SATA SSD (Samsung 870 EVO 1 TB class)",
        "nvme-ssd" => "NVMe SSD (Samsung 980 PRO 1 TB class)",
        _ => "",
    }
}

/// Datasheet-level description of a zoned drive.
struct Figures {
    rpm: f64,
    surfaces: u32,
    capacity_sectors: u64,
    outer_spt: u32,
    inner_spt: u32,
    zones: u32,
    single_ms: f64,
    avg_ms: f64,
    full_ms: f64,
    head_switch_ms: f64,
    write_settle_ms: f64,
    bus_mb_s: f64,
    overheads: Overheads,
    cache: CacheParams,
}

fn build(name: &str, f: Figures) -> HddModel {
    let period = 60_000.0 / f.rpm;
    // Cylinders needed for the capacity with sectors per track falling linearly.
    let avg_spt = (f.outer_spt + f.inner_spt) as f64 / 2.0;
    let cyls_needed = (f.capacity_sectors as f64 / (f.surfaces as f64 * avg_spt)).ceil() as u32;
    let per_zone = cyls_needed.div_ceil(f.zones) + 1;
    let mut zones = Vec::new();
    for k in 0..f.zones {
        let frac = if f.zones > 1 {
            k as f64 / (f.zones - 1) as f64
        } else {
            0.0
        };
        let spt = (f.outer_spt as f64 - frac * (f.outer_spt - f.inner_spt) as f64).round() as u32;
        let st = period / spt as f64;
        // Smallest skews that cover the switch: a sequential transfer then loses only the
        // switch time at each track boundary, never a revolution.
        let track_skew = (f.head_switch_ms / st).ceil() as u32;
        let cyl_skew = (f.head_switch_ms.max(f.single_ms) / st).ceil() as u32;
        zones.push(Zone::simple(
            k * per_zone,
            (k + 1) * per_zone - 1,
            spt,
            track_skew,
            cyl_skew,
        ));
    }
    let layout = Layout::new(f.surfaces, Sparing::None, SurfaceOrder::Normal, zones)
        .expect("preset layouts are valid")
        .with_exposed_capacity(f.capacity_sectors);
    let cyls = layout.max_cyl() + 1;
    let params = HddParams {
        rpm: f.rpm,
        seek: SeekCurve::fit(f.single_ms, f.avg_ms, f.full_ms, cyls),
        head_switch_ms: f.head_switch_ms,
        head_switch_random_ms: f.single_ms,
        write_settle_ms: f.write_settle_ms,
        overheads: f.overheads,
        bus_ms_per_sector: 512.0 / (f.bus_mb_s * 1e6) * 1e3,
        bus_write_ms_per_sector: 512.0 / (f.bus_mb_s * 1e6) * 1e3,
        cache: f.cache,
        reselect: Default::default(),
    };
    HddModel::new(name, layout, params)
}

/// A modern segmented cache: read-ahead to fill the segment, zero-latency reads, write-back,
/// and reads that ride on the read-ahead in progress.
fn modern_cache(segments: u32, segment_sectors: u32) -> CacheParams {
    CacheParams {
        enabled: true,
        segments,
        segment_sectors,
        separate_write_segment: false,
        write_segments: segments / 4,
        read_ahead: ReadAhead::Segment,
        min_read_ahead: 0,
        max_read_ahead: segment_sectors,
        keep_request: KeepRequest::Overwrite,
        read_any_free_blocks: false,
        write_back: WriteBack::All,
        immediate_read: false,
        immediate_write: false,
        combine_writes: true,
        stop_prefetch_in_sector: false,
        write_stops_prefetch: true,
        read_hits_on_write_data: true,
        almost_read_hits: true,
        partial_hits: true,
        read_water: 0.0,
        water_by_request: true,
        read_ahead_on_idle_hit: false,
    }
}

/// IBM Deskstar 34GXP, DPTA-373420 (34.2 GB), the disk of the paper's experiments.
///
/// Sources: IBM Deskstar 34GXP OEM specification (DPTA-37xxxx) and the Red Hill hard drive
/// history table: 7,200 rpm (4.17 ms average latency), 34.2 GB = 66,835,440 sectors on 5 platters
/// (6.8 GB per platter, 10 heads), media data rate up to 284 Mbit/s (about 24 MB/s of user data
/// on the outer zone, 14 MB/s on the inner), average seek 9.0 ms (read), track-to-track 2.2 ms,
/// full stroke 15.5 ms, 2 MB buffer, Ultra ATA/66. The thesis (2.2.2, 9) reports 21 MB/s for
/// sequential reads and 3 ms per 64 KB on it. Overheads: typical IDE command processing of the
/// period (0.3 ms for a miss, 0.1 ms for a hit); head switch 1.2 ms as in the Deskstar 75GXP
/// specification (the next generation, same head switch procedure).
pub fn deskstar_34gxp() -> HddModel {
    build(
        "deskstar-34gxp",
        Figures {
            rpm: 7200.0,
            surfaces: 10,
            capacity_sectors: 66_835_440,
            outer_spt: 404,
            inner_spt: 234,
            zones: 12,
            single_ms: 2.2,
            avg_ms: 9.0,
            full_ms: 15.5,
            head_switch_ms: 1.2,
            write_settle_ms: 0.5,
            bus_mb_s: 50.0,
            overheads: Overheads {
                read_hit_after_read: 0.1,
                read_hit_after_write: 0.1,
                read_miss_after_read: 0.3,
                read_miss_after_write: 0.3,
                write_hit_after_read: 0.1,
                write_hit_after_write: 0.1,
                write_miss_after_read: 0.3,
                write_miss_after_write: 0.3,
                ..Overheads::default()
            },
            // 2 MB buffer: 8 segments of 480 sectors (the firmware keeps the rest).
            cache: modern_cache(8, 480),
        },
    )
}

/// Seagate Cheetah X15, ST318451LW (18.4 GB), the 15,000 rpm disk of the paper's section 4.8.
///
/// Sources: Seagate Cheetah X15 Product Manual vol. 1, publication 83329484 (ST318451LW/LC,
/// ST39251LC), and StorageReview's review of the ST318451LW (June 2000): 15,000 rpm (2 ms average
/// latency), 18.35 GB = 35,885,344 sectors, 5 platters / 10 heads, internal media rate 37.4 to
/// 48.9 MB/s, average seek 3.9 ms read (4.5 ms write), track-to-track 0.7 ms, full stroke about
/// 8 ms, 4 MB buffer, Ultra160 SCSI (160 MB/s; the Adaptec 19160 of the paper). Overheads:
/// SCSI command processing of the period (DiskSim's Cheetah 4LP and Atlas 10K models measured
/// 0.1 to 0.6 ms).
pub fn cheetah_15k() -> HddModel {
    build(
        "cheetah-15k",
        Figures {
            rpm: 15000.0,
            surfaces: 10,
            capacity_sectors: 35_885_344,
            outer_spt: 392,
            inner_spt: 300,
            zones: 10,
            single_ms: 0.7,
            avg_ms: 3.9,
            full_ms: 8.0,
            head_switch_ms: 0.5,
            write_settle_ms: 0.6,
            bus_mb_s: 120.0,
            overheads: Overheads {
                read_hit_after_read: 0.1,
                read_hit_after_write: 0.1,
                read_miss_after_read: 0.25,
                read_miss_after_write: 0.25,
                write_hit_after_read: 0.15,
                write_hit_after_write: 0.15,
                write_miss_after_read: 0.25,
                write_miss_after_write: 0.25,
                ..Overheads::default()
            },
            cache: modern_cache(16, 480),
        },
    )
}

/// WD Ultrastar DC HC310 4 TB, HUS726T4TALA6L4: a current 7,200 rpm CMR drive.
///
/// Sources: Western Digital Ultrastar DC HC310 data sheet (2018) and product manual: 7,200 rpm
/// (4.16 ms average latency), 4 TB = 7,814,037,168 sectors (512e), sustained transfer 255 MB/s
/// (outer diameter), conventional magnetic recording, 256 MB cache, SATA 6 Gb/s. Seek figures of
/// the HC310 manual: about 7.5 ms average read, 0.6 ms track-to-track, 15 ms full stroke. Inner
/// rate about half the outer, as for every drive of this density. Four heads (two platters).
pub fn ultrastar_hc310() -> HddModel {
    build(
        "ultrastar-hc310",
        Figures {
            rpm: 7200.0,
            surfaces: 4,
            capacity_sectors: 7_814_037_168,
            outer_spt: 4250,
            inner_spt: 2150,
            zones: 24,
            single_ms: 0.6,
            avg_ms: 7.5,
            full_ms: 15.0,
            head_switch_ms: 0.6,
            write_settle_ms: 0.3,
            bus_mb_s: 550.0,
            overheads: Overheads {
                read_hit_after_read: 0.05,
                read_hit_after_write: 0.05,
                read_miss_after_read: 0.1,
                read_miss_after_write: 0.1,
                write_hit_after_read: 0.05,
                write_hit_after_write: 0.05,
                write_miss_after_read: 0.1,
                write_miss_after_write: 0.1,
                ..Overheads::default()
            },
            // Of the 256 MB, firmware read-ahead segments of 2 MB.
            cache: modern_cache(64, 4096),
        },
    )
}

/// A SATA SSD of the Samsung 870 EVO 1 TB class.
///
/// Sources: Samsung 870 EVO data sheet (2021): 560 MB/s sequential read, 530 MB/s write,
/// 98K random read IOPS at QD32 (so at least 8 requests in flight internally), about 80 µs
/// queue-depth-one 4 KB read latency; writes land in the SLC cache in about 30 µs.
pub fn sata_ssd() -> SsdModel {
    SsdModel::new(
        "sata-ssd",
        SsdParams {
            capacity_sectors: 1_953_525_168,
            read_latency_ns: 80_000,
            write_latency_ns: 30_000,
            channels: 8,
            bandwidth_bytes_per_s: 550e6,
        },
    )
}

/// An NVMe SSD of the Samsung 980 PRO 1 TB class.
///
/// Sources: Samsung 980 PRO data sheet (2020): 7,000 MB/s sequential read, 5,000 MB/s write,
/// 1,000K random read IOPS at high queue depth (so many requests in flight: 32 here), about
/// 50 µs queue-depth-one 4 KB read latency, about 20 µs for writes into the SLC cache.
pub fn nvme_ssd() -> SsdModel {
    SsdModel::new(
        "nvme-ssd",
        SsdParams {
            capacity_sectors: 1_953_525_168,
            read_latency_ns: 50_000,
            write_latency_ns: 20_000,
            channels: 32,
            bandwidth_bytes_per_s: 7e9,
        },
    )
}
