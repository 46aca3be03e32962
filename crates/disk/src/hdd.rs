//! The mechanical hard-disk model.
//!
//! [`HddModel`] serves one request at a time, like a drive with a queue depth of one. A request's
//! life, in the order the drive lives it:
//!
//! 1. **Command overhead**: the firmware decodes the command and looks up its cache. DiskSim
//!    measured this per kind of command (read or write, hit or miss, after a read or after a
//!    write), because the firmware's paths differ; we keep the eight figures.
//! 2. **Cache lookup**. A read whose blocks all sit in a buffer segment (because an earlier read
//!    prefetched them, or a write left them there) needs no mechanical work at all: it only
//!    crosses the bus. A read that continues what the drive is prefetching right now rides on that
//!    prefetch: no seek, no rotational wait. That is why synchronous sequential reads with a
//!    little think time between them still stream at the media rate (the paper's 21 MB/s).
//! 3. **Positioning**: a seek (cylinders; at least a head switch if the surface changes; plus a
//!    settling delay for writes), then the rotational wait until the first sector comes under the
//!    head. The platter's angle is a pure function of absolute time (`now / period`), so the
//!    wait depends on *when* the request starts: this is exactly what anticipation exploits
//!    when it waits a little for a nearby request instead of seeking away.
//! 4. **Media transfer**, track by track, at the zone's rate (`period / sectors per track` per
//!    sector). Crossing to the next track costs a head switch or a one-cylinder seek, mostly hidden
//!    by the track and cylinder skews of the layout.
//! 5. **Bus transfer** to the host, which can overlap the media transfer: the drive reconnects
//!    once a high-water mark of data is in its buffer and then streams at the bus rate, never
//!    ahead of the media.
//! 6. **After a read**, the drive goes on reading ahead into the segment while it would
//!    otherwise idle. We do not simulate this eagerly: the prefetch is a plan (where it starts,
//!    when, and how far it may go), and the next request works out from the elapsed time how much
//!    of it was done, aborting the rest at a sector boundary.
//! 7. **Writes** with write-back caching complete once their data is in the buffer; the drive
//!    destages them in the background, and a later request that needs the mechanism waits for
//!    that to finish. Without write-back, a write completes when its last sector is on the media.
//!
//! Everything is computed in milliseconds as `f64` (DiskSim's unit) and rounded to nanoseconds
//! at the API. There is no randomness: the same requests at the same times give the same answers,
//! so a clone replayed with the same dispatches stays identical to the original.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use crate::floor::{self, PositioningFloor};
use crate::layout::{Layout, Located, Pbn};
use crate::seek::SeekCurve;
use crate::{Completion, DeviceModel, DiskOp, DiskRequest, Nanos, ServiceBreakdown};

/// Per-command processing overheads, in ms (already multiplied by DiskSim's time scale).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Overheads {
    pub read_hit_after_read: f64,
    pub read_hit_after_write: f64,
    pub read_miss_after_read: f64,
    pub read_miss_after_write: f64,
    pub write_hit_after_read: f64,
    pub write_hit_after_write: f64,
    pub write_miss_after_read: f64,
    pub write_miss_after_write: f64,
    /// Added to every command.
    pub per_request: f64,
    /// Before the completion message of a read / a write.
    pub read_complete: f64,
    pub write_complete: f64,
}

impl Overheads {
    /// The same figure for every kind of command.
    pub fn uniform(ms: f64) -> Overheads {
        Overheads {
            read_hit_after_read: ms,
            read_hit_after_write: ms,
            read_miss_after_read: ms,
            read_miss_after_write: ms,
            write_hit_after_read: ms,
            write_hit_after_write: ms,
            write_miss_after_read: ms,
            write_miss_after_write: ms,
            ..Overheads::default()
        }
    }
}

/// How far the drive reads ahead after a read (DiskSim's `Buffer continuous read`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadAhead {
    Off,
    /// To the end of the track holding the request's last sector.
    Track,
    /// To the end of its cylinder.
    Cylinder,
    /// Until the segment is full (bounded by the maximum read-ahead).
    Segment,
    /// To the end of the track holding the block after the request, and one track further when
    /// the segment began on an earlier track (a stream is running), not bounded by the maximum
    /// read-ahead: DiskSim's `BUFFER_DEC_PREFETCH_SCHEME` (`Buffer continuous read = 4`).
    TrackAhead,
}

/// Whether prefetched data may overwrite, in the segment, the data just returned to the host
/// (DiskSim's `Read-ahead over requested`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepRequest {
    /// -1: the request's data is dropped once sent; the whole segment is for read-ahead.
    Drop,
    /// 0: the request's data stays; read-ahead stops when the segment is full.
    Keep,
    /// 1: read-ahead goes on to its maximum, pushing the oldest data out of the segment.
    Overwrite,
}

/// Write-back caching (DiskSim's `Fast write level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteBack {
    /// Writes complete when on the media.
    Off,
    /// Writes complete when in the buffer; a write that does not append to data still being
    /// destaged waits for that destage first.
    Sequential,
    /// Writes complete when in the buffer; dirty data is flushed before any other media work.
    All,
}

/// The on-board buffer/cache.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheParams {
    pub enabled: bool,
    pub segments: u32,
    pub segment_sectors: u32,
    /// A segment reserved for write data (so writes do not evict read-ahead).
    pub separate_write_segment: bool,
    /// At most this many segments hold write data (0: no limit); a write beyond it reuses the
    /// least recently used write segment, so writes cannot flush the read-ahead of every stream.
    pub write_segments: u32,
    pub read_ahead: ReadAhead,
    /// The next request waits until at least this many sectors were prefetched.
    pub min_read_ahead: u32,
    pub max_read_ahead: u32,
    pub keep_request: KeepRequest,
    /// Sectors that pass under the head during the rotational wait, just before the first
    /// requested one, are cached too (DiskSim's `Read any free blocks`). Only with
    /// `immediate_read`: a drive that waits for the first requested sector does not read before it.
    pub read_any_free_blocks: bool,
    pub write_back: WriteBack,
    /// Zero-latency reads: start with whichever requested sector comes first under the head.
    pub immediate_read: bool,
    /// Zero-latency writes when destaging.
    pub immediate_write: bool,
    /// Sequential writes share (append to) one segment.
    pub combine_writes: bool,
    /// A prefetch may be aborted in the middle of a sector (else the sector is finished).
    pub stop_prefetch_in_sector: bool,
    /// A write aborts the read-ahead in progress.
    pub write_stops_prefetch: bool,
    /// Reads may hit on data left by writes.
    pub read_hits_on_write_data: bool,
    /// A read whose first block is about to be prefetched rides on the prefetch.
    pub almost_read_hits: bool,
    /// A read whose first blocks are cached transfers them at once and gets the rest from the
    /// media (riding on the prefetch when it continues there).
    pub partial_hits: bool,
    /// Fraction of the request (or of the segment) buffered before the drive starts the bus
    /// transfer of a read miss.
    pub read_water: f64,
    pub water_by_request: bool,
    /// A read served whole from the cache while the mechanism is idle starts the read-ahead
    /// from the end of its segment (DiskSim's `Read-ahead on idle hit`), as if it had missed.
    /// Without it a hit leaves the arm idle, and a stream that keeps hitting a segment the
    /// read-ahead had finished filling misses when it runs past the end.
    pub read_ahead_on_idle_hit: bool,
}

impl CacheParams {
    /// No caching at all.
    pub fn off() -> CacheParams {
        CacheParams {
            enabled: false,
            segments: 0,
            segment_sectors: 0,
            separate_write_segment: false,
            write_segments: 0,
            read_ahead: ReadAhead::Off,
            min_read_ahead: 0,
            max_read_ahead: 0,
            keep_request: KeepRequest::Keep,
            read_any_free_blocks: false,
            write_back: WriteBack::Off,
            immediate_read: false,
            immediate_write: false,
            combine_writes: true,
            stop_prefetch_in_sector: false,
            write_stops_prefetch: true,
            read_hits_on_write_data: false,
            almost_read_hits: false,
            partial_hits: false,
            read_water: 0.0,
            water_by_request: true,
            read_ahead_on_idle_hit: false,
        }
    }
}

/// Everything about a drive that does not change while it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct HddParams {
    pub rpm: f64,
    pub seek: SeekCurve,
    pub head_switch_ms: f64,
    /// A head switch at the start of an access (not inside a sequential transfer): the new head
    /// arrives unprepared and settles as after a short seek. DIXtrac extracts `head_switch_ms`
    /// from sequential transfers, where the firmware prepares the switch and the skew hides it;
    /// DiskSim's validation traces show same-cylinder random reads costing about a
    /// one-cylinder seek more than that figure. Importers and presets set it to the
    /// one-cylinder seek time; 0 disables it.
    pub head_switch_random_ms: f64,
    /// Added to any non-zero seek before a write.
    pub write_settle_ms: f64,
    pub overheads: Overheads,
    /// Bus time per 512-byte sector (the largest of the disk's, bus's and controller's).
    pub bus_ms_per_sector: f64,
    /// Bus time per sector of a write, host to drive. Buses of the early 1990s (the HP
    /// C2247A's) were measured slower in that direction; otherwise the same as reads.
    pub bus_write_ms_per_sector: f64,
    pub cache: CacheParams,
    /// The SCSI disconnect/reselect protocol (all zero for a drive that never disconnects).
    pub reselect: Reselect,
}

/// What a SCSI drive that frees the bus during mechanical work pays to leave and retake it
/// (DiskSim's disconnect/reselect overheads). A drive that must seek or wait for the platter
/// disconnects after decoding the command so that other devices can use the bus, and reselects
/// the host when it has data (a read) or has finished (a write). With one request outstanding,
/// nobody else wants the bus, but the drive still goes through the protocol: the disconnect
/// runs while the arm moves, and the reselect lies on the path to the host every time.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Reselect {
    /// Releasing the bus after a read miss's command, after a read and after a write (ms).
    pub read_disconnect_after_read: f64,
    pub read_disconnect_after_write: f64,
    /// Releasing the bus after a write's data has crossed it, before the media write (ms).
    pub write_disconnect: f64,
    /// Retaking the bus to resume the request (ms).
    pub reselect: f64,
    /// Retaking it again, for a request already reselected once (DiskSim's `Other reselect
    /// overhead`): the status of a write the drive takes in extra connections
    /// ([`Reselect::write_prebuffer`]), whose data came over a first reselection (ms).
    pub reselect_other: f64,
    /// Preparing a data transfer after a reselect (ms; not paid when only the status follows),
    /// and before a write's data crosses the bus: DiskSim adds it to the command overhead of a
    /// write it serves connected (`disk_write_arrive`), but not to the time the arm may start.
    pub data_prep: f64,
    /// A write's media access takes at least this long from its start (DiskSim's `Minimum
    /// seek delay`): the drive cannot start writing before its firmware has set up the write,
    /// even on the track the head is on. DiskSim waives it only for a write that continues a
    /// sequential stream at the very instant the previous one ends, which never happens with
    /// one request outstanding and a host that thinks between requests.
    pub min_write_delay: f64,
    /// The drive waits for the first part of a write's data before writing to the media
    /// (DiskSim's `Extra write disconnect` drives, the HP C2247A): all of a write shorter than
    /// 10 sectors, its first 10 sectors below 45, else its first 15. DiskSim applies this
    /// wherever the parameter is set (`disk_buffer_block_available`).
    ///
    /// Of the extra disconnect the parameter is named for, only its last step is modelled.
    /// DiskSim 4.0 charges it: `disk_buffer_select_segment` flags `EXTRA_WRITE_DISCONNECT` on a
    /// write whose segment was used last, by a write, and which does not start at that
    /// segment's end (the code is live in CMU's 4.0 and in Western Digital's 64-bit tree; only
    /// another Western Digital tree comments it out), and `disk_write_arrive`, `disk_check_bus`
    /// and `disk_reconnection_or_transfer_complete` then take the write in three connections
    /// with the `Extradisc` overheads. The C2247A's measured trace labels exactly those writes
    /// `Trip` (all 1,660; its 3,224 other writes `Doub`). Modelled whole (arm after `Extradisc
    /// command overhead` and `seek delta`, data after the first disconnect, the
    /// inter-disconnect delay and a reselect, `Extradisc 2nd disconnect overhead` after it),
    /// the drive's demerit rose from 0.098 to 0.102 ms. DiskSim's own model, built from its
    /// 4.0 sources and run on the same trace request by request, times those writes as this
    /// model does except for the status, which comes over a second reselection at the `Other
    /// reselect overhead` ([`Reselect::reselect_other`]), which is modelled.
    pub write_prebuffer: bool,
}

impl Reselect {
    /// The drive goes through the disconnect/reselect protocol at all.
    fn disconnects(&self) -> bool {
        self.read_disconnect_after_read > 0.0
            || self.read_disconnect_after_write > 0.0
            || self.write_disconnect > 0.0
            || self.reselect > 0.0
            || self.data_prep > 0.0
    }
}

#[derive(Debug)]
struct Spec {
    name: String,
    layout: Layout,
    p: HddParams,
    period: f64,
    /// A head switch outside a sequential transfer: the new head lands cold and settles as
    /// after a short seek (`head_switch_ms.max(head_switch_random_ms)`, worked out once: every
    /// positioning question that switches heads asks for it).
    cold_switch_ms: f64,
    /// The least seek over `k` cylinders or more, read or write ([`floor::seek_floor`]).
    seek_floor: Arc<[f64]>,
    /// The most LBNs a cylinder holds (its sectors, spares included).
    sectors_per_cylinder: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Segment {
    start: u64,
    /// Exclusive end of valid data.
    end: u64,
    lru: u64,
    valid: bool,
    /// Holds write data.
    write: bool,
}

impl Segment {
    /// Whether it holds the first blocks of `lbn..end` but not all of them: a partial hit.
    fn holds_the_start_of(&self, lbn: u64, end: u64) -> bool {
        self.valid && self.start <= lbn && lbn < self.end && self.end < end
    }
}

/// A read-ahead in progress: a plan, evaluated lazily.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Prefetch {
    seg: usize,
    /// The first LBN the prefetch reads.
    from: u64,
    /// Exclusive LBN where it stops by itself.
    limit: u64,
    /// Arm position and time when it starts.
    cyl: u32,
    head: u32,
    t: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct State {
    cyl: u32,
    head: u32,
    /// When the last submitted request completes (host-visible).
    busy_until: f64,
    /// When the mechanism finishes the work already committed (a destage).
    mech_free: f64,
    last_read: bool,
    prefetch: Option<Prefetch>,
    tick: u64,
}

/// A mechanical hard disk: zoned layout, seek curve, rotation from absolute time, command
/// overheads, media and bus transfer, and an on-board segmented cache with read-ahead and
/// write-back. See the module documentation for the life of a request.
#[derive(Clone, Debug)]
pub struct HddModel {
    spec: Arc<Spec>,
    st: State,
    segs: Vec<Segment>,
    /// The media pieces the read-ahead in progress reads, and where it ends if left to finish.
    /// Every positioning-time question starts with "how far has the read-ahead got by now?",
    /// and schedulers ask several per decision; the pieces do not depend on the time asked, so
    /// they are laid out once per read-ahead and then only scanned.
    prefetch_walk: RefCell<PrefetchWalk>,
    /// The last few tracks located: (first LBN, where it was), valid for the `run` LBNs that
    /// follow in consecutive sectors: a transfer or a read-ahead walks on along the tracks it
    /// found. Locating costs several divisions.
    located: RefCell<[(u64, Place); 4]>,
    located_next: Cell<usize>,
    /// LBNs located, by LBN: slot [`place_slot`] holds (LBN, where it is). A scheduler asks
    /// about every pending request again at each decision until it is served (with eight
    /// processes reading at random, some seven times each), always at the same LBN, and a
    /// decision's eight candidates and the head's tracks are more than the track memo holds.
    places: Box<[Cell<(u64, Place)>; PLACES]>,
    /// Counts the submits: an answer remembered at one generation holds as long as the
    /// state has not changed, i.e. until the next submit.
    generation: u64,
    /// Where the arm starts on a media access that misses the cache, as positioning questions
    /// work it out. Every candidate of a decision asks at the same time, and all but the first
    /// find the answer here.
    miss_start: Cell<MissStart>,
    /// Where the segments hold data a read may hit, for positioning questions: (the
    /// [`HddModel::generation`] it holds for, a bit per [`REGION_SECTORS`]-sector region of
    /// the disk modulo 64, set where a readable segment reaches into the region). Every
    /// candidate of every decision looks through every segment, and nearly all find nothing:
    /// a clear bit says so at once. The segments change only when a request is submitted, so
    /// the bits are worked out once per generation, by its second question: a scheduler that
    /// asks one question per decision (about the request it dispatches) would pay more for
    /// them than they save. `None`: the generation has had one question, the bits are not
    /// worked out.
    readable_regions: Cell<(u64, Option<u64>)>,
    /// Scratch for [`HddModel::read_media`]'s runs, kept to reuse its allocation.
    media_pieces: Vec<Piece>,
}

/// Sectors per region of [`HddModel::readable_regions`] (2 MB): larger than a segment, so
/// that one reaches into two regions at most.
const REGION_SECTORS: u64 = 4096;

/// [`HddModel::arm_for_miss`]'s last answer, and the question it answers.
#[derive(Clone, Copy, Debug)]
struct MissStart {
    /// The [`HddModel::generation`] asked at.
    generation: u64,
    /// The arrival time asked about (NaN: none).
    t: f64,
    write: bool,
    /// (cylinder, head, start of the media work).
    arm: (u32, u32, f64),
}

impl MissStart {
    /// No answer: no question is asked at a NaN time.
    const NONE: MissStart = MissStart {
        generation: 0,
        t: f64::NAN,
        write: false,
        arm: (0, 0, 0.0),
    };
}

/// Slots of [`HddModel::places`]: enough that the pending requests of a decision rarely share
/// one.
const PLACES: usize = 256;

/// The slot of `lbn` in [`HddModel::places`]. Requests are aligned (a 64 KB read starts on a
/// multiple of 128 sectors), so the low bits alone would crowd a few slots: a multiplicative
/// hash spreads them.
#[inline]
fn place_slot(lbn: u64) -> usize {
    (lbn.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - PLACES.trailing_zeros())) as usize
}

/// Where an LBN lies, and what a media access needs of its track.
#[derive(Clone, Copy, Debug)]
struct Place {
    loc: Located,
    /// Angular position of the start of its sector ([`Layout::sector_angle`]).
    angle: u32,
    /// Sectors per track of its zone.
    spt: u32,
    /// Time for one sector to pass under the head, ms (`period / spt`).
    st: f64,
}

impl Place {
    /// Not a place: the key `u64::MAX` of an empty memo slot never matches an LBN.
    const NONE: Place = Place {
        loc: Located {
            zone: 0,
            pbn: Pbn {
                cyl: 0,
                head: 0,
                sector: 0,
            },
            run: 0,
        },
        angle: 0,
        spt: 1,
        st: 0.0,
    };

    /// The place `k` sectors further along the same run (`k < run`). The sector stays on the
    /// track, so its angle is this one's plus `k`, less a turn: `(a + k) mod spt` with
    /// `a < spt` and `k < spt`.
    #[inline]
    fn advance(self, k: u32) -> Place {
        let angle = self.angle + k;
        Place {
            loc: Located {
                zone: self.loc.zone,
                pbn: Pbn {
                    sector: self.loc.pbn.sector + k,
                    ..self.loc.pbn
                },
                run: self.loc.run - k,
            },
            angle: if angle >= self.spt {
                angle - self.spt
            } else {
                angle
            },
            ..self
        }
    }
}

/// The pieces of one read-ahead, see [`HddModel::prefetch_walk`]. Laid out lazily: most
/// questions come within the first track of the read-ahead, so only that piece is computed
/// until a later time is asked about.
#[derive(Clone, Debug)]
struct PrefetchWalk {
    /// The read-ahead laid out (none before the first).
    pf: Option<Prefetch>,
    pieces: Vec<Piece>,
    end: WalkEnd,
    /// `pieces` holds the whole read-ahead, not just its first track.
    complete: bool,
    /// The last two answers, by the time asked (NaN: none). A decision asks about each
    /// candidate at the same instant (after the same command overhead), and the request then
    /// served asks again at its arrival and at the end of its overhead: the same two times.
    asked: [(f64, PrefetchProgress); 2],
    /// The slot of `asked` the next new answer goes to.
    asked_next: usize,
}

/// What `prefetch_at` returns: (next LBN, cylinder, head, when the mechanism is free, still
/// running).
type PrefetchProgress = (u64, u32, u32, f64, bool);

/// [`PrefetchWalk::asked`] before any question: a NaN time equals no time asked.
const NOT_ASKED: [(f64, PrefetchProgress); 2] = [(f64::NAN, (0, 0, 0, 0.0, false)); 2];

/// One run of sectors transferred on one track.
#[derive(Clone, Copy, Debug)]
struct Piece {
    /// The track it lies on.
    cyl: u32,
    head: u32,
    /// Sectors in the run.
    n: u32,
    /// When the first of them starts passing under the head.
    t_data: f64,
    /// Time per sector.
    st: f64,
}

/// Where a media access ended, and what its first positioning cost.
#[derive(Clone, Copy, Debug)]
struct WalkEnd {
    cyl: u32,
    head: u32,
    t_end: f64,
    seek: f64,
    /// Rotational wait before the first data sector.
    rot: f64,
    /// Time the first data sector starts.
    t_first: f64,
    /// Sectors that passed under the head during the first rotational wait, on the target
    /// track, just before the first requested sector (for "read any free blocks").
    free_before: u32,
}

const EPS_SECT: f64 = 1e-6;

// Conversions between f64 and u64 go through i64 where the value fits (below 2^63 ns, some
// 292 years), with the same result: baseline x86-64 converts to and from i64 in one
// instruction, to and from u64 only in several, and these sit on the simulator's hottest path.

#[inline]
fn to_ns(ms: f64) -> Nanos {
    if ms <= 0.0 {
        0
    } else {
        // Rounds to nearest for the non-negative times it sees (negative ones clamp to 0),
        // without the library call `round` is on baseline x86-64.
        let ns = ms * 1e6 + 0.5;
        if ns < 9.0e18 {
            ns as i64 as Nanos
        } else {
            ns as Nanos
        }
    }
}

#[inline]
fn to_ms(ns: Nanos) -> f64 {
    match i64::try_from(ns) {
        Ok(ns) => ns as f64 / 1e6,
        Err(_) => ns as f64 / 1e6,
    }
}

impl HddModel {
    /// Builds a drive from its layout and parameters.
    pub fn new(name: impl Into<String>, layout: Layout, params: HddParams) -> HddModel {
        let period = 60_000.0 / params.rpm;
        let cold_switch_ms = params.head_switch_ms.max(params.head_switch_random_ms);
        // What `seek_ms` charges at the least: a head switch only lengthens a seek, and a
        // write's settle (negative on some drives) adds to it down to nothing.
        let settle = params.write_settle_ms.min(0.0);
        let seek_floor = floor::seek_floor(layout.max_cyl(), |j| {
            let s = params.seek.time_ms(j);
            if s > 0.0 {
                (s + settle).max(0.0)
            } else {
                s
            }
        });
        let sectors_per_cylinder = layout
            .zones
            .iter()
            .map(|z| u64::from(z.spt) * u64::from(layout.surfaces))
            .max()
            .unwrap_or(1)
            .max(1);
        let nsegs = if params.cache.enabled {
            params.cache.segments.max(1) as usize
        } else {
            0
        };
        let segs = vec![
            Segment {
                start: 0,
                end: 0,
                lru: 0,
                valid: false,
                write: false,
            };
            nsegs
        ];
        HddModel {
            prefetch_walk: RefCell::new(PrefetchWalk {
                pf: None,
                pieces: Vec::new(),
                end: WalkEnd {
                    cyl: 0,
                    head: 0,
                    t_end: 0.0,
                    seek: 0.0,
                    rot: 0.0,
                    t_first: 0.0,
                    free_before: 0,
                },
                complete: false,
                asked: NOT_ASKED,
                asked_next: 0,
            }),
            located: RefCell::new([(u64::MAX, Place::NONE); 4]),
            located_next: Cell::new(0),
            places: Box::new(std::array::from_fn(|_| Cell::new((u64::MAX, Place::NONE)))),
            generation: 0,
            miss_start: Cell::new(MissStart::NONE),
            readable_regions: Cell::new((u64::MAX, None)),
            media_pieces: Vec::new(),
            spec: Arc::new(Spec {
                name: name.into(),
                layout,
                p: params,
                period,
                cold_switch_ms,
                seek_floor,
                sectors_per_cylinder,
            }),
            st: State {
                cyl: 0,
                head: 0,
                busy_until: 0.0,
                mech_free: 0.0,
                last_read: true,
                prefetch: None,
                tick: 0,
            },
            segs,
        }
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.spec.layout
    }

    /// The parameters.
    pub fn params(&self) -> &HddParams {
        &self.spec.p
    }

    /// One revolution, in ms.
    pub fn period_ms(&self) -> f64 {
        self.spec.period
    }

    /// Media transfer rate of a zone in MB/s (10^6 bytes), not counting track switches.
    pub fn zone_rate_mb_s(&self, zone: usize) -> f64 {
        let spt = self.spec.layout.zones[zone].spt as f64;
        spt * 512.0 / (self.spec.period / 1000.0) / 1e6
    }

    /// Sustained sequential rate of a zone in MB/s, counting the track and cylinder switches
    /// (each track costs a revolution plus its skew).
    pub fn zone_sustained_mb_s(&self, zone: usize) -> f64 {
        let z = &self.spec.layout.zones[zone];
        let s = self.spec.layout.surfaces as f64;
        let spt = z.spt as f64;
        // Per cylinder: `s` tracks of spt sectors, s-1 track skews and one cylinder skew.
        let sectors_time = s * spt + (s - 1.0) * z.track_skew as f64 + z.cyl_skew as f64;
        let secs = sectors_time / spt * self.spec.period / 1000.0;
        s * spt * 512.0 / secs / 1e6
    }

    /// Mean seek time in ms over uniformly random pairs of cylinders, from the seek curve.
    pub fn average_seek_ms(&self) -> f64 {
        let n = self.spec.layout.max_cyl() as u64 + 1;
        // Exact sum over distances weighted by their frequency among random pairs.
        let mut sum = 0.0;
        let mut w = 0.0;
        let step = (n / 4000).max(1);
        let mut d = 1u64;
        while d < n {
            let weight = 2.0 * (n - d) as f64 * step as f64;
            sum += weight * self.spec.p.seek.time_ms(d as u32);
            w += weight;
            d += step;
        }
        // Include the zero-distance pairs (n of them, zero time).
        w += n as f64;
        sum / w
    }

    /// Sectors of written data the buffer can hold before they reach the media: all of it.
    fn write_buffer_sectors(&self) -> u64 {
        let c = &self.spec.p.cache;
        u64::from(c.segments) * u64::from(c.segment_sectors)
    }

    /// Empties every memo: what a fresh model of the same state would remember. The answers
    /// must not change (see the property test `memos_change_no_answer`).
    #[cfg(test)]
    fn forget(&self) {
        for slot in self.places.iter() {
            slot.set((u64::MAX, Place::NONE));
        }
        *self.located.borrow_mut() = [(u64::MAX, Place::NONE); 4];
        self.located_next.set(0);
        let mut w = self.prefetch_walk.borrow_mut();
        w.pf = None;
        w.pieces.clear();
        w.asked = NOT_ASKED;
        self.miss_start.set(MissStart::NONE);
        self.readable_regions.set((u64::MAX, None));
    }

    /// [`Layout::locate`].
    fn locate(&self, lbn: u64) -> Located {
        self.place(lbn).loc
    }

    /// Where `lbn` lies and the angle of its sector: remembered by LBN ([`HddModel::places`])
    /// and by track ([`HddModel::located`]); the same answer as [`HddModel::place_of`].
    #[inline]
    fn place(&self, lbn: u64) -> Place {
        let (key, place) = self.places[place_slot(lbn)].get();
        if key == lbn {
            return place;
        }
        self.place_missed(lbn)
    }

    /// [`HddModel::place`] for an LBN not in its slot. Out of line: three questions in four
    /// find their slot, and the hit is then a few instructions where the miss's track memo
    /// and layout arithmetic would make every call save and restore registers.
    #[inline(never)]
    fn place_missed(&self, lbn: u64) -> Place {
        let place = self.place_on_track(lbn);
        self.places[place_slot(lbn)].set((lbn, place));
        place
    }

    /// Puts the track of `lbn` in the track memo ([`HddModel::located`]) if it is not there.
    /// A request being served is about to be followed by questions about the blocks after it
    /// (its read-ahead starts at its end), on its track; but it was first located when the
    /// scheduler asked about it, several decisions ago, and the candidates asked about since
    /// have pushed its track out of the memo.
    fn remember_track(&self, lbn: u64) {
        let known = self
            .located
            .borrow()
            .iter()
            .any(|&(first, place)| lbn >= first && lbn - first < u64::from(place.loc.run));
        if !known {
            let place = self.place(lbn);
            let i = self.located_next.get();
            self.located.borrow_mut()[i] = (lbn, place);
            self.located_next.set((i + 1) % 4);
        }
    }

    /// [`HddModel::place_of`] from the last few tracks located, else from the layout.
    fn place_on_track(&self, lbn: u64) -> Place {
        let memo = self.located.borrow();
        for &(first, place) in memo.iter() {
            if lbn >= first && lbn - first < u64::from(place.loc.run) {
                return place.advance((lbn - first) as u32);
            }
        }
        drop(memo);
        let place = self.place_of(lbn);
        let i = self.located_next.get();
        self.located.borrow_mut()[i] = (lbn, place);
        self.located_next.set((i + 1) % 4);
        place
    }

    /// Where `lbn` lies, computed from the layout.
    fn place_of(&self, lbn: u64) -> Place {
        let layout = &self.spec.layout;
        let loc = layout.locate(lbn);
        let spt = layout.zones[loc.zone].spt;
        Place {
            loc,
            angle: layout.sector_angle(loc.zone, loc.pbn.cyl, loc.pbn.head, loc.pbn.sector),
            spt,
            st: self.spec.period / spt as f64,
        }
    }

    #[inline]
    fn angle_sect(&self, t: f64, spt: u32) -> f64 {
        frac(t / self.spec.period) * spt as f64
    }

    /// Arm movement from (c0, h0) to (c1, h1). `streaming` is a switch in the middle of a
    /// sequential transfer, which the firmware prepares (and the layout's skew hides); any other
    /// head switch lands the new head cold on its track and must settle like a short seek.
    #[inline]
    fn seek_ms(&self, c0: u32, h0: u32, c1: u32, h1: u32, write: bool, streaming: bool) -> f64 {
        let p = &self.spec.p;
        let mut s = p.seek.time_ms(c0.abs_diff(c1));
        if h0 != h1 {
            let hs = if streaming {
                p.head_switch_ms
            } else {
                self.spec.cold_switch_ms
            };
            if hs > s {
                s = hs;
            }
        }

        // The settle is what a write's positioning takes beyond a read's. DIXtrac measures it
        // as a difference of two timings, and on some drives the difference is negative (the
        // DEC RZ26's -0.48 ms, the HP C2490A's -0.64 ms: these drives start writing as soon as
        // the head is near the track, and verify reads settle longer), so it may shorten the
        // seek; but no positioning takes less than no time.
        //
        // Not within a transfer that crosses onto the next track or cylinder: the drive's
        // skews are laid out for that switch, read or written. IBM's specifications give one
        // "head switch time (head skew)" and one sustained data rate for both directions,
        // where their seeks differ (the 75GXP's full stroke: 14.7 ms read, 15.7 write); every
        // drive DiskSim validated has skews that cover its switch and settle together (the
        // Atlas 10K: a 1.13 ms track skew for a 0.18 ms switch and a 0.49 ms settle), so
        // there the rule changes no timing. Settled at every switch, a stream of writes on
        // the built-in drives, whose skews cover the switch alone, missed a revolution at
        // every track: 64 KB writes at the 34GXP's start moved 11.6 MB/s where reads get 21.2
        // (now 21.0).
        if write && s > 0.0 && !streaming {
            s = (s + p.write_settle_ms).max(0.0);
        }
        s
    }

    /// Walks a media access of `count` sectors from `lbn`, the arm at (`cyl`, `head`) free at
    /// `t`. The first data sector is not transferred before `not_before`. `on_piece` sees every
    /// run in LBN order and may stop the walk by returning false.
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &self,
        cyl: u32,
        head: u32,
        t: f64,
        lbn: u64,
        count: u64,
        write: bool,
        immed: bool,
        not_before: f64,
        mut on_piece: impl FnMut(&Piece) -> bool,
    ) -> WalkEnd {
        let (mut c, mut h, mut t) = (cyl, head, t);
        let mut lbn = lbn;
        let mut left = count;
        let mut end = WalkEnd {
            cyl,
            head,
            t_end: t,
            seek: 0.0,
            rot: 0.0,
            t_first: t,
            free_before: 0,
        };
        let mut first = true;
        while left > 0 {
            let place = self.place(lbn);
            let loc = place.loc;
            let n = (loc.run as u64).min(left) as u32;
            let seek = self.seek_ms(c, h, loc.pbn.cyl, loc.pbn.head, write, !first);
            let mut ts = t + seek;
            if first && not_before > ts {
                ts = not_before;
            }
            let (spt, st) = (place.spt, place.st);
            let a = place.angle as f64;
            let hpos = self.angle_sect(ts, spt);
            // Both angles lie in [0, spt): the difference needs one wrap at most (and no
            // `fmod`, which is a library call on the hot path).
            let d = a - hpos;
            let mut lat = if d < 0.0 { d + spt as f64 } else { d };
            if lat > spt as f64 - EPS_SECT {
                lat = 0.0;
            }
            let into = spt as f64 - lat; // how far the head is past the first sector
            let mut go_on = true;
            if immed && n > 1 && lat > EPS_SECT && into < n as f64 - EPS_SECT {
                // Zero-latency read: start at the first whole sector under the head, read to
                // the end of the run, come round for the beginning.
                let j = into.ceil().min(n as f64);
                let t_first = ts + (j - into) * st;
                let late = Piece {
                    cyl: loc.pbn.cyl,
                    head: loc.pbn.head,
                    n: j as u32,
                    t_data: t_first + (spt as f64 - j) * st,
                    st,
                };
                let early = Piece {
                    cyl: loc.pbn.cyl,
                    head: loc.pbn.head,
                    n: n - j as u32,
                    t_data: t_first,
                    st,
                };
                if first {
                    end.seek = seek;
                    end.rot = t_first - (t + seek);
                    end.t_first = t_first;
                    end.free_before = 0;
                }
                go_on = on_piece(&late) && on_piece(&early);
                t = t_first + spt as f64 * st;
            } else {
                let t_data = ts + lat * st;
                if first {
                    end.seek = seek;
                    end.rot = t_data - (t + seek);
                    end.t_first = t_data;
                    end.free_before = (lat as u32).min(loc.pbn.sector);
                }
                go_on = go_on
                    && on_piece(&Piece {
                        cyl: loc.pbn.cyl,
                        head: loc.pbn.head,
                        n,
                        t_data,
                        st,
                    });
                t = t_data + n as f64 * st;
            }
            first = false;
            c = loc.pbn.cyl;
            h = loc.pbn.head;
            lbn += n as u64;
            left -= n as u64;
            if !go_on {
                break;
            }
        }
        end.cyl = c;
        end.head = h;
        end.t_end = t;
        end
    }

    /// How far the prefetch got by time `t`: the exclusive end of the data read, the arm
    /// position, and when the mechanism is free if the prefetch is aborted at `t` (the sector
    /// under the head is finished first).
    fn prefetch_at(&self, pf: &Prefetch, t: f64) -> PrefetchProgress {
        if t <= pf.t || pf.from >= pf.limit {
            return (
                pf.from,
                pf.cyl,
                pf.head,
                t.max(pf.t).min(t),
                pf.from < pf.limit,
            );
        }
        let mut cache = self.prefetch_walk.borrow_mut();
        // Laid out in place, without moving the walk: one vector for the model's lifetime.
        let w = &mut *cache;
        if w.pf == Some(*pf) {
            if let Some(&(_, answer)) = w.asked.iter().find(|a| a.0 == t) {
                return answer;
            }
        }
        // Is the layout of this read-ahead missing, or short of `t`?
        while w.pf != Some(*pf)
            || !w.complete
                && w.pieces
                    .last()
                    .is_none_or(|p| p.t_data + p.n as f64 * p.st <= t)
        {
            // First the track the read-ahead starts on; the whole of it once a time past that
            // track is asked about. The answers already given stay true when the rest of this
            // read-ahead is laid out.
            let whole = pf.limit - pf.from;
            let first_track = self.locate(pf.from).run as u64;
            let complete = w.pf == Some(*pf) || first_track >= whole;
            if w.pf != Some(*pf) {
                w.asked = NOT_ASKED;
                w.asked_next = 0;
            }
            let count = if complete { whole } else { first_track };
            let pieces = &mut w.pieces;
            pieces.clear();
            w.end = self.walk(
                pf.cyl,
                pf.head,
                pf.t,
                pf.from,
                count,
                false,
                false,
                f64::NEG_INFINITY,
                |p| {
                    pieces.push(*p);
                    true
                },
            );
            w.pf = Some(*pf);
            w.complete = complete;
        }
        let answer = self.progress_in(w, pf, t);
        w.asked[w.asked_next] = (t, answer);
        w.asked_next = 1 - w.asked_next;
        answer
    }

    /// [`HddModel::prefetch_at`] from the read-ahead's pieces, laid out at least up to `t`.
    fn progress_in(&self, w: &PrefetchWalk, pf: &Prefetch, t: f64) -> PrefetchProgress {
        let mut done = pf.from;
        for p in &w.pieces {
            if p.t_data + p.n as f64 * p.st <= t {
                done += p.n as u64;
                continue;
            }
            let mut free = t;
            if t > p.t_data {
                let k = floor_pos((t - p.t_data) / p.st);
                done += k as u64;
                // Finish the sector in progress (aborts happen at sector boundaries).
                if !self.spec.p.cache.stop_prefetch_in_sector {
                    free = p.t_data + (k + 1.0) * p.st;
                    done += 1;
                }
            }
            return (done.min(pf.limit), p.cyl, p.head, free, true);
        }
        (
            done.min(pf.limit),
            w.end.cyl,
            w.end.head,
            w.end.t_end,
            false,
        )
    }

    /// The overhead of a read the drive serves connected (a hit, or a miss riding the
    /// read-ahead): the command's, then the transfer's preparation, which DiskSim adds on this
    /// path whatever the hit (`disk_read_arrive`).
    fn connected_read_overhead(&self, hit: bool) -> f64 {
        self.overhead(DiskOp::Read, hit) + self.spec.p.reselect.data_prep
    }

    fn overhead(&self, op: DiskOp, hit: bool) -> f64 {
        let o = &self.spec.p.overheads;
        let r = self.st.last_read;
        o.per_request
            + match (op, hit, r) {
                (DiskOp::Read, true, true) => o.read_hit_after_read,
                (DiskOp::Read, true, false) => o.read_hit_after_write,
                (DiskOp::Read, false, true) => o.read_miss_after_read,
                (DiskOp::Read, false, false) => o.read_miss_after_write,
                (DiskOp::Write, true, true) => o.write_hit_after_read,
                (DiskOp::Write, true, false) => o.write_hit_after_write,
                (DiskOp::Write, false, true) => o.write_miss_after_read,
                (DiskOp::Write, false, false) => o.write_miss_after_write,
            }
    }

    /// Segment holding `lbn` (readable), with the prefetch's progress at `t` counted.
    fn find_seg(&self, lbn: u64, pf_seg: Option<(usize, u64)>) -> Option<(usize, u64)> {
        let rw = self.spec.p.cache.read_hits_on_write_data;
        let Some((pi, pe)) = pf_seg else {
            // No read-ahead to count (the question of nearly every candidate, which lies
            // away from it): each segment as it stands, without the read-ahead's case.
            let i = self
                .segs
                .iter()
                .position(|s| s.valid & (rw | !s.write) & (lbn >= s.start) & (lbn < s.end))?;
            return Some((i, self.segs[i].end));
        };
        // Every candidate of a decision looks through every segment, and most find nothing:
        // the tests are combined with `&`, not `&&`, so that a segment costs one branch.
        for (i, s) in self.segs.iter().enumerate() {
            let end = if i == pi { pe.max(s.end) } else { s.end };
            // The read-ahead overwrites the oldest blocks once the segment is full
            // (disksim_diskctlr.c, disk_buffer_segment_wrap after every sector read), as
            // `settle_prefetch_data` records when the read-ahead is stopped.
            let start = if i == pi {
                s.start
                    .max(end.saturating_sub(u64::from(self.spec.p.cache.segment_sectors.max(1))))
            } else {
                s.start
            };
            let readable = s.valid & (rw | !s.write);
            if readable & (lbn >= start) & (lbn < end) {
                return Some((i, end));
            }
        }
        None
    }

    /// Whether a readable segment may hold `lbn`: false only if none does, as
    /// [`HddModel::find_seg`] without a read-ahead would find ([`HddModel::readable_regions`]).
    /// Only for positioning questions: a submit changes the segments after its generation has
    /// begun.
    fn may_hold(&self, lbn: u64) -> bool {
        let bits = match self.readable_regions.get() {
            (generation, Some(bits)) if generation == self.generation => bits,
            (generation, None) if generation == self.generation => self.readable_bits(),
            _ => {
                self.readable_regions.set((self.generation, None));
                return true;
            }
        };
        bits & (1 << (lbn / REGION_SECTORS % 64)) != 0
    }

    /// Works out [`HddModel::readable_regions`] for this generation.
    fn readable_bits(&self) -> u64 {
        let rw = self.spec.p.cache.read_hits_on_write_data;
        let mut bits = 0;
        for s in &self.segs {
            if s.valid && (rw || !s.write) && s.start < s.end {
                let (first, last) = (s.start / REGION_SECTORS, (s.end - 1) / REGION_SECTORS);
                if last - first >= 63 {
                    bits = u64::MAX;
                } else {
                    for r in first..=last {
                        bits |= 1 << (r % 64);
                    }
                }
            }
        }
        self.readable_regions.set((self.generation, Some(bits)));
        bits
    }

    fn lru_seg(&self, for_write: bool) -> usize {
        let sep = self.spec.p.cache.separate_write_segment && self.segs.len() > 1;
        if sep && for_write {
            return self.segs.len() - 1;
        }
        let n = if sep {
            self.segs.len() - 1
        } else {
            self.segs.len()
        };
        let limit = self.spec.p.cache.write_segments as usize;
        if for_write && limit > 0 {
            let writes = self.segs[..n].iter().filter(|s| s.valid && s.write).count();
            if writes >= limit {
                let mut best: Option<usize> = None;
                for i in 0..n {
                    let s = &self.segs[i];
                    if s.valid && s.write && best.is_none_or(|b| s.lru < self.segs[b].lru) {
                        best = Some(i);
                    }
                }
                if let Some(b) = best {
                    return b;
                }
            }
        }
        let mut best = 0;
        for i in 0..n {
            let s = &self.segs[i];
            if !s.valid {
                return i;
            }
            if s.lru < self.segs[best].lru {
                best = i;
            }
        }
        best
    }

    /// Prefetch limit after a read of `[lbn, end)` held in a segment starting at `seg_start`.
    fn prefetch_limit(&self, lbn: u64, end: u64, seg_start: u64) -> u64 {
        let c = &self.spec.p.cache;
        let cap = self.spec.layout.capacity();
        if !c.enabled || end >= cap {
            return end;
        }
        let mut limit = match c.read_ahead {
            ReadAhead::Off => end,
            ReadAhead::Track => {
                let loc = self.locate(end - 1);
                end - 1 + loc.run as u64
            }
            ReadAhead::TrackAhead => {
                // DiskSim's BUFFER_DEC_PREFETCH_SCHEME (disksim_diskcache.c,
                // disk_buffer_get_max_readahead): to the end of the track holding the first block
                // after the request, one track further when the segment began on an earlier
                // track; it returns before the `Maximum read-ahead` bound the other schemes get.
                let first = self.spec.layout.lbn_to_pbn(end);
                let mut l =
                    self.extent_end(end, cap, |p| p.cyl == first.cyl && p.head == first.head);
                if seg_start < self.spec.layout.track_start(end) {
                    let spt = self.spec.layout.zones[self.locate(lbn).zone].spt as u64;
                    l += spt;
                }
                return l.min(cap).max(end);
            }
            ReadAhead::Cylinder => {
                let cyl = self.spec.layout.lbn_to_pbn(end - 1).cyl;
                self.extent_end(end, cap.min(end + c.max_read_ahead as u64), |p| {
                    p.cyl == cyl
                })
            }
            ReadAhead::Segment => match c.keep_request {
                KeepRequest::Overwrite => end + c.max_read_ahead as u64,
                KeepRequest::Keep => seg_start.min(lbn) + c.segment_sectors as u64,
                KeepRequest::Drop => end + c.segment_sectors as u64,
            },
        };
        limit = limit.min(end + c.max_read_ahead as u64).min(cap);
        limit.max(end)
    }

    /// The first LBN from `from` (below `bound`, walking whole runs) whose sector `within`
    /// rejects: the end of the track or cylinder a read-ahead runs to.
    fn extent_end(&self, from: u64, bound: u64, within: impl Fn(Pbn) -> bool) -> u64 {
        let mut l = from;
        while l < bound {
            let loc = self.locate(l);
            if !within(loc.pbn) {
                break;
            }
            l += loc.run as u64;
        }
        l
    }

    fn start_prefetch(&mut self, seg: usize, from: u64, lbn: u64, cyl: u32, head: u32, t: f64) {
        let seg_start = self.segs[seg].start;
        let limit = self.prefetch_limit(lbn, from, seg_start);
        self.st.prefetch = if limit > from {
            Some(Prefetch {
                seg,
                from,
                limit,
                cyl,
                head,
                t,
            })
        } else {
            None
        };
    }

    /// Stops the prefetch at `t`: the segment keeps what was read, the arm stays where it got
    /// to, and the mechanism is busy until the sector in progress is done.
    fn abort_prefetch(&mut self, t: f64) {
        if let Some(pf) = self.st.prefetch.take() {
            let c = &self.spec.p.cache;
            let mut t_abort = t;
            if c.min_read_ahead > 0 {
                // The drive insists on prefetching at least this much first.
                let need = (pf.from + c.min_read_ahead as u64).min(pf.limit);
                let mut when = pf.t;
                let mut got = pf.from;
                self.walk(
                    pf.cyl,
                    pf.head,
                    pf.t,
                    pf.from,
                    need - pf.from,
                    false,
                    false,
                    f64::NEG_INFINITY,
                    |p| {
                        got += p.n as u64;
                        when = p.t_data + p.n as f64 * p.st;
                        got < need
                    },
                );
                t_abort = t_abort.max(when);
            }
            let (done, cyl, head, free, _) = self.prefetch_at(&pf, t_abort);
            self.settle_prefetch_data(&pf, done);
            self.st.cyl = cyl;
            self.st.head = head;
            self.st.mech_free = self.st.mech_free.max(free);
        }
    }

    /// Records in the prefetch's segment the data read up to `done`.
    fn settle_prefetch_data(&mut self, pf: &Prefetch, done: u64) {
        let c = &self.spec.p.cache;
        let s = &mut self.segs[pf.seg];
        if s.valid && s.end <= done {
            s.end = done;
            let size = c.segment_sectors.max(1) as u64;
            if s.end - s.start > size {
                s.start = s.end - size;
            }
        }
    }

    /// With `KeepRequest::Overwrite` (DiskSim's `Read-ahead over requested` = 1), data sent to
    /// the host may be overwritten by read-ahead: the segment is a circular buffer whose
    /// consumed part is free space. Blocks up to the end of what the host took are gone.
    fn consume(&mut self, si: usize, end: u64) {
        if self.spec.p.cache.keep_request != KeepRequest::Keep {
            let s = &mut self.segs[si];
            if !s.write && s.start < end {
                s.start = end.min(s.end);
            }
        }
    }

    fn invalidate_overlaps(&mut self, lbn: u64, end: u64, except: Option<usize>) {
        for (i, s) in self.segs.iter_mut().enumerate() {
            if Some(i) == except || !s.valid {
                continue;
            }
            if s.start < end && lbn < s.end {
                // The segment's data is stale in part; drives drop the whole segment rather
                // than track holes in it (the Cheetah 4LP trace shows a re-read of blocks
                // before a write into the same read-ahead segment missing).
                s.valid = false;
            }
        }
    }

    /// Bus pipeline over the runs of a read: sector k leaves when it is buffered and the bus
    /// has sent sector k-1. Runs arrive in LBN order; within a run sectors are buffered one
    /// `st` apart. Returns the time the last sector has crossed.
    #[inline]
    fn bus_after(b: f64, p: &Piece, bus: f64) -> f64 {
        let m = p.n as f64;
        if p.n == 0 {
            return b;
        }
        let a1 = p.t_data + p.st; // first sector buffered
        let an = p.t_data + m * p.st; // last sector buffered
        (b + m * bus).max(a1 + m * bus).max(an + bus)
    }

    fn read(&mut self, lbn: u64, n: u64, t: f64) -> (f64, ServiceBreakdown) {
        let cache = self.spec.p.cache.clone();
        let bus = self.spec.p.bus_ms_per_sector;
        let end = lbn + n;
        let pf = self.st.prefetch;
        // How far the read-ahead has got only matters to a request that may fall in what it
        // reads, as `positioning_ms` finds; a request elsewhere finds the same segments
        // whatever the answer, and only a full hit asks (below) whether it is still running.
        let pf_state = pf
            .filter(|p| {
                let s = &self.segs[p.seg];
                lbn >= s.start && lbn < p.limit.max(s.end)
            })
            .map(|p| (p, self.prefetch_at(&p, t)));
        let pf_seg = pf_state.map(|(p, s)| (p.seg, s.0));
        let mut partial = None;
        if cache.enabled {
            if let Some((si, seg_end)) = self.find_seg(lbn, pf_seg) {
                if end <= seg_end {
                    // Full hit: only the bus.
                    let ovh = self.connected_read_overhead(true);
                    let done = t + ovh + n as f64 * bus + self.spec.p.overheads.read_complete;
                    self.st.tick += 1;
                    self.segs[si].lru = self.st.tick;
                    self.consume(si, end);
                    if cache.read_ahead_on_idle_hit && pf.is_none_or(|p| !self.prefetch_at(&p, t).4)
                    {
                        self.read_ahead_after_hit(si, lbn, end, t + ovh);
                    }
                    return (
                        done,
                        ServiceBreakdown {
                            overhead: to_ns(ovh),
                            seek: 0,
                            rotation: 0,
                            transfer: to_ns(n as f64 * bus + self.spec.p.overheads.read_complete),
                            cache_hit: true,
                        },
                    );
                }
                // Partial hit riding on the prefetch that continues into the request.
                if let Some((p, (done_lbn, ..))) = pf_state {
                    if cache.partial_hits
                        && p.seg == si
                        && seg_end == done_lbn.max(self.segs[si].end)
                        && done_lbn < p.limit
                    {
                        return self.ride_prefetch(p, lbn, n, t, true);
                    }
                }
                partial = Some(si);
            } else if let Some((p, (done_lbn, _, _, _, active))) = pf_state {
                if cache.almost_read_hits && active && lbn == done_lbn && lbn < p.limit {
                    return self.ride_prefetch(p, lbn, n, t, false);
                }
            }
        }
        if let Some(si) = partial {
            if let Some(served) = self.read_partial(si, lbn, n, t) {
                return served;
            }
        }
        // Miss.
        let ovh = self.overhead(DiskOp::Read, false);
        self.remember_track(lbn);
        self.abort_prefetch(t + ovh);
        let t_mech = (t + ovh).max(self.st.mech_free);
        let water = Self::read_water_mark(&cache, n);
        let (w, done) = self.read_media(lbn, n, 0, water, t, ovh, t_mech, None);
        // Cache the data (and the free blocks before it) and plan the read-ahead.
        if cache.enabled && !self.segs.is_empty() {
            let si = self.lru_seg(false);
            self.invalidate_overlaps(lbn, end, Some(si));
            // Only a drive that reads on arrival (zero latency) starts transferring
            // before the first requested sector; one that waits for it does not buffer what
            // passes under the head meanwhile (DiskSim computes that wait as one step).
            let before = if cache.read_any_free_blocks && cache.immediate_read {
                w.free_before as u64
            } else {
                0
            };
            self.st.tick += 1;
            self.segs[si] = Segment {
                start: lbn - before.min(lbn),
                end,
                lru: self.st.tick,
                valid: true,
                write: false,
            };
            self.consume(si, end);
            self.start_prefetch(si, end, lbn, w.cyl, w.head, w.t_end);
        }
        let transfer = done - w.t_first;
        (
            done,
            ServiceBreakdown {
                overhead: to_ns(ovh + (t_mech - (t + ovh))),
                seek: to_ns(w.seek),
                rotation: to_ns(w.rot),
                transfer: to_ns(transfer),
                cache_hit: false,
            },
        )
    }

    /// The media part of a read, for a miss and a partial hit alike: reads `count` blocks from
    /// `from` with the mechanism free at `t_mech`, `pre` blocks before them being in the buffer
    /// already (0 for a miss), and moves the arm. The data crosses the bus from `connected`
    /// where the drive serves the request connected (a partial hit it transfers at once);
    /// otherwise the drive disconnects after the command (overhead `ovh`, the arm already
    /// moving), reselects once `water` sectors of the request are buffered, counting the
    /// cached ones, and prepares the transfer, and never before the disconnect has ended.
    /// Returns where the walk ended and when the request completes.
    #[allow(clippy::too_many_arguments)]
    fn read_media(
        &mut self,
        from: u64,
        count: u64,
        pre: u64,
        water: u64,
        t: f64,
        ovh: f64,
        t_mech: f64,
        connected: Option<f64>,
    ) -> (WalkEnd, f64) {
        let bus = self.spec.p.bus_ms_per_sector;
        // The runs read, for the bus pipeline, in the model's scratch vector.
        let mut pieces = std::mem::take(&mut self.media_pieces);
        pieces.clear();
        let w = self.walk(
            self.st.cyl,
            self.st.head,
            t_mech,
            from,
            count,
            false,
            self.spec.p.cache.immediate_read,
            f64::NEG_INFINITY,
            |p| {
                pieces.push(*p);
                true
            },
        );
        let start = match connected {
            Some(c) => c,
            None => {
                // The bus cannot start before `water` sectors are buffered.
                let mut gate = t + ovh;
                let mut seen = pre;
                for p in &pieces {
                    if seen >= water {
                        break;
                    }
                    let k = (water - seen).min(p.n as u64);
                    gate = gate.max(p.t_data + k as f64 * p.st);
                    seen += p.n as u64;
                }
                let rs = self.spec.p.reselect;
                if rs.disconnects() {
                    let disc = if self.st.last_read {
                        rs.read_disconnect_after_read
                    } else {
                        rs.read_disconnect_after_write
                    };
                    gate = gate.max(t + ovh + disc) + rs.reselect + rs.data_prep;
                }
                gate
            }
        };
        // Pipeline from the start: the cached blocks first, then each sector as it is
        // buffered and the bus has sent the one before.
        let mut bb = start + pre as f64 * bus;
        for p in &pieces {
            bb = Self::bus_after(bb, p, bus);
        }
        self.media_pieces = pieces;
        self.st.cyl = w.cyl;
        self.st.head = w.head;
        self.st.mech_free = w.t_end;
        (w, bb + self.spec.p.overheads.read_complete)
    }

    /// A read whose first blocks are in segment `si` while the rest are not, and no read-ahead
    /// is streaming into it (that case rides on the read-ahead): the drive reads from the media
    /// only the blocks the segment lacks, from the segment's end, and appends them to it. In
    /// DiskSim the segment found for a partial hit is the request's own, and the media access
    /// starts at the segment's end block (disksim_diskctlr.c, `disk_check_hda_pending`), so the
    /// cached blocks are never read twice. A drive that transfers partial hits at once (`Immed
    /// transfer partial hit`, or enough cached to pass the high-water mark) serves the request
    /// connected, as a hit: the hit overhead, then the cached blocks and the rest as the media
    /// delivers them (`disk_read_arrive`, the `BUFFER_PARTIAL` case);
    /// the mechanism still starts after the miss overhead, which DiskSim charges every read
    /// before its mechanical work. Otherwise the request goes the way of a miss (disconnect,
    /// and reconnect at the high-water mark) but still reads only the missing blocks.
    ///
    /// Returns `None`, having changed nothing that a miss would not change, when the segment
    /// no longer holds the request's first block once the read-ahead is stopped.
    fn read_partial(
        &mut self,
        si: usize,
        lbn: u64,
        n: u64,
        t: f64,
    ) -> Option<(f64, ServiceBreakdown)> {
        let cache = self.spec.p.cache.clone();
        let end = lbn + n;
        let miss_ovh = self.overhead(DiskOp::Read, false);
        self.abort_prefetch(t + miss_ovh);
        let seg = self.segs[si];
        if !seg.holds_the_start_of(lbn, end) {
            return None;
        }
        let pre = seg.end - lbn;
        let from = seg.end;
        let water = Self::read_water_mark(&cache, n);
        let t_mech = (t + miss_ovh).max(self.st.mech_free);
        // Served as a full hit is (`read`) where the drive transfers partial hits at once.
        let connected =
            (cache.partial_hits || pre >= water).then(|| t + self.connected_read_overhead(true));
        let (w, done) =
            self.read_media(from, end - from, pre, water, t, miss_ovh, t_mech, connected);
        self.invalidate_overlaps(from, end, Some(si));
        self.st.tick += 1;
        let size = cache.segment_sectors.max(1) as u64;
        let s = &mut self.segs[si];
        s.end = end;
        if s.end - s.start > size {
            s.start = s.end - size;
        }
        s.lru = self.st.tick;
        self.consume(si, end);
        self.start_prefetch(si, end, lbn, w.cyl, w.head, w.t_end);
        // Positioning is counted up to the first missing block, even when the cached blocks
        // cross the bus before it: the request completes only once the mechanism has fetched
        // the rest, and a scheduler weighing it against others must see that cost, not the
        // command overhead alone.
        let positioning = w.t_first - t;
        let (seek, rotation) = (w.seek, w.rot);
        Some((
            done,
            ServiceBreakdown {
                overhead: to_ns(positioning - seek - rotation),
                seek: to_ns(seek),
                rotation: to_ns(rotation),
                transfer: to_ns(done - t - positioning),
                cache_hit: false,
            },
        ))
    }

    /// [`HddModel::read_partial`]'s positioning, without changing the state: `None` where it
    /// would fall back to a miss. With `media`, from when the mechanism is free, as
    /// [`HddModel::positioning_ms`] prices a miss.
    fn partial_positioning(&self, si: usize, lbn: u64, n: u64, t: f64, media: bool) -> Option<f64> {
        let cache = &self.spec.p.cache;
        let end = lbn + n;
        let miss_ovh = self.overhead(DiskOp::Read, false);
        // The segment as the read-ahead leaves it when the command is decoded.
        let mut seg = self.segs[si];
        if let Some(pf) = self.st.prefetch.filter(|p| p.seg == si) {
            let done = self.prefetch_at(&pf, t + miss_ovh).0;
            if seg.valid && seg.end <= done {
                seg.end = done;
                seg.start = seg
                    .start
                    .max(done.saturating_sub(u64::from(cache.segment_sectors.max(1))));
            }
        }
        if !seg.holds_the_start_of(lbn, end) {
            return None;
        }
        let (cyl, head, t_mech) = self.arm_for_miss(t, miss_ovh, false);
        let w = self.walk(
            cyl,
            head,
            t_mech,
            seg.end,
            end - seg.end,
            false,
            cache.immediate_read,
            f64::NEG_INFINITY,
            |_| false,
        );
        Some(if media {
            miss_ovh + (w.t_first - t_mech)
        } else {
            w.t_first - t
        })
    }

    /// Sectors a read miss of `n` sectors waits for before it takes the bus: the high-water
    /// mark as DiskSim sets it (disksim_diskctlr.c): by request size, the fraction of the
    /// request (at most a segment) rounded down, so that a drive with a 0.75 mark reselects
    /// after the first sector of a two-sector read and the reselect overlaps reading the
    /// second; by segment size, the fraction of a segment rounded up.
    fn read_water_mark(cache: &CacheParams, n: u64) -> u64 {
        let water = if cache.water_by_request {
            let seg = match cache.segment_sectors {
                0 => n,
                s => n.min(s as u64),
            };
            (cache.read_water * seg as f64) as u64
        } else {
            (cache.read_water * cache.segment_sectors as f64).ceil() as u64
        };
        water.clamp(1, n)
    }

    /// A full read hit found the mechanism idle (no read-ahead running) and the drive reads
    /// ahead on such hits: the read-ahead this request would have earned on a miss goes on
    /// from where the segment's data ends, with the arm from where it rests. DiskSim starts
    /// it when the hit is handled (`disk_check_hda` seeks for a read whose segment ends short
    /// of its read-ahead limit); it then runs in the background, so the hit itself costs only
    /// the bus, and a later request finds more of the stream cached or rides on it.
    fn read_ahead_after_hit(&mut self, si: usize, lbn: u64, end: u64, t: f64) {
        // A read-ahead that finished by itself leaves its data in its segment.
        self.abort_prefetch(t);
        let seg = self.segs[si];
        if !seg.valid || seg.write {
            return;
        }
        let limit = self.prefetch_limit(lbn, end, seg.start);
        if limit > seg.end {
            self.st.prefetch = Some(Prefetch {
                seg: si,
                from: seg.end,
                limit,
                cyl: self.st.cyl,
                head: self.st.head,
                t: t.max(self.st.mech_free),
            });
        }
    }

    /// Serves a read from the prefetch that is streaming into (or right up to) it: cached
    /// sectors cross the bus at once, the rest as the prefetch reads them. The read-ahead then
    /// goes on from the request's end as after a miss, without a break in the stream.
    fn ride_prefetch(
        &mut self,
        pf: Prefetch,
        lbn: u64,
        n: u64,
        t: f64,
        partial: bool,
    ) -> (f64, ServiceBreakdown) {
        let bus = self.spec.p.bus_ms_per_sector;
        let ovh = self.connected_read_overhead(partial);
        let end = lbn + n;
        // Blocks cached before the prefetch started cross the bus first.
        let mut b = t + ovh + pf.from.saturating_sub(lbn).min(n) as f64 * bus;
        let mut pos = pf.from;
        let mut last_end = pf.t;
        let w = self.walk(
            pf.cyl,
            pf.head,
            pf.t,
            pf.from,
            end - pf.from,
            false,
            false,
            f64::NEG_INFINITY,
            |p| {
                // Only the requested part crosses the bus.
                let p_end = pos + p.n as u64;
                if p_end > lbn {
                    let skip = lbn.saturating_sub(pos);
                    let q = Piece {
                        cyl: p.cyl,
                        head: p.head,
                        n: p.n - skip as u32,
                        t_data: p.t_data + skip as f64 * p.st,
                        st: p.st,
                    };
                    b = Self::bus_after(b, &q, bus);
                }
                last_end = p.t_data + p.n as f64 * p.st;
                pos = p_end;
                true
            },
        );
        // Sectors already buffered before `t` were sent from `t + ovh` at the bus rate; the
        // pipeline above already respects that since their buffer times are earlier.
        let done = b + self.spec.p.overheads.read_complete;
        let si = pf.seg;
        self.st.tick += 1;
        let size = self.spec.p.cache.segment_sectors.max(1) as u64;
        let s = &mut self.segs[si];
        s.valid = true;
        s.end = end.max(s.end);
        if s.end - s.start > size {
            s.start = s.end - size;
        }
        s.lru = self.st.tick;
        self.consume(si, end);
        self.st.cyl = w.cyl;
        self.st.head = w.head;
        self.st.mech_free = self.st.mech_free.max(w.t_end.min(last_end));
        self.start_prefetch(si, end, lbn, w.cyl, w.head, w.t_end);
        (
            done,
            ServiceBreakdown {
                overhead: to_ns(ovh),
                seek: 0,
                rotation: 0,
                transfer: to_ns(done - (t + ovh)),
                cache_hit: true,
            },
        )
    }

    /// Whether a write at `lbn` is one DiskSim takes in extra connections on an `Extra write
    /// disconnect` drive (`disk_buffer_select_segment` flags it `EXTRA_WRITE_DISCONNECT`): the
    /// segment used last holds a write, and this one does not start at its end. Its status
    /// then comes over a second reselection, at the `Other reselect overhead`
    /// (`disk_check_bus`); the rest of that path is not modelled
    /// ([`Reselect::write_prebuffer`]).
    fn takes_extra_connections(&self, lbn: u64) -> bool {
        self.spec.p.reselect.write_prebuffer
            && self
                .segs
                .iter()
                .filter(|s| s.valid)
                .max_by_key(|s| s.lru)
                .is_some_and(|s| s.write && s.end != lbn)
    }

    /// When the first sector of a media write of `n` sectors may be written: once it has
    /// crossed the bus (from `t_bus_start`), late enough that the bus stays ahead of the
    /// platter (`zst` per sector) for the rest, after the data a prebuffering drive waits for,
    /// and not before the drive's minimum write delay from `t_mech`, when the mechanism starts.
    fn write_ready(&self, t_bus_start: f64, t_mech: f64, n: u64, zst: f64) -> f64 {
        let bus = self.spec.p.bus_write_ms_per_sector;
        let rs = &self.spec.p.reselect;
        let prebuffer = if rs.write_prebuffer {
            match n {
                0..45 => n.min(10),
                _ => 15,
            }
        } else {
            1
        };
        let bus_end = t_bus_start + n as f64 * bus;
        (t_bus_start + prebuffer as f64 * bus)
            .max(bus_end - (n as f64 - 1.0) * zst)
            .max(t_mech + rs.min_write_delay)
    }

    fn write(&mut self, lbn: u64, n: u64, t: f64) -> (f64, ServiceBreakdown) {
        let cache = self.spec.p.cache.clone();
        let bus = self.spec.p.bus_write_ms_per_sector;
        let end = lbn + n;
        let write_back =
            cache.enabled && cache.write_back != WriteBack::Off && !self.segs.is_empty();
        if cache.write_stops_prefetch || !write_back {
            self.abort_prefetch(t);
        } else if let Some(pf) = self.st.prefetch.take() {
            // Let the read-ahead finish; the destage waits for it.
            let (done, cyl, head, free, _) = self.prefetch_at(&pf, f64::INFINITY);
            self.settle_prefetch_data(&pf, done);
            self.st.cyl = cyl;
            self.st.head = head;
            self.st.mech_free = self.st.mech_free.max(free);
        }
        let mut t_acc = t;
        let ovh;
        let t_bus_start;
        let bus_end;
        let done;
        // Asked before this write changes the segments; only a write to the media uses it.
        let extra_connections = !write_back && self.takes_extra_connections(lbn);
        if write_back {
            // A write that does not append to data still being destaged waits for it (with one
            // request outstanding this only happens when requests come faster than destages).
            let wseg = self.lru_seg(true);
            let appends =
                self.segs[wseg].valid && self.segs[wseg].write && self.segs[wseg].end == lbn;
            if !appends && cache.write_back == WriteBack::Sequential {
                t_acc = t_acc.max(self.st.mech_free);
            }
            // A write that appends to buffered write data is a cache "hit"; any other write
            // needs a new segment and takes the "miss" path of the firmware even though it
            // completes before reaching the media. With write-back for all writes (level 2)
            // every write is treated as a hit.
            let hit = appends || cache.write_back == WriteBack::All;
            ovh = self.overhead(DiskOp::Write, hit);
            t_bus_start = t_acc + ovh + self.spec.p.reselect.data_prep;
            bus_end = t_bus_start + n as f64 * bus;
            done = bus_end + self.spec.p.overheads.write_complete;
        } else {
            ovh = self.overhead(DiskOp::Write, false);
            t_bus_start = t_acc + ovh + self.spec.p.reselect.data_prep;
            bus_end = t_bus_start + n as f64 * bus;
            done = 0.0;
        }
        // The media write: positioning may start once the command is decoded; a sector cannot
        // be written before it has crossed the bus, which waits for the data preparation too
        // (disksim_diskctlr.c, `disk_write_arrive`: the command overhead alone sets
        // `overhead_done`, which gates the seek; the transfer's delay adds
        // `overhead_data_prep`).
        let t_mech = (t_acc + ovh).max(self.st.mech_free);
        let zst = {
            let loc = self.locate(lbn);
            self.spec.period / self.spec.layout.zones[loc.zone].spt as f64
        };
        let ready = self.write_ready(t_bus_start, t_mech, n, zst);
        let w = self.walk(
            self.st.cyl,
            self.st.head,
            t_mech,
            lbn,
            n,
            true,
            cache.immediate_write,
            ready,
            |_| true,
        );
        self.st.cyl = w.cyl;
        self.st.head = w.head;
        self.st.mech_free = w.t_end;
        // Cache bookkeeping: the written blocks replace any cached copies.
        if cache.enabled && !self.segs.is_empty() {
            let wseg = self.lru_seg(true);
            self.invalidate_overlaps(lbn, end, Some(wseg));
            self.st.tick += 1;
            let s = &mut self.segs[wseg];
            let size = cache.segment_sectors.max(1) as u64;
            if cache.combine_writes && s.valid && s.write && s.end == lbn && (end - s.start) <= size
            {
                s.end = end;
            } else {
                *s = Segment {
                    start: lbn,
                    end,
                    lru: self.st.tick,
                    valid: true,
                    write: true,
                };
            }
            s.lru = self.st.tick;
        }
        if write_back {
            // The buffer holds only so much data not yet on the media: a write that would leave
            // more than that to destage waits, as the drive stalls the host's transfer until
            // the destage has made room. Without this bound a stream of appending writes would
            // complete at bus speed with an unbounded backlog, and the next read would pay for
            // all of it.
            let room = self.write_buffer_sectors() as f64 * zst;
            let done = done.max(w.t_end - room);
            (
                done,
                ServiceBreakdown {
                    overhead: to_ns(ovh + (t_acc - t)),
                    seek: 0,
                    rotation: 0,
                    transfer: to_ns(done - t_bus_start),
                    cache_hit: true,
                },
            )
        } else {
            // A write to the media is served disconnected too: the drive takes the data,
            // releases the bus while it writes, and reselects to return the status (no data
            // follows, so no transfer to prepare).
            let rs = self.spec.p.reselect;
            let t_end = if rs.disconnects() {
                let reselect = if extra_connections {
                    rs.reselect_other
                } else {
                    rs.reselect
                };
                w.t_end.max(bus_end + rs.write_disconnect) + reselect
            } else {
                w.t_end.max(bus_end)
            };
            let done = t_end + self.spec.p.overheads.write_complete;
            (
                done,
                ServiceBreakdown {
                    overhead: to_ns(t_mech - t),
                    seek: to_ns(w.seek),
                    rotation: to_ns(w.rot),
                    transfer: to_ns(done - w.t_first),
                    cache_hit: false,
                },
            )
        }
    }

    /// Positioning (overhead + seek + rotation) of a request started at `t` from the current
    /// state, without changing it. With `media`, a write the write-back cache would take is
    /// priced as the media write it defers ([`DeviceModel::media_positioning_time`]).
    fn positioning_ms(&self, req: &DiskRequest, t: f64, media: bool) -> f64 {
        // Mirrors the decisions of `read` and `write` without their side effects.
        let cache = &self.spec.p.cache;
        let n = req.sectors.max(1) as u64;
        let lbn = req.lbn.min(self.spec.layout.capacity().saturating_sub(n));
        let end = lbn + n;
        // How far the read-ahead has got only matters to a request that may fall in what it
        // reads; a request elsewhere is a miss whatever the answer.
        let pf_state = self
            .st
            .prefetch
            .filter(|p| {
                let s = &self.segs[p.seg];
                lbn >= s.start && lbn < p.limit.max(s.end)
            })
            .map(|p| (p, self.prefetch_at(&p, t)));
        let write = req.op == DiskOp::Write;
        if write
            && !media
            && cache.enabled
            && cache.write_back != WriteBack::Off
            && !self.segs.is_empty()
        {
            // The host sees only the command overhead (after any destage it must wait for);
            // the media work happens later.
            let wseg = self.lru_seg(true);
            let s = &self.segs[wseg];
            let appends = s.valid && s.write && s.end == lbn;
            let wait = if !appends && cache.write_back == WriteBack::Sequential {
                // The read-ahead stops at once (or runs to its end) before the destage.
                let mut free = self.st.mech_free;
                if let Some(pf) = self.st.prefetch {
                    let until = if cache.write_stops_prefetch {
                        t
                    } else {
                        f64::INFINITY
                    };
                    free = free.max(self.prefetch_at(&pf, until).3);
                }
                (free - t).max(0.0)
            } else {
                0.0
            };
            let hit = appends || cache.write_back == WriteBack::All;
            return wait + self.overhead(DiskOp::Write, hit);
        }
        if !write && cache.enabled {
            let found = match pf_state {
                Some((p, s)) => self.find_seg(lbn, Some((p.seg, s.0))),
                None if self.may_hold(lbn) => self.find_seg(lbn, None),
                None => None,
            };
            if let Some((si, seg_end)) = found {
                if end <= seg_end {
                    return self.connected_read_overhead(true);
                }
                if let Some((p, (done_lbn, ..))) = pf_state {
                    if cache.partial_hits
                        && p.seg == si
                        && seg_end == done_lbn.max(self.segs[si].end)
                        && done_lbn < p.limit
                    {
                        return self.connected_read_overhead(true);
                    }
                }
                if let Some(p) = self.partial_positioning(si, lbn, n, t, media) {
                    return p;
                }
            } else if let Some((p, (done, _, _, _, active))) = pf_state {
                if cache.almost_read_hits && active && lbn == done && lbn < p.limit {
                    return self.connected_read_overhead(false);
                }
            }
        }
        let ovh = self.overhead(req.op, false);
        let (cyl, head, t_mech) = self.arm_for_miss(t, ovh, write);
        let (immed, not_before) = if write {
            let loc = self.locate(lbn);
            let zst = self.spec.period / self.spec.layout.zones[loc.zone].spt as f64;
            (
                cache.immediate_write,
                self.write_ready(t + ovh + self.spec.p.reselect.data_prep, t_mech, n, zst),
            )
        } else {
            (cache.immediate_read, f64::NEG_INFINITY)
        };
        let w = self.walk(cyl, head, t_mech, lbn, n, write, immed, not_before, |_| {
            false
        });
        if media {
            // The media work's own positioning, from when the mechanism is free: the work it
            // has already taken (a destage, the read-ahead's last sector) is done whatever is
            // chosen next, so it is no request's cost.
            ovh + (w.t_first - t_mech)
        } else {
            w.t_first - t
        }
    }

    /// [`DeviceModel::media_positioning_floor`]: `positioning_ms` with `media` charges a
    /// request outside the segments the overhead of a miss, then a walk from where
    /// [`HddModel::arm_for_miss`] puts the arm, whose first step is a seek.
    fn positioning_floor(&self, head: u64, t: f64) -> PositioningFloor {
        let cap = self.spec.layout.capacity();
        let (read_ovh, write_ovh) = (
            self.overhead(DiskOp::Read, false),
            self.overhead(DiskOp::Write, false),
        );
        let head_cyl = self.place(head.min(cap.saturating_sub(1))).loc.pbn.cyl;
        let (read_arm, ..) = self.arm_for_miss(t, read_ovh, false);
        let (write_arm, ..) = self.arm_for_miss(t, write_ovh, true);
        let arm_offset = head_cyl
            .abs_diff(read_arm)
            .max(head_cyl.abs_diff(write_arm));
        // Every request starting where a segment holds data, or where the read-ahead will
        // have read by the time the command is decoded, may be a hit (`find_seg`, the
        // partial and almost-read hits); unreadable segments too, to keep the rule simple.
        let mut cached: Vec<(u64, u64)> = self
            .segs
            .iter()
            .filter(|s| s.valid && s.start < s.end)
            .map(|s| (s.start, s.end))
            .collect();
        if let Some(p) = self.st.prefetch {
            let s = &self.segs[p.seg];
            cached.push((s.start.min(p.from), p.limit.max(s.end)));
        }
        PositioningFloor {
            cached,
            overhead_ms: read_ovh.min(write_ovh),
            sectors_per_cylinder: self.spec.sectors_per_cylinder,
            arm_offset: u64::from(arm_offset),
            seek_floor: self.spec.seek_floor.clone(),
        }
    }

    /// Where the arm is and when the mechanism can start on a request that misses the cache,
    /// arriving at `t` with command overhead `ovh`: (cylinder, head, start of the media work).
    /// The same for every request of that kind asked about at `t`, so it is remembered for the
    /// state's generation ([`HddModel::miss_start`]).
    fn arm_for_miss(&self, t: f64, ovh: f64, write: bool) -> (u32, u32, f64) {
        let last = self.miss_start.get();
        if last.generation == self.generation && last.t == t && last.write == write {
            return last.arm;
        }
        let (mut cyl, mut head, mut mech_free) = (self.st.cyl, self.st.head, self.st.mech_free);
        // A read miss aborts the read-ahead once the command is decoded; a write to the media
        // aborts it on arrival, as `write` does.
        if let Some(pf) = self.st.prefetch {
            let at = if write { t } else { t + ovh };
            let (_, c, h, free, _) = self.prefetch_at(&pf, at);
            cyl = c;
            head = h;
            mech_free = mech_free.max(free);
        }
        let arm = (cyl, head, (t + ovh).max(mech_free));
        self.miss_start.set(MissStart {
            generation: self.generation,
            t,
            write,
            arm,
        });
        arm
    }
}

impl DeviceModel for HddModel {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn capacity_sectors(&self) -> u64 {
        self.spec.layout.capacity()
    }

    fn submit(&mut self, req: &DiskRequest, now: Nanos) -> Completion {
        self.generation += 1;
        let cap = self.spec.layout.capacity();
        let n = (req.sectors.max(1) as u64).min(cap);
        // Requests past the end are clamped to the last blocks rather than panicking: the
        // simulator validates addresses; the model must never fail on a timing question.
        let lbn = req.lbn.min(cap - n);
        let t = to_ms(now).max(self.st.busy_until);
        let (done, br) = match req.op {
            DiskOp::Read => self.read(lbn, n, t),
            DiskOp::Write => self.write(lbn, n, t),
        };
        self.st.last_read = req.op == DiskOp::Read;
        self.st.busy_until = done;
        let start = to_ns(t);
        let finish = to_ns(done).max(start);
        Completion {
            start,
            finish,
            service: br,
        }
    }

    fn positioning_time(&self, req: &DiskRequest, start: Nanos) -> Nanos {
        to_ns(self.positioning_ms(req, to_ms(start), false))
    }

    fn media_positioning_time(&self, req: &DiskRequest, start: Nanos) -> Nanos {
        to_ns(self.positioning_ms(req, to_ms(start), true))
    }

    fn media_positioning_floor(&self, head: u64, start: Nanos) -> Option<PositioningFloor> {
        Some(self.positioning_floor(head, to_ms(start)))
    }

    fn clone_box(&self) -> Box<dyn DeviceModel> {
        Box::new(self.clone())
    }
}

/// `x.floor()` for `x >= 0`, as a truncating cast: `floor` is a library call on baseline
/// x86-64, and these sit on the simulator's hottest path.
#[inline]
fn floor_pos(x: f64) -> f64 {
    if (0.0..9.0e15).contains(&x) {
        (x as i64) as f64
    } else {
        x.floor()
    }
}

/// The fractional part of `x`, in [0, 1).
#[inline]
fn frac(x: f64) -> f64 {
    x - floor_pos(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{Sparing, SurfaceOrder, Zone};
    use proptest::prelude::*;

    /// A small drive: 6,000 rpm (10 ms per revolution), 2 surfaces, two zones of 100 and 50
    /// sectors per track, no overheads and a bus fast enough to ignore.
    fn drive(cache: CacheParams, track_skew: u32) -> HddModel {
        drive_with(cache, track_skew, Reselect::default())
    }

    /// The same drive going through the disconnect/reselect protocol with `reselect`.
    fn drive_with(cache: CacheParams, track_skew: u32, reselect: Reselect) -> HddModel {
        let layout = Layout::new(
            2,
            Sparing::None,
            SurfaceOrder::Normal,
            vec![
                Zone::simple(0, 99, 100, track_skew, track_skew),
                Zone::simple(100, 199, 50, track_skew / 2, track_skew / 2),
            ],
        )
        .unwrap();
        HddModel::new(
            "test",
            layout,
            HddParams {
                rpm: 6000.0,
                seek: SeekCurve::Table(vec![(1, 1.0), (199, 10.0)]),
                head_switch_ms: 0.5,
                head_switch_random_ms: 0.0,
                write_settle_ms: 0.0,
                overheads: Overheads::default(),
                bus_ms_per_sector: 1e-6,
                bus_write_ms_per_sector: 1e-6,
                cache,
                reselect,
            },
        )
    }

    /// A cache of `segments` segments of `sectors` sectors, and nothing else of `off`'s
    /// changed (it keeps the requested blocks, `KeepRequest::Keep`).
    fn caching(segments: u32, sectors: u32) -> CacheParams {
        CacheParams {
            enabled: true,
            segments,
            segment_sectors: sectors,
            ..CacheParams::off()
        }
    }

    fn ms(ns: Nanos) -> f64 {
        ns as f64 / 1e6
    }

    /// A read-ahead of 2,000 sectors runs across ten of this drive's 200-sector cylinders:
    /// the arm is then cylinders past the head (the end of the last request), and the floor
    /// of a request just past what the read-ahead reached counts from the arm, not the head.
    #[test]
    fn the_floor_counts_from_where_the_read_ahead_has_carried_the_arm() {
        let mut d = drive(
            CacheParams {
                read_ahead: ReadAhead::Segment,
                max_read_ahead: 2_000,
                ..caching(2, 2_000)
            },
            10,
        );
        let done = d.submit(&DiskRequest::read(1_000, 8), 0);
        // Long enough for the whole read-ahead.
        let now = done.finish + 1_000_000_000;
        let floor = d.media_positioning_floor(1_008, now).unwrap();
        let reached = floor.cached.iter().map(|&(_, end)| end).max().unwrap();
        assert!(reached >= 1_008 + 1_800, "read ahead to {reached}");
        // The cheapest request on the arm's cylinder, the one past the read-ahead's end:
        // no seek and hardly any rotation.
        let (lbn, cost) = (reached..reached + 200)
            .map(|lbn| {
                (
                    lbn,
                    d.media_positioning_time(&DiskRequest::read(lbn, 8), now),
                )
            })
            .min_by_key(|&(_, cost)| cost)
            .unwrap();
        assert!(
            floor.at(lbn - 1_008) <= cost,
            "floor {} above the cost {cost} of reading {lbn}",
            floor.at(lbn - 1_008)
        );
    }

    #[test]
    fn rereading_a_sector_at_once_costs_one_revolution() {
        let mut d = drive(CacheParams::off(), 10);
        let a = d.submit(&DiskRequest::read(1234, 1), 3_000_000);
        let b = d.submit(&DiskRequest::read(1234, 1), a.finish);
        // The sector just passed: wait for it to come round (a revolution less its own length),
        // then read it.
        assert!((ms(b.finish - b.start) - 10.0).abs() < 1e-3, "{:?}", b);
        assert_eq!(b.service.seek, 0);
        assert!((ms(b.service.rotation) - 9.9).abs() < 1e-3);
    }

    /// DiskSim sets a read's high-water mark by request size rounded down: with a 0.75 mark a
    /// two-sector read miss reselects once its first sector is buffered, so the reselect runs
    /// while the second is read, and the read ends no later than a one-sector read would plus
    /// the bus time; rounded up it waited for both sectors, one sector time (0.1 ms) later.
    #[test]
    fn a_read_reselects_at_the_water_mark_rounded_down() {
        let mut cache = CacheParams::off();
        cache.segment_sectors = 256;
        cache.read_water = 0.75;
        cache.water_by_request = true;
        let reselect = Reselect {
            reselect: 1.0,
            ..Reselect::default()
        };
        let finish = |sectors: u32| {
            let mut d = drive_with(cache.clone(), 10, reselect);
            let r = d.submit(&DiskRequest::read(1234, sectors), 3_000_000);
            ms(r.finish)
        };
        let (one, two) = (finish(1), finish(2));
        assert!(
            (two - one).abs() < 1e-3,
            "one sector {one} ms, two {two} ms"
        );
        // Four sectors: the mark is 3, so the reselect starts after the third and the fourth
        // is read under it.
        let four = finish(4);
        assert!(
            (four - one - 0.2).abs() < 1e-3,
            "one sector {one} ms, four {four} ms"
        );
    }

    /// DiskSim's connected write waits for the `Data preparation overhead` after the command
    /// overhead before its data crosses the bus, while the arm starts moving at the end of the
    /// command overhead alone (disksim_diskctlr.c, `disk_write_arrive`: the overhead sets
    /// `overhead_done`, which gates the seek; the data preparation is added to the transfer's
    /// delay only). On the track the head is on, a write whose first sector comes under the
    /// head 0.2 ms after the command is decoded misses it when the data is 0.5 ms late, and
    /// waits a revolution; after a seek that ends just before the sector, the late data is
    /// in the buffer long before the platter brings it round.
    #[test]
    fn a_write_waits_for_its_data_preparation_but_its_seek_does_not() {
        let prep = Reselect {
            data_prep: 0.5,
            ..Reselect::default()
        };
        let service = |reselect: Reselect, req: DiskRequest, at: Nanos| {
            let mut d = drive_with(CacheParams::off(), 10, reselect);
            let c = d.submit(&req, at);
            ms(c.finish - c.start)
        };
        let near = DiskRequest::write(2, 1);
        let (without, with) = (
            service(Reselect::default(), near, 0),
            service(prep, near, 0),
        );
        assert!((without - 0.3).abs() < 1e-3, "without {without} ms");
        assert!((with - 10.3).abs() < 1e-3, "with {with} ms");
        // Far: start so that the seek ends 0.2 ms before the first sector comes round.
        let far = DiskRequest::write(10_000, 1);
        let d = drive_with(CacheParams::off(), 10, Reselect::default());
        let p = ms(d.positioning_time(&far, 0));
        let seek = 1.0 + 9.0 * 49.0 / 198.0;
        let at = to_ns(p - seek - 0.2);
        let (without, with) = (
            service(Reselect::default(), far, at),
            service(prep, far, at),
        );
        assert!(
            (without - (seek + 0.3)).abs() < 1e-3,
            "without {without} ms"
        );
        assert!(
            (with - without).abs() < 1e-6,
            "with {with} ms, without {without} ms"
        );
    }

    #[test]
    fn rotation_depends_on_absolute_time_not_on_idle() {
        // The platter keeps turning while idle: the same request issued half a revolution
        // later waits half a revolution less (or more).
        let d = drive(CacheParams::off(), 10);
        let r = DiskRequest::read(50, 1);
        let p0 = d.positioning_time(&r, 0);
        let p1 = d.positioning_time(&r, 2_500_000);
        assert!((ms(p0) - 5.0).abs() < 1e-3, "{p0}");
        assert!((ms(p1) - 2.5).abs() < 1e-3, "{p1}");
        let p2 = d.positioning_time(&r, 10_000_000);
        assert_eq!(
            p0, p2,
            "a whole revolution later the platter is where it was"
        );
    }

    #[test]
    fn a_read_ahead_hit_costs_no_positioning() {
        let mut cache = caching(4, 400);
        cache.read_ahead = ReadAhead::Segment;
        cache.max_read_ahead = 400;
        cache.keep_request = KeepRequest::Keep;
        let mut d = drive(cache, 10);
        let a = d.submit(&DiskRequest::read(1000, 8), 0);
        assert!(!a.service.cache_hit);
        // 20 ms later the read-ahead has brought in the next blocks.
        let b = d.submit(&DiskRequest::read(1008, 8), a.finish + 20_000_000);
        assert!(b.service.cache_hit);
        assert_eq!(b.service.seek + b.service.rotation, 0);
        assert!(ms(b.finish - b.start) < 0.01);
        assert_eq!(d.positioning_time(&DiskRequest::read(1016, 8), b.finish), 0);
    }

    #[test]
    fn a_read_hit_waits_for_its_data_preparation_and_is_priced_with_it() {
        // DiskSim serves a hit connected and prepares the transfer after the command
        // (`disk_read_arrive`): with 0.5 ms of preparation, a hit that took no time takes 0.5
        // ms, and a scheduler asking about it is told so.
        let cache = caching(4, 400);
        let hit = |data_prep: f64| {
            let reselect = Reselect {
                data_prep,
                ..Reselect::default()
            };
            let mut d = drive_with(cache.clone(), 10, reselect);
            let a = d.submit(&DiskRequest::read(1000, 8), 0);
            let again = DiskRequest::read(1000, 8);
            let p = d.positioning_time(&again, a.finish);
            let b = d.submit(&again, a.finish);
            assert!(b.service.cache_hit);
            (ms(p), ms(b.finish - b.start))
        };
        let (p0, s0) = hit(0.0);
        let (p1, s1) = hit(0.5);
        assert!(
            p0 < 1e-3 && s0 < 1e-3,
            "without: {p0} ms, served in {s0} ms"
        );
        assert!((p1 - 0.5).abs() < 1e-3, "priced {p1} ms");
        assert!((s1 - 0.5).abs() < 1e-3, "served in {s1} ms");
    }

    #[test]
    fn a_write_after_a_write_it_does_not_continue_reselects_at_the_other_overhead() {
        // An `Extra write disconnect` drive takes such a write in extra connections, and its
        // status comes over a second reselection (DiskSim's `Other reselect overhead`, here
        // 0.3 ms against the first's 1 ms). A write after a read, or one continuing the last
        // write, reselects once.
        let reselect = Reselect {
            reselect: 1.0,
            reselect_other: 0.3,
            write_prebuffer: true,
            ..Reselect::default()
        };
        let cache = caching(2, 200);
        // The status's reselect is the last thing a write does: the service after the same
        // history without the protocol, plus the reselect (the write comes at 100 ms, with the
        // drive idle and the platter where it is either way).
        let service = |history: &[DiskRequest], w: DiskRequest, r: Reselect| {
            let mut d = drive_with(cache.clone(), 10, r);
            for h in history {
                d.submit(h, 0);
            }
            let c = d.submit(&w, 100_000_000);
            ms(c.finish - c.start)
        };
        let bare = Reselect {
            write_disconnect: 0.0,
            reselect: 0.0,
            reselect_other: 0.0,
            ..reselect
        };
        let cases = [
            (
                vec![DiskRequest::write(5000, 8)],
                DiskRequest::write(9000, 8),
                0.3,
            ),
            (
                vec![DiskRequest::read(5000, 8)],
                DiskRequest::write(9000, 8),
                1.0,
            ),
            (
                vec![DiskRequest::write(5000, 8)],
                DiskRequest::write(5008, 8),
                1.0,
            ),
        ];
        for (history, w, reselect_ms) in cases {
            let with = service(&history, w, reselect);
            let without = service(&history, w, bare);
            assert!(
                (with - without - reselect_ms).abs() < 1e-3,
                "after {history:?}, {w:?}: {with} ms, {without} ms without the protocol"
            );
        }
    }

    #[test]
    fn a_partial_hit_reads_only_the_missing_blocks() {
        // Read-ahead to the end of the track: a read of 80..90 leaves 90..100 cached and the
        // arm idle at the track's end. A read of 95..105 then finds its first five blocks in
        // the segment and reads only 100..105 (the next track) from the media, as DiskSim does
        // (`disk_check_hda_pending` starts the access at the segment's end): it ends when a
        // read of 100..105 alone would, not a revolution later re-reading 95..100.
        let mut cache = caching(2, 200);
        cache.read_ahead = ReadAhead::Track;
        cache.max_read_ahead = 200;
        cache.keep_request = KeepRequest::Keep;
        cache.partial_hits = true;
        let mut d = drive(cache, 10);
        let a = d.submit(&DiskRequest::read(80, 10), 0);
        let t = a.finish + 20_000_000;
        let mut alone = d.clone();
        let rest = alone.submit(&DiskRequest::read(100, 5), t);
        let p = d.positioning_time(&DiskRequest::read(95, 10), t);
        let b = d.submit(&DiskRequest::read(95, 10), t);
        assert!(!b.service.cache_hit);
        assert!(
            b.finish.abs_diff(rest.finish) < 1_000,
            "partial hit ends at {} ns, the missing blocks alone at {} ns",
            b.finish,
            rest.finish
        );
        assert_eq!(p, b.service.positioning());
        // The segment now holds the whole request: reading it again is a full hit.
        let c = d.submit(&DiskRequest::read(95, 10), b.finish);
        assert!(c.service.cache_hit);
    }

    #[test]
    fn reads_ride_on_the_read_ahead_in_progress() {
        let mut cache = caching(4, 400);
        cache.read_ahead = ReadAhead::Segment;
        cache.max_read_ahead = 400;
        cache.keep_request = KeepRequest::Overwrite;
        cache.partial_hits = true;
        cache.almost_read_hits = true;
        let mut d = drive(cache, 10);
        // Sequential 50-sector reads with 0.2 ms think time stream at the media rate: 100
        // sectors per 10 ms revolution, plus the skew at each track switch.
        let mut t = 0;
        let mut first = 0;
        for i in 0..40u64 {
            let c = d.submit(&DiskRequest::read(i * 50, 50), t);
            if i == 0 {
                first = c.finish;
            }
            t = c.finish + 200_000;
        }
        let per_req = ms(t - 200_000 - first) / 39.0;
        assert!(per_req < 5.0 + 0.6, "{per_req} ms per 50 sectors");
    }

    #[test]
    fn skews_make_a_track_switch_cheaper_than_a_revolution() {
        // Read a whole track and 10 sectors of the next one in one request.
        let with = {
            let mut d = drive(CacheParams::off(), 10);
            let c = d.submit(&DiskRequest::read(0, 110), 0);
            c.service.transfer
        };
        let without = {
            let mut d = drive(CacheParams::off(), 0);
            let c = d.submit(&DiskRequest::read(0, 110), 0);
            c.service.transfer
        };
        // 110 sectors take 11 ms of media time; with a 10-sector skew the 0.5 ms head switch
        // costs the skew (1 ms), without skew it costs a whole revolution.
        assert!((ms(with) - 12.0).abs() < 0.01, "with skew {}", ms(with));
        assert!(ms(without) > 20.0, "without skew {}", ms(without));
    }

    /// A random layout: zones, sparing scheme, surface order, skews, spares, slips and dead
    /// space, as far as `Layout::new` accepts them.
    fn any_layout() -> impl Strategy<Value = Option<Layout>> {
        let zone = (
            2u32..8,
            8u32..64,
            0u32..64,
            0u32..64,
            0u32..64,
            0u64..16,
            0u64..4,
            proptest::collection::vec(0u64..2_000, 0..4),
        );
        (
            1u32..4,
            0usize..7,
            0usize..3,
            proptest::collection::vec(zone, 1..4),
        )
            .prop_map(|(surfaces, sparing, order, zones)| {
                let sparing = Sparing::every(2)[sparing];
                let order = [
                    SurfaceOrder::Normal,
                    SurfaceOrder::SerpentinePerZone,
                    SurfaceOrder::SerpentineAbsolute,
                ][order];
                let mut first = 0;
                let zones = zones
                    .into_iter()
                    .map(|(cyls, spt, ts, cs, off, dead, spares, slips)| {
                        let mut z = Zone::simple(first, first + cyls - 1, spt, ts % spt, cs % spt);
                        first += cyls;
                        z.first_offset = off % spt;
                        z.dead_space = dead;
                        z.spares = spares;
                        let units = match sparing {
                            Sparing::Tracks => u64::from(cyls * surfaces),
                            _ => u64::from(cyls * surfaces * spt),
                        };
                        let mut slips: Vec<u64> = slips.into_iter().map(|s| s % units).collect();
                        slips.sort_unstable();
                        slips.dedup();
                        // Only as many slips as the scheme can absorb.
                        match sparing {
                            Sparing::None => slips.clear(),
                            Sparing::Tracks => slips.truncate(spares as usize),
                            _ => {}
                        }
                        z.slips = slips;
                        z
                    })
                    .collect();
                Layout::new(surfaces, sparing, order, zones).ok()
            })
    }

    proptest! {
        /// The memos (places by LBN and by track, the read-ahead's answers by time, where the
        /// arm starts a miss) change no answer: a model that forgets them before every question
        /// answers every question, positioning and service alike, as one that keeps them.
        #[test]
        fn memos_change_no_answer(
            layout in any_layout(),
            cache in 0usize..3,
            ops in proptest::collection::vec(
                (0u8..10, 0u64..1_000_000, 1u32..300, 0u64..30_000_000, 0u64..1_000_000),
                1..60,
            ),
        ) {
            let Some(layout) = layout else { return Ok(()) };
            let cap = layout.capacity();
            prop_assume!(cap > 0);
            let cache = match cache {
                0 => CacheParams::off(),
                1 => {
                    // A modern drive's: read-ahead to fill the segment, riding on it.
                    let mut c = CacheParams::off();
                    c.enabled = true;
                    c.segments = 4;
                    c.segment_sectors = 96;
                    c.write_segments = 1;
                    c.read_ahead = ReadAhead::Segment;
                    c.max_read_ahead = 96;
                    c.keep_request = KeepRequest::Overwrite;
                    c.write_back = WriteBack::All;
                    c.read_hits_on_write_data = true;
                    c.almost_read_hits = true;
                    c.partial_hits = true;
                    c
                }
                _ => {
                    // An older one's: to the end of the track, zero latency, write-back of
                    // sequential writes only.
                    let mut c = CacheParams::off();
                    c.enabled = true;
                    c.segments = 2;
                    c.segment_sectors = 64;
                    c.read_ahead = ReadAhead::Track;
                    c.max_read_ahead = 64;
                    c.min_read_ahead = 8;
                    c.immediate_read = true;
                    c.read_any_free_blocks = true;
                    c.write_back = WriteBack::Sequential;
                    c.write_stops_prefetch = false;
                    c
                }
            };
            let params = HddParams {
                rpm: 6000.0,
                seek: SeekCurve::fit(1.0, 4.0, 8.0, layout.max_cyl() + 1),
                head_switch_ms: 0.5,
                head_switch_random_ms: 1.0,
                write_settle_ms: 0.2,
                overheads: Overheads::uniform(0.1),
                bus_ms_per_sector: 0.01,
                bus_write_ms_per_sector: 0.01,
                cache,
                reselect: Reselect::default(),
            };
            let mut kept = HddModel::new("kept", layout.clone(), params.clone());
            let mut forgot = HddModel::new("forgot", layout, params);
            let mut now = 0;
            let mut last = 0u64;
            for (kind, at, sectors, gap, other) in ops {
                // Half the requests continue the last one (the read-ahead's and the track
                // memo's cases), the rest land anywhere.
                let lbn = if kind < 5 { last } else { at % cap };
                let req = if kind == 9 {
                    DiskRequest::write(lbn, sectors)
                } else {
                    DiskRequest::read(lbn, sectors)
                };
                // Positioning questions at the same instant: the request itself, a neighbour
                // and one elsewhere, asked twice.
                for q in [req, DiskRequest::read(other % cap, 8), req] {
                    forgot.forget();
                    prop_assert_eq!(
                        kept.positioning_time(&q, now),
                        forgot.positioning_time(&q, now)
                    );
                }
                forgot.forget();
                let (a, b) = (kept.submit(&req, now), forgot.submit(&req, now));
                prop_assert_eq!(a, b);
                // The state changed at the same instant (a device that takes several requests
                // at once is asked again at once): no answer of before may come back.
                let q = DiskRequest::read(other % cap, 8);
                forgot.forget();
                prop_assert_eq!(kept.positioning_time(&q, now), forgot.positioning_time(&q, now));
                last = (lbn + u64::from(sectors)) % cap;
                now = a.finish + gap % 3_000_000 * (kind as u64 % 3);
            }
        }

        /// An LBN's place as the memos give it (by LBN, by track) is where the layout puts it.
        #[test]
        fn remembered_places_are_the_layouts(
            layout in any_layout(),
            lbns in proptest::collection::vec((0u64..1_000_000, 0u32..40), 1..200),
        ) {
            let Some(layout) = layout else { return Ok(()) };
            let cap = layout.capacity();
            prop_assume!(cap > 0);
            let d = HddModel::new("p", layout, HddParams {
                rpm: 7200.0,
                seek: SeekCurve::Table(vec![(1, 1.0), (100, 5.0)]),
                head_switch_ms: 0.5,
                head_switch_random_ms: 0.0,
                write_settle_ms: 0.0,
                overheads: Overheads::default(),
                bus_ms_per_sector: 0.01,
                bus_write_ms_per_sector: 0.01,
                cache: CacheParams::off(),
                reselect: Reselect::default(),
            });
            for (lbn, step) in lbns {
                // Each LBN and a few after it on its track (the track memo's answers).
                for k in [0, 1, u64::from(step)] {
                    let lbn = (lbn + k) % cap;
                    let (got, want) = (d.place(lbn), d.place_of(lbn));
                    prop_assert_eq!(got.loc, want.loc);
                    prop_assert_eq!(got.loc, d.layout().locate(lbn));
                    prop_assert_eq!(got.angle, want.angle);
                    prop_assert_eq!(got.spt, want.spt);
                    prop_assert_eq!(got.st.to_bits(), want.st.to_bits());
                }
            }
        }
    }

    #[test]
    fn zone_rates_fall_inward() {
        let d = drive(CacheParams::off(), 10);
        assert!(d.zone_rate_mb_s(0) > d.zone_rate_mb_s(1));
        assert!(d.zone_sustained_mb_s(0) > d.zone_sustained_mb_s(1));
        // Transfer time of the same size grows inward.
        let mut a = drive(CacheParams::off(), 10);
        let mut b = drive(CacheParams::off(), 10);
        let outer = a.submit(&DiskRequest::read(0, 40), 0).service.transfer;
        let inner = b.submit(&DiskRequest::read(20_000, 40), 0).service.transfer;
        assert!(inner > outer);
    }

    #[test]
    fn write_back_completes_when_the_data_is_in_the_buffer() {
        let mut cache = caching(2, 200);
        cache.write_back = WriteBack::All;
        let mut d = drive(cache.clone(), 10);
        let w = d.submit(&DiskRequest::write(15_000, 8), 0);
        assert!(w.service.cache_hit);
        assert!(ms(w.finish - w.start) < 0.01);
        // A read right after must wait for the destage (seek, rotation, write).
        let r = d.submit(&DiskRequest::read(30, 1), w.finish);
        assert!(ms(r.service.overhead) > 1.0, "{r:?}");
        cache.write_back = WriteBack::Off;
        let mut d = drive(cache, 10);
        let w = d.submit(&DiskRequest::write(15_000, 8), 0);
        assert!(ms(w.finish - w.start) > 1.0);
    }

    /// What a scheduler weighs: a write the cache takes is priced as the media write it
    /// defers (the drive with write-back off), and a request is not charged for the destage
    /// the mechanism is already committed to.
    #[test]
    fn the_media_price_of_a_cached_write_is_its_destage() {
        let mut cache = caching(2, 200);
        cache.write_back = WriteBack::All;
        let far = DiskRequest::write(15_000, 8);
        let d = drive(cache.clone(), 10);
        let mut off = cache.clone();
        off.write_back = WriteBack::Off;
        let media = drive(off, 10);
        assert!(ms(d.positioning_time(&far, 0)) < 0.01);
        assert_eq!(
            d.media_positioning_time(&far, 0),
            media.positioning_time(&far, 0)
        );
        assert!(ms(d.media_positioning_time(&far, 0)) > 1.0);
        // With the destage under way, a read elsewhere waits for it (positioning_time), but
        // its own positioning starts when the mechanism is free.
        let mut d = drive(cache, 10);
        let w = d.submit(&far, 0);
        let read = DiskRequest::read(30, 1);
        let waited = d.positioning_time(&read, w.finish);
        let own = d.media_positioning_time(&read, w.finish);
        assert!(ms(waited - own) > 1.0, "{waited} against {own}");
        // Once the mechanism is idle the two agree.
        let later = w.finish + 1_000_000_000;
        assert_eq!(
            d.positioning_time(&read, later),
            d.media_positioning_time(&read, later)
        );
    }
}
