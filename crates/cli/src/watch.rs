//! `antsched mem watch`: one domain's severity record, live. It subscribes like any client (a
//! shared page and an eventfd of its own), prints a line each time the daemon signals it (S
//! halved or doubled since it was last told, or the 1 s repeat under pressure) and each
//! `--interval`, and on exit can plot S and free memory over the whole watch.
//!
//! One thread: `poll(2)` over the client's eventfd, its socket (the daemon closing it means
//! no signal will ever come again) and a signalfd for SIGINT, SIGTERM and SIGHUP, so that a
//! notification is printed the moment it arrives and Ctrl-C still writes the plots.

use std::io::{IsTerminal, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use antsched_mem::record::SeverityRecord;
use antsched_mem::SeverityConfig;
use anyhow::anyhow;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::plots::{Plot, COLORS};

#[derive(clap::Args)]
pub struct WatchArgs {
    /// The daemon's socket.
    #[arg(long, value_name = "PATH", default_value = antsched_memd::DEFAULT_SOCKET)]
    socket: PathBuf,
    /// The domain to watch: `machine`, or a governed group's path as `mem status` names it.
    #[arg(long, value_name = "NAME", default_value = antsched_memd::MACHINE)]
    domain: String,
    /// Also print the record this often, notified or not (a duration with a unit: 1s, 250ms).
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    interval: String,
    /// Stop after this long (default: until SIGINT or SIGTERM).
    #[arg(long, value_name = "DURATION")]
    duration: Option<String>,
    /// On exit, write FILE-STEM.png and FILE-STEM.svg: S (log scale) and free memory over
    /// time, with tau marked.
    #[arg(long, value_name = "FILE-STEM")]
    plot: Option<PathBuf>,
    /// Print each record as one JSON object a line, with the keys of `mem status --json`.
    #[arg(long)]
    json: bool,
}

/// One record as the watch saw it, for the terminal's sparkline and the plot.
#[derive(Clone, Copy, Debug)]
struct Sample {
    /// The record's own `time`, which tells records apart.
    time: u64,
    /// The record's time, in seconds since the watch started (the first may be negative:
    /// it was published before).
    t_s: f64,
    severity_s: f64,
    free_mib: f64,
    tau_mib: f64,
}

impl Sample {
    fn new(r: &SeverityRecord, start_ns: u64) -> Self {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        Self {
            time: r.time,
            t_s: (r.time as f64 - start_ns as f64) / 1e9,
            severity_s: r.severity_s,
            free_mib: mib(r.free_bytes),
            tau_mib: mib(r.tau_bytes),
        }
    }
}

/// Why a line is printed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Why {
    /// The daemon signalled the eventfd this many times since the last line.
    Notified(u64),
    Interval,
}

/// Why the watch ended.
enum End {
    Duration,
    Signal(i32),
    /// The daemon closed the connection, with its last words if it said any.
    DaemonGone(String),
    /// Standard output was closed (a pipe's reader went away).
    OutputClosed,
}

pub fn watch(a: WatchArgs) -> anyhow::Result<()> {
    let interval = duration_arg("--interval", &a.interval)?;
    if interval.is_zero() {
        anyhow::bail!(
            "--interval {:?}: the interval must be above zero",
            a.interval
        );
    }
    let duration = a
        .duration
        .as_deref()
        .map(|d| duration_arg("--duration", d))
        .transpose()?;
    if let Some(stem) = &a.plot {
        // Checked before watching, so that a wrong path is not found out only at the end.
        crate::output::check_writable(&stem.with_extension("png"))?;
        crate::output::check_writable(&stem.with_extension("svg"))?;
    }
    // Blocked before any thread exists and taken through a signalfd, so that the loop sees
    // Ctrl-C like any other event and ends in order (the plots written).
    let set = crate::signals::block();
    let signals = signalfd(&set)?;
    // A closed pipe (`mem watch | head`) ends the watch like a signal, plots written, instead
    // of killing it.
    // SAFETY: setting a signal's disposition; no handler runs.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let client = antsched_memd::connect_domain(&a.socket, &a.domain)?;

    let start = Instant::now();
    let start_ns = antsched_memd::monotonic_ns();
    let deadline = duration.map(|d| start + d);
    let mut out = Output::new(a.json, &a.domain);
    let mut samples: Vec<Sample> = Vec::new();
    let mut next_print = start;
    let end = loop {
        // Every record the daemon publishes goes into the sparkline and the plot, printed or
        // not: the page is read every SAMPLE_EVERY (a few loads, no system call).
        let r = client.current();
        if samples.last().is_none_or(|s| s.time != r.time) {
            samples.push(Sample::new(&r, start_ns));
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            break End::Duration;
        }
        let mut why = None;
        if now >= next_print {
            why = Some(Why::Interval);
            next_print += interval;
            if next_print <= now {
                // Behind (the process was stopped): no burst of catch-up lines.
                next_print = now + interval;
            }
        } else {
            let until = deadline
                .map_or(next_print, |d| d.min(next_print))
                .min(now + SAMPLE_EVERY);
            let mut fds = [
                pollfd(client.eventfd().as_raw_fd()),
                pollfd(client.socket().as_raw_fd()),
                pollfd(signals.as_raw_fd()),
            ];
            let ms = until
                .saturating_duration_since(now)
                .as_millis()
                .saturating_add(1)
                .min(i32::MAX as u128) as i32;
            // SAFETY: `fds` is a valid array of pollfd of the length passed.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(anyhow!(e).context("poll"));
            }
            if fds[2].revents != 0 {
                break End::Signal(read_signal(&signals));
            }
            if fds[0].revents != 0 {
                let count = client.wait(Some(Duration::ZERO))?;
                if count > 0 {
                    why = Some(Why::Notified(count));
                }
            }
            if why.is_none() && fds[1].revents != 0 {
                break End::DaemonGone(last_words(&client));
            }
        }
        let Some(why) = why else { continue };
        let r = client.current();
        if samples.last().is_none_or(|s| s.time != r.time) {
            samples.push(Sample::new(&r, start_ns));
        }
        let t_s = start.elapsed().as_secs_f64();
        if out.record(t_s, &r, why, &samples).is_err() {
            break End::OutputClosed;
        }
    };
    out.finish();
    if let Some(stem) = &a.plot {
        let plot = WatchPlot {
            title: format!("antsched mem watch: {}", a.domain),
            samples: &samples,
            severity: SeverityConfig::default(),
        };
        plot.save(stem)?;
        eprintln!(
            "antsched mem watch: wrote {} and {}",
            stem.with_extension("png").display(),
            stem.with_extension("svg").display()
        );
    }
    match end {
        End::Duration | End::OutputClosed => Ok(()),
        End::Signal(sig) => {
            eprintln!("antsched mem watch: signal {sig}");
            Ok(())
        }
        End::DaemonGone(words) => Err(anyhow!(
            "antsched memd at {} closed the connection{}",
            a.socket.display(),
            if words.is_empty() {
                " (it stopped, or the domain is gone)".to_string()
            } else {
                format!(": {words}")
            }
        )),
    }
}

fn duration_arg(flag: &str, text: &str) -> anyhow::Result<Duration> {
    antsched_core::spec::parse_duration(text)
        .map(Duration::from_nanos)
        .map_err(|e| anyhow!("{flag} {text:?}: {e}"))
}

fn pollfd(fd: i32) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}

/// A signalfd for the (blocked) signals of `set`.
fn signalfd(set: &libc::sigset_t) -> anyhow::Result<OwnedFd> {
    // SAFETY: `set` is a valid signal set; a new descriptor is returned or -1.
    let fd = unsafe { libc::signalfd(-1, set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) };
    if fd < 0 {
        return Err(anyhow!(std::io::Error::last_os_error()).context("cannot make a signalfd"));
    }
    // SAFETY: `fd` is a descriptor just returned to us and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The number of the signal waiting on the signalfd (0 if it could not be read).
fn read_signal(fd: &OwnedFd) -> i32 {
    // SAFETY: signalfd_siginfo is plain data; all zeroes is a valid value.
    let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::signalfd_siginfo>();
    // SAFETY: reading at most `size` bytes into `info`, which is that large.
    let n = unsafe {
        libc::read(
            fd.as_raw_fd(),
            (&mut info as *mut libc::signalfd_siginfo).cast(),
            size,
        )
    };
    if n == size as isize {
        info.ssi_signo as i32
    } else {
        0
    }
}

/// What the daemon said when it closed the connection (`error: <why>`), if anything.
fn last_words(client: &antsched_memd::Client) -> String {
    let mut buf = [0u8; 512];
    // SAFETY: reading at most buf.len() bytes into `buf`, without blocking.
    let n = unsafe {
        libc::recv(
            client.socket().as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT,
        )
    };
    if n <= 0 {
        return String::new();
    }
    let text = String::from_utf8_lossy(&buf[..n as usize]);
    text.trim()
        .strip_prefix("error: ")
        .unwrap_or(text.trim())
        .to_string()
}

/// Where the lines go: plain text or JSON lines; on a terminal (text only) a sparkline of S
/// kept as the last line and redrawn with every record.
struct Output {
    json: bool,
    domain: String,
    /// Standard output is a terminal and the lines are text.
    live: bool,
    /// The sparkline is on screen, as the last line, without its newline.
    status_shown: bool,
    severity: SeverityConfig,
}

/// How often the page is read for the sparkline and the plot: every record of a daemon
/// ticking at 100 ms or slower.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// How far back the terminal's sparkline reaches.
const SPARK_WINDOW_S: f64 = 300.0;

impl Output {
    fn new(json: bool, domain: &str) -> Self {
        let live = !json && std::io::stdout().is_terminal();
        let o = Self {
            json,
            domain: domain.to_string(),
            live,
            status_shown: false,
            severity: SeverityConfig::default(),
        };
        if !json {
            println!("{}", header());
        }
        o
    }

    /// Prints one record. An error means standard output is gone.
    fn record(
        &mut self,
        t_s: f64,
        r: &SeverityRecord,
        why: Why,
        samples: &[Sample],
    ) -> std::io::Result<()> {
        let mut stdout = std::io::stdout().lock();
        if self.json {
            let mut v = serde_json::to_value(r).map_err(std::io::Error::other)?;
            v["domain"] = serde_json::Value::String(self.domain.clone());
            writeln!(stdout, "{v}")?;
            return stdout.flush();
        }
        if self.status_shown {
            // Back to the start of the sparkline's line, and clear it.
            write!(stdout, "\r\x1b[2K")?;
        }
        writeln!(stdout, "{}", line(t_s, r, why))?;
        if self.live {
            let width = terminal_width().saturating_sub(1);
            write!(
                stdout,
                "{}",
                status_line(samples, t_s, width, &self.severity)
            )?;
            self.status_shown = true;
        }
        stdout.flush()
    }

    /// Leaves the sparkline on screen as the last line.
    fn finish(&mut self) {
        if self.status_shown {
            println!();
            self.status_shown = false;
        }
    }
}

fn header() -> String {
    format!(
        "{:>9}  {:>8}  {:>8}  {:>17}  {:>10}  {:<9}  {:<9}  {}",
        "time_s", "S_s", "age_s", "free/tau_MiB", "cost_per_s", "tier", "estimator", "why"
    )
}

/// One record as a line: seconds since the watch started, S, the candidate age, free memory
/// over tau, the paging cost, the tier, the estimator, and why it was printed.
fn line(t_s: f64, r: &SeverityRecord, why: Why) -> String {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    let why = match why {
        Why::Notified(1) => "notified".to_string(),
        Why::Notified(n) => format!("notified x{n}"),
        Why::Interval => "interval".to_string(),
    };
    format!(
        "{:>9.3}  {:>8.1}  {:>8.1}  {:>17}  {:>10.3e}  {:<9}  {:<9}  {}",
        t_s,
        r.severity_s,
        r.candidate_age_s,
        format!("{:.1}/{:.1}", mib(r.free_bytes), mib(r.tau_bytes)),
        r.paging_cost,
        crate::memd::json_name(&r.tier),
        crate::memd::json_name(&r.estimator),
        why
    )
}

/// The terminal's width in columns (80 when it cannot be asked).
fn terminal_width() -> usize {
    // SAFETY: winsize is plain data; TIOCGWINSZ fills it or fails.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: as above, on standard output's descriptor.
    let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0;
    if ok && ws.ws_col > 0 {
        usize::from(ws.ws_col)
    } else {
        80
    }
}

/// `S, log 5..3600 s, last 5 min: ▁▁▂▅█  now 443.4 s`, fitted to `width` columns.
fn status_line(samples: &[Sample], now_s: f64, width: usize, c: &SeverityConfig) -> String {
    let now = samples
        .last()
        .map_or(String::new(), |s| format!("  now {:.1} s", s.severity_s));
    let label = format!(
        "S (log {:.0}..{:.0} s), last {:.0} min: ",
        c.s_min,
        c.s_max,
        SPARK_WINDOW_S / 60.0
    );
    let columns = width
        .saturating_sub(label.chars().count() + now.chars().count())
        .clamp(8, 120);
    format!(
        "{label}{}{now}",
        sparkline(samples, now_s, columns, SPARK_WINDOW_S, c)
    )
}

/// S over the last `window_s` seconds in `columns` characters, one time slice each: the
/// smallest S of the slice (pressure is what a watcher looks for), on a log scale from
/// S_min to S_max. A slice without a new record shows the record in force then; slices
/// before the first record are blank.
fn sparkline(
    samples: &[Sample],
    now_s: f64,
    columns: usize,
    window_s: f64,
    c: &SeverityConfig,
) -> String {
    const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let level = |s: f64| {
        let x = (s.max(c.s_min) / c.s_min).ln() / (c.s_max / c.s_min).ln();
        LEVELS[(x.clamp(0.0, 1.0) * 7.0).round() as usize]
    };
    let slice = window_s / columns as f64;
    let from = now_s - window_s;
    let mut out = String::with_capacity(columns * 3);
    let mut next = 0;
    let mut in_force: Option<f64> = None;
    for i in 0..columns {
        let end = from + (i + 1) as f64 * slice;
        let mut low: Option<f64> = None;
        while next < samples.len() && samples[next].t_s < end {
            let s = samples[next].severity_s;
            if samples[next].t_s >= end - slice {
                low = Some(low.map_or(s, |l: f64| l.min(s)));
            }
            in_force = Some(s);
            next += 1;
        }
        out.push(match low.or(in_force) {
            Some(s) => level(s),
            None => ' ',
        });
    }
    out
}

/// A record's value holds until the next record: a step at each one, not a slope between.
fn steps(pts: &[Sample], value: impl Fn(&Sample) -> f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(pts.len() * 2);
    for (i, s) in pts.iter().enumerate() {
        if i > 0 {
            out.push((s.t_s, value(&pts[i - 1])));
        }
        out.push((s.t_s, value(s)));
    }
    out
}

/// S (log scale, S_max marked) above free memory (tau marked), over the watch.
struct WatchPlot<'a> {
    title: String,
    samples: &'a [Sample],
    severity: SeverityConfig,
}

impl Plot for WatchPlot<'_> {
    fn size(&self) -> (u32, u32) {
        (900, 720)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("plot: {e:?}");
        area.fill(&WHITE).map_err(err)?;
        let pts = self.samples;
        let (x0, x1) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, s| {
            (a.0.min(s.t_s), a.1.max(s.t_s))
        });
        // One record (or none) spans no time: a second around it, or the first second.
        let (x0, x1) = if x0.is_finite() && x1 > x0 {
            (x0, x1)
        } else if x0.is_finite() {
            (x0 - 0.5, x0 + 0.5)
        } else {
            (0.0, 1.0)
        };
        let c = &self.severity;
        let s_low = pts
            .iter()
            .map(|s| s.severity_s)
            .filter(|s| s.is_finite() && *s > 0.0)
            .fold(c.s_min, f64::min);
        let (top, bottom) = area.split_vertically(area.dim_in_pixel().1 * 55 / 100);

        let mut chart = ChartBuilder::on(&top)
            .caption(&self.title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, (s_low * 0.8..c.s_max * 1.5).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("S (s), log scale")
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        let blue = COLORS[0];
        chart
            .draw_series(LineSeries::new(
                steps(pts, |s| s.severity_s),
                blue.stroke_width(2),
            ))
            .map_err(err)?
            .label("S")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], blue.stroke_width(2))
            });
        chart
            .draw_series(
                pts.iter()
                    .map(|s| Circle::new((s.t_s, s.severity_s), 2, blue.filled())),
            )
            .map_err(err)?;
        let grey = RGBColor(0x80, 0x80, 0x80);
        chart
            .draw_series(DashedLineSeries::new(
                [(x0, c.s_max), (x1, c.s_max)],
                6,
                4,
                grey.stroke_width(1),
            ))
            .map_err(err)?
            .label("S_max")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(1))
            });
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 15))
            .draw()
            .map_err(err)?;

        let y1 = pts
            .iter()
            .flat_map(|s| [s.free_mib, s.tau_mib])
            .filter(|y| y.is_finite())
            .fold(0.0f64, f64::max);
        let mut chart = ChartBuilder::on(&bottom)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, 0.0..(y1 * 1.1).max(1.0))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("MiB")
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        let green = COLORS[2];
        chart
            .draw_series(LineSeries::new(
                steps(pts, |s| s.free_mib),
                green.stroke_width(2),
            ))
            .map_err(err)?
            .label("free")
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], green.stroke_width(2))
            });
        let red = COLORS[3];
        // tau follows the domain's size (a group's limit may change): drawn as a series.
        chart
            .draw_series(DashedLineSeries::new(
                steps(pts, |s| s.tau_mib),
                8,
                5,
                red.stroke_width(2),
            ))
            .map_err(err)?
            .label("tau")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], red.stroke_width(2)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t_s: f64, severity_s: f64) -> Sample {
        Sample {
            time: (t_s * 1e9) as u64,
            t_s,
            severity_s,
            free_mib: 1.0,
            tau_mib: 2.0,
        }
    }

    /// The sparkline is log-scaled from S_min to S_max, shows each slice's smallest S,
    /// carries the record in force through slices without a new one, and is blank before
    /// the first record.
    #[test]
    fn the_sparkline_shows_the_lowest_s_of_each_slice_on_a_log_scale() {
        let c = SeverityConfig::default();
        let samples = [s(5.0, 3600.0), s(6.0, 5.0), s(6.5, 3600.0), s(9.0, 60.0)];
        // Ten slices of one second from t = 0 to t = 10.
        let line = sparkline(&samples, 10.0, 10, 10.0, &c);
        assert_eq!(line.chars().count(), 10);
        let chars: Vec<char> = line.chars().collect();
        assert_eq!(&chars[..5], &[' '; 5]);
        assert_eq!(chars[5], '█');
        assert_eq!(chars[6], '▁', "the slice's smallest S");
        assert_eq!((chars[7], chars[8]), ('█', '█'), "the record in force");
        // ln(60/5) / ln(3600/5) = 0.378 of the way: level 3 of 0..7.
        assert_eq!(chars[9], '▄');
    }

    /// The plot holds each record's value until the next one.
    #[test]
    fn the_plot_steps_from_record_to_record() {
        let pts = [s(0.0, 3600.0), s(1.5, 400.0), s(2.0, 100.0)];
        assert_eq!(
            steps(&pts, |x| x.severity_s),
            [
                (0.0, 3600.0),
                (1.5, 3600.0),
                (1.5, 400.0),
                (2.0, 400.0),
                (2.0, 100.0)
            ]
        );
    }

    #[test]
    fn a_line_names_every_field() {
        let r = SeverityRecord {
            version: 1,
            severity_s: 443.4,
            candidate_age_s: 80.3,
            free_bytes: 11 << 20,
            tau_bytes: 25 << 20,
            paging_cost: 4.5e-5,
            disk_service_ms: 0.06,
            disk_queue: 0.0,
            tier: antsched_mem::Tier::Ramp,
            estimator: antsched_mem::record::Estimator::Turnover,
            time: 0,
        };
        let l = line(12.5, &r, Why::Notified(2));
        assert!(l.contains("443.4") && l.contains("80.3"), "{l}");
        assert!(l.contains("11.0/25.0") && l.contains("4.500e-5"), "{l}");
        assert!(
            l.contains("ramp") && l.contains("turnover") && l.ends_with("notified x2"),
            "{l}"
        );
        assert_eq!(header().split_whitespace().count(), 8);
    }
}
