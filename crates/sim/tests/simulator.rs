//! The simulator's invariants: bytes requested equal bytes served; time only moves forward;
//! every request is dispatched and completed once; same seed, same result; and how the engine
//! orders a completion, the scheduler's decision and a context's exit. The paper's shapes are
//! `antsched-paper`'s tests.

use std::collections::HashMap;

use antsched_core::{BuildEnv, Nanos, RequestId};
use antsched_sim::engine::Simulation;
use antsched_sim::{disk_model, simulate, SharedDevice};
use antsched_workload::fio::{parse, JobFile};
use antsched_workload::report::RunReport;
fn job(text: &str) -> JobFile {
    parse(text, "test.fio").unwrap()
}

fn sim(text: &str, spec: &str, seed: u64) -> RunReport {
    simulate(
        &job(text),
        disk_model("deskstar-34gxp").unwrap(),
        spec,
        seed,
    )
    .unwrap()
}

const RANDOM: &str = "[global]\nrw=randread\nbs=64k\nsize=256m\nioengine=psync\ndirect=1\n\
                      thinktime=300us\n[a]\nfilename=a\n[b]\nfilename=b\nantsched_disk_offset=6g\n";

#[test]
fn same_seed_same_result_another_seed_another() {
    let a = sim(RANDOM, "as-aged-sptf", 7);
    let mut b = sim(RANDOM, "as-aged-sptf", 7);
    // Everything but the wall clock is a function of the inputs.
    b.sim = a.sim.map(|s| antsched_workload::report::SimSpeed { ..s });
    assert_eq!(a, b);
    let c = sim(RANDOM, "as-aged-sptf", 8);
    assert_ne!(a.duration_s, c.duration_s, "another seed, other offsets");
}

#[test]
fn bytes_requested_equal_bytes_served_and_applications_get_their_bytes() {
    for spec in [
        "noop",
        "aged-sptf",
        "as-aged-sptf",
        "as-stride-combo",
        "as-clook",
    ] {
        let r = sim(RANDOM, spec, 1);
        let s = r.sim.unwrap();
        assert_eq!(s.bytes_requested, s.bytes_served, "{spec}");
        // Two jobs of 256 MiB each, direct I/O: the disk moved exactly what they asked for.
        assert_eq!(r.bytes, 2 * (256 << 20), "{spec}");
        assert_eq!(s.bytes_served, r.bytes, "{spec}");
    }
    // With read-ahead the disk may read more than the application asked for, never less.
    let seq = "[global]\nrw=read\nbs=64k\nsize=64m\n[a]\nfilename=a\n[b]\nfilename=b\n";
    let r = sim(seq, "as-aged-sptf", 1);
    let s = r.sim.unwrap();
    assert_eq!(s.bytes_requested, s.bytes_served);
    assert_eq!(r.bytes, 2 * (64 << 20));
    assert!(s.bytes_served >= r.bytes);
}

#[test]
fn time_moves_forward_and_every_request_is_served_once() {
    let jobs = job(RANDOM);
    let device = SharedDevice::new(disk_model("deskstar-34gxp").unwrap());
    let w = antsched_workload::compile(&jobs, device.capacity_sectors(), 3).unwrap();
    let sched = antsched_core::build("as-aged-sptf:estimator=seek", &BuildEnv::default()).unwrap();
    let mut seen: HashMap<RequestId, (Nanos, Nanos)> = HashMap::new();
    let mut last_start: Nanos = 0;
    let mut forward = true;
    let report = Simulation::new(&jobs, &w, sched, device)
        .unwrap()
        .observe(|r, c| {
            forward &= c.start >= last_start && c.finish >= c.start && c.start >= r.issued;
            last_start = c.start;
            assert!(
                seen.insert(r.id, (c.start, c.finish)).is_none(),
                "{} twice",
                r.id
            );
        })
        .run()
        .unwrap();
    assert!(
        forward,
        "a request started before the one before it, or before it was issued"
    );
    assert_eq!(seen.len() as u64, report.sim.unwrap().requests);
    // One at a time (depth 1): no two services overlap.
    let mut spans: Vec<(Nanos, Nanos)> = seen.into_values().collect();
    spans.sort();
    assert!(spans.windows(2).all(|w| w[1].0 >= w[0].1));
}

/// `antsched_split_flag`: with the flag (the default) the pieces of a split request after the
/// first are continuations, which the scheduler treats as part of the first; without it every
/// piece is a request of its own, and all of them reach the scheduler at once.
#[test]
fn unflagged_pieces_reach_the_scheduler_as_requests_of_their_own() {
    let pieces = |flag: &str| {
        let jobs = job(&format!(
            "[a]\nrw=read\nbs=192k\nsize=1536k\nioengine=mmap\nantsched_split=64k\n{flag}"
        ));
        let device = SharedDevice::new(disk_model("deskstar-34gxp").unwrap());
        let w = antsched_workload::compile(&jobs, device.capacity_sectors(), 1).unwrap();
        let sched = antsched_core::build("as-aged-sptf", &BuildEnv::default()).unwrap();
        let mut seen: Vec<(bool, Nanos)> = Vec::new();
        Simulation::new(&jobs, &w, sched, device)
            .unwrap()
            .observe(|r, _| seen.push((r.continuation, r.issued)))
            .run()
            .unwrap();
        seen
    };
    let flagged = pieces("");
    let unflagged = pieces("antsched_split_flag=0\n");
    assert_eq!((flagged.len(), unflagged.len()), (24, 24));
    let continuations = |v: &[(bool, Nanos)]| v.iter().filter(|p| p.0).count();
    assert_eq!(continuations(&flagged), 16);
    assert_eq!(continuations(&unflagged), 0);
    // Three pieces of each read, issued together.
    assert!(unflagged.chunks(3).all(|c| c.iter().all(|p| p.1 == c[0].1)));
}

/// Wraps a scheduler and records what the engine tells it.
struct Recorder {
    inner: Box<dyn antsched_core::Scheduler>,
    log: std::sync::Arc<std::sync::Mutex<Vec<Call>>>,
    contexts: HashMap<RequestId, antsched_core::ContextId>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Call {
    Complete(antsched_core::ContextId),
    Decide,
    Exit(antsched_core::ContextId),
}

impl antsched_core::Scheduler for Recorder {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn enqueue(&mut self, req: antsched_core::Request, now: Nanos) {
        self.contexts.insert(req.id, req.context);
        self.inner.enqueue(req, now)
    }
    fn complete(&mut self, id: RequestId, now: Nanos) {
        self.log
            .lock()
            .unwrap()
            .push(Call::Complete(self.contexts[&id]));
        self.inner.complete(id, now)
    }
    fn poll_dispatch(&mut self, now: Nanos) -> Option<antsched_core::Request> {
        self.log.lock().unwrap().push(Call::Decide);
        self.inner.poll_dispatch(now)
    }
    fn poll_timeout(&self) -> Option<Nanos> {
        self.inner.poll_timeout()
    }
    fn context_exited(&mut self, ctx: antsched_core::ContextId, now: Nanos) {
        self.log.lock().unwrap().push(Call::Exit(ctx));
        self.inner.context_exited(ctx, now)
    }
    fn set_class_weight(&mut self, class: antsched_core::ClassId, weight: u32) {
        self.inner.set_class_weight(class, weight)
    }
    fn pending(&self) -> usize {
        self.inner.pending()
    }
    fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }
    fn anticipation(&self) -> antsched_core::AnticipationStats {
        self.inner.anticipation()
    }
}

#[test]
fn a_short_lived_context_exits_after_the_decision_that_follows_its_last_completion() {
    // As in the kernel: the completion interrupt runs the queue while the process that waited
    // is still asleep; it exits only once it runs again. A scheduler told of the exit inside
    // the completion could never wait for a cooperating successor (CAS, section 4).
    let jobs = job(
        "[find]\nnrfiles=6\nfilesize=16k\nbs=16k\nfile_service_type=sequential\n\
         antsched_context_per_file=1\nantsched_dir_files=3\nthinktime=1ms\n",
    );
    let device = SharedDevice::new(disk_model("deskstar-34gxp").unwrap());
    let w = antsched_workload::compile(&jobs, device.capacity_sectors(), 1).unwrap();
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sched = Box::new(Recorder {
        inner: antsched_core::build("cas", &BuildEnv::default()).unwrap(),
        log: log.clone(),
        contexts: HashMap::new(),
    });
    Simulation::new(&jobs, &w, sched, device)
        .unwrap()
        .run()
        .unwrap();
    let log = log.lock().unwrap().clone();
    let exits: Vec<usize> = (0..log.len())
        .filter(|&k| matches!(log[k], Call::Exit(_)))
        .collect();
    // Six cats exit (and, at the end, the find and the unused next context).
    assert!(exits.len() >= 6, "{log:?}");
    for &k in &exits[..6] {
        let Call::Exit(ctx) = log[k] else {
            unreachable!()
        };
        let done = log[..k]
            .iter()
            .rposition(|c| *c == Call::Complete(ctx))
            .unwrap_or_else(|| panic!("{ctx:?} exited before it completed anything"));
        assert!(
            log[done..k].contains(&Call::Decide),
            "{ctx:?} exited before the scheduler decided after its completion: {:?}",
            &log[done..=k]
        );
    }
    // The directories are read by one long-lived context, the files by one each.
    let readers: std::collections::BTreeSet<_> = log
        .iter()
        .filter_map(|c| match c {
            Call::Complete(ctx) => Some(*ctx),
            _ => None,
        })
        .collect();
    assert_eq!(readers.len(), 7, "six cats and the find: {readers:?}");
}

#[test]
fn a_run_ends_when_its_jobs_finish_before_the_runtime() {
    // `runtime` bounds a job that is not time-based; it does not stretch the run. Two 16 MiB
    // readers take well under a second each; the run must not report 300 s.
    let jobs = "[global]\nrw=read\nbs=64k\nsize=16m\ndirect=1\nruntime=300s\n\
                [a]\nfilename=a\n[b]\nfilename=b\nantsched_disk_offset=6g\n";
    let r = sim(jobs, "deadline", 1);
    assert!(r.duration_s < 10.0, "{} s", r.duration_s);
    assert_eq!(r.bytes, 2 * (16 << 20));
    // With `exitall`, the job that has it ends the run, before the runtime.
    let r = sim(&format!("{jobs}exitall\n"), "deadline", 1);
    assert!(r.duration_s < 10.0, "{} s", r.duration_s);
    // A time-based run still lasts exactly its runtime.
    let r = sim(
        "[a]\nrw=read\nbs=64k\nsize=16m\ndirect=1\ntime_based\nruntime=2s\nfilename=a\n",
        "deadline",
        1,
    );
    assert_eq!(r.duration_s, 2.0);
}

/// fio's `number_ios` stops a job early but "does not extend the amount of I/O that will be
/// done": the job does at most its size. It once wrapped the pass and always did N I/Os, so
/// `number_ios=18446744073709551615` never ended.
#[test]
fn number_ios_never_extends_a_job_past_its_size() {
    let base = "[a]\nrw=read\nbs=4k\nsize=64k\ndirect=1\n";
    let r = sim(&format!("{base}number_ios=4\n"), "aged-sptf", 1);
    assert_eq!(r.bytes, 4 * 4096, "number_ios below the size stops early");
    let r = sim(&format!("{base}number_ios=1000\n"), "aged-sptf", 1);
    assert_eq!(
        r.bytes,
        64 << 10,
        "number_ios above the size does the size once"
    );
    let r = sim(
        &format!("{base}number_ios=18446744073709551615\n"),
        "aged-sptf",
        1,
    );
    assert_eq!(r.bytes, 64 << 10);
    // A random job likewise does its size in all at most.
    let r = sim(
        "[a]\nrw=randread\nbs=4k\nsize=64k\ndirect=1\nnumber_ios=1000\n",
        "aged-sptf",
        1,
    );
    assert_eq!(r.bytes, 64 << 10);
}

/// Pauses within the hour can still add up past 2^64 ns: the run ends with an error instead
/// of wrapping to a short duration.
#[test]
fn virtual_time_past_2_64_ns_is_an_error_not_a_wrapped_result() {
    let text = "[a]\nrw=read\nbs=512\nsize=2g\ndirect=1\nthinktime=1h\nantsched_issue_delay=1h\n";
    let e = simulate(&job(text), disk_model("deskstar-34gxp").unwrap(), "noop", 1).unwrap_err();
    assert!(e.to_string().contains("584 years"), "{e}");
}

/// Laying out `nrfiles` files once scanned every placed file per file (and looked each up by
/// name the same way): `filesize=512 nrfiles=1000000` never finished. Now each placement and
/// lookup is a tree or hash lookup, and every file is still read once, where it was placed.
#[test]
fn many_small_files_are_laid_out_and_read_once_each() {
    let r = sim(
        "[a]\nrw=read\nbs=512\nfilesize=512\nnrfiles=200000\ndirect=1\n",
        "clook",
        1,
    );
    assert_eq!(r.bytes, 200_000 * 512);
    // Two jobs whose files would overlap are still refused.
    let e = simulate(
        &job("[a]\nrw=read\nsize=1m\nantsched_disk_offset=0\n[b]\nrw=read\nsize=1m\nantsched_disk_offset=512k\n"),
        disk_model("deskstar-34gxp").unwrap(),
        "clook",
        1,
    )
    .unwrap_err();
    assert!(e.to_string().contains("overlaps"), "{e}");
}

/// A long run reports its progress as it goes, not only when it ends: shares in [0, 1] that
/// never fall, for a size-based job and a time-based one, and the same result as without.
#[test]
fn a_long_run_reports_its_progress_within_the_run() {
    use std::sync::Mutex;
    for text in [
        "[global]\nrw=randread\nbs=4k\nsize=256m\nioengine=psync\ndirect=1\n[a]\nfilename=a\n",
        "[global]\nrw=randread\nbs=4k\nsize=1g\nioengine=psync\ndirect=1\ntime_based=1\n\
         runtime=400s\n[a]\nfilename=a\n",
    ] {
        let jobs = job(text);
        let disk = disk_model("deskstar-34gxp").unwrap();
        let seen = Mutex::new(Vec::new());
        let runs = antsched_sim::simulate_each(
            &jobs,
            &*disk,
            &["as-aged-sptf".to_string()],
            1,
            &|i, share| seen.lock().unwrap().push((i, share)),
        )
        .unwrap();
        let seen = seen.into_inner().unwrap();
        let within: Vec<f64> = seen.iter().map(|s| s.1).filter(|&s| s < 1.0).collect();
        assert!(within.len() >= 2, "progress within the run: {seen:?}");
        assert!(seen
            .iter()
            .all(|&(i, s)| i == 0 && (0.0..=1.0).contains(&s)));
        assert!(
            seen.windows(2).all(|w| w[1].1 >= w[0].1),
            "never falls: {seen:?}"
        );
        assert_eq!(seen.last().map(|s| s.1), Some(1.0));
        let mut with = runs.into_iter().next().unwrap().unwrap();
        let without = sim(text, "as-aged-sptf", 1);
        with.sim = without.sim;
        assert_eq!(with, without);
    }
}

/// A mix of think times: a stream beside readers thinking 2 and 5 ms and a random reader
/// thinking 10 ms. SPTF passes over the random reader, and with the one-second grace alone it
/// got one request a second (0.03 MB/s, where `linux-as` gives it 0.13). A context with less
/// than two thirds of its fair share now ages sooner while several others wait: `as-rw-sptf`'s
/// worst-served reader gets at least half of `linux-as`'s, and the mix at least 95% of
/// `linux-as`'s throughput.
#[test]
fn a_starved_context_among_several_gets_at_least_half_of_what_linux_as_gives_it() {
    let text = example("mix-of-think-times.fio");
    let text = text.as_str();
    let worst = |r: &RunReport| {
        r.contexts
            .iter()
            .map(|c| c.throughput_mb_s)
            .fold(f64::INFINITY, f64::min)
    };
    let theirs = sim(text, "linux-as", 1);
    for spec in ["as-rw-sptf", "as-rw-sptf:estimator=calibrated"] {
        let ours = sim(text, spec, 1);
        assert!(
            worst(&ours) >= 0.5 * worst(&theirs),
            "{spec}: worst-served {:.3} MB/s against linux-as's {:.3}",
            worst(&ours),
            worst(&theirs)
        );
        // The throughput with the default (exact) estimator only: with the calibrated one (the
        // paper suite's, which has no such mix) the floor at two thirds of the fair share
        // leaves it at 0.905 of `linux-as`'s (0.956 at half), a gap the README lists.
        if spec == "as-rw-sptf" {
            assert!(
                ours.throughput_mb_s >= 0.95 * theirs.throughput_mb_s,
                "{spec}: {:.2} MB/s against linux-as's {:.2}",
                ours.throughput_mb_s,
                theirs.throughput_mb_s
            );
        }
    }
}

/// Issue 18's bar on a mix of readers in `examples/jobs/NAME`: `as-rw-sptf` makes no request
/// wait 2 s, and against the best Linux peer that makes none wait so long, keeps within 5% of
/// its aggregate throughput and gives its worst-served context at least half of what that
/// peer's worst-served context gets.
fn keeps_up_with_the_best_linux_peer(name: &str) {
    keeps_up_on(name, &example(name));
}

fn example(name: &str) -> String {
    let path = format!("{}/../../examples/jobs/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

/// [`keeps_up_with_the_best_linux_peer`] on the job `text`, called `name`.
fn keeps_up_on(name: &str, text: &str) {
    let readers = |r: &RunReport| -> Vec<(f64, f64)> {
        r.contexts
            .iter()
            .filter(|c| c.name != "writeback")
            .map(|c| {
                let wait = c.latency_ms.max.max(c.stalled_ms.unwrap_or(0.0));
                (c.throughput_mb_s, wait)
            })
            .collect()
    };
    let worst = |r: &RunReport| {
        readers(r)
            .iter()
            .map(|&(mb_s, _)| mb_s)
            .fold(f64::INFINITY, f64::min)
    };
    let starves = |r: &RunReport| readers(r).iter().any(|&(_, wait)| wait >= 2_000.0);
    let best = ["deadline", "linux-as", "cas", "cfq", "bfq"]
        .map(|p| sim(text, p, 1))
        .into_iter()
        .filter(|r| !starves(r))
        .max_by(|a, b| a.throughput_mb_s.total_cmp(&b.throughput_mb_s))
        .unwrap();
    let ours = sim(text, "as-rw-sptf", 1);
    assert!(
        !starves(&ours),
        "{name}: as-rw-sptf makes a request wait 2 s"
    );
    assert!(
        ours.throughput_mb_s >= 0.95 * best.throughput_mb_s,
        "{name}: as-rw-sptf {:.2} MB/s against {} {:.2}",
        ours.throughput_mb_s,
        best.scheduler,
        best.throughput_mb_s
    );
    assert!(
        worst(&ours) >= 0.5 * worst(&best),
        "{name}: as-rw-sptf's worst-served {:.3} MB/s against {}'s {:.3}",
        worst(&ours),
        best.scheduler,
        worst(&best)
    );
}

/// A random reader thinking 7 ms beside two streams, a reader of 4 KB and a buffered writer
/// (`examples/jobs/mixed-think.fio`). Its share was charged the destage of the write-back's
/// cached writes when its read followed a write turn, so the floor under a starved context's
/// share did not see it starved; and seen starved, each of its requests was served alone, a
/// trip there and back. It got 0.017 MB/s against CFQ's 0.047.
#[test]
fn a_random_reader_beside_streams_and_write_back_gets_half_of_what_the_best_peer_gives() {
    keeps_up_with_the_best_linux_peer("mixed-think.fio");
}

/// A random reader that never thinks beside a stream, a reader thinking 1 ms and a write-back
/// flood (`examples/jobs/readers-vs-flood.fio`). Aged after the grace over the others
/// waiting (half a second here, when a third is its turn), it got 0.072 MB/s where Linux's AS
/// gives it 0.211. Since the disk model writes a stream at the media rate, `deadline` is the
/// best peer here, and the floor under the reader's share, more than its turn, keeps it on
/// the line; the turn itself is held by
/// `sixteen_readers_keep_the_disk_for_their_turns` and the unit tests in `rw.rs`.
#[test]
fn a_random_reader_beside_a_stream_a_thinker_and_write_back_gets_its_turn() {
    keeps_up_with_the_best_linux_peer("readers-vs-flood.fio");
}

/// Four readers that skip a megabyte between 128 KB reads, beside two streams
/// (`examples/jobs/skipping-readers-vs-streams.fio`). Each read costs about what a switch to
/// another file does, so neither SPTF nor the anticipation keeps such a reader for more than
/// a request, and the floor under its share decides its bytes: at half the fair share it got
/// 0.71 MB/s, where Linux's AS, which shares the time about equally, gives 1.63.
#[test]
fn readers_that_skip_ahead_beside_streams_keep_up_with_the_best_linux_peer() {
    keeps_up_with_the_best_linux_peer("skipping-readers-vs-streams.fio");
}

/// Sixteen sequential readers of 32 KB blocks (`examples/jobs/sixteen-readers.fio` with half
/// its block size). Once most of them are starved, the oldest credit took the disk at every
/// decision the reader being served left open, and visits ended after about a read-ahead
/// window: 0.949 of Linux's AS's throughput. A starved context now keeps the disk
/// for its turn.
#[test]
fn sixteen_readers_keep_the_disk_for_their_turns() {
    let text = example("sixteen-readers.fio").replace("bs=64k", "bs=32k");
    assert!(text.contains("bs=32k"));
    keeps_up_on("sixteen-readers.fio at 32 KB", &text);
}

/// Issue 18 on a mix of many readers (`examples/jobs/mix-of-readers.fio`).
#[test]
fn as_rw_sptf_on_a_mix_of_readers_keeps_up_with_the_best_linux_peer() {
    keeps_up_with_the_best_linux_peer("mix-of-readers.fio");
}

/// Two sequential readers far apart, each thinking 10 ms: longer than the seek between them,
/// so neither is worth waiting for, and each completion is followed by the other's request.
/// A reader that does not follow itself at once is a possible chain's member; one chain seen
/// at the start once made `as-rw-sptf` wait, in vain, for its next member at every switch
/// (here 1,080 waits of half a millisecond, all timed out), since a chain that does not go on
/// issues nothing to correct its statistics. A timed-out wait for a chain now breaks it.
#[test]
fn a_chain_that_does_not_go_on_is_not_waited_for_again() {
    let text = "[global]\nrw=read\nbs=64k\nsize=1g\nioengine=mmap\ntime_based\nruntime=20s\n\
                thinktime=10ms\n[p]\nfilename=p\n[q]\nfilename=q\nantsched_disk_offset=6g\n";
    for estimator in ["calibrated", "exact"] {
        let ours = sim(text, &format!("as-rw-sptf:estimator={estimator}"), 1);
        let aged = sim(text, &format!("as-aged-sptf:estimator={estimator}"), 1);
        let a = &ours.anticipation;
        assert!(a.timeouts <= 1 + a.waits / 20, "{estimator}: {a:?}");
        assert!(
            ours.throughput_mb_s >= aged.throughput_mb_s,
            "{estimator}: {:.3} MB/s against as-aged-sptf's {:.3}",
            ours.throughput_mb_s,
            aged.throughput_mb_s
        );
    }
}

/// The exact estimator as it was before the device gave a floor: every question answered,
/// no bound, so SPTF asks about every pending request.
struct FullPass(antsched_sim::device::ExactEstimator);

impl antsched_core::PositionEstimator for FullPass {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn head(&self) -> u64 {
        self.0.head()
    }
    fn positioning_time(&self, req: &antsched_core::Request, now: Nanos) -> Nanos {
        self.0.positioning_time(req, now)
    }
    fn dispatched(&mut self, req: &antsched_core::Request, now: Nanos) {
        self.0.dispatched(req, now)
    }
    fn committed(&self, req: &antsched_core::Request, now: Nanos) -> Nanos {
        self.0.committed(req, now)
    }
    fn costly(&self) -> bool {
        self.0.costly()
    }
}

/// Twenty-four sequential readers (the next request of each lies in what the drive read
/// ahead for it, far from the head), sixteen random readers and eight random writers, on a
/// drive whose 64 segments keep every stream's read-ahead and which caches writes: SPTF's walk
/// outward from the head, stopped by the device's floor, decides what a pass over every
/// pending request decides, under each SPTF-based scheduler.
#[test]
fn the_devices_floor_changes_no_decision() {
    let mut text =
        String::from("[global]\nbs=16k\nsize=48m\nio_size=3m\nioengine=psync\ndirect=1\n");
    for i in 0..48 {
        let rw = match i % 6 {
            0 | 2 | 4 => "read",
            5 => "randwrite",
            _ => "randread",
        };
        text += &format!("[j{i}]\nrw={rw}\nfilename=f{i}\n");
    }
    let jobs = job(&text);
    for spec in ["sptf", "aged-sptf", "as-aged-sptf", "as-rw-sptf"] {
        let run = |full_pass: bool| {
            let disk = disk_model("ultrastar-hc310").unwrap();
            let w = antsched_workload::compile(&jobs, disk.capacity_sectors(), 3).unwrap();
            let device = SharedDevice::new(disk);
            let mut env = device.build_env(3);
            if full_pass {
                let d = device.clone();
                env.exact = Some(std::sync::Arc::new(move || {
                    Box::new(FullPass(d.estimator())) as Box<dyn antsched_core::PositionEstimator>
                }));
            }
            let sched = antsched_core::build(spec, &env).unwrap();
            let mut r = Simulation::new(&jobs, &w, sched, device)
                .unwrap()
                .run()
                .unwrap();
            r.sim = None;
            r
        };
        let (walk, pass) = (run(false), run(true));
        assert!(walk.bytes > 0);
        assert_eq!(walk, pass, "{spec}");
    }
}
