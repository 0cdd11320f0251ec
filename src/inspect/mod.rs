//! Per-file inspection: one sequential read feeds the digests and the format inspector.
//!
//! `scan_file` opens a file without following links or blocking on FIFOs, sniffs its first
//! block, picks an inspector by content, lets it pull what it needs through a
//! [`read::HashingReader`], then drains the rest so the digest covers every byte. Inspectors are
//! pure functions of the bytes (under [`Limits`]); they record facts and detections and never
//! execute anything.

pub mod read;
pub mod safetensors;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead};
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::classify::{self, Format, Kind};
use crate::finding::{Detection, Location};
use crate::rules::RuleId;

/// Every resource limit, by name. Values come from the policy's `[limits]` table.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest file scanned, in bytes.
    pub max_file_bytes: u64,
    /// Largest safetensors header.
    pub safetensors_header_bytes: u64,
    /// Pickle opcodes per stream.
    pub pickle_opcodes: u64,
    /// Pickle memo entries.
    pub pickle_memo: u64,
    /// Longest pickle string argument kept in memory.
    pub pickle_string_bytes: u64,
    /// Archive nesting depth.
    pub archive_depth: u64,
    /// Members per archive.
    pub archive_members: u64,
    /// Decompressed bytes per member.
    pub archive_member_bytes: u64,
    /// Decompressed bytes per archive.
    pub archive_total_bytes: u64,
    /// Decompression ratio (bomb detection).
    pub archive_ratio: u64,
    /// JSON nesting depth.
    pub json_depth: u64,
    /// JSON files read into memory (configs, indexes, notebooks).
    pub json_bytes: u64,
    /// YAML front matter size.
    pub yaml_bytes: u64,
    /// Source files read into memory.
    pub code_file_bytes: u64,
    /// GGUF key-value pairs.
    pub gguf_kv_count: u64,
    /// GGUF tensors.
    pub gguf_tensor_count: u64,
    /// GGUF metadata bytes.
    pub gguf_metadata_bytes: u64,
    /// ONNX / protobuf nesting depth.
    pub onnx_depth: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 1 << 40,
            safetensors_header_bytes: 100_000_000,
            pickle_opcodes: 50_000_000,
            pickle_memo: 1_000_000,
            pickle_string_bytes: 1 << 20,
            archive_depth: 4,
            archive_members: 100_000,
            archive_member_bytes: 16 << 30,
            archive_total_bytes: 64 << 30,
            archive_ratio: 1000,
            json_depth: 128,
            json_bytes: 64 << 20,
            yaml_bytes: 256 << 10,
            code_file_bytes: 8 << 20,
            gguf_kv_count: 1_000_000,
            gguf_tensor_count: 1_000_000,
            gguf_metadata_bytes: 512 << 20,
            onnx_depth: 64,
        }
    }
}

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
    /// Pickle globals the policy adds to the safe list (`module.name` or `module.*`).
    pub safe_globals: Vec<String>,
    /// Pickle globals the policy adds to the dangerous list.
    pub dangerous_globals: Vec<String>,
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
}

/// Collects facts and detections while a file (and the archives inside it) is inspected.
pub struct Ctx<'a> {
    /// Configuration.
    pub cfg: &'a ScanConfig,
    /// The file's relative path.
    pub rel: &'a str,
    /// Facts so far.
    pub facts: Map<String, Value>,
    /// Detections so far.
    pub detections: Vec<Detection>,
    /// See [`FileScan::tensors`].
    pub tensors: Option<BTreeMap<String, u64>>,
}

impl Ctx<'_> {
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
    pub fn fact(&mut self, key: &str, value: impl Into<Value>) {
        self.facts.insert(key.to_string(), value.into());
    }
}

/// Opens a file for reading without following a final symlink and without blocking on a FIFO
/// that replaced it since the crawl; refuses anything that is not a regular file.
pub fn open_regular(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other(
            "not a regular file (changed since the crawl)",
        ));
    }
    Ok(file)
}

/// Scans one regular file: digests plus format inspection, in one read.
pub fn scan_file(open: &Path, rel: &str, expected_size: u64, cfg: &ScanConfig) -> FileScan {
    let mut out = FileScan::default();
    let unreadable = |out: &mut FileScan, e: &dyn std::fmt::Display| {
        out.detections.push(
            Detection::new(
                RuleId::UnreadableFile,
                rel,
                "read",
                format!("cannot read file: {e}"),
            )
            .with("error", e.to_string()),
        );
    };
    let file = match open_regular(open) {
        Ok(f) => f,
        Err(e) => {
            unreadable(&mut out, &e);
            return out;
        }
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(expected_size);
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
    let block = if cfg.block_size == 0 {
        read::DEFAULT_BLOCK
    } else {
        cfg.block_size
    };
    // Small files get a small buffer: a tree of 100,000 config files should not allocate 1 MiB each.
    let block = block.min(size.saturating_add(1).max(4096) as usize);
    let mut reader = read::HashingReader::new(file, block, cfg.sha512);
    let mut ctx = Ctx {
        cfg,
        rel,
        facts: Map::new(),
        detections: Vec::new(),
        tensors: None,
    };
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
            unreadable(&mut out, &e);
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
    out.detections = ctx.detections;
    out.tensors = ctx.tensors;
    out
}

/// Picks the inspector by content and runs it. Returns the final format and kind.
fn inspect_file(
    ctx: &mut Ctx<'_>,
    r: &mut read::HashingReader<File>,
    size: u64,
) -> io::Result<(Format, Kind)> {
    let head = r.fill_buf()?;
    let head = head
        .get(..head.len().min(64 << 10))
        .unwrap_or(head)
        .to_vec();
    let sniffed = classify::sniff(&head, size);
    let format = dispatch(ctx, r, &head, sniffed, size)?;
    check_claim(ctx, format);
    let kind = classify::kind_of(ctx.rel, format);
    if kind == Kind::Weights
        || classify::WEIGHT_EXTENSIONS.contains(&classify::extension(ctx.rel).as_str())
    {
        if matches!(format, Format::Unknown | Format::Text) && is_weight_name(ctx.rel) {
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
    Ok((format, kind))
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

/// Runs the inspector for the sniffed format. Returns the refined format.
fn dispatch(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    head: &[u8],
    sniffed: Format,
    size: u64,
) -> io::Result<Format> {
    let _ = head;
    Ok(match sniffed {
        Format::Safetensors => {
            inspect_safetensors(ctx, r, size)?;
            Format::Safetensors
        }
        Format::Text => classify::text_format(ctx.rel),
        other => other,
    })
}

/// Strict safetensors validation (ST001), facts, optional value scan (ST002).
fn inspect_safetensors(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, size: u64) -> io::Result<()> {
    let limits = safetensors::Limits {
        max_header_bytes: ctx.cfg.limits.safetensors_header_bytes,
        max_json_depth: ctx.cfg.limits.json_depth.min(usize::MAX as u64) as usize,
        ..safetensors::Limits::default()
    };
    let header = match safetensors::read_header(&mut &mut *r, size, &limits) {
        Ok(h) => h,
        Err(safetensors::HeaderError::Io(e)) => return Err(e),
        Err(safetensors::HeaderError::Invalid(v)) => {
            let key = match &v.tensor {
                Some(t) => format!("{}:{t}", v.code),
                None => v.code.to_string(),
            };
            let loc = v.offset.map(Location::offset).unwrap_or_default();
            let d = ctx.detect(RuleId::SafetensorsInvalid, key, v.message.clone(), loc);
            d.evidence.insert("violation".into(), json!(v.code));
            if let Some(t) = &v.tensor {
                d.evidence.insert("tensor".into(), json!(t));
            }
            ctx.fact("valid", false);
            return Ok(());
        }
    };
    let f = safetensors::facts(&header);
    ctx.fact("valid", true);
    ctx.fact("tensor_count", f.tensor_count);
    ctx.fact("parameters", big_number(f.parameters));
    ctx.fact("dtypes", json!(f.dtypes));
    ctx.fact("data_bytes", f.data_bytes);
    ctx.fact("header_len", f.header_len);
    if let Some(m) = &f.metadata {
        ctx.fact("metadata", json!(m));
    }
    if let Some(t) = &f.first_tensor {
        ctx.fact("first_tensor", t.as_str());
    }
    if let Some(t) = &f.last_tensor {
        ctx.fact("last_tensor", t.as_str());
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
        ctx.fact("values_checked", true);
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
    Ok(())
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
    if format == Format::LfsPointer || format == Format::Empty {
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
