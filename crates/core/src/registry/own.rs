//! antsched's own schedulers as one table: each entry's name, summary, tunables and builder
//! together, as [`crate::peers::PEERS`] holds the peers.
//!
//! An entry is a base policy, either alone (work-conserving: its heuristic never waits) or
//! inside the anticipation core with the heuristic the paper gives for it. Its tunables are the
//! policy's, then the heuristic's and the core's for an anticipatory one; its builder reads them
//! back by those names. Adding a scheduler is adding an entry here: the catalog, `resolve` and
//! `build` all read this table, so no list of names elsewhere has to agree with it.

use super::tunables::*;
use super::{BuildEnv, SchedulerInfo, TunableInfo, Tunables};
use crate::anticipation::Anticipatory;
use crate::heuristic::{
    AgedSptfRule, ClookRule, Combination, Heuristic, NeverWait, Proportional, SptfRule,
};
use crate::policy::{
    AgedSptf, Clook, Fcfs, Look, Lottery, Policy, RelaxedStride, RwSptf, ShareUnit, Sliced, Sptf,
    Sstf, Stride, Yfq,
};
use crate::scheduler::Scheduler;
use crate::spec::SpecError;

/// Builds one scheduler under `name` (the SPEC as given) from its resolved tunables.
pub type Builder = fn(&str, &Tunables, &BuildEnv) -> Result<Box<dyn Scheduler>, SpecError>;

/// One of antsched's own schedulers.
pub struct OwnScheduler {
    pub name: &'static str,
    pub summary: &'static str,
    /// The base policy's tunables.
    pub policy: &'static [&'static TunableInfo],
    /// The heuristic's tunables, for a scheduler inside the anticipation core (whose own
    /// tunables follow them); `None` for a work-conserving one.
    pub heuristic: Option<&'static [&'static TunableInfo]>,
    pub build: Builder,
}

impl OwnScheduler {
    /// The catalog entry: `depth`, the policy's tunables, then for an anticipatory scheduler
    /// the heuristic's and the core's, each name once (the first of a name wins).
    pub fn info(&self) -> SchedulerInfo {
        let mut tunables: Vec<&'static TunableInfo> = vec![&DEPTH];
        let anticipation = self.heuristic.map(|h| h.iter().chain(ANTICIPATION));
        for t in self.policy.iter().chain(anticipation.into_iter().flatten()) {
            if !tunables.iter().any(|y| y.name == t.name) {
                tunables.push(t);
            }
        }
        SchedulerInfo {
            name: self.name,
            summary: self.summary,
            tunables,
        }
    }
}

/// The anticipation core's tunables, which every anticipatory scheduler takes.
const ANTICIPATION: &[&TunableInfo] = &[
    &THINK_BUCKET,
    &THINK_BUCKETS,
    &THINK_DECAY,
    &AVERAGE_DECAY,
    &WAIT_SLACK,
    &TIMER_TICK,
    &CHAINS,
];

// The base policies' tunables, shared by a policy's work-conserving and anticipatory forms.
const NO_TUNABLES: &[&TunableInfo] = &[];
const SPTF_TUNABLES: &[&TunableInfo] = &[&ESTIMATOR];
const AGED_SPTF_TUNABLES: &[&TunableInfo] = &[&ESTIMATOR, &AGE_BOUND];
const RW_SPTF_TUNABLES: &[&TunableInfo] = &[
    &ESTIMATOR,
    &WRITE_EXPIRE,
    &WRITE_BATCH_EXPIRE,
    &READ_BATCH_EXPIRE,
    &SHARE,
    &SLICE,
];
const STRIDE_TUNABLES: &[&TunableInfo] = &[&REJOIN_AFTER];
const YFQ_TUNABLES: &[&TunableInfo] = &[&BATCH];
const LOTTERY_TUNABLES: &[&TunableInfo] = &[&SEED, &REJOIN_AFTER];
const STRIDE_RELAXED_TUNABLES: &[&TunableInfo] = &[&ESTIMATOR, &TAU, &REJOIN_AFTER];

// The heuristics' tunables.
const COST_BENEFIT_TUNABLES: &[&TunableInfo] = &[&WAIT_SLACK];
/// `as-rw-sptf` follows chains by default (issue 18); the paper's schedulers do not.
const COST_BENEFIT_CHAINS_TUNABLES: &[&TunableInfo] = &[&WAIT_SLACK, &CHAINS_ON];
const CLOOK_RULE_TUNABLES: &[&TunableInfo] = &[&ESTIMATOR, &BACKWARD_THRESHOLD];
const PROPORTIONAL_TUNABLES: &[&TunableInfo] = &[&ESTIMATOR, &THINK_THRESHOLD];
const COMBINATION_TUNABLES: &[&TunableInfo] = &[&THINK_THRESHOLD];

/// Every one of antsched's own schedulers, in the order `antsched schedulers` lists them: the
/// work-conserving base policies, then their anticipatory forms.
pub static OWN: &[OwnScheduler] = &[
    OwnScheduler {
        name: "noop",
        summary: "first come, first served",
        policy: NO_TUNABLES,
        heuristic: None,
        build: |name, t, env| wrap(name, Fcfs::new(), NeverWait, t, env),
    },
    OwnScheduler {
        name: "sstf",
        summary: "shortest seek (sector distance) first",
        policy: NO_TUNABLES,
        heuristic: None,
        build: |name, t, env| wrap(name, Sstf::new(), NeverWait, t, env),
    },
    OwnScheduler {
        name: "clook",
        summary: "C-LOOK: one-way sweep up the disk, then back to the lowest request",
        policy: NO_TUNABLES,
        heuristic: None,
        build: |name, t, env| wrap(name, Clook::new(), NeverWait, t, env),
    },
    OwnScheduler {
        name: "look",
        summary: "LOOK: the elevator, sweeping up and down",
        policy: NO_TUNABLES,
        heuristic: None,
        build: |name, t, env| wrap(name, Look::new(), NeverWait, t, env),
    },
    OwnScheduler {
        name: "sptf",
        summary: "shortest positioning time first",
        policy: SPTF_TUNABLES,
        heuristic: None,
        build: |name, t, env| wrap(name, Sptf::new(), NeverWait, t, env),
    },
    OwnScheduler {
        name: "aged-sptf",
        summary: "SPTF with a bound on how long a request may wait",
        policy: AGED_SPTF_TUNABLES,
        heuristic: None,
        build: |name, t, env| wrap(name, aged_sptf(t), NeverWait, t, env),
    },
    OwnScheduler {
        name: "rw-sptf",
        summary: "reads before write-back, each by SPTF with gradual aging; write batches when a write has waited write_expire",
        policy: RW_SPTF_TUNABLES,
        heuristic: None,
        build: |name, t, env| wrap(name, rw_sptf(t), NeverWait, t, env),
    },
    OwnScheduler {
        name: "stride",
        summary: "Stride: the class with the smallest virtual clock (service time / weight)",
        policy: STRIDE_TUNABLES,
        heuristic: None,
        build: |name, t, env| wrap(name, stride(t), NeverWait, t, env),
    },
    OwnScheduler {
        name: "yfq",
        summary: "YFQ (Bruno et al.): weighted fair queueing on sectors / weight, smallest finish tag first",
        policy: YFQ_TUNABLES,
        heuristic: None,
        build: |name, t, env| wrap(name, yfq(t), NeverWait, t, env),
    },
    OwnScheduler {
        name: "lottery",
        summary: "Lottery: a seeded draw weighted by the classes' weights",
        policy: LOTTERY_TUNABLES,
        heuristic: None,
        build: |name, t, env| wrap(name, lottery(t, env), NeverWait, t, env),
    },
    OwnScheduler {
        name: "stride-relaxed",
        summary: "Stride relaxed by tau, with SPTF among the classes within tau of the smallest clock",
        policy: STRIDE_RELAXED_TUNABLES,
        heuristic: None,
        build: |name, t, env| wrap(name, relaxed_stride(t), NeverWait, t, env),
    },
    OwnScheduler {
        name: "as-sptf",
        summary: "SPTF + the cost-benefit heuristic (section 3.3)",
        policy: SPTF_TUNABLES,
        heuristic: Some(COST_BENEFIT_TUNABLES),
        build: |name, t, env| wrap(name, Sptf::new(), sptf_rule(t, env), t, env),
    },
    OwnScheduler {
        name: "as-aged-sptf",
        summary: "Aged-SPTF + cost-benefit, never waiting when aging overrode SPTF (3.3)",
        policy: AGED_SPTF_TUNABLES,
        heuristic: Some(COST_BENEFIT_TUNABLES),
        build: |name, t, env| {
            let rule = AgedSptfRule::new(sptf_rule(t, env));
            wrap(name, aged_sptf(t), rule, t, env)
        },
    },
    OwnScheduler {
        name: "as-rw-sptf",
        summary: "rw-sptf + cost-benefit, following chains of short-lived processes (issue 18)",
        policy: RW_SPTF_TUNABLES,
        heuristic: Some(COST_BENEFIT_CHAINS_TUNABLES),
        build: |name, t, env| {
            let rule = AgedSptfRule::new(sptf_rule(t, env));
            wrap(name, rw_sptf(t), rule, t, env)
        },
    },
    OwnScheduler {
        name: "as-clook",
        summary: "C-LOOK + cost-benefit with the backward-seek rule (3.3)",
        policy: NO_TUNABLES,
        heuristic: Some(CLOOK_RULE_TUNABLES),
        build: |name, t, env| {
            let rule = ClookRule {
                sptf: sptf_rule(t, env),
                backward_threshold: t.real("backward_threshold"),
            };
            wrap(name, Clook::new(), rule, t, env)
        },
    },
    OwnScheduler {
        name: "as-stride",
        summary: "Stride + the proportional-share heuristic (3.4)",
        policy: STRIDE_TUNABLES,
        heuristic: Some(PROPORTIONAL_TUNABLES),
        build: |name, t, env| wrap(name, stride(t), proportional(t, env), t, env),
    },
    OwnScheduler {
        name: "as-yfq",
        summary: "YFQ + the proportional-share heuristic (3.4)",
        policy: YFQ_TUNABLES,
        heuristic: Some(PROPORTIONAL_TUNABLES),
        build: |name, t, env| wrap(name, yfq(t), proportional(t, env), t, env),
    },
    OwnScheduler {
        name: "as-lottery",
        summary: "Lottery + the proportional-share heuristic (3.4)",
        policy: LOTTERY_TUNABLES,
        heuristic: Some(PROPORTIONAL_TUNABLES),
        build: |name, t, env| wrap(name, lottery(t, env), proportional(t, env), t, env),
    },
    OwnScheduler {
        name: "as-stride-combo",
        summary: "relaxed Stride + the combination heuristic (3.5)",
        policy: STRIDE_RELAXED_TUNABLES,
        heuristic: Some(COMBINATION_TUNABLES),
        build: |name, t, env| {
            let rule = Combination {
                sptf: sptf_rule(t, env),
                proportional: proportional(t, env),
            };
            wrap(name, relaxed_stride(t), rule, t, env)
        },
    },
];

/// `policy` inside the anticipation core with `heuristic` (a work-conserving scheduler is the
/// same with [`NeverWait`]).
fn wrap<P, H>(
    name: &str,
    policy: P,
    heuristic: H,
    t: &Tunables,
    env: &BuildEnv,
) -> Result<Box<dyn Scheduler>, SpecError>
where
    P: Policy + 'static,
    H: Heuristic<P> + 'static,
{
    let est = t.estimator(env)?;
    Ok(Box::new(Anticipatory::new(
        name,
        policy,
        heuristic,
        est,
        t.core_config(),
    )))
}

fn sptf_rule(t: &Tunables, env: &BuildEnv) -> SptfRule {
    SptfRule {
        slack: t.wait_slack(env),
    }
}

fn proportional(t: &Tunables, env: &BuildEnv) -> Proportional {
    Proportional {
        think_threshold: t.duration("think_threshold"),
        slack: t.wait_slack(env),
    }
}

fn aged_sptf(t: &Tunables) -> AgedSptf {
    AgedSptf::new(t.duration("age_bound"))
}

fn stride(t: &Tunables) -> Stride {
    Stride::new(t.duration("rejoin_after"))
}

fn yfq(t: &Tunables) -> Yfq {
    Yfq::with_batch(t.integer("batch") as usize)
}

fn lottery(t: &Tunables, env: &BuildEnv) -> Lottery {
    // `seed` has no default: the run's seed unless the SPEC gives one.
    let seed = if t.has("seed") {
        t.integer("seed")
    } else {
        env.seed
    };
    Lottery::new(seed, t.duration("rejoin_after"))
}

fn relaxed_stride(t: &Tunables) -> RelaxedStride {
    RelaxedStride::new(t.duration("tau"), t.duration("rejoin_after"))
}

fn rw_sptf(t: &Tunables) -> Sliced<RwSptf> {
    let (write_expire, write_batch, read_batch) = (
        t.duration("write_expire"),
        t.duration("write_batch_expire"),
        t.duration("read_batch_expire"),
    );
    let unit = match t.choice("share") {
        "time" => ShareUnit::Time,
        "bytes" => ShareUnit::Bytes,
        _ => ShareUnit::None,
    };
    Sliced::new(
        move || RwSptf::new(write_expire, write_batch, read_batch),
        unit,
        t.duration("slice"),
    )
}
