//! `config.json` / `tokenizer_config.json`: reads `auto_map`, the table by which transformers'
//! `Auto*` classes find model code shipped in the repository (or in another repository), plus a
//! few architecture facts for the SBOM.
//!
//! With `trust_remote_code=True`, `AutoModel.from_pretrained` imports the module an `auto_map`
//! entry names and runs it: an entry is custom code that loading the model executes. A
//! cross-repository entry (`org/repo--modeling_x.Model`) runs code from a repository the
//! scanned one does not even contain. Entries are parsed the way transformers does
//! (`repo--module.Class`, split once on `--` and once on `.`); anything else is reported as
//! malformed rather than guessed at.

use crate::model::problem::Problem;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

/// Caps on the work done for one config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest file accepted, in bytes (`tokenizer_config.json` lists added tokens, so allow some).
    pub max_json_bytes: usize,
    /// `auto_map` (and `custom_pipelines`) entries examined.
    pub max_entries: usize,
    /// Chars kept from one string.
    pub max_value_chars: usize,
    /// `architectures` items kept.
    pub max_architectures: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_json_bytes: 32 * 1024 * 1024,
            max_entries: 256,
            max_value_chars: 256,
            max_architectures: 32,
        }
    }
}

/// One class reference from `auto_map` or `custom_pipelines`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AutoMapEntry {
    /// The key: `AutoModel`, `AutoTokenizer`, or `custom_pipelines:<task>`.
    pub auto_class: String,
    /// The reference as written, e.g. `modeling_foo.FooModel`.
    pub reference: String,
    /// The Python file loaded, e.g. `modeling_foo.py` (empty when malformed).
    pub module_file: String,
    /// The class loaded from it (empty when malformed).
    pub class: String,
    /// `org/repo` for a `org/repo--module.Class` reference: code from another repository.
    pub remote_repo: Option<String>,
    /// `slow` or `fast` for a tokenizer's two-element list.
    pub variant: Option<&'static str>,
    /// Why the reference is malformed (transformers would fail to load it), if it is.
    pub malformed: Option<String>,
}

/// Architecture facts from `config.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ConfigFacts {
    /// `architectures`.
    pub architectures: Vec<String>,
    /// `model_type`.
    pub model_type: Option<String>,
    /// `auto_map` and `custom_pipelines` entries.
    pub auto_map: Vec<AutoMapEntry>,
    /// Whitelisted scalar hyperparameters (see [`HYPERPARAMETERS`]); `quantization` is
    /// `quantization_config.quant_method`.
    pub hyperparameters: BTreeMap<String, Value>,
    /// A limit cut a list or a string short.
    pub truncated: bool,
}

/// Keys copied into [`ConfigFacts::hyperparameters`] when their value is a scalar.
pub const HYPERPARAMETERS: &[&str] = &[
    "d_model",
    "dtype",
    "hidden_size",
    "intermediate_size",
    "max_position_embeddings",
    "n_embd",
    "n_head",
    "n_layer",
    "n_positions",
    "num_attention_heads",
    "num_hidden_layers",
    "num_key_value_heads",
    "rope_theta",
    "tie_word_embeddings",
    "torch_dtype",
    "transformers_version",
    "vocab_size",
];

// Why a config file could not be read is a [`Problem`] with code `too-large` (a
// [`LimitExceeded`](crate::model::problem::ProblemKind::LimitExceeded), evidence `bytes`, `limit`), `invalid-json` (evidence `line`,
// `column`), `not-an-object` or `auto-map-not-object` (evidence `found`).

fn not_an_object(code: &'static str, what: &str, found: &'static str) -> Problem {
    Problem::malformed(code, format!("{what} is {found}, not an object")).with("found", found)
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_object(json: &[u8], limits: &Limits) -> Result<serde_json::Map<String, Value>, Problem> {
    if json.len() > limits.max_json_bytes {
        return Err(Problem::limit(
            "too-large",
            format!(
                "config is {} bytes, over the limit of {}",
                json.len(),
                limits.max_json_bytes
            ),
        )
        .with("bytes", json.len().to_string())
        .with("limit", limits.max_json_bytes.to_string()));
    }
    let value: Value = serde_json::from_slice(json).map_err(|e| {
        Problem::malformed(
            "invalid-json",
            format!(
                "invalid json at line {} column {}: {e}",
                e.line(),
                e.column()
            ),
        )
        .with("line", e.line().to_string())
        .with("column", e.column().to_string())
    })?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(not_an_object(
            "not-an-object",
            "config top level",
            type_name(&other),
        )),
    }
}

/// The `auto_map` (and `custom_pipelines`) entries of a `config.json` or
/// `tokenizer_config.json`; empty when the file has neither.
pub fn parse_auto_map(json: &[u8], limits: &Limits) -> Result<Vec<AutoMapEntry>, Problem> {
    let map = parse_object(json, limits)?;
    let mut truncated = false;
    entries(&map, limits, &mut truncated)
}

/// Architecture facts and `auto_map` of a `config.json`.
pub fn config_facts(json: &[u8], limits: &Limits) -> Result<ConfigFacts, Problem> {
    let map = parse_object(json, limits)?;
    let mut facts = ConfigFacts::default();
    facts.auto_map = entries(&map, limits, &mut facts.truncated)?;
    let bound = |s: &str, truncated: &mut bool| {
        *truncated |= s.chars().count() > limits.max_value_chars;
        s.chars().take(limits.max_value_chars).collect::<String>()
    };
    if let Some(Value::Array(items)) = map.get("architectures") {
        facts.truncated |= items.len() > limits.max_architectures;
        for item in items.iter().take(limits.max_architectures) {
            if let Some(s) = item.as_str() {
                let s = bound(s, &mut facts.truncated);
                facts.architectures.push(s);
            }
        }
    }
    if let Some(s) = map.get("model_type").and_then(Value::as_str) {
        facts.model_type = Some(bound(s, &mut facts.truncated));
    }
    for key in HYPERPARAMETERS {
        match map.get(*key) {
            Some(Value::String(s)) => {
                let s = bound(s, &mut facts.truncated);
                facts
                    .hyperparameters
                    .insert((*key).to_owned(), Value::String(s));
            }
            Some(v @ (Value::Number(_) | Value::Bool(_))) => {
                facts.hyperparameters.insert((*key).to_owned(), v.clone());
            }
            _ => {}
        }
    }
    if let Some(method) = map
        .get("quantization_config")
        .and_then(|q| q.get("quant_method"))
        .and_then(Value::as_str)
    {
        let method = bound(method, &mut facts.truncated);
        facts
            .hyperparameters
            .insert("quantization".to_owned(), Value::String(method));
    }
    Ok(facts)
}

/// The `auto_map` and `custom_pipelines` entries of one object of a config (a sub-config at any
/// depth, issue 39), and whether a limit cut them short; an `auto_map` that is not an object
/// gives none (transformers would fail on it).
pub fn entries_of(
    map: &serde_json::Map<String, Value>,
    limits: &Limits,
) -> (Vec<AutoMapEntry>, bool) {
    let mut truncated = false;
    let out = entries(map, limits, &mut truncated).unwrap_or_default();
    (out, truncated)
}

/// One `[org/repo--]module.Class` reference parsed as transformers'
/// `get_class_from_dynamic_module` does (sentence-transformers hands module `type`s to it too).
pub fn parse_reference(auto_class: &str, reference: &str, limits: &Limits) -> AutoMapEntry {
    entry(auto_class, reference, None, limits)
}

fn entries(
    map: &serde_json::Map<String, Value>,
    limits: &Limits,
    truncated: &mut bool,
) -> Result<Vec<AutoMapEntry>, Problem> {
    let mut out = Vec::new();
    let mut push = |entry: AutoMapEntry, truncated: &mut bool| {
        if out.len() < limits.max_entries {
            out.push(entry);
        } else {
            *truncated = true;
        }
    };
    match map.get("auto_map") {
        None | Some(Value::Null) => {}
        Some(Value::Object(auto_map)) => {
            for (key, value) in auto_map.iter().take(limits.max_entries) {
                let auto_class = bounded(key, limits);
                match value {
                    Value::String(reference) => {
                        push(entry(&auto_class, reference, None, limits), truncated);
                    }
                    // Tokenizers: [slow, fast], either may be null.
                    Value::Array(items) => {
                        for (index, item) in items.iter().take(limits.max_entries).enumerate() {
                            let variant = match index {
                                0 => Some("slow"),
                                1 => Some("fast"),
                                _ => None,
                            };
                            match item {
                                Value::Null => {}
                                Value::String(reference) => {
                                    push(entry(&auto_class, reference, variant, limits), truncated)
                                }
                                other => push(
                                    malformed(
                                        &auto_class,
                                        variant,
                                        format!("list item is {}, not a string", type_name(other)),
                                    ),
                                    truncated,
                                ),
                            }
                        }
                    }
                    other => push(
                        malformed(
                            &auto_class,
                            None,
                            format!("value is {}, not a string or list", type_name(other)),
                        ),
                        truncated,
                    ),
                }
            }
            *truncated |= auto_map.len() > limits.max_entries;
        }
        Some(other) => {
            return Err(not_an_object(
                "auto-map-not-object",
                "\"auto_map\"",
                type_name(other),
            ));
        }
    }
    // Custom pipelines are loaded under trust_remote_code the same way.
    if let Some(Value::Object(pipelines)) = map.get("custom_pipelines") {
        for (task, spec) in pipelines.iter().take(limits.max_entries) {
            let auto_class = format!("custom_pipelines:{}", bounded(task, limits));
            if let Some(reference) = spec.get("impl").and_then(Value::as_str) {
                push(entry(&auto_class, reference, None, limits), truncated);
            }
        }
    }
    Ok(out)
}

fn bounded(s: &str, limits: &Limits) -> String {
    s.chars().take(limits.max_value_chars).collect()
}

fn malformed(auto_class: &str, variant: Option<&'static str>, why: String) -> AutoMapEntry {
    AutoMapEntry {
        auto_class: auto_class.to_owned(),
        reference: String::new(),
        module_file: String::new(),
        class: String::new(),
        remote_repo: None,
        variant,
        malformed: Some(why),
    }
}

/// Parses `[org/repo--]module.Class` as transformers' `get_class_from_dynamic_module` does.
fn entry(
    auto_class: &str,
    reference: &str,
    variant: Option<&'static str>,
    limits: &Limits,
) -> AutoMapEntry {
    let written = bounded(reference, limits);
    let mut out = malformed(auto_class, variant, String::new());
    out.reference = written.clone();
    out.malformed = None;
    let (remote_repo, local) = match reference.split_once("--") {
        Some((repo, rest)) => (Some(repo), rest),
        None => (None, reference),
    };
    if local.contains("--") {
        out.malformed = Some(format!("reference `{written}` has more than one `--`"));
        return out;
    }
    let parts: Vec<&str> = local.split('.').collect();
    let [module, class] = parts.as_slice() else {
        out.malformed = Some(format!(
            "reference `{written}` is not `module.Class` (transformers splits on exactly one `.`)"
        ));
        return out;
    };
    if module.is_empty() || class.is_empty() {
        out.malformed = Some(format!(
            "reference `{written}` has an empty module or class"
        ));
        return out;
    }
    // A module path that leaves the repository would make transformers read an unexpected file.
    if module.starts_with('/')
        || module.contains('\\')
        || module.split('/').any(|s| s == ".." || s.is_empty())
    {
        out.malformed = Some(format!(
            "reference `{written}` names a module outside the repository"
        ));
        return out;
    }
    out.module_file = bounded(&format!("{module}.py"), limits);
    out.class = bounded(class, limits);
    out.remote_repo = remote_repo.map(|r| bounded(r, limits));
    if remote_repo.is_some_and(|r| r.is_empty() || r.split('/').count() > 2) {
        out.malformed = Some(format!("reference `{written}` names an invalid repository"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::problem::ProblemKind;

    fn parse(json: &str) -> Result<Vec<AutoMapEntry>, Problem> {
        parse_auto_map(json.as_bytes(), &Limits::default())
    }

    #[test]
    fn reads_local_entries() {
        let entries = parse(
            r#"{"auto_map": {"AutoConfig": "configuration_foo.FooConfig",
                             "AutoModelForCausalLM": "modeling_foo.FooForCausalLM"}}"#,
        )
        .unwrap_or_default();
        let got: Vec<(&str, &str, &str)> = entries
            .iter()
            .map(|e| {
                (
                    e.auto_class.as_str(),
                    e.module_file.as_str(),
                    e.class.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("AutoConfig", "configuration_foo.py", "FooConfig"),
                ("AutoModelForCausalLM", "modeling_foo.py", "FooForCausalLM"),
            ]
        );
        assert!(
            entries
                .iter()
                .all(|e| e.remote_repo.is_none() && e.malformed.is_none())
        );
    }

    #[test]
    fn reads_tokenizer_lists_with_nulls() {
        let entries =
            parse(r#"{"auto_map": {"AutoTokenizer": ["tokenization_foo.FooTokenizer", null]}}"#)
                .unwrap_or_default();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries.first().and_then(|e| e.variant), Some("slow"));
        let entries = parse(
            r#"{"auto_map": {"AutoTokenizer": [null, "tokenization_foo_fast.FooTokenizerFast"]}}"#,
        )
        .unwrap_or_default();
        assert_eq!(entries.first().and_then(|e| e.variant), Some("fast"));
    }

    #[test]
    fn reads_cross_repo_entries() {
        let entries =
            parse(r#"{"auto_map": {"AutoModel": "other-org/code-repo--modeling_bar.BarModel"}}"#)
                .unwrap_or_default();
        let [entry] = entries.as_slice() else {
            panic!("{entries:?}")
        };
        assert_eq!(entry.remote_repo.as_deref(), Some("other-org/code-repo"));
        assert_eq!(entry.module_file, "modeling_bar.py");
        assert_eq!(entry.class, "BarModel");
    }

    #[test]
    fn reports_malformed_references() {
        for (json, needle) in [
            (
                r#"{"auto_map": {"AutoModel": "modeling.foo.Bar"}}"#,
                "exactly one",
            ),
            (
                r#"{"auto_map": {"AutoModel": "a--b--c.D"}}"#,
                "more than one",
            ),
            (r#"{"auto_map": {"AutoModel": ".Bar"}}"#, "empty"),
            (
                r#"{"auto_map": {"AutoModel": "../x/m.Bar"}}"#,
                "exactly one",
            ),
            (r#"{"auto_map": {"AutoModel": "/etc/m.Bar"}}"#, "outside"),
            (
                r#"{"auto_map": {"AutoModel": "o/r--m.Bar", "B": "a/b/c--m.B"}}"#,
                "invalid repository",
            ),
            (r#"{"auto_map": {"AutoModel": 3}}"#, "a number"),
            (r#"{"auto_map": {"AutoTokenizer": [1]}}"#, "list item"),
        ] {
            let entries = parse(json).unwrap_or_default();
            assert!(
                entries
                    .iter()
                    .any(|e| e.malformed.as_deref().is_some_and(|m| m.contains(needle))),
                "{json}: {entries:?}"
            );
        }
    }

    #[test]
    fn reads_custom_pipelines() {
        let entries = parse(
            r#"{"custom_pipelines": {"text-classification": {"impl": "pipe.MyPipe", "pt": ["AutoModel"]}}}"#,
        )
        .unwrap_or_default();
        assert_eq!(
            entries
                .first()
                .map(|e| (e.auto_class.as_str(), e.module_file.as_str())),
            Some(("custom_pipelines:text-classification", "pipe.py"))
        );
    }

    #[test]
    fn config_without_auto_map_has_no_entries() {
        assert_eq!(parse(r#"{"model_type": "bert"}"#), Ok(Vec::new()));
    }

    #[test]
    fn rejects_invalid_json() {
        let err = parse("{\n\"auto_map\": }");
        let err = err.unwrap_err();
        assert_eq!((err.code, err.detail("line")), ("invalid-json", Some("2")));
    }

    #[test]
    fn rejects_non_object_config() {
        let err = parse("[1]").unwrap_err();
        assert_eq!(
            (err.code, err.detail("found")),
            ("not-an-object", Some("an array"))
        );
    }

    #[test]
    fn rejects_auto_map_that_is_not_an_object() {
        let err = parse(r#"{"auto_map": ["modeling.X"]}"#);
        let err = err.unwrap_err();
        assert_eq!(err.detail("found"), Some("an array"));
        assert_eq!(err.code, "auto-map-not-object");
    }

    #[test]
    fn rejects_config_over_size_limit() {
        let limits = Limits {
            max_json_bytes: 2,
            ..Limits::default()
        };
        let err = parse_auto_map(b"{ }", &limits).unwrap_err();
        assert_eq!(err.kind, ProblemKind::LimitExceeded);
        assert_eq!(
            (err.code, err.detail("bytes"), err.detail("limit")),
            ("too-large", Some("3"), Some("2"))
        );
    }

    #[test]
    fn bounds_entries() {
        let limits = Limits {
            max_entries: 1,
            ..Limits::default()
        };
        let json = br#"{"auto_map": {"A": "m.A", "B": "m.B"}}"#;
        let facts = config_facts(json, &limits).unwrap_or_default();
        assert_eq!(facts.auto_map.len(), 1);
        assert!(facts.truncated);
    }

    #[test]
    fn reads_config_facts() {
        let json = br#"{
            "architectures": ["LlamaForCausalLM"], "model_type": "llama",
            "hidden_size": 4096, "num_hidden_layers": 32, "torch_dtype": "bfloat16",
            "vocab_size": 32000, "rope_scaling": {"type": "linear"}, "secret": "x",
            "quantization_config": {"quant_method": "gptq", "bits": 4},
            "auto_map": {"AutoModel": "modeling_llama.LlamaModel"}
        }"#;
        let facts = config_facts(json, &Limits::default()).unwrap_or_default();
        assert_eq!(facts.architectures, vec!["LlamaForCausalLM".to_owned()]);
        assert_eq!(facts.model_type.as_deref(), Some("llama"));
        assert_eq!(
            facts.hyperparameters.get("hidden_size"),
            Some(&Value::from(4096))
        );
        assert_eq!(
            facts.hyperparameters.get("torch_dtype"),
            Some(&Value::from("bfloat16"))
        );
        assert_eq!(
            facts.hyperparameters.get("quantization"),
            Some(&Value::from("gptq"))
        );
        assert!(!facts.hyperparameters.contains_key("secret"));
        assert!(!facts.hyperparameters.contains_key("rope_scaling"));
        assert_eq!(facts.auto_map.len(), 1);
    }
}
