//! The plotting engine: a [`Figure`] of vertically stacked [`Panel`]s of [`Line`]s —
//! ranges, axes, ticks, the legend under each panel, markers — drawn once per backend
//! (PNG bitmap, SVG) and the SVG converted to PDF ([`render`], [`write_png_svg_pdf`]).
//! It knows nothing of runs, traces or experiments: the figure kinds beside it build the
//! figures from the stored results.

use crate::error::ReportError;
use crate::pdf::svg_to_pdf;
use crate::style::{marker_of, Marker, AXIS_PX, FAMILY, LEGEND_PX, TICK_PX};
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stroke {
    /// Solid line.
    Solid,
    /// Dashed line (fits).
    Dashed,
    /// Dotted line (declared reference slopes).
    Dotted,
    /// Markers joined by a thin line (sweeps).
    Markers,
}

/// One curve.
#[derive(Clone, Debug)]
pub struct Line {
    /// Legend label (empty: no legend entry).
    pub label: String,
    /// Colour.
    pub colour: RGBColor,
    /// Points.
    pub points: Vec<(f64, f64)>,
    /// Drawing style.
    pub stroke: Stroke,
    /// Where a failed run stopped (drawn as ×).
    pub failed_at: Vec<(f64, f64)>,
}

/// One panel: axes, labels and curves.
#[derive(Clone, Debug)]
pub struct Panel {
    /// Title.
    pub title: String,
    /// x-axis label with unit.
    pub xlabel: String,
    /// y-axis label with unit.
    pub ylabel: String,
    /// Logarithmic x.
    pub log_x: bool,
    /// Logarithmic y.
    pub log_y: bool,
    /// Curves.
    pub lines: Vec<Line>,
    /// Equal aspect (trajectories).
    pub equal: bool,
}

/// A figure made of vertically stacked panels.
#[derive(Clone, Debug)]
pub struct Figure {
    /// File stem.
    pub stem: String,
    /// Panels, top to bottom.
    pub panels: Vec<Panel>,
    /// Pixel width.
    pub width: u32,
    /// Pixel height per panel.
    pub panel_height: u32,
}

fn range(vals: impl Iterator<Item = f64>, log: bool) -> Option<(f64, f64)> {
    let v: Vec<f64> = vals
        .filter(|x| x.is_finite() && (!log || *x > 0.0))
        .collect();
    if v.is_empty() {
        return None;
    }
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    Some(if log {
        // Whole decades, widened a little so that the end decades keep their tick labels.
        let (l, h) = (lo.log10().floor(), hi.log10().ceil());
        (
            10f64.powf(l) / 1.15,
            10f64.powf(if h <= l { l + 1.0 } else { h }) * 1.15,
        )
    } else if hi > lo {
        let pad = 0.05 * (hi - lo);
        (lo - pad, hi + pad)
    } else {
        (lo - 1.0, hi + 1.0)
    })
}

/// An axis range, low to high.
type Span = (f64, f64);

/// The x and y ranges of a panel (squared up around their centre for equal-aspect
/// panels); `Err` says what is missing when there is nothing to draw on an axis.
fn axis_ranges(p: &Panel) -> Result<(Span, Span), &'static str> {
    let pts = || {
        p.lines
            .iter()
            .flat_map(|l| l.points.iter().chain(&l.failed_at))
    };
    let mut xr = range(pts().map(|q| q.0), p.log_x).ok_or("no data")?;
    let mut yr = range(pts().map(|q| q.1), p.log_y).ok_or("no positive data")?;
    if p.equal {
        let span = (xr.1 - xr.0).max(yr.1 - yr.0) / 2.0;
        let (cx, cy) = ((xr.0 + xr.1) / 2.0, (yr.0 + yr.1) / 2.0);
        xr = (cx - span, cx + span);
        yr = (cy - span, cy + span);
    }
    Ok((xr, yr))
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let (xr, yr) = match axis_ranges(p) {
        Ok(r) => r,
        Err(missing) => {
            crate::style::titled(area, &format!("{} ({missing})", p.title), 4)?;
            return Ok(());
        }
    };
    // The title spans the panel less the chart's margins (12 px each side).
    let area = crate::style::titled(area, &p.title, 12)?;
    let mut b = ChartBuilder::on(&area);
    b.margin(12).x_label_area_size(48).y_label_area_size(84);
    match (p.log_x, p.log_y) {
        (true, true) => draw_chart(
            b.build_cartesian_2d((xr.0..xr.1).log_scale(), (yr.0..yr.1).log_scale())
                .map_err(e)?,
            p,
            xr,
            yr,
        ),
        (false, true) => draw_chart(
            b.build_cartesian_2d(xr.0..xr.1, (yr.0..yr.1).log_scale())
                .map_err(e)?,
            p,
            xr,
            yr,
        ),
        (true, false) => draw_chart(
            b.build_cartesian_2d((xr.0..xr.1).log_scale(), yr.0..yr.1)
                .map_err(e)?,
            p,
            xr,
            yr,
        ),
        (false, false) => draw_chart(
            b.build_cartesian_2d(xr.0..xr.1, yr.0..yr.1).map_err(e)?,
            p,
            xr,
            yr,
        ),
    }
}

/// A panel's mesh (axis labels, ticks), its curves and, when any curve is labelled, the
/// legend, on a chart with linear or logarithmic axes spanning `xr` × `yr`.
fn draw_chart<'a, DB, X, Y>(
    mut chart: ChartContext<'a, DB, Cartesian2d<X, Y>>, p: &Panel, xr: Span, yr: Span,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    chart
        .configure_mesh()
        .x_desc(p.xlabel.as_str())
        .y_desc(p.ylabel.as_str())
        .label_style((FAMILY, TICK_PX))
        .axis_desc_style((FAMILY, AXIS_PX))
        .x_labels(6)
        .x_label_formatter(&|v| fmt_tick(snap(*v, xr, p.log_x)))
        .y_label_formatter(&|v| fmt_tick(snap(*v, yr, p.log_y)))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(e)?;
    for l in &p.lines {
        draw_line(&mut chart, l, p)?;
    }
    Ok(())
}

/// One curve of panel `p` in its stroke (points that cannot be drawn on the panel's axes
/// left out), its legend entry if labelled, and a × where a failed run stopped.
fn draw_line<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>, l: &Line, p: &Panel,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let c = l.colour;
    let ok: Vec<(f64, f64)> = l
        .points
        .iter()
        .copied()
        .filter(|(x, y)| {
            x.is_finite() && y.is_finite() && (!p.log_y || *y > 0.0) && (!p.log_x || *x > 0.0)
        })
        .collect();
    let anno = match l.stroke {
        Stroke::Solid => chart
            .draw_series(LineSeries::new(ok.clone(), c.stroke_width(2)))
            .map_err(e)?,
        Stroke::Dashed => chart
            .draw_series(DashedLineSeries::new(ok.clone(), 8, 5, c.stroke_width(2)))
            .map_err(e)?,
        Stroke::Dotted => chart
            .draw_series(DashedLineSeries::new(ok.clone(), 2, 4, c.stroke_width(2)))
            .map_err(e)?,
        Stroke::Markers => {
            chart
                .draw_series(LineSeries::new(ok.clone(), c.stroke_width(1)))
                .map_err(e)?;
            let shape = marker_of(c);
            chart
                .draw_series(ok.iter().map(|pt| marker(*pt, shape, c)))
                .map_err(e)?
        }
    };
    if !l.label.is_empty() {
        let style = l.stroke;
        anno.label(l.label.as_str())
            .legend(move |(x, y)| match style {
                Stroke::Markers => marker((x + 10, y), marker_of(c), c),
                _ => PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)).into_dyn(),
            });
    }
    chart
        .draw_series(
            l.failed_at
                .iter()
                .map(|pt| Cross::new(*pt, 7, c.stroke_width(3))),
        )
        .map_err(e)?;
    Ok(())
}

/// A sweep point (or its legend swatch) at `at` in the shape `shape`, 5 px across.
fn marker<C, DB>(at: C, shape: Marker, c: RGBColor) -> DynElement<'static, DB, C>
where
    C: Clone + 'static,
    DB: DrawingBackend,
{
    match shape {
        Marker::Circle => Circle::new(at, 5, c.filled()).into_dyn(),
        Marker::Triangle => TriangleMarker::new(at, 6, c.filled()).into_dyn(),
        Marker::HollowTriangle => TriangleMarker::new(at, 6, c.stroke_width(2)).into_dyn(),
        Marker::Cross => Cross::new(at, 5, c.stroke_width(2)).into_dyn(),
        Marker::Ring => Circle::new(at, 5, c.stroke_width(2)).into_dyn(),
    }
}

/// A linear-axis tick that is zero up to the rounding of the tick arithmetic (−1e-16 on an
/// axis spanning 1) is drawn as 0; log axes are left alone (1e-16 is a real tick there).
fn snap(v: f64, range: (f64, f64), log: bool) -> f64 {
    if !log && v.abs() < 1e-9 * (range.1 - range.0).abs() {
        0.0
    } else {
        v
    }
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e-2 && v.abs() < 1e6 {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.0e}")
    }
}

/// Height of the legend strip under a panel: one 21-px row per one or two labelled
/// curves (two columns when every label fits half the width), 0 without labels.
fn legend_height(p: &Panel, width: u32) -> u32 {
    let (n, cols) = legend_layout(p, width);
    if n == 0 {
        0
    } else {
        n.div_ceil(cols) as u32 * LEGEND_ROW + 8
    }
}

/// Legend row height (px).
const LEGEND_ROW: u32 = 21;

/// Labelled curves of a panel and the legend's columns (1 or 2).
fn legend_layout(p: &Panel, width: u32) -> (usize, usize) {
    let labels: Vec<&str> = p
        .lines
        .iter()
        .filter(|l| !l.label.is_empty())
        .map(|l| l.label.as_str())
        .collect();
    // DejaVu Sans averages 0.56 em per character; 34 px for the swatch and gap.
    let widest = labels
        .iter()
        .map(|l| l.chars().count() as f64 * crate::book::SANS_EM * LEGEND_PX as f64 + 34.0)
        .fold(0.0, f64::max);
    let cols = if widest <= (width as f64 - 40.0) / 2.0 {
        2
    } else {
        1
    };
    (labels.len(), cols)
}

/// The legend strip of a panel: swatch (line, dashes, dots or marker) and label per
/// labelled curve, row by row, outside the plot so that it hides no data.
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let width = area.dim_in_pixel().0;
    let (_, cols) = legend_layout(p, width);
    let col_w = (width as i32 - 40) / cols as i32;
    for (k, l) in p.lines.iter().filter(|l| !l.label.is_empty()).enumerate() {
        let x = 30 + (k % cols) as i32 * col_w;
        let y = 4 + (k / cols) as i32 * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
        let c = l.colour;
        match l.stroke {
            Stroke::Markers => area.draw(&marker((x + 10, y), marker_of(c), c)),
            Stroke::Solid => area.draw(&PathElement::new(
                vec![(x, y), (x + 22, y)],
                c.stroke_width(2),
            )),
            Stroke::Dashed | Stroke::Dotted => {
                let dash: i32 = if l.stroke == Stroke::Dashed { 6 } else { 2 };
                (0..22).step_by(2 * dash as usize).try_for_each(|d| {
                    area.draw(&PathElement::new(
                        vec![(x + d, y), (x + (d + dash).min(22), y)],
                        c.stroke_width(2),
                    ))
                })
            }
        }
        .map_err(e)?;
        area.draw(&Text::new(
            l.label.clone(),
            (x + 30, y - LEGEND_PX as i32 / 2),
            (FAMILY, LEGEND_PX),
        ))
        .map_err(e)?;
    }
    Ok(())
}

fn draw_figure<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, f: &Figure) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|x| x.to_string())?;
    let mut rest = root;
    for p in &f.panels {
        let (panel, below) = rest.split_vertically(f.panel_height);
        draw_panel(&panel, p)?;
        let (legend, below) = below.split_vertically(legend_height(p, f.width));
        draw_legend(&legend, p)?;
        rest = below;
    }
    rest.present().map_err(|x| x.to_string())
}

/// Write `<stem>.png`, `<stem>.svg` and `<stem>.pdf` into `dir`; a figure of several
/// panels also gets `<stem>.key.svg`, its first panel alone, which the main body shows
/// as the experiment's key figure at a readable size.
pub fn render(f: &Figure, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let height = |f: &Figure| -> u32 {
        f.panels
            .iter()
            .map(|p| f.panel_height + legend_height(p, f.width))
            .sum()
    };
    let mut files = write_png_svg_pdf(
        &f.stem,
        (f.width, height(f)),
        dir,
        |a| draw_figure(a, f),
        |a| draw_figure(a, f),
    )?;
    if f.panels.len() > 1 {
        let key = Figure {
            stem: format!("{}.key", f.stem),
            panels: f.panels[..1].to_vec(),
            ..f.clone()
        };
        let mut text = String::new();
        draw_figure(
            SVGBackend::with_string(&mut text, (key.width, height(&key))).into_drawing_area(),
            &key,
        )
        .map_err(|m| ReportError::Draw {
            figure: key.stem.clone(),
            message: m,
        })?;
        let path = dir.join(format!("{}.svg", key.stem));
        std::fs::write(&path, text).map_err(|e| ReportError::io(&path, e))?;
        files.push(path);
    }
    Ok(files)
}

/// Draw one image of `size` pixels twice — by `png` on a bitmap saved as `<stem>.png`, by
/// `svg` as `<stem>.svg` — and convert the SVG into `<stem>.pdf`; returns the three paths.
/// The one writer of figure files (the figures here and the parameter maps).
pub(crate) fn write_png_svg_pdf(
    stem: &str, size: (u32, u32), dir: &Path,
    png: impl FnOnce(DrawingArea<BitMapBackend<'_>, Shift>) -> Result<(), String>,
    svg: impl FnOnce(DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String>,
) -> Result<Vec<PathBuf>, ReportError> {
    let err = |m: String| ReportError::Draw {
        figure: stem.to_string(),
        message: m,
    };
    let png_path = dir.join(format!("{stem}.png"));
    png(BitMapBackend::new(&png_path, size).into_drawing_area()).map_err(err)?;
    let mut svg_text = String::new();
    svg(SVGBackend::with_string(&mut svg_text, size).into_drawing_area()).map_err(err)?;
    let svg_path = dir.join(format!("{stem}.svg"));
    std::fs::write(&svg_path, &svg_text).map_err(|e| ReportError::io(&svg_path, e))?;
    let pdf = dir.join(format!("{stem}.pdf"));
    svg_to_pdf(&svg_text, &pdf)?;
    Ok(vec![png_path, svg_path, pdf])
}
