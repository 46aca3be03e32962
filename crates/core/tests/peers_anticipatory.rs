//! The rules of the anticipatory schedulers: `linux-as` (2.6.9, the Linux/CAS paper's LAS),
//! `linux-as-2.6.32` and `cas` (the paper's Cooperative AS), one test per rule, driven with
//! explicit times. Service times are the paper's round numbers (`common::paper_service`: 3 ms
//! per request, 6 ms more for a seek).

mod common;

use antsched_core::peers::anticipatory::{AnticStatus, AnticipatoryScheduler, AsConfig, Variant};
use antsched_core::{
    build, BuildEnv, ClassId, ContextId, Nanos, Op, Request, RequestId, Scheduler, MS, US,
};
use common::{paper_service, switches, Driver, Reader};

const FAR: u64 = 2_000_000;

fn sched(spec: &str) -> Box<dyn Scheduler> {
    build(spec, &BuildEnv::default()).unwrap()
}

fn engine(variant: Variant) -> AnticipatoryScheduler {
    AnticipatoryScheduler::new("test", variant, AsConfig::default())
}

/// `ctx` reads `n` sequential 128-sector requests alone, thinking `think` between them, so
/// that AS learns its think time and seek distance. Returns the sector after the last one.
fn train<S: Scheduler + ?Sized>(
    d: &mut Driver<'_, S>,
    ctx: u32,
    start: u64,
    n: usize,
    think: Nanos,
) -> u64 {
    let mut sector = start;
    for i in 0..n {
        if i > 0 {
            d.now += think;
        }
        let r = d.request(ctx, ctx, sector, 128);
        d.submit(r);
        let got = d.dispatch_one(3 * MS).expect("a lone request goes at once");
        assert_eq!(got.id, r.id);
        d.finish();
        sector += 128;
    }
    sector
}

/// Trains `ctx`, then leaves its last request completed with a far request of another
/// context pending: the moment AS decides whether to anticipate.
fn anticipation_point<S: Scheduler + ?Sized>(d: &mut Driver<'_, S>, think: Nanos) -> Request {
    let next = train(d, 0, 0, 10, think);
    d.now += think;
    let last = d.request(0, 0, next, 128);
    d.submit(last);
    assert_eq!(d.dispatch_one(3 * MS).unwrap().id, last.id);
    let far = d.request(1, 1, FAR, 128);
    d.submit(far);
    d.finish();
    far
}

#[test]
fn linux_as_keeps_the_disk_for_the_anticipated_process() {
    let mut s = sched("linux-as");
    let mut d = Driver::new(&mut *s);
    let mut readers = [
        Reader::sequential(0, 0, 200 * US),
        Reader::sequential(1, FAR, 200 * US),
    ];
    d.run(&mut readers, 40, &paper_service);
    // Each completion is followed by a wait for the same reader; the other gets the disk when
    // its request passes read_expire (125 ms), checked once per 125 ms.
    assert!(switches(&d.order()) <= 2, "{:?}", d.order());
    let a = s.anticipation();
    assert!(a.waits >= 30 && a.hits >= 30 && a.timeouts == 0, "{a:?}");
}

#[test]
fn linux_as_does_not_anticipate_a_context_whose_mean_think_time_exceeds_antic_expire() {
    for (think, waits) in [(10 * MS, false), (MS, true)] {
        let mut s = engine(Variant::Las);
        let mut d = Driver::new(&mut s);
        let far = anticipation_point(&mut d, think);
        let got = d.s.poll_dispatch(d.now);
        if waits {
            assert_eq!(got, None, "think {think}");
        } else {
            assert_eq!(got.map(|r| r.id), Some(far.id), "think {think}");
        }
        let (mean, _) = d.s.think_time(ContextId(0)).unwrap();
        assert_eq!(mean > 6 * MS, !waits, "mean think {mean}");
    }
}

#[test]
fn linux_as_times_anticipation_from_the_completion_up_to_antic_expire() {
    let mut s = engine(Variant::Las);
    let mut d = Driver::new(&mut s);
    let far = anticipation_point(&mut d, 200 * US);
    let done = d.now;
    d.now += MS; // the driver asks a little later: the timer still runs from the completion
    assert_eq!(d.s.poll_dispatch(d.now), None);
    assert_eq!(d.s.poll_timeout(), Some(done + 6 * MS));
    assert_eq!(d.s.poll_dispatch(done + 6 * MS - 1), None);
    assert_eq!(d.s.poll_dispatch(done + 6 * MS).unwrap().id, far.id);
    let a = d.s.anticipation();
    assert_eq!((a.waits, a.hits, a.timeouts), (1, 0, 1));
    assert_eq!(a.waited, 5 * MS);
}

#[test]
fn linux_as_dispatches_the_anticipated_request_at_once() {
    let mut s = engine(Variant::Las);
    let mut d = Driver::new(&mut s);
    anticipation_point(&mut d, 200 * US);
    assert_eq!(d.s.poll_dispatch(d.now), None);
    assert_eq!(d.s.status(), AnticStatus::WaitNext);
    d.now += 200 * US;
    let mine = d.request(0, 0, 11 * 128, 128);
    d.submit(mine);
    assert_eq!(d.s.status(), AnticStatus::Finished);
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, mine.id);
    assert_eq!(d.s.anticipation().hits, 1);
}

#[test]
fn linux_as_breaks_anticipation_for_a_close_request_from_another_context() {
    let mut s = engine(Variant::Las);
    let mut d = Driver::new(&mut s);
    anticipation_point(&mut d, 200 * US);
    assert_eq!(d.s.poll_dispatch(d.now), None);
    d.now += 500 * US;
    // 2.6.9's window: 64 sectors ahead of the head (32 behind) in the first millisecond.
    let head = 11 * 128;
    let close = d.request(2, 2, head + 16, 8);
    d.submit(close);
    assert_eq!(d.s.status(), AnticStatus::Finished);
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, close.id);
}

#[test]
fn linux_as_close_request_window_grows_with_the_time_waited() {
    for (variant, base) in [(Variant::Las, 64u64), (Variant::Mainline, 8192)] {
        let mut s = engine(variant);
        let mut d = Driver::new(&mut s);
        anticipation_point(&mut d, 200 * US);
        let head = 11 * 128;
        assert_eq!(d.s.poll_dispatch(d.now), None);
        // Just outside the first window: not close at once...
        let beyond = head + base + base / 2;
        d.now += 100 * US;
        let early = d.request(2, 2, beyond, 8);
        d.submit(early);
        assert_eq!(d.s.status(), AnticStatus::WaitNext, "{variant:?}");
        // ...but 3 ms later the window has doubled at least twice.
        d.now += 3 * MS;
        let later = d.request(3, 3, beyond + 8, 8);
        d.submit(later);
        assert_eq!(d.s.status(), AnticStatus::Finished, "{variant:?}");
    }
}

#[test]
fn linux_as_breaks_anticipation_when_the_anticipated_process_has_exited() {
    let mut s = engine(Variant::Las);
    let mut d = Driver::new(&mut s);
    anticipation_point(&mut d, 200 * US);
    assert_eq!(d.s.poll_dispatch(d.now), None);
    d.now += MS;
    d.s.context_exited(ContextId(0), d.now);
    // Nothing happens at the exit itself: the next arrival finds the process gone.
    assert_eq!(d.s.status(), AnticStatus::WaitNext);
    let other = d.request(2, 2, 3 * FAR, 8);
    d.submit(other);
    assert_eq!(d.s.status(), AnticStatus::Finished);
    assert!(d.s.poll_dispatch(d.now).is_some());
}

#[test]
fn linux_as_2_6_32_keeps_anticipating_an_exited_process_while_exits_are_followed_by_cooperators() {
    let mut s = engine(Variant::Mainline);
    let mut d = Driver::new(&mut s);
    anticipation_point(&mut d, 200 * US);
    assert_eq!(d.s.poll_dispatch(d.now), None);
    d.now += MS;
    d.s.context_exited(ContextId(0), d.now);
    // exit_no_coop is 0: an exited process has always been followed by a close request.
    let other = d.request(2, 2, 3 * FAR, 8);
    d.submit(other);
    assert_eq!(d.s.status(), AnticStatus::WaitNext);
    assert_eq!(d.s.exit_no_coop(), 0);
    // A close request from a cooperating process ends the wait, and anticipation moves to it.
    let coop = d.request(3, 3, 11 * 128, 8);
    d.submit(coop);
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, coop.id);
    assert_eq!(d.s.anticipated(), Some(ContextId(3)));
}

#[test]
fn cas_moves_anticipation_to_a_cooperating_context_after_the_awaited_one_exits() {
    let mut s = engine(Variant::Cooperative);
    let mut d = Driver::new(&mut s);
    let far = anticipation_point(&mut d, 200 * US);
    assert_eq!(d.s.poll_dispatch(d.now), None);
    d.now += 500 * US;
    d.s.context_exited(ContextId(0), d.now);
    // The awaited context is dead; the system exit probability is low (step 4 would give up
    // at the next other request), but a close read comes first: a cooperating context.
    d.now += 500 * US;
    let coop = d.request(5, 5, 11 * 128 + 64, 32);
    d.submit(coop);
    assert_eq!(d.s.status(), AnticStatus::Finished);
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, coop.id);
    assert_eq!(d.s.anticipated(), Some(ContextId(5)));
    assert_eq!(d.s.cooperative_exit_probability(), 32);
    // Its completion starts a wait for it; the far request still waits.
    d.now += 3 * MS;
    d.s.complete(coop.id, d.now);
    assert_eq!(d.s.poll_dispatch(d.now), None);
    assert_eq!(d.s.status(), AnticStatus::WaitNext);
    assert_eq!(d.s.poll_timeout(), Some(d.now + 6 * MS));
    let _ = far;
}

#[test]
fn linux_as_gives_up_on_a_process_whose_mean_seek_exceeds_the_distance_to_the_candidate() {
    let mut s = engine(Variant::Las);
    let mut d = Driver::new(&mut s);
    // A process that jumps 100,000 sectors between its requests.
    for i in 0..10u64 {
        d.now += 200 * US;
        let r = d.request(0, 0, i * 100_000, 128);
        d.submit(r);
        d.dispatch_one(3 * MS);
        d.finish();
    }
    let head = 9 * 100_000 + 128;
    d.now += 200 * US;
    let last = d.request(0, 0, head + 100_000, 128);
    d.submit(last);
    d.dispatch_one(3 * MS);
    // Another context's request 50,000 sectors away: nearer than what process 0 would ask.
    let near = d.request(1, 1, head + 100_128 + 50_000, 128);
    d.submit(near);
    d.finish();
    let (seek, _) = d.s.seek_distance(ContextId(0)).unwrap();
    assert!(seek > 50_000, "mean seek {seek}");
    assert_eq!(d.s.poll_dispatch(d.now).unwrap().id, near.id);
}

#[test]
fn linux_as_switches_to_writes_when_the_read_batch_expires() {
    let mut s = sched("linux-as");
    let mut d = Driver::new(&mut *s);
    let mut readers = [Reader::sequential(0, 0, 200 * US)];
    d.run(&mut readers, 10, &paper_service);
    let writes_from = d.now;
    for i in 0..100 {
        let w = d.write(9, 10 * FAR + i * 8, 8, false);
        d.submit(w);
    }
    d.run(&mut readers, 250, &paper_service);
    let first_write = d
        .dispatched
        .iter()
        .find(|(_, r)| r.op == Op::Write)
        .map(|(t, _)| *t)
        .unwrap();
    // The read batch runs read_batch_expire (500 ms) once writes wait.
    let after = first_write - writes_from;
    assert!(
        after > 490 * MS && after < 510 * MS,
        "first write {after} after"
    );
    // The write batch is write_batch_count requests long: 12 (write_batch_expire / 10
    // jiffies), doubled at the first read completion because the zeroed `as_data` starts
    // in an (empty, hence uncontended) write batch.
    let writes_in_a_row = d
        .dispatched
        .iter()
        .skip_while(|(_, r)| r.op == Op::Read)
        .take_while(|(_, r)| r.op == Op::Write)
        .count();
    assert_eq!(writes_in_a_row, 24);
}

#[test]
fn linux_as_prefers_a_short_back_seek_at_twice_its_cost() {
    let mut s = sched("linux-as");
    let mut d = Driver::new(&mut *s);
    let first = d.write(0, 100_000, 8, false);
    d.submit(first);
    d.dispatch_one(3 * MS);
    // Head at 100,008: 300 ahead costs 300, 100 behind costs 200.
    let ahead = d.write(1, 100_008 + 300, 8, false);
    let behind = d.write(2, 100_008 - 100, 8, false);
    d.submit(ahead);
    d.submit(behind);
    d.finish();
    assert_eq!(d.dispatch_one(3 * MS).unwrap().id, behind.id);
}

/// A disk whose seeks cost more the further they go: 1 ms plus up to 7 ms growing with the
/// square root of the distance, and 4 ms of rotation; transfers at 50 MB/s; and a read-ahead
/// track buffer, which serves a request starting up to 1024 sectors past the head in 0.2 ms.
/// (`paper_service` charges every seek the same, which would hide the point of serving
/// nearby files together.)
fn disk_service(req: &Request, head: u64) -> Nanos {
    let transfer = req.bytes() * 1_000_000_000 / 50_000_000;
    if req.sector == head {
        return transfer;
    }
    if req.sector > head && req.sector - head <= 1024 {
        return transfer + 200 * US;
    }
    let d = req.sector.abs_diff(head) as f64;
    let seek = MS + (7.0 * MS as f64 * (d / 100_000_000.0).sqrt().min(1.0)) as Nanos;
    transfer + seek + 4 * MS
}

/// Chains of short-lived processes reading nearby small files one after another, as
/// `find . -type f -exec cat {} \;` does, optionally against a streaming reader (`cat
/// big-file`), the workloads of the Linux/CAS paper's section 3. Each file process issues one
/// 16 KiB read, exits 100 us after it completes, and the next one of its chain issues 1.5 ms
/// later (fork and exec). Chain `i` reads files 64 sectors apart from `bases[i]`; the stream
/// reads 64 KiB requests from sector 40,000,000 with 100 us between them. Returns how many
/// files each chain read in `span` of simulated time.
fn find_exec_cat(s: &mut dyn Scheduler, span: Nanos, stream: bool, bases: &[u64]) -> Vec<usize> {
    struct Chain {
        ctx: u32,
        base: u64,
        file: u64,
        at: Option<Nanos>,
        exit_at: Option<Nanos>,
        read: usize,
    }
    // Context 0 is the stream; chain i's processes are contexts 1000 * (i + 1) + file.
    let mut chains: Vec<Chain> = bases
        .iter()
        .enumerate()
        .map(|(i, &base)| Chain {
            ctx: 1000 * (i as u32 + 1),
            base,
            file: 0,
            at: Some(0),
            exit_at: None,
            read: 0,
        })
        .collect();
    let (mut now, mut next_id, mut head) = (0, 0u64, 0u64);
    let mut busy: Option<(Request, usize, Nanos)> = None;
    let mut stream_at = stream.then_some(0);
    let mut stream_sector = 40_000_000u64;
    let mut req = |ctx: u32, sector: u64, sectors: u32, now: Nanos| {
        next_id += 1;
        Request {
            id: RequestId(next_id),
            context: ContextId(ctx),
            class: ClassId(ctx),
            op: Op::Read,
            sector,
            sectors,
            sync: true,
            issued: now,
            continuation: false,
        }
    };
    while now < span {
        let t = chains
            .iter()
            .flat_map(|c| [c.at, c.exit_at])
            .chain([stream_at, busy.map(|b| b.2), s.poll_timeout()])
            .flatten()
            .min()
            .expect("the chains never stop");
        now = t;
        if let Some((r, who, _)) = busy.filter(|b| b.2 == now) {
            busy = None;
            s.complete(r.id, now);
            if who == usize::MAX {
                stream_at = Some(now + 100 * US);
            } else {
                let c = &mut chains[who];
                c.read += 1;
                c.exit_at = Some(now + 100 * US);
                c.at = Some(now + 1_500 * US);
            }
        }
        for c in &mut chains {
            if c.exit_at == Some(now) {
                s.context_exited(ContextId(c.ctx + c.file as u32), now);
                c.exit_at = None;
                c.file += 1;
            }
        }
        if stream_at == Some(now) {
            stream_at = None;
            let r = req(0, stream_sector, 128, now);
            stream_sector += 128;
            s.enqueue(r, now);
        }
        for c in &mut chains {
            if c.at == Some(now) {
                c.at = None;
                let r = req(c.ctx + c.file as u32, c.base + c.file * 64, 32, now);
                s.enqueue(r, now);
            }
        }
        if busy.is_none() {
            if let Some(r) = s.poll_dispatch(now) {
                let service = disk_service(&r, head);
                head = r.end();
                let who = chains
                    .iter()
                    .position(|c| r.context.0 >= c.ctx && r.context.0 < c.ctx + 1000)
                    .unwrap_or(usize::MAX);
                busy = Some((r, who, now + service));
            }
        }
    }
    chains.iter().map(|c| c.read).collect()
}

#[test]
fn linux_as_starves_short_lived_cooperating_processes_once_exit_prob_passes_half() {
    let mut las = engine(Variant::Las);
    let files = find_exec_cat(&mut las, 3_000 * MS, true, &[0])[0];
    // Every file process exits before its first think-time sample, so exit_prob climbs past
    // 50 %; from then on the streaming reader's request breaks the wait for each new process
    // (step 3) and the next file waits for its read to expire (125 ms, checked once per
    // 125 ms).
    assert!(las.exit_probability() > 128, "{}", las.exit_probability());
    assert!(files <= 40, "{files} files in 3 s");
}

#[test]
fn cas_serves_short_lived_cooperating_processes_that_linux_as_starves() {
    let span = 3_000 * MS;
    let las = find_exec_cat(&mut *sched("linux-as"), span, true, &[0])[0];
    let mut cas_engine = engine(Variant::Cooperative);
    let cas = find_exec_cat(&mut cas_engine, span, true, &[0])[0];
    let mainline = find_exec_cat(&mut *sched("linux-as-2.6.32"), span, true, &[0])[0];
    let deadline = find_exec_cat(&mut *sched("deadline"), span, true, &[0])[0];
    // Each next file's close request is a cooperating one: the wait moves to it, and the
    // cooperative exit probability rises.
    assert!(cas_engine.cooperative_exit_probability() > 128);
    // The paper's Table 2 ranks CAS first, deadline second and LAS far behind.
    assert!(cas > 10 * las, "cas {cas}, linux-as {las}");
    assert!(
        cas > deadline && deadline > 2 * las,
        "cas {cas}, deadline {deadline}, linux-as {las}"
    );
    // 2.6.32's cooperating-process rules do the same.
    assert!(mainline > 10 * las, "2.6.32 {mainline}, linux-as {las}");
}

#[test]
fn cas_keeps_two_chains_of_cooperating_processes_apart_where_linux_as_seeks_between_them() {
    // The paper's section 3.2 and Table 3: two find -exec cat on disjoint trees.
    let span = 3_000 * MS;
    let total = |s: &mut dyn Scheduler| -> usize {
        find_exec_cat(s, span, false, &[0, 60_000_000]).iter().sum()
    };
    let las = total(&mut *sched("linux-as"));
    let cas = total(&mut *sched("cas"));
    let deadline = total(&mut *sched("deadline"));
    // LAS, once exit_prob passes 50 %, and deadline, always, serve the other chain's waiting
    // request at each file's end: a long seek per file (the "seek storm"). CAS waits for the
    // next file of the same chain.
    eprintln!("files read by two chains: cas {cas}, linux-as {las}, deadline {deadline}");
    assert!(
        cas > 2 * las && cas > 2 * deadline,
        "cas {cas}, linux-as {las}, deadline {deadline}"
    );
}

/// A sequential reader (64 KiB requests, 100 us think time) against a streaming writer that
/// keeps 32 asynchronous 64 KiB writes queued (`dd` through the page cache), far apart, the
/// Linux/CAS paper's first experiment. Returns the reads served in `span`.
fn reader_against_writer(s: &mut dyn Scheduler, span: Nanos) -> usize {
    let (mut now, mut next_id, mut head) = (0, 0u64, 0u64);
    let mut busy: Option<(Request, Nanos)> = None;
    let (mut read_sector, mut write_sector) = (0u64, 60_000_000u64);
    let mut read_at = Some(0);
    let mut reads = 0;
    let mut mk = |op: Op, sector: u64, now: Nanos| {
        next_id += 1;
        let ctx = if op == Op::Read { 1 } else { 2 };
        common::request(next_id, ctx, 0, op, sector, now)
    };
    for _ in 0..32 {
        let w = mk(Op::Write, write_sector, 0);
        write_sector += 128;
        s.enqueue(w, 0);
    }
    while now < span {
        now = [read_at, busy.map(|b| b.1), s.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .expect("the writer never stops");
        if let Some((r, _)) = busy.filter(|b| b.1 == now) {
            busy = None;
            s.complete(r.id, now);
            if r.op == Op::Read {
                reads += 1;
                read_at = Some(now + 100 * US);
            } else {
                let w = mk(Op::Write, write_sector, now);
                write_sector += 128;
                s.enqueue(w, now);
            }
        }
        if read_at == Some(now) {
            read_at = None;
            let r = mk(Op::Read, read_sector, now);
            read_sector += 128;
            s.enqueue(r, now);
        }
        if busy.is_none() {
            if let Some(r) = s.poll_dispatch(now) {
                let service = disk_service(&r, head);
                head = r.end();
                busy = Some((r, now + service));
            }
        }
    }
    reads
}

#[test]
fn linux_as_protects_a_reader_from_a_streaming_writer_that_deadline_lets_starve() {
    let span = 3_000 * MS;
    let deadline = reader_against_writer(&mut *sched("deadline"), span);
    let las = reader_against_writer(&mut *sched("linux-as"), span);
    let cas = reader_against_writer(&mut *sched("cas"), span);
    eprintln!("reads against a writer: deadline {deadline}, linux-as {las}, cas {cas}");
    // The paper's Table 1: deadline takes 129 s to read the file, LAS 10 s, CAS 9 s.
    assert!(las > 5 * deadline, "linux-as {las}, deadline {deadline}");
    assert!(cas * 10 >= las * 9, "cas {cas}, linux-as {las}");
}
