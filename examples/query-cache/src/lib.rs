//! antsched-query-cache: the thesis's database query cache (section 6.2) as a real program
//! on Linux. A SQLite database in the shape of the ATIS airline database, an ATIS-like query
//! mix (43 SELECT types, a thousand versions each, Zipf popularity), and a query-result cache
//! whose policy is `antsched_mem::cache::AdaptiveCache`: sized by release rounds of the cost
//! rule at the severity `antsched memd` sends (adaptive), by a fixed capacity, or by the
//! anchors' policies (discrete PSI levels; MariaDB 11.8's halving; a Senpai-style controller
//! stepping the group's limit on its memory stall, `senpai`).
//!
//! `populate` makes the database, `run` runs the mix and writes its measurements as JSON and
//! a timeline (CSV, every 100 ms), `plot` draws the timeline (the thesis's Fig. 6.1), `hog`
//! is the memory hog a run can start part-way. See `docs/memory-real.md`.

pub mod cache;
pub mod mix;
pub mod plot;
pub mod run;
pub mod schema;
pub mod senpai;
pub mod sys;
