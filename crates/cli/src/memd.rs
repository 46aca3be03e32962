//! `antsched memd`: the severity service in the foreground, and `antsched mem status`, which
//! asks it for the record. The daemon and the client are `antsched-memd`; this is argument
//! parsing, signals and printing.

use std::path::PathBuf;
use std::time::Duration;

use antsched_mem::record::SeverityRecord;
use antsched_memd::{CgroupSource, Config, Daemon, DiskChoice, ProcSource, RUN_PARENT};
use anyhow::Context;

#[derive(clap::Args)]
pub struct Args {
    /// The Unix socket clients connect to. The default's directory is created if missing;
    /// another path's directory must exist.
    #[arg(long, value_name = "PATH", default_value = antsched_memd::DEFAULT_SOCKET)]
    socket: PathBuf,
    /// How often the machine is observed (a duration with a unit: 1s, 250ms).
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    interval: String,
    /// How often a subscriber whose S is below S_max is reminded of it (the thesis's second;
    /// scale it with --s-max).
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    repeat: String,
    /// The device whose /proc/diskstats line gives the paging cost (default: the root file
    /// system's).
    #[arg(long, value_name = "NAME")]
    disk: Option<String>,
    /// Also govern this existing memory cgroup, v1 or v2 (read-only: free is its limit minus
    /// its usage, tau 10% of its limit). Repeatable.
    #[arg(long, value_name = "PATH")]
    cgroup: Vec<PathBuf>,
    /// Also serve systemd's memory-pressure protocol at this socket (default
    /// /run/antsched/memory-pressure.sock), for programs that honour $MEMORY_PRESSURE_WATCH.
    #[arg(long, value_name = "PATH", num_args = 0..=1,
          default_missing_value = antsched_memd::DEFAULT_PRESSURE_SOCKET)]
    pressure_socket: Option<PathBuf>,
    /// Where every limit the daemon changes (enforcing memory nice) is recorded, to be
    /// restored at exit and, after a crash, at the next start. Default, for root:
    /// /run/antsched/memd.state (its directory is created); another user's daemon cannot
    /// write a limit and enforces nothing unless given one.
    #[arg(long, value_name = "PATH")]
    state: Option<PathBuf>,
    /// S_max, the severity of no pressure (a duration with a unit; at least S_min, 5s). The
    /// thesis's hour by default; a bench scales it down with its costs (bench/mem/nice.sh).
    #[arg(long, value_name = "DURATION", default_value = "3600s")]
    s_max: String,
}

/// `--s-max`: a duration of at least S_min, as `SeverityConfig::validate` has it.
fn parse_s_max(text: &str) -> anyhow::Result<antsched_mem::SeverityConfig> {
    let ns = antsched_core::spec::parse_duration(text)
        .map_err(|e| anyhow::anyhow!("--s-max {text:?}: {e}"))?;
    let severity = antsched_mem::SeverityConfig {
        s_max: ns as f64 / 1e9,
        ..Default::default()
    };
    if severity.validate().is_err() {
        anyhow::bail!(
            "--s-max {text:?}: S_max must be at least S_min, {} s",
            severity.s_min
        );
    }
    Ok(severity)
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let ns = antsched_core::spec::parse_duration(&a.interval)
        .map_err(|e| anyhow::anyhow!("--interval {:?}: {e}", a.interval))?;
    if ns == 0 {
        anyhow::bail!("--interval 0: the interval must be above zero");
    }
    let repeat = antsched_core::spec::parse_duration(&a.repeat)
        .map_err(|e| anyhow::anyhow!("--repeat {:?}: {e}", a.repeat))?;
    if repeat == 0 {
        anyhow::bail!("--repeat 0: the repeat must be above zero");
    }
    let severity = parse_s_max(&a.s_max)?;
    if severity.s_max != antsched_mem::SeverityConfig::default().s_max {
        eprintln!("antsched memd: S_max {} s", severity.s_max);
    }
    let defaults = [
        antsched_memd::DEFAULT_SOCKET,
        antsched_memd::DEFAULT_PRESSURE_SOCKET,
    ];
    for socket in std::iter::once(&a.socket).chain(&a.pressure_socket) {
        if defaults.iter().any(|d| socket.as_os_str() == *d) {
            let dir = socket
                .parent()
                .context("the default socket has a directory")?;
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {} for the socket", dir.display()))?;
        }
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let state = match a.state {
        Some(path) => Some(path),
        None if root => {
            let path = PathBuf::from(antsched_memd::DEFAULT_STATE);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).with_context(|| {
                    format!("cannot create {} for the state file", dir.display())
                })?;
            }
            Some(path)
        }
        None => {
            eprintln!(
                "antsched memd: not root and no --state: memory nice scales what subscribers \
                 are told but is not enforced"
            );
            None
        }
    };
    let disk = a.disk.map_or(DiskChoice::Root, DiskChoice::Named);
    let source = ProcSource::new("/proc", disk)?;
    let disk = source.disk().to_string();
    eprintln!(
        "antsched memd: the machine domain from /proc, candidate age by {}, paging cost from disk {disk}",
        json_name(&source.estimator())
    );
    // Every group is checked before anything is served: a wrong path is the user's to fix.
    let mut groups = Vec::new();
    for path in &a.cgroup {
        let g = CgroupSource::on_this_machine(path, &disk)
            .with_context(|| format!("--cgroup {}", path.display()))?;
        groups.push(g);
    }
    // Signals are blocked before the daemon exists, so that no thread it might start takes
    // them; one thread waits for them and stops the loop, which then removes the socket.
    let set = crate::signals::block();
    let config = Config {
        interval: Duration::from_nanos(ns),
        repeat: Duration::from_nanos(repeat),
        pressure_socket: a.pressure_socket.clone(),
        state_file: state,
        severity,
        ..Config::new(&a.socket)
    };
    let mut daemon = Daemon::bind(config, Box::new(source))?;
    for g in groups {
        let name = g.dir().display().to_string();
        daemon.add_domain(name, Box::new(g))?;
    }
    // `antsched mem run` asks for the groups it makes, which lie under antsched's own parent.
    daemon.allow_govern(RUN_PARENT, CgroupSource::governor(disk.clone()));
    let stopper = daemon.stopper();
    std::thread::Builder::new()
        .name("antsched-signals".into())
        .spawn(move || {
            let sig = crate::signals::wait(&set);
            eprintln!("antsched memd: signal {sig}");
            stopper.stop();
        })?;
    daemon.run()?;
    drop(daemon);
    eprintln!("antsched memd: stopped; removed {}", a.socket.display());
    Ok(())
}

#[derive(clap::Args)]
pub struct StatusArgs {
    /// The daemon's socket.
    #[arg(long, value_name = "PATH", default_value = antsched_memd::DEFAULT_SOCKET)]
    socket: PathBuf,
    /// Print the records as a JSON array, one object per domain with the keys of docs/architecture.md
    /// and `domain`.
    #[arg(long)]
    json: bool,
}

/// Every domain's record: the machine's first, then each governed group's.
pub fn status(a: StatusArgs) -> anyhow::Result<()> {
    let names = antsched_memd::list_domains(&a.socket)?;
    // The nice each domain is governed with (a daemon too old to say gives none).
    let nices: std::collections::HashMap<String, f64> = antsched_memd::domain_nices(&a.socket)
        .map(|v| v.into_iter().collect())
        .unwrap_or_default();
    let mut records = Vec::new();
    for name in names {
        match antsched_memd::connect_domain(&a.socket, &name) {
            Ok(c) => {
                let record = c.current();
                let group = (name != antsched_memd::MACHINE)
                    .then(|| group_view(&name, nices.get(&name).copied(), &record));
                records.push((name, record, group));
            }
            // A group removed between the list and now is not an error of the status.
            Err(antsched_memd::ClientError::Refused { reason, .. })
                if reason.starts_with("no domain") => {}
            Err(e) => return Err(e.into()),
        }
    }
    if a.json {
        let array: Vec<serde_json::Value> = records
            .iter()
            .map(|(name, r, group)| {
                let mut v = serde_json::to_value(r)?;
                v["domain"] = serde_json::Value::String(name.clone());
                if let Some(g) = group {
                    v["nice"] = g.nice.into();
                    v["weight"] = g.weight.into();
                    v["class"] = g.class.into();
                    v["usage_bytes"] = g.usage_bytes.into();
                    v["weighted_age_s"] = g.weighted_age_s.into();
                }
                Ok(v)
            })
            .collect::<Result<_, serde_json::Error>>()?;
        println!("{}", serde_json::to_string_pretty(&array)?);
    } else {
        for (i, (name, r, group)) in records.iter().enumerate() {
            if i > 0 {
                println!();
            }
            println!("domain         {name}");
            print!("{}", table(r));
            if let Some(g) = group {
                let usage = g.usage_bytes.map_or("unknown".to_string(), |b| {
                    format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
                });
                println!(
                    "nice           {} (weight {:.4}, class {}); usage {usage}; weighted age {:.1} s",
                    g.nice, g.weight, g.class, g.weighted_age_s
                );
            }
        }
    }
    Ok(())
}

/// What `mem status` shows of a governed group beyond its record: its memory nice and weight,
/// its class, its usage (read from the group's own files) and its candidate age times its
/// weight, the key the daemon's enforcement reclaims by (the largest first, section 5.1.2).
struct GroupView {
    nice: f64,
    weight: f64,
    class: &'static str,
    usage_bytes: Option<u64>,
    weighted_age_s: f64,
}

fn group_view(dir: &str, nice: Option<f64>, r: &SeverityRecord) -> GroupView {
    let nice = antsched_mem::MemNice::new(nice.unwrap_or(0.0).round() as i64).unwrap_or_default();
    let read = |f: &str| {
        std::fs::read_to_string(std::path::Path::new(dir).join(f))
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
    };
    GroupView {
        nice: nice.nice(),
        weight: nice.weight(),
        class: match nice.class() {
            antsched_mem::PriorityClass::Low => "low",
            antsched_mem::PriorityClass::Normal => "normal",
            antsched_mem::PriorityClass::High => "high",
        },
        usage_bytes: read("memory.usage_in_bytes").or_else(|| read("memory.current")),
        weighted_age_s: r.candidate_age_s * nice.weight(),
    }
}

fn table(r: &SeverityRecord) -> String {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let age_ms = antsched_memd::monotonic_ns().saturating_sub(r.time) as f64 / 1e6;
    format!(
        "severity       {:.1} s ({})\n\
         candidate age  {:.1} s (estimator {})\n\
         free           {:.1} MiB (tau {:.1} MiB)\n\
         paging cost    {:.3e} per s (disk {:.3} ms per I/O, queue {:.2})\n\
         record         version {}, {:.0} ms old\n",
        r.severity_s,
        json_name(&r.tier),
        r.candidate_age_s,
        json_name(&r.estimator),
        mib(r.free_bytes),
        mib(r.tau_bytes),
        r.paging_cost,
        r.disk_service_ms,
        r.disk_queue,
        r.version,
        age_ms
    )
}

/// The name a value has in the JSON (`plenty`, `turnover`), so that both outputs say the same.
pub(crate) fn json_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["pid", "cgroup"])))]
pub struct NiceArgs {
    /// The memory nice, -20..=19: +N makes the process see N*0.75 doublings more pressure
    /// and its group give memory first (weight 2^(0.75 N)); -N protects it.
    #[arg(
        short = 'n',
        long = "nice",
        value_name = "N",
        allow_negative_numbers = true
    )]
    nice: i64,
    /// The process whose nice is set.
    pid: Option<u32>,
    /// The governed group (under /sys/fs/cgroup/memory/antsched) whose nice is set.
    #[arg(long, value_name = "PATH")]
    cgroup: Option<PathBuf>,
    /// The daemon's socket.
    #[arg(long, value_name = "PATH", default_value = antsched_memd::DEFAULT_SOCKET)]
    socket: PathBuf,
}

/// `antsched mem nice -n N PID|--cgroup PATH`: one request to the daemon. The range is
/// checked here too, so that a wrong N is named without a daemon.
pub fn nice(a: NiceArgs) -> anyhow::Result<()> {
    antsched_mem::MemNice::new(a.nice).map_err(|e| anyhow::anyhow!("-n {}: {e}", a.nice))?;
    let target = match (a.pid, &a.cgroup) {
        (Some(pid), None) => antsched_memd::NiceTarget::Pid(pid),
        (None, Some(path)) => antsched_memd::NiceTarget::Cgroup(path.display().to_string()),
        _ => anyhow::bail!("give a PID or --cgroup PATH, not both"),
    };
    let done = antsched_memd::set_nice(&a.socket, a.nice, &target)?;
    println!("{done}");
    Ok(())
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// The group's memory limit (256M, 1G: powers of 1024); without it the group has no
    /// limit of its own and its domain is bounded by the machine's memory.
    #[arg(long, value_name = "SIZE")]
    limit: Option<String>,
    /// The group's memory nice, -20..=19 (see `antsched mem nice`), set by the memd that
    /// governs it before CMD starts.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    nice: Option<i64>,
    /// The daemon's socket; a memd listening there is asked to govern the group.
    #[arg(long, value_name = "PATH", default_value = antsched_memd::DEFAULT_SOCKET)]
    socket: PathBuf,
    /// Register CMD for SIGMEM: memd queues this real-time signal (default SIGRTMIN+8) to
    /// it with S in ms as si_value.sival_int, on the eventfd's rule, once CMD has a handler
    /// for it (never before: the signal's default action would kill CMD).
    #[arg(long, value_name = "SIGNO", num_args = 0..=1, default_missing_value = "default")]
    sigmem: Option<String>,
    /// Point CMD's $MEMORY_PRESSURE_WATCH at memd's memory-pressure socket (default
    /// /run/antsched/memory-pressure.sock; memd must serve it: `memd --pressure-socket`), so
    /// that a program that honours systemd's protocol hears antsched's decisions.
    #[arg(long, value_name = "PATH", num_args = 0..=1,
          default_missing_value = antsched_memd::DEFAULT_PRESSURE_SOCKET)]
    memory_pressure: Option<PathBuf>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<std::ffi::OsString>,
}

/// base64 of `some 200000 2000000` and its NUL: systemd's default trigger.
const MEMORY_PRESSURE_WRITE: &str = "c29tZSAyMDAwMDAgMjAwMDAwMAA=";

/// `antsched mem run`: a new v1 memory group under antsched's parent, CMD moved into it
/// before it runs (the child writes `0` to the group's `cgroup.procs` between fork and exec),
/// a running memd asked to govern it, and the group removed when CMD exits, also when `mem
/// run` is interrupted (SIGINT, SIGTERM and SIGHUP go to CMD, and `mem run` waits for it).
/// Exits with CMD's status (128 + the signal that killed it).
pub fn mem_run(a: RunArgs) -> anyhow::Result<()> {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let limit = a
        .limit
        .as_deref()
        .map(antsched_memd::parse_size)
        .transpose()
        .context("--limit")?;
    let sigmem = match a.sigmem.as_deref() {
        None => None,
        Some("default") => Some(antsched_memd::sigmem::default_signal()),
        Some(n) => Some(
            n.parse::<i32>()
                .ok()
                .filter(|&n| (libc::SIGRTMIN()..=libc::SIGRTMAX()).contains(&n))
                .with_context(|| {
                    format!(
                        "--sigmem {n:?}: not a real-time signal ({} to {})",
                        libc::SIGRTMIN(),
                        libc::SIGRTMAX()
                    )
                })?,
        ),
    };
    if let Some(n) = a.nice {
        antsched_mem::MemNice::new(n).map_err(|e| anyhow::anyhow!("--nice {n}: {e}"))?;
    }
    // Before any thread and before the child: the child unblocks them in pre_exec.
    let set = crate::signals::block();
    let name = format!("run-{}", std::process::id());
    let parent = antsched_memd::run_parent_of(std::process::id());
    let group = antsched_memd::RunGroup::create(&parent, &name, limit)?;
    let procs = group.procs_files()?;
    let mut governed = None;
    match antsched_memd::govern(&a.socket, group.path()) {
        Ok(domain) => {
            eprintln!("antsched mem run: memd governs {domain}");
            if let Some(n) = a.nice {
                let target = antsched_memd::NiceTarget::Cgroup(domain.clone());
                match antsched_memd::set_nice(&a.socket, n, &target) {
                    Ok(done) => eprintln!("antsched mem run: memd set {done}"),
                    Err(e) => eprintln!("antsched mem run: the nice is not set: {e}"),
                }
            }
            governed = Some(domain);
        }
        Err(antsched_memd::ClientError::Connect { .. }) => eprintln!(
            "antsched mem run: no memd listening at {}; running without it{}",
            a.socket.display(),
            if a.nice.is_some() {
                " (and without its nice)"
            } else {
                ""
            }
        ),
        Err(e) => eprintln!("antsched mem run: memd will not govern the group: {e}"),
    }
    let mut command = std::process::Command::new(&a.command[0]);
    command.args(&a.command[1..]);
    if let Some(watch) = &a.memory_pressure {
        // The daemon ignores the trigger (its own rule decides); systemd's default, 200 ms of
        // stall in 2 s, is written for programs that insist on one.
        command
            .env("MEMORY_PRESSURE_WATCH", watch)
            .env("MEMORY_PRESSURE_WRITE", MEMORY_PRESSURE_WRITE);
    }
    // The v1 group's first, then its cgroup2 twin's (for the group's PSI), when it has one.
    let procs_fds: Vec<i32> = procs.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect();
    // SAFETY: between fork and exec only async-signal-safe calls: write(2) on descriptors
    // opened before the fork, and pthread_sigmask on the calling (only) thread.
    unsafe {
        command.pre_exec(move || {
            for &fd in &procs_fds {
                if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            Ok(())
        });
    }
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            let what = format!(
                "cannot run {:?} in {}",
                a.command[0],
                group.path().display()
            );
            group.remove(std::time::Duration::from_secs(2))?;
            return Err(anyhow::Error::new(e).context(what));
        }
    };
    drop(procs);
    let pid = child.id() as libc::pid_t;
    if let Some(signo) = sigmem {
        match antsched_memd::register_sigmem(&a.socket, pid, signo, governed.as_deref()) {
            Ok(()) => eprintln!("antsched mem run: SIGMEM {signo} to {pid}"),
            Err(e) => eprintln!("antsched mem run: no SIGMEM: {e}"),
        }
    }
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let forwarding = done.clone();
    std::thread::Builder::new()
        .name("antsched-signals".into())
        .spawn(move || loop {
            let sig = crate::signals::wait(&set);
            if forwarding.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            // SAFETY: signalling the child this process started and has not reaped yet.
            unsafe { libc::kill(pid, sig) };
        })?;
    let status = child.wait().context("waiting for the command")?;
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    let path = group.path().to_path_buf();
    match group.remove(std::time::Duration::from_secs(5)) {
        Ok(()) => eprintln!("antsched mem run: removed {}", path.display()),
        Err(e) => eprintln!("error: {e}"),
    }
    std::process::exit(code);
}
