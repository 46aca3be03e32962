//! The daemon: one thread, one `poll(2)` loop over its Unix socket, its clients' sockets and a
//! stop eventfd. Once a tick it asks its [`ObservationSource`] for the domain, computes the
//! record (Eq. 4.1 through [`SeverityRecord::new`]), publishes it on the shared page and
//! signals each client's eventfd when that client's [`Notifier`] says so.
//!
//! ## Clients cannot stall it
//!
//! Every socket is non-blocking and every send uses `MSG_NOSIGNAL`, so a peer that went away
//! costs an error, not a SIGPIPE. The eventfds are non-blocking: a client that never reads its
//! counter just sees a large count. A client whose hello is not exactly [`HELLO`], who sends
//! anything after it, who has not said hello within [`Config::handshake_timeout`], or whose
//! socket errors is told why (when the socket still takes a line) and dropped; the others are
//! not affected. At most [`Config::max_clients`] are served at once, so a flood of connections
//! cannot exhaust the daemon's descriptors.

use std::io::{ErrorKind, IoSlice, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use antsched_mem::notify::Notifier;
use antsched_mem::record::{Estimator, SeverityRecord};
use antsched_mem::{MemNice, SeverityConfig, Tier};
use rustix::event::{EventfdFlags, PollFd, PollFlags};
use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};

use crate::enforce::{DomainView, NiceTarget, Nices, Process};
use crate::page::{PageWriter, LAYOUT};
use crate::source::{ObservationSource, SourceError};
use crate::{monotonic_ns, HELLO};
use antsched_mem::kernel::Pressure;

mod channels;

/// The daemon's tunables.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where the Unix socket is made.
    pub socket: PathBuf,
    /// How often the domain is observed. 1 s, the thesis's tick.
    pub interval: Duration,
    /// How often a subscriber whose S is below S_max is reminded of it. 1 s, the thesis's
    /// (section 4.6); a run that scales S_max down scales this with it, or a cache's release
    /// rounds come as seldom against the scaled time as they would with an hour's S_max once
    /// a minute.
    pub repeat: Duration,
    pub severity: SeverityConfig,
    /// Clients served at once; a connection beyond is refused with a reason. 1024.
    pub max_clients: usize,
    /// A client that has not said hello by then is dropped. 5 s.
    pub handshake_timeout: Duration,
    /// Log to stderr (start, clients, tier changes, a summary a minute, source errors).
    pub log: bool,
    /// The PSI trigger registered on each domain's pressure file (`<some|full> <stall us>
    /// <window us>`), which wakes the loop at once on a stall instead of at the next tick.
    /// `some 150000 1000000`: 150 ms of stall in a 1 s window. None: no triggers.
    pub psi_trigger: Option<String>,
    /// PSI `full` avg10 (percent) at or above which a domain is in the thrashing tier
    /// whatever S says: for at least this share of the last 10 s every non-idle task of the
    /// domain was stalled on memory at once. 10%.
    pub thrashing_full_avg10: f64,
    /// Domains a `govern` request may add at most (the machine and `--cgroup` ones not
    /// counted). 64.
    pub max_requested_domains: usize,
    /// Where to serve systemd's memory-pressure protocol (`crate::pressure_socket`), if
    /// anywhere. None.
    pub pressure_socket: Option<PathBuf>,
    /// Where the limits the daemon changes are recorded (`crate::state`). None: the daemon
    /// enforces no nice and changes no limit (memory nice still scales what subscribers are
    /// told).
    pub state_file: Option<PathBuf>,
}

impl Config {
    pub fn new(socket: impl Into<PathBuf>) -> Self {
        Self {
            socket: socket.into(),
            interval: Duration::from_secs(1),
            repeat: Duration::from_secs(1),
            severity: SeverityConfig::default(),
            max_clients: 1024,
            handshake_timeout: Duration::from_secs(5),
            log: true,
            psi_trigger: Some(DEFAULT_PSI_TRIGGER.into()),
            thrashing_full_avg10: 10.0,
            max_requested_domains: 64,
            pressure_socket: None,
            state_file: None,
        }
    }
}

/// The PSI trigger the daemon registers unless told otherwise: 150 ms of `some` stall within
/// 1 s (the anchors' section 8.1).
pub const DEFAULT_PSI_TRIGGER: &str = "some 150000 1000000";

/// The name of the machine domain, the one a plain hello subscribes to.
pub const MACHINE: &str = "machine";

/// Makes the source of a cgroup a `govern` request names (after the daemon checked that the
/// path lies under the parent it was given).
pub type Governor = Box<dyn FnMut(&Path) -> Result<Box<dyn ObservationSource>, SourceError> + Send>;

/// Why the daemon could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "cannot make the socket {path}: the directory {dir} does not exist \
         (create it, or pass another path with --socket)"
    )]
    NoDirectory { path: PathBuf, dir: PathBuf },
    #[error("cannot make the socket {path}: {path} exists and is not a socket (remove it, or pass another path with --socket)")]
    NotASocket { path: PathBuf },
    #[error("another daemon is serving {path}")]
    InUse { path: PathBuf },
    #[error("cannot make the socket {path}: {source}")]
    Bind {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the first observation failed: {0}")]
    Source(#[source] SourceError),
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error(transparent)]
    State(#[from] crate::state::StateError),
    #[error("domain {name}: {why}")]
    Domain { name: String, why: String },
    #[error("{what}: {source}")]
    Sys {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
}

fn sys(what: &'static str) -> impl FnOnce(rustix::io::Errno) -> Error {
    move |e| Error::Sys {
        what,
        source: e.into(),
    }
}

/// Wakes a running daemon's loop and makes it return. Cloneable; usable from a signal thread.
#[derive(Clone)]
pub struct Stopper(Arc<OwnedFd>);

impl Stopper {
    pub fn stop(&self) {
        let _ = rustix::io::write(&*self.0, &1u64.to_ne_bytes());
    }
}

enum State {
    Hello {
        buf: Vec<u8>,
        since: Instant,
    },
    Ready {
        eventfd: OwnedFd,
        notifier: Notifier,
        domain: u64,
        /// What the subscriber's nice is looked up by (`crate::enforce`).
        peer: Peer,
    },
}

/// A subscriber's process, its memory group, and its own page, on which the domain's record
/// is published as the subscriber sees it (S divided by its weight). A page per subscriber,
/// not per domain: a nice set while it is subscribed then reaches it on the page it already
/// has.
struct Peer {
    process: Process,
    group: Option<PathBuf>,
    nice: MemNice,
    page: PageWriter,
    /// The `time` of the domain's record last published on `page`.
    published: u64,
}

/// What the daemon observes and publishes for one domain.
struct Domain {
    id: u64,
    /// `machine`, or a cgroup's canonical path.
    name: String,
    source: Box<dyn ObservationSource>,
    page: PageWriter,
    current: SeverityRecord,
    /// Added by a client's `govern` request: forgotten when its group goes away.
    requested: bool,
    /// The PSI trigger's descriptor (POLLPRI on a stall), when one could be registered.
    trigger: Option<OwnedFd>,
}

/// What to do with a connection after serving it.
enum Served {
    Keep,
    /// The request is answered; close without calling it an error.
    Done(String),
}

struct Conn {
    id: u64,
    stream: UnixStream,
    state: State,
}

/// Longest hello line read before the client is dropped.
const HELLO_MAX: usize = 128;

/// The severity daemon.
pub struct Daemon {
    config: Config,
    listener: UnixListener,
    /// The socket's inode, so that drop removes our socket and never a file put in its place.
    socket_ino: (u64, u64),
    domains: Vec<Domain>,
    next_domain: u64,
    /// Where `govern` requests may point, and how their sources are made.
    governor: Option<(PathBuf, Governor)>,
    stop: Arc<OwnedFd>,
    clients: Vec<Conn>,
    next_id: u64,
    next_tick: Instant,
    last_summary: Instant,
    /// After an accept error other than "no connection pending" (EMFILE: out of
    /// descriptors), the listener is left alone until then, so that a connection the daemon
    /// cannot take does not keep poll returning at once.
    accept_paused_until: Option<Instant>,
    /// The processes registered for SIGMEM.
    sigmem: crate::sigmem::Registry,
    /// The systemd memory-pressure socket, when configured.
    pressure: Option<crate::pressure_socket::Server>,
    /// Memory nice: the values set, and their enforcement.
    nices: Nices,
}

/// How long the listener rests after an accept error.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Repeats due within a twentieth of the repeat after the loop wakes go out then, up to that
/// much early, so that the loop wakes once for them instead of once per client. Clients
/// subscribe at any moment, so under pressure each has a 1 s repeat of its own phase: 100 of
/// them woke the daemon 100 times a second, each time polling every descriptor, which was most
/// of its CPU (the `tick_cpu` benchmark). Sent together once, they keep one phase from then
/// on. 50 ms of the 1 s repeat is well within what it promises (the cgroup test allows 1 s ±
/// 150 ms).
pub(crate) fn repeat_slack(n: &Notifier) -> antsched_core::Nanos {
    n.repeat() / 20
}

impl Daemon {
    /// Takes a first observation, publishes it, and binds the socket: once this returns, a
    /// client that connects reads a real record.
    pub fn bind(config: Config, mut source: Box<dyn ObservationSource>) -> Result<Self, Error> {
        config
            .severity
            .validate()
            .map_err(|e| Error::Config(e.to_string()))?;
        if config.interval.is_zero() {
            return Err(Error::Config("the interval must be above zero".into()));
        }
        if config.repeat.is_zero() {
            return Err(Error::Config("the repeat must be above zero".into()));
        }
        let page = PageWriter::new().map_err(sys("cannot make the severity page"))?;
        let now = monotonic_ns();
        let obs = source.observe(now).map_err(Error::Source)?;
        let current = record(&config, obs, source.pressure(), false);
        page.publish(&current);
        let listener = listen(&config.socket)?;
        let meta = std::fs::metadata(&config.socket).map_err(|source| Error::Bind {
            path: config.socket.clone(),
            source,
        })?;
        let stop = rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
            .map_err(sys("cannot make the stop eventfd"))?;
        let pressure = match &config.pressure_socket {
            Some(p) => Some(crate::pressure_socket::Server::bind(p, config.max_clients)?),
            None => None,
        };
        let (nices, recovered) = match crate::enforce::open_state(config.state_file.as_deref()) {
            Ok(v) => v,
            Err(e) => {
                let _ = std::fs::remove_file(&config.socket);
                return Err(e.into());
            }
        };
        let mut d = Self {
            nices,
            socket_ino: (meta.dev(), meta.ino()),
            listener,
            domains: Vec::new(),
            next_domain: 1,
            governor: None,
            stop: Arc::new(stop),
            clients: Vec::new(),
            next_id: 1,
            next_tick: Instant::now() + config.interval,
            last_summary: Instant::now(),
            accept_paused_until: None,
            sigmem: Default::default(),
            pressure,
            config,
        };
        d.log(format_args!(
            "serving {} every {:?}",
            d.config.socket.display(),
            d.config.interval,
        ));
        if let Some(p) = &d.pressure {
            d.log(format_args!(
                "serving the systemd memory-pressure protocol at {}",
                p.path().display()
            ));
        }
        for line in recovered {
            d.log(format_args!("{line}"));
        }
        d.insert(MACHINE.to_string(), source, page, current, false);
        Ok(d)
    }

    /// Adds a domain (a memory cgroup given on the command line) before or while serving:
    /// takes its first observation and publishes it. Its name is what clients name in their
    /// hello. Fails if the name is taken or the first observation fails.
    pub fn add_domain(
        &mut self,
        name: impl Into<String>,
        mut source: Box<dyn ObservationSource>,
    ) -> Result<(), Error> {
        let name = name.into();
        if self.domains.iter().any(|d| d.name == name) {
            return Err(Error::Domain {
                name,
                why: "already governed".into(),
            });
        }
        let page = PageWriter::new().map_err(sys("cannot make the severity page"))?;
        let obs = source.observe(monotonic_ns()).map_err(|e| Error::Domain {
            name: name.clone(),
            why: e.to_string(),
        })?;
        let current = record(&self.config, obs, source.pressure(), false);
        page.publish(&current);
        self.insert(name, source, page, current, false);
        Ok(())
    }

    /// Lets clients ask the daemon to govern cgroups under `parent` (the group `antsched mem
    /// run` makes its groups in); `make` builds the source of a path that passed the check.
    /// Without it, `govern` requests are refused.
    pub fn allow_govern(&mut self, parent: impl Into<PathBuf>, make: Governor) {
        self.governor = Some((parent.into(), make));
    }

    /// The names of the domains served, the machine first.
    pub fn domains(&self) -> Vec<String> {
        self.domains.iter().map(|d| d.name.clone()).collect()
    }

    fn insert(
        &mut self,
        name: String,
        source: Box<dyn ObservationSource>,
        page: PageWriter,
        current: SeverityRecord,
        requested: bool,
    ) {
        let trigger = match (&self.config.psi_trigger, source.pressure_file()) {
            (Some(spec), Some(file)) => match psi_trigger(&file, spec) {
                Ok((fd, used)) => {
                    let note = if &used == spec {
                        String::new()
                    } else {
                        format!(
                            " (the kernel refused {spec:?}: without CAP_SYS_RESOURCE a \
                             window must be a multiple of 2 s)"
                        )
                    };
                    self.log(format_args!(
                        "domain {name}: PSI trigger {used:?} on {}{note}",
                        file.display()
                    ));
                    Some(fd)
                }
                Err(why) => {
                    self.log(format_args!(
                        "domain {name}: no PSI trigger on {} ({why}); observing on the tick only",
                        file.display()
                    ));
                    None
                }
            },
            (Some(_), None) => {
                self.log(format_args!(
                    "domain {name}: no PSI file to trigger on; observing on the tick only"
                ));
                None
            }
            (None, _) => None,
        };
        self.log(format_args!("domain {name}: {}", summary(&current)));
        let detail = source.describe();
        if !detail.is_empty() {
            self.log(format_args!("domain {name}: {detail}"));
        }
        let id = self.next_domain;
        self.next_domain += 1;
        self.domains.push(Domain {
            id,
            name,
            source,
            page,
            current,
            requested,
            trigger,
        });
    }

    pub fn stopper(&self) -> Stopper {
        Stopper(self.stop.clone())
    }

    /// The record last published for the machine.
    pub fn current(&self) -> SeverityRecord {
        self.domains[0].current
    }

    /// The record last published for the domain `name`.
    pub fn current_of(&self, name: &str) -> Option<SeverityRecord> {
        self.domains
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.current)
    }

    /// How many clients are connected (said hello or not).
    pub fn clients(&self) -> usize {
        self.clients.len()
    }

    fn log(&self, args: std::fmt::Arguments<'_>) {
        if self.config.log {
            eprintln!("antsched memd: {args}");
        }
    }

    /// Serves until [`Stopper::stop`]. Errors of one client drop that client; errors of the
    /// source are logged and the last record stays published.
    pub fn run(&mut self) -> Result<(), Error> {
        loop {
            let timeout = self.timeout();
            if self
                .accept_paused_until
                .is_some_and(|t| Instant::now() >= t)
            {
                self.accept_paused_until = None;
            }
            let listen = if self.accept_paused_until.is_some() {
                PollFlags::empty()
            } else {
                PollFlags::IN
            };
            let (stop, accept, ready, stalled, pressure) = {
                let mut fds = Vec::with_capacity(2 + self.clients.len() + self.domains.len());
                fds.push(PollFd::new(&*self.stop, PollFlags::IN));
                fds.push(PollFd::new(&self.listener, listen));
                for c in &self.clients {
                    fds.push(PollFd::new(&c.stream, PollFlags::IN));
                }
                let first_trigger = fds.len();
                for d in &self.domains {
                    if let Some(t) = &d.trigger {
                        fds.push(PollFd::new(t, PollFlags::PRI));
                    }
                }
                let first_pressure = fds.len();
                if let Some(p) = &self.pressure {
                    p.poll_fds(&mut fds);
                }
                let ts = rustix::time::Timespec {
                    tv_sec: timeout.as_secs() as i64,
                    tv_nsec: i64::from(timeout.subsec_nanos()),
                };
                match rustix::event::poll(&mut fds, Some(&ts)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(sys("poll")(e)),
                }
                let ready: Vec<PollFlags> =
                    fds[2..first_trigger].iter().map(|f| f.revents()).collect();
                let stalled = fds[first_trigger..first_pressure]
                    .iter()
                    .any(|f| !f.revents().is_empty());
                let pressure: Vec<PollFlags> =
                    fds[first_pressure..].iter().map(|f| f.revents()).collect();
                (
                    !fds[0].revents().is_empty(),
                    !fds[1].revents().is_empty(),
                    ready,
                    stalled,
                    pressure,
                )
            };
            if stop {
                self.log(format_args!("stopping"));
                return Ok(());
            }
            // Client events first (indices match `ready` until then), then new clients.
            let mut drop_ids = Vec::new();
            for (i, ev) in ready.iter().enumerate() {
                if !ev.is_empty() {
                    match self.serve(i) {
                        Ok(Served::Keep) => {}
                        Ok(Served::Done(what)) => {
                            let c = &self.clients[i];
                            drain(&c.stream);
                            self.log(format_args!("client {} {what}", c.id));
                            drop_ids.push((c.id, String::new()));
                        }
                        Err(why) => drop_ids.push((self.clients[i].id, why)),
                    }
                }
            }
            self.drop_clients(drop_ids);
            // Requests may have added a domain; they are observed from the next tick on.
            if accept && self.accept_paused_until.is_none() {
                self.accept();
            }
            self.expire_handshakes();
            self.serve_pressure(&pressure);
            if stalled {
                // A PSI trigger fired: observe every domain now, not at the next tick (the
                // tick stays where it was).
                self.observe_all();
            } else if Instant::now() >= self.next_tick {
                self.tick();
            }
            self.notify();
        }
    }

    /// Until the next tick, the next handshake deadline or the next 1 s repeat.
    fn timeout(&self) -> Duration {
        let now = Instant::now();
        let mut t = self.next_tick.saturating_duration_since(now);
        let other = [
            self.sigmem.next_due(),
            self.pressure.as_ref().and_then(|p| p.next_due()),
        ];
        if let Some(due) = other.into_iter().flatten().min() {
            t = t.min(Duration::from_nanos(due.saturating_sub(monotonic_ns())));
        }
        if let Some(until) = self.accept_paused_until {
            t = t.min(until.saturating_duration_since(now));
        }
        for c in &self.clients {
            match &c.state {
                State::Hello { since, .. } => {
                    t = t.min(
                        (*since + self.config.handshake_timeout).saturating_duration_since(now),
                    )
                }
                State::Ready { notifier, .. } => {
                    if let Some(due) = notifier.poll_timeout() {
                        t = t.min(Duration::from_nanos(due.saturating_sub(monotonic_ns())));
                    }
                }
            }
        }
        t
    }

    fn tick(&mut self) {
        self.next_tick += self.config.interval;
        if self.next_tick < Instant::now() {
            // Behind (the machine was suspended, or the loop starved): no burst of catch-up
            // ticks.
            self.next_tick = Instant::now() + self.config.interval;
        }
        self.observe_all();
    }

    /// Observes every domain and publishes its record. A requested domain whose group is
    /// gone is forgotten, with its subscribers; any other failure keeps the last record.
    fn observe_all(&mut self) {
        let summarize = self.last_summary.elapsed() >= Duration::from_secs(60);
        if summarize {
            self.last_summary = Instant::now();
        }
        let mut gone = Vec::new();
        // Section 5.1.2 in a group domain whose members have nices enforced: the page taken
        // next is the enforced victim's, and its weighted age (from the last records) is the
        // domain's candidate age where it is older than the domain's own.
        let victim_ages = self.nices.victim_ages(&Self::views(&self.domains));
        for (i, victim_age) in victim_ages.into_iter().enumerate() {
            let now = monotonic_ns();
            let d = &mut self.domains[i];
            match d.source.observe(now) {
                Ok(mut obs) => {
                    if let Some(age) = victim_age.filter(|a| *a > obs.candidate_age_s) {
                        obs.candidate_age_s = age;
                    }
                    let holding = self.nices.holds_in(d.id);
                    let r = record(&self.config, obs, d.source.pressure(), holding);
                    let before = d.current.tier;
                    d.current = r;
                    d.page.publish(&r);
                    let name = d.name.clone();
                    let detail = summarize.then(|| d.source.describe());
                    if before != r.tier {
                        self.log(format_args!(
                            "domain {name}: tier {} -> {}: {}",
                            tier_name(before),
                            tier_name(r.tier),
                            summary(&r)
                        ));
                    }
                    if let Some(detail) = detail {
                        self.log(format_args!("domain {name}: {}; {detail}", summary(&r)));
                    }
                }
                Err(e) => {
                    let name = d.name.clone();
                    if d.requested && !Path::new(&name).exists() {
                        gone.push(d.id);
                        self.log(format_args!("domain {name}: the group is gone; forgotten"));
                    } else {
                        self.log(format_args!(
                            "domain {name}: observation failed, the last record stays: {e}"
                        ));
                    }
                }
            }
        }
        if !gone.is_empty() {
            self.domains.retain(|d| !gone.contains(&d.id));
            self.sigmem.forget_domains(&gone);
            if let Some(p) = &mut self.pressure {
                p.forget_domains(&gone);
            }
            let orphans: Vec<(u64, String)> = self
                .clients
                .iter()
                .filter(
                    |c| matches!(&c.state, State::Ready { domain, .. } if gone.contains(domain)),
                )
                .map(|c| (c.id, "its domain is gone".to_string()))
                .collect();
            self.drop_clients(orphans);
            for id in gone {
                self.nices.forget(id);
            }
        }
        self.enforce();
    }

    /// The domains as enforcement sees them, with their last records.
    fn views(domains: &[Domain]) -> Vec<DomainView<'_>> {
        domains
            .iter()
            .map(|d| DomainView {
                id: d.id,
                name: &d.name,
                record: d.current,
                requested: d.requested,
            })
            .collect()
    }

    /// Memory nice for processes that do not cooperate: one tick of `crate::enforce`.
    fn enforce(&mut self) {
        self.nices.prune();
        let views = Self::views(&self.domains);
        let (log, taken) = self.nices.enforce(monotonic_ns(), &views);
        for line in log {
            self.log(format_args!("{line}"));
        }
        for (id, bytes) in taken {
            if let Some(d) = self.domains.iter_mut().find(|d| d.id == id) {
                d.source.note_reclaimed(bytes);
            }
        }
    }

    fn notify(&mut self) {
        let now = monotonic_ns();
        for c in &mut self.clients {
            if let State::Ready {
                eventfd,
                notifier,
                domain,
                peer,
            } = &mut c.state
            {
                let Some(d) = self.domains.iter().find(|d| d.id == *domain) else {
                    continue;
                };
                let nice = self.nices.nice_of(peer.process, peer.group.as_deref());
                if nice != peer.nice {
                    notifier.rescale(peer.nice.weight() / nice.weight());
                    peer.nice = nice;
                    peer.published = 0;
                }
                let seen = d.current.seen_with(nice);
                if peer.published != seen.time {
                    peer.page.publish(&seen);
                    peer.published = seen.time;
                }
                // Repeats due soon go out with this round (see `repeat_slack`).
                let slack = repeat_slack(notifier);
                if notifier
                    .observe_early(seen.severity_s, now, slack)
                    .is_some()
                {
                    // Non-blocking: a counter at its maximum (a client that never reads) is
                    // left as it is.
                    let _ = rustix::io::write(&*eventfd, &1u64.to_ne_bytes());
                }
            }
        }
        self.notify_other(now);
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    let id = self.next_id;
                    self.next_id += 1;
                    if self.clients.len() >= self.config.max_clients {
                        let _ = stream.set_nonblocking(true);
                        let why = format!("too many clients ({})", self.config.max_clients);
                        say(&stream, &format!("error: {why}\n"));
                        drain(&stream);
                        self.log(format_args!("client {id} refused: {why}"));
                        continue;
                    }
                    if let Err(e) = stream.set_nonblocking(true) {
                        self.log(format_args!("client {id} dropped: {e}"));
                        continue;
                    }
                    self.clients.push(Conn {
                        id,
                        stream,
                        state: State::Hello {
                            buf: Vec::new(),
                            since: Instant::now(),
                        },
                    });
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    // ECONNABORTED, EMFILE and the like: this connection only, and a rest.
                    self.log(format_args!("accept failed: {e}"));
                    self.accept_paused_until = Some(Instant::now() + ACCEPT_BACKOFF);
                    return;
                }
            }
        }
    }

    /// Reads what client `i` sent. An error is the reason to drop it.
    fn serve(&mut self, i: usize) -> Result<Served, String> {
        let c = &mut self.clients[i];
        let mut chunk = [0u8; 256];
        loop {
            let n = match (&c.stream).read(&mut chunk) {
                Ok(0) => return Err("closed the connection".into()),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(Served::Keep),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.to_string()),
            };
            match &mut c.state {
                State::Ready { .. } => {
                    let why = format!(
                        "unexpected message after the hello: {:?}",
                        String::from_utf8_lossy(&chunk[..n.min(64)])
                    );
                    say(&c.stream, &format!("error: {why}\n"));
                    return Err(why);
                }
                State::Hello { buf, .. } => {
                    buf.extend_from_slice(&chunk[..n]);
                    let Some(end) = buf.iter().position(|&b| b == b'\n') else {
                        if buf.len() > HELLO_MAX {
                            let why = format!("no hello line in the first {HELLO_MAX} bytes");
                            say(&c.stream, &format!("error: {why}\n"));
                            return Err(why);
                        }
                        continue;
                    };
                    let request = match parse_request(buf, end) {
                        Ok(r) => r,
                        Err(why) => {
                            say(&c.stream, &format!("error: {why}\n"));
                            return Err(why);
                        }
                    };
                    return self.answer(i, request);
                }
            }
        }
    }

    /// Answers a parsed request of client `i`.
    fn answer(&mut self, i: usize, request: Request) -> Result<Served, String> {
        let refuse = |c: &Conn, why: String| {
            say(&c.stream, &format!("error: {why}\n"));
            Err(why)
        };
        match request {
            Request::Subscribe(name) => {
                let name = name.unwrap_or_else(|| MACHINE.to_string());
                let found = self.domains.iter().find(|d| d.name == name).or_else(|| {
                    // A path may be named another way (a trailing slash, a symlink).
                    let canonical = std::fs::canonicalize(&name).ok()?;
                    self.domains
                        .iter()
                        .find(|d| Path::new(&d.name) == canonical)
                });
                let Some(d) = found else {
                    let why = format!(
                        "no domain {name:?} (governed: {})",
                        self.domains
                            .iter()
                            .map(|d| d.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                    return refuse(&self.clients[i], why);
                };
                let (domain, dname, current) = (d.id, d.name.clone(), d.current);
                let eventfd =
                    rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
                        .map_err(|e| format!("cannot make its eventfd: {e}"))?;
                let pid = rustix::net::sockopt::socket_peercred(&self.clients[i].stream)
                    .map(|p| p.pid.as_raw_nonzero().get() as u32)
                    .unwrap_or(0);
                let process = Process::of(pid);
                let group = crate::enforce::memory_group_of(pid);
                let nice = self.nices.nice_of(process, group.as_deref());
                let page = PageWriter::new().map_err(|e| format!("cannot make its page: {e}"))?;
                let seen = current.seen_with(nice);
                page.publish(&seen);
                send_fds(&self.clients[i].stream, page.fd(), &eventfd)
                    .map_err(|e| format!("cannot send it the page: {e}"))?;
                // The rule runs on the S this subscriber sees, against S_max as it sees it.
                let mut notifier = self.fresh_notifier();
                let c = &mut self.clients[i];
                notifier.rescale(1.0 / nice.weight());
                c.state = State::Ready {
                    eventfd,
                    notifier,
                    domain,
                    peer: Peer {
                        process,
                        group,
                        nice,
                        page,
                        published: seen.time,
                    },
                };
                let id = c.id;
                self.log(format_args!("client {id} subscribed to {dname}"));
                Ok(Served::Keep)
            }
            Request::List => {
                let mut reply = format!("ok {}\n", self.domains.len());
                for d in &self.domains {
                    reply.push_str(&d.name);
                    reply.push('\n');
                }
                say(&self.clients[i].stream, &reply);
                Ok(Served::Done("listed the domains".into()))
            }
            Request::Nices => {
                // Each governed group's nice (0 where none was set), for `mem status`.
                let mut reply = format!("ok {}\n", self.domains.len());
                for d in &self.domains {
                    let nice = self
                        .nices
                        .enforced_nice(Path::new(&d.name))
                        .map_or(0.0, |n| n.nice());
                    reply.push_str(&format!("{nice}\t{}\n", d.name));
                }
                say(&self.clients[i].stream, &reply);
                Ok(Served::Done("listed the domains' nice values".into()))
            }
            Request::Sigmem(arg) => {
                let reply = self.register_sigmem(i, &arg);
                match reply {
                    Ok(what) => {
                        say(&self.clients[i].stream, &format!("ok {what}\n"));
                        Ok(Served::Done(what))
                    }
                    Err(why) => refuse(&self.clients[i], why),
                }
            }
            Request::Nice(nice, target) => {
                let uid = rustix::net::sockopt::socket_peercred(&self.clients[i].stream)
                    .map(|p| p.uid.as_raw())
                    .map_err(|e| format!("cannot tell who is asking: {e}"))?;
                let parent = self.governor.as_ref().map(|(p, _)| p.as_path());
                match self.nices.set(uid, nice, &target, parent) {
                    Ok(what) => {
                        say(&self.clients[i].stream, &format!("ok {what}\n"));
                        Ok(Served::Done(format!("set {what}")))
                    }
                    Err(why) => refuse(&self.clients[i], why),
                }
            }
            Request::Govern(path) => match self.govern(&path) {
                Ok(name) => {
                    say(&self.clients[i].stream, &format!("ok {name}\n"));
                    Ok(Served::Done(format!("asked to govern {name}")))
                }
                Err(why) => refuse(&self.clients[i], why),
            },
        }
    }

    /// A `govern` request: `path` must be a cgroup under the governor's parent (after
    /// resolving `..` and symlinks), not governed yet, and within the number of requested
    /// domains.
    fn govern(&mut self, path: &str) -> Result<String, String> {
        let Some((parent, _)) = &self.governor else {
            return Err("this daemon governs no groups on request".into());
        };
        let parent = parent.clone();
        let canonical =
            std::fs::canonicalize(path).map_err(|e| format!("cannot govern {path}: {e}"))?;
        let parent_c = std::fs::canonicalize(&parent).unwrap_or(parent);
        if canonical == parent_c || !canonical.starts_with(&parent_c) {
            return Err(format!(
                "cannot govern {path}: it is not a group under {} (the only groups this \
                 daemon governs on request)",
                parent_c.display()
            ));
        }
        let name = canonical.display().to_string();
        if self.domains.iter().any(|d| d.name == name) {
            return Ok(name);
        }
        let requested = self.domains.iter().filter(|d| d.requested).count();
        if requested >= self.config.max_requested_domains {
            return Err(format!(
                "cannot govern {path}: already {requested} groups on request (the limit)"
            ));
        }
        let Some((_, make)) = &mut self.governor else {
            return Err("this daemon governs no groups on request".into());
        };
        let mut source = make(&canonical).map_err(|e| format!("cannot govern {path}: {e}"))?;
        let page = PageWriter::new().map_err(|e| format!("cannot make its page: {e}"))?;
        let obs = source
            .observe(monotonic_ns())
            .map_err(|e| format!("cannot govern {path}: {e}"))?;
        let current = record(&self.config, obs, source.pressure(), false);
        page.publish(&current);
        self.insert(name.clone(), source, page, current, true);
        Ok(name)
    }

    fn expire_handshakes(&mut self) {
        let limit = self.config.handshake_timeout;
        let late: Vec<(u64, String)> = self
            .clients
            .iter()
            .filter(|c| matches!(c.state, State::Hello { since, .. } if since.elapsed() >= limit))
            .map(|c| {
                let why = format!("no hello within {limit:?}");
                say(&c.stream, &format!("error: {why}\n"));
                (c.id, why)
            })
            .collect();
        self.drop_clients(late);
    }

    fn drop_clients(&mut self, ids: Vec<(u64, String)>) {
        for (id, why) in ids {
            if let Some(c) = self.clients.iter().find(|c| c.id == id) {
                drain(&c.stream);
            }
            self.clients.retain(|c| c.id != id);
            if !why.is_empty() {
                self.log(format_args!("client {id} dropped: {why}"));
            }
        }
    }
}

impl Drop for Daemon {
    /// Removes the socket, if it is still the one this daemon made.
    fn drop(&mut self) {
        if let Ok(m) = std::fs::symlink_metadata(&self.config.socket) {
            if (m.dev(), m.ino()) == self.socket_ino {
                let _ = std::fs::remove_file(&self.config.socket);
            }
        }
    }
}

/// The record of an observation, for a subscriber of nice 0. A candidate age beyond S_max
/// (infinite when the kernel reclaimed nothing lately) is published as S_max: Eq. 4.1 clamps
/// it there anyway, and JSON has no infinity. PSI `full` avg10 at or above
/// [`Config::thrashing_full_avg10`] puts a domain short of memory (free under tau) in the
/// thrashing tier whatever S says: tasks are losing that share of their time to memory
/// stalls, which is what the thesis's tier 4 ("S is a few seconds", drastic measures) exists
/// for, and on a machine without swap the turnover estimate of file pages alone can miss it.
/// A domain with free memory over tau where enforcement holds a member's limit lowered
/// (`holding`) stays in the plenty tier: its stalls are then not its lack of memory but
/// that member paging while it is held under its share (a hog niced down, section 5.1.2: the
/// niced process pays), and telling the cooperating members to take drastic measures for them
/// would turn the weights upside down.
fn record(
    config: &Config,
    mut obs: antsched_mem::record::Observation,
    psi: Option<Pressure>,
    holding: bool,
) -> SeverityRecord {
    let severity = &config.severity;
    if obs.candidate_age_s.is_nan() || obs.candidate_age_s > severity.s_max {
        obs.candidate_age_s = severity.s_max;
    }
    let mut r = SeverityRecord::new(severity, &obs, MemNice::default());
    if !(holding && r.tier == Tier::Plenty)
        && psi
            .and_then(|p| p.full)
            .is_some_and(|f| f.avg10 >= config.thrashing_full_avg10)
    {
        r.tier = Tier::Thrashing;
    }
    r
}

/// What a client asks in its first line.
#[derive(Debug, PartialEq)]
enum Request {
    /// `antsched-memd 1` (the machine) or `antsched-memd 1 domain NAME`.
    Subscribe(Option<String>),
    /// `antsched-memd 1 list`: the names of the domains, one a line after `ok N`.
    List,
    /// `antsched-memd 1 nices`: each domain's memory nice and name (`N\tNAME`), one a line
    /// after `ok N`.
    Nices,
    /// `antsched-memd 1 govern PATH`: observe the cgroup at PATH as a domain.
    Govern(String),
    /// `antsched-memd 1 sigmem PID SIGNO [DOMAIN]`: SIGMEM to PID (`crate::sigmem`).
    Sigmem(String),
    /// `antsched-memd 1 nice N pid P` or `antsched-memd 1 nice N cgroup PATH`: the memory
    /// nice of a process or of a governed group.
    Nice(i64, NiceTarget),
}

/// The first line of `buf` (ending at `end`, its newline), which must be all there is.
fn parse_request(buf: &[u8], end: usize) -> Result<Request, String> {
    let bad_hello = || {
        format!(
            "expected the hello {HELLO:?}, got {:?}",
            String::from_utf8_lossy(&buf[..buf.len().min(HELLO_MAX)])
        )
    };
    if buf.len() > end + 1 {
        return Err(bad_hello());
    }
    let line = std::str::from_utf8(&buf[..end]).map_err(|_| bad_hello())?;
    let prefix = HELLO.trim_end();
    let Some(rest) = line.strip_prefix(prefix) else {
        return Err(bad_hello());
    };
    if rest.is_empty() {
        return Ok(Request::Subscribe(None));
    }
    let rest = rest.strip_prefix(' ').ok_or_else(bad_hello)?;
    let (verb, arg) = rest.split_once(' ').unwrap_or((rest, ""));
    let need_arg = |what: &str| {
        if arg.trim().is_empty() {
            Err(format!("{verb:?} needs {what}"))
        } else {
            Ok(arg.to_string())
        }
    };
    match verb {
        "domain" => Ok(Request::Subscribe(Some(need_arg("a domain name")?))),
        "list" if arg.is_empty() => Ok(Request::List),
        "nices" if arg.is_empty() => Ok(Request::Nices),
        "govern" => Ok(Request::Govern(need_arg("a cgroup path")?)),
        "sigmem" => Ok(Request::Sigmem(need_arg("PID SIGNO [DOMAIN]")?)),
        "nice" => parse_nice(arg),
        _ => Err(format!(
            "unknown request {rest:?} (expected \"{prefix}\", \"{prefix} domain NAME\", \
             \"{prefix} list\", \"{prefix} govern PATH\", \"{prefix} sigmem PID SIGNO \
             [DOMAIN]\", \"{prefix} nice N pid PID\" or \"{prefix} nice N cgroup PATH\")"
        )),
    }
}

/// The arguments of `nice`: `N pid PID` or `N cgroup PATH`. The range of N is checked where
/// the request is answered (`MemNice::new`), so that its error is the one message for it.
fn parse_nice(arg: &str) -> Result<Request, String> {
    let usage = "expected \"nice N pid PID\" or \"nice N cgroup PATH\"";
    let mut words = arg.splitn(3, ' ');
    let (Some(n), Some(kind), Some(what)) = (words.next(), words.next(), words.next()) else {
        return Err(format!("{usage}, got \"nice {arg}\""));
    };
    let n: i64 = n
        .parse()
        .map_err(|_| format!("nice {n:?} is not a whole number ({usage})"))?;
    match kind {
        "pid" => {
            let pid: u32 = what
                .parse()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| format!("{what:?} is not a process id ({usage})"))?;
            Ok(Request::Nice(n, NiceTarget::Pid(pid)))
        }
        "cgroup" if !what.trim().is_empty() => {
            Ok(Request::Nice(n, NiceTarget::Cgroup(what.to_string())))
        }
        _ => Err(format!("{usage}, got \"nice {arg}\"")),
    }
}

/// Registers a PSI trigger: the spec written to `file` opened read-write. The kernel then
/// reports POLLPRI on the descriptor when the stall in a window exceeds the threshold.
/// Fails (unprivileged windows not a multiple of 2 s, a kernel without PSI, a cgroup2 group
/// gone) with the kernel's reason.
///
/// Windows that are not a multiple of 2 s are refused (EINVAL) to a process without
/// CAP_SYS_RESOURCE, which root in a container may lack (this project's machines): then the
/// window is rounded up to the next multiple of 2 s, the stall threshold scaled with it, and
/// the log says which trigger was registered.
fn psi_trigger(file: &Path, spec: &str) -> Result<(OwnedFd, String), String> {
    match psi_trigger_once(file, spec) {
        Err((why, true)) => {
            let mut words = spec.split_whitespace();
            let (Some(kind), Some(Ok(stall)), Some(Ok(window)), None) = (
                words.next(),
                words.next().map(str::parse::<u64>),
                words.next().map(str::parse::<u64>),
                words.next(),
            ) else {
                return Err(why);
            };
            let rounded = window.div_ceil(2_000_000).max(1) * 2_000_000;
            if rounded == window {
                return Err(why);
            }
            let scaled = format!("{kind} {} {rounded}", stall * rounded / window);
            psi_trigger_once(file, &scaled)
                .map(|fd| (fd, scaled.clone()))
                .map_err(|(again, _)| format!("{why}; and {again}"))
        }
        Err((why, false)) => Err(why),
        Ok(fd) => Ok((fd, spec.to_string())),
    }
}

/// One attempt; the flag says the kernel found the spec invalid (EINVAL).
fn psi_trigger_once(file: &Path, spec: &str) -> Result<OwnedFd, (String, bool)> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        file,
        OFlags::RDWR | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| (format!("cannot open it read-write: {e}"), false))?;
    // The kernel replaces the last byte written with a NUL: write one.
    let mut text = spec.as_bytes().to_vec();
    text.push(0);
    rustix::io::write(&fd, &text).map_err(|e| {
        (
            format!("the kernel refused {spec:?}: {e}"),
            e == rustix::io::Errno::INVAL,
        )
    })?;
    Ok(fd)
}

fn tier_name(t: Tier) -> &'static str {
    match t {
        Tier::Plenty => "plenty",
        Tier::Ramp => "ramp",
        Tier::Paging => "paging",
        Tier::Thrashing => "thrashing",
    }
}

fn summary(r: &SeverityRecord) -> String {
    format!(
        "S {:.1} s ({}), candidate age {:.1} s ({}), free {} MiB of tau {} MiB",
        r.severity_s,
        tier_name(r.tier),
        r.candidate_age_s,
        estimator_name(r.estimator),
        r.free_bytes >> 20,
        r.tau_bytes >> 20
    )
}

fn estimator_name(e: Estimator) -> &'static str {
    match e {
        Estimator::Exact => "exact",
        Estimator::Turnover => "turnover",
        Estimator::Mglru => "mglru",
        Estimator::Damon => "damon",
    }
}

/// Reads and discards what a client sent and the daemon has not read (at most 64 KiB, never
/// blocking), so that closing its socket does not reset the connection (a Unix socket closed
/// with unread input makes the peer's next read fail with ECONNRESET, losing the error line
/// that says why it was dropped).
fn drain(mut stream: &UnixStream) {
    let mut buf = [0u8; 4096];
    for _ in 0..16 {
        match stream.read(&mut buf) {
            Ok(n) if n > 0 => continue,
            _ => return,
        }
    }
}

/// One line to a client, best effort and never blocking.
fn say(stream: &UnixStream, line: &str) {
    let _ = rustix::net::send(
        stream,
        line.as_bytes(),
        SendFlags::NOSIGNAL | SendFlags::DONTWAIT,
    );
}

/// The reply to a good hello: `ok LAYOUT\n` with the page's memfd and the client's eventfd.
fn send_fds(stream: &UnixStream, page: &OwnedFd, eventfd: &OwnedFd) -> std::io::Result<()> {
    let reply = format!("ok {LAYOUT}\n");
    let fds = [page.as_fd(), eventfd.as_fd()];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(std::io::Error::other("ancillary buffer too small"));
    }
    let n = rustix::net::sendmsg(
        stream,
        &[IoSlice::new(reply.as_bytes())],
        &mut control,
        SendFlags::NOSIGNAL | SendFlags::DONTWAIT,
    )?;
    if n != reply.len() {
        return Err(std::io::Error::other("short send"));
    }
    Ok(())
}

/// Binds `path`, replacing a stale socket left by a daemon that died, never another daemon's
/// live socket or a file that is not a socket. Clients of any user may connect: the record is
/// read-only information.
pub(crate) fn listen(path: &Path) -> Result<UnixListener, Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(Error::NoDirectory {
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
        });
    }
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !m.file_type().is_socket() {
            return Err(Error::NotASocket {
                path: path.to_path_buf(),
            });
        }
        match UnixStream::connect(path) {
            Ok(_) => {
                return Err(Error::InUse {
                    path: path.to_path_buf(),
                })
            }
            Err(_) => {
                let _ = std::fs::remove_file(path);
            }
        }
    }
    let bind_err = |source| Error::Bind {
        path: path.to_path_buf(),
        source,
    };
    let listener = UnixListener::bind(path).map_err(bind_err)?;
    listener.set_nonblocking(true).map_err(bind_err)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).map_err(bind_err)?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_and_bad_ones_say_what_is_valid() {
        let p = |line: &str| parse_request(line.as_bytes(), line.len() - 1);
        assert_eq!(p("antsched-memd 1\n"), Ok(Request::Subscribe(None)));
        assert_eq!(
            p("antsched-memd 1 domain /sys/fs/cgroup/memory/a b\n"),
            Ok(Request::Subscribe(Some("/sys/fs/cgroup/memory/a b".into())))
        );
        assert_eq!(p("antsched-memd 1 list\n"), Ok(Request::List));
        assert_eq!(
            p("antsched-memd 1 govern /x\n"),
            Ok(Request::Govern("/x".into()))
        );
        assert!(p("antsched-memd 1 domain \n")
            .unwrap_err()
            .contains("needs a domain"));
        assert!(p("antsched-memd 1 govern\n")
            .unwrap_err()
            .contains("needs a cgroup path"));
        let e = p("antsched-memd 1 reboot\n").unwrap_err();
        assert!(
            e.contains("unknown request \"reboot\"") && e.contains("govern PATH"),
            "{e}"
        );
        assert!(p("antsched-memd 2\n")
            .unwrap_err()
            .starts_with("expected the hello"));
        assert!(p("antsched-memd 1list\n")
            .unwrap_err()
            .starts_with("expected the hello"));
        assert_eq!(
            p("antsched-memd 1 nice -5 pid 42\n"),
            Ok(Request::Nice(-5, NiceTarget::Pid(42)))
        );
        assert_eq!(
            p("antsched-memd 1 nice 10 cgroup /sys/fs/cgroup/memory/antsched/a b\n"),
            Ok(Request::Nice(
                10,
                NiceTarget::Cgroup("/sys/fs/cgroup/memory/antsched/a b".into())
            ))
        );
        // The range is checked when answering; the shape here.
        assert_eq!(
            p("antsched-memd 1 nice 99 pid 1\n"),
            Ok(Request::Nice(99, NiceTarget::Pid(1)))
        );
        for (bad, want) in [
            ("antsched-memd 1 nice\n", "expected \"nice N pid PID\""),
            ("antsched-memd 1 nice 5\n", "expected \"nice N pid PID\""),
            (
                "antsched-memd 1 nice x pid 1\n",
                "nice \"x\" is not a whole number",
            ),
            (
                "antsched-memd 1 nice 5 pid 0\n",
                "\"0\" is not a process id",
            ),
            (
                "antsched-memd 1 nice 5 pid me\n",
                "\"me\" is not a process id",
            ),
            ("antsched-memd 1 nice 5 user 1\n", "got \"nice 5 user 1\""),
        ] {
            let e = p(bad).unwrap_err();
            assert!(e.contains(want), "{bad:?}: {e}");
        }
        // Two lines at once: the second is not read as a request.
        let two = b"antsched-memd 1\nantsched-memd 1\n";
        assert!(parse_request(two, 15)
            .unwrap_err()
            .starts_with("expected the hello"));
    }

    /// PSI `full` avg10 at or above the threshold is the thrashing tier, whatever S says,
    /// except in a domain with free memory over tau where a member's limit is held; below it
    /// (or without PSI) the tier is S's.
    #[test]
    fn psi_full_avg10_above_the_threshold_is_thrashing_unless_a_held_member_stalls() {
        use antsched_mem::kernel::PsiLine;
        let config = Config::new("/unused");
        let obs = antsched_mem::record::Observation {
            free_bytes: 10 << 30,
            total_bytes: 20 << 30,
            candidate_age_s: f64::INFINITY,
            paging: antsched_mem::cost::PagingCost {
                disk_service_s: 0.001,
                disk_queue: 1.0,
            },
            estimator: Estimator::Turnover,
            time: 1,
        };
        let psi = |full: f64| {
            Some(Pressure {
                some: PsiLine {
                    avg10: full,
                    ..Default::default()
                },
                full: Some(PsiLine {
                    avg10: full,
                    ..Default::default()
                }),
            })
        };
        assert_eq!(record(&config, obs, None, false).tier, Tier::Plenty);
        assert_eq!(record(&config, obs, psi(9.99), false).tier, Tier::Plenty);
        let r = record(&config, obs, psi(10.0), false);
        assert_eq!(
            (r.tier, r.severity_s, r.candidate_age_s),
            (Tier::Thrashing, 3600.0, 3600.0)
        );
        // Free over tau while a member is held: plenty, stalls or not (the held member pays).
        assert_eq!(record(&config, obs, psi(50.0), true).tier, Tier::Plenty);
        // Free under tau (1 GB of 20, tau 2 GB), held or not: the ramp, unless the stalls
        // pass 10%.
        let short = antsched_mem::record::Observation {
            free_bytes: 1 << 30,
            ..obs
        };
        for holding in [false, true] {
            assert_eq!(record(&config, short, psi(9.99), holding).tier, Tier::Ramp);
            assert_eq!(
                record(&config, short, psi(10.0), holding).tier,
                Tier::Thrashing
            );
        }
    }

    /// On this machine root may lack CAP_SYS_RESOURCE: the 1 s window is refused and the
    /// 2 s one taken. Either way a trigger is registered where the kernel has PSI.
    #[test]
    fn a_psi_trigger_registers_or_says_why() {
        let file = Path::new("/proc/pressure/memory");
        if !file.exists() {
            eprintln!("skipping: no {}", file.display());
            return;
        }
        match psi_trigger(file, DEFAULT_PSI_TRIGGER) {
            Ok((fd, used)) => {
                assert!(
                    used == DEFAULT_PSI_TRIGGER || used == "some 300000 2000000",
                    "{used}"
                );
                // Armed, with no stall reported yet on an idle machine's first poll or one.
                let mut fds = [PollFd::new(&fd, PollFlags::PRI)];
                rustix::event::poll(&mut fds, Some(&rustix::time::Timespec::default())).unwrap();
            }
            Err(why) => {
                assert!(
                    why.contains("refused") || why.contains("cannot open"),
                    "{why}"
                );
                eprintln!("no trigger here: {why}");
            }
        }
        let e = psi_trigger(file, "bogus 1 2").unwrap_err();
        assert!(e.contains("the kernel refused \"bogus 1 2\""), "{e}");
        let e = psi_trigger(Path::new("/nonexistent/pressure"), DEFAULT_PSI_TRIGGER).unwrap_err();
        assert!(e.starts_with("cannot open it read-write"), "{e}");
    }
}
