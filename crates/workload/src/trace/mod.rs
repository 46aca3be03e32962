//! Block-level I/O traces: the formats people already have, read as they are replayed.
//!
//! Each format is a line parser in a file of its own, sans-IO: it is handed one line at a time
//! and pushes the records the line completes. [`TraceReader`] feeds it from any [`BufRead`],
//! so a trace of any length is read as the replay consumes it, never whole into memory. The
//! format is detected from the first lines ([`detect`]) unless the user names one
//! ([`Format::from_name`]).
//!
//! Every record is one request as the trace saw it: when it was issued, by which process if the
//! trace says, read or write, where and how much, and when it completed where the format has
//! completion times. The formats and their units are documented in `docs/traces.md`.

use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use antsched_core::{Nanos, Op};

mod background;
mod blkparse;
mod disksim;
mod fiolog;
mod msr;
mod pair;
mod perf;
mod spc;
pub mod timing;

pub use background::Background;

/// One request of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Issue time, in the trace's clock (ns; only differences matter).
    pub time: Nanos,
    /// The issuing process, where the trace names one.
    pub pid: Option<u32>,
    /// The device (or stream) the trace says the request went to: perf's and blkparse's
    /// `major << 20 | minor`, MSR's disk number, SPC's ASU, DiskSim's devno, 0 for fio.
    /// Where the trace has no process ids, the replay's contexts are inferred from it.
    pub device: u32,
    pub op: Op,
    /// Whether the issuer waits for it: reads, and writes the trace marks synchronous (`S`
    /// in the rwbs flags of perf and blkparse; every write of a fio log, since fio waits for
    /// its own I/O). Anticipation is driven by synchronous requests only.
    pub sync: bool,
    /// First sector (512 bytes).
    pub sector: u64,
    pub bytes: u64,
    /// Completion time, in the trace's clock, where the format records one.
    pub completed: Option<Nanos>,
    /// The line of the trace the request came from (its issue line), for errors.
    pub line: u64,
}

impl Record {
    /// Who issued it, for the replay's contexts: the process where the trace names one, else
    /// the device or stream (see each format's inference in `docs/traces.md`).
    pub fn stream(&self) -> u64 {
        match self.pid {
            Some(p) => u64::from(p),
            None => (1 << 32) | u64::from(self.device),
        }
    }
}

/// The trace formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `perf script` output of `block:block_rq_issue` and `block:block_rq_complete`.
    Perf,
    /// `blkparse`'s default text output.
    Blkparse,
    /// SNIA's MSR Cambridge CSV.
    Msr,
    /// The SPC / UMass trace repository's CSV.
    Spc,
    /// fio's `write_iolog` output, version 2 or 3.
    FioLog,
    /// DiskSim's ASCII input.
    DiskSim,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Perf,
        Format::Blkparse,
        Format::Msr,
        Format::Spc,
        Format::FioLog,
        Format::DiskSim,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Perf => "perf",
            Format::Blkparse => "blkparse",
            Format::Msr => "msr",
            Format::Spc => "spc",
            Format::FioLog => "fio",
            Format::DiskSim => "disksim",
        }
    }

    pub fn from_name(name: &str) -> Result<Format, TraceError> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| TraceError::UnknownFormat {
                name: name.to_string(),
            })
    }

    /// Whether records of this format carry completion times (so the closed-loop replay
    /// takes think times from the trace rather than from the simulated service).
    pub fn has_completions(self) -> bool {
        matches!(self, Format::Perf | Format::Blkparse | Format::Msr)
    }

    /// The name of the replay's context for record `r`'s process: `pid 4242`, `asu 1`, or
    /// `fio` (a fio log has one stream).
    pub fn stream_name(self, r: &Record) -> String {
        match r.pid {
            Some(pid) => format!("{} {pid}", self.stream_label()),
            None if self == Format::FioLog => "fio".to_string(),
            None => format!("{} {}", self.stream_label(), r.device),
        }
    }

    /// What the replay calls one of its contexts: the process where the format names it,
    /// else the stream it is inferred from.
    pub fn stream_label(self) -> &'static str {
        match self {
            Format::Perf | Format::Blkparse => "pid",
            Format::Msr => "disk",
            Format::Spc => "asu",
            Format::FioLog => "fio",
            Format::DiskSim => "devno",
        }
    }

    fn parser(self) -> Box<dyn LineParser> {
        match self {
            Format::Perf => Box::new(perf::Perf::default()),
            Format::Blkparse => Box::new(blkparse::Blkparse::default()),
            Format::Msr => Box::new(msr::Msr),
            Format::Spc => Box::new(spc::Spc),
            Format::FioLog => Box::new(fiolog::FioLog::default()),
            Format::DiskSim => Box::new(disksim::DiskSim),
        }
    }
}

/// Why a trace could not be read. Every variant names the file, and a malformed line its
/// number and what was expected there.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{file}:{line}: {format} trace: expected {expected}")]
    Malformed {
        file: String,
        line: u64,
        format: &'static str,
        expected: String,
    },
    #[error("{file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error(
        "{file}: cannot tell the trace's format from its first lines; give --format (one of {})",
        format_names()
    )]
    Undetected { file: String },
    #[error("unknown trace format {name:?}: give one of {}", format_names())]
    UnknownFormat { name: String },
    #[error("{file}:{line}: a line longer than {max} bytes; is this a trace?")]
    LineTooLong { file: String, line: u64, max: usize },
    #[error(
        "{file}:{line}: the request at sector {sector} ({bytes} bytes) ends beyond the disk's \
         {capacity} sectors; give --lba-scale to map the trace's sectors onto this disk"
    )]
    BeyondDisk {
        file: String,
        line: u64,
        sector: u64,
        bytes: u64,
        capacity: u64,
    },
}

fn format_names() -> String {
    Format::ALL.map(Format::name).join(", ")
}

/// What a format's parser does with one line: push the records it completes, or say what it
/// expected. Sans-IO: the reader owns the input.
trait LineParser: Send {
    /// `line` is the text without its line ending; `number` its 1-based line number.
    fn line(&mut self, line: &str, number: u64, out: &mut VecDeque<Record>) -> Result<(), String>;
    /// The input ended: push what is still held back (requests waiting for completions).
    fn finish(&mut self, _out: &mut VecDeque<Record>) {}
}

/// Opens the trace at `path` for reading as it is replayed, in `format` or the one its first
/// lines show. With it, a function that tells how far through the file the reader is (0 to 1),
/// for progress.
#[allow(clippy::type_complexity)]
pub fn open_file(
    path: &std::path::Path,
    format: Option<Format>,
) -> Result<(TraceReader<impl BufRead>, impl Fn() -> f64), TraceError> {
    let name = path.display().to_string();
    let io = |source| TraceError::Io {
        file: name.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let read = Arc::new(AtomicU64::new(0));
    let counting = Counting {
        inner: file,
        read: read.clone(),
    };
    let reader = TraceReader::open(
        std::io::BufReader::with_capacity(1 << 16, counting),
        &name,
        format,
    )?;
    Ok((reader, move || {
        read.load(Ordering::Relaxed) as f64 / len.max(1) as f64
    }))
}

/// A reader that counts the bytes read through it.
struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: std::io::Read> std::io::Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// The longest line a trace may have. A garbage file without line endings would otherwise be
/// read whole into memory as one line.
pub const MAX_LINE: usize = 64 * 1024;

/// How many lines [`TraceReader::open`] looks at to detect the format.
const DETECT_LINES: usize = 16;

/// Reads the records of a trace from `input` as they are asked for.
pub struct TraceReader<R> {
    input: R,
    file: String,
    format: Format,
    parser: Box<dyn LineParser>,
    /// Lines read to detect the format and not yet parsed: (number, text).
    peeked: VecDeque<(u64, String)>,
    out: VecDeque<Record>,
    line: u64,
    buf: Vec<u8>,
    done: bool,
}

impl<R: BufRead> TraceReader<R> {
    /// A reader of `input` (named `file` in errors) in `format`, or in the format its first
    /// lines show.
    pub fn open(mut input: R, file: &str, format: Option<Format>) -> Result<Self, TraceError> {
        let mut peeked = VecDeque::new();
        let mut buf = Vec::new();
        let mut line = 0;
        let format = match format {
            Some(f) => f,
            None => {
                while peeked.len() < DETECT_LINES {
                    if !read_line(&mut input, &mut buf, file, line + 1)? {
                        break;
                    }
                    line += 1;
                    peeked.push_back((line, String::from_utf8_lossy(&buf).into_owned()));
                }
                detect(peeked.iter().map(|(_, l)| l.as_str())).ok_or_else(|| {
                    TraceError::Undetected {
                        file: file.to_string(),
                    }
                })?
            }
        };
        Ok(Self {
            input,
            file: file.to_string(),
            format,
            parser: format.parser(),
            peeked,
            out: VecDeque::new(),
            line,
            buf,
            done: false,
        })
    }

    pub fn format(&self) -> Format {
        self.format
    }

    fn fill(&mut self) -> Result<(), TraceError> {
        while self.out.is_empty() && !self.done {
            let peeked;
            let (number, text) = match self.peeked.pop_front() {
                Some((n, l)) => {
                    peeked = l;
                    (n, std::borrow::Cow::Borrowed(peeked.as_str()))
                }
                None => {
                    if !read_line(&mut self.input, &mut self.buf, &self.file, self.line + 1)? {
                        self.done = true;
                        self.parser.finish(&mut self.out);
                        break;
                    }
                    self.line += 1;
                    // Borrowed as it is when it is UTF-8, as a trace's lines are: no copy
                    // (and `from_utf8` checks it faster than the lossy conversion would).
                    let text = match std::str::from_utf8(&self.buf) {
                        Ok(t) => std::borrow::Cow::Borrowed(t),
                        Err(_) => String::from_utf8_lossy(&self.buf),
                    };
                    (self.line, text)
                }
            };
            self.parser
                .line(&text, number, &mut self.out)
                .map_err(|expected| TraceError::Malformed {
                    file: self.file.clone(),
                    line: number,
                    format: self.format.name(),
                    expected,
                })?;
        }
        Ok(())
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Err(e) = self.fill() {
            // An error ends the trace: what follows a malformed line is not trusted.
            self.done = true;
            self.out.clear();
            return Some(Err(e));
        }
        self.out.pop_front().map(Ok)
    }
}

/// Reads one line of at most [`MAX_LINE`] bytes into `buf`, without its ending; false at the
/// end. The caller reads it with `from_utf8_lossy`: bytes that are not UTF-8 become U+FFFD,
/// so garbage fails to parse rather than to read.
fn read_line<R: BufRead>(
    input: &mut R,
    buf: &mut Vec<u8>,
    file: &str,
    number: u64,
) -> Result<bool, TraceError> {
    buf.clear();
    let io = |source| TraceError::Io {
        file: file.to_string(),
        source,
    };
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        };
        if chunk.is_empty() {
            if buf.is_empty() {
                return Ok(false);
            }
            break;
        }
        let (take, ends) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        buf.extend_from_slice(&chunk[..take]);
        input.consume(take);
        if buf.len() > MAX_LINE + 2 {
            return Err(TraceError::LineTooLong {
                file: file.to_string(),
                line: number,
                max: MAX_LINE,
            });
        }
        if ends {
            break;
        }
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    Ok(true)
}

/// The format the first lines of a trace are in, if any format's parser takes them. Blank
/// lines and comments (`#`) say nothing.
pub fn detect<'l>(lines: impl IntoIterator<Item = &'l str>) -> Option<Format> {
    let lines: Vec<&str> = lines
        .into_iter()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let first = lines.first()?;
    if first.starts_with("fio version 2 iolog") || first.starts_with("fio version 3 iolog") {
        return Some(Format::FioLog);
    }
    if lines.iter().any(|l| l.contains("block:block_rq_")) {
        return Some(Format::Perf);
    }
    // The other formats: the one whose parser takes every line looked at (the last may be
    // cut short by the peek, so it is left out when there are others). Order matters only
    // between formats that could take the same lines, and none do: MSR has 7 fields and a
    // named type, SPC 5 or more with r/w, DiskSim whitespace-separated numbers, blkparse a
    // device `major,minor` first.
    let look = if lines.len() > 1 {
        &lines[..lines.len() - 1]
    } else {
        &lines[..]
    };
    [Format::Msr, Format::Spc, Format::DiskSim, Format::Blkparse]
        .into_iter()
        .find(|f| {
            let mut p = f.parser();
            let mut out = VecDeque::new();
            look.iter().all(|l| p.line(l, 1, &mut out).is_ok())
                && (!out.is_empty() || *f == Format::Blkparse)
        })
}

/// Parses a decimal number of `unit` nanoseconds (`"12.5"` with `unit` 1e6 is 12.5 ms) to
/// whole nanoseconds, without the rounding of a float. `None` if it is not one, is negative or
/// does not fit.
pub(crate) fn decimal_ns(s: &str, unit: u64) -> Option<Nanos> {
    // One pass over the bytes: a trace's every line has a time, and the library's
    // `split_once`, digit checks and 128-bit parse took a sixth of a line's parsing.
    let b = s.as_bytes();
    let (int, frac) = match b.iter().position(|&c| c == b'.') {
        Some(i) => (&b[..i], &b[i + 1..]),
        None => (b, &b[..0]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let digit = |c: u8| {
        let d = c.wrapping_sub(b'0');
        (d < 10).then_some(u64::from(d))
    };
    let mut whole: u64 = 0;
    for &c in int {
        whole = whole.checked_mul(10)?.checked_add(digit(c)?)?;
    }
    let ns = whole.checked_mul(unit)?;
    // Digits past the 18th are below a nanosecond for any unit up to 1 s, but must still be
    // digits.
    let (mut f, mut scale) = (0u64, 1u64);
    for (i, &c) in frac.iter().enumerate() {
        let d = digit(c)?;
        if i < 18 {
            f = f * 10 + d;
            scale *= 10;
        }
    }
    if frac.is_empty() {
        return Some(ns);
    }
    // In 64 bits where it fits (up to 9 digits of a unit up to 1 s, every trace's case):
    // 128-bit division costs a tenth of a line's parsing.
    let part = match f.checked_mul(unit) {
        Some(x) => x / scale,
        None => (u128::from(f) * u128::from(unit) / u128::from(scale)) as u64,
    };
    ns.checked_add(part)
}

/// The first `N` fields of `it` and how many fields it has in all: the fields of a line
/// without a vector per line.
pub(crate) fn fields<'s, const N: usize>(
    it: impl Iterator<Item = &'s str>,
) -> ([&'s str; N], usize) {
    let mut f = [""; N];
    let mut n = 0;
    for (i, x) in it.enumerate() {
        if i < N {
            f[i] = x;
        }
        n = i + 1;
    }
    (f, n)
}

/// The first `N` fields of a comma-separated line, each trimmed of ASCII white space, and
/// how many fields the line has. By bytes: a comma never sits inside a UTF-8 sequence, and the
/// library's `split(',')` and Unicode `trim` were a third of an SPC line's parsing.
pub(crate) fn comma_fields<const N: usize>(line: &str) -> ([&str; N], usize) {
    let mut f = [""; N];
    let mut n = 0;
    let mut start = 0;
    for (i, &c) in line.as_bytes().iter().enumerate() {
        if c == b',' {
            if n < N {
                f[n] = &line[start..i];
            }
            n += 1;
            start = i + 1;
        }
    }
    if n < N {
        f[n] = &line[start..];
    }
    n += 1;
    for x in &mut f {
        *x = x.trim_ascii();
    }
    (f, n)
}

/// A whole number, or what was expected instead.
pub(crate) fn int<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, String> {
    s.trim_ascii()
        .parse()
        .map_err(|_| format!("{what} (a whole number), found {:?}", cut(s)))
}

/// A field's text, cut short for an error message.
pub(crate) fn cut(s: &str) -> String {
    s.chars().take(40).collect()
}

#[cfg(test)]
mod tests;
