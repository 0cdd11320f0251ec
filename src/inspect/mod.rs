//! Per-file inspection: one sequential read feeds the digests and the format inspector.
//!
//! `scan_file` opens a file without following links or blocking on FIFOs, sniffs its first
//! block, picks an inspector by content, lets it pull what it needs through a
//! [`read::HashingReader`], then drains the rest so the digest covers every byte. Inspectors are
//! pure functions of the bytes (under [`Limits`]); they record facts and detections and never
//! execute anything.

pub mod archive;
pub mod blocks;
pub mod bytecode;
pub mod compress;
pub mod config;
pub mod formats;
pub mod gguf;
pub mod hdf5;
pub mod keras;
pub mod marshal;
pub mod native;
pub mod numpy;
pub mod onnx;
pub mod package;
pub mod pickle;
pub mod polyglot;
pub mod problem;
pub mod protobuf;
pub mod ranged;
pub mod read;
pub mod safetensors;
pub mod source;
pub mod tar;
pub mod tf;
pub mod tflite;
pub mod torchscript;
pub mod zip;

#[cfg(test)]
mod limit_tests;

use crate::model::facts::{Fact, FactMap};
use crate::model::problem::ProblemKind;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, BufRead};
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::classify::{self, Format, Kind};
use crate::model::finding::{Detection, Location};
use crate::model::rules::RuleId;

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

/// Opens a file for reading without following a final symlink and without blocking on a FIFO
/// that replaced it since the crawl; refuses anything that is not a regular file.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = open_no_follow(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other(
            "not a regular file (changed since the crawl)",
        ));
    }
    Ok(file)
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
}

/// Without O_NOFOLLOW: refuse a path that is a link when checked (a narrower race than on Unix,
/// where the open itself refuses it).
#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> io::Result<File> {
    if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(io::Error::other("is a symlink (changed since the crawl)"));
    }
    File::open(path)
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
    out.facts = ctx.facts;
    out.detections = fold_per_file(ctx.detections);
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
fn judge(ctx: &mut Ctx<'_>, format: Format, head: &[u8]) -> Kind {
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

/// ELF, PE (an `MZ` stub whose `e_lfanew` points at `PE\0\0`) or Mach-O (thin or fat).
fn executable_kind(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x7fELF") {
        return Some("ELF");
    }
    if head.starts_with(b"MZ") {
        let pe = head
            .get(0x3c..0x40)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
            .and_then(|off| usize::try_from(off).ok())
            .and_then(|off| head.get(off..off.checked_add(4)?));
        if pe == Some(b"PE\0\0") {
            return Some("PE");
        }
    }
    const MACHO: [[u8; 4]; 5] = [
        [0xfe, 0xed, 0xfa, 0xce],
        [0xfe, 0xed, 0xfa, 0xcf],
        [0xce, 0xfa, 0xed, 0xfe],
        [0xcf, 0xfa, 0xed, 0xfe],
        [0xca, 0xfe, 0xba, 0xbe],
    ];
    MACHO
        .iter()
        .any(|m| head.starts_with(m))
        .then_some("Mach-O")
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
fn probes(head: &[u8], sniffed: Format) -> classify::Probes {
    if matches!(sniffed, Format::Unknown | Format::Text | Format::Empty) {
        classify::Probes {
            pickle: pickle::looks_like_pickle(head),
            tf_saved_model: tf::is_saved_model(head),
            onnx: onnx::is_onnx(head),
            lzma: compress::sniff(head) == Some(compress::Compression::Lzma),
            joblib_zf: joblib_zfile_header(head).is_some(),
            onnx_tensor: onnx::is_onnx_value(head),
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
    Ok(match sniffed {
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
        Format::SevenZip | Format::Rar => {
            // No maintained, bounded, pure-Rust reader is wired in for these: say so rather than
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
        Format::TfSavedmodel => formats::inspect_tf(ctx, r, size, true),
        Format::Onnx => {
            let format = formats::inspect_onnx(ctx, r, size);
            let at = ctx.positioned;
            formats::record_polyglots(ctx, at, size, None)?;
            format
        }
        Format::TfGraph => formats::inspect_tf(ctx, r, size, false),
        // Recognised as weights by name and a plausible first byte, not parsed further: Core ML
        // specs are protobuf (field 1, version), Flax checkpoints are a msgpack map.
        Format::Coreml | Format::Msgpack => sniffed,
        // Tensors only: a TensorProto has no graph, no operators, nothing that runs.
        Format::OnnxTensor | Format::Fasttext | Format::Word2vec | Format::TfCheckpoint => sniffed,
        Format::TfMetagraph => formats::inspect_tf_file(ctx, r, size, tf::GraphFile::MetaGraph),
        Format::Elf | Format::Macho | Format::Pe => {
            native::inspect_native(ctx, r)?;
            sniffed
        }
        Format::PythonBytecode => {
            if let Some(pyc) = bytecode::inspect_pyc(ctx, r)? {
                bytecode::judge(ctx, &pyc);
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
        Format::Text => {
            let format = classify::text_format(ctx.rel);
            inspect_text(ctx, r, format)?;
            format
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

/// Reads every pickle in the stream and records what it imports: PKL001 for dangerous or
/// unresolvable imports, PKL002 for unknown ones, PKL003 for the pickle itself, PKL004 when the
/// stream is damaged. `member` names the archive member the stream came from.
pub fn inspect_pickle_stream(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    member: Option<&str>,
) -> io::Result<()> {
    let analysis = pickle::analyze(&mut &mut *r, &pickle_limits(ctx.cfg));
    record_pickle(ctx, &analysis, member);
    Ok(())
}

/// Issue 32: a PyTorch storage record (`<archive>/data/<key>` of a `torch.save` zip) holds raw
/// tensor bytes that `torch.load` reads as bytes, never as a pickle, so its first bytes say
/// nothing (a float can begin `0x80 0x02`, `}` + `0x93` or `c`). Only a complete pickle from a
/// valid PROTO to its STOP is reported, judged by what it imports; anything else is data.
pub fn inspect_storage_record(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, member: &str) {
    let Some(mut analysis) = pickle::analyze_hidden(&mut &mut *r, &pickle_limits(ctx.cfg)) else {
        return;
    };
    if analysis.imports.is_empty() {
        return;
    }
    // Its storages and views are no part of the archive's own pickles.
    analysis.storages.clear();
    record_pickle(ctx, &analysis, Some(member));
}

/// The `storages` or `tensors` member of a tar-based PyTorch file: its pickles, with the raw
/// records between them skipped by their lengths (issue 32).
pub fn inspect_torch_tar_records(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    member: &str,
    kind: pickle::TarRecords,
) {
    let limits = pickle_limits(ctx.cfg);
    let analysis = pickle::analyze_torch_tar_records(&mut &mut *r, kind, &limits);
    record_pickle(ctx, &analysis, Some(member));
}

/// A legacy (non-zip) PyTorch file: its pickles as [`inspect_pickle_stream`] reads them, then
/// its raw storage block against the storages the pickles declare (issue 16, FMT009).
pub fn inspect_torch_legacy(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, member: Option<&str>) {
    let limits = pickle_limits(ctx.cfg);
    let analysis = pickle::analyze_torch_legacy(&mut &mut *r, &limits);
    record_pickle(ctx, &analysis, member);
    if member.is_none() {
        let streams = std::mem::take(&mut ctx.weights_only);
        let verdicts = streams.iter().map(|(_, w)| w);
        record_weights_only(ctx, verdicts, None);
    }
    let shapes = pickle::torch::check_legacy_block(&analysis, r, limits.max_imports);
    detect_shapes(ctx, &shapes, member, "legacy:", "legacy PyTorch file");
}

/// Issue 32: the `torch.load(weights_only=True)` verdict of a PyTorch checkpoint from the
/// verdicts of the pickle streams torch.load reads (`member`: the archive's `data.pkl`, for the
/// location): the fact, and PKL005 naming what is refused when it would refuse.
pub fn record_weights_only<'w>(
    ctx: &mut Ctx<'_>,
    streams: impl Iterator<Item = &'w pickle::torch::WeightsOnly>,
    member: Option<&str>,
) {
    let mut all = pickle::torch::WeightsOnly::default();
    for w in streams {
        all.merge(w);
    }
    let globals: Vec<&String> = all.globals.keys().collect();
    let opcodes: Vec<&str> = all.opcodes.keys().copied().collect();
    ctx.fact(
        Fact::TorchWeightsOnly,
        json!({
            "accepted": all.accepted(),
            "refused_globals": globals,
            "refused_opcodes": opcodes,
            "mirrors": crate::knowledge::WEIGHTS_ONLY_MIRRORS,
        }),
    );
    if all.accepted() {
        return;
    }
    let list = |items: &[&str]| {
        items
            .iter()
            .take(8)
            .map(|g| format!("`{g}`"))
            .collect::<Vec<_>>()
            .join(", ")
            + if items.len() > 8 { ", ..." } else { "" }
    };
    let mut why = Vec::new();
    if !globals.is_empty() {
        let names: Vec<&str> = globals.iter().map(|g| g.as_str()).collect();
        why.push(format!(
            "{} global(s) outside its allowlist ({})",
            names.len(),
            list(&names)
        ));
    }
    if !opcodes.is_empty() {
        why.push(format!(
            "opcode(s) it does not implement ({})",
            list(&opcodes)
        ));
    }
    let loc = Location {
        offset: all.first_offset(),
        member: member.map(str::to_string),
        ..Location::default()
    };
    let d = ctx.detect(
        RuleId::PickleNeedsUnsafeLoad,
        "weights-only",
        format!(
            "torch.load(weights_only=True) refuses this checkpoint: {}; loading it needs weights_only=False, which runs whatever the pickle imports",
            why.join(" and ")
        ),
        loc,
    );
    d.evidence.insert("globals".into(), json!(globals));
    d.evidence.insert("opcodes".into(), json!(opcodes));
    d.evidence.insert(
        "mirrors".into(),
        json!(crate::knowledge::WEIGHTS_ONLY_MIRRORS),
    );
}

/// One FMT009 detection per exploit-shaped structure of one stream; `tag` keeps the keys of
/// two streams of one file apart, `what` names the stream in the message.
fn detect_shapes(
    ctx: &mut Ctx<'_>,
    shapes: &[pickle::Shape],
    member: Option<&str>,
    tag: &str,
    what: &str,
) {
    let prefix = member.map(|m| format!("{m}:")).unwrap_or_default();
    let within = member
        .map(|m| format!(" in archive member `{m}`"))
        .unwrap_or_default();
    for (i, shape) in shapes.iter().enumerate() {
        let loc = Location {
            offset: Some(shape.offset),
            member: member.map(str::to_string),
            ..Location::default()
        };
        let d = ctx.detect(
            RuleId::FormatExploitShape,
            format!("{prefix}{tag}{}:{i}", shape.code),
            format!("{what}{within}: {}", shape.message),
            loc,
        );
        d.evidence.insert("problem".into(), json!(shape.code));
    }
}

fn record_pickle(ctx: &mut Ctx<'_>, a: &pickle::Analysis, member: Option<&str>) {
    let extra = &ctx.cfg.pickle_extra;
    let at = |offset: u64| Location {
        offset: Some(offset),
        member: member.map(str::to_string),
        ..Location::default()
    };
    let prefix = member.map(|m| format!("{m}:")).unwrap_or_default();
    let within = member
        .map(|m| format!(" in archive member `{m}`"))
        .unwrap_or_default();

    // Facts: protocol, globals, layout. Members add to the file's lists.
    let mut globals: BTreeSet<String> = ctx
        .facts
        .fact_strings(Fact::PickleGlobals)
        .into_iter()
        .collect();
    for imp in &a.imports {
        globals.insert(import_name(imp));
    }
    ctx.fact(Fact::PickleGlobals, json!(globals));
    if let Some(first) = a.pickles.first() {
        ctx.facts
            .entry(Fact::PickleProtocol.key())
            .or_insert_with(|| json!(first.protocol));
    }
    let count = ctx
        .facts
        .fact(Fact::PickleCount)
        .and_then(Value::as_u64)
        .unwrap_or(0);
    ctx.fact(Fact::PickleCount, count + a.pickles.len() as u64);
    if let Some(t) = &a.trailing
        && member.is_none()
    {
        ctx.fact(Fact::PickleTrailingOffset, t.offset);
    }
    if !a.raw_regions.is_empty() {
        let bytes: u64 = a.raw_regions.iter().map(|r| r.len).sum();
        ctx.fact(Fact::PickleRawBytes, bytes);
    }

    if !a.pickles.is_empty() || !a.imports.is_empty() {
        let first = a.pickles.first().map(|p| p.offset).unwrap_or(0);
        let d = ctx.detect(
            RuleId::PickleFormat,
            format!("{prefix}pickle"),
            format!(
                "pickle data{within} (protocol {}, {} pickle(s)); loading it runs whatever it imports",
                a.pickles.first().map(|p| p.protocol).unwrap_or(0),
                a.pickles.len()
            ),
            at(first),
        );
        d.evidence.insert("pickles".into(), json!(a.pickles.len()));
    }

    // One detection per distinct global (per member), at its first occurrence.
    let mut seen: BTreeMap<String, (usize, &pickle::Import, bool, Option<&'static str>)> =
        BTreeMap::new();
    for imp in &a.imports {
        let key = import_name(imp);
        let e = seen.entry(key).or_insert((0, imp, false, None));
        e.0 += 1;
        e.2 |= imp.called;
        e.3 = e.3.or(imp.call_opcode);
    }
    for (name, (occurrences, imp, called, call_opcode)) in seen {
        // Issue 32: an unknown callable the pickle calls is judged by what its name says.
        let by_name = match (&imp.module, &imp.name) {
            (Some(m), Some(n)) if call_opcode.is_some_and(is_call) => {
                crate::knowledge::judge_by_name(m, n)
            }
            _ => None,
        };
        let how = if called {
            "imports and calls"
        } else {
            "imports"
        };
        let (rule, severity, message, verdict) = match (&imp.module, &imp.name) {
            (Some(m), Some(n)) => match crate::knowledge::classify_global(m, n, extra) {
                // Issue 15, cause 4: a partial over a safe or unknown global takes its verdict,
                // and that global's own finding (it counts as called) says so.
                crate::knowledge::Verdict::Dangerous { .. }
                    if crate::knowledge::is_call_wrapper(m, n)
                        && wrapped_verdict(a, &name, extra).is_some_and(|v| {
                            !matches!(v, crate::knowledge::Verdict::Dangerous { .. })
                        }) =>
                {
                    continue;
                }
                crate::knowledge::Verdict::Dangerous { category, reason } => (
                    RuleId::PickleUnsafeGlobal,
                    if called {
                        crate::model::finding::Severity::Critical
                    } else {
                        crate::model::finding::Severity::High
                    },
                    // Issue 16: a dotted name that walks out of its module says how.
                    match crate::knowledge::explain_traversal(m, n) {
                        Some(path) => {
                            format!("pickle{within} {how} `{name}`: {reason}; traversal {path}")
                        }
                        None => format!("pickle{within} {how} `{name}`: {reason}"),
                    },
                    category,
                ),
                crate::knowledge::Verdict::Safe => continue,
                crate::knowledge::Verdict::Unknown if by_name.is_some() => (
                    RuleId::PickleUnsafeGlobal,
                    crate::model::finding::Severity::Critical,
                    format!(
                        "pickle{within} {how} `{name}`, which no table knows; judged by its name: it {}",
                        by_name.unwrap_or_default()
                    ),
                    crate::knowledge::JUDGED_BY_NAME,
                ),
                crate::knowledge::Verdict::Unknown => (
                    RuleId::PickleUnknownGlobal,
                    // Issue 15, cause 7: a global that is only referenced (a stored type, a
                    // hash function attribute) runs nothing by itself; a called one does.
                    if called {
                        RuleId::PickleUnknownGlobal.default_severity()
                    } else {
                        crate::model::finding::Severity::Low
                    },
                    format!("pickle{within} {how} `{name}`, which is not on the safe list"),
                    "unknown",
                ),
            },
            _ => (
                // An import that cannot be resolved statically is how scanners are evaded.
                RuleId::PickleUnsafeGlobal,
                crate::model::finding::Severity::Critical,
                format!(
                    "pickle{within} {how} a global that cannot be resolved statically ({}{})",
                    imp.opcode,
                    imp.note
                        .as_deref()
                        .map(|n| format!(": {n}"))
                        .unwrap_or_default()
                ),
                "unresolvable",
            ),
        };
        let d = ctx.detect(rule, format!("{prefix}{name}"), message, at(imp.offset));
        d.severity = severity;
        d.evidence.extend([
            ("global".to_string(), json!(name)),
            ("module".to_string(), json!(imp.module)),
            ("name".to_string(), json!(imp.name)),
            ("called".to_string(), json!(called)),
            ("opcode".to_string(), json!(imp.opcode)),
            ("category".to_string(), json!(verdict)),
            ("occurrences".to_string(), json!(occurrences)),
        ]);
        if let Some(c) = call_opcode {
            d.evidence.insert("call_opcode".into(), json!(c));
        }
        if verdict == crate::knowledge::JUDGED_BY_NAME {
            d.evidence.insert("judged".into(), json!("name"));
        }
        if rule == RuleId::PickleUnsafeGlobal
            && let (Some(m), Some(n)) = (&imp.module, &imp.name)
        {
            let refs = crate::knowledge::references(m, n);
            if !refs.is_empty() {
                d.evidence.insert("references".into(), json!(refs));
            }
        }
    }

    record_shapes(ctx, a, member);
    let verdict = pickle::torch::weights_only(a, &ctx.cfg.pickle_extra);
    ctx.weights_only.push((member.map(str::to_string), verdict));

    if let Some(err) = &a.error {
        let cfg = ctx.cfg;
        let d = ctx.detect(
            RuleId::PickleMalformed,
            format!("{prefix}{}", err.code),
            format!(
                "pickle stream{within} cannot be fully parsed at byte {}: {} ({} import(s) found before it)",
                err.offset.unwrap_or(0),
                err.message,
                a.imports.len()
            ),
            at(err.offset.unwrap_or(0)),
        );
        d.evidence.insert("problem".into(), json!(err.code));
        // Limit stops stay PKL004 (the stream was not read to its end) and name the limit.
        let limit = match err.code {
            "limit-opcodes" => Some("pickle_opcodes"),
            "limit-memo" => Some("pickle_memo"),
            "limit-line" => Some("pickle_string_bytes"),
            _ => None,
        };
        if let Some(name) = limit {
            d.message = format!("{}; {}", d.message, raise_hint(name));
            name_limit(d, cfg, name);
        }
    }
}

/// Exploit-shaped structures (issue 16) as FMT009: writes into globals or scalars, tensor views
/// past their storage. PyTorch storages are kept for the archive-level check of `data/<key>`.
fn record_shapes(ctx: &mut Ctx<'_>, a: &pickle::Analysis, member: Option<&str>) {
    detect_shapes(ctx, &a.shapes, member, "", "pickle");
    let bound = ctx.cfg.limits.archive_members;
    for s in &a.storages {
        if ctx.torch_storages.len() as u64 >= bound {
            break;
        }
        ctx.torch_storages
            .push((member.map(str::to_string), s.clone()));
    }
}

/// `module.name`, or `?` parts for what could not be resolved.
/// Issue 15, cause 4: the verdict of the call wrapper `name` (`functools.partial`) from what it
/// wraps: the worst of its targets' verdicts (a wrapper over a wrapper is followed). `None`, so
/// the wrapper keeps its own verdict, when an import of it was never built or wraps a value that
/// is not a named global.
fn wrapped_verdict(
    a: &pickle::Analysis,
    name: &str,
    extra: &crate::knowledge::ExtraLists,
) -> Option<crate::knowledge::Verdict> {
    use crate::knowledge::Verdict;
    let mut worst = Verdict::Safe;
    let mut visited = BTreeSet::new();
    let mut pending = vec![name.to_string()];
    while let Some(wrapper) = pending.pop() {
        if !visited.insert(wrapper.clone()) {
            continue;
        }
        for imp in a.imports.iter().filter(|i| import_name(i) == wrapper) {
            let wraps = imp.wraps.as_ref()?;
            if wraps.opaque || wraps.targets.is_empty() {
                return None;
            }
            for target in wraps.targets.iter().filter_map(|&t| a.imports.get(t)) {
                let (Some(m), Some(n)) = (&target.module, &target.name) else {
                    return None;
                };
                if crate::knowledge::is_call_wrapper(m, n) {
                    pending.push(import_name(target));
                    continue;
                }
                match crate::knowledge::classify_global(m, n, extra) {
                    v @ Verdict::Dangerous { .. } => return Some(v),
                    Verdict::Unknown => worst = Verdict::Unknown,
                    Verdict::Safe => {}
                }
            }
        }
    }
    Some(worst)
}

/// Sites listed in a folded finding's evidence (the count says how many there were).
const MAX_FOLDED_SITES: usize = 1000;

/// Issue 32: one warning per file. The PKL002 detections of a file (one per unknown global and
/// archive member) become one finding listing every global with its call/reference count and
/// offset in `evidence.sites`, and so do the CFG003 detections of a config (one per unknown
/// target or tag, with its line). A file with one such detection keeps it as it was (same key,
/// so the same fingerprint) with its one site listed. Policy exceptions match by rule and path,
/// so an exception written for any of the folded findings still matches the folded one.
pub fn fold_per_file(detections: Vec<Detection>) -> Vec<Detection> {
    let mut out = Vec::with_capacity(detections.len());
    let mut groups: BTreeMap<RuleId, Vec<Detection>> = BTreeMap::new();
    for d in detections {
        if matches!(
            d.rule,
            RuleId::PickleUnknownGlobal | RuleId::ConfigUnknownTarget
        ) {
            groups.entry(d.rule).or_default().push(d);
        } else {
            out.push(d);
        }
    }
    for (rule, group) in groups {
        out.push(fold_group(rule, group));
    }
    out
}

/// One site of a folded detection: its evidence plus where it is.
fn site(d: &Detection) -> Value {
    let mut site = d.evidence.clone();
    site.insert("severity".into(), json!(d.severity));
    for (k, v) in [
        ("offset", d.location.offset.map(|o| json!(o))),
        ("line", d.location.line.map(|l| json!(l))),
        ("member", d.location.member.as_ref().map(|m| json!(m))),
    ] {
        if let Some(v) = v {
            site.insert(k.into(), v);
        }
    }
    Value::Object(site.into_iter().collect())
}

/// The folded detection of one rule's detections in one file (see [`fold_per_file`]).
fn fold_group(rule: RuleId, mut group: Vec<Detection>) -> Detection {
    let sites: Vec<Value> = group.iter().take(MAX_FOLDED_SITES).map(site).collect();
    if group.len() == 1
        && let Some(mut only) = group.pop()
    {
        only.evidence.insert("count".into(), json!(1));
        only.evidence.insert("sites".into(), json!(sites));
        return only;
    }
    let count = group.len();
    let severity = group.iter().map(|d| d.severity).max();
    let named = |d: &Detection| {
        let what = d
            .evidence
            .get("global")
            .or_else(|| d.evidence.get("target"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let how = match d.evidence.get("called").and_then(Value::as_bool) {
            Some(true) => " (called)",
            Some(false) => " (referenced)",
            None => "",
        };
        format!("`{what}`{how}")
    };
    let listed: Vec<String> = group.iter().take(8).map(named).collect();
    let more = if count > 8 { ", ..." } else { "" };
    // Located at the earliest site (the detections come sorted by name).
    let earliest = (0..group.len())
        .min_by_key(|&i| group.get(i).map(|d| (d.location.offset, d.location.line)))
        .unwrap_or(0);
    let first = group.swap_remove(earliest);
    let (key, message) = match rule {
        RuleId::PickleUnknownGlobal => (
            "unknown-globals",
            format!(
                "pickle imports {count} globals that are not on the safe list: {}{more}",
                listed.join(", ")
            ),
        ),
        _ => (
            "unknown-targets",
            format!(
                "config names {count} targets that are not on the safe list: {}{more}",
                listed.join(", ")
            ),
        ),
    };
    let mut d = Detection::new(rule, first.path.clone(), key, message).at(first.location.clone());
    d.severity = severity.unwrap_or(first.severity);
    d.evidence.insert("count".into(), json!(count));
    d.evidence.insert("sites".into(), json!(sites));
    d
}

/// Opcodes that call what they are given (issue 32's name judge counts only these; APPEND,
/// SETITEM(S) on an instance invoke container methods of a type the pickle built).
fn is_call(opcode: &str) -> bool {
    matches!(
        opcode,
        "REDUCE" | "NEWOBJ" | "NEWOBJ_EX" | "INST" | "OBJ" | "BUILD"
    )
}

fn import_name(imp: &pickle::Import) -> String {
    format!(
        "{}.{}",
        imp.module.as_deref().unwrap_or("?"),
        imp.name.as_deref().unwrap_or("?")
    )
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
    match format {
        Format::Python => return source::inspect_python(ctx, r),
        Format::Notebook => return source::inspect_notebook(ctx, r),
        Format::Markdown if classify::CARD_NAMES.contains(&name) => {
            ctx.card = source::inspect_card(ctx, r)?;
            return Ok(());
        }
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
    if more && format == Format::Json && !wants_text(ctx.rel) {
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
fn inspect_safetensors(
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

#[cfg(test)]
mod format_tests {
    use super::{ScanConfig, scan_file};
    use crate::classify::Format;

    fn scan(name: &str, bytes: &[u8]) -> super::FileScan {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        scan_file(&path, name, bytes.len() as u64, &ScanConfig::default())
    }

    /// Issue 17: a Flex op whose NodeDef runs `ReadFile` is FMT006 with the op and node named;
    /// the TF op names are facts; builtin ops are named from the schema.
    #[test]
    fn issue_17_tflite_flex_file_op_is_tf_unsafe_op() {
        use crate::inspect::tflite::tests::{flex_options, model_with_operators, node_def};
        use crate::model::rules::RuleId;
        let opts = flex_options("ReadFile", &node_def("steal", "ReadFile"));
        let bytes = model_with_operators(
            &[(3, None), (32, Some("FlexReadFile"))],
            &[(0, None), (1, Some(&opts))],
        );
        let scan = scan("model.tflite", &bytes);
        assert_eq!(scan.format, Some(Format::Tflite));
        let d: Vec<_> = scan
            .detections
            .iter()
            .filter(|d| d.rule == RuleId::TfUnsafeOp)
            .collect();
        assert_eq!(d.len(), 1, "{:?}", scan.detections);
        assert_eq!(d[0].evidence["op"], "ReadFile");
        assert_eq!(d[0].evidence["node"], "steal");
        assert_eq!(scan.facts["tflite"]["flex_ops"][0], "ReadFile");
        assert_eq!(scan.facts["tflite"]["operator_codes"][0]["name"], "CONV_2D");
        // The custom op itself is still FMT008.
        assert!(
            scan.detections
                .iter()
                .any(|d| d.rule == RuleId::CustomOperator)
        );
    }

    #[test]
    fn coreml_spec_is_recorded_as_coreml_not_onnx() {
        // Issue 18: a Core ML spec (field 1 = spec version 4, field 2 = description) also
        // starts like an ONNX ModelProto.
        let spec = b"\x08\x04\x12\x04\x0a\x02\x0a\x00";
        assert_eq!(scan("model.mlmodel", spec).format, Some(Format::Coreml));
        assert_eq!(scan("model.onnx", spec).format, Some(Format::Onnx));
    }
}

#[cfg(test)]
mod fold_tests {
    use super::*;

    fn unknown(global: &str, offset: u64, called: bool) -> Detection {
        let mut d = Detection::new(RuleId::PickleUnknownGlobal, "m.pkl", global, "m")
            .at(Location::offset(offset));
        d.severity = if called {
            crate::model::finding::Severity::Medium
        } else {
            crate::model::finding::Severity::Low
        };
        d.evidence.insert("global".into(), json!(global));
        d.evidence.insert("called".into(), json!(called));
        d
    }

    #[test]
    fn unknown_globals_fold_into_one_detection_per_file_with_every_site() {
        let other = Detection::new(RuleId::PickleFormat, "m.pkl", "pickle", "p");
        let folded = fold_per_file(vec![
            unknown("a.B", 10, false),
            other,
            unknown("a.c", 20, true),
        ]);
        assert_eq!(folded.len(), 2);
        let d = &folded[1];
        assert_eq!(d.rule, RuleId::PickleUnknownGlobal);
        assert_eq!(d.key, "unknown-globals");
        assert_eq!(d.location.offset, Some(10));
        assert_eq!(d.severity, crate::model::finding::Severity::Medium);
        assert_eq!(d.evidence["count"], json!(2));
        assert_eq!(d.evidence["sites"][1]["global"], json!("a.c"));
        assert_eq!(d.evidence["sites"][1]["offset"], json!(20));
        assert!(
            d.message.contains("`a.B` (referenced), `a.c` (called)"),
            "{}",
            d.message
        );
    }

    #[test]
    fn a_single_unknown_global_keeps_its_key_and_fingerprint() {
        let folded = fold_per_file(vec![unknown("a.B", 10, true)]);
        assert_eq!(folded.len(), 1);
        assert_eq!(folded[0].key, "a.B");
        assert_eq!(folded[0].evidence["count"], json!(1));
        assert_eq!(folded[0].evidence["global"], json!("a.B"));
    }
}
