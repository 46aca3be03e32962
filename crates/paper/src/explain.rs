//! Why our figure differs from the paper's: each reason is worked out from the runs of this
//! invocation and the options in effect (disk, file spacing, estimator), and attached to the
//! row it explains ([`crate::Experiment::why`]) right where the row is made.
//!
//! A reason states figures of ours only as the runs give them (throughput, utilization, disk
//! time per request, anticipation waits), and the paper's only as the published table gives
//! them (passed in from `published.rs` and `peers.rs`), so that a report made with another
//! disk, seed, spacing or estimator says what that report's runs did. What the paper leaves
//! unsaid (where its files lay) and how a mechanism works are stated without figures. A
//! reason whose runs are not in the plan (`--quick` sweeps are sparser) is not given, and the
//! report falls back on [`explain`], which carries no figure.

use antsched_core::stats::{StatsConfig, ThinkTimeHistogram};
use antsched_core::{PositioningCurve, MS, US};
use serde::Serialize;

use crate::published::Runs;
use crate::workloads::{
    CasScale, PaperOptions, ANTICIPATORY, BASELINE, FILE_SIZE, ISSUE_DELAY_US, SPACING_SWEEP,
    TREE_DIR_FILES,
};
use antsched_workload::report::RunReport;

/// Files in the Linux 2.6.9 source tree that the Linux/CAS paper's `find` walked: a fact
/// about the paper's setup (see [`crate::workloads::modelling_notes`]), used to turn its
/// seconds into seconds per file.
pub const LINUX_TREE_FILES: f64 = 17_000.0;

/// What the SPTF rule of section 3.3 prices a wait at for two sequential readers whose files
/// lie `spacing` apart, by the suite's positioning estimator, and so the think times past which
/// it stops waiting. The rule waits for the reader whose request just completed while
/// `benefit = positioning(candidate) - expected positioning` exceeds `cost = median think
/// time` (at the completion, nothing has elapsed yet). The candidate is the other reader's
/// request, a switch between the files; the expected positioning is the reader's decayed
/// average, which starts at zero and takes each request's estimate with weight `1 - d` (`d`
/// the statistics' decay, 0.74 by default). A reader whose request follows its own costs
/// nearly nothing, one that follows the other's costs a switch, so what waiting saves depends
/// on how many switches the reader's average has taken:
///
/// - `one_switch_ms`: the reader the disk served first, from where the head rests, then after
///   the other's first request. Its first decision with a think time to go by comes here; if
///   the median think time is past this benefit, neither reader is waited for, every request
///   follows a switch, each reader's average only rises, and anticipation has ended.
/// - `two_switches_ms`: the reader served second at the start, whose next request then waits
///   until Aged-SPTF's bound forces it while the other streams: two switches. Past this
///   benefit it is not waited for again; in the symmetric sweep one reader streams while the
///   other is served once per age bound, and in the asymmetric one that reader is the slow
///   one, so the quick one streams and throughput climbs back: the dip is the last think time
///   below it.
///
/// Only for an estimator that is a curve of distance (`calibrated`, or a CURVE.json): the
/// `exact` estimator's answer depends on where the platter is, and `seek` has no time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WaitThresholds {
    /// The curve's positioning time for a switch between the files, ms.
    pub switch_ms: f64,
    /// What waiting saves for a reader whose average has taken one switch, ms.
    pub one_switch_ms: f64,
    /// What waiting saves for a reader whose average has taken two switches, ms.
    pub two_switches_ms: f64,
}

/// The positioning curve the suite's schedulers price requests with, if it is one.
fn curve(o: &PaperOptions) -> Option<std::sync::Arc<PositioningCurve>> {
    if o.estimator == "calibrated" {
        let disk = antsched_sim::disk_model(&o.disk).ok()?;
        Some(antsched_sim::device::calibrate(&*disk))
    } else if o.estimator.ends_with(".json") {
        PositioningCurve::load(std::path::Path::new(&o.estimator))
            .ok()
            .map(std::sync::Arc::new)
    } else {
        None
    }
}

/// [`WaitThresholds`] for files `spacing` bytes apart under the options `o`.
pub fn wait_thresholds(o: &PaperOptions, spacing: u64) -> Option<WaitThresholds> {
    let c = curve(o)?;
    let d = StatsConfig::default().average_decay;
    let ms = |n: u64| n as f64 / MS as f64;
    let switch = ms(c.time_at(spacing / 512));
    let at_head = ms(c.time_at(0));
    Some(WaitThresholds {
        switch_ms: switch,
        one_switch_ms: switch - ((1.0 - d) * switch + d * (1.0 - d) * at_head),
        two_switches_ms: switch - ((1.0 - d) * switch + d * (1.0 - d) * switch),
    })
}

/// The least [`WaitThresholds`] any distance between two of the suite's files allows: the
/// curve's least time from the file size on.
pub fn least_wait_thresholds(o: &PaperOptions) -> Option<(u64, WaitThresholds)> {
    let c = curve(o)?;
    let from = FILE_SIZE / 512;
    let best = c
        .points
        .iter()
        .map(|p| p.distance)
        .filter(|&x| x >= from)
        .chain([from])
        .min_by_key(|&x| (c.time_at(x), x))?;
    Some((best * 512, wait_thresholds(o, best * 512)?))
}

/// The median of the think-time histogram (the rule's cost) of a reader that pauses `t_ms`
/// after every request: the pause and the issue delay, read off the histogram's buckets.
pub fn median_think_ms(t_ms: f64) -> f64 {
    let cfg = StatsConfig::default();
    let mut h = ThinkTimeHistogram::new(&cfg);
    let think = (t_ms * MS as f64).round() as u64 + ISSUE_DELAY_US * US;
    h.record(think.min(cfg.think_cap()), &cfg);
    h.median(&cfg).map_or(f64::NAN, |m| m as f64 / MS as f64)
}

/// The first think time of `xs` at which the rule no longer waits for a reader whose wait
/// saves `benefit_ms`: its median think time is no longer below it.
pub fn first_not_waited(xs: &[f64], benefit_ms: f64) -> Option<f64> {
    xs.iter()
        .copied()
        .find(|&t| median_think_ms(t) >= benefit_ms)
}

/// The last think time of `xs` at which the rule still waits for such a reader.
pub fn last_waited(xs: &[f64], benefit_ms: f64) -> Option<f64> {
    xs.iter()
        .copied()
        .rfind(|&t| median_think_ms(t) < benefit_ms)
}

/// What the reasons are worked out from: the suite's runs and the options they ran with.
pub(super) struct Ctx<'a> {
    pub r: &'a Runs<'a>,
    pub o: &'a PaperOptions,
}

/// One think-time sweep's runs, each a (group, variant): the symmetric and the asymmetric
/// readers, and the distance between their files.
pub(super) struct Sweep {
    sym: (&'static str, String),
    asym: (&'static str, String),
    spacing: u64,
}

impl Sweep {
    /// The suite's own fig5-symmetric and fig6-asymmetric, at the options' spacing.
    fn default_of(o: &PaperOptions) -> Self {
        Self {
            sym: ("fig5-symmetric", String::new()),
            asym: ("fig6-asymmetric", String::new()),
            spacing: o.file_spacing,
        }
    }

    /// The spacing sweep at `mib`.
    fn at(mib: u64) -> Self {
        Self {
            sym: (SPACING_SWEEP, format!("symmetric/{mib}")),
            asym: (SPACING_SWEEP, format!("asymmetric/{mib}")),
            spacing: mib << 20,
        }
    }
}

/// Application I/Os of a run (the write-back daemon's are not an application's).
fn ios(x: &RunReport) -> u64 {
    x.contexts
        .iter()
        .filter(|c| c.name != "writeback")
        .map(|c| c.ios)
        .sum()
}

/// Disk time per application request, ms: what a request cost the disk on average (a switch
/// between files shows as a seek in it; a hit in the drive's cache as its absence).
pub(super) fn service_ms(x: &RunReport) -> f64 {
    x.utilization * x.duration_s * 1e3 / ios(x).max(1) as f64
}

/// A finite value or nothing: a reason is not given from a missing run.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

impl<'a> Ctx<'a> {
    fn run(&self, group: &str, variant: &str, x: Option<f64>, s: &str) -> Option<&'a RunReport> {
        self.r.find(group, variant, x, s)
    }

    fn mb(&self, group: &str, variant: &str, x: Option<f64>, s: &str) -> Option<f64> {
        self.run(group, variant, x, s).map(|r| r.throughput_mb_s)
    }

    /// " at least" where a timed run was stopped at its cap before its job finished: its time
    /// is then a lower bound.
    fn at_least(&self, group: &str, s: &str) -> &'static str {
        let capped = self.r.0.iter().any(|x| {
            x.plan.group == group
                && x.plan.label == s
                && x.plan
                    .cap_s
                    .is_some_and(|c| x.report.duration_s >= c - 1e-6)
        });
        if capped {
            " at least"
        } else {
            ""
        }
    }

    /// The readers' file spacing, in MiB, as the option gives it.
    fn spacing(&self) -> String {
        format!("{} MiB", self.o.file_spacing >> 20)
    }

    /// What one sequential reader alone gets from the paper's disk model (BFQ's one-reader run
    /// under deadline, which has nothing to schedule): the disk's streaming rate for the
    /// Linux/CAS tables.
    fn stream_mb(&self) -> Option<f64> {
        self.mb("bfq-shares", "1-reader", None, "deadline")
    }

    /// Anticipation's waits in a run, as a phrase.
    fn waits(x: &RunReport) -> String {
        let a = &x.anticipation;
        format!(
            "{} waits ({} hits, {} timeouts, {:.0} ms idle on purpose in {:.1} s)",
            a.waits, a.hits, a.timeouts, a.waited_ms, x.duration_s
        )
    }

    // Section 4.1.

    /// `alter/mmap gain`: anticipation against the paper's "half the disk bandwidth", and the
    /// baseline that the gain divides by. `paper_base` is the paper's baseline MB/s.
    pub fn alter_mmap_gain(&self, paper_gain: f64, paper_base: f64) -> Option<String> {
        let id = "fig4-access-patterns";
        let a = self.mb(id, "alter/mmap", None, ANTICIPATORY)?;
        let b = self.mb(id, "alter/mmap", None, BASELINE)?;
        let full = self.mb(id, "seq/mmap", None, ANTICIPATORY)?;
        let cmp = if a / b > paper_gain {
            "larger"
        } else {
            "smaller"
        };
        Some(format!(
            "as-aged-sptf reaches {a:.1} MB/s here, {} of the {full:.1} MB/s two anticipated \
             sequential readers get (the paper: half the disk bandwidth); the ratio is {cmp} because \
             our baseline, aged-sptf, alternates at {b:.1} MB/s with the files {} apart, against the paper's \
             {paper_base} MB/s",
            pct(a / full),
            self.spacing()
        ))
    }

    /// A row of the baseline's MB/s, or of a gain over it, where the readers alternate: the
    /// baseline's rate is set by the cost of a switch between the files, and so by where they
    /// lie, which the paper does not say.
    pub fn baseline(&self, group: &str, variant: &str, x: Option<f64>) -> Option<String> {
        let b = self.run(group, variant, x, BASELINE)?;
        let a = self.run(group, variant, x, ANTICIPATORY)?;
        Some(format!(
            "aged-sptf alternates between the readers' files, {} apart on the `{}` model: {:.1} \
             MB/s at {:.1} ms of disk time per request, where as-aged-sptf, serving one reader at a \
             time, gets {:.1} MB/s at {:.1} ms per request; the paper does not say where its files lay, and a switch \
             costs what their distance does",
            self.spacing(),
            b.disk,
            b.throughput_mb_s,
            service_ms(b),
            a.throughput_mb_s,
            service_ms(a)
        ))
    }

    /// A row of a rate the disk sets (a reader served without switches): the disk model's.
    pub fn disk_rate(&self, group: &str, variant: &str, s: &str) -> Option<String> {
        let x = self.run(group, variant, None, s)?;
        Some(format!(
            "{s} gets {:.1} MB/s from the `{}` model here, the disk busy {} of the time: the rate \
             is the disk model's, and the paper's is its IBM Deskstar 34GXP's",
            x.throughput_mb_s,
            x.disk,
            pct(x.utilization)
        ))
    }

    /// `random/... gain`: how much a switch between the files costs over a random request
    /// within one.
    pub fn random_gain(&self, variant: &str) -> Option<String> {
        let id = "fig4-access-patterns";
        let b = self.run(id, variant, None, BASELINE)?;
        let a = self.run(id, variant, None, ANTICIPATORY)?;
        Some(format!(
            "the gain within random files depends on how much farther apart the two files are than \
             the requests within one; the paper does not say where its files lay. With the files {} \
             apart, aged-sptf's requests take {:.1} ms of disk time each here and as-aged-sptf's \
             {:.1} ms, after {}",
            self.spacing(),
            service_ms(b),
            service_ms(a),
            Self::waits(a)
        ))
    }

    // Section 4.8.

    /// `seq/read bandwidth vs the 7,200 rpm disk`: the two disk models' streaming rates.
    pub fn fast_disk_bandwidth(&self, paper_ratio: f64) -> Option<String> {
        let fast = self.mb("fig13-fast-disk", "seq/read", None, BASELINE)?;
        let slow = self.mb("fig4-access-patterns", "seq/read", None, BASELINE)?;
        Some(format!(
            "two sequential readers get {fast:.1} MB/s from the `{}` model and {slow:.1} MB/s from \
             the `{}` model under aged-sptf, {:.2} times as much; the paper's {} more is what its \
             whole system delivered (file system and I/O path included), which the models do not \
             include",
            self.o.fast_disk,
            self.o.disk,
            fast / slow,
            pct(paper_ratio - 1.0)
        ))
    }

    /// `seq/mmap gain vs the 7,200 rpm gain`: the two gains against the paper's.
    pub fn gain_ratio(&self, paper_fast: f64, paper_slow: f64) -> Option<String> {
        let g = |id| {
            Some(
                self.mb(id, "seq/mmap", None, ANTICIPATORY)?
                    / self.mb(id, "seq/mmap", None, BASELINE)?,
            )
        };
        let (fast, slow) = (g("fig13-fast-disk")?, g("fig4-access-patterns")?);
        let order = if fast > slow {
            "the fast disk's gain is the larger, as in the paper"
        } else {
            "the fast disk's gain is not the larger, unlike the paper's"
        };
        Some(format!(
            "the gains of as-aged-sptf over aged-sptf are {fast:.2} against the paper's {paper_fast} on the `{}` model and {slow:.2} \
             against {paper_slow} on the `{}` model; {order}, and their ratio compounds the two \
             differences",
            self.o.fast_disk, self.o.disk
        ))
    }

    /// `seq/mmap gain` on the fast disk: its baseline, and how much of that disk the files span.
    pub fn fast_disk_gain(&self) -> Option<String> {
        let b = self.mb("fig13-fast-disk", "seq/mmap", None, BASELINE)?;
        let slow = self.mb("fig4-access-patterns", "seq/mmap", None, BASELINE)?;
        let capacity = antsched_sim::disk_model(&self.o.fast_disk)
            .ok()?
            .capacity_sectors() as f64
            * 512.0;
        Some(format!(
            "the baseline, aged-sptf, alternates between the files at {b:.1} MB/s on the `{}` model ({slow:.1} \
             MB/s on the `{}` model), with the files {} apart, {} of this disk's {:.0} MiB; the \
             paper's fast disk delivered \"nearly the same low throughput\" as its IDE disk",
            self.o.fast_disk,
            self.o.disk,
            self.spacing(),
            pct(self.o.file_spacing as f64 / capacity),
            capacity / 1048576.0
        ))
    }

    // Section 4.2.

    /// The cost of a switch between the files, as the baseline pays it with no think time.
    fn switch_cost(&self) -> Option<f64> {
        self.run("fig5-symmetric", "", Some(0.0), BASELINE)
            .map(service_ms)
    }

    /// The cost of a switch as a phrase: the baseline's disk time per request with no think
    /// time, beside anticipation's, which streams.
    fn switch_phrase(&self) -> Option<String> {
        let a = self.run("fig5-symmetric", "", Some(0.0), ANTICIPATORY)?;
        Some(format!(
            "with the files {} apart aged-sptf spends {:.1} ms of disk time per request at t=0, \
             where it switches between the files, against as-aged-sptf's {:.1} ms, which streams",
            self.spacing(),
            self.switch_cost()?,
            service_ms(a)
        ))
    }

    /// `gain at t=8ms`: where the heuristic stops waiting.
    pub fn symmetric_gain_at(&self, t: f64, end: f64) -> Option<String> {
        let a = self.run("fig5-symmetric", "", Some(t), ANTICIPATORY)?;
        let b = self.run("fig5-symmetric", "", Some(t), BASELINE)?;
        let end = finite(end).map_or("does not end within the sweep".to_string(), |e| {
            format!("ends at {e} ms here")
        });
        let mut s = format!(
            "at t={t} ms as-aged-sptf made {} and gains {:.2}; the gain {end}. {}; {}",
            Self::waits(a),
            a.throughput_mb_s / b.throughput_mb_s,
            self.end_phrase(&Sweep::default_of(self.o))?,
            self.switch_phrase()?
        );
        if let Some(one) = self.one_reader(a) {
            s += &format!(". {one}");
        }
        Some(s)
    }

    /// `t where the gain ends`: the sweep around the end.
    pub fn symmetric_end(&self, end: f64, within: f64) -> Option<String> {
        let end = finite(end)?;
        Some(format!(
            "the gain is at most {within:.2} from t={end} ms on. {}; {}. `{SPACING_SWEEP}` \
             runs this with the files at other distances",
            self.end_phrase(&Sweep::default_of(self.o))?,
            self.switch_phrase()?
        ))
    }

    /// `gain at t=14ms`: the disk idles, the drive's cache serves the baseline, and
    /// anticipation still waits.
    pub fn symmetric_long_think(&self, t: f64) -> Option<String> {
        let b0 = self.run("fig5-symmetric", "", Some(0.0), BASELINE)?;
        let b = self.run("fig5-symmetric", "", Some(t), BASELINE)?;
        let a = self.run("fig5-symmetric", "", Some(t), ANTICIPATORY)?;
        Some(format!(
            "at t={t} ms the disk idles while both readers think: aged-sptf's utilization is {} \
             (at t=0: {}) and its disk time per request {:.1} ms (at t=0: {:.1} ms), as the \
             drive's read-ahead serves the alternating readers from its cache. as-aged-sptf still made {}: when the other reader's request arrives \
             while the last one is still thinking, the elapsed time lowers the cost side of the rule; \
             the `{}` estimator prices the switch without the drive's cache",
            pct(b.utilization),
            pct(b0.utilization),
            service_ms(b),
            service_ms(b0),
            Self::waits(a),
            self.o.estimator
        ))
    }

    /// `t of the as-aged-sptf dip`: anticipation's waits at the dip.
    pub fn asymmetric_dip(&self, t: f64) -> Option<String> {
        let a = self.run("fig6-asymmetric", "", Some(t), ANTICIPATORY)?;
        Some(format!(
            "the dip is at t={t} ms here, where as-aged-sptf made {}. {}. `{SPACING_SWEEP}` runs \
             this with the files at other distances",
            Self::waits(a),
            self.dip_phrase(&Sweep::default_of(self.o), t)?
        ))
    }

    /// Where the readers of a think-time sweep stop being waited for, as the rule prices it
    /// (for a curve estimator) and as the runs show it: the think time from which as-aged-sptf
    /// made no wait at all.
    fn end_phrase(&self, sw: &Sweep) -> Option<String> {
        let xs = self.r.xs(sw.sym.0, &sw.sym.1);
        let stop = xs.iter().copied().find(|&x| {
            self.run(sw.sym.0, &sw.sym.1, Some(x), ANTICIPATORY)
                .is_some_and(|a| a.anticipation.waits == 0)
        });
        let runs = match stop {
            Some(x) => format!("as-aged-sptf makes no wait from t={x} ms"),
            None => "as-aged-sptf waits at every think time of the sweep".to_string(),
        };
        let spacing = sw.spacing >> 20;
        Some(match wait_thresholds(self.o, sw.spacing) {
            Some(w) => {
                let at = first_not_waited(&xs, w.one_switch_ms).map_or(
                    "which no think time of the sweep reaches".to_string(),
                    |x| format!("which the median think time passes from t={x} ms"),
                );
                format!(
                    "The rule waits while the median think time is below what a wait saves: the \
                     `{}` curve's cost of a switch between files {spacing} MiB apart, {:.2} ms, less \
                     the reader's decayed average positioning, which starts at zero; once that \
                     average has taken one switch a wait saves {:.2} ms, {at}, and from there \
                     neither reader is waited for again. The runs: {runs}",
                    self.o.estimator, w.switch_ms, w.one_switch_ms
                )
            }
            None => format!(
                "The rule waits while the median think time is below the `{}` estimator's \
                 cost of a switch between files {spacing} MiB apart less the reader's expected \
                 positioning; {runs}",
                self.o.estimator
            ),
        })
    }

    /// Where the slow reader of an asymmetric sweep stops being waited for.
    fn dip_phrase(&self, sw: &Sweep, dip: f64) -> Option<String> {
        let xs = self.r.xs(sw.asym.0, &sw.asym.1);
        let spacing = sw.spacing >> 20;
        let after = xs.iter().copied().find(|&x| x > dip);
        let slow = after
            .and_then(|x| self.run(sw.asym.0, &sw.asym.1, Some(x), ANTICIPATORY))
            .and_then(|a| {
                let q = a.contexts.get(1)?;
                Some(format!(
                    "; past it (t={} ms) the slow reader gets {:.2} MB/s and the quick one {:.1}",
                    after?,
                    q.throughput_mb_s,
                    a.contexts.first()?.throughput_mb_s
                ))
            })
            .unwrap_or_default();
        Some(match wait_thresholds(self.o, sw.spacing) {
            Some(w) => {
                let at = last_waited(&xs, w.two_switches_ms)
                    .map_or("at no think time of the sweep".to_string(), |x| {
                        format!("up to t={x} ms")
                    });
                format!(
                    "The slow reader, served after the quick one at the start and then only when \
                     Aged-SPTF's bound forces it, has taken two switches between files {spacing} \
                     MiB apart into its average positioning when the rule first asks about it with \
                     a think time to go by: by the `{}` curve a wait then saves about {:.1} ms \
                     (one switch: {:.2} ms; the second switch comes from a little nearer, after \
                     the other reader's run), and the rule waits for it {at}{slow}",
                    self.o.estimator, w.two_switches_ms, w.one_switch_ms
                )
            }
            None => format!(
                "The slow reader stops being waited for where its think time passes what the `{}` \
                 estimator says a wait saves with files {spacing} MiB apart{slow}",
                self.o.estimator
            ),
        })
    }

    /// Where one reader of a two-reader run gets the disk and the other waits for the age
    /// bound: the phrase, if so.
    fn one_reader(&self, a: &RunReport) -> Option<String> {
        let (p, q) = (a.contexts.first()?, a.contexts.get(1)?);
        let (hi, lo) = if p.throughput_mb_s >= q.throughput_mb_s {
            (p, q)
        } else {
            (q, p)
        };
        (lo.throughput_mb_s < 0.1 * hi.throughput_mb_s).then(|| {
            format!(
                "Here reader {} gets {:.2} MB/s and reader {} {:.2}: the reader served second at \
                 the start has taken two switches into its average, is no longer waited for, \
                 and is served only when Aged-SPTF's bound forces it",
                hi.name, hi.throughput_mb_s, lo.name, lo.throughput_mb_s
            )
        })
    }

    // The spacing sweep of sections 4.2.1 and 4.2.2.

    /// `N MiB apart: t where the gain ends`: where waiting stops at this distance, and the
    /// baseline the gain divides by.
    pub fn spacing_end(&self, mib: u64, end: f64) -> Option<String> {
        let sw = Sweep::at(mib);
        let mut s = format!("the gain ends at t={end} ms. {}", self.end_phrase(&sw)?);
        let b = self.run(sw.sym.0, &sw.sym.1, Some(0.0), BASELINE)?;
        let a = self.run(sw.sym.0, &sw.sym.1, Some(0.0), ANTICIPATORY)?;
        s += &format!(
            ". At t=0 aged-sptf alternates at {:.2} MB/s, {:.1} ms of disk time per request, \
             against as-aged-sptf's {:.1} ms, which streams",
            b.throughput_mb_s,
            service_ms(b),
            service_ms(a)
        );
        Some(s)
    }

    /// `N MiB apart: t of the as-aged-sptf dip`.
    pub fn spacing_dip(&self, mib: u64, dip: f64) -> Option<String> {
        let sw = Sweep::at(mib);
        let a = self.run(sw.asym.0, &sw.asym.1, Some(dip), ANTICIPATORY)?;
        Some(format!(
            "the dip is at t={dip} ms, {:.1} MB/s, where as-aged-sptf made {}. {}",
            a.throughput_mb_s,
            Self::waits(a),
            self.dip_phrase(&sw, dip)?
        ))
    }

    /// `N MiB apart: aged-sptf MB/s at t=0`: what a switch costs at this distance.
    pub fn spacing_base(&self, mib: u64) -> Option<String> {
        let sw = Sweep::at(mib);
        let b = self.run(sw.sym.0, &sw.sym.1, Some(0.0), BASELINE)?;
        let a = self.run(sw.sym.0, &sw.sym.1, Some(0.0), ANTICIPATORY)?;
        Some(format!(
            "aged-sptf alternates between files {mib} MiB apart at {:.2} MB/s, {:.1} ms of disk \
             time per request against as-aged-sptf's {:.1} ms, which streams: the difference is \
             the switch. What a switch costs is the seek and then the wait for the other file's \
             next block to come under the head; with both readers advancing in step that wait is \
             nearly the same at every switch, so some distances are cheap and others dear, as \
             the sweep's rows show. The release measured its baseline on files whose places it \
             does not give",
            b.throughput_mb_s,
            service_ms(b),
            service_ms(a)
        ))
    }

    /// `N MiB apart: random/mmap gain`: the gain that grows with the distance.
    pub fn spacing_random(&self, mib: u64) -> Option<String> {
        let v = format!("random/{mib}");
        let b = self.run(SPACING_SWEEP, &v, None, BASELINE)?;
        let a = self.run(SPACING_SWEEP, &v, None, ANTICIPATORY)?;
        Some(format!(
            "random readers gain only what not switching between their files saves over a \
             random request within one, and that grows with the files' distance: with them \
             {mib} MiB apart aged-sptf's requests take {:.1} ms of disk time each, \
             as-aged-sptf's {:.1} ms, after {}",
            service_ms(b),
            service_ms(a),
            Self::waits(a)
        ))
    }

    /// What the spacing sweep shows, for the report (under the experiment's table): at which
    /// distances the paper's end, dip, baseline and random gain come out, the end and the dip
    /// within `tol_ms` of the paper's, the others within a fraction `tol`. `rows` are the
    /// sweep's (spacing MiB, end, dip, baseline MB/s, random gain); `paper` the published (end,
    /// dip, baseline, random gain).
    pub fn spacing_summary(
        &self,
        rows: &[(u64, f64, f64, f64, f64)],
        paper: (f64, f64, f64, f64),
        tol_ms: f64,
        tol: f64,
    ) -> Option<String> {
        type R = (u64, f64, f64, f64, f64);
        if rows.is_empty() {
            return None;
        }
        let (p_end, p_dip, p_base, p_random) = paper;
        let list = |f: &dyn Fn(&R) -> bool| -> Vec<&R> { rows.iter().filter(|r| f(r)).collect() };
        let mibs = |v: &[&R]| -> String {
            match v {
                [] => "at none of the sweep's distances".to_string(),
                _ => format!(
                    "with the files {} MiB apart",
                    v.iter()
                        .map(|r| r.0.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        };
        let end_ok = |r: &R| (r.1 - p_end).abs() <= tol_ms;
        let dip_ok = |r: &R| (r.2 - p_dip).abs() <= tol_ms;
        let base_ok = |r: &R| (r.3 / p_base - 1.0).abs() <= tol;
        let random_ok = |r: &R| (r.4 / p_random - 1.0).abs() <= tol;
        let both = list(&|r| end_ok(r) && dip_ok(r));
        let mut s = format!(
            "The symmetric gain ends within {tol_ms} ms of the paper's {p_end} ms {}, and the \
             asymmetric dip falls within {tol_ms} ms of its {p_dip} ms {}; both hold {}.",
            mibs(&list(&end_ok)),
            mibs(&list(&dip_ok)),
            mibs(&both),
        );
        if !both.is_empty() {
            s += &format!(
                " There aged-sptf alternates at t=0 at {} (the release: {p_base} MB/s), and \
                 section 4.1's random readers gain {} (the paper: {p_random}).",
                both.iter()
                    .map(|r| format!("{:.2} MB/s ({} MiB)", r.3, r.0))
                    .collect::<Vec<_>>()
                    .join(", "),
                both.iter()
                    .map(|r| format!("{:.2} ({} MiB)", r.4, r.0))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
        s += &format!(
            " The random readers' gain comes within {:.0}% of the paper's {}: it is what not \
             switching between the files saves over a random request within one, and it needs \
             them far apart, while the think time past which waiting stops grows with the cost \
             of the same switch. The end, the dip, the baseline and the random gain all come out \
             as the paper's (the baseline and the gain within {:.0}%) {}.",
            tol * 100.0,
            mibs(&list(&random_ok)),
            tol * 100.0,
            mibs(&list(&|r| end_ok(r)
                && dip_ok(r)
                && base_ok(r)
                && random_ok(r))),
        );
        if let Some((least, w)) = least_wait_thresholds(self.o) {
            let xs = self
                .r
                .xs(SPACING_SWEEP, &format!("asymmetric/{}", rows[0].0));
            let dip = last_waited(&xs, w.two_switches_ms)
                .map_or("at no think time of the sweep".to_string(), |x| {
                    format!("at t={x} ms or later")
                });
            s += &format!(
                " No distance puts the dip earlier than the curve allows: the `{}` curve prices \
                 a switch between files {} MiB long, however far apart, at no less than {:.2} ms \
                 (at {} MiB), so a reader whose average has taken two switches saves at least \
                 about {:.1} ms by a wait, and the dip falls {dip}.",
                self.o.estimator,
                FILE_SIZE >> 20,
                w.switch_ms,
                least >> 20,
                w.two_switches_ms
            );
        }
        s += " The rule prices positioning only: the readers' request size changes how much a \
              wait gains, not the think time where waiting stops.";
        Some(s)
    }

    /// `as/original at n=`: the adversary's runs, its requests arriving together.
    pub fn adversary(&self, n: f64) -> Option<String> {
        let b = self.run("fig7-adversary", "", Some(n), BASELINE)?;
        let a = self.run("fig7-adversary", "", Some(n), ANTICIPATORY)?;
        let mut s = format!(
            "aged-sptf is busy {} of the time at {:.1} MB/s; as-aged-sptf gets {:.1} MB/s after {}",
            pct(b.utilization),
            b.throughput_mb_s,
            a.throughput_mb_s,
            Self::waits(a)
        );
        if a.anticipation.hits == 0 && a.anticipation.timeouts > 0 {
            s += ". Each reader's requests arrive together, so neither scheduler seeks within a \
                  burst, and every wait timed out";
            if a.throughput_mb_s < b.throughput_mb_s {
                s += ": after each burst anticipation holds the disk idle for a reader that is \
                      pausing, and gains nothing; the loss is that idle time against the time the \
                      bursts take on this disk";
            } else {
                s += &format!(
                    ", yet as-aged-sptf is not behind: a burst takes {:.1} ms of disk time under \
                     it and {:.1} ms under aged-sptf, as the drive reads ahead into its cache \
                     while the disk idles through a timeout",
                    service_ms(a),
                    service_ms(b)
                );
            }
        }
        Some(s)
    }

    /// `as/original at n=` with the adversary's requests issued one at a time: why
    /// anticipation gains there, set against the paper's reading.
    pub fn adversary_one_at_a_time(&self, n: f64) -> Option<String> {
        let g = "sec4.2.4-one-at-a-time";
        let b = self.run(g, "", Some(n), BASELINE)?;
        let a = self.run(g, "", Some(n), ANTICIPATORY)?;
        let tb = self.run("fig7-adversary", "", Some(n), BASELINE)?;
        let ta = self.run("fig7-adversary", "", Some(n), ANTICIPATORY)?;
        let w = &a.anticipation;
        let mut s = format!(
            "one request at a time, as-aged-sptf gets {:.1} MB/s against aged-sptf's {:.1} after {}; \
             its requests take {:.1} ms of disk time each, aged-sptf's {:.1} ms",
            a.throughput_mb_s,
            b.throughput_mb_s,
            Self::waits(a),
            service_ms(a),
            service_ms(b)
        );
        let answered = w.hits as f64 / w.timeouts.max(1) as f64;
        if a.throughput_mb_s <= b.throughput_mb_s {
            s += ". Here the time held idle on purpose costs more than anticipation saves";
        } else if w.hits == 0 {
            s += ". Every wait timed out, as the paper's adversary intends: the heuristic waited \
                  only when the reader was about to pause. The gain is then the drive's, not \
                  anticipation's: while the disk idles through a timeout the drive reads ahead \
                  into its cache, and the readers' next requests are served from it";
        } else if answered >= 1.0 {
            s += &format!(
                ". The heuristic waits within each burst and the reader answers, {answered:.1} \
                 answered waits per timeout: it learns the rapid requests' think time and serves \
                 a burst without seeking, which pays for the one timeout after it"
            );
        } else {
            s += ". Each answered wait serves the reader's next request without a seek, and \
                  while the disk idles through a timed-out one the drive reads ahead into its \
                  cache";
        }
        s += &format!(
            ". With the requests arriving together (fig7-adversary) as-aged-sptf gets {:.1} MB/s \
             against aged-sptf's {:.1}: there it has nothing to gain within a burst, which both \
             serve back to back",
            ta.throughput_mb_s, tb.throughput_mb_s
        );
        Some(s)
    }

    /// `largest difference between granularities`: ours against the paper's bound.
    pub fn timer(&self, ours: f64, paper: f64) -> Option<String> {
        let ours = finite(ours)?;
        let side = if ours <= paper { "within" } else { "beyond" };
        Some(format!(
            "the paper's figure is an upper bound; ours, {:.1}%, lies {side} it",
            ours * 100.0
        ))
    }

    // Section 4.7.

    /// `stride-relaxed MB/s`: without anticipation, the readers alternate.
    pub fn stride_relaxed_mb(&self, release: f64) -> Option<String> {
        let s = self.mb("fig12-stride-1-2", "", None, "stride-relaxed")?;
        let b = self.mb("fig4-access-patterns", "seq/mmap", None, BASELINE)?;
        Some(format!(
            "without anticipation the readers alternate between their files ({} apart): \
             {s:.1} MB/s here, against aged-sptf's {b:.1} MB/s on the same two readers unweighted \
             (fig4 seq/mmap); the release measured {release} MB/s on a file layout it does not give",
            self.spacing()
        ))
    }

    /// `as-stride-combo` share and MB/s: the release's one run with anticipation.
    pub fn stride_combo(&self, release_mb: f64) -> Option<String> {
        let c = self.run("fig12-stride-1-2", "", None, "as-stride-combo")?;
        let a = self.mb("fig4-access-patterns", "seq/mmap", None, ANTICIPATORY)?;
        let (p, q) = (c.contexts.first()?.share, c.contexts.get(1)?.share);
        Some(format!(
            "as-stride-combo gives q/p {:.2} at {:.1} MB/s here, {} of as-aged-sptf's {a:.1} on the \
             same readers unweighted, after {}: with sequential readers the combination heuristic \
             waits for each class while it is within tau of the smallest clock, so each class gets \
             long runs. The release's run ({release_mb} MB/s) came from a configuration \
             (PROP_RELAX_THRESH=100, unit unrecorded) and workload its README does not fully give",
            q / p,
            c.throughput_mb_s,
            pct(c.throughput_mb_s / a),
            Self::waits(c)
        ))
    }

    // The Linux/CAS paper's tables.

    /// Table 1, a scheduler's reader time: how long the file alone takes on this disk model.
    pub fn cas1_time(&self, s: &str, paper_s: f64) -> Option<String> {
        let stream = self.stream_mb()?;
        let t = self.run("cas-table1", "", None, s)?.duration_s;
        let mib = CasScale::of(self.o).reader_mib;
        let alone = f64::from(mib) * 1.048576 / stream;
        let mut why = format!(
            "one reader alone gets {stream:.1} MB/s from the `{}` model, so the {mib} MiB file \
             alone takes {alone:.1} s to read here; under {s} the reader takes{least} {t:.1} s, so \
             the writer costs it{least} {:.1} s (the paper: {paper_s} s in all)",
            self.o.disk,
            t - alone,
            least = self.at_least("cas-table1", s),
        );
        if s == "cas" {
            let l = self.run("cas-table1", "", None, "linux-as")?.duration_s;
            why += &format!(
                ". cas takes {t:.1} s and linux-as {l:.1} s here: Table 1 has no cooperating processes, \
                 and CAS's rules differ from LAS's only for requests of another process near the \
                 head, which the writer's, asynchronous and far, are not"
            );
        }
        Some(why)
    }

    /// Table 1, a scheduler's disk MB/s against one reader's streaming rate.
    pub fn cas1_mb(&self, s: &str, ours: f64, paper: f64) -> Option<String> {
        let stream = self.stream_mb()?;
        let mut why = format!(
            "the disk moves {ours:.1} MB/s under {s} here, {} of the {stream:.1} MB/s one reader \
             alone gets from the `{}` model; the paper's disk moved {paper} MB/s under {s}",
            pct(ours / stream),
            self.o.disk,
        );
        if s == "deadline" {
            why += &format!(
                "; under deadline the disk seeks between the reader's and the writer's files, {} \
                 apart",
                self.spacing()
            );
        }
        Some(why)
    }

    /// Table 1, deadline / linux-as reader time.
    pub fn cas1_time_ratio(&self, paper_d: f64, paper_l: f64) -> Option<String> {
        let d = self.run("cas-table1", "", None, "deadline")?.duration_s;
        let l = self.run("cas-table1", "", None, "linux-as")?.duration_s;
        let stream = self.stream_mb()?;
        Some(format!(
            "deadline's reader takes {d:.1} s here (the paper: {paper_d} s), set by `read_expire` \
             and the write batches more than by the disk's rate; linux-as's, {l:.1} s (the paper: \
             {paper_l} s), is the reader's transfer time at the model's {stream:.1} MB/s for one \
             reader"
        ))
    }

    /// Table 1, linux-as / deadline disk MB/s.
    pub fn cas1_mb_ratio(&self, l: f64, d: f64) -> Option<String> {
        Some(format!(
            "the disk moves {l:.1} MB/s under linux-as and {d:.1} MB/s under deadline here: deadline's \
             seeks between the files ({} apart) cost the same time whatever the disk's rate, and \
             the transfers they interrupt are shorter on a faster disk",
            self.spacing()
        ))
    }

    /// Table 2's tree against the paper's, per file.
    fn tree(&self) -> (f64, f64) {
        let files = f64::from(CasScale::of(self.o).tree_files);
        (files, (files / f64::from(TREE_DIR_FILES)).ceil())
    }

    /// Table 2, a scheduler's find time: seconds per file here and in the paper.
    pub fn cas2_time(&self, s: &str, paper_s: f64) -> Option<String> {
        let t = self.run("cas-table2", "", None, s)?.duration_s;
        let (files, dirs) = self.tree();
        let mut why = format!(
            "our tree is {files} files in {dirs} directories, the paper's Linux tree about \
             {LINUX_TREE_FILES} files, so seconds scale with the tree (the rows of ratios compare \
             the schedulers). Per file, {s} takes{} {:.1} ms here and {:.1} ms in the paper",
            self.at_least("cas-table2", s),
            t * 1e3 / files,
            paper_s * 1e3 / LINUX_TREE_FILES
        );
        match s {
            "deadline" => {
                why += &format!(
                    ": deadline pays seeks between the big file and the tree, {} apart",
                    self.spacing()
                )
            }
            "linux-as" => why += ": LAS makes the find wait for its read to expire",
            "cas" => {
                why += &format!(
                    "; CAS's cost is per directory, {:.2} s here, which over the paper's tree of \
                     about {:.0} directories would be {:.0} s",
                    t / dirs,
                    LINUX_TREE_FILES / f64::from(TREE_DIR_FILES),
                    t / dirs * LINUX_TREE_FILES / f64::from(TREE_DIR_FILES)
                )
            }
            _ => {}
        }
        Some(why)
    }

    /// Table 2, the streaming reader's MB/s.
    pub fn cas2_mb(&self, s: &str, ours: f64) -> Option<String> {
        let stream = self.stream_mb()?;
        let mut why = format!(
            "the streaming reader gets {ours:.1} MB/s under {s} here, {} of what one reader alone \
             gets from the `{}` model ({stream:.1} MB/s)",
            pct(ours / stream),
            self.o.disk
        );
        if s == "cas" {
            let l = self.mb("cas-table2", "", None, "linux-as")?;
            why += &format!(" and {} of linux-as's {l:.1} MB/s", pct(ours / l));
        }
        Some(why)
    }

    /// Table 2, ratios of find times: deadline's and LAS's costs per file.
    pub fn cas2_ratio(&self, paper_d: f64, paper_l: f64, paper_c: f64) -> Option<String> {
        let time = |s| self.run("cas-table2", "", None, s).map(|x| x.duration_s);
        let (d, l, c) = (time("deadline")?, time("linux-as")?, time("cas")?);
        let (files, dirs) = self.tree();
        let per = |t: f64, n: f64| t * 1e3 / n;
        Some(format!(
            "per file deadline takes {:.1} ms and linux-as {:.1} ms here, {:.1} and {:.1} ms in the \
             paper; deadline pays seeks between the big file and the tree ({} apart here; the paper \
             does not say where its tree lay), linux-as a read expiry. cas's cost is per directory: \
             {:.2} s here, {:.2} s in the paper's tree",
            per(d, files),
            per(l, files),
            per(paper_d, LINUX_TREE_FILES),
            per(paper_l, LINUX_TREE_FILES),
            self.spacing(),
            c / dirs,
            paper_c / (LINUX_TREE_FILES / f64::from(TREE_DIR_FILES)),
        ))
    }

    /// Table 3, one find alone: bound by starting processes.
    pub fn cas3_one(&self, s: &str, paper_mb: f64) -> Option<String> {
        let x = self.run("cas-table3", "1-instance", None, s)?;
        let (files, _) = self.tree();
        Some(format!(
            "one find alone is bound by starting processes, not by the disk: under {s} it takes \
             {:.2} ms per file here ({:.1} MB/s), of which the disk is busy {}; the paper's \
             machine read its tree at {paper_mb} MB/s",
            x.duration_s * 1e3 / files,
            x.throughput_mb_s,
            pct(x.utilization)
        ))
    }

    /// Table 3, two finds: the seek storm, as each scheduler's time for twice the work.
    pub fn cas3_two(&self, s: &str, paper_one: f64, paper_two: f64) -> Option<String> {
        let one = self.run("cas-table3", "1-instance", None, s)?;
        let two = self.run("cas-table3", "2-instances", None, s)?;
        let mut why = format!(
            "for twice the work {s} took {:.1} s here, {:.1} times the single find's {:.1} s; two \
             finds get {:.1} MB/s and {:.2} ms of disk time per request, one find {:.1} MB/s and \
             {:.2} ms, each switch between the trees crossing {}. {s} keeps {} of the single find's \
             throughput here, {} in the paper ({paper_two} against {paper_one} MB/s)",
            two.duration_s,
            two.duration_s / one.duration_s,
            one.duration_s,
            two.throughput_mb_s,
            service_ms(two),
            one.throughput_mb_s,
            service_ms(one),
            self.spacing(),
            pct(two.throughput_mb_s / one.throughput_mb_s),
            pct(paper_two / paper_one)
        );
        if s == "linux-as" {
            why += &format!("; linux-as made {}", Self::waits(two));
        }
        Some(why)
    }
}

/// The reason for a row that has none worked out from the runs: a fact of the mode the suite
/// ran in, without figures (the report's header gives the options), or a flag for a difference
/// nobody has looked into.
pub fn explain(_id: &str, _quantity: &str, quick: bool) -> String {
    if quick {
        "quick mode: shorter runs, sparser sweeps and smaller Linux/CAS tables, where shares, sweep \
         points and the start of each run weigh more (run without --quick)"
            .to_string()
    } else {
        "not explained: this difference is new, investigate it".to_string()
    }
}
