//! Configs that instantiate code: Hydra-style `_target_` keys (CFG001/CFG003) and PyYAML
//! `!!python/...` tags (CFG002) in YAML and JSON files.
//!
//! Hydra's `instantiate` (and NeMo, Lightning CLI, uni2TS, FlexTok, which use it on configs shipped
//! with a model) imports the dotted name in `_target_` and calls it with the sibling keys as
//! arguments (`_args_` positionally; `_partial_` wraps it in `functools.partial`). A target the
//! knowledge base calls dangerous (`builtins.exec`, `os.system`, `subprocess.*`) is code
//! execution on load (NeMo CVE-2025-23304); any other target is named so it can be reviewed.
//!
//! PyYAML's `unsafe_load` (and `full_load`/`load` of versions before 5.4) builds Python objects
//! from `!!python/object`, `/object/apply`, `/object/new`, `/name` and `/module` tags
//! (CVE-2017-18342, CVE-2020-1747, CVE-2020-14343). `serde_norway` drops tags when it builds a
//! value, so tags are found in the raw text, including the verbatim `!<tag:yaml.org,2002:python/…>`
//! form and `%TAG` handles that expand to it.

use crate::model::facts::{Fact, FactMap};
use serde_json::{Value, json};

use super::context::Ctx;
use crate::knowledge::{self, Verdict, loaders};
use crate::model::finding::{Location, Severity};
use crate::model::limits::usize_of;
use crate::model::rules::RuleId;
use crate::provenance::yaml::{self, YamlError};
use crate::provenance::{card, loader_code};

/// Advisories for code execution through `_target_` in configs shipped with a model.
const TARGET_REFERENCES: &[&str] = &["CVE-2025-23304"];
/// Advisories for PyYAML python tags.
const TAG_REFERENCES: &[&str] = &["CVE-2017-18342", "CVE-2020-1747", "CVE-2020-14343"];

/// The PyYAML tags that construct Python objects (after `tag:yaml.org,2002:`).
const PYTHON_TAGS: &[&str] = &[
    "python/object/apply",
    "python/object/new",
    "python/object",
    "python/name",
    "python/module",
];

/// Where the config came from, for messages and detection keys.
fn prefix(member: Option<&str>) -> (String, Location, String) {
    let key = member.map(|m| format!("{m}:")).unwrap_or_default();
    let loc = Location {
        member: member.map(str::to_string),
        ..Location::default()
    };
    let within = member
        .map(|m| format!(" (archive member `{m}`)"))
        .unwrap_or_default();
    (key, loc, within)
}

/// Checks a YAML document: unsafe tags in the text, then `_target_` keys in the parsed value.
pub fn check_yaml(ctx: &mut Ctx<'_>, bytes: &[u8], member: Option<&str>) {
    let text = String::from_utf8_lossy(bytes);
    check_tags(ctx, &text, member);
    // serde_norway bounds nesting (128) and alias replays, `yaml::parse` what the replays build
    // (`yaml_nodes`, said whether or not the document names a `_target_`: the bomb is the
    // finding); a document it cannot
    // read is simply not a config Hydra could instantiate either, except one refused for its
    // depth alone: PyYAML reads deeper documents, so that is a limit, said (issue 37).
    // The parser reads the whole document before it refuses its depth, at some microseconds a
    // level: a config of nothing but `[` would take minutes. Flow nesting past its limit is
    // seen here first.
    if card::flow_depth_exceeds(&text, card::YAML_PARSER_DEPTH) {
        if may_instantiate(bytes) {
            too_deep(ctx, "yaml_depth", true, member);
        }
        return;
    }
    let value = match yaml::parse(&text, ctx.cfg.limits.yaml_nodes) {
        Ok(v) => v,
        Err(YamlError::TooManyNodes) => {
            too_many_nodes(ctx, member);
            return;
        }
        Err(YamlError::Parse(e)) if is_depth_error(&e.to_string()) => {
            if may_instantiate(bytes) {
                too_deep(ctx, "yaml_depth", true, member);
            }
            return;
        }
        Err(YamlError::Parse(_)) => return,
    };
    check_value(ctx, &to_json(&value), member, "yaml_depth");
}

/// SCAN004 naming `yaml_nodes`: the document's aliases expand past the limit, so it was not
/// built and its `_target_` keys were not checked.
fn too_many_nodes(ctx: &mut Ctx<'_>, member: Option<&str>) {
    let (key_prefix, loc, within) = prefix(member);
    let limit = ctx.cfg.limits.yaml_nodes;
    let cfg = ctx.cfg;
    let d = ctx.detect(
        RuleId::LimitExceeded,
        format!("{key_prefix}yaml_nodes"),
        format!(
            "YAML config{within} expands (through aliases) past the yaml_nodes limit ({limit} nodes); it was not read and its `_target_` keys were not checked"
        ),
        loc,
    );
    super::context::name_limit(d, cfg, "yaml_nodes");
}

/// Whether a parser's error is its nesting limit (serde_json and serde_norway both start their
/// message so).
fn is_depth_error(message: &str) -> bool {
    message.starts_with("recursion limit exceeded")
}

/// Whether a document could name a `_target_` (literally or through an escape): only such a
/// document loses anything when it is not walked.
fn may_instantiate(bytes: &[u8]) -> bool {
    contains(bytes, b"_target_") || bytes.contains(&b'\\')
}

/// SCAN004 naming `limit`: the document nests deeper than the limit (`by_parser`: deeper than
/// the parser's own 128 levels, whatever the limit says), so `_target_` keys below that depth
/// were not checked.
fn too_deep(ctx: &mut Ctx<'_>, limit: &str, by_parser: bool, member: Option<&str>) {
    let (key_prefix, loc, within) = prefix(member);
    let what = if limit == "yaml_depth" {
        "YAML"
    } else {
        "JSON"
    };
    let bound = if by_parser {
        format!("the {what} parser's own 128 levels")
    } else {
        let value = ctx.cfg.limits.get(limit).unwrap_or_default();
        format!("the {limit} limit ({value})")
    };
    let cfg = ctx.cfg;
    let d = ctx.detect(
        RuleId::LimitExceeded,
        format!("{key_prefix}{limit}"),
        format!(
            "{what} config{within} nests deeper than {bound}; `_target_` keys below that depth were not checked"
        ),
        loc,
    );
    super::context::name_limit(d, cfg, limit);
}

/// A YAML document as a JSON value (for descriptors such as MLflow's `MLmodel`); `None` when
/// it does not parse or expands past `max_nodes` nodes ([`check_yaml`] says so). Nesting is
/// bounded by the parser.
pub fn yaml_value(bytes: &[u8], max_nodes: u64) -> Option<Value> {
    let text = String::from_utf8_lossy(bytes);
    yaml::parse(&text, max_nodes).ok().map(|v| to_json(&v))
}

/// YAML to JSON for the walk. Keys that are not strings (numbers, `null`, sequences) are spelled
/// out rather than refused, so an odd key cannot make the document unreadable and hide its
/// `_target_`; tags (`!Thing`) keep their value. Recursion is bounded by the parser's nesting
/// limit.
fn to_json(v: &serde_norway::Value) -> Value {
    use serde_norway::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(*b),
        Y::Number(n) => serde_json::to_value(n).unwrap_or(Value::Null),
        Y::String(s) => Value::String(s.clone()),
        Y::Sequence(items) => Value::Array(items.iter().map(to_json).collect()),
        Y::Mapping(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Y::String(s) => s.clone(),
                        other => serde_norway::to_string(other)
                            .map(|s| s.trim_end().to_string())
                            .unwrap_or_default(),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Y::Tagged(t) => to_json(&t.value),
    }
}

/// Checks a JSON document's `_target_` keys. Documents that cannot mention `_target_` (not even
/// through a `\u` escape) are not parsed.
pub fn check_json(ctx: &mut Ctx<'_>, bytes: &[u8], member: Option<&str>) {
    if !json_may_name_target(bytes) {
        return;
    }
    // serde_json's own recursion limit (128) bounds nesting; Python's `json` reads deeper
    // documents, so a refusal for depth alone is a limit, said (issue 37).
    match serde_json::from_slice::<Value>(bytes) {
        Ok(value) => check_value(ctx, &value, member, "json_depth"),
        Err(e) if is_depth_error(&e.to_string()) => too_deep(ctx, "json_depth", true, member),
        Err(_) => {}
    }
}

/// Whether `check_json` parses the document: it could name a `_target_`, literally or through
/// a `\u` escape.
fn json_may_name_target(bytes: &[u8]) -> bool {
    contains(bytes, b"_target_") || contains(bytes, b"\\u")
}

/// Issue 39: records the fields of a JSON config that make a loader fetch or import code
/// (`loader_code` fact; `repository::loader_code` judges them against the tree). Files a loader
/// reads by name are always parsed; others only when they mention such a field. A loader
/// config nested deeper than `json_depth` is SCAN004: a field below that depth was not checked.
pub fn check_loader_code(ctx: &mut Ctx<'_>, bytes: &[u8]) {
    let name = crate::classify::basename(ctx.rel);
    let by_name = loaders::LOADER_CONFIG_NAMES.contains(&name);
    if !by_name
        && !loaders::LOADER_FIELD_NEEDLES
            .iter()
            .any(|n| contains(bytes, n))
    {
        return;
    }
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        // serde_json refuses nesting deeper than 128; Python's json module does not.
        Err(e) if e.to_string().contains("recursion limit") => {
            // A document that could name a `_target_` already has its SCAN004 from the
            // `_target_` check (one depth finding per file).
            if !json_may_name_target(bytes) {
                loader_config_too_deep(ctx, "the document");
            }
            return;
        }
        Err(_) => return,
    };
    let limits = loader_code::Limits {
        max_depth: usize_of(ctx.cfg.limits.json_depth),
        max_refs: usize_of(ctx.cfg.limits.loader_fields),
        ..loader_code::Limits::default()
    };
    let walk = loader_code::walk(name, &value, &ctx.cfg.pickle_extra, &limits);
    if let Some(at) = &walk.too_deep {
        loader_config_too_deep(ctx, &format!("`{at}`"));
    }
    // Padding a config with harmless entries must not push a remote one out of sight.
    if walk.truncated {
        let cfg = ctx.cfg;
        let d = ctx.detect(
            RuleId::LimitExceeded,
            "loader_fields",
            format!(
                "config has more fields that make a loader fetch or import code than the loader_fields limit ({}); the rest were not checked",
                cfg.limits.loader_fields
            ),
            Location::default(),
        );
        super::context::name_limit(d, cfg, "loader_fields");
    }
    if !walk.refs.is_empty() {
        ctx.fact(Fact::LoaderCode, json!(walk.refs));
    }
}

/// SCAN004 for a config nested past `json_depth` at `at`.
fn loader_config_too_deep(ctx: &mut Ctx<'_>, at: &str) {
    let cfg = ctx.cfg;
    let d = ctx.detect(
        RuleId::LimitExceeded,
        "json_depth",
        format!(
            "config nests deeper than the json_depth limit at {at}; fields below it that make a loader fetch or import code were not checked"
        ),
        Location::default(),
    );
    super::context::name_limit(d, cfg, "json_depth");
}

/// A byte search that runs at memory speed: every JSON file of a tree is searched for the loader
/// needles, and a window-by-window comparison was an eighth of the time of a tree of small JSON
/// files.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

/// CFG002: every python tag, once per distinct tag, with the line of its first use.
fn check_tags(ctx: &mut Ctx<'_>, text: &str, member: Option<&str>) {
    let (key_prefix, loc, within) = prefix(member);
    // `%TAG !x! tag:yaml.org,2002:` makes `!x!python/object` the same tag as `!!python/object`.
    let mut handles = vec!["!!".to_string(), "tag:yaml.org,2002:".to_string()];
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("%TAG") {
            continue;
        }
        if let (Some(handle), Some(expansion)) = (words.next(), words.next()) {
            if expansion == "tag:yaml.org,2002:" {
                handles.push(handle.to_string());
            } else if expansion.starts_with("tag:yaml.org,2002:python/") {
                // `%TAG !p! tag:yaml.org,2002:python/` makes `!p!object` a python tag; the NUL
                // marks a handle whose every use is one.
                handles.push(format!("{handle}\u{0}"));
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for (number, line) in text.lines().enumerate() {
        for handle in &handles {
            let found = if let Some(h) = handle.strip_suffix('\u{0}') {
                // A handle that already expands to `python/`: any use of it is a python tag.
                find_all(line, h)
                    .filter(|&i| !line[..i].trim_end().ends_with("%TAG"))
                    .map(|i| format!("python/{}", tag_word(&line[i + h.len()..])))
                    .collect::<Vec<_>>()
            } else {
                find_all(line, handle)
                    .filter_map(|i| {
                        let rest = &line[i + handle.len()..];
                        PYTHON_TAGS
                            .iter()
                            .find(|t| rest.starts_with(*t))
                            .map(|_| tag_word(rest).to_string())
                    })
                    .collect()
            };
            for tag in found {
                if !seen.insert(tag.clone()) {
                    continue;
                }
                if name_tag_is_not_dangerous(ctx, &tag, number, &key_prefix, &loc, &within) {
                    continue;
                }
                let d = ctx.detect(
                    RuleId::YamlUnsafeTag,
                    format!("{key_prefix}{tag}"),
                    format!(
                        "YAML{within} uses the `!!{tag}` tag on line {}: PyYAML's unsafe_load (and full_load/load before 5.4) imports and calls Python objects from it",
                        number + 1
                    ),
                    Location {
                        line: Some(number as u64 + 1),
                        ..loc.clone()
                    },
                );
                d.evidence.insert("tag".into(), json!(tag));
                d.evidence
                    .insert("references".into(), json!(TAG_REFERENCES));
            }
        }
    }
}

/// Issue 15: `!!python/name:X` only resolves `X` (an import and an attribute lookup, like a
/// pickle GLOBAL that is never called); mkdocs configs use it for their extensions. It is judged
/// by its target: a dangerous one stays CFG002, any other is named for review as CFG003 (a safe
/// one is quiet). Returns false when the tag is not such a name, or names something dangerous.
fn name_tag_is_not_dangerous(
    ctx: &mut Ctx<'_>,
    tag: &str,
    number: usize,
    key_prefix: &str,
    loc: &Location,
    within: &str,
) -> bool {
    let Some(target) = tag.strip_prefix("python/name:") else {
        return false;
    };
    let Some((module, name)) = target.rsplit_once('.') else {
        return false;
    };
    if module.is_empty() || name.is_empty() {
        return false;
    }
    match knowledge::classify_global(module, name, &ctx.cfg.pickle_extra) {
        Verdict::Dangerous { .. } => false,
        Verdict::Safe => true,
        Verdict::Unknown => {
            let d = ctx.detect(
                RuleId::ConfigUnknownTarget,
                format!("{key_prefix}{tag}"),
                format!(
                    "YAML{within} uses the `!!{tag}` tag on line {}: PyYAML's unsafe_load (and full_load/load before 5.4) imports `{target}` (without calling it); it is not on the safe list",
                    number + 1
                ),
                Location {
                    line: Some(number as u64 + 1),
                    ..loc.clone()
                },
            );
            d.evidence.insert("tag".into(), json!(tag));
            d.evidence.insert("target".into(), json!(target));
            d.evidence.insert("category".into(), json!("unknown"));
            true
        }
    }
}

fn find_all<'a>(line: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    line.match_indices(needle).map(|(i, _)| i)
}

/// The tag up to the first character that ends it (`:` starts the suffix of `python/object:x`).
fn tag_word(rest: &str) -> &str {
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, '>' | ',' | '[' | ']' | '{' | '}'))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Walks the document (iteratively, to the depth `depth_limit` names) for mappings with a
/// `_target_` key; a deeper value is SCAN004 naming that limit.
fn check_value(ctx: &mut Ctx<'_>, value: &Value, member: Option<&str>, depth_limit: &str) {
    let max_depth = crate::model::limits::usize_of(ctx.cfg.limits.get(depth_limit).unwrap_or(0));
    let mut cut = false;
    let mut targets: std::collections::BTreeMap<String, (String, bool)> = Default::default();
    let mut stack: Vec<(&Value, String, usize)> = vec![(value, String::new(), 0)];
    while let Some((v, path, depth)) = stack.pop() {
        if depth >= max_depth && (v.is_object() || v.is_array()) {
            cut = true;
            continue;
        }
        match v {
            Value::Object(map) => {
                if let Some(t) = map.get("_target_") {
                    let name = match t {
                        Value::String(s) => s.trim().to_string(),
                        other => other.to_string(),
                    };
                    let at = if path.is_empty() {
                        "_target_".to_string()
                    } else {
                        format!("{path}._target_")
                    };
                    let partial = map.get("_partial_").and_then(Value::as_bool) == Some(true);
                    targets.entry(name).or_insert((at, partial));
                }
                for (k, child) in map.iter().rev() {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    stack.push((child, p, depth + 1));
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate().rev() {
                    stack.push((child, format!("{path}[{i}]"), depth + 1));
                }
            }
            _ => {}
        }
    }
    if cut {
        too_deep(ctx, depth_limit, false, member);
    }
    let (key_prefix, loc, within) = prefix(member);
    let mut names = Vec::new();
    for (target, (at, partial)) in targets {
        names.push(target.clone());
        let (module, name) = match target.rsplit_once('.') {
            Some((m, n)) if !m.is_empty() && !n.is_empty() => (m, n),
            _ => ("builtins", target.as_str()),
        };
        let how = if partial {
            "imports and wraps in functools.partial"
        } else {
            "imports and calls"
        };
        let (rule, severity, message, category) = match knowledge::classify_global(
            module,
            name,
            &ctx.cfg.pickle_extra,
        ) {
            Verdict::Safe => continue,
            Verdict::Dangerous { category, reason } => (
                RuleId::ConfigInstantiatesCode,
                Severity::Critical,
                format!(
                    "config{within} key `{at}` names `{target}`, which Hydra-style instantiation {how}: {reason}"
                ),
                category,
            ),
            // Issue 32: instantiation calls the target, so the pickle judge's reading of a
            // called name applies (`instantiate_from_config`, `load_model`, `system`, ...).
            Verdict::Unknown if knowledge::judge_by_name(module, name).is_some() => (
                RuleId::ConfigInstantiatesCode,
                Severity::Critical,
                format!(
                    "config{within} key `{at}` names `{target}`, which Hydra-style instantiation {how}; no table knows it, and judged by its name it {}",
                    knowledge::judge_by_name(module, name).unwrap_or_default()
                ),
                knowledge::JUDGED_BY_NAME,
            ),
            Verdict::Unknown => (
                RuleId::ConfigUnknownTarget,
                RuleId::ConfigUnknownTarget.default_severity(),
                format!(
                    "config{within} key `{at}` names `{target}`, which Hydra-style instantiation {how}; it is not on the safe list"
                ),
                "unknown",
            ),
        };
        let d = ctx.detect(rule, format!("{key_prefix}{target}"), message, loc.clone());
        d.severity = severity;
        d.evidence.insert("target".into(), json!(target));
        d.evidence.insert("key".into(), json!(at));
        d.evidence.insert("partial".into(), json!(partial));
        d.evidence.insert("category".into(), json!(category));
        if category == knowledge::JUDGED_BY_NAME {
            d.evidence.insert("judged".into(), json!("name"));
        } else if rule == RuleId::ConfigInstantiatesCode {
            d.evidence
                .insert("references".into(), json!(TARGET_REFERENCES));
        }
    }
    if !names.is_empty() {
        let mut all = ctx.facts.fact_strings(Fact::ConfigTargets);
        all.extend(names);
        all.sort();
        all.dedup();
        ctx.fact(Fact::ConfigTargets, json!(all));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::ScanConfig;
    use std::path::Path;

    fn run(f: impl FnOnce(&mut Ctx<'_>)) -> Vec<crate::model::finding::Detection> {
        let cfg = ScanConfig::default();
        let mut ctx = Ctx::new(&cfg, "model_config.yaml", Path::new("model_config.yaml"));
        f(&mut ctx);
        ctx.detections
    }

    /// The SCAN004 detections of `d`, as (limit, message).
    fn limits_hit(d: &[crate::model::finding::Detection]) -> Vec<(String, String)> {
        d.iter()
            .filter(|d| d.rule == RuleId::LimitExceeded)
            .map(|d| {
                (
                    d.evidence["limit"].as_str().unwrap().to_string(),
                    d.message.clone(),
                )
            })
            .collect()
    }

    #[test]
    fn a_json_config_100000_deep_is_scan004_json_depth_not_a_crash_issue_37() {
        // Python's json reads far deeper documents than serde_json's 128 levels, so a
        // `_target_` below them would be instantiated but never seen here: said, not skipped.
        let n = 100_000;
        let json = format!(
            "{}{{\"_target_\": \"os.system\"}}{}",
            "{\"a\": ".repeat(n),
            "}".repeat(n)
        );
        let d = run(|c| check_json(c, json.as_bytes(), None));
        let hit = limits_hit(&d);
        assert_eq!(hit.len(), 1, "{d:?}");
        assert_eq!(hit[0].0, "json_depth");
        assert!(hit[0].1.contains("parser's own 128 levels"), "{}", hit[0].1);
        // Deep arrays without any `_target_` hide nothing: not parsed, not reported.
        let plain = format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(run(|c| check_json(c, plain.as_bytes(), None)).is_empty());
    }

    #[test]
    fn a_yaml_alias_bomb_is_scan004_yaml_nodes_and_not_built_issue_37() {
        let bomb = crate::provenance::yaml::alias_bomb(1000, 5000);
        let d = run(|c| check_yaml(c, bomb.as_bytes(), None));
        let hit = limits_hit(&d);
        assert_eq!(hit.len(), 1, "{d:?}");
        assert_eq!(hit[0].0, "yaml_nodes");
        assert!(hit[0].1.contains("1000000 nodes"), "{}", hit[0].1);
        assert_eq!(yaml_value(bomb.as_bytes(), 1_000_000), None);
        // Anchors a real config uses still parse, and their `_target_` is still seen.
        let hydra = b"base: &b\n  _target_: os.system\nmodel: *b\nother: *b\n";
        let d = run(|c| check_yaml(c, hydra, None));
        assert!(limits_hit(&d).is_empty(), "{d:?}");
        assert!(
            d.iter().any(|x| x.rule == RuleId::ConfigInstantiatesCode),
            "{d:?}"
        );
        assert!(yaml_value(hydra, 1_000_000).is_some());
    }

    #[test]
    fn a_yaml_config_100000_deep_is_scan004_yaml_depth_not_a_crash_issue_37() {
        let n = 100_000;
        let flow = format!(
            "{}{{_target_: os.system}}{}\n",
            "[".repeat(n),
            "]".repeat(n)
        );
        // Block style costs its indentation squared in bytes: 2,000 levels are 2 MB.
        let m = 2_000;
        let block: String = (0..m)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .chain(std::iter::once(format!(
                "{}_target_: os.system\n",
                " ".repeat(m)
            )))
            .collect();
        for yaml in [flow, block] {
            let d = run(|c| check_yaml(c, yaml.as_bytes(), None));
            let hit = limits_hit(&d);
            assert_eq!(hit.len(), 1, "{d:?}");
            assert_eq!(hit[0].0, "yaml_depth");
        }
    }

    #[test]
    fn a_lowered_depth_limit_stops_the_walk_with_scan004_and_keeps_shallow_targets() {
        let cfg = ScanConfig {
            limits: crate::model::limits::Limits {
                json_depth: 2,
                ..Default::default()
            },
            ..ScanConfig::default()
        };
        let mut ctx = Ctx::new(&cfg, "config.json", Path::new("config.json"));
        let json = br#"{"_target_": "os.system", "a": {"b": {"_target_": "os.popen"}}}"#;
        check_json(&mut ctx, json, None);
        let hit = limits_hit(&ctx.detections);
        assert_eq!(hit.len(), 1, "{:?}", ctx.detections);
        assert!(
            hit[0].1.contains("the json_depth limit (2)"),
            "{}",
            hit[0].1
        );
        let targets: Vec<_> = ctx
            .detections
            .iter()
            .filter(|d| d.rule == RuleId::ConfigInstantiatesCode)
            .map(|d| d.evidence["target"].clone())
            .collect();
        assert_eq!(targets, [json!("os.system")]);
    }

    #[test]
    fn dangerous_target_is_cfg001_with_key_and_references() {
        let yaml = b"model:\n  preprocessor:\n    _target_: os.system\n    _args_: ['id']\n";
        let d = run(|c| check_yaml(c, yaml, None));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].rule, RuleId::ConfigInstantiatesCode);
        assert!(d[0].message.contains("model.preprocessor._target_"));
        assert!(d[0].message.contains("os.system"));
        assert_eq!(d[0].evidence["references"], json!(["CVE-2025-23304"]));
    }

    #[test]
    fn targets_the_tables_do_not_know_are_judged_by_their_name_issue_32() {
        let yaml = b"model:\n  a:\n    _target_: ldm.util.instantiate_from_config\n  b:\n    _target_: acme.shell.system\n  c:\n    _target_: acme.nets.ConvNet\n  d:\n    _target_: requests.get\n";
        let d = run(|c| check_yaml(c, yaml, None));
        let judged: Vec<_> = d
            .iter()
            .filter(|d| d.evidence.get("judged") == Some(&json!("name")))
            .map(|d| d.rule)
            .collect();
        assert_eq!(judged, vec![RuleId::ConfigInstantiatesCode; 2], "{d:?}");
        // The capability table: `requests.get` reaches the network.
        assert!(d.iter().any(|d| d.rule == RuleId::ConfigInstantiatesCode
            && d.evidence["target"] == json!("requests.get")));
        assert!(d.iter().any(|d| d.rule == RuleId::ConfigUnknownTarget
            && d.evidence["target"] == json!("acme.nets.ConvNet")));
    }

    #[test]
    fn builtins_exec_and_subprocess_in_json() {
        let j = br#"{"a": {"_target_": "builtins.exec", "_args_": ["x"]}, "b": [{"_target_": "subprocess.Popen", "_partial_": true}]}"#;
        let d = run(|c| check_json(c, j, None));
        let rules: Vec<_> = d.iter().map(|d| d.rule).collect();
        assert_eq!(rules, vec![RuleId::ConfigInstantiatesCode; 2], "{d:?}");
        assert!(d.iter().any(|d| d.evidence["partial"] == json!(true)));
    }

    #[test]
    fn escaped_json_key_is_still_seen() {
        let j = br#"{"\u005ftarget_": "os.system"}"#;
        let d = run(|c| check_json(c, j, None));
        assert_eq!(d.len(), 1);
    }

    #[test]
    fn framework_target_is_unknown_at_most() {
        let yaml = b"encoder:\n  _target_: nemo.collections.asr.modules.ConformerEncoder\n  d_model: 256\n";
        let d = run(|c| check_yaml(c, yaml, None));
        assert!(
            d.iter().all(|d| d.rule == RuleId::ConfigUnknownTarget),
            "{d:?}"
        );
        assert!(d[0].message.contains("ConformerEncoder"));
    }

    #[test]
    fn odd_keys_and_custom_tags_do_not_hide_a_target() {
        let yaml = b"? [a, b]\n: 1\n1: 2\nhead: !Thing\n  _target_: subprocess.check_output\n";
        let d = run(|c| check_yaml(c, yaml, None));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].rule, RuleId::ConfigInstantiatesCode);
    }

    #[test]
    fn python_tags_are_cfg002() {
        let yaml = b"a: !!python/object/apply:os.system ['id']\nb: !!python/name:os.system\nc: !<tag:yaml.org,2002:python/module:os> ''\n";
        let d = run(|c| check_yaml(c, yaml, None));
        let tags: Vec<_> = d
            .iter()
            .filter(|d| d.rule == RuleId::YamlUnsafeTag)
            .map(|d| d.evidence["tag"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            tags,
            vec![
                "python/object/apply:os.system",
                "python/name:os.system",
                "python/module:os"
            ]
        );
        assert_eq!(d[0].location.line, Some(1));
    }

    #[test]
    fn name_tags_are_judged_by_their_target_issue_15() {
        // mkdocs.yml as llama-cpp-python ships it: a name, never called, of an unknown module.
        let yaml = b"markdown_extensions:\n  - pymdownx.emoji:\n      emoji_index: !!python/name:materialx.emoji.twemoji\n      emoji_generator: !!python/name:materialx.emoji.to_svg\nx: !!python/name:collections.OrderedDict\ny: !!python/name:os.system\n";
        let d = run(|ctx| check_yaml(ctx, yaml, None));
        let rules: Vec<_> = d.iter().map(|d| (d.rule, d.location.line)).collect();
        assert_eq!(
            rules,
            [
                (RuleId::ConfigUnknownTarget, Some(3)),
                (RuleId::ConfigUnknownTarget, Some(4)),
                (RuleId::YamlUnsafeTag, Some(6)),
            ],
            "{d:?}"
        );
    }

    #[test]
    fn tag_directive_handles_are_expanded() {
        let yaml =
            b"%TAG !p! tag:yaml.org,2002:python/\n---\na: !p!object/apply:os.system ['id']\n";
        let d = run(|c| check_yaml(c, yaml, None));
        assert!(
            d.iter()
                .any(|d| d.rule == RuleId::YamlUnsafeTag && d.location.line == Some(3)),
            "{d:?}"
        );
        let yaml = b"%TAG !y! tag:yaml.org,2002:\n---\na: !y!python/name:os.system\n";
        let d = run(|c| check_yaml(c, yaml, None));
        assert!(d.iter().any(|d| d.rule == RuleId::YamlUnsafeTag), "{d:?}");
    }

    #[test]
    fn plain_yaml_and_alias_bombs_are_quiet() {
        let yaml = b"lr: 0.001\ntags: [a, b]\n";
        let d = run(|c| check_yaml(c, yaml, None));
        assert!(d.is_empty(), "{d:?}");
        let mut bomb = String::from("a: &a [x,x,x,x,x,x,x,x,x]\n");
        for pair in ["a", "b", "c", "d", "e", "f", "g", "h", "i"].windows(2) {
            bomb.push_str(&format!(
                "{}: &{} [{}]\n",
                pair[1],
                pair[1],
                vec![format!("*{}", pair[0]); 9].join(",")
            ));
        }
        let started = std::time::Instant::now();
        let d = run(|c| check_yaml(c, bomb.as_bytes(), None));
        assert!(d.is_empty());
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
