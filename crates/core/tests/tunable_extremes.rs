//! Every tunable of every scheduler at the ends of the range its SPEC accepts: the scheduler
//! must run (the release profile has overflow checks on, so arithmetic that wraps panics here),
//! and a value past the range is refused naming the tunable (issue 17, item 11: huge tunables
//! overflowed in the statistics, CFQ's service tree and BFQ).

mod common;

use antsched_core::registry::{TunableKind, MAX_TUNABLE_DURATION};
use antsched_core::{build, catalog, BuildEnv, MS};
use common::{Driver, Reader};

fn env() -> BuildEnv {
    BuildEnv {
        seed: 1,
        exact: None,
        calibrated: None,
        real_clock: false,
    }
}

/// Three readers (two sequential, one random-ish) in two classes, until 400 requests have been
/// dispatched, on a device that takes 3 ms plus 6 ms for a seek.
fn drive(spec: &str) {
    let mut s = build(spec, &env()).unwrap_or_else(|e| panic!("{spec}: {e}"));
    s.set_class_weight(antsched_core::ClassId(1), 1000);
    let mut d = Driver::new(&mut *s);
    let mut readers = [
        Reader::sequential(0, 0, 0),
        Reader::sequential(1, 1 << 30, 2 * MS),
        Reader {
            step: 7_919_999,
            ..Reader::sequential(2, 1 << 20, 20 * MS)
        },
    ];
    readers[2].class = 1;
    d.run(&mut readers, 400, &common::paper_service);
}

fn extremes(kind: TunableKind) -> Vec<String> {
    match kind {
        TunableKind::Duration { positive } => vec![
            if positive { "1ns".into() } else { "0".into() },
            format!("{MAX_TUNABLE_DURATION}ns"),
        ],
        TunableKind::Slack => vec!["0".into(), format!("{MAX_TUNABLE_DURATION}ns")],
        TunableKind::Integer { min, max } => vec![min.to_string(), max.to_string()],
        TunableKind::Real { min, max } => vec![min.to_string(), max.to_string()],
        TunableKind::Estimator => vec![],
        TunableKind::Choice(words) => words.iter().map(|w| w.to_string()).collect(),
    }
}

#[test]
fn every_tunable_at_either_end_of_its_range_runs_without_overflow() {
    let mut runs = 0;
    for s in catalog() {
        for t in &s.tunables {
            for v in extremes(t.kind) {
                drive(&format!("{}:{}={v}", s.name, t.name));
                runs += 1;
            }
        }
        // All at their maxima together: sums and products of several.
        let all: Vec<String> = s
            .tunables
            .iter()
            .filter_map(|t| extremes(t.kind).pop().map(|v| format!("{}={v}", t.name)))
            .collect();
        if !all.is_empty() {
            drive(&format!("{}:{}", s.name, all.join(",")));
            runs += 1;
        }
    }
    assert!(
        runs > 100,
        "only {runs} runs: the catalog lost its tunables?"
    );
}

/// `bfq:slice_idle=18446744073709551615ns` and the like: refused, naming the tunable and the
/// range, not wrapped.
#[test]
fn durations_past_the_limit_are_refused_naming_the_tunable() {
    for spec in [
        "bfq:slice_idle=18446744073709551615ns".to_string(),
        "cfq:slice_sync=9223372036854775807ns".to_string(),
        "as-sptf:think_bucket=1000000000s".to_string(),
        format!("cfq:slice_idle={}ns", MAX_TUNABLE_DURATION + 1),
        "as-sptf:wait_slack=1000000000s".to_string(),
    ] {
        let err = build(&spec, &env())
            .err()
            .unwrap_or_else(|| panic!("{spec} accepted"));
        let key = spec.split([':', '=']).nth(1).unwrap();
        let msg = err.to_string();
        assert!(
            msg.contains(key) && msg.contains("at most"),
            "{spec}: {msg}"
        );
    }
}
