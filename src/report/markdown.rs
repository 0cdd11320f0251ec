//! A compact Markdown summary for GitHub job summaries (`$GITHUB_STEP_SUMMARY`).
//!
//! Job summaries render GitHub-flavoured Markdown with some HTML, and GitHub refuses a summary over
//! 1 MiB. File names and messages come from the scanned tree, so every such string goes through
//! [`escape_cell`]: a name like `x|y`, `<img src=…>`, `[click](http://…)` or `@team` must render
//! as the literal text it is, inside one table cell, and never as a link, mention, tag or a fake
//! row. The table is cut to stay under [`MAX_BYTES`], with a note saying how many rows were left
//! out.

use std::io::{self, Write};

use super::text::sanitize;
use crate::model::finding::Finding;
use crate::model::report::Report;

/// GitHub's limit for one step summary.
pub const MAX_BYTES: usize = 1 << 20;

/// Room kept for the text after the findings table (formats table, notes).
const TAIL_RESERVE: usize = 16 << 10;

/// Longest cell, in characters, before it is cut with an ellipsis.
pub const MAX_CELL_CHARS: usize = 300;

/// Escapes text from the scanned tree for a table cell: control and bidi characters become
/// visible escapes, every ASCII punctuation character is backslash-escaped (GFM allows that for
/// all of them, and it defuses `|`, `` ` ``, `<`, `*`, `_`, `[`, `@`, `:` autolinks and emoji
/// codes alike), and the result is cut to [`MAX_CELL_CHARS`].
pub fn escape_cell(s: &str) -> String {
    let clean = sanitize(s);
    let mut out = String::with_capacity(clean.len() + 8);
    for (n, c) in clean.chars().enumerate() {
        if n >= MAX_CELL_CHARS {
            out.push('…');
            break;
        }
        if c.is_ascii_punctuation() {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn row(f: &Finding) -> String {
    let path = if f.path.is_empty() {
        "*(repository)*".to_string()
    } else {
        escape_cell(&f.path)
    };
    let mut message = escape_cell(&f.message);
    if let Some(m) = &f.location.member {
        message.push_str(" (in ");
        message.push_str(&escape_cell(m));
        message.push(')');
    }
    format!(
        "| {} | `{}` {} | {} | {} | {} |\n",
        f.action.as_str(),
        f.rule.code(),
        f.name,
        f.severity.as_str(),
        path,
        message
    )
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    match unit {
        0 => format!("{n} B"),
        _ => format!("{v:.1} {}", UNITS.get(unit).unwrap_or(&"B")),
    }
}

/// Builds the summary as a string (always under [`MAX_BYTES`]).
pub fn to_string(report: &Report) -> String {
    let s = &report.summary;
    let verdict = if report.exit_code() == 0 {
        "PASS"
    } else {
        "FAIL"
    };
    let mut out = String::new();
    out.push_str(&format!("## modelgate: {verdict}\n\n"));
    out.push_str(&format!(
        "**{} denied**, {} warned, {} allowed · {} files ({}) · policy {}",
        s.denied,
        s.warned,
        s.allowed,
        s.files,
        human_bytes(s.bytes),
        escape_cell(&report.policy.source)
    ));
    if let Some(commit) = report.git.as_ref().and_then(|g| g.commit.as_deref()) {
        out.push_str(&format!(" · commit `{}`", escape_commit(commit)));
    }
    out.push_str("\n\n");

    if report.findings.is_empty() {
        out.push_str("No findings.\n\n");
    } else {
        let mut ordered: Vec<&Finding> = report.findings.iter().collect();
        ordered.sort_by_key(|f| std::cmp::Reverse((f.action, f.severity)));
        out.push_str("| action | rule | severity | path | message |\n");
        out.push_str("|---|---|---|---|---|\n");
        let budget = MAX_BYTES - TAIL_RESERVE;
        let mut shown = 0usize;
        for f in &ordered {
            let line = row(f);
            if out.len() + line.len() > budget {
                break;
            }
            out.push_str(&line);
            shown += 1;
        }
        out.push('\n');
        let left = ordered.len() - shown;
        if left > 0 {
            out.push_str(&format!(
                "*{left} more findings not shown (summary limit {} bytes); see the JSON or SARIF report.*\n\n",
                MAX_BYTES
            ));
        }
    }

    if !s.formats.is_empty() {
        out.push_str("<details><summary>Files by format</summary>\n\n");
        out.push_str("| format | files |\n|---|---|\n");
        for (format, n) in &s.formats {
            out.push_str(&format!("| {} | {n} |\n", escape_cell(format)));
        }
        out.push_str("\n</details>\n");
    }
    out
}

// A commit should be 40 hex; anything else is shown escaped, never raw inside the code span.
fn escape_commit(commit: &str) -> String {
    if commit.bytes().all(|b| b.is_ascii_hexdigit()) && commit.len() <= 64 {
        commit.to_string()
    } else {
        "invalid".to_string()
    }
}

/// Writes the Markdown summary.
pub fn render(report: &Report, w: &mut dyn Write) -> io::Result<()> {
    w.write_all(to_string(report).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_the_table_or_inject_html() {
        assert_eq!(escape_cell("a|b"), "a\\|b");
        assert_eq!(escape_cell("<img src=x>"), "\\<img src\\=x\\>");
        assert_eq!(
            escape_cell("x\n| fake | row |"),
            "x\\\\n\\| fake \\| row \\|"
        );
        assert_eq!(escape_cell("`code`"), "\\`code\\`");
        assert_eq!(escape_cell("[a](http://e)"), "\\[a\\]\\(http\\:\\/\\/e\\)");
    }

    #[test]
    fn long_cells_are_cut() {
        let long = "a".repeat(MAX_CELL_CHARS + 10);
        let e = escape_cell(&long);
        assert_eq!(e.chars().count(), MAX_CELL_CHARS + 1);
        assert!(e.ends_with('…'));
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }
}
