//! Requests and the identities they carry: who issued them ([`ContextId`]) and on whose account
//! they are served ([`ClassId`]).

use std::fmt;

/// Time in nanoseconds. The core never reads a clock: every entry point takes `now` as an
/// argument, so the simulator can pass virtual time and the runtime real time.
pub type Nanos = u64;

/// One millisecond in [`Nanos`].
pub const MS: Nanos = 1_000_000;
/// One microsecond in [`Nanos`].
pub const US: Nanos = 1_000;
/// One second in [`Nanos`].
pub const SEC: Nanos = 1_000_000_000;

/// Size of a sector, the unit of [`Request::sector`] and [`Request::sectors`].
pub const SECTOR_BYTES: u64 = 512;

/// Identity of one request, unique among the requests a scheduler holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

/// Whoever issues a synchronous chain of requests: the paper's "process", Linux's
/// `io_context`, a client connection in a server. Statistics are kept per context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContextId(pub u32);

/// A resource principal with a weight: the paper's "resource container", fio's `cgroup`.
/// Proportional-share policies divide the disk among classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassId(pub u32);

/// Weight a class has until told otherwise ([`crate::Scheduler::set_class_weight`]).
pub const DEFAULT_WEIGHT: u32 = 100;

/// Direction of the transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
}

/// One disk request as the scheduler sees it. Small and `Copy`: policies hand out candidates by
/// value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub id: RequestId,
    pub context: ContextId,
    pub class: ClassId,
    pub op: Op,
    /// First sector (512 bytes each) on the device.
    pub sector: u64,
    /// Length in sectors; at least one.
    pub sectors: u32,
    /// The issuer blocks until this request completes. Reads are synchronous unless they are
    /// prefetches; writes are synchronous only when marked so (O_SYNC, fsync, metadata).
    pub sync: bool,
    /// When the request reached the scheduler.
    pub issued: Nanos,
    /// A later piece of one larger request that the file system split (the paper's 1 MB read
    /// issued as eight 128 KB pieces, section 4.2.4). Continuation pieces are not new requests
    /// for the per-context statistics: the core treats the pieces as one request.
    pub continuation: bool,
}

impl Request {
    /// The sector just past the end of the request.
    pub fn end(&self) -> u64 {
        self.sector + u64::from(self.sectors)
    }

    /// Length in bytes.
    pub fn bytes(&self) -> u64 {
        u64::from(self.sectors) * SECTOR_BYTES
    }

    /// Whether this request feeds the anticipation statistics and can be waited for.
    ///
    /// Section 3.3 collects statistics on "every incoming synchronous request"; the thesis
    /// appendix tests `is_read_request`. We take both: every read, and every write the issuer
    /// waits for. Asynchronous (delayed) writes are never waited for: no issuer is blocked on
    /// them, so no dependent request follows their completion.
    pub fn drives_anticipation(&self) -> bool {
        self.op == Op::Read || self.sync
    }
}

impl fmt::Display for ContextId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ctx{}", self.0)
    }
}

impl fmt::Display for ClassId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "class{}", self.0)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "req{}", self.0)
    }
}
