//! The rule registry: every finding modelgate can emit has a stable code (`PKL001`), a kebab-case
//! name (`pickle-unsafe-global`), a default severity, a one-line summary and a help text.
//!
//! Codes are a public contract (SARIF `ruleId`, policy keys, exceptions): they are never renamed or
//! reused. A retired rule keeps its arm here, marked retired, so its code stays reserved.

use serde::Serialize;

/// How bad a finding is, independent of what the policy decides to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational.
    Info,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Critical: code execution on load.
    Critical,
}

impl Severity {
    /// Every severity, from the mildest up.
    pub const ALL: [Severity; 5] = [
        Severity::Info,
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    /// Parses a lowercase name (`info` .. `critical`).
    pub fn parse(s: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Lowercase name as used in JSON and text output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

macro_rules! rules {
    ($( $variant:ident => $code:literal, $name:literal, $sev:ident, $area:literal, $summary:literal, $help:literal; )*) => {
        /// A rule modelgate can report. See `modelgate rules` for the full list.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum RuleId {
            $(
                #[doc = $summary]
                $variant,
            )*
        }

        impl RuleId {
            /// Every rule, in registry order.
            pub const ALL: &'static [RuleId] = &[$(RuleId::$variant),*];

            /// The stable code, e.g. `PKL001`.
            pub fn code(self) -> &'static str {
                match self { $(RuleId::$variant => $code),* }
            }

            /// The stable kebab-case name, e.g. `pickle-unsafe-global`.
            pub fn name(self) -> &'static str {
                match self { $(RuleId::$variant => $name),* }
            }

            /// How bad a finding of this rule is when nothing more specific is known.
            pub fn default_severity(self) -> Severity {
                match self { $(RuleId::$variant => Severity::$sev),* }
            }

            /// The area the rule belongs to (used for grouping and SARIF tags).
            pub fn area(self) -> &'static str {
                match self { $(RuleId::$variant => $area),* }
            }

            /// One line: when the rule fires.
            pub fn summary(self) -> &'static str {
                match self { $(RuleId::$variant => $summary),* }
            }

            /// Why it matters and what to do about it.
            pub fn help(self) -> &'static str {
                match self { $(RuleId::$variant => $help),* }
            }
        }
    };
}

rules! {
    SafetensorsInvalid => "ST001", "safetensors-invalid", High, "safetensors",
        "a safetensors file breaks a format rule (evidence names which)",
        "The file does not follow the safetensors format exactly. Loaders differ in how they treat such files, and bytes outside the tensor layout (trailing data, holes, overlaps) are how polyglot files hide a second payload. Re-export the weights with the official safetensors library.";
    SafetensorsNonfinite => "ST002", "safetensors-nonfinite", Medium, "safetensors",
        "float tensors hold NaN/Inf (when value checks are on)",
        "Some float tensors contain NaN or infinite values. The format allows them, but in trained weights they usually mean a corrupted or sabotaged checkpoint. Check the named tensors.";
    ShardIndexMismatch => "ST003", "shard-index-mismatch", High, "safetensors",
        "a sharded checkpoint's index and its shards disagree",
        "The `*.safetensors.index.json` file and the shards it names disagree: a missing shard, a tensor in the wrong shard, or a shard the index does not reference. Loaders trust the index, so a disagreement can hide or substitute tensors. Regenerate the index from the shards.";
    PickleUnsafeGlobal => "PKL001", "pickle-unsafe-global", Critical, "pickle",
        "a pickle imports a callable known to be dangerous",
        "Loading this file with pickle (torch.load without weights_only=True, joblib.load, pickle.load, numpy.load with allow_pickle=True) imports and can call the named callable, which can run arbitrary code. Do not load it; convert trusted weights to safetensors.";
    PickleUnknownGlobal => "PKL002", "pickle-unknown-global", Medium, "pickle",
        "a pickle imports a callable not on the safe list",
        "The pickle imports a callable that is neither a known tensor/array rebuilder nor known to be dangerous. Review it; if it is harmless, add it to `[pickle] safe_globals` in the policy. The types a skops file's `schema.json` names are judged the same way (skops.io.load imports and instantiates them once trusted), with the same list (issue 40).";
    PickleFormat => "PKL003", "pickle-format", Low, "pickle",
        "a file holds pickle data at all (any name, any container)",
        "Pickle is an executable format: loading it runs whatever the file says. Prefer safetensors (or another data-only format) for anything you ship or download.";
    PickleMalformed => "PKL004", "pickle-malformed", High, "pickle",
        "a pickle stream cannot be fully parsed within limits",
        "The pickle stream is truncated, malformed or exceeds a limit, so modelgate cannot say everything it would import. Python's unpickler may still execute the part before the damage. Treat it as untrusted.";
    PickleNeedsUnsafeLoad => "PKL005", "pickle-needs-unsafe-load", Medium, "pickle",
        "a PyTorch checkpoint that `torch.load(weights_only=True)` refuses",
        "torch.load defaults to weights_only=True since torch 2.6: its unpickler resolves only an allowlist of tensor rebuilders, storages, dtypes and containers, and a few opcodes. This checkpoint imports a global (or uses an opcode) outside that list, so loading it needs weights_only=False, which runs whatever the pickle imports. Re-save the weights as a plain state dict (or safetensors); if the named globals are trusted, list them in `[pickle] safe_globals` (torch.serialization.add_safe_globals) instead.";
    ArchiveMalformed => "ARC001", "archive-malformed", High, "archive",
        "a zip/compressed container is corrupt, inconsistent or a bomb",
        "The archive is corrupt, its directory and local headers disagree, a member's CRC is wrong, or it decompresses beyond the limits. Different readers see different contents in such archives, which is how scanners are bypassed.";
    FormatMismatch => "FMT001", "format-mismatch", Medium, "format",
        "content does not match the file's extension",
        "The file's content is not what its name says (for example a pickle named `.safetensors`). Loaders that sniff content will load it as what it really is. Rename or replace the file. Evidence `polyglot` marks a valid weight file whose bytes are also a second loadable container (an HDF5 superblock at a user-block boundary, a zip whose end-of-central-directory closes the file, a pickle after the declared data): renamed, the same bytes load as the other format.";
    UnknownWeights => "FMT002", "unknown-weights", Low, "format",
        "weight-like name, unrecognised content",
        "The file has a weight-like name but modelgate does not recognise its content, so it could not be checked.";
    KerasUnsafeLayer => "FMT003", "keras-unsafe-layer", High, "format",
        "Keras/HDF5 model with Lambda or custom-code layers",
        "The Keras model contains a Lambda layer (serialized Python bytecode) or custom objects from outside Keras. Loading it with safe_mode=False, or with the custom objects registered, runs code. Also the safe_mode bypasses that need no code outside Keras: lookup layers whose vocabulary is a file outside the archive (CVE-2025-12058), TFSMLayer loading an external SavedModel (CVE-2026-1462), keras.utils.get_file named as a class or function (CVE-2025-8747), enable_unsafe_deserialization in the config (CVE-2025-9906), and TorchModuleWrapper's pickled module (CVE-2025-49655, decoded and analysed as a pickle).";
    OnnxExternalData => "FMT004", "onnx-external-data", High, "format",
        "ONNX external data path absolute or outside the repository",
        "The ONNX model references external tensor data by an absolute path, a path that escapes the repository, or a file that does not exist. A loader would read whatever file that path names.";
    GgufTemplateSuspicious => "FMT005", "gguf-template-suspicious", Critical, "format",
        "chat template (GGUF, tokenizer/processor config, `.jinja`) with code-execution constructs",
        "The chat template (GGUF `tokenizer.chat_template`, `chat_template` in `tokenizer_config.json`, `chat_template.json` or a processor config, a `.jinja` file) uses Jinja constructs that reach Python internals (dunder attributes, globals, imports). Rendering it with an unsandboxed Jinja environment runs code (CVE-2024-34359).";
    TfUnsafeOp => "FMT006", "tf-unsafe-op", High, "format",
        "TF SavedModel/graph with PyFunc or file-system ops",
        "The TensorFlow graph contains PyFunc-style ops (which call Python) or file-system ops, which can read or write files when the graph runs. PaddlePaddle programs (`.pdmodel`) are judged the same way: `py_func` calls a Python function registered in the loading process, and the `save`/`load` operators read or write the file their `file_path` attribute names.";
    FormatMalformed => "FMT007", "format-malformed", Medium, "format",
        "a model file of a recognised format (GGUF, ONNX, HDF5, TFLite, TF, NumPy) is structurally invalid",
        "The file starts like a known model format but breaks its structure (truncated, out-of-bounds offsets, inconsistent sizes). Different loaders handle broken files differently, which is how parser differentials hide payloads. Re-export the model.";
    CustomOperator => "FMT008", "custom-operator", Medium, "format",
        "an ONNX custom-op domain, TFLite custom operator or OpenVINO extension layer needs code outside the model format",
        "The model uses operators outside the standard operator sets. Running it needs a custom-op library (native code) that is not part of the model file; review where that library comes from.";
    FormatExploitShape => "FMT009", "format-exploit-shape", High, "format",
        "a model header or tensor view declares sizes, types or offsets that overflow or point past the data",
        "The header of the model file describes tensor shapes whose byte size overflows, unknown or negative tensor types, an alignment that is zero or not a power of two, tensor data past the end of the file, or counts that overflow allocation sizes. In PyTorch pickles: a tensor view (`_rebuild_tensor*` offset, size, stride) that reaches past its storage, a storage whose `data/` member is smaller than its declared element count, or container opcodes (APPEND, SETITEM, BUILD) aimed at a global instead of a container. These are the shapes of the published out-of-bounds read/write exploits against llama.cpp/GGML-style and PyTorch loaders; a benign writer never produces them. Do not load the file.";
    ConfigInstantiatesCode => "CFG001", "config-instantiates-code", Critical, "config",
        "a config's `_target_` names a dangerous callable that Hydra-style loaders import and call, or a config field makes a loader fetch code from outside the repository",
        "Hydra `instantiate` (used by NeMo, Lightning CLI, uni2TS, FlexTok on configs shipped with a model) imports the dotted name in `_target_` and calls it with the sibling keys as arguments. The named callable can run commands or code (NeMo CVE-2025-23304). Do not load the model. Loader fields are the other half: an `auto_map` entry of another repository (`org/repo--module.Class`, at any depth), an attention implementation naming a Hub kernel repository (transformers 4.56-5.2 downloads and imports it without `trust_remote_code`, CVE-2026-4372), a config's own `trust_remote_code` over a sub-config of another repository (CVE-2026-5241), a diffusers custom pipeline of another repository or the community mirror, a sentence-transformers module type or PEFT `auto_mapping` of another repository, ModelScope `plugins`: that code is not in the repository, so it was not scanned. Scan that repository at a pinned revision, then accept the config by its digest (`modelgate policy baseline`).";
    YamlUnsafeTag => "CFG002", "yaml-unsafe-tag", Critical, "config",
        "a YAML file uses `!!python/object`, `/object/apply`, `/object/new` or `/module` tags, or `/name` of a dangerous callable",
        "PyYAML's unsafe_load (and full_load/load before 5.4) imports and calls Python objects named by these tags (CVE-2017-18342, CVE-2020-1747, CVE-2020-14343); Lightning `hparams.yaml` is the classic carrier. Replace the tags with plain values.";
    ConfigUnknownTarget => "CFG003", "config-unknown-target", Medium, "config",
        "a config's `_target_` (or a YAML `!!python/name` tag) names a callable that is not on the safe list",
        "Hydra-style loaders import and call the dotted name in `_target_`. It is not known to be dangerous, but not on the safe list either: review it, and if it is harmless add it to `[pickle] safe_globals` (the same list classifies pickle globals).";
    LfsPointer => "LFS001", "lfs-pointer", Medium, "provenance",
        "only a Git LFS pointer is present; content not scanned",
        "The file is a Git LFS pointer, not the content it stands for. Run `git lfs pull` before scanning so the real file is checked; the pointer's oid is recorded as the expected digest.";
    CustomCode => "SRC001", "custom-code", Medium, "source",
        "the repository ships code that model loaders run",
        "Loaders run this code when `trust_remote_code=True` (auto_map entries) or when the repository is imported. Review it as you would any dependency.";
    TrustRemoteCode => "SRC002", "trust-remote-code", High, "source",
        "code passes `trust_remote_code=True`",
        "`trust_remote_code=True` runs Python code downloaded from the model repository. Pin the revision and review the code, or avoid the flag.";
    UnpinnedRevision => "SRC003", "unpinned-revision", Medium, "source",
        "a hub download without `revision=` pinned to a commit",
        "The download follows a branch or tag, so the files can change after review. Pass `revision=` with the full 40-hex commit SHA.";
    UnsafeLoadCall => "SRC004", "unsafe-load-call", High, "source",
        "`torch.load` without `weights_only=True`, `pickle.load`, `np.load(allow_pickle=True)`, …",
        "The code deserialises with pickle, which runs code from the file it loads. Use safetensors, or `torch.load(..., weights_only=True)`.";
    ModelConfusion => "SRC005", "model-confusion", High, "source",
        "a hub download names what looks like a local folder (`checkpoints/…`, or a directory of this repository)",
        "`from_pretrained(\"checkpoints/best\")` loads the local folder when it exists and silently downloads the hub repository `checkpoints/best` when it does not (a missing output folder, a fresh clone): whoever registers that namespace on the hub serves the model (published 2025). Write local paths as `./checkpoints/best` or absolute paths; pin hub downloads to a commit.";
    CustomCodeBehaviour => "SRC006", "custom-code-behaviour", Critical, "source",
        "shipped code runs processes, evaluates dynamic or decoded code, reaches non-Hub hosts, reads credentials, persists or tampers, installs packages, or loads native code",
        "A model loader that trusts the repository's code (`trust_remote_code=True`, `torch.hub.load`, TorchServe, MLflow) runs this file, and the file does something model code never needs to: the evidence lists every site with its resolved call, line and when it runs (at import or in which function), and the decoded payload of hidden blobs. Do not load the model; if the site is legitimate (a kernel it compiles, an image it fetches), review it and add an exception for this file's digest.";
    NativeCode => "SRC007", "native-code", Medium, "source",
        "a model directory ships native code (ELF, Mach-O, PE executables and libraries, JARs) or Python bytecode that does not match its source",
        "A library in a model directory runs its initialisers the moment modeling code loads it (`ctypes.CDLL`, `torch.ops.load_library`), and a `.pyc` is imported even with no `.py` beside it; neither can be reviewed as source. The evidence gives the format, architecture, initialisers and the imports that start processes or load code. Critical (denied by the default policy) when a library's initialiser can run a process (it has initialisers and imports `system`, `exec*`, `fork`, `posix_spawn`, `CreateProcess`, `WinExec`, `ShellExecute`, ...) or when the repository's code loads a shipped library that imports one. Ship sources (or build from them), or add an exception for the file's digest after review.";
    NoGitRepository => "PRV001", "no-git-repository", Low, "provenance",
        "the scan root is not in a git repository",
        "Without a git repository modelgate cannot record which revision was scanned. Scan a checkout so the report and SBOM name the commit.";
    DirtyWorktree => "PRV002", "dirty-worktree", Medium, "provenance",
        "uncommitted or untracked changes under the scan root",
        "The scanned files differ from the recorded commit, so the commit does not identify what was scanned. Commit or clean the changes before a release scan.";
    UntrackedWeights => "PRV003", "untracked-weights", Medium, "provenance",
        "weight files that are not committed",
        "These weight files are not tracked by git, so no commit identifies them. Commit them (with Git LFS) or remove them.";
    CacheIntegrity => "PRV004", "cache-integrity", High, "provenance",
        "a Hugging Face cache file does not match its blob digest or the cache layout is broken",
        "In a Hugging Face cache each blob is named by its digest and snapshots link into blobs/. A blob whose content does not match its name, or a link that leaves blobs/, means the cache was modified after download. Delete the cache entry and download again.";
    ModelCardMissing => "CARD001", "model-card-missing", Low, "card",
        "a model directory has no model card",
        "A model directory (one holding weights or a config.json) has no README.md / MODEL_CARD.md. Model cards state the license, intended use and training data.";
    ModelCardFieldMissing => "CARD002", "model-card-field-missing", Low, "card",
        "the card lacks a field the policy requires",
        "The model card's YAML front matter lacks a field the policy requires (by default `license`).";
    LicenseNotAllowed => "CARD003", "license-not-allowed", Medium, "card",
        "the card's license is not on the policy's list",
        "The model card declares a license that the policy's `[card] allowed_licenses` list does not contain.";
    UnreadableFile => "SCAN001", "unreadable-file", High, "scan",
        "a file could not be read",
        "modelgate could not read the file (permissions, I/O error, or it changed while being scanned), so it was not checked.";
    SymlinkEscape => "SCAN002", "symlink-escape", High, "scan",
        "a symlink points outside the scan root (not followed)",
        "The symlink resolves outside the scanned tree (or is absolute or dangling). It was not followed; a loader that follows it would read a file nobody reviewed.";
    SpecialFile => "SCAN003", "special-file", Medium, "scan",
        "a FIFO, socket or device (never opened)",
        "A FIFO, socket or device file sits in the tree. modelgate never opens such files; a loader reading it could hang or read device data.";
    LimitExceeded => "SCAN004", "limit-exceeded", High, "scan",
        "a file or tree exceeded a configured limit",
        "A configured limit was reached, so part of the input was not checked. Raise the limit in the policy's `[limits]` table if the input is legitimate.";
    ExceptionExpired => "POL001", "exception-expired", Medium, "policy",
        "a policy exception is past its expiry date",
        "The exception's `expires` date has passed; it no longer applies. Review the file again and renew or remove the exception.";
    ExceptionUnused => "POL002", "exception-unused", Low, "policy",
        "a policy exception matched nothing",
        "The exception matched no finding. Remove it so stale exceptions cannot silently cover a future file.";
    Unsigned => "SIG001", "unsigned", Medium, "signing",
        "the policy requires a model signature and the scan root has none",
        "`[signing] require = true` (the `strict` preset) asks for an OpenSSF Model Signing signature (`model.sig` at the scan root, or `[signing] signature` / `scan --signature`), and there is none. Without one nobody can tell whether the files are the ones the publisher released. Sign with `modelgate sign PATH --key KEY.pem` or the reference `model_signing sign`, and ship `model.sig` with the model.";
    SignatureInvalid => "SIG002", "signature-invalid", High, "signing",
        "the model signature does not verify: unreadable bundle, bad signature, or a signer the policy does not trust",
        "The signature file exists but cannot vouch for the model: the bundle is unreadable, the signature does not verify, the certificate is expired or does not chain to a trusted root, the keyless identity or issuer is not the one `[signing]` names, or the policy trusts nobody yet (add `keys`, `certificate_chain` or `identities` to `[signing]`). Treat the model as unsigned and find out who produced the signature.";
    SignatureMismatch => "SIG003", "signature-mismatch", High, "signing",
        "a file differs from the signed manifest, is missing, or is not in it",
        "The signature verifies, but the tree is not the one that was signed: the named file was changed, deleted, or added after signing (files the signature ignores, such as `.git`, do not count). Someone modified the model after release, or the release was signed before its last change. Do not load it; fetch the release again or re-sign after review.";
    HubDigestMismatch => "HUB001", "hub-digest-mismatch", High, "hub",
        "remote bytes differ from the Hub's recorded digest or size",
        "In a remote scan (`hf://`), the bytes served for a file did not hash to the SHA-256 the Hub records for it (`lfs.oid`), to its git blob id (`oid`), or were not the declared size. The CDN or mirror served different bytes than the repository holds at that commit; what was scanned is not what a loader pinned to the commit would verify. Do not trust either copy until the difference is explained.";
    HubFlagged => "HUB002", "hub-flagged", High, "hub",
        "the Hub's own scan marks a file unsafe",
        "The Hugging Face Hub's security scanners (malware, pickle imports) mark this file unsafe. modelgate reports the Hub's verdict next to its own so both opinions are visible; review the file before loading it.";
    HubUnread => "HUB003", "header-mode-unread", Medium, "hub",
        "a header-mode remote scan did not read content that can hold code or a format violation",
        "`scan hf://… --remote headers` reads only the parts of each file that can hold code or metadata (a safetensors header, a zip's central directory and pickle members, GGUF metadata). This file's format, or one of its members, cannot be judged from such ranges, so it was not checked: the gate cannot vouch for it. Scan without `--remote headers` (a full, streamed read) before loading it. `facts.coverage` says what was not read and why.";
    HubHeaderMode => "HUB004", "header-mode-scan", Info, "hub",
        "the remote scan read headers only; digests are the Hub's, not computed",
        "A header-mode remote scan (`--remote headers`) reads a few byte ranges per file. Tensor data was not read, so value checks (NaN/Inf) and checksums of unread data were not done, and the SHA-256 digests in the report and SBOM are the Hub's record (`digest_source: hub`), not computed from the bytes. The finding states the coverage; the policy decides whether such a scan may pass the gate (the default allows it, `strict` denies it).";
}

impl RuleId {
    /// Looks a rule up by code (`PKL001`) or name (`pickle-unsafe-global`), case-insensitively.
    pub fn lookup(key: &str) -> Option<RuleId> {
        RuleId::ALL
            .iter()
            .copied()
            .find(|r| r.code().eq_ignore_ascii_case(key) || r.name().eq_ignore_ascii_case(key))
    }

    /// The closest code or name to `key`, for "did you mean" hints.
    pub fn suggest(key: &str) -> Option<&'static str> {
        let key = key.to_ascii_lowercase();
        RuleId::ALL
            .iter()
            .flat_map(|r| [r.code(), r.name()])
            .map(|c| (strsim::jaro_winkler(&key, &c.to_ascii_lowercase()), c))
            .filter(|(score, _)| *score > 0.8)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, c)| c)
    }
}

impl Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// A serialisable description of one rule, for `modelgate rules --format json`.
#[derive(Debug, Serialize)]
pub struct RuleInfo {
    /// Stable code.
    pub code: &'static str,
    /// Stable kebab-case name.
    pub name: &'static str,
    /// Area of the rule.
    pub area: &'static str,
    /// Default severity.
    pub severity: Severity,
    /// When the rule fires.
    pub summary: &'static str,
    /// Why it matters and what to do.
    pub help: &'static str,
}

impl From<RuleId> for RuleInfo {
    fn from(r: RuleId) -> Self {
        RuleInfo {
            code: r.code(),
            name: r.name(),
            area: r.area(),
            severity: r.default_severity(),
            summary: r.summary(),
            help: r.help(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn codes_and_names_are_unique() {
        let codes: BTreeSet<_> = RuleId::ALL.iter().map(|r| r.code()).collect();
        let names: BTreeSet<_> = RuleId::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(codes.len(), RuleId::ALL.len());
        assert_eq!(names.len(), RuleId::ALL.len());
    }

    #[test]
    fn lookup_by_code_and_name_agree() {
        for r in RuleId::ALL {
            assert_eq!(RuleId::lookup(r.code()), Some(*r));
            assert_eq!(RuleId::lookup(r.name()), Some(*r));
        }
        assert_eq!(RuleId::lookup("nope"), None);
    }

    #[test]
    fn readme_rule_table_matches_the_registry() {
        let readme = include_str!("../../README.md");
        let start = readme
            .find("<!-- rules:begin -->")
            .expect("rules:begin marker");
        let end = readme.find("<!-- rules:end -->").expect("rules:end marker");
        let rows: Vec<&str> = readme[start..end]
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| code"))
            .collect();
        let expected: Vec<String> = RuleId::ALL
            .iter()
            .map(|r| {
                format!(
                    "| {} | {} | {} | {} |",
                    r.code(),
                    r.name(),
                    r.default_severity().as_str(),
                    r.summary().replace('|', "\\|")
                )
            })
            .collect();
        assert_eq!(rows, expected);
    }

    #[test]
    fn suggests_close_names() {
        assert_eq!(
            RuleId::suggest("pickle-unsafe-globals"),
            Some("pickle-unsafe-global")
        );
        assert_eq!(RuleId::suggest("PKL01"), Some("PKL001"));
    }
}
