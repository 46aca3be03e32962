//! Memory nice in real cgroup v1 memory groups (issue 14's must-shows): a subscriber in a
//! group niced +10 is told S divided by the +10 weight; enforcement takes file cache from the
//! niced-down group first (shown by `memory.stat`); after `kill -9` of the daemon in the
//! middle of enforcing and a restart, no limit it set remains.
//!
//! Needs root and the v1 memory controller; skips with the reason printed where the machine
//! cannot make a group, and fails instead with `ANTSCHED_REQUIRE_FUSE=1` (the CI flag).
//!
//! The hogs and the killable daemon are this test binary run again (`hog_helper`,
//! `daemon_helper`, which do nothing unless their variable is set). A hog waits on its stdin,
//! so the test moves it into its group before it reads anything.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use antsched_core::Nanos;
use antsched_mem::cost::PagingCost;
use antsched_mem::record::{Estimator, Observation};
use antsched_mem::{MemNice, SeverityConfig};
mod common;

use common::{number, ColdFile, Helper, QuietMachine, Running, MIB};

use antsched_memd::{
    connect_domain, govern, list_domains, set_nice, CgroupSource, Config, Daemon, DiskChoice,
    NiceTarget, ObservationSource, ProcSource, RunGroup, SourceError, RUN_PARENT,
};

/// Skips (printing why) unless the CI flag says this machine must run it.
fn cannot_run(why: &str) {
    common::cannot_run("enforcement", why);
}

/// Whether this machine can make v1 memory groups (root, the controller mounted).
fn can_make_groups() -> bool {
    if !Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").is_file() {
        cannot_run("no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory");
        return false;
    }
    if !rustix::process::geteuid().is_root() {
        cannot_run("not root: cannot make a memory cgroup");
        return false;
    }
    true
}

/// The hog's side (see `common::hog_helper_main`).
#[test]
fn hog_helper() {
    common::hog_helper_main();
}

/// The daemon in a process of its own (so that it can be killed with SIGKILL): this
/// machine's `/proc`, governing on request under antsched's parent, the state file and
/// socket from the environment, a 100 ms tick. It stops (and restores) when its stdin
/// closes.
#[test]
fn daemon_helper() {
    let Some(socket) = std::env::var_os("ANTSCHED_MEMD_DAEMON") else {
        return;
    };
    let state = std::env::var_os("ANTSCHED_MEMD_STATE").unwrap();
    let machine = ProcSource::new("/proc", DiskChoice::Root).unwrap();
    let disk = machine.disk().to_string();
    let config = Config {
        interval: Duration::from_millis(100),
        state_file: Some(state.into()),
        ..Config::new(socket)
    };
    let mut daemon = Daemon::bind(config, Box::new(QuietMachine(machine))).unwrap();
    daemon.allow_govern(RUN_PARENT, CgroupSource::governor(disk));
    let stopper = daemon.stopper();
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
        stopper.stop();
    });
    daemon.run().unwrap();
}

/// The daemon in a thread of this process, with a state file in `dir`.
fn start_daemon(dir: &Path) -> Running {
    let machine = ProcSource::new("/proc", DiskChoice::Root).unwrap();
    let disk = machine.disk().to_string();
    let config = Config {
        interval: Duration::from_millis(100),
        state_file: Some(dir.join("memd.state")),
        ..Config::new(dir.join("memd.sock"))
    };
    let mut daemon = Daemon::bind(config, Box::new(QuietMachine(machine))).unwrap();
    daemon.allow_govern(RUN_PARENT, CgroupSource::governor(disk));
    Running {
        stopper: daemon.stopper(),
        thread: Some(std::thread::spawn(move || daemon.run())),
    }
}

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let d = std::env::temp_dir().join(format!("antsched-enforce-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Self(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn stat(group: &Path, key: &str) -> u64 {
    let text = std::fs::read_to_string(group.join("memory.stat")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {}", group.display()))
}

fn mib(b: u64) -> f64 {
    b as f64 / MIB as f64
}

/// Section 4.3: a process niced +10 is told S divided by its weight (2^7.5). The hog in a
/// 256 MB group niced +10 subscribes to the group's domain; the test (nice 0) subscribes
/// too; once the group is on the ramp (S < S_max), the two pages at the same record time
/// differ by the weight.
#[test]
fn a_subscriber_in_a_group_niced_plus_10_is_told_s_divided_by_its_weight() {
    if !can_make_groups() {
        return;
    }
    let limit = 256 * MIB;
    let name = format!("nice-test-{}", std::process::id());
    let group = match RunGroup::create(Path::new(RUN_PARENT), &name, Some(limit)) {
        Ok(g) => g,
        Err(e) => return cannot_run(&format!("cannot make a memory cgroup: {e}")),
    };
    let dir = Scratch::new("nice");
    let socket = dir.0.join("memd.sock");
    let _running = start_daemon(&dir.0);
    let domain = govern(&socket, group.path()).unwrap();
    let done = set_nice(&socket, 10, &NiceTarget::Cgroup(domain.clone())).unwrap();
    assert!(
        done.starts_with(&format!("nice 10 cgroup {domain} weight 181.01")),
        "{done}"
    );
    let mine = connect_domain(&socket, &domain).unwrap();

    let file = ColdFile::new("nice", 320 * MIB);
    let mut hog = Helper::hog();
    group.add(hog.pid()).unwrap();
    hog.say(&format!("cache {} {}", file.arg(), 64 * MIB));
    // Free at 45% of tau: S well inside the ramp.
    let tau = SeverityConfig::default().tau(limit);
    let free = limit.saturating_sub(number(group.path(), "memory.usage_in_bytes"));
    let target = tau * 45 / 100;
    assert!(free > target, "free {free} already below {target}");
    hog.say(&format!("alloc {}", free - target));
    hog.say(&format!("subscribe {} {domain}", socket.display()));

    let weight = MemNice::new(10).unwrap().weight();
    let s_max = SeverityConfig::default().s_max;
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut compared = 0;
    while compared < 3 {
        assert!(
            Instant::now() < deadline,
            "no common record time under S_max"
        );
        let before = mine.current();
        let reply = hog.say("severity");
        let after = mine.current();
        let mut words = reply.split_whitespace();
        let time: u64 = words.next().unwrap().parse().unwrap();
        let niced: f64 = words.next().unwrap().parse().unwrap();
        let base = [before, after].into_iter().find(|r| r.time == time);
        let Some(base) = base else {
            continue;
        };
        if base.severity_s >= s_max {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        let expected = base.severity_s / weight;
        eprintln!(
            "record at {time}: nice 0 is told S {:.1} s, nice +10 is told {:.3} s (S / 2^7.5 = {:.3} s; free {:.1} MiB of tau {:.1} MiB)",
            base.severity_s,
            niced,
            expected,
            mib(base.free_bytes),
            mib(base.tau_bytes)
        );
        assert!(
            (niced - expected).abs() <= 0.01 * expected,
            "nice +10 told {niced}, expected {expected}"
        );
        compared += 1;
        std::thread::sleep(Duration::from_millis(150));
    }
    drop(hog);
    group.remove(Duration::from_secs(5)).unwrap();
}

/// How the test nices `b` down.
#[derive(Clone, Copy, Debug)]
enum NicedBy {
    /// `mem nice -n 10 --cgroup b`.
    Group,
    /// `mem nice -n 10 PID` on the one process in `b`: a process's own nice, enforced
    /// through the group that is its own.
    Process,
}

/// Two governed groups, `a` (nice 0) and `b` (nice +10), under a governed parent limited to
/// 256 MB, both full of the page cache of files they read (the parent at its limit, free
/// below tau). Governed, the daemon takes file cache from `b` until the parent's free is
/// back at tau, and `a`'s stays; every limit is back to its original afterwards.
#[test]
fn enforcement_takes_file_cache_from_the_niced_down_group_first() {
    enforcement_takes_from_b(NicedBy::Group);
}

/// The same with the nice set on `b`'s process rather than on `b`.
#[test]
fn enforcement_takes_file_cache_from_a_niced_down_process_alone_in_its_group_first() {
    enforcement_takes_from_b(NicedBy::Process);
}

fn enforcement_takes_from_b(by: NicedBy) {
    if !can_make_groups() {
        return;
    }
    let limit = 256 * MIB;
    let name = format!("enf-test-{by:?}-{}", std::process::id());
    let parent = match RunGroup::create(Path::new(RUN_PARENT), &name, Some(limit)) {
        Ok(g) => g,
        Err(e) => return cannot_run(&format!("cannot make a memory cgroup: {e}")),
    };
    // Dropped (removed) before the parent: declared after it.
    let a = RunGroup::create(parent.path(), "a", None).unwrap();
    let b = RunGroup::create(parent.path(), "b", None).unwrap();
    let originals: Vec<(PathBuf, u64)> = [parent.path(), a.path(), b.path()]
        .iter()
        .map(|g| (g.to_path_buf(), number(g, "memory.limit_in_bytes")))
        .collect();
    let (fa, fb) = (
        ColdFile::new(&format!("a-{by:?}"), 144 * MIB),
        ColdFile::new(&format!("b-{by:?}"), 144 * MIB),
    );
    let mut hog_a = Helper::hog();
    a.add(hog_a.pid()).unwrap();
    let mut hog_b = Helper::hog();
    b.add(hog_b.pid()).unwrap();
    hog_a.say(&format!("read {}", fa.arg()));
    hog_b.say(&format!("read {}", fb.arg()));

    let dir = Scratch::new(&format!("enf-{by:?}"));
    let socket = dir.0.join("memd.sock");
    let _running = start_daemon(&dir.0);
    let target = match by {
        NicedBy::Group => NiceTarget::Cgroup(b.path().display().to_string()),
        NicedBy::Process => NiceTarget::Pid(hog_b.pid()),
    };
    set_nice(&socket, 10, &target).unwrap();
    govern(&socket, a.path()).unwrap();
    govern(&socket, b.path()).unwrap();
    let tau = SeverityConfig::default().tau(limit);
    let free0 = limit.saturating_sub(number(parent.path(), "memory.usage_in_bytes"));
    let (a0, b0) = (stat(a.path(), "total_cache"), stat(b.path(), "total_cache"));
    eprintln!(
        "before: parent free {:.1} MiB (tau {:.1} MiB); a (nice 0) cache {:.1} MiB, b (nice +10) cache {:.1} MiB",
        mib(free0),
        mib(tau),
        mib(a0),
        mib(b0)
    );
    assert!(
        free0 < tau,
        "the parent is not under pressure: free {free0}"
    );
    // The parent as the domain whose free memory drives enforcement.
    let started = Instant::now();
    govern(&socket, parent.path()).unwrap();
    let free1 = loop {
        let free = limit.saturating_sub(number(parent.path(), "memory.usage_in_bytes"));
        if free >= tau {
            break free;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "free still {:.1} MiB below tau after 20 s",
            mib(free)
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // A few ticks more: nothing else is taken once free is at tau.
    std::thread::sleep(Duration::from_millis(500));
    let (a1, b1) = (stat(a.path(), "total_cache"), stat(b.path(), "total_cache"));
    eprintln!(
        "after {:?}: parent free {:.1} MiB; a (nice 0) cache {:.1} MiB ({:+.1}), b (nice +10) cache {:.1} MiB ({:+.1})",
        started.elapsed(),
        mib(free1),
        mib(a1),
        mib(a1) - mib(a0),
        mib(b1),
        mib(b1) - mib(b0)
    );
    assert!(
        b0.saturating_sub(b1) >= (tau - free0) * 9 / 10,
        "b gave {:.1} MiB",
        mib(b0.saturating_sub(b1))
    );
    assert!(
        a0.saturating_sub(a1) < 2 * MIB,
        "a gave {:.1} MiB",
        mib(a0 - a1)
    );
    for (g, original) in &originals {
        assert_eq!(
            number(g, "memory.limit_in_bytes"),
            *original,
            "{}",
            g.display()
        );
    }
    let state = std::fs::read_to_string(dir.0.join("memd.state")).unwrap();
    assert_eq!(state, "antsched-memd-state 1\n");
    drop((hog_a, hog_b));
}

/// `kill -9` of the daemon while it enforces (a niced-down group keeps refilling its cache,
/// so the daemon steps limits every tick; the kill comes as soon as the state file records
/// one, that is inside a tick's steps), then a restart on the same state file: every
/// limit is back to its original before the new daemon serves. Then what a daemon killed
/// in the middle of a step leaves (a lowered limit, recorded) is planted, and a start
/// restores it.
#[test]
fn after_kill_9_and_a_restart_no_limit_the_daemon_set_remains() {
    if !can_make_groups() {
        return;
    }
    let limit = 256 * MIB;
    let name = format!("enf-kill-{}", std::process::id());
    let parent = match RunGroup::create(Path::new(RUN_PARENT), &name, Some(limit)) {
        Ok(g) => g,
        Err(e) => return cannot_run(&format!("cannot make a memory cgroup: {e}")),
    };
    let a = RunGroup::create(parent.path(), "a", None).unwrap();
    let b = RunGroup::create(parent.path(), "b", None).unwrap();
    let originals: Vec<(PathBuf, u64)> = [parent.path(), a.path(), b.path()]
        .iter()
        .map(|g| (g.to_path_buf(), number(g, "memory.limit_in_bytes")))
        .collect();
    let (fa, fb) = (
        ColdFile::new("ka", 144 * MIB),
        // b's file does not fit beside a's cache: rereading it charges the parent all the
        // time, and the daemon steps limits every tick.
        ColdFile::new("kb", 240 * MIB),
    );
    let mut hog_a = Helper::hog();
    a.add(hog_a.pid()).unwrap();
    let mut hog_b = Helper::hog();
    b.add(hog_b.pid()).unwrap();
    hog_a.say(&format!("read {}", fa.arg()));
    hog_b.say(&format!("read {}", fb.arg()));

    let dir = Scratch::new("kill");
    let socket = dir.0.join("memd.sock");
    let state = dir.0.join("memd.state");
    let env = [
        ("ANTSCHED_MEMD_DAEMON", socket.display().to_string()),
        ("ANTSCHED_MEMD_STATE", state.display().to_string()),
    ];
    let wait_socket = || {
        let deadline = Instant::now() + Duration::from_secs(30);
        while antsched_memd::list_domains(&socket).is_err() {
            assert!(Instant::now() < deadline, "the daemon did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let daemon = Helper::spawn("daemon_helper", &env);
    wait_socket();
    set_nice(
        &socket,
        10,
        &NiceTarget::Cgroup(b.path().display().to_string()),
    )
    .unwrap();
    govern(&socket, a.path()).unwrap();
    govern(&socket, b.path()).unwrap();
    govern(&socket, parent.path()).unwrap();
    // b rereads its file: its cache refills and the daemon takes from it every tick.
    hog_b.say(&format!("reread {}", fb.arg()));
    let b_cache = stat(b.path(), "total_cache");
    // Killed in the middle of a tick's steps when possible: as soon as the state file
    // records a limit (the daemon is between its first step in a tick and restoring), or
    // after 3 s of enforcing.
    std::thread::sleep(Duration::from_millis(500));
    let mut daemon = daemon;
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        let text = std::fs::read_to_string(&state).unwrap_or_default();
        if text.lines().count() > 1 {
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    daemon.kill_9();
    let left = std::fs::read_to_string(&state).unwrap();
    let limits: Vec<u64> = originals
        .iter()
        .map(|(g, _)| number(g, "memory.limit_in_bytes"))
        .collect();
    eprintln!(
        "killed while b's cache was {:.1} MiB; the state file held {} entries; limits then (parent, a, b): {limits:?}",
        mib(b_cache),
        left.lines().count() - 1
    );
    drop(daemon);

    // The restart: before it serves (its socket answers), every limit is the original.
    let daemon = Helper::spawn("daemon_helper", &env);
    wait_socket();
    for (g, original) in &originals {
        assert_eq!(
            number(g, "memory.limit_in_bytes"),
            *original,
            "{}",
            g.display()
        );
    }
    assert_eq!(
        std::fs::read_to_string(&state).unwrap(),
        "antsched-memd-state 1\n"
    );
    drop(daemon);
    drop(hog_b);

    // What a daemon killed in the middle of a step leaves: a's limit lowered below its
    // usage, and its original recorded. The next start puts it back.
    let usage = number(a.path(), "memory.usage_in_bytes");
    let lowered = (usage.saturating_sub(2 * MIB) / 4096 * 4096).max(MIB);
    std::fs::write(a.path().join("memory.limit_in_bytes"), lowered.to_string()).unwrap();
    assert_eq!(number(a.path(), "memory.limit_in_bytes"), lowered);
    std::fs::write(
        &state,
        format!(
            "antsched-memd-state 1\nlimit {} {}\n",
            a.path().canonicalize().unwrap().display(),
            originals[1].1
        ),
    )
    .unwrap();
    let daemon = Helper::spawn("daemon_helper", &env);
    wait_socket();
    assert_eq!(number(a.path(), "memory.limit_in_bytes"), originals[1].1);
    eprintln!(
        "planted: a's limit {lowered} (usage {usage}) recorded with original {}; after the start: {}",
        originals[1].1,
        number(a.path(), "memory.limit_in_bytes")
    );
    drop(daemon);
    drop(hog_a);
}

/// A machine domain the test sets: free bytes (of 20 GiB) and the candidate age.
#[derive(Clone)]
struct Fake(Arc<Mutex<(u64, f64)>>);

impl ObservationSource for Fake {
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
        let (free, age) = *self.0.lock().unwrap();
        Ok(Observation {
            free_bytes: free,
            total_bytes: 20 << 30,
            candidate_age_s: age,
            paging: PagingCost {
                disk_service_s: 0.008,
                disk_queue: 2.0,
            },
            estimator: Estimator::Exact,
            time: now,
        })
    }
}

/// A daemon on a fake machine (no state file: nothing is enforced), 50 ms tick.
fn start_fake(dir: &Path, fake: &Fake) -> Running {
    let config = Config {
        interval: Duration::from_millis(50),
        ..Config::new(dir.join("memd.sock"))
    };
    let mut daemon = Daemon::bind(config, Box::new(fake.clone())).unwrap();
    daemon.allow_govern(RUN_PARENT, CgroupSource::governor("sda".into()));
    Running {
        stopper: daemon.stopper(),
        thread: Some(std::thread::spawn(move || daemon.run())),
    }
}

/// Section 4.3 and 4.6 on every channel, without root: a process niced +4 (weight 8) is
/// told S / 8 on its page; with no pressure on the machine it still sees S_max / 8 < S_max,
/// so its eventfd has the 1 s repeat; when S falls it is woken and its page shows the new
/// S / 8; a nice set while it is subscribed reaches the page it already has.
#[test]
fn a_niced_process_is_told_scaled_s_and_woken_by_the_rule_on_it() {
    let dir = Scratch::new("fake");
    let socket = dir.0.join("memd.sock");
    let fake = Fake(Arc::new(Mutex::new((10 << 30, 100.0))));
    let _running = start_fake(&dir.0, &fake);
    let mut hog = Helper::hog();
    let done = set_nice(&socket, 4, &NiceTarget::Pid(hog.pid())).unwrap();
    assert_eq!(done, format!("nice 4 pid {} weight 8", hog.pid()));
    hog.say(&format!("subscribe {} machine", socket.display()));
    let severity = |hog: &mut Helper| -> f64 {
        let reply = hog.say("severity");
        reply.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    assert_eq!(severity(&mut hog), 3600.0 / 8.0);
    let reminded: u64 = hog.say("wait 2500").parse().unwrap();
    assert!(reminded >= 1, "not reminded at S / 8 = 450 s, below S_max");
    assert_eq!(severity(&mut hog), 3600.0 / 8.0);
    // Free 0: S is the candidate age, 100 s; the niced process sees 12.5 s.
    fake.0.lock().unwrap().0 = 0;
    let woken: u64 = hog.say("wait 2000").parse().unwrap();
    assert!(woken >= 1, "not woken when S fell from 450 to 12.5");
    assert_eq!(severity(&mut hog), 12.5);
    // Renicing to -4 while subscribed: the same page shows 100 * 8.
    set_nice(&socket, -4, &NiceTarget::Pid(hog.pid())).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while severity(&mut hog) != 800.0 {
        assert!(
            Instant::now() < deadline,
            "the new nice did not reach the page"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("nice +4 told 450 s at S_max and 12.5 s at S 100 s; renice -4: told 800 s");
}

/// Bad `nice` requests, sent as raw lines: each is answered `error: <what was wrong>`, and
/// the daemon keeps serving.
#[test]
fn bad_nice_requests_are_refused_and_the_daemon_keeps_serving() {
    let dir = Scratch::new("bad");
    let socket = dir.0.join("memd.sock");
    let fake = Fake(Arc::new(Mutex::new((10 << 30, 100.0))));
    let _running = start_fake(&dir.0, &fake);
    let ask = |line: &str| {
        let mut s = UnixStream::connect(&socket).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(line.as_bytes()).unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        reply
    };
    let missing = u32::MAX >> 1;
    for (line, want) in [
        (
            "antsched-memd 1 nice 20 pid 1\n",
            "error: memory nice 20 is outside -20..=19\n".to_string(),
        ),
        (
            "antsched-memd 1 nice -21 pid 1\n",
            "error: memory nice -21 is outside -20..=19\n".into(),
        ),
        (
            &format!("antsched-memd 1 nice 5 pid {missing}\n"),
            format!("error: no process {missing}\n"),
        ),
        (
            "antsched-memd 1 nice 5 cgroup /etc\n",
            "error: cannot nice /etc: it is not a group under".into(),
        ),
        (
            "antsched-memd 1 nice 5 cgroup /no/such\n",
            "error: cannot nice the group /no/such".into(),
        ),
        (
            "antsched-memd 1 nice x pid 1\n",
            "error: nice \"x\" is not a whole number".into(),
        ),
        (
            "antsched-memd 1 nice 5 pid -3\n",
            "error: \"-3\" is not a process id".into(),
        ),
        (
            "antsched-memd 1 nice 5\n",
            "error: expected \"nice N pid PID\" or \"nice N cgroup PATH\", got \"nice 5\"".into(),
        ),
        (
            "antsched-memd 1 nice 99999999999999999999 pid 1\n",
            "error: nice \"99999999999999999999\" is not a whole number".into(),
        ),
    ] {
        let reply = ask(line);
        assert!(reply.starts_with(&want), "{line:?}: {reply:?}");
    }
    assert_eq!(list_domains(&socket).unwrap(), ["machine"]);
    let me = std::process::id();
    assert!(ask(&format!("antsched-memd 1 nice 0 pid {me}\n")).starts_with("ok nice 0 pid"));
}
