//! Config fields that make a model loader fetch or import code (issue 39), at any depth of the
//! document: transformers `auto_map` (in any sub-config, `repo--module.Class` from another
//! repository), `custom_pipelines`, attention implementations that name a Hub kernel
//! repository (CVE-2026-4372), a config that turns `trust_remote_code` on for a sub-config it
//! points at another repository (CVE-2026-5241); diffusers `model_index.json` components and
//! custom pipelines; sentence-transformers `modules.json` module types; PEFT
//! `adapter_config.json` `auto_mapping`; ModelScope `configuration.json` `plugins` and
//! `allow_remote`. `knowledge::loaders` holds the table with the loader code each row was read
//! from.
//!
//! Pure: a parsed document in, [`CodeRef`]s out. Whether a named module ships in the tree is
//! decided later, by the repository check that sees every path (`repository::loader_code`).
//! The walk is iterative and bounded by [`Limits::max_depth`] (what lies deeper is reported as
//! not checked) and [`Limits::max_refs`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::code::python::hub::is_hub_id_shaped;
use crate::knowledge::loaders::{
    ATTENTION_FIELDS, DYNAMIC_MODULES_ROOT, KERNEL_REFERENCES, NESTED_TRUST_REFERENCES,
    is_diffusers_library, is_library_module,
};
use crate::knowledge::{self, ExtraLists, Verdict};
use crate::provenance::automap;

/// Caps on one walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Nesting levels walked (the `json_depth` limit).
    pub max_depth: usize,
    /// References kept.
    pub max_refs: usize,
    /// Chars kept from one string.
    pub max_value_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: 128,
            max_refs: 256,
            max_value_chars: 256,
        }
    }
}

/// One field that makes a loader fetch or import code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeRef {
    /// The loader that follows it: `transformers`, `diffusers`, `sentence-transformers`,
    /// `peft`, `modelscope`.
    pub loader: String,
    /// The field, e.g. `auto_map`, `attn_implementation`, `modules[].type`.
    pub field: String,
    /// Where it is in the document, e.g. `text_config.auto_map.AutoModel`.
    pub path: String,
    /// The value as written (bounded).
    pub value: String,
    /// What the loader fetches or imports.
    pub target: Target,
    /// The `trust_remote_code: true` of the config that applies to this field, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<String>,
}

/// What a loader does with a field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Target {
    /// Code from outside the scanned tree: a Hub repository, a community pipeline mirror.
    Remote {
        /// Where it comes from (`org/repo`, or the mirror's name).
        source: String,
        /// What is fetched and run (`modeling_x.py`, `the kernel`, ...).
        fetched: String,
        /// Advisories for this path.
        #[serde(default)]
        references: Vec<String>,
    },
    /// Packages installed from a package index and imported.
    Package {
        /// The requirement as written.
        package: String,
    },
    /// A module of the scanned tree (relative to the config's directory); `otherwise` is what
    /// the loader does when the file is not there.
    Local {
        /// The file, e.g. `modeling_x.py` or `unet/my_unet.py`.
        module_file: String,
        /// The class taken from it.
        class: String,
        /// What happens without the file.
        otherwise: Box<Otherwise>,
    },
    /// An installed module imported by name, judged by the knowledge tables.
    Import(Import),
    /// Every Python module of the config's directory.
    Directory,
}

/// What a loader does when the module a [`Target::Local`] names is not in the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Otherwise {
    /// Fetch it from the repository being loaded (transformers); not in the scan.
    Missing,
    /// Import an installed module of that name.
    Import(Import),
    /// Fetch it from outside the tree.
    Remote {
        /// Where from.
        source: String,
        /// What.
        fetched: String,
    },
}

/// An import by name and what the knowledge tables say of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// The module imported.
    pub module: String,
    /// The attribute taken from it.
    pub name: String,
    /// `dangerous`, `safe`, `library` (a class of a known ML library) or `unknown`.
    pub verdict: String,
    /// Why, for a dangerous one.
    #[serde(default)]
    pub reason: String,
    /// The knowledge category, for a dangerous one.
    #[serde(default)]
    pub category: String,
}

/// The result of one walk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    /// The fields found, in document order.
    pub refs: Vec<CodeRef>,
    /// More references than `max_refs`: the rest were not kept.
    pub truncated: bool,
    /// The path of the first object deeper than `max_depth`, which was not walked.
    pub too_deep: Option<String>,
}

/// Walks the document of the config file named `file_name` (its base name) for loader fields.
pub fn walk(file_name: &str, doc: &Value, extra: &ExtraLists, limits: &Limits) -> Walk {
    let mut w = Walker {
        out: Walk::default(),
        limits,
        extra,
    };
    w.generic(doc);
    match (file_name, doc) {
        ("model_index.json" | "modular_model_index.json", Value::Object(map)) => w.diffusers(map),
        ("modules.json", Value::Array(items)) => w.sentence_transformers(items),
        ("adapter_config.json", Value::Object(map)) => w.peft(map),
        ("configuration.json", Value::Object(map)) => w.modelscope(map),
        _ => {}
    }
    w.out
}

struct Walker<'a> {
    out: Walk,
    limits: &'a Limits,
    extra: &'a ExtraLists,
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The `org/repo[@rev][:kernel]` value shape transformers' `is_kernel` takes for a Hub kernel
/// (`^[^/:]+/[^/:]+(?:@[^/:]+)?(?::[^/:]+)?$`), after an optional `paged|` prefix; the
/// repository part, or `None` for a built-in implementation (`sdpa`, `flash_attention_2`, ...).
pub fn hub_kernel(value: &str) -> Option<&str> {
    let v = value.strip_prefix("paged|").unwrap_or(value);
    let (repo_part, kernel) = match v.split_once(':') {
        Some((r, k)) => (r, Some(k)),
        None => (v, None),
    };
    let (repo, rev) = match repo_part.split_once('@') {
        Some((r, rev)) => (r, Some(rev)),
        None => (repo_part, None),
    };
    let (org, name) = repo.split_once('/')?;
    let plain = |s: &str| !s.is_empty() && !s.contains(['/', ':']);
    let ok = plain(org)
        && plain(name)
        && rev.is_none_or(|r| plain(r) && !r.contains('@'))
        && kernel.is_none_or(plain);
    ok.then_some(repo)
}

impl Walker<'_> {
    fn bounded(&self, s: &str) -> String {
        if s.chars().count() > self.limits.max_value_chars {
            s.chars().take(self.limits.max_value_chars).collect()
        } else {
            s.to_string()
        }
    }

    fn push(&mut self, r: CodeRef) {
        if self.out.refs.len() < self.limits.max_refs {
            self.out.refs.push(r);
        } else {
            self.out.truncated = true;
        }
    }

    fn judge(&self, module: &str, name: &str) -> Import {
        let (verdict, reason, category) = match knowledge::classify_global(module, name, self.extra)
        {
            Verdict::Dangerous { category, reason } => ("dangerous", reason, category),
            Verdict::Safe => ("safe", "", ""),
            Verdict::Unknown if is_library_module(module) => ("library", "", ""),
            Verdict::Unknown => ("unknown", "", ""),
        };
        Import {
            module: self.bounded(module),
            name: self.bounded(name),
            verdict: verdict.to_string(),
            reason: reason.to_string(),
            category: category.to_string(),
        }
    }

    /// Fields any transformers config may hold at any depth: `auto_map`, `custom_pipelines`,
    /// attention implementations, and `trust_remote_code` over a sub-config of another
    /// repository.
    fn generic(&mut self, doc: &Value) {
        // (value, path, depth, trust_remote_code path in force)
        let mut stack: Vec<(&Value, String, usize, Option<String>)> =
            vec![(doc, String::new(), 0, None)];
        while let Some((v, path, depth, trust)) = stack.pop() {
            if depth > self.limits.max_depth {
                if self.out.too_deep.is_none() {
                    self.out.too_deep = Some(path);
                }
                continue;
            }
            match v {
                Value::Object(map) => {
                    let here_trust = match map.get("trust_remote_code") {
                        Some(Value::Bool(true)) => Some(child_path(&path, "trust_remote_code")),
                        _ => None,
                    };
                    if let Some(t) = &trust {
                        self.nested_name_or_path(map, &path, t);
                    }
                    let trust = trust.or(here_trust);
                    self.auto_map(map, &path, &trust);
                    self.attention(map, &path, &trust);
                    for (k, child) in map.iter().rev() {
                        if matches!(child, Value::Object(_) | Value::Array(_)) {
                            stack.push((child, child_path(&path, k), depth + 1, trust.clone()));
                        }
                    }
                }
                Value::Array(items) => {
                    for (i, child) in items.iter().enumerate().rev() {
                        if matches!(child, Value::Object(_) | Value::Array(_)) {
                            stack.push((child, format!("{path}[{i}]"), depth + 1, trust.clone()));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn auto_map(&mut self, map: &Map<String, Value>, path: &str, trust: &Option<String>) {
        if !map.contains_key("auto_map") && !map.contains_key("custom_pipelines") {
            return;
        }
        let limits = automap::Limits {
            max_entries: self.limits.max_refs,
            max_value_chars: self.limits.max_value_chars,
            ..automap::Limits::default()
        };
        let (entries, truncated) = automap::entries_of(map, &limits);
        self.out.truncated |= truncated;
        for e in entries {
            if e.malformed.is_some() {
                continue;
            }
            let (field, at) = match e.auto_class.strip_prefix("custom_pipelines:") {
                Some(task) => ("custom_pipelines", format!("custom_pipelines.{task}.impl")),
                None => {
                    let index = match e.variant {
                        Some("slow") => "[0]",
                        Some("fast") => "[1]",
                        _ => "",
                    };
                    ("auto_map", format!("auto_map.{}{index}", e.auto_class))
                }
            };
            let target = match &e.remote_repo {
                Some(repo) => Target::Remote {
                    source: repo.clone(),
                    fetched: format!("`{}` (class `{}`)", e.module_file, e.class),
                    references: Vec::new(),
                },
                None => Target::Local {
                    module_file: e.module_file.clone(),
                    class: e.class.clone(),
                    otherwise: Box::new(Otherwise::Missing),
                },
            };
            self.push(CodeRef {
                loader: "transformers".into(),
                field: field.into(),
                path: child_path(path, &at),
                value: e.reference.clone(),
                target,
                trust: trust.clone(),
            });
        }
    }

    fn attention(&mut self, map: &Map<String, Value>, path: &str, trust: &Option<String>) {
        for field in ATTENTION_FIELDS {
            let Some(value) = map.get(*field) else {
                continue;
            };
            // A dict gives one implementation per sub-config (`set_attn_implementation`).
            let values: Vec<(String, &str)> = match value {
                Value::String(s) => vec![(child_path(path, field), s.as_str())],
                Value::Object(per) => per
                    .iter()
                    .filter_map(|(k, v)| {
                        v.as_str()
                            .map(|s| (child_path(&child_path(path, field), k), s))
                    })
                    .collect(),
                _ => Vec::new(),
            };
            for (at, s) in values {
                let Some(repo) = hub_kernel(s) else {
                    continue;
                };
                let repo = self.bounded(repo);
                self.push(CodeRef {
                    loader: "transformers".into(),
                    field: (*field).into(),
                    path: at,
                    value: self.bounded(s),
                    target: Target::Remote {
                        source: repo,
                        fetched: "an attention kernel (downloaded and imported by the `kernels` package on `from_pretrained`, without `trust_remote_code`)".into(),
                        references: KERNEL_REFERENCES.iter().map(|r| r.to_string()).collect(),
                    },
                    trust: trust.clone(),
                });
            }
        }
    }

    /// CVE-2026-5241: under a config's own `trust_remote_code: true`, a sub-config that names
    /// another repository in `_name_or_path` is loaded with `AutoConfig.from_pretrained(name,
    /// trust_remote_code=True)`: that repository's config and the code its `auto_map` names.
    fn nested_name_or_path(&mut self, map: &Map<String, Value>, path: &str, trust: &str) {
        let Some(name) = map.get("_name_or_path").and_then(Value::as_str) else {
            return;
        };
        if !is_hub_id_shaped(name) {
            return;
        }
        let repo = self.bounded(name);
        self.push(CodeRef {
            loader: "transformers".into(),
            field: "_name_or_path".into(),
            path: child_path(path, "_name_or_path"),
            value: repo.clone(),
            target: Target::Remote {
                source: repo,
                fetched: "its config and the code its `auto_map` names (`AutoConfig.from_pretrained` with the config's own `trust_remote_code`)".into(),
                references: NESTED_TRUST_REFERENCES.iter().map(|r| r.to_string()).collect(),
            },
            trust: Some(trust.to_string()),
        });
    }

    /// diffusers `model_index.json`: `_class_name: [file, class]` (a custom pipeline) and
    /// `<component>: [library, class]`.
    fn diffusers(&mut self, map: &Map<String, Value>) {
        for (key, value) in map {
            let Some([Value::String(first), Value::String(class)]) =
                value.as_array().map(Vec::as_slice)
            else {
                continue;
            };
            let (first, class) = (self.bounded(first), self.bounded(class));
            if key == "_class_name" {
                let otherwise = if is_hub_id_shaped(&first) {
                    Otherwise::Remote {
                        source: first.clone(),
                        fetched: format!("`pipeline.py` (class `{class}`)"),
                    }
                } else {
                    Otherwise::Remote {
                        source: "the diffusers community pipelines".into(),
                        fetched: format!("`{first}.py` (class `{class}`)"),
                    }
                };
                self.push(CodeRef {
                    loader: "diffusers".into(),
                    field: "_class_name".into(),
                    path: "_class_name[0]".into(),
                    value: first.clone(),
                    target: Target::Local {
                        module_file: format!("{first}.py"),
                        class,
                        otherwise: Box::new(otherwise),
                    },
                    trust: None,
                });
                continue;
            }
            if key.starts_with('_') || is_diffusers_library(&first) {
                continue;
            }
            let import = self.judge(&first, &class);
            self.push(CodeRef {
                loader: "diffusers".into(),
                field: "component library".into(),
                path: format!("{}[0]", self.bounded(key)),
                value: first.clone(),
                target: Target::Local {
                    module_file: format!("{}/{first}.py", self.bounded(key)),
                    class,
                    otherwise: Box::new(Otherwise::Import(import)),
                },
                trust: None,
            });
        }
    }

    /// sentence-transformers `modules.json`: each module's `type`.
    fn sentence_transformers(&mut self, items: &[Value]) {
        for (i, item) in items.iter().enumerate() {
            let Some(t) = item.get("type").and_then(Value::as_str) else {
                continue;
            };
            if t.starts_with("sentence_transformers.") {
                continue;
            }
            let path = format!("[{i}].type");
            let value = self.bounded(t);
            let reference = automap::parse_reference("type", t, &automap::Limits::default());
            let target = match (&reference.remote_repo, &reference.malformed) {
                (Some(repo), None) => Target::Remote {
                    source: self.bounded(repo),
                    fetched: format!("`{}` (class `{}`)", reference.module_file, reference.class),
                    references: Vec::new(),
                },
                // `module.Class`: this repository's `module.py` under trust_remote_code, else
                // an installed module of that name.
                (None, None) => Target::Local {
                    module_file: reference.module_file.clone(),
                    class: reference.class.clone(),
                    otherwise: Box::new(Otherwise::Import(self.judge(
                        reference.module_file.trim_end_matches(".py"),
                        &reference.class,
                    ))),
                },
                // A deeper dotted name goes straight to `import_from_string`.
                _ => match t.rsplit_once('.') {
                    Some((module, name)) if !module.is_empty() && !name.is_empty() => {
                        Target::Import(self.judge(module, name))
                    }
                    _ => continue,
                },
            };
            self.push(CodeRef {
                loader: "sentence-transformers".into(),
                field: "modules[].type".into(),
                path,
                value,
                target,
                trust: None,
            });
        }
    }

    /// PEFT `adapter_config.json`: `auto_mapping.parent_library` is imported and
    /// `base_model_class` taken from it.
    fn peft(&mut self, map: &Map<String, Value>) {
        let Some(mapping) = map.get("auto_mapping").and_then(Value::as_object) else {
            return;
        };
        let (Some(library), Some(class)) = (
            mapping.get("parent_library").and_then(Value::as_str),
            mapping.get("base_model_class").and_then(Value::as_str),
        ) else {
            return;
        };
        let target = match dynamic_module_repo(library) {
            Some(repo) => Target::Remote {
                source: self.bounded(&repo),
                fetched: format!(
                    "the remote code module `{}` (class `{}`) of the base model",
                    self.bounded(library),
                    self.bounded(class)
                ),
                references: Vec::new(),
            },
            None => Target::Import(self.judge(library, class)),
        };
        self.push(CodeRef {
            loader: "peft".into(),
            field: "auto_mapping.parent_library".into(),
            path: "auto_mapping.parent_library".into(),
            value: self.bounded(library),
            target,
            trust: None,
        });
    }

    /// ModelScope `configuration.json`: `plugins` are pip-installed and imported;
    /// `allow_remote: true` imports the model directory's modules.
    fn modelscope(&mut self, map: &Map<String, Value>) {
        let plugins: Vec<(String, &str)> = match map.get("plugins") {
            Some(Value::String(s)) => vec![("plugins".into(), s.as_str())],
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.as_str().map(|s| (format!("plugins[{i}]"), s)))
                .collect(),
            _ => Vec::new(),
        };
        for (path, package) in plugins {
            self.push(CodeRef {
                loader: "modelscope".into(),
                field: "plugins".into(),
                path,
                value: self.bounded(package),
                target: Target::Package {
                    package: self.bounded(package),
                },
                trust: None,
            });
        }
        if map.get("allow_remote") == Some(&Value::Bool(true)) {
            self.push(CodeRef {
                loader: "modelscope".into(),
                field: "allow_remote".into(),
                path: "allow_remote".into(),
                value: "true".into(),
                target: Target::Directory,
                trust: None,
            });
        }
    }
}

/// `transformers_modules.<org>.<repo>....` is a dynamic module of remote code: the repository
/// it was fetched from (transformers keeps `org` and `repo` as the second and third components).
fn dynamic_module_repo(module: &str) -> Option<String> {
    let mut parts = module.split('.');
    if parts.next() != Some(DYNAMIC_MODULES_ROOT) {
        return None;
    }
    match (parts.next(), parts.next()) {
        (Some(org), Some(repo)) if !org.is_empty() && !repo.is_empty() => {
            Some(format!("{org}/{repo}"))
        }
        (Some(one), _) if !one.is_empty() => Some(one.to_string()),
        _ => Some(DYNAMIC_MODULES_ROOT.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refs(name: &str, doc: Value) -> Vec<CodeRef> {
        walk(name, &doc, &ExtraLists::default(), &Limits::default()).refs
    }

    fn remote_sources(refs: &[CodeRef]) -> Vec<(String, String)> {
        refs.iter()
            .filter_map(|r| match &r.target {
                Target::Remote { source, .. } => Some((r.path.clone(), source.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn hub_kernel_follows_transformers_is_kernel() {
        for (value, repo) in [
            (
                "kernels-community/flash-attn",
                Some("kernels-community/flash-attn"),
            ),
            ("attacker/evil", Some("attacker/evil")),
            ("org/k@v2:flash", Some("org/k")),
            ("paged|org/k", Some("org/k")),
            ("sdpa", None),
            ("flash_attention_2", None),
            ("eager", None),
            ("flex_attention", None),
            ("paged|sdpa", None),
            ("a/b/c", None),
            ("/b", None),
            ("a/b:c:d", None),
        ] {
            assert_eq!(hub_kernel(value), repo, "{value}");
        }
    }

    #[test]
    fn attention_kernel_at_any_depth_is_remote_and_builtin_values_are_not() {
        let r = refs(
            "config.json",
            json!({"attn_implementation": "sdpa",
                   "_attn_implementation_internal": "attacker/evil",
                   "text_config": {"_attn_implementation": "kernels-community/flash-attn",
                                   "attn_implementation": "flash_attention_2"},
                   "vision_config": {"attn_implementation": {"": "eager", "text_config": "org/k:fa"}}}),
        );
        assert_eq!(
            remote_sources(&r),
            vec![
                (
                    "_attn_implementation_internal".into(),
                    "attacker/evil".into()
                ),
                (
                    "text_config._attn_implementation".into(),
                    "kernels-community/flash-attn".into()
                ),
                (
                    "vision_config.attn_implementation.text_config".into(),
                    "org/k".into()
                ),
            ]
        );
        assert!(
            r.iter()
                .all(|r| matches!(&r.target, Target::Remote { references, .. } if references == &["CVE-2026-4372"]))
        );
        let benign = refs(
            "config.json",
            json!({"attn_implementation": "sdpa", "text_config": {"_attn_implementation": "eager"},
                   "vision_config": {"attn_implementation": "flex_attention"}}),
        );
        assert!(benign.is_empty(), "{benign:?}");
    }

    #[test]
    fn nested_auto_map_is_found_with_its_path() {
        let r = refs(
            "config.json",
            json!({"text_config": {"auto_map": {"AutoModel": "attacker/evil--modeling_evil.Evil"}},
                   "vision_config": {"auto_map": {"AutoConfig": "configuration_v.VConfig"}}}),
        );
        assert_eq!(
            remote_sources(&r),
            vec![(
                "text_config.auto_map.AutoModel".into(),
                "attacker/evil".into()
            )]
        );
        assert!(r.iter().any(|r| r.path == "vision_config.auto_map.AutoConfig"
            && matches!(&r.target, Target::Local { module_file, .. } if module_file == "configuration_v.py")));
        // The benign twin: sub-configs without auto_map.
        assert!(
            refs(
                "config.json",
                json!({"text_config": {"model_type": "llama"}})
            )
            .is_empty()
        );
    }

    #[test]
    fn config_trust_over_another_repository_is_remote_cve_2026_5241() {
        let r = refs(
            "config.json",
            json!({"model_type": "lightglue", "trust_remote_code": true,
                   "keypoint_detector_config": {"model_type": "evil", "_name_or_path": "attacker/evil"}}),
        );
        assert_eq!(
            remote_sources(&r),
            vec![(
                "keypoint_detector_config._name_or_path".into(),
                "attacker/evil".into()
            )]
        );
        assert_eq!(r[0].trust.as_deref(), Some("trust_remote_code"));
        // Without the config's trust, a sub-config's name is only a name.
        let benign = refs(
            "config.json",
            json!({"text_config": {"_name_or_path": "meta-llama/Llama-2-7b-hf"}}),
        );
        assert!(benign.is_empty(), "{benign:?}");
        // The trust applies to the sub-config's remote auto_map too (evidence names it).
        let r = refs(
            "config.json",
            json!({"trust_remote_code": true,
                   "text_config": {"auto_map": {"AutoModel": "a/b--m.C"}}}),
        );
        assert_eq!(r[0].trust.as_deref(), Some("trust_remote_code"));
    }

    #[test]
    fn diffusers_components_and_custom_pipelines() {
        let r = refs(
            "model_index.json",
            json!({"_class_name": ["my_pipeline", "MyPipeline"], "_diffusers_version": "0.30.0",
                   "unet": ["diffusers", "UNet2DConditionModel"],
                   "text_encoder": ["transformers", "CLIPTextModel"],
                   "safety_checker": ["stable_diffusion", "StableDiffusionSafetyChecker"],
                   "image_encoder": [null, null],
                   "prior": ["my_prior", "MyPrior"]}),
        );
        let paths: Vec<&str> = r.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, vec!["_class_name[0]", "prior[0]"]);
        assert!(
            matches!(&r[1].target, Target::Local { module_file, otherwise, .. }
            if module_file == "prior/my_prior.py"
                && matches!(otherwise.as_ref(), Otherwise::Import(i) if i.verdict == "unknown"))
        );
        let r = refs(
            "model_index.json",
            json!({"_class_name": ["attacker/evil", "Evil"]}),
        );
        assert!(matches!(&r[0].target, Target::Local { otherwise, .. }
            if matches!(otherwise.as_ref(), Otherwise::Remote { source, .. } if source == "attacker/evil")));
        // A plain pipeline class name is diffusers' own.
        assert!(
            refs(
                "model_index.json",
                json!({"_class_name": "StableDiffusionPipeline"})
            )
            .is_empty()
        );
    }

    #[test]
    fn sentence_transformers_module_types() {
        let r = refs(
            "modules.json",
            json!([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                   {"idx": 2, "name": "2", "path": "", "type": "custom_st.Transformer"},
                   {"idx": 3, "name": "3", "path": "", "type": "attacker/evil--st.Evil"},
                   {"idx": 4, "name": "4", "path": "", "type": "os.system"}]),
        );
        let paths: Vec<&str> = r.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, vec!["[2].type", "[3].type", "[4].type"]);
        assert!(
            matches!(&r[0].target, Target::Local { module_file, .. } if module_file == "custom_st.py")
        );
        assert!(matches!(&r[1].target, Target::Remote { source, .. } if source == "attacker/evil"));
        assert!(matches!(&r[2].target, Target::Local { otherwise, .. }
            if matches!(otherwise.as_ref(), Otherwise::Import(i) if i.verdict == "dangerous")));
    }

    #[test]
    fn peft_auto_mapping() {
        let lib = refs(
            "adapter_config.json",
            json!({"auto_mapping": {"base_model_class": "LlamaForCausalLM",
                                    "parent_library": "transformers.models.llama.modeling_llama"}}),
        );
        assert!(matches!(&lib[0].target, Target::Import(i) if i.verdict == "library"));
        let remote = refs(
            "adapter_config.json",
            json!({"auto_mapping": {"base_model_class": "ChatGLMForConditionalGeneration",
                                    "parent_library": "transformers_modules.THUDM.chatglm-6b.abc.modeling_chatglm"}}),
        );
        assert_eq!(
            remote_sources(&remote),
            vec![(
                "auto_mapping.parent_library".into(),
                "THUDM/chatglm-6b".into()
            )]
        );
        let bad = refs(
            "adapter_config.json",
            json!({"auto_mapping": {"base_model_class": "system", "parent_library": "os"}}),
        );
        assert!(matches!(&bad[0].target, Target::Import(i) if i.verdict == "dangerous"));
        // Fields only: base_model_name_or_path is weights, not code.
        assert!(
            refs(
                "adapter_config.json",
                json!({"base_model_name_or_path": "a/b", "peft_type": "LORA"})
            )
            .is_empty()
        );
    }

    #[test]
    fn modelscope_plugins_and_allow_remote() {
        let r = refs(
            "configuration.json",
            json!({"framework": "pytorch", "plugins": ["evil-pkg==1.0"], "allow_remote": true}),
        );
        assert!(matches!(&r[0].target, Target::Package { package } if package == "evil-pkg==1.0"));
        assert_eq!(r[0].path, "plugins[0]");
        assert_eq!(r[1].target, Target::Directory);
        assert!(
            refs(
                "configuration.json",
                json!({"framework": "pytorch", "task": "x", "allow_remote": false})
            )
            .is_empty()
        );
    }

    #[test]
    fn timm_hub_id_is_not_followed() {
        let r = refs(
            "config.json",
            json!({"architecture": "resnet50", "pretrained_cfg": {"hf_hub_id": "attacker/evil"}}),
        );
        assert!(r.is_empty(), "{r:?}");
    }

    #[test]
    fn depth_and_count_are_bounded() {
        let mut doc = json!({"auto_map": {"AutoModel": "a/b--m.C"}});
        for _ in 0..10 {
            doc = json!({ "x": doc });
        }
        let limits = Limits {
            max_depth: 5,
            ..Limits::default()
        };
        let w = walk("config.json", &doc, &ExtraLists::default(), &limits);
        assert!(w.refs.is_empty());
        assert!(!w.truncated);
        assert_eq!(w.too_deep.as_deref(), Some("x.x.x.x.x.x"));
        let many: Map<String, Value> = (0..10)
            .map(|i| (format!("A{i}"), json!("a/b--m.C")))
            .collect();
        let limits = Limits {
            max_refs: 3,
            ..Limits::default()
        };
        let w = walk(
            "config.json",
            &json!({"auto_map": many}),
            &ExtraLists::default(),
            &limits,
        );
        assert_eq!(w.refs.len(), 3);
        assert!(w.truncated);
    }
}
