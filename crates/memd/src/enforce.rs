//! Memory nice in the daemon: the nice values clients set (per process and per governed
//! group), the nice each subscriber is subject to, and the enforcement of the weights on the
//! groups the daemon governs, for processes that do not cooperate.
//!
//! The decisions are `antsched-mem`'s ([`antsched_mem::nice::effective`],
//! [`antsched_mem::enforce::Enforcer`]); this module reads and writes the kernel's files.
//!
//! ## Enforcement (cgroup v1)
//!
//! Every tick, for each domain whose free memory is below tau (the machine, or a governed
//! group with a limit that has governed groups under it), the enforcer picks the group under
//! it to take from: the lowest priority class first, then the largest candidate age times
//! weight (sections 5.1.2 and 5.1.3). A step lowers that group's `memory.limit_in_bytes` to
//! its usage minus a few MB, which makes the kernel reclaim that much from it synchronously
//! (never more than what its reclaim can take, less 1 MiB: the group's page cache, and its
//! anonymous memory too where the machine has swap on and the group's `memory.swappiness` is
//! not 0; without swap anonymous memory cannot be reclaimed), then writes the original limit
//! back at once. The kernel refuses with EBUSY when it could not reclaim enough (it never OOM-kills on
//! a limit write in v1: it gives up and leaves the limit as it was); the enforcer then halves
//! the step and in the end leaves the group alone for a while. Before each step the original
//! limit is in the state file ([`crate::state`]), and it is taken out once restored.
//!
//! Where the group's memory can all go to swap, the lowered limit is *held* instead
//! (`holds`): a hog that touches all it has would fault a page back the moment its limit
//! was written back, while the thesis's kernel keeps paging it because its pages stay the
//! oldest by weighted age. A held limit comes back a step a tick while its domain has memory
//! over tau that nobody takes, at once when the group could no longer page out what it
//! holds, and at exit. The writes happen on a thread of their own
//! (`crate::limit_writer`): paging a hog out to a slow disk takes seconds, which the daemon's
//! notifications must not wait for.
//!
//! Only groups a client asked the daemon to govern, which lie under its parent
//! ([`crate::RUN_PARENT`]), are ever stepped, and only leaves (a governed group with governed
//! groups under it is a domain, not a candidate). Groups given with `--cgroup` stay
//! read-only.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use antsched_mem::enforce::{Candidate, EnforceConfig, Enforcer, Outcome, Step};
use antsched_mem::record::SeverityRecord;
use antsched_mem::MemNice;

use crate::limit_writer::{Done, Job, LimitWriter};
use crate::source::MEMCG_V1_ROOT;
use crate::state::{write_knob, write_limit, Knob, StateFile};

/// The nice table and enforcement of a daemon with the state file at `path` (none: no
/// enforcement). What a previous daemon left in the file is restored first; returns the
/// lines to log about it.
pub(crate) fn open_state(
    path: Option<&Path>,
) -> Result<(Nices, Vec<String>), crate::state::StateError> {
    let Some(path) = path else {
        return Ok((Nices::new(None), Vec::new()));
    };
    let (state, recovered) = StateFile::open(path, Path::new(crate::RUN_PARENT))?;
    let mut log = vec![format!(
        "state file {}: the limits this daemon changes are recorded there",
        path.display()
    )];
    for (knob, group, value) in recovered.restored {
        log.push(format!(
            "state file {}: restored the {} of {} to {value} (left by a daemon that did not exit)",
            path.display(),
            knob.keyword(),
            group.display()
        ));
    }
    for why in recovered.skipped {
        log.push(format!("state file {}: {why}", path.display()));
    }
    Ok((Nices::new(Some(state)), log))
}

/// Steps taken from one domain in one tick at most (4 MiB each: 32 MiB a tick).
const MAX_STEPS_PER_TICK: usize = 8;

/// A process: its PID and start time (field 22 of `/proc/PID/stat`), which together name it
/// for its whole life and never another process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Process {
    pub pid: u32,
    pub start: u64,
}

impl Process {
    /// Process `pid` as it is now; a start time of 0 when it is gone (it then matches no
    /// nice set for a live process).
    pub fn of(pid: u32) -> Self {
        Self {
            pid,
            start: process(pid).map_or(0, |(_, start)| start),
        }
    }
}

/// What a `nice` request names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NiceTarget {
    Pid(u32),
    Cgroup(String),
}

/// A domain as enforcement sees it.
pub(crate) struct DomainView<'a> {
    pub id: u64,
    pub name: &'a str,
    pub record: SeverityRecord,
    /// Added by a `govern` request: under the daemon's parent, and so the daemon's to step.
    pub requested: bool,
}

/// The nice values set, and the enforcement state.
pub(crate) struct Nices {
    /// PID -> its nice, with the process's start time (field 22 of `/proc/PID/stat`), so
    /// that a nice never passes to a later process that reuses the PID.
    pids: HashMap<u32, (MemNice, u64)>,
    /// A group's canonical path -> its nice.
    groups: HashMap<PathBuf, MemNice>,
    enforcer: Enforcer,
    /// Where the limits changed are recorded; no state file, no enforcement.
    state: Option<StateFile>,
    /// Bytes taken in this tick, per group, for the log.
    taken: Vec<(String, u64)>,
    /// Groups whose limit is held lowered after a step (see [`holds`]), with the domain that
    /// took from them: their original stays in the state file until it is given back.
    held: HashMap<PathBuf, u64>,
    /// Writes the limits of a step off the daemon's loop (started at the first step).
    writer: Option<LimitWriter>,
    /// Groups whose `memory.swappiness` is 0 while a lower class is held beside them (see
    /// [`Nices::shield`]); the original is in the state file.
    shielded: HashSet<PathBuf>,
    /// A step whose writes were still running at the end of its tick.
    pending: Option<Pending>,
}

/// A step of enforcement: what to take from which group, for which domain.
struct Pending {
    step: Step,
    group: PathBuf,
    domain: u64,
    /// The limit is held lowered after the step ([`holds`]), not written back.
    hold: bool,
    /// When it began (monotonic ns).
    since: u64,
}

/// How long a tick waits for a step's writes before leaving them in flight: page cache is
/// reclaimed well within it; paging anonymous memory out to a slow disk is not.
const STEP_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

impl Nices {
    pub fn new(state: Option<StateFile>) -> Self {
        Self {
            pids: HashMap::new(),
            groups: HashMap::new(),
            enforcer: Enforcer::new(EnforceConfig::default()),
            state,
            taken: Vec::new(),
            held: HashMap::new(),
            writer: None,
            shielded: HashSet::new(),
            pending: None,
        }
    }

    /// The nice set for the group at canonical path `group`, if one was.
    pub fn group_nice(&self, group: &Path) -> Option<MemNice> {
        self.groups.get(group).copied()
    }

    /// The nice enforcement gives the group at canonical path `group`: its own, where one was
    /// set; else the one its processes share, where every process in it had the same nice
    /// set for it (`mem nice -n N PID` on the process a `mem run` group holds: the group is
    /// then that process's own, and the thesis's kernel would scale that process's pages);
    /// else none. A group whose processes differ, or where one has none, is not a process's
    /// own: v1 reclaims a group as a whole, and taking from it for one member's nice would
    /// take from the others too.
    pub fn enforced_nice(&self, group: &Path) -> Option<MemNice> {
        enforced_nice(&self.groups, &self.pids, group)
    }

    /// The nice of the subscriber `who` in the group `group`. A nice set for its PID counts
    /// only if it was set for this process (the same start time), not for an earlier one
    /// that had the PID.
    pub fn nice_of(&self, who: Process, group: Option<&Path>) -> MemNice {
        let own = self
            .pids
            .get(&who.pid)
            .filter(|(_, start)| *start == who.start)
            .map(|(n, _)| *n);
        let of_group = group.and_then(|g| self.group_nice(g));
        antsched_mem::nice::effective(own, of_group)
    }

    /// A `nice` request from a peer of user `uid`. Root may set any nice on any process and
    /// on groups under `parent`; another user only on its own processes and only 0 or more
    /// (as CPU nice: protection is for the administrator to give).
    pub fn set(
        &mut self,
        uid: u32,
        nice: i64,
        target: &NiceTarget,
        parent: Option<&Path>,
    ) -> Result<String, String> {
        let value = MemNice::new(nice).map_err(|e| e.to_string())?;
        match target {
            NiceTarget::Pid(pid) => {
                let Some((owner, start)) = process(*pid) else {
                    return Err(format!("no process {pid}"));
                };
                if uid != 0 && (owner != uid || nice < 0) {
                    return Err(format!(
                        "user {uid} may only set a nice of 0 or more on its own processes \
                         (process {pid} is user {owner}'s)"
                    ));
                }
                self.pids.insert(*pid, (value, start));
                Ok(format!("nice {nice} pid {pid} weight {}", value.weight()))
            }
            NiceTarget::Cgroup(path) => {
                let Some(parent) = parent else {
                    return Err("this daemon governs no groups on request".into());
                };
                let parent = parent
                    .canonicalize()
                    .unwrap_or_else(|_| parent.to_path_buf());
                let canonical = std::fs::canonicalize(path)
                    .map_err(|e| format!("cannot nice the group {path}: {e}"))?;
                if canonical == parent
                    || !canonical.starts_with(&parent)
                    || !canonical.join("memory.limit_in_bytes").is_file()
                {
                    return Err(format!(
                        "cannot nice {path}: it is not a group under {} (the only groups \
                         this daemon governs on request)",
                        parent.display()
                    ));
                }
                if uid != 0 {
                    return Err(format!("user {uid} may not nice a group (root only)"));
                }
                let name = canonical.display().to_string();
                self.groups.insert(canonical, value);
                Ok(format!(
                    "nice {nice} cgroup {name} weight {}",
                    value.weight()
                ))
            }
        }
    }

    /// Forgets the nice of processes that exited and of groups that are gone.
    pub fn prune(&mut self) {
        self.pids
            .retain(|pid, (_, start)| process(*pid).is_some_and(|(_, s)| s == *start));
        self.groups.retain(|g, _| g.is_dir());
    }

    /// One tick of enforcement over `domains` (the machine first). Returns lines to log and
    /// the bytes taken from each group (by domain id), for its turnover estimate.
    pub fn enforce(
        &mut self,
        now: u64,
        domains: &[DomainView<'_>],
    ) -> (Vec<String>, Vec<(u64, u64)>) {
        let mut log = Vec::new();
        let mut taken_by_id: Vec<(u64, u64)> = Vec::new();
        if self.state.is_none() {
            return (log, taken_by_id);
        }
        // Before anything else, and also while a step is in flight: a shield must come off
        // the tick the lower class has nothing left to give.
        let leaves = leaves(domains);
        self.shield(domains, &leaves, &mut log);
        // A step still in flight from an earlier tick is settled first; until it is, nothing
        // else is written (the kernel is still reclaiming for it).
        if let Some(p) = self.pending.take() {
            match self.writer.as_ref().and_then(LimitWriter::poll) {
                Some(done) => {
                    self.taken.clear();
                    self.settle(now, &p, done, &mut log, &mut taken_by_id);
                    for (name, bytes) in &self.taken {
                        log.push(format!(
                            "enforcement: took {} KiB from {name} (a step begun {:.1} s before)",
                            bytes >> 10,
                            now.saturating_sub(p.since) as f64 / 1e9
                        ));
                    }
                }
                None => {
                    self.pending = Some(p);
                    return (log, taken_by_id);
                }
            }
        }
        let max_step = self.enforcer.config().max_step_bytes;
        let swap_free = swap_free_bytes();
        self.release_what_cannot_be_held(swap_free, &mut log);
        'domains: for (i, d) in domains.iter().enumerate() {
            let r = &d.record;
            if r.free_bytes >= r.tau_bytes {
                self.give_back(d, r.free_bytes - r.tau_bytes, &mut log);
                continue;
            }
            let (under, mut candidates) = self.candidates(i, d, &leaves, swap_free);
            if under.is_empty() {
                continue;
            }
            let mut free = r.free_bytes;
            self.taken.clear();
            let mut in_flight = false;
            for _ in 0..MAX_STEPS_PER_TICK {
                let Some(step) = self.enforcer.plan(now, free, r.tau_bytes, &candidates) else {
                    break;
                };
                let g = under.iter().find(|g| g.id == step.id).expect("planned");
                let p = Pending {
                    step,
                    group: PathBuf::from(g.name),
                    domain: d.id,
                    hold: holds(Path::new(g.name), swap_free, max_step),
                    since: now,
                };
                let Some(done) = self.begin(&p) else {
                    self.pending = Some(p);
                    in_flight = true;
                    break;
                };
                if let Outcome::Reclaimed(got) =
                    self.settle(now, &p, done, &mut log, &mut taken_by_id)
                {
                    free = free.saturating_add(got);
                    if let Some(c) = candidates.iter_mut().find(|c| c.id == step.id) {
                        c.reclaimable_bytes = c.reclaimable_bytes.saturating_sub(got);
                    }
                }
            }
            for (name, bytes) in &self.taken {
                log.push(format!(
                    "enforcement: domain {} is below tau ({} of {} KiB free): took {} KiB from {name}",
                    d.name,
                    r.free_bytes >> 10,
                    r.tau_bytes >> 10,
                    bytes >> 10
                ));
            }
            if in_flight {
                break 'domains;
            }
        }
        (log, taken_by_id)
    }

    /// The governed groups under domain `d` (the `i`th; the machine is the first and holds
    /// every group), and those of them enforcement may take from, as candidates.
    fn candidates<'a>(
        &self,
        i: usize,
        d: &DomainView<'_>,
        leaves: &[&'a DomainView<'a>],
        swap_free: u64,
    ) -> (Vec<&'a DomainView<'a>>, Vec<Candidate>) {
        let under: Vec<&DomainView<'_>> = leaves
            .iter()
            .filter(|g| g.id != d.id && (i == 0 || Path::new(g.name).starts_with(d.name)))
            .copied()
            .collect();
        let candidates = under
            .iter()
            .filter_map(|g| {
                let nice =
                    enforced_nice(&self.groups, &self.pids, Path::new(g.name)).unwrap_or_default();
                Some(Candidate {
                    id: g.id,
                    nice,
                    candidate_age_s: g.record.candidate_age_s,
                    reclaimable_bytes: GroupMemory::read(Path::new(g.name))?.reclaimable(swap_free),
                })
            })
            .filter(|c| i != 0 || before_the_machines_own(c, d.record.candidate_age_s))
            .collect();
        (under, candidates)
    }

    /// For each of `domains`, the weighted age of the page the system would take next where
    /// enforcement chooses it: the candidate age times the weight of the group enforcement
    /// would take from first ([`Enforcer::victim`]). Section 5.1.2 prices memory by that age:
    /// with a hog niced +14 beside a program, the hog's pages go first, and the program is
    /// told the severity of losing those, not its own. `None` for the machine (its victim is
    /// the kernel's, among processes nobody governs too), without enforcement, for a domain
    /// with no governed groups under it, and where the victim's nice does not change its age.
    pub fn victim_ages(&self, domains: &[DomainView<'_>]) -> Vec<Option<f64>> {
        let mut ages = vec![None; domains.len()];
        let leaves = leaves(domains);
        if self.state.is_none() || leaves.is_empty() {
            return ages;
        }
        let swap_free = swap_free_bytes();
        for (i, d) in domains.iter().enumerate().skip(1) {
            let (_, candidates) = self.candidates(i, d, &leaves, swap_free);
            ages[i] = self
                .enforcer
                .victim(&candidates)
                .filter(|v| v.nice != MemNice::default())
                .map(Candidate::weighted_age_s);
        }
        ages
    }

    /// Limits a failed restore left lowered are written back; a held limit stays, unless the
    /// group can no longer be held without risk of the kernel killing in it ([`holds`]).
    fn release_what_cannot_be_held(&mut self, swap_free: u64, log: &mut Vec<String>) {
        let max_step = self.enforcer.config().max_step_bytes;
        let Some(state) = &mut self.state else {
            return;
        };
        let held = &mut self.held;
        held.retain(|g, _| {
            let keep = holds(g, swap_free, max_step);
            if !keep && g.is_dir() {
                log.push(format!(
                    "enforcement: {}: its limit goes back (it could no longer page out what it holds)",
                    g.display()
                ));
            }
            keep
        });
        if state.entries().any(|(g, _)| !held.contains_key(g)) {
            log.extend(state.restore_where(|g| !held.contains_key(g)));
        }
    }

    /// Memory over tau that nobody in domain `d` takes (`spare`) goes back to a group held
    /// for it, a step a tick: the thesis's kernel lets a niced process fault its pages back
    /// in when there is free memory for them.
    fn give_back(&mut self, d: &DomainView<'_>, spare: u64, log: &mut Vec<String>) {
        let max_step = self.enforcer.config().max_step_bytes;
        let Some(state) = &mut self.state else {
            return;
        };
        let Some(g) = self
            .held
            .iter()
            .filter(|(_, id)| **id == d.id)
            .map(|(g, _)| g.clone())
            .min()
        else {
            return;
        };
        let original = state.entries().find(|(p, _)| *p == g).map(|(_, v)| v);
        let (Some(original), Ok(limit)) = (original, number(&g, "memory.limit_in_bytes")) else {
            // Gone, or not recorded: nothing to give back.
            self.held.remove(&g);
            return;
        };
        let to = give_back(limit, original, spare, max_step);
        if to == limit {
            return;
        }
        if let Err(e) = write_limit(&g, to) {
            log.push(format!(
                "enforcement: {}: cannot raise its limit to {to}: {e}",
                g.display()
            ));
        } else if to == original {
            self.held.remove(&g);
            if let Err(e) = state.forget(&g) {
                log.push(format!("enforcement: {e}"));
            }
            log.push(format!(
                "enforcement: domain {} has memory over tau: {} has its limit back",
                d.name,
                g.display()
            ));
        }
    }

    /// Begins step `p`: the original limit recorded, then the writes on the limit writer,
    /// waited for [`STEP_WAIT`]. `None`: still running.
    fn begin(&mut self, p: &Pending) -> Option<Done> {
        let state = self.state.as_mut()?;
        let group = p.group.as_path();
        let (usage, current) = match (
            number(group, "memory.usage_in_bytes"),
            number(group, "memory.limit_in_bytes"),
        ) {
            (Ok(u), Ok(c)) => (u, c),
            (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
        };
        let original = state
            .entries()
            .find(|(g, _)| *g == group)
            .map_or(current, |(_, v)| v);
        let target = usage.saturating_sub(p.step.bytes);
        if target == 0 || target >= current {
            // Usage fell (or the limit is already below it): nothing to step.
            return Some(Ok(Outcome::Reclaimed(0)));
        }
        if let Err(e) = state.remember(group, original) {
            return Some(Err(e.to_string()));
        }
        if self.writer.is_none() {
            match LimitWriter::new() {
                Ok(w) => self.writer = Some(w),
                Err(e) => return Some(Err(format!("cannot start the limit writer: {e}"))),
            }
        }
        let job = Job {
            group: p.group.clone(),
            usage,
            target,
            restore: (!p.hold).then_some(original),
        };
        self.writer.as_ref()?.start(job, STEP_WAIT)
    }

    /// What step `p` did, once done: the enforcer told, the limit held or its record
    /// dropped, the bytes counted. Returns the outcome.
    fn settle(
        &mut self,
        now: u64,
        p: &Pending,
        done: Done,
        log: &mut Vec<String>,
        taken_by_id: &mut Vec<(u64, u64)>,
    ) -> Outcome {
        let name = p.group.display().to_string();
        let outcome = done.unwrap_or_else(|why| {
            log.push(format!("enforcement: {name}: {why}"));
            Outcome::Refused
        });
        self.enforcer.outcome(now, p.step, outcome);
        if p.hold && matches!(outcome, Outcome::Reclaimed(_)) {
            self.held.insert(p.group.clone(), p.domain);
        } else if !self.held.contains_key(&p.group) {
            // The original was written back: the record goes, unless a restore failed (then
            // the limit is not the original and the record stays for the next tick).
            if let Some(state) = &mut self.state {
                let original = state.entries().find(|(g, _)| *g == p.group).map(|(_, v)| v);
                let limit = number(&p.group, "memory.limit_in_bytes").ok();
                if original.is_some() && (original == limit || !p.group.is_dir()) {
                    if let Err(e) = state.forget(&p.group) {
                        log.push(format!("enforcement: {e}"));
                    }
                }
            }
        }
        match outcome {
            Outcome::Reclaimed(got) => {
                match taken_by_id.iter_mut().find(|(id, _)| *id == p.step.id) {
                    Some((_, b)) => *b += got,
                    None => taken_by_id.push((p.step.id, got)),
                }
                match self.taken.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, b)) => *b += got,
                    None => self.taken.push((name, got)),
                }
            }
            Outcome::Refused if self.enforcer.backing_off(p.step.id, now) => {
                log.push(format!(
                    "enforcement: {name}: the kernel took too little; left alone for {} s",
                    self.enforcer.config().backoff / 1_000_000_000
                ));
            }
            Outcome::Refused => {}
        }
        outcome
    }

    /// Section 5.1.3 for the kernel's own reclaim: a higher class never pages while a lower
    /// class has pages to give. Where enforcement holds a group's limit in a group domain,
    /// the domain's members of a higher class than that group (the domain's own group, where
    /// its own processes are, and its leaves) get `memory.swappiness` 0, so that the kernel's
    /// reclaim at the domain's limit, which is LRU across the whole domain and would page out
    /// a busy program as readily as the hog beside it, takes anonymous memory only from the
    /// held group (and file pages from anyone). Without it the JVM of section 6.3.4 lost
    /// up to 28 MB to swap beside a hog niced +14. The shield comes off the tick the held
    /// groups have less than two steps of memory left in the domain, when no group is held
    /// there any more, and at exit (the state file restores it after a crash): a domain at
    /// its limit whose only swappable memory is shielded would have the kernel kill in it.
    fn shield(
        &mut self,
        domains: &[DomainView<'_>],
        leaves: &[&DomainView<'_>],
        log: &mut Vec<String>,
    ) {
        let step = self.enforcer.config().max_step_bytes;
        let rank = |g: &Path| {
            enforced_nice(&self.groups, &self.pids, g)
                .unwrap_or_default()
                .class()
                .rank()
        };
        let held: Vec<Held<'_>> = self
            .held
            .iter()
            .map(|(g, &domain)| Held {
                group: g,
                domain,
                rank: rank(g),
                resident: GroupMemory::read(g).map_or(0, |m| m.resident()),
            })
            .collect();
        let group_domains: Vec<(u64, &Path)> = domains
            .iter()
            .skip(1)
            .filter(|d| d.requested)
            .map(|d| (d.id, Path::new(d.name)))
            .collect();
        let leaves: Vec<&Path> = leaves.iter().map(|g| Path::new(g.name)).collect();
        let want = shield_plan(&group_domains, &held, &leaves, rank, step);
        let Some(state) = &mut self.state else {
            return;
        };
        // Off first: what no longer needs it.
        let gone: Vec<PathBuf> = self
            .shielded
            .iter()
            .filter(|g| !want.contains_key(*g))
            .cloned()
            .collect();
        if !gone.is_empty() {
            let failed = state.restore_of(Knob::Swappiness, |g| gone.iter().any(|x| x == g));
            for g in &gone {
                // Restored (or gone) once the state file no longer records it.
                if !state.entries_of(Knob::Swappiness).any(|(p, _)| p == g) {
                    self.shielded.remove(g);
                    log.push(format!(
                        "enforcement: {}: its memory.swappiness is back (no lower class held beside it with memory to give)",
                        g.display()
                    ));
                }
            }
            log.extend(failed);
        }
        for (g, held) in want {
            if self.shielded.contains(&g) {
                continue;
            }
            let Ok(current) = number(&g, Knob::Swappiness.file()) else {
                continue;
            };
            if current == 0 {
                continue; // already shielded by its owner: nothing to restore
            }
            if let Err(e) = state.remember_of(Knob::Swappiness, &g, current) {
                log.push(format!("enforcement: {e}"));
                continue;
            }
            match write_knob(&g, Knob::Swappiness, 0) {
                Ok(()) => {
                    self.shielded.insert(g.clone());
                    log.push(format!(
                        "enforcement: {}: memory.swappiness 0 (was {current}) while {} is held: \
                         the kernel's reclaim takes the lower class's anonymous memory first",
                        g.display(),
                        held.display()
                    ));
                }
                Err(e) => {
                    log.push(format!(
                        "enforcement: {}: cannot set memory.swappiness 0: {e}",
                        g.display()
                    ));
                    let _ = state.restore_of(Knob::Swappiness, |x| x == g);
                }
            }
        }
    }

    /// Whether enforcement holds the limit of a group it took from for domain `id`.
    pub fn holds_in(&self, id: u64) -> bool {
        self.held.values().any(|d| *d == id)
    }

    /// Puts back every limit still changed (at exit), once a write in flight has ended (a
    /// limit lowered after the restore would stay).
    pub fn restore_all(&mut self) -> Vec<String> {
        self.writer = None;
        self.pending = None;
        self.held.clear();
        self.shielded.clear();
        match &mut self.state {
            Some(s) => s.restore_all(),
            None => Vec::new(),
        }
    }

    /// Forgets a domain's enforcement state (its group is gone).
    pub fn forget(&mut self, id: u64) {
        self.enforcer.forget(id);
    }
}

impl Drop for Nices {
    /// The daemon's exit, however it ends (run returned, a panic unwinding): every limit
    /// changed goes back.
    fn drop(&mut self) {
        for why in self.restore_all() {
            eprintln!("antsched memd: {why}");
        }
    }
}

pub(crate) fn number(group: &Path, file: &str) -> Result<u64, String> {
    let path = group.join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.trim()
        .parse()
        .map_err(|_| format!("{}: not a number: {:?}", path.display(), text.trim()))
}

/// The governed groups enforcement may step: requested (so under the governor's parent),
/// under antsched's own parent (only those are restored from the state file, whatever parent
/// the daemon was given), and leaves (a governed group with governed groups under it is a
/// domain, not a candidate).
fn leaves<'a>(domains: &'a [DomainView<'a>]) -> Vec<&'a DomainView<'a>> {
    domains
        .iter()
        .filter(|d| {
            d.requested
                && Path::new(d.name).starts_with(crate::RUN_PARENT)
                && !domains
                    .iter()
                    .any(|o| o.requested && o.id != d.id && Path::new(o.name).starts_with(d.name))
        })
        .collect()
}

/// What enforcement reads of a group: its file and anonymous pages (hierarchically, from
/// `memory.stat`) and its `memory.swappiness` (none when it cannot be read).
struct GroupMemory {
    file: u64,
    anon: Option<u64>,
    swappiness: Option<u64>,
}

impl GroupMemory {
    fn read(group: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(group.join("memory.stat")).ok()?;
        let stat = antsched_mem::kernel::parse_memcg_v1_stat(&text).ok()?;
        Some(Self {
            file: stat.sum_present(&["total_inactive_file", "total_active_file"])?,
            anon: stat.sum_present(&["total_inactive_anon", "total_active_anon"]),
            swappiness: number(group, "memory.swappiness").ok(),
        })
    }

    /// What the kernel's reclaim can take from the group, and so what a step may ask for:
    /// its file pages, and its anonymous pages where they can go to swap (`swap_free` bytes of
    /// swap, and a `memory.swappiness` that is not 0; a group without the file is taken as
    /// swapping, as the kernel's default is). Section 5.1.2 pages a niced-down process's
    /// anonymous memory like any other; a hog that holds only anonymous memory is what memory
    /// nice is for, and with swap on the limit step pages it out.
    /// What it has in memory: its file and anonymous pages.
    fn resident(&self) -> u64 {
        self.file + self.anon.unwrap_or(0)
    }

    fn reclaimable(&self, swap_free: u64) -> u64 {
        let swapping = swap_free > 0 && self.swappiness != Some(0);
        let anon = if swapping {
            self.anon.unwrap_or(0).min(swap_free)
        } else {
            0
        };
        self.file + anon
    }

    /// Whether a step holds the group's limit lowered instead of writing it back at once. A
    /// process that touches all it holds (a hog) faults a page taken and given back its
    /// limit in the next touch, so a step that writes the limit back takes nothing for long;
    /// the thesis's kernel keeps paging the niced process, since its pages stay the oldest by
    /// weighted age (section 5.1.2). A lowered v1 limit does that, but a group at its limit
    /// that cannot reclaim has its processes killed by the kernel, and antsched never kills:
    /// so a limit is held only while everything the group holds could go to swap (its
    /// anonymous memory and a `step` more fit in `swap_free`, and its `memory.swappiness` is
    /// known and not 0; file pages can always be dropped or written back), and it is let go
    /// the tick that stops being true.
    fn holdable(&self, swap_free: u64, step: u64) -> bool {
        can_hold(
            swap_free,
            self.anon.unwrap_or(u64::MAX),
            self.swappiness.unwrap_or(0),
            step,
        )
    }
}

/// Whether group `group` can be held now ([`GroupMemory::holdable`]); not when it cannot be
/// read.
fn holds(group: &Path, swap_free: u64, step: u64) -> bool {
    GroupMemory::read(group).is_some_and(|m| m.holdable(swap_free, step))
}

/// A group whose limit enforcement holds, as [`shield_plan`] sees it.
struct Held<'a> {
    group: &'a Path,
    /// The domain it is held for.
    domain: u64,
    /// Its class's rank (low 0).
    rank: u8,
    /// What it has in memory.
    resident: u64,
}

/// Which groups [`Nices::shield`] gives `memory.swappiness` 0, each with the held group it
/// yields to: in each group domain (`domains`: id and path) with a group held
/// for it that still has two steps in memory ([`shields`]), the domain's own group and its
/// leaves not held, of a higher class (`rank`) than the lowest held there, under antsched's
/// parent.
fn shield_plan(
    domains: &[(u64, &Path)],
    held: &[Held<'_>],
    leaves: &[&Path],
    rank: impl Fn(&Path) -> u8,
    step: u64,
) -> HashMap<PathBuf, PathBuf> {
    let mut want = HashMap::new();
    for &(id, domain) in domains {
        let here: Vec<&Held<'_>> = held.iter().filter(|h| h.domain == id).collect();
        let Some(lowest) = here.iter().min_by_key(|h| h.rank) else {
            continue;
        };
        if !shields(here.iter().map(|h| h.resident).sum(), step) {
            continue;
        }
        let members = std::iter::once(domain).chain(
            leaves
                .iter()
                .copied()
                .filter(|g| g.starts_with(domain) && *g != domain)
                .filter(|g| !held.iter().any(|h| h.group == *g)),
        );
        for m in members {
            if m.starts_with(crate::RUN_PARENT)
                && m != Path::new(crate::RUN_PARENT)
                && rank(m) > lowest.rank
            {
                want.insert(m.to_path_buf(), lowest.group.to_path_buf());
            }
        }
    }
    want
}

/// Whether held groups with `left` bytes of memory still in their domain shield a higher
/// class ([`Nices::shield`]): two steps at least, so that the kernel always has the lower
/// class's memory to take while the higher one cannot swap.
fn shields(left: u64, step: u64) -> bool {
    left >= 2 * step
}

/// See [`GroupMemory::holdable`].
fn can_hold(swap_free: u64, anon: u64, swappiness: u64, step: u64) -> bool {
    swappiness != 0 && anon.saturating_add(step) <= swap_free
}

/// The limit a held group gets back when its domain has `spare` bytes over tau: a step
/// more, no more than the spare, never past the original.
fn give_back(limit: u64, original: u64, spare: u64, step: u64) -> u64 {
    limit.saturating_add(spare.min(step)).min(original)
}

/// `SwapFree` of `/proc/meminfo` (0 when it cannot be read): read once a tick.
fn swap_free_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| antsched_mem::kernel::parse_meminfo(&t).ok())
        .map_or(0, |m| m.swap_free_bytes())
}

/// The owner's uid and the start time of process `pid`, if it exists.
/// Whether enforcement for the machine takes from group `c` at all. The machine holds the
/// pages of processes nobody governs too, and the kernel's own reclaim takes the oldest of
/// them first: the weights only need enforcing where the thesis's kernel would evict a
/// governed group's pages before those, that is, where the group's weighted candidate age
/// is past the machine's candidate age (section 5.1.2), or the group is in the low class
/// (paged before a normal process whatever the ages, section 5.1.3). Without this rule a
/// machine whose page cache keeps `MemFree` under tau, as Linux does once it has run a while,
/// had every governed group reclaimed for it, nice 0 included. A group domain is different:
/// its pages are its governed groups', and one of them must give.
fn before_the_machines_own(c: &Candidate, machine_age_s: f64) -> bool {
    c.nice.class() == antsched_mem::PriorityClass::Low || c.weighted_age_s() > machine_age_s
}

/// See [`Nices::enforced_nice`].
fn enforced_nice(
    groups: &HashMap<PathBuf, MemNice>,
    pids: &HashMap<u32, (MemNice, u64)>,
    group: &Path,
) -> Option<MemNice> {
    if let Some(&n) = groups.get(group) {
        return Some(n);
    }
    let procs = std::fs::read_to_string(group.join("cgroup.procs")).ok()?;
    let mut shared: Option<MemNice> = None;
    for pid in procs.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
        let who = Process::of(pid);
        let own = pids
            .get(&who.pid)
            .filter(|(_, start)| *start == who.start)
            .map(|(n, _)| *n)?;
        match shared {
            None => shared = Some(own),
            Some(n) if n == own => {}
            Some(_) => return None,
        }
    }
    shared
}

fn process(pid: u32) -> Option<(u32, u64)> {
    use std::os::unix::fs::MetadataExt;
    if pid == 0 {
        return None;
    }
    let dir = PathBuf::from(format!("/proc/{pid}"));
    let uid = std::fs::metadata(&dir).ok()?.uid();
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    // The command name is in parentheses and may hold spaces: count fields after its end.
    let after = &stat[stat.rfind(')')? + 1..];
    let start = after.split_whitespace().nth(19)?.parse().ok()?;
    Some((uid, start))
}

/// The v1 memory group process `pid` is in (from `/proc/PID/cgroup`), as a canonical path
/// under the hierarchy (the form group nices are kept under).
pub(crate) fn memory_group_of(pid: u32) -> Option<PathBuf> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let dir = text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "memory")
            .then(|| Path::new(MEMCG_V1_ROOT).join(path.trim_start_matches('/')))
    })?;
    Some(dir.canonicalize().unwrap_or(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A limit is held lowered only while all the group's anonymous memory and a step more
    /// fit in free swap and its reclaim may swap (else a group at its limit could see the
    /// kernel kill); what is given back is a step at most, the spare at most, never past the
    /// original.
    #[test]
    fn a_limit_is_held_only_where_the_kernel_can_page_it_and_comes_back_by_steps() {
        const MIB: u64 = 1 << 20;
        let step = 4 * MIB;
        assert!(can_hold(512 * MIB, 90 * MIB, 60, step));
        assert!(can_hold(94 * MIB, 90 * MIB, 60, step));
        assert!(!can_hold(93 * MIB, 90 * MIB, 60, step), "a step short");
        assert!(!can_hold(0, 0, 60, step), "no swap");
        assert!(!can_hold(512 * MIB, 90 * MIB, 0, step), "swappiness 0");
        assert!(
            !can_hold(512 * MIB, u64::MAX, 60, step),
            "unknown anonymous size"
        );
        assert_eq!(give_back(100 * MIB, 200 * MIB, 50 * MIB, step), 104 * MIB);
        assert_eq!(give_back(100 * MIB, 200 * MIB, MIB, step), 101 * MIB);
        assert_eq!(give_back(198 * MIB, 200 * MIB, 50 * MIB, step), 200 * MIB);
        assert_eq!(give_back(100 * MIB, 200 * MIB, 0, step), 100 * MIB);
        // A higher class is shielded only while the held group has two steps to give.
        assert!(shields(8 * MIB, step));
        assert!(!shields(8 * MIB - 1, step));
        assert!(!shields(0, step));
    }

    /// Section 5.1.3 for the kernel's reclaim: in a domain where a low-class group is held,
    /// the domain's own group and its other leaves of a higher class are shielded, while the
    /// held group has two steps in memory; nothing outside antsched's parent, nothing of the
    /// same class, nothing in a domain with nothing held.
    #[test]
    fn a_higher_class_is_shielded_beside_a_held_lower_one_while_it_has_memory_to_give() {
        const MIB: u64 = 1 << 20;
        let step = 4 * MIB;
        let parent = Path::new(crate::RUN_PARENT);
        let (jvm, hog, peer, same) = (
            parent.join("run-1"),
            parent.join("run-1/run-2"),
            parent.join("run-1/run-3"),
            parent.join("run-1/run-4"),
        );
        let other = parent.join("run-9");
        let rank = |g: &Path| if g == hog || g == same { 0 } else { 1 };
        let domains = [(1, jvm.as_path()), (9, other.as_path())];
        let leaves = [
            hog.as_path(),
            peer.as_path(),
            same.as_path(),
            other.as_path(),
        ];
        let held = |resident| {
            vec![Held {
                group: hog.as_path(),
                domain: 1,
                rank: 0,
                resident,
            }]
        };
        let want = shield_plan(&domains, &held(64 * MIB), &leaves, rank, step);
        let mut got: Vec<_> = want.keys().cloned().collect();
        got.sort();
        assert_eq!(got, [jvm.clone(), peer.clone()]);
        assert_eq!(want[&jvm], hog);
        // The hog nearly all out: the shield comes off, so the kernel may swap the others.
        assert!(shield_plan(&domains, &held(8 * MIB - 1), &leaves, rank, step).is_empty());
        // Nothing held: nothing shielded.
        assert!(shield_plan(&domains, &[], &leaves, rank, step).is_empty());
        // A domain outside antsched's parent is never written.
        let outside = Path::new("/sys/fs/cgroup/memory/user.slice");
        let d = [(1, outside)];
        let h = [Held {
            group: hog.as_path(),
            domain: 1,
            rank: 0,
            resident: 64 * MIB,
        }];
        assert!(shield_plan(&d, &h, &[], rank, step).is_empty());
    }

    /// Sections 5.1.2 and 5.1.3 for the machine domain: a group gives for the machine only
    /// when its weighted age is past the machine's candidate age, or it is in the low class.
    #[test]
    fn the_machine_takes_only_from_groups_older_than_its_own_candidate() {
        let group = |nice: i64, age: f64| Candidate {
            id: 1,
            nice: MemNice::new(nice).unwrap(),
            candidate_age_s: age,
            reclaimable_bytes: 64 << 20,
        };
        // The machine evicts 600 s old pages of its own: a nice-0 group at 300 s keeps its.
        assert!(!before_the_machines_own(&group(0, 300.0), 600.0));
        assert!(before_the_machines_own(&group(0, 900.0), 600.0));
        // Niced +4 (weight 8), 300 s looks like 2400 s: it gives.
        assert!(before_the_machines_own(&group(4, 300.0), 600.0));
        // Niced -4 (weight 1/8), 3000 s looks like 375 s: it keeps.
        assert!(!before_the_machines_own(&group(-4, 3000.0), 600.0));
        // The low class gives whatever its age.
        assert!(before_the_machines_own(&group(19, 1e-6), 3600.0));
    }

    #[test]
    fn a_process_is_found_with_its_owner_and_start_time() {
        let me = std::process::id();
        let (uid, start) = process(me).unwrap();
        assert_eq!(uid, rustix::process::geteuid().as_raw());
        assert!(start > 0);
        assert_eq!(process(0), None);
        assert_eq!(process(u32::MAX >> 1), None);
    }

    #[test]
    fn a_process_memory_group_is_read_from_proc() {
        if !Path::new(MEMCG_V1_ROOT).join("memory.stat").is_file() {
            eprintln!("skipping: no v1 memory hierarchy");
            return;
        }
        let g = memory_group_of(std::process::id()).unwrap();
        assert!(
            g.starts_with(MEMCG_V1_ROOT) && g.is_dir(),
            "{}",
            g.display()
        );
        assert_eq!(memory_group_of(u32::MAX >> 1), None);
    }

    #[test]
    fn bad_nice_requests_say_what_is_wrong() {
        let mut n = Nices::new(None);
        let parent = std::env::temp_dir();
        let e = n
            .set(0, 20, &NiceTarget::Pid(1), Some(&parent))
            .unwrap_err();
        assert_eq!(e, "memory nice 20 is outside -20..=19");
        let e = n
            .set(0, 5, &NiceTarget::Pid(u32::MAX >> 1), None)
            .unwrap_err();
        assert_eq!(e, format!("no process {}", u32::MAX >> 1));
        let e = n
            .set(0, 5, &NiceTarget::Cgroup("/etc".into()), Some(&parent))
            .unwrap_err();
        assert!(e.contains("is not a group under"), "{e}");
        let e = n
            .set(0, 5, &NiceTarget::Cgroup("/no/such".into()), Some(&parent))
            .unwrap_err();
        assert!(e.starts_with("cannot nice the group /no/such"), "{e}");
        let me = std::process::id();
        let ok = n.set(0, 4, &NiceTarget::Pid(me), None).unwrap();
        assert_eq!(ok, format!("nice 4 pid {me} weight 8"));
        assert_eq!(n.nice_of(Process::of(me), None), MemNice::new(4).unwrap());
        // A later process with the same PID (another start time) does not inherit it.
        let reused = Process {
            pid: me,
            start: Process::of(me).start + 1,
        };
        assert_eq!(n.nice_of(reused, None), MemNice::NORMAL);
        // Another user may not raise the protection of a process (negative nice).
        let e = n.set(12345, -1, &NiceTarget::Pid(me), None).unwrap_err();
        assert!(e.contains("only set a nice of 0 or more"), "{e}");
        n.prune();
        assert_eq!(n.nice_of(Process::of(me), None), MemNice::new(4).unwrap());
    }
}
