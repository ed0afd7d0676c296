//! The figures: residuals vs time, energy error vs time, error vs h with fitted and
//! declared slopes, and the trajectory in the plane. Each is drawn once per backend
//! (PNG bitmap, SVG) and the SVG converted to PDF.

use crate::data::{distinct_values, param_names, Order, Results, Run, Trace};
use crate::error::ReportError;
use crate::pdf::svg_to_pdf;
use crate::style::{marker_of, slug, Colours, Marker, AXIS_PX, FAMILY, FIG_W, LEGEND_PX, TICK_PX};
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

fn h_label(h: f64) -> String {
    format!("{h:.3e}").replace(".000e", "e")
}

fn failure_note(r: &Run) -> String {
    match (r.ok, r.fail_time) {
        (false, Some(t)) => format!(" (failed at t = {t:.3})"),
        (false, None) => " (failed)".into(),
        _ => String::new(),
    }
}

fn series(tr: &Trace, get: impl Fn(&Trace, usize) -> Option<f64>) -> Vec<(f64, f64)> {
    (0..tr.t.len())
        .filter_map(|i| get(tr, i).map(|y| (tr.t[i], y)))
        .collect()
}

/// Most curves in one time-trace figure (more means a sweep, drawn by [`sweeps`]).
const MAX_CURVES: usize = 8;

/// Step sizes shown in time-trace figures: all if at most four, else the extremes.
fn shown_hs(hs: &[f64]) -> Vec<f64> {
    if hs.len() <= 4 {
        hs.to_vec()
    } else {
        vec![hs[0], hs[hs.len() - 1]]
    }
}

/// Every figure of an experiment: per problem, the time-trace figures at the shown step
/// sizes (residuals, energy, errors, trajectory, positions), then the figures over all its
/// step sizes (convergence, work–precision, tolerance proportionality).
pub fn all(res: &Results, dir: &Path, global: &Colours) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    for key in res.problem_keys() {
        let runs: Vec<&Run> = res.runs.iter().filter(|r| r.problem_key() == key).collect();
        let colours = global.local(runs.iter().map(|r| (r.method.as_str(), r.variant.as_str())));
        if !res.traces.is_empty() {
            for h in shown_hs(&res.hs(&key)) {
                for fig in trace_figures(res, &key, h, &runs, &colours) {
                    files.extend(render(&fig, dir)?);
                }
            }
        }
        for fig in problem_figures(res, &key, &runs, &colours) {
            files.extend(render(&fig, dir)?);
        }
    }
    Ok(files)
}

/// The time-trace figures of problem `key` at step `h`, in order: residuals, energy error,
/// errors against the exact solution, trajectory in the plane, positions — each where
/// the stored traces allow it. None for a parameter sweep (more than [`MAX_CURVES`] runs).
fn trace_figures(
    res: &Results, key: &str, h: f64, runs: &[&Run], colours: &Colours,
) -> Vec<Figure> {
    let at = TracesAt {
        res,
        key,
        h,
        runs: runs
            .iter()
            .copied()
            .filter(|r| (r.h - h).abs() <= 1e-12 * h)
            .collect(),
        colours,
    };
    if at.runs.len() > MAX_CURVES {
        // A parameter sweep: its figure is the sweep figure, not 14 overlaid traces.
        return Vec::new();
    }
    [
        Some(at.residuals()),
        at.energy(),
        at.errors(),
        at.trajectory(),
        positions(res, key, h, &at.runs, colours),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The figures of problem `key` over all its step sizes: convergence (two or more step
/// sizes and some error to show), work–precision and tolerance proportionality.
fn problem_figures(res: &Results, key: &str, runs: &[&Run], colours: &Colours) -> Vec<Figure> {
    let mut figures = Vec::new();
    if res.hs(key).len() >= 2 {
        let fig = convergence(res, key, runs, colours);
        if !fig.panels.is_empty() {
            figures.push(fig);
        }
    }
    figures.extend(work_precision(key, runs, colours));
    figures.extend(crate::tolerance::tolerance_proportionality(
        key, runs, colours,
    ));
    figures
}

/// The runs of one problem at one step size, with what their time-trace figures need.
struct TracesAt<'a> {
    res: &'a Results,
    key: &'a str,
    h: f64,
    runs: Vec<&'a Run>,
    colours: &'a Colours,
}

impl TracesAt<'_> {
    /// The stem `<kind>_<problem>_h<h>`.
    fn stem(&self, kind: &str) -> String {
        format!("{kind}_{}_h{}", slug(self.key), h_label(self.h))
    }

    /// A log-y panel of the trace quantity `get` against time, one curve per run with a
    /// stored trace (a failed run's curve ends with ×).
    fn panel(&self, name: &str, unit: &str, get: &dyn Fn(&Trace, usize) -> Option<f64>) -> Panel {
        Panel {
            title: format!("{name} — {}, h = {}", self.key, h_label(self.h)),
            xlabel: "time t [s]".into(),
            ylabel: unit.into(),
            log_x: false,
            log_y: true,
            equal: false,
            lines: self
                .runs
                .iter()
                .filter_map(|r| {
                    let tr = self.res.traces.get(&r.cell)?;
                    let pts = series(tr, get);
                    let failed_at = if r.ok {
                        vec![]
                    } else {
                        pts.last().copied().into_iter().collect()
                    };
                    Some(Line {
                        label: format!("{}{}", r.variant, failure_note(r)),
                        colour: self.colours.of(&r.variant),
                        points: pts,
                        stroke: Stroke::Solid,
                        failed_at,
                    })
                })
                .collect(),
        }
    }

    /// Position, velocity and acceleration residuals against time.
    fn residuals(&self) -> Figure {
        Figure {
            stem: self.stem("residuals"),
            panels: vec![
                self.panel("Position residual", "‖Φ(t,q)‖∞", &|t, i| t.pos[i]),
                self.panel("Velocity residual", "‖Φ_q v + Φ_t‖∞", &|t, i| {
                    t.vel[i]
                }),
                self.panel("Acceleration residual", "‖Φ_q a − γ‖∞", &|t, i| t.acc[i]),
            ],
            width: FIG_W,
            panel_height: 240,
        }
    }

    /// Relative energy error against time, when some run measured it.
    fn energy(&self) -> Option<Figure> {
        if !self.runs.iter().any(|r| r.max_energy_rel_error.is_some()) {
            return None;
        }
        Some(Figure {
            stem: self.stem("energy"),
            panels: vec![self.panel(
                "Relative energy error",
                "|H − H₀| / max(|H₀|, E_scale)",
                &|t, i| t.energy[i],
            )],
            width: FIG_W,
            panel_height: 280,
        })
    }

    /// Errors in q, v and λ against the exact solution over time, when some trace has one.
    fn errors(&self) -> Option<Figure> {
        let has_exact = self.runs.iter().any(|r| {
            self.res
                .traces
                .get(&r.cell)
                .is_some_and(|t| t.err[0].iter().any(|e| e.is_some()))
        });
        if !has_exact {
            return None;
        }
        Some(Figure {
            stem: self.stem("errors"),
            panels: vec![
                self.panel("Error in q", "‖q − q_exact‖∞", &|t, i| t.err[0][i]),
                self.panel("Error in v", "‖v − v_exact‖∞", &|t, i| t.err[1][i]),
                self.panel("Error in λ", "‖λ − λ_exact‖∞", &|t, i| {
                    t.err[2][i]
                }),
            ],
            width: FIG_W,
            panel_height: 240,
        })
    }

    /// The path of two-coordinate systems in the plane (equal aspect), with the constraint
    /// circle through the first stored position, when some run stored its positions.
    fn trajectory(&self) -> Option<Figure> {
        let with_q: Vec<(&Run, &Trace)> = self
            .runs
            .iter()
            .filter_map(|r| Some((*r, self.res.traces.get(&r.cell)?)))
            .filter(|(_, t)| t.q.first().is_some_and(|q| q.len() == 2))
            .collect();
        let (_, first) = with_q.first()?;
        let mut lines: Vec<Line> = with_q
            .iter()
            .map(|(r, tr)| Line {
                label: format!("{}{}", r.variant, failure_note(r)),
                colour: self.colours.of(&r.variant),
                points: tr
                    .q
                    .iter()
                    .filter(|q| q.len() == 2)
                    .map(|q| (q[0], q[1]))
                    .collect(),
                stroke: Stroke::Solid,
                failed_at: vec![],
            })
            .collect();
        if let Some(q0) = first.q.first() {
            lines.insert(0, constraint_circle(q0));
        }
        Some(Figure {
            stem: self.stem("trajectory"),
            panels: vec![Panel {
                title: format!(
                    "Trajectory in the plane — {}, h = {}",
                    self.key,
                    h_label(self.h)
                ),
                xlabel: "x [m]".into(),
                ylabel: "y [m]".into(),
                log_x: false,
                log_y: false,
                equal: true,
                lines,
            }],
            width: FIG_W,
            panel_height: FIG_W,
        })
    }
}

/// The constraint circle `|q| = |q0|` (Φ = 0 of a pendulum) through the initial position
/// `q0`, dotted grey, 361 points.
fn constraint_circle(q0: &[f64]) -> Line {
    let r0 = (q0[0] * q0[0] + q0[1] * q0[1]).sqrt();
    let circle = (0..=360)
        .map(|d| (d as f64).to_radians())
        .map(|a| (r0 * a.cos(), r0 * a.sin()))
        .collect();
    Line {
        label: format!("circle |q| = {r0:.3} (Φ = 0)"),
        colour: RGBColor(160, 160, 160),
        points: circle,
        stroke: Stroke::Dotted,
        failed_at: vec![],
    }
}

/// Most position components drawn in a positions figure.
const MAX_COMPONENTS: usize = 8;

/// The position components against time (one panel per component, one curve per method
/// variant at step `h`), for runs that stored their states (`trace_states`) of systems with
/// more than two coordinates — Andrews' seven angles, the slider crank's rigid and elastic
/// coordinates. (Two-coordinate systems get the trajectory figure instead.) A failed run's
/// curve ends with a marker at its last stored point.
fn positions(res: &Results, key: &str, h: f64, at_h: &[&Run], colours: &Colours) -> Option<Figure> {
    let dim = at_h
        .iter()
        .filter_map(|r| res.traces.get(&r.cell)?.q.first().map(Vec::len))
        .max()?;
    if dim <= 2 {
        return None;
    }
    let component = |r: &Run, c: usize| -> Vec<(f64, f64)> {
        res.traces.get(&r.cell).map_or_else(Vec::new, |tr| {
            tr.t.iter()
                .zip(&tr.q)
                .filter_map(|(t, q)| q.get(c).map(|x| (*t, *x)))
                .filter(|(_, x)| x.is_finite())
                .collect()
        })
    };
    let panels = (0..dim.min(MAX_COMPONENTS))
        .map(|c| {
            // The y-range of the runs that succeeded, widened by half its span: a diverging
            // failed run is cut where it leaves it (its marker there), so that it cannot
            // flatten every other curve.
            let (lo, hi) = at_h
                .iter()
                .filter(|r| r.ok)
                .flat_map(|r| component(r, c))
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, x)| {
                    (lo.min(x), hi.max(x))
                });
            let pad = 0.5 * (hi - lo).max(1e-12 * hi.abs().max(lo.abs()));
            let inside = |x: f64| !lo.is_finite() || (x >= lo - pad && x <= hi + pad);
            let lines = at_h
                .iter()
                .map(|r| {
                    let mut points = component(r, c);
                    let mut failed_at = vec![];
                    if !r.ok {
                        let keep = points.iter().take_while(|(_, x)| inside(*x)).count();
                        points.truncate(keep.max(1).min(points.len()));
                        failed_at = points.last().copied().into_iter().collect();
                    }
                    Line {
                        // One legend, in the first panel.
                        label: if c == 0 {
                            format!("{}{}", r.variant, failure_note(r))
                        } else {
                            String::new()
                        },
                        colour: colours.of(&r.variant),
                        points,
                        stroke: Stroke::Solid,
                        failed_at,
                    }
                })
                .collect();
            Panel {
                title: format!("Position q[{c}] — {key}, h = {}", h_label(h)),
                xlabel: "time t [s]".into(),
                ylabel: format!("q[{c}]"),
                log_x: false,
                log_y: false,
                equal: false,
                lines,
            }
        })
        .collect();
    Some(Figure {
        stem: format!("positions_{}_h{}", slug(key), h_label(h)),
        panels,
        width: FIG_W,
        panel_height: 200,
    })
}

/// Work–precision: accuracy against CPU time, log–log, one curve per method variant over
/// its step sizes; failed cells are marked at their wall time at the worst accuracy shown (an
/// accuracy they never delivered), not dropped. Accuracy is `scd` where a published
/// reference exists (higher is better), else the max position error against the exact
/// solution, else the max relative energy error (conservative problems without one).
fn work_precision(key: &str, runs: &[&Run], colours: &Colours) -> Option<Figure> {
    type Acc = (&'static str, bool, fn(&Run) -> Option<f64>);
    let candidates: [Acc; 3] = [
        ("scd: correct digits at t_ref", false, |r| r.scd),
        ("max_t ‖q − q_exact‖∞", true, |r| r.err_q),
        ("max_t |H − H₀| / scale (energy error)", true, |r| {
            r.max_energy_rel_error
        }),
    ];
    let (ylabel, log_y, get) = candidates.into_iter().find(|(_, _, g)| {
        runs.iter()
            .filter(|r| r.ok)
            .filter_map(|r| g(r))
            .any(|x| x.is_finite() && x > 0.0)
    })?;
    let variants = variants_of(runs);
    // Only worth a figure when some variant has at least two runs (a curve), and not for
    // parameter sweeps (their figures are the sweep and map figures).
    if variants.len() > MAX_CURVES
        || !variants
            .iter()
            .any(|v| runs.iter().filter(|r| &r.variant == v).count() >= 2)
    {
        return None;
    }
    let good: Vec<f64> = runs
        .iter()
        .filter(|r| r.ok)
        .filter_map(|r| get(r))
        .filter(|x| x.is_finite() && (!log_y || *x > 0.0))
        .collect();
    let top = if log_y {
        good.iter().copied().fold(0.0_f64, f64::max)
    } else {
        good.iter().copied().fold(f64::INFINITY, f64::min)
    };
    let lines = variants
        .iter()
        .map(|v| work_precision_line(v, runs, get, log_y, top, colours))
        .collect();
    Some(Figure {
        stem: format!("work_precision_{}", slug(key)),
        panels: vec![Panel {
            title: format!(
                "Work–precision — {key} (×: failed cell, drawn at the worst accuracy shown)"
            ),
            xlabel: "CPU (wall) time of the cell [s]".into(),
            ylabel: ylabel.into(),
            log_x: true,
            log_y,
            equal: false,
            lines,
        }],
        width: FIG_W,
        panel_height: 380,
    })
}

/// One variant's work–precision curve: (wall time, accuracy) of its successful runs,
/// its failed runs marked at the worst accuracy shown (`top`).
fn work_precision_line(
    v: &String, runs: &[&Run], get: fn(&Run) -> Option<f64>, log_y: bool, top: f64,
    colours: &Colours,
) -> Line {
    let mine: Vec<&&Run> = runs.iter().filter(|r| &r.variant == v).collect();
    let mut pts: Vec<(f64, f64)> = mine
        .iter()
        .filter(|r| r.ok && r.wall_seconds > 0.0)
        .filter_map(|r| {
            get(r)
                .filter(|x| x.is_finite() && (!log_y || *x > 0.0))
                .map(|y| (r.wall_seconds, y))
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let failed_at = mine
        .iter()
        .filter(|r| !r.ok && r.wall_seconds > 0.0)
        .map(|r| (r.wall_seconds, top))
        .collect();
    Line {
        label: v.clone(),
        colour: colours.of(v),
        points: pts,
        stroke: Stroke::Markers,
        failed_at,
    }
}

/// The method variants of `runs`, each once, in order of appearance.
fn variants_of(runs: &[&Run]) -> Vec<String> {
    let mut variants: Vec<String> = Vec::new();
    for r in runs {
        if !variants.contains(&r.variant) {
            variants.push(r.variant.clone());
        }
    }
    variants
}

/// An error quantity of the convergence figure: name, y-axis label, value of a run.
type Quantity = (&'static str, &'static str, fn(&Run) -> Option<f64>);

/// The quantities of the convergence figure. Index-1 problems store x in the q columns
/// and z in the λ columns (no velocities).
fn error_quantities(index1: bool) -> [Quantity; 3] {
    let (lq, ll) = if index1 {
        ("max_t ‖x − x_exact‖∞", "max_t ‖z − z_exact‖∞")
    } else {
        ("max_t ‖q − q_exact‖∞", "max_t ‖λ − λ_exact‖∞")
    };
    [
        (if index1 { "x" } else { "q" }, lq, |r| r.err_q),
        ("v", "max_t ‖v − v_exact‖∞", |r| r.err_v),
        (if index1 { "z" } else { "lambda" }, ll, |r| {
            r.final_err_lambda
        }),
    ]
}

/// Convergence: error against h, log–log, one panel per error quantity that some run has,
/// one curve per method variant with its fitted and declared slopes
/// ([`convergence_lines`]).
fn convergence(res: &Results, key: &str, runs: &[&Run], colours: &Colours) -> Figure {
    let variants = variants_of(runs);
    let index1 = runs.iter().all(|r| r.err_v.is_none());
    let panels = error_quantities(index1)
        .into_iter()
        .filter(|(_, _, get)| !runs.iter().all(|r| get(r).is_none()))
        .map(|quantity| Panel {
            title: format!(
                "Error in {} vs h — {key} (dashed: fit, dotted: declared order)",
                quantity.0
            ),
            xlabel: "step size h [s]".into(),
            ylabel: quantity.1.into(),
            log_x: true,
            log_y: true,
            equal: false,
            lines: variants
                .iter()
                .flat_map(|v| convergence_lines(res, key, runs, v, quantity, colours.of(v)))
                .collect(),
        })
        .collect();
    Figure {
        stem: format!("convergence_{}", slug(key)),
        panels,
        width: FIG_W,
        panel_height: 280,
    }
}

/// Variant `v`'s curves in the convergence panel of `quantity`: its errors against h
/// (failed runs as × at the largest error of the panel) labelled with the observed and
/// declared order, then the fitted and declared slopes of its `orders.csv` line.
fn convergence_lines(
    res: &Results, key: &str, runs: &[&Run], v: &str, (qname, _, get): Quantity, c: RGBColor,
) -> Vec<Line> {
    let mine: Vec<&Run> = runs.iter().copied().filter(|r| r.variant == v).collect();
    let mut pts: Vec<(f64, f64)> = mine
        .iter()
        .filter(|r| r.ok)
        .filter_map(|r| get(r).map(|e| (r.h, e)))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let top = runs
        .iter()
        .filter_map(|r| get(r))
        .filter(|x| x.is_finite())
        .fold(0.0_f64, f64::max);
    let failed: Vec<(f64, f64)> = mine
        .iter()
        .filter(|r| !r.ok)
        .map(|r| (r.h, if top > 0.0 { top } else { 1.0 }))
        .collect();
    let order = stored_order(res, key, &mine, v, qname);
    let mut lines = vec![Line {
        label: order_label(v, order),
        colour: c,
        points: pts.clone(),
        stroke: Stroke::Markers,
        failed_at: failed,
    }];
    if let Some(o) = order {
        lines.extend(slope_lines(o, &pts, c));
    }
    lines
}

/// The `orders.csv` line of variant `v` (runs `mine`) for quantity `qname` on problem
/// `key`; x and z are stored under the names q and lambda.
fn stored_order<'a>(
    res: &'a Results, key: &str, mine: &[&Run], v: &str, qname: &str,
) -> Option<&'a Order> {
    let stored_q = match qname {
        "x" => "q",
        "z" => "lambda",
        other => other,
    };
    res.orders.iter().find(|o| {
        o.problem_params
            == mine
                .first()
                .map(|r| r.problem_params.clone())
                .unwrap_or_default()
            && o.variant == v
            && o.quantity == stored_q
            && key.starts_with(&o.problem)
    })
}

/// A variant's legend in a convergence panel: observed and declared order, the reason
/// there is no fit, or the bare name without an `orders.csv` line.
fn order_label(v: &str, order: Option<&Order>) -> String {
    match order {
        Some(o) => match o.observed {
            Some(p) => format!(
                "{v}: observed {p:.2}, declared {}",
                o.expected.map_or("—".into(), |e| format!("{e}"))
            ),
            None => format!("{v}: no fit ({})", o.note),
        },
        None => v.to_string(),
    }
}

/// The fitted (dashed) and declared (dotted) slopes of `o` over its fit range, through
/// the log–log centroid of the points `pts` inside that range (none without a fit or
/// without points in the range).
fn slope_lines(o: &Order, pts: &[(f64, f64)], c: RGBColor) -> Vec<Line> {
    let (Some(p), Some(h0), Some(h1)) = (o.observed, o.h_min, o.h_max) else {
        return Vec::new();
    };
    let inr: Vec<&(f64, f64)> = pts
        .iter()
        .filter(|(h, _)| *h >= h0 * (1.0 - 1e-9) && *h <= h1 * (1.0 + 1e-9))
        .collect();
    if inr.is_empty() {
        return Vec::new();
    }
    let n = inr.len() as f64;
    let mx = inr.iter().map(|q| q.0.log10()).sum::<f64>() / n;
    let my = inr.iter().map(|q| q.1.log10()).sum::<f64>() / n;
    let segment = |slope: f64, stroke: Stroke| {
        let at = |h: f64| 10f64.powf(my + slope * (h.log10() - mx));
        Line {
            label: String::new(),
            colour: c,
            points: vec![(h0, at(h0)), (h1, at(h1))],
            stroke,
            failed_at: vec![],
        }
    };
    let mut lines = vec![segment(p, Stroke::Dashed)];
    if let Some(d) = o.expected {
        lines.push(segment(d, Stroke::Dotted));
    }
    lines
}

/// Parameter sweeps: for every method swept over a numeric parameter (≥ 3 values at one
/// h), max position residual, max energy error and max error in q against the
/// parameter; failed cells are drawn as × at the top of the panel, never dropped.
pub fn sweeps(res: &Results, dir: &Path, colours: &Colours) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    for key in res.problem_keys() {
        let hs = res.hs(&key);
        for &h in &hs {
            for (method, mine) in res.runs_by_method(&key, h) {
                let Some(name) = swept_parameter(&mine, hs.len()) else {
                    continue;
                };
                let sweep = Sweep {
                    key: &key,
                    h,
                    method,
                    name: &name,
                    runs: &mine,
                    colour: colours.of(method),
                };
                if let Some(fig) = sweep.figure() {
                    files.extend(render(&fig, dir)?);
                }
            }
        }
    }
    Ok(files)
}

/// The one method parameter that `runs` (one method at one h) sweep over, if it takes
/// three or more values and no other parameter does (two or more swept: the parameter
/// map). `n_hs` is the number of step sizes of the problem: a handful of discrete variants
/// (stages = 1, 2, 3) swept together with three or more step sizes is no sweep — the
/// convergence figure already compares them at every h; a sweep figure per h would repeat
/// it, flattened.
fn swept_parameter(runs: &[&Run], n_hs: usize) -> Option<String> {
    let names = param_names(runs);
    let swept: Vec<&String> = names
        .iter()
        .filter(|n| distinct_values(runs, n, false) >= 3)
        .collect();
    let [name] = swept.as_slice() else {
        return None;
    };
    if distinct_values(runs, name, false) <= 3 && n_hs >= 3 {
        return None;
    }
    Some(name.to_string())
}

/// A metric of the sweep figure: panel title, y-axis label, value of a run.
type Metric = (&'static str, &'static str, fn(&Run) -> Option<f64>);

/// The metrics of the sweep figure, one panel each.
const SWEEP_METRICS: [Metric; 3] = [
    ("Max position residual", "max ‖Φ‖∞", |r| {
        r.max_pos_residual
    }),
    (
        "Max relative energy error",
        "max |H − H₀| / E_scale",
        |r| r.max_energy_rel_error,
    ),
    ("Max error in q", "max_t ‖q − q_exact‖∞", |r| {
        r.err_q
    }),
];

/// The runs of one method at one step size over its swept parameter `name`.
struct Sweep<'a> {
    key: &'a str,
    h: f64,
    method: &'a str,
    name: &'a str,
    runs: &'a [&'a Run],
    colour: RGBColor,
}

impl Sweep<'_> {
    /// The value of the swept parameter in a run.
    fn value(&self, r: &Run) -> Option<f64> {
        r.method_param(self.name)
    }

    /// The sweep figure: one panel per metric that some successful run has (none if no
    /// metric has any); x logarithmic for positive values spanning more than 100×.
    fn figure(&self) -> Option<Figure> {
        let mut vals: Vec<f64> = self.runs.iter().filter_map(|r| self.value(r)).collect();
        vals.sort_by(f64::total_cmp);
        vals.dedup();
        let positive = vals.iter().all(|v| *v > 0.0);
        let log_x = positive && vals[vals.len() - 1] / vals[0] > 100.0;
        let panels: Vec<Panel> = SWEEP_METRICS
            .iter()
            .filter_map(|m| self.panel(*m, log_x))
            .collect();
        if panels.is_empty() {
            return None;
        }
        Some(Figure {
            stem: format!(
                "sweep_{}_{}_{}_h{}",
                slug(self.key),
                slug(self.method),
                slug(self.name),
                h_label(self.h)
            ),
            panels,
            width: FIG_W,
            panel_height: 240,
        })
    }

    /// The panel of one metric against the parameter (None without a successful run
    /// that has it): successful runs as markers, failed ones as × at the panel's top.
    fn panel(&self, (title, ylabel, get): Metric, log_x: bool) -> Option<Panel> {
        let mut pts: Vec<(f64, f64)> = self
            .runs
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| Some((self.value(r)?, get(r)?)))
            .collect();
        if pts.is_empty() {
            return None;
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let top = pts.iter().map(|p| p.1).fold(0.0_f64, f64::max);
        let failed: Vec<(f64, f64)> = self
            .runs
            .iter()
            .filter(|r| !r.ok)
            .filter_map(|r| Some((self.value(r)?, if top > 0.0 { top } else { 1.0 })))
            .collect();
        let (method, nf) = (self.method, failed.len());
        Some(Panel {
            title: format!(
                "{title} vs {} — {method} on {}, h = {}",
                self.name,
                self.key,
                h_label(self.h)
            ),
            xlabel: self.name.to_string(),
            ylabel: ylabel.into(),
            log_x,
            log_y: true,
            equal: false,
            lines: vec![Line {
                label: if nf > 0 {
                    format!("{method} ({nf} failed: ×)")
                } else {
                    method.to_string()
                },
                colour: self.colour,
                points: pts,
                stroke: Stroke::Markers,
                failed_at: failed,
            }],
        })
    }
}

/// Numeric problem parameters of a run (`problem_params` JSON).
fn problem_params(r: &Run) -> Vec<(String, f64)> {
    serde_json::from_str::<serde_json::Value>(&r.problem_params)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .map(|o| {
            o.into_iter()
                .filter_map(|(k, v)| v.as_f64().map(|x| (k, x)))
                .collect()
        })
        .unwrap_or_default()
}

/// Least-squares slope of `log y` against `log x` (None below two points), by the
/// workspace's one line fit.
fn loglog_slope(points: &[(f64, f64)]) -> Option<f64> {
    let (x, y): (Vec<f64>, Vec<f64>) = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .unzip();
    let slope = driftlab_core::fit::fit_line(&x, &y).0;
    (x.len() >= 2 && slope.is_finite()).then_some(slope)
}

/// Scaling with problem size: where one numeric problem parameter of a problem is a size
/// (three or more positive integers spanning a decade: links of a chain), the method's
/// step time per step (metric evaluation excluded), the
/// largest position residual and the measured peak heap per unit of size against it, log–log, one curve per method variant at each h,
/// with the fitted slope in the legend (1 means cost linear in the size). Failed runs are
/// marked at the largest time per step shown.
pub fn scaling(res: &Results, dir: &Path, colours: &Colours) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    for (problem, name, runs) in sized_runs(res) {
        let mut hs: Vec<f64> = runs.iter().map(|r| r.h).collect();
        hs.sort_by(f64::total_cmp);
        hs.dedup_by(|a, b| (*a - *b).abs() <= 1e-12 * b.abs());
        for h in hs {
            let fig = Scaling::at(problem, &name, h, &runs, colours).figure();
            files.extend(render(&fig, dir)?);
        }
    }
    Ok(files)
}

/// Per problem with a size parameter (see [`size_parameter`]): the problem, the
/// parameter's name and its runs — one point per size: the cells with the fewest faer
/// threads, of the first batch of a side-by-side sweep (the thread-scaling figure draws
/// the rest). Shared by the scaling figure and the report's cost-against-size table.
pub(crate) fn sized_runs(res: &Results) -> Vec<(&str, String, Vec<&Run>)> {
    let mut problems: Vec<&str> = res.runs.iter().map(|r| r.problem.as_str()).collect();
    problems.sort_unstable();
    problems.dedup();
    let fewest = res.runs.iter().map(|r| r.threads).min().unwrap_or(1);
    let first_batch = res.runs.iter().filter_map(|r| r.sweep_threads).min();
    problems
        .into_iter()
        .filter_map(|problem| {
            let runs: Vec<&Run> = res
                .runs
                .iter()
                .filter(|r| r.problem == problem)
                .filter(|r| r.threads == fewest && r.sweep_threads == first_batch)
                .collect();
            size_parameter(&runs).map(|name| (problem, name, runs))
        })
        .collect()
}

/// The numeric problem parameter `name` of a run.
pub(crate) fn problem_param(r: &Run, name: &str) -> Option<f64> {
    problem_params(r)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, x)| x)
}

/// The one problem parameter of `runs` that is a size: three or more positive integer
/// values spanning at least a decade (not a physical parameter such as a restitution
/// coefficient or an angle). None when no parameter, or more than one, is.
fn size_parameter(runs: &[&Run]) -> Option<String> {
    let mut names: Vec<String> = runs
        .iter()
        .flat_map(|r| problem_params(r).into_iter().map(|(k, _)| k))
        .collect();
    names.sort();
    names.dedup();
    let is_size = |name: &str| {
        let mut v: Vec<f64> = runs.iter().filter_map(|r| problem_param(r, name)).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v.len() >= 3
            && v.iter().all(|x| *x >= 1.0 && x.fract() == 0.0)
            && v[v.len() - 1] >= 10.0 * v[0]
    };
    let swept: Vec<&String> = names.iter().filter(|n| is_size(n)).collect();
    let [name] = swept.as_slice() else {
        return None;
    };
    Some(name.to_string())
}

/// The method's own time per step (metrics and observers excluded).
pub(crate) fn step_time(r: &Run) -> f64 {
    r.step_seconds / r.steps.max(1) as f64
}

/// The runs of one problem at one step size against its size parameter `name`.
struct Scaling<'a> {
    problem: &'a str,
    name: &'a str,
    h: f64,
    runs: Vec<&'a Run>,
    /// Method variants, sorted, each once.
    variants: Vec<&'a str>,
    /// The largest time per step of a successful run (where failed runs are marked).
    top: f64,
    colours: &'a Colours,
}

impl<'a> Scaling<'a> {
    /// The runs of `runs` at step `h`.
    fn at(problem: &'a str, name: &'a str, h: f64, runs: &[&'a Run], colours: &'a Colours) -> Self {
        let at_h: Vec<&Run> = runs
            .iter()
            .copied()
            .filter(|r| (r.h - h).abs() <= 1e-12 * h)
            .collect();
        let mut variants: Vec<&str> = at_h.iter().map(|r| r.variant.as_str()).collect();
        variants.sort_unstable();
        variants.dedup();
        let top = at_h
            .iter()
            .filter(|r| r.ok)
            .map(|r| step_time(r))
            .fold(0.0_f64, f64::max);
        Self {
            problem,
            name,
            h,
            runs: at_h,
            variants,
            top,
            colours,
        }
    }

    /// The scaling figure: step time per step (with fitted slopes), largest position
    /// residual and peak heap bytes per unit of size against the size.
    fn figure(&self) -> Figure {
        Figure {
            stem: format!(
                "scaling_{}_{}_h{}",
                slug(self.problem),
                slug(self.name),
                h_label(self.h)
            ),
            panels: vec![
                self.panel(
                    "Step time per step (× failed)",
                    "seconds per step",
                    &|r| Some(step_time(r)),
                    true,
                ),
                self.panel(
                    "Largest position residual",
                    "max ‖Φ‖∞",
                    &|r| r.max_pos_residual,
                    false,
                ),
                self.panel(
                    "Measured peak heap per unit of size",
                    "peak heap bytes / size",
                    &|r| Some(r.peak_heap_bytes? / problem_param(r, self.name)?),
                    false,
                ),
            ],
            width: FIG_W,
            panel_height: 280,
        }
    }

    /// A log–log panel of `get` against the size, one curve per variant.
    fn panel(
        &self, title: &str, ylabel: &str, get: &dyn Fn(&Run) -> Option<f64>, slope: bool,
    ) -> Panel {
        Panel {
            title: format!("{title} — {}, h = {}", self.problem, h_label(self.h)),
            xlabel: format!("problem size `{}`", self.name),
            ylabel: ylabel.into(),
            log_x: true,
            log_y: true,
            equal: false,
            lines: self
                .variants
                .iter()
                .map(|v| self.curve(v, get, slope))
                .collect(),
        }
    }

    /// Variant `v`'s curve of `get` against the size (positive finite values of successful
    /// runs; failed runs as × at [`Scaling::top`]), with the fitted log–log slope in the
    /// legend when `slope`.
    fn curve(&self, v: &str, get: &dyn Fn(&Run) -> Option<f64>, slope: bool) -> Line {
        let size = |r: &Run| problem_param(r, self.name);
        let mine: Vec<&Run> = self
            .runs
            .iter()
            .copied()
            .filter(|r| r.variant == v)
            .collect();
        let mut points: Vec<(f64, f64)> = mine
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| Some((size(r)?, get(r)?)))
            .filter(|(_, y)| y.is_finite() && *y > 0.0)
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let failed_at = mine
            .iter()
            .filter(|r| !r.ok)
            .filter_map(|r| size(r).map(|x| (x, self.top.max(f64::MIN_POSITIVE))))
            .collect();
        let fitted = if slope {
            loglog_slope(&points).map_or(String::new(), |s| format!(" (slope {s:.2})"))
        } else {
            String::new()
        };
        Line {
            label: format!("{v}{fitted}"),
            colour: self.colours.of(v),
            points,
            stroke: Stroke::Markers,
            failed_at,
        }
    }
}

#[cfg(test)]
mod scaling_tests {
    use super::loglog_slope;

    #[test]
    fn loglog_slope_recovers_a_power_law() {
        let pts: Vec<(f64, f64)> = [10.0, 100.0, 1000.0, 1e4]
            .iter()
            .map(|x| (*x, 3e-7 * x * x))
            .collect();
        let s = loglog_slope(&pts).expect("four points");
        assert!((s - 2.0).abs() < 1e-12, "slope {s}");
        // Non-positive values are skipped; one point left is no slope.
        assert_eq!(loglog_slope(&[(10.0, 1.0), (100.0, 0.0)]), None);
    }
}
