//! The other model formats: ONNX, GGUF, HDF5/Keras, TFLite and TensorFlow graphs. Each parser
//! in this directory returns typed facts and [`Problem`]s; this module records the facts under
//! the format's key and maps each problem's kind to a rule.

use crate::model::facts::Fact;
use std::io::{self, BufRead};

use serde::Serialize;
use serde_json::{Value, json};

use super::context::Ctx;
use super::problem::{Problem, ProblemKind};
use super::read::{Positioned, ReadSeek};
use super::{
    executorch, ggml, gguf, hdf5, keras, llamafile, onnx, package, polyglot, template, tf, tflite,
};
use crate::classify::Format;
use crate::model::finding::Location;
use crate::model::rules::RuleId;

/// Records problems: `Unsafe` -> the format's rule, `CustomOp` -> FMT008, `Malformed` ->
/// FMT007, `LimitExceeded` -> SCAN004, `Note` -> a fact (`notes`). `limits` names the policy
/// limit behind each limit sub-code (`(code, limit)`), so SCAN004 says which `[limits]` entry
/// to raise; limit problems of fixed internal caps name none.
pub fn record_problems(
    ctx: &mut Ctx<'_>,
    problems: &[Problem],
    unsafe_rule: RuleId,
    member: Option<&str>,
    limits: &[(&str, &'static str)],
) {
    let mut notes: Vec<Value> = Vec::new();
    for p in problems {
        let rule = match p.kind {
            ProblemKind::Unsafe => unsafe_rule,
            ProblemKind::CustomOp => RuleId::CustomOperator,
            ProblemKind::Malformed => RuleId::FormatMalformed,
            ProblemKind::Exploit => RuleId::FormatExploitShape,
            ProblemKind::LimitExceeded => RuleId::LimitExceeded,
            // An HDF5 file whose root attributes sit in dense storage (which this reader does not
            // walk) hides `model_config` from the Lambda check: storing a large config densely
            // must not be a way to pass, so the unchecked part is reported like a limit.
            ProblemKind::Note if p.code == "attributes-not-reached" => RuleId::LimitExceeded,
            ProblemKind::Note => {
                notes.push(json!({"code": p.code, "message": p.message}));
                continue;
            }
        };
        let loc = Location {
            offset: p.offset,
            member: member.map(str::to_string),
            ..Location::default()
        };
        // The fingerprint key: sub-code plus the evidence that names the thing (layer, op,
        // path, template), never the offset.
        let mut key = format!("{}:{}", member.unwrap_or_default(), p.code);
        for k in [
            "layer",
            "op",
            "node",
            "location",
            "template",
            "domain",
            "indicator",
            "object",
            "callable",
            "file",
        ] {
            if let Some(v) = p.evidence.get(k) {
                key.push(':');
                key.push_str(v);
            }
        }
        let limit = limits
            .iter()
            .find(|(code, _)| *code == p.code)
            .map(|(_, limit)| *limit)
            .filter(|_| rule == RuleId::LimitExceeded);
        let cfg = ctx.cfg;
        let message = match limit {
            Some(name) => format!("{}; {}", p.message, super::context::raise_hint(name)),
            None => p.message.clone(),
        };
        let d = ctx.detect(rule, key, message, loc);
        d.evidence.insert("problem".into(), json!(p.code));
        for (k, v) in &p.evidence {
            // Advisory ids travel as one comma-separated string in a `Problem`; the report
            // lists them (`evidence.references`, shown in SARIF).
            let value = if k == "references" {
                json!(v.split(',').collect::<Vec<_>>())
            } else {
                json!(v)
            };
            d.evidence.insert(k.clone(), value);
        }
        if let Some(name) = limit {
            super::context::name_limit(d, cfg, name);
        }
    }
    if !notes.is_empty() {
        ctx.fact(Fact::Notes, Value::Array(notes));
    }
}

fn facts_of(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// GGUF: header, metadata, tensor infos, chat template checks (FMT005).
pub fn inspect_gguf(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, size: u64) -> Format {
    let limits = gguf::Limits::from(&ctx.cfg.limits);
    let (facts, problems) = gguf::inspect(r, size, &limits);
    if let Some(n) = facts.parameter_count {
        ctx.fact(Fact::Parameters, n);
    }
    ctx.fact(Fact::TensorCount, facts.tensor_count);
    ctx.fact(Fact::Gguf, facts_of(&facts));
    record_problems(
        ctx,
        &problems,
        RuleId::GgufTemplateSuspicious,
        None,
        &[
            ("header-too-large", "gguf_metadata_bytes"),
            ("too-many-tensors", "gguf_tensor_count"),
            ("too-many-kv", "gguf_kv_count"),
        ],
    );
    Format::Gguf
}

/// ONNX: model header facts, external data locations (checked against the tree later: FMT004),
/// custom-op domains (FMT008).
pub fn inspect_onnx(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, size: u64) -> Format {
    let limits = onnx::Limits::from(&ctx.cfg.limits);
    let (facts, problems) = onnx::inspect(r, size, &limits);
    record_onnx(ctx, &facts, &problems)
}

/// The facts and findings of one ONNX walk (a full read or header mode's ranges).
pub fn record_onnx(ctx: &mut Ctx<'_>, facts: &onnx::Facts, problems: &[Problem]) -> Format {
    let locations: Vec<&str> = facts
        .external_data
        .iter()
        .map(|e| e.location.as_str())
        .collect();
    if !locations.is_empty() {
        ctx.fact(Fact::ExternalDataLocations, json!(locations));
    }
    ctx.fact(Fact::Onnx, facts_of(facts));
    record_problems(
        ctx,
        problems,
        RuleId::OnnxExternalData,
        None,
        &[("too-deep", "onnx_depth")],
    );
    Format::Onnx
}

/// Flax/JAX msgpack (issue 40): arrays listed as tensors under their key paths, every array's
/// dtype, shape and byte length checked (FMT007 when they disagree, FMT009 for sizes only a
/// crafted file declares, SCAN004 past `msgpack_depth`). Returns where the msgpack value ended
/// when bytes follow it (for the polyglot check).
pub fn inspect_msgpack(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, size: u64) -> Option<u64> {
    let limits = super::msgpack::Limits::from(&ctx.cfg.limits);
    let walk = super::msgpack::inspect(r, size, &limits);
    let f = &walk.facts;
    ctx.fact(Fact::TensorCount, f.tensor_count);
    if let Some(p) = f.parameters {
        ctx.fact(Fact::Parameters, p);
    }
    ctx.fact(Fact::Dtypes, json!(f.dtypes));
    ctx.fact(Fact::DataBytes, f.data_bytes);
    ctx.fact(Fact::Msgpack, facts_of(f));
    ctx.tensors = Some(walk.tensors);
    record_problems(
        ctx,
        &walk.problems,
        RuleId::FormatMalformed,
        None,
        &[
            ("too-deep", "msgpack_depth"),
            ("rank-too-large", "tensor_rank"),
        ],
    );
    walk.trailing_at
}

/// Core ML model spec (issue 40): spec version, model type, layers and their types (facts);
/// custom layers and custom models FMT008; broken structure FMT007; nesting past
/// `coreml_depth` SCAN004.
pub fn inspect_coreml(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, size: u64) -> Format {
    let limits = super::coreml::Limits::from(&ctx.cfg.limits);
    let (facts, problems) = super::coreml::inspect_spec(r, size, &limits);
    ctx.fact(Fact::Coreml, facts_of(&facts));
    record_problems(
        ctx,
        &problems,
        RuleId::CustomOperator,
        None,
        &[("too-deep", "coreml_depth")],
    );
    Format::Coreml
}

/// Core ML MIL weight blobs (`weight.bin`, issue 40): blob count and data bytes (facts); a blob
/// past the end FMT009, a broken record FMT007.
pub fn inspect_coreml_weights(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, size: u64) -> Format {
    let (facts, problems) = super::coreml::inspect_weights(r, size);
    ctx.fact(Fact::DataBytes, facts.data_bytes);
    ctx.fact(Fact::Coreml, json!({ "weights": facts_of(&facts) }));
    record_problems(ctx, &problems, RuleId::FormatMalformed, None, &[]);
    Format::CoremlWeights
}

/// An `.mlpackage`'s `Manifest.json` (issue 40), read bounded by `json_bytes`: its items are a
/// fact, checked against the tree by `repository::check_coreml_packages`.
pub fn inspect_coreml_manifest(ctx: &mut Ctx<'_>, r: &mut dyn BufRead) -> io::Result<()> {
    let limit = ctx.cfg.limits.json_bytes;
    let (bytes, more) = super::read::read_bounded(r, limit)?;
    if more {
        let cfg = ctx.cfg;
        let d = ctx.detect(
            RuleId::LimitExceeded,
            "json_bytes",
            format!("core ml package manifest is larger than the json_bytes limit ({limit}); not checked"),
            Location::default(),
        );
        super::context::name_limit(d, cfg, "json_bytes");
        return Ok(());
    }
    match super::coreml::parse_manifest(&bytes) {
        Ok(m) => ctx.fact(Fact::Coreml, json!({ "manifest": facts_of(&m) })),
        Err(p) => record_problems(ctx, &[p], RuleId::FormatMalformed, None, &[]),
    }
    Ok(())
}

/// PaddlePaddle program (issue 40): operator types (facts); `py_func` and the file ops judged
/// like TensorFlow's PyFunc and file-system ops (FMT006); broken structure FMT007; nesting past
/// `paddle_depth` SCAN004.
pub fn inspect_paddle(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, size: u64) -> Format {
    let limits = super::paddle::Limits::from(&ctx.cfg.limits);
    let (facts, problems) = super::paddle::inspect_program(r, size, &limits);
    ctx.fact(Fact::Paddle, facts_of(&facts));
    record_problems(
        ctx,
        &problems,
        RuleId::TfUnsafeOp,
        None,
        &[("too-deep", "paddle_depth")],
    );
    Format::Paddle
}

/// PaddlePaddle `.pdiparams` (issue 40): every tensor record sized against the file (FMT009
/// past the end, FMT007 broken); tensor count, dtypes and bytes as facts.
pub fn inspect_paddle_params(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, size: u64) -> Format {
    let limits = super::paddle::Limits::from(&ctx.cfg.limits);
    let (facts, problems) = super::paddle::inspect_params(r, size, &limits);
    ctx.fact(Fact::TensorCount, facts.tensor_count);
    if let Some(p) = facts.parameters {
        ctx.fact(Fact::Parameters, p);
    }
    ctx.fact(Fact::Dtypes, json!(facts.dtypes));
    ctx.fact(Fact::DataBytes, facts.data_bytes);
    ctx.fact(Fact::Paddle, json!({ "params": facts_of(&facts) }));
    record_problems(
        ctx,
        &problems,
        RuleId::FormatMalformed,
        None,
        &[("rank-too-large", "tensor_rank")],
    );
    Format::PaddleParams
}

/// TensorFlow SavedModel / frozen GraphDef: op types, PyFunc and file-system ops (FMT006).
pub fn inspect_tf(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, size: u64, saved_model: bool) -> Format {
    let kind = if saved_model {
        tf::GraphFile::SavedModel
    } else {
        tf::GraphFile::FrozenGraph
    };
    inspect_tf_file(ctx, r, size, kind)
}

/// A TensorFlow graph file of a known kind; returns its format.
pub fn inspect_tf_file(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    size: u64,
    kind: tf::GraphFile,
) -> Format {
    let limits = tf::Limits::from(&ctx.cfg.limits);
    let (facts, problems) = tf::inspect(r, size, kind, &limits);
    record_tf(ctx, &facts, &problems, kind)
}

/// The facts and findings of one TensorFlow graph walk (a full read or header mode's ranges).
pub fn record_tf(
    ctx: &mut Ctx<'_>,
    facts: &tf::Facts,
    problems: &[Problem],
    kind: tf::GraphFile,
) -> Format {
    ctx.fact(Fact::Tf, facts_of(facts));
    record_problems(
        ctx,
        problems,
        RuleId::TfUnsafeOp,
        None,
        &[("too-deep", "tf_depth")],
    );
    match kind {
        tf::GraphFile::SavedModel => Format::TfSavedmodel,
        tf::GraphFile::FrozenGraph => Format::TfGraph,
        tf::GraphFile::MetaGraph => Format::TfMetagraph,
    }
}

/// HDF5 (legacy Keras `.h5`): root attributes `model_config` / `training_config` checked for
/// Lambda layers and custom objects (FMT003). Needs random access: the file is read again at
/// positions from `at` (the file on disk, a remote file's bytes or byte ranges) and only small
/// structures are read. Returns the serialized objects the Keras config embeds, for the caller
/// to inspect as archive members.
pub fn inspect_hdf5(
    ctx: &mut Ctx<'_>,
    at: Positioned<'_>,
    size: u64,
) -> io::Result<(Format, Vec<keras::Embedded>)> {
    let limits = hdf5::Limits::from(&ctx.cfg.limits);
    let Some((facts, problems)) = read_positioned(ctx, at, Format::Hdf5, "hdf5", |f| {
        hdf5::inspect(f, size, &limits)
    })?
    else {
        return Ok((Format::Hdf5, Vec::new()));
    };
    let format = if facts.keras.is_some() {
        Format::Keras
    } else {
        Format::Hdf5
    };
    ctx.fact(Fact::Hdf5, facts_of(&facts));
    let embedded = facts.keras.map(|k| k.embedded).unwrap_or_default();
    record_problems(
        ctx,
        &problems,
        RuleId::KerasUnsafeLayer,
        None,
        &[
            ("too-many-messages", "hdf5_messages"),
            ("value-too-large", "json_bytes"),
            ("config-too-large", "json_bytes"),
            ("too-deep", "json_depth"),
        ],
    );
    Ok((format, embedded))
}

/// TFLite flatbuffer: version, operator codes, custom ops (FMT008). Random access, small reads
/// at positions from `at`.
pub fn inspect_tflite(ctx: &mut Ctx<'_>, at: Positioned<'_>, size: u64) -> io::Result<Format> {
    let limits = tflite::Limits::from(&ctx.cfg.limits);
    let Some((facts, problems)) = read_positioned(ctx, at, Format::Tflite, "tflite", |f| {
        tflite::inspect(f, size, &limits)
    })?
    else {
        return Ok(Format::Tflite);
    };
    ctx.fact(Fact::Tflite, facts_of(&facts));
    // `Unsafe` problems are flex nodes running PyFunc or file ops: the TensorFlow rule.
    record_problems(
        ctx,
        &problems,
        RuleId::TfUnsafeOp,
        None,
        &[("too-many-operator-codes", "tflite_operator_codes")],
    );
    Ok(Format::Tflite)
}

/// Legacy GGML (`ggml`, `ggmf`, `ggjt`, `ggla`): magic, version, layout, vocabulary and the
/// tensor walk; hostile counts and sizes FMT009, broken records FMT007. Random access: tensor
/// headers are read at positions from `at`, their data skipped.
pub fn inspect_ggml(ctx: &mut Ctx<'_>, at: Positioned<'_>, size: u64) -> io::Result<Format> {
    let limits = ggml::Limits::from(&ctx.cfg.limits);
    let Some((facts, problems)) = read_positioned(ctx, at, Format::Ggml, "ggml", |f| {
        ggml::inspect(f, size, &limits)
    })?
    else {
        return Ok(Format::Ggml);
    };
    if let Some(n) = facts.parameter_count.filter(|_| facts.layout.is_some()) {
        ctx.fact(Fact::Parameters, n);
    }
    ctx.fact(Fact::TensorCount, facts.tensor_count);
    ctx.fact(Fact::Ggml, facts_of(&facts));
    record_problems(
        ctx,
        &problems,
        RuleId::FormatMalformed,
        None,
        &[("too-many-tensors", "gguf_tensor_count")],
    );
    Ok(Format::Ggml)
}

/// ExecuTorch `.pte`: the program's plans, operators (custom namespaces FMT008) and delegates
/// (backend ids, blob sizes); hostile sizes FMT009, broken structure FMT007. Random access, small
/// reads at positions from `at`.
pub fn inspect_executorch(ctx: &mut Ctx<'_>, at: Positioned<'_>, size: u64) -> io::Result<Format> {
    let limits = executorch::Limits::from(&ctx.cfg.limits);
    let Some((facts, problems)) =
        read_positioned(ctx, at, Format::Executorch, "executorch", |f| {
            executorch::inspect(f, size, &limits)
        })?
    else {
        return Ok(Format::Executorch);
    };
    ctx.fact(Fact::Executorch, facts_of(&facts));
    record_problems(
        ctx,
        &problems,
        RuleId::FormatMalformed,
        None,
        &[("too-many-entries", "tflite_operator_codes")],
    );
    Ok(Format::Executorch)
}

/// TensorRT engine: its tag and serialization version, and the native images (plugin libraries,
/// the lean runtime) embedded in the plan, found in the one sequential read; SRC007 reports them
/// (`repository::native`).
pub fn inspect_tensorrt(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, head: &[u8]) -> io::Result<()> {
    let facts = super::tensorrt::inspect(r, head)?;
    ctx.fact(Fact::Tensorrt, facts_of(&facts));
    Ok(())
}

/// XGBoost JSON/UBJSON model: recognised, its tree count and version where the first block has
/// them (issue 40).
pub fn record_xgboost(ctx: &mut Ctx<'_>, head: &[u8], size: u64, ubjson: bool) {
    let whole = head.len() as u64 == size;
    let facts = super::trees::xgboost(head, whole, ubjson);
    ctx.fact(Fact::Xgboost, facts_of(&facts));
}

/// LightGBM text model: its header (version, classes, objective, tree count).
pub fn record_lightgbm(ctx: &mut Ctx<'_>, head: &[u8]) {
    ctx.fact(Fact::Lightgbm, facts_of(&super::trees::lightgbm(head)));
}

/// CatBoost `.cbm`: the model core's size, checked against the file (FMT009 past the end).
pub fn record_catboost(ctx: &mut Ctx<'_>, head: &[u8], size: u64) {
    let (facts, problems) = super::trees::catboost(head, size);
    ctx.fact(Fact::Catboost, facts_of(&facts));
    record_problems(ctx, &problems, RuleId::FormatMalformed, None, &[]);
}

/// A native executable with a zip appended: a llamafile when the zip stores a `.gguf` (its
/// layout), `None` otherwise (or with no file to reopen). Problems of the appended zip are
/// recorded (FMT007, FMT009, SCAN004).
pub fn probe_llamafile(
    ctx: &mut Ctx<'_>,
    at: Positioned<'_>,
    size: u64,
) -> io::Result<Option<llamafile::Layout>> {
    if at.is_none() {
        return Ok(None);
    }
    let Some(mut file) = reopen(ctx, at, "llamafile")? else {
        return Ok(None);
    };
    let (layout, problems) =
        llamafile::probe(&mut file, size, &llamafile::Limits::from(&ctx.cfg.limits));
    drop(file);
    if check_positioned(ctx, at, "llamafile") {
        return Ok(None);
    }
    record_problems(ctx, &problems, RuleId::FormatMalformed, None, &[]);
    Ok(layout)
}

/// Each GGUF a llamafile carries, read by the GGUF inspector from its offset (header, metadata,
/// tensor infos; chat templates judged: FMT005), findings named by the member.
pub fn inspect_llamafile(
    ctx: &mut Ctx<'_>,
    at: Positioned<'_>,
    layout: &llamafile::Layout,
) -> io::Result<()> {
    let limits = gguf::Limits::from(&ctx.cfg.limits);
    let mut embedded = Vec::new();
    for g in &layout.ggufs {
        let Some(mut file) = reopen(ctx, at, "llamafile")? else {
            return Ok(());
        };
        use std::io::{Seek, SeekFrom};
        file.seek(SeekFrom::Start(g.offset))?;
        let mut member = io::BufReader::new(io::Read::take(file, g.size));
        let (facts, mut problems) = gguf::inspect(&mut member, g.size, &limits);
        drop(member);
        // Offsets in the member are offsets in the file from where the member starts.
        for p in &mut problems {
            p.offset = p.offset.map(|o| o.saturating_add(g.offset));
        }
        if check_positioned(ctx, at, "llamafile") {
            return Ok(());
        }
        if let Some(n) = facts.parameter_count {
            ctx.fact(Fact::Parameters, n);
        }
        ctx.fact(Fact::TensorCount, facts.tensor_count);
        embedded.push(json!({
            "member": g.member,
            "offset": g.offset,
            "size": g.size,
            "gguf": facts_of(&facts),
        }));
        record_problems(
            ctx,
            &problems,
            RuleId::GgufTemplateSuspicious,
            Some(&g.member),
            &[
                ("header-too-large", "gguf_metadata_bytes"),
                ("too-many-tensors", "gguf_tensor_count"),
                ("too-many-kv", "gguf_kv_count"),
            ],
        );
    }
    ctx.fact(
        Fact::Llamafile,
        json!({
            "executable_bytes": layout.executable_bytes,
            "zip_members": layout.zip_members,
            "ggufs": embedded,
        }),
    );
    Ok(())
}

/// A reader at offset 0 for `check`; `None` (with the finding recorded) when the source had
/// already stopped serving reads.
pub(super) fn reopen<'a>(
    ctx: &mut Ctx<'_>,
    at: Positioned<'a>,
    check: &'static str,
) -> io::Result<Option<Box<dyn ReadSeek + 'a>>> {
    match at.reopen(check) {
        Ok(r) => Ok(Some(r)),
        Err(_) if check_positioned(ctx, at, check) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The preamble every random-access reader shares. A streamed (remote) scan gets the
/// `random-access-format` finding and nothing is read; otherwise the file is reopened for
/// positioned reads and `read` runs on it. When the source stopped serving reads partway, only
/// unsafe and exploit problems are kept: the parser saw a failed read as a truncated file, which
/// is not what happened. `Ok(None)`: nothing was read.
fn read_positioned<'a, T>(
    ctx: &mut Ctx<'_>,
    at: Positioned<'a>,
    format: Format,
    check: &'static str,
    read: impl FnOnce(&mut Box<dyn ReadSeek + 'a>) -> (T, Vec<Problem>),
) -> io::Result<Option<(T, Vec<Problem>)>> {
    if at.is_none() {
        streamed_only(ctx, format);
        return Ok(None);
    }
    let Some(mut file) = reopen(ctx, at, check)? else {
        return Ok(None);
    };
    let (facts, mut problems) = read(&mut file);
    drop(file);
    if check_positioned(ctx, at, check) {
        problems.retain(|p| matches!(p.kind, ProblemKind::Unsafe | ProblemKind::Exploit));
    }
    Ok(Some((facts, problems)))
}

/// After (or instead of) a positioned check: when the source stopped serving reads (a per-file
/// cap on remote range reads, a failed or refused range request), a finding that says this
/// check did not finish: SCAN004 for a cap, SCAN001 otherwise. Never a silent pass. Returns
/// whether reads had stopped.
pub(super) fn check_positioned(ctx: &mut Ctx<'_>, at: Positioned<'_>, check: &'static str) -> bool {
    let Some(failure) = at.failure() else {
        return false;
    };
    let key = format!("positioned-reads:{check}");
    if ctx.detections.iter().any(|d| d.key == key) {
        return true;
    }
    let rule = if failure.limit {
        RuleId::LimitExceeded
    } else {
        RuleId::UnreadableFile
    };
    let d = ctx.detect(
        rule,
        key,
        format!(
            "the {check} check of this file did not finish: {}",
            failure.message
        ),
        Location::default(),
    );
    d.evidence
        .insert("problem".into(), json!("positioned-reads"));
    d.evidence.insert("check".into(), json!(check));
    d.evidence.insert("error".into(), json!(failure.message));
    true
}

/// Keras v3 archive members: `config.json` (layers) and `metadata.json` (version). Returns the
/// serialized objects the config embeds, for the caller to inspect as archive members.
pub fn inspect_keras_member(ctx: &mut Ctx<'_>, name: &str, bytes: &[u8]) -> Vec<keras::Embedded> {
    let limits = keras::Limits::from(&ctx.cfg.limits);
    match name {
        "config.json" => {
            let (facts, problems) = keras::check_config(bytes, &limits);
            ctx.fact(Fact::Keras, facts_of(&facts));
            record_problems(
                ctx,
                &problems,
                RuleId::KerasUnsafeLayer,
                Some(name),
                &[
                    ("config-too-large", "json_bytes"),
                    ("too-deep", "json_depth"),
                ],
            );
            return facts.embedded;
        }
        "metadata.json" => {
            if let Ok(m) = keras::parse_metadata(bytes, &limits) {
                ctx.fact(Fact::KerasMetadata, facts_of(&m));
            }
        }
        _ => {}
    }
    Vec::new()
}

/// FMT001 `polyglot`: the weight file's bytes also form an HDF5 file or a zip archive where
/// their loaders look (what an embedded HDF5 model would do on load is reported too), or bytes
/// after the declared data (`declared_end`) are a pickle, analysed as one. Positioned reads of
/// small structures from `at` (the file on disk, a remote file's bytes in memory or its byte
/// ranges); reads a cap or a failed request stopped are a finding (see `check_positioned`).
pub fn record_polyglots(
    ctx: &mut Ctx<'_>,
    at: Positioned<'_>,
    size: u64,
    declared_end: Option<u64>,
) -> io::Result<()> {
    if at.is_none() {
        return Ok(());
    }
    let Some(mut file) = reopen(ctx, at, "polyglot")? else {
        return Ok(());
    };
    let problems = polyglot::check(&mut file, size, &hdf5::Limits::from(&ctx.cfg.limits));
    if check_positioned(ctx, at, "polyglot") {
        return Ok(());
    }
    for p in &problems {
        if p.code != "polyglot" {
            continue;
        }
        let container = p.detail("polyglot").unwrap_or("?").to_string();
        let d = ctx.detect(
            RuleId::FormatMismatch,
            format!("polyglot:{container}"),
            p.message.clone(),
            p.offset.map(Location::offset).unwrap_or_default(),
        );
        d.evidence.insert("problem".into(), json!("polyglot"));
        for (k, v) in &p.evidence {
            d.evidence.insert(k.clone(), json!(v));
        }
    }
    let inner: Vec<Problem> = problems
        .into_iter()
        .filter(|p| p.code != "polyglot")
        .collect();
    record_problems(
        ctx,
        &inner,
        RuleId::KerasUnsafeLayer,
        Some("(hdf5 polyglot)"),
        &[],
    );
    let Some(end) = declared_end.filter(|&e| e < size) else {
        return Ok(());
    };
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(end))?;
    let mut tail = io::BufReader::new(io::Read::take(file, size - end));
    let (head, mut replay) = match super::read::peek(&mut tail, 4096) {
        Ok(p) => p,
        Err(_) if check_positioned(ctx, at, "polyglot") => return Ok(()),
        Err(e) => return Err(e),
    };
    if !super::pickle::looks_like_pickle(&head) {
        return Ok(());
    }
    let d = ctx.detect(
        RuleId::FormatMismatch,
        "polyglot:pickle",
        format!(
            "a pickle follows the declared data at offset {end}; the same bytes hold a pickle that a pickle-based loader reading from there runs"
        ),
        Location::offset(end),
    );
    d.evidence.extend([
        ("problem".to_string(), json!("polyglot")),
        ("polyglot".to_string(), json!("pickle")),
        ("offset".to_string(), json!(end.to_string())),
    ]);
    let member = format!("@{end}");
    match super::pickle_stream::inspect_pickle_stream(ctx, &mut replay, Some(&member)) {
        Err(_) if check_positioned(ctx, at, "polyglot") => Ok(()),
        r => r,
    }
}

/// MLflow `MLmodel`: the config checks (tags, `_target_`), its flavors and model files as facts,
/// and SRC001 for what `mlflow.pyfunc.load_model` imports or unpickles from the model: a loader
/// module outside MLflow, `code` paths, a cloudpickled `python_model`.
pub fn inspect_mlmodel(ctx: &mut Ctx<'_>, r: &mut dyn BufRead) -> io::Result<()> {
    let limit = ctx.cfg.limits.json_bytes;
    let (bytes, more) = super::read::read_bounded(r, limit)?;
    if more {
        let cfg = ctx.cfg;
        let d = ctx.detect(
            RuleId::LimitExceeded,
            "json_bytes",
            format!("MLmodel is larger than the json_bytes limit ({limit}); not checked"),
            Location::default(),
        );
        super::context::name_limit(d, cfg, "json_bytes");
        return Ok(());
    }
    super::config::check_yaml(ctx, &bytes, None);
    let Some(m) = super::config::yaml_value(&bytes, ctx.cfg.limits.yaml_nodes)
        .and_then(|v| package::parse_mlmodel(&v))
    else {
        return Ok(());
    };
    ctx.fact(Fact::Mlflow, facts_of(&m));
    if !m.builtin_loader() {
        let module = m.loader_module.clone().unwrap_or_default();
        let d = ctx.detect(
            RuleId::CustomCode,
            format!("mlflow-loader:{module}"),
            format!(
                "MLmodel names loader module `{module}`, which mlflow.pyfunc.load_model imports and runs"
            ),
            Location::default(),
        );
        d.evidence.insert("loader_module".into(), json!(module));
    }
    if !m.code.is_empty() {
        let d = ctx.detect(
            RuleId::CustomCode,
            "mlflow-code",
            format!(
                "MLmodel ships code path(s) {} that mlflow puts on sys.path and imports at load",
                m.code
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Location::default(),
        );
        d.evidence.insert("code".into(), json!(m.code));
    }
    if let Some(p) = &m.python_model {
        let d = ctx.detect(
            RuleId::CustomCode,
            format!("mlflow-python-model:{p}"),
            format!(
                "MLmodel's python_model `{p}` is a cloudpickled PythonModel that mlflow unpickles at load"
            ),
            Location::default(),
        );
        d.evidence.insert("python_model".into(), json!(p));
    }
    Ok(())
}

/// A positioned-read format met in a stream with no file to reopen (a remote scan): the digest
/// covers the bytes, but the structure was not inspected, and that is a finding, not a pass.
fn streamed_only(ctx: &mut Ctx<'_>, format: Format) -> Format {
    ctx.detect(
        RuleId::UnreadableFile,
        "random-access-format",
        format!(
            "{} files need positioned reads; in a streamed (remote) scan their structure was not inspected",
            format.as_str()
        ),
        Location::default(),
    );
    format
}

/// A `.jinja` file (`chat_template.jinja`, `additional_chat_templates/<name>.jinja`): one chat
/// template, judged like a GGUF one (FMT005). Read up to the template size the judge looks at
/// (one byte more, to see a longer file); the rest is reported as not scanned.
pub fn inspect_jinja(ctx: &mut Ctx<'_>, r: &mut dyn BufRead) -> io::Result<()> {
    let cap = template::MAX_TEMPLATE_BYTES as u64 + 1;
    let (bytes, _) = super::read::read_bounded(r, cap)?;
    let text = String::from_utf8_lossy(&bytes);
    let name = template::jinja_name(ctx.rel).to_owned();
    let origin = template::Origin {
        carrier: None,
        offset: Some(0),
    };
    let problems = template::judge(&text, &name, origin);
    ctx.fact(Fact::ChatTemplates, json!([name]));
    record_problems(ctx, &problems, RuleId::GgufTemplateSuspicious, None, &[]);
    Ok(())
}

/// The chat templates a JSON file carries (`chat_template` in `tokenizer_config.json`,
/// `chat_template.json`, processor configs): each judged by name (FMT005). Only a carrier by name,
/// or a document that spells the key, is parsed again.
pub fn check_json_templates(ctx: &mut Ctx<'_>, bytes: &[u8]) {
    let name = crate::classify::basename(ctx.rel);
    let spelled = memchr::memmem::find(bytes, b"chat_template").is_some();
    if !template::JSON_CARRIERS.contains(&name) && !spelled {
        return;
    }
    // A document the JSON parser refuses is reported (or not) by the config checks.
    let Ok(doc) = serde_json::from_slice::<Value>(bytes) else {
        return;
    };
    let (templates, skipped) = template::json_templates(&doc);
    if templates.is_empty() {
        return;
    }
    let mut problems = Vec::new();
    let mut names = Vec::new();
    for t in &templates {
        let carrier = format!("{} field `{}`", ctx.rel, t.field);
        let origin = template::Origin {
            carrier: Some(&carrier),
            offset: None,
        };
        problems.extend(
            template::judge(t.template, &t.name, origin)
                .into_iter()
                .map(|p| p.with("field", t.field.clone())),
        );
        names.push(t.name.clone());
    }
    if skipped > 0 {
        problems.push(Problem::limit(
            "too-many-templates",
            format!(
                "{} holds {} more chat templates than the {} judged; they were not scanned",
                ctx.rel,
                skipped,
                template::MAX_TEMPLATES_PER_FILE
            ),
        ));
    }
    ctx.fact(Fact::ChatTemplates, json!(names));
    record_problems(ctx, &problems, RuleId::GgufTemplateSuspicious, None, &[]);
}
