//! Pending requests in sector order, for a walk outward from the head: SPTF's when it holds
//! many ([`super::Sptf`]), and each age class of `as-rw-sptf`'s queue.
//!
//! A `BTreeMap<(u64, RequestId), _>` did this job, and among 4,096 requests its searches were
//! most of an SPTF decision: an insertion, a removal and the two range searches that start a
//! walk each descend three or four levels of nodes, comparing pairs at every step (some 700
//! of the 2,400 instructions of one decision of `cargo bench -p antsched-core --bench
//! dispatch_decision` at 4,096). Here the keys lie in sorted blocks of at most [`BLOCK`],
//! found by a binary search over the blocks' first keys, which sit in one array of their
//! own: a search is two binary searches over contiguous memory, an insertion or a removal
//! moves at most a block's entries, and a walk steps through arrays. A handful of requests
//! are one block: a sorted vector.

use crate::request::RequestId;

/// The most keys a block holds; a fuller one is split in two. Large enough that the blocks'
/// first keys of 4,096 requests fit a few cache lines, small enough that moving a block's keys
/// to make room costs less than a tree's rebalancing.
const BLOCK: usize = 64;

/// A request's place in the order.
pub(crate) type Key = (u64, RequestId);

/// Keys in order, each with a value, in blocks. Every block is non-empty and sorted, each
/// block's keys precede the next block's, and with two blocks or more `firsts[i]` is the key
/// of `blocks[i][0]` (with one, `firsts` is empty: an age class of `as-rw-sptf` is one block,
/// made and dropped with its window, and a second array to allocate and search was a tenth
/// of its cost).
#[derive(Debug)]
pub(crate) struct SectorIndex<V> {
    blocks: Vec<Vec<(Key, V)>>,
    firsts: Vec<Key>,
}

impl<V> Default for SectorIndex<V> {
    fn default() -> Self {
        Self {
            blocks: Vec::new(),
            firsts: Vec::new(),
        }
    }
}

impl<V: Copy> SectorIndex<V> {
    /// The block `key` belongs in: the last whose first key is at or below it (the first if
    /// none is).
    fn block_of(&self, key: Key) -> usize {
        if self.firsts.is_empty() {
            return 0;
        }
        self.firsts.partition_point(|&f| f <= key).saturating_sub(1)
    }

    /// Where `key` is or would go: its block and its index in the block ((0, 0) when empty).
    fn position(&self, key: Key) -> (usize, usize) {
        if self.blocks.is_empty() {
            return (0, 0);
        }
        let b = self.block_of(key);
        (b, self.blocks[b].partition_point(|e| e.0 < key))
    }

    /// Adds `key` (not already there) with `value`.
    pub(crate) fn insert(&mut self, key: Key, value: V) {
        if self.blocks.is_empty() {
            self.blocks.push(vec![(key, value)]);
            return;
        }
        let (b, i) = self.position(key);
        let block = &mut self.blocks[b];
        block.insert(i, (key, value));
        if let Some(first) = self.firsts.get_mut(b) {
            *first = block[0].0;
        }
        if block.len() > BLOCK {
            let upper = block.split_off(block.len() / 2);
            if self.firsts.is_empty() {
                self.firsts.push(self.blocks[0][0].0);
            }
            self.firsts.insert(b + 1, upper[0].0);
            self.blocks.insert(b + 1, upper);
        }
    }

    /// Removes `key` and returns its value, if it is there.
    pub(crate) fn remove(&mut self, key: &Key) -> Option<V> {
        if self.blocks.is_empty() {
            return None;
        }
        let key = *key;
        let b = self.block_of(key);
        let block = &mut self.blocks[b];
        let i = block.binary_search_by(|e| e.0.cmp(&key)).ok()?;
        let (_, value) = block.remove(i);
        if block.is_empty() {
            self.blocks.remove(b);
            if !self.firsts.is_empty() {
                self.firsts.remove(b);
            }
        } else if let Some(first) = self.firsts.get_mut(b) {
            *first = block[0].0;
        }
        if self.blocks.len() < 2 {
            self.firsts.clear();
        }
        Some(value)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Every key and its value, in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Key, V)> + '_ {
        self.blocks.iter().flatten().copied()
    }

    /// The keys and values whose sector lies in `[start, end)`, in order.
    pub(crate) fn range(&self, start: u64, end: u64) -> impl Iterator<Item = (Key, V)> + '_ {
        let (b, i) = self.position((start, RequestId(0)));
        self.blocks
            .get(b..)
            .unwrap_or_default()
            .iter()
            .flatten()
            .skip(i)
            .take_while(move |e| e.0 .0 < end)
            .copied()
    }

    /// The keys and values walked outward from `head`: the nearer of the next below and the
    /// next above first (above on a tie), each with its distance. A walk that stops once an
    /// estimator's lower bound at the distance reached passes its best looks at a few of
    /// thousands.
    pub(crate) fn outward(&self, head: u64) -> Outward<'_, V> {
        // Split at the first key at or above the head, in the block it belongs in.
        let (b, i) = self.position((head, RequestId(0)));
        let (down, up) = self
            .blocks
            .get(b)
            .map_or((&[][..], &[][..]), |block| block.split_at(i));
        Outward {
            blocks: &self.blocks,
            head,
            up,
            up_block: b,
            down,
            down_block: b,
        }
    }
}

/// [`SectorIndex::outward`]'s walk: two cursors moving apart from the head.
pub(crate) struct Outward<'a, V> {
    blocks: &'a [Vec<(Key, V)>],
    head: u64,
    /// The keys above not walked yet: the rest of block `up_block`, then the blocks after it.
    up: &'a [(Key, V)],
    up_block: usize,
    /// The keys below not walked yet: the start of block `down_block`, walked from its end,
    /// then the blocks before it.
    down: &'a [(Key, V)],
    down_block: usize,
}

impl<V: Copy> Iterator for Outward<'_, V> {
    type Item = (u64, Key, V);

    fn next(&mut self) -> Option<(u64, Key, V)> {
        // Blocks are never empty: one step onto the next block finds a key, if any is left.
        if self.up.is_empty() && self.up_block + 1 < self.blocks.len() {
            self.up_block += 1;
            self.up = &self.blocks[self.up_block];
        }
        if self.down.is_empty() && self.down_block > 0 {
            self.down_block -= 1;
            self.down = &self.blocks[self.down_block];
        }
        let d = self.down.last().map(|e| self.head - e.0 .0);
        let u = self.up.first().map(|e| e.0 .0 - self.head);
        // The nearer first, above on a tie.
        match (d, u) {
            (Some(d), u) if u.is_none_or(|u| d < u) => {
                let (&(k, v), rest) = self.down.split_last()?;
                self.down = rest;
                Some((d, k, v))
            }
            (_, Some(u)) => {
                let (&(k, v), rest) = self.up.split_first()?;
                self.up = rest;
                Some((u, k, v))
            }
            (_, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        /// Against a B-tree of the same keys and values: after any insertions and removals
        /// (sectors repeat, and enough keys to fill several blocks), the same entries in the
        /// same order, the walk outward from any head (nearer first, above on a tie), and the
        /// keys in a range of sectors.
        #[test]
        fn it_holds_and_walks_what_a_btree_does(
            ops in proptest::collection::vec((any::<bool>(), 0u64..2_000, 0u64..400), 1..1_500),
            heads in proptest::collection::vec(0u64..2_100, 1..5),
        ) {
            let mut index = SectorIndex::default();
            let mut tree: BTreeMap<Key, u64> = BTreeMap::new();
            for (n, (insert, sector, id)) in ops.into_iter().enumerate() {
                let key = (sector, RequestId(id));
                if insert && !tree.contains_key(&key) {
                    index.insert(key, n as u64);
                    tree.insert(key, n as u64);
                } else {
                    prop_assert_eq!(index.remove(&key), tree.remove(&key));
                }
            }
            prop_assert!(index.blocks.iter().all(|b| !b.is_empty() && b.len() <= BLOCK));
            if index.blocks.len() > 1 {
                prop_assert_eq!(index.firsts.len(), index.blocks.len());
                prop_assert!(index.blocks.iter().zip(&index.firsts).all(|(b, f)| b[0].0 == *f));
            } else {
                prop_assert!(index.firsts.is_empty());
            }
            prop_assert_eq!(index.is_empty(), tree.is_empty());
            prop_assert!(index.iter().eq(tree.iter().map(|(k, v)| (*k, *v))));
            for head in heads {
                let walked: Vec<(u64, Key, u64)> = index.outward(head).collect();
                let (below, above): (Vec<_>, Vec<_>) =
                    tree.iter().map(|(k, v)| (*k, *v)).partition(|(k, _)| k.0 < head);
                let (mut below, mut above) = (below.into_iter().rev().peekable(), above.into_iter().peekable());
                let mut expected = Vec::new();
                loop {
                    let d = below.peek().map(|(k, _)| head - k.0);
                    let u = above.peek().map(|(k, _)| k.0 - head);
                    let (dist, (k, v)) = match (d, u) {
                        (Some(d), Some(u)) if d < u => (d, below.next().unwrap()),
                        (Some(d), None) => (d, below.next().unwrap()),
                        (_, Some(u)) => (u, above.next().unwrap()),
                        (None, None) => break,
                    };
                    expected.push((dist, k, v));
                }
                prop_assert_eq!(walked, expected);
                // The keys from the head to a little past it, and from the start to the head.
                for (start, end) in [(head, head + 300), (0, head)] {
                    let ranged: Vec<(Key, u64)> = index.range(start, end).collect();
                    let expected: Vec<(Key, u64)> = tree
                        .range((start, RequestId(0))..(end, RequestId(0)))
                        .map(|(k, v)| (*k, *v))
                        .collect();
                    prop_assert_eq!(ranged, expected);
                }
            }
        }
    }
}
