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

use crate::page::{PageWriter, LAYOUT};
use crate::source::{ObservationSource, SourceError};
use crate::{monotonic_ns, HELLO};

/// The daemon's tunables.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where the Unix socket is made.
    pub socket: PathBuf,
    /// How often the domain is observed. 1 s, the thesis's tick.
    pub interval: Duration,
    pub severity: SeverityConfig,
    /// Clients served at once; a connection beyond is refused with a reason. 1024.
    pub max_clients: usize,
    /// A client that has not said hello by then is dropped. 5 s.
    pub handshake_timeout: Duration,
    /// Log to stderr (start, clients, tier changes, a summary a minute, source errors).
    pub log: bool,
}

impl Config {
    pub fn new(socket: impl Into<PathBuf>) -> Self {
        Self {
            socket: socket.into(),
            interval: Duration::from_secs(1),
            severity: SeverityConfig::default(),
            max_clients: 1024,
            handshake_timeout: Duration::from_secs(5),
            log: true,
        }
    }
}

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
    },
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
    page: PageWriter,
    source: Box<dyn ObservationSource>,
    stop: Arc<OwnedFd>,
    clients: Vec<Conn>,
    next_id: u64,
    current: SeverityRecord,
    next_tick: Instant,
    last_summary: Instant,
    /// After an accept error other than "no connection pending" (EMFILE: out of
    /// descriptors), the listener is left alone until then, so that a connection the daemon
    /// cannot take does not keep poll returning at once.
    accept_paused_until: Option<Instant>,
}

/// How long the listener rests after an accept error.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

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
        let page = PageWriter::new().map_err(sys("cannot make the severity page"))?;
        let now = monotonic_ns();
        let obs = source.observe(now).map_err(Error::Source)?;
        let current = record(&config.severity, obs);
        page.publish(&current);
        let listener = listen(&config.socket)?;
        let meta = std::fs::metadata(&config.socket).map_err(|source| Error::Bind {
            path: config.socket.clone(),
            source,
        })?;
        let stop = rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
            .map_err(sys("cannot make the stop eventfd"))?;
        let d = Self {
            socket_ino: (meta.dev(), meta.ino()),
            listener,
            page,
            source,
            stop: Arc::new(stop),
            clients: Vec::new(),
            next_id: 1,
            current,
            next_tick: Instant::now() + config.interval,
            last_summary: Instant::now(),
            accept_paused_until: None,
            config,
        };
        d.log(format_args!(
            "serving {} every {:?}: {}",
            d.config.socket.display(),
            d.config.interval,
            summary(&d.current)
        ));
        let detail = d.source.describe();
        if !detail.is_empty() {
            d.log(format_args!("{detail}"));
        }
        Ok(d)
    }

    pub fn stopper(&self) -> Stopper {
        Stopper(self.stop.clone())
    }

    /// The record last published.
    pub fn current(&self) -> SeverityRecord {
        self.current
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
            let (stop, accept, ready) = {
                let mut fds = Vec::with_capacity(2 + self.clients.len());
                fds.push(PollFd::new(&*self.stop, PollFlags::IN));
                fds.push(PollFd::new(&self.listener, listen));
                for c in &self.clients {
                    fds.push(PollFd::new(&c.stream, PollFlags::IN));
                }
                let ts = rustix::time::Timespec {
                    tv_sec: timeout.as_secs() as i64,
                    tv_nsec: i64::from(timeout.subsec_nanos()),
                };
                match rustix::event::poll(&mut fds, Some(&ts)) {
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(sys("poll")(e)),
                }
                let ready: Vec<PollFlags> = fds[2..].iter().map(|f| f.revents()).collect();
                (
                    !fds[0].revents().is_empty(),
                    !fds[1].revents().is_empty(),
                    ready,
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
                    if let Err(why) = self.serve(i) {
                        drop_ids.push((self.clients[i].id, why));
                    }
                }
            }
            self.drop_clients(drop_ids);
            if accept && self.accept_paused_until.is_none() {
                self.accept();
            }
            self.expire_handshakes();
            if Instant::now() >= self.next_tick {
                self.tick();
            }
            self.notify();
        }
    }

    /// Until the next tick, the next handshake deadline or the next 1 s repeat.
    fn timeout(&self) -> Duration {
        let now = Instant::now();
        let mut t = self.next_tick.saturating_duration_since(now);
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
        let now = monotonic_ns();
        self.next_tick += self.config.interval;
        if self.next_tick < Instant::now() {
            // Behind (the machine was suspended, or the loop starved): no burst of catch-up
            // ticks.
            self.next_tick = Instant::now() + self.config.interval;
        }
        match self.source.observe(now) {
            Ok(obs) => {
                let r = record(&self.config.severity, obs);
                let (before, after) = (self.current.tier, r.tier);
                self.current = r;
                self.page.publish(&r);
                if before != after {
                    self.log(format_args!(
                        "tier {} -> {}: {}",
                        tier_name(before),
                        tier_name(after),
                        summary(&r)
                    ));
                }
                if self.last_summary.elapsed() >= Duration::from_secs(60) {
                    self.last_summary = Instant::now();
                    self.log(format_args!("{}; {}", summary(&r), self.source.describe()));
                }
            }
            Err(e) => self.log(format_args!(
                "observation failed, the last record stays: {e}"
            )),
        }
    }

    fn notify(&mut self) {
        let now = monotonic_ns();
        let s = self.current.severity_s;
        for c in &mut self.clients {
            if let State::Ready { eventfd, notifier } = &mut c.state {
                if notifier.observe(s, now).is_some() {
                    // Non-blocking: a counter at its maximum (a client that never reads) is
                    // left as it is.
                    let _ = rustix::io::write(&*eventfd, &1u64.to_ne_bytes());
                }
            }
        }
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
    fn serve(&mut self, i: usize) -> Result<(), String> {
        let s_max = self.config.severity.s_max;
        let page_fd = self.page.fd();
        let c = &mut self.clients[i];
        let mut chunk = [0u8; 256];
        loop {
            let n = match (&c.stream).read(&mut chunk) {
                Ok(0) => return Err("closed the connection".into()),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
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
                    let line = &buf[..=end];
                    if line != HELLO.as_bytes() || buf.len() > end + 1 {
                        let why = format!(
                            "expected the hello {HELLO:?}, got {:?}",
                            String::from_utf8_lossy(&buf[..buf.len().min(HELLO_MAX)])
                        );
                        say(&c.stream, &format!("error: {why}\n"));
                        return Err(why);
                    }
                    let eventfd =
                        rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
                            .map_err(|e| format!("cannot make its eventfd: {e}"))?;
                    send_fds(&c.stream, page_fd, &eventfd)
                        .map_err(|e| format!("cannot send it the page: {e}"))?;
                    c.state = State::Ready {
                        eventfd,
                        notifier: Notifier::new(s_max),
                    };
                    let id = c.id;
                    self.log(format_args!("client {id} subscribed"));
                    return Ok(());
                }
            }
        }
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
            self.log(format_args!("client {id} dropped: {why}"));
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
/// it there anyway, and JSON has no infinity.
fn record(config: &SeverityConfig, mut obs: antsched_mem::record::Observation) -> SeverityRecord {
    if obs.candidate_age_s.is_nan() || obs.candidate_age_s > config.s_max {
        obs.candidate_age_s = config.s_max;
    }
    SeverityRecord::new(config, &obs, MemNice::default())
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
fn listen(path: &Path) -> Result<UnixListener, Error> {
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
