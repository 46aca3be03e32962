//! `deadline`: Jens Axboe's deadline elevator as in Linux 2.6.10 to 2.6.29
//! (`block/deadline-iosched.c`, `deadline_dispatch_requests`), the version the Linux/CAS
//! paper measured (2.6.9) in all that matters here.
//!
//! Each direction (reads, writes) has a list sorted by sector and a FIFO in which every
//! request carries a deadline: `read_expire` (500 ms) after its arrival for reads,
//! `write_expire` (5 s) for writes. Requests leave in *batches* of one direction:
//!
//! 1. A batch goes on while the next request in sector order is contiguous with the last one
//!    and fewer than `fifo_batch` (16) requests have gone. A request that needs a seek ends
//!    the batch: it counts as `fifo_batch` requests at once (`dd->batching += dd->fifo_batch`),
//!    which is how the paper's "a request that needs a seek counts as 16" reads in this
//!    version. (Earlier 2.5 code had a separate `seek_cost`; today's mq-deadline counts
//!    requests only.)
//! 2. Otherwise a new batch picks its direction: reads, unless writes are pending and reads
//!    have already been picked `writes_starved` (2) times in a row, which bounds how long
//!    writes wait behind a stream of reads.
//! 3. In the chosen direction it starts from the oldest request if that one's deadline has
//!    passed, or if the sweep has run off the top of the sorted list; else it continues the
//!    upward sweep from the last request. The sweep is one-way: there is no wrap and no back
//!    seek; running off the top starts over from the oldest request.
//!
//! Deadline never idles: it is work-conserving, so two processes reading with think time
//! alternate and seek on every request (deceptive idleness).
//!
//! `front_merges` is not a tunable here. In the kernel it only decides whether a new bio may
//! be glued to the front of a queued request (`deadline_merge`); it never reorders what is
//! queued. Our requests reach the scheduler already built, so there is nothing to merge and
//! the flag would change nothing.

use crate::request::{ClassId, ContextId, Nanos, Op, Request, RequestId, MS, SEC};
use crate::scheduler::{AnticipationStats, Scheduler};

use super::sorted::SortFifo;

/// The tunables of `deadline`, with the kernel's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeadlineConfig {
    pub read_expire: Nanos,
    pub write_expire: Nanos,
    pub writes_starved: u32,
    pub fifo_batch: u32,
    pub depth: usize,
}

impl Default for DeadlineConfig {
    fn default() -> Self {
        Self {
            read_expire: 500 * MS,
            write_expire: 5 * SEC,
            writes_starved: 2,
            fifo_batch: 16,
            depth: 1,
        }
    }
}

const READ: usize = 0;
const WRITE: usize = 1;

fn dir(req: &Request) -> usize {
    match req.op {
        Op::Read => READ,
        Op::Write => WRITE,
    }
}

/// The deadline elevator.
pub struct Deadline {
    name: String,
    cfg: DeadlineConfig,
    lists: [SortFifo; 2],
    /// Next request in sort order in each direction; at most one is set (`dd->next_rq`).
    next: [Option<RequestId>; 2],
    /// Requests in the current batch, seeks counting `fifo_batch`.
    batching: u32,
    /// End of the last dispatched request: the head.
    last_sector: u64,
    /// Times reads have been picked over pending writes.
    starved: u32,
    in_flight: usize,
}

impl Deadline {
    pub fn new(name: impl Into<String>, cfg: DeadlineConfig) -> Self {
        Self {
            name: name.into(),
            cfg,
            lists: [SortFifo::new(), SortFifo::new()],
            next: [None, None],
            batching: 0,
            last_sector: 0,
            starved: 0,
            in_flight: 0,
        }
    }

    /// `deadline_check_fifo`: the oldest request of `d` is past its deadline.
    fn fifo_expired(&self, d: usize, now: Nanos) -> bool {
        self.lists[d].fifo_first().is_some_and(|(_, t)| now > t)
    }

    /// `deadline_move_request`: the sweep continues after `id` (no wrap), in its direction only.
    fn dispatch(&mut self, d: usize, id: RequestId) -> Option<Request> {
        self.next = [None, None];
        self.next[d] = self.lists[d].latter(id).map(|r| r.id);
        let req = self.lists[d].remove(id)?;
        self.last_sector = req.end();
        self.batching += 1;
        self.in_flight += 1;
        Some(req)
    }
}

impl Scheduler for Deadline {
    fn name(&self) -> &str {
        &self.name
    }

    fn enqueue(&mut self, req: Request, now: Nanos) {
        let d = dir(&req);
        let expire = if d == READ {
            self.cfg.read_expire
        } else {
            self.cfg.write_expire
        };
        self.lists[d].insert(req, now.saturating_add(expire));
    }

    fn complete(&mut self, _id: RequestId, _now: Nanos) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    fn poll_dispatch(&mut self, now: Nanos) -> Option<Request> {
        if self.in_flight >= self.cfg.depth {
            return None;
        }
        // Batches are reads XOR writes: at most one direction has a next request.
        let current = [WRITE, READ]
            .into_iter()
            .find_map(|d| self.next[d].map(|id| (d, id)));
        if let Some((d, id)) = current {
            let sequential = self.lists[d]
                .get(id)
                .is_some_and(|r| r.sector == self.last_sector);
            if !sequential {
                // End the batch on a non-sequential request.
                self.batching = self.batching.saturating_add(self.cfg.fifo_batch);
            }
            if self.batching < self.cfg.fifo_batch {
                return self.dispatch(d, id);
            }
        }
        // Not running a batch: pick the direction.
        let reads = !self.lists[READ].is_empty();
        let writes = !self.lists[WRITE].is_empty();
        let d = if reads {
            // `writes && starved++ >= writes_starved`: the count only runs while writes wait.
            let starve_writes = writes && {
                let s = self.starved;
                self.starved += 1;
                s >= self.cfg.writes_starved
            };
            if starve_writes {
                self.starved = 0;
                WRITE
            } else {
                READ
            }
        } else if writes {
            self.starved = 0;
            WRITE
        } else {
            return None;
        };
        // An expired deadline, the last request in the other direction, or the end of the
        // sorted list: start again from the oldest request.
        let id = match self.next[d] {
            Some(id) if !self.fifo_expired(d, now) => id,
            _ => self.lists[d].fifo_first()?.0.id,
        };
        self.batching = 0;
        self.dispatch(d, id)
    }

    fn poll_timeout(&self) -> Option<Nanos> {
        None
    }

    fn context_exited(&mut self, _ctx: ContextId, _now: Nanos) {}

    fn set_class_weight(&mut self, _class: ClassId, _weight: u32) {}

    fn pending(&self) -> usize {
        self.lists[READ].len() + self.lists[WRITE].len()
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn anticipation(&self) -> AnticipationStats {
        AnticipationStats::default()
    }
}

mod tunables {
    use crate::peers::{integer, DURATION, INT_MAX};
    use crate::registry::TunableInfo;

    pub const READ_EXPIRE: TunableInfo = TunableInfo {
        name: "read_expire",
        default: "500ms",
        help: "a read waiting this long is served before the sorted order",
        kind: DURATION,
    };
    pub const WRITE_EXPIRE: TunableInfo = TunableInfo {
        name: "write_expire",
        default: "5s",
        help: "a write waiting this long is served before the sorted order",
        kind: DURATION,
    };
    pub const WRITES_STARVED: TunableInfo = TunableInfo {
        name: "writes_starved",
        default: "2",
        help: "read batches that may be chosen over waiting writes before a write batch",
        kind: integer(0, INT_MAX),
    };
    pub const FIFO_BATCH: TunableInfo = TunableInfo {
        name: "fifo_batch",
        default: "16",
        help: "requests in a batch; a request that needs a seek ends it",
        kind: integer(0, INT_MAX),
    };
}

fn build(name: &str, t: &crate::registry::Tunables) -> Box<dyn Scheduler> {
    Box::new(Deadline::new(
        name,
        DeadlineConfig {
            read_expire: t.duration("read_expire"),
            write_expire: t.duration("write_expire"),
            writes_starved: t.integer("writes_starved") as u32,
            fifo_batch: t.integer("fifo_batch") as u32,
            depth: t.integer("depth") as usize,
        },
    ))
}

/// The catalog entry.
pub const PEER: super::Peer = super::Peer {
    name: "deadline",
    summary:
        "Linux deadline (2.6.10-2.6.29): sorted and FIFO lists per direction, batches, read/write expiry",
    tunables: &[
        &tunables::READ_EXPIRE,
        &tunables::WRITE_EXPIRE,
        &tunables::WRITES_STARVED,
        &tunables::FIFO_BATCH,
    ],
    build,
};
