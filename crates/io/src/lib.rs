//! # antsched-io: the real-time runtime
//!
//! The same scheduler that `antsched-sim` drives on virtual time, driving real I/O on real
//! time (see `docs/architecture.md`, "Three worlds, one scheduler"). Use it when an application schedules its own
//! I/O: a storage server whose thread pool hides which client a request belongs to, so the
//! kernel's scheduler cannot anticipate for that client, can name the client as the request's
//! context here. Or put a program on an emulated 7,200 rpm disk where no spinning disk is at
//! hand.
//!
//! ## The pieces
//!
//! - [`Runtime`] ([`runtime`]): one event-loop thread per device. It owns the
//!   [`Scheduler`](antsched_core::Scheduler) (the sans-IO state machine of `antsched-core`),
//!   an io_uring ring for the I/O and for its timers, and the [`Backend`]. Any thread submits;
//!   each request's result comes back through its own [`Ticket`], which you can
//!   [`wait`](Ticket::wait) on (the blocking API: [`Runtime::read`], [`Runtime::write`]) or
//!   `.await` (the async API: [`Runtime::read_async`], [`Runtime::write_async`]). The caller
//!   names each request's context and class ([`Ctx`]).
//! - [`Backend`] ([`backend`]): `file:PATH` (a regular file or block device, `O_DIRECT` if
//!   asked), `emulated:NAME` (a disk model from `antsched-disk` over a backing [`Store`]: real
//!   bytes, completed when the model says), and a null device for measuring overhead. Any of
//!   them can fail every n-th request, for testing error paths.
//! - [`job`]: runs a fio job file in real time on an emulated disk, with real threads that
//!   issue real synchronous requests and really think: `antsched run`.
//! - [`calibrate`]: measures positioning time against LBN distance on a real file or an
//!   emulated disk, as the paper's installation-time calibration did: `antsched calibrate`.
//! - [`content`]: the deterministic bytes of the files `antsched run` creates, so that every
//!   byte read back is checked.
//!
//! ## In a few lines
//!
//! ```no_run
//! use antsched_io::{block_on, Backend, Ctx, Options, Runtime};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let backend = Backend::file("/dev/sdb".as_ref(), true)?; // O_DIRECT
//! // `antsched calibrate /dev/sdb --out curve.json` measured the disk once.
//! let sched = antsched_core::build("as-aged-sptf:estimator=curve.json", &backend.build_env(1))?;
//! let rt = Runtime::start(backend, sched, Options::default())?;
//! let client = Ctx::new(7, 1); // context: the connection; class: its tenant
//! let data = rt.read(client, 1 << 20, 65536)?; // blocking
//! rt.write(client, 0, &data)?;
//! let more = block_on(rt.read_async(client, 2 << 20, 65536))?; // a future
//! assert_eq!(more.buf.len(), 65536);
//! rt.context_exited(client.context); // the connection closed
//! let stats = rt.shutdown(); // drains what is in flight
//! println!("{} requests, {} failed", stats.completed, stats.failed);
//! # Ok(())
//! # }
//! ```
//!
//! ## A request's life
//!
//! `rt.read(ctx, offset, len)` allocates an aligned buffer, pushes the request on the loop's
//! queue and wakes the loop (an eventfd read in the ring) if it sleeps. The loop hands it to
//! `Scheduler::enqueue` with the current time, asks `poll_dispatch` what to send, and turns
//! each dispatched request into a read or write SQE. On an emulated disk it first asks the
//! disk model when the request finishes, `model.submit(req, now)`, and completes the request
//! at that instant even though the bytes moved sooner (a request whose real I/O is slower than
//! the model completes late, and is counted as such). Completion calls
//! `Scheduler::complete` and fills the caller's ticket. Meanwhile the loop sleeps in
//! `io_uring_enter` until a completion, a submission, or its next deadline (the scheduler's
//! `poll_timeout` or an emulated finish time), armed as an absolute io_uring timeout.
//!
//! ## Timers: io_uring timeouts
//!
//! Deadlines are `IORING_OP_TIMEOUT` requests with `IORING_TIMEOUT_ABS` on `CLOCK_MONOTONIC`,
//! not a timerfd: the loop already waits in `io_uring_enter`, so a timeout is just one more
//! completion to wait for, with no extra descriptor or `read` and no clock conversion. The
//! loop measures how late it woke for each deadline and reports it (`timer_overshoot_us` in
//! `antsched run`'s JSON). See [`runtime`] for the details, including the optional spin for
//! the last microseconds before a deadline.
//!
//! ## Choosing the options
//!
//! [`Options::default`] lets a caller waiting for a result spin up to 200 us first, but only
//! while the device answers in under half that (an SSD, a page-cache hit; never a disk): that
//! saves the caller's wake-up, about 10 to 20 us on the virtual machine this was measured on.
//! Likewise the loop, after delivering results, polls up to 50 us for the next request
//! ([`Options::poll`]), but only while callers have lately answered within half that: that
//! saves the loop's wake-up. Both cost a busy core while requests flow that fast, and nothing
//! otherwise; set them to 0 to always sleep. For an emulated disk, set [`Options::spin`] (200 us: `antsched run`'s
//! default) so deadlines are met to the microsecond rather than the tens of microseconds a
//! sleep overshoots. Where other work competes for the cores, set
//! [`Options::realtime_priority`]. `crates/io/README.md` has the figures and the commands that
//! measure them.
//!
//! ## Requirements
//!
//! Linux with io_uring (5.6 or later for timeouts and reads; the ring is set up with
//! `SINGLE_ISSUER` where available, and the files are registered). `COOP_TASKRUN` and
//! `DEFER_TASKRUN` are not used: with them a completion waits for the loop's next system
//! call, and the loop's deadlines were missed by milliseconds (measured: p99 timer overshoot
//! 1.6 to 2.8 ms with `COOP_TASKRUN`, against tens of microseconds without).
//! [`Runtime::start`] fails with
//! [`SetupError::NoIoUring`] where io_uring is missing or forbidden; tests skip with a printed
//! reason then, unless `ANTSCHED_REQUIRE_FUSE=1` (CI) makes that a failure.
//!
//! ## Unsafe code
//!
//! Only where io_uring and the OS need it: pushing SQEs (the buffers must outlive the
//! operation: the loop owns each request's buffer until its completion arrives), aligned
//! allocation for `O_DIRECT`, and a few libc calls. Each block says why it is sound.

pub mod backend;
pub mod buf;
pub mod calibrate;
pub mod clock;
pub mod content;
pub mod error;
pub mod job;
pub mod replay;
pub mod runtime;
pub mod ticket;

pub use backend::{Backend, BackendSpec, Extent, Place, Store};
pub use buf::IoBuf;
pub use clock::Clock;
pub use error::{IoError, SetupError};
pub use runtime::{Ctx, Options, Runtime, Stats};
pub use ticket::{block_on, Done, Ticket};

/// Whether io_uring works here; `Err` says why not. Tests use it to skip (or, under
/// `ANTSCHED_REQUIRE_FUSE=1`, to fail).
pub fn io_uring_available() -> Result<(), String> {
    io_uring::IoUring::new(8)
        .map(|_| ())
        .map_err(|e| format!("io_uring unavailable: {e}"))
}
