//! When an arriving request, or the next one in elevator order, ends anticipation
//! (`as_can_break_anticipation`), in the three versions.
//!
//! All three start the same way: a request from the anticipated context ends the wait (it
//! is what we waited for), and so does a wait that has already run `antic_expire`. All three
//! also give up on a context that has another request queued (it is not thinking, it is
//! waiting for us), 2.6.9 only after checking whether it exited. They differ in how they
//! treat other contexts' requests and exited contexts:
//!
//! **`linux-as` (the Linux/CAS paper's LAS, section 2.2 steps 1 to 7; we read the code of
//! 2.6.11, whose rules are the paper's description of 2.6.9 step by step).**
//! 1. The anticipated process has exited: break (and count it in `exit_prob` if it had no
//!    think-time sample yet).
//! 2. The request is synchronous and "close" to the head: within a window of 64 sectors (32
//!    KiB) that doubles for every millisecond already waited (`64 << (ms - 1)`), and
//!    everything once the wait has passed 20 ms or `antic_expire`. Break; the close request
//!    also restarts the anticipated process's think-time clock, because "close requests from
//!    another process ... (are) generally useful when there are two or more cooperating
//!    processes working in the same area".
//! 3. The process has just started I/O (no think-time sample): break if new processes think
//!    longer than `antic_expire` on average, or if `exit_prob` is above 50 %. *This is the
//!    step that starves cooperating processes* (paper section 3.1): each `cat` that `find`
//!    starts is new, is counted by `exit_prob` when it exits, and once `exit_prob` passes 50 %
//!    any other request breaks the wait for the next `cat`, so the streaming reader takes the
//!    disk back and the tree walker waits for its requests to expire.
//! 4. The process thinks longer than `antic_expire` on average: break.
//! 5. The process seeks further on average than the distance to this request: break, it is
//!    at least as good as what we expect.
//!
//! **`linux-as-2.6.32` (the code of 2.6.32; the 2.6.16 code has the same rules).** Nick Piggin's answer to the same problem:
//! the window is 8192 sectors (4 MiB) doubling per jiffy waited, and "close" also covers a
//! request nearer than the anticipated process's mean seek distance. A close request updates
//! the anticipated process's statistics as if it had issued it. An exited process no longer
//! breaks the wait by itself: `exit_no_coop` (decayed probability that an exited process was
//! *not* followed by a close request before the timer) must be above 50 %; and a new process
//! breaks it only if `exit_prob * exit_no_coop` is above 50 %.
//!
//! **`cas` (the paper's section 4, in its order).**
//! 1. Anticipation off because a read expired: handled before anticipation starts
//!    (`as_fifo_expired` in `as_dispatch_request`).
//! 2. The anticipation time has elapsed: break.
//! 3. A synchronous request that is close (the 2.6.32 window and mean-seek test, the
//!    constants the paper leaves open) comes from a *cooperating* context: dispatch it, and
//!    anticipation moves to its issuer, whether the awaited context is alive or dead. Update
//!    the statistics of both (the issuer's were updated on arrival; the awaited one's only if
//!    it is alive) and raise the cooperative exit probability.
//! 4. The awaited context is dead: raise the system exit probability (`exit_prob`, as the
//!    kernel does for a context with no think-time sample) and break only if it is below
//!    50 %: if contexts often die while waited on, a cooperating successor is likely, so wait.
//! 5. The awaited context has just started I/O, the system exit probability is above 50 % and
//!    the cooperative one below 50 %: break.
//! 6. Its mean think time (for a new context, the new-context mean) exceeds the anticipation
//!    time: break.
//!
//! The paper says when the cooperative exit probability rises (step 3) but not when it
//! falls; we take 2.6.32's rule for `exit_no_coop`, its complement: it decays when the timer
//! runs out while the awaited context is dead (no cooperating request came). Like all the
//! probabilities it is 8-bit fixed point with 7/8 decay, and starts at 0.

use crate::request::{ContextId, Nanos, Request, MS};

use super::{AnticStatus, AnticipatoryScheduler, SYNC};
use crate::peers::iohist::{distance, ONE};

/// Which anticipatory scheduler's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Linux 2.6.9 (read from 2.6.11), the "LAS" of the Linux/CAS paper (`linux-as`).
    Las,
    /// Linux 2.6.16 to 2.6.32, read from 2.6.32 (`linux-as-2.6.32`).
    Mainline,
    /// The Cooperative AS of the Linux/CAS paper (`cas`).
    Cooperative,
}

/// Half of the fixed-point one: a probability of 50 %.
const HALF: u64 = ONE / 2;

impl AnticipatoryScheduler {
    /// `as_can_break_anticipation`: stop waiting (or do not start) for the anticipated
    /// context because of `rq` (the arriving request, or the next one in elevator order when
    /// deciding whether to start; `None` when there is none).
    pub(super) fn can_break(&mut self, rq: Option<&Request>, now: Nanos) -> bool {
        let Some(ioc) = self.io_context else {
            return true;
        };
        if rq.is_some_and(|r| r.context == ioc) {
            // A request from the same process.
            return true;
        }
        if self.ioc_finished && self.antic_expired(now) {
            // The status should really be FINISHED; the timer has not run yet.
            return true;
        }
        if !self.contexts.contains_key(&ioc) {
            return false;
        }
        match self.variant {
            Variant::Las => self.can_break_las(ioc, rq, now),
            Variant::Mainline => self.can_break_mainline(ioc, rq, now),
            Variant::Cooperative => self.can_break_cooperative(ioc, rq, now),
        }
    }

    fn can_break_las(&mut self, ioc: ContextId, rq: Option<&Request>, now: Nanos) -> bool {
        let Some(aic) = self.contexts.get(&ioc) else {
            return false;
        };
        let (running, ttime, seek) = (aic.running, aic.ttime, aic.seek);
        if !running {
            // The process anticipated on has exited.
            if ttime.samples == 0 {
                self.raise_exit_prob();
            }
            return true;
        }
        if aic.nr_queued > 0 {
            // The process has more requests queued.
            return true;
        }
        if let Some(rq) = rq.filter(|r| crate::peers::is_sync(r)) {
            if self.close_window(rq, now) {
                // A close request that is not one of ours resets our think-time delay.
                if let Some(aic) = self.contexts.get_mut(&ioc) {
                    aic.last_end_request = now;
                }
                return true;
            }
        }
        if ttime.samples == 0 {
            if self.g.new_ttime_mean > self.cfg.antic_expire || self.g.exit_prob > HALF {
                return true;
            }
        } else if ttime.mean > self.cfg.antic_expire {
            // The process thinks too much between requests.
            return true;
        }
        let Some(rq) = rq else {
            return false;
        };
        let s = distance(self.last_sector[SYNC], rq.sector);
        let expected = if seek.samples == 0 {
            // The process has just started I/O: use past statistics.
            self.g.new_seek_mean
        } else {
            seek.mean
        };
        // This request is better than what we expect.
        expected > s
    }

    fn can_break_mainline(&mut self, ioc: ContextId, rq: Option<&Request>, now: Nanos) -> bool {
        let Some(aic) = self.contexts.get(&ioc) else {
            return false;
        };
        let (running, ttime) = (aic.running, aic.ttime);
        if aic.nr_queued > 0 {
            // The process has more requests queued.
            return true;
        }
        if let Some(rq) = rq.filter(|r| crate::peers::is_sync(r)) {
            if self.close_request(ioc, rq, now) {
                // A close request that is not one of ours updates our I/O history.
                if !running {
                    if ttime.samples == 0 {
                        self.raise_exit_prob();
                    }
                    self.g.exit_no_coop = 7 * self.g.exit_no_coop / 8;
                }
                self.update_iohist(ioc, rq, now);
                return true;
            }
        }
        if !running {
            if ttime.samples == 0 {
                self.raise_exit_prob();
            }
            if self.g.exit_no_coop > HALF {
                return true;
            }
        }
        if ttime.samples == 0 {
            self.g.new_ttime_mean > self.cfg.antic_expire
                || self.g.exit_prob * self.g.exit_no_coop > HALF * ONE
        } else {
            // The process thinks too much between requests?
            ttime.mean > self.cfg.antic_expire
        }
    }

    fn can_break_cooperative(&mut self, ioc: ContextId, rq: Option<&Request>, now: Nanos) -> bool {
        let Some(aic) = self.contexts.get(&ioc) else {
            return false;
        };
        let (running, ttime) = (aic.running, aic.ttime);
        // Before the paper's steps, as in the code CAS extends: the context is not thinking,
        // it has a request queued.
        if aic.nr_queued > 0 {
            return true;
        }
        // Step 3: a close read from a cooperating context.
        if let Some(rq) = rq.filter(|r| crate::peers::is_sync(r)) {
            if self.close_request(ioc, rq, now) {
                if running {
                    self.update_iohist(ioc, rq, now);
                }
                self.g.coop_exit_prob = (7 * self.g.coop_exit_prob + ONE) / 8;
                return true;
            }
        }
        // Step 4: the awaited context is dead and no cooperating request came (yet).
        if !running {
            if ttime.samples == 0 {
                self.raise_exit_prob();
            }
            if self.g.exit_prob < HALF {
                return true;
            }
        }
        if ttime.samples == 0 {
            // Step 5: a new context is likely to exit, and no cooperating one to follow.
            if self.g.exit_prob > HALF && self.g.coop_exit_prob < HALF {
                return true;
            }
            // Step 6, for a context without samples: the new-context mean.
            self.g.new_ttime_mean > self.cfg.antic_expire
        } else {
            // Step 6.
            ttime.mean > self.cfg.antic_expire
        }
    }

    /// The anticipated context died and no cooperating request saved the wait: the timer ran
    /// out (`as_antic_timeout`).
    pub(super) fn exited_without_cooperation(&mut self) {
        match self.variant {
            Variant::Las => {}
            Variant::Mainline => self.g.exit_no_coop = (7 * self.g.exit_no_coop + ONE) / 8,
            Variant::Cooperative => self.g.coop_exit_prob = 7 * self.g.coop_exit_prob / 8,
        }
    }

    fn raise_exit_prob(&mut self) {
        self.g.exit_prob = (7 * self.g.exit_prob + ONE) / 8;
    }

    /// How many whole jiffies (ms) the current anticipation has run, 0 if it is not timing
    /// yet. Jiffies are counted as a 1 ms tick would count them.
    fn jiffies_waited(&self, now: Nanos) -> u64 {
        if self.status == AnticStatus::Off || !self.ioc_finished {
            0
        } else {
            (now / MS).saturating_sub(self.antic_start / MS)
        }
    }

    /// The window of `as_close_req` after `waited` jiffies of anticipation: a request is close
    /// if it starts within `[last - delta/2, last + delta]` of the head. `None` once the wait
    /// has passed 20 ms or `antic_expire`: then every request is close.
    fn close_delta(&self, waited: u64) -> Option<u64> {
        let growing = waited <= 20 && waited <= self.cfg.antic_expire / MS;
        match self.variant {
            // 2.6.9: 64 sectors, doubling for every millisecond past the first.
            Variant::Las if waited <= 1 => Some(64),
            Variant::Las if growing => Some(64 << (waited - 1)),
            // 2.6.32 (and CAS): 8192 sectors, doubling for every jiffy.
            Variant::Mainline | Variant::Cooperative if waited == 0 => Some(8192),
            Variant::Mainline | Variant::Cooperative if growing => Some(8192 << waited),
            _ => None,
        }
    }

    /// The window test of `as_close_req`.
    fn close_window(&self, rq: &Request, now: Nanos) -> bool {
        let Some(delta) = self.close_delta(self.jiffies_waited(now)) else {
            return true;
        };
        let last = self.last_sector[self.batch_data_dir];
        let next = rq.sector;
        // Written as the 2.6.32 code does, without 2.6.9's unsigned underflow near sector 0.
        last <= next.saturating_add(delta / 2) && next <= last.saturating_add(delta)
    }

    /// 2.6.32's `as_close_req`: within the 8192-sector window, or nearer than the anticipated
    /// context's mean seek distance (the new-context mean if it has none).
    fn close_request(&self, ioc: ContextId, rq: &Request, now: Nanos) -> bool {
        if self.close_window(rq, now) {
            return true;
        }
        let Some(aic) = self.contexts.get(&ioc) else {
            return false;
        };
        let s = distance(self.last_sector[self.batch_data_dir], rq.sector);
        let expected = if aic.seek.samples == 0 {
            self.g.new_seek_mean
        } else {
            aic.seek.mean
        };
        expected > s
    }
}
