//! The Senpai-style controller against a group made of plain files (no root): it starts from
//! the usage, steps the limit down while the stall stays under the target, up when the stall
//! rises over it, never under the floor, and writes the original limit back at the end; and
//! its constants are the memory simulator's Senpai defaults.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use antsched_mem::sim::{parse_scenario, Policy};
use antsched_query_cache::senpai::{self, control, Group, Params, Step, HEADROOM, LIMIT_MIN};

const MB: u64 = 1 << 20;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("query-cache-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes a whole file at once, as a cgroup file reads: `std::fs::write` truncates first, and
/// the controller's thread may read the empty file between the truncation and the write.
fn write(p: &Path, text: &str) {
    // Beside the file, under its own whole name: `with_extension` would give every
    // `memory.*` file the same temporary.
    let mut tmp = p.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, p).unwrap();
}

fn set_psi(p: &Path, total_us: u64) {
    write(
        p,
        &format!(
            "some avg10=0.00 avg60=0.00 avg300=0.00 total={total_us}\n\
             full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
        ),
    );
}

#[test]
fn the_controller_steps_a_limit_down_and_up_and_restores_it() {
    let dir = temp_dir("senpai");
    let psi = dir.join("memory.pressure");
    write(&dir.join("memory.limit_in_bytes"), &(256 * MB).to_string());
    write(&dir.join("memory.usage_in_bytes"), &(200 * MB).to_string());
    // 60 MiB anonymous, 140 MiB of file pages.
    write(
        &dir.join("memory.stat"),
        &format!(
            "total_rss {}\ntotal_inactive_file {}\ntotal_active_file {}\n",
            60 * MB,
            100 * MB,
            40 * MB
        ),
    );
    set_psi(&psi, 1_000);
    let group = Group {
        dir: dir.clone(),
        pressure: psi.clone(),
    };
    let params = Params {
        interval: Duration::from_millis(100),
        step: 0.1,
        ..Params::default()
    };
    let stop = Arc::new(AtomicBool::new(false));
    let steps: Arc<Mutex<Vec<Step>>> = Arc::default();
    let handle = {
        let (group, stop, steps) = (group.clone(), stop.clone(), steps.clone());
        std::thread::spawn(move || {
            control(&group, &params, &stop, |s| steps.lock().unwrap().push(*s))
        })
    };
    // No stall: down 10% an interval from 200 MiB to the floor (100 MiB, limit_min: the 60
    // MiB that cannot be reclaimed plus the headroom are under it).
    let wait_for = |n: usize| {
        for _ in 0..200 {
            if steps.lock().unwrap().len() >= n {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("fewer than {n} steps: {:?}", steps.lock().unwrap());
    };
    wait_for(9);
    {
        let s = steps.lock().unwrap();
        assert_eq!(s[0].event, "senpai_lower");
        assert_eq!(s[0].limit, 180 * MB);
        assert!(s
            .iter()
            .all(|x| x.limit >= LIMIT_MIN && x.floor == LIMIT_MIN));
        assert_eq!(s.last().unwrap().limit, LIMIT_MIN, "{s:?}");
        assert_eq!(s.last().unwrap().event, "senpai_hold");
    }
    let limit_file = dir.join("memory.limit_in_bytes");
    // The controller writes the limit with `std::fs::write` (a cgroup file takes it whole); on
    // a plain file a read can fall between its truncation and its write, so read until whole.
    let read_limit = || -> u64 {
        for _ in 0..100 {
            if let Ok(v) = std::fs::read_to_string(&limit_file).unwrap().trim().parse() {
                return v;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("{} never held a number", limit_file.display());
    };
    assert_eq!(read_limit(), LIMIT_MIN);
    // More anonymous memory: the floor follows it.
    write(
        &dir.join("memory.stat"),
        &format!("total_inactive_file {}\ntotal_active_file 0\n", 10 * MB),
    );
    let n = steps.lock().unwrap().len();
    wait_for(n + 2);
    assert_eq!(read_limit(), 190 * MB + HEADROOM);
    // A stall of a whole interval: up 10% an interval, up to the ceiling.
    let n = steps.lock().unwrap().len();
    let mut total = 1_000;
    for _ in 0..30 {
        total += 200_000;
        set_psi(&psi, total);
        std::thread::sleep(Duration::from_millis(50));
    }
    {
        let s = steps.lock().unwrap();
        let after = &s[n..];
        assert!(
            after
                .iter()
                .any(|x| x.event == "senpai_raise" && x.stall > 0.5),
            "{after:?}"
        );
        assert_eq!(after.last().unwrap().limit, 256 * MB, "{after:?}");
    }
    stop.store(true, Ordering::Relaxed);
    let summary = handle.join().unwrap().unwrap();
    assert!(summary.restored);
    assert_eq!(read_limit(), 256 * MB);
    assert!(summary.lowered >= 4 && summary.raised >= 1, "{summary:?}");
    assert_eq!(summary.start_limit_mb, 200.0);
    assert_eq!(summary.min_limit_mb, 100.0);
    assert_eq!(summary.ceiling_mb, 256.0);
    assert!(summary.stall_ms > 1000.0, "{summary:?}");
    assert!(summary.note.contains("never the anonymous"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_or_broken_group_file_is_an_error_that_names_it() {
    let dir = temp_dir("senpai-bad");
    let psi = dir.join("memory.pressure");
    let group = Group {
        dir: dir.clone(),
        pressure: psi.clone(),
    };
    let stop = AtomicBool::new(true);
    let e = control(&group, &Params::default(), &stop, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory.limit_in_bytes"), "{e}");
    write(&dir.join("memory.limit_in_bytes"), "256M\n");
    let e = control(&group, &Params::default(), &stop, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a number"), "{e}");
    write(&dir.join("memory.limit_in_bytes"), &(256 * MB).to_string());
    write(&dir.join("memory.usage_in_bytes"), &(10 * MB).to_string());
    write(&psi, "full avg10=0.00 total=3\n");
    let e = control(&group, &Params::default(), &stop, |_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory.pressure") && e.contains("total="), "{e}");
    // The limit was written back even so.
    assert_eq!(
        std::fs::read_to_string(dir.join("memory.limit_in_bytes")).unwrap(),
        (256 * MB).to_string()
    );
    assert!(senpai::group_of(&dir).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The constants are the memory simulator's (private there): a `senpai` policy with no
/// parameters gets them as its defaults.
#[test]
fn the_constants_are_the_simulators() {
    let scenario = r#"
[machine]
memory_mb = 64

[policy]
kind = "senpai"

[[process]]
name = "a"
kind = "zipf"
pages_mb = 10
alpha = 0.8
refs = 1000
"#;
    let s = parse_scenario(scenario, "senpai.toml").unwrap();
    let Policy::Senpai {
        target,
        step,
        interval_s,
    } = s.policy
    else {
        panic!("{:?}", s.policy)
    };
    assert_eq!(target, senpai::TARGET);
    assert_eq!(step, senpai::STEP);
    assert_eq!(interval_s, senpai::INTERVAL_S);
}
