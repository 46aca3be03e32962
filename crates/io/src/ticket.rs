//! A request's result on its way back to whoever submitted it: waited for by blocking
//! ([`Ticket::wait`]) or awaited as a future.
//!
//! The event loop fills each slot exactly once ([`Slot::fulfil`] returns whether it did, and
//! the loop's tests assert it never fills one twice). The submitter may wait, poll, or drop
//! the ticket; dropping it does not cancel the I/O (the loop owns the buffer until the kernel
//! is done with it), the result is simply discarded.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};

use antsched_core::Nanos;

use crate::buf::IoBuf;
use crate::error::IoError;

/// What a completed request gives back: the data read (empty for writes) and when the
/// runtime completed it (nanoseconds on the runtime's clock).
#[derive(Debug)]
pub struct Done {
    pub buf: IoBuf,
    pub completed_at: Nanos,
}

pub(crate) enum State {
    Waiting(Option<Waker>),
    Ready(Result<Done, IoError>),
    Taken,
}

pub(crate) struct Slot {
    state: Mutex<State>,
    cv: Condvar,
}

impl Slot {
    pub(crate) fn new() -> Arc<Slot> {
        Arc::new(Slot {
            state: Mutex::new(State::Waiting(None)),
            cv: Condvar::new(),
        })
    }

    /// Delivers the result. Returns `false` (and changes nothing) if a result was already
    /// delivered: a request is completed once.
    pub(crate) fn fulfil(&self, r: Result<Done, IoError>) -> bool {
        let waker = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            match &mut *s {
                State::Waiting(w) => {
                    let w = w.take();
                    *s = State::Ready(r);
                    w
                }
                _ => return false,
            }
        };
        self.cv.notify_all();
        if let Some(w) = waker {
            w.wake();
        }
        true
    }
}

/// The pending result of one request. Block on it with [`wait`](Self::wait), or `.await` it.
pub struct Ticket(pub(crate) Arc<Slot>);

impl Ticket {
    pub(crate) fn ready(r: Result<Done, IoError>) -> Ticket {
        let s = Slot::new();
        s.fulfil(r);
        Ticket(s)
    }

    /// Blocks until the request completes.
    pub fn wait(self) -> Result<Done, IoError> {
        let mut s = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match std::mem::replace(&mut *s, State::Taken) {
                State::Ready(r) => return r,
                State::Taken => unreachable!("a ticket is consumed by wait"),
                w @ State::Waiting(_) => {
                    *s = w;
                    s = self.0.cv.wait(s).unwrap_or_else(|e| e.into_inner());
                }
            }
        }
    }

    /// Whether the result has arrived (then [`wait`](Self::wait) returns at once).
    pub fn is_done(&self) -> bool {
        matches!(
            *self.0.state.lock().unwrap_or_else(|e| e.into_inner()),
            State::Ready(_)
        )
    }
}

impl Future for Ticket {
    type Output = Result<Done, IoError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut s = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        match std::mem::replace(&mut *s, State::Taken) {
            State::Ready(r) => Poll::Ready(r),
            State::Waiting(_) => {
                *s = State::Waiting(Some(cx.waker().clone()));
                Poll::Pending
            }
            State::Taken => panic!("Ticket polled after it returned Ready"),
        }
    }
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ticket(done: {})", self.is_done())
    }
}

/// Runs a future to completion on the current thread (parks between polls). Enough for
/// examples and tests; a real server uses its own executor.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    use std::task::Wake;
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}
