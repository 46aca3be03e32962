//! Who is told, and when (section 4.6, SIGMEM).
//!
//! A subscriber is notified when the severity it sees has doubled or halved since it was
//! last told, and every second while the severity is below S_max, so that periodic actions
//! (a cache trimming a few MB per round, a collector waiting for S to fall under ten minutes)
//! keep running while there is pressure. Doubling and halving, not every change, because S
//! moves continuously and an application's decisions only change when it moves by a factor:
//! the cost rule compares against costs that differ by orders of magnitude.

use antsched_core::Nanos;
use serde::{Deserialize, Serialize};

/// The period of the repeat while S < S_max (section 4.6), unless a driver chooses another
/// ([`Notifier::with_repeat`]).
pub const REPEAT: Nanos = 1_000_000_000;

/// Why a notification was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Halved,
    Doubled,
    Repeat,
    /// S is back at S_max after the subscriber was last told a lower value. The repeat stops
    /// at S_max, and S often climbs back by less than a doubling since the last repeat, so
    /// without this a cache that held its size under pressure would never hear that it may
    /// grow again (section 4.7: grow back "when S returns to S_max").
    Relieved,
}

/// One notification: the severity the subscriber sees, and why it was told now.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    pub severity_s: f64,
    pub reason: Reason,
    pub time: Nanos,
}

/// The notification state of one subscriber.
#[derive(Clone, Debug)]
pub struct Notifier {
    s_max: f64,
    /// The severity it was last told (S_max before the first notification: a process starts
    /// out believing there is no pressure).
    told: f64,
    told_at: Option<Nanos>,
    /// The severity it sees now.
    current: f64,
    repeat: Nanos,
}

impl Notifier {
    pub fn new(s_max: f64) -> Self {
        Self::with_repeat(s_max, REPEAT)
    }

    /// A subscriber reminded every `repeat` while S < S_max, instead of every second. The
    /// thesis's second keeps the cost of the reminders small; a shorter period lets a cache
    /// correct its size sooner after it grew on misses (the simulator's `notify_repeat_s`).
    pub fn with_repeat(s_max: f64, repeat: Nanos) -> Self {
        Self {
            s_max,
            told: s_max,
            told_at: None,
            current: s_max,
            repeat: repeat.max(1),
        }
    }

    /// The severity the subscriber was last told.
    pub fn told(&self) -> f64 {
        self.told
    }

    /// A new value of the severity this subscriber sees. Returns the notification to deliver,
    /// if the rule says one is due.
    pub fn observe(&mut self, severity_s: f64, now: Nanos) -> Option<Notification> {
        self.observe_early(severity_s, now, 0)
    }

    /// Like [`observe`](Self::observe), but a repeat due within `early` after `now` is
    /// delivered now. A driver serving many subscribers, each with a repeat of its own phase
    /// (they subscribed at different moments), passes a small `early` so that it wakes once
    /// for the repeats due close together rather than once for each; subscribers told
    /// together share a phase from then on. A repeat is never more than `early` early.
    pub fn observe_early(
        &mut self,
        severity_s: f64,
        now: Nanos,
        early: Nanos,
    ) -> Option<Notification> {
        self.current = severity_s;
        let reason = if severity_s <= self.told / 2.0 {
            Reason::Halved
        } else if severity_s >= self.told * 2.0 {
            Reason::Doubled
        } else if severity_s < self.s_max && self.repeat_due(now.saturating_add(early)) {
            Reason::Repeat
        } else if severity_s >= self.s_max && self.told < self.s_max {
            Reason::Relieved
        } else {
            return None;
        };
        self.told = severity_s;
        self.told_at = Some(now);
        Some(Notification {
            severity_s,
            reason,
            time: now,
        })
    }

    /// The subscriber's weight changed by `factor` (its nice was set while it was
    /// subscribed): the severity it sees and the one it was last told scale by the same
    /// factor, so the doubling and halving rule runs on the S the subscriber sees and a change
    /// of nice alone is not a doubling or a halving. S_max does not scale: the repeat runs
    /// while the S the subscriber sees is below the system's S_max (section 4.6), so a
    /// niced-down process, which always sees S / W < S_max, is reminded every second. That is
    /// what makes its cache keep to the weighted equilibrium: the kernel pages its pages out
    /// by their weighted age even while the system's S sits at S_max, and without the repeat
    /// it would hear of none of it (section 4.5). The new S is on its page from the next
    /// record on.
    pub fn rescale(&mut self, factor: f64) {
        if factor.is_finite() && factor > 0.0 {
            self.told *= factor;
            self.current *= factor;
        }
    }

    /// The period of the repeat while S < S_max.
    pub fn repeat(&self) -> Nanos {
        self.repeat
    }

    fn repeat_due(&self, now: Nanos) -> bool {
        match self.told_at {
            None => true,
            Some(t) => now >= t.saturating_add(self.repeat),
        }
    }

    /// When the repeat is next due, if the severity is below S_max; the driver calls
    /// [`observe`](Self::observe) then even if nothing changed.
    pub fn poll_timeout(&self) -> Option<Nanos> {
        if self.current < self.s_max {
            Some(self.told_at.map_or(0, |t| t.saturating_add(self.repeat)))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// Section 4.6: told on halving and on doubling since the last notification, not on
    /// smaller moves.
    #[test]
    fn section_4_6_doubling_and_halving_notify() {
        let mut n = Notifier::new(3600.0);
        assert_eq!(n.observe(3600.0, 0), None);
        assert_eq!(n.observe(2000.0, 10 * MS).unwrap().reason, Reason::Repeat);
        // Within a factor of two of 2000 and within the second: nothing.
        assert_eq!(n.observe(1100.0, 20 * MS), None);
        let h = n.observe(1000.0, 30 * MS).unwrap();
        assert_eq!((h.reason, h.severity_s), (Reason::Halved, 1000.0));
        assert_eq!(n.observe(1900.0, 40 * MS), None);
        assert_eq!(n.observe(2000.0, 50 * MS).unwrap().reason, Reason::Doubled);
        // A fall by a factor of eight is one notification, not three.
        assert_eq!(n.observe(250.0, 60 * MS).unwrap().reason, Reason::Halved);
        assert_eq!(n.told(), 250.0);
    }

    /// The repeat's period is the driver's choice: every 100 ms, the reminder comes 100 ms
    /// after the last notification and not before.
    #[test]
    fn section_4_6_the_repeat_runs_at_the_period_chosen() {
        let mut n = Notifier::with_repeat(3600.0, 100 * MS);
        assert_eq!(n.observe(2000.0, 0).unwrap().reason, Reason::Repeat);
        assert_eq!(n.poll_timeout(), Some(100 * MS));
        assert_eq!(n.observe(2000.0, 99 * MS), None);
        assert_eq!(n.observe(2000.0, 100 * MS).unwrap().reason, Reason::Repeat);
        // The default is the thesis's second.
        let mut d = Notifier::new(3600.0);
        d.observe(2000.0, 0);
        assert_eq!(d.poll_timeout(), Some(REPEAT));
        assert_eq!(d.observe(2000.0, 100 * MS), None);
    }

    /// Section 4.6 with nice: a niced subscriber's halving and doubling run on the S it sees,
    /// and since that S is below S_max even when the system has no pressure, it is reminded
    /// every second; a renice alone is neither a halving nor a doubling.
    #[test]
    fn a_rescaled_notifier_runs_on_the_scaled_severity() {
        let w = 2f64.powf(7.5);
        let mut n = Notifier::new(3600.0);
        n.rescale(1.0 / w);
        let first = n.observe(3600.0 / w, 0).unwrap();
        assert_eq!(
            (first.reason, first.severity_s),
            (Reason::Repeat, 3600.0 / w)
        );
        assert_eq!(n.poll_timeout(), Some(1000 * MS));
        assert_eq!(n.observe(1700.0 / w, MS).unwrap().reason, Reason::Halved);
        assert_eq!(
            n.observe(1700.0 / w, 1001 * MS).unwrap().reason,
            Reason::Repeat
        );
        n.rescale(w);
        assert_eq!(n.told(), 1700.0);
        assert_eq!(n.observe(1700.0, 1002 * MS), None);
    }

    /// Section 4.6: every second while S < S_max, and never at S_max.
    #[test]
    fn section_4_6_repeats_every_second_below_s_max() {
        let mut n = Notifier::new(3600.0);
        assert_eq!(n.poll_timeout(), None);
        n.observe(500.0, 0).unwrap();
        assert_eq!(n.poll_timeout(), Some(1000 * MS));
        assert_eq!(n.observe(500.0, 999 * MS), None);
        assert_eq!(n.observe(500.0, 1000 * MS).unwrap().reason, Reason::Repeat);
        assert_eq!(n.observe(520.0, 2000 * MS).unwrap().reason, Reason::Repeat);
        // Back to S_max: a doubling is told once, then silence.
        assert_eq!(
            n.observe(3600.0, 2100 * MS).unwrap().reason,
            Reason::Doubled
        );
        assert_eq!(n.poll_timeout(), None);
        assert_eq!(n.observe(3600.0, 9000 * MS), None);
    }

    /// S climbing back to S_max by less than a doubling since the last repeat is told once
    /// (the subscriber may grow again), and then nothing while S stays there.
    #[test]
    fn section_4_7_the_return_to_s_max_is_told_once() {
        let mut n = Notifier::new(3600.0);
        n.observe(2400.0, 0).unwrap();
        assert_eq!(n.observe(3000.0, 500 * MS), None);
        let r = n.observe(3600.0, 700 * MS).unwrap();
        assert_eq!((r.reason, r.severity_s), (Reason::Relieved, 3600.0));
        assert_eq!(n.poll_timeout(), None);
        assert_eq!(n.observe(3600.0, 5000 * MS), None);
    }

    /// A repeat due within `early` goes out now, and the next is a second after that, not
    /// after when it was due; nothing but a repeat is moved.
    #[test]
    fn a_repeat_due_within_early_is_delivered_now() {
        let mut n = Notifier::new(3600.0);
        n.observe(500.0, 0).unwrap();
        // Due at 1000 ms: at 940 ms with 50 ms of slack it is not yet.
        assert_eq!(n.observe_early(500.0, 940 * MS, 50 * MS), None);
        let r = n.observe_early(500.0, 960 * MS, 50 * MS).unwrap();
        assert_eq!((r.reason, r.time), (Reason::Repeat, 960 * MS));
        assert_eq!(n.poll_timeout(), Some(1960 * MS));
        // At S_max there is no repeat to deliver early.
        let mut m = Notifier::new(3600.0);
        assert_eq!(m.observe_early(3600.0, 0, 50 * MS), None);
    }
}
