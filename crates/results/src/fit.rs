//! The one least-squares line fit of the workspace: observed orders (runner) and fitted
//! slopes in figures (report) both use it.

/// Least-squares line through `(x, y)`: `(slope, r²)`. The slope is NaN for fewer than two
/// distinct `x`; r² is 1 when `y` is constant.
pub fn fit_line(x: &[f64], y: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    let syy: f64 = y.iter().map(|b| (b - my) * (b - my)).sum();
    let slope = sxy / sxx;
    let r2 = if syy > 0.0 {
        (sxy * sxy) / (sxx * syy)
    } else {
        1.0
    };
    (slope, r2)
}

#[cfg(test)]
mod tests {
    use super::fit_line;

    #[test]
    fn exact_line_has_its_slope_and_unit_r2() {
        let x = [0.0, 1.0, 2.0, 3.0];
        let y: Vec<f64> = x.iter().map(|v| 2.5 * v - 1.0).collect();
        let (s, r2) = fit_line(&x, &y);
        assert!(
            (s - 2.5).abs() < 1e-14 && (r2 - 1.0).abs() < 1e-14,
            "{s} {r2}"
        );
        assert!(fit_line(&[1.0], &[2.0]).0.is_nan());
    }
}
