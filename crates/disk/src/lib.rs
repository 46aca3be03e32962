//! Device models for antsched: how long a disk takes to serve a request.
//!
//! Every result antsched produces, simulated or emulated, is only as believable as the model of
//! the device underneath. This crate holds those models, and the evidence that they are right.
//!
//! # The models
//!
//! * [`HddModel`]: a mechanical hard disk, in the tradition of DiskSim (Ganger, Worthington and
//!   Patt) and of Ruemmler and Wilkes' "An introduction to disk drive modeling" (1994). It knows
//!   where every block lies (zones, tracks, surfaces, skews, spare sectors: [`layout`]), how long
//!   the arm takes to move ([`seek`]), where the platter is at any instant (the angle is a
//!   function of absolute time: the platter turns whether or not anybody is waiting), the
//!   firmware's command overheads, the media and bus transfer rates, and the on-board cache with
//!   its segments, read-ahead and write-back. The [`hdd`] module documentation walks through the
//!   life of a request.
//! * [`SsdModel`]: a flash device: fixed read and write latencies, a few internal channels
//!   serving requests in parallel, and a bandwidth. No positioning at all, so anticipatory
//!   scheduling can only lose a little idle time on it, which is the point of having it.
//!
//! Both implement [`DeviceModel`], the interface the simulator, the emulator and the schedulers'
//! "exact" positioning-time estimator use. A device serves requests one after another in the
//! order submitted; `submit` says when one starts and finishes and splits its service time into
//! overhead, seek, rotation and transfer. `positioning_time` answers "what would this request
//! cost before its data starts moving if I sent it now?" without changing anything: that is the
//! number SPTF and the anticipation heuristics compare. Models are deterministic and cheap to
//! clone, so a scheduler can keep an exact replica of the device.
//!
//! # Where the numbers come from
//!
//! * [`presets`](mod@presets): built-in drives (the IBM Deskstar 34GXP of the paper, the Seagate Cheetah 15K
//!   of its section 4.8, a current 7,200 rpm drive, a SATA and an NVMe SSD), each with the
//!   sources of its figures.
//! * [`disksim`]: an importer for DiskSim 4.0's validated drive descriptions (`.parv`,
//!   `.diskspecs`, `.model`, `.seek`). It reads every parameter the model uses and refuses,
//!   naming file, line and parameter, anything it cannot honour.
//! * [`validate`]: replays the measured traces that come with those descriptions, as DiskSim's
//!   validate mode does, and computes the Ruemmler–Wilkes demerit figure. On the four drives
//!   shipped with DiskSim 4.0 our model's demerit is at or below DiskSim's own.
//! * [`curve`]: the positioning-time curve the paper's implementation calibrated at installation
//!   (LBN distance to time), fitted from measured or modelled samples, in the JSON form
//!   `antsched_core::PositioningCurve` reads.
//!
//! # Units
//!
//! Times at the interface are [`Nanos`] (u64 nanoseconds of virtual time). Addresses and sizes
//! are 512-byte sectors, as in DiskSim and in the block layer.

#![forbid(unsafe_code)]

pub mod curve;
pub mod disksim;
pub mod floor;
pub mod hdd;
pub mod layout;
pub mod presets;
pub mod seek;
pub mod ssd;
pub mod validate;

pub use disksim::{load_disksim, load_disksim_text, load_disksim_with, DiskSimError};
pub use floor::PositioningFloor;
pub use hdd::HddModel;
pub use presets::{preset, presets, PresetInfo};
pub use ssd::SsdModel;

/// Virtual time in nanoseconds.
pub type Nanos = u64;

/// The largest input file antsched reads (a job file, a DiskSim file, a trace, a scenario):
/// 256 MiB. DiskSim's validation traces are under 1 MB; a larger "file" is a device or a
/// mistake (`--disk /dev/zero` read until memory ran out).
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads a whole text file of at most [`MAX_INPUT_BYTES`]; a larger one is an error that says
/// so, found after reading one byte past the limit rather than the whole file.
pub fn read_text(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_INPUT_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_INPUT_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "larger than {} MiB; not an input antsched reads",
                MAX_INPUT_BYTES >> 20
            ),
        ));
    }
    Ok(text)
}

/// A value as an error message shows it: a number whose plain form runs past 24 characters
/// (`-1e308` is 309 digits as `{}` prints an `f64`) in scientific notation, anything else as is.
pub fn compact_value(shown: String) -> String {
    match shown.parse::<f64>() {
        Ok(x) if shown.len() > 24 => format!("{x:e}"),
        _ => shown,
    }
}

/// Direction of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiskOp {
    Read,
    Write,
}

/// A request as a device sees it: an operation on `sectors` 512-byte sectors from `lbn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DiskRequest {
    pub op: DiskOp,
    pub lbn: u64,
    pub sectors: u32,
}

impl DiskRequest {
    pub fn read(lbn: u64, sectors: u32) -> DiskRequest {
        DiskRequest {
            op: DiskOp::Read,
            lbn,
            sectors,
        }
    }
    pub fn write(lbn: u64, sectors: u32) -> DiskRequest {
        DiskRequest {
            op: DiskOp::Write,
            lbn,
            sectors,
        }
    }
}

/// Where a request's service time went.
///
/// `overhead` is command processing (and any wait for the mechanism to finish background work
/// the host did not see, such as destaging an earlier write), `seek` the arm's movement
/// (including a head switch and write settling), `rotation` the wait for the first sector,
/// `transfer` everything from the first sector's transfer to completion (media and bus).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServiceBreakdown {
    pub overhead: Nanos,
    pub seek: Nanos,
    pub rotation: Nanos,
    pub transfer: Nanos,
    /// Served from the on-board cache without positioning the mechanism.
    pub cache_hit: bool,
}

impl ServiceBreakdown {
    /// The whole service time.
    pub fn total(&self) -> Nanos {
        self.overhead + self.seek + self.rotation + self.transfer
    }

    /// Positioning: everything before the data starts to move, i.e. overhead + seek + rotation.
    /// This is what [`DeviceModel::positioning_time`] predicts.
    pub fn positioning(&self) -> Nanos {
        self.overhead + self.seek + self.rotation
    }
}

/// When a submitted request ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// When the device began serving it (`max(now, end of the previous request)`).
    pub start: Nanos,
    /// When it completed.
    pub finish: Nanos,
    pub service: ServiceBreakdown,
}

/// A storage device model. Deterministic: no randomness, no wall clock.
pub trait DeviceModel: Send {
    /// The model's name (a preset name or the DiskSim drive name).
    fn name(&self) -> &str;

    /// Capacity in 512-byte sectors.
    fn capacity_sectors(&self) -> u64;

    /// Accept `req` at time `now`; the device serves requests one at a time in arrival order
    /// (start = max(now, when it finishes what it already has)), updates its state (head,
    /// cache; rotation is a function of absolute time) and says when it finishes.
    fn submit(&mut self, req: &DiskRequest, now: Nanos) -> Completion;

    /// Exact positioning time (overhead + seek + rotation, the part before data transfer, as
    /// SPTF needs it) if `req` were started at `start` from the current state, cache included
    /// (a cache hit costs only its command overhead). No state change.
    fn positioning_time(&self, req: &DiskRequest, start: Nanos) -> Nanos;

    /// The positioning of the media work `req` causes, started at `start` from the current
    /// state: what a scheduler should weigh it by. It differs from [`positioning_time`] in
    /// two ways. A write the drive's write-back cache takes is priced by the media write it
    /// defers: it is reported done at once, but the next request that needs the mechanism
    /// waits for it, and priced at its report every such write looks free, a scheduler
    /// interleaves it with reads elsewhere, and each of those reads pays the destage's round
    /// trip. And work the mechanism has already taken (a destage, the read-ahead's last
    /// sector) is charged to no request, since it is done whatever is chosen next. No state
    /// change.
    ///
    /// [`positioning_time`]: DeviceModel::positioning_time
    fn media_positioning_time(&self, req: &DiskRequest, start: Nanos) -> Nanos {
        self.positioning_time(req, start)
    }

    /// A lower bound on [`media_positioning_time`] at `start` for every request that does not
    /// start in the floor's cached ranges, by LBN distance from `head` (the sector after the
    /// last request submitted), so that SPTF can stop asking once the bound passes the best
    /// request found ([`floor`](mod@floor)). `None`, the default: no bound.
    ///
    /// [`media_positioning_time`]: DeviceModel::media_positioning_time
    fn media_positioning_floor(&self, _head: u64, _start: Nanos) -> Option<PositioningFloor> {
        None
    }

    /// A boxed copy with the same state.
    fn clone_box(&self) -> Box<dyn DeviceModel>;
}

impl Clone for Box<dyn DeviceModel> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}
