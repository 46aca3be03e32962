//! The kernel's page replacement of chapter 5 as a deterministic model: per-process age bins
//! chained across processes, weights as chain shifts, priority classes, and shared, clean and
//! unmapped pages.
//!
//! # The structure
//!
//! Every resident page is on exactly one *bin list*. A bin list belongs to a *bin set* and has
//! an index k in `0..bins`; a set is either one process's dirty pages, one process's clean
//! pages, or the *unmapped* pages of one nice shift (dirty or clean). A page on bin k is about
//! `s_min * 2^k` old (section 5.1.1): no timestamp is kept per page, its list says its age.
//!
//! Each set has a shift: the process's [`MemNice::shift`], plus `clean_shift` for the clean
//! set. Bin k of a set with shift s is attached to *chain* k + s; S_min * 2^(k + s) is the
//! page's scaled age, and the scaled age of the page [`Replacement::evict`] would take next is
//! S_paging, the severity's input (section 5.1.2). Chains are numbered internally from 0 by
//! adding [`SHIFT_LIMIT`] so that the most negative shift lands on chain 0.
//!
//! Lists are intrusive doubly-linked lists over a `Vec` of page slots (`prev`/`next` are
//! `u32` page ids, `NIL` ends a list), so that moving a page between bins is O(1) and nothing
//! is allocated after the slots have grown to the working set. A chain is an intrusive ring of
//! its *non-empty* lists, with a page count, so the candidate is found in O(chains).
//!
//! # Order within a chain (our choice; the thesis leaves it open)
//!
//! The thesis walks chains from the highest index down and "traverses bins in the chain"
//! (section 5.1.1). We take the oldest-entered page (the head) of the first list of the
//! highest non-empty chain, and after each eviction move that list to the back of its chain:
//! round-robin over the processes whose scaled ages tie, FIFO within each bin. Within one bin
//! the FIFO order is the order pages entered the bin, which is the LRU order to the
//! resolution the scans give. Lists join a chain's ring at its back when they become
//! non-empty or are re-attached by a re-nice. Every step is a function of the call sequence
//! alone: the model is deterministic.
//!
//! # Scans
//!
//! Bin k is scanned every `s_min * 2^k` (section 5.1.1), on the grid of multiples of that
//! period from time 0, so that when bin k is due every lower bin is due too. The scans due at
//! one instant run as one *round*, highest bin first; each page is looked at once per round.
//! A page that a round moves goes to the back of a list, so the pages that entered a list in
//! this round are its tail: a list counts them, and its scan stops before them (a page
//! referenced on bin 3 and moved to bin 0 is not aged again when bin 0 is scanned after). No
//! mark is kept per page, so a scan reads each page it ages once and no other.
//!
//! # Approximations (where the thesis leaves the detail open)
//!
//! - A shared page is listed once, under the mapping whose scaled age is the smallest (ties:
//!   the lowest process id), and is scanned on that mapping's schedule; its other mappings
//!   are aged when it is scanned. A re-nice of another mapper, or a reference by another
//!   mapper, is seen at that scan (or at the next `map_shared`/`unmap` of the page), not at
//!   once: re-nicing stays 2 B operations, and `reference` O(1).
//! - Eviction trusts the bins: the candidate is not re-checked for a reference bit set since
//!   its last scan (ages are right to a factor of 2 either way), so that `candidate` is
//!   exactly what `evict` takes.
//! - Classes are disjoint for pages of the same kind. Clean pages sit `clean_shift` chains
//!   further, so adjacent classes overlap by that many chains across kinds: with the defaults
//!   a clean High page (nice -14) in its last bin ties with a dirty Normal page in bin 0, and
//!   a clean Normal page in bin 9 with a dirty Low page (nice +14) in bin 0.
//! - Unmapped pages keep the nice shift they were given when unmapped; re-nicing the
//!   unmapper later does not move them (it may have exited).
//!
//! # Costs
//!
//! [`Replacement::reference`] is O(1) for a page with one mapping (and for the mapping that
//! last referenced a shared page: mappings are kept most-recently-referenced first), allocates
//! nothing, and touches one page slot (a page's first mapping is stored in its slot; a shared
//! page's others in a table of their own). A scan costs O(pages on the scanned
//! bins + their mappings) plus O(bin sets) to find the lists. Re-nicing is 2 B list
//! re-attachments. [`Replacement::process_exited`] walks every page slot (it is rare).

use antsched_core::Nanos;
use serde::{Deserialize, Serialize};

use crate::nice::{MemNice, PriorityClass};

/// A resident page: a dense index into the model's page slots, reused after release or
/// eviction.
pub type PageId = u32;
/// A process: dense small integers chosen by the driver.
pub type ProcId = u32;

/// The owner of an unmapped page whose unmapper has exited: nobody is charged for it.
pub const NO_PROC: ProcId = u32::MAX;

/// The largest shift a nice value can give either way: weights span 2^-15..=2^15 (section
/// 5.1.2). Chains are numbered from the most negative shift.
pub const SHIFT_LIMIT: i32 = 15;

/// The end of an intrusive list.
const NIL: u32 = u32::MAX;
/// Unmapped bin sets: one per shift in -15..=15, dirty and clean.
const UNMAPPED_SETS: u32 = 2 * (2 * SHIFT_LIMIT as u32 + 1);
/// The most bins a configuration may ask for: the scan period of the last bin must fit in a
/// u64 of nanoseconds, and the round mask is a u64.
pub const MAX_BINS: u32 = 32;

/// The replacement model's tunables; the defaults are the thesis's.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReplacementConfig {
    /// The width of the first bin and the scan period of bin 0, in seconds. 5 s (section
    /// 5.1.1).
    pub s_min: f64,
    /// Bins per set, B. 10: 5 s to about an hour (section 5.1.1).
    pub bins: u32,
    /// How many chains further clean pages sit: their ages count 2^clean_shift times (section
    /// 5.2 (a)). 1.
    pub clean_shift: u32,
}

impl Default for ReplacementConfig {
    fn default() -> Self {
        Self {
            s_min: 5.0,
            bins: crate::nice::BINS,
            clean_shift: 1,
        }
    }
}

impl ReplacementConfig {
    /// Checks every tunable; the message names the key.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.s_min.is_finite() && self.s_min * 1e9 >= 1.0) {
            return Err(format!(
                "s_min = {}: must be a positive number of seconds, at least 1 ns",
                self.s_min
            ));
        }
        if !(1..=MAX_BINS).contains(&self.bins) {
            return Err(format!("bins = {}: must be in 1..={MAX_BINS}", self.bins));
        }
        if self.clean_shift > 16 {
            return Err(format!(
                "clean_shift = {}: must be at most 16",
                self.clean_shift
            ));
        }
        let p0 = (self.s_min * 1e9).round();
        if p0 * 2f64.powi(self.bins as i32 - 1) > 2f64.powi(62) {
            return Err(format!(
                "s_min = {} with {} bins: the last bin's scan period overflows",
                self.s_min, self.bins
            ));
        }
        Ok(())
    }
}

/// A page taken by [`Replacement::evict`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Victim {
    /// Its id, already released: the driver may see it again from the next `alloc`.
    pub page: PageId,
    /// Whose it was ([`NO_PROC`] for an unmapped page whose unmapper has exited).
    pub owner: ProcId,
    /// Whether the driver must write it out first.
    pub dirty: bool,
    /// Its scaled age, S_min * 2^chain: the S_paging of this eviction.
    pub scaled_age_s: f64,
}

#[derive(Clone, Copy, Debug)]
struct Page {
    prev: u32,
    next: u32,
    /// The bin list it is on; `NIL` for a free slot (whose `next` links the free slots).
    list: u32,
    /// Its first mapping; `NIL` for an unmapped page.
    maps: u32,
    owner: ProcId,
    /// Storage for one of its mappings (id `HOME | page`), free while `proc` is `NO_PROC`.
    /// A page's first mapping is kept here, beside the page, so that a scan or a reference
    /// of a page with one mapping (nearly every page) reads one slot, not a slot and then a
    /// mapping elsewhere; further mappings of a shared page go to `Replacement::maps`.
    home: Mapping,
    /// For an unmapped page: its nice shift + SHIFT_LIMIT.
    uset: u8,
    dirty: bool,
    /// The reference bit of an unmapped page (the kernel touched it on someone's behalf).
    kref: bool,
}

const FREE_PAGE: Page = Page {
    prev: NIL,
    next: NIL,
    list: NIL,
    maps: NIL,
    owner: NO_PROC,
    home: FREE_MAP,
    uset: 0,
    dirty: false,
    kref: false,
};

/// A mapping id with this bit set is the `home` of page `id & !HOME`.
const HOME: u32 = 1 << 31;

const FREE_MAP: Mapping = Mapping {
    proc: NO_PROC,
    next: NIL,
    bin: 0,
    referenced: false,
};

/// One virtual mapping of a page: ages are kept per mapping (section 5.1.4).
#[derive(Clone, Copy, Debug)]
struct Mapping {
    proc: ProcId,
    /// The next mapping of the same page (or the next free mapping).
    next: u32,
    /// The mapping's own age bin.
    bin: u8,
    referenced: bool,
}

#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
    len: u32,
    /// Neighbours in the chain's ring of non-empty lists.
    ring_prev: u32,
    ring_next: u32,
    /// The chain it is attached to (bin + set shift + SHIFT_LIMIT).
    chain: u32,
    bin: u8,
    /// How many pages entered it (at its back) in round `entered_round`.
    entered: u32,
    entered_round: u64,
}

#[derive(Clone, Copy, Debug)]
struct Chain {
    /// The first and last non-empty list attached.
    head: u32,
    tail: u32,
    pages: u64,
}

#[derive(Clone, Copy, Debug)]
struct Proc {
    present: bool,
    nice: MemNice,
    shift: i32,
    /// Pages whose owner it is.
    owned: usize,
}

/// The age-bin page replacement of chapter 5. See the module documentation.
#[derive(Clone, Debug)]
pub struct Replacement {
    cfg: ReplacementConfig,
    /// Scan period of each bin, ns.
    period: Vec<Nanos>,
    /// When each bin is next scanned.
    next_due: Vec<Nanos>,
    pages: Vec<Page>,
    free_page: u32,
    resident: usize,
    maps: Vec<Mapping>,
    free_map: u32,
    /// `set * bins + bin`.
    lists: Vec<List>,
    /// Each set's shift, including `clean_shift` for clean sets.
    set_shift: Vec<i32>,
    chains: Vec<Chain>,
    /// The highest chain holding pages (`NIL` when none does): the candidate's chain, asked
    /// for at every step of a driver that prices memory by it.
    top: u32,
    /// Pages on bin index k, over all sets: empty bins are not scanned.
    bin_pages: Vec<u64>,
    procs: Vec<Proc>,
    /// Scan rounds so far; pages moved outside a scan count under the last round, which has
    /// ended.
    round: u64,
    /// The last round that scanned the last bin changed nothing and nothing happened since:
    /// with the lower bins empty, no scan can change anything until the next call.
    quiet: bool,
}

#[inline]
fn ix(x: u32) -> usize {
    x as usize
}

impl Replacement {
    /// An empty model. Panics if the configuration is invalid
    /// ([`ReplacementConfig::validate`]).
    pub fn new(cfg: ReplacementConfig) -> Self {
        if let Err(e) = cfg.validate() {
            panic!("invalid replacement configuration: {e}");
        }
        let p0 = (cfg.s_min * 1e9).round() as Nanos;
        let period: Vec<Nanos> = (0..cfg.bins).map(|k| p0 << k).collect();
        let n_chains = cfg.bins + 2 * SHIFT_LIMIT as u32 + cfg.clean_shift;
        let mut r = Self {
            cfg,
            next_due: period.clone(),
            period,
            pages: Vec::new(),
            free_page: NIL,
            resident: 0,
            maps: Vec::new(),
            free_map: NIL,
            lists: Vec::new(),
            set_shift: Vec::new(),
            chains: vec![
                Chain {
                    head: NIL,
                    tail: NIL,
                    pages: 0,
                };
                ix(n_chains)
            ],
            top: NIL,
            bin_pages: vec![0; ix(cfg.bins)],
            procs: Vec::new(),
            round: 0,
            quiet: false,
        };
        // Section 5.1.4: owner-less pages get sets of their own, niced by the unmapper's nice
        // + 1. The nice of an unmapped page is fixed when it is unmapped (its unmapper may
        // exit), so these sets are keyed by shift, and never re-attached.
        for u in -SHIFT_LIMIT..=SHIFT_LIMIT {
            r.add_set(u);
            r.add_set(u + cfg.clean_shift as i32);
        }
        r
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &ReplacementConfig {
        &self.cfg
    }

    fn add_set(&mut self, shift: i32) {
        let set = self.set_shift.len() as u32;
        self.set_shift.push(shift);
        for b in 0..self.cfg.bins {
            let chain = self.chain_for(b, shift);
            debug_assert_eq!(self.lists.len(), ix(set * self.cfg.bins + b));
            self.lists.push(List {
                head: NIL,
                tail: NIL,
                len: 0,
                ring_prev: NIL,
                ring_next: NIL,
                chain,
                bin: b as u8,
                entered: 0,
                entered_round: 0,
            });
        }
    }

    #[inline]
    fn chain_for(&self, bin: u32, shift: i32) -> u32 {
        (bin as i32 + shift + SHIFT_LIMIT) as u32
    }

    #[inline]
    fn list_id(&self, set: u32, bin: u32) -> u32 {
        set * self.cfg.bins + bin
    }

    #[inline]
    fn proc_set(proc: ProcId, clean: bool) -> u32 {
        UNMAPPED_SETS + 2 * proc + clean as u32
    }

    #[inline]
    fn unmapped_set(uset: u8, clean: bool) -> u32 {
        2 * uset as u32 + clean as u32
    }

    fn scaled_age_of_chain(&self, chain: u32) -> f64 {
        self.cfg.s_min * 2f64.powi(chain as i32 - SHIFT_LIMIT)
    }

    // ---- processes -----------------------------------------------------------------------

    /// Makes room for `proc` and marks it present (at nice 0 if it was not).
    fn ensure_proc(&mut self, proc: ProcId) {
        assert!(proc != NO_PROC, "process id {proc} is reserved");
        while self.procs.len() <= ix(proc) {
            self.procs.push(Proc {
                present: false,
                nice: MemNice::NORMAL,
                shift: 0,
                owned: 0,
            });
            self.add_set(0);
            self.add_set(self.cfg.clean_shift as i32);
        }
        if !self.procs[ix(proc)].present {
            self.procs[ix(proc)].present = true;
            self.attach(proc, MemNice::NORMAL);
        }
    }

    /// Sets `proc`'s memory nice value, adding the process if it is new.
    ///
    /// Section 5.1.2: scaling every page age of a process by its weight W is the same, with
    /// bins a factor of 2 apart, as attaching its bins log2 W chains further. That is 2 B list
    /// re-attachments (dirty and clean sets), whatever the number of pages: nicing is cheap
    /// enough to be used for everything else in this model (classes, clean and unmapped
    /// pages). Shared pages listed under another process are re-placed when next scanned
    /// (see [`Replacement::map_shared`]).
    pub fn set_nice(&mut self, proc: ProcId, nice: MemNice) {
        self.ensure_proc(proc);
        self.quiet = false;
        self.attach(proc, nice);
    }

    fn attach(&mut self, proc: ProcId, nice: MemNice) {
        let shift = nice.shift().clamp(-SHIFT_LIMIT, SHIFT_LIMIT);
        let p = &mut self.procs[ix(proc)];
        p.nice = nice;
        if p.shift == shift {
            return;
        }
        p.shift = shift;
        for clean in [false, true] {
            let set = Self::proc_set(proc, clean);
            let set_shift = shift
                + if clean {
                    self.cfg.clean_shift as i32
                } else {
                    0
                };
            self.set_shift[ix(set)] = set_shift;
            for b in 0..self.cfg.bins {
                let l = self.list_id(set, b);
                let chain = self.chain_for(b, set_shift);
                let len = self.lists[ix(l)].len as u64;
                if len > 0 {
                    self.ring_detach(l);
                    self.chain_sub(self.lists[ix(l)].chain, len);
                    self.lists[ix(l)].chain = chain;
                    self.ring_attach(l);
                    self.chain_add(chain, len);
                } else {
                    self.lists[ix(l)].chain = chain;
                }
            }
        }
    }

    /// `proc`'s memory nice value, if it is present.
    pub fn nice(&self, proc: ProcId) -> Option<MemNice> {
        self.procs
            .get(ix(proc))
            .filter(|p| p.present)
            .map(|p| p.nice)
    }

    // ---- lists and chains ----------------------------------------------------------------

    fn ring_attach(&mut self, l: u32) {
        let c = ix(self.lists[ix(l)].chain);
        let tail = self.chains[c].tail;
        self.lists[ix(l)].ring_prev = tail;
        self.lists[ix(l)].ring_next = NIL;
        if tail == NIL {
            self.chains[c].head = l;
        } else {
            self.lists[ix(tail)].ring_next = l;
        }
        self.chains[c].tail = l;
    }

    fn ring_detach(&mut self, l: u32) {
        let c = ix(self.lists[ix(l)].chain);
        let List {
            ring_prev,
            ring_next,
            ..
        } = self.lists[ix(l)];
        if ring_prev == NIL {
            self.chains[c].head = ring_next;
        } else {
            self.lists[ix(ring_prev)].ring_next = ring_next;
        }
        if ring_next == NIL {
            self.chains[c].tail = ring_prev;
        } else {
            self.lists[ix(ring_next)].ring_prev = ring_prev;
        }
        self.lists[ix(l)].ring_prev = NIL;
        self.lists[ix(l)].ring_next = NIL;
    }

    fn chain_add(&mut self, c: u32, n: u64) {
        self.chains[ix(c)].pages += n;
        if n > 0 && (self.top == NIL || c > self.top) {
            self.top = c;
        }
    }

    fn chain_sub(&mut self, c: u32, n: u64) {
        self.chains[ix(c)].pages -= n;
        if c == self.top && self.chains[ix(c)].pages == 0 {
            self.top = self.chains[..ix(c)]
                .iter()
                .rposition(|c| c.pages > 0)
                .map_or(NIL, |c| c as u32);
        }
    }

    /// Appends page `p` (on no list) to list `l`: entering a bin makes it the bin's youngest.
    fn push_back(&mut self, l: u32, p: u32) {
        let tail = self.lists[ix(l)].tail;
        {
            let pg = &mut self.pages[ix(p)];
            pg.prev = tail;
            pg.next = NIL;
            pg.list = l;
        }
        if tail == NIL {
            self.lists[ix(l)].head = p;
        } else {
            self.pages[ix(tail)].next = p;
        }
        let list = &mut self.lists[ix(l)];
        list.tail = p;
        list.len += 1;
        if list.entered_round != self.round {
            (list.entered, list.entered_round) = (0, self.round);
        }
        list.entered += 1;
        let (chain, bin, first) = (list.chain, list.bin, list.len == 1);
        if first {
            self.ring_attach(l);
        }
        self.chain_add(chain, 1);
        self.bin_pages[bin as usize] += 1;
    }

    /// Takes page `p` off its list.
    fn unlink(&mut self, p: u32) {
        let Page {
            prev, next, list, ..
        } = self.pages[ix(p)];
        let l = list;
        if prev == NIL {
            self.lists[ix(l)].head = next;
        } else {
            self.pages[ix(prev)].next = next;
        }
        if next == NIL {
            self.lists[ix(l)].tail = prev;
        } else {
            self.pages[ix(next)].prev = prev;
        }
        let list = &mut self.lists[ix(l)];
        list.len -= 1;
        let (chain, bin, empty) = (list.chain, list.bin, list.len == 0);
        if empty {
            self.ring_detach(l);
        }
        self.chain_sub(chain, 1);
        self.bin_pages[bin as usize] -= 1;
        let pg = &mut self.pages[ix(p)];
        pg.list = NIL;
        pg.prev = NIL;
        pg.next = NIL;
    }

    /// The list page `p` belongs on. Section 5.1.4: a shared page's scaled age is the
    /// smallest over its mappings of the mapping's age scaled by its process's weight, so it
    /// is listed on the bin of the mapping that gives that minimum (ties: the lowest process
    /// id), in that process's set; the page is evicted when, and reports the severity that,
    /// its youngest scaled mapping says. An unmapped page is on bin `ubin` of its unmapped set.
    /// Section 5.2 (a): a clean page is on the clean set, `clean_shift` chains further.
    fn target(&self, p: u32, ubin: u32) -> u32 {
        let pg = &self.pages[ix(p)];
        let clean = !pg.dirty;
        if pg.maps == NIL {
            return self.list_id(Self::unmapped_set(pg.uset, clean), ubin);
        }
        let mut best = (i32::MAX, NO_PROC, 0u32);
        let mut m = pg.maps;
        while m != NIL {
            let mp = self.map(m);
            let key = (mp.bin as i32 + self.procs[ix(mp.proc)].shift, mp.proc);
            if key < (best.0, best.1) {
                best = (key.0, key.1, mp.bin as u32);
            }
            m = mp.next;
        }
        self.list_id(Self::proc_set(best.1, clean), best.2)
    }

    /// Puts page `p` where it belongs; `to_tail` moves it to the back even if its list is
    /// unchanged (it re-entered its bin). Returns whether it moved.
    fn place(&mut self, p: u32, ubin: u32, to_tail: bool) -> bool {
        let t = self.target(p, ubin);
        self.move_to(p, t, to_tail)
    }

    /// Puts page `p` on list `t` (see [`place`](Self::place)).
    #[inline]
    fn move_to(&mut self, p: u32, t: u32, to_tail: bool) -> bool {
        let cur = self.pages[ix(p)].list;
        if t == cur && !to_tail {
            return false;
        }
        if cur != NIL {
            self.unlink(p);
        }
        self.push_back(t, p);
        true
    }

    // ---- mappings ------------------------------------------------------------------------

    #[inline]
    fn map(&self, m: u32) -> &Mapping {
        if m & HOME != 0 {
            &self.pages[ix(m & !HOME)].home
        } else {
            &self.maps[ix(m)]
        }
    }

    #[inline]
    fn map_mut(&mut self, m: u32) -> &mut Mapping {
        if m & HOME != 0 {
            &mut self.pages[ix(m & !HOME)].home
        } else {
            &mut self.maps[ix(m)]
        }
    }

    /// A new mapping of page `p` by `proc`, young and referenced, linked before `next`: in
    /// the page's home if that is free.
    fn new_map(&mut self, p: u32, proc: ProcId, next: u32) -> u32 {
        let m = Mapping {
            proc,
            next,
            bin: 0,
            referenced: true,
        };
        let home = &mut self.pages[ix(p)].home;
        if home.proc == NO_PROC {
            *home = m;
            return HOME | p;
        }
        if self.free_map != NIL {
            let id = self.free_map;
            self.free_map = self.maps[ix(id)].next;
            self.maps[ix(id)] = m;
            id
        } else {
            assert!(self.maps.len() < HOME as usize, "mapping ids exhausted");
            self.maps.push(m);
            (self.maps.len() - 1) as u32
        }
    }

    fn free_mapping(&mut self, m: u32) {
        if m & HOME != 0 {
            *self.map_mut(m) = FREE_MAP;
            return;
        }
        self.maps[ix(m)].next = self.free_map;
        self.maps[ix(m)].proc = NO_PROC;
        self.free_map = m;
    }

    /// Removes `proc`'s mapping of page `p`; returns it (already freed) if there was one.
    fn remove_mapping(&mut self, p: u32, proc: ProcId) -> Option<Mapping> {
        let mut prev = NIL;
        let mut m = self.pages[ix(p)].maps;
        while m != NIL {
            let mp = *self.map(m);
            if mp.proc == proc {
                if prev == NIL {
                    self.pages[ix(p)].maps = mp.next;
                } else {
                    self.map_mut(prev).next = mp.next;
                }
                self.free_mapping(m);
                return Some(mp);
            }
            prev = m;
            m = mp.next;
        }
        None
    }

    fn find_mapping(&self, p: u32, proc: ProcId) -> Option<u32> {
        let mut m = self.pages[ix(p)].maps;
        while m != NIL {
            if self.map(m).proc == proc {
                return Some(m);
            }
            m = self.map(m).next;
        }
        None
    }

    fn set_owner(&mut self, p: u32, owner: ProcId) {
        let old = self.pages[ix(p)].owner;
        if old == owner {
            return;
        }
        if old != NO_PROC {
            self.procs[ix(old)].owned -= 1;
        }
        if owner != NO_PROC {
            self.procs[ix(owner)].owned += 1;
        }
        self.pages[ix(p)].owner = owner;
    }

    /// The owner of a mapped page is one of its mappers: when the owner's mapping goes, the
    /// lowest-numbered remaining mapper inherits it (deterministic, and it keeps
    /// `resident_of` meaning "pages this process keeps resident").
    fn reown(&mut self, p: u32) {
        let mut m = self.pages[ix(p)].maps;
        let mut lowest = NO_PROC;
        while m != NIL {
            lowest = lowest.min(self.map(m).proc);
            m = self.map(m).next;
        }
        self.set_owner(p, lowest);
    }

    fn live(&self, page: PageId) -> bool {
        self.pages.get(ix(page)).is_some_and(|pg| pg.list != NIL)
    }

    fn check_live(&self, page: PageId, op: &str) {
        assert!(self.live(page), "{op}: page {page} is not resident");
    }

    // ---- the driver's operations ---------------------------------------------------------

    /// A new resident page, mapped by `owner` (added at nice 0 if unknown), on bin 0 of its
    /// set, referenced: a page just touched is as young as the model can say.
    pub fn alloc(&mut self, owner: ProcId, dirty: bool, now: Nanos) -> PageId {
        self.ensure_proc(owner);
        if self.resident == 0 && self.next_tick() <= now {
            // Nothing to age: start the scan grid at `now` rather than replay the idle past.
            self.fast_forward(now);
        }
        self.quiet = false;
        let p = if self.free_page != NIL {
            let p = self.free_page;
            self.free_page = self.pages[ix(p)].next;
            p
        } else {
            assert!(self.pages.len() < HOME as usize, "page ids exhausted");
            self.pages.push(FREE_PAGE);
            (self.pages.len() - 1) as u32
        };
        self.pages[ix(p)] = Page {
            owner: NO_PROC,
            dirty,
            ..FREE_PAGE
        };
        self.pages[ix(p)].maps = self.new_map(p, owner, NIL);
        self.set_owner(p, owner);
        let l = self.list_id(Self::proc_set(owner, !dirty), 0);
        self.push_back(l, p);
        self.resident += 1;
        p
    }

    /// Another mapping of a resident page, by `proc` (added at nice 0 if unknown), young and
    /// referenced. Its age is its own (section 5.1.4: ages per virtual mapping), so the page
    /// moves at once if this mapping is now its youngest scaled one. A page that was unmapped
    /// leaves the unmapped bins and `proc` becomes its owner. Mapping a page twice just
    /// references it.
    pub fn map_shared(&mut self, page: PageId, proc: ProcId, _now: Nanos) {
        self.check_live(page, "map_shared");
        self.ensure_proc(proc);
        self.quiet = false;
        if let Some(m) = self.find_mapping(page, proc) {
            // Already mapped: a reference, and a chance to re-place a page whose mappers were
            // re-niced since its last scan.
            self.map_mut(m).referenced = true;
            self.place(page, 0, false);
            return;
        }
        let was_unmapped = self.pages[ix(page)].maps == NIL;
        let m = self.new_map(page, proc, self.pages[ix(page)].maps);
        self.pages[ix(page)].maps = m;
        if was_unmapped {
            self.pages[ix(page)].kref = false;
            self.set_owner(page, proc);
        }
        self.place(page, 0, false);
    }

    /// `proc` no longer maps `page` (nothing happens if it did not). If others still map it,
    /// it is re-placed at the youngest of their scaled ages. If this was the last mapping, the
    /// page goes to the unmapped bins at the unmapper's nice + 1 (section 5.1.4, as FreeBSD
    /// deactivates pages): unmapping says the page may not be used again, so it should go
    /// somewhat before the unmapper's own pages of the same age; it keeps its age bin and any
    /// pending reference, and stays charged to the unmapper.
    pub fn unmap(&mut self, page: PageId, proc: ProcId, _now: Nanos) {
        self.check_live(page, "unmap");
        let Some(gone) = self.remove_mapping(page, proc) else {
            return;
        };
        self.quiet = false;
        if self.pages[ix(page)].maps != NIL {
            if self.pages[ix(page)].owner == proc {
                self.reown(page);
            }
            self.place(page, 0, false);
            return;
        }
        let u = self.procs[ix(proc)]
            .nice
            .unmapped()
            .shift()
            .clamp(-SHIFT_LIMIT, SHIFT_LIMIT);
        let pg = &mut self.pages[ix(page)];
        pg.uset = (u + SHIFT_LIMIT) as u8;
        pg.kref = gone.referenced;
        self.set_owner(page, proc);
        self.place(page, gone.bin as u32, false);
    }

    /// `proc` touched `page`: sets that mapping's reference bit, which the next scan of the
    /// page's bin reads (section 5.1.1: ages come from reference bits found at scans). O(1),
    /// allocation-free. A reference to an unmapped page (the kernel reading a file-cache page
    /// on someone's behalf) sets the page's own bit. A reference by a process that does not map
    /// a mapped page, or to a page that is not resident, is ignored.
    #[inline]
    pub fn reference(&mut self, page: PageId, proc: ProcId) {
        let Some(pg) = self.pages.get_mut(ix(page)) else {
            return;
        };
        if pg.list == NIL {
            return;
        }
        self.quiet = false;
        let head = pg.maps;
        if head == NIL {
            pg.kref = true;
            return;
        }
        let m = self.map_mut(head);
        if m.proc == proc {
            m.referenced = true;
            return;
        }
        // A shared page referenced by another of its mappers: find that mapping and move it to
        // the front, so that a process referencing the page repeatedly finds it first.
        let mut prev = head;
        let mut cur = m.next;
        while cur != NIL {
            let next = self.map(cur).next;
            if self.map(cur).proc == proc {
                self.map_mut(cur).referenced = true;
                self.map_mut(prev).next = next;
                self.map_mut(cur).next = head;
                self.pages[ix(page)].maps = cur;
                return;
            }
            prev = cur;
            cur = next;
        }
    }

    /// Marks `page` dirty or clean. Section 5.2 (a): a clean page costs only a page-in if it
    /// is needed again, not a write and a page-in, so its age counts 2^clean_shift times: it
    /// moves to the same bin of the clean set, `clean_shift` chains further, and is preferred
    /// as a victim and reports a severity that reflects its lower cost.
    pub fn set_dirty(&mut self, page: PageId, dirty: bool) {
        self.check_live(page, "set_dirty");
        if self.pages[ix(page)].dirty == dirty {
            return;
        }
        self.quiet = false;
        self.pages[ix(page)].dirty = dirty;
        let bin = self.lists[ix(self.pages[ix(page)].list)].bin as u32;
        self.place(page, bin, false);
    }

    /// The application freed `page`: it leaves every list and mapping and its id is reused.
    pub fn release(&mut self, page: PageId) {
        self.check_live(page, "release");
        self.remove_page(page);
    }

    fn remove_page(&mut self, p: u32) {
        self.unlink(p);
        let mut m = self.pages[ix(p)].maps;
        while m != NIL {
            let next = self.map(m).next;
            self.free_mapping(m);
            m = next;
        }
        self.set_owner(p, NO_PROC);
        self.pages[ix(p)] = Page {
            next: self.free_page,
            ..FREE_PAGE
        };
        self.free_page = p;
        self.resident -= 1;
    }

    /// `proc` exited: the pages only it maps are freed and returned (in page-id order); the
    /// pages it shares lose its mapping and are re-placed; the unmapped pages charged to it
    /// stay resident (they are cache) charged to nobody ([`NO_PROC`]). Walks every page slot.
    pub fn process_exited(&mut self, proc: ProcId) -> Vec<PageId> {
        let mut freed = Vec::new();
        if !self.procs.get(ix(proc)).is_some_and(|p| p.present) {
            return freed;
        }
        self.quiet = false;
        for p in 0..self.pages.len() as u32 {
            if self.pages[ix(p)].list == NIL {
                continue;
            }
            if self.pages[ix(p)].maps == NIL {
                if self.pages[ix(p)].owner == proc {
                    self.set_owner(p, NO_PROC);
                }
                continue;
            }
            let Some(m) = self.find_mapping(p, proc) else {
                continue;
            };
            let only = self.pages[ix(p)].maps == m && self.map(m).next == NIL;
            if only {
                self.remove_page(p);
                freed.push(p);
            } else {
                self.remove_mapping(p, proc);
                if self.pages[ix(p)].owner == proc {
                    self.reown(p);
                }
                self.place(p, 0, false);
            }
        }
        let pr = &mut self.procs[ix(proc)];
        debug_assert_eq!(pr.owned, 0);
        pr.present = false;
        freed
    }

    // ---- scans ---------------------------------------------------------------------------

    /// When the next bin scan is due.
    pub fn next_tick(&self) -> Nanos {
        self.next_due.iter().copied().min().unwrap_or(Nanos::MAX)
    }

    fn fast_forward(&mut self, now: Nanos) {
        for (due, &p) in self.next_due.iter_mut().zip(&self.period) {
            *due = (now / p).saturating_add(1).saturating_mul(p);
        }
    }

    /// Nothing a scan could do would change anything.
    fn idle(&self) -> bool {
        let last = self.bin_pages.len() - 1;
        self.bin_pages[..last].iter().all(|&n| n == 0) && (self.bin_pages[last] == 0 || self.quiet)
    }

    /// Runs every scan due at or before `now`, in time order (section 5.1.1): bin k every
    /// S_min * 2^k, because a page in bin k is about that old and is as unlikely to be touched
    /// in the next S_min * 2^k as it was in the last: scanning it more often would cost time
    /// and tell little. At a scan a page whose reference bit is set goes back to bin 0 with
    /// the bit cleared (it was used within the period), an unreferenced one moves to bin k + 1
    /// (it is now twice as old), and the last bin keeps its unreferenced pages (ages beyond
    /// S_min * 2^(B-1), an hour by default, need no resolution). When nothing can change, the
    /// schedule jumps to `now`.
    pub fn tick(&mut self, now: Nanos) {
        loop {
            let t = self.next_tick();
            if t > now {
                return;
            }
            if self.idle() {
                self.fast_forward(now);
                return;
            }
            self.round += 1;
            let mut due = 0u64;
            for (k, &d) in self.next_due.iter().enumerate() {
                if d == t {
                    due |= 1 << k;
                }
            }
            let mut changed = false;
            for k in (0..self.cfg.bins).rev() {
                if due & (1 << k) != 0 && self.bin_pages[ix(k)] > 0 {
                    changed |= self.scan_bin(k, due);
                }
            }
            let last = self.cfg.bins - 1;
            if changed {
                self.quiet = false;
            } else if due & (1 << last) != 0 {
                self.quiet = true;
            }
            for k in 0..self.cfg.bins {
                if due & (1 << k) != 0 {
                    self.next_due[ix(k)] = self.next_due[ix(k)].saturating_add(self.period[ix(k)]);
                }
            }
            if t == Nanos::MAX {
                return;
            }
        }
    }

    /// Scans bin index `k` of every set. Returns whether anything changed.
    fn scan_bin(&mut self, k: u32, due: u64) -> bool {
        let mut changed = false;
        for set in 0..self.set_shift.len() as u32 {
            let l = self.list_id(set, k);
            let list = &self.lists[ix(l)];
            // The pages that entered this list earlier in the round (from a higher bin) are
            // its tail, and the ones this scan moves back into it go behind them: the first
            // `n` are exactly the pages the round has not looked at.
            let n = if list.entered_round == self.round {
                list.len - list.entered
            } else {
                list.len
            };
            let mut cur = list.head;
            for _ in 0..n {
                let p = cur;
                cur = self.pages[ix(p)].next;
                // The list is walked by its links: ask for the next slot while this page is
                // aged, instead of waiting for it after.
                crate::prefetch::prefetch(&self.pages, ix(cur));
                changed |= self.age_page(p, k, due);
            }
        }
        changed
    }

    /// One page at a scan of its bin `k`.
    fn age_page(&mut self, p: u32, k: u32, due: u64) -> bool {
        let last = self.cfg.bins - 1;
        if self.pages[ix(p)].maps == NIL {
            let referenced = std::mem::take(&mut self.pages[ix(p)].kref);
            let nb = if referenced { 0 } else { (k + 1).min(last) };
            return self.place(p, nb, referenced) || referenced;
        }
        // Section 5.1.4: ages are per mapping. The mapping the page is listed by is on bin k;
        // the others are aged here too, since the page is only scanned where it is listed.
        // One on a lower bin j < k (its process is niced further) has gone unscanned since
        // the page was last looked at, at least about S_min * 2^k ago: it is raised to k. One
        // on a higher bin ages if its own bin is due in this round (the grid makes every bin
        // below a due bin due as well).
        let mut m = self.pages[ix(p)].maps;
        if self.map(m).next == NIL {
            // One mapping, by far the common case: the same steps as below, but the page's
            // list is that mapping's bin of its process's set, known without `target`'s walk
            // over the mappings and the processes (scans are most of the simulator's time).
            let mp = self.map_mut(m);
            let proc = mp.proc;
            let j = mp.bin as u32;
            let (bin, referenced) = if mp.referenced {
                (0, true)
            } else if j < k {
                (k, false)
            } else if due & (1 << j) != 0 {
                ((j + 1).min(last), false)
            } else {
                (j, false)
            };
            let changed = referenced || bin != j;
            mp.referenced = false;
            mp.bin = bin as u8;
            let clean = !self.pages[ix(p)].dirty;
            let t = self.list_id(Self::proc_set(proc, clean), bin);
            return self.move_to(p, t, referenced) || changed;
        }
        let mut changed = false;
        let mut referenced = false;
        while m != NIL {
            let mp = self.map_mut(m);
            if mp.referenced {
                mp.referenced = false;
                mp.bin = 0;
                referenced = true;
                changed = true;
            } else {
                let j = mp.bin as u32;
                let nj = if j < k {
                    k
                } else if due & (1 << j) != 0 {
                    (j + 1).min(last)
                } else {
                    j
                };
                if nj != j {
                    mp.bin = nj as u8;
                    changed = true;
                }
            }
            m = mp.next;
        }
        self.place(p, 0, referenced) || changed
    }

    // ---- victims -------------------------------------------------------------------------

    /// The list and page `evict` would take: the head of the first list of the highest
    /// non-empty chain (section 5.1.1: chains from the largest index down).
    fn candidate_slot(&self) -> Option<(u32, u32, u32)> {
        let c = self.top;
        if c == NIL {
            return None;
        }
        let l = self.chains[ix(c)].head;
        Some((l, self.lists[ix(l)].head, c))
    }

    /// The page [`Replacement::evict`] would take, and its scaled age S_min * 2^chain in
    /// seconds: S_paging, the candidate age of the severity (section 5.1.2).
    pub fn candidate(&self) -> Option<(PageId, f64)> {
        self.candidate_slot()
            .map(|(_, p, c)| (p, self.scaled_age_of_chain(c)))
    }

    /// The candidate's scaled age in seconds (S_paging), if any page is resident.
    pub fn candidate_age_s(&self) -> Option<f64> {
        self.candidate().map(|(_, a)| a)
    }

    /// The candidate age a process of `class` is priced by: the scaled age of the oldest page
    /// of its class or a higher one. Pages of lower classes go first and "cannot make a
    /// higher class page or adapt" (section 5.1.3), so they do not set its price.
    pub fn candidate_age_for(&self, class: PriorityClass) -> Option<f64> {
        for c in (0..self.chains.len() as u32).rev() {
            let chain = &self.chains[ix(c)];
            if chain.pages == 0 {
                continue;
            }
            let mut l = chain.head;
            while l != NIL {
                if self.lists[ix(l)].len > 0 && self.class_of_set(l / self.cfg.bins) >= class.rank()
                {
                    return Some(self.scaled_age_of_chain(c));
                }
                l = self.lists[ix(l)].ring_next;
                if l == chain.head {
                    break;
                }
            }
        }
        None
    }

    /// The rank of the class a set's pages belong to: its process's, or for owner-less pages
    /// the class of the nice they were given.
    fn class_of_set(&self, set: u32) -> u8 {
        if set < UNMAPPED_SETS {
            let clean = set % 2 == 1;
            let shift = self.set_shift[ix(set)]
                - if clean {
                    self.cfg.clean_shift as i32
                } else {
                    0
                };
            PriorityClass::of_shift(shift).rank()
        } else {
            let proc = (set - UNMAPPED_SETS) / 2;
            self.procs[ix(proc)].nice.class().rank()
        }
    }

    /// Evicts the candidate: it leaves residency and its id is released (the driver writes it
    /// out first if it is dirty). Its list then goes to the back of its chain, so that
    /// processes whose pages have the same scaled age give pages in turn.
    pub fn evict(&mut self, _now: Nanos) -> Option<Victim> {
        let (l, p, c) = self.candidate_slot()?;
        let victim = self.take(p, c);
        if self.lists[ix(l)].len > 0 {
            self.ring_detach(l);
            self.ring_attach(l);
        }
        Some(victim)
    }

    /// Evicts the oldest page listed under `proc`'s own bins: a memory cgroup's limit being
    /// enforced on one group (the Senpai baseline), rather than the machine's candidate.
    /// Pages shared with others and listed under another mapper are not considered.
    pub fn evict_of(&mut self, proc: ProcId, _now: Nanos) -> Option<Victim> {
        if self.procs.get(ix(proc)).is_none_or(|p| !p.present) {
            return None;
        }
        let mut best: Option<(u32, u32)> = None;
        for clean in [false, true] {
            let set = Self::proc_set(proc, clean);
            for bin in 0..self.cfg.bins {
                let l = self.list_id(set, bin);
                let list = &self.lists[ix(l)];
                if list.len > 0 && best.is_none_or(|(c, _)| list.chain > c) {
                    best = Some((list.chain, l));
                }
            }
        }
        let (c, l) = best?;
        let p = self.lists[ix(l)].head;
        Some(self.take(p, c))
    }

    /// Removes page `p`, listed on chain `c`, from residency and says what it was.
    fn take(&mut self, p: u32, c: u32) -> Victim {
        let pg = self.pages[ix(p)];
        let victim = Victim {
            page: p,
            owner: pg.owner,
            dirty: pg.dirty,
            scaled_age_s: self.scaled_age_of_chain(c),
        };
        self.remove_page(p);
        victim
    }

    // ---- queries -------------------------------------------------------------------------

    /// Resident pages.
    pub fn resident(&self) -> usize {
        self.resident
    }

    /// Resident pages whose owner is `proc`.
    pub fn resident_of(&self, proc: ProcId) -> usize {
        self.procs.get(ix(proc)).map_or(0, |p| p.owned)
    }

    /// Whether `page` is resident.
    pub fn is_resident(&self, page: PageId) -> bool {
        self.live(page)
    }

    /// The owner of a resident page.
    pub fn owner(&self, page: PageId) -> Option<ProcId> {
        self.live(page).then(|| self.pages[ix(page)].owner)
    }

    /// Whether a resident page is dirty.
    pub fn is_dirty(&self, page: PageId) -> Option<bool> {
        self.live(page).then(|| self.pages[ix(page)].dirty)
    }

    /// The absolute chain index (bin + shift, may be negative) a resident page is listed on:
    /// its scaled age is S_min * 2^chain.
    pub fn chain_of(&self, page: PageId) -> Option<i32> {
        self.live(page)
            .then(|| self.lists[ix(self.pages[ix(page)].list)].chain as i32 - SHIFT_LIMIT)
    }

    /// The scaled age, in seconds, of a resident page as listed.
    pub fn scaled_age_s(&self, page: PageId) -> Option<f64> {
        self.live(page)
            .then(|| self.scaled_age_of_chain(self.lists[ix(self.pages[ix(page)].list)].chain))
    }

    /// The age bin of `proc`'s mapping of `page` (for an unmapped page and [`NO_PROC`], the
    /// page's own bin).
    pub fn bin_of(&self, page: PageId, proc: ProcId) -> Option<u32> {
        if !self.live(page) {
            return None;
        }
        let pg = &self.pages[ix(page)];
        if pg.maps == NIL {
            return (proc == NO_PROC).then(|| self.lists[ix(pg.list)].bin as u32);
        }
        self.find_mapping(page, proc)
            .map(|m| self.map(m).bin as u32)
    }

    /// Whether a resident page has no mapping left (it is on the unmapped bins).
    pub fn is_unmapped(&self, page: PageId) -> Option<bool> {
        self.live(page).then(|| self.pages[ix(page)].maps == NIL)
    }

    /// Pages on the chain of absolute index `chain` (bin + shift): the logarithmic histogram
    /// of scaled ages the kernel could export (section 5.3).
    pub fn chain_len(&self, chain: i32) -> u64 {
        let c = chain + SHIFT_LIMIT;
        if c < 0 {
            return 0;
        }
        self.chains.get(c as usize).map_or(0, |c| c.pages)
    }

    /// Whether `page` is listed where its mappings say it should be: on the bin of its
    /// youngest scaled mapping. True after every scan of the page and every operation on it;
    /// a re-nice of one of its other mappers, or a reference, is only reflected at its next
    /// scan (the thesis's reference-bit model).
    pub fn placed_exactly(&self, page: PageId) -> bool {
        if !self.live(page) {
            return false;
        }
        let pg = &self.pages[ix(page)];
        let bin = self.lists[ix(pg.list)].bin as u32;
        self.target(page, bin) == pg.list
    }

    /// For tests: every resident page is on exactly one bin list, the links agree, every
    /// count (lists, chains, bins, owners, residency) agrees, every non-empty list is on the
    /// ring of the chain its set's shift says, and every page is listed on the bin of one of
    /// its own mappings (or on its unmapped set).
    pub fn check_invariants(&self) -> Result<(), String> {
        let bins = self.cfg.bins;
        let top = self.chains.iter().rposition(|c| c.pages > 0);
        if top.map_or(NIL, |c| c as u32) != self.top {
            return Err(format!("top chain {} but {top:?} holds pages", self.top));
        }
        let mut seen = vec![false; self.pages.len()];
        let mut chain_pages = vec![0u64; self.chains.len()];
        let mut bin_pages = vec![0u64; ix(bins)];
        let mut chain_lists = vec![0usize; self.chains.len()];
        if self.lists.len() != self.set_shift.len() * ix(bins) {
            return Err("list count is not sets * bins".into());
        }
        for (s, &shift) in self.set_shift.iter().enumerate() {
            let s = s as u32;
            let expect = if s < UNMAPPED_SETS {
                (s / 2) as i32 - SHIFT_LIMIT
            } else {
                self.procs[ix((s - UNMAPPED_SETS) / 2)].shift
            } + if s % 2 == 1 {
                self.cfg.clean_shift as i32
            } else {
                0
            };
            if shift != expect {
                return Err(format!("set {s} has shift {shift}, expected {expect}"));
            }
            for b in 0..bins {
                let l = self.list_id(s, b);
                let list = &self.lists[ix(l)];
                if list.bin as u32 != b || list.chain != self.chain_for(b, shift) {
                    return Err(format!(
                        "list {l} has bin {} chain {}",
                        list.bin, list.chain
                    ));
                }
                let mut prev = NIL;
                let mut p = list.head;
                let mut n = 0u32;
                while p != NIL {
                    let pg = self
                        .pages
                        .get(ix(p))
                        .ok_or(format!("list {l}: bad page {p}"))?;
                    if pg.list != l || pg.prev != prev {
                        return Err(format!("page {p}: links disagree with list {l}"));
                    }
                    if std::mem::replace(&mut seen[ix(p)], true) {
                        return Err(format!("page {p} listed twice"));
                    }
                    self.check_page(p, s, b)?;
                    n += 1;
                    if n > list.len {
                        return Err(format!("list {l} longer than its count {}", list.len));
                    }
                    prev = p;
                    p = pg.next;
                }
                if n != list.len || list.tail != prev {
                    return Err(format!("list {l}: count {} walked {n}", list.len));
                }
                chain_pages[ix(list.chain)] += n as u64;
                bin_pages[ix(b)] += n as u64;
                if n > 0 {
                    chain_lists[ix(list.chain)] += 1;
                }
            }
        }
        for (c, chain) in self.chains.iter().enumerate() {
            if chain.pages != chain_pages[c] {
                return Err(format!(
                    "chain {c}: count {} listed {}",
                    chain.pages, chain_pages[c]
                ));
            }
            let (mut l, mut prev, mut n) = (chain.head, NIL, 0);
            while l != NIL {
                let list = &self.lists[ix(l)];
                if list.chain as usize != c || list.len == 0 || list.ring_prev != prev {
                    return Err(format!("chain {c}: ring holds list {l} wrongly"));
                }
                n += 1;
                if n > chain_lists[c] {
                    return Err(format!("chain {c}: ring too long"));
                }
                prev = l;
                l = list.ring_next;
            }
            if n != chain_lists[c] || chain.tail != prev {
                return Err(format!(
                    "chain {c}: ring has {n} lists, {} non-empty",
                    chain_lists[c]
                ));
            }
        }
        if bin_pages != self.bin_pages {
            return Err(format!(
                "bin counts {:?} listed {bin_pages:?}",
                self.bin_pages
            ));
        }
        let mut live = 0;
        let mut owned = vec![0usize; self.procs.len()];
        for (p, pg) in self.pages.iter().enumerate() {
            if pg.list != NIL {
                live += 1;
                if !seen[p] {
                    return Err(format!("page {p} resident but on no list"));
                }
                if pg.owner != NO_PROC {
                    owned[ix(pg.owner)] += 1;
                }
            }
        }
        let mut free = 0;
        let mut f = self.free_page;
        while f != NIL {
            if self.pages[ix(f)].list != NIL || free > self.pages.len() {
                return Err(format!("free list holds resident page {f}"));
            }
            free += 1;
            f = self.pages[ix(f)].next;
        }
        if live != self.resident || live + free != self.pages.len() {
            return Err(format!(
                "resident {} but {live} live and {free} free of {} slots",
                self.resident,
                self.pages.len()
            ));
        }
        for (i, p) in self.procs.iter().enumerate() {
            if p.owned != owned[i] {
                return Err(format!("process {i} owns {} counted {}", owned[i], p.owned));
            }
            if p.shift != p.nice.shift().clamp(-SHIFT_LIMIT, SHIFT_LIMIT) {
                return Err(format!(
                    "process {i}: shift {} disagrees with its nice",
                    p.shift
                ));
            }
        }
        Ok(())
    }

    fn check_page(&self, p: u32, set: u32, bin: u32) -> Result<(), String> {
        let pg = &self.pages[ix(p)];
        let clean = set % 2 == 1;
        if clean == pg.dirty {
            return Err(format!("page {p}: dirty {} but on set {set}", pg.dirty));
        }
        if pg.maps == NIL {
            if set >= UNMAPPED_SETS || set / 2 != pg.uset as u32 {
                return Err(format!("unmapped page {p} on set {set}"));
            }
            if pg.owner != NO_PROC && !self.procs[ix(pg.owner)].present {
                return Err(format!("unmapped page {p} charged to exited {}", pg.owner));
            }
            return Ok(());
        }
        if set < UNMAPPED_SETS {
            return Err(format!("mapped page {p} on unmapped set {set}"));
        }
        let lister = (set - UNMAPPED_SETS) / 2;
        let (mut listed, mut owner_maps, mut n) = (false, false, 0);
        let mut m = pg.maps;
        while m != NIL {
            let mp = self.map(m);
            n += 1;
            if n > self.procs.len() {
                return Err(format!("page {p}: mapping list too long or cyclic"));
            }
            if !self.procs.get(ix(mp.proc)).is_some_and(|x| x.present) {
                return Err(format!("page {p} mapped by absent process {}", mp.proc));
            }
            if mp.bin as u32 >= self.cfg.bins {
                return Err(format!("page {p}: mapping bin {}", mp.bin));
            }
            if self.find_mapping(p, mp.proc) != Some(m) {
                return Err(format!("page {p} mapped twice by {}", mp.proc));
            }
            listed |= mp.proc == lister && mp.bin as u32 == bin;
            owner_maps |= mp.proc == pg.owner;
            m = mp.next;
        }
        if !listed {
            return Err(format!("page {p} on set {set} bin {bin}: no mapping there"));
        }
        if !owner_maps {
            return Err(format!("page {p}: owner {} does not map it", pg.owner));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
