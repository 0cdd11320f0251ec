//! The chat-template judge (FMT005): a static look at the Jinja chat templates a model ships, for
//! the constructs server-side template injection payloads need (CVE-2024-34359). Nothing is
//! rendered: the text is lexed just far enough to tell code from comments and plain text.
//!
//! Templates ship in GGUF metadata (`tokenizer.chat_template[.<name>]`, read by the GGUF
//! inspector) and, in Hugging Face folders, as `chat_template` in `tokenizer_config.json` (a
//! string, or a list of `{"name", "template"}`), `chat_template.json` and processor configs
//! (`{"chat_template": ...}`), `chat_template.jinja`, `additional_chat_templates/<name>.jinja`
//! and other `*.jinja` files. Every carrier goes through [`judge`], so one heuristic decides.

use serde_json::Value;

use crate::inspect::problem::{Problem, ProblemKind, excerpt};

/// Longest template judged, whatever carries it (GGUF metadata, a JSON string, a `.jinja` file):
/// real templates are a few KiB to some tens of KiB. A longer one is judged up to this size and
/// the rest is reported as not scanned (SCAN004).
pub const MAX_TEMPLATE_BYTES: usize = 1 << 20;

/// Most findings reported per template.
pub const MAX_TEMPLATE_HITS: usize = 16;

/// Most templates judged in one JSON file (a list of named templates); the rest are reported as
/// not scanned. Real files hold one to three (`default`, `tool_use`, `rag`).
pub const MAX_TEMPLATES_PER_FILE: usize = 64;

/// JSON files that carry a chat template by name (transformers reads each): they are judged even
/// when they would be too large for the ordinary config checks.
pub const JSON_CARRIERS: &[&str] = &[
    "tokenizer_config.json",
    "chat_template.json",
    "processor_config.json",
    "preprocessor_config.json",
];

/// Which suspicious construct a template contains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Indicator {
    /// A `__dunder__` name used as an attribute or variable.
    DunderAccess,
    /// A string literal holding a `__dunder__` name (for `attr()` or `[...]` access).
    DunderString,
    /// String literals that only form a dangerous dunder when concatenated or joined.
    JoinedDunder,
    /// A string literal spelling letters or `_` with escapes (`'\x5f\x5f'`).
    EscapedName,
    /// A string of underscores multiplied (`"_"*2`), to build a dunder.
    UnderscoreRepeat,
    /// `%c` formatting to build names from character codes.
    CharFormat,
    /// `|attr(...)` with a computed name.
    ComputedAttr,
    /// A Jinja or Flask global that is a classic sandbox-escape entry point.
    Gadget,
    /// A Python module or function name used to run commands.
    PythonName,
}

impl Indicator {
    /// Stable kebab-case name for evidence.
    pub fn code(self) -> &'static str {
        match self {
            Self::DunderAccess => "dunder-access",
            Self::DunderString => "dunder-string",
            Self::JoinedDunder => "joined-dunder",
            Self::EscapedName => "escaped-name",
            Self::UnderscoreRepeat => "underscore-repeat",
            Self::CharFormat => "char-format",
            Self::ComputedAttr => "computed-attr",
            Self::Gadget => "gadget",
            Self::PythonName => "python-name",
        }
    }

    /// A phrase for finding messages: "chat template 'x' `<phrase>` at byte n".
    pub fn describe(self) -> &'static str {
        match self {
            Self::DunderAccess => "accesses a python dunder attribute",
            Self::DunderString => "names a python dunder attribute in a string",
            Self::JoinedDunder => "builds a python dunder name from string pieces",
            Self::EscapedName => "spells a name with escape sequences",
            Self::UnderscoreRepeat => "builds underscores by string repetition",
            Self::CharFormat => "builds a string from character codes with %c",
            Self::ComputedAttr => "looks up an attribute by a computed name",
            Self::Gadget => "uses a known sandbox-escape entry point",
            Self::PythonName => "names a python command-execution function",
        }
    }
}

/// One suspicious construct in a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateHit {
    /// What was found.
    pub indicator: Indicator,
    /// Byte offset in the template.
    pub offset: usize,
    /// Escaped, bounded text around the match.
    pub excerpt: String,
}

/// Dunders that SSTI payloads walk through to reach Python's builtins.
const DANGEROUS_DUNDERS: &[&str] = &[
    "__class__",
    "__globals__",
    "__subclasses__",
    "__builtins__",
    "__import__",
    "__mro__",
    "__base__",
    "__bases__",
    "__init__",
    "__getattribute__",
    "__dict__",
    "__code__",
    "__func__",
    "__self__",
    "__reduce__",
    "__loader__",
];

/// Jinja/Flask globals used as first hops in published payloads. `cycler`, `joiner` and
/// `namespace` are deliberately absent: ordinary templates use them, and the payloads
/// built on them need a dunder, which is caught on its own.
const GADGET_NAMES: &[&str] = &[
    "lipsum",
    "url_for",
    "get_flashed_messages",
    "_TemplateReference__context",
];

/// Python names that only appear in templates to run commands.
const PYTHON_NAMES: &[&str] = &[
    "popen",
    "subprocess",
    "eval",
    "exec",
    "import_module",
    "check_output",
    "getoutput",
    "builtins",
];

/// String literals that only make sense as module/function names in a payload ("system" is
/// absent: it is a chat role).
const PYTHON_STRINGS: &[&str] = &[
    "os",
    "popen",
    "subprocess",
    "builtins",
    "import_module",
    "check_output",
    "getoutput",
    "eval",
    "exec",
];

/// Most literal text concatenated for the joined-dunder check (templates are bounded by
/// `Limits::max_template_len` already; this keeps the scanner bounded on its own).
const MAX_JOINED_LITERALS: usize = 1 << 20;

struct Literal {
    offset: usize,
    value: String,
    escaped_name: bool,
}

struct Ident<'t> {
    offset: usize,
    text: &'t str,
    prev: Option<char>,
    next: Option<char>,
}

/// Statically scans a Jinja chat template for constructs that reach Python internals.
/// Only code inside `{{ }}` and `{% %}` is examined (comments and literal text are not
/// executed); string literals are decoded, so escape and concatenation tricks are seen. This is
/// a heuristic: it flags what published payloads need and what ordinary chat templates
/// (Llama, Mistral, ChatML, Gemma, Qwen, Command-R) never contain.
pub fn scan_template(template: &str, max_hits: usize) -> Vec<TemplateHit> {
    let mut hits = Vec::new();
    // Findings beyond a few times the reported maximum only cost memory.
    let hit_cap = max_hits.saturating_mul(4).max(1);
    let mut literals: Vec<Literal> = Vec::new();
    let mut idents: Vec<Ident<'_>> = Vec::new();
    let regions = lex_template(template, &mut literals, &mut idents);
    scan_idents(template, &idents, hit_cap, &mut hits);
    scan_regions(template, &regions, &literals, hit_cap, &mut hits);
    scan_literals(template, &literals, hit_cap, &mut hits);
    scan_joined(template, &literals, hit_cap, &mut hits);
    hits.sort_by_key(|h| (h.offset, h.indicator));
    hits.dedup_by(|a, b| a.offset == b.offset && a.indicator == b.indicator);
    hits.truncate(max_hits);
    hits
}

/// Finds the code regions (`{{ }}` and `{% %}`), skipping comments and literal text, and
/// lexes them into string literals and identifiers. Returns each region's byte range.
fn lex_template<'t>(
    template: &'t str,
    literals: &mut Vec<Literal>,
    idents: &mut Vec<Ident<'t>>,
) -> Vec<(usize, usize)> {
    let mut regions: Vec<(usize, usize)> = Vec::new();
    let bytes = template.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        let (Some(&a), Some(&b)) = (bytes.get(i), bytes.get(i + 1)) else {
            break;
        };
        if a != b'{' {
            i += 1;
            continue;
        }
        match b {
            b'#' => {
                i = find(template, i + 2, "#}").map_or(bytes.len(), |e| e + 2);
            }
            b'{' | b'%' => {
                let closer = if b == b'{' { b'}' } else { b'%' };
                let end = lex_code(template, i + 2, closer, literals, idents);
                regions.push((i + 2, end));
                i = end + 2;
            }
            _ => i += 1,
        }
    }
    regions
}

/// Identifiers: dunder access, sandbox-escape gadgets and Python module names.
fn scan_idents(template: &str, idents: &[Ident<'_>], hit_cap: usize, hits: &mut Vec<TemplateHit>) {
    for id in idents {
        let t = id.text;
        let indicator = if t.len() > 4 && t.starts_with("__") && t.ends_with("__") {
            Some(Indicator::DunderAccess)
        } else if GADGET_NAMES.contains(&t)
            || ((t == "request" || t == "config") && matches!(id.next, Some('.' | '[' | '|')))
        {
            Some(Indicator::Gadget)
        } else if PYTHON_NAMES.contains(&t)
            // `os.system(...)`; `ns.system = ...` (a namespace's field) is ordinary.
            || (t == "system" && id.prev == Some('.') && id.next == Some('('))
        {
            Some(Indicator::PythonName)
        } else {
            None
        };
        if let Some(indicator) = indicator {
            hits.push(hit(template, indicator, id.offset));
            if hits.len() >= hit_cap {
                return;
            }
        }
    }
}

/// Per code region: `|attr(` with a computed argument, and `%c` literals fed to `format`.
fn scan_regions(
    template: &str,
    regions: &[(usize, usize)],
    literals: &[Literal],
    hit_cap: usize,
    hits: &mut Vec<TemplateHit>,
) {
    // `|attr(` followed by anything but a plain literal argument.
    for (start, end) in regions {
        if hits.len() >= hit_cap {
            break;
        }
        let code = template.get(*start..*end).unwrap_or("");
        let mut from = 0;
        while let Some(pos) = code.get(from..).and_then(|c| c.find("attr")) {
            let at = from + pos;
            from = at + 4;
            let before = code.get(..at).unwrap_or("").trim_end();
            let after = code.get(at + 4..).unwrap_or("").trim_start();
            if !before.ends_with('|') {
                continue;
            }
            let Some(arg) = after.strip_prefix('(') else {
                continue;
            };
            let arg = arg.trim_start();
            let plain = match arg.chars().next() {
                Some(q @ ('\'' | '"')) => {
                    let rest = arg.get(1..).unwrap_or("");
                    rest.find(q)
                        .and_then(|close| rest.get(close + 1..))
                        .is_some_and(|tail| tail.trim_start().starts_with(')'))
                        && !rest.split(q).next().unwrap_or("").contains('\\')
                }
                _ => false,
            };
            if !plain {
                hits.push(hit(template, Indicator::ComputedAttr, start + at));
            }
        }
        if code.contains("format") {
            // Literals are recorded in offset order: find this region's slice directly.
            let first = literals.partition_point(|l| l.offset < *start);
            let last = literals.partition_point(|l| l.offset < *end);
            for lit in literals.get(first..last).unwrap_or_default() {
                if lit.value.contains("%c") {
                    hits.push(hit(template, Indicator::CharFormat, lit.offset));
                }
            }
        }
    }
}

/// Single literals: dunder names, escaped names, Python names and `'_' * n` repeats.
fn scan_literals(
    template: &str,
    literals: &[Literal],
    hit_cap: usize,
    hits: &mut Vec<TemplateHit>,
) {
    for lit in literals {
        if hits.len() >= hit_cap {
            break;
        }
        if has_dunder(&lit.value) {
            hits.push(hit(template, Indicator::DunderString, lit.offset));
        }
        if lit.escaped_name {
            hits.push(hit(template, Indicator::EscapedName, lit.offset));
        }
        if PYTHON_STRINGS.contains(&lit.value.as_str()) {
            hits.push(hit(template, Indicator::PythonName, lit.offset));
        }
        if !lit.value.is_empty() && lit.value.chars().all(|c| c == '_') {
            let after = template
                .get(lit.offset..)
                .and_then(|rest| rest.get(1..))
                .and_then(|rest| rest.find(['\'', '"']).and_then(|q| rest.get(q + 1..)))
                .unwrap_or("");
            if after.trim_start().starts_with('*') {
                hits.push(hit(template, Indicator::UnderscoreRepeat, lit.offset));
            }
        }
    }
}

/// Pieces that only form a dunder together: `'__cla' ~ 'ss__'`, `['__gl','obals__']|join`.
fn scan_joined(template: &str, literals: &[Literal], hit_cap: usize, hits: &mut Vec<TemplateHit>) {
    let mut joined = String::new();
    let mut owners: Vec<(usize, usize)> = Vec::new();
    for lit in literals {
        if joined.len() > MAX_JOINED_LITERALS {
            break;
        }
        if lit.value.is_empty() {
            continue;
        }
        owners.push((joined.len(), lit.offset));
        joined.push_str(&lit.value);
    }
    for dunder in DANGEROUS_DUNDERS {
        let mut from = 0;
        while let Some(pos) = joined.get(from..).and_then(|j| j.find(dunder)) {
            let at = from + pos;
            from = at + dunder.len();
            // The literal the match starts in, and where that literal ends in `joined`.
            let index = owners.partition_point(|(start, _)| *start <= at);
            let Some((_, offset)) = index.checked_sub(1).and_then(|i| owners.get(i)) else {
                continue;
            };
            let end = owners.get(index).map_or(joined.len(), |(start, _)| *start);
            if at + dunder.len() > end {
                hits.push(hit(template, Indicator::JoinedDunder, *offset));
                if hits.len() >= hit_cap {
                    return;
                }
            }
        }
    }
}

/// Where a chat template was found, for the finding's message and offset.
#[derive(Debug, Clone, Copy, Default)]
pub struct Origin<'a> {
    /// The file and field that carry it (`tokenizer_config.json` `chat_template[1]`), or `None`
    /// when the finding's own file says it all (GGUF metadata, a `.jinja` file).
    pub carrier: Option<&'a str>,
    /// Offset of the template's first byte in the file, when the file stores it verbatim.
    pub offset: Option<u64>,
}

/// Judges one chat template: a `template-suspicious` problem ([`ProblemKind::Unsafe`], FMT005)
/// per suspicious construct, naming the template, its carrier and the line within the template;
/// evidence `template`, `indicator`, `line`, `excerpt` (and `field` for a JSON carrier). A
/// template longer than [`MAX_TEMPLATE_BYTES`] is judged up to that size and a
/// `template-too-large` limit problem says so.
pub fn judge(template: &str, name: &str, origin: Origin<'_>) -> Vec<Problem> {
    let name = excerpt(name, 100);
    let within = origin
        .carrier
        .map(|c| format!(" in {}", excerpt(c, 200)))
        .unwrap_or_default();
    let mut problems = Vec::new();
    let mut text = template;
    if text.len() > MAX_TEMPLATE_BYTES {
        let mut cut = MAX_TEMPLATE_BYTES;
        while cut > 0 && !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text = text.get(..cut).unwrap_or("");
        problems.push(
            Problem::new(
                ProblemKind::LimitExceeded,
                "template-too-large",
                format!(
                    "chat template '{name}'{within} is {} bytes; only the first {cut} were scanned",
                    template.len()
                ),
                origin.offset,
            )
            .with("template", name.clone()),
        );
    }
    for hit in scan_template(text, MAX_TEMPLATE_HITS) {
        let line = line_of(text, hit.offset);
        let mut p = Problem::new(
            ProblemKind::Unsafe,
            "template-suspicious",
            format!(
                "chat template '{name}'{within} {} at line {line}: {}",
                hit.indicator.describe(),
                hit.excerpt
            ),
            origin.offset.map(|o| o.saturating_add(hit.offset as u64)),
        )
        .with("template", name.clone())
        .with("indicator", hit.indicator.code())
        .with("line", line.to_string())
        .with("excerpt", hit.excerpt);
        if let Some(carrier) = origin.carrier {
            p = p.with("carrier", excerpt(carrier, 200));
        }
        problems.push(p);
    }
    problems
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let before = text.get(..offset).unwrap_or(text);
    before.bytes().filter(|b| *b == b'\n').count() + 1
}

/// One chat template a JSON document carries: its name, the field that holds it and the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonTemplate<'v> {
    /// `default` for a plain string, else the name given in the file.
    pub name: String,
    /// Where it sits (`chat_template`, `chat_template[1]`, `chat_template.tool_use`).
    pub field: String,
    /// The Jinja text.
    pub template: &'v str,
}

/// The chat templates of a JSON document's top-level `chat_template` field, as transformers reads
/// it: a string (`default`), a list of `{"name": ..., "template": ...}`, or an object from name to
/// template. At most [`MAX_TEMPLATES_PER_FILE`] are returned; the second value counts the
/// templates left out.
pub fn json_templates(doc: &Value) -> (Vec<JsonTemplate<'_>>, usize) {
    let mut taken = 0;
    let mut skipped = 0;
    // Names and fields are built only for the templates kept: a list of a million entries
    // costs a count, not a million strings.
    let mut add = |value: &'_ Value, name: &dyn Fn() -> (String, String)| {
        value.as_str()?;
        if taken >= MAX_TEMPLATES_PER_FILE {
            skipped += 1;
            return None;
        }
        taken += 1;
        Some(name())
    };
    let mut kept: Vec<(String, String, &Value)> = Vec::new();
    match doc.get("chat_template") {
        Some(v @ Value::String(_)) => {
            if let Some((n, f)) = add(v, &|| ("default".into(), "chat_template".into())) {
                kept.push((n, f, v));
            }
        }
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let Some(v) = item.get("template") else {
                    continue;
                };
                let name = item
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("default");
                if let Some((n, f)) = add(v, &|| (name.to_owned(), format!("chat_template[{i}]"))) {
                    kept.push((n, f, v));
                }
            }
        }
        Some(Value::Object(map)) => {
            for (name, v) in map {
                if let Some((n, f)) = add(v, &|| (name.clone(), format!("chat_template.{name}"))) {
                    kept.push((n, f, v));
                }
            }
        }
        _ => {}
    }
    let out = kept
        .into_iter()
        .filter_map(|(name, field, v)| {
            Some(JsonTemplate {
                name,
                field,
                template: v.as_str()?,
            })
        })
        .collect();
    (out, skipped)
}

/// The template name a `.jinja` file stands for: `default` for `chat_template.jinja`, else its
/// stem (`additional_chat_templates/tool_use.jinja` is `tool_use`).
pub fn jinja_name(rel: &str) -> &str {
    let base = rel.rsplit('/').next().unwrap_or(rel);
    let stem = base.strip_suffix(".jinja").unwrap_or(base);
    if stem == "chat_template" {
        "default"
    } else {
        stem
    }
}

fn has_dunder(text: &str) -> bool {
    let mut rest = text;
    while let Some(pos) = rest.find("__") {
        let tail = rest.get(pos + 2..).unwrap_or("");
        let word: String = tail
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let core = word.trim_end_matches('_');
        if !core.is_empty()
            && word.len() >= core.len() + 2
            && core.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return true;
        }
        rest = tail;
    }
    false
}

fn find(text: &str, from: usize, needle: &str) -> Option<usize> {
    text.get(from..)?.find(needle).map(|p| p + from)
}

fn hit(template: &str, indicator: Indicator, offset: usize) -> TemplateHit {
    let mut start = offset.saturating_sub(24);
    while start > 0 && !template.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = offset.saturating_add(72).min(template.len());
    while end < template.len() && !template.is_char_boundary(end) {
        end += 1;
    }
    TemplateHit {
        indicator,
        offset,
        excerpt: excerpt(template.get(start..end).unwrap_or(""), 120),
    }
}

/// Lexes one code region starting at `from` until `closer` + `}` outside a string; records
/// identifiers and decoded string literals. Returns the offset of the closing delimiter (or
/// the end of the text).
fn lex_code<'t>(
    text: &'t str,
    from: usize,
    closer: u8,
    literals: &mut Vec<Literal>,
    idents: &mut Vec<Ident<'t>>,
) -> usize {
    let bytes = text.as_bytes();
    let mut i = from;
    let mut prev: Option<char> = None;
    while let Some(&c) = bytes.get(i) {
        if c == closer && bytes.get(i + 1) == Some(&b'}') {
            return i;
        }
        if c == b'\'' || c == b'"' {
            let (end, value, escaped_name) = lex_string(text, i);
            literals.push(Literal {
                offset: i,
                value,
                escaped_name,
            });
            i = end;
            prev = Some(c as char);
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while bytes
                .get(i)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
            {
                i += 1;
            }
            let next = text
                .get(i..)
                .and_then(|rest| rest.chars().find(|ch| !ch.is_whitespace()));
            idents.push(Ident {
                offset: start,
                text: text.get(start..i).unwrap_or(""),
                prev,
                next,
            });
            prev = Some('a');
            continue;
        }
        if !c.is_ascii_whitespace() {
            prev = Some(c as char);
        }
        i += 1;
    }
    bytes.len()
}

/// Decodes a quoted literal at `start`. Returns the offset after it, the decoded value and
/// whether an escape spelled a letter, digit, `_` or `.` (pure obfuscation in a template).
fn lex_string(text: &str, start: usize) -> (usize, String, bool) {
    let bytes = text.as_bytes();
    let quote = bytes.get(start).copied().unwrap_or(b'"');
    let mut out = String::new();
    let mut escaped_name = false;
    let mut i = start + 1;
    let push_code = |code: u32, out: &mut String, flag: &mut bool| {
        if let Some(ch) = char::from_u32(code) {
            if ch.is_ascii_alphanumeric() || ch == '_' || ch == '.' {
                *flag = true;
            }
            out.push(ch);
        }
    };
    while let Some(&c) = bytes.get(i) {
        if c == quote {
            return (i + 1, out, escaped_name);
        }
        if c == b'\\' {
            let Some(&e) = bytes.get(i + 1) else {
                break;
            };
            let hex = |from: usize, n: usize| {
                text.get(from..from + n)
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
            };
            match e {
                b'x' => {
                    if let Some(code) = hex(i + 2, 2) {
                        push_code(code, &mut out, &mut escaped_name);
                        i += 4;
                        continue;
                    }
                }
                b'u' => {
                    if let Some(code) = hex(i + 2, 4) {
                        push_code(code, &mut out, &mut escaped_name);
                        i += 6;
                        continue;
                    }
                }
                b'U' => {
                    if let Some(code) = hex(i + 2, 8) {
                        push_code(code, &mut out, &mut escaped_name);
                        i += 10;
                        continue;
                    }
                }
                b'0'..=b'7' => {
                    let digits = bytes
                        .get(i + 1..)
                        .unwrap_or_default()
                        .iter()
                        .take(3)
                        .take_while(|d| (b'0'..=b'7').contains(d))
                        .count();
                    let code = text
                        .get(i + 1..i + 1 + digits)
                        .and_then(|o| u32::from_str_radix(o, 8).ok())
                        .unwrap_or(0);
                    push_code(code, &mut out, &mut escaped_name);
                    i += 1 + digits;
                    continue;
                }
                b'N' => {
                    // \N{LOW LINE}: named escapes only serve to hide characters here.
                    escaped_name = true;
                }
                b'n' => out.push('\n'),
                b't' => out.push('\t'),
                b'r' => out.push('\r'),
                other => out.push(other as char),
            }
            i += 2;
            continue;
        }
        // Copy one UTF-8 character.
        let ch = text.get(i..).and_then(|rest| rest.chars().next());
        match ch {
            Some(ch) => {
                out.push(ch);
                i += ch.len_utf8();
            }
            None => i += 1,
        }
    }
    (bytes.len(), out, escaped_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real chat templates (Llama 3, Llama 3.1 with tools, Mistral, Gemma, ChatML, Qwen
    /// with tools and namespace, Command-R/Aya, Phi-3, Zephyr, DeepSeek): none may be flagged.
    #[test]
    fn does_not_flag_real_chat_templates() {
        let corpus = include_str!("../../tests/fixtures/chat_templates/benign.txt");
        let mut count = 0;
        for template in corpus.split("\n=====\n") {
            count += 1;
            let hits = scan_template(template, 16);
            assert!(hits.is_empty(), "template {count} flagged: {hits:?}");
        }
        assert!(count >= 8);
    }

    #[test]
    fn flags_published_ssti_payloads() {
        let corpus = include_str!("../../tests/fixtures/chat_templates/malicious.txt");
        let mut count = 0;
        for template in corpus.split("\n=====\n") {
            count += 1;
            let hits = scan_template(template, 16);
            assert!(!hits.is_empty(), "payload {count} not flagged: {template}");
        }
        assert!(count >= 10);
    }

    #[test]
    fn ignores_comments_and_plain_text() {
        assert!(scan_template("{# __class__ #}hello __init__ text", 8).is_empty());
        // A closing delimiter inside a string does not end the code region.
        let hits = scan_template("{{ '}}' ~ x.__class__ }}", 8);
        assert_eq!(
            hits.first().map(|h| h.indicator),
            Some(Indicator::DunderAccess)
        );
    }

    #[test]
    fn decodes_string_escapes() {
        let hits = scan_template(r"{{ ''|attr('\x5f\x5fclass\x5f\x5f') }}", 8);
        let kinds: Vec<Indicator> = hits.iter().map(|h| h.indicator).collect();
        assert!(kinds.contains(&Indicator::EscapedName));
        assert!(kinds.contains(&Indicator::DunderString));
        assert!(kinds.contains(&Indicator::ComputedAttr));
    }

    #[test]
    fn scans_huge_template_in_bounded_time() {
        let piece =
            "{{ x['__cla' ~ 'ss__'] }}{{ m.__init__ }}{% set a = '__' %}{{ '%s'|format(1) }}";
        let template = piece.repeat(20_000);
        let hits = scan_template(&template, 16);
        assert_eq!(hits.len(), 16);
    }

    #[test]
    fn judge_names_template_carrier_and_line() {
        let origin = Origin {
            carrier: Some("tokenizer_config.json field `chat_template[1]`"),
            offset: None,
        };
        let problems = judge(
            "hello\n{{ cycler.__init__.__globals__ }}",
            "tool_use",
            origin,
        );
        let first = problems.first().expect("flagged");
        assert_eq!(first.code, "template-suspicious");
        assert_eq!(first.kind, ProblemKind::Unsafe);
        assert_eq!(first.detail("template"), Some("tool_use"));
        assert_eq!(first.detail("line"), Some("2"));
        assert!(
            first
                .message
                .contains("'tool_use' in tokenizer_config.json")
        );
        assert_eq!(first.offset, None);
        // A verbatim carrier keeps file offsets.
        let at = Origin {
            carrier: None,
            offset: Some(100),
        };
        let problems = judge("{{ x.__class__ }}", "default", at);
        assert_eq!(problems.first().and_then(|p| p.offset), Some(105));
    }

    #[test]
    fn judge_bounds_a_huge_template_and_says_so() {
        let mut text = "a".repeat(MAX_TEMPLATE_BYTES);
        text.push_str("{{ x.__class__ }}");
        let problems = judge(&text, "default", Origin::default());
        let codes: Vec<&str> = problems.iter().map(|p| p.code).collect();
        assert_eq!(codes, ["template-too-large"]);
        // A multi-byte character across the cut does not panic.
        let text = format!("{}é{{{{ x }}}}", "a".repeat(MAX_TEMPLATE_BYTES - 1));
        assert_eq!(judge(&text, "d", Origin::default()).len(), 1);
    }

    #[test]
    fn json_templates_reads_every_shape_transformers_does() {
        let doc = serde_json::json!({"chat_template": "{{ a }}"});
        let (t, skipped) = json_templates(&doc);
        assert_eq!((t.len(), skipped), (1, 0));
        assert_eq!(
            (t[0].name.as_str(), t[0].field.as_str()),
            ("default", "chat_template")
        );
        let doc = serde_json::json!({"chat_template": [
            {"name": "default", "template": "{{ a }}"},
            {"name": "tool_use", "template": "{{ b }}"},
            {"name": "broken", "template": 3},
            "not an object"
        ]});
        let (t, _) = json_templates(&doc);
        let names: Vec<(&str, &str)> = t
            .iter()
            .map(|t| (t.name.as_str(), t.field.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("default", "chat_template[0]"),
                ("tool_use", "chat_template[1]")
            ]
        );
        let doc = serde_json::json!({"chat_template": {"rag": "{{ c }}"}});
        assert_eq!(json_templates(&doc).0[0].field, "chat_template.rag");
        assert!(
            json_templates(&serde_json::json!({"model_type": "x"}))
                .0
                .is_empty()
        );
    }

    #[test]
    fn json_templates_keeps_a_bounded_number() {
        let items: Vec<Value> = (0..MAX_TEMPLATES_PER_FILE + 5)
            .map(|i| serde_json::json!({"name": format!("t{i}"), "template": "x"}))
            .collect();
        let doc = serde_json::json!({ "chat_template": items });
        let (t, skipped) = json_templates(&doc);
        assert_eq!((t.len(), skipped), (MAX_TEMPLATES_PER_FILE, 5));
    }

    #[test]
    fn jinja_names() {
        assert_eq!(jinja_name("chat_template.jinja"), "default");
        assert_eq!(
            jinja_name("m/additional_chat_templates/tool_use.jinja"),
            "tool_use"
        );
        assert_eq!(jinja_name("x/rag.jinja"), "rag");
    }

    #[test]
    fn a_namespace_field_named_system_is_not_os_system() {
        let ok = "{%- set ns = namespace(system='') -%}{%- set ns.system = m -%}{{ ns.system }}";
        assert!(scan_template(ok, 8).is_empty());
        let hits = scan_template("{{ x.os.system('id') }}", 8);
        assert!(hits.iter().any(|h| h.indicator == Indicator::PythonName));
    }

    proptest::proptest! {
        #[test]
        fn template_scan_never_panics(text in "\\PC{0,300}") {
            let _ = scan_template(&text, 16);
        }
    }
}
