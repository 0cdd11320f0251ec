//! Model cards (`README.md`, `MODEL_CARD.md`, `model_card.md`): reads the YAML front matter the
//! Hugging Face Hub uses for metadata (license, datasets, base model, …) and looks for a section
//! that describes the training data, then checks those facts against a policy's required fields
//! and allowed licenses.
//!
//! A card is the only place a repository states its license and lineage; a release gate that
//! cannot read it cannot tell a research-only or non-commercial model from an Apache-2.0 one.
//! The front matter is untrusted YAML, so it is size-capped before parsing, and parsed with
//! `serde_norway`, which rejects alias expansion past 100 events per input event (the
//! "billion laughs" bomb) and nesting deeper than 128, after `provenance::yaml` has counted the
//! nodes its aliases expand to (`max_yaml_nodes`). Nothing is rendered or executed; YAML
//! tags such as `!!python/object` are data.
//!
//! Front matter is recognised as the Hub does: optional leading blank lines, a line `---`, the
//! YAML, and a closing line `---`. A UTF-8 byte order mark before it is accepted (editors on
//! Windows write one), as are CRLF line endings and trailing spaces on the fence lines.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_norway::Value;

use super::yaml::YamlError;

/// Caps on the work done for one model card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Card text examined for headings, in bytes; the rest is ignored (`truncated`).
    pub max_card_bytes: usize,
    /// Largest front matter parsed, in bytes.
    pub max_front_matter_bytes: usize,
    /// Items kept from one list-valued field (`tags`, `datasets`, …).
    pub max_list_items: usize,
    /// Chars kept from one string value.
    pub max_value_chars: usize,
    /// Top-level front matter keys examined.
    pub max_fields: usize,
    /// Nodes of the front matter once its aliases are expanded; a larger one is not built.
    pub max_yaml_nodes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_card_bytes: 4 * 1024 * 1024,
            max_front_matter_bytes: 256 * 1024,
            max_list_items: 256,
            max_value_chars: 512,
            max_fields: 512,
            max_yaml_nodes: 1_000_000,
        }
    }
}

/// Whether the card has usable front matter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum FrontMatterState {
    /// The card does not start with a `---` line.
    #[default]
    Absent,
    /// An opening `---` with no closing `---` line.
    Unterminated,
    /// Front matter larger than `max_front_matter_bytes`; not parsed.
    TooLarge {
        /// Size of the front matter.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// Front matter whose aliases expand past `max_yaml_nodes` nodes; not built.
    TooManyNodes {
        /// The limit.
        limit: u64,
    },
    /// Not valid YAML, or not a mapping. Line and column are 1-based in the card file.
    Invalid {
        /// The parser's message, without its own position.
        message: String,
        /// 1-based line in the card.
        line: usize,
        /// 1-based column.
        column: usize,
    },
    /// Parsed; the fields below come from it.
    Present,
}

impl FrontMatterState {
    /// Stable sub-code: `absent`, `unterminated`, `too-large`, `too-many-nodes`,
    /// `invalid-yaml` or `present`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Absent => "absent",
            Self::Unterminated => "unterminated",
            Self::TooLarge { .. } => "too-large",
            Self::TooManyNodes { .. } => "too-many-nodes",
            Self::Invalid { .. } => "invalid-yaml",
            Self::Present => "present",
        }
    }
}

/// What a model card states.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CardFacts {
    /// Front matter state.
    pub front_matter: FrontMatterState,
    /// `license` (a string or list), as written.
    pub license: Vec<String>,
    /// `license_name`, used with `license: other`.
    pub license_name: Option<String>,
    /// `license_link`, used with `license: other`.
    pub license_link: Option<String>,
    /// `datasets`.
    pub datasets: Vec<String>,
    /// `base_model`.
    pub base_model: Vec<String>,
    /// `pipeline_tag`.
    pub pipeline_tag: Option<String>,
    /// `library_name`.
    pub library_name: Option<String>,
    /// `language`.
    pub language: Vec<String>,
    /// `tags`.
    pub tags: Vec<String>,
    /// A `model-index` (evaluation results) is present.
    pub has_model_index: bool,
    /// Top-level keys whose value is not null, empty or blank; sorted.
    pub fields: BTreeSet<String>,
    /// The body has a heading about training data (`Training Data`, `Datasets`, …).
    pub has_training_data_heading: bool,
    /// Such a heading has content other than a placeholder like `[More Information Needed]`.
    pub has_training_data_notes: bool,
    /// A limit cut the card, a list or a value short.
    pub truncated: bool,
    /// Evaluation results from `model-index` (for the SBOM's `quantitativeAnalysis`), at most
    /// `max_list_items`; omitted when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<CardMetric>,
    /// The text of a limitations / bias / risks section, when it has real content (for the
    /// SBOM's `considerations`), cut at `max_value_chars`; omitted when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limitations: Option<String>,
}

/// One metric of a `model-index` result: `{task, dataset, metrics: [{type, value, name}]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CardMetric {
    /// `metrics[].type` (`accuracy`, `f1`, …).
    #[serde(rename = "type")]
    pub metric_type: String,
    /// `metrics[].value`, as written.
    pub value: String,
    /// `metrics[].name`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `task.type` of the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// `dataset.name` (or `dataset.type`) of the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// `dataset.split`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
}

/// A way the card fails the policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CardProblem {
    /// `field-missing` or `license-not-allowed`.
    pub code: &'static str,
    /// The front matter field concerned.
    pub field: String,
    /// Lowercase explanation with the values involved.
    pub message: String,
}

/// Reads a model card's front matter and headings. Never fails: problems are states in the facts.
pub fn parse_card(text: &str, limits: &Limits) -> CardFacts {
    let mut facts = CardFacts::default();
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let text = if text.len() > limits.max_card_bytes {
        facts.truncated = true;
        let mut end = limits.max_card_bytes;
        while end > 0 && !text.is_char_boundary(end) {
            end = end.saturating_sub(1);
        }
        text.get(..end).unwrap_or_default()
    } else {
        text
    };
    let body = match split_front_matter(text) {
        Split::Absent => text,
        Split::Unterminated => {
            facts.front_matter = FrontMatterState::Unterminated;
            text
        }
        Split::Found {
            yaml,
            first_line,
            body,
        } => {
            if yaml.len() > limits.max_front_matter_bytes {
                facts.front_matter = FrontMatterState::TooLarge {
                    bytes: yaml.len(),
                    limit: limits.max_front_matter_bytes,
                };
            } else {
                read_front_matter(yaml, first_line, limits, &mut facts);
            }
            body
        }
    };
    let (heading, notes) = training_data_sections(body);
    facts.has_training_data_heading = heading;
    facts.has_training_data_notes = notes;
    facts.limitations = limitations_section(body, limits.max_value_chars);
    facts
}

enum Split<'t> {
    Absent,
    Unterminated,
    Found {
        yaml: &'t str,
        /// 1-based card line of the first YAML line.
        first_line: usize,
        body: &'t str,
    },
}

fn is_fence(line: &str) -> bool {
    line.trim_end_matches(['\r', '\n', ' ', '\t']) == "---"
}

fn split_front_matter(text: &str) -> Split<'_> {
    let mut offset = 0usize;
    let mut line_no = 0usize;
    let mut lines = text.split_inclusive('\n');
    // The Hub allows whitespace before the opening fence.
    let opened = loop {
        let Some(line) = lines.next() else {
            return Split::Absent;
        };
        offset = offset.saturating_add(line.len());
        line_no = line_no.saturating_add(1);
        if is_fence(line) {
            break true;
        }
        if !line.trim().is_empty() {
            break false;
        }
    };
    if !opened {
        return Split::Absent;
    }
    let start = offset;
    let first_line = line_no.saturating_add(1);
    for line in lines {
        if is_fence(line) {
            let yaml = text.get(start..offset).unwrap_or_default();
            let body = text
                .get(offset.saturating_add(line.len())..)
                .unwrap_or_default();
            return Split::Found {
                yaml,
                first_line,
                body,
            };
        }
        offset = offset.saturating_add(line.len());
    }
    Split::Unterminated
}

/// The nesting serde_norway refuses to go past (its `recursion_check`).
pub const YAML_PARSER_DEPTH: usize = 128;

/// Whether the flow collections (`[`, `{`) of a YAML text nest deeper than `max`, outside quoted
/// scalars and comments. Brackets inside a plain scalar (`x[1]`) are counted too; they balance
/// in any text a person writes, so only a document past the parser's own limit reaches `max`.
pub fn flow_depth_exceeds(text: &str, max: usize) -> bool {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        match c {
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'\'' | b'"' => {
                // To the closing quote: `''` is a quote in single quotes, `\"` in double.
                i += 1;
                while let Some(&q) = bytes.get(i) {
                    if q == b'\\' && c == b'"' {
                        i += 1;
                    } else if q == c {
                        if c == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                            i += 1;
                        } else {
                            break;
                        }
                    }
                    i += 1;
                }
            }
            b'#' if i == 0 || bytes.get(i - 1).is_some_and(u8::is_ascii_whitespace) => {
                while bytes.get(i).is_some_and(|&b| b != b'\n') {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

fn read_front_matter(yaml: &str, first_line: usize, limits: &Limits, facts: &mut CardFacts) {
    if yaml.trim().is_empty() {
        facts.front_matter = FrontMatterState::Present;
        return;
    }
    // The parser reads all of a document before it refuses its depth, at some microseconds a
    // level (issue 37): flow nesting past its limit is refused here first, as it would refuse it.
    if flow_depth_exceeds(yaml, YAML_PARSER_DEPTH) {
        facts.front_matter = FrontMatterState::Invalid {
            message: format!(
                "recursion limit exceeded (flow collections nest deeper than {YAML_PARSER_DEPTH})"
            ),
            line: first_line,
            column: 1,
        };
        return;
    }
    let value: Value = match super::yaml::parse(yaml, limits.max_yaml_nodes) {
        Ok(value) => value,
        Err(YamlError::TooManyNodes) => {
            facts.front_matter = FrontMatterState::TooManyNodes {
                limit: limits.max_yaml_nodes,
            };
            return;
        }
        Err(YamlError::Parse(err)) => {
            let (line, column) = err.location().map_or((0, 1), |l| (l.line(), l.column()));
            let message = err.to_string();
            // The parser's own " at line N column M" counts from the front matter, not the file.
            let message = message
                .split(" at line ")
                .next()
                .unwrap_or_default()
                .to_owned();
            facts.front_matter = FrontMatterState::Invalid {
                message,
                line: first_line.saturating_add(line.saturating_sub(1)),
                column,
            };
            return;
        }
    };
    let Value::Mapping(map) = value else {
        facts.front_matter = FrontMatterState::Invalid {
            message: "front matter is not a mapping".to_owned(),
            line: first_line,
            column: 1,
        };
        return;
    };
    facts.front_matter = FrontMatterState::Present;
    if map.len() > limits.max_fields {
        facts.truncated = true;
    }
    let mut reader = Reader {
        limits,
        truncated: false,
    };
    for (key, value) in map.iter().take(limits.max_fields) {
        let Value::String(key) = key else { continue };
        if !is_empty_value(value) {
            facts.fields.insert(reader.bounded(key));
        }
        match key.as_str() {
            "license" => facts.license = reader.strings(value),
            "license_name" => facts.license_name = reader.string(value),
            "license_link" => facts.license_link = reader.string(value),
            "datasets" => facts.datasets = reader.strings(value),
            "base_model" => facts.base_model = reader.strings(value),
            "pipeline_tag" => facts.pipeline_tag = reader.string(value),
            "library_name" => facts.library_name = reader.string(value),
            "language" => facts.language = reader.strings(value),
            "tags" => facts.tags = reader.strings(value),
            "model-index" => {
                facts.has_model_index = !is_empty_value(value);
                facts.metrics = reader.metrics(value);
            }
            _ => {}
        }
    }
    facts.truncated |= reader.truncated;
}

fn is_empty_value(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Sequence(s) => s.is_empty(),
        Value::Mapping(m) => m.is_empty(),
        _ => false,
    }
}

struct Reader<'l> {
    limits: &'l Limits,
    truncated: bool,
}

impl Reader<'_> {
    fn bounded(&mut self, s: &str) -> String {
        let mut chars = s.chars();
        let out: String = chars.by_ref().take(self.limits.max_value_chars).collect();
        if chars.next().is_some() {
            self.truncated = true;
        }
        out
    }

    /// A scalar as text; numbers and booleans count (`license: 0bsd` is a string, `year: 2024`
    /// is not, but both are stated).
    fn string(&mut self, value: &Value) -> Option<String> {
        match value {
            Value::String(s) if !s.trim().is_empty() => Some(self.bounded(s.trim())),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }

    /// The metrics of a `model-index`: every `results[].metrics[]` entry with a type and a
    /// value, at most `max_list_items` in all (the walk stops there too).
    fn metrics(&mut self, index: &Value) -> Vec<CardMetric> {
        let max = self.limits.max_list_items;
        let mut out = Vec::new();
        fn seq(v: Option<&Value>) -> &[Value] {
            match v {
                Some(Value::Sequence(s)) => s,
                _ => &[],
            }
        }
        let Value::Sequence(models) = index else {
            return out;
        };
        for model in models.iter().take(max) {
            for result in seq(model.get("results")).iter().take(max) {
                let task = result.get("task").and_then(|t| t.get("type"));
                let task = task.and_then(|t| self.string(t));
                let dataset = result.get("dataset");
                let split = dataset
                    .and_then(|d| d.get("split"))
                    .and_then(|s| self.string(s));
                let dataset = dataset
                    .and_then(|d| d.get("name").or_else(|| d.get("type")))
                    .and_then(|n| self.string(n));
                for m in seq(result.get("metrics")).iter() {
                    if out.len() >= max {
                        self.truncated = true;
                        return out;
                    }
                    let (Some(metric_type), Some(value)) = (
                        m.get("type").and_then(|t| self.string(t)),
                        m.get("value").and_then(|v| self.string(v)),
                    ) else {
                        continue;
                    };
                    let name = m.get("name").and_then(|n| self.string(n));
                    out.push(CardMetric {
                        metric_type,
                        value,
                        name,
                        task: task.clone(),
                        dataset: dataset.clone(),
                        split: split.clone(),
                    });
                }
            }
        }
        out
    }

    fn strings(&mut self, value: &Value) -> Vec<String> {
        match value {
            Value::Sequence(items) => {
                if items.len() > self.limits.max_list_items {
                    self.truncated = true;
                }
                items
                    .iter()
                    .take(self.limits.max_list_items)
                    .filter_map(|v| self.string(v))
                    .collect()
            }
            other => self.string(other).into_iter().collect(),
        }
    }
}

// ---- training data sections -----------------------------------------------------------------

/// Headings that are about training data on their own.
const DATA_HEADINGS: &[&str] = &[
    "data",
    "dataset",
    "datasets",
    "data sources",
    "dataset details",
    "datasets used",
    "training details",
    "training corpus",
];

const TRAINING_WORDS: &[&str] = &[
    "training",
    "train",
    "trained",
    "pretraining",
    "finetuning",
    "fine",
];

const DATA_WORDS: &[&str] = &["data", "dataset", "datasets", "corpus", "corpora"];

/// Section text that says nothing (model card templates and `Trainer` leave these behind).
const PLACEHOLDERS: &[&str] = &[
    "more information needed",
    "needs more information",
    "n a",
    "tbd",
    "todo",
    "coming soon",
    "to be added",
];

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !w.chars().all(|c| c.is_ascii_digit()) && *w != "optional")
        .map(str::to_owned)
        .collect()
}

fn is_training_data_heading(text: &str) -> bool {
    let words = words(text);
    let joined = words.join(" ");
    DATA_HEADINGS.contains(&joined.as_str())
        || (words.iter().any(|w| TRAINING_WORDS.contains(&w.as_str()))
            && words.iter().any(|w| DATA_WORDS.contains(&w.as_str())))
}

/// One line of the body, classified.
#[derive(Debug, PartialEq, Eq)]
enum Line<'t> {
    /// ATX or setext heading.
    Heading(&'t str),
    /// A line that is bold and nothing else (`**Training data**`): a heading for matching, but
    /// not the end of a section.
    Bold(&'t str),
    /// Text that says something.
    Content,
    /// Blank, comment, fence, or setext underline.
    Nothing,
}

fn atx_heading(line: &str) -> Option<&str> {
    let indent = line
        .len()
        .saturating_sub(line.trim_start_matches(' ').len());
    if indent > 3 {
        return None;
    }
    let rest = line.trim_start_matches(' ');
    let hashes = rest
        .len()
        .saturating_sub(rest.trim_start_matches('#').len());
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let text = rest.get(hashes..)?;
    if !text.is_empty() && !text.starts_with([' ', '\t']) {
        return None;
    }
    Some(text.trim().trim_end_matches('#').trim())
}

fn is_setext_underline(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty()
        && line.len().saturating_sub(line.trim_start().len()) <= 3
        && (t.chars().all(|c| c == '=') || t.chars().all(|c| c == '-'))
}

fn bold_line(line: &str) -> Option<&str> {
    let t = line.trim();
    let inner = t
        .strip_prefix("**")
        .and_then(|s| s.strip_suffix("**"))
        .or_else(|| t.strip_prefix("__").and_then(|s| s.strip_suffix("__")))?;
    (!inner.is_empty() && !inner.contains("**")).then_some(inner)
}

fn is_placeholder(line: &str) -> bool {
    let joined = words(line).join(" ");
    joined.is_empty() || PLACEHOLDERS.contains(&joined.as_str())
}

/// Removes `<!-- … -->` spans; `in_comment` carries an open comment across lines.
fn strip_comments(line: &str, in_comment: &mut bool) -> String {
    let mut out = String::new();
    let mut rest = line;
    loop {
        if *in_comment {
            let Some(end) = rest.find("-->") else {
                return out;
            };
            rest = rest.get(end.saturating_add(3)..).unwrap_or_default();
            *in_comment = false;
        }
        let Some(start) = rest.find("<!--") else {
            out.push_str(rest);
            return out;
        };
        out.push_str(rest.get(..start).unwrap_or_default());
        rest = rest.get(start.saturating_add(4)..).unwrap_or_default();
        *in_comment = true;
    }
}

fn classify_lines(body: &str) -> Vec<Line<'_>> {
    let raw: Vec<&str> = body.lines().collect();
    let mut out: Vec<Line<'_>> = Vec::with_capacity(raw.len());
    let mut fence: Option<&str> = None;
    let mut in_comment = false;
    for (i, line) in raw.iter().enumerate() {
        let trimmed = line.trim_start();
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
            out.push(Line::Content);
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = trimmed.get(..3);
            out.push(Line::Content);
            continue;
        }
        let was_in_comment = in_comment;
        let visible = strip_comments(line, &mut in_comment);
        if visible.trim().is_empty() {
            out.push(Line::Nothing);
            continue;
        }
        if !was_in_comment && let Some(text) = atx_heading(line) {
            out.push(Line::Heading(text));
            continue;
        }
        let next_is_underline = raw
            .get(i.saturating_add(1))
            .is_some_and(|n| is_setext_underline(n));
        if next_is_underline && !is_setext_underline(line) && !was_in_comment {
            out.push(Line::Heading(line.trim()));
            continue;
        }
        if is_setext_underline(line) && i > 0 && matches!(out.last(), Some(Line::Heading(_))) {
            out.push(Line::Nothing);
            continue;
        }
        if let Some(text) = bold_line(line) {
            out.push(Line::Bold(text));
            continue;
        }
        out.push(if is_placeholder(&visible) {
            Line::Nothing
        } else {
            Line::Content
        });
    }
    out
}

/// (a training-data heading exists, one of them has real content).
fn training_data_sections(body: &str) -> (bool, bool) {
    let lines = classify_lines(body);
    let mut heading = false;
    for (i, line) in lines.iter().enumerate() {
        let (text, bold) = match line {
            Line::Heading(t) => (*t, false),
            Line::Bold(t) => (*t, true),
            _ => continue,
        };
        if !is_training_data_heading(text) {
            continue;
        }
        heading = true;
        let section = lines
            .iter()
            .skip(i.saturating_add(1))
            .take_while(|l| match l {
                Line::Heading(_) => false,
                Line::Bold(_) => !bold,
                _ => true,
            });
        if section
            .into_iter()
            .any(|l| matches!(l, Line::Content | Line::Bold(_)))
        {
            return (true, true);
        }
    }
    (heading, false)
}

/// The text of the first limitations / bias / risks section with real content, its lines
/// joined with spaces and cut at `max_chars` characters.
fn limitations_section(body: &str, max_chars: usize) -> Option<String> {
    let raw: Vec<&str> = body.lines().collect();
    let lines = classify_lines(body);
    for (i, line) in lines.iter().enumerate() {
        let (Line::Heading(text) | Line::Bold(text)) = line else {
            continue;
        };
        let words = words(text);
        if !words.iter().any(|w| {
            matches!(
                w.as_str(),
                "limitation" | "limitations" | "bias" | "biases" | "risk" | "risks"
            )
        }) {
            continue;
        }
        let bold = matches!(line, Line::Bold(_));
        let mut out = String::new();
        for (j, l) in lines.iter().enumerate().skip(i.saturating_add(1)) {
            match l {
                Line::Heading(_) => break,
                Line::Bold(_) if bold => break,
                Line::Content | Line::Bold(_) => {
                    let Some(text) = raw.get(j) else { break };
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    out.push_str(text.trim());
                    if out.chars().count() > max_chars {
                        return Some(out.chars().take(max_chars).collect());
                    }
                }
                Line::Nothing => {}
            }
        }
        if !out.is_empty() {
            return Some(out);
        }
    }
    None
}

// ---- policy checks --------------------------------------------------------------------------

/// Hub license ids and their SPDX identifiers (SPDX License List 3.29). Hub ids without an SPDX
/// counterpart (`llama2`, `gemma`, `openrail`, `bigscience-openrail-m`, `other`, …) are absent.
/// The Hub's unversioned-suffix GNU ids map to SPDX's deprecated plain forms (`GPL-3.0`), which
/// state exactly as much as the card does: neither "-only" nor "-or-later".
const HUB_TO_SPDX: &[(&str, &str)] = &[
    ("afl-3.0", "AFL-3.0"),
    ("agpl-3.0", "AGPL-3.0"),
    ("apache-2.0", "Apache-2.0"),
    ("artistic-2.0", "Artistic-2.0"),
    ("bsd-2-clause", "BSD-2-Clause"),
    ("bsd-3-clause", "BSD-3-Clause"),
    ("bsd-3-clause-clear", "BSD-3-Clause-Clear"),
    ("bsl-1.0", "BSL-1.0"),
    ("c-uda", "C-UDA-1.0"),
    ("cc-by-2.0", "CC-BY-2.0"),
    ("cc-by-2.5", "CC-BY-2.5"),
    ("cc-by-3.0", "CC-BY-3.0"),
    ("cc-by-4.0", "CC-BY-4.0"),
    ("cc-by-nc-2.0", "CC-BY-NC-2.0"),
    ("cc-by-nc-3.0", "CC-BY-NC-3.0"),
    ("cc-by-nc-4.0", "CC-BY-NC-4.0"),
    ("cc-by-nc-nd-3.0", "CC-BY-NC-ND-3.0"),
    ("cc-by-nc-nd-4.0", "CC-BY-NC-ND-4.0"),
    ("cc-by-nc-sa-2.0", "CC-BY-NC-SA-2.0"),
    ("cc-by-nc-sa-3.0", "CC-BY-NC-SA-3.0"),
    ("cc-by-nc-sa-4.0", "CC-BY-NC-SA-4.0"),
    ("cc-by-nd-4.0", "CC-BY-ND-4.0"),
    ("cc-by-sa-3.0", "CC-BY-SA-3.0"),
    ("cc-by-sa-4.0", "CC-BY-SA-4.0"),
    ("cc0-1.0", "CC0-1.0"),
    ("cdla-permissive-1.0", "CDLA-Permissive-1.0"),
    ("cdla-permissive-2.0", "CDLA-Permissive-2.0"),
    ("cdla-sharing-1.0", "CDLA-Sharing-1.0"),
    ("ecl-2.0", "ECL-2.0"),
    ("epl-1.0", "EPL-1.0"),
    ("epl-2.0", "EPL-2.0"),
    ("etalab-2.0", "etalab-2.0"),
    ("eupl-1.1", "EUPL-1.1"),
    ("eupl-1.2", "EUPL-1.2"),
    ("gpl-2.0", "GPL-2.0"),
    ("gpl-3.0", "GPL-3.0"),
    ("isc", "ISC"),
    ("lgpl-2.1", "LGPL-2.1"),
    ("lgpl-3.0", "LGPL-3.0"),
    ("lppl-1.3c", "LPPL-1.3c"),
    ("mit", "MIT"),
    ("mpl-2.0", "MPL-2.0"),
    ("ms-pl", "MS-PL"),
    ("ncsa", "NCSA"),
    ("odbl", "ODbL-1.0"),
    ("odc-by", "ODC-By-1.0"),
    ("ofl-1.1", "OFL-1.1"),
    ("osl-3.0", "OSL-3.0"),
    ("pddl", "PDDL-1.0"),
    ("postgresql", "PostgreSQL"),
    ("unlicense", "Unlicense"),
    ("wtfpl", "WTFPL"),
    ("zlib", "Zlib"),
];

/// The SPDX identifier for a Hub license id (case-insensitive), if one exists.
pub fn hub_to_spdx(id: &str) -> Option<&'static str> {
    let id = id.trim();
    HUB_TO_SPDX
        .iter()
        .find(|(hub, _)| hub.eq_ignore_ascii_case(id))
        .map(|(_, spdx)| *spdx)
}

/// A license id in one comparable form: the SPDX id when known, lowercased.
fn normalize_license(id: &str) -> String {
    hub_to_spdx(id).unwrap_or(id.trim()).to_ascii_lowercase()
}

/// The licenses a card states, with `license: other` replaced by `license_name` when given.
fn effective_licenses(facts: &CardFacts) -> Vec<String> {
    facts
        .license
        .iter()
        .map(|l| match &facts.license_name {
            Some(name) if l.eq_ignore_ascii_case("other") => name.clone(),
            _ => l.clone(),
        })
        .collect()
}

/// Checks the card against required front matter fields and, when `allowed_licenses` is not
/// empty, against the allowed licenses (Hub ids or SPDX ids, case-insensitive; every license a
/// card lists must be allowed).
pub fn check_card(
    facts: &CardFacts,
    required_fields: &[String],
    allowed_licenses: &[String],
) -> Vec<CardProblem> {
    let mut problems = Vec::new();
    let why_absent = match &facts.front_matter {
        FrontMatterState::Present => "",
        FrontMatterState::Absent => " (the card has no front matter)",
        FrontMatterState::Unterminated => " (the card's front matter is not terminated)",
        FrontMatterState::TooLarge { .. } => " (the card's front matter is over the size limit)",
        FrontMatterState::TooManyNodes { .. } => {
            " (the card's front matter expands past the yaml_nodes limit)"
        }
        FrontMatterState::Invalid { .. } => " (the card's front matter is not valid yaml)",
    };
    for field in required_fields {
        if !facts.fields.contains(field) {
            problems.push(CardProblem {
                code: "field-missing",
                field: field.clone(),
                message: format!("model card front matter has no `{field}`{why_absent}"),
            });
        }
    }
    if allowed_licenses.is_empty() {
        return problems;
    }
    let allowed: BTreeSet<String> = allowed_licenses
        .iter()
        .map(|l| normalize_license(l))
        .collect();
    let stated = effective_licenses(facts);
    if stated.is_empty() {
        problems.push(CardProblem {
            code: "license-not-allowed",
            field: "license".to_owned(),
            message: format!(
                "model card states no license{why_absent}; allowed: {}",
                allowed_licenses.join(", ")
            ),
        });
    }
    for license in stated {
        if !allowed.contains(&normalize_license(&license)) {
            let spdx = hub_to_spdx(&license)
                .map(|s| format!(" (spdx {s})"))
                .unwrap_or_default();
            problems.push(CardProblem {
                code: "license-not-allowed",
                field: "license".to_owned(),
                message: format!(
                    "license `{license}`{spdx} is not allowed; allowed: {}",
                    allowed_licenses.join(", ")
                ),
            });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn parse(text: &str) -> CardFacts {
        parse_card(text, &Limits::default())
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    /// The Hub's model card template (huggingface_hub `modelcard_template.md`), rendered with
    /// its default placeholders, as `huggingface-cli` / `ModelCard.from_template` produce it.
    const TEMPLATE_CARD: &str = "---\r\nlicense: apache-2.0\r\nlanguage:\r\n- en\r\n- 'no'\r\ndatasets: org/corpus\r\nbase_model: meta-llama/Llama-2-7b-hf\r\npipeline_tag: text-generation\r\nlibrary_name: transformers\r\ntags:\r\n- llama\r\nmodel-index:\r\n- name: m\r\n  results: []\r\n---\r\n\r\n# Model Card for org/m\r\n\r\n<!-- Provide a quick summary of what the model is/does. -->\r\n\r\n## Model Details\r\n\r\n### Model Description\r\n\r\n<!-- Provide a longer summary of what this model is. -->\r\n\r\n- **Developed by:** [More Information Needed]\r\n\r\n## Uses\r\n\r\n### Direct Use\r\n\r\n[More Information Needed]\r\n\r\n## Training Details\r\n\r\n### Training Data\r\n\r\n<!-- This should link to a Dataset Card, perhaps with a short stub of information on what the training data is all about as well as documentation related to data pre-processing or additional filtering. -->\r\n\r\n[More Information Needed]\r\n\r\n### Training Procedure\r\n\r\n<!-- This relates heavily to the Technical Specifications. Content here should link to that section when it is relevant to the training procedure. -->\r\n\r\n#### Training Hyperparameters\r\n\r\n- **Training regime:** [More Information Needed]\r\n\r\n## Evaluation\r\n\r\n### Testing Data, Factors & Metrics\r\n\r\n#### Testing Data\r\n\r\nThe test split of org/corpus.\r\n";

    #[test]
    fn reads_model_index_metrics() {
        let card = "---\nmodel-index:\n- name: m\n  results:\n  - task: {type: text-classification}\n    dataset: {name: IMDB, type: imdb, split: test}\n    metrics:\n    - {type: accuracy, value: 0.93, name: Accuracy}\n    - {type: f1}\n---\n";
        let facts = parse(card);
        assert_eq!(facts.metrics.len(), 1, "{:?}", facts.metrics);
        let m = &facts.metrics[0];
        assert_eq!(m.metric_type, "accuracy");
        assert_eq!(m.value, "0.93");
        assert_eq!(m.name.as_deref(), Some("Accuracy"));
        assert_eq!(m.task.as_deref(), Some("text-classification"));
        assert_eq!(m.dataset.as_deref(), Some("IMDB"));
        assert_eq!(m.split.as_deref(), Some("test"));
        // The template's empty results list gives none.
        assert!(parse(TEMPLATE_CARD).metrics.is_empty());
    }

    #[test]
    fn bounds_model_index_metrics() {
        let mut card = String::from("---\nmodel-index:\n- results:\n  - metrics:\n");
        for i in 0..10 {
            card.push_str(&format!("    - {{type: m{i}, value: {i}}}\n"));
        }
        card.push_str("---\n");
        let limits = Limits {
            max_list_items: 3,
            ..Limits::default()
        };
        let facts = parse_card(&card, &limits);
        assert_eq!(facts.metrics.len(), 3);
        assert!(facts.truncated);
    }

    #[test]
    fn reads_a_limitations_section_but_not_a_placeholder() {
        let card = "# m\n\n## Bias, Risks, and Limitations\n\n<!-- template -->\nIt was trained on English news only.\nIt may reflect bias.\n\n## Usage\ntext\n";
        assert_eq!(
            parse(card).limitations.as_deref(),
            Some("It was trained on English news only. It may reflect bias.")
        );
        let template = "## Bias, Risks, and Limitations\n\n<!-- x -->\n\n[More Information Needed]\n\n## Usage\nx\n";
        assert_eq!(parse(template).limitations, None);
        assert_eq!(parse(TEMPLATE_CARD).limitations, None);
    }

    #[test]
    fn reads_front_matter_fields() {
        let facts = parse(TEMPLATE_CARD);
        assert_eq!(facts.front_matter, FrontMatterState::Present);
        assert_eq!(facts.license, strings(&["apache-2.0"]));
        assert_eq!(facts.language, strings(&["en", "no"]));
        assert_eq!(facts.datasets, strings(&["org/corpus"]));
        assert_eq!(facts.base_model, strings(&["meta-llama/Llama-2-7b-hf"]));
        assert_eq!(facts.pipeline_tag.as_deref(), Some("text-generation"));
        assert_eq!(facts.library_name.as_deref(), Some("transformers"));
        assert_eq!(facts.tags, strings(&["llama"]));
        assert!(facts.has_model_index);
        assert!(facts.fields.contains("license") && facts.fields.contains("model-index"));
    }

    #[test]
    fn template_placeholders_are_not_training_data_notes() {
        let facts = parse(TEMPLATE_CARD);
        assert!(facts.has_training_data_heading);
        // "Testing Data" is about evaluation, and "Training Data" holds only the placeholder.
        assert!(!facts.has_training_data_notes);
        let filled = TEMPLATE_CARD.replace(
            "\r\n\r\n[More Information Needed]\r\n\r\n### Training Procedure",
            "\r\n\r\nTrained on 2T tokens of the org/corpus web crawl.\r\n\r\n### Training Procedure",
        );
        assert!(parse(&filled).has_training_data_notes);
    }

    #[test]
    fn detects_training_data_headings() {
        for body in [
            "## Training Data\n\nThe Pile.\n",
            "## Training and evaluation data\n\nImageNet-1k.\n",
            "# Datasets\n- squad\n",
            "Data\n====\n\nWikipedia dumps.\n",
            "Training Details\n---\nWe trained on C4.\n",
            "### 3.1 Pre-training Data [optional]\nC4\n",
            "**Training data**\n\nLAION-5B subset.\n## Next\n",
        ] {
            let facts = parse(body);
            assert!(facts.has_training_data_notes, "{body:?}");
        }
        for body in [
            "## Training and evaluation data\n\nMore information needed\n",
            "## Evaluation Data\nsquad\n",
            "## Training Procedure\nAdamW\n",
            "```\n## Training Data\nx\n```\n",
            "<!-- ## Training Data -->\nText\n",
            "Some text about training data.\n",
        ] {
            let facts = parse(body);
            assert!(!facts.has_training_data_notes, "{body:?}");
        }
    }

    #[test]
    fn reports_absent_front_matter() {
        let facts = parse("# My model\n\nlicense: mit\n");
        assert_eq!(facts.front_matter, FrontMatterState::Absent);
        assert!(facts.license.is_empty());
        assert_eq!(parse("").front_matter, FrontMatterState::Absent);
    }

    #[test]
    fn accepts_bom_leading_blank_lines_and_trailing_fence_spaces() {
        let facts = parse("\u{FEFF}\n--- \nlicense: mit\n---\t\n# M\n");
        assert_eq!(facts.front_matter, FrontMatterState::Present);
        assert_eq!(facts.license, strings(&["mit"]));
    }

    #[test]
    fn reports_unterminated_front_matter() {
        let facts = parse("---\nlicense: mit\n# Model\n");
        assert_eq!(facts.front_matter, FrontMatterState::Unterminated);
        assert_eq!(facts.front_matter.code(), "unterminated");
    }

    #[test]
    fn reports_invalid_yaml_with_card_position() {
        let facts = parse("---\nlicense: mit\ntags: [a, b\nlanguage: en\n---\n");
        let FrontMatterState::Invalid {
            message,
            line,
            column,
        } = &facts.front_matter
        else {
            panic!("{:?}", facts.front_matter)
        };
        assert!(!message.contains(" at line "), "{message}");
        // libyaml notices the unclosed `[` at the `:` on line 4 of the card (3 of the YAML).
        assert_eq!((*line, *column), (4, 9), "{message}");
        assert!(*column >= 1);
        assert_eq!(facts.front_matter.code(), "invalid-yaml");
    }

    #[test]
    fn front_matter_whose_aliases_expand_past_the_budget_is_not_built() {
        let bomb = super::super::yaml::alias_bomb(1000, 5000);
        let facts = parse(&format!("---\nlicense: mit\n{bomb}---\n# m\n"));
        assert_eq!(
            facts.front_matter,
            FrontMatterState::TooManyNodes { limit: 1_000_000 }
        );
        assert_eq!(facts.front_matter.code(), "too-many-nodes");
        assert!(facts.license.is_empty());
        // Anchors as cards use them (one list for two fields) are read.
        let facts = parse("---\nlicense: mit\ndatasets: &d [a, b]\ntags: *d\n---\n");
        assert_eq!(facts.front_matter, FrontMatterState::Present);
        assert_eq!(facts.tags, ["a", "b"]);
    }

    #[test]
    fn rejects_front_matter_that_is_not_a_mapping() {
        let facts = parse("---\n- a\n- b\n---\n");
        assert!(matches!(
            facts.front_matter,
            FrontMatterState::Invalid { line: 2, .. }
        ));
    }

    #[test]
    fn rejects_front_matter_over_size_limit() {
        let limits = Limits {
            max_front_matter_bytes: 8,
            ..Limits::default()
        };
        let facts = parse_card("---\nlicense: apache-2.0\n---\n", &limits);
        assert_eq!(
            facts.front_matter,
            FrontMatterState::TooLarge {
                bytes: 20,
                limit: 8
            }
        );
    }

    #[test]
    fn rejects_alias_bomb_quickly() {
        let mut yaml = String::from(
            "---\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        for pair in names.windows(2) {
            let [prev, next] = pair else { continue };
            let refs = vec![format!("*{prev}"); 9].join(",");
            yaml.push_str(&format!("{next}: &{next} [{refs}]\n"));
        }
        yaml.push_str("license: mit\n---\n");
        let started = Instant::now();
        let facts = parse(&yaml);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            matches!(&facts.front_matter, FrontMatterState::Invalid { message, .. } if message.contains("repetition limit")),
            "{:?}",
            facts.front_matter
        );
    }

    #[test]
    fn flow_depth_counts_brackets_outside_quotes_and_comments() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(!flow_depth_exceeds(&deep(128), 128));
        assert!(flow_depth_exceeds(&deep(129), 128));
        assert!(flow_depth_exceeds(&format!("a: {{b: {}}}", deep(128)), 128));
        let quoted = format!(
            "a: '{}'' {}'\nb: \"\\\" {}\"\n# {}\n",
            "[".repeat(200),
            "{".repeat(200),
            "[".repeat(200),
            "[".repeat(200)
        );
        assert!(!flow_depth_exceeds(&quoted, 128), "{quoted}");
        assert!(!flow_depth_exceeds(
            "a: x[1] y[2]\nb: [1, [2, {c: 3}]]\n",
            3
        ));
        assert!(flow_depth_exceeds("a: x[1] y[2]\nb: [1, [2, {c: 3}]]\n", 2));
    }

    #[test]
    fn rejects_front_matter_100000_deep_quickly_issue_37() {
        let depth = 100_000;
        // 200 KB: within `yaml_bytes`, so the depth is what stops it.
        let yaml = format!("---\na: {}{}\n---\n", "[".repeat(depth), "]".repeat(depth));
        let facts = parse(&yaml);
        assert!(
            matches!(&facts.front_matter, FrontMatterState::Invalid { message, .. } if message.starts_with("recursion limit exceeded")),
            "{:?}",
            facts.front_matter
        );
    }

    #[test]
    fn rejects_deep_nesting() {
        let depth = 10_000;
        let yaml = format!("---\na: {}{}\n---\n", "[".repeat(depth), "]".repeat(depth));
        let facts = parse(&yaml);
        assert!(matches!(
            facts.front_matter,
            FrontMatterState::Invalid { .. }
        ));
    }

    #[test]
    fn reads_license_other_and_lists() {
        let facts =
            parse("---\nlicense: other\nlicense_name: llama3\nlicense_link: LICENSE\n---\n");
        assert_eq!(facts.license_name.as_deref(), Some("llama3"));
        assert_eq!(facts.license_link.as_deref(), Some("LICENSE"));
        assert!(check_card(&facts, &[], &strings(&["llama3"])).is_empty());
        let problems = check_card(&facts, &[], &strings(&["Apache-2.0"]));
        assert!(matches!(
            problems.as_slice(),
            [CardProblem {
                code: "license-not-allowed",
                ..
            }]
        ));

        let facts = parse("---\nlicense:\n- mit\n- cc-by-nc-4.0\n---\n");
        assert_eq!(facts.license, strings(&["mit", "cc-by-nc-4.0"]));
        let problems = check_card(&facts, &[], &strings(&["MIT", "apache-2.0"]));
        assert_eq!(problems.len(), 1);
        assert!(problems.iter().all(|p| p.message.contains("cc-by-nc-4.0")));
    }

    #[test]
    fn compares_hub_and_spdx_ids() {
        let facts = parse("---\nlicense: Apache-2.0\n---\n");
        assert!(check_card(&facts, &[], &strings(&["apache-2.0"])).is_empty());
        let facts = parse("---\nlicense: apache-2.0\n---\n");
        assert!(check_card(&facts, &[], &strings(&["APACHE-2.0"])).is_empty());
        let facts = parse("---\nlicense: gpl-3.0\n---\n");
        assert_eq!(
            check_card(&facts, &[], &strings(&["GPL-3.0-only"])).len(),
            1
        );
        assert_eq!(hub_to_spdx("odc-by"), Some("ODC-By-1.0"));
        assert_eq!(hub_to_spdx("MIT"), Some("MIT"));
        assert_eq!(hub_to_spdx("llama2"), None);
        assert_eq!(hub_to_spdx("bigscience-openrail-m"), None);
    }

    #[test]
    fn reports_missing_required_fields() {
        let facts = parse("---\nlicense: mit\ndatasets: []\nlanguage: ''\n---\n");
        let required = strings(&["license", "datasets", "language", "base_model"]);
        let problems = check_card(&facts, &required, &[]);
        let fields: Vec<&str> = problems.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(fields, vec!["datasets", "language", "base_model"]);
        assert!(problems.iter().all(|p| p.code == "field-missing"));
    }

    #[test]
    fn missing_license_is_not_allowed_when_a_list_is_set() {
        let facts = parse("# no front matter\n");
        let problems = check_card(&facts, &strings(&["license"]), &strings(&["mit"]));
        assert_eq!(problems.len(), 2);
        assert!(
            problems
                .iter()
                .all(|p| p.message.contains("no front matter"))
        );
    }

    #[test]
    fn bounds_lists_and_values() {
        let limits = Limits {
            max_list_items: 2,
            max_value_chars: 3,
            ..Limits::default()
        };
        let facts = parse_card("---\ntags: [a, b, c]\nlicense: abcdef\n---\n", &limits);
        assert_eq!(facts.tags, strings(&["a", "b"]));
        assert_eq!(facts.license, strings(&["abc"]));
        assert!(facts.truncated);
    }

    #[test]
    fn reads_unquoted_no_as_a_language() {
        let facts = parse("---\nlanguage:\n- en\n- no\n---\n");
        assert_eq!(facts.language, strings(&["en", "no"]));
    }

    #[test]
    fn yaml_tags_are_data() {
        let facts = parse("---\nlicense: !!python/object/apply:os.system ['id']\ntags: [x]\n---\n");
        assert_eq!(facts.front_matter, FrontMatterState::Present);
        // serde_norway drops the `!!python/…` tag; what is left is plain strings.
        assert_eq!(facts.license, strings(&["id"]));
        assert_eq!(facts.tags, strings(&["x"]));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_text(s in "\\PC{0,400}") {
            let _ = parse_card(&s, &Limits::default());
        }

        #[test]
        fn never_panics_on_card_like_text(
            s in "(---|\n|\r\n|license: |- |&a |\\*a|\\[|\\]|\\{|\\}|# |Training Data|===|```|<!--|-->|\\*\\*|mit| |:|'|\")*"
        ) {
            let facts = parse_card(&s, &Limits::default());
            let _ = check_card(&facts, &["license".to_owned()], &["mit".to_owned()]);
        }
    }
}
