//! The channels for programs that hold no subscription: SIGMEM (a real-time signal with S in
//! its payload) and the systemd memory-pressure socket, on a daemon with a temporary socket
//! and a source the test sets.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use antsched_core::Nanos;
use antsched_mem::cost::PagingCost;
use antsched_mem::record::{Estimator, Observation};
use antsched_memd::{
    govern, list_domains, register_sigmem, sigmem, ClientError, Config, Daemon, Governor,
    ObservationSource, RunGroup, SourceError, Stopper, RUN_PARENT,
};

const GIB: u64 = 1 << 30;
const PATIENCE: Duration = Duration::from_secs(20);

#[derive(Clone)]
struct Fake(Arc<Mutex<f64>>);

impl Fake {
    /// Free 0: S is the candidate age the test sets.
    fn new(age: f64) -> Self {
        Self(Arc::new(Mutex::new(age)))
    }
    fn set(&self, age: f64) {
        *self.0.lock().unwrap() = age;
    }
}

impl ObservationSource for Fake {
    fn observe(&mut self, now: Nanos) -> Result<Observation, SourceError> {
        let age = *self.0.lock().unwrap();
        // S_max means plenty: free memory then, not a candidate age of an hour.
        let free = if age >= 3600.0 { GIB } else { 0 };
        Ok(Observation {
            free_bytes: free,
            total_bytes: GIB,
            candidate_age_s: age,
            paging: PagingCost {
                disk_service_s: 0.008,
                disk_queue: 1.0,
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
        Self::start_governing(config, source, None)
    }

    /// With `govern` requests under antsched's parent answered by `governor`.
    fn start_governing(
        config: Config,
        source: Box<dyn ObservationSource>,
        governor: Option<Governor>,
    ) -> Self {
        let socket = config.socket.clone();
        let mut daemon = Daemon::bind(config, source).unwrap();
        if let Some(g) = governor {
            daemon.allow_govern(RUN_PARENT, g);
        }
        let stopper = daemon.stopper();
        let thread = std::thread::spawn(move || daemon.run());
        Self {
            socket,
            stopper,
            thread: Some(thread),
        }
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

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!(
            "antsched-memd-channels-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Self(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn config(dir: &Path) -> Config {
    Config {
        interval: Duration::from_millis(50),
        log: false,
        ..Config::new(dir.join("memd.sock"))
    }
}

/// Kills and reaps a child when the test ends.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// ---- SIGMEM ---------------------------------------------------------------------------------

/// The env variable that makes this test binary the SIGMEM child: its value is the signal.
const CHILD: &str = "ANTSCHED_SIGMEM_CHILD";

static PIPE_W: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

extern "C" fn on_sigmem(_sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler; sival_int is at the
    // start of the union, the low half of sival_ptr on this little-endian target; write(2) is
    // async-signal-safe and 12 bytes to a pipe are written whole.
    unsafe {
        let info = &*info;
        let value = info.si_value().sival_ptr as usize as u32 as i32;
        let rec = [value, info.si_code, info.si_pid()];
        libc::write(
            PIPE_W.load(std::sync::atomic::Ordering::Relaxed),
            rec.as_ptr().cast(),
            12,
        );
    }
}

/// The child: waits for "install" on stdin, installs an SA_SIGINFO handler for the signal,
/// says "installed", and prints every signal it receives as `sigmem VALUE CODE PID`.
#[test]
fn sigmem_child() {
    let Ok(signo) = std::env::var(CHILD) else {
        return; // Only when run as the child.
    };
    let signo: i32 = signo.parse().unwrap();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    assert_eq!(line, "install\n");
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array; sigaction gets a zeroed struct
    // with the handler, SA_SIGINFO, and an empty mask.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        PIPE_W.store(fds[1], std::sync::atomic::Ordering::Relaxed);
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigmem as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(signo, &sa, std::ptr::null_mut()), 0);
    }
    println!("installed");
    std::io::stdout().flush().unwrap();
    loop {
        let mut rec = [0i32; 3];
        // SAFETY: reads at most 12 bytes into the 12-byte array.
        let n = unsafe { libc::read(fds[0], rec.as_mut_ptr().cast(), 12) };
        if n == 12 {
            println!("sigmem {} {} {}", rec[0], rec[1], rec[2]);
            std::io::stdout().flush().unwrap();
        } else if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            return;
        }
    }
}

/// Registered before it handles the signal, the child is not killed; once it does, it is
/// told S in ms at once (S < S_max), every second, and on halving; refused requests say why;
/// an unregistered or dead process is signalled no more and the daemon is unharmed.
#[test]
fn sigmem_carries_s_in_ms_on_the_notifier_rule() {
    if std::env::var(CHILD).is_ok() || std::env::var(ASKER).is_ok() {
        return;
    }
    let dir = TempDir::new("sigmem");
    let fake = Fake::new(400.0);
    let d = Running::start(config(&dir.0), Box::new(fake.clone()));
    let signo = sigmem::default_signal();
    let mut child = Reap(
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "sigmem_child", "--nocapture", "--test-threads=1"])
            .env(CHILD, signo.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id() as i32;
    register_sigmem(&d.socket, pid, signo, None).unwrap();
    // Pressure, and the child does not handle the signal yet: skipped, not killed.
    std::thread::sleep(Duration::from_millis(400));
    if let Some(status) = child.0.try_wait().unwrap() {
        let mut out = String::new();
        child
            .0
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        panic!("the child was killed: {status}: {out}");
    }

    let mut stdin = child.0.stdin.take().unwrap();
    stdin.write_all(b"install\n").unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, String)>();
    let out = BufReader::new(child.0.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            // libtest's "test sigmem_child ... " has no newline: "installed" ends that line.
            if line.starts_with("sigmem ") {
                let _ = tx.send((Instant::now(), line));
            } else if line.ends_with("installed") {
                let _ = tx.send((Instant::now(), "installed".into()));
            }
        }
    });
    let next = || rx.recv_timeout(PATIENCE).expect("no line from the child");
    assert_eq!(next().1, "installed");
    let expect = format!("sigmem 400000 -1 {}", std::process::id());
    let (t0, first) = next();
    assert_eq!(first, expect, "S 400 s in ms, SI_QUEUE, from the daemon");
    // The 1 s repeat.
    let (t1, again) = next();
    assert_eq!(again, expect);
    let gap = t1 - t0;
    assert!(
        gap >= Duration::from_millis(900) && gap < Duration::from_secs(3),
        "{gap:?}"
    );
    // Halving.
    fake.set(100.0);
    loop {
        let (_, line) = next();
        if line != expect {
            assert_eq!(line, format!("sigmem 100000 -1 {}", std::process::id()));
            break;
        }
    }
    println!("SIGMEM {signo}: 400000 ms, again after {gap:?}, 100000 ms on halving");

    // Refusals say why.
    let refused = |r: Result<(), ClientError>| match r {
        Err(ClientError::Refused { reason, .. }) => reason,
        other => panic!("not refused: {other:?}"),
    };
    let why = refused(register_sigmem(&d.socket, pid, 9, None));
    assert!(why.contains("signal 9 is not a real-time signal"), "{why}");
    let why = refused(register_sigmem(
        &d.socket,
        pid,
        signo,
        Some("/no/such/group"),
    ));
    assert!(why.contains("no domain"), "{why}");
    let mut gone = Command::new("true").spawn().unwrap();
    let gone_pid = gone.id() as i32;
    gone.wait().unwrap();
    let why = refused(register_sigmem(&d.socket, gone_pid, signo, None));
    assert!(why.contains(&format!("no process {gone_pid}")), "{why}");

    // Unregistered: silence, though the 1 s repeat is due.
    register_sigmem(&d.socket, pid, 0, None).unwrap();
    while rx.recv_timeout(Duration::from_millis(100)).is_ok() {}
    assert!(rx.recv_timeout(Duration::from_millis(1500)).is_err());

    // Registered again and then killed: dropped silently, the daemon serves on.
    register_sigmem(&d.socket, pid, signo, None).unwrap();
    assert!(rx.recv_timeout(PATIENCE).is_ok());
    drop(stdin);
    drop(child);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        list_domains(&d.socket).unwrap(),
        vec!["machine".to_string()]
    );
}

/// The env variable that makes this test binary a requester: `SOCKET PID`.
const ASKER: &str = "ANTSCHED_SIGMEM_ASKER";

/// The requester: asks the daemon to send SIGMEM to PID, and prints the answer.
#[test]
fn sigmem_asker() {
    let Ok(arg) = std::env::var(ASKER) else {
        return; // Only when run as the requester.
    };
    let (socket, pid) = arg.rsplit_once(' ').unwrap();
    let said = match register_sigmem(socket, pid.parse().unwrap(), sigmem::default_signal(), None) {
        Ok(()) => "ok".to_string(),
        Err(ClientError::Refused { reason, .. }) => format!("refused: {reason}"),
        Err(e) => format!("failed: {e}"),
    };
    println!("\nASKER {said}");
}

/// SO_PEERCRED: a requester that is not root may register only a process of its own uid.
/// Needs root (to run the requester as nobody); skips with the reason elsewhere.
#[test]
fn sigmem_is_refused_for_another_users_process() {
    use std::os::unix::process::CommandExt;
    if [CHILD, PRESSURE_CHILD, ASKER]
        .iter()
        .any(|v| std::env::var(v).is_ok())
    {
        return;
    }
    if !rustix::process::geteuid().is_root() {
        if std::env::var("ANTSCHED_REQUIRE_FUSE").as_deref() == Ok("1") {
            panic!("ANTSCHED_REQUIRE_FUSE=1 but the test cannot run: not root");
        }
        eprintln!("skipping: not root (the test runs its requester as nobody)");
        return;
    }
    let dir = TempDir::new("peercred");
    let d = Running::start(config(&dir.0), Box::new(Fake::new(400.0)));
    // Root's process (a sleep), and one of nobody's.
    let mut roots = Reap(Command::new("sleep").arg("30").spawn().unwrap());
    let mut nobodys = Reap(
        Command::new("sleep")
            .arg("30")
            .uid(65534)
            .gid(65534)
            .spawn()
            .unwrap(),
    );
    let ask = |pid: u32| {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "sigmem_asker", "--nocapture", "--test-threads=1"])
            .env(ASKER, format!("{} {pid}", d.socket.display()))
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .find_map(|l| l.strip_prefix("ASKER "))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("the requester said nothing: {text}"))
    };
    let refused = ask(roots.0.id());
    assert!(
        refused.starts_with("refused: sigmem: uid 65534 may not signal process"),
        "{refused}"
    );
    assert_eq!(ask(nobodys.0.id()), "ok");
    println!("nobody may not register root's process ({refused}); its own, yes");
    let _ = (roots.0.kill(), nobodys.0.kill());
}

// ---- the systemd memory-pressure socket -----------------------------------------------------

/// What sd-event does with `$MEMORY_PRESSURE_WATCH` naming a socket: connect, write the
/// decoded `$MEMORY_PRESSURE_WRITE`, then treat whatever becomes readable as one event,
/// reading and discarding it.
struct SdEventLike(UnixStream);

impl SdEventLike {
    fn connect(path: &Path) -> Self {
        let s = UnixStream::connect(path).unwrap();
        // systemd's default: 200 ms of `some` stall in a 2 s window, NUL-terminated (what
        // base64 "c29tZSAyMDAwMDAgMjAwMDAwMAA=" decodes to).
        (&s).write_all(b"some 200000 2000000\0").unwrap();
        Self(s)
    }

    /// Waits up to `within` for an event; reads and discards it. False on timeout.
    fn event(&self, within: Duration) -> bool {
        use rustix::event::{PollFd, PollFlags};
        let mut fds = [PollFd::new(&self.0, PollFlags::IN)];
        let ts = rustix::time::Timespec {
            tv_sec: within.as_secs() as i64,
            tv_nsec: i64::from(within.subsec_nanos()),
        };
        if rustix::event::poll(&mut fds, Some(&ts)).unwrap() == 0 {
            return false;
        }
        let mut buf = [0u8; 64];
        let n = (&self.0).read(&mut buf).unwrap();
        assert!(n > 0, "the daemon closed the connection");
        true
    }
}

#[test]
fn the_pressure_socket_speaks_systemds_protocol() {
    if std::env::var(CHILD).is_ok() || std::env::var(ASKER).is_ok() {
        return;
    }
    let dir = TempDir::new("pressure");
    let fake = Fake::new(3600.0);
    let pressure = dir.0.join("memory-pressure.sock");
    let cfg = Config {
        pressure_socket: Some(pressure.clone()),
        ..config(&dir.0)
    };
    let d = Running::start(cfg, Box::new(fake.clone()));
    let program = SdEventLike::connect(&pressure);
    // Plenty: nothing.
    assert!(!program.event(Duration::from_millis(400)));
    // Just below S_max, in the upper half: the Notifier's repeat is no event here.
    fake.set(3000.0);
    assert!(!program.event(Duration::from_millis(1500)));
    // Halved: an event at once, then one a second while S < S_max / 2.
    fake.set(1400.0);
    let t = Instant::now();
    assert!(program.event(PATIENCE));
    let first = t.elapsed();
    assert!(program.event(Duration::from_millis(1500)));
    assert!(program.event(Duration::from_millis(1500)));
    // Doubled: pressure eased, no event, and no repeat in the upper half.
    fake.set(2800.0);
    assert!(!program.event(Duration::from_millis(1500)));
    println!("pressure socket: event {first:?} after the halving, then every second");

    // A program that floods the socket is dropped alone; another that closes at once too.
    let flood = UnixStream::connect(&pressure).unwrap();
    let _ = (&flood).write_all(&[b'x'; 8192]);
    flood
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 16];
    // Closed with unread input, the connection may be reset instead of ended.
    match (&flood).read(&mut buf) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("not dropped: {other:?}"),
    }
    drop(UnixStream::connect(&pressure).unwrap());
    fake.set(1000.0);
    assert!(program.event(PATIENCE), "the good program is still told");
    drop(d);
    assert!(!pressure.exists(), "the socket is removed on stop");
}

/// The env variable that makes this test binary the pressure-socket child: the socket's path.
const PRESSURE_CHILD: &str = "ANTSCHED_PRESSURE_CHILD";

/// The child: waits for "go" on stdin (by then it is in the group), connects as sd-event
/// does, says "connected", and says "event" when one comes (or "timeout").
#[test]
fn pressure_child() {
    let Ok(path) = std::env::var(PRESSURE_CHILD) else {
        return; // Only when run as the child.
    };
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    assert_eq!(line, "go\n");
    let program = SdEventLike::connect(Path::new(&path));
    println!("\nconnected");
    std::io::stdout().flush().unwrap();
    let said = if program.event(PATIENCE) {
        "event"
    } else {
        "timeout"
    };
    println!("\n{said}");
    std::io::stdout().flush().unwrap();
}

/// A program in a governed group hears its group's decisions on the pressure socket (found
/// from its pid), not the machine's: the group's S halves while the machine's stays at S_max.
/// Root and the v1 memory controller; skips with the reason elsewhere, and fails instead with
/// ANTSCHED_REQUIRE_FUSE=1.
#[test]
fn the_pressure_socket_tells_a_program_in_a_group_its_groups_decisions() {
    if [CHILD, PRESSURE_CHILD, ASKER]
        .iter()
        .any(|v| std::env::var(v).is_ok())
    {
        return;
    }
    let why = if !Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").is_file() {
        Some("no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory")
    } else if !rustix::process::geteuid().is_root() {
        Some("not root: cannot make a memory cgroup")
    } else {
        None
    };
    if let Some(why) = why {
        if std::env::var("ANTSCHED_REQUIRE_FUSE").as_deref() == Ok("1") {
            panic!("ANTSCHED_REQUIRE_FUSE=1 but the test cannot run: {why}");
        }
        eprintln!("skipping: {why}");
        return;
    }
    let dir = TempDir::new("pressure-group");
    let group = RunGroup::create(
        Path::new(RUN_PARENT),
        &format!("channels-{}", std::process::id()),
        None,
    )
    .unwrap();
    let group_fake = Fake::new(3600.0);
    let pressure = dir.0.join("memory-pressure.sock");
    let cfg = Config {
        pressure_socket: Some(pressure.clone()),
        ..config(&dir.0)
    };
    let made = group_fake.clone();
    let d = Running::start_governing(
        cfg,
        Box::new(Fake::new(3600.0)),
        Some(Box::new(move |_: &Path| {
            Ok(Box::new(made.clone()) as Box<dyn ObservationSource>)
        })),
    );
    let name = govern(&d.socket, group.path()).unwrap();
    let mut child = Reap(
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "pressure_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(PRESSURE_CHILD, &pressure)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    group.add(child.0.id()).unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let out = BufReader::new(child.0.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let said = |what: &str| loop {
        let line = rx.recv_timeout(PATIENCE).expect("the child said nothing");
        if ["connected", "event", "timeout"].contains(&line.as_str()) {
            assert_eq!(line, what);
            return;
        }
    };
    // This process is not in the group: it hears the machine.
    let outsider = SdEventLike::connect(&pressure);
    child.0.stdin.take().unwrap().write_all(b"go\n").unwrap();
    said("connected");
    group_fake.set(1400.0);
    said("event");
    assert!(
        !outsider.event(Duration::from_millis(500)),
        "the machine's program heard the group's halving"
    );
    println!("the program in {name} heard its group's halving; one outside it did not");
    drop(child);
    drop(d);
    group.remove(Duration::from_secs(5)).unwrap();
}
