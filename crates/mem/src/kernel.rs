//! Parsers for the Linux files the severity daemon reads, as pure functions over their text:
//! `/proc/meminfo`, `/proc/vmstat`, `/proc/pressure/memory` (PSI), `/proc/diskstats` and a
//! cgroup v1 `memory.stat`. No file is opened here; `antsched-memd` reads the files and hands
//! the text in, so every parser is tested on samples captured from a real machine
//! (`fixtures/linux-6.18/`).
//!
//! Every error names the file, the line (1-based) and what was expected there; a key the
//! estimators need and the file lacks is named too. Lines the parsers do not understand are
//! errors, not skipped: a format that changed under us should be noticed, not half-read.

use std::collections::BTreeMap;

/// Which file a text came from, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Meminfo,
    Vmstat,
    Pressure,
    Diskstats,
    MemcgStat,
    MemoryMax,
    LruGen,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Source::Meminfo => "/proc/meminfo",
            Source::Vmstat => "/proc/vmstat",
            Source::Pressure => "/proc/pressure/memory",
            Source::Diskstats => "/proc/diskstats",
            Source::MemcgStat => "memory.stat",
            Source::MemoryMax => "memory.max",
            Source::LruGen => "/sys/kernel/debug/lru_gen",
        })
    }
}

/// A line that does not parse, or a key that is missing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("{file} line {line}: {why}: {text:?}")]
    Line {
        file: Source,
        /// 1-based.
        line: usize,
        text: String,
        why: String,
    },
    #[error("{file}: no {key} line (the kernel may be too old, or this is not the file)")]
    Missing { file: Source, key: &'static str },
}

fn line_error(source: Source, line: usize, text: &str, why: impl Into<String>) -> ParseError {
    ParseError::Line {
        file: source,
        line: line + 1,
        text: text.chars().take(200).collect(),
        why: why.into(),
    }
}

/// The numbered lines that are not blank.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
}

/// `/proc/meminfo`: `Key:   value [kB]` per line. Values given in kB are kept in bytes; the
/// few that are counts (`HugePages_Total`) are kept as they are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemInfo {
    values: BTreeMap<String, u64>,
}

impl MemInfo {
    /// A value in bytes (or the count, for the keys without a unit).
    pub fn get(&self, key: &str) -> Option<u64> {
        self.values.get(key).copied()
    }

    fn require(&self, key: &'static str) -> Result<u64, ParseError> {
        self.get(key).ok_or(ParseError::Missing {
            file: Source::Meminfo,
            key,
        })
    }

    /// `MemTotal`, bytes.
    pub fn total_bytes(&self) -> Result<u64, ParseError> {
        self.require("MemTotal")
    }

    /// `MemFree`, bytes: the machine domain's free memory. Not `MemAvailable`: the thesis
    /// ramps S *before* the file cache is cut into.
    pub fn free_bytes(&self) -> Result<u64, ParseError> {
        self.require("MemFree")
    }

    /// `SwapTotal`, bytes; 0 when absent (a kernel built without swap).
    pub fn swap_total_bytes(&self) -> u64 {
        self.get("SwapTotal").unwrap_or(0)
    }

    /// `SwapFree`, bytes; 0 when absent.
    pub fn swap_free_bytes(&self) -> u64 {
        self.get("SwapFree").unwrap_or(0)
    }
}

pub fn parse_meminfo(text: &str) -> Result<MemInfo, ParseError> {
    let s = Source::Meminfo;
    let mut values = BTreeMap::new();
    for (i, line) in lines(text) {
        let (key, rest) = line
            .split_once(':')
            .ok_or_else(|| line_error(s, i, line, "expected `Key: value`"))?;
        let mut words = rest.split_whitespace();
        let number = words
            .next()
            .ok_or_else(|| line_error(s, i, line, "no value after the colon"))?;
        let n: u64 = number
            .parse()
            .map_err(|_| line_error(s, i, line, "the value is not a whole number"))?;
        let v = match (words.next(), words.next()) {
            (None, _) => n,
            (Some("kB"), None) => n
                .checked_mul(1024)
                .ok_or_else(|| line_error(s, i, line, "the value overflows 64 bits in bytes"))?,
            _ => return Err(line_error(s, i, line, "expected the unit `kB` or none")),
        };
        values.insert(key.trim().to_string(), v);
    }
    Ok(MemInfo { values })
}

/// A file of `name value` lines: `/proc/vmstat` and a cgroup's `memory.stat`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    source: Option<Source>,
    values: BTreeMap<String, u64>,
}

impl Counters {
    pub fn get(&self, key: &str) -> Option<u64> {
        self.values.get(key).copied()
    }

    /// The value of `key`, or an error that names it.
    pub fn require(&self, key: &'static str) -> Result<u64, ParseError> {
        self.get(key).ok_or(ParseError::Missing {
            file: self.source.unwrap_or(Source::Vmstat),
            key,
        })
    }

    /// The sum of the keys that are present, `None` when none is.
    pub fn sum_present(&self, keys: &[&str]) -> Option<u64> {
        keys.iter()
            .filter_map(|k| self.get(k))
            .fold(None, |acc, v| Some(acc.unwrap_or(0u64).saturating_add(v)))
    }
}

fn parse_counters(text: &str, s: Source) -> Result<Counters, ParseError> {
    let mut values = BTreeMap::new();
    for (i, line) in lines(text) {
        let mut words = line.split_whitespace();
        let (Some(key), Some(value), None) = (words.next(), words.next(), words.next()) else {
            return Err(line_error(s, i, line, "expected `name value`"));
        };
        // A cgroup's limits print as a signed 64-bit number close to i64::MAX; every value
        // here is non-negative.
        let v: u64 = value
            .parse()
            .map_err(|_| line_error(s, i, line, "the value is not a whole number"))?;
        values.insert(key.to_string(), v);
    }
    Ok(Counters {
        source: Some(s),
        values,
    })
}

/// `/proc/vmstat`: page counts and cumulative event counters, in pages.
pub fn parse_vmstat(text: &str) -> Result<Counters, ParseError> {
    parse_counters(text, Source::Vmstat)
}

/// A cgroup v1 `memory.stat`: this group's counters and the `total_` ones of its subtree, in
/// bytes (sizes) and pages (`pgpgin`, `pgpgout`, faults).
pub fn parse_memcg_v1_stat(text: &str) -> Result<Counters, ParseError> {
    parse_counters(text, Source::MemcgStat)
}

/// A cgroup v2 `memory.stat`: the group's subtree's counters, sizes in bytes (`anon`,
/// `file`, `inactive_file`, ...) and events in pages (`pgsteal`, `workingset_refault_file`).
pub fn parse_memcg_v2_stat(text: &str) -> Result<Counters, ParseError> {
    parse_counters(text, Source::MemcgStat)
}

/// A cgroup v2 `memory.max` (or `memory.high`): bytes, or None for `max` (no limit).
pub fn parse_memory_max(text: &str) -> Result<Option<u64>, ParseError> {
    let t = text.trim();
    if t == "max" {
        return Ok(None);
    }
    t.parse().map(Some).map_err(|_| {
        line_error(
            Source::MemoryMax,
            0,
            t,
            "expected a number of bytes or `max`",
        )
    })
}

/// One line of a PSI file: the share of wall time in which some (or all) non-idle tasks were
/// stalled on memory, averaged over 10, 60 and 300 s (percent), and the total stall (us).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PsiLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    pub total_us: u64,
}

/// `/proc/pressure/memory` or a cgroup2 group's `memory.pressure`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pressure {
    pub some: PsiLine,
    /// Absent in `/proc/pressure/cpu` before Linux 5.13; always there for memory.
    pub full: Option<PsiLine>,
}

pub fn parse_pressure(text: &str) -> Result<Pressure, ParseError> {
    let s = Source::Pressure;
    let mut some = None;
    let mut full = None;
    for (i, line) in lines(text) {
        let mut words = line.split_whitespace();
        let kind = words.next().unwrap_or_default();
        let mut psi = PsiLine::default();
        let mut seen = [false; 4];
        for word in words {
            let (k, v) = word.split_once('=').ok_or_else(|| {
                line_error(s, i, line, format!("expected key=value, got {word:?}"))
            })?;
            let bad = |what: &str| line_error(s, i, line, format!("{k}: {what}"));
            match k {
                "avg10" | "avg60" | "avg300" => {
                    let x: f64 = v.parse().map_err(|_| bad("not a number"))?;
                    if !(0.0..=100.0).contains(&x) {
                        return Err(bad("not a percentage"));
                    }
                    let (slot, seen_at) = match k {
                        "avg10" => (&mut psi.avg10, 0),
                        "avg60" => (&mut psi.avg60, 1),
                        _ => (&mut psi.avg300, 2),
                    };
                    *slot = x;
                    seen[seen_at] = true;
                }
                "total" => {
                    psi.total_us = v.parse().map_err(|_| bad("not a whole number"))?;
                    seen[3] = true;
                }
                _ => return Err(bad("unknown key (expected avg10, avg60, avg300, total)")),
            }
        }
        if seen.contains(&false) {
            return Err(line_error(
                s,
                i,
                line,
                "expected avg10, avg60, avg300 and total",
            ));
        }
        match kind {
            "some" => some = Some(psi),
            "full" => full = Some(psi),
            _ => return Err(line_error(s, i, line, "expected a `some` or `full` line")),
        }
    }
    Ok(Pressure {
        some: some.ok_or(ParseError::Missing {
            file: s,
            key: "some",
        })?,
        full,
    })
}

/// One device's line of `/proc/diskstats` (Documentation/admin-guide/iostats.rst): cumulative
/// since boot. Counts are of completed requests; times are in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskStats {
    pub major: u32,
    pub minor: u32,
    pub name: String,
    /// Field 1: reads completed.
    pub reads: u64,
    /// Field 5: writes completed.
    pub writes: u64,
    /// Field 12 (Linux 4.18+): discards completed; 0 on older kernels.
    pub discards: u64,
    /// Field 9: requests in flight now (not cumulative).
    pub in_flight: u64,
    /// Field 10: milliseconds during which the device had at least one request in flight.
    pub io_ms: u64,
    /// Field 11: the sum over requests of their time in flight, milliseconds (the integral of
    /// the queue length over time).
    pub weighted_ms: u64,
}

impl DiskStats {
    /// The requests whose time `io_ms` counts, as iostat counts them for its service time.
    pub fn completed(&self) -> u64 {
        self.reads
            .saturating_add(self.writes)
            .saturating_add(self.discards)
    }
}

/// Every device's line. A line with fewer than the 14 fields of Linux 2.6 is an error.
pub fn parse_diskstats(text: &str) -> Result<Vec<DiskStats>, ParseError> {
    let s = Source::Diskstats;
    let mut out = Vec::new();
    for (i, line) in lines(text) {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() < 14 {
            return Err(line_error(
                s,
                i,
                line,
                format!(
                    "expected major, minor, name and at least 11 counters, got {} fields",
                    w.len()
                ),
            ));
        }
        let num = |k: usize| -> Result<u64, ParseError> {
            w[k].parse().map_err(|_| {
                line_error(s, i, line, format!("field {} is not a whole number", k + 1))
            })
        };
        let small = |k: usize| -> Result<u32, ParseError> {
            w[k].parse().map_err(|_| {
                line_error(
                    s,
                    i,
                    line,
                    format!("field {} is not a device number", k + 1),
                )
            })
        };
        // Parse every counter, used or not, so that a corrupt line is noticed.
        for k in 3..w.len() {
            num(k)?;
        }
        out.push(DiskStats {
            major: small(0)?,
            minor: small(1)?,
            name: w[2].to_string(),
            reads: num(3)?,
            writes: num(7)?,
            in_flight: num(11)?,
            io_ms: num(12)?,
            weighted_ms: num(13)?,
            discards: if w.len() >= 18 { num(14)? } else { 0 },
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str = include_str!("../fixtures/linux-6.18/meminfo");
    const VMSTAT: &str = include_str!("../fixtures/linux-6.18/vmstat.0");
    const PRESSURE: &str = include_str!("../fixtures/linux-6.18/pressure-memory");
    const PRESSURE_CPU: &str = include_str!("../fixtures/linux-6.18/pressure-cpu");
    const DISKSTATS: &str = include_str!("../fixtures/linux-6.18/diskstats.0");
    const MEMCG: &str = include_str!("../fixtures/linux-6.18/memcg-v1-memory.stat");

    #[test]
    fn meminfo_of_a_real_machine() {
        let m = parse_meminfo(MEMINFO).unwrap();
        assert_eq!(m.total_bytes().unwrap(), 24_684_084 * 1024);
        assert_eq!(m.free_bytes().unwrap(), 20_896_680 * 1024);
        assert_eq!(m.swap_total_bytes(), 0);
        // A count, not kB.
        assert_eq!(m.get("HugePages_Total"), Some(0));
        assert!(m.free_bytes().unwrap() <= m.total_bytes().unwrap());
    }

    #[test]
    fn meminfo_errors_name_the_line() {
        let e = parse_meminfo("MemTotal: 10 kB\nMemFree 20 kB\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/proc/meminfo line 2: expected `Key: value`: \"MemFree 20 kB\""
        );
        let e = parse_meminfo("MemTotal: 10 MB\n").unwrap_err();
        assert!(
            e.to_string().contains("line 1: expected the unit `kB`"),
            "{e}"
        );
        let e = parse_meminfo("MemTotal: x kB\n").unwrap_err();
        assert!(e.to_string().contains("not a whole number"), "{e}");
        let m = parse_meminfo("MemTotal: 10 kB\n").unwrap();
        assert_eq!(
            m.free_bytes().unwrap_err().to_string(),
            "/proc/meminfo: no MemFree line (the kernel may be too old, or this is not the file)"
        );
    }

    #[test]
    fn vmstat_of_a_real_machine() {
        let v = parse_vmstat(VMSTAT).unwrap();
        assert_eq!(v.get("nr_inactive_file"), Some(401_882));
        assert_eq!(v.get("nr_active_file"), Some(389_659));
        // The platform's DAMON pageout counts in none of the pgsteal counters.
        assert_eq!(v.get("pgsteal_file"), Some(0));
        assert_eq!(v.get("workingset_refault_file"), Some(3_202_488));
        assert_eq!(v.sum_present(&["pgsteal_anon", "pgsteal_file"]), Some(0));
        assert_eq!(v.sum_present(&["no_such", "also_not"]), None);
        assert!(v
            .require("nr_bogus")
            .unwrap_err()
            .to_string()
            .starts_with("/proc/vmstat: no nr_bogus line"));
        let e = parse_vmstat("nr_free_pages 12\nnr_zone -3\n").unwrap_err();
        assert!(e.to_string().starts_with("/proc/vmstat line 2:"), "{e}");
        let e = parse_vmstat("nr_free_pages 12 13\n").unwrap_err();
        assert!(e.to_string().contains("expected `name value`"), "{e}");
    }

    #[test]
    fn memcg_v1_stat_of_a_real_machine() {
        let m = parse_memcg_v1_stat(MEMCG).unwrap();
        assert_eq!(m.get("total_inactive_file"), Some(1_646_112_768));
        assert_eq!(m.get("workingset_refault_file"), Some(1815));
        assert_eq!(
            m.get("hierarchical_memory_limit"),
            Some(9_223_372_036_854_771_712)
        );
        let e = parse_memcg_v1_stat("cache 1\nrss\n").unwrap_err();
        assert!(e.to_string().starts_with("memory.stat line 2:"), "{e}");
    }

    #[test]
    fn pressure_of_a_real_machine() {
        let p = parse_pressure(PRESSURE).unwrap();
        assert_eq!(p.some.avg10, 0.0);
        assert!(p.full.is_some());
        let c = parse_pressure(PRESSURE_CPU).unwrap();
        assert!(c.some.total_us > 0, "{c:?}");
        let p = parse_pressure(
            "some avg10=1.50 avg60=0.25 avg300=0.05 total=123456\n\
             full avg10=0.75 avg60=0.00 avg300=0.00 total=4000\n",
        )
        .unwrap();
        assert_eq!(p.some.avg10, 1.5);
        assert_eq!(p.full.unwrap().total_us, 4000);
        // An older cpu file has no full line.
        let p = parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n").unwrap();
        assert_eq!(p.full, None);
    }

    #[test]
    fn pressure_errors_name_the_line() {
        let e = parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=x\n")
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/proc/pressure/memory line 2: avg10: not a number"),
            "{e}"
        );
        let e = parse_pressure("some avg10=0.00 avg60=0.00 total=0\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("expected avg10, avg60, avg300 and total"),
            "{e}"
        );
        let e = parse_pressure("most avg10=0.00 avg60=0.00 avg300=0.00 total=0\n").unwrap_err();
        assert!(e.to_string().contains("`some` or `full`"), "{e}");
        let e = parse_pressure("some avg10=150 avg60=0.00 avg300=0.00 total=0\n").unwrap_err();
        assert!(e.to_string().contains("not a percentage"), "{e}");
        let e = parse_pressure("").unwrap_err();
        assert!(matches!(e, ParseError::Missing { key: "some", .. }));
    }

    #[test]
    fn diskstats_of_a_real_machine() {
        let d = parse_diskstats(DISKSTATS).unwrap();
        assert_eq!(d.len(), 10);
        let vda = d.iter().find(|x| x.name == "vda").unwrap();
        assert_eq!((vda.major, vda.minor), (254, 0));
        assert_eq!(vda.reads, 840_450);
        assert_eq!(vda.writes, 71_180);
        assert_eq!(vda.in_flight, 0);
        assert_eq!(vda.io_ms, 54_972);
        assert_eq!(vda.weighted_ms, 1_702_765);
        assert_eq!(vda.discards, 105_538);
        assert_eq!(vda.completed(), 840_450 + 71_180 + 105_538);
        // A line of Linux 2.6 (14 fields) has no discards.
        let old = parse_diskstats("   8 0 sda 10 0 80 5 20 0 160 9 1 12 14\n").unwrap();
        assert_eq!((old[0].discards, old[0].completed()), (0, 30));
    }

    #[test]
    fn diskstats_errors_name_the_line() {
        let e = parse_diskstats("   8 0 sda 10 0 80 5 20 0 160 9 1 12\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/proc/diskstats line 1: expected major, minor"),
            "{e}"
        );
        let e = parse_diskstats(
            "8 0 sda 10 0 80 5 20 0 160 9 1 12 14\n8 1 sda1 1 0 8 x 0 0 0 0 0 0 0\n",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/proc/diskstats line 2: field 7 is not a whole number"),
            "{e}"
        );
    }
}
