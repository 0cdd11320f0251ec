//! Human-readable output: findings grouped by file, worst first, then a summary.
//!
//! Every string that came from the scanned tree (paths, messages quoting file content) goes
//! through [`sanitize`], so a file name cannot move the cursor, recolour the terminal or print a
//! fake "PASS" line of its own.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::model::facts::{Fact, FactMap};
use crate::model::finding::{Action, Finding};
use crate::model::report::Report;

/// Text rendering options.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    /// Use ANSI colours.
    pub color: bool,
}

/// Escapes control characters (C0, DEL, C1) and the Unicode bidi/line separators so that text from
/// scanned files renders on one line, inertly.
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}') =>
            {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

fn paint(color: bool, code: &str, s: &str) -> String {
    if color {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

fn action_label(color: bool, a: Action) -> String {
    match a {
        Action::Deny => paint(color, "1;31", "DENY"),
        Action::Warn => paint(color, "33", "WARN"),
        Action::Allow => paint(color, "2", "allow"),
    }
}

fn location(f: &Finding) -> String {
    let l = &f.location;
    let mut s = String::new();
    if let Some(m) = &l.member {
        s.push_str(&format!(" [{}]", sanitize(m)));
    }
    match (l.line, l.column, l.offset) {
        (Some(line), Some(col), _) => s.push_str(&format!(" line {line}:{col}")),
        (Some(line), None, _) => s.push_str(&format!(" line {line}")),
        (_, _, Some(off)) => s.push_str(&format!(" @{off}")),
        _ => {}
    }
    s
}

/// The model signature's verdict in one line (issue 19): file, signer, whether the files match.
fn signature_line(sig: &serde_json::Value) -> String {
    let text = |v: &serde_json::Value| v.as_str().map(sanitize).unwrap_or_default();
    let file = text(&sig["file"]);
    if sig["verified"] != true {
        return format!("{file} not verified: {}", text(&sig["reason"]));
    }
    let signer = &sig["signer"];
    let files = if sig["tree_matches"] == true {
        "files match"
    } else {
        "files differ (SIG003)"
    };
    format!(
        "{file} verified ({} {}), {files}",
        text(&signer["method"]),
        text(&signer["identity"])
    )
}

/// Writes the text report.
pub fn render(report: &Report, w: &mut dyn Write, opts: TextOptions) -> io::Result<()> {
    let c = opts.color;
    writeln!(
        w,
        "modelgate {} scanning {}",
        report.tool.version,
        sanitize(&report.root)
    )?;
    writeln!(w, "policy: {}", sanitize(&report.policy.source))?;
    match &report.git {
        Some(g) => writeln!(
            w,
            "git: {} {}{}",
            g.commit.as_deref().unwrap_or("(no commit)"),
            g.branch
                .as_deref()
                .map(sanitize)
                .unwrap_or_else(|| "(detached)".into()),
            if g.dirty { " (dirty)" } else { "" }
        )?,
        None => writeln!(w, "git: none")?,
    }
    if let Some(sig) = report.repository.fact(Fact::Signature) {
        writeln!(w, "signature: {}", signature_line(sig))?;
    }
    writeln!(w)?;

    // Group by file; files with the worst finding first, then by path.
    let mut groups: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for f in &report.findings {
        groups.entry(f.path.as_str()).or_default().push(f);
    }
    let mut ordered: Vec<(&str, Vec<&Finding>)> = groups.into_iter().collect();
    for (_, fs) in &mut ordered {
        fs.sort_by(|a, b| {
            (b.action, b.severity)
                .cmp(&(a.action, a.severity))
                .then(a.rule.cmp(&b.rule))
        });
    }
    ordered.sort_by(|a, b| {
        let wa = a.1.first().map(|f| (f.action, f.severity));
        let wb = b.1.first().map(|f| (f.action, f.severity));
        wb.cmp(&wa).then(a.0.cmp(b.0))
    });
    // The hint is the same for every finding of a rule: print it the first time only.
    let mut hinted = std::collections::BTreeSet::new();
    for (path, findings) in &ordered {
        let shown = if path.is_empty() {
            "(repository)"
        } else {
            path
        };
        writeln!(w, "{}", paint(c, "1", &sanitize(shown)))?;
        for f in findings {
            writeln!(
                w,
                "  {:<5} {} {} [{}]{}: {}",
                action_label(c, f.action),
                f.rule.code(),
                f.name,
                f.severity.as_str(),
                location(f),
                sanitize(&f.message)
            )?;
            if let Some(reason) = &f.exception {
                writeln!(w, "        excepted: {}", sanitize(reason))?;
            } else if f.action != Action::Allow && hinted.insert(f.rule) {
                writeln!(w, "        hint: {}", first_sentence(f.rule.help()))?;
            }
        }
        writeln!(w)?;
    }

    let s = &report.summary;
    let formats: Vec<String> = s.formats.iter().map(|(k, v)| format!("{k} {v}")).collect();
    writeln!(
        w,
        "files: {} ({} bytes); {}",
        s.files,
        s.bytes,
        formats.join(", ")
    )?;
    let verdict = match report.exit_code() {
        0 => paint(c, "1;32", "PASS"),
        _ => paint(c, "1;31", "FAIL"),
    };
    writeln!(
        w,
        "result: {verdict}: {} denied, {} warned, {} allowed",
        s.denied, s.warned, s.allowed
    )
}

fn first_sentence(s: &str) -> &str {
    match s.find(". ") {
        Some(i) => &s[..=i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_defuses_newlines_and_escapes() {
        assert_eq!(sanitize("a\nPASS"), "a\\nPASS");
        assert_eq!(sanitize("\x1b[2J"), "\\u{1b}[2J");
        assert_eq!(sanitize("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(sanitize("plain/ok.bin"), "plain/ok.bin");
    }
}
