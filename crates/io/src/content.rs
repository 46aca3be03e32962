//! The bytes of the files `antsched run` creates: a deterministic function of the file's seed
//! and the byte offset, so any range can be regenerated and compared with what was read.
//!
//! Each 512-byte sector holds 64 words of a splitmix64 stream seeded by the file seed and the
//! sector's index in the file. The checksum of a range ([`checksum`]) is FNV-1a over its
//! 64-bit words, and a read is correct when the checksum of the bytes read equals the checksum
//! of the bytes [`fill`] generates for that range; on a mismatch the reader compares the
//! bytes themselves to report where they differ.

const SECTOR: u64 = 512;

/// The seed of a file's content, from its name (FNV-1a).
pub fn seed_of(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fills `buf` with the content of the file seeded `seed` from byte `offset` (a multiple of
/// 512; `buf.len()` too).
pub fn fill(seed: u64, offset: u64, buf: &mut [u8]) {
    debug_assert!(offset % SECTOR == 0 && buf.len() as u64 % SECTOR == 0);
    let first = offset / SECTOR;
    for (k, sector) in buf.chunks_exact_mut(SECTOR as usize).enumerate() {
        let base = mix(seed ^ (first + k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for (w, word) in sector.chunks_exact_mut(8).enumerate() {
            word.copy_from_slice(&mix(base.wrapping_add(w as u64)).to_le_bytes());
        }
    }
}

/// FNV-1a over the little-endian 64-bit words of `data` (its length a multiple of 8).
pub fn checksum(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in data.chunks_exact(8) {
        h ^= u64::from_le_bytes(w.try_into().expect("8 bytes"));
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Checks `data`, read from byte `offset` of the file seeded `seed`. `Err` gives the offset of
/// the first byte that differs.
pub fn verify(seed: u64, offset: u64, data: &[u8], scratch: &mut Vec<u8>) -> Result<u64, u64> {
    scratch.resize(data.len(), 0);
    fill(seed, offset, scratch);
    let got = checksum(data);
    if got == checksum(scratch) {
        return Ok(got);
    }
    let at = data
        .iter()
        .zip(scratch.iter())
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    Err(offset + at as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_depends_on_file_and_offset_and_regenerates() {
        let mut a = vec![0u8; 1024];
        let mut b = vec![0u8; 1024];
        fill(seed_of("x"), 512, &mut a);
        fill(seed_of("x"), 512, &mut b);
        assert_eq!(a, b);
        let mut c = vec![0u8; 512];
        fill(seed_of("x"), 1024, &mut c);
        assert_eq!(
            &a[512..],
            &c[..],
            "a range is the same wherever it is generated from"
        );
        fill(seed_of("y"), 512, &mut b);
        assert_ne!(a, b);
        let mut s = Vec::new();
        assert!(verify(seed_of("x"), 512, &a, &mut s).is_ok());
        a[700] ^= 1;
        assert_eq!(verify(seed_of("x"), 512, &a, &mut s), Err(512 + 700));
    }
}
