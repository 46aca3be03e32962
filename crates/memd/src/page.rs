//! The severity page: one memfd that the daemon writes and every client maps read-only, holding
//! the latest [`SeverityRecord`] so that reading it costs a few loads and no system call (the
//! thesis's section 4.3 footnote: S in a page shared with every process).
//!
//! ## Layout (version [`LAYOUT`])
//!
//! The page is an array of little-endian 64-bit words, each read and written only as an
//! `AtomicU64`:
//!
//! | word | content |
//! |---|---|
//! | 0 | [`MAGIC`] |
//! | 1 | [`LAYOUT`] |
//! | 2 | the sequence counter |
//! | 8..8+16 | slot 0: a record |
//! | 24..24+16 | slot 1: a record |
//!
//! A record is the DESIGN keys in order: `version`, `severity_s` (f64 bits), `candidate_age_s`
//! (f64), `free_bytes`, `tau_bytes`, `paging_cost` (f64), `disk_service_ms` (f64), `disk_queue`
//! (f64), `tier` (0 plenty, 1 ramp, 2 paging, 3 thrashing), `estimator` (0 exact, 1 turnover,
//! 2 mglru, 3 damon), `time` (ns of CLOCK_MONOTONIC).
//!
//! ## Why two slots (a latched sequence lock)
//!
//! A plain seqlock makes a reader retry while the writer is in the middle of a write; if the
//! writer dies there (the daemon is SIGKILLed), the counter stays odd and a reader would spin
//! forever. Linux's `seqcount_latch` avoids that with two copies: the writer bumps the counter
//! to odd, rewrites slot 0, bumps it to even, rewrites slot 1. A reader reads the slot the
//! counter's low bit names, which is never the one being written, and retries only if the
//! counter moved meanwhile, that is only while the writer makes progress. A dead writer leaves
//! a complete record behind.

use std::ffi::c_void;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{fence, AtomicU64, Ordering};

use antsched_mem::record::{Estimator, SeverityRecord};
use antsched_mem::Tier;
use rustix::fs::{MemfdFlags, SealFlags};
use rustix::mm::{MapFlags, ProtFlags};

/// "ASMDPAGE", the first word of a severity page.
pub const MAGIC: u64 = u64::from_le_bytes(*b"ASMDPAGE");
/// The page layout's version; a client refuses a page of another.
pub const LAYOUT: u64 = 1;
/// The size of the memfd.
pub const PAGE_BYTES: usize = 4096;

const WORDS: usize = PAGE_BYTES / 8;
const W_MAGIC: usize = 0;
const W_LAYOUT: usize = 1;
const W_SEQ: usize = 2;
const SLOT: [usize; 2] = [8, 24];
const FIELDS: usize = 11;

fn tier_code(t: Tier) -> u64 {
    match t {
        Tier::Plenty => 0,
        Tier::Ramp => 1,
        Tier::Paging => 2,
        Tier::Thrashing => 3,
    }
}

fn tier_of(code: u64) -> Option<Tier> {
    Some(match code {
        0 => Tier::Plenty,
        1 => Tier::Ramp,
        2 => Tier::Paging,
        3 => Tier::Thrashing,
        _ => return None,
    })
}

fn estimator_code(e: Estimator) -> u64 {
    match e {
        Estimator::Exact => 0,
        Estimator::Turnover => 1,
        Estimator::Mglru => 2,
        Estimator::Damon => 3,
    }
}

fn estimator_of(code: u64) -> Option<Estimator> {
    Some(match code {
        0 => Estimator::Exact,
        1 => Estimator::Turnover,
        2 => Estimator::Mglru,
        3 => Estimator::Damon,
        _ => return None,
    })
}

fn encode(r: &SeverityRecord) -> [u64; FIELDS] {
    [
        u64::from(r.version),
        r.severity_s.to_bits(),
        r.candidate_age_s.to_bits(),
        r.free_bytes,
        r.tau_bytes,
        r.paging_cost.to_bits(),
        r.disk_service_ms.to_bits(),
        r.disk_queue.to_bits(),
        tier_code(r.tier),
        estimator_code(r.estimator),
        r.time,
    ]
}

fn decode(w: &[u64; FIELDS]) -> Option<SeverityRecord> {
    Some(SeverityRecord {
        version: u32::try_from(w[0]).ok()?,
        severity_s: f64::from_bits(w[1]),
        candidate_age_s: f64::from_bits(w[2]),
        free_bytes: w[3],
        tau_bytes: w[4],
        paging_cost: f64::from_bits(w[5]),
        disk_service_ms: f64::from_bits(w[6]),
        disk_queue: f64::from_bits(w[7]),
        tier: tier_of(w[8])?,
        estimator: estimator_of(w[9])?,
        time: w[10],
    })
}

/// A shared mapping of a severity page, unmapped on drop.
struct Mapping {
    ptr: *mut c_void,
}

// SAFETY: the mapping is plain shared memory that is only ever accessed through atomics
// (`words`), so it may be used and dropped from any thread.
unsafe impl Send for Mapping {}
// SAFETY: as above: shared references only ever perform atomic operations on the memory.
unsafe impl Sync for Mapping {}

impl Mapping {
    fn new(fd: &OwnedFd, writable: bool) -> rustix::io::Result<Self> {
        let prot = if writable {
            ProtFlags::READ | ProtFlags::WRITE
        } else {
            ProtFlags::READ
        };
        // SAFETY: a new shared mapping of PAGE_BYTES of a memfd at an address the kernel
        // picks: it aliases no Rust object. The memfd is at least PAGE_BYTES long (the daemon
        // sized it and sealed it against shrinking before handing it out).
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                PAGE_BYTES,
                prot,
                MapFlags::SHARED,
                fd.as_fd(),
                0,
            )?
        };
        Ok(Self { ptr })
    }

    fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is page-aligned (so aligned for AtomicU64), PAGE_BYTES long (WORDS
        // words) and lives as long as `self`. Every process touches it only through atomics:
        // the daemon writes with atomic stores, clients cannot write at all (the memfd is
        // sealed against writes and they map it read-only), so there is no data race. Atomic
        // loads of 64 bits from read-only memory are allowed on the 64-bit targets this
        // builds for (std::sync::atomic, "Atomic accesses to read-only memory").
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<AtomicU64>(), WORDS) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from mmap of PAGE_BYTES and no reference from `words` outlives
        // `self`.
        let _ = unsafe { rustix::mm::munmap(self.ptr, PAGE_BYTES) };
    }
}

/// The daemon's side: creates the memfd, seals it so that no one else can ever write it, and
/// publishes records.
pub struct PageWriter {
    fd: OwnedFd,
    map: Mapping,
}

impl PageWriter {
    pub fn new() -> rustix::io::Result<Self> {
        let fd = rustix::fs::memfd_create(
            "antsched-severity",
            MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
        )?;
        rustix::fs::ftruncate(&fd, PAGE_BYTES as u64)?;
        let map = Mapping::new(&fd, true)?;
        // FUTURE_WRITE (Linux 5.1): the daemon's writable mapping made above keeps working,
        // but no new writable mapping and no write(2) is possible, for anyone holding the fd.
        // SEAL: the seals cannot be removed.
        rustix::fs::fcntl_add_seals(
            &fd,
            SealFlags::SHRINK | SealFlags::GROW | SealFlags::FUTURE_WRITE | SealFlags::SEAL,
        )?;
        let w = map.words();
        w[W_MAGIC].store(MAGIC, Ordering::Relaxed);
        w[W_LAYOUT].store(LAYOUT, Ordering::Relaxed);
        w[W_SEQ].store(0, Ordering::Release);
        Ok(Self { fd, map })
    }

    /// The memfd to pass to clients.
    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// Publishes `r` (the latch write of the module documentation).
    pub fn publish(&self, r: &SeverityRecord) {
        let w = self.map.words();
        let fields = encode(r);
        let seq = w[W_SEQ].load(Ordering::Relaxed);
        for (k, slot) in SLOT.iter().enumerate() {
            // Odd first: readers move to slot 1 while slot 0 is rewritten; then even: they
            // move back to slot 0, now complete, while slot 1 is rewritten. The release store
            // makes the slot written before it visible to a reader that loads the new counter;
            // the release fence after it orders the counter before the slot's new stores, so a
            // reader that saw any of them sees the counter move on its recheck (its acquire
            // fence pairs with this one) and retries.
            w[W_SEQ].store(seq + 1 + k as u64, Ordering::Release);
            fence(Ordering::Release);
            for (i, v) in fields.iter().enumerate() {
                w[slot + i].store(*v, Ordering::Relaxed);
            }
        }
    }
}

/// Why a page cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    #[error("cannot map the severity page: {0}")]
    Map(#[source] rustix::io::Errno),
    #[error("the shared memory is not a severity page (magic {0:#x})")]
    Magic(u64),
    #[error("the severity page has layout {found}; this client reads layout {LAYOUT}")]
    Layout { found: u64 },
}

/// A client's side: a read-only mapping.
pub struct PageReader {
    map: Mapping,
}

impl PageReader {
    /// Maps `fd` read-only and checks that it is a severity page of this layout.
    pub fn new(fd: &OwnedFd) -> Result<Self, PageError> {
        let map = Mapping::new(fd, false).map_err(PageError::Map)?;
        let w = map.words();
        let magic = w[W_MAGIC].load(Ordering::Relaxed);
        if magic != MAGIC {
            return Err(PageError::Magic(magic));
        }
        let found = w[W_LAYOUT].load(Ordering::Relaxed);
        if found != LAYOUT {
            return Err(PageError::Layout { found });
        }
        Ok(Self { map })
    }

    /// The record last published, and the sequence number it was read under (a new record
    /// advances it by 2). `None` before the first record, or if a slot holds codes this
    /// layout does not define (a daemon bug, not a torn read: the latch rules those out).
    pub fn read(&self) -> Option<(SeverityRecord, u64)> {
        let w = self.map.words();
        loop {
            let seq = w[W_SEQ].load(Ordering::Acquire);
            let slot = SLOT[(seq & 1) as usize];
            let mut fields = [0u64; FIELDS];
            for (i, f) in fields.iter_mut().enumerate() {
                *f = w[slot + i].load(Ordering::Relaxed);
            }
            fence(Ordering::Acquire);
            if w[W_SEQ].load(Ordering::Relaxed) == seq {
                if seq < 2 {
                    // No record yet, or the first one is being written (slot 1 is empty).
                    return None;
                }
                return decode(&fields).map(|r| (r, seq));
            }
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use antsched_mem::record::RECORD_VERSION;

    fn record(s: f64, time: u64) -> SeverityRecord {
        SeverityRecord {
            version: RECORD_VERSION,
            severity_s: s,
            candidate_age_s: 512.0,
            free_bytes: 1 << 20,
            tau_bytes: 2 << 20,
            paging_cost: 2.0 * 0.01 / s,
            disk_service_ms: 10.0,
            disk_queue: 1.5,
            tier: Tier::Ramp,
            estimator: Estimator::Turnover,
            time,
        }
    }

    #[test]
    fn a_published_record_reads_back_whole() {
        let w = PageWriter::new().unwrap();
        let r = PageReader::new(w.fd()).unwrap();
        assert_eq!(r.read(), None);
        w.publish(&record(900.0, 1));
        let (got, seq) = r.read().unwrap();
        assert_eq!(got, record(900.0, 1));
        w.publish(&record(450.0, 2));
        let (got, seq2) = r.read().unwrap();
        assert_eq!((got, seq2), (record(450.0, 2), seq + 2));
    }

    /// The seals: no one holding the fd (a client) can write the page or map it writable.
    #[test]
    fn clients_cannot_write_the_page() {
        let w = PageWriter::new().unwrap();
        assert!(rustix::io::write(w.fd(), b"x").is_err());
        // SAFETY: a fresh mapping that is unmapped right away if it were ever made.
        let writable = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                PAGE_BYTES,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                w.fd(),
                0,
            )
        };
        assert_eq!(writable.err(), Some(rustix::io::Errno::PERM));
        assert!(rustix::fs::ftruncate(w.fd(), 0).is_err());
    }

    /// A reader racing a writer never sees a mix of two records.
    #[test]
    fn reads_racing_writes_are_never_torn() {
        let w = PageWriter::new().unwrap();
        let r = PageReader::new(w.fd()).unwrap();
        w.publish(&record(1.0, 1));
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 2..20_000u64 {
                    w.publish(&record(i as f64, i));
                }
            });
            for _ in 0..20_000 {
                let (got, _) = r.read().unwrap();
                // Every field of a record derives from its time.
                assert_eq!(got, record(got.time as f64, got.time));
            }
        });
    }

    #[test]
    fn a_page_of_another_kind_is_refused() {
        let fd = rustix::fs::memfd_create("other", MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&fd, PAGE_BYTES as u64).unwrap();
        let e = PageReader::new(&fd).err().unwrap();
        assert_eq!(
            e.to_string(),
            "the shared memory is not a severity page (magic 0x0)"
        );
    }
}
