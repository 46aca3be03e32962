//! Fig. 6.1 from real measurements: a run's timeline drawn as S over time (log scale), the
//! cache's size, the group's free memory and the process's anonymous memory, and the disk
//! queue, one column per timeline given.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One parsed timeline: the periodic samples.
#[derive(Debug, Default)]
pub struct Timeline {
    pub name: String,
    pub t: Vec<f64>,
    pub severity_s: Vec<Option<f64>>,
    pub cache_mb: Vec<f64>,
    pub free_mb: Vec<Option<f64>>,
    pub anon_mb: Vec<f64>,
    pub disk_queue: Vec<Option<f64>>,
    /// When notifications were handled (for marks on the S panel).
    pub notifications: Vec<f64>,
    pub hog_start: Option<f64>,
}

/// Reads a timeline CSV written by `run --timeline`.
pub fn read_timeline(path: &Path) -> anyhow::Result<Timeline> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = text.lines();
    let header = lines.next().unwrap_or("");
    let cols: Vec<&str> = header.split(',').collect();
    let col = |name: &str| {
        cols.iter()
            .position(|c| *c == name)
            .with_context(|| format!("{}: no column {name} in {header:?}", path.display()))
    };
    let (ct, ce, cs, cc, cf, ca, cq) = (
        col("time_s")?,
        col("event")?,
        col("severity_s")?,
        col("cache_mb")?,
        col("free_mb")?,
        col("anon_mb")?,
        col("disk_queue")?,
    );
    let mut tl = Timeline {
        name: path
            .file_stem()
            .map_or("run".into(), |s| s.to_string_lossy().into_owned()),
        ..Default::default()
    };
    for (i, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        let bad = || format!("{}, line {}: {line:?}", path.display(), i + 2);
        let num = |c: usize| -> anyhow::Result<Option<f64>> {
            let s = f.get(c).copied().with_context(bad)?;
            if s.is_empty() {
                return Ok(None);
            }
            s.parse::<f64>().map(Some).with_context(bad)
        };
        let t = num(ct)?.with_context(bad)?;
        match f.get(ce).copied().with_context(bad)? {
            "sample" => {
                tl.t.push(t);
                tl.severity_s.push(num(cs)?);
                tl.cache_mb.push(num(cc)?.unwrap_or(0.0));
                tl.free_mb.push(num(cf)?);
                tl.anon_mb.push(num(ca)?.unwrap_or(0.0));
                tl.disk_queue.push(num(cq)?);
            }
            "notification" => tl.notifications.push(t),
            "hog_start" => tl.hog_start = Some(t),
            _ => {}
        }
    }
    if tl.t.is_empty() {
        bail!("{}: no samples", path.display());
    }
    Ok(tl)
}

fn register_font() {
    static FONT: std::sync::Once = std::sync::Once::new();
    FONT.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../../../crates/cli/assets/DejaVuSans.ttf");
        // A bundled, known-good font: failure here is a build defect, not an input error.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, bytes);
    });
}

const BLUE: RGBColor = RGBColor(0x4c, 0x72, 0xb0);
const ORANGE: RGBColor = RGBColor(0xdd, 0x84, 0x52);
const GREEN: RGBColor = RGBColor(0x55, 0xa8, 0x68);
const RED: RGBColor = RGBColor(0xc4, 0x4e, 0x52);

/// A named line and its colour.
type Series = (&'static str, Vec<(f64, f64)>, RGBColor);

fn pts(t: &[f64], y: &[Option<f64>]) -> Vec<(f64, f64)> {
    t.iter()
        .zip(y)
        .filter_map(|(&t, y)| y.map(|y| (t, y)))
        .collect()
}

fn draw_one<DB: DrawingBackend>(tl: &Timeline, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("plot: {e:?}");
    let t1 = tl.t.last().copied().unwrap_or(1.0).max(1e-3);
    let panels = area.split_evenly((3, 1));
    // S, log scale, with the hog's start and the notifications marked.
    let mut c = ChartBuilder::on(&panels[0])
        .caption(format!("{}: severity", tl.name), ("sans-serif", 18))
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..t1, (1.0f64..5000.0).log_scale())
        .map_err(err)?;
    c.configure_mesh()
        .y_desc("S (s)")
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(err)?;
    let s = pts(&tl.t, &tl.severity_s);
    c.draw_series(LineSeries::new(
        s.iter().map(|&(t, v)| (t, v.max(1.0))),
        BLUE.stroke_width(2),
    ))
    .map_err(err)?;
    c.draw_series(
        tl.notifications
            .iter()
            .map(|&t| Circle::new((t, 1.5), 2, ORANGE.filled())),
    )
    .map_err(err)?;
    if let Some(h) = tl.hog_start {
        c.draw_series(LineSeries::new(
            [(h, 1.0), (h, 5000.0)],
            RED.stroke_width(1),
        ))
        .map_err(err)?;
    }
    // Memory.
    let top = tl
        .cache_mb
        .iter()
        .chain(&tl.anon_mb)
        .copied()
        .chain(tl.free_mb.iter().flatten().copied())
        .fold(1.0f64, f64::max);
    let mut c = ChartBuilder::on(&panels[1])
        .caption("memory (MiB)", ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..t1, 0.0..top * 1.1)
        .map_err(err)?;
    c.configure_mesh()
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(err)?;
    let series: [Series; 3] = [
        (
            "cache",
            tl.t.iter()
                .copied()
                .zip(tl.cache_mb.iter().copied())
                .collect(),
            BLUE,
        ),
        ("group free", pts(&tl.t, &tl.free_mb), GREEN),
        (
            "anonymous RSS",
            tl.t.iter()
                .copied()
                .zip(tl.anon_mb.iter().copied())
                .collect(),
            ORANGE,
        ),
    ];
    for (name, p, color) in series {
        c.draw_series(LineSeries::new(p, color.stroke_width(2)))
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(err)?;
    // The disk queue memd reports.
    let q = pts(&tl.t, &tl.disk_queue);
    let qmax = q.iter().map(|p| p.1).fold(1.0f64, f64::max);
    let mut c = ChartBuilder::on(&panels[2])
        .caption("disk queue (memd)", ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(30)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..t1, 0.0..qmax * 1.1)
        .map_err(err)?;
    c.configure_mesh()
        .x_desc("time (s)")
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(err)?;
    c.draw_series(LineSeries::new(q, RED.stroke_width(2)))
        .map_err(err)?;
    Ok(())
}

/// Draws each timeline as a column of three panels into `out` (SVG, or PNG when its name
/// ends in `.png`).
pub fn plot(timelines: &[PathBuf], out: &Path) -> anyhow::Result<()> {
    let tls = timelines
        .iter()
        .map(|p| read_timeline(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    register_font();
    let size = (640 * tls.len().max(1) as u32, 900);
    let png = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if png {
        draw_all(
            &tls,
            &BitMapBackend::new(out, size).into_drawing_area(),
            out,
        )
    } else {
        draw_all(&tls, &SVGBackend::new(out, size).into_drawing_area(), out)
    }
}

fn draw_all<DB: DrawingBackend>(
    tls: &[Timeline],
    area: &DrawingArea<DB, Shift>,
    out: &Path,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE).map_err(|e| anyhow!("plot: {e:?}"))?;
    let columns = area.split_evenly((1, tls.len().max(1)));
    for (tl, col) in tls.iter().zip(&columns) {
        draw_one(tl, col)?;
    }
    area.present()
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("cannot write {}", out.display()))
}
