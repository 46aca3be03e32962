//! Where each file's data lies on the emulated disk.
//!
//! The paper's results depend on placement (section 4: the files of one directory near each
//! other, two large files a seek apart), so the mount gives every regular file of the backing
//! tree a place before it serves anything:
//!
//! - **At mount time**, the tree is walked depth first in name order. In each directory its
//!   regular files are laid out first, one after another, each contiguous; then its
//!   subdirectories, each the same way. So the files of one directory sit side by side, as
//!   FFS keeps them in their directory's cylinder group, and a directory's subtree follows
//!   it. The first file starts at sector 0 (the outer, fastest zone), which is also where
//!   `antsched sim` puts the first file of a job file: a job file's files, created in one
//!   directory in name order, lie where the simulator assumes.
//!
//!   Name order is deterministic whatever the backing file system. A program that walks a
//!   directory (`grep -r`, `find`) reads its files in the order the directory lists them,
//!   which the mount passes through from the backing file system (hash order on ext4), so
//!   it visits the files of a directory in a scattered order within their region of the
//!   disk: near each other, not one after the other, much as FFS's scan in the paper mixed
//!   its data reads with reads of inode and directory blocks in the same cylinder group.
//!   (Laying files out in listing order instead makes a scan purely sequential, and the
//!   drive's read-ahead cache then serves two scans at once whatever the scheduler.)
//! - **While mounted**, a file that grows past its blocks (a new file, an append) gets the
//!   *next free extents*: from a cursor that moves forward through the free space (next fit,
//!   `antsched_workload::layout::FreeSpace`, the rule by which `antsched sim` places a job
//!   file's files, so that both put a file where the last one ended),
//!   extending the file's last extent in place when the cursor is right behind it. Growth is
//!   allocated in chunks (at least 64 KiB, and up to the file's current size, at most 16 MiB
//!   at a time), as file systems preallocate for a growing file, so that a file written
//!   sequentially stays mostly contiguous even while another grows beside it.
//! - Space is freed when a file's last name and last open handle are gone, and when it is
//!   truncated; freed space is found again by the cursor when it wraps around.
//!
//! Space is allocated in blocks of [`BLOCK`] bytes (the page size: what the kernel reads and
//! writes). Files are identified by their backing inode (device and inode number), so a
//! rename keeps a file's place and hard links share it.

use std::ffi::{CString, OsStr, OsString};
use std::fmt::Write as _;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use antsched_workload::layout::FreeSpace;
use rustc_hash::FxHashMap;

/// Allocation unit in bytes.
pub const BLOCK: u64 = 4096;
const SECTOR: u64 = 512;
const SECTORS_PER_BLOCK: u64 = BLOCK / SECTOR;
/// Smallest growth chunk, in blocks (64 KiB).
const MIN_GROW_BLOCKS: u64 = 16;
/// Largest growth chunk, in blocks (16 MiB).
const MAX_GROW_BLOCKS: u64 = 4096;

/// A backing file: (device, inode).
pub type FileKey = (u64, u64);

/// One contiguous piece of a file on the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Byte offset in the file (a multiple of [`BLOCK`]).
    pub offset: u64,
    /// First sector on the disk.
    pub sector: u64,
    /// Length in sectors (a multiple of 8).
    pub sectors: u64,
}

/// A file placed at mount time, for `--show-layout`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Path relative to the backing directory.
    pub path: PathBuf,
    pub size: u64,
    pub extents: Vec<Extent>,
}

/// The disk has no room left for a file's data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the emulated disk is full: {needed} more bytes wanted, {free} free")]
pub struct NoSpace {
    pub needed: u64,
    pub free: u64,
}

/// Every file's extents and the free space of the emulated disk.
#[derive(Debug)]
pub struct Layout {
    files: FxHashMap<FileKey, Vec<Extent>>,
    /// Free sectors and the next-fit cursor: the placement rule the simulator uses too.
    space: FreeSpace,
}

impl Layout {
    /// An empty disk of `capacity_sectors` (rounded down to whole blocks).
    pub fn new(capacity_sectors: u64) -> Layout {
        Layout {
            files: FxHashMap::default(),
            space: FreeSpace::new(capacity_sectors / SECTORS_PER_BLOCK * SECTORS_PER_BLOCK),
        }
    }

    /// Lays out every regular file under `root` (see the module documentation) on a disk of
    /// `capacity_sectors`. Symbolic links are not followed; files that cannot be listed are
    /// an error naming them.
    ///
    /// The walk goes one name at a time from the root's descriptor (`openat` with
    /// `O_NOFOLLOW`), as the file system does, never by path: a user who can write in
    /// BACKING and swaps a directory for a symbolic link while the tree is walked sends the
    /// walk nowhere (the entry is skipped), not to a directory outside BACKING.
    pub fn plan(root: &Path, capacity_sectors: u64) -> Result<(Layout, Vec<Placement>), PlanError> {
        let c = CString::new(root.as_os_str().as_bytes()).map_err(|_| PlanError::Io {
            path: root.to_path_buf(),
            source: std::io::Error::from_raw_os_error(libc::EINVAL),
        })?;
        // SAFETY: a valid C string; the result is a new descriptor or -1.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(PlanError::Io {
                path: root.to_path_buf(),
                source: std::io::Error::last_os_error(),
            });
        }
        // SAFETY: a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Layout::plan_at(&fd, root, capacity_sectors)
    }

    /// As [`plan`](Layout::plan), from a descriptor of the backing root (the one the file
    /// system serves, so that the tree laid out is the tree served even if its path is
    /// changed meanwhile); `root` names it in errors.
    pub fn plan_at(
        root_fd: &OwnedFd,
        root: &Path,
        capacity_sectors: u64,
    ) -> Result<(Layout, Vec<Placement>), PlanError> {
        let mut layout = Layout::new(capacity_sectors);
        let mut placed = Vec::new();
        layout.place_dir(root, root_fd, Path::new(""), &mut placed)?;
        Ok((layout, placed))
    }

    fn place_dir(
        &mut self,
        root: &Path,
        dir: &OwnedFd,
        rel: &Path,
        placed: &mut Vec<Placement>,
    ) -> Result<(), PlanError> {
        let io = |name: Option<&OsStr>, source: std::io::Error| PlanError::Io {
            path: match name {
                Some(n) => root.join(rel).join(n),
                None => root.join(rel),
            },
            source,
        };
        let mut entries: Vec<(OsString, libc::stat)> = Vec::new();
        // Listed through /proc/self/fd: this directory's inode, not a path.
        let listing = std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd()))
            .map_err(|e| io(None, e))?;
        for e in listing {
            let name = e.map_err(|e| io(None, e))?.file_name();
            let c = CString::new(name.as_bytes()).expect("no NUL in a file name");
            // SAFETY: an all-zero stat is a valid value to be overwritten.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: valid descriptor, C string and writable stat; AT_SYMLINK_NOFOLLOW:
            // a link is looked at, never followed out of the tree.
            let r = unsafe {
                libc::fstatat(
                    dir.as_raw_fd(),
                    c.as_ptr(),
                    &mut st,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            };
            if r != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ENOENT) {
                    continue; // removed since it was listed
                }
                return Err(io(Some(&name), e));
            }
            entries.push((name, st));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let is = |st: &libc::stat, fmt| st.st_mode & libc::S_IFMT == fmt;
        for (name, st) in entries.iter().filter(|(_, st)| is(st, libc::S_IFREG)) {
            let key = (st.st_dev, st.st_ino);
            if self.files.contains_key(&key) {
                continue; // a second hard link to a file already placed
            }
            let size = st.st_size as u64;
            self.ensure(key, size).map_err(|e| PlanError::TooLarge {
                path: rel.join(name),
                size,
                free: e.free,
                capacity: self.space.capacity() * SECTOR,
            })?;
            placed.push(Placement {
                path: rel.join(name),
                size,
                extents: self.extents(key).to_vec(),
            });
        }
        for (name, _) in entries.iter().filter(|(_, st)| is(st, libc::S_IFDIR)) {
            let c = CString::new(name.as_bytes()).expect("no NUL in a file name");
            // SAFETY: valid descriptor and C string.
            let sub = unsafe {
                libc::openat(
                    dir.as_raw_fd(),
                    c.as_ptr(),
                    libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                )
            };
            if sub < 0 {
                let e = std::io::Error::last_os_error();
                // No longer a directory (a link put in its place, or gone): not part of
                // the tree.
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)
                ) {
                    continue;
                }
                return Err(io(Some(name), e));
            }
            // SAFETY: a fresh descriptor we own.
            let sub = unsafe { OwnedFd::from_raw_fd(sub) };
            self.place_dir(root, &sub, &rel.join(name), placed)?;
        }
        Ok(())
    }

    /// Capacity in bytes.
    pub fn capacity_bytes(&self) -> u64 {
        self.space.capacity() * SECTOR
    }

    /// Free space in bytes.
    pub fn free_bytes(&self) -> u64 {
        self.space.free() * SECTOR
    }

    /// The extents of a file, in file order (empty for a file with no blocks yet).
    pub fn extents(&self, key: FileKey) -> &[Extent] {
        self.files.get(&key).map_or(&[], |v| v.as_slice())
    }

    fn allocated_blocks(&self, key: FileKey) -> u64 {
        self.extents(key)
            .iter()
            .map(|e| e.sectors / SECTORS_PER_BLOCK)
            .sum()
    }

    /// Makes sure bytes `[0, bytes)` of the file have blocks. At mount time the file gets
    /// exactly its size; a file that grows later gets a chunk (see the module documentation).
    pub fn ensure(&mut self, key: FileKey, bytes: u64) -> Result<(), NoSpace> {
        let want = bytes.div_ceil(BLOCK);
        let have = self.allocated_blocks(key);
        if want <= have {
            return Ok(());
        }
        let needed = want - have;
        let free_blocks = self.space.free() / SECTORS_PER_BLOCK;
        if needed > free_blocks {
            return Err(NoSpace {
                needed: needed * BLOCK,
                free: free_blocks * BLOCK,
            });
        }
        // Growth of a file that already has blocks is preallocated in chunks; a file placed
        // for the first time (at mount, or its first write) gets what it needs, at least the
        // minimum chunk once it is written to while mounted (`have > 0` or not, the same rule
        // keeps small files small: a chunk never exceeds the file's current size).
        let chunk = if have == 0 {
            needed
        } else {
            needed.max(have.clamp(MIN_GROW_BLOCKS, MAX_GROW_BLOCKS))
        }
        .min(free_blocks);
        let mut left = chunk;
        let mut offset = have * BLOCK;
        while left > 0 {
            let (start, len) = self
                .space
                .take(left * SECTORS_PER_BLOCK)
                .expect("free space was counted above");
            let ext = self.files.entry(key).or_default();
            match ext.last_mut() {
                Some(last) if last.sector + last.sectors == start => last.sectors += len,
                _ => ext.push(Extent {
                    offset,
                    sector: start,
                    sectors: len,
                }),
            }
            offset += len * SECTOR;
            left -= len / SECTORS_PER_BLOCK;
        }
        Ok(())
    }

    /// Frees every block of the file (its last name and handle are gone).
    pub fn release(&mut self, key: FileKey) {
        if let Some(ext) = self.files.remove(&key) {
            for e in ext {
                self.space.give_back(e.sector, e.sectors);
            }
        }
    }

    /// Frees the blocks past byte `bytes` of the file (it was truncated).
    pub fn truncate(&mut self, key: FileKey, bytes: u64) {
        let keep = bytes.div_ceil(BLOCK) * BLOCK;
        let Some(ext) = self.files.get_mut(&key) else {
            return;
        };
        let mut freed = Vec::new();
        ext.retain_mut(|e| {
            let end = e.offset + e.sectors * SECTOR;
            if e.offset >= keep {
                freed.push((e.sector, e.sectors));
                false
            } else {
                if end > keep {
                    let keep_sectors = (keep - e.offset) / SECTOR;
                    freed.push((e.sector + keep_sectors, e.sectors - keep_sectors));
                    e.sectors = keep_sectors;
                }
                true
            }
        });
        if ext.is_empty() {
            self.files.remove(&key);
        }
        for (s, l) in freed {
            self.space.give_back(s, l);
        }
    }

    /// The disk runs `(sector, sectors)` holding bytes `[offset, offset + len)` of the file,
    /// widened to whole sectors, in file order. The bytes must have blocks
    /// ([`ensure`](Self::ensure)).
    pub fn runs(&self, key: FileKey, offset: u64, len: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if len == 0 {
            return out;
        }
        let first = offset / SECTOR * SECTOR;
        let end = (offset + len).div_ceil(SECTOR) * SECTOR;
        for e in self.extents(key) {
            let e_end = e.offset + e.sectors * SECTOR;
            if e_end <= first || e.offset >= end {
                continue;
            }
            let a = first.max(e.offset);
            let b = end.min(e_end);
            out.push((e.sector + (a - e.offset) / SECTOR, (b - a) / SECTOR));
        }
        out
    }
}

/// Why the backing tree could not be laid out.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the backing tree does not fit on the emulated disk ({capacity} bytes): {path} is {size} bytes and {free} bytes are left for it; use a larger disk model or a smaller tree (a sparse file counts at its full size)")]
    TooLarge {
        path: PathBuf,
        size: u64,
        free: u64,
        capacity: u64,
    },
}

/// The layout as a table: one line per file, its extents as `sector+sectors`.
pub fn describe(placed: &[Placement]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12}  {:>10}  {:>12}  path (extents: start sector+sectors)",
        "first sector", "sectors", "bytes"
    );
    for p in placed {
        let first = p.extents.first().map_or(0, |e| e.sector);
        let sectors: u64 = p.extents.iter().map(|e| e.sectors).sum();
        let _ = write!(
            out,
            "{first:>12}  {sectors:>10}  {:>12}  {}",
            p.size,
            p.path.display()
        );
        if p.extents.len() > 1 {
            let parts: Vec<String> = p
                .extents
                .iter()
                .map(|e| format!("{}+{}", e.sector, e.sectors))
                .collect();
            let _ = write!(out, " ({})", parts.join(", "));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_of_a_directory_lie_together_in_name_order_before_its_subdirectories() {
        let root =
            std::env::temp_dir().join(format!("antsched-fuse-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("a/deep")).unwrap();
        std::fs::create_dir_all(root.join("b")).unwrap();
        std::fs::write(root.join("z.txt"), vec![1u8; 5000]).unwrap();
        std::fs::write(root.join("y.txt"), vec![1u8; 100]).unwrap();
        std::fs::write(root.join("a/1"), vec![1u8; 4096]).unwrap();
        std::fs::write(root.join("a/deep/2"), vec![1u8; 1]).unwrap();
        std::fs::write(root.join("b/3"), b"").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("link")).unwrap();
        let (layout, placed) = Layout::plan(&root, 1 << 20).unwrap();
        let order: Vec<String> = placed
            .iter()
            .map(|p| p.path.display().to_string())
            .collect();
        assert_eq!(order, ["y.txt", "z.txt", "a/1", "a/deep/2", "b/3"]);
        let starts: Vec<u64> = placed
            .iter()
            .map(|p| p.extents.first().map_or(u64::MAX, |e| e.sector))
            .collect();
        // y: 1 block at 0; z: 2 blocks at 8; a/1: 1 block at 24; a/deep/2 at 32; b/3 empty.
        assert_eq!(&starts[..4], &[0, 8, 24, 32]);
        assert!(placed[4].extents.is_empty(), "an empty file has no blocks");
        assert_eq!(layout.free_bytes(), layout.capacity_bytes() - 5 * BLOCK);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn runs_cover_whole_sectors_and_cross_extents() {
        let mut l = Layout::new(1000);
        let a = (1, 1);
        let b = (1, 2);
        l.ensure(a, 4096).unwrap(); // sectors 0..8
        l.ensure(b, 4096).unwrap(); // 8..16
        l.ensure(a, 3 * 4096).unwrap(); // grows by a chunk of 16 blocks at 16
        assert_eq!(
            l.extents(a),
            &[
                Extent {
                    offset: 0,
                    sector: 0,
                    sectors: 8
                },
                Extent {
                    offset: 4096,
                    sector: 16,
                    sectors: 128
                },
            ]
        );
        assert_eq!(l.runs(a, 100, 10), vec![(0, 1)]);
        assert_eq!(l.runs(a, 4000, 200), vec![(7, 1), (16, 1)]);
        assert_eq!(l.runs(a, 0, 0), vec![]);
        // The next growth of b continues at the cursor, right after a's chunk.
        l.ensure(b, 8192).unwrap();
        assert_eq!(l.extents(b)[1].sector, 144);
    }

    #[test]
    fn growth_extends_in_place_and_space_comes_back() {
        let mut l = Layout::new(10_000);
        let a = (0, 1);
        l.ensure(a, 4096).unwrap();
        l.ensure(a, 8192).unwrap();
        assert_eq!(l.extents(a).len(), 1, "the cursor was right behind it");
        let before = l.free_bytes();
        l.truncate(a, 1);
        assert_eq!(l.extents(a).iter().map(|e| e.sectors).sum::<u64>(), 8);
        assert!(l.free_bytes() > before);
        l.release(a);
        assert_eq!(l.free_bytes(), l.capacity_bytes());
        assert_eq!(l.space.free_runs(), 1, "freed runs merge");
    }

    #[test]
    fn a_full_disk_says_so_and_the_cursor_wraps_to_freed_space() {
        let mut l = Layout::new(64); // 8 blocks
        let (a, b, c) = ((0, 1), (0, 2), (0, 3));
        l.ensure(a, 4 * 4096).unwrap();
        l.ensure(b, 4 * 4096).unwrap();
        let e = l.ensure(c, 4096).unwrap_err();
        assert_eq!((e.needed, e.free), (4096, 0));
        l.release(a);
        l.ensure(c, 4096).unwrap();
        assert_eq!(l.extents(c)[0].sector, 0, "wrapped to the space a left");
    }
}
