//! The values' memory: page-sized slots in one anonymous mapping, so that a released value's
//! page really goes back to the kernel (`madvise(MADV_DONTNEED)`), and the group's usage follows
//! the cache.
//!
//! Why not a `Vec<u8>` of 4 KiB per value with `malloc_trim(0)` after each release, as
//! `examples/query-cache` does: glibc serves 4 KiB from its heap as a chunk of 4,112 bytes
//! (the size and a header), so a freed value spans parts of two pages and no whole page of
//! its own, and `malloc_trim` (which madvises only whole free pages inside free chunks) returns
//! nothing of a value freed between two live ones. A cache that releases a few MB of scattered
//! values would keep every page. Here a value is exactly one page.

use std::ptr::NonNull;

/// A value's size: one page.
pub const VALUE_BYTES: usize = 4096;

pub struct Slab {
    base: NonNull<u8>,
    capacity: u32,
    /// Slots never used yet start here.
    fresh: u32,
    /// Slots given back, whose pages are either returned (released) or still resident
    /// (evicted to make room, about to be reused).
    free: Vec<u32>,
}

// SAFETY: the mapping is owned by the Slab and only reached through &self / &mut self.
unsafe impl Send for Slab {}

impl Slab {
    /// Reserves `capacity` slots of address space (no memory until a slot is written).
    pub fn new(capacity: u32) -> anyhow::Result<Self> {
        anyhow::ensure!(capacity > 0, "a slab needs at least one slot");
        let len = capacity as usize * VALUE_BYTES;
        // SAFETY: an anonymous private mapping; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            anyhow::bail!(
                "cannot reserve {} MiB of address space for the values: {}",
                len >> 20,
                std::io::Error::last_os_error()
            );
        }
        Ok(Self {
            base: NonNull::new(p.cast()).expect("mmap does not return null"),
            capacity,
            fresh: 0,
            free: Vec::new(),
        })
    }

    /// A slot to write a value into, or None when all are held.
    pub fn alloc(&mut self) -> Option<u32> {
        if let Some(s) = self.free.pop() {
            return Some(s);
        }
        (self.fresh < self.capacity).then(|| {
            self.fresh += 1;
            self.fresh - 1
        })
    }

    /// Gives a slot back and keeps its page: it is about to be reused (an eviction to make
    /// room for a new value).
    pub fn recycle(&mut self, slot: u32) {
        self.free.push(slot);
    }

    /// Gives a slot back and returns its page to the kernel.
    pub fn release(&mut self, slot: u32) {
        // SAFETY: the slot lies inside the mapping; DONTNEED on private anonymous memory
        // zeroes it, and nothing refers to it any more.
        unsafe {
            libc::madvise(
                self.base.as_ptr().add(slot as usize * VALUE_BYTES).cast(),
                VALUE_BYTES,
                libc::MADV_DONTNEED,
            );
        }
        self.free.push(slot);
    }

    pub fn get(&self, slot: u32) -> &[u8] {
        assert!(slot < self.fresh);
        // SAFETY: in bounds (checked); the mapping lives as long as self.
        unsafe {
            std::slice::from_raw_parts(
                self.base.as_ptr().add(slot as usize * VALUE_BYTES),
                VALUE_BYTES,
            )
        }
    }

    pub fn get_mut(&mut self, slot: u32) -> &mut [u8] {
        assert!(slot < self.fresh);
        // SAFETY: in bounds (checked); &mut self makes it exclusive.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.base.as_ptr().add(slot as usize * VALUE_BYTES),
                VALUE_BYTES,
            )
        }
    }
}

impl Drop for Slab {
    fn drop(&mut self) {
        // SAFETY: the mapping made in new, unmapped once.
        unsafe {
            libc::munmap(
                self.base.as_ptr().cast(),
                self.capacity as usize * VALUE_BYTES,
            );
        }
    }
}

/// The value of `key`, the same every time it is made: what a miss regenerates.
pub fn fill(key: u32, out: &mut [u8]) {
    let mut z = u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    for chunk in out.chunks_exact_mut(8) {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = z;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        chunk.copy_from_slice(&(x ^ (x >> 31)).to_ne_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rss_kb() -> u64 {
        let s = std::fs::read_to_string("/proc/self/status").unwrap();
        s.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    }

    /// Written slots are resident; released ones really go back (RSS falls by their pages,
    /// and a released slot reads as zeros); a recycled one keeps its page.
    #[test]
    fn released_slots_return_their_pages() {
        let n = 8192u32; // 32 MiB
        let mut s = Slab::new(n).unwrap();
        let before = rss_kb();
        let slots: Vec<u32> = (0..n).map(|_| s.alloc().unwrap()).collect();
        assert_eq!(s.alloc(), None);
        for &k in &slots {
            fill(k, s.get_mut(k));
        }
        let full = rss_kb();
        assert!(full >= before + 30 * 1024, "{before} -> {full} kB");
        let mut v = vec![0; VALUE_BYTES];
        fill(5, &mut v);
        assert_eq!(s.get(5), &v[..]);
        // Every other slot released: no two neighbours free, as a cache's scattered releases.
        for &k in slots.iter().step_by(2) {
            s.release(k);
        }
        let after = rss_kb();
        assert!(full - after >= 15 * 1024, "{full} -> {after} kB");
        assert!(s.get(0).iter().all(|&b| b == 0));
        s.recycle(1);
        assert!(s.alloc().is_some());
    }

    #[test]
    fn a_value_is_a_function_of_its_key() {
        let (mut a, mut b) = (vec![0; VALUE_BYTES], vec![0; VALUE_BYTES]);
        fill(7, &mut a);
        fill(7, &mut b);
        assert_eq!(a, b);
        fill(8, &mut b);
        assert_ne!(a, b);
    }
}
