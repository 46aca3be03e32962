//! The candidate age from the multi-gen LRU (MGLRU), where the kernel has it.
//!
//! With MGLRU (Linux 6.1 and later, `/sys/kernel/mm/lru_gen/enabled`), every memory cgroup's
//! pages sit in a few generations per node, and the kernel evicts from the oldest. Its debugfs
//! file `/sys/kernel/debug/lru_gen` prints each generation's age in milliseconds
//! (`Documentation/admin-guide/mm/multigen_lru.rst`):
//!
//! ```text
//! memcg  MEMCG_ID  MEMCG_PATH
//!   node  NODE_ID
//!     MIN_GEN_NR  AGE_IN_MS  NR_ANON_PAGES  NR_FILE_PAGES
//!     ...
//!     MAX_GEN_NR  AGE_IN_MS  NR_ANON_PAGES  NR_FILE_PAGES
//! ```
//!
//! The age of the oldest generation that holds pages reclaim can take is then the age of the
//! page the kernel would evict next: the candidate age the severity needs (Eq. 4.1), measured
//! by the kernel rather than estimated from the reclaim rate as the turnover estimate does.
//! File pages only where there is no swap (anonymous pages cannot be evicted then), both with
//! swap. A domain is a memory cgroup and its subtree: its candidate is the oldest such
//! generation over every memcg at or under its path and over every node, since reclaim of a
//! group walks its children.
//!
//! The development machine has no MGLRU (`docs/memd.md`): this is tested on the documented
//! format (`fixtures/lru_gen`), and the daemon uses it only where the kernel offers it, saying
//! so in every record's `estimator`.

use crate::kernel::{ParseError, Source};

/// One generation of one memcg on one node.
#[derive(Clone, Debug, PartialEq)]
pub struct Generation {
    /// The memcg's path, as the file prints it (`/` for the root).
    pub memcg: String,
    pub node: u32,
    pub gen: u64,
    pub age_ms: u64,
    pub anon_pages: u64,
    pub file_pages: u64,
}

/// Parses `/sys/kernel/debug/lru_gen` (the read-only format; the `-` lines of the verbose
/// format's per-generation statistics are skipped).
pub fn parse_lru_gen(text: &str) -> Result<Vec<Generation>, ParseError> {
    let mut out = Vec::new();
    let mut memcg: Option<String> = None;
    let mut node: Option<u32> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let bad = |why: &str| ParseError::Line {
            file: Source::LruGen,
            line: i + 1,
            text: raw.chars().take(200).collect(),
            why: why.to_string(),
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[0] {
            "memcg" => {
                // `memcg ID PATH`; the root's path prints as `/`.
                if words.len() < 2 || words[1].parse::<u64>().is_err() {
                    return Err(bad("expected `memcg ID PATH`"));
                }
                memcg = Some(words.get(2).map_or("/".to_string(), |p| p.to_string()));
                node = None;
            }
            "node" => {
                let id = words
                    .get(1)
                    .and_then(|w| w.parse().ok())
                    .ok_or_else(|| bad("expected `node ID`"))?;
                if memcg.is_none() {
                    return Err(bad("a node before any memcg"));
                }
                node = Some(id);
            }
            w if w.starts_with('-') || w.starts_with('+') => {} // verbose statistics
            _ => {
                let nums: Option<Vec<u64>> = words.iter().map(|w| w.parse().ok()).collect();
                let Some(nums) = nums.filter(|n| n.len() == 4) else {
                    return Err(bad("expected `GEN AGE_IN_MS NR_ANON_PAGES NR_FILE_PAGES`"));
                };
                let (Some(m), Some(n)) = (&memcg, node) else {
                    return Err(bad("a generation before its memcg and node"));
                };
                out.push(Generation {
                    memcg: m.clone(),
                    node: n,
                    gen: nums[0],
                    age_ms: nums[1],
                    anon_pages: nums[2],
                    file_pages: nums[3],
                });
            }
        }
    }
    Ok(out)
}

/// The candidate age of the domain rooted at memcg path `domain` (`/` for the machine), s:
/// the age of the oldest generation, over the domain's memcgs and every node, that holds
/// pages reclaim can take (file pages; anonymous ones too with `swap`). None when the domain
/// has no such pages (nothing to evict: the severity treats it as infinitely old).
pub fn candidate_age_s(gens: &[Generation], domain: &str, swap: bool) -> Option<f64> {
    let under = |m: &str| {
        domain == "/"
            || m == domain
            || m.strip_prefix(domain)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    gens.iter()
        .filter(|g| under(&g.memcg))
        .filter(|g| g.file_pages > 0 || (swap && g.anon_pages > 0))
        .map(|g| g.age_ms)
        .max()
        .map(|ms| ms as f64 / 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LRU_GEN: &str = include_str!("../fixtures/lru_gen");

    /// The documented format parses, generation by generation, with its memcg and node.
    #[test]
    fn the_documented_format_parses() {
        let g = parse_lru_gen(LRU_GEN).unwrap();
        assert_eq!(g.len(), 9);
        assert_eq!(
            g[0],
            Generation {
                memcg: "/".into(),
                node: 0,
                gen: 12,
                age_ms: 95_120,
                anon_pages: 3_072,
                file_pages: 40_960,
            }
        );
        assert_eq!(g[4].memcg, "/antsched/run-42");
    }

    /// The candidate is the oldest generation with evictable pages: file pages without swap,
    /// anonymous ones too with it; a group's own subtree only.
    #[test]
    fn the_candidate_is_the_oldest_generation_with_evictable_pages() {
        let g = parse_lru_gen(LRU_GEN).unwrap();
        // The machine: the root's oldest generation with file pages (node 1's gen 11, 212 s).
        assert_eq!(candidate_age_s(&g, "/", false), Some(212.0));
        // A group: its own generations only (its oldest with file pages is 31.5 s; the one
        // at 48 s holds anonymous pages only, evictable only with swap).
        assert_eq!(candidate_age_s(&g, "/antsched/run-42", false), Some(31.5));
        assert_eq!(candidate_age_s(&g, "/antsched/run-42", true), Some(48.0));
        // A prefix that is not a parent does not count.
        assert_eq!(candidate_age_s(&g, "/antsched/run-4", false), None);
        assert_eq!(candidate_age_s(&g, "/antsched", false), Some(31.5));
    }

    /// Bad lines name their line; nothing panics on garbage.
    #[test]
    fn bad_lines_are_errors_with_their_line() {
        let e = parse_lru_gen("memcg 1 /\n  node 0\n    1 2 3\n").unwrap_err();
        assert!(e.to_string().contains("line 3"), "{e}");
        let e = parse_lru_gen("    1 2 3 4\n").unwrap_err();
        assert!(e.to_string().contains("before its memcg"), "{e}");
        for cut in 0..LRU_GEN.len() {
            let _ = parse_lru_gen(&LRU_GEN[..cut]);
        }
        let _ = parse_lru_gen("memcg\nnode\n\u{0}\n- - -\n");
    }
}
