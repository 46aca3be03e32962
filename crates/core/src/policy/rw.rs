//! Reads before write-back, with gradual aging and write batches: the base policy of
//! `as-rw-sptf` (issue 18), built from what the seeds found wanting in the others.
//!
//! - **Gradual aging.** Aged-SPTF as the paper ran it keeps SPTF's order until a request has
//!   waited the age bound, then serves oldest first; under a write-back flood the oldest are
//!   the writes queued before the reader's request, and the reader it was meant to protect
//!   waits behind them (the Linux/CAS paper's Table 1: `as-aged-sptf` never finishes the
//!   reader). Here, as there, SPTF alone orders a synchronous request's first second (the
//!   paper's bound, which its cost-benefit results were measured under); past it the
//!   request's positioning time is reduced by how long it has waited beyond (`AgedQueue`),
//!   1 ms for every 10 ms, so that it wins over nearer requests gradually, not all at once:
//!   one a full stroke and a rotation away (about 25 ms on the paper's disk) wins over newly
//!   arrived near ones a quarter of a second past the bound, and of two overdue requests
//!   the older wins only by as much as it has waited longer. A credit from the first
//!   millisecond (1 ms for every 50 ms, tried first) switched between two sequential readers
//!   every 600 ms or so instead of every second, and waited less often on random readers:
//!   0.3 to 2.4% less throughput than `as-aged-sptf` on the SOSP patterns.
//! - **Reads before write-back.** A synchronous request has an issuer blocked on it; an
//!   asynchronous write has none (the page cache already took it). So synchronous requests
//!   (reads, and writes the issuer waits for) are served before asynchronous writes, and
//!   asynchronous writes age among themselves from the first millisecond but slowly (1 ms
//!   for every 500 ms): `write_expire` bounds their wait, and Linux's deadline scheduler
//!   gives reads 500 ms and writes 5 s of expiry for the same reason.
//! - **Write batches on expiry.** So that the flood is not starved in turn: once the oldest
//!   asynchronous write has waited `write_expire` (1 s), writes are served for
//!   `write_batch_expire` (125 ms, Linux AS's), starting with that oldest write and going
//!   nearest first from it, then synchronous requests have the disk for at least
//!   `read_batch_expire` (800 ms) before the next write batch. Linux AS reads for 500 ms
//!   between write batches, but its write batches end early (it shortens its count of writes
//!   per batch when one overruns, and a batch yields to an expired read); ours run their full
//!   125 ms, so under a flood they would take a fifth of the disk. With the longer read turn
//!   they take 13% of it under CAS Table 1's flood (`antsched sim
//!   antsched-out/jobs/cas-table1.fio --scheduler as-rw-sptf:estimator=calibrated`), and the
//!   writer goes at least as fast as under Linux AS and the reader finishes within 5% of AS's
//!   time (`antsched paper`'s comparison), where 600 ms slowed the reader by a tenth and 1 s
//!   left the writer slower than under AS. (With 600 ms the reader was within 5% while the disk
//!   model settled every write at every track switch, which halved the rate of a stream of
//!   writes; the write batches then did half the work in their 125 ms.)
//!
//! - **A floor under a starved context's share.** The one-second grace gives a context that
//!   SPTF passes over one request a second, whatever else waits: the paper's two processes
//!   (section 4.2) switch rarely, and each switch costs two seeks. With more contexts waiting,
//!   each passed-over one still gets one request a second while its share of the disk is
//!   1/n: a random reader beside three streams got 0.03 MB/s where Linux's AS, which expires a
//!   read after 125 ms, gives it 0.13. So a context that had less than two thirds of its fair
//!   share of the recent disk time (decayed over the grace, the share of the contexts
//!   waiting; [`STARVED_SHARE`]) has a *turn* of the grace: the grace divided among the
//!   contexts waiting, itself counted, so that each of them can be served once within one
//!   grace. Its requests age after half its turn ([`STARVED_AGES_AFTER`]), so that with the credit a switch needs (a seek and a
//!   rotation, some 15 ms on the paper's disk: 150 ms of waiting) it wins about when its
//!   turn comes. With one other, as in every SOSP experiment, nothing changes; the contexts
//!   that have their share keep the whole grace, so the streams still switch rarely among
//!   themselves. Aged after the grace over the others alone, a random reader beside a
//!   stream, a reader thinking 1 ms and write-back got 0.06 to 0.07 MB/s over five seeds,
//!   about a third of what Linux's AS gives it (0.21 to 0.25).
//! - **The turn kept.** Once its credit brings a starved context to the disk, the context
//!   keeps it for its turn: while its turn lasts, its requests go in SPTF order whatever
//!   credit the others have earned, and the anticipation weighs waiting for its next request
//!   by positioning alone (as if no credit had made the choice). The turn ends when it runs
//!   out or when another context's request is dispatched (the context had nothing pending
//!   that was nearer, and the anticipation did not wait for it). Without it, once most
//!   contexts are starved the oldest credit takes the disk at every decision the current
//!   context leaves open, and a visit lasts about a read-ahead window (Linux's AS, which
//!   checks its FIFO every 125 ms, stays that long): sixteen sequential readers of 32 KB
//!   blocks got 0.949 of AS's throughput with the worst at 0.73 MB/s; with turns, 0.957 and
//!   0.81 (with the floor at two thirds, below, 0.958 and 0.88). Of the turn's length: the
//!   grace over the contexts waiting keeps every wait within a second or so; in a trial,
//!   twice that made some requests of twelve or more readers wait over 2 s.
//!
//! - **Lower first among adjacent requests.** A request that starts where another pending
//!   one ends waits for it ([`AgedQueue`]'s followers): SPTF that prices the rotation would
//!   otherwise serve the second of a stream's two read-ahead requests first and leave the
//!   first a rotation behind, where it ages until its credit takes the disk back for it
//!   alone. Among sixteen sequential readers that turned most visits into two requests: 16.36
//!   MB/s with the worst reader at 0.32, where Linux AS gives 18.40 and 0.96; with the rule
//!   17.52 and 0.66.
//!
//! Asynchronous writes are never waited for: the anticipation core dispatches one at once
//! (Appendix I), so a write batch costs the reader at most the batch.

use rustc_hash::FxHashMap as HashMap;

use crate::estimator::PositionEstimator;
use crate::request::{ClassId, ContextId, Nanos, Request, RequestId, MS, SEC};

use super::aged::AgedQueue;
use super::{Aging, Policy};

/// Positioning time credited per nanosecond a synchronous request has waited beyond
/// [`SYNC_GRACE`].
pub const SYNC_AGING: f64 = 0.1;
/// How long a synchronous request waits before its wait earns credit: the SOSP paper's age
/// bound.
pub const SYNC_GRACE: Nanos = SEC;
/// Positioning time credited per nanosecond an asynchronous write has waited, from the start.
pub const ASYNC_AGING: f64 = 0.002;
/// The oldest write waits at most this, then the read turn under way, before the writes'
/// turn comes (deadline's 5 s would let a writer's requests wait 5 s; AS's 250 ms gives the
/// writer a turn every read batch). A flood larger than the turns can write waits longer,
/// behind the part of it that came first: the write-back's oldest request in CAS Table 1
/// waits seconds (`stalled_ms` of the report's `writeback` context).
pub const DEFAULT_WRITE_EXPIRE: Nanos = SEC;
/// A context with less than this part of its fair share of the recent disk time is starved.
///
/// Linux's AS and CFQ share the disk's time about equally among readers, so a reader's bytes
/// under them follow its time. With half the fair share, a context served one request a
/// visit (a reader that skips a megabyte between reads, each read costing a switch) settled
/// just under the floor: four such readers beside two streams got 0.71 MB/s each where AS
/// gives 1.63 (`examples/jobs/skipping-readers-vs-streams.fio`). Two thirds gives them 0.94
/// to 0.99. Higher, mixes of think times fall below 95% of the best peer's throughput
/// (`bench/mixes.py`: 359 of its 372 runs over twelve seeds passed with one half, 372 with two
/// thirds, 369 with 0.7 and 367 with three quarters). With the calibrated estimator the
/// mixes of think times lose more: `mix-of-think-times.fio` gets 0.905 of AS's throughput,
/// 0.956 at half (why is not yet known; the paper suite's runs do not change).
pub const STARVED_SHARE: f64 = 2.0 / 3.0;
/// The part of its turn after which a starved context's requests earn credit.
pub const STARVED_AGES_AFTER: f64 = 0.5;
pub const DEFAULT_WRITE_BATCH_EXPIRE: Nanos = 125 * MS;
pub const DEFAULT_READ_BATCH_EXPIRE: Nanos = 800 * MS;

/// Reads (and synchronous writes) before write-back, each in gradually aged SPTF order, with
/// write batches once a write has waited `write_expire`.
#[derive(Debug)]
pub struct RwSptf {
    sync: AgedQueue,
    writes: AgedQueue,
    write_expire: Nanos,
    write_batch_expire: Nanos,
    read_batch_expire: Nanos,
    /// The end of the write batch being served, if one is.
    write_batch_until: Option<Nanos>,
    /// Synchronous requests keep the disk until then, even with writes overdue.
    sync_until: Nanos,
    /// Whether the last choice was the writes' turn taken from synchronous requests.
    writes_due: bool,
    /// The last choice's credit for its wait.
    credit: Nanos,
    shares: Shares,
    /// The starved context that has the disk for its turn, if one has.
    turn: Option<Turn>,
}

/// A starved context's turn: see the module documentation.
#[derive(Clone, Copy, Debug)]
struct Turn {
    context: ContextId,
    until: Nanos,
}

/// What tells a starved context: the disk time each context had lately, decayed over
/// [`SYNC_GRACE`], and the contexts with a synchronous request pending.
///
/// Every figure decays at the same rate, so each is kept scaled up by `e^((t - epoch) / grace)`
/// at the time `t` it was served: comparing two needs no decay, and adding to one takes a
/// single exponential. The epoch moves forward now and then, before the scale overflows.
#[derive(Debug, Default)]
struct Shares {
    /// Per context: its synchronous requests pending and its scaled disk time, in one map
    /// (one look-up where a request arrives, leaves or is served). An entry stays when its
    /// count falls to 0 (most contexts come back at once: a removal and an insertion per
    /// request were a tenth of a decision), until the next pruning.
    contexts: HashMap<ContextId, Share>,
    /// The contexts with a synchronous request pending.
    waiting: usize,
    /// Every context's disk time together, scaled likewise.
    total: f64,
    epoch: Nanos,
    /// Completions since `contexts` was last rid of contexts with nothing pending whose time
    /// has decayed away.
    since_pruned: usize,
}

/// One context's part of [`Shares`].
#[derive(Clone, Copy, Debug, Default)]
struct Share {
    waiting: u32,
    served: f64,
}

/// How far (in graces) the epoch may fall behind: `e^256` is far inside an `f64`.
const RESCALE_AFTER: f64 = 256.0;

impl Shares {
    /// Counts a synchronous request of `ctx` as pending: its grace.
    fn arrived(&mut self, ctx: ContextId) -> Nanos {
        let share = self.contexts.entry(ctx).or_default();
        share.waiting += 1;
        let share = *share;
        self.waiting += usize::from(share.waiting == 1);
        self.grace_of(share)
    }

    fn left(&mut self, ctx: ContextId) {
        if let Some(s) = self.contexts.get_mut(&ctx).filter(|s| s.waiting > 0) {
            s.waiting -= 1;
            self.waiting -= usize::from(s.waiting == 0);
        }
    }

    fn served(&mut self, ctx: ContextId, service: Nanos, now: Nanos) {
        let mut age = now.saturating_sub(self.epoch) as f64 / SYNC_GRACE as f64;
        if age > RESCALE_AFTER {
            let down = (-age).exp();
            self.contexts.values_mut().for_each(|s| s.served *= down);
            self.total *= down;
            self.epoch = now;
            age = 0.0;
        }
        let scaled = service as f64 * age.exp();
        self.contexts.entry(ctx).or_default().served += scaled;
        self.total += scaled;
        // A context that has gone (a chain's member) would stay forever: forget, now and
        // then, the ones with nothing pending whose time has decayed to nothing beside
        // everyone's.
        self.since_pruned += 1;
        if self.since_pruned >= self.contexts.len().max(64) {
            self.since_pruned = 0;
            let floor = self.total * 1e-6;
            self.contexts
                .retain(|_, s| s.waiting > 0 || s.served > floor);
        }
    }

    /// Whether `ctx`, waiting or about to, is starved: at least two others wait, and it had
    /// less than [`STARVED_SHARE`] of its fair share of the recent disk time (the share of
    /// the contexts waiting, itself counted).
    fn starved(&self, ctx: ContextId) -> bool {
        self.starved_with(self.share(ctx))
    }

    fn share(&self, ctx: ContextId) -> Share {
        self.contexts.get(&ctx).copied().unwrap_or_default()
    }

    /// The contexts other than the one of `share` with a synchronous request pending.
    fn others_waiting(&self, share: Share) -> usize {
        self.waiting - usize::from(share.waiting > 0)
    }

    fn starved_with(&self, share: Share) -> bool {
        let others = self.others_waiting(share);
        if others < 2 {
            return false;
        }
        let fair = self.total / (others + 1) as f64;
        share.served < STARVED_SHARE * fair
    }

    /// The grace of a synchronous request of `ctx` (already counted as waiting).
    #[cfg(test)]
    fn grace(&self, ctx: ContextId) -> Nanos {
        self.grace_of(self.share(ctx))
    }

    fn grace_of(&self, share: Share) -> Nanos {
        if self.starved_with(share) {
            (STARVED_AGES_AFTER * self.turn_of(share) as f64) as Nanos
        } else {
            SYNC_GRACE
        }
    }

    /// A starved context's turn: the grace over the contexts waiting, it counted.
    fn turn_of(&self, share: Share) -> Nanos {
        SYNC_GRACE / (self.others_waiting(share) + 1) as Nanos
    }
}

impl RwSptf {
    pub fn new(write_expire: Nanos, write_batch_expire: Nanos, read_batch_expire: Nanos) -> Self {
        Self {
            sync: AgedQueue::new(SYNC_AGING, SYNC_GRACE),
            writes: AgedQueue::new(ASYNC_AGING, 0).tracking_oldest(),
            write_expire,
            write_batch_expire,
            read_batch_expire,
            write_batch_until: None,
            sync_until: 0,
            writes_due: false,
            credit: 0,
            shares: Shares::default(),
            turn: None,
        }
    }

    /// The synchronous requests' choice, and the credit the heuristic is told it has.
    fn choose_sync(&mut self, est: &dyn PositionEstimator, now: Nanos) -> Option<(Request, Nanos)> {
        if let Some(turn) = self.turn.filter(|t| now < t.until) {
            // A context with nothing pending (one that never thinks, asked about at its own
            // completion) needs no pass in SPTF order to tell that it has nothing nearest.
            if self.shares.share(turn.context).waiting > 0 {
                let nearest = self.sync.choose_unaged(est, now)?;
                if nearest.context == turn.context {
                    return Some((nearest, 0));
                }
            }
            // The context has nothing pending, or another's request is nearer: the aged
            // choice, told as uncredited, so that the anticipation weighs waiting for the
            // context against it by positioning alone.
            return self.sync.choose(est, now).map(|(r, _)| (r, 0));
        }
        self.turn = None;
        let (req, credit) = self.sync.choose(est, now)?;
        if credit > 0 {
            let share = self.shares.share(req.context);
            if self.shares.starved_with(share) {
                self.turn = Some(Turn {
                    context: req.context,
                    until: now.saturating_add(self.shares.turn_of(share)),
                });
            }
        }
        Some((req, credit))
    }

    fn is_background(req: &Request) -> bool {
        !req.drives_anticipation()
    }

    /// Whether asynchronous writes have the disk now: a batch runs, or the oldest has waited
    /// `write_expire` and synchronous requests have had their turn.
    fn writes_have_turn(&mut self, now: Nanos) -> bool {
        if let Some(until) = self.write_batch_until {
            if now < until {
                return true;
            }
            self.write_batch_until = None;
            self.sync_until = now.saturating_add(self.read_batch_expire);
        }
        now >= self.sync_until
            && self
                .writes
                .oldest()
                .is_some_and(|o| now.saturating_sub(o) >= self.write_expire)
    }
}

impl Policy for RwSptf {
    fn enqueue(&mut self, req: Request, now: Nanos) {
        if Self::is_background(&req) {
            self.writes.enqueue(req, now);
        } else {
            let grace = self.shares.arrived(req.context);
            self.sync.enqueue_with_grace(req, grace, now);
        }
    }

    fn choose(&mut self, est: &dyn PositionEstimator, now: Nanos) -> Option<Request> {
        let turn = self.writes_have_turn(now);
        let from_writes = self.writes.len() > 0 && (turn || self.sync.len() == 0);
        self.writes_due = from_writes && turn && self.sync.len() > 0;
        let (req, credit) = if self.writes_due && self.write_batch_until.is_none() {
            // A turn starts with the write that made it due, as deadline's batch starts at
            // the head of its FIFO; the rest of the turn goes nearest first from there. So
            // every write goes within `write_expire` and the turns before it.
            (self.writes.oldest_request()?, 0)
        } else if from_writes {
            self.writes.choose(est, now)?
        } else {
            self.choose_sync(est, now)?
        };
        self.credit = credit;
        Some(req)
    }

    fn dispatch(&mut self, id: RequestId, now: Nanos) -> Option<Request> {
        if let Some(r) = self.sync.remove(id) {
            if self.turn.is_some_and(|t| t.context != r.context) {
                self.turn = None;
            }
            self.shares.left(r.context);
            return Some(r);
        }
        let r = self.writes.remove(id)?;
        // The first write of an overdue batch opens it.
        if self.writes_due && self.write_batch_until.is_none() {
            self.write_batch_until = Some(now.saturating_add(self.write_batch_expire));
        }
        Some(r)
    }

    fn len(&self) -> usize {
        self.sync.len() + self.writes.len()
    }

    fn completed(&mut self, req: &Request, service: Nanos, now: Nanos) {
        self.completed_own(req, service, service, now);
    }

    /// A context's share counts the disk time its requests used, not the destage of the
    /// writes before them (`Policy::completed_own`): charged to the read served after a
    /// write batch, the write-back's media work went to whichever reader's overdue request
    /// followed the batch. Beside two streams and a buffered writer (issue 18's
    /// `mixed-think`), a random reader was charged some 125 ms for each of 15 of its 41 reads
    /// that each used 10, and looked to the floor as if it had its share.
    fn charges_own_time(&self) -> bool {
        true
    }

    fn completed_own(&mut self, req: &Request, _service: Nanos, own: Nanos, now: Nanos) {
        if !Self::is_background(req) {
            self.shares.served(req.context, own, now);
        }
    }

    /// The choice may turn to writes when a batch ends or the oldest write expires.
    fn next_change(&self) -> Option<Nanos> {
        let expiry = self
            .writes
            .oldest()
            .map(|o| o.saturating_add(self.write_expire).max(self.sync_until));
        match (self.write_batch_until, expiry) {
            (Some(b), _) => Some(b),
            (None, e) => e,
        }
    }
}

impl Aging for RwSptf {
    /// The writes' turn decides whatever arrives; within a turn, aging only moves a request
    /// up by its credit ([`Aging::aging_credit`]).
    fn aging_overrode(&self) -> bool {
        self.writes_due
    }

    fn aging_credit(&self) -> Nanos {
        self.credit
    }

    /// The floor's: its next request will age after a shortened grace
    /// ([`AgedSptfRule`](crate::heuristic::AgedSptfRule) weighs waiting for it accordingly).
    fn starved(&self, ctx: ContextId, _class: ClassId) -> bool {
        self.shares.starved(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testutil::{head_at, req};
    use crate::request::Op;

    fn write(id: u64, sector: u64, issued: Nanos) -> Request {
        Request {
            op: Op::Write,
            sync: false,
            ..req(id, 9, sector, issued)
        }
    }

    fn policy() -> RwSptf {
        RwSptf::new(
            DEFAULT_WRITE_EXPIRE,
            DEFAULT_WRITE_BATCH_EXPIRE,
            DEFAULT_READ_BATCH_EXPIRE,
        )
    }

    /// Of two adjacent requests, the lower goes first, though the head is nearer the higher:
    /// the higher follows it with no positioning, where served first it would leave the lower
    /// a rotation behind (the sixteen readers' left-behind read-ahead requests).
    #[test]
    fn a_follower_waits_for_the_request_it_follows() {
        let mut p = policy();
        let lower = req(1, 1, 1_000, 0);
        let higher = req(2, 1, lower.end(), 0);
        p.enqueue(lower, 0);
        p.enqueue(higher, 0);
        // A stranger nearer than the lower one, farther than the higher one.
        p.enqueue(req(3, 2, 1_150, 0), 0);
        let est = head_at(lower.end() - 10);
        assert_eq!(p.choose(&est, MS).unwrap().id, RequestId(3));
        p.dispatch(RequestId(3), MS).unwrap();
        assert_eq!(p.choose(&est, MS).unwrap().id, RequestId(1));
        p.dispatch(RequestId(1), MS).unwrap();
        // Once the lower one has gone, the higher one is an ordinary request again.
        assert_eq!(p.choose(&est, MS).unwrap().id, RequestId(2));
    }

    /// A read far away goes before write-back at the head, and the writes go when no read
    /// waits.
    #[test]
    fn a_read_goes_before_write_back() {
        let mut p = policy();
        p.enqueue(write(1, 100, 0), 0);
        p.enqueue(req(2, 1, 9_000_000, MS), MS);
        let est = head_at(0);
        assert_eq!(p.choose(&est, MS).unwrap().id, RequestId(2));
        p.dispatch(RequestId(2), MS).unwrap();
        assert_eq!(p.choose(&est, MS).unwrap().id, RequestId(1));
    }

    /// Aging is gradual past the grace: within its first second a far read loses to any
    /// nearer one, as under SPTF; past it, it wins once its credit pays the seek, not at once.
    #[test]
    fn aging_grows_with_the_wait_past_the_grace() {
        let mut p = policy();
        let est = head_at(0);
        // Seek estimator: 9,000,000 sectors read as 9 ms; 1 ms of credit per 10 ms waited
        // past SYNC_GRACE (1 s).
        p.enqueue(req(1, 1, 9_000_000, 0), 0);
        p.enqueue(req(2, 2, 1_000, 900 * MS), 900 * MS);
        // At 900 ms it has no credit: 9 against 0.001.
        assert_eq!(p.choose(&est, 900 * MS).unwrap().id, RequestId(2));
        assert_eq!(p.aging_credit(), 0);
        p.dispatch(RequestId(2), 900 * MS).unwrap();
        // At 1,050 ms it has 5 ms: 9 - 5 still loses to a new near read.
        p.enqueue(req(3, 2, 2_000, 1_050 * MS), 1_050 * MS);
        assert_eq!(p.choose(&est, 1_050 * MS).unwrap().id, RequestId(3));
        p.dispatch(RequestId(3), 1_050 * MS).unwrap();
        // At 1,100 ms it has 10 ms: 9 - 10 wins over a new near read's 0.001.
        p.enqueue(req(4, 2, 3_000, 1_100 * MS), 1_100 * MS);
        assert_eq!(p.choose(&est, 1_100 * MS).unwrap().id, RequestId(1));
        assert_eq!(p.aging_credit(), 10 * MS);
        assert!(!p.aging_overrode());
    }

    /// A context short of two thirds of its fair share ages after half its turn (the grace over the
    /// contexts waiting, itself counted), once at least two others wait; with one other (the
    /// SOSP experiments) or its share had, it keeps the whole grace.
    #[test]
    fn a_starved_context_ages_sooner_only_among_several() {
        let mut s = Shares::default();
        let (a, b, c, d) = (ContextId(1), ContextId(2), ContextId(3), ContextId(4));
        s.served(a, 100 * MS, 0);
        s.served(b, 100 * MS, 0);
        s.arrived(a);
        s.arrived(d);
        assert_eq!(s.grace(d), SYNC_GRACE);
        s.arrived(b);
        s.arrived(c);
        assert_eq!(s.grace(d), SYNC_GRACE / 8);
        assert_eq!(s.grace(a), SYNC_GRACE);
        // Served its share since, it keeps the whole grace again.
        s.served(d, 100 * MS, MS);
        assert_eq!(s.grace(d), SYNC_GRACE);
        // Never served, but with one other waiting (`a`), it keeps the whole grace.
        s.left(b);
        s.left(c);
        s.left(d);
        s.arrived(c);
        assert!(!s.starved(c));
        assert_eq!(s.grace(c), SYNC_GRACE);
        // And so for a context not waiting, asked about by the heuristic: with `a` and `c`
        // waiting, one never served is starved, `b` (a third of the time, its share) is not.
        assert!(s.starved(ContextId(5)));
        assert!(!s.starved(b));
    }

    /// Contexts 1 and 2 have had the disk and 3 and 4 never have, each with a request at
    /// `t0` (ten seconds in, so that a shortened grace can move an issue time back). Seek
    /// estimator: 1 ns a sector. 3 arrives with two others waiting, so it ages after half a
    /// third of the grace; 4 with three, after half a quarter. At `t0` + 300 ms 3's credit
    /// (13.3 ms) takes it 9 ms away; 4's (17.5 ms) is short of its 14 ms by more.
    fn two_starved(extra: &[Request]) -> (RwSptf, Nanos) {
        let mut p = policy();
        let t0 = 10 * SEC;
        p.completed(&req(90, 1, 0, 0), 100 * MS, t0);
        p.completed(&req(91, 2, 0, 0), 100 * MS, t0);
        for (id, ctx, sector) in [(1, 1, 1_000), (2, 2, 5_000_000), (3, 3, 9_000_000)] {
            p.enqueue(req(id, ctx, sector, t0), t0);
        }
        p.enqueue(req(4, 4, 14_000_000, t0), t0);
        for r in extra {
            p.enqueue(*r, t0);
        }
        let t = t0 + 300 * MS;
        assert_eq!(p.choose(&head_at(0), t).unwrap().id, RequestId(3));
        assert!(p.aging_credit() > 0);
        p.dispatch(RequestId(3), t).unwrap();
        (p, t)
    }

    /// A starved context that its credit brings to the disk keeps it for its turn: its next
    /// request goes before another starved context's overdue one, and when it has nothing
    /// pending the overdue one is the candidate, told as uncredited so that the anticipation
    /// weighs waiting for the context by positioning alone. Once the turn has run out, credit
    /// orders the choice again.
    #[test]
    fn a_starved_context_keeps_the_disk_for_its_turn() {
        let (mut p, t) = two_starved(&[]);
        // Its turn: the grace over the four contexts waiting when it was chosen.
        let until = t + SYNC_GRACE / 4;
        // 3's next request, 0.5 ms on, goes before 4's, 4.5 ms on with 18.5 ms of credit.
        let at = t + 10 * MS;
        p.enqueue(req(5, 3, 9_500_000, at), at);
        assert_eq!(p.choose(&head_at(9_000_128), at).unwrap().id, RequestId(5));
        assert_eq!(p.aging_credit(), 0);
        p.dispatch(RequestId(5), at).unwrap();
        // 3 has nothing pending: 4's overdue request is the candidate, told uncredited.
        let head = head_at(9_500_128);
        assert_eq!(p.choose(&head, t + 20 * MS).unwrap().id, RequestId(4));
        assert_eq!(p.aging_credit(), 0);
        // 3 asks again before the anticipation gives up on it: its request goes first.
        let at = t + 21 * MS;
        p.enqueue(req(6, 3, 9_600_000, at), at);
        assert_eq!(p.choose(&head, at).unwrap().id, RequestId(6));
        p.dispatch(RequestId(6), at).unwrap();
        // To the end of the turn 3's nearer request goes first; then 4's credit wins.
        p.enqueue(req(7, 3, 9_700_000, until - MS), until - MS);
        let head = head_at(9_600_128);
        assert_eq!(p.choose(&head, until - 1).unwrap().id, RequestId(7));
        assert_eq!(p.choose(&head, until).unwrap().id, RequestId(4));
        assert!(p.aging_credit() > 0);
    }

    /// A turn ends when another context's request is dispatched: the context had nothing
    /// near to ask for, and credit orders the choice again.
    #[test]
    fn a_turn_ends_when_another_context_is_served() {
        let (mut p, t) = two_starved(&[req(5, 4, 20_000_000, 10 * SEC)]);
        // 3 has nothing pending and the anticipation does not wait: 4's request goes.
        assert_eq!(p.choose(&head_at(9_000_128), t).unwrap().id, RequestId(4));
        p.dispatch(RequestId(4), t).unwrap();
        // The turn is over: 4's other overdue request, 6 ms away, takes the disk by its
        // credit from 3's next request, 0.1 ms away.
        p.enqueue(req(6, 3, 14_100_000, t), t);
        assert_eq!(p.choose(&head_at(14_000_128), t).unwrap().id, RequestId(5));
        assert!(p.aging_credit() > 0);
    }

    /// Shares decay: a context served long ago is starved beside one served now, also across
    /// the epoch's move (past `RESCALE_AFTER` graces), and the scaled figures stay finite.
    #[test]
    fn shares_decay_and_survive_the_epochs_move() {
        let mut s = Shares::default();
        let (a, b, c) = (ContextId(1), ContextId(2), ContextId(3));
        for ctx in [a, b, c] {
            s.arrived(ctx);
        }
        s.served(a, 100 * MS, 0);
        s.served(b, 100 * MS, 0);
        // Ten graces later b is served again: a's old time has decayed, b's has not.
        s.served(b, 100 * MS, 10 * SYNC_GRACE);
        assert_eq!(s.grace(a), SYNC_GRACE / 6);
        assert_eq!(s.grace(b), SYNC_GRACE);
        // Far past the epoch: the scale is moved, and the same holds with a and b swapped.
        let later = 1_000 * SYNC_GRACE;
        s.served(a, 100 * MS, later);
        assert_eq!(s.epoch, later);
        assert!(s.total.is_finite() && s.contexts.values().all(|v| v.served.is_finite()));
        assert_eq!(s.grace(b), SYNC_GRACE / 6);
        assert_eq!(s.grace(a), SYNC_GRACE);
    }

    /// Overdue writes get a batch, then reads get the disk back for at least the read batch.
    #[test]
    fn overdue_writes_get_a_batch_then_reads_their_turn() {
        let mut p = policy();
        let est = head_at(0);
        for i in 0..100 {
            p.enqueue(write(100 + i, 200 + i * 8, 0), 0);
        }
        p.enqueue(req(1, 1, 9_000_000, 0), 0);
        let t = DEFAULT_WRITE_EXPIRE;
        assert_eq!(p.next_change(), Some(t));
        let w = p.choose(&est, t).unwrap();
        assert_eq!(w.op, Op::Write);
        assert!(p.aging_overrode());
        p.dispatch(w.id, t).unwrap();
        // Within the batch, writes; after it, the read.
        let later = t + DEFAULT_WRITE_BATCH_EXPIRE - 1;
        assert_eq!(p.choose(&est, later).unwrap().op, Op::Write);
        let after = t + DEFAULT_WRITE_BATCH_EXPIRE;
        assert_eq!(p.choose(&est, after).unwrap().id, RequestId(1));
        p.dispatch(RequestId(1), after).unwrap();
        // No read waits: the writes go, though they are not due.
        assert_eq!(p.choose(&est, after).unwrap().op, Op::Write);
        // A new read within the read batch goes first, overdue writes or not.
        p.enqueue(req(2, 1, 9_000_000, after), after);
        assert_eq!(
            p.choose(&est, after + DEFAULT_READ_BATCH_EXPIRE - 1)
                .unwrap()
                .id,
            RequestId(2)
        );
    }
}
