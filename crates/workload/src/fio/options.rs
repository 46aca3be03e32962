//! The option table: every option antsched accepts, its aliases, the kind of value it takes
//! and the rules that value must follow, plus the fio options it knowingly rejects.
//!
//! One table drives parsing, the "did you mean" suggestions and [`Job::line_of`]'s alias
//! lookup, so adding an option is one row here and one field in
//! [`Job`](super::Job) (resolved in `job.rs`).
//!
//! [`Job::line_of`]: super::Job::line_of

use super::error::ErrorKind;
use super::job::{FileServiceType, FileTarget, IoEngine, ThinkTimeDist};
use super::value::{self, DefaultUnit, RwSpec};

/// What an option's value is and which values are valid.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// Free text (`name`, `description`, `cgroup`).
    Text,
    /// A path; `/dev/...` is a device.
    Filename,
    /// Bytes. `nonzero`: 0 is invalid. `sector`: must be a multiple of 512.
    Size { nonzero: bool, sector: bool },
    /// A duration; `None`: a unit is required. At most `max` nanoseconds.
    Time {
        default: Option<DefaultUnit>,
        nonzero: bool,
        max: u64,
    },
    /// A whole number in `min..=max`.
    Count { min: u64, max: u64 },
    /// fio's `bool`: 0 or 1, a value is required.
    Bool,
    /// fio's "no argument" option: valueless means 1, or 0/1.
    Flag,
    /// `rw`.
    Rw,
    /// `ioengine`.
    Engine,
    /// `file_service_type`.
    FileService,
    /// `antsched_thinktime_dist`.
    ThinkDist,
}

/// One row of the table.
#[derive(Debug)]
pub(crate) struct OptionSpec {
    /// Canonical name, the key [`Job::line_of`](super::Job::line_of) files lines under.
    pub name: &'static str,
    /// Other names fio accepts for it.
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    /// A valid line, shown when the value is missing.
    pub example: &'static str,
}

/// The longest `thinktime`, `antsched_issue_delay` or `antsched_writeback_interval`: an hour
/// (issue 17, item 11: `thinktime=1000000000s` ran for 15 billion virtual seconds).
pub const MAX_PAUSE_NS: u64 = 3_600_000_000_000;

const fn size(nonzero: bool, sector: bool) -> Kind {
    Kind::Size { nonzero, sector }
}

const fn count(min: u64, max: u64) -> Kind {
    Kind::Count { min, max }
}

const fn opt(name: &'static str, kind: Kind, example: &'static str) -> OptionSpec {
    OptionSpec {
        name,
        aliases: &[],
        kind,
        example,
    }
}

/// Every option antsched accepts. fio's own first, then antsched's (prefix `antsched_`).
pub(crate) static OPTIONS: &[OptionSpec] = &[
    opt("name", Kind::Text, "name=reader"),
    opt(
        "description",
        Kind::Text,
        "description=two sequential readers",
    ),
    OptionSpec {
        name: "rw",
        aliases: &["readwrite"],
        kind: Kind::Rw,
        example: "rw=read",
    },
    OptionSpec {
        name: "bs",
        aliases: &["blocksize"],
        kind: size(true, true),
        example: "bs=64k",
    },
    opt("size", size(false, false), "size=1g"),
    opt("offset", size(false, true), "offset=0"),
    opt("filename", Kind::Filename, "filename=/dev/sdb"),
    opt("numjobs", count(1, 65_536), "numjobs=2"),
    opt(
        "thinktime",
        Kind::Time {
            default: Some(DefaultUnit::Microseconds),
            nonzero: false,
            max: MAX_PAUSE_NS,
        },
        "thinktime=2ms",
    ),
    opt("thinktime_blocks", count(1, u64::MAX), "thinktime_blocks=1"),
    opt("ioengine", Kind::Engine, "ioengine=psync"),
    opt("iodepth", count(1, 65_536), "iodepth=8"),
    opt("direct", Kind::Bool, "direct=1"),
    opt("rwmixread", count(0, 100), "rwmixread=70"),
    opt(
        "runtime",
        Kind::Time {
            default: Some(DefaultUnit::Seconds),
            nonzero: false,
            max: u64::MAX,
        },
        "runtime=30",
    ),
    opt("time_based", Kind::Flag, "time_based"),
    opt("exitall", Kind::Flag, "exitall"),
    OptionSpec {
        name: "io_size",
        aliases: &["io_limit"],
        kind: size(false, false),
        example: "io_size=1g",
    },
    opt("number_ios", count(0, u64::MAX), "number_ios=10000"),
    opt("randseed", count(0, u64::MAX), "randseed=42"),
    opt("cgroup", Kind::Text, "cgroup=slow"),
    // fio's documented range ("allowed values are in the range of 100..1000", the cgroup v1
    // blkio.weight range).
    opt("cgroup_weight", count(100, 1000), "cgroup_weight=200"),
    opt("nrfiles", count(1, u32::MAX as u64), "nrfiles=100"),
    opt("filesize", size(true, false), "filesize=64k"),
    opt(
        "file_service_type",
        Kind::FileService,
        "file_service_type=sequential",
    ),
    // antsched's own options.
    opt(
        "antsched_disk_offset",
        size(false, true),
        "antsched_disk_offset=10g",
    ),
    opt("antsched_extent", size(true, true), "antsched_extent=32m"),
    opt(
        "antsched_extent_gap",
        size(false, true),
        "antsched_extent_gap=1m",
    ),
    opt(
        "antsched_thinktime_dist",
        Kind::ThinkDist,
        "antsched_thinktime_dist=uniform",
    ),
    opt(
        "antsched_adversary",
        count(0, u32::MAX as u64),
        "antsched_adversary=3",
    ),
    opt(
        "antsched_issue_delay",
        Kind::Time {
            default: None,
            nonzero: false,
            max: MAX_PAUSE_NS,
        },
        "antsched_issue_delay=50us",
    ),
    opt("antsched_split", size(true, true), "antsched_split=128k"),
    opt("antsched_split_flag", Kind::Bool, "antsched_split_flag=0"),
    opt(
        "antsched_readahead",
        size(false, true),
        "antsched_readahead=128k",
    ),
    opt(
        "antsched_context_per_file",
        Kind::Bool,
        "antsched_context_per_file=1",
    ),
    opt(
        "antsched_dir_files",
        count(1, u32::MAX as u64),
        "antsched_dir_files=16",
    ),
    opt(
        "antsched_dirty_limit",
        size(true, false),
        "antsched_dirty_limit=64m",
    ),
    opt(
        "antsched_writeback_interval",
        Kind::Time {
            default: None,
            nonzero: true,
            max: MAX_PAUSE_NS,
        },
        "antsched_writeback_interval=100ms",
    ),
];

/// Real fio options outside the subset, with what to do instead where there is something.
/// Not exhaustive: any other name is reported as unknown, with a suggestion if one is close.
static FIO_ONLY: &[(&str, &str)] = &[
    ("blocksize_range", "give one `bs=`"),
    ("bsrange", "give one `bs=`"),
    ("bssplit", "give one `bs=`"),
    ("blockalign", "offsets are aligned to `bs`"),
    ("ba", "offsets are aligned to `bs`"),
    ("bs_unaligned", "give one `bs=`"),
    ("buffered", "write `direct=0` (buffered) or `direct=1`"),
    (
        "rwmixwrite",
        "write `rwmixread=` (100 minus the write percentage)",
    ),
    ("rw_sequencer", "antsched uses fio's default, `sequential`"),
    ("kb_base", "antsched always uses fio's default, 1024"),
    ("unit_base", ""),
    (
        "loops",
        "use `io_size=` (a multiple of `size`) or `runtime=` with `time_based`",
    ),
    ("startdelay", ""),
    ("ramp_time", ""),
    ("directory", "put the directory in `filename=`"),
    ("filename_format", "use `filename=` or leave it out"),
    ("unique_filename", ""),
    ("opendir", ""),
    ("lockfile", ""),
    ("openfiles", ""),
    ("fallocate", ""),
    ("fadvise_hint", ""),
    ("randrepeat", "use `randseed=`"),
    ("allrandrepeat", "use `randseed=`"),
    ("random_generator", ""),
    ("random_distribution", "random offsets are uniform"),
    ("percentage_random", ""),
    ("norandommap", ""),
    ("softrandommap", ""),
    ("offset_increment", "give each job its own `offset=`"),
    ("offset_align", ""),
    ("fsync", ""),
    ("fdatasync", ""),
    ("end_fsync", ""),
    ("fsync_on_close", ""),
    ("sync", ""),
    ("overwrite", ""),
    ("invalidate", ""),
    ("pre_read", ""),
    ("iodepth_batch", ""),
    ("iodepth_batch_submit", ""),
    ("iodepth_batch_complete", ""),
    ("iodepth_batch_complete_min", ""),
    ("iodepth_batch_complete_max", ""),
    ("iodepth_low", ""),
    ("io_submit_mode", ""),
    (
        "thinktime_spin",
        "use `antsched_issue_delay=` for CPU time before each request",
    ),
    ("thinktime_iotime", "use `thinktime_blocks=`"),
    ("thinktime_blocks_type", ""),
    ("rate", "use `thinktime=` to pace a job"),
    ("rate_iops", "use `thinktime=` to pace a job"),
    ("rate_min", ""),
    ("rate_iops_min", ""),
    ("rate_process", ""),
    ("latency_target", ""),
    ("max_latency", ""),
    (
        "thread",
        "each job is a context whether fio forks or spawns threads",
    ),
    (
        "group_reporting",
        "antsched reports per context and per run",
    ),
    ("new_group", ""),
    ("stonewall", "jobs run concurrently"),
    ("wait_for_previous", "jobs run concurrently"),
    ("wait_for", "jobs run concurrently"),
    ("nice", ""),
    ("prio", "use `cgroup=` and `cgroup_weight=` for shares"),
    ("prioclass", "use `cgroup=` and `cgroup_weight=` for shares"),
    ("cpus_allowed", ""),
    ("cpumask", ""),
    ("cgroup_nodelete", ""),
    ("flow", "use `cgroup=` and `cgroup_weight=` for shares"),
    ("flow_id", ""),
    ("verify", ""),
    ("do_verify", ""),
    ("zero_buffers", ""),
    ("refill_buffers", ""),
    ("scramble_buffers", ""),
    ("buffer_compress_percentage", ""),
    ("dedupe_percentage", ""),
    ("iomem", ""),
    ("mem", ""),
    ("write_bw_log", ""),
    ("write_lat_log", ""),
    ("write_iops_log", ""),
    ("log_avg_msec", ""),
    ("gtod_reduce", ""),
    ("clocksource", ""),
    ("disable_lat", ""),
    ("disable_clat", ""),
    ("disable_slat", ""),
    ("zonemode", ""),
    ("zonesize", ""),
    ("zonerange", ""),
    ("zoneskip", ""),
    ("fill_device", ""),
    ("file_append", ""),
    ("create_on_open", ""),
    ("create_only", ""),
    ("unlink", ""),
    (
        "ioscheduler",
        "choose schedulers with `antsched --scheduler`",
    ),
    ("exec_prerun", ""),
    ("exec_postrun", ""),
    ("hugepage-size", ""),
    ("lockmem", ""),
    ("uid", ""),
    ("gid", ""),
];

/// The row for `key`, or an error that says what `key` is and what to write instead.
pub(crate) fn lookup(key: &str) -> Result<&'static OptionSpec, ErrorKind> {
    if let Some(spec) = find(key) {
        return Ok(spec);
    }
    if let Some((_, hint)) = FIO_ONLY.iter().find(|(name, _)| *name == key) {
        let hint = if hint.is_empty() {
            "; docs/workloads.md lists the supported subset".to_owned()
        } else {
            format!("; {hint}")
        };
        return Err(ErrorKind::UnsupportedOption {
            option: key.to_owned(),
            hint,
        });
    }
    let hint = match closest(key) {
        Some(name) => format!("; did you mean `{name}`?"),
        None if key.starts_with("antsched_") => {
            format!("; antsched's options are {}", antsched_names())
        }
        None => "; docs/workloads.md lists the supported options".to_owned(),
    };
    Err(ErrorKind::UnknownOption {
        option: key.to_owned(),
        hint,
    })
}

/// The row whose name or alias is `key`.
pub(crate) fn find(key: &str) -> Option<&'static OptionSpec> {
    OPTIONS
        .iter()
        .find(|spec| spec.name == key || spec.aliases.contains(&key))
}

fn antsched_names() -> String {
    let names: Vec<String> = OPTIONS
        .iter()
        .filter(|spec| spec.name.starts_with("antsched_"))
        .map(|spec| format!("`{}`", spec.name))
        .collect();
    names.join(", ")
}

/// The supported name nearest to `key` by edit distance, if it is near enough to be a typo
/// (fio's own rule of thumb: at most half the length, here also at most 3 edits).
fn closest(key: &str) -> Option<&'static str> {
    let names = OPTIONS
        .iter()
        .flat_map(|spec| std::iter::once(spec.name).chain(spec.aliases.iter().copied()));
    let lower = key.to_ascii_lowercase();
    let (best, distance) = names
        .map(|name| (name, edit_distance(&lower, name)))
        .min_by_key(|&(_, d)| d)?;
    let limit = (key.chars().count().div_ceil(2)).min(3);
    (distance <= limit).then_some(best)
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// A parsed value. The variant follows from the option's [`Kind`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Text(String),
    Target(FileTarget),
    Bytes(u64),
    Nanos(u64),
    Count(u64),
    Bool(bool),
    Rw(RwSpec),
    Engine(IoEngine),
    FileService(FileServiceType, u64),
    ThinkDist(ThinkTimeDist),
}

/// Parses `value` (as written, trimmed, comments removed) for `spec`.
pub(crate) fn parse_value(spec: &OptionSpec, value: Option<&str>) -> Result<Value, ErrorKind> {
    let missing = || ErrorKind::MissingValue {
        option: spec.name.to_owned(),
        example: spec.example.to_owned(),
    };
    let text = match (value, spec.kind) {
        (None, Kind::Flag) => return Ok(Value::Bool(true)),
        (None, _) => return Err(missing()),
        (Some(""), _) => return Err(missing()),
        (Some(text), _) => text,
    };
    let invalid = |reason: String| ErrorKind::InvalidValue {
        option: spec.name.to_owned(),
        value: text.to_owned(),
        reason,
    };
    let parsed = match spec.kind {
        Kind::Text => {
            if text.contains("${") {
                Err("environment variables (`${VAR}`) are not expanded; write the text".to_owned())
            } else {
                Ok(Value::Text(text.to_owned()))
            }
        }
        Kind::Filename => parse_filename(text).map(Value::Target),
        Kind::Size { nonzero, sector } => value::parse_size(text).and_then(|bytes| {
            if nonzero && bytes == 0 {
                Err(format!("must be greater than 0, as in `{}`", spec.example))
            } else if sector {
                value::check_sector_multiple(bytes).map(|()| Value::Bytes(bytes))
            } else {
                Ok(Value::Bytes(bytes))
            }
        }),
        Kind::Time {
            default,
            nonzero,
            max,
        } => value::parse_time(text, default).and_then(|ns| {
            if nonzero && ns == 0 {
                Err(format!("must be greater than 0, as in `{}`", spec.example))
            } else if ns > max {
                Err(format!(
                    "must be at most {}h: a longer pause or interval only leaves the disk idle, \
                     and a run of them passes the simulator's limit of 2^64 ns",
                    max / 3_600_000_000_000
                ))
            } else {
                Ok(Value::Nanos(ns))
            }
        }),
        Kind::Count { min, max } => value::parse_count(text, min, max).map(Value::Count),
        Kind::Bool | Kind::Flag => value::parse_bool(text).map(Value::Bool),
        Kind::Rw => value::parse_rw(text).map(Value::Rw),
        Kind::Engine => value::parse_engine(text).map(Value::Engine),
        Kind::FileService => {
            value::parse_file_service(text).map(|(kind, ios)| Value::FileService(kind, ios))
        }
        Kind::ThinkDist => value::parse_think_dist(text).map(Value::ThinkDist),
    };
    parsed.map_err(invalid)
}

/// `filename`: one path. fio separates several files with `:` and escapes a literal colon as
/// `\:`; antsched takes one file per job (use `nrfiles` for more).
fn parse_filename(text: &str) -> Result<FileTarget, String> {
    if text.contains("${")
        || text.contains("$jobnum")
        || text.contains("$filenum")
        || text.contains("$jobname")
    {
        return Err("variables are not expanded; write the path".into());
    }
    let mut path = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.as_str().starts_with(':') => {
                path.push(':');
                chars.next();
            }
            ':' => {
                return Err(
                    "one file per job: fio's `a:b` list of files is not supported; give \
                            each file its own job, or use `nrfiles=` (write `\\:` for a colon \
                            in a path)"
                        .into(),
                )
            }
            _ => path.push(c),
        }
    }
    if path == "-" {
        return Err("`-` (standard input or output) has no place on the disk; give a path".into());
    }
    Ok(if path.starts_with("/dev/") {
        FileTarget::Device(path)
    } else {
        FileTarget::File(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut all: Vec<&str> = OPTIONS
            .iter()
            .flat_map(|spec| std::iter::once(spec.name).chain(spec.aliases.iter().copied()))
            .collect();
        let before = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), before);
        for (name, _) in FIO_ONLY {
            assert!(
                find(name).is_none(),
                "{name} is both supported and fio-only"
            );
        }
    }

    #[test]
    fn every_example_parses() {
        for spec in OPTIONS {
            let (key, value) = match spec.example.split_once('=') {
                Some((key, value)) => (key, Some(value)),
                None => (spec.example, None),
            };
            assert_eq!(key, spec.name);
            assert!(parse_value(spec, value).is_ok(), "{}", spec.example);
        }
    }

    #[test]
    fn lookup_explains_unknown_and_unsupported() {
        assert_eq!(lookup("readwrite").map(|s| s.name), Ok("rw"));
        assert_eq!(lookup("blocksize").map(|s| s.name), Ok("bs"));
        assert_eq!(lookup("io_limit").map(|s| s.name), Ok("io_size"));
        match lookup("thinktme") {
            Err(ErrorKind::UnknownOption { hint, .. }) => {
                assert!(hint.contains("`thinktime`"), "{hint}")
            }
            other => panic!("{other:?}"),
        }
        match lookup("BS") {
            Err(ErrorKind::UnknownOption { hint, .. }) => assert!(hint.contains("`bs`"), "{hint}"),
            other => panic!("{other:?}"),
        }
        match lookup("antsched_frobnicate") {
            Err(ErrorKind::UnknownOption { hint, .. }) => {
                assert!(hint.contains("antsched_split"), "{hint}")
            }
            other => panic!("{other:?}"),
        }
        match lookup("buffered") {
            Err(ErrorKind::UnsupportedOption { hint, .. }) => {
                assert!(hint.contains("direct=0"), "{hint}")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            lookup("zzzzzzzzzz"),
            Err(ErrorKind::UnknownOption { .. })
        ));
    }

    #[test]
    fn valueless_only_for_flags() {
        let time_based = find("time_based").unwrap();
        assert_eq!(parse_value(time_based, None), Ok(Value::Bool(true)));
        assert_eq!(parse_value(time_based, Some("0")), Ok(Value::Bool(false)));
        let direct = find("direct").unwrap();
        assert!(matches!(
            parse_value(direct, None),
            Err(ErrorKind::MissingValue { .. })
        ));
        let bs = find("bs").unwrap();
        assert!(matches!(
            parse_value(bs, Some("")),
            Err(ErrorKind::MissingValue { .. })
        ));
    }

    #[test]
    fn filenames() {
        assert_eq!(
            parse_filename("/dev/sdb"),
            Ok(FileTarget::Device("/dev/sdb".into()))
        );
        assert_eq!(
            parse_filename("data/a.bin"),
            Ok(FileTarget::File("data/a.bin".into()))
        );
        assert_eq!(parse_filename("a\\:b"), Ok(FileTarget::File("a:b".into())));
        assert!(parse_filename("/dev/sda:/dev/sdb")
            .unwrap_err()
            .contains("one file per job"));
        assert!(parse_filename("-").is_err());
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("bs", "bs"), 0);
    }
}
