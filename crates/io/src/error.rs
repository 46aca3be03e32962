//! Errors of the runtime, typed: a request's own failure goes back to that request's caller
//! and to no one else.

use antsched_core::Op;

/// Why one request failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IoError {
    /// The device (or the file system) returned an error for this request.
    #[error("{op:?} of {len} bytes at byte {offset} failed: {}", std::io::Error::from_raw_os_error(*errno))]
    Os {
        op: Op,
        offset: u64,
        len: u64,
        errno: i32,
    },
    /// The device transferred fewer bytes than asked (a read past the end of a file).
    #[error(
        "{op:?} at byte {offset}: transferred {got} of {len} bytes (past the end of the file?)"
    )]
    Short {
        op: Op,
        offset: u64,
        len: u64,
        got: u64,
    },
    /// The request itself is malformed; nothing was sent to the device.
    #[error("invalid request: {0}")]
    Invalid(String),
    /// The runtime was shutting down when the request arrived; nothing was sent to the device.
    #[error("the runtime is shutting down")]
    ShuttingDown,
    /// The runtime was abandoned ([`Runtime::abandon`](crate::Runtime::abandon)) while the
    /// scheduler still held the request; nothing was sent to the device.
    #[error("the run ended before the request was sent to the device")]
    Abandoned,
    /// The runtime's event loop failed (a bug: it panicked); the request's fate is unknown.
    #[error("the runtime's event loop failed; the request may or may not have been done")]
    LoopFailed,
}

impl IoError {
    /// The OS error number, for device errors.
    pub fn errno(&self) -> Option<i32> {
        match self {
            IoError::Os { errno, .. } => Some(*errno),
            _ => None,
        }
    }
}

/// Why a runtime (or a backend) could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("io_uring is not available here: {0} (the kernel may lack it, or a seccomp policy or io_uring_disabled may forbid it)")]
    NoIoUring(std::io::Error),
    #[error("cannot open {path}: {source}")]
    Open {
        path: String,
        source: std::io::Error,
    },
    #[error("bad backend {spec:?}: {problem}")]
    BadBackend { spec: String, problem: String },
    #[error(transparent)]
    Sim(#[from] antsched_sim::SimError),
    #[error(transparent)]
    Spec(#[from] antsched_core::SpecError),
    #[error("{0}")]
    Other(String),
}
