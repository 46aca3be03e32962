//! Validation against service times measured on real drives.
//!
//! DiskSim 4.0 ships, for each validated drive, a trace of 10,000 requests with the service time
//! the real drive took for each (`R|W Hit|Miss blkno bcount servtime_us next_interarrival_us`).
//! DiskSim's validate mode replays it closed loop with one request outstanding: request k+1 is
//! issued `next_interarrival_us` (of line k) after request k completes *in the model*; the
//! model's service times are compared with the measured ones.
//!
//! The comparison is Ruemmler and Wilkes' *demerit figure*: the root mean square of the
//! horizontal distance between the two cumulative distributions, read at the quantiles
//! 0.0001, 0.0002, ..., 1.0 (linear interpolation between points), in milliseconds. It rewards
//! getting the whole distribution right (cache hits, short and long seeks, rotational waits),
//! not just the mean.

use std::path::{Path, PathBuf};

use crate::{DeviceModel, DiskOp, DiskRequest, Nanos};

/// One line of a validation trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRecord {
    pub op: DiskOp,
    pub lbn: u64,
    pub sectors: u32,
    /// Service time measured on the real drive, in µs.
    pub measured_us: f64,
    /// Delay between this request's completion and the next request's issue, in µs.
    pub next_interarrival_us: f64,
}

/// A trace that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read trace {}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("{}:{line}: {message}; expected `R|W Hit|Miss|Doub|Trip blkno bcount servtime_us next_interarrival_us`", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}: the trace has no requests", path.display())]
    Empty { path: PathBuf },
}

/// Reads a DiskSim validation trace.
pub fn read_trace(path: &Path) -> Result<Vec<TraceRecord>, TraceError> {
    let text = crate::read_text(path).map_err(|e| TraceError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    parse_trace(&text, path)
}

/// The longest service time a trace may give: 10 s, as for a DiskSim file's times (no drive
/// takes longer; a larger figure is a unit mistake and would swamp the demerit).
pub const MAX_SERVICE_US: f64 = 1e7;
/// The longest interarrival time a trace may give: an hour (the replay's clock stays far from
/// 2^64 ns over any trace that fits in memory).
pub const MAX_INTERARRIVAL_US: f64 = 3.6e9;

/// Parses trace text; `path` names it in errors.
pub fn parse_trace(text: &str, path: &Path) -> Result<Vec<TraceRecord>, TraceError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        let err = |message: String| TraceError::Line {
            path: path.to_path_buf(),
            line: i + 1,
            message,
        };
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 6 {
            return Err(err(format!("{} fields", f.len())));
        }
        let op = match f[0] {
            "R" | "r" => DiskOp::Read,
            "W" | "w" => DiskOp::Write,
            o => return Err(err(format!("operation `{o}` is neither R nor W"))),
        };
        // The real drive's class of the request, which the replay does not use. Besides Hit
        // and Miss, the HP C2247A's trace marks writes during which the drive disconnected
        // from the bus twice (`Doub`) or three times (`Trip`).
        if !matches!(f[1], "Hit" | "Miss" | "Doub" | "Trip") {
            return Err(err(format!(
                "`{}` is none of Hit, Miss, Doub and Trip",
                f[1]
            )));
        }
        let lbn: u64 = f[2]
            .parse()
            .map_err(|_| err(format!("block number `{}` is not a whole number", f[2])))?;
        let sectors: u32 = f[3].parse().ok().filter(|&n| n > 0).ok_or_else(|| {
            err(format!(
                "block count `{}` is not a positive whole number",
                f[3]
            ))
        })?;
        let num = |s: &str, what: &str, max_us: f64| -> Result<f64, TraceError> {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && (0.0..=max_us).contains(v))
                .ok_or_else(|| {
                    err(format!(
                        "{what} `{s}` is not a number of microseconds from 0 to {max_us:e}"
                    ))
                })
        };
        out.push(TraceRecord {
            op,
            lbn,
            sectors,
            measured_us: num(f[4], "service time", MAX_SERVICE_US)?,
            next_interarrival_us: num(f[5], "interarrival time", MAX_INTERARRIVAL_US)?,
        });
    }
    if out.is_empty() {
        return Err(TraceError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(out)
}

/// Replays a trace closed loop with one request outstanding, as DiskSim's validate mode does.
/// Returns the model's service time of each request in ms. Requests past the model's capacity
/// are an error (the caller's trace does not fit the drive).
pub fn replay(model: &mut dyn DeviceModel, trace: &[TraceRecord]) -> Result<Vec<f64>, String> {
    let cap = model.capacity_sectors();
    let mut t: Nanos = 0;
    let mut out = Vec::with_capacity(trace.len());
    for (i, r) in trace.iter().enumerate() {
        // Checked: a block number near 2^64 must not wrap past the test to a small end.
        let end = r.lbn.checked_add(u64::from(r.sectors));
        if end.is_none_or(|e| e > cap) {
            return Err(format!(
                "request {} (blocks {}..{}) lies beyond the drive's {} blocks",
                i + 1,
                r.lbn,
                end.map_or_else(|| "2^64".to_string(), |e| e.to_string()),
                cap
            ));
        }
        let c = model.submit(
            &DiskRequest {
                op: r.op,
                lbn: r.lbn,
                sectors: r.sectors,
            },
            t,
        );
        out.push((c.finish - t) as f64 / 1e6);
        t = c.finish + (r.next_interarrival_us * 1000.0).round() as Nanos;
    }
    Ok(out)
}

/// Value of the empirical distribution of sorted `xs` at quantile `q` (0 < q <= 1), linear
/// between points: quantile k/n is the k-th smallest value.
fn quantile(xs: &[f64], q: f64) -> f64 {
    let n = xs.len();
    let h = q * n as f64 - 1.0;
    if h <= 0.0 {
        return xs[0];
    }
    let lo = h.floor() as usize;
    if lo + 1 >= n {
        return xs[n - 1];
    }
    let f = h - lo as f64;
    xs[lo] + f * (xs[lo + 1] - xs[lo])
}

/// Ruemmler–Wilkes demerit (ms): RMS difference of the two distributions over the quantiles
/// 0.0001, 0.0002, ..., 1.0.
pub fn demerit(model_ms: &[f64], measured_ms: &[f64]) -> f64 {
    if model_ms.is_empty() || measured_ms.is_empty() {
        return f64::NAN;
    }
    let mut a = model_ms.to_vec();
    let mut b = measured_ms.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let mut sum = 0.0;
    for k in 1..=10_000 {
        let q = k as f64 / 10_000.0;
        let d = quantile(&a, q) - quantile(&b, q);
        sum += d * d;
    }
    (sum / 10_000.0).sqrt()
}

/// The demerit as DiskSim's `rms` program computes the figures DiskSim publishes: not from
/// the service times themselves but from the distributions DiskSim's statistics print, each
/// time counted in a bin (`disksim_stat.c` with the `statdefs` of its validation runs: 1,750
/// bins of microseconds from 0, each 1% wider than the one before, the last open-ended), the
/// cumulative fraction printed to six decimals at each bin's upper edge; `rms.c` then reads
/// both curves at the quantiles 0.0001, 0.0002, ... (a running sum, as it steps), interpolating
/// within a bin. Binning moves a figure by a few hundredths of a millisecond either way, so a
/// model compared with DiskSim's figure is best computed the same way too.
pub fn binned_demerit(model_ms: &[f64], measured_ms: &[f64]) -> f64 {
    if model_ms.is_empty() || measured_ms.is_empty() {
        return f64::NAN;
    }
    let (x1, y1) = binned_distribution(model_ms);
    let (x2, y2) = binned_distribution(measured_ms);
    // The x at which a curve first reaches `p`, interpolated from the point before.
    let at = |x: &[f64], y: &[f64], i: &mut usize, p: f64| {
        while *i < y.len() - 1 && y[*i] < p {
            *i += 1;
        }
        let j = (*i).max(1);
        let span = y[j] - y[j - 1];
        let f = if span > 0.0 {
            (p - y[j - 1]) / span
        } else {
            1.0
        };
        x[j - 1] + f * (x[j] - x[j - 1])
    };
    let (mut i1, mut i2) = (0, 0);
    let (mut p, mut sum, mut n) = (0.0001, 0.0, 0u32);
    while p <= 1.0 {
        let d = at(&x1, &y1, &mut i1, p) - at(&x2, &y2, &mut i2, p);
        sum += d * d;
        n += 1;
        p += 0.0001;
    }
    (sum / f64::from(n)).sqrt()
}

/// DiskSim's printed distribution of `times_ms`: each bin's upper edge in ms and the fraction
/// of times below it, up to the first bin where the fraction reaches 1.
fn binned_distribution(times_ms: &[f64]) -> (Vec<f64>, Vec<f64>) {
    const BINS: usize = 1750;
    let mut starts = Vec::with_capacity(BINS);
    let mut b: u64 = 0;
    for _ in 0..BINS {
        starts.push(b);
        b += 1 + b / 100;
    }
    let mut count = vec![0u64; BINS];
    for &t in times_ms {
        let us = (t * 1000.0) as i64;
        let i = if us < 0 {
            0
        } else if (us as u64) < starts[BINS - 2] {
            starts.partition_point(|&s| s <= us as u64)
        } else {
            BINS - 1
        };
        count[i] += 1;
    }
    let n = times_ms.len() as f64;
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    let mut below = 0u64;
    for i in 0..BINS {
        below += count[i];
        xs.push(starts[i] as f64 / 1000.0);
        let y = (below as f64 / n * 1e6).round() / 1e6;
        ys.push(y);
        if y >= 1.0 {
            break;
        }
    }
    (xs, ys)
}

/// DiskSim 4.0's own demerit (ms) on its shipped validation traces, by drive file name.
// 0.318 is DiskSim's published figure for the Cheetah 4LP, not an approximation of 1/π.
#[allow(clippy::approx_constant)]
pub fn disksim_reference_demerit(name: &str) -> Option<f64> {
    match name {
        "cheetah4LP" => Some(0.318),
        "atlas10k" => Some(0.268),
        "barracuda" => Some(0.348),
        "ibm18es" => Some(0.136),
        "atlas_III" => Some(0.378),
        "hp_c2247a" => Some(0.090),
        "hp_c3323a" => Some(0.305),
        "hp_c2490a" => Some(0.254),
        "dec_rz26" => Some(0.340),
        // DiskSim's `runvalid` leaves the ST41601N out, and DiskSim 4.0 does not finish it.
        "st41601n" => None,
        _ => None,
    }
}

/// One request of a validation run.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct RequestResult {
    pub index: usize,
    pub op: DiskOp,
    pub sector: u64,
    pub sectors: u32,
    pub measured_ms: f64,
    pub model_ms: f64,
}

/// Summary of a validation run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ValidationReport {
    pub drive: String,
    pub requests: usize,
    pub demerit_ms: f64,
    /// The demerit as DiskSim's `rms` computes its published figures ([`binned_demerit`]).
    pub demerit_binned_ms: f64,
    /// DiskSim 4.0's demerit on the same trace, when known.
    pub disksim_demerit_ms: Option<f64>,
    pub mean_measured_ms: f64,
    pub mean_model_ms: f64,
    pub mean_measured_read_ms: f64,
    pub mean_model_read_ms: f64,
    pub mean_measured_write_ms: f64,
    pub mean_model_write_ms: f64,
    #[serde(skip)]
    pub per_request: Vec<RequestResult>,
}

/// Why a validation could not run.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error(transparent)]
    Model(#[from] crate::DiskSimError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("{}: {message}", trace.display())]
    Replay { trace: PathBuf, message: String },
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

/// Loads a DiskSim drive, replays its trace and compares.
pub fn validate(parv: &Path, trace_path: &Path) -> Result<ValidationReport, ValidateError> {
    validate_with(parv, trace_path, &[])
}

/// [`validate`] with some of the drive's parameters changed ([`crate::load_disksim_with`]).
pub fn validate_with(
    parv: &Path,
    trace_path: &Path,
    settings: &[String],
) -> Result<ValidationReport, ValidateError> {
    let mut model = crate::load_disksim_with(parv, settings)?;
    let trace = read_trace(trace_path)?;
    let stem = parv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    validate_model(&mut model, &trace, &stem).map_err(|message| ValidateError::Replay {
        trace: trace_path.to_path_buf(),
        message,
    })
}

/// Replays `trace` on `model` and compares; `drive` names the drive (the `.parv` file stem, which
/// also selects DiskSim's reference figure).
pub fn validate_model(
    model: &mut dyn DeviceModel,
    trace: &[TraceRecord],
    drive: &str,
) -> Result<ValidationReport, String> {
    let model_ms = replay(model, trace)?;
    let measured: Vec<f64> = trace.iter().map(|r| r.measured_us / 1000.0).collect();
    let per_request: Vec<RequestResult> = trace
        .iter()
        .zip(&model_ms)
        .enumerate()
        .map(|(i, (r, &m))| RequestResult {
            index: i,
            op: r.op,
            sector: r.lbn,
            sectors: r.sectors,
            measured_ms: r.measured_us / 1000.0,
            model_ms: m,
        })
        .collect();
    let of = |op: DiskOp, f: fn(&RequestResult) -> f64| {
        mean(per_request.iter().filter(|r| r.op == op).map(f))
    };
    Ok(ValidationReport {
        drive: drive.to_string(),
        requests: trace.len(),
        demerit_ms: demerit(&model_ms, &measured),
        demerit_binned_ms: binned_demerit(&model_ms, &measured),
        disksim_demerit_ms: disksim_reference_demerit(drive),
        mean_measured_ms: mean(measured.iter().copied()),
        mean_model_ms: mean(model_ms.iter().copied()),
        mean_measured_read_ms: of(DiskOp::Read, |r| r.measured_ms),
        mean_model_read_ms: of(DiskOp::Read, |r| r.model_ms),
        mean_measured_write_ms: of(DiskOp::Write, |r| r.measured_ms),
        mean_model_write_ms: of(DiskOp::Write, |r| r.model_ms),
        per_request,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binned_demerit_is_zero_for_identical_times_and_near_a_shift_for_shifted_ones() {
        // Evenly spread times from 2 to 20 ms; bins there are 0.02 to 0.2 ms wide, and the
        // reading interpolates within them.
        let a: Vec<f64> = (0..10_000)
            .map(|i| 2.0 + 18.0 * i as f64 / 10_000.0)
            .collect();
        let b: Vec<f64> = a.iter().map(|x| x + 0.5).collect();
        assert!(binned_demerit(&a, &a).abs() < 1e-9);
        let d = binned_demerit(&b, &a);
        assert!((d - 0.5).abs() < 0.02, "{d}");
        // Times past the last bins' start (some 34 minutes) all count in the last,
        // open-ended one: three hours and six read the same.
        let (far, farther) = (vec![1.0e7; 10], vec![2.0e7; 10]);
        assert!(binned_demerit(&far, &farther).abs() < 1e-9);
        assert!(demerit(&far, &farther) > 9.9e6);
        assert!(binned_demerit(&[], &a).is_nan());
    }

    #[test]
    fn demerit_of_identical_distributions_is_zero_and_of_a_shift_is_the_shift() {
        let a: Vec<f64> = (0..1000).map(|i| i as f64 * 0.01).collect();
        assert!(demerit(&a, &a).abs() < 1e-12);
        let b: Vec<f64> = a.iter().map(|x| x + 0.5).collect();
        assert!((demerit(&a, &b) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn bad_trace_line_names_file_and_line() {
        let e = parse_trace(
            "R Hit 1 4 100.0 200.0\nR Hit x 4 1 2\n",
            Path::new("t.trace"),
        )
        .unwrap_err();
        let s = e.to_string();
        assert!(s.contains("t.trace:2"), "{s}");
        assert!(s.contains("block number"), "{s}");
    }
}
