//! Values: sizes, times, counts, booleans and the enumerated options, parsed the way fio parses
//! them (checked against fio's HOWTO and its option parser), but strictly: where fio silently
//! accepts something odd (`4kx`, `1.5s` read as `1s`, an unknown time unit read as
//! microseconds) this module says what is wrong instead.
//!
//! Every function returns the reason as a `String` that says what would be valid; the option
//! table wraps it with the option name and the value as written.
//!
//! ## Sizes
//! A whole number of bytes with an optional suffix, case-insensitive. fio's default
//! `kb_base=1024` makes the plain suffixes binary, so `4k` = `4kb` = 4096 and `1m` = 1 MiB.
//! fio then reads the IEC forms the *other* way round "to provide compatibility with old
//! scripts": with the default `kb_base`, `4kib` means 4000 and `1gib` means 10^9. antsched
//! follows fio so one file means the same in all three worlds. The bare `ki`/`mi`/... forms are
//! rejected: fio's documentation reads them as powers of 1000 and its parser as powers of 1024.
//! `0x` hexadecimal is accepted without a suffix. Percentages (`size=20%`), ranges (`1k-4k`),
//! per-direction lists (`4k,8k`) and arithmetic (`(1+2)`) are outside the subset.
//!
//! ## Times
//! A whole number with an optional unit, case-insensitive: `ns`/`nsec`, `us`/`usec`,
//! `ms`/`msec`, `s`/`sec`, `m`/`min` (minutes, never milli), `h`, `d`. Without a unit the
//! option's default applies: seconds for `runtime`, microseconds for `thinktime` (fio's
//! defaults). antsched's own time options have no default unit and require one. Results are in
//! nanoseconds (`u64`, so up to about 584 years).

use super::job::{FileServiceType, IoEngine, RwPattern, ThinkTimeDist};

/// Bytes in a sector, the unit the simulator addresses the disk in.
pub(crate) const SECTOR: u64 = 512;

/// The unit a time option assumes when none is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DefaultUnit {
    Microseconds,
    Seconds,
}

/// Rejects forms fio accepts in every numeric option but antsched does not evaluate.
fn reject_expressions(text: &str) -> Result<(), String> {
    if text.starts_with('(') {
        return Err("arithmetic expressions are not supported; write the number".into());
    }
    if text.contains('$') {
        return Err(
            "environment variables (`${VAR}`) and keywords such as `$mb_memory` are \
                    not expanded; write the number"
                .into(),
        );
    }
    Ok(())
}

/// Splits `text` into its leading decimal digits and the rest, rejecting signs, decimals, and
/// text that does not start with a digit.
fn split_number<'a>(text: &'a str, example: &str) -> Result<(u64, &'a str), String> {
    if text.is_empty() {
        return Err(format!(
            "empty value; expected a number such as `{example}`"
        ));
    }
    if text.starts_with('-') {
        return Err(format!(
            "must not be negative; expected a number such as `{example}`"
        ));
    }
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if digits_end == 0 {
        return Err(format!("expected a whole number such as `{example}`"));
    }
    let (digits, rest) = text.split_at(digits_end);
    if rest.starts_with('.') {
        return Err(format!(
            "must be a whole number (no decimals); use a smaller unit instead, as in `{example}`"
        ));
    }
    let number = digits
        .parse::<u64>()
        .map_err(|_| "too large: the number does not fit in 64 bits".to_owned())?;
    Ok((number, rest))
}

/// Parses `0x...` if `text` is hexadecimal.
fn parse_hex(text: &str) -> Option<Result<u64, String>> {
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))?;
    Some(u64::from_str_radix(hex, 16).map_err(|_| {
        format!("`{text}` is not a hexadecimal number that fits in 64 bits (hex takes no suffix)")
    }))
}

/// A size in bytes; see the module docs for the accepted forms.
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    parse_scaled(text, "size", "64k")
}

/// A whole number with an optional size suffix: a size (`what` = "size") or a count; errors
/// give `example` of the kind of value expected.
fn parse_scaled(text: &str, what: &str, example: &str) -> Result<u64, String> {
    reject_expressions(text)?;
    if text.ends_with('%') {
        return Err(format!(
            "percentages of the file or device are not supported (antsched does not \
             know the size when it reads the file); give a {what} such as `{example}`"
        ));
    }
    if text.contains(',') {
        return Err("give one value: fio's separate `read,write` values are not supported".into());
    }
    if text.chars().skip(1).any(|c| matches!(c, '-' | ':')) {
        return Err(format!(
            "ranges are not supported; give one {what} such as `{example}`"
        ));
    }
    if let Some(hex) = parse_hex(text) {
        return hex;
    }
    let (number, suffix) = split_number(text, example)?;
    let multiplier = size_multiplier(suffix)?;
    number
        .checked_mul(multiplier)
        .ok_or_else(|| "too large: more than 2^64 - 1 bytes (16 EiB)".to_owned())
}

/// The multiplier a size suffix stands for (fio's default `kb_base=1024`).
fn size_multiplier(suffix: &str) -> Result<u64, String> {
    let lower = suffix.to_ascii_lowercase();
    let mut chars = lower.chars();
    let Some(prefix) = chars.next() else {
        return Ok(1);
    };
    let tail = chars.as_str();
    let power = match prefix {
        'b' if tail.is_empty() => return Ok(1),
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        'p' => 5,
        _ => return Err(unknown_size_suffix(suffix)),
    };
    match tail {
        // fio's kb_base=1024: the plain and `b` forms are powers of 1024 ...
        "" | "b" => Ok(1024u64.pow(power)),
        // ... and the IEC forms powers of 1000, for compatibility with old fio scripts.
        "ib" => Ok(1000u64.pow(power)),
        "i" => Err(format!(
            "`{suffix}` is ambiguous in fio (its documentation reads it as a power of 1000, its \
             parser as a power of 1024); write `{prefix}` for a power of 1024 (`4{prefix}`), or \
             the number of bytes"
        )),
        _ => Err(unknown_size_suffix(suffix)),
    }
}

fn unknown_size_suffix(suffix: &str) -> String {
    format!(
        "unknown size suffix `{suffix}`; valid: none (bytes), `b`, and `k`, `m`, `g`, `t`, `p` \
         (powers of 1024, optionally followed by `b`; case does not matter), as in `64k` or `1g`"
    )
}

/// A time in nanoseconds. `default` is the unit of a bare number, or `None` if a unit is
/// required.
pub(crate) fn parse_time(text: &str, default: Option<DefaultUnit>) -> Result<u64, String> {
    reject_expressions(text)?;
    if text.chars().skip(1).any(|c| matches!(c, '-' | ':' | ',')) {
        return Err("ranges and lists are not supported; give one time such as `10ms`".into());
    }
    let (number, unit) = split_number(text, "10ms")?;
    let per_unit: u64 = match unit.to_ascii_lowercase().as_str() {
        // Zero is zero in any unit, so `antsched_issue_delay=0` needs none.
        "" if number == 0 => return Ok(0),
        "" => match default {
            Some(DefaultUnit::Microseconds) => 1_000,
            Some(DefaultUnit::Seconds) => 1_000_000_000,
            None => {
                return Err(format!(
                    "needs a unit: `{number}ns`, `{number}us`, `{number}ms` or `{number}s` \
                     (also `m`, `h`, `d`)"
                ))
            }
        },
        "ns" | "nsec" => 1,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60 * 1_000_000_000,
        "h" => 3_600 * 1_000_000_000,
        "d" => 86_400 * 1_000_000_000,
        _ => {
            return Err(format!(
                "unknown time unit `{unit}`; valid: `ns`, `us`/`usec`, `ms`/`msec`, `s`/`sec`, \
                 `m`/`min` (minutes), `h`, `d`, as in `500us` or `10s`"
            ))
        }
    };
    number
        .checked_mul(per_unit)
        .ok_or_else(|| "too long: more than 2^64 - 1 nanoseconds (about 584 years)".to_owned())
}

/// A count (`numjobs`, `iodepth`, `number_ios`, ...) in `min..=max`. Like fio, the size
/// suffixes are accepted (`number_ios=10k` is 10240).
pub(crate) fn parse_count(text: &str, min: u64, max: u64) -> Result<u64, String> {
    let value = parse_scaled(text, "count", "8")?;
    if value < min || value > max {
        return Err(if max == u64::MAX {
            format!("must be at least {min}")
        } else {
            format!("must be between {min} and {max}")
        });
    }
    Ok(value)
}

/// A plain decimal count with no suffix (fio reads the `:N` of `rw=randread:N` and
/// `file_service_type=random:N` with `atoi`).
pub(crate) fn parse_plain_count(text: &str, min: u64) -> Result<u64, String> {
    let (number, rest) = split_number(text, "8")?;
    if !rest.is_empty() {
        return Err(format!("`{text}` must be a plain whole number such as `8`"));
    }
    if number < min {
        return Err(format!("must be at least {min}"));
    }
    Ok(number)
}

/// fio's `bool`: `0` or `1`.
pub(crate) fn parse_bool(text: &str) -> Result<bool, String> {
    match text {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err("must be 0 or 1".into()),
    }
}

/// Checks `bytes` is a whole number of sectors, so requests stay sector-aligned on the disk.
pub(crate) fn check_sector_multiple(bytes: u64) -> Result<(), String> {
    if bytes % SECTOR == 0 {
        Ok(())
    } else {
        // The nearest multiples below and above, leaving out a suggestion of 0 (never a
        // valid size) and one past 2^64 (which would wrap to a small number).
        let below = Some(bytes / SECTOR * SECTOR).filter(|&b| b > 0);
        let above = (bytes / SECTOR + 1).checked_mul(SECTOR);
        let e_g = match (below, above) {
            (Some(b), Some(a)) => format!("e.g. {b} or {a}"),
            (Some(v), None) => format!("e.g. {v}"),
            // Below one sector: the next multiple is 512, which always fits.
            (None, a) => format!("e.g. {}", a.unwrap_or(SECTOR)),
        };
        Err(format!("must be a multiple of 512 bytes (a sector), {e_g}"))
    }
}

/// Looks `text` up in `table` (exact, case-sensitive, as fio does). `fio_only` lists values fio
/// accepts but antsched does not, so the message can say so.
fn parse_enum<T: Copy>(text: &str, table: &[(&str, T)], fio_only: &[&str]) -> Result<T, String> {
    if let Some(&(_, value)) = table.iter().find(|(name, _)| *name == text) {
        return Ok(value);
    }
    let valid: Vec<String> = table.iter().map(|(name, _)| format!("`{name}`")).collect();
    let valid = valid.join(", ");
    if fio_only.contains(&text) {
        Err(format!(
            "fio accepts `{text}` but antsched does not support it; valid: {valid}"
        ))
    } else {
        Err(format!("valid values: {valid}"))
    }
}

/// `rw=PATTERN[:N]` after parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RwSpec {
    pub pattern: RwPattern,
    /// Sequential patterns: bytes skipped after each I/O.
    pub skip: u64,
    /// Random patterns: I/Os per random offset.
    pub ios_per_offset: u64,
}

const RW_PATTERNS: &[(&str, RwPattern)] = &[
    ("read", RwPattern::Read),
    ("write", RwPattern::Write),
    ("randread", RwPattern::RandRead),
    ("randwrite", RwPattern::RandWrite),
    ("rw", RwPattern::ReadWrite),
    ("readwrite", RwPattern::ReadWrite),
    ("randrw", RwPattern::RandReadWrite),
];

const RW_FIO_ONLY: &[&str] = &[
    "trim",
    "randtrim",
    "trimwrite",
    "randtrimwrite",
    "filecreate",
    "filestat",
    "filedelete",
];

/// `rw`: a pattern with fio's optional `:N` offset modifier. For a sequential pattern `N` is a
/// size added to the offset after every I/O (`rw=read:64k` with `bs=64k` reads every other
/// block); for a random pattern it is the number of I/Os per random offset, the ones after the
/// first continuing sequentially (fio's default `rw_sequencer=sequential`).
pub(crate) fn parse_rw(text: &str) -> Result<RwSpec, String> {
    let (name, modifier) = match text.split_once(':') {
        Some((name, modifier)) => (name, Some(modifier)),
        None => (text, None),
    };
    let pattern = parse_enum(name, RW_PATTERNS, RW_FIO_ONLY)?;
    let mut spec = RwSpec {
        pattern,
        skip: 0,
        ios_per_offset: 1,
    };
    let Some(modifier) = modifier else {
        return Ok(spec);
    };
    if pattern.is_random() {
        spec.ios_per_offset = parse_plain_count(modifier, 1).map_err(|reason| {
            format!(
                "for a random pattern `:N` is the number of I/Os per random offset, a whole \
                 number of at least 1 (as in `{name}:8`): {reason}"
            )
        })?;
    } else {
        let skip = parse_size(modifier)
            .and_then(|skip| check_sector_multiple(skip).map(|()| skip))
            .map_err(|reason| {
                format!(
                    "for a sequential pattern `:N` is the size skipped after each I/O (as in \
                     `{name}:64k`): {reason}"
                )
            })?;
        spec.skip = skip;
    }
    Ok(spec)
}

const ENGINES: &[(&str, IoEngine)] = &[
    ("psync", IoEngine::Psync),
    ("sync", IoEngine::Sync),
    ("pvsync", IoEngine::Pvsync),
    ("pvsync2", IoEngine::Pvsync2),
    ("mmap", IoEngine::Mmap),
    ("libaio", IoEngine::Libaio),
    ("io_uring", IoEngine::IoUring),
];

const ENGINES_FIO_ONLY: &[&str] = &[
    "vsync",
    "posixaio",
    "splice",
    "sg",
    "null",
    "net",
    "netsplice",
    "cpuio",
    "rdma",
    "falloc",
    "ftruncate",
    "e4defrag",
    "rados",
    "rbd",
    "http",
    "gfapi",
    "gfapi_async",
    "libhdfs",
    "mtd",
    "dev-dax",
    "external",
    "filecreate",
    "filestat",
    "filedelete",
    "libpmem",
    "io_uring_cmd",
    "xnvme",
    "libblkio",
    "windowsaio",
    "solarisaio",
    "exec",
    "nbd",
    "libzbc",
    "dfs",
    "nfs",
];

pub(crate) fn parse_engine(text: &str) -> Result<IoEngine, String> {
    parse_enum(text, ENGINES, ENGINES_FIO_ONLY)
}

const FILE_SERVICE: &[(&str, FileServiceType)] = &[
    ("roundrobin", FileServiceType::RoundRobin),
    ("sequential", FileServiceType::Sequential),
    ("random", FileServiceType::Random),
];

/// `file_service_type=TYPE[:N]`: `N` I/Os before switching to another file (default 1).
/// `sequential` finishes a file before the next, so it takes no `N`.
pub(crate) fn parse_file_service(text: &str) -> Result<(FileServiceType, u64), String> {
    let (name, modifier) = match text.split_once(':') {
        Some((name, modifier)) => (name, Some(modifier)),
        None => (text, None),
    };
    let kind = parse_enum(name, FILE_SERVICE, &["zipf", "pareto", "normal", "gauss"])?;
    let Some(modifier) = modifier else {
        return Ok((kind, 1));
    };
    if kind == FileServiceType::Sequential {
        return Err(
            "`sequential` moves to the next file when one is finished, so it takes no \
                    `:N`; use `roundrobin:N` or `random:N` to switch every N I/Os"
                .into(),
        );
    }
    let ios = parse_plain_count(modifier, 1)
        .map_err(|reason| format!("`:N` is the number of I/Os before switching files: {reason}"))?;
    Ok((kind, ios))
}

pub(crate) fn parse_think_dist(text: &str) -> Result<ThinkTimeDist, String> {
    parse_enum(
        text,
        &[
            ("constant", ThinkTimeDist::Constant),
            ("uniform", ThinkTimeDist::Uniform),
        ],
        &[],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sector_multiple_suggestions_are_never_zero_nor_wrapped() {
        let e = check_sector_multiple(u64::MAX).unwrap_err();
        assert!(e.ends_with("e.g. 18446744073709551104"), "{e}");
        let e = check_sector_multiple(3).unwrap_err();
        assert!(e.ends_with("e.g. 512"), "{e}");
        let e = check_sector_multiple(1000).unwrap_err();
        assert!(e.ends_with("e.g. 512 or 1024"), "{e}");
    }

    #[test]
    fn sizes_follow_fio_default_kb_base() {
        for (text, bytes) in [
            ("4096", 4096),
            ("4096b", 4096),
            ("4096B", 4096),
            ("4k", 4096),
            ("4K", 4096),
            ("4kb", 4096),
            ("4KB", 4096),
            ("4kB", 4096),
            ("1m", 1 << 20),
            ("1024k", 1 << 20),
            ("1g", 1 << 30),
            ("1t", 1 << 40),
            ("1048576m", 1 << 40),
            ("1p", 1 << 50),
            // fio's kb_base=1024 reads the IEC forms as powers of 1000 (HOWTO: "1 MB: 1000000,
            // 1mi, 1000ki"; "1 TB: ... 1ti").
            ("4kib", 4000),
            ("1MiB", 1_000_000),
            ("1gib", 1_000_000_000),
            ("1tib", 1_000_000_000_000),
            ("0x1000", 4096),
            ("0", 0),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
    }

    #[test]
    fn bad_sizes_say_why() {
        for (text, needle) in [
            ("", "empty"),
            ("k", "whole number"),
            ("-4k", "negative"),
            ("1.5m", "whole number"),
            ("4q", "unknown size suffix `q`"),
            ("4kx", "unknown size suffix `kx`"),
            ("4ki", "ambiguous"),
            ("20%", "percentages"),
            ("4k,8k", "one value"),
            ("1k-4k", "ranges"),
            ("1k:4k", "ranges"),
            ("(1+2)", "arithmetic"),
            ("${SIZE}", "environment"),
            ("0xZZ", "hexadecimal"),
            ("99999999999999999999", "64 bits"),
            ("16777216t", "too large"),
        ] {
            let err = parse_size(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn times_in_nanoseconds() {
        let us = Some(DefaultUnit::Microseconds);
        let s = Some(DefaultUnit::Seconds);
        for (text, default, ns) in [
            ("10", us, 10_000),
            ("10", s, 10_000_000_000),
            ("250ns", us, 250),
            ("250nsec", us, 250),
            ("3us", s, 3_000),
            ("3usec", s, 3_000),
            ("3US", s, 3_000),
            ("7ms", s, 7_000_000),
            ("7msec", s, 7_000_000),
            ("2s", us, 2_000_000_000),
            ("2sec", us, 2_000_000_000),
            ("2m", us, 120_000_000_000),
            ("2min", us, 120_000_000_000),
            ("1h", us, 3_600_000_000_000),
            ("1d", us, 86_400_000_000_000),
            ("0", None, 0),
        ] {
            assert_eq!(parse_time(text, default), Ok(ns), "{text}");
        }
    }

    #[test]
    fn bad_times_say_why() {
        for (text, default, needle) in [
            ("10", None, "needs a unit"),
            ("10x", Some(DefaultUnit::Seconds), "unknown time unit `x`"),
            ("1.5s", Some(DefaultUnit::Seconds), "whole number"),
            ("1-2s", Some(DefaultUnit::Seconds), "ranges"),
            ("-1", Some(DefaultUnit::Seconds), "negative"),
            ("999999999999d", Some(DefaultUnit::Seconds), "too long"),
        ] {
            let err = parse_time(text, default).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn counts_and_bools() {
        assert_eq!(parse_count("4", 1, 100), Ok(4));
        assert_eq!(parse_count("1k", 1, u64::MAX), Ok(1024));
        assert!(parse_count("0", 1, 100)
            .unwrap_err()
            .contains("between 1 and 100"));
        assert!(parse_count("101", 0, 100)
            .unwrap_err()
            .contains("between 0 and 100"));
        // A count's errors speak of counts, not of sizes.
        for bad in ["-1", "abc", "1:2"] {
            let e = parse_count(bad, 1, 100).unwrap_err();
            assert!(e.contains("such as `8`") && !e.contains("64k"), "{e}");
        }
        assert_eq!(parse_bool("1"), Ok(true));
        assert_eq!(parse_bool("0"), Ok(false));
        assert!(parse_bool("yes").is_err());
        assert_eq!(parse_plain_count("8", 1), Ok(8));
        assert!(parse_plain_count("8k", 1).is_err());
        assert!(parse_plain_count("0", 1).is_err());
    }

    #[test]
    fn rw_modifier_means_skip_for_sequential_and_run_length_for_random() {
        let alt = parse_rw("read:64k").unwrap();
        assert_eq!(
            (alt.pattern, alt.skip, alt.ios_per_offset),
            (RwPattern::Read, 65536, 1)
        );
        let runs = parse_rw("randread:8").unwrap();
        assert_eq!(
            (runs.pattern, runs.skip, runs.ios_per_offset),
            (RwPattern::RandRead, 0, 8)
        );
        assert_eq!(parse_rw("readwrite").unwrap().pattern, RwPattern::ReadWrite);
        assert_eq!(parse_rw("rw").unwrap().pattern, RwPattern::ReadWrite);
        assert!(parse_rw("randread:8k")
            .unwrap_err()
            .contains("number of I/Os"));
        assert!(parse_rw("read:1000")
            .unwrap_err()
            .contains("multiple of 512"));
        assert!(parse_rw("trim").unwrap_err().contains("fio accepts `trim`"));
        let err = parse_rw("sequential").unwrap_err();
        assert!(
            err.contains("`randread`") && err.contains("`randrw`"),
            "{err}"
        );
    }

    #[test]
    fn enums_list_valid_values() {
        assert_eq!(parse_engine("io_uring"), Ok(IoEngine::IoUring));
        let err = parse_engine("posixaio").unwrap_err();
        assert!(
            err.contains("fio accepts") && err.contains("`libaio`"),
            "{err}"
        );
        assert_eq!(
            parse_file_service("random:4"),
            Ok((FileServiceType::Random, 4))
        );
        assert_eq!(
            parse_file_service("sequential"),
            Ok((FileServiceType::Sequential, 1))
        );
        assert!(parse_file_service("sequential:2").is_err());
        assert!(parse_file_service("zipf:1.2")
            .unwrap_err()
            .contains("fio accepts"));
        assert_eq!(parse_think_dist("uniform"), Ok(ThinkTimeDist::Uniform));
        assert!(parse_think_dist("normal")
            .unwrap_err()
            .contains("`constant`, `uniform`"));
    }
}
