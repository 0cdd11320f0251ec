//! One file's scan: the single read with its digests, the routing of the bytes to the
//! inspector of their format, and the judgement of what the format says about the file
//! (claims, weights of no known format). `inspect/mod.rs` re-exports its entry points; the
//! ranged (remote) scan reuses it, so it sits beside the inspectors, not above them in mod.rs.

use crate::model::facts::Fact;
use crate::model::problem::ProblemKind;
use std::io::{self, BufRead};
use std::path::Path;

use serde_json::{Value, json};

use crate::classify::{self, Format, Kind};
use crate::model::finding::{Detection, Location};
use crate::model::rules::RuleId;

use super::context::{Ctx, FileScan, ScanConfig, name_limit, raise_hint, unreadable};
use super::pickle_stream::{
    fold_per_file, grade_pickle_format, inspect_pickle_stream, inspect_torch_legacy,
};
use super::read::open_regular;
use super::{
    archive, compress, config, coreml, formats, msgpack, native, onnx, openvino, paddle, pickle,
    pyc, read, safetensors, source, template, tf, trees,
};

/// Scans one regular file: digests plus format inspection, in one read.
pub fn scan_file(open: &Path, rel: &str, expected_size: u64, cfg: &ScanConfig) -> FileScan {
    let mut out = FileScan::default();
    let file = match open_regular(open) {
        Ok(f) => f,
        Err(e) => {
            out.detections.push(unreadable(rel, &e));
            return out;
        }
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(expected_size);
    scan_reader(file, open, rel, size, cfg)
}

/// Scans a file's bytes from any byte stream (a local file, or a remote download that is never
/// written to disk): the same one read, digests and inspectors as [`scan_file`]. `size` is the
/// size the stream is expected to have; a stream that ends early or runs on is reported as a
/// changed file. `open` is where positioned-read formats (HDF5, TFLite) may reopen the file; an
/// empty path means there is nothing to reopen, and those formats say they were not inspected.
pub fn scan_reader<R: io::Read>(
    input: R,
    open: &Path,
    rel: &str,
    size: u64,
    cfg: &ScanConfig,
) -> FileScan {
    scan_reader_at(input, read::Positioned::file(open), rel, size, cfg)
}

/// [`scan_reader`] with positioned reads from `positioned` (a remote file: its bytes in memory
/// or its byte ranges) instead of a path to reopen.
pub fn scan_reader_at<R: io::Read>(
    input: R,
    positioned: read::Positioned<'_>,
    rel: &str,
    size: u64,
    cfg: &ScanConfig,
) -> FileScan {
    let mut out = FileScan::default();
    if size > cfg.limits.max_file_bytes {
        out.size = size;
        out.detections.push(
            Detection::new(
                RuleId::LimitExceeded,
                rel,
                "max_file_bytes",
                format!(
                    "file is {size} bytes, over the max_file_bytes limit ({}); not scanned",
                    cfg.limits.max_file_bytes
                ),
            )
            .with("limit", "max_file_bytes")
            .with("value", cfg.limits.max_file_bytes),
        );
        return out;
    }
    let mut reader =
        read::HashingReader::new(input, read::block_for(size, cfg.block_size), cfg.sha512);
    let mut ctx = Ctx::at(cfg, rel, positioned);
    let result = inspect_file(&mut ctx, &mut reader, size).and_then(|fk| {
        reader.drain()?;
        Ok(fk)
    });
    match result {
        Ok((format, kind)) => {
            out.format = Some(format);
            out.kind = Some(kind);
        }
        Err(e) => {
            out.detections.push(unreadable(rel, &e));
            return out;
        }
    }
    let total = reader.total();
    if total != size {
        // The file grew or shrank while we read it: what we inspected is not a stable file.
        ctx.detect(
            RuleId::UnreadableFile,
            "changed",
            format!("file changed while being scanned: size was {size} bytes, read {total}"),
            Location::default(),
        );
    }
    let (sha256, sha512) = reader.finish();
    out.size = total;
    out.sha256 = Some(sha256);
    out.sha512 = sha512;
    let mut detections = fold_per_file(ctx.detections);
    grade_pickle_format(&mut detections, &ctx.facts);
    out.facts = ctx.facts;
    out.detections = detections;
    out.tensors = ctx.tensors;
    out.text = ctx.text;
    out.card = ctx.card;
    out
}

/// Picks the inspector by content and runs it. Returns the final format and kind.
fn inspect_file<R: io::Read>(
    ctx: &mut Ctx<'_>,
    r: &mut read::HashingReader<R>,
    size: u64,
) -> io::Result<(Format, Kind)> {
    let head = r.fill_buf()?;
    let head = head
        .get(..head.len().min(64 << 10))
        .unwrap_or(head)
        .to_vec();
    let sniffed = classify::sniff(&head, size);
    let format = dispatch(ctx, r, &head, sniffed, size)?;
    Ok((format, judge(ctx, format, &head)))
}

/// What the format found says about the file beyond its inspector's facts: a name that claims
/// another format (FMT001), weights of no recognised format (FMT002). Returns the file's kind.
pub(super) fn judge(ctx: &mut Ctx<'_>, format: Format, head: &[u8]) -> Kind {
    check_claim(ctx, format);
    let kind = classify::kind_of(ctx.rel, format);
    // An empty file under a weight name whose format has no empty form (`.onnx`, `.gguf`, ...)
    // is a truncated upload or a stub a loader will choke on: say so like unknown content.
    let empty_weights = format == Format::Empty
        && classify::claimed_format(ctx.rel).is_some_and(|c| !c.contains(&Format::Empty));
    if (kind == Kind::Weights
        || classify::WEIGHT_EXTENSIONS.contains(&classify::extension(ctx.rel).as_str()))
        && (matches!(format, Format::Unknown | Format::Text) || empty_weights || format.is_native())
        && is_weight_name(ctx.rel)
    {
        if let Some(exe) = executable_kind(head) {
            // A native executable disguised as weights is not "unrecognised": it is the payload
            // of a dropper that renames and runs it (issue 15, cause 8).
            let d = ctx.detect(
                RuleId::UnknownWeights,
                "executable",
                format!(
                    "weight-like name `{}` but the content is a native executable ({exe})",
                    classify::basename(ctx.rel)
                ),
                Location::default(),
            );
            d.severity = crate::model::finding::Severity::High;
            d.evidence.insert("executable".into(), json!(exe));
        } else {
            ctx.detect(
                RuleId::UnknownWeights,
                "unknown",
                format!(
                    "weight-like name `{}` but the content is not a recognised model format",
                    classify::basename(ctx.rel)
                ),
                Location::default(),
            );
        }
    }
    kind
}

/// The native executable `head` starts (ELF, PE or Mach-O), by [`classify::native_format`]'s
/// signatures.
fn executable_kind(head: &[u8]) -> Option<&'static str> {
    Some(match classify::native_format(head)? {
        Format::Elf => "ELF",
        Format::Pe => "PE",
        _ => "Mach-O",
    })
}

fn is_weight_name(rel: &str) -> bool {
    let ext = classify::extension(rel);
    // `.model` and `.bin` are also tokenizer/data names; only flag them with a weight-like stem.
    match ext.as_str() {
        "model" | "txt" => false,
        "bin" => {
            let b = classify::basename(rel);
            b.contains("model") || b.contains("weights") || b.contains("checkpoint")
        }
        e => classify::WEIGHT_EXTENSIONS.contains(&e),
    }
}

/// The parsers' own sniffers, run only where content alone left the format open.
pub(super) fn probes(head: &[u8], sniffed: Format) -> classify::Probes {
    if matches!(sniffed, Format::Unknown | Format::Text | Format::Empty) {
        classify::Probes {
            pickle: pickle::looks_like_pickle(head),
            tf_saved_model: tf::is_saved_model(head),
            onnx: onnx::is_onnx(head),
            lzma: compress::sniff(head) == Some(compress::Compression::Lzma),
            joblib_zf: joblib_zfile_header(head).is_some(),
            onnx_tensor: onnx::is_onnx_value(head),
            openvino_ir: openvino::is_ir(head),
            coreml_spec: coreml::is_spec(head),
            paddle_program: paddle::starts_like_program(head),
            flax_msgpack: msgpack::is_flax(head),
        }
    } else {
        classify::Probes::default()
    }
}

/// Runs the inspector for the sniffed format. Returns the refined format.
fn dispatch(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    head: &[u8],
    sniffed: Format,
    size: u64,
) -> io::Result<Format> {
    // Name-based routing is decided in classification; the probes it needs are the parsers'
    // own sniffers, run only where content alone left the format open.
    let sniffed = match classify::route(ctx.rel, head, sniffed, &probes(head, sniffed)) {
        classify::Route::As(format) => format,
        classify::Route::JoblibZf => {
            // joblib < 0.10 (and `sklearn.externals.joblib` of that era) wrote compressed dumps
            // as `ZF`, the pickle's length in hex padded to 19 bytes, then a zlib stream. Left
            // unknown, the pickle inside would escape analysis (issue 15, cause 6).
            r.consume(joblib_zfile_header(head).unwrap_or(0));
            return archive::inspect_compressed(
                ctx,
                r,
                compress::Compression::Zlib,
                Format::Zlib,
                None,
                0,
            );
        }
    };
    match inspect_model(ctx, r, head, sniffed, size)? {
        Some(format) => Ok(format),
        None => inspect_other(ctx, r, head, sniffed, size),
    }
}

/// The model formats' inspectors (weights, graphs, programs); `None` for any other format.
fn inspect_model(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    head: &[u8],
    sniffed: Format,
    size: u64,
) -> io::Result<Option<Format>> {
    Ok(Some(match sniffed {
        Format::Safetensors => {
            if let Some(end) = inspect_safetensors(ctx, r, size)? {
                let at = ctx.positioned;
                formats::record_polyglots(ctx, at, size, Some(end))?;
            }
            Format::Safetensors
        }
        Format::LfsPointer => {
            inspect_lfs_pointer(ctx, r)?;
            Format::LfsPointer
        }
        Format::Pickle => {
            inspect_pickle_stream(ctx, r, None)?;
            pickle_format(ctx.rel, sniffed)
        }
        Format::PytorchLegacy => {
            inspect_torch_legacy(ctx, r, None);
            pickle_format(ctx.rel, sniffed)
        }
        Format::Zip => archive::inspect_zip(ctx, r, size),
        Format::Gguf => {
            let format = formats::inspect_gguf(ctx, r, size);
            let at = ctx.positioned;
            formats::record_polyglots(ctx, at, size, None)?;
            format
        }
        // Issue 40: 7z members listed and, where their coder is decoded, inspected.
        Format::SevenZip => archive::inspect_7z(ctx, r, Some(size), None, 0)?,
        Format::Rar => {
            // No maintained, bounded, pure-Rust RAR reader is wired in: say so rather than
            // let an archive that can hold a pickle pass as inspected.
            ctx.detect(
                RuleId::ArchiveMalformed,
                "unsupported-container",
                format!(
                    "{} archive: modelgate does not open this container, so its members were not scanned",
                    sniffed.as_str()
                ),
                Location::default(),
            )
            .evidence
            .insert("problem".into(), json!("unsupported-container"));
            sniffed
        }
        Format::Hdf5 => {
            let at = ctx.positioned;
            let (format, embedded) = formats::inspect_hdf5(ctx, at, size)?;
            archive::inspect_embedded(ctx, "model_config", &embedded);
            format
        }
        Format::Tflite => {
            let at = ctx.positioned;
            formats::inspect_tflite(ctx, at, size)?
        }
        Format::Ggml => {
            let at = ctx.positioned;
            formats::inspect_ggml(ctx, at, size)?
        }
        Format::Tensorrt => {
            formats::inspect_tensorrt(ctx, r, head)?;
            Format::Tensorrt
        }
        Format::Executorch => {
            let at = ctx.positioned;
            formats::inspect_executorch(ctx, at, size)?
        }
        Format::TfSavedmodel => formats::inspect_tf(ctx, r, size, true),
        Format::Onnx => {
            let format = formats::inspect_onnx(ctx, r, size);
            let at = ctx.positioned;
            formats::record_polyglots(ctx, at, size, None)?;
            format
        }
        Format::TfGraph => formats::inspect_tf(ctx, r, size, false),
        // Issue 40: Core ML specs (model type, layers, custom layers and models: FMT008) and
        // the MIL weight blobs of an `.mlpackage`.
        Format::Coreml => formats::inspect_coreml(ctx, r, size),
        Format::CoremlWeights => formats::inspect_coreml_weights(ctx, r, size),
        // Issue 40: PaddlePaddle programs (operators; py_func and file ops FMT006) and
        // parameters (every tensor record sized).
        Format::Paddle => formats::inspect_paddle(ctx, r, size),
        Format::PaddleParams => formats::inspect_paddle_params(ctx, r, size),
        // Issue 40: Flax/JAX msgpack, every array's dtype, shape and length checked.
        Format::Msgpack => {
            let end = formats::inspect_msgpack(ctx, r, size);
            if end.is_some() {
                let at = ctx.positioned;
                formats::record_polyglots(ctx, at, size, end)?;
            }
            Format::Msgpack
        }
        // Tensors only: a TensorProto has no graph, no operators, nothing that runs.
        Format::OnnxTensor | Format::Fasttext | Format::Word2vec | Format::TfCheckpoint => sniffed,
        Format::TfMetagraph => formats::inspect_tf_file(ctx, r, size, tf::GraphFile::MetaGraph),
        Format::Openvino => openvino::inspect_ir(ctx, r)?,
        _ => return Ok(None),
    }))
}

/// Native images, bytecode, archives, compressed streams, text and tree-model files.
fn inspect_other(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    head: &[u8],
    sniffed: Format,
    size: u64,
) -> io::Result<Format> {
    Ok(match sniffed {
        Format::Elf | Format::Macho | Format::Pe => {
            // A llamafile (issue 40): the executable image is native code, the GGUF weights in
            // the zip appended to it are read as a GGUF.
            let at = ctx.positioned;
            match formats::probe_llamafile(ctx, at, size)? {
                Some(layout) => {
                    native::inspect_native_image(ctx, r, Some(layout.executable_bytes))?;
                    formats::inspect_llamafile(ctx, at, &layout)?;
                    Format::Llamafile
                }
                None => {
                    native::inspect_native(ctx, r)?;
                    sniffed
                }
            }
        }
        Format::PythonBytecode => {
            if let Some(pyc) = pyc::inspect_pyc(ctx, r)? {
                pyc::judge(ctx, &pyc);
            }
            Format::PythonBytecode
        }
        Format::Tar => archive::inspect_tar(ctx, r, None, 0),
        Format::Numpy => {
            archive::inspect_npy(ctx, r, None, Some(size))?;
            Format::Numpy
        }
        Format::Gzip | Format::Bzip2 | Format::Xz | Format::Zlib => match compress::sniff(head) {
            Some(kind) => archive::inspect_compressed(ctx, r, kind, sniffed, None, 0)?,
            None => sniffed,
        },
        Format::Unknown
            if matches!(
                compress::sniff(head),
                Some(compress::Compression::Zstd | compress::Compression::Lz4)
            ) =>
        {
            let kind = compress::sniff(head).unwrap_or(compress::Compression::Zstd);
            archive::inspect_compressed(ctx, r, kind, archive::format_of(kind), None, 0)?
        }
        Format::Lzma => {
            archive::inspect_compressed(ctx, r, compress::Compression::Lzma, Format::Lzma, None, 0)?
        }
        Format::Text if trees::is_lightgbm(head) => {
            formats::record_lightgbm(ctx, head);
            Format::Lightgbm
        }
        Format::Text => {
            let format = classify::text_format(ctx.rel);
            // XGBoost's JSON model under any name: the config checks still read it.
            let xgboost = trees::is_xgboost_json(head);
            inspect_text(ctx, r, format)?;
            if xgboost {
                formats::record_xgboost(ctx, head, size, false);
                Format::Xgboost
            } else {
                format
            }
        }
        Format::Xgboost => {
            formats::record_xgboost(ctx, head, size, true);
            Format::Xgboost
        }
        Format::Catboost => {
            formats::record_catboost(ctx, head, size);
            Format::Catboost
        }
        other => other,
    })
}

/// Longest `ZF` header read: `ZF` and the hex length padded with spaces, to 19 bytes by joblib
/// 0.9 and to 20 by joblib 0.8 (issue 15: `joblib_0.8.4_compressed_pickle_py27_np17.gz`).
const JOBLIB_ZF_MAX_HEADER: usize = 2 + 24;

/// The length of a joblib < 0.10 `ZF` header when `head` starts with one: `ZF`, `0x` and hex
/// digits, spaces, then a zlib stream.
fn joblib_zfile_header(head: &[u8]) -> Option<usize> {
    let rest = head.strip_prefix(b"ZF0x")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let spaces = rest[digits..].iter().take_while(|&&b| b == b' ').count();
    let header = 4 + digits + spaces;
    let zlib = head.get(header..).unwrap_or_default();
    (digits > 0
        && spaces > 0
        && header <= JOBLIB_ZF_MAX_HEADER
        && compress::sniff(zlib) == Some(compress::Compression::Zlib))
    .then_some(header)
}

/// `.joblib` pickles are reported as joblib; everything else keeps what the content said.
fn pickle_format(rel: &str, sniffed: Format) -> Format {
    if sniffed == Format::Pickle && classify::extension(rel) == "joblib" {
        Format::Joblib
    } else {
        sniffed
    }
}

/// Files whose bytes repository-level checks need: kept from the one read, bounded.
fn wants_text(rel: &str) -> bool {
    let name = classify::basename(rel);
    name == ".gitattributes" || name.ends_with(".safetensors.index.json")
}

/// Text files: source code, notebooks, cards, configs; keep what repository checks need.
fn inspect_text(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, format: Format) -> io::Result<()> {
    let name = classify::basename(ctx.rel);
    if name == "MLmodel" {
        return formats::inspect_mlmodel(ctx, r);
    }
    if coreml::is_manifest(ctx.rel) {
        return formats::inspect_coreml_manifest(ctx, r);
    }
    match format {
        Format::Python => return source::inspect_python(ctx, r),
        Format::Notebook => return source::inspect_notebook(ctx, r),
        Format::Markdown if classify::CARD_NAMES.contains(&name) => {
            ctx.card = source::inspect_card(ctx, r)?;
            return Ok(());
        }
        Format::Jinja => return formats::inspect_jinja(ctx, r),
        Format::Json if name == "config.json" || name == "tokenizer_config.json" => {
            return source::inspect_config(ctx, r);
        }
        _ => {}
    }
    // YAML and JSON configs: `_target_` instantiation (CFG001/CFG003), python tags (CFG002).
    if matches!(format, Format::Yaml | Format::Json) {
        return inspect_config_text(ctx, r, format);
    }
    if wants_text(ctx.rel) {
        let limit = ctx.cfg.limits.json_bytes;
        let (bytes, more) = read::read_bounded(r, limit)?;
        if more {
            let cfg = ctx.cfg;
            let d = ctx.detect(
                RuleId::LimitExceeded,
                "json_bytes",
                format!("file is larger than the json_bytes limit ({limit}); not checked"),
                Location::default(),
            );
            name_limit(d, cfg, "json_bytes");
        } else {
            ctx.text = Some(bytes);
        }
    }
    Ok(())
}

/// Reads a YAML/JSON file (bounded by `json_bytes`), runs the config checks, and keeps the bytes
/// when a repository-level check needs them.
fn inspect_config_text(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, format: Format) -> io::Result<()> {
    let limit = ctx.cfg.limits.json_bytes;
    let (bytes, more) = read::read_bounded(r, limit)?;
    // Large JSON data files (datasets, vocabularies) are common and were never read; a YAML file
    // past the limit is not, and could pad a `_target_` out of reach.
    // A config a loader reads by name is never skipped that way (issue 39).
    let loader_config = crate::knowledge::loaders::LOADER_CONFIG_NAMES
        .contains(&classify::basename(ctx.rel))
        || template::JSON_CARRIERS.contains(&classify::basename(ctx.rel));
    if more && format == Format::Json && !wants_text(ctx.rel) && !loader_config {
        ctx.fact(Fact::ConfigUnchecked, "json_bytes");
        return Ok(());
    }
    if more {
        ctx.detect(
            RuleId::LimitExceeded,
            "json_bytes",
            format!("file is larger than the json_bytes limit ({limit}); not checked"),
            Location::default(),
        )
        .evidence
        .insert("limit".into(), json!("json_bytes"));
        return Ok(());
    }
    if format == Format::Yaml {
        config::check_yaml(ctx, &bytes, None);
    } else {
        config::check_json(ctx, &bytes, None);
        config::check_loader_code(ctx, &bytes);
        formats::check_json_templates(ctx, &bytes);
    }
    if wants_text(ctx.rel) {
        ctx.text = Some(bytes);
    }
    Ok(())
}

/// A Git LFS pointer stands for content that is not here: record its oid and size (the oid is
/// the content's SHA-256, which the SBOM uses) and say the content was not scanned.
fn inspect_lfs_pointer(ctx: &mut Ctx<'_>, r: &mut dyn BufRead) -> io::Result<()> {
    use crate::provenance::lfs;
    // The spec caps pointers at 1024 bytes; read one more to see a larger file.
    let (bytes, _) = read::read_bounded(r, 1025)?;
    match lfs::parse_pointer(&bytes) {
        Ok(p) => {
            ctx.fact(Fact::LfsOid, p.sha256());
            ctx.fact(Fact::LfsSize, p.size);
            ctx.fact(Fact::LfsVersion, p.version.as_str());
            let d = ctx.detect(
                RuleId::LfsPointer,
                "pointer",
                format!(
                    "git lfs pointer to {} bytes (sha256 {}); the content is not present and was not scanned",
                    p.size,
                    p.sha256()
                ),
                Location::default(),
            );
            d.evidence.insert("oid".into(), json!(p.sha256()));
            d.evidence.insert("size".into(), json!(p.size));
        }
        Err(e) => {
            ctx.fact(Fact::LfsMalformed, e.code);
            let d = ctx.detect(
                RuleId::LfsPointer,
                "malformed",
                format!("malformed git lfs pointer: {}", e.message),
                Location::default(),
            );
            d.evidence.insert("problem".into(), json!(e.code));
        }
    }
    Ok(())
}

/// Strict safetensors validation (ST001), facts, optional value scan (ST002). Returns where the
/// declared data ends when the file is valid, or valid but for bytes after its data, for the
/// polyglot check; `None` when the file is not a safetensors file at all.
pub(super) fn inspect_safetensors(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    size: u64,
) -> io::Result<Option<u64>> {
    let limits = safetensors::Limits::from(&ctx.cfg.limits);
    let header = match safetensors::read_header(&mut &mut *r, size, &limits) {
        Ok(h) => h,
        Err(safetensors::HeaderError::Io(e)) => return Err(e),
        Err(safetensors::HeaderError::Invalid(v)) if v.kind == ProblemKind::LimitExceeded => {
            // A resource limit, not a rule of the format: the file may be valid.
            let name = safetensors_limit(v.code).unwrap_or_default();
            let key = match v.detail("tensor") {
                Some(t) => format!("{name}:{t}"),
                None => name.to_string(),
            };
            let loc = v.offset.map(Location::offset).unwrap_or_default();
            let cfg = ctx.cfg;
            let message = format!("{}; {}; not validated", v.message, raise_hint(name));
            let d = ctx.detect(RuleId::LimitExceeded, key, message, loc);
            d.evidence.insert("problem".into(), json!(v.code));
            if let Some(t) = v.detail("tensor") {
                d.evidence.insert("tensor".into(), json!(t));
            }
            name_limit(d, cfg, name);
            return Ok(None);
        }
        Err(safetensors::HeaderError::Invalid(v)) => {
            let key = match v.detail("tensor") {
                Some(t) => format!("{}:{t}", v.code),
                None => v.code.to_string(),
            };
            let loc = v.offset.map(Location::offset).unwrap_or_default();
            let d = ctx.detect(RuleId::SafetensorsInvalid, key, v.message.clone(), loc);
            d.evidence.insert("violation".into(), json!(v.code));
            if let Some(t) = v.detail("tensor") {
                d.evidence.insert("tensor".into(), json!(t));
            }
            ctx.fact(Fact::Valid, false);
            // An appended pickle or zip (a polyglot) is `trailing-bytes`: say what it is.
            let end = v
                .offset
                .filter(|_| v.code == safetensors::code::TRAILING_BYTES);
            return Ok(end);
        }
    };
    let f = safetensors::facts(&header);
    ctx.fact(Fact::Valid, true);
    ctx.fact(Fact::TensorCount, f.tensor_count);
    ctx.fact(Fact::Parameters, big_number(f.parameters));
    ctx.fact(Fact::Dtypes, json!(f.dtypes));
    ctx.fact(Fact::DataBytes, f.data_bytes);
    ctx.fact(Fact::HeaderLen, f.header_len);
    if let Some(m) = &f.metadata {
        ctx.fact(Fact::Metadata, json!(m));
    }
    if let Some(t) = &f.first_tensor {
        ctx.fact(Fact::FirstTensor, t.as_str());
    }
    if let Some(t) = &f.last_tensor {
        ctx.fact(Fact::LastTensor, t.as_str());
    }
    ctx.tensors = Some(
        header
            .tensors
            .iter()
            .map(|t| (t.name.clone(), t.byte_len()))
            .collect(),
    );
    if ctx.cfg.check_values {
        let bad = match safetensors::scan_values(&mut &mut *r, &header) {
            Ok(b) => b,
            // The file ended early: ST001 `truncated` would have caught a short file; a file
            // that shrank while we read it is reported by the size check in `scan_file`.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Vec::new(),
            Err(e) => return Err(e),
        };
        ctx.fact(Fact::ValuesChecked, true);
        for nf in bad {
            let d = ctx.detect(
                RuleId::SafetensorsNonfinite,
                nf.tensor.clone(),
                format!(
                    "tensor `{}` ({}) holds {} NaN, {} +Inf, {} -Inf values",
                    nf.tensor,
                    nf.dtype.name(),
                    nf.nan,
                    nf.pos_inf,
                    nf.neg_inf
                ),
                Location::offset(nf.first_offset),
            );
            d.evidence.extend([
                ("tensor".to_string(), json!(nf.tensor)),
                ("dtype".to_string(), json!(nf.dtype.name())),
                ("nan".to_string(), json!(nf.nan)),
                ("pos_inf".to_string(), json!(nf.pos_inf)),
                ("neg_inf".to_string(), json!(nf.neg_inf)),
            ]);
        }
    }
    Ok(Some(size))
}

/// The policy limit behind a safetensors sub-code that is a resource limit, not a format rule.
/// The header size stays ST001: past 100 MB the safetensors library itself refuses the file.
fn safetensors_limit(code: &str) -> Option<&'static str> {
    match code {
        safetensors::code::TOO_MANY_TENSORS => Some("safetensors_tensor_count"),
        safetensors::code::RANK_TOO_LARGE => Some("tensor_rank"),
        safetensors::code::JSON_TOO_DEEP => Some("json_depth"),
        _ => None,
    }
}

/// JSON numbers above u64 (parameter counts of absurd headers) are written as strings.
fn big_number(n: u128) -> Value {
    match u64::try_from(n) {
        Ok(v) => json!(v),
        Err(_) => json!(n.to_string()),
    }
}

/// `FMT001`: the content contradicts what the name claims.
fn check_claim(ctx: &mut Ctx<'_>, format: Format) {
    // Unrecognised content is FMT002's business (weight-like names only); FMT001 is for content
    // that is positively something else.
    // A native executable under a weight name is FMT002 `executable` (high), said once.
    if matches!(
        format,
        Format::LfsPointer | Format::Empty | Format::Unknown | Format::Text
    ) || (format.is_native() && is_weight_name(ctx.rel))
    {
        return;
    }
    let Some(claimed) = classify::claimed_format(ctx.rel) else {
        // No claim from the extension; a pickle hiding under a neutral name is still a mismatch
        // when the name says text.
        return;
    };
    if claimed.contains(&format) {
        return;
    }
    let ext = classify::extension(ctx.rel);
    ctx.detect(
        RuleId::FormatMismatch,
        format.as_str(),
        format!(
            "`.{ext}` file holds {} content, not what its extension claims",
            format.as_str()
        ),
        Location::default(),
    )
    .evidence
    .extend([
        ("extension".to_string(), json!(ext)),
        ("detected".to_string(), json!(format.as_str())),
    ]);
}
