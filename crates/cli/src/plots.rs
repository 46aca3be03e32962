//! Plots as PNG and SVG (plotters), for results a person would rather see than read.
//!
//! The font is embedded (DejaVu Sans, see `assets/DejaVuSans.LICENSE`), so plots render the same
//! on any machine, with no system font or fontconfig needed.

use std::path::Path;
use std::sync::Once;

use anyhow::{anyhow, Context};
use plotters::coord::Shift;
use plotters::prelude::*;

static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../assets/DejaVuSans.ttf");
        // A bundled, known-good font: failure here is a build defect, not an input error.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, bytes);
    });
}

pub(crate) const COLORS: [RGBColor; 6] = [
    RGBColor(0x4c, 0x72, 0xb0),
    RGBColor(0xdd, 0x84, 0x52),
    RGBColor(0x55, 0xa8, 0x68),
    RGBColor(0xc4, 0x4e, 0x52),
    RGBColor(0x81, 0x72, 0xb3),
    RGBColor(0x93, 0x78, 0x60),
];

const SIZE: (u32, u32) = (900, 540);

/// Something that can draw itself on any plotters backend.
pub trait Plot {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static;

    /// Width and height in pixels.
    fn size(&self) -> (u32, u32) {
        SIZE
    }

    /// Writes `base.png` and `base.svg`.
    fn save(&self, base: &Path) -> anyhow::Result<()> {
        register_font();
        let png = base.with_extension("png");
        let svg = base.with_extension("svg");
        let size = self.size();
        {
            let area = BitMapBackend::new(&png, size).into_drawing_area();
            self.draw(&area)?;
            area.present()
                .map_err(|e| anyhow!("{e}"))
                .with_context(|| format!("cannot write {}", png.display()))?;
        }
        let area = SVGBackend::new(&svg, size).into_drawing_area();
        self.draw(&area)?;
        area.present()
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("cannot write {}", svg.display()))
    }
}

/// A line per series over a numeric x axis.
pub struct Lines<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

impl Plot for Lines<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let p = self;
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("plot: {e:?}");
        area.fill(&WHITE).map_err(err)?;
        let xs = p.series.iter().flat_map(|s| s.1.iter().map(|q| q.0));
        let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        let y1 = p
            .series
            .iter()
            .flat_map(|s| s.1.iter().map(|q| q.1))
            .filter(|y| y.is_finite())
            .fold(0.0f64, f64::max);
        let (x0, x1) = if x0.is_finite() && x1 > x0 {
            (x0, x1)
        } else {
            (0.0, 1.0)
        };
        let mut chart = ChartBuilder::on(area)
            .caption(p.title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, 0.0..(y1 * 1.1).max(1e-9))
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(p.x_label)
            .y_desc(p.y_label)
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        for (i, (name, pts)) in p.series.iter().enumerate() {
            let c = COLORS[i % COLORS.len()];
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
                .map_err(err)?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            chart
                .draw_series(pts.iter().map(|&(x, y)| Circle::new((x, y), 3, c.filled())))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

/// Grouped bars: one group per category, one bar per series.
pub struct Bars<'a> {
    pub title: &'a str,
    pub y_label: &'a str,
    pub categories: Vec<String>,
    pub series: Vec<(String, Vec<f64>)>,
}

impl Plot for Bars<'_> {
    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        let p = self;
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("plot: {e:?}");
        area.fill(&WHITE).map_err(err)?;
        let n = p.categories.len().max(1);
        let k = p.series.len().max(1);
        let y1 = p
            .series
            .iter()
            .flat_map(|s| s.1.iter().copied())
            .filter(|y| y.is_finite())
            .fold(0.0f64, f64::max);
        let mut chart = ChartBuilder::on(area)
            .caption(p.title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..n as f64, 0.0..(y1 * 1.15).max(1e-9))
            .map_err(err)?;
        let cats = p.categories.clone();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n * 2 + 1)
            .x_label_formatter(&move |x| {
                let i = x.floor() as usize;
                if (x - i as f64 - 0.5).abs() < 1e-6 {
                    cats.get(i).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_desc(p.y_label)
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(err)?;
        let width = 0.8 / k as f64;
        for (j, (name, vals)) in p.series.iter().enumerate() {
            let c = COLORS[j % COLORS.len()];
            chart
                .draw_series(vals.iter().enumerate().filter(|(_, v)| v.is_finite()).map(
                    |(i, &v)| {
                        let x = i as f64 + 0.1 + j as f64 * width;
                        Rectangle::new([(x, 0.0), (x + width * 0.95, v)], c.filled())
                    },
                ))
                .map_err(err)?
                .label(name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

/// A table of coloured cells: one row per `rows` entry, one column per `columns` entry, each
/// cell coloured by its score (0 red, 1 green) and labelled with its text.
pub struct Heatmap<'a> {
    pub title: &'a str,
    pub rows: Vec<String>,
    pub columns: Vec<String>,
    /// `cells[row][column]`: score in [0, 1] and label; `None` is drawn blank.
    pub cells: Vec<Vec<Option<(f64, String)>>>,
}

impl Heatmap<'_> {
    const CELL: (i32, i32) = (64, 26);
    const LEFT: i32 = 150;
    const TOP: i32 = 210;
}

impl Plot for Heatmap<'_> {
    fn size(&self) -> (u32, u32) {
        let w = Self::LEFT + Self::CELL.0 * self.columns.len() as i32 + 20;
        let h = Self::TOP + Self::CELL.1 * self.rows.len() as i32 + 20;
        (w.max(400) as u32, h.max(300) as u32)
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        use plotters::style::text_anchor::{HPos, Pos, VPos};
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("plot: {e:?}");
        area.fill(&WHITE).map_err(err)?;
        let (cw, ch) = Self::CELL;
        area.draw(&Text::new(
            self.title.to_string(),
            (12, 12),
            ("sans-serif", 22).into_font(),
        ))
        .map_err(err)?;
        let header = TextStyle::from(("sans-serif", 13).into_font())
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (j, c) in self.columns.iter().enumerate() {
            let x = Self::LEFT + j as i32 * cw + cw / 2;
            area.draw(&Text::new(c.clone(), (x, Self::TOP - 6), header.clone()))
                .map_err(err)?;
        }
        let row_style = TextStyle::from(("sans-serif", 14).into_font())
            .pos(Pos::new(HPos::Right, VPos::Center));
        let cell_style = TextStyle::from(("sans-serif", 12).into_font())
            .pos(Pos::new(HPos::Center, VPos::Center));
        for (i, name) in self.rows.iter().enumerate() {
            let y = Self::TOP + i as i32 * ch;
            area.draw(&Text::new(
                name.clone(),
                (Self::LEFT - 8, y + ch / 2),
                row_style.clone(),
            ))
            .map_err(err)?;
            for (j, cell) in self.cells[i].iter().enumerate() {
                let x = Self::LEFT + j as i32 * cw;
                let Some((score, label)) = cell else {
                    continue;
                };
                // Red (0) through yellow to green (1), light enough to read the label on.
                let hue = score.clamp(0.0, 1.0) / 3.0;
                let fill = HSLColor(hue, 0.65, 0.72);
                area.draw(&Rectangle::new([(x, y), (x + cw, y + ch)], fill.filled()))
                    .map_err(err)?;
                area.draw(&Rectangle::new(
                    [(x, y), (x + cw, y + ch)],
                    WHITE.stroke_width(1),
                ))
                .map_err(err)?;
                area.draw(&Text::new(
                    label.clone(),
                    (x + cw / 2, y + ch / 2),
                    cell_style.clone(),
                ))
                .map_err(err)?;
            }
        }
        Ok(())
    }
}
