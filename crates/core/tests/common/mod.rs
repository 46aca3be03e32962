//! A minimal closed-loop driver for integration tests: synchronous readers that issue one
//! request, wait for it, think, and issue the next; a device that serves one request at a time
//! with a service time the test chooses. Just enough of a simulator to script the paper's rules
//! with explicit times, without depending on `antsched-sim`.
#![allow(dead_code)]

use antsched_core::{ClassId, ContextId, Nanos, Op, Request, RequestId, Scheduler, MS};

/// A synchronous reader walking through its region.
#[derive(Clone, Debug)]
pub struct Reader {
    pub ctx: u32,
    pub class: u32,
    /// Next sector to read.
    pub next: u64,
    /// Sectors per request.
    pub sectors: u32,
    /// Added to `next` after each request (sectors); `sectors` is sequential.
    pub step: u64,
    pub think: Nanos,
    /// When its next request arrives; `None` while one is outstanding.
    pub issue_at: Option<Nanos>,
}

impl Reader {
    pub fn sequential(ctx: u32, start: u64, think: Nanos) -> Self {
        Self {
            ctx,
            class: ctx,
            next: start,
            sectors: 128,
            step: 128,
            think,
            issue_at: Some(0),
        }
    }
}

/// Request `id` of 64 KB at `sector`, issued at `now`: synchronous if it is a read.
pub fn request(id: u64, ctx: u32, class: u32, op: Op, sector: u64, now: Nanos) -> Request {
    Request {
        id: RequestId(id),
        context: ContextId(ctx),
        class: ClassId(class),
        op,
        sector,
        sectors: 128,
        sync: op == Op::Read,
        issued: now,
        continuation: false,
    }
}

/// 3 ms per request, plus 6 ms when the head has to move: the paper's 34GXP in round numbers
/// (section 2: "9ms of average seek time and 3ms of read time for every 64 KB block").
pub fn paper_service(req: &Request, head: u64) -> Nanos {
    3 * MS + if req.sector == head { 0 } else { 6 * MS }
}

pub struct Driver<'a, S: Scheduler + ?Sized = dyn Scheduler> {
    pub s: &'a mut S,
    pub now: Nanos,
    pub next_id: u64,
    pub head: u64,
    pub busy: Option<(Request, Nanos)>,
    pub dispatched: Vec<(Nanos, Request)>,
}

impl<'a, S: Scheduler + ?Sized> Driver<'a, S> {
    pub fn new(s: &'a mut S) -> Self {
        Self {
            s,
            now: 0,
            next_id: 0,
            head: 0,
            busy: None,
            dispatched: Vec::new(),
        }
    }

    pub fn request(&mut self, ctx: u32, class: u32, sector: u64, sectors: u32) -> Request {
        self.next_id += 1;
        Request {
            sectors,
            ..request(self.next_id, ctx, class, Op::Read, sector, self.now)
        }
    }

    /// Asks for dispatches until the scheduler says no; serves them on the one-deep device.
    pub fn poll(&mut self, service: &dyn Fn(&Request, u64) -> Nanos) {
        while self.busy.is_none() {
            let Some(r) = self.s.poll_dispatch(self.now) else {
                break;
            };
            let done = self.now + service(&r, self.head);
            self.head = r.end();
            self.dispatched.push((self.now, r));
            self.busy = Some((r, done));
        }
    }

    /// Runs readers until `n` requests have been dispatched.
    pub fn run(
        &mut self,
        readers: &mut [Reader],
        n: usize,
        service: &dyn Fn(&Request, u64) -> Nanos,
    ) {
        while self.dispatched.len() < n {
            let next_issue = readers.iter().filter_map(|r| r.issue_at).min();
            let done = self.busy.map(|(_, d)| d);
            let timeout = self.s.poll_timeout();
            let Some(t) = [next_issue, done, timeout].into_iter().flatten().min() else {
                panic!("stalled at {} with {} pending", self.now, self.s.pending());
            };
            assert!(t >= self.now, "time went backwards");
            self.now = t;
            // A completion is handled, and the scheduler decides, before the reader that was
            // waiting for it gets to issue its next request: that ordering is deceptive
            // idleness, even with zero think time.
            if let Some((r, d)) = self.busy {
                if d == self.now {
                    self.busy = None;
                    self.s.complete(r.id, self.now);
                    // Requests of no reader (set up by the test) have no follow-up.
                    if let Some(rd) = readers.iter_mut().find(|x| x.ctx == r.context.0) {
                        rd.issue_at = Some(self.now + rd.think);
                    }
                }
            }
            self.poll(service);
            for rd in readers.iter_mut() {
                if rd.issue_at == Some(self.now) {
                    rd.issue_at = None;
                    let req = self.request(rd.ctx, rd.class, rd.next, rd.sectors);
                    rd.next += rd.step;
                    self.s.enqueue(req, self.now);
                }
            }
            self.poll(service);
        }
    }

    /// The contexts of the dispatched requests, in order.
    pub fn order(&self) -> Vec<u32> {
        self.dispatched.iter().map(|(_, r)| r.context.0).collect()
    }
}

/// How many times consecutive dispatches switch context.
pub fn switches(order: &[u32]) -> usize {
    order.windows(2).filter(|w| w[0] != w[1]).count()
}

impl<S: Scheduler + ?Sized> Driver<'_, S> {
    /// A write request of `ctx`; `sync` for a write the issuer waits for.
    pub fn write(&mut self, ctx: u32, sector: u64, sectors: u32, sync: bool) -> Request {
        let mut r = self.request(ctx, ctx, sector, sectors);
        r.op = Op::Write;
        r.sync = sync;
        r
    }

    /// Enqueues `r` now.
    pub fn submit(&mut self, r: Request) {
        self.s.enqueue(r, self.now);
    }

    /// Dispatches one request now, if the scheduler gives one, and marks the device busy with
    /// it until `now + service`.
    pub fn dispatch_one(&mut self, service: Nanos) -> Option<Request> {
        let r = self.s.poll_dispatch(self.now)?;
        self.head = r.end();
        self.dispatched.push((self.now, r));
        self.busy = Some((r, self.now + service));
        Some(r)
    }

    /// Advances to the busy request's completion and completes it.
    pub fn finish(&mut self) -> Option<Request> {
        let (r, done) = self.busy.take()?;
        self.now = self.now.max(done);
        self.s.complete(r.id, self.now);
        Some(r)
    }

    /// Bytes dispatched per context.
    pub fn bytes_by_context(&self) -> std::collections::BTreeMap<u32, u64> {
        let mut out = std::collections::BTreeMap::new();
        for (_, r) in &self.dispatched {
            *out.entry(r.context.0).or_insert(0) += r.bytes();
        }
        out
    }
}
