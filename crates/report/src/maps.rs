//! Parameter maps: for a method swept over two numeric parameters at one step size, a
//! grid of cells coloured by `log10` of the max position and velocity residuals, failed
//! (diverged) cells marked ×, and the spec's reference curves (e.g. Baumgarte's
//! α, β < 1/(2h)) drawn on top.

use crate::data::{Annotation, Results, Run};
use crate::error::ReportError;
use crate::pdf::svg_to_pdf;
use crate::style::{slug, FAMILY};
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

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    map: &Map<'_>,
    what: &str,
    get: fn(&Run) -> Option<f64>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let vals: Vec<f64> = map
        .cells
        .iter()
        .filter(|c| c.0.ok)
        .filter_map(|c| get(c.0))
        .filter(|v| *v > 0.0)
        .map(f64::log10)
        .collect();
    let (vmin, vmax) = vals
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    let (x0, x1) = log_range(map.cells.iter().map(|c| c.1));
    let (y0, y1) = log_range(map.cells.iter().map(|c| c.2));
    let title = format!(
        "{what}: log10 from {vmin:.1} (dark) to {vmax:.1} (yellow), × = failed — {}",
        map.title
    );
    let mut chart = ChartBuilder::on(area)
        .caption(title, (FAMILY, 16))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(70)
        .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(map.xname.as_str())
        .y_desc(map.yname.as_str())
        .label_style((FAMILY, 13))
        .axis_desc_style((FAMILY, 14))
        .draw()
        .map_err(e)?;
    let side = 14;
    for (r, x, y) in &map.cells {
        if !r.ok {
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
    for (k, a) in map.annotations.iter().enumerate() {
        let style = [
            RGBColor(213, 94, 0),
            RGBColor(204, 121, 167),
            RGBColor(0, 0, 0),
            RGBColor(0, 114, 178),
        ][k % 4];
        let pts: Vec<(f64, f64)> = if a.y_exp == 0.0 {
            // x^a h^c = value → vertical line.
            let x = (a.value / map.h.powf(a.h_exp)).powf(1.0 / a.x_exp);
            vec![(x, y0), (x, y1)]
        } else {
            (0..=100)
                .map(|i| x0 * (x1 / x0).powf(i as f64 / 100.0))
                .map(|x| {
                    (
                        x,
                        (a.value / (x.powf(a.x_exp) * map.h.powf(a.h_exp))).powf(1.0 / a.y_exp),
                    )
                })
                .filter(|(_, y)| *y >= y0 && *y <= y1)
                .collect()
        };
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
            .label_font((FAMILY, 13))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .draw()
            .map_err(e)?;
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, map: &Map<'_>) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|x| x.to_string())?;
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
            let runs: Vec<&Run> = res
                .runs
                .iter()
                .filter(|r| r.problem_key() == key && (r.h - h).abs() <= 1e-12 * h)
                .collect();
            let mut methods: Vec<&str> = runs.iter().map(|r| r.method.as_str()).collect();
            methods.sort_unstable();
            methods.dedup();
            for method in methods {
                let mine: Vec<&Run> = runs
                    .iter()
                    .copied()
                    .filter(|r| r.method == method)
                    .collect();
                let mut names: Vec<String> = mine
                    .iter()
                    .flat_map(|r| r.method_params().into_iter().map(|(k, _)| k))
                    .collect();
                names.sort();
                names.dedup();
                let swept: Vec<&String> = names
                    .iter()
                    .filter(|n| {
                        let mut v: Vec<f64> = mine
                            .iter()
                            .filter_map(|r| r.method_param(n))
                            .filter(|x| *x > 0.0)
                            .collect();
                        v.sort_by(f64::total_cmp);
                        v.dedup();
                        v.len() >= 3
                    })
                    .collect();
                if swept.len() != 2 {
                    continue;
                }
                // x: the parameter named first by an annotation, else the alphabetically second.
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
                let map = Map {
                    title: format!("{method} on {key}, h = {h:e}"),
                    xname: xn.clone(),
                    yname: yn.clone(),
                    h,
                    cells,
                    annotations: res
                        .annotations
                        .iter()
                        .filter(|a| a.x == xn && a.y == yn)
                        .collect(),
                };
                let stem = format!(
                    "map_{}_{}_{}_{}_h{h:e}",
                    slug(&key),
                    slug(method),
                    slug(&xn),
                    slug(&yn)
                );
                let size = (1000, 1300);
                let err = |m: String| ReportError::Draw {
                    figure: stem.clone(),
                    message: m,
                };
                let png = dir.join(format!("{stem}.png"));
                draw(BitMapBackend::new(&png, size).into_drawing_area(), &map).map_err(err)?;
                let mut svg = String::new();
                draw(
                    SVGBackend::with_string(&mut svg, size).into_drawing_area(),
                    &map,
                )
                .map_err(err)?;
                let svg_path = dir.join(format!("{stem}.svg"));
                std::fs::write(&svg_path, &svg).map_err(|e| ReportError::io(&svg_path, e))?;
                let pdf = dir.join(format!("{stem}.pdf"));
                svg_to_pdf(&svg, &pdf)?;
                files.extend([png, svg_path, pdf]);
            }
        }
    }
    Ok(files)
}
