//! The daemon's CPU at the 1 s tick with 100 subscribers and 20 governed groups, under
//! pressure so that every subscriber is notified every second (issue 14: under 0.5% of a
//! core).
//!
//! Not a criterion benchmark: the quantity is the CPU time of one long-running thread over
//! many real ticks, not the time of a repeatable call. The daemon runs in a thread of this
//! process on the real machine: the machine domain from `/proc`, and 20 empty cgroup v1
//! memory groups made for the run (`/sys/fs/cgroup/memory/antsched/bench-<pid>-<n>`, 256 MiB
//! each, with their cgroup2 twins for PSI triggers) and removed at the end, also on Ctrl-C
//! or SIGTERM. Each group's source reads and parses its files every tick as in production
//! (`CgroupSource`), then pins free memory at 30% of tau and the candidate age at a minute:
//! S ≈ 205 s, below S_max and steady, so the 1 s repeat goes to every subscriber every
//! second. Where groups cannot be made (not root, no v1 memory controller), the 20 domains
//! read the machine's `/proc` instead, and the run says so. 100 subscribers, 5 per group,
//! each a thread blocked in `Client::wait`.
//!
//! The daemon thread's CPU time comes from `/proc/self/task/<tid>/schedstat` (nanoseconds
//! on a CPU), over `ANTSCHED_TICK_CPU_SECONDS` (default 20 s) after a warm-up in which
//! every subscriber has been notified.
//!
//! `cargo bench -p antsched-memd --bench tick_cpu`. Run without `--bench` (as `cargo test
//! --benches` does), it measures 2 s and passes no verdict.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use antsched_core::Nanos;
use antsched_mem::kernel::Pressure;
use antsched_mem::record::Observation;
use antsched_mem::SeverityConfig;
use antsched_memd::{
    CgroupSource, Config, Daemon, DiskChoice, ObservationSource, ProcSource, RunGroup, SourceError,
    RUN_PARENT,
};

const GROUPS: usize = 20;
const SUBSCRIBERS: usize = 100;
const BUDGET_PERCENT: f64 = 0.5;

/// A real domain's source, its reading and parsing unchanged, with free memory and the
/// candidate age pinned so that the domain is under steady pressure.
struct UnderPressure(Box<dyn ObservationSource>);

impl ObservationSource for UnderPressure {
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
        let mut obs = self.0.observe(now)?;
        obs.free_bytes = SeverityConfig::default().tau(obs.total_bytes) * 3 / 10;
        obs.candidate_age_s = 60.0;
        Ok(obs)
    }

    fn describe(&self) -> String {
        self.0.describe()
    }

    fn pressure_file(&self) -> Option<PathBuf> {
        self.0.pressure_file()
    }

    fn pressure(&self) -> Option<Pressure> {
        self.0.pressure()
    }
}

/// Nanoseconds the thread `tid` of this process has spent on a CPU.
fn thread_cpu_ns(tid: i32) -> u64 {
    let path = format!("/proc/self/task/{tid}/schedstat");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.split_whitespace()
        .next()
        .and_then(|f| f.parse().ok())
        .unwrap_or_else(|| panic!("{path}: no run time in {text:?}"))
}

/// Blocks SIGINT, SIGTERM and SIGHUP in this thread and the ones it starts; a thread of its
/// own takes them and raises `interrupted`, so that the run ends through its cleanup (the
/// groups removed) instead of dying with them in place.
fn catch_signals(interrupted: Arc<AtomicBool>) {
    // SAFETY: sigset operations on a local set; pthread_sigmask and sigwait on valid sets.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        std::thread::spawn(move || {
            let mut sig = 0;
            while libc::sigwait(&set, &mut sig) != 0 {}
            eprintln!("tick_cpu: signal {sig}: stopping and removing the groups");
            interrupted.store(true, Ordering::SeqCst);
        });
    }
}

/// Sleeps `d`, or less if interrupted. Returns false if interrupted.
fn sleep_unless(interrupted: &AtomicBool, d: Duration) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if interrupted.load(Ordering::SeqCst) {
            return false;
        }
        std::thread::sleep(
            Duration::from_millis(50).min(end.saturating_duration_since(Instant::now())),
        );
    }
    !interrupted.load(Ordering::SeqCst)
}

/// The domains to govern, each a name and its source.
type Sources = Vec<(String, Box<dyn ObservationSource>)>;

/// The 20 domains: real groups where they can be made (returned, to be removed at the end),
/// else the machine's `/proc` again; and a line that says which.
fn domains(disk: &str) -> (Vec<RunGroup>, Sources, String) {
    let mut groups = Vec::new();
    let mut sources: Sources = Vec::new();
    let why_not = if !Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").is_file() {
        Some("no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory".to_string())
    // SAFETY: geteuid has no preconditions.
    } else if unsafe { libc::geteuid() } != 0 {
        Some("not root: cannot make memory cgroups".to_string())
    } else {
        None
    };
    if why_not.is_none() {
        for i in 0..GROUPS {
            let name = format!("bench-{}-{i}", std::process::id());
            let g = RunGroup::create(Path::new(RUN_PARENT), &name, Some(256 << 20))
                .unwrap_or_else(|e| panic!("cannot make a group for the bench: {e}"));
            let source = CgroupSource::on_this_machine(g.path(), disk)
                .unwrap_or_else(|e| panic!("{}: {e}", g.path().display()));
            sources.push((
                source.dir().display().to_string(),
                Box::new(UnderPressure(Box::new(source))),
            ));
            groups.push(g);
        }
        let twins = groups.iter().filter(|g| g.twin().is_some()).count();
        let what = format!(
            "{GROUPS} empty v1 memory groups under {RUN_PARENT} ({twins} with a cgroup2 twin \
             for PSI)"
        );
        return (groups, sources, what);
    }
    for i in 0..GROUPS {
        let source = ProcSource::new("/proc", DiskChoice::Named(disk.to_string()))
            .unwrap_or_else(|e| panic!("/proc: {e}"));
        sources.push((
            format!("proc-{i}"),
            Box::new(UnderPressure(Box::new(source))),
        ));
    }
    let what = format!(
        "{GROUPS} domains reading /proc ({}; no groups made)",
        why_not.unwrap_or_default()
    );
    (groups, sources, what)
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let seconds: f64 = match std::env::var("ANTSCHED_TICK_CPU_SECONDS") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("ANTSCHED_TICK_CPU_SECONDS={s:?}: not a number")),
        Err(_) if full => 20.0,
        Err(_) => 2.0,
    };
    let interrupted = Arc::new(AtomicBool::new(false));
    catch_signals(interrupted.clone());

    let machine = ProcSource::new("/proc", DiskChoice::Root).expect("the machine's /proc");
    let disk = machine.disk().to_string();
    let (groups, sources, what) = domains(&disk);
    let dir = std::env::temp_dir().join(format!("antsched-tick-cpu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let socket = dir.join("memd.sock");
    let config = Config {
        // The thesis's tick, the daemon's default.
        interval: Duration::from_secs(1),
        // The per-minute summary and tier changes would go to stderr; the bench's output
        // stays readable.
        log: false,
        ..Config::new(&socket)
    };
    let mut daemon = Daemon::bind(config, Box::new(machine)).expect("the daemon binds");
    let mut names = Vec::new();
    for (name, source) in sources {
        daemon
            .add_domain(name.clone(), source)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        names.push(name);
    }
    let stopper = daemon.stopper();
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let running = std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        let _ = tid_tx.send(unsafe { libc::gettid() });
        daemon.run()
    });
    let tid = tid_rx.recv().expect("the daemon thread's id");

    // The subscribers: 5 per group, each a thread blocked in wait, counting notifications.
    let notified = Arc::new(AtomicU64::new(0));
    let told_once = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut subscribers = Vec::new();
    for i in 0..SUBSCRIBERS {
        let client = antsched_memd::connect_domain(&socket, &names[i % names.len()])
            .unwrap_or_else(|e| panic!("subscriber {i}: {e}"));
        let (notified, told_once, stop) = (notified.clone(), told_once.clone(), stop.clone());
        subscribers.push(std::thread::spawn(move || {
            let mut first = true;
            while !stop.load(Ordering::Relaxed) {
                let n = client.wait(Some(Duration::from_millis(200))).expect("wait");
                notified.fetch_add(n, Ordering::Relaxed);
                if n > 0 && std::mem::take(&mut first) {
                    told_once.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }

    // Warm-up: every subscriber notified once (its first notification comes at once: S is
    // below S_max), then a tick more.
    let warm = Instant::now();
    while told_once.load(Ordering::Relaxed) < SUBSCRIBERS as u64
        && warm.elapsed() < Duration::from_secs(10)
        && !interrupted.load(Ordering::SeqCst)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let warmed = told_once.load(Ordering::Relaxed);
    let mut measured = None;
    if sleep_unless(&interrupted, Duration::from_secs(1)) {
        let (cpu0, n0, t0) = (
            thread_cpu_ns(tid),
            notified.load(Ordering::Relaxed),
            Instant::now(),
        );
        let completed = sleep_unless(&interrupted, Duration::from_secs_f64(seconds));
        let (cpu1, n1, wall) = (
            thread_cpu_ns(tid),
            notified.load(Ordering::Relaxed),
            t0.elapsed(),
        );
        if completed {
            measured = Some((cpu1 - cpu0, n1 - n0, wall));
        }
    }

    stop.store(true, Ordering::Relaxed);
    for s in subscribers {
        let _ = s.join();
    }
    stopper.stop();
    let result = running.join().expect("the daemon thread");
    let removed = groups.len();
    for g in groups {
        if let Err(e) = g.remove(Duration::from_secs(5)) {
            eprintln!("tick_cpu: {e}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = result {
        panic!("the daemon stopped with an error: {e}");
    }
    println!(
        "tick_cpu: the daemon at a 1 s tick, the machine and {what}, {SUBSCRIBERS} \
         subscribers ({warmed} notified in the warm-up); {removed} groups removed"
    );
    let Some((cpu_ns, notifications, wall)) = measured else {
        println!("tick_cpu: interrupted before the measurement ended; no figure");
        std::process::exit(130);
    };
    let percent = cpu_ns as f64 / wall.as_nanos() as f64 * 100.0;
    let ticks = wall.as_secs_f64();
    println!(
        "tick_cpu: over {:.1} s, the daemon thread used {:.1} ms of CPU: {:.3}% of a core \
         ({:.0} us per tick), {} notifications ({:.1} per second)",
        wall.as_secs_f64(),
        cpu_ns as f64 / 1e6,
        percent,
        cpu_ns as f64 / 1e3 / ticks,
        notifications,
        notifications as f64 / wall.as_secs_f64(),
    );
    let rate = notifications as f64 / wall.as_secs_f64();
    if full && rate < 0.9 * SUBSCRIBERS as f64 {
        println!(
            "tick_cpu: not every subscriber was notified every second ({rate:.1} per \
             second): the figure is not the one asked for"
        );
        std::process::exit(1);
    }
    if full {
        if percent < BUDGET_PERCENT {
            println!("tick_cpu: under the budget of {BUDGET_PERCENT}% of a core");
        } else {
            println!("tick_cpu: OVER the budget of {BUDGET_PERCENT}% of a core");
            std::process::exit(1);
        }
    }
}
