//! Header mode (`scan hf://… --remote headers`): a file is inspected from a few byte ranges
//! instead of one full read, and what was not read is recorded as a fact, never passed silently.
//!
//! The ranges per format:
//! - safetensors: the 8-byte length, then the declared header (bounded by the format's 100 MB
//!   cap) through the same validator as a full read; tensor bytes are not read, so value checks
//!   (NaN/Inf) are reported as not done;
//! - zip (PyTorch, Keras, npz): the end of central directory, the central directory, then only
//!   the members that can hold code or metadata (`data.pkl`, `*.pkl`, `version`, `code/`, …)
//!   with their local headers, through the same zip walker and member inspectors; PyTorch tensor
//!   storages (`<archive>/data/<key>`) are left unread, and their sizes still checked against the
//!   pickle's declarations from the central directory;
//!   (the central-directory records are decoded by the zip module's own decoder);
//! - GGUF: the header, metadata and tensor-info table (read lazily, as far as the parser goes);
//! - HDF5 and TFLite: the same inspectors as a local scan, reading the small structures they
//!   follow through a block cache over range requests (`inspect::blocks`);
//! - safetensors and GGUF also get the polyglot probes of a local scan (an HDF5 superblock at
//!   0, 512, 1024, …, a zip end record in the last 64 KiB, a pickle after the declared data),
//!   a few [`super::blocks::BLOCK`]-byte blocks each; a probe that a cap or a failed request
//!   stops is listed under `not_checked` and is a finding;
//! - ONNX: the same protobuf walk as a full read, over ranges that jump over what the walk
//!   skips (tensor payloads), so only the graph, names, attributes and external-data entries
//!   are fetched; then the same polyglot probes; TensorFlow graphs (`saved_model.pb`, frozen
//!   `.pb`, `.meta`) the same way, without probes (a local scan runs none on them);
//! - text (configs, code, cards, tokenizers) up to [`WHOLE_TEXT_BYTES`]: read whole, digest
//!   computed; any file up to [`HEAD_BYTES`] is scanned whole from its first range;
//! - anything else: the first bytes, for sniffing; its content is not covered.
//!
//! Positioned reads share the file's caps ([`BUDGET_BYTES`], [`MAX_REQUESTS`]) with the rest,
//! and the `coverage` fact lists them under `positioned` (checks, bytes, requests).
//!
//! The byte source is a trait so the inspection stays free of HTTP; the engine implements it
//! with range requests.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io::{self, BufRead, Read};

use serde_json::{Value, json};

pub use super::blocks::RangeSource;
use super::blocks::{self, Blocks};
use super::context::{Ctx, FileScan, ScanConfig};
use super::formats;
use super::read::Positioned;
use crate::classify::{self, Format};
use crate::model::facts::Fact;

/// Bytes read for sniffing.
pub const HEAD_BYTES: u64 = 64 << 10;
/// Text files (configs, code, cards, tokenizers) up to this size are read whole.
pub const WHOLE_TEXT_BYTES: u64 = 64 << 20;
/// A zip member that may hold code or metadata is read when its compressed size is at most this.
pub const MEMBER_BYTES: u64 = 64 << 20;
/// Most bytes held from one file's ranges (header, central directory, members).
pub const BUDGET_BYTES: u64 = 256 << 20;
/// Most range requests for one file: a hostile archive with thousands of scattered members
/// makes the file not covered instead of costing a request each.
pub const MAX_REQUESTS: u64 = 1000;
/// Ranges of a zip closer than this are fetched as one request.
const MERGE_GAP: u64 = 64 << 10;
/// Largest range fetched by the lazy sequential reader in one request.
const MAX_CHUNK: u64 = 8 << 20;
/// First range fetched after a jump (the next field's header, usually a small message).
const JUMP_CHUNK: u64 = 16 << 10;

/// How much of a file a header-mode scan saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Every byte was read (digest computed).
    Complete,
    /// Everything that can hold code, metadata or a format violation was read; only tensor data
    /// was not (findings from unread bytes are impossible, except value checks and checksums).
    Structure,
    /// Content that could hold code or a format violation was not read.
    Partial,
}

impl Level {
    /// `complete`, `structure` or `partial`, as the report records it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Complete => "complete",
            Level::Structure => "structure",
            Level::Partial => "partial",
        }
    }
}

/// What a header-mode scan read of one file, and what it could therefore not check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// How much was covered.
    pub level: Level,
    /// Bytes fetched.
    pub bytes_read: u64,
    /// Range requests made.
    pub requests: u64,
    /// What was not read (`tensor-data`, `member:<name>`, `content`), at most 100 entries.
    pub unread: Vec<String>,
    /// Checks that need the unread bytes (`sha256`, `tensor-values`, `member-crc`, …).
    pub not_checked: Vec<&'static str>,
    /// Why the content is not covered, for a partial file.
    pub reason: Option<String>,
    /// `headers`, or `full` for a streamed file whose positioned checks read ranges as well.
    pub mode: &'static str,
    /// Positioned checks (`hdf5`, `tflite`, `polyglot`) that ran to the end on byte ranges.
    pub positioned: Vec<&'static str>,
    /// Bytes and requests those checks cost (included in `bytes_read` and `requests`).
    pub positioned_bytes: u64,
    /// See `positioned_bytes`.
    pub positioned_requests: u64,
}

impl Coverage {
    /// Header-mode coverage at `level`, nothing read yet.
    pub fn new(level: Level) -> Coverage {
        Coverage {
            level,
            bytes_read: 0,
            requests: 0,
            unread: Vec::new(),
            not_checked: Vec::new(),
            reason: None,
            mode: "headers",
            positioned: Vec::new(),
            positioned_bytes: 0,
            positioned_requests: 0,
        }
    }

    /// Adds what positioned reads over ranges did: the checks that finished, those a cap or a
    /// failed request stopped (not checked; the file is then partial), and their cost.
    pub fn add_positioned(&mut self, stats: &blocks::Stats) {
        self.positioned.extend(&stats.checked);
        self.positioned_bytes += stats.fetched;
        self.positioned_requests += stats.requests;
        if !stats.not_checked.is_empty() {
            self.not_checked.extend(&stats.not_checked);
            self.level = Level::Partial;
            if let Some(f) = &stats.failure {
                self.reason = Some(format!(
                    "{} not checked: {}",
                    stats.not_checked.join(", "),
                    f.message
                ));
            }
        }
    }

    /// The `coverage` fact.
    pub fn to_fact(&self, size: u64) -> Value {
        let mut v = json!({
            "mode": self.mode,
            "level": self.level.as_str(),
            "bytes_read": self.bytes_read,
            "size": size,
            "requests": self.requests,
        });
        if !self.unread.is_empty() {
            v["unread"] = json!(self.unread);
        }
        if !self.not_checked.is_empty() {
            v["not_checked"] = json!(self.not_checked);
        }
        if let Some(r) = &self.reason {
            v["reason"] = json!(r);
        }
        if !self.positioned.is_empty() || self.positioned_requests > 0 {
            v["positioned"] = json!({
                "checks": self.positioned,
                "bytes": self.positioned_bytes,
                "requests": self.positioned_requests,
            });
        }
        v
    }
}

/// A range source that keeps what it fetched (bounded by [`BUDGET_BYTES`]) and counts it.
struct Cached<'a> {
    src: &'a mut dyn RangeSource,
    size: u64,
    pieces: Vec<(u64, Vec<u8>)>,
    held: u64,
    fetched: u64,
    requests: u64,
}

impl Cached<'_> {
    /// `[offset, offset + len)` clipped to the file, from what was fetched when it covers it.
    fn get(&mut self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let offset = offset.min(self.size);
        let len = len.min(self.size - offset);
        if len == 0 {
            return Ok(Vec::new());
        }
        let end = offset + len;
        for (start, bytes) in &self.pieces {
            let piece_end = start + bytes.len() as u64;
            if *start <= offset && end <= piece_end {
                let a = usize::try_from(offset - start).unwrap_or(usize::MAX);
                let b = usize::try_from(end - start).unwrap_or(usize::MAX);
                return Ok(bytes.get(a..b).unwrap_or_default().to_vec());
            }
        }
        if self.held.saturating_add(len) > BUDGET_BYTES {
            return Err(io::Error::other(format!(
                "header mode holds at most {BUDGET_BYTES} bytes of one file"
            )));
        }
        let bytes = self.fetch(offset, len)?;
        self.held += bytes.len() as u64;
        self.pieces.push((offset, bytes.clone()));
        Ok(bytes)
    }

    /// A fetch that is not kept (whole reads stream through).
    fn fetch(&mut self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        if self.requests >= MAX_REQUESTS {
            return Err(io::Error::other(format!(
                "more than {MAX_REQUESTS} range requests for one file"
            )));
        }
        let bytes = self.src.read_at(offset, len)?;
        self.requests += 1;
        self.fetched += bytes.len() as u64;
        if bytes.len() as u64 > len {
            return Err(io::Error::other(
                "the server sent more than the range asked for",
            ));
        }
        Ok(bytes)
    }
}

/// A sequential reader from offset 0 over a [`Cached`] source, fetching growing chunks as the
/// consumer pulls (so a parser that stops early costs little more than what it read).
struct Lazy<'c, 'a> {
    c: &'c mut Cached<'a>,
    keep: bool,
    buf: Vec<u8>,
    pos: usize,
    next: u64,
    chunk: u64,
}

impl<'c, 'a> Lazy<'c, 'a> {
    fn new(c: &'c mut Cached<'a>, keep: bool) -> Self {
        Lazy {
            c,
            keep,
            buf: Vec::new(),
            pos: 0,
            next: 0,
            chunk: HEAD_BYTES,
        }
    }
}

impl Read for Lazy<'_, '_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        super::read::read_via_fill_buf(self, out)
    }
}

impl BufRead for Lazy<'_, '_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos >= self.buf.len() && self.next < self.c.size {
            let len = self.chunk.min(self.c.size - self.next);
            self.buf = if self.keep {
                self.c.get(self.next, len)?
            } else {
                self.c.fetch(self.next, len)?
            };
            advance(&self.buf, &mut self.pos, &mut self.next, &mut self.chunk)?;
        }
        Ok(self.buf.get(self.pos..).unwrap_or_default())
    }

    fn consume(&mut self, amt: usize) {
        self.pos = self.pos.saturating_add(amt).min(self.buf.len());
    }
}

/// Scans one file of `size` bytes from ranges of it. The scan's `sha256` is set only when the
/// whole file was read (text); otherwise the caller supplies the Hub's digest.
pub fn scan_ranges(
    src: &mut dyn RangeSource,
    rel: &str,
    size: u64,
    cfg: &ScanConfig,
) -> (FileScan, Coverage) {
    let mut c = Cached {
        src,
        size,
        pieces: Vec::new(),
        held: 0,
        fetched: 0,
        requests: 0,
    };
    let (mut scan, mut cov) = scan_cached(&mut c, rel, size, cfg);
    cov.bytes_read = c.fetched;
    cov.requests = c.requests;
    cov.unread.truncate(100);
    scan.facts.insert(Fact::Coverage.key(), cov.to_fact(size));
    (scan, cov)
}

fn scan_cached(c: &mut Cached<'_>, rel: &str, size: u64, cfg: &ScanConfig) -> (FileScan, Coverage) {
    if size > cfg.limits.max_file_bytes {
        // The same finding a full read gives, without reading.
        let scan = super::scan::scan_reader(io::empty(), std::path::Path::new(""), rel, size, cfg);
        let mut cov = Coverage::new(Level::Partial);
        cov.reason = Some("over the max_file_bytes limit".into());
        return (scan, cov);
    }
    let head = match c.get(0, HEAD_BYTES) {
        Ok(h) => h,
        Err(e) => return (unreadable(rel, &e), Coverage::new(Level::Partial)),
    };
    let sniffed = classify::sniff(&head, size);
    let route = classify::route(rel, &head, sniffed, &super::scan::probes(&head, sniffed));
    let format = match route {
        classify::Route::As(f) => f,
        classify::Route::JoblibZf => Format::Zlib,
    };
    if size <= HEAD_BYTES {
        // The head is the whole file: scanned from memory, positioned checks included.
        let scan =
            super::scan::scan_reader_at(&head[..], Positioned::Memory(&head), rel, size, cfg);
        let level = if scan.sha256.is_some() {
            Level::Complete
        } else {
            Level::Partial
        };
        return (scan, Coverage::new(level));
    }
    if matches!(format, Format::Text | Format::Openvino) && size <= WHOLE_TEXT_BYTES {
        return whole(c, rel, size, cfg);
    }
    // Header mode never claims a value check it did not do.
    let cfg = &ScanConfig {
        check_values: false,
        ..cfg.clone()
    };
    let mut ctx = Ctx::new(cfg, rel, std::path::Path::new(""));
    let mut cov = Coverage::new(Level::Structure);
    cov.not_checked.push("sha256");
    let result = match format {
        Format::Safetensors => safetensors(&mut ctx, c, size, &mut cov),
        Format::Gguf => gguf(&mut ctx, c, size, &mut cov),
        Format::Zip => zip(&mut ctx, c, size, &mut cov),
        Format::Hdf5 | Format::Tflite | Format::Ggml | Format::Executorch => {
            random_access(&mut ctx, c, format, size, &mut cov)
        }
        Format::Onnx => onnx(&mut ctx, c, size, &mut cov),
        Format::TfSavedmodel | Format::TfGraph | Format::TfMetagraph => {
            tf(&mut ctx, c, format, size, &mut cov)
        }
        _ => {
            cov.level = Level::Partial;
            cov.unread.push("content".into());
            cov.reason = Some(format!(
                "{} content is not inspected from ranges; scan without --remote headers to read it",
                format.as_str()
            ));
            Ok(format)
        }
    };
    let format = match result {
        Ok(f) => f,
        Err(e) => {
            let mut scan = unreadable(rel, &e);
            scan.size = size;
            let mut cov = Coverage::new(Level::Partial);
            cov.reason = Some(format!("range read failed: {e}"));
            return (scan, cov);
        }
    };
    let kind = super::scan::judge(&mut ctx, format, &head);
    let mut detections = super::pickle_stream::fold_per_file(ctx.detections);
    // Header mode leaves tensor bytes unread, so nothing here was read in full: PKL003 keeps
    // its severity (only a whole file is vouched for).
    if cov.level == Level::Complete {
        super::pickle_stream::grade_pickle_format(&mut detections, &ctx.facts);
    }
    let scan = FileScan {
        size,
        sha256: None,
        sha512: None,
        format: Some(format),
        kind: Some(kind),
        facts: ctx.facts,
        detections,
        tensors: ctx.tensors,
        text: ctx.text,
        card: ctx.card,
    };
    (scan, cov)
}

fn unreadable(rel: &str, e: &dyn std::fmt::Display) -> FileScan {
    FileScan {
        detections: vec![super::context::unreadable(rel, e)],
        ..FileScan::default()
    }
}

/// A small or text file: read whole through the one-read scan (digest computed).
fn whole(c: &mut Cached<'_>, rel: &str, size: u64, cfg: &ScanConfig) -> (FileScan, Coverage) {
    let scan = super::scan::scan_reader(
        Lazy::new(c, false),
        std::path::Path::new(""),
        rel,
        size,
        cfg,
    );
    let level = if scan.sha256.is_some() {
        Level::Complete
    } else {
        Level::Partial
    };
    (scan, Coverage::new(level))
}

/// The 8-byte length, then the declared header when it fits the file and the format's cap.
fn safetensors(
    ctx: &mut Ctx<'_>,
    c: &mut Cached<'_>,
    size: u64,
    cov: &mut Coverage,
) -> io::Result<Format> {
    let len = c.get(0, 8)?;
    let n = len
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map_or(0, u64::from_le_bytes);
    let cap = super::safetensors::Limits::from(&ctx.cfg.limits).max_header_bytes;
    // Past the cap or the file the validator decides from the length alone.
    let bytes = if n <= cap && n <= size.saturating_sub(8) {
        c.get(0, 8 + n)?
    } else {
        len
    };
    if let Some(end) = super::scan::inspect_safetensors(ctx, &mut &bytes[..], size)? {
        with_blocks(c, cov, |at| {
            formats::record_polyglots(ctx, at, size, Some(end))
        })?;
    }
    cov.unread.push("tensor-data".into());
    cov.not_checked.push("tensor-values");
    Ok(Format::Safetensors)
}

/// Header, metadata and tensor infos, read as far as the parser goes.
fn gguf(
    ctx: &mut Ctx<'_>,
    c: &mut Cached<'_>,
    size: u64,
    cov: &mut Coverage,
) -> io::Result<Format> {
    let mut r = Lazy::new(c, true);
    let f = formats::inspect_gguf(ctx, &mut r, size);
    with_blocks(c, cov, |at| formats::record_polyglots(ctx, at, size, None))?;
    cov.unread.push("tensor-data".into());
    Ok(f)
}

/// ONNX: the protobuf walk of a full read, jumping over the payloads it skips, then the
/// polyglot probes. A failed or capped range read fails the file (never a `malformed` verdict
/// on bytes that were not read).
fn onnx(
    ctx: &mut Ctx<'_>,
    c: &mut Cached<'_>,
    size: u64,
    cov: &mut Coverage,
) -> io::Result<Format> {
    let limits = super::onnx::Limits::from(&ctx.cfg.limits);
    let (facts, problems) =
        walk_jumping(c, cov, |r| super::onnx::inspect_jumping(r, size, &limits))?;
    let format = formats::record_onnx(ctx, &facts, &problems);
    with_blocks(c, cov, |at| formats::record_polyglots(ctx, at, size, None))?;
    Ok(format)
}

/// TensorFlow graphs (`saved_model.pb`, frozen `.pb`, `.meta`): the protobuf walk of a full
/// read, jumping over what it skips (constant tensors and other payloads). A local scan runs no
/// polyglot probe on them, so neither does this one.
fn tf(
    ctx: &mut Ctx<'_>,
    c: &mut Cached<'_>,
    format: Format,
    size: u64,
    cov: &mut Coverage,
) -> io::Result<Format> {
    let kind = match format {
        Format::TfSavedmodel => super::tf::GraphFile::SavedModel,
        Format::TfMetagraph => super::tf::GraphFile::MetaGraph,
        _ => super::tf::GraphFile::FrozenGraph,
    };
    let limits = super::tf::Limits::from(&ctx.cfg.limits);
    let (facts, problems) = walk_jumping(c, cov, |r| {
        super::tf::inspect_jumping(r, size, kind, &limits)
    })?;
    Ok(formats::record_tf(ctx, &facts, &problems, kind))
}

/// Runs a protobuf walk over a [`Jumping`] reader: its result, or the range read that failed
/// it (never a verdict on bytes that were not read); payloads jumped over are `tensor-data`
/// left unread.
fn walk_jumping<T>(
    c: &mut Cached<'_>,
    cov: &mut Coverage,
    walk: impl FnOnce(&mut Jumping<'_, '_>) -> T,
) -> io::Result<T> {
    let mut r = Jumping::new(c);
    let out = walk(&mut r);
    if let Some(e) = r.failed.take() {
        return Err(e);
    }
    if r.jumped > 0 {
        cov.unread.push("tensor-data".into());
    }
    Ok(out)
}

/// A forward reader from offset 0 over a [`Cached`] source for protobuf walks: it fetches
/// growing chunks while the walk reads, and a [`Jump`](super::protobuf::Jump) over a skipped
/// payload moves on without fetching it. Everything it fetches counts against the file's caps
/// ([`BUDGET_BYTES`] in all, [`MAX_REQUESTS`]); the first failure is kept for the caller, so a
/// cap is never mistaken for a malformed file.
struct Jumping<'c, 'a> {
    c: &'c mut Cached<'a>,
    buf: Vec<u8>,
    pos: usize,
    /// File offset just past `buf`.
    next: u64,
    chunk: u64,
    /// Bytes passed without fetching.
    jumped: u64,
    failed: Option<io::Error>,
}

impl<'c, 'a> Jumping<'c, 'a> {
    fn new(c: &'c mut Cached<'a>) -> Self {
        Jumping {
            c,
            buf: Vec::new(),
            pos: 0,
            next: 0,
            chunk: HEAD_BYTES,
            jumped: 0,
            failed: None,
        }
    }

    fn fill(&mut self) -> io::Result<()> {
        let len = self.chunk.min(self.c.size - self.next);
        self.buf = if self.next.saturating_add(len) <= HEAD_BYTES {
            // The head sniffing fetched.
            self.c.get(self.next, len)?
        } else {
            if self.c.fetched.saturating_add(len) > BUDGET_BYTES {
                return Err(io::Error::other(format!(
                    "header mode reads at most {BUDGET_BYTES} bytes of one file"
                )));
            }
            self.c.fetch(self.next, len)?
        };
        advance(&self.buf, &mut self.pos, &mut self.next, &mut self.chunk)
    }
}

/// Moves a forward reader onto a freshly fetched `buf`: an empty range is an error (the reader
/// would ask again forever), and the next fetch is twice as large, up to [`MAX_CHUNK`].
fn advance(buf: &[u8], pos: &mut usize, next: &mut u64, chunk: &mut u64) -> io::Result<()> {
    if buf.is_empty() {
        return Err(io::Error::other("the server returned an empty range"));
    }
    *pos = 0;
    *next += buf.len() as u64;
    *chunk = (*chunk * 2).min(MAX_CHUNK);
    Ok(())
}

impl Read for Jumping<'_, '_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        super::read::read_via_fill_buf(self, out)
    }
}

impl BufRead for Jumping<'_, '_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.failed.is_some() {
            return Err(io::Error::other("an earlier range read failed"));
        }
        if self.pos >= self.buf.len()
            && self.next < self.c.size
            && let Err(e) = self.fill()
        {
            let out = io::Error::new(e.kind(), e.to_string());
            self.failed = Some(e);
            return Err(out);
        }
        Ok(self.buf.get(self.pos..).unwrap_or_default())
    }

    fn consume(&mut self, amt: usize) {
        self.pos = self.pos.saturating_add(amt).min(self.buf.len());
    }
}

impl super::protobuf::Jump for Jumping<'_, '_> {
    fn jump(&mut self, n: u64) -> io::Result<()> {
        let buffered = (self.buf.len() - self.pos) as u64;
        if n <= buffered {
            self.pos += usize::try_from(n).unwrap_or(usize::MAX);
            return Ok(());
        }
        let beyond = n - buffered;
        self.buf.clear();
        self.pos = 0;
        self.next = self.next.saturating_add(beyond).min(self.c.size);
        self.jumped = self.jumped.saturating_add(beyond);
        self.chunk = JUMP_CHUNK;
        Ok(())
    }
}

/// HDF5 and TFLite: the same inspectors as a local scan, reading small structures at any
/// position through a block cache over range requests (under this file's caps).
fn random_access(
    ctx: &mut Ctx<'_>,
    c: &mut Cached<'_>,
    format: Format,
    size: u64,
    cov: &mut Coverage,
) -> io::Result<Format> {
    let format = with_blocks(c, cov, |at| -> io::Result<Format> {
        Ok(match format {
            Format::Tflite => formats::inspect_tflite(ctx, at, size)?,
            Format::Ggml => formats::inspect_ggml(ctx, at, size)?,
            Format::Executorch => formats::inspect_executorch(ctx, at, size)?,
            _ => {
                let (format, embedded) = formats::inspect_hdf5(ctx, at, size)?;
                super::archive::inspect_embedded(ctx, "model_config", &embedded);
                format
            }
        })
    })?;
    // Weights and buffers were not read; every structure the inspector follows was.
    cov.unread.push("tensor-data".into());
    Ok(format)
}

/// Runs `f` with positioned reads over this file's ranges (a block cache that shares the
/// file's caps on bytes and requests), then adds what it cost and covered to the counters.
fn with_blocks<T>(
    c: &mut Cached<'_>,
    cov: &mut Coverage,
    f: impl FnOnce(Positioned<'_>) -> T,
) -> T {
    let max_bytes = BUDGET_BYTES.saturating_sub(c.held);
    let max_requests = MAX_REQUESTS.saturating_sub(c.requests);
    let mut blocks = Blocks::new(&mut *c.src, c.size, max_bytes, max_requests);
    for (offset, bytes) in &c.pieces {
        blocks.seed(*offset, bytes);
    }
    let cell = RefCell::new(blocks);
    let out = f(Positioned::Source(&cell));
    let stats = cell.into_inner().stats();
    c.fetched += stats.fetched;
    c.held += stats.fetched;
    c.requests += stats.requests;
    cov.add_positioned(&stats);
    out
}

/// One central-directory record, as much as planning the reads needs.
struct CdEntry {
    name: String,
    local: u64,
    csize: u64,
    usize: u64,
    flags: u16,
    name_extra: u64,
}

/// End of central directory, central directory, then the records of the members worth reading.
fn zip(ctx: &mut Ctx<'_>, c: &mut Cached<'_>, size: u64, cov: &mut Coverage) -> io::Result<Format> {
    let limits = super::zip::Limits::from(&ctx.cfg.limits);
    let (cd_start, tail, base) = match central_directory(c, size, &limits) {
        Ok(t) => t,
        Err(why) => {
            // Not readable from its end: say so; a full read walks it front to back.
            cov.level = Level::Partial;
            cov.unread.push("content".into());
            cov.reason = Some(format!("zip central directory not read: {why}"));
            return Ok(Format::Zip);
        }
    };
    // The zip module's own central-directory decoder; offsets shift by the bytes in front.
    let entries: Vec<CdEntry> = super::zip::parse_central_directory(&tail, limits.max_members)
        .into_iter()
        .map(|e| CdEntry {
            local: base.saturating_add(e.fields.local_offset),
            csize: e.fields.csize,
            usize: e.fields.usize,
            flags: e.fields.flags,
            name_extra: (e.fields.name_len + e.fields.extra_len) as u64,
            name: e.name,
        })
        .collect();
    let torch = entries.iter().any(|e| e.name.ends_with("data.pkl"));
    let mut skipped = BTreeSet::new();
    let mut read = Vec::new();
    for e in &entries {
        if torch && is_storage(&e.name) {
            skipped.insert(e.name.clone());
            cov.unread.push(format!("member:{}", e.name));
        } else if e.csize > MEMBER_BYTES {
            skipped.insert(e.name.clone());
            cov.unread.push(format!("member:{}", e.name));
            cov.level = Level::Partial;
            cov.reason = Some(format!(
                "member `{}` ({} bytes compressed) is over the {MEMBER_BYTES}-byte header-mode member read",
                e.name, e.csize
            ));
        } else {
            read.push(e);
        }
    }
    read.sort_by_key(|e| e.local);
    read.dedup_by_key(|e| e.local);
    // One request for members that lie close together (PyTorch writes its small records first).
    let windows: Vec<(u64, u64)> = read
        .iter()
        .map(|e| {
            let end = e
                .local
                .saturating_add(30 + e.name_extra)
                .saturating_add(e.csize)
                .saturating_add(24)
                .min(cd_start.max(e.local));
            (e.local, end)
        })
        .collect();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (a, b) in windows {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(MERGE_GAP) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    for (a, b) in merged {
        c.get(a, b - a)?;
    }
    let mut segments = Vec::with_capacity(read.len() + 1);
    for e in read {
        let end = record_end(c, e)?;
        segments.push((e.local, c.get(e.local, end.saturating_sub(e.local))?));
    }
    segments.push((cd_start, tail));
    let format = super::archive::inspect_zip_segments(ctx, &segments, size, &skipped);
    if base > 0 {
        ctx.facts
            .insert(Fact::ArchivePrefixBytes.key(), json!(base));
    }
    if !skipped.is_empty() {
        cov.unread.sort();
        cov.not_checked.push("member-crc");
    }
    // Only a front-to-back read sees bytes between records and members missing from the
    // central directory (which central-directory readers such as torch.load never load).
    cov.not_checked.push("zip-local-only-members");
    Ok(format)
}

/// PyTorch tensor storage records: `<archive>/data/<key>` (no extension).
fn is_storage(name: &str) -> bool {
    let mut parts = name.rsplit('/');
    let (Some(key), Some(dir)) = (parts.next(), parts.next()) else {
        return false;
    };
    dir == "data" && !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Finds the end of central directory in the file's tail and fetches the central directory to
/// the end of the file. Returns (its file offset, the bytes, the archive's start in the file).
fn central_directory(
    c: &mut Cached<'_>,
    size: u64,
    limits: &super::zip::Limits,
) -> Result<(u64, Vec<u8>, u64), String> {
    let tail_len = size.min(super::zip::TAIL_LEN);
    let tail_at = size - tail_len;
    let tail = c.get(tail_at, tail_len).map_err(|e| e.to_string())?;
    let end = super::zip::end_record(&tail, tail_at)
        .ok_or("no end of central directory record in the last 64 KiB")?;
    let (mut cd_size, mut cd_offset, mut end_of_cd) = (end.cd_size, end.cd_offset, end.at);
    if let Some(z_at) = end.zip64_at {
        let z = c.get(z_at, 56).map_err(|e| e.to_string())?;
        (cd_size, cd_offset) = super::zip::zip64_end(&z)
            .ok_or("the zip64 locator does not point at a zip64 end record")?;
        end_of_cd = z_at;
    }
    if cd_size > limits.max_cd_bytes {
        return Err(format!(
            "central directory of {cd_size} bytes, over the {}-byte limit",
            limits.max_cd_bytes
        ));
    }
    let cd_start = end_of_cd
        .checked_sub(cd_size)
        .ok_or("the central directory would start before the file")?;
    // Bytes in front of the archive (a self-extractor, a polyglot) shift every offset.
    let base = cd_start
        .checked_sub(cd_offset)
        .ok_or("the central directory offset lies past where it starts")?;
    let bytes = c
        .get(cd_start, size - cd_start)
        .map_err(|e| e.to_string())?;
    Ok((cd_start, bytes, base))
}

/// Where a member's record ends: its local header (whose name and extra lengths may differ
/// from the central directory's), its data, and a data descriptor when the flags say so.
fn record_end(c: &mut Cached<'_>, e: &CdEntry) -> io::Result<u64> {
    let h = c.get(e.local, 30)?;
    if !h.starts_with(b"PK\x03\x04") || h.len() < 30 {
        // The walker reports what is there instead of a member.
        return Ok(e.local + h.len() as u64);
    }
    let n = u64::from(u16::from_le_bytes([h[26], h[27]]));
    let x = u64::from(u16::from_le_bytes([h[28], h[29]]));
    let flags = u16::from_le_bytes([h[6], h[7]]);
    let local_csize = u64::from(u32::from_le_bytes([h[18], h[19], h[20], h[21]]));
    let descriptor = flags & 8 != 0 || e.flags & 8 != 0;
    let csize = if descriptor || local_csize == u64::from(u32::MAX) {
        e.csize
    } else {
        local_csize
    };
    let data_end = e
        .local
        .saturating_add(30 + n + x)
        .saturating_add(csize.min(MEMBER_BYTES));
    if !descriptor {
        return Ok(data_end);
    }
    let d = c.get(data_end, 24)?;
    let le = |i: usize, w: usize| -> Option<u64> {
        let b = d.get(i..i + w)?;
        Some(
            b.iter()
                .rev()
                .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)),
        )
    };
    let sig = d.starts_with(b"PK\x07\x08");
    let s = if sig { 4 } else { 0 };
    let wide = le(s + 4, 8) == Some(e.csize) && le(s + 12, 8) == Some(e.usize);
    Ok(data_end + s as u64 + if wide { 20 } else { 12 })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Mem(Vec<u8>, u64);

    impl RangeSource for Mem {
        fn read_at(&mut self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
            self.1 += 1;
            let a = usize::try_from(offset).unwrap().min(self.0.len());
            let b = usize::try_from(offset + len).unwrap().min(self.0.len());
            Ok(self.0[a..b].to_vec())
        }
    }

    #[test]
    fn recognises_pytorch_storage_records() {
        assert!(is_storage("archive/data/0"));
        assert!(is_storage("model/data/123"));
        assert!(!is_storage("archive/data.pkl"));
        assert!(!is_storage("archive/.data/version"));
        assert!(!is_storage("data/x.pkl"));
        assert!(!is_storage("0"));
    }

    #[test]
    fn a_small_file_is_read_whole() {
        let mut m = Mem(b"{\"a\": 1}".to_vec(), 0);
        let (scan, cov) = scan_ranges(&mut m, "config.json", 8, &ScanConfig::default());
        assert_eq!(cov.level, Level::Complete);
        assert!(scan.sha256.is_some());
    }

    #[test]
    fn safetensors_reads_only_the_header() {
        let header = br#"{"w":{"dtype":"F32","shape":[1000000],"data_offsets":[0,4000000]}}"#;
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header);
        let size = bytes.len() as u64 + 4_000_000;
        bytes.resize(usize::try_from(size).unwrap(), 0);
        let mut m = Mem(bytes, 0);
        let (scan, cov) = scan_ranges(&mut m, "m.safetensors", size, &ScanConfig::default());
        assert_eq!(scan.format, Some(Format::Safetensors));
        assert_eq!(cov.level, Level::Structure);
        // The header costs the first range; the polyglot probes (HDF5 at powers of two, the
        // zip end record in the last 64 KiB) are the rest, a few blocks.
        assert!(
            cov.bytes_read - cov.positioned_bytes <= HEAD_BYTES,
            "{}",
            cov.bytes_read
        );
        assert_eq!(cov.positioned, vec!["polyglot"]);
        assert!(cov.positioned_bytes <= 100 << 10, "{cov:?}");
        assert!(scan.sha256.is_none());
        assert!(scan.detections.is_empty(), "{:?}", scan.detections);
        assert!(cov.not_checked.contains(&"tensor-values"));
    }

    #[test]
    fn gguf_reads_header_and_metadata_only() {
        let s = |out: &mut Vec<u8>, v: &str| {
            out.extend((v.len() as u64).to_le_bytes());
            out.extend(v.as_bytes());
        };
        let mut b = b"GGUF".to_vec();
        b.extend(3u32.to_le_bytes());
        b.extend(1u64.to_le_bytes()); // tensors
        b.extend(1u64.to_le_bytes()); // metadata
        s(&mut b, "general.architecture");
        b.extend(8u32.to_le_bytes()); // string
        s(&mut b, "llama");
        s(&mut b, "w");
        b.extend(1u32.to_le_bytes());
        b.extend(1_000_000u64.to_le_bytes());
        b.extend(0u32.to_le_bytes()); // F32
        b.extend(0u64.to_le_bytes());
        while !b.len().is_multiple_of(32) {
            b.push(0);
        }
        b.resize(b.len() + 4_000_000, 0);
        let size = b.len() as u64;
        let mut m = Mem(b, 0);
        let (scan, cov) = scan_ranges(&mut m, "m.gguf", size, &ScanConfig::default());
        assert_eq!(scan.format, Some(Format::Gguf));
        assert_eq!(cov.level, Level::Structure);
        assert_eq!(cov.requests - cov.positioned_requests, 1, "{cov:?}");
        assert_eq!(cov.positioned, vec!["polyglot"]);
        assert!(cov.positioned_requests <= 12, "{cov:?}");
        assert!(scan.detections.is_empty(), "{:?}", scan.detections);
    }

    #[test]
    fn range_requests_per_file_are_capped() {
        let mut m = Mem(vec![0u8; 10], 0);
        let mut c = Cached {
            src: &mut m,
            size: 10,
            pieces: Vec::new(),
            held: 0,
            fetched: 0,
            requests: 0,
        };
        for _ in 0..MAX_REQUESTS {
            c.fetch(0, 1).unwrap();
        }
        assert!(c.fetch(0, 1).is_err());
    }

    fn padded(mut bytes: Vec<u8>, to: usize) -> Vec<u8> {
        bytes.resize(to, 0);
        bytes
    }

    fn rules(scan: &FileScan) -> Vec<&'static str> {
        scan.detections.iter().map(|d| d.rule.code()).collect()
    }

    /// The same bytes scanned as a local file and from ranges: (local, ranged, its coverage).
    fn local_and_ranged(bytes: Vec<u8>, name: &str) -> (FileScan, FileScan, Coverage) {
        let size = bytes.len() as u64;
        let cfg = ScanConfig::default();
        let local = super::super::scan::scan_reader_at(
            &bytes[..],
            Positioned::Memory(&bytes),
            name,
            size,
            &cfg,
        );
        let mut m = Mem(bytes, 0);
        let (scan, cov) = scan_ranges(&mut m, name, size, &cfg);
        (local, scan, cov)
    }

    #[test]
    fn hdf5_lambda_layer_is_found_from_ranges() {
        use crate::inspect::hdf5::tests::{h5_file, string_attribute};
        let config = r#"{"class_name": "Sequential", "config": {"layers": [{"class_name": "Lambda", "config": {"name": "evil", "function": ["4wEAAAAA", null, null], "function_type": "lambda"}}]}}"#;
        let h5 = h5_file(0, &[string_attribute("model_config", config.as_bytes())]);
        let (local, scan, cov) = local_and_ranged(padded(h5.clone(), 3 << 20), "model.h5");
        assert_eq!(scan.format, local.format);
        assert_eq!(rules(&scan), rules(&local));
        assert!(rules(&scan).contains(&"FMT003"), "{:?}", scan.detections);
        assert_eq!(cov.level, Level::Structure, "{cov:?}");
        assert_eq!(cov.positioned, vec!["hdf5"]);
        assert!(cov.bytes_read < 200 << 10, "{cov:?}");
    }

    #[test]
    fn tflite_flex_op_is_found_from_ranges() {
        use crate::inspect::tflite::tests::{flex_options, model_with_operators, node_def};
        let opts = flex_options("ReadFile", &node_def("steal", "ReadFile"));
        let model = model_with_operators(
            &[(3, None), (32, Some("FlexReadFile"))],
            &[(0, None), (1, Some(&opts))],
        );
        let bytes = padded(model, 2 << 20);
        let mut m = Mem(bytes, 0);
        let (scan, cov) = scan_ranges(&mut m, "model.tflite", 2 << 20, &ScanConfig::default());
        assert_eq!(scan.format, Some(Format::Tflite));
        assert!(rules(&scan).contains(&"FMT006"), "{:?}", scan.detections);
        assert_eq!(cov.level, Level::Structure, "{cov:?}");
        assert_eq!(cov.positioned, vec!["tflite"]);
    }

    /// A source that serves the first `ok` requests, then fails.
    struct Flaky(Vec<u8>, u64);

    impl RangeSource for Flaky {
        fn read_at(&mut self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
            if self.1 == 0 {
                return Err(io::Error::other("connection reset"));
            }
            self.1 -= 1;
            let a = usize::try_from(offset).unwrap().min(self.0.len());
            let b = usize::try_from(offset + len).unwrap().min(self.0.len());
            Ok(self.0[a..b].to_vec())
        }
    }

    #[test]
    fn a_failed_positioned_read_is_a_finding_and_partial_coverage() {
        let header = br#"{"w":{"dtype":"F32","shape":[250000],"data_offsets":[0,1000000]}}"#;
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header);
        bytes.resize(bytes.len() + 1_000_000, 0);
        let size = bytes.len() as u64;
        // The head is served; every range after it (the polyglot probes) fails.
        let mut m = Flaky(bytes, 1);
        let (scan, cov) = scan_ranges(&mut m, "model.safetensors", size, &ScanConfig::default());
        assert_eq!(cov.level, Level::Partial, "{cov:?}");
        assert!(cov.not_checked.contains(&"polyglot"), "{cov:?}");
        assert!(cov.reason.as_deref().unwrap_or("").contains("polyglot"));
        let d: Vec<_> = scan
            .detections
            .iter()
            .filter(|d| d.key == "positioned-reads:polyglot")
            .collect();
        assert_eq!(d.len(), 1, "{:?}", scan.detections);
        assert_eq!(d[0].rule.code(), "SCAN001");
    }

    #[test]
    fn a_pickle_after_safetensors_data_is_a_polyglot_from_ranges() {
        let header = br#"{"w":{"dtype":"F32","shape":[100000],"data_offsets":[0,400000]}}"#;
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header);
        bytes.resize(bytes.len() + 400_000, 0);
        let end = bytes.len() as u64;
        bytes.extend(b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00idq\x01\x85q\x02Rq\x03.");
        let size = bytes.len() as u64;
        let mut m = Mem(bytes, 0);
        let (scan, cov) = scan_ranges(&mut m, "model.safetensors", size, &ScanConfig::default());
        let poly: Vec<_> = scan
            .detections
            .iter()
            .filter(|d| d.key == "polyglot:pickle")
            .collect();
        assert_eq!(poly.len(), 1, "{:?}", scan.detections);
        assert_eq!(poly[0].location.offset, Some(end));
        assert!(rules(&scan).contains(&"PKL001"), "{:?}", scan.detections);
        assert_eq!(cov.positioned, vec!["polyglot"]);
    }

    #[test]
    fn unknown_large_content_is_partial() {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut m = Mem(bytes, 0);
        let (_, cov) = scan_ranges(&mut m, "blob.bin", 200_000, &ScanConfig::default());
        assert_eq!(cov.level, Level::Partial);
        assert!(cov.reason.is_some());
    }

    /// An ONNX model: a custom-domain node, a 4 MiB initializer stored inline, then a tensor
    /// whose external data points outside the repository.
    fn onnx_with_large_initializer() -> Vec<u8> {
        use crate::inspect::protobuf::encode::*;
        let node = field_bytes(
            1,
            &cat(&[field_str(4, "Steal"), field_str(7, "com.evil.ops")]),
        );
        let inline = field_bytes(
            5,
            &cat(&[
                field_varint(1, 1 << 20),
                field_varint(2, 1),
                field_str(8, "big"),
                field_bytes(9, &vec![0x3f; 4 << 20]),
            ]),
        );
        let entry = |k: &str, v: &str| field_bytes(13, &cat(&[field_str(1, k), field_str(2, v)]));
        let external = field_bytes(
            5,
            &cat(&[
                field_varint(1, 4),
                field_varint(2, 1),
                field_str(8, "ext"),
                entry("location", "../../etc/passwd"),
                field_varint(14, 1),
            ]),
        );
        let graph = cat(&[node, field_str(2, "g"), inline, external]);
        let opsets = cat(&[field_str(1, "com.evil.ops"), field_varint(2, 1)]);
        cat(&[
            field_varint(1, 8),
            field_str(2, "pytorch"),
            field_bytes(7, &graph),
            field_bytes(8, &opsets),
        ])
    }

    #[test]
    fn onnx_is_walked_from_ranges_without_its_tensor_data() {
        let bytes = onnx_with_large_initializer();
        let (local, scan, cov) = local_and_ranged(bytes, "model.onnx");
        assert_eq!(scan.format, Some(Format::Onnx));
        assert_eq!(rules(&scan), rules(&local), "{:?}", scan.detections);
        assert!(!rules(&scan).is_empty(), "{:?}", scan.detections);
        let key = Fact::Onnx.key();
        assert_eq!(scan.facts.get(&key), local.facts.get(&key));
        let key = Fact::ExternalDataLocations.key();
        assert_eq!(scan.facts.get(&key), local.facts.get(&key));
        assert!(scan.facts.contains_key(&key), "{:?}", scan.facts);
        assert_eq!(cov.level, Level::Structure, "{cov:?}");
        assert!(cov.unread.contains(&"tensor-data".to_string()), "{cov:?}");
        assert!(!cov.not_checked.contains(&"polyglot"), "{cov:?}");
        assert_eq!(cov.positioned, vec!["polyglot"]);
        // The 4 MiB payload was jumped over: the head, one range after the jump, the probes.
        assert!(cov.bytes_read < 300 << 10, "{cov:?}");
    }

    #[test]
    fn onnx_range_failure_is_unreadable_not_malformed() {
        // The head is served, the read after the jump fails: no verdict on unread bytes.
        let bytes = onnx_with_large_initializer();
        let size = bytes.len() as u64;
        let mut m = Flaky(bytes, 1);
        let (scan, cov) = scan_ranges(&mut m, "model.onnx", size, &ScanConfig::default());
        assert_eq!(cov.level, Level::Partial, "{cov:?}");
        assert_eq!(rules(&scan), vec!["SCAN001"], "{:?}", scan.detections);
    }

    #[test]
    fn tf_saved_model_is_walked_from_ranges_without_its_constants() {
        use crate::inspect::protobuf::encode::*;
        let attr = field_bytes(5, &vec![0x11; 4 << 20]);
        let constant = cat(&[field_str(1, "w"), field_str(2, "Const"), attr]);
        let pyfunc = cat(&[field_str(1, "cb"), field_str(2, "PyFunc")]);
        let graph = cat(&[field_bytes(1, &constant), field_bytes(1, &pyfunc)]);
        let meta = cat(&[field_bytes(1, b"\x0a\x05serve"), field_bytes(2, &graph)]);
        let bytes = cat(&[field_varint(1, 1), field_bytes(2, &meta)]);
        let (local, scan, cov) = local_and_ranged(bytes, "saved_model.pb");
        assert_eq!(scan.format, Some(Format::TfSavedmodel));
        assert_eq!(scan.format, local.format);
        assert_eq!(rules(&scan), rules(&local));
        assert!(rules(&scan).contains(&"FMT006"), "{:?}", scan.detections);
        let key = Fact::Tf.key();
        assert_eq!(scan.facts.get(&key), local.facts.get(&key));
        assert_eq!(cov.level, Level::Structure, "{cov:?}");
        assert!(cov.unread.contains(&"tensor-data".to_string()), "{cov:?}");
        assert!(cov.bytes_read < 200 << 10, "{cov:?}");
    }
}
