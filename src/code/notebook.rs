//! Jupyter notebooks (`.ipynb`): runs the Python call extraction of [`super::python`] over each
//! code cell, so a notebook that downloads an unpinned model or calls `torch.load` is reported
//! like a `.py` file would be.
//!
//! Notebooks are where model repositories keep their "quick start", and users run them cell by
//! cell. Cells are scanned in order with the imports and module-level constants of the cells
//! before them (`import torch as t` in cell 1 resolves `t.load` in cell 4). IPython lines that are
//! not Python (`%magic`, `!shell`, `x = !cmd`, `obj?`) are blanked, not removed, so line numbers
//! within a cell stay true. Positions are reported as a cell index plus the line and column
//! within that cell's source; a line number in the `.ipynb` JSON itself is not computed.

use std::ops::Range;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::python::{self as code, Bindings, CodeItem};
use crate::model::problem::Problem;

pub mod cells;

/// Caps on the work done for one notebook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest notebook accepted, in bytes (the caller also checks before reading).
    pub max_notebook_bytes: usize,
    /// Cells examined; cells past this are not scanned and the report is truncated.
    pub max_cells: usize,
    /// Wall-clock cap on parsing all cells, in milliseconds: each cell also has
    /// `code.max_parse_millis`, and ten thousand small cells must not add up to hours.
    pub max_total_parse_millis: u64,
    /// Limits for each cell's Python scan; `max_items` also caps the whole notebook.
    pub code: code::Limits,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_notebook_bytes: 32 * 1024 * 1024,
            max_cells: 10_000,
            max_total_parse_millis: 20_000,
            code: code::Limits::default(),
        }
    }
}

/// What a notebook's code cells contain.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NotebookReport {
    /// Kernel language from the metadata, if stated. Cells of a non-Python notebook are not
    /// scanned.
    pub language: Option<String>,
    /// Code cells scanned as Python.
    pub cells_scanned: usize,
    /// Items found, in cell order.
    pub items: Vec<NotebookItem>,
    /// 0-based indexes of cells where tree-sitter recovered from syntax errors.
    pub cells_with_syntax_errors: Vec<usize>,
    /// A limit stopped the scan early; `truncated_by` names it.
    pub truncated: bool,
    /// `cell-budget`, `item-budget`, `notebook-timeout`, or the first limit sub-code a cell's
    /// scan reported.
    pub truncated_by: Option<&'static str>,
}

/// One item found in a cell. `item.line` and `item.column` are 1-based within the cell's source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotebookItem {
    /// 0-based index of the cell in the notebook's `cells` array (all cell types counted).
    pub cell: usize,
    /// The same cell, 1-based, as a user counts it.
    pub cell_number: usize,
    /// The item, positioned within the cell.
    pub item: CodeItem,
}

// Why a notebook could not be scanned at all is a [`Problem`] with code `too-large` (a
// limit; evidence `bytes`, `limit`), `invalid-json` (evidence `line`, `column`) or
// `not-a-notebook` (no top-level `cells` array, nbformat 4). The JSON is read by [`cells`],
// which keeps only the code cells' sources and the kernel language.

/// Cell magics whose body is still Python.
const PYTHON_CELL_MAGICS: &[&str] = &["time", "timeit", "capture", "prun", "debug"];

/// The Python of a notebook's code cells (IPython magics and shell lines removed), each with
/// its cell's 1-based number; `None` for a notebook in another language or one that cannot be
/// read (its scan reports why).
pub fn python_cells(json: &[u8], limits: &Limits) -> Option<Vec<(usize, String)>> {
    if json.len() > limits.max_notebook_bytes {
        return None;
    }
    let cells = cells::read(json, limits.max_cells, limits.code.max_source_bytes).ok()?;
    if cells
        .language
        .as_deref()
        .is_some_and(|l| !l.eq_ignore_ascii_case("python"))
    {
        return None;
    }
    Some(
        cells
            .code
            .into_iter()
            .filter_map(|(index, source)| strip_ipython(source).map(|p| (index + 1, p)))
            .collect(),
    )
}

/// Scans a `.ipynb` file's code cells. A notebook whose code cells together cannot yield an
/// item ([`code::may_report`] on their text) is not parsed: its report has no items and no
/// syntax errors, and still counts the cells.
pub fn scan_notebook(json: &[u8], limits: &Limits) -> Result<NotebookReport, Problem> {
    scan_notebook_with(json, limits, true)
}

/// [`scan_notebook`] without the pre-filter: every code cell is parsed.
#[cfg(test)]
pub(crate) fn scan_notebook_unfiltered(
    json: &[u8],
    limits: &Limits,
) -> Result<NotebookReport, Problem> {
    scan_notebook_with(json, limits, false)
}

fn scan_notebook_with(
    json: &[u8],
    limits: &Limits,
    prefilter: bool,
) -> Result<NotebookReport, Problem> {
    if json.len() > limits.max_notebook_bytes {
        return Err(Problem::limit(
            "too-large",
            format!(
                "notebook is {} bytes, over the limit of {}",
                json.len(),
                limits.max_notebook_bytes
            ),
        )
        .with("bytes", json.len().to_string())
        .with("limit", limits.max_notebook_bytes.to_string()));
    }
    let cells = cells::read(json, limits.max_cells, limits.code.max_source_bytes)?;
    let mut report = NotebookReport {
        language: cells.language,
        ..NotebookReport::default()
    };
    if report
        .language
        .as_deref()
        .is_some_and(|l| !l.eq_ignore_ascii_case("python"))
    {
        return Ok(report);
    }
    if cells.count > limits.max_cells {
        report.truncated = true;
        report.truncated_by = Some("cell-budget");
    }
    // Each code cell's Python, with the index of its cell; made once (issue 22).
    let python: Vec<(usize, String)> = cells
        .code
        .into_iter()
        .filter_map(|(index, source)| strip_ipython(source).map(|p| (index, p)))
        .collect();
    let mut selections = None;
    if prefilter {
        // Bindings flow from cell to cell, so the cells are judged together: every identifier
        // an item needs is in some cell. Each cell is lexed on its own, as it is parsed: an
        // unterminated string in one cell does not hide the code of the next.
        if !code::may_report_parts(python.iter().map(|(_, p)| p.as_bytes())) {
            report.cells_scanned = python.len();
            return Ok(report);
        }
        // Then only the statements that can matter are parsed, chosen over all the cells
        // together (issue 22); any doubt parses every cell whole.
        let parts: Vec<&str> = python.iter().map(|(_, p)| p.as_str()).collect();
        selections = code::select::select_parts(&parts, &limits.code).ok();
    }
    let mut python = python.iter().peekable();
    let mut bindings = Bindings::default();
    let started = Instant::now();
    let total = Duration::from_millis(limits.max_total_parse_millis);
    let mut cell_limits = limits.code.clone();
    for index in 0..cells.count.min(limits.max_cells) {
        let left = total
            .checked_sub(started.elapsed())
            .filter(|d| !d.is_zero());
        let Some(remaining) = left else {
            report.truncated = true;
            report.truncated_by = report.truncated_by.or(Some("notebook-timeout"));
            return Ok(report);
        };
        let remaining = u64::try_from(remaining.as_millis()).unwrap_or(u64::MAX);
        cell_limits.max_parse_millis = limits.code.max_parse_millis.min(remaining);
        let Some((_, python)) = python.next_if(|(at, _)| *at == index) else {
            continue;
        };
        let selection = selections
            .as_ref()
            .and_then(|s: &Vec<_>| s.get(report.cells_scanned))
            .filter(|_| cell_limits.max_parse_millis >= code::select::MIN_PARSE_MILLIS);
        report.cells_scanned = report.cells_scanned.saturating_add(1);
        let scanned = match selection {
            Some(selection) => {
                code::scan_selection_with(python, selection, &cell_limits, &mut bindings)
            }
            None => code::scan_python_with(python, &cell_limits, &mut bindings),
        };
        if scanned.syntax_errors {
            report.cells_with_syntax_errors.push(index);
        }
        if scanned.truncated {
            report.truncated = true;
            report.truncated_by = report.truncated_by.or(scanned.truncated_by);
        }
        for item in scanned.calls {
            if report.items.len() >= limits.code.max_items {
                report.truncated = true;
                report.truncated_by = report.truncated_by.or(Some("item-budget"));
                return Ok(report);
            }
            report.items.push(NotebookItem {
                cell: index,
                cell_number: index.saturating_add(1),
                item,
            });
        }
    }
    Ok(report)
}

/// Blanks IPython-only lines, keeping line numbers; `None` when the cell is not Python at all
/// (`%%bash`, `%%html`, … cell magics). Most cells have no such line and are returned as they
/// are.
fn strip_ipython(source: String) -> Option<String> {
    let blank = ipython_lines(&source)?;
    if blank.is_empty() {
        return Some(source);
    }
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    for line in blank {
        out.push_str(source.get(at..line.start).unwrap_or_default());
        at = line.end;
    }
    out.push_str(source.get(at..).unwrap_or_default());
    Some(out)
}

/// The bodies (line endings excluded) of the lines [`strip_ipython`] blanks, in order; `None`
/// for a non-Python cell magic.
fn ipython_lines(source: &str) -> Option<Vec<Range<usize>>> {
    let mut blank = Vec::new();
    let mut first_code_line = true;
    let mut start = 0;
    while start < source.len() {
        let rest = source.get(start..).unwrap_or_default();
        let len = memchr::memchr(b'\n', rest.as_bytes()).map_or(rest.len(), |i| i + 1);
        let line = rest.get(..len).unwrap_or_default();
        let body = line.trim_end_matches(['\n', '\r']);
        let at = start;
        start += len;
        // Every IPython line, cell magics included, holds one of these.
        if memchr::memchr3(b'%', b'!', b'?', body.as_bytes()).is_none() {
            if first_code_line {
                first_code_line = body.trim_start().is_empty();
            }
            continue;
        }
        let trimmed = body.trim_start();
        if first_code_line && !trimmed.is_empty() {
            first_code_line = false;
            if let Some(magic) = trimmed.strip_prefix("%%") {
                if !is_python_cell_magic(magic) {
                    return None;
                }
                blank.push(at..at + body.len());
                continue;
            }
        }
        if is_ipython_line(trimmed) {
            blank.push(at..at + body.len());
        }
    }
    Some(blank)
}

/// Whether a cell magic (the text after `%%`) leaves its body Python.
fn is_python_cell_magic(magic: &str) -> bool {
    let mut words = magic.split_whitespace();
    let name = words.next().unwrap_or_default();
    PYTHON_CELL_MAGICS.contains(&name)
        // `%%writefile train.py` holds a script the notebook then runs.
        || (name == "writefile" && words.last().is_some_and(|f| f.ends_with(".py")))
}

fn is_ipython_line(trimmed: &str) -> bool {
    if trimmed.starts_with('%') || trimmed.starts_with('!') || trimmed.starts_with('?') {
        return true;
    }
    // `obj?` / `obj??` help, but not a comment that ends in a question mark.
    if trimmed.ends_with('?') && !trimmed.starts_with('#') && !trimmed.contains(['#', '"', '\'']) {
        return true;
    }
    // `files = !ls` and `out = %sx cmd`.
    if let Some((left, right)) = trimmed.split_once('=') {
        let right = right.trim_start();
        let names = left
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | ',' | ' '));
        if names && !left.trim().is_empty() && (right.starts_with('!') || right.starts_with('%')) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::python::ItemKind;
    use proptest::prelude::*;
    use serde_json::Value;

    /// What `strip_ipython` did before it blanked in place: the reference it must agree with.
    fn strip_ipython_by_lines(source: &str) -> Option<String> {
        let mut out = String::with_capacity(source.len());
        let mut first_code_line = true;
        for line in source.split_inclusive('\n') {
            let body = line.trim_end_matches(['\n', '\r']);
            let ending = line.get(body.len()..).unwrap_or_default();
            let trimmed = body.trim_start();
            if first_code_line && !trimmed.is_empty() {
                first_code_line = false;
                if let Some(magic) = trimmed.strip_prefix("%%") {
                    if !is_python_cell_magic(magic) {
                        return None;
                    }
                    out.push_str(ending);
                    continue;
                }
            }
            if is_ipython_line(trimmed) {
                out.push_str(ending);
            } else {
                out.push_str(line);
            }
        }
        Some(out)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn strips_the_lines_it_stripped_line_by_line(lines in proptest::collection::vec(
            proptest::sample::select(&[
                "", " ", "\t", "%%time", "%%bash", "%%writefile a.py", "%%writefile a.txt",
                "  %%time", "%pip install x", "!ls", "  !ls", "x = !ls", "a, b = %sx cmd",
                "obj?", "obj??", "# why?", "print('why?')", "x = a % b", "if a != b:",
                "import torch", "torch.load(p)", "\u{e9}t\u{e9} = 1", "\u{a0}!ls", "?",
            ][..]), 0..8),
            endings in proptest::collection::vec(proptest::sample::select(&["\n", "\r\n", "\r", ""][..]), 8)) {
            let source: String = lines
                .iter()
                .zip(&endings)
                .map(|(line, end)| format!("{line}{end}"))
                .collect();
            prop_assert_eq!(strip_ipython(source.clone()), strip_ipython_by_lines(&source));
        }
    }

    fn notebook(cells: &[(&str, Value)]) -> Vec<u8> {
        let cells: Vec<Value> = cells
            .iter()
            .map(|(kind, source)| serde_json::json!({"cell_type": kind, "metadata": {}, "source": source}))
            .collect();
        serde_json::to_vec(&serde_json::json!({
            "cells": cells,
            "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5
        }))
        .unwrap_or_default()
    }

    #[test]
    fn scans_code_cells_with_magics() {
        let nb = notebook(&[
            ("markdown", Value::from("Load with `torch.load(path)`")),
            (
                "code",
                serde_json::json!([
                    "%pip install transformers\n",
                    "import torch as t\n",
                    "!ls\n",
                    "m = t.load('x.pt')\n"
                ]),
            ),
            (
                "code",
                Value::from(
                    "files = !ls\nfrom transformers import AutoModel\n\nmodel = AutoModel.from_pretrained(\n    'org/model', trust_remote_code=True)\nt?\n",
                ),
            ),
        ]);
        let report = scan_notebook(&nb, &Limits::default()).unwrap_or_default();
        assert_eq!(report.cells_scanned, 2);
        assert!(report.cells_with_syntax_errors.is_empty(), "{report:?}");
        let found: Vec<(usize, usize, usize, usize, &str)> = report
            .items
            .iter()
            .map(|i| {
                let kind = match &i.item.kind {
                    ItemKind::HubDownload { .. } => "download",
                    ItemKind::TrustRemoteCode { .. } => "trust",
                    ItemKind::UnsafeLoad { .. } => "unsafe",
                };
                (i.cell, i.cell_number, i.item.line, i.item.column, kind)
            })
            .collect();
        assert_eq!(
            found,
            vec![
                (1, 2, 4, 5, "unsafe"),
                (2, 3, 4, 9, "trust"),
                (2, 3, 4, 9, "download"),
            ]
        );
    }

    #[test]
    fn cells_are_parsed_by_statements_chosen_over_the_whole_notebook() {
        let pad: String = (0..50).map(|i| format!("x{i} = f({i})\n")).collect();
        let sha = "0123456789abcdef0123456789abcdef01234567";
        let cells = [
            format!("{pad}from torch import load as L\nREV = '{sha}'\n"),
            format!(
                "class A:\n    def f(self):\n{}        return L(p)\n",
                "        y = 1\n".repeat(30)
            ),
            format!("{pad}m = AutoModel.from_pretrained('o/m', revision=REV)\n"),
            // A later cell reassigns the constant: cells after it see it as unverifiable.
            "REV = 'main'\nAutoModel.from_pretrained('o/m', revision=REV)\n".to_owned(),
        ];
        let nb = notebook(
            &cells
                .iter()
                .map(|c| ("code", Value::from(c.as_str())))
                .collect::<Vec<_>>(),
        );
        let limits = Limits::default();
        let on = scan_notebook(&nb, &limits).unwrap_or_default();
        let off = scan_notebook_unfiltered(&nb, &limits).unwrap_or_default();
        assert_eq!(on.items, off.items);
        assert_eq!(on.items.len(), 3, "{on:?}");
        let parts: Vec<&str> = cells.iter().map(String::as_str).collect();
        let selections = code::select::select_parts(&parts, &limits.code).unwrap_or_default();
        assert_eq!(selections.len(), 4);
        let selected: usize = selections.iter().map(|s| s.text.len()).sum();
        let total: usize = parts.iter().map(|p| p.len()).sum();
        assert!(selected * 4 < total, "{selected} of {total}");
    }

    #[test]
    fn skips_non_python_cell_magics() {
        let nb = notebook(&[
            (
                "code",
                Value::from("%%bash\npython -c 'import torch; torch.load(1)'\n"),
            ),
            (
                "code",
                Value::from("%%time\nimport pickle\npickle.load(f)\n"),
            ),
            (
                "code",
                Value::from("%%writefile train.py\nimport pickle\npickle.loads(b)\n"),
            ),
        ]);
        let report = scan_notebook(&nb, &Limits::default()).unwrap_or_default();
        assert_eq!(report.cells_scanned, 2);
        let lines: Vec<(usize, usize)> =
            report.items.iter().map(|i| (i.cell, i.item.line)).collect();
        assert_eq!(lines, vec![(1, 3), (2, 3)]);
    }

    #[test]
    fn skips_non_python_kernels() {
        let nb = br#"{"cells":[{"cell_type":"code","source":"torch.load(x)"}],"metadata":{"kernelspec":{"language":"R"}}}"#;
        let report = scan_notebook(nb, &Limits::default()).unwrap_or_default();
        assert_eq!(report.language.as_deref(), Some("R"));
        assert_eq!(report.cells_scanned, 0);
    }

    #[test]
    fn rejects_invalid_json() {
        let err = scan_notebook(b"{\n  \"cells\": [,]\n}", &Limits::default());
        let err = err.unwrap_err();
        assert_eq!(err.detail("line"), Some("2"), "{err:?}");
        assert_eq!(err.code, "invalid-json");
    }

    #[test]
    fn rejects_json_without_cells() {
        let err = scan_notebook(br#"{"worksheets": []}"#, &Limits::default());
        assert_eq!(err.unwrap_err().code, "not-a-notebook");
    }

    #[test]
    fn rejects_notebook_over_size_limit() {
        let limits = Limits {
            max_notebook_bytes: 10,
            ..Limits::default()
        };
        let err = scan_notebook(br#"{"cells": []}"#, &limits);
        let err = err.unwrap_err();
        assert_eq!(
            (err.code, err.detail("bytes"), err.detail("limit")),
            ("too-large", Some("13"), Some("10"))
        );
    }

    #[test]
    fn stops_at_cell_budget() {
        let cell = ("code", Value::from("torch.load(p)"));
        let nb = notebook(&[cell.clone(), cell.clone(), cell]);
        let limits = Limits {
            max_cells: 2,
            ..Limits::default()
        };
        let report = scan_notebook(&nb, &limits).unwrap_or_default();
        assert_eq!(report.items.len(), 2);
        assert_eq!(report.truncated_by, Some("cell-budget"));
    }

    #[test]
    fn stops_at_notebook_timeout() {
        let nb = notebook(&[("code", Value::from("torch.load(p)"))]);
        let limits = Limits {
            max_total_parse_millis: 0,
            ..Limits::default()
        };
        let report = scan_notebook(&nb, &limits).unwrap_or_default();
        assert_eq!(report.truncated_by, Some("notebook-timeout"));
    }

    #[test]
    fn keeps_help_and_comment_lines_apart() {
        assert!(is_ipython_line("model.generate?"));
        assert!(is_ipython_line("x, y = !ls"));
        assert!(!is_ipython_line("# does this work?"));
        assert!(!is_ipython_line("x = a % b"));
        assert!(!is_ipython_line("print('why?')"));
    }
}
