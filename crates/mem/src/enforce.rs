//! Enforcing memory nice on processes that do not cooperate (sections 5.1.2 and 5.1.3), for a
//! driver that cannot change the kernel's replacement: which governed group to reclaim from,
//! and how much at a time.
//!
//! The thesis's kernel multiplies the age of every page of a process by the process's weight
//! and evicts the page whose *scaled* age is largest (section 5.1.2); processes whose shifted
//! bin ranges do not overlap are in different priority classes, and a lower class is paged
//! completely before a higher one is touched (section 5.1.3). A Linux driver sees one
//! candidate age per memory cgroup (its LRU's turnover estimate), not per page, so the same
//! rule is applied to groups: while a domain's free memory is below tau, take a few MB from
//! the group under it whose key (class, weighted age) is largest, where the class comes
//! first (lower class always first) and the weighted age is the candidate age times the
//! weight. The thesis's severity S is the largest scaled age in the system (section 5.1.2),
//! so taking the group with the largest weighted age is taking the page S is the age of.
//!
//! Sans-IO: the driver reads each group's usage and reclaimable bytes, asks [`Enforcer::plan`]
//! for the next step, performs it (on cgroup v1 by lowering the group's limit below its usage
//! and restoring it) and reports what happened with [`Enforcer::outcome`].

use antsched_core::Nanos;

use crate::nice::{MemNice, PriorityClass};

/// The step sizes and back-off of enforcement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnforceConfig {
    /// The most taken from one group in one step: 4 MiB ("a few MB at a time", so that no
    /// single step holds a group's limit far below its usage for long).
    pub max_step_bytes: u64,
    /// A group whose step has shrunk below this after refusals is left alone for
    /// [`backoff`](Self::backoff): 256 KiB.
    pub min_step_bytes: u64,
    /// How long a group that refused is left alone: 5 s.
    pub backoff: Nanos,
    /// A group keeps at least this much of its reclaimable (file) memory, so that a step
    /// never asks the kernel for the last pages it could reclaim and the group still has
    /// something to give its own allocations while its limit is low: 1 MiB.
    pub reserve_bytes: u64,
}

impl Default for EnforceConfig {
    fn default() -> Self {
        Self {
            max_step_bytes: 4 << 20,
            min_step_bytes: 256 << 10,
            backoff: 5_000_000_000,
            reserve_bytes: 1 << 20,
        }
    }
}

/// One governed group, as the driver sees it now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// The driver's name for the group (its domain id).
    pub id: u64,
    pub nice: MemNice,
    /// The age of the group's replacement candidate, seconds (finite: a driver publishes an
    /// infinite age as S_max).
    pub candidate_age_s: f64,
    /// What the kernel's reclaim can take from it: its file pages (page cache), and its
    /// anonymous memory where that can go to swap. Without swap anonymous memory is not
    /// reclaimable, and a step never asks for it.
    pub reclaimable_bytes: u64,
}

impl Candidate {
    /// The candidate age multiplied by the weight (section 5.1.2: a niced-down process's
    /// pages look older than they are).
    pub fn weighted_age_s(&self) -> f64 {
        self.candidate_age_s * self.nice.weight()
    }

    /// The order in which groups are reclaimed, largest first: the priority class as a
    /// lexicographic first key (section 5.1.3: a lower class is paged before a higher class
    /// is touched, whatever the ages), then the weighted age.
    pub fn key(&self) -> (u8, f64) {
        let class = self.nice.class();
        (
            PriorityClass::High.rank() - class.rank(),
            self.weighted_age_s(),
        )
    }
}

/// One step to perform: take `bytes` from group `id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub id: u64,
    pub bytes: u64,
}

/// What a step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The kernel took these bytes (the group's usage fell by that much).
    Reclaimed(u64),
    /// The kernel refused (v1: EBUSY, it could not bring the usage under the lowered limit).
    Refused,
}

#[derive(Clone, Copy, Debug)]
struct GroupState {
    id: u64,
    step_bytes: u64,
    idle_until: Nanos,
}

/// The per-group step sizes and back-offs.
#[derive(Clone, Debug, Default)]
pub struct Enforcer {
    config: EnforceConfig,
    groups: Vec<GroupState>,
}

impl Enforcer {
    pub fn new(config: EnforceConfig) -> Self {
        Self {
            config,
            groups: Vec::new(),
        }
    }

    pub fn config(&self) -> &EnforceConfig {
        &self.config
    }

    fn state(&mut self, id: u64) -> &mut GroupState {
        if let Some(i) = self.groups.iter().position(|g| g.id == id) {
            return &mut self.groups[i];
        }
        self.groups.push(GroupState {
            id,
            step_bytes: self.config.max_step_bytes,
            idle_until: 0,
        });
        self.groups.last_mut().expect("just pushed")
    }

    /// Forgets a group (gone, or no longer governed).
    pub fn forget(&mut self, id: u64) {
        self.groups.retain(|g| g.id != id);
    }

    /// The next step in a domain whose free memory is `free` with threshold `tau`, among the
    /// groups under it: none while free >= tau (Eq. 4.1's ramp has not started: there is no
    /// pressure to pass on), and none when no group has anything left to give. The step
    /// takes no more than the domain needs to reach tau, no more than the group's current
    /// step size, and leaves the group [`EnforceConfig::reserve_bytes`] of its reclaimable
    /// memory.
    pub fn plan(&mut self, now: Nanos, free: u64, tau: u64, groups: &[Candidate]) -> Option<Step> {
        if free >= tau {
            return None;
        }
        let need = (tau - free).max(self.config.min_step_bytes);
        let reserve = self.config.reserve_bytes;
        let min = self.config.min_step_bytes;
        let mut best: Option<(Candidate, u64)> = None;
        for c in groups {
            let s = *self.state(c.id);
            if now < s.idle_until {
                continue;
            }
            let bytes = s
                .step_bytes
                .min(need)
                .min(c.reclaimable_bytes.saturating_sub(reserve));
            if bytes < min {
                continue;
            }
            let better = match &best {
                None => true,
                Some((b, _)) => c.key().partial_cmp(&b.key()) == Some(std::cmp::Ordering::Greater),
            };
            if better {
                best = Some((*c, bytes));
            }
        }
        best.map(|(c, bytes)| Step { id: c.id, bytes })
    }

    /// The group the kernel of section 5.1.2 would take its next page from: the largest key
    /// (class, then weighted age) among the groups with more than the reserve and a minimum
    /// step to give, whatever their step state. Its weighted age is the age of the page the
    /// system would evict next, which Eq. 4.1 prices: a domain whose victim is a niced-down
    /// group is as short of memory, for everyone else in it, as that group's weighted age
    /// says.
    pub fn victim<'a>(&self, groups: &'a [Candidate]) -> Option<&'a Candidate> {
        let least = self.config.reserve_bytes + self.config.min_step_bytes;
        groups.iter().filter(|c| c.reclaimable_bytes >= least).fold(
            None,
            |best: Option<&Candidate>, c| match best {
                Some(b) if c.key().partial_cmp(&b.key()) != Some(std::cmp::Ordering::Greater) => {
                    Some(b)
                }
                _ => Some(c),
            },
        )
    }

    /// What step `step` did. A refusal, or a usage that followed by less than half of what
    /// was asked, halves the group's step ("the step size follows usage"); a step that fell
    /// below the minimum leaves the group alone for the back-off and starts it over at the
    /// largest step. A step the kernel took in full doubles the step again, up to the
    /// largest.
    pub fn outcome(&mut self, now: Nanos, step: Step, outcome: Outcome) {
        let config = self.config;
        let s = self.state(step.id);
        let followed = match outcome {
            Outcome::Reclaimed(got) => got.saturating_mul(2) >= step.bytes,
            Outcome::Refused => false,
        };
        if followed {
            s.step_bytes = (s.step_bytes.saturating_mul(2)).min(config.max_step_bytes);
            return;
        }
        s.step_bytes = step.bytes / 2;
        if s.step_bytes < config.min_step_bytes {
            s.step_bytes = config.max_step_bytes;
            s.idle_until = now.saturating_add(config.backoff);
        }
    }

    /// Whether group `id` is being left alone after refusals.
    pub fn backing_off(&self, id: u64, now: Nanos) -> bool {
        self.groups.iter().any(|g| g.id == id && now < g.idle_until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn group(id: u64, nice: i64, age: f64, reclaimable: u64) -> Candidate {
        Candidate {
            id,
            nice: MemNice::new(nice).unwrap(),
            candidate_age_s: age,
            reclaimable_bytes: reclaimable,
        }
    }

    /// Section 5.1.2: ages are scaled by the weight, and the group with the largest scaled
    /// age gives first: nice +10 (weight 2^7.5) makes a group with a 10 s candidate age
    /// older than a nice-0 group's 1000 s one.
    #[test]
    fn section_5_1_2_the_largest_weighted_age_gives_first() {
        let mut e = Enforcer::new(EnforceConfig::default());
        let groups = [
            group(1, 0, 1000.0, 100 * MIB),
            group(2, 10, 10.0, 100 * MIB),
        ];
        let step = e.plan(0, 0, 25 * MIB, &groups).unwrap();
        assert_eq!(
            step,
            Step {
                id: 2,
                bytes: 4 * MIB
            }
        );
        // Equal ages and nice: the first keeps it (no flapping between equals).
        let equal = [
            group(1, 0, 3600.0, 100 * MIB),
            group(2, 0, 3600.0, 100 * MIB),
        ];
        assert_eq!(e.plan(0, 0, 25 * MIB, &equal).unwrap().id, 1);
        // At S_max for both (no reclaim yet), the niced-down one gives first.
        let fresh = [
            group(1, 0, 3600.0, 100 * MIB),
            group(2, 10, 3600.0, 100 * MIB),
        ];
        assert_eq!(e.plan(0, 0, 25 * MIB, &fresh).unwrap().id, 2);
    }

    /// Section 5.1.3: the class is the first key. A low-class group (nice >= 14) is taken
    /// even when its weighted age is far below a normal one's; a high-class one (nice <=
    /// -14) only when no other group has anything to give.
    #[test]
    fn section_5_1_3_a_lower_class_always_gives_first() {
        let mut e = Enforcer::new(EnforceConfig::default());
        let low = group(1, 14, 0.001, 100 * MIB);
        let normal = group(2, 13, 3600.0, 100 * MIB);
        let high = group(3, -14, 3600.0, 100 * MIB);
        assert!(low.weighted_age_s() < normal.weighted_age_s());
        assert_eq!(e.plan(0, 0, MIB, &[normal, high, low]).unwrap().id, 1);
        assert_eq!(e.plan(0, 0, MIB, &[high, normal]).unwrap().id, 2);
        assert_eq!(e.plan(0, 0, MIB, &[high]).unwrap().id, 3);
    }

    /// The victim is the group plan would step first, among those with something to give,
    /// whether or not the domain is under pressure.
    #[test]
    fn the_victim_is_the_largest_key_with_something_to_give() {
        let e = Enforcer::new(EnforceConfig::default());
        let normal = group(1, 0, 100.0, 100 * MIB);
        let niced = group(2, 10, 10.0, 100 * MIB);
        let low = group(3, 14, 1.0, 100 * MIB);
        let empty_low = group(4, 19, 1.0, MIB);
        assert_eq!(e.victim(&[normal, niced]).unwrap().id, 2);
        assert_eq!(e.victim(&[normal, niced, low, empty_low]).unwrap().id, 3);
        assert_eq!(e.victim(&[empty_low]), None);
        assert_eq!(e.victim(&[]), None);
    }

    /// No pressure, nothing taken; a step takes no more than the domain needs, nor the
    /// group's last MiB of file pages; a group without file pages is never asked.
    #[test]
    fn steps_are_bounded_by_need_and_by_what_the_group_can_give() {
        let mut e = Enforcer::new(EnforceConfig::default());
        let g = [group(1, 0, 100.0, 100 * MIB)];
        assert_eq!(e.plan(0, 25 * MIB, 25 * MIB, &g), None);
        assert_eq!(e.plan(0, 24 * MIB, 25 * MIB, &g).unwrap().bytes, MIB);
        let small = [group(1, 0, 100.0, 2 * MIB + MIB / 2)];
        assert_eq!(e.plan(0, 0, 25 * MIB, &small).unwrap().bytes, 3 * MIB / 2);
        let anon_only = [group(1, 19, 3600.0, MIB), group(2, 0, 1.0, 50 * MIB)];
        assert_eq!(e.plan(0, 0, 25 * MIB, &anon_only).unwrap().id, 2);
        assert_eq!(e.plan(0, 0, 25 * MIB, &anon_only[..1]), None);
    }

    /// A refusal halves the step; at the minimum the group is left alone for the back-off,
    /// and the next group gives meanwhile; a full step grows it again.
    #[test]
    fn refusals_halve_the_step_then_back_off() {
        let mut e = Enforcer::new(EnforceConfig::default());
        let groups = [
            group(1, 10, 100.0, 100 * MIB),
            group(2, 0, 100.0, 100 * MIB),
        ];
        let mut now = 0;
        let mut sizes = Vec::new();
        loop {
            let step = e.plan(now, 0, 25 * MIB, &groups).unwrap();
            if step.id != 1 {
                break;
            }
            sizes.push(step.bytes >> 10);
            e.outcome(now, step, Outcome::Refused);
            now += 1;
        }
        assert_eq!(sizes, [4096, 2048, 1024, 512, 256]);
        assert!(e.backing_off(1, now));
        let later = now + EnforceConfig::default().backoff;
        let step = e.plan(later, 0, 25 * MIB, &groups).unwrap();
        assert_eq!(
            step,
            Step {
                id: 1,
                bytes: 4 * MIB
            }
        );
        // Usage followed by less than half: halved; in full: doubled back.
        e.outcome(later, step, Outcome::Reclaimed(MIB));
        let step = e.plan(later, 0, 25 * MIB, &groups).unwrap();
        assert_eq!(step.bytes, 2 * MIB);
        e.outcome(later, step, Outcome::Reclaimed(2 * MIB));
        assert_eq!(e.plan(later, 0, 25 * MIB, &groups).unwrap().bytes, 4 * MIB);
    }
}
