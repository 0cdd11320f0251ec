//! Reads what a scan needs from a notebook's JSON (the code cells' sources and the kernel
//! language) in one pass, without building the document tree.
//!
//! A notebook stores each source line as its own JSON string, and its outputs (images as
//! base64, tables, logs) are often most of its bytes. Building a `serde_json::Value` allocated
//! one string per line and per output, which was a fifth of a notebook tree's scan (issue 22).
//! Here each source line is appended to its cell's one buffer straight from the parser's scratch
//! space, and everything else is skipped by the parser without being kept.
//!
//! The result is the one [`read_via_value`] computes from a `Value` on every input that parses
//! as a `Value`: the same shapes are accepted (anything that is not the expected type counts as
//! absent, never as an error), and a key given twice takes its last value, as in a `Value` and
//! in Python's `json`. The skipped parts are checked for JSON syntax and nesting depth, but not
//! for what only a typed parse checks: a lone surrogate escape (`"\ud800"`) or an out-of-range
//! number (`1e400`) in an output is accepted here and rejected by a `Value` parse. Python's
//! `json`, which Jupyter uses, accepts both.

use std::fmt;

use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::model::problem::Problem;

/// Longest kernel language name kept, in characters.
const MAX_LANGUAGE_CHARS: usize = 64;

/// What a scan needs from a notebook.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Cells {
    /// Kernel language: `metadata.kernelspec.language`, else `metadata.language_info.name`;
    /// its first 64 characters.
    pub language: Option<String>,
    /// Entries in the `cells` array, all cell types counted.
    pub count: usize,
    /// The code cells among the first `max_cells` entries: 0-based index, and the source (a
    /// string, or the concatenation of a list's strings). A list's parts stop being appended
    /// once the source is longer than `max_source_bytes`, which its scan then refuses.
    pub code: Vec<(usize, String)>,
}

/// Reads `json` as an nbformat 4 notebook. Errors are `invalid-json` (evidence `line`,
/// `column`) and `not-a-notebook` (no top-level `cells` array).
pub fn read(json: &[u8], max_cells: usize, max_source_bytes: usize) -> Result<Cells, Problem> {
    // Every string a `Value` parse keeps is checked for UTF-8, and parts of this one are
    // skipped unchecked: the whole input is checked first, and a file that is not UTF-8 takes
    // the `Value` path, which rejects it with the same message as before.
    let Ok(text) = std::str::from_utf8(json) else {
        return read_via_value(json, max_cells, max_source_bytes);
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let doc = DocSeed {
        max_cells,
        max_source_bytes,
    }
    .deserialize(&mut de)
    .and_then(|doc| de.end().map(|()| doc))
    .map_err(|e| invalid_json(&e))?;
    let cells = doc.cells.ok_or_else(not_a_notebook)?;
    Ok(Cells {
        language: doc.language.resolve(),
        count: cells.count,
        code: cells.code,
    })
}

/// [`read`] by way of a whole `serde_json::Value`: the reference it is tested and fuzzed
/// against.
#[doc(hidden)]
pub fn read_via_value(
    json: &[u8],
    max_cells: usize,
    max_source_bytes: usize,
) -> Result<Cells, Problem> {
    let doc: Value = serde_json::from_slice(json).map_err(|e| invalid_json(&e))?;
    let cells = doc
        .get("cells")
        .and_then(Value::as_array)
        .ok_or_else(not_a_notebook)?;
    let code = cells
        .iter()
        .take(max_cells)
        .enumerate()
        .filter(|(_, cell)| cell.get("cell_type").and_then(Value::as_str) == Some("code"))
        .filter_map(|(index, cell)| {
            let source = match cell.get("source")? {
                Value::String(s) => s.clone(),
                Value::Array(parts) => {
                    let mut out = String::new();
                    for s in parts.iter().filter_map(Value::as_str) {
                        out.push_str(s);
                        if out.len() > max_source_bytes {
                            break;
                        }
                    }
                    out
                }
                _ => return None,
            };
            Some((index, source))
        })
        .collect();
    let meta = doc.get("metadata");
    let language = meta
        .and_then(|m| m.get("kernelspec"))
        .and_then(|k| k.get("language"))
        .or_else(|| {
            meta.and_then(|m| m.get("language_info"))
                .and_then(|l| l.get("name"))
        })
        .and_then(Value::as_str)
        .map(|s| s.chars().take(MAX_LANGUAGE_CHARS).collect());
    Ok(Cells {
        language,
        count: cells.len(),
        code,
    })
}

fn invalid_json(e: &serde_json::Error) -> Problem {
    Problem::malformed(
        "invalid-json",
        format!(
            "invalid notebook json at line {} column {}: {e}",
            e.line(),
            e.column()
        ),
    )
    .with("line", e.line().to_string())
    .with("column", e.column().to_string())
}

fn not_a_notebook() -> Problem {
    Problem::malformed(
        "not-a-notebook",
        "json has no top-level \"cells\" array (nbformat 4)",
    )
}

/// Value-visitor methods for the JSON types a visitor does not expect: the value is read (a
/// list or an object skipped to its end) and counts as absent (`$absent`), as
/// `Value::get`/`as_*` would have it. Scalars other than strings are always unexpected; `str`,
/// `seq` and `map` name the other types that are.
macro_rules! absent_otherwise {
    ($absent:expr $(; $($kind:ident),+)?) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($absent)
        }
        $($(absent_otherwise!(@$kind $absent);)+)?
    };
    (@str $absent:expr) => {
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($absent)
        }
    };
    (@seq $absent:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($absent)
        }
    };
    (@map $absent:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($absent)
        }
    };
}

/// A seed that is its own visitor, which takes whatever JSON type comes.
macro_rules! seed_by_any {
    ($seed:ty => $value:ty) => {
        impl<'de> DeserializeSeed<'de> for $seed {
            type Value = $value;

            fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<$value, D::Error> {
                d.deserialize_any(self)
            }
        }
    };
}

/// A map key, as its index in a list of names the visitor cares about (`None`: another key).
struct KeySeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Option<usize>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().position(|k| *k == key))
    }
}

/// A value that is present with a string (`Some(Some)`), present with another type
/// (`Some(None)`), or absent (`None`): `kernelspec.language` that is not a string hides
/// `language_info.name`, as it did when read from a `Value`.
type Field = Option<Option<String>>;

/// The kernel language fields, in their order of precedence.
#[derive(Default)]
struct Language {
    kernelspec: Field,
    language_info: Field,
}

impl Language {
    fn resolve(self) -> Option<String> {
        self.kernelspec.or(self.language_info).flatten()
    }
}

/// Whatever the top-level value is; `cells` is `None` unless it is an object with a `cells`
/// array.
#[derive(Default)]
struct Doc {
    cells: Option<CellList>,
    language: Language,
}

struct CellList {
    count: usize,
    code: Vec<(usize, String)>,
}

#[derive(Clone, Copy)]
struct DocSeed {
    max_cells: usize,
    max_source_bytes: usize,
}

seed_by_any!(DocSeed => Doc);

impl<'de> Visitor<'de> for DocSeed {
    type Value = Doc;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a notebook")
    }

    absent_otherwise!(Doc::default(); str, seq);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
        let mut doc = Doc::default();
        while let Some(key) = map.next_key_seed(KeySeed(&["cells", "metadata"]))? {
            match key {
                Some(0) => doc.cells = map.next_value_seed(CellsSeed(self))?,
                Some(_) => doc.language = map.next_value_seed(MetadataSeed)?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(doc)
    }
}

/// The `cells` value: a list, or absent.
struct CellsSeed(DocSeed);

seed_by_any!(CellsSeed => Option<CellList>);

impl<'de> Visitor<'de> for CellsSeed {
    type Value = Option<CellList>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of cells")
    }

    absent_otherwise!(None; str, map);

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut list = CellList {
            count: 0,
            code: Vec::new(),
        };
        loop {
            if list.count >= self.0.max_cells {
                // Counted, not kept.
                if seq.next_element::<IgnoredAny>()?.is_none() {
                    break;
                }
            } else {
                let Some(cell) = seq.next_element_seed(CellSeed(self.0.max_source_bytes))? else {
                    break;
                };
                if let Cell {
                    code: true,
                    source: Some(source),
                } = cell
                {
                    list.code.push((list.count, source));
                }
            }
            list.count = list
                .count
                .checked_add(1)
                .ok_or_else(|| A::Error::custom("too many cells"))?;
        }
        Ok(Some(list))
    }
}

/// One cell: whether its (last) `cell_type` is the string `code`, and its (last) source.
#[derive(Default)]
struct Cell {
    code: bool,
    source: Option<String>,
}

struct CellSeed(usize);

seed_by_any!(CellSeed => Cell);

impl<'de> Visitor<'de> for CellSeed {
    type Value = Cell;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a cell")
    }

    absent_otherwise!(Cell::default(); str, seq);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Cell, A::Error> {
        let mut cell = Cell::default();
        while let Some(key) = map.next_key_seed(KeySeed(&["cell_type", "source"]))? {
            match key {
                Some(0) => cell.code = map.next_value_seed(IsCode)?,
                Some(_) => cell.source = map.next_value_seed(SourceSeed(self.0))?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(cell)
    }
}

/// Whether a value is the string `code`.
struct IsCode;

seed_by_any!(IsCode => bool);

impl<'de> Visitor<'de> for IsCode {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a cell type")
    }

    absent_otherwise!(false; seq, map);

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<bool, E> {
        Ok(v == "code")
    }
}

/// A cell's source: a string, or a list whose strings are concatenated (other entries
/// skipped); appending stops once the source is longer than the limit it carries.
struct SourceSeed(usize);

seed_by_any!(SourceSeed => Option<String>);

impl<'de> Visitor<'de> for SourceSeed {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a cell source")
    }

    absent_otherwise!(None; map);

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = String::new();
        loop {
            let full = out.len() > self.0;
            let part = AppendStr {
                out: &mut out,
                full,
            };
            if seq.next_element_seed(part)?.is_none() {
                break;
            }
        }
        Ok(Some(out))
    }
}

/// One entry of a source list: appended to `out` if it is a string and `out` is not full.
struct AppendStr<'a> {
    out: &'a mut String,
    full: bool,
}

impl<'de> DeserializeSeed<'de> for AppendStr<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.full {
            d.deserialize_ignored_any(IgnoredAny).map(|_| ())
        } else {
            d.deserialize_any(self)
        }
    }
}

impl<'de> Visitor<'de> for AppendStr<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a source line")
    }

    absent_otherwise!((); seq, map);

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        self.out.push_str(v);
        Ok(())
    }
}

/// The `metadata` value: the two places the kernel language may be.
struct MetadataSeed;

seed_by_any!(MetadataSeed => Language);

impl<'de> Visitor<'de> for MetadataSeed {
    type Value = Language;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("notebook metadata")
    }

    absent_otherwise!(Language::default(); str, seq);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Language, A::Error> {
        let mut language = Language::default();
        while let Some(key) = map.next_key_seed(KeySeed(&["kernelspec", "language_info"]))? {
            match key {
                Some(0) => language.kernelspec = map.next_value_seed(FieldOf(&["language"]))?,
                Some(_) => language.language_info = map.next_value_seed(FieldOf(&["name"]))?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(language)
    }
}

/// The named field of an object value, as a [`Field`]; a value that is not an object has none.
struct FieldOf(&'static [&'static str]);

seed_by_any!(FieldOf => Field);

impl<'de> Visitor<'de> for FieldOf {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    absent_otherwise!(None; str, seq);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Field, A::Error> {
        let mut field = None;
        while let Some(key) = map.next_key_seed(KeySeed(self.0))? {
            if key.is_some() {
                field = Some(map.next_value_seed(Text)?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(field)
    }
}

/// A string's first 64 characters; `None` for another type.
struct Text;

seed_by_any!(Text => Option<String>);

impl<'de> Visitor<'de> for Text {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    absent_otherwise!(None; seq, map);

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.chars().take(MAX_LANGUAGE_CHARS).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A JSON value whose objects may repeat a key, written out by hand (a `Value` cannot).
    #[derive(Debug, Clone)]
    enum Node {
        Null,
        Bool(bool),
        Number(&'static str),
        Str(String),
        List(Vec<Node>),
        Object(Vec<(&'static str, Node)>),
    }

    impl Node {
        fn write(&self, out: &mut String) {
            match self {
                Node::Null => out.push_str("null"),
                Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Node::Number(n) => out.push_str(n),
                Node::Str(s) => out.push_str(&serde_json::to_string(s).unwrap_or_default()),
                Node::List(items) => {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        item.write(out);
                    }
                    out.push(']');
                }
                Node::Object(entries) => {
                    out.push('{');
                    for (i, (key, value)) in entries.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(&serde_json::to_string(key).unwrap_or_default());
                        out.push(':');
                        value.write(out);
                    }
                    out.push('}');
                }
            }
        }
    }

    const KEYS: &[&str] = &[
        "cells",
        "metadata",
        "cell_type",
        "source",
        "kernelspec",
        "language",
        "language_info",
        "name",
        "outputs",
        "cell\u{5f}type",
        "x",
    ];
    const STRINGS: &[&str] = &[
        "code",
        "markdown",
        "python",
        "Python",
        "R",
        "import torch\n",
        "torch.load(p)\n",
        "%pip install x\n",
        "",
        "\u{e9}\"\\\t\n",
        "a very long kernel language name that goes on past sixty-four characters, surely",
    ];
    const NUMBERS: &[&str] = &["0", "-1", "4", "1.5e3", "18446744073709551616", "-0.0"];

    fn leaf() -> impl Strategy<Value = Node> {
        prop_oneof![
            Just(Node::Null),
            any::<bool>().prop_map(Node::Bool),
            proptest::sample::select(NUMBERS).prop_map(Node::Number),
            proptest::sample::select(STRINGS).prop_map(|s| Node::Str(s.to_owned())),
        ]
    }

    fn node() -> impl Strategy<Value = Node> {
        leaf().prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Node::List),
                proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..5)
                    .prop_map(Node::Object),
            ]
        })
    }

    /// Mostly notebook-shaped: a top-level object whose `cells` are mostly cell-shaped.
    fn notebook() -> impl Strategy<Value = Node> {
        let cell = proptest::collection::vec((proptest::sample::select(KEYS), node()), 0..5)
            .prop_map(Node::Object);
        let cells = proptest::collection::vec(prop_oneof![4 => cell, 1 => node()], 0..6)
            .prop_map(Node::List);
        let entry = prop_oneof![
            3 => cells.prop_map(|c| ("cells", c)),
            2 => node().prop_map(|n| ("metadata", n)),
            2 => (proptest::sample::select(KEYS), node()),
        ];
        prop_oneof![
            5 => proptest::collection::vec(entry, 0..5).prop_map(Node::Object),
            1 => node(),
        ]
    }

    fn assert_agrees(json: &[u8], max_cells: usize, max_source_bytes: usize) {
        let fast = read(json, max_cells, max_source_bytes);
        let reference = read_via_value(json, max_cells, max_source_bytes);
        let shown = String::from_utf8_lossy(json);
        match (&fast, &reference) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            // Only what a typed parse of the skipped parts checks (a lone surrogate, a number
            // out of range) may tell them apart: JSON that is well-formed.
            (_, Err(_)) if serde_json::from_slice::<IgnoredAny>(json).is_ok() => {}
            // serde_json reports a control character in a skipped string one byte before where
            // it reports it in a string it keeps (a line earlier for a newline).
            (Err(a), Err(b)) => assert_eq!(a.code, b.code, "{shown}"),
            _ => panic!("{shown}: {fast:?} / {reference:?}"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn agrees_with_a_value_parse(doc in notebook(), max_cells in 0usize..5, max_source_bytes in 0usize..40) {
            let mut json = String::new();
            doc.write(&mut json);
            assert_agrees(json.as_bytes(), max_cells, max_source_bytes);
        }

        #[test]
        fn agrees_with_a_value_parse_on_damaged_json(doc in notebook(), cut in any::<prop::sample::Index>(), byte in any::<u8>(), damage in 0u8..3) {
            let mut json = String::new();
            doc.write(&mut json);
            let mut bytes = json.into_bytes();
            if !bytes.is_empty() {
                let at = cut.index(bytes.len());
                match damage {
                    0 => bytes.truncate(at),
                    1 => bytes[at] = byte,
                    _ => bytes.insert(at, byte),
                }
            }
            assert_agrees(&bytes, 3, 30);
        }
    }

    #[test]
    fn reads_a_notebook() {
        let json = br##"{"metadata": {"kernelspec": {"language": "python"}}, "nbformat": 4,
            "cells": [{"cell_type": "markdown", "source": ["# t"]},
                      {"cell_type": "code", "outputs": [{"data": {"image/png": "iVBOR"}}],
                       "source": ["import torch\n", "torch.load(p)"]},
                      {"source": "x = 1", "cell_type": "code"}]}"##;
        let cells = read(json, 10, 100).unwrap_or_default();
        assert_eq!(cells.language.as_deref(), Some("python"));
        assert_eq!(cells.count, 3);
        assert_eq!(
            cells.code,
            vec![
                (1, "import torch\ntorch.load(p)".to_owned()),
                (2, "x = 1".to_owned())
            ]
        );
    }

    #[test]
    fn a_repeated_key_takes_its_last_value() {
        let json = br#"{"cells": [{"cell_type": "code", "source": "a", "cell_type": "markdown"},
            {"cell_type": "raw", "source": "b", "cell_type": "code", "source": "c"}],
            "metadata": {"kernelspec": {"language": "R"}},
            "metadata": {"language_info": {"name": "python"}}}"#;
        let cells = read(json, 10, 100).unwrap_or_default();
        assert_eq!(cells.language.as_deref(), Some("python"));
        assert_eq!(cells.code, vec![(1, "c".to_owned())]);
        assert_eq!(read_via_value(json, 10, 100).unwrap_or_default(), cells);
    }

    #[test]
    fn errors_match_a_value_parse() {
        let cases: &[&[u8]] = &[
            b"{\n  \"cells\": [,]\n}",
            b"{\"cells\": [{\"source\": \"\xff\"}]}",
            b"{\"outputs\": \"\xc3\"}",
            b"{\"cells\": []} x",
            b"",
            br#"{"worksheets": []}"#,
            br#"[{"cells": []}]"#,
        ];
        for json in cases {
            let fast = read(json, 10, 100).map_err(|e| (e.code, e.message));
            let reference = read_via_value(json, 10, 100).map_err(|e| (e.code, e.message));
            assert_eq!(fast, reference, "{}", String::from_utf8_lossy(json));
            assert!(fast.is_err());
        }
        // Everything nested below what is read is skipped, without recursion and with one
        // byte of state per level, so depth costs no stack (a `Value` parse stops at 128).
        for at in ["source", "outputs", "cell_type"] {
            let levels = 100_000;
            let deep = format!(
                "{{\"cells\": [{{\"{at}\": [{}{}]}}]}}",
                "[".repeat(levels),
                "]".repeat(levels)
            );
            let read = read(deep.as_bytes(), 10, 100).map(|c| c.count);
            assert_eq!(read, Ok(1), "{at}");
        }
    }

    #[test]
    fn counts_cells_past_the_budget_without_keeping_them() {
        let cells = [r#"{"cell_type": "code", "source": "x"}"#; 5].join(",");
        let json = format!("{{\"cells\": [{cells}]}}");
        let read = read(json.as_bytes(), 2, 100).unwrap_or_default();
        assert_eq!(read.count, 5);
        assert_eq!(read.code.len(), 2);
    }
}
