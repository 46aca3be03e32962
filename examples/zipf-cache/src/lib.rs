//! antsched-zipf-cache: one of the two identical cache programs of issue 15's memory-nice
//! experiment (the thesis's section 4.5, Eqs. 4.5 to 4.7), as a real program on Linux.
//!
//! It serves requests for keys drawn from a Zipf catalogue (`antsched_mem::sim::Zipf`, the
//! simulator's), one request after another. A value is 4 KiB of real memory made from its key;
//! a hit reads it, a miss costs a fixed time C_r (a sleep by default, see [`run::MissWork`]) and
//! caches the new value. The cache is `antsched_mem::cache::AdaptiveCache` (least amortized
//! cost first), each value priced by how often its key was asked
//! (`antsched_mem::cache::reuse_by_frequency`, the simulator's rule). A thread follows
//! `antsched memd`: it waits on the subscription's eventfd (and wakes every 200 ms), runs release
//! rounds at the S the shared page says (memd divides it by this process's memory nice), and
//! reads S again between rounds. Released values' pages go back to the kernel at once
//! ([`slab`]), so that the memory group's usage follows the cache.
//!
//! `stream` is the rest of the group: a reader that streams a file through the group's page
//! cache at a set rate, so that the kernel reclaims and memd sees pages turn over (see
//! `docs/memory-real.md`, "Memory nice").

pub mod run;
pub mod slab;
pub mod stream;
