//! A trace read on a thread of its own, ahead of the replay.
//!
//! Reading and parsing a line costs about as much as simulating the request it describes (a
//! quarter of a 10-million-request replay under `clook` went to it), and a replay runs on one
//! core. [`Background`] moves the reading to a second thread, which sends the records in
//! batches through a bounded channel: the replay sees the same records in the same order, and
//! at most [`BATCHES`] batches of [`BATCH`] records are held between the two, so a trace of any
//! length is still read in constant memory.

use std::io::BufRead;
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

use super::{Record, TraceError, TraceReader};

/// Records per batch: enough that a batch's hand-over, a few hundred nanoseconds, is a
/// fraction of a nanosecond per record.
pub const BATCH: usize = 4096;

/// Batches in flight between the reader and the replay.
pub const BATCHES: usize = 4;

type Batch = Vec<Result<Record, TraceError>>;

/// The records of a [`TraceReader`], read on a thread of its own.
pub struct Background {
    /// `None` once dropped: the reader's next send then fails, and its thread ends.
    rx: Option<Receiver<Batch>>,
    batch: std::vec::IntoIter<Result<Record, TraceError>>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    /// Starts reading `reader` on a new thread.
    pub fn spawn<R: BufRead + Send + 'static>(reader: TraceReader<R>) -> std::io::Result<Self> {
        let (tx, rx) = sync_channel::<Batch>(BATCHES);
        let thread = std::thread::Builder::new()
            .name("antsched-trace".into())
            .spawn(move || {
                let mut reader = reader;
                loop {
                    let batch: Batch = reader.by_ref().take(BATCH).collect();
                    // A short batch is the trace's end (or its error, after which the reader
                    // yields nothing).
                    let last = batch.len() < BATCH;
                    if batch.is_empty() || tx.send(batch).is_err() || last {
                        return;
                    }
                }
            })?;
        Ok(Self {
            rx: Some(rx),
            batch: Vec::new().into_iter(),
            thread: Some(thread),
        })
    }
}

impl Iterator for Background {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.batch.next() {
                return Some(r);
            }
            match self.rx.as_ref()?.recv() {
                Ok(batch) => self.batch = batch.into_iter(),
                // The sender is gone: the trace is read, or the reader panicked, which is a
                // bug to show here rather than a trace cut short.
                Err(_) => {
                    self.rx = None;
                    if let Some(Err(panic)) = self.thread.take().map(JoinHandle::join) {
                        std::panic::resume_unwind(panic);
                    }
                    return None;
                }
            }
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        // A replay that stops early (an error, a time limit) leaves the reader blocked on a
        // full channel: closing it ends the reader's next send, then its thread.
        self.rx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
