//! A request's result on its way back to whoever submitted it: waited for by blocking
//! ([`Ticket::wait`]) or awaited as a future.
//!
//! The event loop fills each slot exactly once (filling returns whether it did, and
//! the loop's tests assert it never fills one twice). The submitter may wait, poll, or drop
//! the ticket; dropping it does not cancel the I/O (the loop owns the buffer until the kernel
//! is done with it), the result is simply discarded.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};

use antsched_core::Nanos;

use crate::buf::IoBuf;
use crate::error::IoError;

/// What a completed request gives back: the data read (empty for writes), when the scheduler
/// sent it to the device and when the runtime completed it (nanoseconds on the runtime's
/// clock). `completed_at - dispatched_at` is the device's service time as the loop saw it,
/// without the time the request waited in the scheduler or the hand-offs between threads.
#[derive(Debug)]
pub struct Done {
    pub buf: IoBuf,
    pub dispatched_at: Nanos,
    pub completed_at: Nanos,
    /// On an emulated disk, how long after the model's finish the runtime completed the
    /// request (the event loop woke late, or the real I/O took longer than the model): what
    /// `completed_at` overstates the device's time by. 0 on other backends, which cannot tell.
    pub late: Nanos,
}

pub(crate) enum State {
    /// Not yet: the task to wake, and whether a thread sleeps on the condition variable.
    Waiting(Option<Waker>, bool),
    Ready(Result<Done, IoError>),
    Taken,
}

pub(crate) struct Slot {
    state: Mutex<State>,
    cv: Condvar,
    /// Set (after the result is stored) when the result is there: lets a waiter spin briefly
    /// without the lock, and lets the loop skip the futex wake when nobody sleeps.
    ready: AtomicBool,
    /// How long [`Ticket::wait`] spins before it sleeps ([`Options::wait_spin`](crate::Options)).
    spin: u64,
}

impl Slot {
    pub(crate) fn new(spin: u64) -> Arc<Slot> {
        Arc::new(Slot {
            spin,
            state: Mutex::new(State::Waiting(None, false)),
            cv: Condvar::new(),
            ready: AtomicBool::new(false),
        })
    }

    /// Delivers the result. Returns `false` (and changes nothing) if a result was already
    /// delivered: a request is completed once.
    pub(crate) fn fulfil(&self, r: Result<Done, IoError>) -> bool {
        let (waker, sleeper) = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            match &mut *s {
                State::Waiting(w, sleeping) => {
                    let w = (w.take(), *sleeping);
                    *s = State::Ready(r);
                    self.ready.store(true, Ordering::Release);
                    w
                }
                _ => return false,
            }
        };
        if sleeper {
            self.cv.notify_all();
        }
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
        let s = Slot::new(0);
        s.fulfil(r);
        Ticket(s)
    }

    /// Blocks until the request completes (spinning for the runtime's `wait_spin` first, then
    /// sleeping).
    pub fn wait(self) -> Result<Done, IoError> {
        if !self.0.ready.load(Ordering::Acquire) {
            let t0 = crate::clock::monotonic_ns();
            while !self.0.ready.load(Ordering::Acquire)
                && crate::clock::monotonic_ns() - t0 < self.0.spin
            {
                std::hint::spin_loop();
            }
        }
        let mut s = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match std::mem::replace(&mut *s, State::Taken) {
                State::Ready(r) => return r,
                State::Taken => unreachable!("a ticket is consumed by wait"),
                State::Waiting(w, _) => {
                    *s = State::Waiting(w, true);
                    s = self.0.cv.wait(s).unwrap_or_else(|e| e.into_inner());
                }
            }
        }
    }

    /// Whether the result has arrived (then [`wait`](Self::wait) returns at once).
    pub fn is_done(&self) -> bool {
        self.0.ready.load(Ordering::Acquire)
    }
}

impl Future for Ticket {
    type Output = Result<Done, IoError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut s = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        match std::mem::replace(&mut *s, State::Taken) {
            State::Ready(r) => Poll::Ready(r),
            State::Waiting(_, sleeping) => {
                *s = State::Waiting(Some(cx.waker().clone()), sleeping);
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

/// How long [`block_on`] spins between polls before it parks.
const BLOCK_ON_SPIN_NS: u64 = 200_000;

/// Runs a future to completion on the current thread. Between polls it spins for up to 200 us
/// waiting to be woken, then parks: completions that follow each other closely cost the event
/// loop no futex wake. Enough for examples, benchmarks and tests; a real server uses its own
/// executor (the tickets are ordinary futures).
pub fn block_on<F: Future>(fut: F) -> F::Output {
    use std::task::Wake;
    struct Flag {
        woken: AtomicBool,
        thread: std::thread::Thread,
    }
    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.woken.store(true, Ordering::Release);
            // Cheap unless the thread is parked.
            self.thread.unpark();
        }
    }
    let flag = Arc::new(Flag {
        woken: AtomicBool::new(false),
        thread: std::thread::current(),
    });
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        flag.woken.store(false, Ordering::Release);
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        let t0 = crate::clock::monotonic_ns();
        while !flag.woken.load(Ordering::Acquire) {
            if crate::clock::monotonic_ns() - t0 > BLOCK_ON_SPIN_NS {
                std::thread::park();
                break;
            }
            std::hint::spin_loop();
        }
    }
}
