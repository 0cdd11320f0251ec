//! What every inspector shares, below them all: the scan's settings ([`ScanConfig`]), the
//! result of one file ([`FileScan`]), the per-file recording context ([`Ctx`]), how a file is
//! opened ([`open_regular`], defined in [`super::read`], re-exported here) and how a
//! limit is named in a finding. Inspectors import these from here; the dispatcher in
//! `inspect/scan.rs` (re-exported by `inspect/mod.rs`), above the inspectors, is the only
//! module that calls them all (issue 32: arrows inside `inspect/` run one way).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::{pickle, read};
use crate::classify::{Format, Kind};
use crate::model::facts::{Fact, FactMap};
use crate::model::finding::{Detection, Location};
use crate::model::rules::RuleId;

pub use super::read::open_regular;
pub use crate::model::limits::Limits;

/// Everything an inspector may consult, fixed before the scan starts.
#[derive(Debug, Clone, Default)]
pub struct ScanConfig {
    /// Resource limits.
    pub limits: Limits,
    /// Scan float tensors for NaN/Inf.
    pub check_values: bool,
    /// Also compute SHA-512.
    pub sha512: bool,
    /// Read block size (0: default).
    pub block_size: usize,
    /// Pickle globals the policy adds to the safe and dangerous lists, parsed once per scan.
    pub pickle_extra: crate::knowledge::ExtraLists,
    /// Revision forms that count as pinned besides a full commit (`tag`, `short-sha`).
    pub pinned_revisions: Vec<String>,
    /// Paths (as scanned, `rel`) of the Python files that are model code: what a model loader
    /// imports (`repository::model_code_paths`, from the crawl). Only these get the behaviour
    /// analysis (SRC006); library code elsewhere in a tree is not model code.
    pub model_code: std::sync::Arc<std::collections::BTreeSet<String>>,
}

/// What the scan learned about one file.
#[derive(Debug, Clone, Default)]
pub struct FileScan {
    /// Bytes read.
    pub size: u64,
    /// SHA-256, lowercase hex (`None` when the file could not be read).
    pub sha256: Option<String>,
    /// SHA-512 when requested.
    pub sha512: Option<String>,
    /// Detected format.
    pub format: Option<Format>,
    /// Role.
    pub kind: Option<Kind>,
    /// Format facts (keys documented in the README).
    pub facts: Map<String, Value>,
    /// Observations for the policy. Paths are the file's relative path.
    pub detections: Vec<Detection>,
    /// Tensor names and byte sizes of a valid safetensors file (for shard index checks).
    pub tensors: Option<BTreeMap<String, u64>>,
    /// The bytes of small files that repository-level checks read again (`.gitattributes`, shard
    /// indexes), kept from the one read (bounded by `json_bytes`).
    pub text: Option<Vec<u8>>,
    /// Model card facts (typed), for the repository-level card checks.
    pub card: Option<crate::provenance::card::CardFacts>,
}

/// Collects facts and detections while a file (and the archives inside it) is inspected.
pub struct Ctx<'a> {
    /// Configuration.
    pub cfg: &'a ScanConfig,
    /// The file's relative path.
    pub rel: &'a str,
    /// Where the few formats that need random access to small structures read the file again.
    pub positioned: read::Positioned<'a>,
    /// Facts so far.
    pub facts: Map<String, Value>,
    /// Detections so far.
    pub detections: Vec<Detection>,
    /// See [`FileScan::tensors`].
    pub tensors: Option<BTreeMap<String, u64>>,
    /// See [`FileScan::text`].
    pub text: Option<Vec<u8>>,
    /// See [`FileScan::card`].
    pub card: Option<crate::provenance::card::CardFacts>,
    /// PyTorch storages the pickles declared, with the archive member they came from; the zip
    /// inspector checks them against the `data/<key>` members once the walk is done.
    pub torch_storages: Vec<(Option<String>, pickle::Storage)>,
    /// What `torch.load(weights_only=True)` would refuse in each pickle stream read so far,
    /// with the archive member it came from (issue 32); judged once the file's layout is known.
    pub weights_only: Vec<(Option<String>, pickle::torch::WeightsOnly)>,
}

impl<'a> Ctx<'a> {
    /// A context for the file `rel` (at `path` on disk; an empty path: nowhere to read it again)
    /// with nothing recorded yet.
    pub fn new(cfg: &'a ScanConfig, rel: &'a str, path: &'a Path) -> Self {
        Self::at(cfg, rel, read::Positioned::file(path))
    }

    /// A context for the file `rel`, read again at positions from `positioned`.
    pub fn at(cfg: &'a ScanConfig, rel: &'a str, positioned: read::Positioned<'a>) -> Self {
        Ctx {
            cfg,
            rel,
            positioned,
            facts: Map::new(),
            detections: Vec::new(),
            tensors: None,
            text: None,
            card: None,
            torch_storages: Vec::new(),
            weights_only: Vec::new(),
        }
    }

    /// Records a detection about this file.
    pub fn detect(
        &mut self,
        rule: RuleId,
        key: impl Into<String>,
        message: impl Into<String>,
        location: Location,
    ) -> &mut Detection {
        self.detections
            .push(Detection::new(rule, self.rel, key, message).at(location));
        let last = self.detections.len() - 1;
        &mut self.detections[last]
    }

    /// Records a fact.
    pub fn fact(&mut self, key: Fact, value: impl Into<Value>) {
        self.facts.set_fact(key, value);
    }
}

/// SCAN001 for a file that could not be opened or read.
pub(crate) fn unreadable(rel: &str, e: &dyn std::fmt::Display) -> Detection {
    Detection::new(
        RuleId::UnreadableFile,
        rel,
        "read",
        format!("cannot read file: {e}"),
    )
    .with("error", e.to_string())
}

/// How to raise the limit called `name`, for a SCAN004 message.
pub fn raise_hint(name: &str) -> String {
    format!(
        "reached the `{name}` limit; raise it with `[limits] {name} = N` in the policy if such files are expected"
    )
}

/// Names the policy limit `name` and its value in a detection's evidence (`limit`, `value`).
pub fn name_limit(d: &mut Detection, cfg: &ScanConfig, name: &str) {
    d.evidence.insert("limit".into(), json!(name));
    if let Some(v) = cfg.limits.get(name) {
        d.evidence.insert("value".into(), json!(v));
    }
}

/// The pickle reader's limits from the scan's (also used by `inspect --disassemble`).
pub fn pickle_limits(cfg: &ScanConfig) -> pickle::Limits {
    pickle::Limits::from(&cfg.limits)
}
