//! Text for the policy commands: `modelgate policy check FILE` (the effective policy),
//! `modelgate policy init` (a commented starter file) and `modelgate explain RULE`.
//!
//! Each writer takes `&mut dyn Write` so the CLI decides where the text goes and tests can capture
//! it. Output is deterministic: rules in registry order, maps in key order.

use std::io::{self, Write};

use super::config::{builtin, default_gradings, default_levels};
use super::types::{PRESETS, Policy, SigningOptions};
use crate::model::finding::Action;
use crate::model::grading::{self, Grading};
use crate::model::limits::LIMITS;
use crate::model::rules::{RuleId, Severity};

/// Writes the effective policy: its source, every rule's level and grading grouped by area
/// (marking those that differ from the built-in default), options, limits that differ from their
/// defaults, and exceptions with their expiry.
pub fn render_effective(policy: &Policy, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "policy: {}", policy.source)?;
    writeln!(w)?;
    writeln!(w, "rules:")?;
    writeln!(
        w,
        "  (a level acts the same at every severity, except that `warn` allows info findings;"
    )?;
    writeln!(w, "  a graded rule shows its action for each severity)")?;
    for area in areas() {
        writeln!(w, "  {area}")?;
        for rule in RuleId::ALL.iter().filter(|r| r.area() == area) {
            let level = policy.level(*rule);
            let grading = policy.grading(*rule);
            let note = match (default_levels().get(rule), default_gradings().get(rule)) {
                (Some(dl), Some(dg)) if (*dl, *dg) != (level, grading) => {
                    format!("  (default: {})", describe(*dl, *dg))
                }
                _ => String::new(),
            };
            writeln!(
                w,
                "    {:<8} {:<26} {}{note}",
                rule.code(),
                rule.name(),
                describe(level, grading)
            )?;
        }
    }
    writeln!(w)?;
    writeln!(w, "[pickle]")?;
    writeln!(
        w,
        "  safe_globals: {}",
        or_none(&policy.pickle.safe_globals)
    )?;
    writeln!(
        w,
        "  dangerous_globals: {}",
        or_none(&policy.pickle.dangerous_globals)
    )?;
    writeln!(w, "[safetensors]")?;
    writeln!(
        w,
        "  max_header_bytes: {}",
        policy.safetensors.max_header_bytes
    )?;
    writeln!(w, "  check_values: {}", policy.safetensors.check_values)?;
    writeln!(w, "[card]")?;
    writeln!(
        w,
        "  required_fields: {}",
        or_none(&policy.card.required_fields)
    )?;
    match &policy.card.allowed_licenses {
        None => writeln!(w, "  allowed_licenses: (any)")?,
        Some(l) => writeln!(w, "  allowed_licenses: {}", or_none(l))?,
    }
    writeln!(w, "[source]")?;
    let forms: Vec<String> = policy
        .source_code
        .pinned_revisions
        .iter()
        .cloned()
        .collect();
    writeln!(w, "  pinned_revisions: {}", or_none(&forms))?;
    writeln!(w, "[scan]")?;
    writeln!(w, "  exclude: {}", or_none(&policy.scan.exclude))?;
    render_signing(&policy.signing, w)?;
    writeln!(w)?;
    writeln!(w, "limits (differing from the defaults):")?;
    let mut any = false;
    for spec in LIMITS {
        let value = policy.limit(spec.name);
        if value != spec.default {
            any = true;
            writeln!(w, "  {} = {value} (default {})", spec.name, spec.default)?;
        }
    }
    if !any {
        writeln!(w, "  (none)")?;
    }
    writeln!(w)?;
    writeln!(w, "exceptions:")?;
    if policy.exceptions.is_empty() {
        writeln!(w, "  (none)")?;
    }
    for e in &policy.exceptions {
        let expires = e
            .expires
            .map_or_else(|| "never expires".to_string(), |d| format!("expires {d}"));
        writeln!(
            w,
            "  line {}: {} {} on `{}`, {expires}",
            e.line,
            e.rule.code(),
            e.rule.name(),
            e.path
        )?;
        if let Some(sha) = &e.sha256 {
            writeln!(w, "    only while sha256 = {sha}")?;
        }
        writeln!(w, "    reason: {}", e.reason)?;
    }
    Ok(())
}

fn render_signing(s: &SigningOptions, w: &mut dyn Write) -> io::Result<()> {
    let paths = |p: &[std::path::PathBuf]| {
        or_none(
            &p.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>(),
        )
    };
    writeln!(w, "[signing]")?;
    writeln!(w, "  require: {}", s.require)?;
    writeln!(w, "  signature: {}", s.signature.display())?;
    writeln!(w, "  keys: {}", paths(&s.keys))?;
    if !s.key_fingerprints.is_empty() {
        writeln!(w, "  key fingerprints: {}", s.key_fingerprints.join(", "))?;
    }
    writeln!(w, "  certificate_chain: {}", paths(&s.certificate_chain))?;
    let ids: Vec<String> = s
        .identities
        .iter()
        .map(|i| {
            let how = if i.subject_regex { "regex " } else { "" };
            format!("{how}{} (issuer {})", i.subject, i.issuer)
        })
        .collect();
    writeln!(w, "  identities: {}", or_none(&ids))?;
    writeln!(
        w,
        "  trust_root: {}",
        s.trust_root
            .as_ref()
            .map_or_else(|| "(none)".to_string(), |p| p.display().to_string())
    )
}

/// A level, followed by its action for each severity when it is graded otherwise than
/// [`Grading::standard`]: `deny: info..medium warn, high..critical deny`.
fn describe(level: Action, grading: Grading) -> String {
    if grading == Grading::standard(level) {
        level.as_str().to_string()
    } else {
        format!("{}: {grading}", level.as_str())
    }
}

/// Areas in registry order.
fn areas() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in RuleId::ALL {
        if !out.contains(&r.area()) {
            out.push(r.area());
        }
    }
    out
}

fn or_none(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".to_string()
    } else {
        items.join(", ")
    }
}

/// A commented starter `modelgate.toml` for `modelgate policy init --preset NAME`: the preset's
/// text with a header and a commented-out example exception. `None` for an unknown preset.
pub fn starter_toml(preset: &str) -> Option<String> {
    let (name, text) = PRESETS.iter().find(|(n, _)| *n == preset)?;
    let mut out = format!(
        "# modelgate.toml: the policy `modelgate scan` reads from the scan root.\n\
         # Generated by `modelgate policy init --preset {name}` from the built-in `{name}` preset.\n\
         # Every key is documented in policies/README.md; `modelgate explain CODE` describes a rule.\n\
         # Check your edits with `modelgate policy check modelgate.toml`.\n\n"
    );
    // The preset's `[limits]` table lists no values; the starter spells out every limit with its
    // default and meaning, generated from the one table so the comments cannot drift.
    let limits: String = LIMITS
        .iter()
        .map(|l| format!("# {} = {}   # {}\n", l.name, l.default, l.doc))
        .collect();
    out.push_str(&text.replace(LIMITS_PLACEHOLDER, limits.trim_end()));
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(STARTER_EXCEPTION);
    Some(out)
}

/// The comment every preset's `[limits]` table holds; `policy init` expands it.
const LIMITS_PLACEHOLDER: &str =
    "# Every limit has a built-in default; see policies/README.md for the names.";

const STARTER_EXCEPTION: &str = r#"
# Exceptions turn one rule's findings into `allow` for matching files. Keep them narrow:
# pin the file's SHA-256 so the exception stops applying when the file changes, say who audited
# it and when, and let it expire. Expired exceptions are reported as POL001, exceptions that
# matched nothing as POL002.
#
# [[exceptions]]
# rule = "PKL003"                  # code or name
# path = "legacy/*.bin"            # glob relative to the scan root; `*` stays in one directory
# sha256 = "<64 hex digits>"       # optional: `sha256sum legacy/model.bin`
# reason = "audited by NAME on 2026-05-01, ticket SEC-12"
# expires = 2027-01-01             # optional; the exception applies through this day
"#;

/// One line describing a file that triggers `rule`, for `modelgate explain`.
pub fn example(rule: RuleId) -> &'static str {
    match rule {
        RuleId::SafetensorsInvalid => {
            "a `.safetensors` file whose header says tensors end at byte 4096 but the file has 5000 bytes (trailing data)"
        }
        RuleId::SafetensorsNonfinite => {
            "a float32 tensor `lm_head.weight` containing NaN, scanned with `check_values = true`"
        }
        RuleId::ShardIndexMismatch => {
            "`model.safetensors.index.json` maps `embed.weight` to shard 2, but shard 1 holds it"
        }
        RuleId::PickleUnsafeGlobal => {
            "a pickle containing `cos\\nsystem\\n` (GLOBAL os.system) then REDUCE"
        }
        RuleId::PickleUnknownGlobal => {
            "a `pytorch_model.bin` whose pickle imports `mypkg.layers.Custom` (not on the safe list)"
        }
        RuleId::PickleFormat => {
            "any `pytorch_model.bin`, `.pkl`, `.joblib` or `.npy` with object arrays, even if it only rebuilds tensors"
        }
        RuleId::PickleMalformed => "a pickle stream cut off before its STOP opcode",
        RuleId::PickleNeedsUnsafeLoad => {
            "a `pytorch_model.bin` whose `data.pkl` imports `argparse.Namespace` or `numpy.core.multiarray._reconstruct`, which torch's weights-only unpickler refuses"
        }
        RuleId::ArchiveMalformed => {
            "a zip whose central directory names a member the local headers do not contain, or a 1 KiB member that inflates to 10 GiB"
        }
        RuleId::FormatMismatch => {
            "a file named `model.safetensors` that starts with `PK\\x03\\x04` (a zip/pickle)"
        }
        RuleId::UnknownWeights => {
            "a `weights.bin` of random-looking bytes that no inspector recognises"
        }
        RuleId::KerasUnsafeLayer => {
            "a `model.keras` whose config.json has a `Lambda` layer with marshalled bytecode"
        }
        RuleId::OnnxExternalData => {
            "an `.onnx` tensor with `external_data` location `../../etc/passwd`"
        }
        RuleId::GgufTemplateSuspicious => {
            "a GGUF `tokenizer.chat_template` using `{{ cycler.__init__.__globals__.os.popen('id') }}`"
        }
        RuleId::TfUnsafeOp => {
            "a `saved_model.pb` whose graph contains a `PyFunc` or `WriteFile` op"
        }
        RuleId::FormatMalformed => {
            "a `.gguf` file whose tensor data offsets point past the end of the file"
        }
        RuleId::CustomOperator => "an ONNX model importing operator domain `com.example.ops`",
        RuleId::FormatExploitShape => {
            "a `.gguf` tensor with dimensions `[4294967296, 4294967296]` (the byte size wraps) or ggml type -1"
        }
        RuleId::ConfigInstantiatesCode => {
            "a NeMo `model_config.yaml` with `_target_: os.system` (CVE-2025-23304)"
        }
        RuleId::YamlUnsafeTag => {
            "an `hparams.yaml` holding `!!python/object/apply:os.system [\"id\"]` (CVE-2017-18342, CVE-2020-1747)"
        }
        RuleId::ConfigUnknownTarget => "a `config.yaml` with `_target_: mypkg.models.Encoder`",
        RuleId::LfsPointer => {
            "a `model.safetensors` of 130 bytes starting `version https://git-lfs.github.com/spec/v1`"
        }
        RuleId::CustomCode => {
            "a `config.json` with `auto_map` pointing at `modeling_custom.py` in the repository"
        }
        RuleId::TrustRemoteCode => {
            "`AutoModel.from_pretrained(\"org/model\", trust_remote_code=True)` in a `.py` file"
        }
        RuleId::UnpinnedRevision => {
            "`hf_hub_download(\"org/model\", \"model.safetensors\")` without `revision=`"
        }
        RuleId::UnsafeLoadCall => "`torch.load(\"model.bin\")` without `weights_only=True`",
        RuleId::ModelConfusion => {
            "`AutoModel.from_pretrained(\"checkpoints/best\")` where `checkpoints/` is a training output folder"
        }
        RuleId::CustomCodeBehaviour => {
            "a `modeling_custom.py` named by `auto_map` that runs `exec(zlib.decompress(base64.b64decode(\"eJ…\")))` at import"
        }
        RuleId::NativeCode => {
            "a `libkernels.so` beside `model.safetensors` whose constructor calls `system()`, or a `__pycache__/modeling.cpython-311.pyc` that differs from `modeling.py`"
        }
        RuleId::NoGitRepository => "scanning a downloaded snapshot directory that has no `.git`",
        RuleId::DirtyWorktree => "scanning a checkout with an uncommitted edit to `config.json`",
        RuleId::UntrackedWeights => {
            "a `model.safetensors` that was copied into the checkout but never committed"
        }
        RuleId::CacheIntegrity => {
            "a Hugging Face cache blob `blobs/<sha256>` whose content was edited after download"
        }
        RuleId::ModelCardMissing => {
            "a directory holding `model.safetensors` and `config.json` but no `README.md`"
        }
        RuleId::ModelCardFieldMissing => {
            "a `README.md` whose YAML front matter has no `license:` field"
        }
        RuleId::LicenseNotAllowed => {
            "a card declaring `license: cc-by-nc-4.0` when `allowed_licenses = [\"apache-2.0\"]`"
        }
        RuleId::UnreadableFile => {
            "a weights file with mode 000, or one that shrinks while being read"
        }
        RuleId::SymlinkEscape => {
            "`weights.bin -> /home/user/.ssh/id_rsa` or `-> ../../other-repo/model.bin`"
        }
        RuleId::SpecialFile => "a FIFO named `model.bin` created with `mkfifo`",
        RuleId::LimitExceeded => "a repository with more files than `[limits] max_files`",
        RuleId::ExceptionExpired => {
            "an exception with `expires = 2026-01-01` evaluated on 2026-01-02"
        }
        RuleId::ExceptionUnused => {
            "an exception for `legacy/*.bin` after the legacy files were deleted"
        }
        RuleId::Unsigned => {
            "a release scan under `strict` (`[signing] require = true`) of a model directory with no `model.sig`"
        }
        RuleId::SignatureInvalid => {
            "a `model.sig` signed with a key that is not in `[signing] keys`, or a keyless signature from another workflow"
        }
        RuleId::SignatureMismatch => {
            "a `model.sig` that verifies, but `model.safetensors` was changed after signing (or a `loader.py` added)"
        }
        RuleId::HubDigestMismatch => {
            "`hf://org/model`: the CDN serves `model.safetensors` bytes whose SHA-256 is not the tree's `lfs.oid`"
        }
        RuleId::HubFlagged => {
            "`hf://org/model`: the Hub's `securityFileStatus` for `pytorch_model.bin` is `unsafe`"
        }
        RuleId::HubUnread => {
            "`hf://org/model --remote headers`: a 2 GB legacy `pytorch_model.bin` pickle, which cannot be judged from byte ranges"
        }
        RuleId::HubHeaderMode => {
            "`hf://org/model --remote headers`: 310 KB of 14 GB read; digests are the Hub's `lfs.oid`"
        }
    }
}

/// Writes the explanation of `rule`: summary, help, its level in each preset and an example of a
/// file that triggers it.
pub fn explain(rule: RuleId, w: &mut dyn Write) -> io::Result<()> {
    writeln!(
        w,
        "{} {} ({}, severity {})",
        rule.code(),
        rule.name(),
        rule.area(),
        rule.default_severity().as_str()
    )?;
    writeln!(w)?;
    writeln!(w, "fires when: {}", rule.summary())?;
    writeln!(w)?;
    writeln!(w, "{}", rule.help())?;
    writeln!(w)?;
    writeln!(w, "example: {}", example(rule))?;
    writeln!(w)?;
    writeln!(w, "level in each preset, and its action for each severity:")?;
    let header: String = Severity::ALL
        .iter()
        .map(|s| format!(" {:<8}", s.as_str()))
        .collect();
    writeln!(w, "  {:<8} {:<6}{}", "", "level", header.trim_end())?;
    for (name, _) in PRESETS {
        let Some(p) = builtin(name) else {
            writeln!(w, "  {name:<8} ?")?;
            continue;
        };
        writeln!(
            w,
            "  {name:<8} {:<6}{}",
            p.level(rule).as_str(),
            severity_columns(p.grading(rule))
        )?;
    }
    writeln!(w)?;
    writeln!(
        w,
        "what a level means for this rule (`{} = \"deny\"`):",
        rule.code()
    )?;
    for level in [Action::Deny, Action::Warn, Action::Allow] {
        let g = grading::declared(rule, level);
        writeln!(w, "  {:<6} {g}", level.as_str())?;
    }
    writeln!(w)?;
    writeln!(w, "set it in modelgate.toml:")?;
    writeln!(w, "  [rules]")?;
    writeln!(
        w,
        "  {} = \"deny\"   # or `{} = ...`; levels: deny, warn, allow",
        rule.code(),
        rule.name()
    )?;
    writeln!(
        w,
        "  # or grade it by severity (info, low, medium, high, critical):"
    )?;
    writeln!(
        w,
        "  # {} = {{ deny_from = \"medium\", allow_below = \"low\" }}",
        rule.code()
    )?;
    Ok(())
}

/// The action for each severity, in columns under the `explain` header.
fn severity_columns(g: Grading) -> String {
    let cols: String = g
        .actions()
        .iter()
        .map(|(_, a)| format!(" {:<8}", a.as_str()))
        .collect();
    cols.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{PolicySource, parse};

    fn text(f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> String {
        let mut buf = Vec::new();
        assert!(f(&mut buf).is_ok());
        String::from_utf8_lossy(&buf).into_owned()
    }

    #[test]
    fn starter_files_parse_to_their_preset() {
        for (name, _) in PRESETS {
            let starter = starter_toml(name);
            assert!(starter.is_some());
            let starter = starter.unwrap_or_default();
            assert!(starter.contains("# [[exceptions]]"));
            for l in LIMITS {
                assert!(starter.contains(&format!("# {} = {}", l.name, l.default)));
            }
            let parsed = parse(&starter, PolicySource::File("modelgate.toml".into()));
            assert!(
                parsed.is_ok(),
                "{name}: {:?}",
                parsed.err().map(|e| e.to_string())
            );
            let (Ok(parsed), Some(preset)) = (parsed, builtin(name)) else {
                continue;
            };
            assert_eq!(parsed.levels, preset.levels);
            assert_eq!(parsed.safetensors, preset.safetensors);
            assert_eq!(parsed.card, preset.card);
        }
        assert!(starter_toml("nope").is_none());
    }

    #[test]
    fn effective_policy_shows_levels_options_limits_and_exceptions() {
        let p = parse(
            "version = 1\n[rules]\nPKL003 = \"deny\"\n[limits]\narchive_depth = 2\n\
             [[exceptions]]\nrule = \"PKL002\"\npath = \"a/*.bin\"\nreason = \"audited\"\n\
             expires = 2027-01-01\n",
            PolicySource::File("modelgate.toml".into()),
        );
        let Ok(p) = p else {
            panic!("parses");
        };
        insta::assert_snapshot!(text(|w| render_effective(&p, w)));
    }

    #[test]
    fn explain_shows_help_presets_and_example() {
        insta::assert_snapshot!(text(|w| explain(RuleId::PickleUnsafeGlobal, w)));
    }

    #[test]
    fn explain_shows_the_grading_of_a_graded_rule() {
        insta::assert_snapshot!(text(|w| explain(RuleId::CustomCodeBehaviour, w)));
    }

    #[test]
    fn effective_policy_shows_a_grading_and_the_default_it_replaces() {
        let p = parse(
            "version = 1\n[rules]\nSRC006 = { deny_from = \"medium\" }\n",
            PolicySource::File("modelgate.toml".into()),
        );
        let Ok(p) = p else {
            panic!("parses");
        };
        let out = text(|w| render_effective(&p, w));
        assert!(
            out.contains(
                "    SRC006   custom-code-behaviour      deny: info..low warn, medium..critical \
                 deny  (default: deny: info..medium warn, high..critical deny)\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn starter_files_grade_as_their_preset() {
        for (name, _) in PRESETS {
            let starter = starter_toml(name).unwrap_or_default();
            let parsed = parse(&starter, PolicySource::File("modelgate.toml".into()));
            let (Ok(parsed), Some(preset)) = (parsed, builtin(name)) else {
                panic!("{name} parses");
            };
            assert_eq!(parsed.gradings, preset.gradings, "{name}");
        }
    }

    #[test]
    fn every_rule_can_be_explained() {
        for rule in RuleId::ALL {
            let out = text(|w| explain(*rule, w));
            assert!(out.contains(example(*rule)));
            assert!(!out.contains(" ?\n"), "{rule}: every preset loads");
        }
    }
}
