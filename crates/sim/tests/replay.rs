//! Trace replay: a known job written as a fio log and replayed closed loop gives back its
//! requests, bytes and throughput; an open-loop replay keeps the trace's issue times; a
//! request beyond the disk is an error naming its line; requests a process had in flight
//! together stay together.

use antsched_core::{BuildEnv, Nanos, Op};
use antsched_sim::engine::{Loop, Replay, ReplayOptions, Simulation};
use antsched_sim::{disk_model, SharedDevice, SimError};
use antsched_workload::fio::parse;
use antsched_workload::report::RunReport;
use antsched_workload::trace::{Format, TraceReader};

const DISK: &str = "deskstar-34gxp";

/// One disk request as the observer saw it: (issue time, sector, bytes, op).
type Seen = (Nanos, u64, u64, Op);

/// Replays `text` (in `format`, or detected) under `spec`; returns the report and, per disk
/// request, (issue time, sector, bytes, op).
fn replay(
    text: &str,
    format: Option<Format>,
    opts: ReplayOptions,
    spec: &str,
) -> Result<(RunReport, Vec<Seen>), SimError> {
    let reader = TraceReader::open(text.as_bytes(), "t", format)?;
    let f = reader.format();
    let device = SharedDevice::new(disk_model(DISK).unwrap());
    let sched = antsched_core::build(spec, &BuildEnv::default()).unwrap();
    let mut seen = Vec::new();
    let report = Simulation::replay(Replay::new(Box::new(reader), "t", f, opts), sched, device)?
        .observe(|r, _| seen.push((r.issued, r.sector, r.bytes(), r.op)))
        .run()?;
    Ok((report, seen))
}

/// The job, simulated, with every application I/O written down as a fio version 3 log.
fn job_as_iolog(text: &str, spec: &str) -> (RunReport, String) {
    let jobs = parse(text, "t.fio").unwrap();
    let device = SharedDevice::new(disk_model(DISK).unwrap());
    let w = antsched_workload::compile(&jobs, device.capacity_sectors(), 1).unwrap();
    let sched = antsched_core::build(spec, &BuildEnv::default()).unwrap();
    let mut log = String::from("fio version 3 iolog\n0 /a add\n0 /a open\n");
    let report = Simulation::new(&jobs, &w, sched, device)
        .unwrap()
        .observe(|r, _| {
            let op = if r.op == Op::Read { "read" } else { "write" };
            log += &format!(
                "{} /a {op} {} {}\n",
                r.issued / 1000,
                r.sector * 512,
                r.bytes()
            );
        })
        .run()
        .unwrap();
    (report, log)
}

/// The replay's throughput within `tolerance` (a fraction) of the job's.
fn assert_throughput_within(spec: &str, replay: &RunReport, job: &RunReport, tolerance: f64) {
    let ratio = replay.throughput_mb_s / job.throughput_mb_s;
    assert!(
        (1.0 - tolerance..=1.0 + tolerance).contains(&ratio),
        "{spec}: replay {:.3} MB/s, job {:.3} MB/s",
        replay.throughput_mb_s,
        job.throughput_mb_s
    );
}

#[test]
fn a_known_job_written_as_a_fio_log_replays_closed_loop_to_its_requests_bytes_and_throughput() {
    // A direct, synchronous random reader: each application I/O is one disk request, so its
    // log is exactly what the disk saw.
    let job = "[a]\nfilename=a\nrw=randread\nbs=64k\nsize=512m\nio_size=64m\nioengine=psync\n\
               direct=1\nthinktime=2ms\n";
    for spec in ["aged-sptf", "as-aged-sptf"] {
        let (sim, log) = job_as_iolog(job, spec);
        let requests = log.lines().filter(|l| l.contains(" read ")).count() as u64;
        let (r, seen) = replay(&log, None, ReplayOptions::default(), spec).unwrap();
        let s = r.sim.unwrap();
        assert_eq!(s.requests, requests, "{spec}");
        assert_eq!(seen.len() as u64, requests);
        assert_eq!(r.bytes, 64 << 20, "{spec}: every byte of the log replayed");
        assert_eq!(r.bytes, sim.bytes);
        assert_throughput_within(spec, &r, &sim, 0.05);
    }
}

/// Two sequential readers that never think, the paper's deceptive idleness: their disk
/// requests written as a blkparse trace (issue and completion per process, the next issue at
/// the completion before it, both first issues at 0) replay closed loop to the job's own
/// throughput, under Aged-SPTF, which idles deceptively, as under anticipation. The replay once
/// issued a record due at a completion before the scheduler had decided on it, and started
/// both processes before the first decision: Aged-SPTF then never switched streams (20.8 MB/s
/// against the job's 5.8).
#[test]
fn readers_that_never_think_replay_to_the_jobs_throughput() {
    let job = "[global]\nrw=read\nbs=64k\nsize=256m\nruntime=4s\nioengine=psync\ndirect=1\n\
               [a]\nfilename=a\n[b]\nfilename=b\n";
    let jobs = parse(job, "t.fio").unwrap();
    for spec in ["aged-sptf", "as-aged-sptf"] {
        let device = SharedDevice::new(disk_model(DISK).unwrap());
        let w = antsched_workload::compile(&jobs, device.capacity_sectors(), 1).unwrap();
        let sched = antsched_core::build(spec, &BuildEnv::default()).unwrap();
        // (time, completion before issue at one time, line), in the order seen.
        let mut events: Vec<(Nanos, u8, String)> = Vec::new();
        let sim = Simulation::new(&jobs, &w, sched, device)
            .unwrap()
            .observe(|r, c| {
                let (pid, s, n) = (r.context.0 + 1, r.sector, r.sectors);
                events.push((r.issued, 1, format!("{pid} Q R {s} + {n} [ctx{pid}]")));
                events.push((c.finish, 0, format!("0 C R {s} + {n} [0]")));
            })
            .run()
            .unwrap();
        events.sort_by_key(|e| (e.0, e.1));
        let trace: String = events
            .iter()
            .enumerate()
            .map(|(i, (t, _, rest))| {
                format!(
                    "254,0 0 {} {}.{:09} {rest}\n",
                    i + 1,
                    t / 1_000_000_000,
                    t % 1_000_000_000
                )
            })
            .collect();
        let (r, seen) = replay(
            &trace,
            Some(Format::Blkparse),
            ReplayOptions::default(),
            spec,
        )
        .unwrap();
        assert_eq!(
            seen[0].1, 0,
            "{spec}: the first process's request goes first"
        );
        assert_throughput_within(spec, &r, &sim, 0.02);
    }
}

#[test]
fn a_log_fio_wrote_replays_every_request() {
    let log = include_str!("../../../examples/traces/fio-v3.iolog");
    let (r, seen) = replay(log, None, ReplayOptions::default(), "clook").unwrap();
    assert_eq!(seen.len(), 64);
    assert_eq!(r.bytes, 64 * 65536);
    assert_eq!(r.contexts.len(), 1);
}

#[test]
fn open_loop_keeps_the_traces_issue_times_scaled() {
    let trace = include_str!("../../../examples/traces/disksim.txt");
    for scale in [1.0, 2.5] {
        let opts = ReplayOptions {
            mode: Loop::Open,
            time_scale: scale,
            ..Default::default()
        };
        let (_, mut seen) = replay(trace, None, opts, "clook").unwrap();
        seen.sort_by_key(|s| s.0);
        let first = seen.first().unwrap().0;
        let last = seen.last().unwrap().0;
        assert_eq!(first, 0);
        assert_eq!(last, (18_773_901.0 * scale) as Nanos, "scale {scale}");
        assert_eq!(seen.len(), 8);
    }
}

#[test]
fn closed_loop_issues_after_the_predecessor_completes() {
    // One device, two reads 1 ms apart in the trace: the second waits for the first.
    let trace = "0.0 0 1000 8 1\n1.0 0 900000 8 1\n";
    let (_, seen) = replay(trace, None, ReplayOptions::default(), "clook").unwrap();
    assert_eq!(seen[0].0, 0);
    assert!(seen[1].0 >= 1_000_000, "{seen:?}");
}

#[test]
fn requests_in_flight_together_in_the_trace_stay_together() {
    // MSR: three requests of disk 0; the second is issued 0.1 ms after the first and before
    // the first completes (10 ms later), so it goes with it; the third after both completed,
    // with 1 ms of think time.
    let trace = "1000000,h,0,Read,1048576,4096,100000\n\
                 1001000,h,0,Read,900000000,4096,100000\n\
                 1211000,h,0,Read,4096,4096,1000\n";
    let (r, seen) = replay(trace, None, ReplayOptions::default(), "clook").unwrap();
    assert_eq!(seen[0].0, 0);
    assert_eq!(
        seen[1].0, 100_000,
        "issued 0.1 ms after the first, not after it completed"
    );
    assert!(seen[2].0 > seen[1].0 + 1_000_000);
    assert_eq!(r.contexts.len(), 1);
    assert_eq!(r.contexts[0].name, "disk 0");
}

#[test]
fn a_request_beyond_the_disk_is_an_error_naming_its_line_unless_scaled() {
    let trace = "0,1,4096,r,0.0\n0,99999999999,4096,r,0.1\n";
    let e = replay(trace, None, ReplayOptions::default(), "clook")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("t:2: the request at sector 99999999999"),
        "{e}"
    );
    assert!(e.contains("--lba-scale"), "{e}");
    let opts = ReplayOptions {
        lba_scale: Some(1e-4),
        ..Default::default()
    };
    let (_, seen) = replay(trace, None, opts, "clook").unwrap();
    assert_eq!(seen[1].1, 9_999_999);
}

#[test]
fn processes_are_contexts_and_a_malformed_line_ends_the_run_with_its_error() {
    let trace = include_str!("../../../examples/traces/perf-dd-ext4-loop.txt");
    let (r, seen) = replay(trace, None, ReplayOptions::default(), "as-aged-sptf").unwrap();
    assert_eq!(seen.len(), 88);
    assert!(r.contexts.iter().all(|c| c.name.starts_with("pid ")));
    assert!(r.contexts.len() >= 2);
    let half = trace[..trace.len() / 2].rfind('\n').unwrap() + 1;
    let line = trace[..half].lines().count() + 1;
    let bad = format!("{}garbage line\n", &trace[..half]);
    let e = replay(&bad, Some(Format::Perf), ReplayOptions::default(), "clook")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "t:{line}: perf trace: expected a `block:` tracepoint event"
        )),
        "{e}"
    );
}

/// Mutated samples replayed (cut short, bytes flipped), in both loops: a report or an error,
/// never a panic, whatever times, sectors and sizes the mutations make.
#[test]
fn mutated_traces_replay_or_fail_but_never_panic() {
    use rand::{RngExt, SeedableRng};
    let samples = [
        include_str!("../../../examples/traces/perf-dd-ext4-loop.txt"),
        include_str!("../../../examples/traces/blkparse.txt"),
        include_str!("../../../examples/traces/msr.csv"),
        include_str!("../../../examples/traces/spc.csv"),
        include_str!("../../../examples/traces/fio-v3.iolog"),
        include_str!("../../../examples/traces/disksim.txt"),
    ];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1919);
    for text in samples {
        for round in 0..40 {
            let mut m = text.as_bytes().to_vec();
            if round % 2 == 0 {
                m.truncate(rng.random_range(0..=m.len()));
            } else {
                for _ in 0..rng.random_range(1..6) {
                    let i = rng.random_range(0..m.len());
                    m[i] = if rng.random_range(0..2) == 0 {
                        rng.random_range(b'0'..=b'9')
                    } else {
                        rng.random()
                    };
                }
            }
            let text = String::from_utf8_lossy(&m);
            for mode in [Loop::Open, Loop::Closed] {
                let opts = ReplayOptions {
                    mode,
                    ..Default::default()
                };
                let _ = replay(&text, None, opts, "as-aged-sptf");
            }
        }
    }
}

/// A trace's think times were measured on a real clock, so a replay's anticipation waits the
/// real-time slack past their 95th percentile (`wait_slack=auto`), as the run that recorded
/// them did. Two sequential readers think 200 us, and every 25th time 900 us: by then the
/// last long one has decayed out of the histogram, whose 95th percentile is under 500 us, so
/// a wait of exactly that percentile ends before the request comes and the disk switches to
/// the other file; a wait a millisecond longer gets it.
#[test]
fn a_trace_replays_with_the_real_clocks_wait_slack() {
    let mut lines: Vec<(Nanos, String)> = Vec::new();
    for pid in 1..=2u64 {
        let mut t: Nanos = pid * 100_000;
        for i in 0..200u64 {
            let sector = (pid - 1) * 2_000_000 + i * 128;
            lines.push((t, format!("{pid} Q R {sector} + 128 [ctx{pid}]")));
            t += 3_000_000;
            lines.push((t, format!("0 C R {sector} + 128 [0]")));
            t += if i % 25 == 24 { 900_000 } else { 200_000 };
        }
    }
    lines.sort();
    let text: String = lines
        .iter()
        .enumerate()
        .map(|(n, (t, rest))| {
            format!(
                "254,0 0 {} {}.{:09} {rest}\n",
                n + 1,
                t / 1_000_000_000,
                t % 1_000_000_000
            )
        })
        .collect();
    let timeouts = |spec: &str| {
        let reader = TraceReader::open(text.as_bytes(), "t", Some(Format::Blkparse)).unwrap();
        let trace = Replay::new(
            Box::new(reader),
            "t",
            Format::Blkparse,
            ReplayOptions::default(),
        );
        let r = antsched_sim::replay(trace, disk_model(DISK).unwrap(), spec, 1, &|_| {}).unwrap();
        assert_eq!(r.contexts.iter().map(|c| c.ios).sum::<u64>(), 400, "{spec}");
        r.anticipation.timeouts
    };
    assert_eq!(timeouts("as-aged-sptf"), 0);
    assert!(timeouts("as-aged-sptf:wait_slack=0") >= 8);
}
