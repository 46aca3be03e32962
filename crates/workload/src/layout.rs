//! Where files lie on the simulated disk.
//!
//! The paper's results depend on placement: two 1 GB files a seek apart, small files of one
//! directory near each other, a large file broken into regions that make FreeBSD's prefetch
//! back off (section 4.1). A file here is a start sector and, optionally, a pattern of extents
//! separated by gaps (`antsched_extent`, `antsched_extent_gap`); everything else follows.

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

#[cfg(test)]
mod tests {
    use super::*;

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
