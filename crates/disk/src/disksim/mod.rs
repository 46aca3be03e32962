//! Importer for DiskSim 4.0 drive descriptions.
//!
//! DiskSim's validated drives come as a `.parv` file (the whole simulated system: driver, buses,
//! controller, disk) that `source`s a `.diskspecs` (the disk's cache and firmware), which names a
//! `.model` (layout and mechanics), which names a `.seek` table. [`load_disksim`] reads them all
//! and builds an [`HddModel`].
//!
//! The importer is strict on purpose: a drive description whose parameters are silently dropped
//! would validate a different drive than the one described. Every parameter falls in one of
//! three classes, listed in the tables below:
//!
//! * **used**: read and honoured by the model;
//! * **restricted**: honoured only for the values our model implements (for example `Immediate
//!   buffer read` 0 or 1, but 2 is refused); any other value is an
//!   [`DiskSimError::Unsupported`] error that names the supported values;
//! * **irrelevant**: accepted because it cannot change the service time of one disk serving one
//!   request at a time (statistics and printing options, the synthetic workload generator, the
//!   logical organisation of a one-disk system, queueing knobs that need a second queued request,
//!   and the overheads of a second write disconnect that DiskSim 4.0 itself never triggers).
//!   Each such name is listed explicitly with the reason; there is no wildcard.
//!
//! All ten of DiskSim's validated drives import; `crates/disk/tests/validation.rs` replays each
//! against its measured trace.
//!
//! Anything else is an [`DiskSimError::UnknownParameter`] error. All errors name the file, the
//! line and the parameter, and say what would be valid.

pub mod parse;

use std::path::Path;

use parse::{Block, Param, Pos, Statement, Value};

use crate::hdd::{
    CacheParams, HddModel, HddParams, KeepRequest, Overheads, ReadAhead, Reselect, WriteBack,
};
use crate::layout::{Layout, Sparing, SurfaceOrder, Zone};
use crate::seek::SeekCurve;

/// Why a DiskSim description could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum DiskSimError {
    #[error("cannot read {}{}: {message}", path.display(), included_from.as_ref().map(|p| format!(" (sourced at {p})")).unwrap_or_default())]
    Io {
        path: Box<Path>,
        included_from: Option<String>,
        message: String,
    },
    #[error("{}:{line}: syntax error: {message}", file.display())]
    Syntax {
        file: Box<Path>,
        line: usize,
        message: String,
    },
    #[error("{}:{line}: unknown parameter `{param}` in a `{block}` block; valid parameters there are: {valid}", file.display())]
    UnknownParameter {
        file: Box<Path>,
        line: usize,
        block: String,
        param: String,
        valid: String,
    },
    #[error("{}:{line}: unknown block type `{block}`; valid top-level blocks are: {valid}", file.display())]
    UnknownBlock {
        file: Box<Path>,
        line: usize,
        block: String,
        valid: String,
    },
    #[error("{}:{line}: parameter `{param}`: {value} is not valid; expected {expected}", file.display())]
    BadValue {
        file: Box<Path>,
        line: usize,
        param: String,
        value: String,
        expected: String,
    },
    #[error("{}:{line}: parameter `{param}` = {value} is not supported by antsched's disk model ({why}); supported: {supported}", file.display())]
    Unsupported {
        file: Box<Path>,
        line: usize,
        param: String,
        value: String,
        supported: String,
        why: String,
    },
    #[error("{}:{line}: the `{block}` block lacks the parameter `{param}`", file.display())]
    Missing {
        file: Box<Path>,
        line: usize,
        block: String,
        param: String,
    },
    #[error("{}:{line}: parameter `{param}` is given twice (first at line {first})", file.display())]
    Duplicate {
        file: Box<Path>,
        line: usize,
        param: String,
        first: usize,
    },
    #[error("{}:{line}: {message}", file.display())]
    Invalid {
        file: Box<Path>,
        line: usize,
        message: String,
    },
    #[error("--set {setting:?}: {message}")]
    Setting { setting: String, message: String },
}

impl DiskSimError {
    fn bad(p: &Param, value: impl std::fmt::Display, expected: impl Into<String>) -> DiskSimError {
        DiskSimError::BadValue {
            file: p.pos.file.clone().into(),
            line: p.pos.line,
            param: p.key.clone(),
            value: crate::compact_value(value.to_string()),
            expected: expected.into(),
        }
    }
    fn unsupported(
        p: &Param,
        value: impl std::fmt::Display,
        supported: impl Into<String>,
        why: impl Into<String>,
    ) -> DiskSimError {
        DiskSimError::Unsupported {
            file: p.pos.file.clone().into(),
            line: p.pos.line,
            param: p.key.clone(),
            value: crate::compact_value(value.to_string()),
            supported: supported.into(),
            why: why.into(),
        }
    }
    fn invalid(pos: &Pos, message: impl Into<String>) -> DiskSimError {
        DiskSimError::Invalid {
            file: pos.file.clone().into(),
            line: pos.line,
            message: message.into(),
        }
    }
}

/// How a parameter is treated (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Used,
    /// Accepted; cannot affect one disk serving one request at a time. The string says why.
    Irrelevant(&'static str),
    /// Only zero (or the given word) is supported; anything else is an error.
    MustBeZero(&'static str),
}

use Class::*;

const STATS: &str = "statistics output only";
const ONE_OUTSTANDING: &str = "needs a second queued request; validation keeps one outstanding";
const ONE_DEVICE: &str = "bus sharing between devices; one disk per bus here";
const WORKLOAD: &str = "describes a synthetic workload, not the drive";
const EXTRA_DISCONNECT: &str = "the extra disconnect of an `Extra write disconnect` drive, which DiskSim 4.0 charges on a write after a write that does not continue it: accepted; of it only the status's second reselection is modelled (see `Reselect::write_prebuffer`)";

const GLOBAL: &[(&str, Class)] = &[
    ("Init Seed", Irrelevant("the model has no randomness")),
    ("Real Seed", Irrelevant("the model has no randomness")),
    ("Statistic warm-up time", Irrelevant(STATS)),
    ("Statistic warm-up IOs", Irrelevant(STATS)),
    ("Stat definition file", Irrelevant(STATS)),
    (
        "Output file for trace of I/O requests simulated",
        Irrelevant(STATS),
    ),
    ("Detailed execution trace", Irrelevant(STATS)),
];

const STATS_BLOCK: &[(&str, Class)] = &[
    ("iodriver stats", Used),
    ("bus stats", Used),
    ("ctlr stats", Used),
    ("device stats", Used),
    ("process flow stats", Used),
];

const PRINT_FLAGS: &[(&str, Class)] = &[
    ("Print driver size stats", Irrelevant(STATS)),
    ("Print driver locality stats", Irrelevant(STATS)),
    ("Print driver blocking stats", Irrelevant(STATS)),
    ("Print driver interference stats", Irrelevant(STATS)),
    ("Print driver queue stats", Irrelevant(STATS)),
    ("Print driver crit stats", Irrelevant(STATS)),
    ("Print driver idle stats", Irrelevant(STATS)),
    ("Print driver intarr stats", Irrelevant(STATS)),
    ("Print driver streak stats", Irrelevant(STATS)),
    ("Print driver stamp stats", Irrelevant(STATS)),
    ("Print driver per-device stats", Irrelevant(STATS)),
    ("Print bus idle stats", Irrelevant(STATS)),
    ("Print bus arbwait stats", Irrelevant(STATS)),
    ("Print controller cache stats", Irrelevant(STATS)),
    ("Print controller size stats", Irrelevant(STATS)),
    ("Print controller locality stats", Irrelevant(STATS)),
    ("Print controller blocking stats", Irrelevant(STATS)),
    ("Print controller interference stats", Irrelevant(STATS)),
    ("Print controller queue stats", Irrelevant(STATS)),
    ("Print controller crit stats", Irrelevant(STATS)),
    ("Print controller idle stats", Irrelevant(STATS)),
    ("Print controller intarr stats", Irrelevant(STATS)),
    ("Print controller streak stats", Irrelevant(STATS)),
    ("Print controller stamp stats", Irrelevant(STATS)),
    ("Print controller per-device stats", Irrelevant(STATS)),
    ("Print device queue stats", Irrelevant(STATS)),
    ("Print device crit stats", Irrelevant(STATS)),
    ("Print device idle stats", Irrelevant(STATS)),
    ("Print device intarr stats", Irrelevant(STATS)),
    ("Print device size stats", Irrelevant(STATS)),
    ("Print device seek stats", Irrelevant(STATS)),
    ("Print device latency stats", Irrelevant(STATS)),
    ("Print device xfer stats", Irrelevant(STATS)),
    ("Print device acctime stats", Irrelevant(STATS)),
    ("Print device interfere stats", Irrelevant(STATS)),
    ("Print device buffer stats", Irrelevant(STATS)),
    ("Print per-process stats", Irrelevant(STATS)),
    ("Print per-CPU stats", Irrelevant(STATS)),
    ("Print all interrupt stats", Irrelevant(STATS)),
    ("Print sleep stats", Irrelevant(STATS)),
];

const IOQUEUE: &[(&str, Class)] = &[
    ("Scheduling policy", Irrelevant(ONE_OUTSTANDING)),
    ("Cylinder mapping strategy", Irrelevant(ONE_OUTSTANDING)),
    (
        "Write initiation delay",
        MustBeZero("delays dispatch of writes by the queue"),
    ),
    (
        "Read initiation delay",
        MustBeZero("delays dispatch of reads by the queue"),
    ),
    ("Sequential stream scheme", Irrelevant(ONE_OUTSTANDING)),
    ("Maximum concat size", Irrelevant(ONE_OUTSTANDING)),
    ("Overlapping request scheme", Irrelevant(ONE_OUTSTANDING)),
    (
        "Sequential stream diff maximum",
        Irrelevant(ONE_OUTSTANDING),
    ),
    ("Scheduling timeout scheme", Irrelevant(ONE_OUTSTANDING)),
    ("Timeout time/weight", Irrelevant(ONE_OUTSTANDING)),
    ("Timeout scheduling", Irrelevant(ONE_OUTSTANDING)),
    ("Scheduling priority scheme", Irrelevant(ONE_OUTSTANDING)),
    ("Priority scheduling", Irrelevant(ONE_OUTSTANDING)),
];

const IODRIVER: &[(&str, Class)] = &[
    ("type", Used),
    (
        "Constant access time",
        MustBeZero("a non-zero value replaces the disk model by a constant"),
    ),
    ("Scheduler", Used),
    ("Use queueing in subsystem", Irrelevant(ONE_OUTSTANDING)),
];

const BUS: &[(&str, Class)] = &[
    ("type", Irrelevant(ONE_DEVICE)),
    ("Arbitration type", Irrelevant(ONE_DEVICE)),
    (
        "Arbitration time",
        MustBeZero("bus arbitration delay is not modelled"),
    ),
    ("Read block transfer time", Used),
    ("Write block transfer time", Used),
    ("Print stats", Irrelevant(STATS)),
];

const CTLR: &[(&str, Class)] = &[
    ("type", Used),
    (
        "Scale for delays",
        Irrelevant("only used by intelligent controllers (type 2+)"),
    ),
    ("Bulk sector transfer time", Used),
    ("Maximum queue length", Irrelevant(ONE_OUTSTANDING)),
    ("Print stats", Irrelevant(STATS)),
];

const LOGORG: &[(&str, Class)] = &[
    (
        "Addressing mode",
        Irrelevant("logical organisation of a one-disk system"),
    ),
    (
        "Distribution scheme",
        Irrelevant("logical organisation of a one-disk system"),
    ),
    (
        "Redundancy scheme",
        Irrelevant("logical organisation of a one-disk system"),
    ),
    (
        "devices",
        Irrelevant("logical organisation of a one-disk system"),
    ),
    (
        "Stripe unit",
        Irrelevant("logical organisation of a one-disk system"),
    ),
    (
        "Synch writes for safety",
        Irrelevant("logical organisation of a one-disk system"),
    ),
    (
        "Number of copies",
        Irrelevant("logical organisation of a one-disk system"),
    ),
    (
        "Copy choice on read",
        Irrelevant("logical organisation of a one-disk system"),
    ),
    (
        "RMW vs. reconstruct",
        Irrelevant("logical organisation of a one-disk system"),
    ),
    (
        "Parity stripe unit",
        Irrelevant("logical organisation of a one-disk system"),
    ),
    (
        "Parity rotation type",
        Irrelevant("logical organisation of a one-disk system"),
    ),
    ("Time stamp interval", Irrelevant(STATS)),
    ("Time stamp start time", Irrelevant(STATS)),
    ("Time stamp stop time", Irrelevant(STATS)),
    ("Time stamp file name", Irrelevant(STATS)),
];

const PF: &[(&str, Class)] = &[
    ("Number of processors", Irrelevant(WORKLOAD)),
    ("Process-Flow Time Scale", Irrelevant(WORKLOAD)),
];

const SYNTHIO: &[(&str, Class)] = &[
    ("Number of I/O requests to generate", Irrelevant(WORKLOAD)),
    ("Maximum time of trace generated", Irrelevant(WORKLOAD)),
    ("System call/return with each request", Irrelevant(WORKLOAD)),
    ("Think time from call to request", Irrelevant(WORKLOAD)),
    ("Think time from request to return", Irrelevant(WORKLOAD)),
    ("Generators", Used),
];

const SYNTHGEN: &[(&str, Class)] = &[
    ("Storage capacity per device", Irrelevant(WORKLOAD)),
    ("devices", Irrelevant(WORKLOAD)),
    ("Blocking factor", Irrelevant(WORKLOAD)),
    ("Probability of sequential access", Irrelevant(WORKLOAD)),
    ("Probability of local access", Irrelevant(WORKLOAD)),
    ("Probability of read access", Irrelevant(WORKLOAD)),
    ("Probability of time-critical request", Irrelevant(WORKLOAD)),
    ("Probability of time-limited request", Irrelevant(WORKLOAD)),
    ("Time-limited think times", Irrelevant(WORKLOAD)),
    ("General inter-arrival times", Irrelevant(WORKLOAD)),
    ("Sequential inter-arrival times", Irrelevant(WORKLOAD)),
    ("Local inter-arrival times", Irrelevant(WORKLOAD)),
    ("Local distances", Irrelevant(WORKLOAD)),
    ("Sizes", Irrelevant(WORKLOAD)),
];

const DISK: &[(&str, Class)] = &[
    ("Model", Used),
    ("Scheduler", Used),
    ("Max queue length", Irrelevant(ONE_OUTSTANDING)),
    ("Bulk sector transfer time", Used),
    ("Segment size (in blks)", Used),
    ("Number of buffer segments", Used),
    ("Print stats", Irrelevant(STATS)),
    ("Per-request overhead time", Used),
    ("Time scale for overheads", Used),
    ("Hold bus entire read xfer", Irrelevant(ONE_DEVICE)),
    ("Hold bus entire write xfer", Irrelevant(ONE_DEVICE)),
    ("Allow almost read hits", Used),
    ("Allow sneaky full read hits", Irrelevant(ONE_OUTSTANDING)),
    ("Allow sneaky partial read hits", Irrelevant(ONE_OUTSTANDING)),
    ("Allow sneaky intermediate read hits", Irrelevant(ONE_OUTSTANDING)),
    ("Allow read hits on write data", Used),
    ("Allow write prebuffering", Irrelevant(ONE_OUTSTANDING)),
    ("Preseeking level", Irrelevant("preseeks toward the next queued request; none is queued")),
    ("Never disconnect", Used),
    ("Avg sectors per cylinder", Irrelevant("exported to host schedulers; DiskSim's disk does not use it")),
    ("Maximum number of write segments", Used),
    ("Use separate write segment", Used),
    ("Low (write) water mark", Irrelevant("disconnect point of writes larger than a segment, whose data then waits for the media")),
    ("High (read) water mark", Used),
    ("Set watermark by reqsize", Used),
    ("Calc sector by sector", Irrelevant("a simulation speed option; DiskSim documents it has no effect on accuracy")),
    ("Enable caching in buffer", Used),
    ("Buffer continuous read", Used),
    ("Minimum read-ahead (blks)", Used),
    ("Maximum read-ahead (blks)", Used),
    ("Read-ahead over requested", Used),
    ("Read-ahead on idle hit", Used),
    ("Read any free blocks", Used),
    ("Fast write level", Used),
    ("Immediate buffer read", Used),
    ("Immediate buffer write", Used),
    ("Combine seq writes", Used),
    ("Stop prefetch in sector", Used),
    ("Disconnect write if seek", MustBeZero("the disconnect/reselect protocol is not modelled")),
    ("Write hit stop prefetch", Used),
    ("Read directly to buffer", Irrelevant("only matters when a full segment must drain before a sector is read; one request never fills it")),
    ("Immed transfer partial hit", Used),
    ("Read hit over. after read", Used),
    ("Read hit over. after write", Used),
    ("Read miss over. after read", Used),
    ("Read miss over. after write", Used),
    ("Write hit over. after read", Used),
    ("Write hit over. after write", Used),
    ("Write miss over. after read", Used),
    ("Write miss over. after write", Used),
    ("Read completion overhead", Used),
    ("Write completion overhead", Used),
    ("Data preparation overhead", Used),
    ("First reselect overhead", Used),
    ("Other reselect overhead", Used),
    ("Read disconnect afterread", Used),
    ("Read disconnect afterwrite", Used),
    ("Write disconnect overhead", Used),
    ("Extra write disconnect", Used),
    ("Extradisc command overhead", Irrelevant(EXTRA_DISCONNECT)),
    ("Extradisc disconnect overhead", Irrelevant(EXTRA_DISCONNECT)),
    ("Extradisc inter-disconnect delay", Irrelevant(EXTRA_DISCONNECT)),
    ("Extradisc 2nd disconnect overhead", Irrelevant(EXTRA_DISCONNECT)),
    ("Extradisc seek delta", Irrelevant(EXTRA_DISCONNECT)),
    ("Minimum seek delay", Used),
];

const DM_DISK: &[(&str, Class)] = &[
    ("Number of data surfaces", Used),
    ("Number of cylinders", Used),
    ("Block count", Used),
    ("Layout Model", Used),
    ("Mechanical Model", Used),
];

const LAYOUT_G1: &[(&str, Class)] = &[
    ("LBN-to-PBN mapping scheme", Used),
    ("Sparing scheme used", Used),
    ("Rangesize for sparing", Used),
    ("Skew units", Used),
    ("Zones", Used),
];

const ZONE: &[(&str, Class)] = &[
    ("First cylinder number", Used),
    ("Last cylinder number", Used),
    ("Blocks per track", Used),
    ("Offset of first block", Used),
    ("Empty space at zone front", Used),
    ("Skew for track switch", Used),
    ("Skew for cylinder switch", Used),
    ("Number of spares", Used),
    ("slips", Used),
    ("defects", Used),
    ("Skew units", Used),
];

const MECH_G1: &[(&str, Class)] = &[
    ("Access time type", Used),
    ("Seek type", Used),
    (
        "Single cylinder seek time",
        Irrelevant("the extracted seek table gives the one-cylinder time"),
    ),
    (
        "Average seek time",
        Irrelevant("used by other seek types; the extracted table is used"),
    ),
    (
        "Full strobe seek time",
        Irrelevant("used by other seek types; the extracted table is used"),
    ),
    ("Full seek curve", Used),
    ("Add. write settling delay", Used),
    ("HPL seek equation values", Used),
    ("First ten seek times", Used),
    ("Head switch time", Used),
    ("Rotation speed (in rpms)", Used),
    (
        "Percent error in rpms",
        MustBeZero("DiskSim draws a random rpm error per disk; the model is deterministic"),
    ),
];

const TOP_BLOCKS: &[&str] = &[
    "disksim_global",
    "disksim_stats",
    "disksim_iodriver",
    "disksim_bus",
    "disksim_ctlr",
    "disksim_disk",
    "disksim_logorg",
    "disksim_pf",
    "disksim_synthio",
];

fn names(table: &[(&str, Class)]) -> String {
    table
        .iter()
        .map(|(k, _)| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks a block's parameters against its table: unknown names, duplicates, restricted values.
fn check(block: &Block, table: &[(&str, Class)]) -> Result<(), DiskSimError> {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for p in &block.params {
        let Some((_, class)) = table.iter().find(|(k, _)| *k == p.key) else {
            return Err(DiskSimError::UnknownParameter {
                file: p.pos.file.clone().into(),
                line: p.pos.line,
                block: block.kind.clone(),
                param: p.key.clone(),
                valid: names(table),
            });
        };
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == p.key) {
            return Err(DiskSimError::Duplicate {
                file: p.pos.file.clone().into(),
                line: p.pos.line,
                param: p.key.clone(),
                first: *first,
            });
        }
        seen.push((p.key.as_str(), p.pos.line));
        if let MustBeZero(why) = class {
            match &p.value {
                Value::Number(v) if *v == 0.0 => {}
                Value::Number(v) => return Err(DiskSimError::unsupported(p, v, "0", *why)),
                other => return Err(DiskSimError::bad(p, describe(other), "a number (0)")),
            }
        }
    }
    Ok(())
}

fn describe(v: &Value) -> String {
    match v {
        Value::Number(n) => n.to_string(),
        Value::Word(w) => format!("`{w}`"),
        Value::Block(b) => format!("a `{}` block", b.kind),
        Value::List(_) => "a list".into(),
    }
}

fn get<'a>(b: &'a Block, key: &str) -> Result<&'a Param, DiskSimError> {
    b.params
        .iter()
        .find(|p| p.key == key)
        .ok_or_else(|| DiskSimError::Missing {
            file: b.pos.file.clone().into(),
            line: b.pos.line,
            block: b.name.clone().unwrap_or_else(|| b.kind.clone()),
            param: key.to_string(),
        })
}

fn opt<'a>(b: &'a Block, key: &str) -> Option<&'a Param> {
    b.params.iter().find(|p| p.key == key)
}

fn num_of(p: &Param) -> Result<f64, DiskSimError> {
    match &p.value {
        Value::Number(v) if v.is_finite() => Ok(*v),
        other => Err(DiskSimError::bad(p, describe(other), "a number")),
    }
}

/// A non-negative number.
fn nonneg(b: &Block, key: &str) -> Result<f64, DiskSimError> {
    let p = get(b, key)?;
    let v = num_of(p)?;
    if v < 0.0 {
        return Err(DiskSimError::bad(p, v, "a number >= 0"));
    }
    Ok(v)
}

/// The longest time a drive parameter may take, in milliseconds. Seeks, overheads and
/// transfer times of real drives are milliseconds or less; a value past ten seconds is a typo
/// or a hostile file, and far larger ones (1e12, 1e308) would overflow the model's nanosecond
/// arithmetic or stall its rotational-position loops.
const MAX_TIME_MS: f64 = 10_000.0;

/// A time in milliseconds, from 0 to [`MAX_TIME_MS`].
fn time_ms(b: &Block, key: &str) -> Result<f64, DiskSimError> {
    let p = get(b, key)?;
    let v = num_of(p)?;
    if !(0.0..=MAX_TIME_MS).contains(&v) {
        return Err(DiskSimError::bad(
            p,
            v,
            format!("a time in milliseconds from 0 to {MAX_TIME_MS}"),
        ));
    }
    Ok(v)
}

/// A write settling delay in milliseconds, from -[`MAX_TIME_MS`] to [`MAX_TIME_MS`]: unlike
/// the other times it may be negative (see `HddModel::seek_ms`); DiskSim accepts any value.
fn settle_ms(b: &Block, key: &str) -> Result<f64, DiskSimError> {
    let p = get(b, key)?;
    let v = num_of(p)?;
    if !(-MAX_TIME_MS..=MAX_TIME_MS).contains(&v) {
        return Err(DiskSimError::bad(
            p,
            v,
            format!("a time in milliseconds from -{MAX_TIME_MS} to {MAX_TIME_MS}"),
        ));
    }
    Ok(v)
}

/// An integer in `lo..=hi`.
fn int(b: &Block, key: &str, lo: i64, hi: i64) -> Result<i64, DiskSimError> {
    let p = get(b, key)?;
    int_of(p, lo, hi)
}

fn int_of(p: &Param, lo: i64, hi: i64) -> Result<i64, DiskSimError> {
    let v = num_of(p)?;
    if v.fract() != 0.0 || v < lo as f64 || v > hi as f64 {
        let range = if hi == i64::MAX {
            format!("an integer >= {lo}")
        } else {
            format!("an integer from {lo} to {hi}")
        };
        return Err(DiskSimError::bad(p, v, range));
    }
    Ok(v as i64)
}

fn word<'a>(b: &'a Block, key: &str) -> Result<(&'a str, &'a Param), DiskSimError> {
    let p = get(b, key)?;
    match &p.value {
        Value::Word(w) => Ok((w.as_str(), p)),
        other => Err(DiskSimError::bad(p, describe(other), "a word")),
    }
}

fn block<'a>(b: &'a Block, key: &str, kind: &str) -> Result<&'a Block, DiskSimError> {
    let p = get(b, key)?;
    match &p.value {
        Value::Block(inner) if inner.kind == kind => Ok(inner),
        Value::Block(inner) => Err(DiskSimError::unsupported(
            p,
            format!("a `{}` block", inner.kind),
            format!("a `{kind}` block"),
            "only this kind is modelled",
        )),
        other => Err(DiskSimError::bad(
            p,
            describe(other),
            format!("a `{kind} {{ ... }}` block"),
        )),
    }
}

/// Reads a DiskSim 4.0 `.parv` file (and everything it sources) into an [`HddModel`].
pub fn load_disksim(parv_path: impl AsRef<Path>) -> Result<HddModel, DiskSimError> {
    load_disksim_with(parv_path, &[])
}

/// [`load_disksim`] with some of the drive's numeric parameters changed, each setting a
/// `NAME=NUMBER` (`Immediate buffer read=0`): to ask what a parameter does to a drive's
/// timing. The name is matched exactly in the `disksim_disk` block and the blocks it sources
/// (its model, its seek curve); the new value is checked as the file's would be.
pub fn load_disksim_with(
    parv_path: impl AsRef<Path>,
    settings: &[String],
) -> Result<HddModel, DiskSimError> {
    let parv = parv_path.as_ref();
    let mut stmts = parse::parse_file(parv)?;
    for setting in settings {
        let fail = |message: &str| DiskSimError::Setting {
            setting: setting.clone(),
            message: message.to_string(),
        };
        let (name, value) = setting
            .split_once('=')
            .ok_or_else(|| fail("expected NAME=NUMBER, as in `Immediate buffer read=0`"))?;
        let (name, value) = (name.trim(), value.trim());
        let number: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| fail("the value is not a number"))?;
        let mut found = 0;
        for s in &mut stmts {
            if let Statement::Block(b) = s {
                if b.kind == "disksim_disk" {
                    found += set_number(b, name, number).map_err(|m| fail(&m))?;
                }
            }
        }
        if found == 0 {
            return Err(fail(&format!(
                "the drive has no parameter `{name}` (names are matched exactly, as in its .diskspecs and .model files)"
            )));
        }
    }
    model_of(parv, &stmts)
}

/// Sets every parameter `name` in `b` and the blocks within it to `number`; how many.
fn set_number(b: &mut Block, name: &str, number: f64) -> Result<usize, String> {
    let mut found = 0;
    for p in &mut b.params {
        match &mut p.value {
            Value::Number(x) if p.key == name => {
                *x = number;
                found += 1;
            }
            other if p.key == name => {
                return Err(format!("`{name}` is {}, not a number", describe(other)))
            }
            Value::Block(inner) => found += set_number(inner, name, number)?,
            _ => {}
        }
    }
    Ok(found)
}

/// Reads `text` as the DiskSim `.parv` file at `parv_path` into an [`HddModel`]: `source`
/// statements are resolved relative to `parv_path`. For parsers fed from memory (fuzzing,
/// tests); [`load_disksim`] reads the file itself.
pub fn load_disksim_text(
    text: &str,
    parv_path: impl AsRef<Path>,
) -> Result<HddModel, DiskSimError> {
    let parv = parv_path.as_ref();
    model_of(parv, &parse::parse_text(text, parv)?)
}

fn model_of(parv: &Path, stmts: &[Statement]) -> Result<HddModel, DiskSimError> {
    let mut disks: Vec<&Block> = Vec::new();
    let mut bus_read = 0.0f64;
    let mut bus_write = 0.0f64;
    let mut ctlr_bulk = 0.0f64;
    let mut instantiated: Vec<(String, Pos)> = Vec::new();
    for s in stmts {
        match s {
            Statement::Block(b) => match b.kind.as_str() {
                "disksim_global" => check(b, GLOBAL)?,
                "disksim_stats" => {
                    check(b, STATS_BLOCK)?;
                    for p in &b.params {
                        match &p.value {
                            Value::Block(inner) => check(inner, PRINT_FLAGS)?,
                            other => {
                                return Err(DiskSimError::bad(
                                    p,
                                    describe(other),
                                    "a statistics block",
                                ))
                            }
                        }
                    }
                }
                "disksim_iodriver" => {
                    check(b, IODRIVER)?;
                    let t = int(b, "type", 0, i64::MAX)?;
                    if t != 1 {
                        return Err(DiskSimError::unsupported(
                            get(b, "type")?,
                            t,
                            "1",
                            "only the normal device driver (type 1) is modelled",
                        ));
                    }
                    if opt(b, "Scheduler").is_some() {
                        check(block(b, "Scheduler", "disksim_ioqueue")?, IOQUEUE)?;
                    }
                }
                "disksim_bus" => {
                    check(b, BUS)?;
                    bus_read = bus_read.max(time_ms(b, "Read block transfer time")?);
                    bus_write = bus_write.max(time_ms(b, "Write block transfer time")?);
                }
                "disksim_ctlr" => {
                    check(b, CTLR)?;
                    let t = int(b, "type", 0, i64::MAX)?;
                    if t != 1 {
                        return Err(DiskSimError::unsupported(
                            get(b, "type")?,
                            t,
                            "1",
                            "only the pass-through controller (type 1) is modelled",
                        ));
                    }
                    ctlr_bulk = ctlr_bulk.max(time_ms(b, "Bulk sector transfer time")?);
                }
                "disksim_disk" => {
                    check(b, DISK)?;
                    disks.push(b);
                }
                "disksim_logorg" => check(b, LOGORG)?,
                "disksim_pf" => check(b, PF)?,
                "disksim_synthio" => {
                    check(b, SYNTHIO)?;
                    if let Some(p) = opt(b, "Generators") {
                        match &p.value {
                            Value::List(items) => {
                                for (v, _) in items {
                                    match v {
                                        Value::Block(g) if g.kind == "disksim_synthgen" => {
                                            check(g, SYNTHGEN)?
                                        }
                                        other => {
                                            return Err(DiskSimError::bad(
                                                p,
                                                describe(other),
                                                "a list of `disksim_synthgen` blocks",
                                            ))
                                        }
                                    }
                                }
                            }
                            other => return Err(DiskSimError::bad(p, describe(other), "a list")),
                        }
                    }
                }
                other => {
                    return Err(DiskSimError::UnknownBlock {
                        file: b.pos.file.clone().into(),
                        line: b.pos.line,
                        block: other.to_string(),
                        valid: TOP_BLOCKS.join(", "),
                    })
                }
            },
            Statement::Instantiate { kind, pos, .. } => {
                instantiated.push((kind.clone(), pos.clone()))
            }
            Statement::Topology { .. } => {}
        }
    }
    // The disk: the disksim_disk block that is instantiated (or the only one).
    let disk =
        {
            let inst: Vec<&Block> = disks
                .iter()
                .copied()
                .filter(|d| instantiated.iter().any(|(k, _)| Some(k) == d.name.as_ref()))
                .collect();
            match (inst.len(), disks.len()) {
                (1, _) => inst[0],
                (0, 1) => disks[0],
                (0, 0) => {
                    return Err(DiskSimError::Invalid {
                        file: parv.to_path_buf().into(),
                        line: 1,
                        message: "no `disksim_disk` block (did a `source`d .diskspecs go missing?)"
                            .into(),
                    })
                }
                _ => return Err(DiskSimError::Invalid {
                    file: parv.to_path_buf().into(),
                    line: 1,
                    message:
                        "more than one `disksim_disk` is instantiated; antsched validates one disk"
                            .into(),
                }),
            }
        };
    for (kind, pos) in &instantiated {
        let known = stmts
            .iter()
            .any(|s| matches!(s, Statement::Block(b) if b.name.as_deref() == Some(kind)));
        if !known {
            return Err(DiskSimError::invalid(
                pos,
                format!("`instantiate ... as {kind}`: no block named `{kind}` is defined"),
            ));
        }
    }
    // The slowest stage of the path sets the rate, per direction.
    build_disk(disk, bus_read.max(ctlr_bulk), bus_write.max(ctlr_bulk))
}

fn flag(b: &Block, key: &str) -> Result<bool, DiskSimError> {
    Ok(int(b, key, 0, 1)? == 1)
}

fn build_disk(d: &Block, path_read: f64, path_write: f64) -> Result<HddModel, DiskSimError> {
    check(block(d, "Scheduler", "disksim_ioqueue")?, IOQUEUE)?;
    let model = block(d, "Model", "dm_disk")?;
    check(model, DM_DISK)?;
    let scale = nonneg(d, "Time scale for overheads")?;
    let ov = |k: &str| -> Result<f64, DiskSimError> {
        let v = time_ms(d, k)? * scale;
        if v > MAX_TIME_MS {
            return Err(DiskSimError::bad(
                get(d, k)?,
                v,
                format!("with `Time scale for overheads` {scale}, an overhead of at most {MAX_TIME_MS} ms"),
            ));
        }
        Ok(v)
    };
    let overheads = Overheads {
        read_hit_after_read: ov("Read hit over. after read")?,
        read_hit_after_write: ov("Read hit over. after write")?,
        read_miss_after_read: ov("Read miss over. after read")?,
        read_miss_after_write: ov("Read miss over. after write")?,
        write_hit_after_read: ov("Write hit over. after read")?,
        write_hit_after_write: ov("Write hit over. after write")?,
        write_miss_after_read: ov("Write miss over. after read")?,
        write_miss_after_write: ov("Write miss over. after write")?,
        per_request: ov("Per-request overhead time")?,
        read_complete: ov("Read completion overhead")?,
        write_complete: ov("Write completion overhead")?,
    };
    // Cache.
    let nsegs = int(d, "Number of buffer segments", 0, 4096)? as u32;
    let segsize = int(d, "Segment size (in blks)", 1, i64::MAX)? as u32;
    let wsegs = int(
        d,
        "Maximum number of write segments",
        0,
        nsegs.max(1) as i64,
    )? as u32;
    // DiskSim's loader accepts 0 to 2, but its disk and cache code only ever ask whether the
    // value is non-zero: 2 (the HP C2490A's file) caches exactly as 1 does. A third mode was
    // planned and never written; reading it as "on" is what DiskSim validated that drive with.
    let enable = int(d, "Enable caching in buffer", 0, 2)?;
    let contread = int(d, "Buffer continuous read", 0, 4)?;
    let read_ahead = match contread {
        0 => ReadAhead::Off,
        1 => ReadAhead::Track,
        2 => ReadAhead::Cylinder,
        3 => ReadAhead::Segment,
        _ => ReadAhead::TrackAhead,
    };
    let keep = match int(d, "Read-ahead over requested", -1, 1)? {
        -1 => KeepRequest::Drop,
        0 => KeepRequest::Keep,
        _ => KeepRequest::Overwrite,
    };
    let fast = int(d, "Fast write level", 0, 2)?;
    let immed_read = int(d, "Immediate buffer read", 0, 2)?;
    let immed_write = int(d, "Immediate buffer write", 0, 2)?;
    for (k, v) in [
        ("Immediate buffer read", immed_read),
        ("Immediate buffer write", immed_write),
    ] {
        if v == 2 {
            return Err(DiskSimError::unsupported(
                get(d, k)?,
                2,
                "0 or 1",
                "mode 2 is not modelled",
            ));
        }
    }
    let min_ra = int(d, "Minimum read-ahead (blks)", 0, segsize as i64)? as u32;
    let max_ra = int(d, "Maximum read-ahead (blks)", 0, segsize as i64)? as u32;
    let water = nonneg(d, "High (read) water mark")?;
    if water > 1.0 {
        return Err(DiskSimError::bad(
            get(d, "High (read) water mark")?,
            water,
            "a fraction from 0 to 1",
        ));
    }
    let lw = nonneg(d, "Low (write) water mark")?;
    if lw > 1.0 {
        return Err(DiskSimError::bad(
            get(d, "Low (write) water mark")?,
            lw,
            "a fraction from 0 to 1",
        ));
    }
    let cache = CacheParams {
        enabled: enable != 0 && nsegs > 0,
        segments: nsegs,
        segment_sectors: segsize,
        separate_write_segment: flag(d, "Use separate write segment")?,
        write_segments: wsegs,
        read_ahead,
        min_read_ahead: min_ra,
        max_read_ahead: max_ra,
        keep_request: keep,
        read_any_free_blocks: flag(d, "Read any free blocks")?,
        write_back: match fast {
            0 => WriteBack::Off,
            1 => WriteBack::Sequential,
            _ => WriteBack::All,
        },
        immediate_read: immed_read == 1,
        immediate_write: immed_write == 1,
        write_stops_prefetch: flag(d, "Write hit stop prefetch")?,
        read_hits_on_write_data: flag(d, "Allow read hits on write data")?,
        almost_read_hits: flag(d, "Allow almost read hits")?,
        partial_hits: flag(d, "Immed transfer partial hit")?,
        combine_writes: flag(d, "Combine seq writes")?,
        stop_prefetch_in_sector: flag(d, "Stop prefetch in sector")?,
        read_water: water,
        water_by_request: flag(d, "Set watermark by reqsize")?,
        read_ahead_on_idle_hit: flag(d, "Read-ahead on idle hit")?,
    };
    let blk = time_ms(d, "Bulk sector transfer time")?;
    let (layout, mech) = build_model(model)?;
    let one_cyl = mech.seek.time_ms(1);
    let params = HddParams {
        rpm: mech.rpm,
        seek: mech.seek,
        head_switch_ms: mech.head_switch,
        // See `HddParams::head_switch_random_ms`: an unprepared head switch settles like a
        // one-cylinder seek.
        head_switch_random_ms: one_cyl,
        write_settle_ms: mech.settle,
        overheads,
        bus_ms_per_sector: blk.max(path_read),
        bus_write_ms_per_sector: blk.max(path_write),
        cache,
        reselect: if flag(d, "Never disconnect")? {
            // A drive that never disconnects keeps the bus through the mechanical work, so
            // DiskSim charges none of the protocol's overheads.
            Reselect {
                min_write_delay: ov("Minimum seek delay")?,
                write_prebuffer: flag(d, "Extra write disconnect")?,
                ..Reselect::default()
            }
        } else {
            Reselect {
                read_disconnect_after_read: ov("Read disconnect afterread")?,
                read_disconnect_after_write: ov("Read disconnect afterwrite")?,
                write_disconnect: ov("Write disconnect overhead")?,
                reselect: ov("First reselect overhead")?,
                reselect_other: ov("Other reselect overhead")?,
                data_prep: ov("Data preparation overhead")?,
                min_write_delay: ov("Minimum seek delay")?,
                write_prebuffer: flag(d, "Extra write disconnect")?,
            }
        },
    };
    let name = d.name.clone().unwrap_or_else(|| "disksim".into());
    Ok(HddModel::new(name, layout, params))
}

struct Mech {
    rpm: f64,
    seek: SeekCurve,
    head_switch: f64,
    settle: f64,
}

fn build_model(m: &Block) -> Result<(Layout, Mech), DiskSimError> {
    let surfaces = int(m, "Number of data surfaces", 1, 1024)? as u32;
    // `Number of cylinders` is checked but not used: the zones are the geometry. DiskSim maps
    // blocks and measures seek distances from the zones alone and never compares their last
    // cylinder with this count, and extraction tools disagree on it (the HP C2490A's file
    // gives 2629 cylinders and a last zone that ends at cylinder 2629, counting from 0).
    int(m, "Number of cylinders", 1, i64::from(u32::MAX))?;
    let count_p = get(m, "Block count")?;
    let count = int_of(count_p, 1, i64::MAX)? as u64;
    let lay = block(m, "Layout Model", "dm_layout_g1")?;
    check(lay, LAYOUT_G1)?;
    let mapping = int(lay, "LBN-to-PBN mapping scheme", 0, 2)?;
    let order = match mapping {
        0 => SurfaceOrder::Normal,
        1 => SurfaceOrder::SerpentinePerZone,
        _ => SurfaceOrder::SerpentineAbsolute,
    };
    let scheme_p = get(lay, "Sparing scheme used")?;
    let scheme = int_of(scheme_p, 0, 10)?;
    let range = int(lay, "Rangesize for sparing", 1, i64::from(u32::MAX))? as u32;
    let sparing = match scheme {
        0 => Sparing::None,
        1 => Sparing::Tracks,
        2 => Sparing::PerCylinder,
        3 => Sparing::PerTrack,
        7 => Sparing::AtEnd,
        8 => Sparing::PerRange { cyls: range },
        9 => Sparing::PerZone,
        v => {
            return Err(DiskSimError::unsupported(
                scheme_p,
                v,
                "0 (none), 1 (spare tracks per zone), 2 (per cylinder), 3 (per track), 7 (at the end of the disk), 8 (per cylinder range), 9 (per zone)",
                "that sparing scheme's LBN mapping is not implemented",
            ))
        }
    };
    let skew_units_default = skew_units(lay)?;
    let zones_p = get(lay, "Zones")?;
    let Value::List(items) = &zones_p.value else {
        return Err(DiskSimError::bad(
            zones_p,
            describe(&zones_p.value),
            "a list of `dm_layout_g1_zone` blocks",
        ));
    };
    let mut zones = Vec::new();
    for (v, pos) in items {
        let Value::Block(z) = v else {
            return Err(DiskSimError::invalid(
                pos,
                "`Zones` must list `dm_layout_g1_zone { ... }` blocks",
            ));
        };
        if z.kind != "dm_layout_g1_zone" {
            return Err(DiskSimError::invalid(
                pos,
                format!(
                    "`Zones` lists a `{}` block; expected `dm_layout_g1_zone`",
                    z.kind
                ),
            ));
        }
        check(z, ZONE)?;
        if skew_units(z)?.unwrap_or(skew_units_default.unwrap_or(true)) {
            // sectors
        } else {
            let p = get(z, "Skew units")?;
            return Err(DiskSimError::unsupported(
                p,
                "revolutions",
                "sectors",
                "skews are kept in whole sectors",
            ));
        }
        let first = int(z, "First cylinder number", 0, i64::from(u32::MAX))? as u32;
        let last = int(z, "Last cylinder number", 0, i64::from(u32::MAX))? as u32;
        let spt = int(z, "Blocks per track", 1, i64::from(u32::MAX))? as u32;
        // DiskSim truncates skews and the offset to whole sectors ((int)d * sector_width).
        let sect = |k: &str| -> Result<u32, DiskSimError> {
            let p = get(z, k)?;
            let v = num_of(p)?;
            if v < 0.0 {
                return Err(DiskSimError::bad(p, v, "a number of sectors >= 0"));
            }
            Ok((v.trunc() as u64 % spt as u64) as u32)
        };
        let mut zone = Zone::simple(
            first,
            last,
            spt,
            sect("Skew for track switch")?,
            sect("Skew for cylinder switch")?,
        );
        zone.first_offset = sect("Offset of first block")?;
        zone.dead_space = int(z, "Empty space at zone front", 0, i64::MAX)? as u64;
        zone.spares = int(z, "Number of spares", 0, i64::MAX)? as u64;
        let slips_p = get(z, "slips")?;
        zone.slips = int_list(slips_p)?;
        // A slip list names the sectors (or tracks) the drive skipped at format time: a set,
        // whose order means nothing. Extraction tools print them in the order they found them
        // (Atlas III's list has runs found by a later pass appended at its end); DiskSim's
        // mapping loops count each slip at or before the block as they meet it, which places
        // the blocks where the drive has them only when the list is ascending. So the list is
        // sorted here. A sector listed twice would be skipped twice, which no drive does.
        zone.slips.sort_unstable();
        if let Some(w) = zone.slips.windows(2).find(|w| w[0] == w[1]) {
            return Err(DiskSimError::bad(
                slips_p,
                format!("sector {} listed twice", w[0]),
                "each slipped sector once",
            ));
        }
        if scheme == 7 && zone.spares != 0 {
            return Err(DiskSimError::unsupported(
                get(z, "Number of spares")?,
                zone.spares,
                "0 with sparing scheme 7",
                "per-cylinder spares combined with slip-to-end are not implemented",
            ));
        }
        let defects_p = get(z, "defects")?;
        let defects = int_list(defects_p)?;
        if defects.len() % 2 != 0 {
            return Err(DiskSimError::bad(
                defects_p,
                format!("{} numbers", defects.len()),
                "pairs of (defective, replacement) sectors",
            ));
        }
        for pair in defects.chunks(2) {
            if pair[0] != pair[1] {
                return Err(DiskSimError::unsupported(
                    defects_p,
                    format!("{} -> {}", pair[0], pair[1]),
                    "defects remapped to themselves",
                    "remapping a sector to another track is not implemented",
                ));
            }
        }
        zones.push(zone);
    }
    let layout = Layout::new(surfaces, sparing, order, zones)
        .map_err(|e| DiskSimError::invalid(&zones_p.pos, e.0))?;
    // DiskSim replaces `Block count` by what the zones describe (layout_g1's checknumblocks);
    // the shipped models declare slightly fewer blocks than their zones hold. We expose the
    // declared count, which must fit in the layout.
    if count > layout.capacity() {
        return Err(DiskSimError::bad(
            count_p,
            count,
            format!(
                "at most the {} blocks the zones, spares and slips describe",
                layout.capacity()
            ),
        ));
    }
    let layout = layout.with_exposed_capacity(count);
    // Mechanics.
    let mech = block(m, "Mechanical Model", "dm_mech_g1")?;
    check(mech, MECH_G1)?;
    let (acc, acc_p) = word(mech, "Access time type")?;
    if acc != "trackSwitchPlusRotation" {
        return Err(DiskSimError::unsupported(
            acc_p,
            acc,
            "trackSwitchPlusRotation",
            "only the full mechanical access model is implemented",
        ));
    }
    let (st, st_p) = word(mech, "Seek type")?;
    let seek = match st {
        "extracted" => {
            let (curve, curve_p) = word(mech, "Full seek curve")?;
            let seek_path = curve_p
                .pos
                .file
                .parent()
                .unwrap_or(Path::new("."))
                .join(curve);
            read_seek_file(&seek_path, &curve_p.pos)?
        }
        "hpl" | "hplplus10" => hpl_seek(mech, st == "hplplus10")?,
        _ => {
            return Err(DiskSimError::unsupported(
                st_p,
                st,
                "extracted, hpl or hplplus10",
                "only measured seek tables and Ruemmler and Wilkes's equation are imported",
            ))
        }
    };
    let rpm_p = get(mech, "Rotation speed (in rpms)")?;
    let rpm = num_of(rpm_p)?;
    // A revolution longer than MAX_TIME_MS (or a speed no motor reaches) is no drive; it
    // would only overflow the rotational arithmetic.
    let (lo, hi) = (60_000.0 / MAX_TIME_MS, 1_000_000.0);
    if !(lo..=hi).contains(&rpm) {
        return Err(DiskSimError::bad(
            rpm_p,
            rpm,
            format!("a rotation speed from {lo} to {hi} rpm"),
        ));
    }
    Ok((
        layout,
        Mech {
            rpm,
            seek,
            head_switch: time_ms(mech, "Head switch time")?,
            settle: settle_ms(mech, "Add. write settling delay")?,
        },
    ))
}

/// The seek equation of Ruemmler and Wilkes ("An introduction to disk drive modeling", IEEE
/// Computer, March 1994), DiskSim's `hpl` seek type: `HPL seek equation values` are
/// `[boundary, a, b, c, e, single]`; a seek of d cylinders takes `a + b·sqrt(d)` below the
/// boundary (the arm accelerates and decelerates without coasting) and `c + e·d` from it on
/// (it coasts at full speed), and one cylinder takes `Single cylinder seek time` unless `single`
/// is -1. `hplplus10` (UM TR CSE-TR-194-94) gives the first ten distances explicitly in `First
/// ten seek times`, since short seeks are dominated by settling and follow no equation.
///
/// Seek distances are whole cylinders, so the curve is tabulated at every distance to just past
/// the boundary; beyond the table, the model's linear extrapolation continues the linear part.
fn hpl_seek(mech: &Block, first_ten: bool) -> Result<SeekCurve, DiskSimError> {
    let hp = get(mech, "HPL seek equation values")?;
    let v = num_list(hp)?;
    if v.len() != 6 {
        return Err(DiskSimError::bad(
            hp,
            format!("{} numbers", v.len()),
            "6 numbers: boundary, sqrt constant, sqrt factor, linear constant, linear factor, single-cylinder flag",
        ));
    }
    // The boundary is a distance in cylinders; past it the curve is linear, so the table
    // stops just after it. A million cylinders is beyond any drive and keeps the table small.
    const MAX_BOUNDARY: f64 = 1_000_000.0;
    if !(1.0..=MAX_BOUNDARY).contains(&v[0]) || v[1..5].iter().any(|x| x.abs() > MAX_TIME_MS) {
        return Err(DiskSimError::bad(
            hp,
            format!("{v:?}"),
            format!(
                "a boundary from 1 to {MAX_BOUNDARY} cylinders and times within {MAX_TIME_MS} ms"
            ),
        ));
    }
    let boundary = v[0] as u32;
    let ten = if first_ten {
        let p = get(mech, "First ten seek times")?;
        let t = num_list(p)?;
        if t.len() != 10 || t.iter().any(|x| !(0.0..=MAX_TIME_MS).contains(x)) {
            return Err(DiskSimError::bad(
                p,
                format!("{} numbers", t.len()),
                format!("10 times in milliseconds from 0 to {MAX_TIME_MS}"),
            ));
        }
        Some(t)
    } else {
        None
    };
    let single = if ten.is_none() && v[5] != -1.0 {
        Some(time_ms(mech, "Single cylinder seek time")?)
    } else {
        None
    };
    let last = boundary.saturating_add(1).max(12);
    let mut pts = Vec::with_capacity(last as usize);
    for d in 1..=last {
        let t = match (&ten, single) {
            (Some(t), _) if d <= 10 => t[d as usize - 1],
            (None, Some(s)) if d == 1 => s,
            _ if d < boundary => v[1] + v[2] * f64::from(d).sqrt(),
            _ => v[3] + v[4] * f64::from(d),
        };
        pts.push((d, t.max(0.0)));
    }
    Ok(SeekCurve::Table(pts))
}

/// A list of numbers `[ ... ]`.
fn num_list(p: &Param) -> Result<Vec<f64>, DiskSimError> {
    let Value::List(items) = &p.value else {
        return Err(DiskSimError::bad(
            p,
            describe(&p.value),
            "a list of numbers `[ ... ]`",
        ));
    };
    let mut out = Vec::with_capacity(items.len());
    for (v, pos) in items {
        match v {
            Value::Number(n) if n.is_finite() => out.push(*n),
            other => {
                return Err(DiskSimError::BadValue {
                    file: pos.file.clone().into(),
                    line: pos.line,
                    param: p.key.clone(),
                    value: describe(other),
                    expected: "numbers".into(),
                })
            }
        }
    }
    Ok(out)
}

/// `Some(true)` for sectors, `Some(false)` for revolutions, `None` if not given.
fn skew_units(b: &Block) -> Result<Option<bool>, DiskSimError> {
    match opt(b, "Skew units") {
        None => Ok(None),
        Some(p) => match &p.value {
            Value::Word(w) if w == "sectors" => Ok(Some(true)),
            Value::Word(w) if w == "revolutions" => Ok(Some(false)),
            other => Err(DiskSimError::bad(
                p,
                describe(other),
                "`sectors` or `revolutions`",
            )),
        },
    }
}

fn int_list(p: &Param) -> Result<Vec<u64>, DiskSimError> {
    let Value::List(items) = &p.value else {
        return Err(DiskSimError::bad(
            p,
            describe(&p.value),
            "a list of sector numbers `[ ... ]`",
        ));
    };
    let mut out = Vec::with_capacity(items.len());
    for (v, pos) in items {
        match v {
            Value::Number(n) if *n >= 0.0 && n.fract() == 0.0 => out.push(*n as u64),
            other => {
                return Err(DiskSimError::BadValue {
                    file: pos.file.clone().into(),
                    line: pos.line,
                    param: p.key.clone(),
                    value: describe(other),
                    expected: "non-negative integer sector numbers".into(),
                })
            }
        }
    }
    Ok(out)
}

/// Reads a `.seek` file: `Seek distances measured: N`, then N lines `distance, ms`.
pub fn read_seek_file(path: &Path, from: &Pos) -> Result<SeekCurve, DiskSimError> {
    let text = crate::read_text(path).map_err(|e| DiskSimError::Io {
        path: path.to_path_buf().into(),
        included_from: Some(from.to_string()),
        message: e.to_string(),
    })?;
    parse_seek(&text, path)
}

/// Parses the text of a `.seek` file; `path` names it in errors.
pub fn parse_seek(text: &str, path: &Path) -> Result<SeekCurve, DiskSimError> {
    let err = |line: usize, message: String| DiskSimError::Syntax {
        file: path.to_path_buf().into(),
        line,
        message,
    };
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (hl, header) = lines.next().ok_or_else(|| {
        err(
            1,
            "empty seek file; expected `Seek distances measured: N`".into(),
        )
    })?;
    let n: usize = header
        .trim()
        .strip_prefix("Seek distances measured:")
        .and_then(|r| r.trim().parse().ok())
        .ok_or_else(|| {
            err(
                hl + 1,
                format!(
                    "expected `Seek distances measured: N`, found `{}`",
                    header.trim()
                ),
            )
        })?;
    // Not `with_capacity(n)`: the count is the file's word, and `Seek distances measured:
    // 4294967295` asked for 64 GB before the first line was read (the mutation run's abort).
    // The points are counted against it at the end.
    let mut pts: Vec<(u32, f64)> = Vec::new();
    for (i, l) in lines {
        let mut it = l.split(',').map(str::trim);
        let (Some(a), Some(b), None) = (it.next(), it.next(), it.next()) else {
            return Err(err(
                i + 1,
                format!("expected `distance, milliseconds`, found `{}`", l.trim()),
            ));
        };
        let d: u32 = a.parse().map_err(|_| {
            err(
                i + 1,
                format!("seek distance `{a}` is not a whole number of cylinders"),
            )
        })?;
        let t: f64 = b
            .parse()
            .ok()
            .filter(|t: &f64| (0.0..=MAX_TIME_MS).contains(t))
            .ok_or_else(|| {
                err(
                    i + 1,
                    format!(
                        "seek time `{b}` is not a number of milliseconds from 0 to {MAX_TIME_MS}"
                    ),
                )
            })?;
        if d == 0 {
            return Err(err(i + 1, "seek distances start at 1 cylinder".into()));
        }
        if let Some(&(pd, _)) = pts.last() {
            if d <= pd {
                return Err(err(
                    i + 1,
                    format!("distance {d} does not exceed the previous one ({pd})"),
                ));
            }
        }
        pts.push((d, t));
    }
    if pts.len() != n {
        return Err(err(
            text.lines().count().max(1),
            format!(
                "the header announces {n} seek distances but the file has {}",
                pts.len()
            ),
        ));
    }
    if pts.is_empty() {
        return Err(err(hl + 1, "no seek distances".into()));
    }
    Ok(SeekCurve::Table(pts))
}
