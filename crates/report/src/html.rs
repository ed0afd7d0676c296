//! `index.html`: the report for the screen — one self-contained page (no network: the
//! style and the table sorter are inline, the figures are the SVG files beside it), with
//! a table of contents, the same sections as the PDF, every per-run figure of every
//! experiment, and tables that sort on a click of their header.

use crate::book::esc;
use crate::error::ReportError;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Style: readable measure, compact tables with a sticky header, figures in a grid.
const STYLE: &str = "body{font-family:'DejaVu Sans',system-ui,sans-serif;margin:0;display:flex;color:#111;line-height:1.4}\
nav{position:sticky;top:0;height:100vh;overflow:auto;min-width:16em;max-width:20em;padding:1em;background:#f5f5f5;font-size:13px;box-sizing:border-box}\
nav a{display:block;color:#124;text-decoration:none;margin:.1em 0}nav a.l2{padding-left:1em;font-size:12px}\
main{padding:1em 2em;max-width:75em;min-width:0}\
table{border-collapse:collapse;font-size:12px;margin:.5em 0 1.2em;display:block;overflow:auto;max-height:40em}\
th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}\
th{background:#e8eef5;position:sticky;top:0;cursor:pointer;user-select:none}th.asc:after{content:' ▲'}th.desc:after{content:' ▼'}\
pre{background:#f7f7f7;padding:.5em;overflow:auto;font-size:12px}\
.grid1,.grid2{display:grid;gap:1em}.grid2{grid-template-columns:repeat(auto-fill,minmax(28em,1fr))}\
figure{margin:0}figure img{width:100%;height:auto;border:1px solid #eee}figcaption{font-size:12px;color:#333}\
footer{font-size:11px;color:#555;margin-top:3em}";

/// Sorting: a click on a header sorts its table's rows by that column — as numbers when
/// both cells start with one, else as text — and a second click reverses the order. The
/// script marks `<body data-sortable="ready">` when it has run, which the browser check
/// (scripts/html-check.sh) looks for.
const SORTER: &str = "document.querySelectorAll('table.sortable th').forEach(function(th){\
th.addEventListener('click',function(){var table=th.closest('table');var body=table.tBodies[0];\
var col=Array.prototype.indexOf.call(th.parentNode.children,th);var asc=!th.classList.contains('asc');\
table.querySelectorAll('th').forEach(function(h){h.classList.remove('asc','desc');});th.classList.add(asc?'asc':'desc');\
var rows=Array.prototype.slice.call(body.rows);\
rows.sort(function(a,b){var x=a.cells[col]?a.cells[col].textContent:'';var y=b.cells[col]?b.cells[col].textContent:'';\
var nx=parseFloat(x),ny=parseFloat(y);var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);return asc?c:-c;});\
rows.forEach(function(r){body.appendChild(r);});});});\
document.body.dataset.sortable='ready';";

/// Write `index.html` under `root`: the contents from `toc` (level, title, PDF page; the
/// `k`-th entry links to heading anchor `k`), then `body`, then `footer`.
pub fn write(
    root: &Path, toc: &[(usize, String, usize)], body: &str, footer: &str,
) -> Result<PathBuf, ReportError> {
    let mut out = String::with_capacity(body.len() + 16 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
         <title>driftlab report</title><style>{STYLE}</style></head><body>\n<nav><b>Contents</b>\n"
    );
    for (k, (level, title, page)) in toc.iter().enumerate() {
        let at = if *page > 0 {
            format!(" (p. {page})")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<a class=\"l{level}\" href=\"#{}\">{}{at}</a>",
            crate::book::anchor(k),
            esc(title)
        );
    }
    out.push_str("</nav>\n<main>\n");
    out.push_str(body);
    let _ = write!(
        out,
        "<footer>{}</footer>\n</main>\n<script>{SORTER}</script>\n</body></html>\n",
        esc(footer)
    );
    let path = root.join("index.html");
    std::fs::write(&path, out).map_err(|e| ReportError::io(&path, e))?;
    Ok(path)
}
