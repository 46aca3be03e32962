//! The thread that writes enforcement's limits.
//!
//! A v1 `memory.limit_in_bytes` write returns only once the kernel has reclaimed the group
//! down to the new limit. Page cache goes in microseconds, but a niced hog's anonymous memory
//! goes to swap at the paging disk's speed, a few MB a second on the thesis's kind of disk,
//! while the hog faults pages back in. Done on the daemon's loop, one such write held every
//! domain's observation and every notification for tens of seconds (seen in
//! `bench/mem/jvm.sh`'s hog cases before this module: the JVM beside the hog was told of the
//! pressure 40 s late, after the kernel had paged out its own heap). So the writes of a step happen here, and the loop waits
//! for them only a few milliseconds (the common, page-cache case); a step that takes longer
//! stays in flight and is settled at a later tick.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use antsched_mem::enforce::Outcome;

use crate::enforce::number;
use crate::state::write_limit;

/// One step's writes: the limit lowered to `target`, the group's usage read after, and,
/// unless the limit is to be held, `restore` written back.
pub(crate) struct Job {
    pub group: PathBuf,
    /// The usage before the step.
    pub usage: u64,
    pub target: u64,
    pub restore: Option<u64>,
}

/// What a step did: the bytes the usage fell by, a refusal (the kernel could not reclaim
/// enough: EBUSY), or why it failed.
pub(crate) type Done = Result<Outcome, String>;

pub(crate) struct LimitWriter {
    jobs: Option<mpsc::Sender<Job>>,
    done: mpsc::Receiver<Done>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LimitWriter {
    pub fn new() -> std::io::Result<Self> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (outbox, done) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("antsched-limits".into())
            .spawn(move || {
                for job in inbox {
                    if outbox.send(run(&job)).is_err() {
                        return;
                    }
                }
            })?;
        Ok(Self {
            jobs: Some(jobs),
            done,
            thread: Some(thread),
        })
    }

    /// Starts `job` and waits up to `wait` for it: `None` when it is still running (then
    /// [`Self::poll`] gives its result later). One job at a time: the caller starts no other
    /// before this one is done.
    pub fn start(&self, job: Job, wait: Duration) -> Option<Done> {
        let sent = self.jobs.as_ref().is_some_and(|j| j.send(job).is_ok());
        if !sent {
            return Some(Err("the limit writer has stopped".into()));
        }
        self.done.recv_timeout(wait).ok()
    }

    /// The result of the job in flight, if it is done.
    pub fn poll(&self) -> Option<Done> {
        self.done.try_recv().ok()
    }
}

impl Drop for LimitWriter {
    /// Waits for a write in flight: a limit lowered after the daemon restored it at exit
    /// would stay lowered.
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(job: &Job) -> Done {
    let lowered = write_limit(&job.group, job.target);
    let after = number(&job.group, "memory.usage_in_bytes").unwrap_or(job.usage);
    if let Some(original) = job.restore {
        if let Err(e) = write_limit(&job.group, original) {
            return Err(format!(
                "cannot restore the limit {original} (kept in the state file, restored at the \
                 next tick, at exit or at the next start): {e}"
            ));
        }
    }
    match lowered {
        Ok(()) => Ok(Outcome::Reclaimed(job.usage.saturating_sub(after))),
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::BUSY.raw_os_error()) => {
            Ok(Outcome::Refused)
        }
        Err(e) => Err(format!("cannot lower the limit to {}: {e}", job.target)),
    }
}
