//! Where files lie on the simulated disk.
//!
//! The paper's results depend on placement: two 1 GB files a seek apart, small files of one
//! directory near each other, a large file broken into regions that make FreeBSD's prefetch
//! back off (section 4.1). A file here is a start sector and, optionally, a pattern of extents
//! separated by gaps (`antsched_extent`, `antsched_extent_gap`); everything else follows.
//!
//! Where a file goes is one rule for the simulator and the mount ([`FreeSpace`]): the first
//! file at sector 0 (the outer, fastest zone), each next one where the last allocation ended
//! (next fit), so that files made one after another lie one after another, as a file system
//! that allocates from a rotor lays them out. `antsched sim` places a job file's files this
//! way, in the order the job file names them, unless `antsched_disk_offset` sets one; the
//! mount places a backing tree's files the same way at mount time, and a file's growth while
//! mounted.

use std::collections::BTreeMap;

use crate::fio::Extents;

/// Bytes per sector.
const SECTOR: u64 = 512;

/// Index of a file in a [`DiskLayout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub usize);

/// One file's place on the disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileLayout {
    pub name: String,
    /// Size in bytes (a multiple of 512).
    pub size: u64,
    /// Sector of its first byte.
    pub start: u64,
    pub extents: Option<Extents>,
}

impl FileLayout {
    /// Sectors the file spans on the disk, gaps included.
    pub fn span_sectors(&self) -> u64 {
        match self.extents {
            None => self.size / SECTOR,
            Some(e) => {
                let full = self.size / e.extent;
                let rest = self.size % e.extent;
                let span = full * (e.extent + e.gap) + rest;
                // No gap after the last extent.
                (if rest == 0 && full > 0 {
                    span - e.gap
                } else {
                    span
                }) / SECTOR
            }
        }
    }

    /// The sector holding byte `offset` of the file.
    pub fn sector_of(&self, offset: u64) -> u64 {
        self.start
            + match self.extents {
                None => offset / SECTOR,
                Some(e) => (offset / e.extent * (e.extent + e.gap) + offset % e.extent) / SECTOR,
            }
    }

    /// The file offset where the disk-contiguous run holding `offset` ends.
    pub fn run_end(&self, offset: u64) -> u64 {
        match self.extents {
            None => self.size,
            Some(e) => ((offset / e.extent + 1) * e.extent).min(self.size),
        }
    }

    /// Appends the disk runs `(sector, sectors)` of bytes `[offset, offset + len)`, cut at
    /// extent boundaries and into pieces of at most `max_piece` bytes.
    pub fn runs(&self, offset: u64, len: u64, max_piece: u64, out: &mut Vec<(u64, u32)>) {
        let end = (offset + len).min(self.size);
        let mut at = offset;
        while at < end {
            let piece_end = self
                .run_end(at)
                .min(end)
                .min(at.saturating_add(max_piece.max(SECTOR)));
            let sectors = (piece_end - at).div_ceil(SECTOR);
            out.push((self.sector_of(at), sectors as u32));
            at = piece_end;
        }
    }
}

/// Every file of a simulation and its place.
#[derive(Clone, Debug, Default)]
pub struct DiskLayout {
    pub files: Vec<FileLayout>,
}

impl DiskLayout {
    pub fn file(&self, id: FileId) -> &FileLayout {
        &self.files[id.0]
    }

    /// Finds a file by name.
    pub fn find(&self, name: &str) -> Option<FileId> {
        self.files.iter().position(|f| f.name == name).map(FileId)
    }
}

/// The free space of a disk, in sectors, and the next-fit cursor that places files on it.
#[derive(Clone, Debug)]
pub struct FreeSpace {
    /// Free runs: start -> length. Disjoint and never adjacent (merged when given back).
    free: BTreeMap<u64, u64>,
    /// Sum of the free runs.
    free_total: u64,
    /// Where the next allocation starts looking.
    cursor: u64,
    capacity: u64,
}

/// A placement asked for sectors that are not free (or not on the disk).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("sectors {start}..{end} are not free")]
pub struct NotFree {
    pub start: u64,
    pub end: u64,
}

impl FreeSpace {
    /// An empty disk of `capacity` sectors.
    pub fn new(capacity: u64) -> FreeSpace {
        let mut free = BTreeMap::new();
        if capacity > 0 {
            free.insert(0, capacity);
        }
        FreeSpace {
            free,
            free_total: capacity,
            cursor: 0,
            capacity,
        }
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Free sectors.
    pub fn free(&self) -> u64 {
        self.free_total
    }

    /// Number of free runs (the disk's fragmentation).
    pub fn free_runs(&self) -> usize {
        self.free.len()
    }

    /// Where the next allocation starts looking.
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// The free run holding `sector`, if any.
    fn run_at(&self, sector: u64) -> Option<(u64, u64)> {
        self.free
            .range(..=sector)
            .next_back()
            .filter(|(s, l)| **s + **l > sector)
            .map(|(s, l)| (*s, *l))
    }

    /// Takes `[start, start + len)` out of the free run `(run_start, run_len)` that holds it,
    /// and moves the cursor past it.
    fn cut(&mut self, (run_start, run_len): (u64, u64), start: u64, len: u64) {
        self.free.remove(&run_start);
        if start > run_start {
            self.free.insert(run_start, start - run_start);
        }
        let run_end = run_start + run_len;
        if start + len < run_end {
            self.free.insert(start + len, run_end - start - len);
        }
        self.free_total -= len;
        self.cursor = start + len;
        if self.cursor >= self.capacity {
            self.cursor = 0;
        }
    }

    /// Takes up to `sectors` from the free run at the cursor, else the next free run after
    /// it, wrapping round to the start of the disk: next fit. Returns `(start, length)`;
    /// `None` when nothing is free.
    pub fn take(&mut self, sectors: u64) -> Option<(u64, u64)> {
        if sectors == 0 || self.free_total == 0 {
            return None;
        }
        let (run, start) = match self.run_at(self.cursor) {
            Some(run) => (run, self.cursor),
            None => {
                let (s, l) = self
                    .free
                    .range(self.cursor..)
                    .next()
                    .or_else(|| self.free.iter().next())
                    .map(|(s, l)| (*s, *l))?;
                ((s, l), s)
            }
        };
        let len = sectors.min(run.0 + run.1 - start);
        self.cut(run, start, len);
        Some((start, len))
    }

    /// Takes exactly `[start, start + len)`, which must be free (a placement asked for by
    /// position, `antsched_disk_offset`). The cursor moves past it if it lies ahead, so that
    /// the files after it follow it.
    pub fn reserve(&mut self, start: u64, len: u64) -> Result<(), NotFree> {
        let end = start.saturating_add(len);
        if len == 0 {
            if start > self.cursor && start < self.capacity {
                self.cursor = start;
            }
            return Ok(());
        }
        let err = NotFree { start, end };
        let run = self.run_at(start).ok_or(err)?;
        if run.0 + run.1 < end {
            return Err(err);
        }
        let cursor = self.cursor;
        self.cut(run, start, len);
        if self.cursor != 0 && self.cursor < cursor {
            self.cursor = cursor;
        }
        Ok(())
    }

    /// Gives `[start, start + len)` back, merging it with the free runs beside it.
    pub fn give_back(&mut self, start: u64, len: u64) {
        if len == 0 {
            return;
        }
        self.free_total += len;
        let (mut start, mut len) = (start, len);
        if let Some((&ps, &pl)) = self.free.range(..start).next_back() {
            if ps + pl == start {
                self.free.remove(&ps);
                start = ps;
                len += pl;
            }
        }
        if let Some(nl) = self.free.remove(&(start + len)) {
            len += nl;
        }
        self.free.insert(start, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_fit_places_one_after_another_and_wraps_to_space_given_back() {
        let mut f = FreeSpace::new(100);
        assert_eq!(f.take(30), Some((0, 30)));
        assert_eq!(f.take(30), Some((30, 30)));
        f.give_back(0, 30);
        // The cursor goes on past the last allocation before it looks behind.
        assert_eq!(f.take(50), Some((60, 40)), "up to the end of the run");
        assert_eq!(f.take(50), Some((0, 30)), "then round to the start");
        assert_eq!((f.free(), f.take(1)), (0, None));
        f.give_back(30, 30);
        f.give_back(0, 30);
        f.give_back(60, 40);
        assert_eq!((f.free(), f.free_runs()), (100, 1), "runs given back merge");
    }

    #[test]
    fn a_reservation_must_be_free_and_the_next_file_follows_it_only_if_ahead() {
        let mut f = FreeSpace::new(1000);
        f.reserve(500, 100).unwrap();
        assert_eq!(f.cursor(), 600);
        assert_eq!(
            f.reserve(550, 10),
            Err(NotFree {
                start: 550,
                end: 560
            })
        );
        assert_eq!(
            f.reserve(950, 100),
            Err(NotFree {
                start: 950,
                end: 1050
            })
        );
        f.reserve(100, 50).unwrap();
        assert_eq!(f.cursor(), 600, "a placement behind the cursor leaves it");
        assert_eq!(f.take(10), Some((600, 10)));
        assert_eq!(f.free(), 1000 - 160);
    }

    fn file(size: u64, extents: Option<Extents>) -> FileLayout {
        FileLayout {
            name: "f".into(),
            size,
            start: 1000,
            extents,
        }
    }

    #[test]
    fn a_contiguous_file_maps_linearly_and_splits_into_pieces() {
        let f = file(1 << 20, None);
        assert_eq!(f.sector_of(0), 1000);
        assert_eq!(f.sector_of(4096), 1008);
        let mut out = Vec::new();
        f.runs(0, 1 << 20, 128 * 1024, &mut out);
        assert_eq!(out.len(), 8);
        assert!(out.iter().all(|&(_, n)| n == 256));
        assert_eq!(out[1].0, 1256);
    }

    #[test]
    fn an_unbounded_piece_size_gives_one_run_per_extent() {
        let f = file(1 << 20, None);
        let mut out = Vec::new();
        f.runs(4096, 1 << 19, u64::MAX, &mut out);
        assert_eq!(out, vec![(1008, 1024)]);
    }

    #[test]
    fn extents_leave_gaps_and_cut_runs() {
        let e = Extents {
            extent: 64 * 1024,
            gap: 1 << 20,
        };
        let f = file(256 * 1024, Some(e));
        assert_eq!(f.sector_of(64 * 1024), 1000 + (64 * 1024 + (1 << 20)) / 512);
        assert_eq!(f.run_end(10), 64 * 1024);
        let mut out = Vec::new();
        f.runs(32 * 1024, 64 * 1024, 128 * 1024, &mut out);
        assert_eq!(out.len(), 2, "a read across an extent boundary is two runs");
        assert_eq!(f.span_sectors(), (4 * 64 * 1024 + 3 * (1 << 20)) / 512);
    }
}
