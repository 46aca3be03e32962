//! The memory simulator's event loop: virtual time, the kernel's frames, faults and paging,
//! the processes' steps, notifications and the baseline controllers.
//!
//! Each process runs in *steps* (a query, a megabyte of allocation, a collection, a batch of
//! references): a step is a list of pages to touch and the CPU time it costs. Touching a
//! resident page is a reference bit set in the replacement model; touching a page that is not
//! resident is a fault: a fresh page needs a free frame, a page that was paged out (or a data
//! page that was dropped) needs a synchronous read through the disk scheduler, and the step
//! resumes where it stopped when the read completes. Each process has a CPU of its own (the
//! experiments are memory-bound; the thesis's single CPU is a difference the report names).
//!
//! When no frame is free the kernel takes the replacement model's candidate: a clean page is
//! dropped at once, a dirty one is written to the swap area and its frame is free when the
//! write completes. The severity is computed from free frames and the candidate's age
//! (Eq. 4.1) and every subscriber's notifier sees it scaled by its weight.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use antsched_core::{ContextId, Nanos, Op, RequestId, SEC};
use rustc_hash::FxHashMap;

use super::disk::{PagingDisk, PAGER, PAGE_SECTORS};
use super::process::{Proc, Touch};
use super::report::{MemReport, ProcReport, Reaction, Sample};
use super::scenario::{Policy, Scenario};
use crate::nice::PriorityClass;
use crate::replacement::{PageId, Replacement, ReplacementConfig};
use crate::severity::SeverityConfig;

/// Bytes in a page.
pub const PAGE: u64 = 4096;
const MB: f64 = 1048576.0;
/// Page-outs in flight at most. Reclaim of every kind (the pager's, a group's limit, DAMON's
/// scheme) goes through the block layer, whose request pool (`nr_requests`, 64 and up) makes
/// a writer wait once it is full: the rest of a round of proactive reclaim waits for the next
/// round rather than queueing thousands of writes at the disk at once.
const MAX_LAUNDERING: u64 = 64;

/// A virtual page's state, packed in a u32: not present, resident in frame `page`, or in swap
/// slot `slot`.
pub const NONE: u32 = u32::MAX;
const SWAP_BIT: u32 = 1 << 31;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Start(u32),
    Step(u32),
    IoDone(u64),
    SchedPoll,
    Scan,
    Sample,
    Check,
    Round(u32),
    /// A notification reaches a process that is computing: its handler runs now.
    Signal(u32),
    Policy,
}

#[derive(Clone, Copy, Debug)]
enum Io {
    /// A page-in for process `proc`'s virtual page `vpage`.
    PageIn { proc: u32, vpage: u32, clean: bool },
    /// A page-out; its frame is free when it completes.
    PageOut,
}

/// The whole simulated machine.
pub struct Engine<'a> {
    pub(crate) scenario: &'a Scenario,
    pub(crate) cfg: SeverityConfig,
    pub(crate) now: Nanos,
    seq: u64,
    events: BinaryHeap<Reverse<(Nanos, u64, Ev)>>,
    pub(crate) mem: Replacement,
    /// Frame owners: PageId to (process, virtual page).
    owners: Vec<(u32, u32)>,
    pub(crate) total_frames: u64,
    pub(crate) free_frames: u64,
    /// Page-outs in flight (their frames are not yet free).
    laundering: u64,
    pub(crate) disk: PagingDisk,
    io: FxHashMap<u64, Io>,
    sched_timer: Option<Nanos>,
    swap_free: Vec<u32>,
    swap_next: u32,
    swap_base: u64,
    swap_slots: u32,
    pub(crate) data_base: Vec<u64>,
    pub(crate) procs: Vec<Proc>,
    frame_waiters: std::collections::VecDeque<u32>,
    pub(crate) stats: Stats,
    samples: Vec<Sample>,
    /// Processes blocked on memory (faults and frame waits) and the integral of "some".
    stalled: u32,
    stall_ns: Nanos,
    stall_at: Nanos,
    /// PSI's "some" over about ten seconds, updated every second.
    pub(crate) psi_avg10: f64,
    psi_last: Nanos,
    /// The S of each class (by rank) at the last pass over the listeners.
    last_check_severity: [f64; 3],
    /// The classes that have a listening process, by rank.
    listened: [bool; 3],
    /// Processes of more than one priority class: each class is priced by its own S.
    mixed_classes: bool,
    end: Nanos,
    /// Finite processes not yet done: the run ends when it reaches 0.
    running: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub page_refs: u64,
    pub pages_read_back: u64,
    pub data_reads: u64,
    pub page_outs: u64,
    pub notifications: u64,
    pub max_disk_queue: usize,
}

impl<'a> Engine<'a> {
    pub fn new(scenario: &'a Scenario, seed: u64) -> Result<Self, String> {
        let m = &scenario.machine;
        let total_frames = (((m.memory_mb - m.reserved_mb) * MB) / PAGE as f64).floor() as u64;
        if total_frames < 16 {
            return Err("machine.memory_mb - reserved_mb leaves fewer than 16 pages".into());
        }
        let disk = PagingDisk::new(&m.disk, &m.scheduler, seed)?;
        let mut mem = Replacement::new(ReplacementConfig {
            s_min: scenario.severity.s_min,
            ..Default::default()
        });
        let mut procs = Vec::new();
        for (i, spec) in scenario.processes.iter().enumerate() {
            let nice = scenario.nice_of(spec).map_err(|e| e.to_string())?;
            mem.set_nice(i as u32, nice);
            procs.push(Proc::new(
                i,
                spec,
                nice,
                &scenario.severity,
                secs(scenario.machine.notify_repeat_s),
                matches!(scenario.policy, Policy::Antsched),
                seed,
            ));
        }
        // Lay out the data files, then the swap area, from a quarter of the disk: the swap
        // area is as large as all the processes could ever page out.
        let cap = disk.capacity_sectors;
        let mut at = cap / 4;
        let mut data_base = Vec::new();
        for p in &procs {
            data_base.push(at);
            at = at.saturating_add(p.data_pages() * PAGE_SECTORS as u64);
        }
        let swap_base = at;
        // The swap area is the rest of the disk; a process that would page out more than it
        // holds is killed as the kernel's OOM killer would (see `evicted`).
        let swap_slots = cap.saturating_sub(swap_base) / PAGE_SECTORS as u64;
        if swap_slots < 16384 {
            return Err(format!(
                "the data files leave less than 64 MiB of swap on {} ({:.0} MiB)",
                m.disk,
                cap as f64 * 512.0 / MB
            ));
        }
        let swap_slots = swap_slots.min(u32::MAX as u64 >> 1) as u32;
        let end = secs(m.max_time_s);
        let mut e = Self {
            scenario,
            cfg: scenario.severity,
            now: 0,
            seq: 0,
            events: BinaryHeap::new(),
            mem,
            owners: Vec::new(),
            total_frames,
            free_frames: total_frames,
            laundering: 0,
            disk,
            io: FxHashMap::default(),
            sched_timer: None,
            swap_free: Vec::new(),
            swap_next: 0,
            swap_base,
            swap_slots,
            data_base,
            procs,
            frame_waiters: Default::default(),
            stats: Stats::default(),
            samples: Vec::new(),
            stalled: 0,
            stall_ns: 0,
            stall_at: 0,
            psi_avg10: 0.0,
            psi_last: 0,
            last_check_severity: [scenario.severity.s_max; 3],
            listened: [false; 3],
            mixed_classes: false,
            end,
            running: 0,
        };
        e.running = e.procs.iter().filter(|p| p.finite()).count();
        e.mixed_classes = e
            .procs
            .windows(2)
            .any(|w| w[0].nice.class() != w[1].nice.class());
        for p in e.procs.iter().filter(|p| p.listens()) {
            e.listened[p.nice.class().rank() as usize] = true;
        }
        for i in 0..e.procs.len() {
            let at = secs(scenario.processes[i].start_s);
            e.push(at, Ev::Start(i as u32));
        }
        let next = e.mem.next_tick();
        e.push(next, Ev::Scan);
        e.push(0, Ev::Sample);
        e.push(SEC, Ev::Policy);
        Ok(e)
    }

    fn push(&mut self, at: Nanos, ev: Ev) {
        self.seq += 1;
        self.events.push(Reverse((at, self.seq, ev)));
    }

    /// Runs to the end: every finite process done, or the time limit.
    pub fn run(self) -> MemReport {
        self.run_loop(None)
    }

    /// [`run`](Self::run), calling `progress` now and then (every 16,384 events) with the
    /// share of the run done, 0 to 1: the slowest process's share of its work, or of the
    /// time limit when that is further along. For progress bars; the result does not depend
    /// on it.
    pub fn run_with_progress(self, progress: &mut dyn FnMut(f64)) -> MemReport {
        self.run_loop(Some(progress))
    }

    fn run_loop(mut self, mut progress: Option<&mut dyn FnMut(f64)>) -> MemReport {
        let started = std::time::Instant::now();
        let mut events = 0u64;
        while let Some(Reverse((at, _, ev))) = self.events.pop() {
            events += 1;
            if events % 16_384 == 0 {
                if let Some(p) = progress.as_mut() {
                    p(self.done_share());
                }
            }
            if at > self.end {
                self.now = self.end;
                break;
            }
            self.now = at;
            match ev {
                Ev::Start(p) => {
                    self.procs[p as usize].started = Some(self.now);
                    self.run_proc(p);
                }
                Ev::Step(p) => self.run_proc(p),
                Ev::IoDone(id) => self.io_done(id),
                Ev::SchedPoll => {
                    if self.sched_timer == Some(self.now) {
                        self.sched_timer = None;
                    }
                    self.kick_disk();
                }
                Ev::Scan => {
                    self.mem.tick(self.now);
                    let next = self.mem.next_tick().max(self.now + 1);
                    self.push(next, Ev::Scan);
                }
                Ev::Sample => {
                    self.sample();
                    let next = self.now + secs(self.scenario.machine.sample_s);
                    self.push(next, Ev::Sample);
                }
                Ev::Check => self.check_severity(true),
                Ev::Round(p) => self.release_round(p),
                Ev::Signal(p) => self.deliver(p),
                Ev::Policy => {
                    self.policy_tick();
                    self.push(self.now + SEC, Ev::Policy);
                }
            }
            if self.running == 0 {
                break;
            }
        }
        self.sample();
        let wall = started.elapsed().as_secs_f64();
        self.report(wall)
    }

    /// The share of the run done (see [`run_with_progress`](Self::run_with_progress)).
    fn done_share(&self) -> f64 {
        let by_time = self.now as f64 / self.end.max(1) as f64;
        self.procs
            .iter()
            .filter(|p| p.done.is_none())
            .filter_map(|p| p.fraction())
            .reduce(f64::min)
            .unwrap_or(1.0)
            .max(by_time)
            .min(1.0)
    }

    // ---- processes ----

    fn run_proc(&mut self, p: u32) {
        let pi = p as usize;
        if self.procs[pi].done.is_some() || self.procs[pi].blocked {
            return;
        }
        // A notification that arrived while the process was blocked in a fault is handled
        // now, as a signal handler runs when the process returns to user space.
        if let Some(n) = self.procs[pi].pending.take() {
            self.handle_notification(p, n.severity_s, n.time);
        }
        loop {
            if self.procs[pi].step.is_none() {
                let step = {
                    let (procs, now) = (&mut self.procs, self.now);
                    procs[pi].plan(now)
                };
                match step {
                    Some(s) => {
                        self.apply_releases(p);
                        self.procs[pi].step = Some(s);
                    }
                    None => {
                        self.apply_releases(p);
                        self.finish(p);
                        return;
                    }
                }
            }
            // Touch the step's pages from where it stopped.
            let mut step = self.procs[pi].step.take().expect("a step");
            while step.next < step.touches.len() {
                let t = step.touches[step.next];
                if !self.touch(p, t) {
                    self.procs[pi].step = Some(step);
                    return;
                }
                step.next += 1;
            }
            let cpu = step.cpu;
            self.procs[pi].spare_touches = step.touches;
            self.apply_releases(p);
            self.check_severity(false);
            if cpu > 0 {
                self.push(self.now + cpu, Ev::Step(p));
                return;
            }
        }
    }

    /// Frees what the process's model let go of (cache entries dropped, a heap shrunk, a pool
    /// returned): frames become free, swap slots are released.
    fn apply_releases(&mut self, p: u32) {
        let freed = std::mem::take(&mut self.procs[p as usize].released);
        self.procs[p as usize].released_pages += freed.len() as u64;
        for v in freed {
            self.free_vpage(p, v);
        }
    }

    fn free_vpage(&mut self, p: u32, v: u32) {
        let s = self.set_vm(p, v, NONE);
        if s == NONE {
        } else if s & SWAP_BIT != 0 {
            self.swap_free.push(s & !SWAP_BIT);
        } else {
            self.mem.release(s);
            self.owners[s as usize] = (u32::MAX, 0);
            self.free_frames += 1;
            self.procs[p as usize].resident -= 1;
            self.wake_frame_waiter();
        }
    }

    /// Touches a page; false if the process must wait (a read, or a free frame).
    fn touch(&mut self, p: u32, t: Touch) -> bool {
        let pi = p as usize;
        let v = t.vpage;
        let s = self.procs[pi].vm[v as usize];
        if s != NONE && s & SWAP_BIT == 0 {
            self.mem.reference(s, p);
            if t.write {
                self.mem.set_dirty(s, true);
            }
            self.stats.page_refs += 1;
            return true;
        }
        if s == NONE && !t.data {
            // A fresh anonymous page: a frame, no I/O.
            let Some(page) = self.take_frame(p) else {
                return false;
            };
            self.map(p, v, page, true);
            self.stats.page_refs += 1;
            return true;
        }
        // A fault that needs a read: from the swap area, or from the data file.
        let sector = if s & SWAP_BIT != 0 && s != NONE {
            self.stats.pages_read_back += 1;
            self.procs[pi].pages_read_back += 1;
            self.swap_base + (s & !SWAP_BIT) as u64 * PAGE_SECTORS as u64
        } else {
            self.stats.data_reads += 1;
            self.data_base[pi] + v as u64 * PAGE_SECTORS as u64
        };
        let clean = s == NONE;
        let id = self.disk.submit(ContextId(p), Op::Read, sector, self.now);
        self.io.insert(
            id.0,
            Io::PageIn {
                proc: p,
                vpage: v,
                clean,
            },
        );
        self.procs[pi].faults += 1;
        self.block(p);
        self.kick_disk();
        false
    }

    /// Sets process `p`'s virtual page `v` to `state` (a frame, a swap slot or [`NONE`]) and
    /// returns what it was, keeping the count of pages the process holds (`Proc::held`) that
    /// its samples report, so that they need not walk the page table.
    fn set_vm(&mut self, p: u32, v: u32, state: u32) -> u32 {
        let pr = &mut self.procs[p as usize];
        let old = std::mem::replace(&mut pr.vm[v as usize], state);
        pr.held = pr.held + (state != NONE) as u64 - (old != NONE) as u64;
        old
    }

    fn map(&mut self, p: u32, v: u32, page: PageId, dirty: bool) {
        if !dirty {
            self.mem.set_dirty(page, false);
        }
        if self.owners.len() <= page as usize {
            self.owners.resize(page as usize + 1, (u32::MAX, 0));
        }
        self.owners[page as usize] = (p, v);
        self.set_vm(p, v, page);
        self.procs[p as usize].resident += 1;
    }

    fn block(&mut self, p: u32) {
        self.stall_update();
        self.procs[p as usize].blocked = true;
        self.stalled += 1;
    }

    fn unblock(&mut self, p: u32) {
        self.stall_update();
        self.procs[p as usize].blocked = false;
        self.stalled -= 1;
        self.push(self.now, Ev::Step(p));
    }

    fn stall_update(&mut self) {
        if self.stalled > 0 {
            self.stall_ns += self.now - self.stall_at;
        }
        self.stall_at = self.now;
    }

    fn finish(&mut self, p: u32) {
        let pi = p as usize;
        self.procs[pi].done = Some(self.now);
        if self.procs[pi].finite() {
            self.running -= 1;
        }
        // Its memory goes back to the system.
        for v in 0..self.procs[pi].vm.len() as u32 {
            self.free_vpage(p, v);
        }
        self.disk.context_exited(ContextId(p), self.now);
        self.check_severity(false);
    }

    /// The OOM killer: out of swap, the process that needed the slot dies.
    fn kill(&mut self, p: u32) {
        let pi = p as usize;
        if self.procs[pi].done.is_some() {
            return;
        }
        self.procs[pi].killed = true;
        if self.procs[pi].blocked {
            self.stall_update();
            self.procs[pi].blocked = false;
            self.stalled -= 1;
            self.frame_waiters.retain(|&w| w != p);
        }
        self.finish(p);
    }

    // ---- frames and paging ----

    /// A free frame for process `p`, reclaiming if needed; None: `p` waits for a page-out.
    fn take_frame(&mut self, p: u32) -> Option<PageId> {
        while self.free_frames == 0 {
            if !self.reclaim_one() {
                self.frame_waiters.push_back(p);
                self.block(p);
                return None;
            }
        }
        self.free_frames -= 1;
        Some(self.mem.alloc(p, true, self.now))
    }

    /// Evicts the replacement candidate. A clean page frees its frame now; a dirty page is
    /// written out first. False when nothing more can be done now (page-outs in flight).
    fn reclaim_one(&mut self) -> bool {
        // Bound the laundry: the pager waits for its writes rather than emptying memory.
        if self.laundering >= MAX_LAUNDERING {
            return false;
        }
        let Some(victim) = self.mem.evict(self.now) else {
            return false;
        };
        self.evicted(victim.page, victim.dirty);
        true
    }

    /// Takes a page the replacement model has just evicted out of its process.
    pub(crate) fn evicted(&mut self, page: PageId, dirty: bool) {
        let (p, v) = self.owners[page as usize];
        self.owners[page as usize] = (u32::MAX, 0);
        let pi = p as usize;
        self.procs[pi].resident -= 1;
        let is_data = self.procs[pi].is_data(v);
        if dirty || !is_data {
            let slot = match self.swap_free.pop() {
                Some(s) => s,
                None if self.swap_next < self.swap_slots => {
                    self.swap_next += 1;
                    self.swap_next - 1
                }
                None => {
                    // Swap is full: the kernel kills the process (its pages are freed).
                    self.set_vm(p, v, NONE);
                    self.free_frames += 1;
                    self.kill(p);
                    return;
                }
            };
            self.set_vm(p, v, SWAP_BIT | slot);
            let sector = self.swap_base + slot as u64 * PAGE_SECTORS as u64;
            let id = self.disk.submit(PAGER, Op::Write, sector, self.now);
            self.io.insert(id.0, Io::PageOut);
            self.laundering += 1;
            self.stats.page_outs += 1;
            self.kick_disk();
        } else {
            self.set_vm(p, v, NONE);
            self.free_frames += 1;
        }
    }

    fn wake_frame_waiter(&mut self) {
        if let Some(p) = self.frame_waiters.pop_front() {
            self.unblock(p);
        }
    }

    fn io_done(&mut self, id: u64) {
        self.disk.complete(RequestId(id), self.now);
        match self.io.remove(&id) {
            Some(Io::PageIn { proc, .. }) if self.procs[proc as usize].done.is_some() => {}
            Some(Io::PageIn { proc, vpage, clean }) => {
                // The frame for the page read in.
                let slot = self.procs[proc as usize].vm[vpage as usize];
                if slot != NONE && slot & SWAP_BIT != 0 {
                    self.swap_free.push(slot & !SWAP_BIT);
                }
                self.set_vm(proc, vpage, NONE);
                if self.free_frames == 0 {
                    self.reclaim_one();
                }
                if self.free_frames > 0 {
                    self.free_frames -= 1;
                    let page = self.mem.alloc(proc, !clean, self.now);
                    self.map(proc, vpage, page, !clean);
                    self.stats.page_refs += 1;
                    if let Some(s) = self.procs[proc as usize].step.as_mut() {
                        s.next += 1;
                    }
                }
                // else: the step retries the touch and waits for a frame.
                self.unblock(proc);
            }
            Some(Io::PageOut) => {
                self.laundering -= 1;
                self.free_frames += 1;
                self.wake_frame_waiter();
            }
            None => {}
        }
        self.kick_disk();
    }

    fn kick_disk(&mut self) {
        if let Some((finish, id)) = self.disk.dispatch(self.now) {
            self.push(finish, Ev::IoDone(id.0));
        }
        self.stats.max_disk_queue = self.stats.max_disk_queue.max(self.disk.depth());
        if let Some(t) = self.disk.poll_timeout() {
            if self.sched_timer != Some(t) && t >= self.now {
                self.sched_timer = Some(t);
                self.push(t, Ev::SchedPoll);
            }
        }
    }

    // ---- severity and notifications ----

    /// The system's severity now (Eq. 4.1).
    pub(crate) fn severity(&self) -> (f64, f64) {
        let tau = self.cfg.tau(self.total_frames);
        let age = self.mem.candidate_age_s().unwrap_or(self.cfg.s_max);
        (self.cfg.severity(self.free_frames, tau, age), age)
    }

    /// The severity a process of `class` is priced by, before its weight: where lower
    /// classes hold memory, their pages count as free and their ages do not set the
    /// candidate, because they are paged first and "cannot make a higher class page or
    /// adapt" (section 5.1.3). With one class present it is the system's severity.
    fn severity_for(&self, class: PriorityClass) -> f64 {
        if !self.mixed_classes {
            return self.severity().0;
        }
        let below: u64 = self
            .procs
            .iter()
            .filter(|p| p.nice.class().rank() < class.rank())
            .map(|p| p.resident)
            .sum();
        let tau = self.cfg.tau(self.total_frames);
        let age = self.mem.candidate_age_for(class).unwrap_or(self.cfg.s_max);
        self.cfg.severity(self.free_frames + below, tau, age)
    }

    /// Tells each subscriber whose scaled severity moved by a factor of two, or whose 1 s
    /// repeat is due. `forced`: from the repeat timer.
    fn check_severity(&mut self, forced: bool) {
        if !matches!(self.scenario.policy, Policy::Antsched) {
            return;
        }
        // Each class with listeners is priced by its own S (one S when only one class runs).
        // Between repeats only a move by a factor of two can notify anyone; checking on every
        // step would cost a pass over the processes per reference batch.
        let mut by_class = self.last_check_severity;
        for c in [
            PriorityClass::Low,
            PriorityClass::Normal,
            PriorityClass::High,
        ] {
            if self.listened[c.rank() as usize] {
                by_class[c.rank() as usize] = self.severity_for(c);
            }
        }
        let moved = by_class
            .iter()
            .zip(&self.last_check_severity)
            .any(|(&s, &last)| s <= last / 1.9 || s >= last * 1.9);
        if !forced && !moved {
            return;
        }
        self.last_check_severity = by_class;
        let mut next_repeat: Option<Nanos> = None;
        let mut signals = Vec::new();
        for i in 0..self.procs.len() {
            let pr = &mut self.procs[i];
            if pr.done.is_some() || pr.started.is_none() || !pr.listens() {
                continue;
            }
            let seen = pr
                .nice
                .scaled_severity(by_class[pr.nice.class().rank() as usize]);
            if let Some(n) = pr.notifier.observe(seen, self.now) {
                self.stats.notifications += 1;
                // A process that is computing takes the signal at once; one blocked in a
                // fault (or waiting for a frame) takes it when the fault completes, as
                // SIGMEM reaches a process in uninterruptible sleep (section 6.2.4).
                if pr.pending.replace(n).is_none() && !pr.blocked {
                    signals.push(i as u32);
                }
            }
            if let Some(t) = pr.notifier.poll_timeout() {
                next_repeat = Some(next_repeat.map_or(t, |x: Nanos| x.min(t)));
            }
        }
        if let Some(t) = next_repeat {
            self.push(t.max(self.now + 1), Ev::Check);
        }
        for p in signals {
            self.push(self.now, Ev::Signal(p));
        }
    }

    /// Runs a pending notification's handler if the process is still computing (not blocked
    /// since, not finished, not handled already at a step boundary).
    fn deliver(&mut self, p: u32) {
        let pr = &mut self.procs[p as usize];
        if pr.done.is_some() || pr.blocked {
            return;
        }
        if let Some(n) = pr.pending.take() {
            self.handle_notification(p, n.severity_s, n.time);
        }
    }

    fn handle_notification(&mut self, p: u32, severity_s: f64, sent: Nanos) {
        self.procs[p as usize]
            .reactions
            .push((sent, (self.now - sent) as f64 / 1e6));
        self.react(p, severity_s);
    }

    /// Another release round: S as it is now, after the last round's release.
    fn release_round(&mut self, p: u32) {
        if self.procs[p as usize].done.is_some() {
            return;
        }
        let nice = self.procs[p as usize].nice;
        let seen = nice.scaled_severity(self.severity_for(nice.class()));
        self.react(p, seen);
    }

    /// The process acts on the severity it is told; a cache with more to release gets
    /// another round after S has been looked at again.
    fn react(&mut self, p: u32, seen: f64) {
        let paging = self.disk.paging_cost(self.now);
        let more = self.procs[p as usize].on_severity(seen, self.cfg.s_max, &paging, self.now);
        self.apply_releases(p);
        if more {
            // Release a few MB, then look at S again (section 6.2.6, lesson 1).
            self.push(self.now + 10 * antsched_core::MS, Ev::Round(p));
        }
        self.check_severity(false);
    }

    // ---- the anchors' controllers ----

    fn policy_tick(&mut self) {
        // PSI "some": the fraction of the last second with a process stalled on memory,
        // averaged over about ten seconds as the kernel's avg10.
        self.stall_update();
        let window = (self.now - self.psi_last).max(1) as f64;
        let frac = (self.stall_ns as f64 / window).min(1.0);
        self.stall_ns = 0;
        self.psi_last = self.now;
        let k = (-window / 10e9).exp();
        self.psi_avg10 = self.psi_avg10 * k + frac * (1.0 - k);
        let psi = self.psi_avg10;
        let now = self.now;
        match self.scenario.policy.clone() {
            Policy::Antsched | Policy::Fixed => {}
            Policy::Psi {
                low,
                critical,
                hold_s,
            } => {
                for i in 0..self.procs.len() {
                    let level = if psi >= critical {
                        2
                    } else if psi >= low {
                        1
                    } else {
                        0
                    };
                    self.procs[i].on_psi_level(level, now, secs(hold_s));
                    self.apply_releases(i as u32);
                }
            }
            Policy::Halve {
                threshold,
                interval_s,
            } => {
                if psi >= threshold {
                    for i in 0..self.procs.len() {
                        self.procs[i].on_halve(now, secs(interval_s));
                        self.apply_releases(i as u32);
                    }
                }
            }
            Policy::Senpai {
                target,
                step,
                interval_s,
            } => {
                let every = (interval_s.round() as u64).max(1);
                if (now / SEC) % every == 0 {
                    for i in 0..self.procs.len() {
                        let pr = &mut self.procs[i];
                        if pr.started.is_none() || pr.done.is_some() {
                            continue;
                        }
                        let limit = pr.limit_pages.unwrap_or(pr.resident as f64);
                        let limit = if psi < target {
                            limit * (1.0 - step)
                        } else {
                            limit * (1.0 + step)
                        };
                        pr.limit_pages = Some(limit.max(64.0));
                        // The kernel reclaims from the group past its limit.
                        while (self.procs[i].resident as f64)
                            > self.procs[i].limit_pages.unwrap_or(f64::MAX)
                            && self.laundering < MAX_LAUNDERING
                        {
                            let Some(v) = self.mem.evict_of(i as u32, now) else {
                                break;
                            };
                            self.evicted(v.page, v.dirty);
                        }
                    }
                }
            }
            Policy::DamonReclaim { min_age_s } => {
                if (now / SEC) % 5 == 0 {
                    while self.laundering < MAX_LAUNDERING
                        && self.mem.candidate_age_s().is_some_and(|a| a >= min_age_s)
                    {
                        let Some(v) = self.mem.evict(now) else { break };
                        self.evicted(v.page, v.dirty);
                    }
                }
            }
        }
    }

    // ---- output ----

    fn sample(&mut self) {
        let (s, age) = self.severity();
        self.samples.push(Sample {
            time_s: self.now as f64 / 1e9,
            severity_s: s,
            candidate_age_s: age,
            free_mb: self.free_frames as f64 * PAGE as f64 / MB,
            disk_queue: self.disk.depth(),
            resident_mb: self
                .procs
                .iter()
                .map(|p| p.resident as f64 * PAGE as f64 / MB)
                .collect(),
            cache_mb: self.procs.iter().map(|p| p.elastic_mb()).collect(),
            lookups: self.procs.iter().map(|p| p.lookups().0).collect(),
            hits: self.procs.iter().map(|p| p.lookups().1).collect(),
        });
        for p in &mut self.procs {
            if p.started.is_some() && p.done.is_none() {
                p.resident_sum += p.resident as f64;
                p.resident_n += 1;
                p.peak = p.peak.max(p.resident);
            }
        }
    }

    fn report(self, wall_s: f64) -> MemReport {
        let processes = self
            .procs
            .iter()
            .map(|p| {
                let page_mb = PAGE as f64 / MB;
                ProcReport {
                    name: p.name.clone(),
                    nice: p.nice.nice(),
                    weight: p.nice.weight(),
                    resident_mb: if p.resident_n > 0 {
                        p.resident_sum / p.resident_n as f64 * page_mb
                    } else {
                        0.0
                    },
                    peak_mb: p.peak as f64 * page_mb,
                    hit_rate: p.hit_rate(),
                    runtime_s: match (p.started, p.done) {
                        (Some(s), Some(d)) if p.finite() && !p.killed => Some((d - s) as f64 / 1e9),
                        _ => None,
                    },
                    finished: (p.done.is_some() || !p.finite()) && !p.killed,
                    killed: p.killed,
                    faults: p.faults,
                    pages_read_back: p.pages_read_back,
                    notifications: p.reactions.len() as u64,
                    reaction_ms_mean: mean(&p.reactions.iter().map(|r| r.1).collect::<Vec<_>>()),
                    reaction_ms_max: p.reactions.iter().map(|r| r.1).fold(0.0, f64::max),
                    reactions: p
                        .reactions
                        .iter()
                        .map(|&(at, ms)| Reaction {
                            time_s: at as f64 / 1e9,
                            ms,
                        })
                        .collect(),
                    released_mb: p.released_pages as f64 * page_mb,
                    collections: p.collections(),
                }
            })
            .collect();
        let refs = self.stats.page_refs;
        MemReport {
            policy: self.scenario.policy.name().to_string(),
            scheduler: self.disk.scheduler_name().to_string(),
            disk: self.scenario.machine.disk.clone(),
            duration_s: self.now as f64 / 1e9,
            processes,
            severity: self.samples,
            pages_read_back: self.stats.pages_read_back,
            data_reads: self.stats.data_reads,
            page_outs: self.stats.page_outs,
            notifications: self.stats.notifications,
            max_disk_queue: self.stats.max_disk_queue,
            sim: super::report::SimStats {
                page_refs: refs,
                wall_s,
                page_refs_per_s: refs as f64 / wall_s.max(1e-9),
            },
        }
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Seconds to ns, saturating (scenario values are checked to be at most a year).
pub fn secs(s: f64) -> Nanos {
    (s * 1e9).clamp(0.0, u64::MAX as f64 / 2.0) as Nanos
}
