//! Parameter maps: for a method swept over two numeric parameters at one step size, a
//! grid of cells coloured by `log10` of the max position and velocity residuals, failed
//! (diverged) cells marked ×, and the spec's reference curves (e.g. Baumgarte's
//! α, β < 1/(2h)) drawn on top.

use crate::data::{distinct_values, param_names, Annotation, Results, Run};
use crate::error::ReportError;
use crate::figures::write_png_svg_pdf;
use crate::style::{slug, AXIS_PX, FAMILY, LEGEND_PX, TICK_PX};
use plotters::coord::combinators::LogCoord;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// A viridis-like ramp (5 stops), `s ∈ [0, 1]`.
fn ramp(s: f64) -> RGBColor {
    const STOPS: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let s = s.clamp(0.0, 1.0) * 4.0;
    let i = (s.floor() as usize).min(3);
    let f = s - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |x: f64, y: f64| (x + f * (y - x)).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

struct Map<'a> {
    title: String,
    xname: String,
    yname: String,
    h: f64,
    cells: Vec<(&'a Run, f64, f64)>,
    annotations: Vec<&'a Annotation>,
}

fn log_range(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    (lo / 1.6, hi * 1.6)
}

/// The chart of one map panel: log–log in both parameters.
type MapChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>;

/// The plotted window of a map: parameter ranges in x and y, and the `log10` range of the
/// panel's quantity over the successful cells (the colour scale).
#[derive(Clone, Copy)]
struct Window {
    x: (f64, f64),
    y: (f64, f64),
    v: (f64, f64),
}

impl Window {
    /// The window of `map` for the quantity `get`.
    fn of(map: &Map<'_>, get: fn(&Run) -> Option<f64>) -> Self {
        let v = map
            .cells
            .iter()
            .filter(|c| c.0.ok())
            .filter_map(|c| get(c.0))
            .filter(|v| *v > 0.0)
            .map(f64::log10)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(x), b.max(x))
            });
        Self {
            x: log_range(map.cells.iter().map(|c| c.1)),
            y: log_range(map.cells.iter().map(|c| c.2)),
            v,
        }
    }
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>, map: &Map<'_>, what: &str, get: fn(&Run) -> Option<f64>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let w = Window::of(map, get);
    let ((x0, x1), (y0, y1)) = (w.x, w.y);
    let (plot, bar) = area.split_horizontally(area.dim_in_pixel().0.saturating_sub(96));
    let plot = crate::style::titled(&plot, &format!("{what}, × = failed"), 10)?;
    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .x_label_area_size(48)
        .y_label_area_size(78)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(map.xname.as_str())
        .y_desc(map.yname.as_str())
        .label_style((FAMILY, TICK_PX))
        .axis_desc_style((FAMILY, AXIS_PX))
        .draw()
        .map_err(e)?;
    draw_cells(&mut chart, map, get, w)?;
    draw_annotations(&mut chart, map, w)?;
    colour_bar(&bar, w.v, &format!("log10 {what}"))
}

/// The colour bar of a map panel: the ramp from `v.0` (dark) to `v.1` (yellow) in 48
/// bands, with its `log10` tick labels and `label` along it.
fn colour_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>, v: (f64, f64), label: &str,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let (lo, hi) = if v.1 > v.0 && v.0.is_finite() {
        v
    } else if v.0.is_finite() {
        (v.0 - 0.5, v.0 + 0.5)
    } else {
        return Ok(()); // no successful cell: nothing to scale
    };
    let mut chart = ChartBuilder::on(area)
        .margin_top(40)
        .margin_bottom(58)
        .margin_right(6)
        .y_label_area_size(62)
        .build_cartesian_2d(0.0..1.0, lo..hi)
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .disable_x_axis()
        .disable_y_mesh()
        .y_desc(label)
        .y_label_formatter(&|x| format!("{x:.1}"))
        .label_style((FAMILY, TICK_PX))
        .axis_desc_style((FAMILY, AXIS_PX))
        .draw()
        .map_err(e)?;
    const BANDS: usize = 48;
    chart
        .draw_series((0..BANDS).map(|k| {
            let (a, b) = (k as f64 / BANDS as f64, (k + 1) as f64 / BANDS as f64);
            let y = |s: f64| lo + s * (hi - lo);
            Rectangle::new([(0.0, y(a)), (1.0, y(b))], ramp((a + b) / 2.0).filled())
        }))
        .map_err(e)?;
    Ok(())
}

/// The cells of a map: a failed cell as a black ×, a successful one as a rectangle
/// coloured by where `log10` of its value lies in the window's colour scale.
fn draw_cells<'a, DB: DrawingBackend + 'a>(
    chart: &mut MapChart<'a, DB>, map: &Map<'_>, get: fn(&Run) -> Option<f64>, w: Window,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let (vmin, vmax) = w.v;
    let side = 14;
    for (r, x, y) in &map.cells {
        if !r.ok() {
            chart
                .draw_series(std::iter::once(Cross::new(
                    (*x, *y),
                    8,
                    BLACK.stroke_width(3),
                )))
                .map_err(e)?;
            continue;
        }
        let Some(v) = get(r).filter(|v| *v > 0.0) else {
            continue;
        };
        let s = if vmax > vmin {
            (v.log10() - vmin) / (vmax - vmin)
        } else {
            0.5
        };
        let c = ramp(s);
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((*x, *y))
                    + Rectangle::new([(-side, -side / 2), (side, side / 2)], c.filled()),
            ))
            .map_err(e)?;
    }
    Ok(())
}

/// The spec's reference curves over a map, dashed, with a legend when there are any.
fn draw_annotations<'a, DB: DrawingBackend + 'a>(
    chart: &mut MapChart<'a, DB>, map: &Map<'_>, w: Window,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    for (k, a) in map.annotations.iter().enumerate() {
        let style = [
            RGBColor(213, 94, 0),
            RGBColor(204, 121, 167),
            RGBColor(0, 0, 0),
            RGBColor(0, 114, 178),
        ][k % 4];
        let pts = annotation_points(a, map.h, w);
        if pts.len() >= 2 {
            chart
                .draw_series(DashedLineSeries::new(pts, 10, 6, style.stroke_width(3)))
                .map_err(e)?
                .label(a.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], style.stroke_width(3))
                });
        }
    }
    if !map.annotations.is_empty() {
        chart
            .configure_series_labels()
            .label_font((FAMILY, LEGEND_PX))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

/// Points of the curve `x^x_exp · y^y_exp · h^h_exp = value` inside the window: a
/// vertical line when `y_exp = 0`, else 101 points log-spaced in x, clipped to the y range.
fn annotation_points(a: &Annotation, h: f64, w: Window) -> Vec<(f64, f64)> {
    let ((x0, x1), (y0, y1)) = (w.x, w.y);
    if a.y_exp == 0.0 {
        // x^a h^c = value → vertical line.
        let x = (a.value / h.powf(a.h_exp)).powf(1.0 / a.x_exp);
        vec![(x, y0), (x, y1)]
    } else {
        (0..=100)
            .map(|i| x0 * (x1 / x0).powf(i as f64 / 100.0))
            .map(|x| {
                (
                    x,
                    (a.value / (x.powf(a.x_exp) * h.powf(a.h_exp))).powf(1.0 / a.y_exp),
                )
            })
            .filter(|(_, y)| *y >= y0 && *y <= y1)
            .collect()
    }
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, map: &Map<'_>) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|x| x.to_string())?;
    let root = crate::style::titled(&root, &map.title, 4)?;
    let areas = root.split_evenly((2, 1));
    draw_panel(&areas[0], map, "max ‖Φ‖∞", |r| r.max_pos_residual)?;
    draw_panel(&areas[1], map, "max ‖Φ_q v + Φ_t‖∞", |r| {
        r.max_vel_residual
    })?;
    root.present().map_err(|x| x.to_string())
}

/// Every two-parameter map of an experiment.
pub fn maps(res: &Results, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let mut files = Vec::new();
    for key in res.problem_keys() {
        for h in res.hs(&key) {
            for (method, mine) in res.runs_by_method(&key, h) {
                let names = param_names(&mine);
                let swept: Vec<&String> = names
                    .iter()
                    .filter(|n| distinct_values(&mine, n, true) >= 3)
                    .collect();
                if swept.len() != 2 {
                    continue;
                }
                let map = map_of(res, &key, h, method, &mine, &swept);
                let stem = format!(
                    "map_{}_{}_{}_{}_h{h:e}",
                    slug(&key),
                    slug(method),
                    slug(&map.xname),
                    slug(&map.yname)
                );
                files.extend(write_png_svg_pdf(
                    &stem,
                    (crate::style::FIG_W + 96, 880),
                    dir,
                    |a| draw(a, &map),
                    |a| draw(a, &map),
                )?);
            }
        }
    }
    Ok(files)
}

/// The map of `method`'s runs `mine` at step `h` over its two swept parameters: x is the
/// parameter named first by an annotation, else the alphabetically second.
fn map_of<'a>(
    res: &'a Results, key: &str, h: f64, method: &str, mine: &[&'a Run], swept: &[&String],
) -> Map<'a> {
    let (xn, yn) = match res
        .annotations
        .iter()
        .find(|a| swept.contains(&&a.x) && swept.contains(&&a.y))
    {
        Some(a) => (a.x.clone(), a.y.clone()),
        None => (swept[1].clone(), swept[0].clone()),
    };
    let cells: Vec<(&Run, f64, f64)> = mine
        .iter()
        .filter_map(|r| Some((*r, r.method_param(&xn)?, r.method_param(&yn)?)))
        .collect();
    let annotations = res
        .annotations
        .iter()
        .filter(|a| a.x == xn && a.y == yn)
        .collect();
    Map {
        title: format!("{method} on {key}, h = {h:e}"),
        xname: xn,
        yname: yn,
        h,
        cells,
        annotations,
    }
}
