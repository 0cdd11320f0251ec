//! Problems in a policy file and how they are reported: each at `file:line:col` with a caret
//! excerpt and a "did you mean" hint. A leaf of `policy`: the parser in `config` collects into a
//! [`Diag`], nothing here knows a policy's keys.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::Range;

use toml::Spanned;
use toml::de::DeValue;

/// A key with its span, as `toml::de` gives it.
pub(super) type Key<'i> = Spanned<Cow<'i, str>>;

/// One problem in a policy file, at a 1-based line and column (in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// Stable kebab-case sub-code, e.g. `unknown-rule`.
    pub code: &'static str,
    /// Lowercase message naming the offending value.
    pub message: String,
    /// A hint: the closest valid name, or what is expected.
    pub help: Option<String>,
    /// The source line, for the caret excerpt.
    pub(super) snippet: String,
    /// How many characters the caret underlines (at least 1).
    pub(super) width: usize,
}

/// Collects problems against the source text.
pub(super) struct Diag<'t> {
    pub(super) text: &'t str,
    pub(super) problems: Vec<Problem>,
}

impl Diag<'_> {
    pub(super) fn error(
        &mut self,
        span: Range<usize>,
        code: &'static str,
        message: impl Into<String>,
        help: Option<String>,
    ) {
        let (line, column, snippet, width) = locate(self.text, span);
        self.problems.push(Problem {
            line,
            column,
            code,
            message: message.into(),
            help,
            snippet,
            width,
        });
    }

    pub(super) fn line_of(&self, offset: usize) -> usize {
        locate(self.text, offset..offset).0
    }

    pub(super) fn wrong_type(&mut self, name: &str, value: &Spanned<DeValue<'_>>, expected: &str) {
        self.error(
            value.span(),
            "wrong-type",
            format!(
                "`{name}` must be {expected}, found {}",
                type_name(value.get_ref())
            ),
            None,
        );
    }

    /// `where_` says where the key sits ("at the top level", "in [pickle]"); `table` names the
    /// table in the help text.
    pub(super) fn unknown_key(&mut self, key: &Key<'_>, where_: &str, table: &str, known: &[&str]) {
        let name: &str = key.get_ref();
        let help = match suggest(name, known.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("{table} accepts {}", list(known)),
        };
        self.error(
            key.span(),
            "unknown-key",
            format!("unknown key `{name}` {where_}"),
            Some(help),
        );
    }
}

/// Line, column, the line's text and the caret width for a byte span of `text`.
pub(super) fn locate(text: &str, span: Range<usize>) -> (usize, usize, String, usize) {
    let mut start = span.start.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let before = text.get(..start).unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = text.get(line_start..start).map_or(0, |s| s.chars().count()) + 1;
    let rest = text.get(start..).unwrap_or("");
    let line_end = rest.find('\n').map_or(text.len(), |i| start + i);
    let snippet = text
        .get(line_start..line_end)
        .unwrap_or("")
        .trim_end_matches('\r')
        .replace('\t', " ");
    let mut end = span.end.clamp(start, line_end);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let width = text
        .get(start..end)
        .map_or(0, |s| s.trim_end_matches('\r').chars().count())
        .max(1);
    (line, column, snippet, width)
}

/// The rustc-style rendering of every problem.
pub(super) fn render_problems(origin: &str, problems: &[Problem]) -> String {
    let mut out = String::new();
    for (i, p) in problems.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        let number = p.line.to_string();
        let pad = number.len() + 1;
        let _ = writeln!(out, "error: {}", p.message);
        let _ = writeln!(out, "{:pad$}--> {origin}:{}:{}", "", p.line, p.column);
        let _ = writeln!(out, "{:w$}|", "", w = pad + 1);
        let _ = writeln!(out, "{number:>pad$} | {}", p.snippet);
        let _ = write!(
            out,
            "{:w$}| {}{}",
            "",
            " ".repeat(p.column.saturating_sub(1)),
            "^".repeat(p.width),
            w = pad + 1
        );
        if let Some(help) = &p.help {
            let _ = write!(out, "\n{:w$}= help: {help}", "", w = pad + 1);
        }
    }
    if problems.len() > 1 {
        let _ = write!(
            out,
            "\n\nerror: could not load policy `{origin}`: {} problems",
            problems.len()
        );
    }
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn type_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// The closest candidate to `input`, if it is close enough to be what the user meant.
pub(super) fn suggest<'a>(
    input: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let input = input.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&input, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

pub(super) fn list(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
