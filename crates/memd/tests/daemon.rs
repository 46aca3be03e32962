//! The daemon on a temporary socket, driven by a source the test controls (deterministic) or
//! by the real `/proc`, with clients that behave and clients that do not. No timed assertion
//! other than generous bounds on waits.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use antsched_core::Nanos;
use antsched_mem::cost::PagingCost;
use antsched_mem::record::{Estimator, Observation};
use antsched_mem::{SeverityConfig, Tier};
use antsched_memd::{
    connect, ClientError, Config, Daemon, DiskChoice, ObservationSource, ProcSource, SourceError,
    Stopper,
};

/// Long enough for any loaded machine; the waits end as soon as the event comes.
const PATIENCE: Duration = Duration::from_secs(20);

/// Removes a test's directory when the test ends (a failing test's stays, for a look).
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("antsched-memd-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A domain the test sets: free bytes, total bytes and the candidate age.
#[derive(Clone)]
struct Fake(Arc<Mutex<(u64, u64, f64)>>);

impl Fake {
    fn new(free: u64, total: u64, age: f64) -> Self {
        Self(Arc::new(Mutex::new((free, total, age))))
    }
    fn set(&self, free: u64, total: u64, age: f64) {
        *self.0.lock().unwrap() = (free, total, age);
    }
    /// From now on every observation fails (as a group's does once it is removed).
    fn fail(&self) {
        self.set(0, 0, 0.0);
    }
}

impl ObservationSource for Fake {
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
        let (free, total, age) = *self.0.lock().unwrap();
        if total == 0 {
            return Err(SourceError::Other("the domain is gone".into()));
        }
        Ok(Observation {
            free_bytes: free,
            total_bytes: total,
            candidate_age_s: age,
            paging: PagingCost {
                disk_service_s: 0.008,
                disk_queue: 12.0,
            },
            estimator: Estimator::Exact,
            time: now,
        })
    }
}

struct Running {
    socket: PathBuf,
    stopper: Stopper,
    thread: Option<JoinHandle<Result<(), antsched_memd::Error>>>,
}

impl Running {
    fn start(config: Config, source: Box<dyn ObservationSource>) -> Self {
        let socket = config.socket.clone();
        let mut daemon = Daemon::bind(config, source).unwrap();
        let stopper = daemon.stopper();
        let thread = std::thread::spawn(move || daemon.run());
        Self {
            socket,
            stopper,
            thread: Some(thread),
        }
    }

    /// Stops the daemon and returns what its loop returned.
    fn stop(mut self) -> Result<(), antsched_memd::Error> {
        self.stopper.stop();
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stopper.stop();
            let _ = t.join();
        }
    }
}

fn config(dir: &Path) -> Config {
    Config {
        interval: Duration::from_millis(50),
        handshake_timeout: Duration::from_millis(300),
        log: false,
        ..Config::new(dir.join("memd.sock"))
    }
}

/// Reads what the daemon says to a raw connection until it closes it.
fn read_to_close(mut s: &UnixStream) -> String {
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// The real machine: the record a client reads from the page has the DESIGN keys and sane
/// values.
#[test]
fn a_client_reads_a_sane_record_of_this_machine() {
    let dir = temp_dir("real");
    let _cleanup = Cleanup(dir.clone());
    let source = ProcSource::new("/proc", DiskChoice::Root).unwrap();
    let d = Running::start(config(&dir), Box::new(source));
    let client = connect(&d.socket).unwrap();
    let r = client.current();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let total = antsched_mem::kernel::parse_meminfo(&meminfo)
        .unwrap()
        .total_bytes()
        .unwrap();
    let c = SeverityConfig::default();
    assert!(r.free_bytes <= total, "{r:?}");
    assert_eq!(r.tau_bytes, c.tau(total));
    assert!((c.s_min..=c.s_max).contains(&r.severity_s), "{r:?}");
    assert!((c.s_min..=c.s_max).contains(&r.candidate_age_s), "{r:?}");
    assert_eq!(r.estimator, Estimator::Turnover);
    assert!(r.disk_service_ms >= 0.0 && r.disk_queue >= 0.0, "{r:?}");
    assert!(r.time > 0 && r.time <= antsched_memd::monotonic_ns());
    let json = serde_json::to_value(r).unwrap();
    for key in antsched_mem::record::KEYS {
        assert!(json.get(key).is_some_and(|v| !v.is_null()), "{key}: {json}");
    }
    assert_eq!(json["estimator"], "turnover");
    // The page moves on with the ticks, read without asking the daemon.
    let seq = client.sequence();
    let deadline = std::time::Instant::now() + PATIENCE;
    while client.sequence() == seq {
        assert!(std::time::Instant::now() < deadline, "no new record");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(client.current().time > r.time);
    d.stop().unwrap();
    assert!(
        !dir.join("memd.sock").exists(),
        "the socket is removed on stop"
    );
}

/// The eventfd: a client is woken when S < S_max (at once, since it starts out told S_max),
/// every second after, and when S halves; the record it then reads says why.
#[test]
fn a_client_is_woken_under_pressure_and_on_halving() {
    let dir = temp_dir("wake");
    let _cleanup = Cleanup(dir.clone());
    const GIB: u64 = 1 << 30;
    // Free 0: S is the candidate age, 400 s.
    let fake = Fake::new(0, GIB, 400.0);
    let d = Running::start(config(&dir), Box::new(fake.clone()));
    let client = connect(&d.socket).unwrap();
    let r = client.current();
    assert_eq!((r.severity_s, r.tier), (400.0, Tier::Paging));
    assert_eq!(r.estimator, Estimator::Exact);
    // Eq. 4.2 with the queue counted (12 > 10).
    assert!((r.paging_cost - 2.0 * 0.008 * 12.0 / 400.0).abs() < 1e-12);
    assert!(client.wait(Some(PATIENCE)).unwrap() >= 1, "told at once");
    // The 1 s repeat while S < S_max.
    assert!(client.wait(Some(PATIENCE)).unwrap() >= 1, "repeat");
    // Halving.
    fake.set(0, GIB, 100.0);
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        assert!(client.wait(Some(PATIENCE)).unwrap() >= 1);
        if client.current().severity_s == 100.0 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never saw S halve");
    }
    // Back to plenty: told once (doubling), then nothing while S = S_max.
    fake.set(GIB, GIB, 100.0);
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        assert!(client.wait(Some(PATIENCE)).unwrap() >= 1);
        if client.current().tier == Tier::Plenty {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never saw plenty");
    }
    // A doubling may already be pending from the same tick; after that, silence.
    client.wait(Some(Duration::from_millis(200))).unwrap();
    assert_eq!(client.wait(Some(Duration::from_millis(1500))).unwrap(), 0);
    d.stop().unwrap();
}

/// Repeats due close together go out together: a client that subscribed 20 ms after another
/// (so with a repeat of its own phase) is told with the other in the next round, and in the
/// one after, so that the daemon wakes once for both (with 100 subscribers, once a second
/// instead of a hundred times).
#[test]
fn repeats_due_close_together_go_out_together() {
    let dir = temp_dir("together");
    let _cleanup = Cleanup(dir.clone());
    const GIB: u64 = 1 << 30;
    // No tick during the test: only the repeats wake the loop.
    let config = Config {
        interval: Duration::from_secs(60),
        ..config(&dir)
    };
    let d = Running::start(config, Box::new(Fake::new(0, GIB, 400.0)));
    let a = connect(&d.socket).unwrap();
    assert_eq!(a.wait(Some(PATIENCE)).unwrap(), 1, "a is told at once");
    std::thread::sleep(Duration::from_millis(20));
    let b = connect(&d.socket).unwrap();
    assert_eq!(b.wait(Some(PATIENCE)).unwrap(), 1, "b is told at once");
    for round in 1..=2 {
        assert_eq!(a.wait(Some(PATIENCE)).unwrap(), 1, "a's repeat {round}");
        // Signalled in the same round as a, microseconds apart; alone, 20 ms later.
        assert_eq!(
            b.wait(Some(Duration::from_millis(15))).unwrap(),
            1,
            "b's repeat {round} did not come with a's"
        );
    }
    d.stop().unwrap();
}

/// `--repeat`: a daemon that scales S_max down reminds at the period it is given, not every
/// second: five repeats, each about 100 ms after the last (never earlier than the slack of a
/// twentieth allows; late only by what the machine's scheduling adds).
#[test]
fn the_repeat_runs_at_the_period_configured() {
    let dir = temp_dir("repeat");
    let _cleanup = Cleanup(dir.clone());
    const GIB: u64 = 1 << 30;
    // No tick during the test: only the repeats wake the loop.
    let config = Config {
        interval: Duration::from_secs(60),
        repeat: Duration::from_millis(100),
        ..config(&dir)
    };
    let d = Running::start(config, Box::new(Fake::new(0, GIB, 400.0)));
    let a = connect(&d.socket).unwrap();
    assert_eq!(a.wait(Some(PATIENCE)).unwrap(), 1, "told at once");
    let mut last = std::time::Instant::now();
    for round in 1..=5 {
        assert_eq!(a.wait(Some(PATIENCE)).unwrap(), 1, "repeat {round}");
        let gap = last.elapsed();
        last = std::time::Instant::now();
        assert!(
            gap >= Duration::from_millis(90) && gap <= Duration::from_millis(500),
            "repeat {round} came {gap:?} after the one before"
        );
    }
    d.stop().unwrap();
}

/// Clients that send garbage, say nothing, talk after the hello or vanish are dropped one by
/// one with a reason; a well-behaved client is served all along.
#[test]
fn misbehaving_clients_do_not_harm_the_daemon_or_others() {
    let dir = temp_dir("bad");
    let _cleanup = Cleanup(dir.clone());
    let fake = Fake::new(0, 1 << 30, 300.0);
    let d = Running::start(config(&dir), Box::new(fake.clone()));
    let good = connect(&d.socket).unwrap();
    assert!(good.wait(Some(PATIENCE)).unwrap() >= 1);

    // Garbage instead of the hello.
    let mut g = UnixStream::connect(&d.socket).unwrap();
    g.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let said = read_to_close(&g);
    assert!(
        said.starts_with("error: expected the hello \"antsched-memd 1\\n\", got \"GET / HTTP/1.1"),
        "{said}"
    );

    // A long line without a newline.
    let mut g = UnixStream::connect(&d.socket).unwrap();
    g.write_all(&[b'x'; 300]).unwrap();
    assert!(read_to_close(&g).starts_with("error: no hello line in the first 128 bytes"));

    // Silence: dropped after the handshake timeout.
    let silent = UnixStream::connect(&d.socket).unwrap();
    assert_eq!(read_to_close(&silent), "error: no hello within 300ms\n");

    // Closing at once, and closing half-way through the hello.
    drop(UnixStream::connect(&d.socket).unwrap());
    let mut half = UnixStream::connect(&d.socket).unwrap();
    half.write_all(b"antsched-").unwrap();
    drop(half);

    // Talking after the hello: the client library's connection, then garbage on a raw one.
    let mut chatty = UnixStream::connect(&d.socket).unwrap();
    chatty.write_all(antsched_memd::HELLO.as_bytes()).unwrap();
    let mut ok = [0u8; 5];
    chatty.read_exact(&mut ok).unwrap();
    assert_eq!(&ok, b"ok 1\n");
    chatty.write_all(b"more\n").unwrap();
    assert!(read_to_close(&chatty).starts_with("error: unexpected message after the hello"));

    // A subscriber that never reads its eventfd nor closes: many ticks pass.
    let lazy = connect(&d.socket).unwrap();

    // The good client is still served: a new record and a wake-up.
    fake.set(0, 1 << 30, 75.0);
    let deadline = std::time::Instant::now() + PATIENCE;
    while good.current().severity_s != 75.0 {
        assert!(good.wait(Some(PATIENCE)).unwrap() >= 1);
        assert!(std::time::Instant::now() < deadline);
    }
    // And a new one connects.
    assert_eq!(connect(&d.socket).unwrap().current().severity_s, 75.0);
    drop(lazy);
    d.stop().unwrap();
}

/// Too many clients: the one over the limit is refused with a reason.
#[test]
fn a_client_over_the_limit_is_refused() {
    let dir = temp_dir("limit");
    let _cleanup = Cleanup(dir.clone());
    let cfg = Config {
        max_clients: 1,
        ..config(&dir)
    };
    let d = Running::start(cfg, Box::new(Fake::new(0, 1 << 30, 300.0)));
    let first = connect(&d.socket).unwrap();
    match connect(&d.socket) {
        Err(ClientError::Refused { reason, .. }) => assert_eq!(reason, "too many clients (1)"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a second client was served"),
    }
    drop(first);
    d.stop().unwrap();
}

#[test]
fn bad_socket_paths_are_clear_errors() {
    let dir = temp_dir("paths");
    let _cleanup = Cleanup(dir.clone());
    let missing = dir.join("no/such/dir/memd.sock");
    let e = Daemon::bind(
        Config::new(&missing),
        Box::new(Fake::new(0, 1 << 30, 300.0)),
    )
    .err()
    .unwrap();
    assert_eq!(
        e.to_string(),
        format!(
            "cannot make the socket {}: the directory {} does not exist \
             (create it, or pass another path with --socket)",
            missing.display(),
            dir.join("no/such/dir").display()
        )
    );
    // A file that is not a socket is never replaced.
    let file = dir.join("file");
    std::fs::write(&file, "keep me").unwrap();
    let e = Daemon::bind(Config::new(&file), Box::new(Fake::new(0, 1, 1.0)))
        .err()
        .unwrap();
    assert!(e.to_string().contains("exists and is not a socket"), "{e}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    // A live daemon's socket is not taken over; a stale one is.
    let d = Running::start(config(&dir), Box::new(Fake::new(0, 1, 1.0)));
    let e = Daemon::bind(config(&dir), Box::new(Fake::new(0, 1, 1.0)))
        .err()
        .unwrap();
    assert!(
        e.to_string().starts_with("another daemon is serving"),
        "{e}"
    );
    d.stop().unwrap();
    let stale = std::os::unix::net::UnixListener::bind(dir.join("memd.sock")).unwrap();
    drop(stale);
    let d = Running::start(config(&dir), Box::new(Fake::new(0, 1 << 30, 300.0)));
    connect(&d.socket).unwrap();
    d.stop().unwrap();
    // No daemon: the client says so.
    let e = connect(dir.join("memd.sock")).err().unwrap();
    assert!(e.to_string().contains("is antsched memd running?"), "{e}");
}

/// A source that fails after its first observation: the daemon logs it and keeps the last
/// record.
#[test]
fn a_failing_source_keeps_the_last_record() {
    struct Flaky(u32);
    impl ObservationSource for Flaky {
        fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
            self.0 += 1;
            if self.0 > 1 {
                return Err(SourceError::Other("the kernel went away".into()));
            }
            Fake::new(0, 1 << 30, 200.0).observe(now)
        }
    }
    let dir = temp_dir("flaky");
    let _cleanup = Cleanup(dir.clone());
    let d = Running::start(config(&dir), Box::new(Flaky(0)));
    let c = connect(&d.socket).unwrap();
    assert!(c.wait(Some(PATIENCE)).unwrap() >= 1);
    assert!(c.wait(Some(PATIENCE)).unwrap() >= 1, "repeats go on");
    assert_eq!(c.current().severity_s, 200.0);
    d.stop().unwrap();
}

/// ProcSource over a copy of this machine's files: two snapshots 1.084 s apart.
#[test]
fn proc_source_reads_captured_files() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mem/fixtures/linux-6.18");
    let proc = temp_dir("proc");
    let _cleanup = Cleanup(proc.clone());
    std::fs::create_dir_all(proc.join("pressure")).unwrap();
    let put = |from: &str, to: &str| std::fs::copy(fixtures.join(from), proc.join(to)).unwrap();
    put("meminfo", "meminfo");
    put("vmstat.0", "vmstat");
    put("diskstats.0", "diskstats");
    put("pressure-memory", "pressure/memory");
    let mut s = ProcSource::new(&proc, DiskChoice::Named("vda".into())).unwrap();
    assert_eq!(s.disk(), "vda");
    let a = s.observe(1_000_000_000).unwrap();
    assert_eq!(a.total_bytes, 24_684_084 * 1024);
    assert_eq!(a.free_bytes, 20_896_680 * 1024);
    assert_eq!(a.candidate_age_s, f64::INFINITY);
    assert_eq!(a.estimator, Estimator::Turnover);
    put("vmstat.1", "vmstat");
    put("diskstats.1", "diskstats");
    let b = s.observe(2_084_000_000).unwrap();
    assert!(
        (b.paging.disk_service_s * 1e3 - 44.0 / 377.0).abs() < 1e-12,
        "{b:?}"
    );
    assert!(
        (b.paging.disk_queue - 1168.0 / 1084.0).abs() < 1e-9,
        "{b:?}"
    );
    assert!(s.describe().contains("disk vda"), "{}", s.describe());

    let e = ProcSource::new(&proc, DiskChoice::Named("sdz".into()))
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .starts_with("no disk named \"sdz\" in /proc/diskstats (there are: loop0,"),
        "{e}"
    );
    std::fs::write(proc.join("meminfo"), "MemTotal: lots\n").unwrap();
    let e = ProcSource::new(&proc, DiskChoice::Root).err().unwrap();
    assert!(e.to_string().starts_with("/proc/meminfo line 1:"), "{e}");
    put("meminfo", "meminfo");
    std::fs::remove_file(proc.join("vmstat")).unwrap();
    let e = ProcSource::new(&proc, DiskChoice::Root).err().unwrap();
    assert!(e.to_string().starts_with("cannot read"), "{e}");
}

/// Domains: `govern` adds a directory under the allowed parent (refusing anything else and
/// malformed requests, the daemon serving on), `list` names it, a hello subscribes to it and
/// reads its own record, and a requested domain whose directory goes away is forgotten.
#[test]
fn domains_are_governed_listed_subscribed_and_forgotten() {
    let dir = temp_dir("domains");
    let _cleanup = Cleanup(dir.clone());
    let parent = dir.join("parent");
    std::fs::create_dir_all(parent.join("g1")).unwrap();
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let machine = Fake::new(10 << 30, 10 << 30, 3600.0);
    let group = Fake::new(0, 256 << 20, 40.0);
    let mut daemon = Daemon::bind(config(&dir), Box::new(machine)).unwrap();
    let made = group.clone();
    daemon.allow_govern(
        &parent,
        Box::new(move |_: &Path| Ok(Box::new(made.clone()) as _)),
    );
    let socket = dir.join("memd.sock");
    let stopper = daemon.stopper();
    let thread = std::thread::spawn(move || daemon.run());
    let _running = Running {
        socket: socket.clone(),
        stopper,
        thread: Some(thread),
    };

    for (path, why) in [
        (outside.clone(), "not a group under"),
        (parent.clone(), "not a group under"),
        (parent.join("g1/../../outside"), "not a group under"),
        (parent.join("missing"), "No such file"),
    ] {
        let e = antsched_memd::govern(&socket, &path)
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{}: {e}", path.display());
    }
    let mut s = UnixStream::connect(&socket).unwrap();
    s.write_all(b"antsched-memd 1 reboot\n").unwrap();
    assert!(read_to_close(&s).starts_with("error: unknown request \"reboot\""));

    let name = antsched_memd::govern(&socket, &parent.join("g1")).unwrap();
    let g1 = parent.join("g1").canonicalize().unwrap();
    assert_eq!(name, g1.display().to_string());
    assert_eq!(
        antsched_memd::list_domains(&socket).unwrap(),
        ["machine", name.as_str()]
    );
    let c = antsched_memd::connect_domain(&socket, &name).unwrap();
    let r = c.current();
    assert_eq!(
        (r.free_bytes, r.severity_s, r.tier),
        (0, 40.0, Tier::Paging)
    );
    assert_eq!(connect(&socket).unwrap().current().tier, Tier::Plenty);
    let e = antsched_memd::connect_domain(&socket, "nope")
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .contains("no domain \"nope\" (governed: machine, "),
        "{e}"
    );

    // The directory goes, its source fails: the domain is forgotten and its client dropped.
    group.fail();
    std::fs::remove_dir(&g1).unwrap();
    let deadline = std::time::Instant::now() + PATIENCE;
    while antsched_memd::list_domains(&socket).unwrap().len() != 1 {
        assert!(std::time::Instant::now() < deadline, "not forgotten");
        std::thread::sleep(Duration::from_millis(20));
    }
}
