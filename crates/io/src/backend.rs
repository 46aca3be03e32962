//! Where the bytes go and when a request is done: the backends of a runtime.
//!
//! - [`Backend::file`]: a regular file or a block device. A request completes when the
//!   kernel says so; with `direct` the file is opened `O_DIRECT`, bypassing the page cache, so
//!   the device is what is measured and scheduled.
//! - [`Backend::emulated`]: a disk model (a preset such as `deskstar-34gxp`, or a DiskSim
//!   `.parv`) over a backing [`Store`]. The bytes really move (to and from the store, through
//!   the page cache), and the request completes at the instant the model says it finishes,
//!   on the runtime's clock: model time is real monotonic time since the runtime started.
//!   The model serves requests in the order the scheduler dispatches them, one at a time
//!   (a request dispatched while another is in service starts when that one finishes), which
//!   is the disk's queue depth of one; a scheduler with `depth=N` keeps N queued in it.
//! - [`Backend::null`]: no device at all; each request completes as soon as the ring hands it
//!   back. It measures what the runtime itself costs per request.
//!
//! Any backend can be told to fail every n-th request ([`Backend::fail_every`]), to test that
//! an error reaches the caller of that request and no one else.

use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;

use antsched_core::BuildEnv;
use antsched_core::Nanos;
use antsched_disk::{Completion, DeviceModel, DiskRequest};
use antsched_sim::SharedDevice;

use crate::error::SetupError;

/// One contiguous run of device sectors kept in a backing file.
#[derive(Clone, Debug)]
pub struct Extent {
    /// First device sector.
    pub sector: u64,
    /// Length in sectors.
    pub sectors: u64,
    /// Index of the file in the store.
    pub file: usize,
    /// Byte offset in that file of `sector`.
    pub offset: u64,
}

/// Where a device's sectors are kept: one file holding sector `n` at byte `512 n` (a real
/// device, or a sparse image of an emulated disk), or several files each holding some runs
/// of sectors (the files of a workload laid out on an emulated disk, kept as ordinary files
/// in a directory). Reading or writing a sector the store does not hold is an error.
///
/// A third kind, [`Store::discard`], keeps no bytes at all: for a caller that moves the bytes
/// itself and uses the emulated disk only for when requests complete and in what order.
#[derive(Clone, Debug)]
pub struct Store {
    files: Vec<Arc<File>>,
    /// Sorted by `sector`, disjoint. Empty: the single file maps identically.
    extents: Vec<Extent>,
    /// Keeps no bytes (see [`Store::discard`]).
    discard: bool,
}

/// Where a request's bytes are: a file (its index in [`Store::fds`]) and a byte offset, or
/// nowhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    At(usize, u64),
    /// The store keeps no bytes: reads give zeros, writes are dropped, at once.
    Discarded,
}

impl Store {
    /// One file; sector `n` at byte `512 n`.
    pub fn whole(file: File) -> Store {
        Store {
            files: vec![Arc::new(file)],
            extents: Vec::new(),
            discard: false,
        }
    }

    /// No bytes: every read of the device gives zeros and every write is dropped, without
    /// any I/O; the emulated disk still times and orders the requests. For callers whose
    /// data does not fit a fixed sector map: the FUSE mount (`antsched-fuse`) moves each
    /// request's bytes to and from the backing file itself, because its files are created and
    /// grow while it runs and their sizes are not multiples of 512 bytes, and asks the
    /// runtime only for the scheduling and the disk's timing of the same sectors.
    pub fn discard() -> Store {
        Store {
            files: Vec::new(),
            extents: Vec::new(),
            discard: true,
        }
    }

    /// Several files, each holding the runs of sectors `extents` name.
    pub fn extents(files: Vec<File>, mut extents: Vec<Extent>) -> Result<Store, SetupError> {
        extents.sort_by_key(|e| e.sector);
        for w in extents.windows(2) {
            if w[0].sector + w[0].sectors > w[1].sector {
                return Err(SetupError::Other(format!(
                    "store extents overlap at sector {}",
                    w[1].sector
                )));
            }
        }
        if let Some(e) = extents
            .iter()
            .find(|e| e.file >= files.len() || e.sectors == 0)
        {
            return Err(SetupError::Other(format!(
                "store extent at sector {} names file {} of {}, or is empty",
                e.sector,
                e.file,
                files.len()
            )));
        }
        Ok(Store {
            files: files.into_iter().map(Arc::new).collect(),
            extents,
            discard: false,
        })
    }

    /// Where `sectors` sectors from `sector` are: [`Place::Discarded`] for a
    /// [`discard`](Self::discard) store, else as [`locate`](Self::locate).
    pub fn place(&self, sector: u64, sectors: u64) -> Option<Place> {
        if self.discard {
            return Some(Place::Discarded);
        }
        self.locate_index(sector, sectors)
            .map(|(i, off)| Place::At(i, off))
    }

    /// The file descriptor and byte offset of `sectors` sectors from `sector`, if the store
    /// holds all of them in one place.
    pub fn locate(&self, sector: u64, sectors: u64) -> Option<(RawFd, u64)> {
        self.locate_index(sector, sectors)
            .map(|(i, off)| (self.files[i].as_raw_fd(), off))
    }

    /// Like [`locate`](Self::locate), with the file's index in [`fds`](Self::fds). `None`
    /// for a [`discard`](Self::discard) store, which holds nothing.
    pub fn locate_index(&self, sector: u64, sectors: u64) -> Option<(usize, u64)> {
        if self.discard {
            return None;
        }
        if self.extents.is_empty() {
            return Some((0, sector * 512));
        }
        let i = self.extents.partition_point(|e| e.sector <= sector);
        let e = self.extents.get(i.checked_sub(1)?)?;
        (sector + sectors <= e.sector + e.sectors)
            .then(|| (e.file, e.offset + (sector - e.sector) * 512))
    }

    /// The descriptors of the store's files, in index order.
    pub fn fds(&self) -> Vec<RawFd> {
        self.files.iter().map(|f| f.as_raw_fd()).collect()
    }
}

/// What kind of device a runtime drives.
pub(crate) enum Device {
    File {
        store: Store,
    },
    Emulated {
        model: SharedDevice,
        store: Store,
        /// Runtime time at which the model's clock reads 0 (see [`Origin`]).
        origin: Origin,
    },
    Null,
}

/// When an emulated disk's clock starts: at the first request's arrival, on the runtime's
/// clock (unset until then).
///
/// A disk model's platter turns with absolute time. The simulator's issuers all start at its
/// time 0; the runtime's issue their first request some hundreds of microseconds after the
/// runtime started, a different rotational phase, and a strictly periodic workload (two
/// sequential readers alternating) keeps whatever phase relation it starts with: the same job
/// can then cost a few milliseconds more or less per request than simulated, on every
/// request. Starting the model's clock with the first request gives the emulated disk the
/// phase the simulated one has, so the two can be compared request for request. A real
/// program sees no difference: a real disk's phase at any moment is arbitrary.
#[derive(Clone, Debug)]
pub(crate) struct Origin(Arc<std::sync::atomic::AtomicU64>);

impl Origin {
    fn new() -> Self {
        Origin(Arc::new(std::sync::atomic::AtomicU64::new(u64::MAX)))
    }

    /// Sets the origin to `now` unless it is set.
    pub(crate) fn start(&self, now: Nanos) {
        let _ = self.0.compare_exchange(
            u64::MAX,
            now,
            std::sync::atomic::Ordering::SeqCst,
            std::sync::atomic::Ordering::SeqCst,
        );
    }

    fn get(&self) -> u64 {
        match self.0.load(std::sync::atomic::Ordering::SeqCst) {
            u64::MAX => 0,
            t => t,
        }
    }
}

/// A disk model whose clock starts at an [`Origin`]: runtime time `t` is model time
/// `t - origin`. Both the runtime (submitting) and the exact estimator (asking positioning
/// times) go through it, so they see one clock.
struct Shifted {
    inner: Box<dyn DeviceModel>,
    origin: Origin,
}

impl DeviceModel for Shifted {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn capacity_sectors(&self) -> u64 {
        self.inner.capacity_sectors()
    }
    fn submit(&mut self, req: &DiskRequest, now: Nanos) -> Completion {
        let o = self.origin.get();
        let mut c = self.inner.submit(req, now.saturating_sub(o));
        c.start += o;
        c.finish += o;
        c
    }
    fn positioning_time(&self, req: &DiskRequest, start: Nanos) -> Nanos {
        self.inner
            .positioning_time(req, start.saturating_sub(self.origin.get()))
    }
    fn media_positioning_time(&self, req: &DiskRequest, start: Nanos) -> Nanos {
        self.inner
            .media_positioning_time(req, start.saturating_sub(self.origin.get()))
    }
    fn clone_box(&self) -> Box<dyn DeviceModel> {
        Box::new(Shifted {
            inner: self.inner.clone_box(),
            origin: self.origin.clone(),
        })
    }
}

/// A device for a runtime: what serves requests, how large it is, and whether to inject
/// failures.
pub struct Backend {
    pub(crate) device: Device,
    pub(crate) capacity_sectors: u64,
    pub(crate) fail_every: Option<u64>,
    name: String,
}

/// A backend as the command line names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendSpec {
    /// `file:PATH`.
    File(String),
    /// `emulated:NAME`: a preset name or a DiskSim `.parv` path.
    Emulated(String),
}

impl BackendSpec {
    pub fn parse(s: &str) -> Result<BackendSpec, SetupError> {
        let bad = |problem: &str| SetupError::BadBackend {
            spec: s.to_string(),
            problem: problem.to_string(),
        };
        match s.split_once(':') {
            Some(("file", p)) if !p.is_empty() => Ok(BackendSpec::File(p.to_string())),
            Some(("emulated", n)) if !n.is_empty() => Ok(BackendSpec::Emulated(n.to_string())),
            Some(("file" | "emulated", _)) => Err(bad("the part after the colon is empty")),
            _ => Err(bad(
                "give file:PATH (a regular file or block device) or emulated:NAME (a disk model: a preset, see `antsched disks`, or a DiskSim .parv file)",
            )),
        }
    }
}

/// Opens `path` for reading and writing (or only reading if `write` is false), `O_DIRECT` if
/// `direct`.
pub fn open_file(path: &Path, direct: bool, write: bool) -> Result<File, SetupError> {
    let mut o = OpenOptions::new();
    o.read(true).write(write);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path).map_err(|source| SetupError::Open {
        path: path.display().to_string(),
        source,
    })
}

/// Size in bytes of a regular file or a block device.
pub fn size_of(file: &File, path: &Path) -> Result<u64, SetupError> {
    let meta = file.metadata().map_err(|source| SetupError::Open {
        path: path.display().to_string(),
        source,
    })?;
    if meta.file_type().is_block_device() {
        let mut bytes: u64 = 0;
        // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
        const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
        // SAFETY: the ioctl writes one u64 into `bytes`, which outlives the call.
        let r = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut bytes) };
        if r != 0 {
            return Err(SetupError::Open {
                path: path.display().to_string(),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(bytes)
    } else {
        Ok(meta.len())
    }
}

impl Backend {
    /// A regular file or block device at `path`, `O_DIRECT` if `direct`. Its capacity is its
    /// size (rounded down to whole sectors).
    pub fn file(path: &Path, direct: bool) -> Result<Backend, SetupError> {
        let f = open_file(path, direct, true).or_else(|_| open_file(path, direct, false))?;
        let size = size_of(&f, path)?;
        Ok(Backend {
            device: Device::File {
                store: Store::whole(f),
            },
            capacity_sectors: size / 512,
            fail_every: None,
            name: format!("file:{}", path.display()),
        })
    }

    /// The disk model `model` over `store`. The model's clock starts when the first request
    /// arrives, as the simulator's starts with its issuers: the platter's phase then matches
    /// the simulation's, which a strictly periodic workload would otherwise keep offset on
    /// every request.
    pub fn emulated(model: Box<dyn DeviceModel>, store: Store) -> Backend {
        let capacity_sectors = model.capacity_sectors();
        let name = model.name().to_string();
        let origin = Origin::new();
        let shifted = Shifted {
            inner: model,
            origin: origin.clone(),
        };
        Backend {
            device: Device::Emulated {
                model: SharedDevice::new(Box::new(shifted)),
                store,
                origin,
            },
            capacity_sectors,
            fail_every: None,
            name,
        }
    }

    /// No device: every request completes at once, with zeros for reads.
    pub fn null(capacity_sectors: u64) -> Backend {
        Backend {
            device: Device::Null,
            capacity_sectors,
            fail_every: None,
            name: "null".into(),
        }
    }

    /// Fails every `n`-th request the scheduler dispatches (the n-th, 2n-th, ...) with `EIO`,
    /// after doing its I/O. `n = 0` fails none.
    pub fn fail_every(mut self, n: u64) -> Backend {
        self.fail_every = (n > 0).then_some(n);
        self
    }

    /// The device's name (the model's, or `file:PATH`, or `null`).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn capacity_sectors(&self) -> u64 {
        self.capacity_sectors
    }

    /// The emulated disk's model, shared with the exact estimators built from
    /// [`build_env`](Self::build_env).
    pub fn model(&self) -> Option<&SharedDevice> {
        match &self.device {
            Device::Emulated { model, .. } => Some(model),
            _ => None,
        }
    }

    /// What schedulers need to be built for this device: on an emulated disk the exact
    /// estimator reads the very model that times the requests (as in the simulator), and the
    /// calibrated one is the curve fitted to it; a file has neither, so `auto` means `seek`
    /// there and `estimator=CURVE.json` (from `antsched calibrate`) is the way to SPTF.
    pub fn build_env(&self, seed: u64) -> BuildEnv {
        let env = match self.model() {
            Some(model) => model.build_env(seed),
            None => BuildEnv {
                seed,
                ..BuildEnv::default()
            },
        };
        BuildEnv {
            real_clock: true,
            ..env
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_errors_say_what_is_valid() {
        assert_eq!(
            BackendSpec::parse("file:/tmp/x").unwrap(),
            BackendSpec::File("/tmp/x".into())
        );
        assert_eq!(
            BackendSpec::parse("emulated:deskstar-34gxp").unwrap(),
            BackendSpec::Emulated("deskstar-34gxp".into())
        );
        let e = BackendSpec::parse("disk:x").unwrap_err().to_string();
        assert!(
            e.contains("file:PATH") && e.contains("emulated:NAME"),
            "{e}"
        );
        assert!(BackendSpec::parse("file:").is_err());
    }

    #[test]
    fn a_store_locates_sectors_inside_its_extents_only() {
        let f = || tempfile_in_tmp();
        let s = Store::extents(
            vec![f(), f()],
            vec![
                Extent {
                    sector: 100,
                    sectors: 50,
                    file: 1,
                    offset: 0,
                },
                Extent {
                    sector: 0,
                    sectors: 10,
                    file: 0,
                    offset: 4096,
                },
            ],
        )
        .unwrap();
        assert_eq!(s.locate(0, 10).map(|x| x.1), Some(4096));
        assert_eq!(s.locate(5, 5).map(|x| x.1), Some(4096 + 5 * 512));
        assert_eq!(s.locate(120, 30).map(|x| x.1), Some(20 * 512));
        assert!(s.locate(5, 6).is_none(), "crosses the end of an extent");
        assert!(s.locate(50, 1).is_none(), "a hole");
        assert!(s.locate(150, 1).is_none(), "past the last extent");
    }

    fn tempfile_in_tmp() -> File {
        let p = std::env::temp_dir().join(format!(
            "antsched-io-store-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let f = File::options()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        let _ = std::fs::remove_file(&p);
        f
    }
}
