//! Per-context statistics of a mount, in the JSON of docs/architecture.md: what
//! `MOUNTPOINT/.antsched/stats.json` shows while mounted and `antsched mount` prints at the end.
//!
//! The object is a `runs[]` entry (`scheduler`, `disk`, `throughput_mb_s`, `utilization`,
//! `contexts[]` with `name`, `class`, `bytes`, `throughput_mb_s`, `share`, `latency_ms`
//! {`p50`, `p99`, `max`}, `anticipation` {`waits`, `hits`, `timeouts`}) with a few keys of the
//! mount's own: each context's `pid` and whether it has `exited`, and the mount's settings.
//!
//! Times: a request's latency runs from the moment the mount hands it to the runtime to the
//! moment the emulated disk completes it (the scheduler's queueing and waiting included, the
//! FUSE round trip not). Throughputs are over the *active window*, from the first request
//! issued to the last completed (a mount idles most of its life; dividing by its whole life
//! would say little): the mount's over its own window, each context's over its own.
//! `utilization` is the disk's busy time over the mount's window, and `share` a context's
//! fraction of the disk's busy time, as in the simulator.

use std::sync::Mutex;

use antsched_core::{ContextId, Nanos};
use antsched_workload::report::{AnticipationReport, ContextReport, LatencyRecorder, RunReport};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::contexts::ContextInfo;

/// What one context moved.
struct CtxIo {
    bytes: u64,
    ios: u64,
    latency_us: LatencyRecorder,
    first: Nanos,
    last: Nanos,
}

/// Per-context I/O accounting, fed by the read and write handlers.
#[derive(Default)]
pub struct IoStats {
    per: Mutex<FxHashMap<ContextId, CtxIo>>,
}

impl IoStats {
    /// One read or write of `bytes` for `ctx`, handed to the runtime at `issued` and
    /// completed at `done` (runtime clock).
    pub fn record(&self, ctx: ContextId, bytes: u64, issued: Nanos, done: Nanos) {
        let mut g = self.per.lock().unwrap_or_else(|e| e.into_inner());
        let c = g.entry(ctx).or_insert_with(|| CtxIo {
            bytes: 0,
            ios: 0,
            latency_us: LatencyRecorder::new(),
            first: issued,
            last: done,
        });
        c.bytes += bytes;
        c.ios += 1;
        c.latency_us.record((done.saturating_sub(issued)) / 1000);
        c.first = c.first.min(issued);
        c.last = c.last.max(done);
    }
}

/// One context in the report: the keys of a `runs[].contexts[]` entry, and the mount's own.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MountContext {
    #[serde(flatten)]
    pub report: ContextReport,
    /// The process (or thread) id, for `pid` and `tgid` contexts.
    pub pid: Option<u32>,
    pub uid: u32,
    /// Whether it has exited (and the scheduler was told).
    pub exited: bool,
}

/// A mount's statistics: a `runs[]` entry of docs/architecture.md, and the mount's settings.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MountReport {
    pub scheduler: String,
    pub disk: String,
    /// The active window, in seconds (first request issued to last completed).
    pub duration_s: f64,
    pub bytes: u64,
    pub throughput_mb_s: f64,
    pub utilization: f64,
    pub contexts: Vec<MountContext>,
    pub anticipation: AnticipationReport,
    /// What a context is: `pid`, `tgid` or `uid`.
    pub context_kind: String,
    /// `page-cache` (with the kernel's read-ahead) or `direct-io`.
    pub cache: String,
    /// The kernel's read-ahead in KiB, when the page cache is used.
    pub readahead_kib: Option<u32>,
    /// Whether FUSE's asynchronous direct I/O was offered (`--async-dio`).
    pub async_dio: bool,
    pub backing: String,
    pub mountpoint: String,
    /// Seconds since the mount started.
    pub mounted_s: f64,
    /// Contexts reported to the scheduler as exited.
    pub exits: u64,
    /// Requests whose real work took longer than the model (completed late), and the
    /// runtime's timer punctuality (microseconds late, 99th percentile).
    pub late_completions: u64,
    pub timer_overshoot_p99_us: f64,
}

/// The mount's fixed facts, for the report.
#[derive(Clone, Debug)]
pub struct Settings {
    pub context_kind: String,
    pub cache: String,
    pub readahead_kib: Option<u32>,
    pub async_dio: bool,
    pub backing: String,
    pub mountpoint: String,
}

impl IoStats {
    /// The report for the runtime statistics `rt` and the contexts seen.
    pub fn report(
        &self,
        rt: &antsched_io::Stats,
        contexts: &[(ContextId, ContextInfo)],
        exits: u64,
        settings: &Settings,
    ) -> MountReport {
        let g = self.per.lock().unwrap_or_else(|e| e.into_inner());
        let first = g.values().map(|c| c.first).min().unwrap_or(0);
        let last = g.values().map(|c| c.last).max().unwrap_or(0);
        let window = last.saturating_sub(first);
        let secs = |ns: Nanos| ns as f64 / 1e9;
        let mb_s = |bytes: u64, ns: Nanos| {
            if ns == 0 {
                0.0
            } else {
                bytes as f64 / 1e6 / secs(ns)
            }
        };
        let total_bytes: u64 = g.values().map(|c| c.bytes).sum();
        let total_busy: Nanos = rt.busy_by_context.iter().map(|(_, b)| *b).sum();
        let busy_of = |ctx: ContextId| {
            rt.busy_by_context
                .iter()
                .find(|(c, _)| *c == ctx)
                .map_or(0, |(_, b)| *b)
        };
        let contexts = contexts
            .iter()
            .filter_map(|(id, info)| {
                let c = g.get(id)?;
                Some(MountContext {
                    report: ContextReport {
                        name: info.name.clone(),
                        class: info.name.clone(),
                        bytes: c.bytes,
                        ios: c.ios,
                        throughput_mb_s: mb_s(c.bytes, c.last - c.first),
                        share: if total_busy == 0 {
                            0.0
                        } else {
                            busy_of(*id) as f64 / total_busy as f64
                        },
                        byte_share: if total_bytes == 0 {
                            0.0
                        } else {
                            c.bytes as f64 / total_bytes as f64
                        },
                        latency_ms: c.latency_us.summary(),
                        stalled_ms: None,
                    },
                    pid: info.pid,
                    uid: info.uid,
                    exited: info.exited,
                })
            })
            .collect();
        let a = rt.anticipation;
        MountReport {
            scheduler: rt.scheduler.clone(),
            disk: rt.device.clone(),
            duration_s: secs(window),
            bytes: total_bytes,
            throughput_mb_s: mb_s(total_bytes, window),
            utilization: if window == 0 {
                0.0
            } else {
                (rt.busy.min(window)) as f64 / window as f64
            },
            contexts,
            anticipation: a.into(),
            context_kind: settings.context_kind.clone(),
            cache: settings.cache.clone(),
            readahead_kib: settings.readahead_kib,
            async_dio: settings.async_dio,
            backing: settings.backing.clone(),
            mountpoint: settings.mountpoint.clone(),
            mounted_s: secs(rt.now),
            exits,
            late_completions: rt.late_completions,
            timer_overshoot_p99_us: rt.overshoot_us(0.99),
        }
    }
}

impl MountReport {
    /// The JSON of docs/architecture.md, `{"runs": [...]}` with this mount as its one run, and a final
    /// newline: what `stats.json` holds and `antsched mount --json` writes, so that a tool
    /// reading `antsched sim --json` reads these too.
    pub fn to_json(&self) -> Vec<u8> {
        let mut v =
            serde_json::to_vec_pretty(&serde_json::json!({ "runs": [self] })).unwrap_or_default();
        v.push(b'\n');
        v
    }

    /// The same figures as a simulator's [`RunReport`], for the tables the CLI prints.
    pub fn run_report(&self) -> RunReport {
        RunReport {
            scheduler: self.scheduler.clone(),
            disk: self.disk.clone(),
            seed: 0,
            duration_s: self.duration_s,
            bytes: self.bytes,
            throughput_mb_s: self.throughput_mb_s,
            utilization: self.utilization,
            contexts: self.contexts.iter().map(|c| c.report.clone()).collect(),
            anticipation: self.anticipation,
            sim: None,
        }
    }
}
