//! The client library: connect to the daemon, read the severity record from the shared page
//! without a system call, and block until the daemon signals a change worth acting on.
//!
//! ```no_run
//! let client = antsched_memd::connect(antsched_memd::DEFAULT_SOCKET)?;
//! loop {
//!     let r = client.current();
//!     println!("S = {:.0} s ({:?})", r.severity_s, r.tier);
//!     // Halved, doubled, or a second passed while S < S_max.
//!     client.wait(None)?;
//! }
//! # Ok::<(), antsched_memd::ClientError>(())
//! ```

use std::io::IoSliceMut;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use antsched_mem::record::SeverityRecord;
use rustix::event::{PollFd, PollFlags};
use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendFlags};

use crate::page::{PageError, PageReader, LAYOUT};
use crate::HELLO;

/// Why a client could not connect or wait.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot connect to {path}: {source} (is antsched memd running?)")]
    Connect {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: the daemon refused: {reason}")]
    Refused { path: PathBuf, reason: String },
    #[error("{path}: not an antsched memd reply: {reply:?}")]
    Protocol { path: PathBuf, reply: String },
    #[error("{path}: {source}")]
    Page {
        path: PathBuf,
        #[source]
        source: PageError,
    },
    #[error("{path}: the daemon has not published a record")]
    NoRecord { path: PathBuf },
}

/// A connection to the daemon. The socket stays open: the daemon drops a client's state when
/// it closes.
pub struct Client {
    path: PathBuf,
    stream: UnixStream,
    page: PageReader,
    eventfd: OwnedFd,
}

/// How long [`connect`] waits for the daemon's reply.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// Connects to the daemon at `path`, says hello, and maps the page it sends: the machine
/// domain's.
pub fn connect(path: impl AsRef<Path>) -> Result<Client, ClientError> {
    subscribe(path.as_ref(), HELLO.to_string())
}

/// Like [`connect_domain`], for the memory cgroup at `group`: the daemon names a group's domain
/// by its canonical path, so a program that found its own group (`/proc/self/cgroup`, or a
/// path it was given) subscribes to it without resolving links itself.
pub fn connect_group(path: impl AsRef<Path>, group: &Path) -> Result<Client, ClientError> {
    let name = group
        .canonicalize()
        .unwrap_or_else(|_| group.to_path_buf())
        .display()
        .to_string();
    connect_domain(path, &name)
}

/// Like [`connect`], for the domain named `domain`: `machine`, or the path of a memory cgroup
/// the daemon governs (as [`list_domains`] names it).
pub fn connect_domain(path: impl AsRef<Path>, domain: &str) -> Result<Client, ClientError> {
    if domain.contains('\n') {
        return Err(ClientError::Protocol {
            path: path.as_ref().to_path_buf(),
            reply: format!("a domain name cannot hold a newline: {domain:?}"),
        });
    }
    subscribe(
        path.as_ref(),
        format!("{} domain {domain}\n", HELLO.trim_end()),
    )
}

/// The names of the domains the daemon serves, the machine first.
pub fn list_domains(path: impl AsRef<Path>) -> Result<Vec<String>, ClientError> {
    let path = path.as_ref();
    let reply = request(path, &format!("{} list\n", HELLO.trim_end()))?;
    let mut lines = reply.lines();
    let n: usize = lines
        .next()
        .and_then(|l| l.strip_prefix("ok "))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| ClientError::Protocol {
            path: path.to_path_buf(),
            reply: reply.clone(),
        })?;
    let names: Vec<String> = lines.map(str::to_string).collect();
    if names.len() != n {
        return Err(ClientError::Protocol {
            path: path.to_path_buf(),
            reply,
        });
    }
    Ok(names)
}

/// Every domain's memory nice as the daemon holds it (0 for the machine and for a group whose
/// nice was never set), by domain name.
pub fn domain_nices(path: impl AsRef<Path>) -> Result<Vec<(String, f64)>, ClientError> {
    let path = path.as_ref();
    let reply = request(path, &format!("{} nices\n", HELLO.trim_end()))?;
    let bad = || ClientError::Protocol {
        path: path.to_path_buf(),
        reply: reply.clone(),
    };
    let mut lines = reply.lines();
    let n: usize = lines
        .next()
        .and_then(|l| l.strip_prefix("ok "))
        .and_then(|n| n.parse().ok())
        .ok_or_else(bad)?;
    let out = lines
        .map(|l| {
            let (nice, name) = l.split_once('\t')?;
            Some((name.to_string(), nice.parse().ok()?))
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(bad)?;
    if out.len() != n {
        return Err(bad());
    }
    Ok(out)
}

/// Asks the daemon to govern the memory cgroup at `cgroup` (which must lie under the parent
/// it governs groups in on request). Returns the domain's name.
pub fn govern(path: impl AsRef<Path>, cgroup: &Path) -> Result<String, ClientError> {
    let path = path.as_ref();
    let text = cgroup.display().to_string();
    if text.contains('\n') {
        return Err(ClientError::Protocol {
            path: path.to_path_buf(),
            reply: format!("a path cannot hold a newline: {text:?}"),
        });
    }
    let reply = request(path, &format!("{} govern {text}\n", HELLO.trim_end()))?;
    reply
        .strip_prefix("ok ")
        .map(|n| n.trim_end().to_string())
        .ok_or_else(|| ClientError::Protocol {
            path: path.to_path_buf(),
            reply,
        })
}

/// Registers process `pid` for SIGMEM: the daemon queues signal `signo` (a real-time one;
/// [`crate::sigmem::default_signal`] unless the program chose another) to it with S in ms as
/// `si_value.sival_int`, on the eventfd's rule, until the process exits. `domain` names the
/// domain (the machine when None). `signo` 0 unregisters it. The caller must be root or own
/// the process. The process must have a handler for the signal: until it does, the daemon
/// skips it (a real-time signal's default action is to terminate).
pub fn register_sigmem(
    path: impl AsRef<Path>,
    pid: i32,
    signo: i32,
    domain: Option<&str>,
) -> Result<(), ClientError> {
    let path = path.as_ref();
    let mut line = format!("{} sigmem {pid} {signo}", HELLO.trim_end());
    if let Some(d) = domain {
        if d.contains('\n') {
            return Err(ClientError::Protocol {
                path: path.to_path_buf(),
                reply: format!("a domain name cannot hold a newline: {d:?}"),
            });
        }
        line.push(' ');
        line.push_str(d);
    }
    line.push('\n');
    let reply = request(path, &line)?;
    if reply.starts_with("ok ") {
        Ok(())
    } else {
        Err(ClientError::Protocol {
            path: path.to_path_buf(),
            reply,
        })
    }
}

/// Sets the memory nice `nice` of a process or of a governed group (`antsched mem nice`).
/// Returns the daemon's confirmation (`nice N pid P weight W`). The daemon checks the range
/// (-20..=19), that the process exists and that the group lies under its parent, and refuses
/// with the reason otherwise ([`ClientError::Refused`]).
pub fn set_nice(
    path: impl AsRef<Path>,
    nice: i64,
    target: &crate::NiceTarget,
) -> Result<String, ClientError> {
    let path = path.as_ref();
    let what = match target {
        crate::NiceTarget::Pid(pid) => format!("pid {pid}"),
        crate::NiceTarget::Cgroup(group) => format!("cgroup {group}"),
    };
    if what.contains('\n') {
        return Err(ClientError::Protocol {
            path: path.to_path_buf(),
            reply: format!("a path cannot hold a newline: {what:?}"),
        });
    }
    let reply = request(path, &format!("{} nice {nice} {what}\n", HELLO.trim_end()))?;
    reply
        .strip_prefix("ok ")
        .map(|n| n.trim_end().to_string())
        .ok_or_else(|| ClientError::Protocol {
            path: path.to_path_buf(),
            reply,
        })
}

/// Sends one request line and reads the reply until the daemon closes.
fn request(path: &Path, line: &str) -> Result<String, ClientError> {
    use std::io::{Read, Write};
    let io = |source| ClientError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut stream = UnixStream::connect(path).map_err(|source| ClientError::Connect {
        path: path.to_path_buf(),
        source,
    })?;
    stream.set_read_timeout(Some(REPLY_TIMEOUT)).map_err(io)?;
    stream.write_all(line.as_bytes()).map_err(io)?;
    let mut reply = String::new();
    (&stream)
        .take(1 << 20)
        .read_to_string(&mut reply)
        .map_err(io)?;
    if let Some(reason) = reply.strip_prefix("error: ") {
        return Err(ClientError::Refused {
            path: path.to_path_buf(),
            reason: reason.trim_end().to_string(),
        });
    }
    Ok(reply)
}

fn subscribe(path: &Path, hello: String) -> Result<Client, ClientError> {
    let path = path.to_path_buf();
    let io = |source| ClientError::Io {
        path: path.clone(),
        source,
    };
    let stream = UnixStream::connect(&path).map_err(|source| ClientError::Connect {
        path: path.clone(),
        source,
    })?;
    stream.set_read_timeout(Some(REPLY_TIMEOUT)).map_err(io)?;
    // MSG_NOSIGNAL: a daemon that refused the connection (too many clients) and closed it
    // gives EPIPE here, not a SIGPIPE that would kill a program that did not ignore it. Its
    // reason is still waiting to be read below.
    match rustix::net::send(&stream, hello.as_bytes(), SendFlags::NOSIGNAL) {
        Ok(n) if n == hello.len() => {}
        Ok(_) => return Err(io(std::io::Error::other("short write of the hello"))),
        Err(rustix::io::Errno::PIPE | rustix::io::Errno::CONNRESET) => {}
        Err(e) => return Err(io(e.into())),
    }
    let mut buf = [0u8; 256];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let msg = rustix::net::recvmsg(
        &stream,
        &mut [IoSliceMut::new(&mut buf)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )
    .map_err(|e| io(e.into()))?;
    let mut fds: Vec<OwnedFd> = Vec::new();
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = m {
            fds.extend(rights);
        }
    }
    let reply = String::from_utf8_lossy(&buf[..msg.bytes]).into_owned();
    if let Some(reason) = reply.strip_prefix("error: ") {
        return Err(ClientError::Refused {
            path,
            reason: reason.trim_end().to_string(),
        });
    }
    let protocol = || ClientError::Protocol {
        path: path.clone(),
        reply: reply.clone(),
    };
    if reply != format!("ok {LAYOUT}\n") || fds.len() != 2 {
        return Err(protocol());
    }
    let eventfd = fds.pop().ok_or_else(protocol)?;
    let page_fd = fds.pop().ok_or_else(protocol)?;
    let page = PageReader::new(&page_fd).map_err(|source| ClientError::Page {
        path: path.clone(),
        source,
    })?;
    // The mapping keeps the memory; the descriptor is no longer needed.
    drop(page_fd);
    if page.read().is_none() {
        return Err(ClientError::NoRecord { path });
    }
    Ok(Client {
        path,
        stream,
        page,
        eventfd,
    })
}

impl Client {
    /// The latest record: a few loads from the shared page, no system call.
    pub fn current(&self) -> SeverityRecord {
        // `connect` saw a record, and the page never goes back to holding none.
        self.page
            .read()
            .map(|(r, _)| r)
            .unwrap_or_else(|| unreachable!("a page with a record never loses it"))
    }

    /// The client's eventfd, for a program's own poll loop: readable when the daemon
    /// signalled it ([`wait`](Self::wait) reads and clears it).
    pub fn eventfd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.eventfd.as_fd()
    }

    /// The page's sequence number: it advances by 2 with every record the daemon publishes.
    pub fn sequence(&self) -> u64 {
        self.page.read().map_or(0, |(_, s)| s)
    }

    /// The connection to the daemon, to poll beside [`eventfd`](Self::eventfd). After its
    /// answer to the hello the daemon sends nothing unless it drops the client (it may say
    /// why in a last line `error: <why>`) or stops: readable or hung up means this client
    /// will never be signalled again (the daemon stopped, or the domain's group is gone).
    pub fn socket(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.stream.as_fd()
    }

    /// Blocks until the daemon signals this client (S halved or doubled since it was last
    /// told, or a second passed while S < S_max), or until `timeout`. Returns how many
    /// signals were pending (0 on timeout), and clears them.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<u64, ClientError> {
        let io = |e: rustix::io::Errno| ClientError::Io {
            path: self.path.clone(),
            source: e.into(),
        };
        let ts = timeout.map(|t| rustix::time::Timespec {
            tv_sec: t.as_secs().min(i64::MAX as u64) as i64,
            tv_nsec: i64::from(t.subsec_nanos()),
        });
        loop {
            let mut fds = [PollFd::new(&self.eventfd, PollFlags::IN)];
            match rustix::event::poll(&mut fds, ts.as_ref()) {
                Ok(0) => return Ok(0),
                Ok(_) => break,
                // A signal handler ran: wait again (the timeout restarts, which only makes
                // the wait longer).
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(io(e)),
            }
        }
        let mut count = [0u8; 8];
        match rustix::io::read(&self.eventfd, &mut count) {
            Ok(8) => Ok(u64::from_ne_bytes(count)),
            // Another thread of this process took the count between poll and read.
            Err(rustix::io::Errno::AGAIN) => Ok(0),
            Ok(_) => Ok(0),
            Err(e) => Err(io(e)),
        }
    }
}
