//! Values kept by request number, where numbers are handed out in order and most leave soon.

use std::collections::VecDeque;

use antsched_core::RequestId;

/// A map from request number to value for numbers handed out in increasing order (each
/// inserted number above every number inserted before), most of which are removed soon after:
/// the requests in flight of a driver, or of a simulation. A slot per number from the oldest
/// still kept, so that a look-up is an index rather than a hash and a probe, and the slots
/// before the oldest kept are dropped as it leaves. The cost is a slot per number issued
/// since the oldest still kept, a few hundred where one request waits long (a scheduler's
/// age bound) while the others come and go.
#[derive(Debug)]
pub struct Numbered<V> {
    /// The number of `slots[0]`.
    first: u64,
    slots: VecDeque<Option<V>>,
    len: usize,
}

impl<V> Default for Numbered<V> {
    fn default() -> Self {
        Self {
            first: 0,
            slots: VecDeque::new(),
            len: 0,
        }
    }
}

impl<V> Numbered<V> {
    /// Keeps `v` for `id`, which must exceed every number inserted before.
    pub fn insert(&mut self, id: RequestId, v: V) {
        if self.slots.is_empty() {
            self.first = id.0;
        }
        assert!(
            id.0 >= self.first + self.slots.len() as u64,
            "request numbers are inserted in increasing order"
        );
        while self.first + (self.slots.len() as u64) < id.0 {
            self.slots.push_back(None);
        }
        self.slots.push_back(Some(v));
        self.len += 1;
    }

    fn index(&self, id: RequestId) -> Option<usize> {
        let k = id.0.checked_sub(self.first)?;
        (k < self.slots.len() as u64).then_some(k as usize)
    }

    pub fn get(&self, id: RequestId) -> Option<&V> {
        self.slots.get(self.index(id)?)?.as_ref()
    }

    pub fn get_mut(&mut self, id: RequestId) -> Option<&mut V> {
        let k = self.index(id)?;
        self.slots.get_mut(k)?.as_mut()
    }

    pub fn remove(&mut self, id: RequestId) -> Option<V> {
        let k = self.index(id)?;
        let v = self.slots[k].take()?;
        self.len -= 1;
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.first += 1;
        }
        Some(v)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every value kept, by increasing number.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.slots.iter().flatten()
    }

    /// Every number kept and its value, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = (RequestId, &V)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(k, v)| Some((RequestId(self.first + k as u64), v.as_ref()?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Against a B-tree: numbers inserted in order with gaps, removed in a scrambled order.
    #[test]
    fn answers_as_a_map_does() {
        let mut n = Numbered::default();
        let mut m = BTreeMap::new();
        let mut next = 5u64;
        for step in 0u64..2_000 {
            if step % 3 != 2 {
                next += 1 + step % 4;
                n.insert(RequestId(next), step);
                m.insert(next, step);
            } else if let Some(&k) = m.keys().nth((step as usize * 7) % m.len().max(1)) {
                assert_eq!(n.remove(RequestId(k)), m.remove(&k));
            }
            let probe = RequestId(next.saturating_sub(step % 9));
            assert_eq!(n.get(probe), m.get(&probe.0));
            assert_eq!(n.remove(RequestId(next + 1)), None);
            assert_eq!(n.len(), m.len());
            assert!(n
                .iter()
                .map(|(k, v)| (k.0, *v))
                .eq(m.iter().map(|(k, v)| (*k, *v))));
        }
    }
}
