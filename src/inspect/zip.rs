//! Streaming, strictly bounded zip walker.
//!
//! PyTorch checkpoints, `.npz` files, `.keras` models and many other model formats are zip
//! archives, and the pickles that can run code on load live inside them. This module reads an
//! archive once, front to back, from a `BufRead` (the caller hashes the same bytes as they pass),
//! hands each member's decompressed content to a callback, and records every way the archive
//! deviates from a plain, consistent zip. That matters because loaders disagree on what an
//! archive contains: PyTorch (miniz) and Python's `zipfile` trust the central directory at the
//! end, while a streaming reader trusts the local headers in front of each member. An attacker
//! can make the two views differ (a member only in one of them, a duplicated name, a central
//! directory entry pointing into another member's data) so that a scanner reading one view
//! misses the pickle the loader reads from the other. We read the local view as it streams past,
//! collect the central view when it arrives, and report every disagreement.
//!
//! What cannot be done in one sequential pass is said plainly: a central-directory entry whose
//! local header we never met (it points into the middle of other data) is reported as
//! `cd-only-member` and left unscanned, and a stored member with a data descriptor (length
//! unknown up front) is delimited by searching for a descriptor signature whose CRC-32 and size
//! agree with the bytes seen so far.
//!
//! Nothing is extracted to disk and nothing is executed; every count, length and decompressed
//! size is checked against a field of [`Limits`] first.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead, Read};
use std::rc::Rc;

use bzip2::bufread::BzDecoder;
use flate2::bufread::DeflateDecoder;

const SIG_LOCAL: [u8; 4] = *b"PK\x03\x04";
const SIG_CENTRAL: [u8; 4] = *b"PK\x01\x02";
const SIG_EOCD: [u8; 4] = *b"PK\x05\x06";
const SIG_ZIP64_EOCD: [u8; 4] = *b"PK\x06\x06";
const SIG_ZIP64_LOCATOR: [u8; 4] = *b"PK\x06\x07";
const SIG_DESCRIPTOR: [u8; 4] = *b"PK\x07\x08";
const SIG_DIGITAL_SIGNATURE: [u8; 4] = *b"PK\x05\x05";
const SIG_ARCHIVE_EXTRA: [u8; 4] = *b"PK\x06\x08";

const KNOWN_SIGNATURES: [[u8; 4]; 8] = [
    SIG_LOCAL,
    SIG_CENTRAL,
    SIG_EOCD,
    SIG_ZIP64_EOCD,
    SIG_ZIP64_LOCATOR,
    SIG_DESCRIPTOR,
    SIG_DIGITAL_SIGNATURE,
    SIG_ARCHIVE_EXTRA,
];

/// Compression method: stored (no compression).
pub const METHOD_STORED: u16 = 0;
/// Compression method: deflate.
pub const METHOD_DEFLATE: u16 = 8;
/// Compression method: bzip2.
pub const METHOD_BZIP2: u16 = 12;
/// Compression method: WinZip AES (always encrypted).
const METHOD_AES: u16 = 99;

const FLAG_ENCRYPTED: u16 = 1;
const FLAG_DESCRIPTOR: u16 = 1 << 3;
const FLAG_STRONG_ENCRYPTION: u16 = 1 << 6;

const U32_MAX: u32 = u32::MAX;
const U16_MAX: u16 = u16::MAX;
const ZIP64_EXTRA_ID: u16 = 0x0001;
const LOCAL_HEADER_LEN: usize = 30;
const CENTRAL_HEADER_LEN: usize = 46;
const EOCD_LEN: usize = 22;
const ZIP64_EOCD_FIXED_LEN: u64 = 44;
const STREAM_BUF_LEN: usize = 64 * 1024;

/// Caps applied while walking an archive. Every value read from the file is compared with one
/// of these before it is used to allocate, loop or decompress.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Most members (local headers, and separately central-directory records) walked.
    pub max_members: usize,
    /// Longest member name kept; longer names are cut and reported.
    pub max_name_len: usize,
    /// Most decompressed bytes produced for one member.
    pub max_member_bytes: u64,
    /// Most decompressed bytes produced for the whole archive.
    pub max_total_bytes: u64,
    /// Highest decompressed/compressed ratio tolerated once `ratio_min_bytes` were produced.
    pub max_ratio: u64,
    /// Output size below which the ratio is not judged (tiny members compress absurdly well).
    pub ratio_min_bytes: u64,
    /// Deepest nesting of archives in archives; the caller passes the current depth.
    pub max_depth: u32,
    /// Most bytes of central directory records read.
    pub max_cd_bytes: u64,
    /// Longest archive comment tolerated.
    pub max_comment_len: usize,
    /// Most problems recorded; one `too-many-problems` marks the cut.
    pub max_problems: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_members: 100_000,
            max_name_len: 4096,
            max_member_bytes: 32 << 30,
            max_total_bytes: 128 << 30,
            max_ratio: 250,
            ratio_min_bytes: 1 << 20,
            max_depth: 4,
            max_cd_bytes: 64 << 20,
            max_comment_len: 65_535,
            max_problems: 1000,
        }
    }
}

/// One archive member, as seen through its local header, the central directory, or both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Name; bytes that are not UTF-8 are written as `\xNN`.
    pub name: String,
    /// Absolute file offset of the local header (for a central-directory-only member: where
    /// the central directory says it is).
    pub local_offset: u64,
    /// General-purpose flags.
    pub flags: u16,
    /// Compression method.
    pub method: u16,
    /// Compressed size (from the data descriptor if one was used, else the header).
    pub compressed_size: u64,
    /// Uncompressed size (same sources as `compressed_size`).
    pub uncompressed_size: u64,
    /// Expected CRC-32.
    pub crc32: u32,
    /// Whether the computed CRC-32 matched; `None` when the content was not fully decompressed.
    pub crc_ok: Option<bool>,
    /// Encrypted member: cannot be scanned.
    pub encrypted: bool,
    /// Listed in the central directory (always `false` in the callback: not known yet).
    pub in_central_directory: bool,
    /// A local header for it was found in the stream.
    pub has_local_header: bool,
    /// Another member has the same name.
    pub duplicate: bool,
}

/// One thing wrong with an archive (or a limit hit). Facts, not verdicts: the policy decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Stable kebab-case sub-code, e.g. `crc-mismatch`.
    pub code: &'static str,
    /// Precise lowercase message with the data.
    pub message: String,
    /// Member concerned, if any.
    pub member: Option<String>,
    /// Absolute byte offset concerned, if any.
    pub offset: Option<u64>,
}

impl Problem {
    /// A problem with a code and message and no location.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Problem {
            code,
            message: message.into(),
            member: None,
            offset: None,
        }
    }

    /// Sets the member concerned.
    pub fn member(mut self, name: &str) -> Self {
        self.member = Some(name.to_string());
        self
    }

    /// Sets the offset concerned.
    pub fn at(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }
}

/// Everything the walk learned about an archive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZipReport {
    /// Members: local headers in stream order, then central-directory-only entries.
    pub members: Vec<Member>,
    /// Problems in the order found (cross-checks last).
    pub problems: Vec<Problem>,
    /// Length of the (last) archive comment.
    pub comment_len: usize,
    /// Bytes before the first zip record (self-extractors, polyglots).
    pub prefix_bytes: u64,
    /// An end-of-central-directory record was read.
    pub has_eocd: bool,
}

impl ZipReport {
    /// Whether a problem with this code was recorded.
    pub fn has(&self, code: &str) -> bool {
        self.problems.iter().any(|p| p.code == code)
    }
}

/// Whether `head` (the first bytes of a file) starts like a zip archive.
pub fn is_zip(head: &[u8]) -> bool {
    head.starts_with(&SIG_LOCAL)
        || head.starts_with(&SIG_EOCD)
        // A "spanned archive" marker in front of the first local header.
        || (head.starts_with(&SIG_DESCRIPTOR) && head.get(4..8) == Some(&SIG_LOCAL[..]))
}

/// Walks a zip archive read sequentially from `r` (whose total length is `file_size`).
///
/// `depth` is how many archives enclose this one (0 for a file on disk); past
/// `limits.max_depth` nothing is read and `depth-exceeded` is reported.
///
/// `on_member(member, content)` is called for each member whose content can be read (stored,
/// deflate or bzip2, not encrypted), in stream order, with the member as its local header (and
/// data descriptor fields as far as known) describes it. `content` yields the decompressed bytes,
/// capped by the limits; when a cap or corrupt data stops it, reads return an `io::Error` whose
/// message starts with `zip member stream stopped:` and the problem is in the report. The
/// callback may read as much or as little as it likes: the walker then decompresses the rest
/// itself (within the same caps, output discarded) so the CRC-32 check stays honest and it can
/// find where the member ends.
///
/// The walk reads `r` to its end (unless the depth is exceeded) and never panics; every
/// malformation becomes a [`Problem`].
pub fn walk<R: BufRead + ?Sized>(
    r: &mut R,
    file_size: u64,
    depth: u32,
    limits: &Limits,
    on_member: &mut dyn FnMut(&Member, &mut dyn BufRead),
) -> ZipReport {
    let mut walker = Walker::new(limits, file_size);
    if depth > limits.max_depth {
        walker.problem(Problem::new(
            "depth-exceeded",
            format!(
                "archive nested {depth} deep, limit {}; not walked",
                limits.max_depth
            ),
        ));
        return walker.report;
    }
    let mut adapter = DynRead(r);
    let mut src = Src::new(&mut adapter);
    if let Err(e) = walker.run(&mut src, on_member) {
        let at = src.position();
        match e {
            Halt::Io(e) => {
                walker.problem(Problem::new("io-error", format!("read failed: {e}")).at(at))
            }
            Halt::Truncated(what) => walker.problem(
                Problem::new(
                    "truncated",
                    format!("archive ends inside {what} at offset {at}"),
                )
                .at(at),
            ),
            Halt::Stop => {}
        }
        // Keep the "reads to its end" promise so the caller's digest covers the whole file.
        if let Ok(n) = src.skip(u64::MAX)
            && n > 0
        {
            walker.problem(
                Problem::new(
                    "unscanned-data",
                    format!("{n} bytes after offset {at} not walked"),
                )
                .at(at),
            );
        }
    }
    walker.finish();
    walker.report
}

/// Why the walk stopped early.
enum Halt {
    Io(io::Error),
    Truncated(&'static str),
    Stop,
}

impl From<io::Error> for Halt {
    fn from(e: io::Error) -> Self {
        Halt::Io(e)
    }
}

/// Makes a `?Sized` generic reader usable as `dyn BufRead`.
struct DynRead<'a, R: BufRead + ?Sized>(&'a mut R);

impl<R: BufRead + ?Sized> Read for DynRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: BufRead + ?Sized> BufRead for DynRead<'_, R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.0.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.0.consume(amt)
    }
}

/// The archive byte source: counts the absolute position and can peek a few bytes across the
/// underlying reader's buffer boundaries (signatures, data descriptors).
struct Src<'r> {
    inner: &'r mut dyn BufRead,
    look: Vec<u8>,
    look_pos: usize,
    pos: Rc<Cell<u64>>,
}

impl<'r> Src<'r> {
    fn new(inner: &'r mut dyn BufRead) -> Self {
        Src {
            inner,
            look: Vec::new(),
            look_pos: 0,
            pos: Rc::new(Cell::new(0)),
        }
    }

    fn position(&self) -> u64 {
        self.pos.get()
    }

    fn look_left(&self) -> usize {
        self.look.len().saturating_sub(self.look_pos)
    }

    /// Up to `n` bytes from the current position without consuming them (fewer only at EOF).
    fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.look_left() == 0 {
            self.look.clear();
            self.look_pos = 0;
            if self.inner.fill_buf()?.len() >= n {
                let buf = self.inner.fill_buf()?;
                return Ok(buf.get(..n).unwrap_or(buf));
            }
        }
        while self.look_left() < n {
            let want = n - self.look_left();
            let buf = self.inner.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            let take = want.min(buf.len());
            self.look.extend_from_slice(buf.get(..take).unwrap_or(buf));
            self.inner.consume(take);
        }
        let end = self.look.len().min(self.look_pos.saturating_add(n));
        Ok(self.look.get(self.look_pos..end).unwrap_or(&[]))
    }

    /// Reads exactly `N` bytes, or `None` at EOF before that.
    fn read_array<const N: usize>(&mut self) -> io::Result<Option<[u8; N]>> {
        let mut out = [0u8; N];
        let mut filled = 0;
        while filled < N {
            let n = self.read(out.get_mut(filled..).unwrap_or(&mut []))?;
            if n == 0 {
                return Ok(None);
            }
            filled += n;
        }
        Ok(Some(out))
    }

    /// Reads exactly `n` bytes (the caller bounded `n`), or `None` at EOF before that.
    fn read_vec(&mut self, n: usize) -> io::Result<Option<Vec<u8>>> {
        let mut out = Vec::with_capacity(n);
        let got = self.by_ref().take(n as u64).read_to_end(&mut out)?;
        Ok((got == n).then_some(out))
    }

    /// Skips up to `n` bytes; returns how many were skipped (fewer only at EOF).
    fn skip(&mut self, n: u64) -> io::Result<u64> {
        let mut left = n;
        while left > 0 {
            let avail = self.fill_buf()?.len();
            if avail == 0 {
                break;
            }
            let k = usize::try_from(left).unwrap_or(usize::MAX).min(avail);
            self.consume(k);
            left -= k as u64;
        }
        Ok(n - left)
    }

    /// Skips to the next known zip signature (or EOF); returns the bytes skipped.
    fn skip_to_signature(&mut self) -> io::Result<u64> {
        let mut skipped = 0u64;
        loop {
            let buf = self.fill_buf()?;
            if buf.is_empty() {
                return Ok(skipped);
            }
            let Some(i) = buf.iter().position(|&b| b == b'P') else {
                let n = buf.len();
                self.consume(n);
                skipped += n as u64;
                continue;
            };
            self.consume(i);
            skipped += i as u64;
            let head = self.peek(4)?;
            if KNOWN_SIGNATURES.iter().any(|s| head == s) {
                return Ok(skipped);
            }
            self.consume(1);
            skipped += 1;
        }
    }
}

impl Read for Src<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        super::read::read_via_fill_buf(self, buf)
    }
}

impl BufRead for Src<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.look_left() > 0 {
            return Ok(self.look.get(self.look_pos..).unwrap_or(&[]));
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        let left = self.look_left();
        let amt = if left > 0 {
            let k = amt.min(left);
            self.look_pos += k;
            k
        } else {
            self.inner.consume(amt);
            amt
        };
        self.pos.set(self.pos.get().saturating_add(amt as u64));
    }
}

/// Little-endian field reader over a slice (extra fields, fixed headers).
struct Le<'a>(&'a [u8]);

impl Le<'_> {
    fn u16(&mut self) -> Option<u16> {
        let (head, rest) = self.0.split_first_chunk::<2>()?;
        self.0 = rest;
        Some(u16::from_le_bytes(*head))
    }
    fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_le_bytes(*head))
    }
    fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*head))
    }
}

/// Body of the zip64 extended-information extra field, if present.
fn zip64_field(extra: &[u8]) -> Option<&[u8]> {
    let mut rest = extra;
    while rest.len() >= 4 {
        let mut le = Le(rest);
        let id = le.u16()?;
        let size = usize::from(le.u16()?);
        let body = le.0.get(..size)?;
        if id == ZIP64_EXTRA_ID {
            return Some(body);
        }
        rest = le.0.get(size..)?;
    }
    None
}

/// Escapes bytes that are not UTF-8 as `\xNN` so names stay printable and distinct.
pub(super) fn display_name(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    for chunk in raw.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Names that escape the extraction directory if someone unpacks the archive naively.
pub(super) fn traversal_reason(name: &[u8]) -> Option<&'static str> {
    if name.starts_with(b"/") || name.starts_with(b"\\") {
        return Some("absolute path");
    }
    if name.get(1) == Some(&b':') && name.first().is_some_and(u8::is_ascii_alphabetic) {
        return Some("drive-letter path");
    }
    if name
        .split(|&b| b == b'/' || b == b'\\')
        .any(|part| part == b"..")
    {
        return Some("'..' component");
    }
    if name.contains(&b'\\') {
        return Some("backslash separator");
    }
    if name.contains(&0) {
        return Some("nul byte");
    }
    None
}

/// Values a data descriptor carried.
#[derive(Debug, Clone, Copy)]
struct Descriptor {
    crc: u32,
    csize: u64,
    usize: u64,
}

/// A member found through its local header.
struct LocalRec {
    offset: u64,
    raw_name: Vec<u8>,
    name: String,
    flags: u16,
    method: u16,
    crc: Option<u32>,
    csize: Option<u64>,
    usize: Option<u64>,
    crc_ok: Option<bool>,
    encrypted: bool,
    in_cd: bool,
}

/// A central directory record.
struct CdRec {
    record_offset: u64,
    raw_name: Vec<u8>,
    name: String,
    flags: u16,
    method: u16,
    crc: u32,
    csize: u64,
    usize: u64,
    local_offset: u64,
    segment: usize,
}

/// How a member's content stream stopped early.
#[derive(Debug, Clone)]
enum Stop {
    MemberLimit(u64),
    TotalLimit(u64),
    Bomb { out: u64, input: u64 },
    Corrupt(String),
}

/// The member's raw bytes, in the shape the method and flags need.
enum Body<'s, 'r> {
    Stored(io::Take<&'s mut Src<'r>>),
    Deflate(DeflateDecoder<io::Take<&'s mut Src<'r>>>),
    DeflateOpen(DeflateDecoder<&'s mut Src<'r>>),
    Bzip2(BzDecoder<io::Take<&'s mut Src<'r>>>),
    Bzip2Open(BzDecoder<&'s mut Src<'r>>),
    StoredScan(StoredScan<'s, 'r>),
}

impl Read for Body<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Body::Stored(r) => r.read(buf),
            Body::Deflate(r) => r.read(buf),
            Body::DeflateOpen(r) => r.read(buf),
            Body::Bzip2(r) => r.read(buf),
            Body::Bzip2Open(r) => r.read(buf),
            Body::StoredScan(r) => r.read(buf),
        }
    }
}

impl Body<'_, '_> {
    /// Compressed bytes of a known-size member not consumed by the decoder.
    fn unread_compressed(&self) -> u64 {
        match self {
            Body::Stored(r) => r.limit(),
            Body::Deflate(r) => r.get_ref().limit(),
            Body::Bzip2(r) => r.get_ref().limit(),
            Body::DeflateOpen(_) | Body::Bzip2Open(_) | Body::StoredScan(_) => 0,
        }
    }

    fn known_size(&self) -> bool {
        matches!(self, Body::Stored(_) | Body::Deflate(_) | Body::Bzip2(_))
    }
}

/// Stored content of unknown length (data descriptor): ends at a descriptor signature whose
/// CRC-32 and sizes agree with the bytes emitted so far, which makes a false end practically
/// impossible even when the content itself contains `PK\x07\x08`.
struct StoredScan<'s, 'r> {
    src: &'s mut Src<'r>,
    crc: crc32fast::Hasher,
    emitted: u64,
    zip64: bool,
    found: Option<Descriptor>,
    eof: bool,
}

impl StoredScan<'_, '_> {
    fn descriptor_here(&mut self) -> io::Result<Option<(Descriptor, usize)>> {
        let crc = self.crc.clone().finalize();
        let emitted = self.emitted;
        let head = self.src.peek(24)?;
        if !head.starts_with(&SIG_DESCRIPTOR) {
            return Ok(None);
        }
        let mut le = Le(head.get(4..).unwrap_or(&[]));
        let Some(dcrc) = le.u32() else {
            return Ok(None);
        };
        if dcrc != crc {
            return Ok(None);
        }
        let after_crc = le.0;
        let wide = {
            let mut w = Le(after_crc);
            match (w.u64(), w.u64()) {
                (Some(c), Some(u)) if c == emitted && u == emitted => Some((c, u)),
                _ => None,
            }
        };
        let narrow = {
            let mut n = Le(after_crc);
            match (n.u32(), n.u32()) {
                (Some(c), Some(u)) if u64::from(c) == emitted & 0xffff_ffff && c == u => {
                    Some((u64::from(c), u64::from(u)))
                }
                _ => None,
            }
        };
        let pick = if self.zip64 {
            wide.map(|v| (v, 24)).or(narrow.map(|v| (v, 16)))
        } else {
            narrow.map(|v| (v, 16)).or(wide.map(|v| (v, 24)))
        };
        Ok(pick.map(|((csize, usize), len)| {
            (
                Descriptor {
                    crc: dcrc,
                    csize: csize.max(emitted),
                    usize: usize.max(emitted),
                },
                len,
            )
        }))
    }
}

impl Read for StoredScan<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.found.is_some() || self.eof || buf.is_empty() {
            return Ok(0);
        }
        loop {
            let avail = self.src.fill_buf()?;
            if avail.is_empty() {
                self.eof = true;
                return Ok(0);
            }
            let plain = avail.iter().position(|&b| b == b'P').unwrap_or(avail.len());
            let n = if plain > 0 {
                plain.min(buf.len())
            } else if let Some((d, len)) = self.descriptor_here()? {
                self.found = Some(d);
                self.src.consume(len);
                return Ok(0);
            } else {
                1
            };
            let avail = self.src.fill_buf()?;
            let (Some(dst), Some(from)) = (buf.get_mut(..n), avail.get(..n)) else {
                continue;
            };
            dst.copy_from_slice(from);
            self.crc.update(from);
            self.emitted = self.emitted.saturating_add(n as u64);
            self.src.consume(n);
            return Ok(n);
        }
    }
}

/// Bounded, CRC-checking view of one member's decompressed content.
struct MemberStream<'s, 'r> {
    body: Body<'s, 'r>,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    crc: crc32fast::Hasher,
    out: u64,
    member_cap: u64,
    total_left: u64,
    max_ratio: u64,
    ratio_min: u64,
    counter: Rc<Cell<u64>>,
    in_start: u64,
    stop: Option<Stop>,
    finished: bool,
}

impl MemberStream<'_, '_> {
    fn compressed_in(&self) -> u64 {
        self.counter.get().saturating_sub(self.in_start)
    }

    fn refill(&mut self) -> io::Result<()> {
        let cap = self.member_cap.min(self.total_left);
        let room = cap.saturating_sub(self.out);
        // Ask for one byte past the cap so we learn whether the cap was really exceeded.
        let want = usize::try_from(room.saturating_add(1))
            .unwrap_or(usize::MAX)
            .min(self.buf.len());
        let n = match self.body.read(self.buf.get_mut(..want).unwrap_or(&mut [])) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(e) => {
                self.stop = Some(Stop::Corrupt(e.to_string()));
                return Ok(());
            }
        };
        if n == 0 {
            self.finished = true;
            return Ok(());
        }
        let n64 = n as u64;
        let keep = if n64 > room {
            self.stop = Some(if self.member_cap <= self.total_left {
                Stop::MemberLimit(self.member_cap)
            } else {
                Stop::TotalLimit(self.total_left)
            });
            usize::try_from(room).unwrap_or(0)
        } else {
            n
        };
        let kept = self.buf.get(..keep).unwrap_or(&[]);
        self.crc.update(kept);
        self.out = self.out.saturating_add(keep as u64);
        self.pos = 0;
        self.len = keep;
        let input = self.compressed_in().max(1);
        if self.stop.is_none()
            && self.out > self.ratio_min
            && self.out > input.saturating_mul(self.max_ratio)
        {
            self.stop = Some(Stop::Bomb {
                out: self.out,
                input,
            });
        }
        Ok(())
    }

    /// Decompresses whatever the callback left, output discarded, within the same caps.
    fn drain(&mut self) {
        while self.stop.is_none() && !self.finished {
            self.pos = self.len;
            if self.refill().is_err() {
                break;
            }
        }
    }
}

impl Read for MemberStream<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        super::read::read_via_fill_buf(self, buf)
    }
}

impl BufRead for MemberStream<'_, '_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos >= self.len && self.stop.is_none() && !self.finished {
            self.refill()?;
        }
        if self.pos >= self.len
            && let Some(stop) = &self.stop
        {
            return Err(io::Error::other(format!(
                "zip member stream stopped: {}",
                stop_code(stop)
            )));
        }
        Ok(self.buf.get(self.pos..self.len).unwrap_or(&[]))
    }

    fn consume(&mut self, amt: usize) {
        self.pos = self.pos.saturating_add(amt).min(self.len);
    }
}

fn stop_code(stop: &Stop) -> &'static str {
    match stop {
        Stop::MemberLimit(_) => "member-too-large",
        Stop::TotalLimit(_) => "limit-total-bytes",
        Stop::Bomb { .. } => "bomb",
        Stop::Corrupt(_) => "corrupt-data",
    }
}

struct Walker<'l> {
    limits: &'l Limits,
    file_size: u64,
    report: ZipReport,
    locals: Vec<LocalRec>,
    cds: Vec<CdRec>,
    segment_bases: Vec<Option<u64>>,
    segment: usize,
    segment_records: u64,
    segment_cd_start: Option<u64>,
    cd_bytes: u64,
    total_out: u64,
    zip64_eocd: Option<Zip64Eocd>,
    eocd_count: usize,
    cd_cap_reported: bool,
}

#[derive(Debug, Clone, Copy)]
struct Zip64Eocd {
    entries: u64,
    cd_size: u64,
    cd_offset: u64,
}

impl<'l> Walker<'l> {
    fn new(limits: &'l Limits, file_size: u64) -> Self {
        Walker {
            limits,
            file_size,
            report: ZipReport::default(),
            locals: Vec::new(),
            cds: Vec::new(),
            segment_bases: Vec::new(),
            segment: 0,
            segment_records: 0,
            segment_cd_start: None,
            cd_bytes: 0,
            total_out: 0,
            zip64_eocd: None,
            eocd_count: 0,
            cd_cap_reported: false,
        }
    }

    fn problem(&mut self, p: Problem) {
        let len = self.report.problems.len();
        if len < self.limits.max_problems {
            self.report.problems.push(p);
        } else if len == self.limits.max_problems {
            self.report.problems.push(Problem::new(
                "too-many-problems",
                format!(
                    "more than {} problems; the rest are not listed",
                    self.limits.max_problems
                ),
            ));
        }
    }

    fn run(
        &mut self,
        src: &mut Src<'_>,
        on_member: &mut dyn FnMut(&Member, &mut dyn BufRead),
    ) -> Result<(), Halt> {
        let prefix = src.skip_to_signature()?;
        self.report.prefix_bytes = prefix;
        if src.peek(4)?.len() < 4 {
            self.problem(Problem::new(
                "bad-signature",
                format!("no zip record signature in {prefix} bytes"),
            ));
            return Ok(());
        }
        if prefix > 0 {
            // Polyglots and self-extractors: the bytes in front are another file format that
            // other tools will happily parse (a pickle in front of a zip, for example).
            self.problem(
                Problem::new(
                    "prefix-data",
                    format!("{prefix} bytes before the first zip record"),
                )
                .at(0),
            );
        }
        loop {
            let at = src.position();
            let head = src.peek(4)?;
            if head.is_empty() {
                return Ok(());
            }
            let sig: [u8; 4] = head.try_into().unwrap_or_default();
            match sig {
                SIG_LOCAL => self.local(src, on_member)?,
                SIG_CENTRAL => self.central(src)?,
                SIG_ZIP64_EOCD => self.zip64_eocd(src)?,
                SIG_ZIP64_LOCATOR => {
                    src.read_array::<20>()?
                        .ok_or(Halt::Truncated("zip64 locator"))?;
                }
                SIG_EOCD => self.eocd(src)?,
                SIG_DIGITAL_SIGNATURE => {
                    let h = src
                        .read_array::<6>()?
                        .ok_or(Halt::Truncated("digital signature"))?;
                    let size = u64::from(u16::from_le_bytes([h[4], h[5]]));
                    if src.skip(size)? < size {
                        return Err(Halt::Truncated("digital signature"));
                    }
                }
                SIG_ARCHIVE_EXTRA => {
                    let h = src
                        .read_array::<8>()?
                        .ok_or(Halt::Truncated("archive extra data"))?;
                    let size = u64::from(u32::from_le_bytes([h[4], h[5], h[6], h[7]]));
                    self.problem(
                        Problem::new(
                            "encrypted",
                            format!("archive extra data record ({size} bytes): central directory encryption"),
                        )
                        .at(at),
                    );
                    if src.skip(size)? < size {
                        return Err(Halt::Truncated("archive extra data"));
                    }
                }
                _ => {
                    // Data between records is invisible to central-directory readers and is
                    // where a second payload hides; it is never part of any member.
                    let skip_first = if sig == SIG_DESCRIPTOR {
                        src.skip(4)?
                    } else {
                        0
                    };
                    let n = skip_first + src.skip_to_signature()?;
                    let code = if self.eocd_count > 0 {
                        "trailing-data"
                    } else {
                        "gap-data"
                    };
                    self.problem(
                        Problem::new(code, format!("{n} bytes of unknown data at offset {at}"))
                            .at(at),
                    );
                }
            }
        }
    }

    fn local(
        &mut self,
        src: &mut Src<'_>,
        on_member: &mut dyn FnMut(&Member, &mut dyn BufRead),
    ) -> Result<(), Halt> {
        let offset = src.position();
        if self.locals.len() >= self.limits.max_members {
            self.problem(
                Problem::new(
                    "too-many-members",
                    format!(
                        "more than {} local headers; walk stopped",
                        self.limits.max_members
                    ),
                )
                .at(offset),
            );
            return Err(Halt::Stop);
        }
        let h = src
            .read_array::<LOCAL_HEADER_LEN>()?
            .ok_or(Halt::Truncated("local header"))?;
        let flags = u16::from_le_bytes([h[6], h[7]]);
        let method = u16::from_le_bytes([h[8], h[9]]);
        let crc = u32::from_le_bytes([h[14], h[15], h[16], h[17]]);
        let csize32 = u32::from_le_bytes([h[18], h[19], h[20], h[21]]);
        let usize32 = u32::from_le_bytes([h[22], h[23], h[24], h[25]]);
        let name_len = usize::from(u16::from_le_bytes([h[26], h[27]]));
        let extra_len = usize::from(u16::from_le_bytes([h[28], h[29]]));
        let raw_name = self.read_name(src, name_len, offset)?;
        let name = display_name(&raw_name);
        let extra = src
            .read_vec(extra_len)?
            .ok_or(Halt::Truncated("local header extra field"))?;
        let zip64 = zip64_field(&extra);
        let (mut csize, mut usize) = (u64::from(csize32), u64::from(usize32));
        if let Some(body) = zip64 {
            let mut le = Le(body);
            if body.len() >= 16 && (usize32 == U32_MAX || csize32 == U32_MAX) {
                usize = le.u64().unwrap_or(usize);
                csize = le.u64().unwrap_or(csize);
            } else {
                if usize32 == U32_MAX {
                    usize = le.u64().unwrap_or(usize);
                }
                if csize32 == U32_MAX {
                    csize = le.u64().unwrap_or(csize);
                }
            }
        }
        if let Some(reason) = traversal_reason(&raw_name) {
            self.problem(
                Problem::new("path-traversal", format!("member name '{name}': {reason}"))
                    .member(&name)
                    .at(offset),
            );
        }
        let descriptor = flags & FLAG_DESCRIPTOR != 0;
        let encrypted =
            flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION) != 0 || method == METHOD_AES;
        let mut rec = LocalRec {
            offset,
            raw_name,
            name: name.clone(),
            flags,
            method,
            crc: (!descriptor).then_some(crc),
            csize: (!descriptor).then_some(csize),
            usize: (!descriptor).then_some(usize),
            crc_ok: None,
            encrypted,
            in_cd: false,
        };
        let data_start = src.position();
        if encrypted || !matches!(method, METHOD_STORED | METHOD_DEFLATE | METHOD_BZIP2) {
            let (code, msg) = if encrypted {
                (
                    "encrypted",
                    format!("member '{name}' is encrypted; content not scanned"),
                )
            } else {
                (
                    "unsupported-method",
                    format!(
                        "member '{name}' uses compression method {method}; content not scanned"
                    ),
                )
            };
            self.problem(Problem::new(code, msg).member(&name).at(offset));
            if descriptor {
                self.resync(src, &mut rec, data_start)?;
            } else if src.skip(csize)? < csize {
                self.locals.push(rec);
                return Err(Halt::Truncated("member data"));
            }
            self.locals.push(rec);
            return Ok(());
        }
        self.stream_member(src, &mut rec, zip64.is_some(), on_member)?;
        self.locals.push(rec);
        Ok(())
    }

    fn read_name(&mut self, src: &mut Src<'_>, len: usize, at: u64) -> Result<Vec<u8>, Halt> {
        let keep = len.min(self.limits.max_name_len);
        let name = src.read_vec(keep)?.ok_or(Halt::Truncated("member name"))?;
        if keep < len {
            let rest = (len - keep) as u64;
            if src.skip(rest)? < rest {
                return Err(Halt::Truncated("member name"));
            }
            self.problem(
                Problem::new(
                    "name-too-long",
                    format!("member name of {len} bytes cut to {keep}"),
                )
                .member(&display_name(&name))
                .at(at),
            );
        }
        Ok(name)
    }

    fn stream_member(
        &mut self,
        src: &mut Src<'_>,
        rec: &mut LocalRec,
        zip64: bool,
        on_member: &mut dyn FnMut(&Member, &mut dyn BufRead),
    ) -> Result<(), Halt> {
        let descriptor = rec.flags & FLAG_DESCRIPTOR != 0;
        let data_start = src.position();
        let counter = Rc::clone(&src.pos);
        let csize = rec.csize.unwrap_or(0);
        let snapshot = member_from_local(rec);
        let body = match (rec.method, descriptor) {
            (METHOD_STORED, false) => Body::Stored((&mut *src).take(csize)),
            (METHOD_DEFLATE, false) => Body::Deflate(DeflateDecoder::new((&mut *src).take(csize))),
            (METHOD_BZIP2, false) => Body::Bzip2(BzDecoder::new((&mut *src).take(csize))),
            (METHOD_DEFLATE, true) => Body::DeflateOpen(DeflateDecoder::new(&mut *src)),
            (METHOD_BZIP2, true) => Body::Bzip2Open(BzDecoder::new(&mut *src)),
            _ => Body::StoredScan(StoredScan {
                src,
                crc: crc32fast::Hasher::new(),
                emitted: 0,
                zip64,
                found: None,
                eof: false,
            }),
        };
        let mut stream = MemberStream {
            body,
            buf: vec![0; STREAM_BUF_LEN],
            pos: 0,
            len: 0,
            crc: crc32fast::Hasher::new(),
            out: 0,
            member_cap: self.limits.max_member_bytes,
            total_left: self.limits.max_total_bytes.saturating_sub(self.total_out),
            max_ratio: self.limits.max_ratio,
            ratio_min: self.limits.ratio_min_bytes,
            counter,
            in_start: data_start,
            stop: None,
            finished: false,
        };
        on_member(&snapshot, &mut stream);
        stream.drain();
        let out = stream.out;
        let crc = stream.crc.clone().finalize();
        let stop = stream.stop.clone();
        let known_size = stream.body.known_size();
        let unread = stream.body.unread_compressed();
        let scan_found = match &stream.body {
            Body::StoredScan(s) => Some((s.found, s.eof)),
            _ => None,
        };
        drop(stream);
        self.total_out = self.total_out.saturating_add(out);
        let name = rec.name.clone();
        if let Some(stop) = &stop {
            let msg = match stop {
                Stop::MemberLimit(cap) => {
                    format!("member '{name}' decompresses past the {cap}-byte member limit")
                }
                Stop::TotalLimit(left) => {
                    format!(
                        "member '{name}' decompresses past the archive total limit ({left} bytes were left)"
                    )
                }
                Stop::Bomb { out, input } => format!(
                    "member '{name}' expands {out} bytes from {input} compressed (limit ratio {})",
                    self.limits.max_ratio
                ),
                Stop::Corrupt(e) => format!("member '{name}' content is corrupt: {e}"),
            };
            self.problem(
                Problem::new(stop_code(stop), msg)
                    .member(&name)
                    .at(rec.offset),
            );
        }
        if known_size {
            // Skip what the decoder left: after a stop the rest of the compressed data, or
            // bytes after the end of a deflate stream that no reader would look at.
            if src.skip(unread)? < unread {
                return Err(Halt::Truncated("member data"));
            }
            if stop.is_none() && unread > 0 {
                self.problem(
                    Problem::new(
                        "size-mismatch",
                        format!("member '{name}': {unread} compressed bytes after the end of the compressed stream"),
                    )
                    .member(&name)
                    .at(data_start),
                );
            }
            if stop.is_none() {
                let consumed = src.position().saturating_sub(data_start);
                if consumed < csize {
                    return Err(Halt::Truncated("member data"));
                }
            }
        } else if let Some((found, eof)) = scan_found {
            match found {
                Some(d) => {
                    rec.crc = Some(d.crc);
                    rec.csize = Some(d.csize);
                    rec.usize = Some(d.usize);
                }
                None if eof => {
                    return Err(Halt::Truncated("stored member without data descriptor"));
                }
                None => {}
            }
        } else if stop.is_some() {
            // Limit or corruption inside a self-terminating stream of unknown length: its end
            // can only be found by decompressing further, which is what the limit forbids.
            self.resync(src, rec, data_start)?;
            return Ok(());
        } else {
            let consumed = src.position().saturating_sub(data_start);
            let d = self.read_descriptor(src, rec, zip64, consumed, out)?;
            rec.crc = Some(d.crc);
            rec.csize = Some(d.csize);
            rec.usize = Some(d.usize);
        }
        if stop.is_none() {
            if let Some(expected) = rec.crc {
                let ok = expected == crc;
                rec.crc_ok = Some(ok);
                if !ok {
                    self.problem(
                        Problem::new(
                            "crc-mismatch",
                            format!("member '{name}': crc-32 is {crc:#010x}, header says {expected:#010x}"),
                        )
                        .member(&name)
                        .at(rec.offset),
                    );
                }
            }
            if let Some(declared) = rec.usize
                && declared != out
            {
                self.problem(
                    Problem::new(
                        "size-mismatch",
                        format!(
                            "member '{name}': {out} bytes decompressed, header says {declared}"
                        ),
                    )
                    .member(&name)
                    .at(rec.offset),
                );
            }
        }
        Ok(())
    }

    /// Reads the data descriptor after a self-terminating stream; picks the 32- or 64-bit form
    /// whose compressed size agrees with what was actually consumed.
    fn read_descriptor(
        &mut self,
        src: &mut Src<'_>,
        rec: &LocalRec,
        zip64: bool,
        consumed: u64,
        out: u64,
    ) -> Result<Descriptor, Halt> {
        let at = src.position();
        let head = src.peek(24)?;
        let sig = head.starts_with(&SIG_DESCRIPTOR);
        let body = head.get(if sig { 4 } else { 0 }..).unwrap_or(&[]);
        let narrow = {
            let mut le = Le(body);
            match (le.u32(), le.u32(), le.u32()) {
                (Some(c), Some(cs), Some(us)) => Some(Descriptor {
                    crc: c,
                    csize: u64::from(cs),
                    usize: u64::from(us),
                }),
                _ => None,
            }
        };
        let wide = {
            let mut le = Le(body);
            match (le.u32(), le.u64(), le.u64()) {
                (Some(c), Some(cs), Some(us)) => Some(Descriptor {
                    crc: c,
                    csize: cs,
                    usize: us,
                }),
                _ => None,
            }
        };
        let fits =
            |d: &Option<Descriptor>| d.is_some_and(|d| d.csize == consumed && d.usize == out);
        let base = if sig { 4 } else { 0 };
        let (d, len) = match (fits(&narrow), fits(&wide)) {
            (true, false) => (narrow, base + 12),
            (false, true) => (wide, base + 20),
            (true, true) if zip64 => (wide, base + 20),
            (true, true) => (narrow, base + 12),
            (false, false) => {
                let (d, len) = if zip64 {
                    (wide, base + 20)
                } else {
                    (narrow, base + 12)
                };
                if d.is_some() {
                    self.problem(
                        Problem::new(
                            "descriptor-mismatch",
                            format!(
                                "member '{}': data descriptor sizes disagree with the {consumed} compressed / {out} uncompressed bytes read",
                                rec.name
                            ),
                        )
                        .member(&rec.name)
                        .at(at),
                    );
                }
                (d, len)
            }
        };
        let Some(d) = d else {
            return Err(Halt::Truncated("data descriptor"));
        };
        src.skip(len as u64)?;
        Ok(d)
    }

    /// Finds the next record after a member whose end is unknown (encrypted or unsupported
    /// with a data descriptor, or a stream stopped by a limit).
    fn resync(
        &mut self,
        src: &mut Src<'_>,
        rec: &mut LocalRec,
        data_start: u64,
    ) -> Result<(), Halt> {
        let skipped = src.skip_to_signature()?;
        let at = src.position();
        if src.peek(4)? == SIG_DESCRIPTOR {
            let mut le_buf = src.peek(24)?.get(4..).unwrap_or(&[]).to_vec();
            le_buf.truncate(20);
            let mut le = Le(&le_buf);
            if let (Some(crc), Some(cs), Some(us)) = (le.u32(), le.u32(), le.u32()) {
                rec.crc = Some(crc);
                rec.csize = Some(u64::from(cs));
                rec.usize = Some(u64::from(us));
                src.skip(16)?;
            }
        }
        self.problem(
            Problem::new(
                "resync",
                format!(
                    "member '{}': end found by searching for the next signature ({skipped} bytes from offset {data_start} to {at})",
                    rec.name
                ),
            )
            .member(&rec.name)
            .at(data_start),
        );
        Ok(())
    }

    fn central(&mut self, src: &mut Src<'_>) -> Result<(), Halt> {
        let record_offset = src.position();
        if self.segment_cd_start.is_none() {
            self.segment_cd_start = Some(record_offset);
        }
        let h = src
            .read_array::<CENTRAL_HEADER_LEN>()?
            .ok_or(Halt::Truncated("central directory record"))?;
        let flags = u16::from_le_bytes([h[8], h[9]]);
        let method = u16::from_le_bytes([h[10], h[11]]);
        let crc = u32::from_le_bytes([h[16], h[17], h[18], h[19]]);
        let csize32 = u32::from_le_bytes([h[20], h[21], h[22], h[23]]);
        let usize32 = u32::from_le_bytes([h[24], h[25], h[26], h[27]]);
        let name_len = usize::from(u16::from_le_bytes([h[28], h[29]]));
        let extra_len = usize::from(u16::from_le_bytes([h[30], h[31]]));
        let comment_len = u64::from(u16::from_le_bytes([h[32], h[33]]));
        let disk = u16::from_le_bytes([h[34], h[35]]);
        let offset32 = u32::from_le_bytes([h[42], h[43], h[44], h[45]]);
        let record_len = (CENTRAL_HEADER_LEN + name_len + extra_len) as u64 + comment_len;
        self.cd_bytes = self.cd_bytes.saturating_add(record_len);
        self.segment_records = self.segment_records.saturating_add(1);
        let raw_name = self.read_name(src, name_len, record_offset)?;
        let extra = src
            .read_vec(extra_len)?
            .ok_or(Halt::Truncated("central directory extra field"))?;
        if src.skip(comment_len)? < comment_len {
            return Err(Halt::Truncated("central directory comment"));
        }
        if self.cd_bytes > self.limits.max_cd_bytes || self.cds.len() >= self.limits.max_members {
            if !self.cd_cap_reported {
                self.cd_cap_reported = true;
                self.problem(
                    Problem::new(
                        "limit-central-directory",
                        format!(
                            "central directory beyond {} bytes or {} records; later records not checked",
                            self.limits.max_cd_bytes, self.limits.max_members
                        ),
                    )
                    .at(record_offset),
                );
            }
            return Ok(());
        }
        let (mut csize, mut usize, mut local_offset) =
            (u64::from(csize32), u64::from(usize32), u64::from(offset32));
        if let Some(body) = zip64_field(&extra) {
            let mut le = Le(body);
            if usize32 == U32_MAX {
                usize = le.u64().unwrap_or(usize);
            }
            if csize32 == U32_MAX {
                csize = le.u64().unwrap_or(csize);
            }
            if offset32 == U32_MAX {
                local_offset = le.u64().unwrap_or(local_offset);
            }
        }
        let name = display_name(&raw_name);
        if disk != 0 && disk != U16_MAX {
            self.problem(
                Problem::new("multi-disk", format!("member '{name}' is on disk {disk}"))
                    .member(&name)
                    .at(record_offset),
            );
        }
        self.cds.push(CdRec {
            record_offset,
            raw_name,
            name,
            flags,
            method,
            crc,
            csize,
            usize,
            local_offset,
            segment: self.segment,
        });
        Ok(())
    }

    fn zip64_eocd(&mut self, src: &mut Src<'_>) -> Result<(), Halt> {
        let at = src.position();
        if self.segment_cd_start.is_none() {
            self.segment_cd_start = Some(at);
        }
        let h = src
            .read_array::<56>()?
            .ok_or(Halt::Truncated("zip64 end of central directory"))?;
        let mut le = Le(h.get(4..).unwrap_or(&[]));
        let size = le.u64().unwrap_or(0);
        let mut le = Le(h.get(32..).unwrap_or(&[]));
        let entries = le.u64().unwrap_or(0);
        let cd_size = le.u64().unwrap_or(0);
        let cd_offset = le.u64().unwrap_or(0);
        self.zip64_eocd = Some(Zip64Eocd {
            entries,
            cd_size,
            cd_offset,
        });
        let rest = size.saturating_sub(ZIP64_EOCD_FIXED_LEN);
        if rest > self.limits.max_cd_bytes {
            self.problem(
                Problem::new(
                    "limit-central-directory",
                    format!("zip64 end record claims {rest} bytes of extensible data"),
                )
                .at(at),
            );
        }
        if src.skip(rest)? < rest {
            return Err(Halt::Truncated("zip64 end of central directory"));
        }
        Ok(())
    }

    fn eocd(&mut self, src: &mut Src<'_>) -> Result<(), Halt> {
        let at = src.position();
        let h = src
            .read_array::<EOCD_LEN>()?
            .ok_or(Halt::Truncated("end of central directory"))?;
        let disk = u16::from_le_bytes([h[4], h[5]]);
        let cd_disk = u16::from_le_bytes([h[6], h[7]]);
        let entries16 = u16::from_le_bytes([h[10], h[11]]);
        let cd_size32 = u32::from_le_bytes([h[12], h[13], h[14], h[15]]);
        let cd_offset32 = u32::from_le_bytes([h[16], h[17], h[18], h[19]]);
        let comment_len = usize::from(u16::from_le_bytes([h[20], h[21]]));
        self.eocd_count += 1;
        self.report.has_eocd = true;
        if self.eocd_count == 2 {
            // Loaders read the last end record: a second archive appended to the first
            // replaces what they see.
            self.problem(
                Problem::new(
                    "multiple-eocd",
                    format!("second end of central directory at offset {at}"),
                )
                .at(at),
            );
        }
        let z = self.zip64_eocd.take();
        let entries = match z {
            Some(z) if entries16 == U16_MAX => z.entries,
            _ => u64::from(entries16),
        };
        let cd_size = match z {
            Some(z) if cd_size32 == U32_MAX => z.cd_size,
            _ => u64::from(cd_size32),
        };
        let cd_offset = match z {
            Some(z) if cd_offset32 == U32_MAX => z.cd_offset,
            _ => u64::from(cd_offset32),
        };
        if (disk != 0 && disk != U16_MAX) || (cd_disk != 0 && cd_disk != U16_MAX) {
            self.problem(
                Problem::new(
                    "multi-disk",
                    format!("end record names disk {disk}, directory disk {cd_disk}"),
                )
                .at(at),
            );
        }
        let cd_start = self.segment_cd_start.unwrap_or(at);
        let base = cd_start.checked_sub(cd_offset);
        if base.is_none() {
            self.problem(
                Problem::new(
                    "bad-cd-offset",
                    format!("central directory offset {cd_offset} lies past where it starts ({cd_start})"),
                )
                .at(at),
            );
        }
        self.segment_bases.push(base);
        if entries != self.segment_records {
            self.problem(
                Problem::new(
                    "eocd-mismatch",
                    format!(
                        "end record counts {entries} entries, {} records found",
                        self.segment_records
                    ),
                )
                .at(at),
            );
        }
        let actual_cd_size = self
            .cds
            .iter()
            .filter(|c| c.segment == self.segment)
            .map(|c| c.record_offset)
            .min()
            .map(|first| at.saturating_sub(first))
            .unwrap_or(0);
        if z.is_none()
            && self.segment_records > 0
            && cd_size != actual_cd_size
            && !self.cd_cap_reported
        {
            self.problem(
                Problem::new(
                    "eocd-mismatch",
                    format!("end record says the central directory is {cd_size} bytes, it is {actual_cd_size}"),
                )
                .at(at),
            );
        }
        self.report.comment_len = comment_len;
        if comment_len > self.limits.max_comment_len {
            self.problem(
                Problem::new(
                    "comment-too-large",
                    format!(
                        "archive comment of {comment_len} bytes, limit {}",
                        self.limits.max_comment_len
                    ),
                )
                .at(at),
            );
        }
        let cl = comment_len as u64;
        if src.skip(cl)? < cl {
            return Err(Halt::Truncated("archive comment"));
        }
        self.segment += 1;
        self.segment_records = 0;
        self.segment_cd_start = None;
        Ok(())
    }

    /// Cross-checks the local view against the central view and builds the member list.
    fn finish(&mut self) {
        if !self.report.has_eocd {
            self.problem(Problem::new(
                "truncated",
                format!(
                    "no end of central directory record in {} bytes",
                    self.file_size
                ),
            ));
        }
        let mut by_offset: HashMap<u64, usize> = HashMap::new();
        for (i, l) in self.locals.iter().enumerate() {
            by_offset.entry(l.offset).or_insert(i);
        }
        let mut members: Vec<Member> = Vec::new();
        let mut cd_only: Vec<Member> = Vec::new();
        let mut found: Vec<Problem> = Vec::new();
        let cds = std::mem::take(&mut self.cds);
        for cd in &cds {
            // An archive without an end record (truncated) is assumed to start at offset 0.
            let base = match self.segment_bases.get(cd.segment) {
                Some(Some(b)) => Some(*b),
                Some(None) => None,
                None => Some(self.report.prefix_bytes),
            };
            let abs = base.and_then(|b| b.checked_add(cd.local_offset));
            let local = abs.and_then(|a| by_offset.get(&a).copied());
            match local.and_then(|i| self.locals.get_mut(i)) {
                Some(l) => {
                    l.in_cd = true;
                    if let Some(p) = compare(l, cd) {
                        found.push(p);
                    }
                }
                None => {
                    // Python's zipfile and PyTorch read this member; we never saw its bytes.
                    found.push(
                        Problem::new(
                            "cd-only-member",
                            format!(
                                "member '{}' is in the central directory (local header offset {}) but no local header was found there; not scanned",
                                cd.name, cd.local_offset
                            ),
                        )
                        .member(&cd.name)
                        .at(cd.record_offset),
                    );
                    cd_only.push(Member {
                        name: cd.name.clone(),
                        local_offset: abs.unwrap_or(cd.local_offset),
                        flags: cd.flags,
                        method: cd.method,
                        compressed_size: cd.csize,
                        uncompressed_size: cd.usize,
                        crc32: cd.crc,
                        crc_ok: None,
                        encrypted: cd.flags & FLAG_ENCRYPTED != 0 || cd.method == METHOD_AES,
                        in_central_directory: true,
                        has_local_header: false,
                        duplicate: false,
                    });
                }
            }
        }
        let any_cd = !cds.is_empty() || self.report.has_eocd;
        for l in &self.locals {
            if any_cd && !l.in_cd {
                // Streaming readers see this member; central-directory readers do not.
                found.push(
                    Problem::new(
                        "local-only-member",
                        format!(
                            "member '{}' at offset {} is not in the central directory",
                            l.name, l.offset
                        ),
                    )
                    .member(&l.name)
                    .at(l.offset),
                );
            }
            let mut m = member_from_local(l);
            m.in_central_directory = l.in_cd;
            if let Some(cd) = cds.iter().find(|c| c.raw_name == l.raw_name) {
                m.compressed_size = l.csize.unwrap_or(cd.csize);
                m.uncompressed_size = l.usize.unwrap_or(cd.usize);
                m.crc32 = l.crc.unwrap_or(cd.crc);
            }
            members.push(m);
        }
        members.extend(cd_only);
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for m in &members {
            *counts.entry(m.name.as_str()).or_insert(0) += 1;
        }
        for (name, n) in counts.iter().filter(|(_, n)| **n > 1) {
            // PyTorch's reader takes the first entry of a name, Python's zipfile the last:
            // each can be shown a different pickle.
            found.push(
                Problem::new(
                    "duplicate-name",
                    format!("{n} members are named '{name}' (pytorch loads the first, python's zipfile the last)"),
                )
                .member(name),
            );
        }
        let dups: Vec<String> = counts
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(k, _)| (*k).to_string())
            .collect();
        for m in &mut members {
            m.duplicate = dups.contains(&m.name);
        }
        for p in found {
            self.problem(p);
        }
        self.report.members = members;
    }
}

fn member_from_local(l: &LocalRec) -> Member {
    Member {
        name: l.name.clone(),
        local_offset: l.offset,
        flags: l.flags,
        method: l.method,
        compressed_size: l.csize.unwrap_or(0),
        uncompressed_size: l.usize.unwrap_or(0),
        crc32: l.crc.unwrap_or(0),
        crc_ok: l.crc_ok,
        encrypted: l.encrypted,
        in_central_directory: false,
        has_local_header: true,
        duplicate: false,
    }
}

/// Fields where the local header (plus descriptor) and the central directory disagree.
fn compare(l: &LocalRec, cd: &CdRec) -> Option<Problem> {
    let mut diffs = Vec::new();
    if l.raw_name != cd.raw_name {
        diffs.push(format!("name '{}' vs '{}'", l.name, cd.name));
    }
    if l.method != cd.method {
        diffs.push(format!("method {} vs {}", l.method, cd.method));
    }
    if let Some(c) = l.crc
        && c != cd.crc
    {
        diffs.push(format!("crc-32 {c:#010x} vs {:#010x}", cd.crc));
    }
    if let Some(c) = l.csize
        && c != cd.csize
    {
        diffs.push(format!("compressed size {c} vs {}", cd.csize));
    }
    if let Some(u) = l.usize
        && u != cd.usize
    {
        diffs.push(format!("uncompressed size {u} vs {}", cd.usize));
    }
    if diffs.is_empty() {
        return None;
    }
    Some(
        Problem::new(
            "cd-local-mismatch",
            format!(
                "member '{}' local header vs central directory: {}",
                l.name,
                diffs.join(", ")
            ),
        )
        .member(&cd.name)
        .at(l.offset),
    )
}

/// Which well-known model layout an archive's member names follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// `torch.save` zip (or TorchScript `torch.jit.save`) layout under one top-level folder.
    PyTorch(TorchLayout),
    /// Keras v3 `.keras` archive.
    Keras {
        /// Members outside the expected set.
        unexpected: Vec<String>,
    },
    /// NumPy `.npz`: every member is a `.npy` file.
    Npz {
        /// Number of arrays.
        arrays: usize,
    },
}

/// Details of a PyTorch zip layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TorchLayout {
    /// The top-level folder name (`archive` for recent torch versions, the file stem before).
    pub archive: String,
    /// `code/` or `constants.pkl` present: a TorchScript archive.
    pub torchscript: bool,
    /// Pickle members the loader unpickles (`data.pkl`, `constants.pkl`).
    pub pickles: Vec<String>,
    /// Members outside the layout (extra pickles, files outside the folder, ...).
    pub unexpected: Vec<String>,
}

/// Recognises PyTorch, Keras v3 and npz layouts from member names.
pub fn classify_pytorch(members: &[Member]) -> Option<Layout> {
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    if let Some(l) = classify_torch(&names) {
        return Some(Layout::PyTorch(l));
    }
    let keras_core = ["config.json", "metadata.json", "model.weights.h5"];
    if keras_core.iter().all(|k| names.contains(k)) {
        let unexpected = names
            .iter()
            .filter(|n| !keras_core.contains(n) && !n.starts_with("assets/"))
            .map(|n| (*n).to_string())
            .collect();
        return Some(Layout::Keras { unexpected });
    }
    if !names.is_empty() && names.iter().all(|n| n.ends_with(".npy")) {
        return Some(Layout::Npz {
            arrays: names.len(),
        });
    }
    None
}

fn classify_torch(names: &[&str]) -> Option<TorchLayout> {
    let data_pkl = names.iter().find_map(|n| {
        n.strip_suffix("/data.pkl")
            .filter(|a| !a.is_empty() && !a.contains('/'))
    })?;
    let archive = data_pkl.to_string();
    let prefix = format!("{archive}/");
    let mut torchscript = false;
    let mut pickles = Vec::new();
    let mut unexpected = Vec::new();
    for name in names {
        let Some(rest) = name.strip_prefix(&prefix) else {
            unexpected.push((*name).to_string());
            continue;
        };
        let expected = match rest {
            "data.pkl" | "constants.pkl" => {
                pickles.push((*name).to_string());
                torchscript |= rest == "constants.pkl";
                true
            }
            "version"
            | ".data/version"
            | "byteorder"
            | ".data/serialization_id"
            | ".format_version"
            | ".storage_alignment" => true,
            _ if rest.starts_with("code/")
                || rest.starts_with("constants/")
                || rest.starts_with("extra/") =>
            {
                torchscript |= rest.starts_with("code/");
                true
            }
            _ => rest
                .strip_prefix("data/")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
        };
        if !expected {
            unexpected.push((*name).to_string());
        }
    }
    Some(TorchLayout {
        archive,
        torchscript,
        pickles,
        unexpected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn crc(data: &[u8]) -> u32 {
        crc32fast::hash(data)
    }

    /// One entry for the tiny test zip writer; every field can be bent to build a malformed
    /// archive byte by byte.
    #[derive(Clone)]
    struct E {
        name: Vec<u8>,
        data: Vec<u8>,
        method: u16,
        /// `Some(with_signature)`: sizes and CRC go in a data descriptor.
        descriptor: Option<bool>,
        zip64: bool,
        local: bool,
        in_cd: bool,
        flags: u16,
        crc_override: Option<u32>,
        cd_name: Option<Vec<u8>>,
        cd_crc: Option<u32>,
        cd_offset: Option<u64>,
    }

    fn e(name: &str, data: &[u8]) -> E {
        E {
            name: name.as_bytes().to_vec(),
            data: data.to_vec(),
            method: METHOD_STORED,
            descriptor: None,
            zip64: false,
            local: true,
            in_cd: true,
            flags: 0,
            crc_override: None,
            cd_name: None,
            cd_crc: None,
            cd_offset: None,
        }
    }

    impl E {
        fn deflated(mut self) -> Self {
            self.method = METHOD_DEFLATE;
            self
        }
        fn descriptor(mut self, with_sig: bool) -> Self {
            self.descriptor = Some(with_sig);
            self
        }
        fn zip64(mut self) -> Self {
            self.zip64 = true;
            self
        }
    }

    struct Zip {
        out: Vec<u8>,
        cd: Vec<(E, u64, u32, u64, u64)>,
        base: u64,
    }

    impl Zip {
        fn new() -> Self {
            Zip {
                out: Vec::new(),
                cd: Vec::new(),
                base: 0,
            }
        }

        fn raw(&mut self, b: &[u8]) -> &mut Self {
            self.out.extend_from_slice(b);
            self
        }

        fn add(&mut self, en: E) -> &mut Self {
            let offset = self.out.len() as u64 - self.base;
            let payload = match en.method {
                METHOD_DEFLATE => deflate(&en.data),
                METHOD_BZIP2 => {
                    let mut w =
                        bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
                    w.write_all(&en.data).unwrap();
                    w.finish().unwrap()
                }
                _ => en.data.clone(),
            };
            let c = en.crc_override.unwrap_or(crc(&en.data));
            let (cs, us) = (payload.len() as u64, en.data.len() as u64);
            if en.local {
                let o = &mut self.out;
                let dd = en.descriptor.is_some();
                o.extend_from_slice(&SIG_LOCAL);
                o.extend_from_slice(&(if en.zip64 { 45u16 } else { 20 }).to_le_bytes());
                o.extend_from_slice(
                    &(en.flags | if dd { FLAG_DESCRIPTOR } else { 0 }).to_le_bytes(),
                );
                o.extend_from_slice(&en.method.to_le_bytes());
                o.extend_from_slice(&[0; 4]);
                let (hc, hcs, hus) = if dd { (0, 0, 0) } else { (c, cs, us) };
                o.extend_from_slice(&hc.to_le_bytes());
                if en.zip64 {
                    o.extend_from_slice(&U32_MAX.to_le_bytes());
                    o.extend_from_slice(&U32_MAX.to_le_bytes());
                } else {
                    o.extend_from_slice(&(hcs as u32).to_le_bytes());
                    o.extend_from_slice(&(hus as u32).to_le_bytes());
                }
                o.extend_from_slice(&(en.name.len() as u16).to_le_bytes());
                o.extend_from_slice(&(if en.zip64 { 20u16 } else { 0 }).to_le_bytes());
                o.extend_from_slice(&en.name);
                if en.zip64 {
                    o.extend_from_slice(&ZIP64_EXTRA_ID.to_le_bytes());
                    o.extend_from_slice(&16u16.to_le_bytes());
                    o.extend_from_slice(&hus.to_le_bytes());
                    o.extend_from_slice(&hcs.to_le_bytes());
                }
                o.extend_from_slice(&payload);
                if let Some(sig) = en.descriptor {
                    if sig {
                        o.extend_from_slice(&SIG_DESCRIPTOR);
                    }
                    o.extend_from_slice(&c.to_le_bytes());
                    if en.zip64 {
                        o.extend_from_slice(&cs.to_le_bytes());
                        o.extend_from_slice(&us.to_le_bytes());
                    } else {
                        o.extend_from_slice(&(cs as u32).to_le_bytes());
                        o.extend_from_slice(&(us as u32).to_le_bytes());
                    }
                }
            }
            if en.in_cd {
                let off = en.cd_offset.unwrap_or(offset);
                let c = en.cd_crc.unwrap_or(c);
                self.cd.push((en, off, c, cs, us));
            }
            self
        }

        fn finish(&mut self) -> Vec<u8> {
            self.finish_with(b"")
        }

        fn finish_with(&mut self, comment: &[u8]) -> Vec<u8> {
            let cd_start = self.out.len() as u64 - self.base;
            let any64 = self.cd.iter().any(|c| c.0.zip64);
            for (en, off, c, cs, us) in &self.cd {
                let o = &mut self.out;
                let dd = en.descriptor.is_some();
                let name = en.cd_name.clone().unwrap_or(en.name.clone());
                o.extend_from_slice(&SIG_CENTRAL);
                o.extend_from_slice(&[20, 3, 20, 0]);
                o.extend_from_slice(
                    &(en.flags | if dd { FLAG_DESCRIPTOR } else { 0 }).to_le_bytes(),
                );
                o.extend_from_slice(&en.method.to_le_bytes());
                o.extend_from_slice(&[0; 4]);
                o.extend_from_slice(&c.to_le_bytes());
                if en.zip64 {
                    o.extend_from_slice(&[0xff; 8]);
                } else {
                    o.extend_from_slice(&(*cs as u32).to_le_bytes());
                    o.extend_from_slice(&(*us as u32).to_le_bytes());
                }
                o.extend_from_slice(&(name.len() as u16).to_le_bytes());
                o.extend_from_slice(&(if en.zip64 { 28u16 } else { 0 }).to_le_bytes());
                o.extend_from_slice(&[0; 10]);
                if en.zip64 {
                    o.extend_from_slice(&U32_MAX.to_le_bytes());
                } else {
                    o.extend_from_slice(&(*off as u32).to_le_bytes());
                }
                o.extend_from_slice(&name);
                if en.zip64 {
                    o.extend_from_slice(&ZIP64_EXTRA_ID.to_le_bytes());
                    o.extend_from_slice(&24u16.to_le_bytes());
                    o.extend_from_slice(&us.to_le_bytes());
                    o.extend_from_slice(&cs.to_le_bytes());
                    o.extend_from_slice(&off.to_le_bytes());
                }
            }
            let cd_size = self.out.len() as u64 - self.base - cd_start;
            let n = self.cd.len() as u64;
            if any64 {
                let z64 = self.out.len() as u64 - self.base;
                let o = &mut self.out;
                o.extend_from_slice(&SIG_ZIP64_EOCD);
                o.extend_from_slice(&44u64.to_le_bytes());
                o.extend_from_slice(&[45, 0, 45, 0]);
                o.extend_from_slice(&[0; 8]);
                o.extend_from_slice(&n.to_le_bytes());
                o.extend_from_slice(&n.to_le_bytes());
                o.extend_from_slice(&cd_size.to_le_bytes());
                o.extend_from_slice(&cd_start.to_le_bytes());
                o.extend_from_slice(&SIG_ZIP64_LOCATOR);
                o.extend_from_slice(&[0; 4]);
                o.extend_from_slice(&z64.to_le_bytes());
                o.extend_from_slice(&1u32.to_le_bytes());
            }
            let o = &mut self.out;
            o.extend_from_slice(&SIG_EOCD);
            o.extend_from_slice(&[0; 4]);
            let n16 = if any64 { U16_MAX } else { n as u16 };
            o.extend_from_slice(&n16.to_le_bytes());
            o.extend_from_slice(&n16.to_le_bytes());
            if any64 {
                o.extend_from_slice(&[0xff; 8]);
            } else {
                o.extend_from_slice(&(cd_size as u32).to_le_bytes());
                o.extend_from_slice(&(cd_start as u32).to_le_bytes());
            }
            o.extend_from_slice(&(comment.len() as u16).to_le_bytes());
            o.extend_from_slice(comment);
            self.out.clone()
        }
    }

    type Seen = Vec<(String, Vec<u8>, bool)>;

    fn run_with(bytes: &[u8], limits: &Limits, cap: usize) -> (ZipReport, Seen) {
        let mut seen = Vec::new();
        let mut r = io::BufReader::with_capacity(cap, bytes);
        let report = walk(&mut r, bytes.len() as u64, 0, limits, &mut |m, s| {
            let mut buf = Vec::new();
            let ok = s.read_to_end(&mut buf).is_ok();
            seen.push((m.name.clone(), buf, ok));
        });
        assert!(
            r.fill_buf().unwrap().is_empty(),
            "walk must read to the end"
        );
        (report, seen)
    }

    fn run(bytes: &[u8]) -> (ZipReport, Seen) {
        run_with(bytes, &Limits::default(), 8192)
    }

    fn codes(r: &ZipReport) -> Vec<&'static str> {
        r.problems.iter().map(|p| p.code).collect()
    }

    const PICKLE: &[u8] = b"\x80\x02}q\x00.";

    fn torch_zip(extra: bool) -> Vec<u8> {
        let mut z = Zip::new();
        z.add(e("archive/data.pkl", PICKLE))
            .add(e("archive/byteorder", b"little"))
            .add(e("archive/data/0", &[0u8; 64]))
            .add(e("archive/version", b"3\n"))
            .add(e("archive/.data/serialization_id", b"123"));
        if extra {
            z.add(e("archive/evil.pkl", b"\x80\x04cos\nsystem\n."));
        }
        z.finish()
    }

    #[test]
    fn walks_pytorch_layout_and_flags_extra_member() {
        let (r, seen) = run(&torch_zip(true));
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[0], ("archive/data.pkl".into(), PICKLE.to_vec(), true));
        assert!(
            r.members
                .iter()
                .all(|m| m.in_central_directory && m.has_local_header && m.crc_ok == Some(true))
        );
        let Some(Layout::PyTorch(t)) = classify_pytorch(&r.members) else {
            panic!("not torch")
        };
        assert_eq!(t.archive, "archive");
        assert_eq!(t.pickles, vec!["archive/data.pkl"]);
        assert_eq!(t.unexpected, vec!["archive/evil.pkl"]);
        assert!(!t.torchscript);
        let (r, _) = run(&torch_zip(false));
        let Some(Layout::PyTorch(t)) = classify_pytorch(&r.members) else {
            panic!("not torch")
        };
        assert!(t.unexpected.is_empty());
    }

    #[test]
    fn classifies_torchscript_keras_and_npz() {
        let names = |ns: &[&str]| -> Vec<Member> {
            let mut z = Zip::new();
            for n in ns {
                z.add(e(n, b"x"));
            }
            run(&z.finish()).0.members
        };
        let ts = names(&[
            "m/data.pkl",
            "m/constants.pkl",
            "m/code/__torch__/m.py",
            "m/version",
        ]);
        assert!(matches!(
            classify_pytorch(&ts),
            Some(Layout::PyTorch(TorchLayout {
                torchscript: true,
                ..
            }))
        ));
        let k = names(&["metadata.json", "config.json", "model.weights.h5", "x.pkl"]);
        assert_eq!(
            classify_pytorch(&k),
            Some(Layout::Keras {
                unexpected: vec!["x.pkl".into()]
            })
        );
        let n = names(&["a.npy", "b.npy"]);
        assert_eq!(classify_pytorch(&n), Some(Layout::Npz { arrays: 2 }));
        assert_eq!(classify_pytorch(&names(&["a.npy", "b.txt"])), None);
    }

    /// A `.npy` file as `np.save` writes it (header padded to 64 bytes).
    fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut header = dict.as_bytes().to_vec();
        header.extend(std::iter::repeat_n(
            b' ',
            (64 - (10 + header.len() + 1) % 64) % 64,
        ));
        header.push(b'\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_npz_members_as_npy() {
        use crate::inspect::numpy;
        let a = npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }",
            &[0; 32],
        );
        let b = npy(
            "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
            PICKLE,
        );
        let bytes = Zip::new()
            .add(e("a.npy", &a).deflated())
            .add(e("b.npy", &b))
            .finish();
        let mut facts = Vec::new();
        let mut r = &bytes[..];
        let rep = walk(
            &mut r,
            bytes.len() as u64,
            0,
            &Limits::default(),
            &mut |m, s| {
                let h = numpy::read_header(s, &numpy::Limits::default()).unwrap();
                let size_problem = numpy::check_size(&h, m.uncompressed_size);
                let mut rest = Vec::new();
                s.read_to_end(&mut rest).unwrap();
                facts.push((h.has_object_dtype, size_problem, rest));
            },
        );
        assert!(rep.problems.is_empty(), "{:?}", rep.problems);
        assert_eq!(
            classify_pytorch(&rep.members),
            Some(Layout::Npz { arrays: 2 })
        );
        assert_eq!(facts[0], (false, None, vec![0; 32]));
        assert_eq!(facts[1], (true, None, PICKLE.to_vec()));
    }

    #[test]
    fn reports_crc_mismatch() {
        let mut bad = e("archive/data.pkl", PICKLE);
        bad.crc_override = Some(0xdead_beef);
        let (r, seen) = run(&Zip::new().add(bad).finish());
        assert_eq!(codes(&r), vec!["crc-mismatch"]);
        assert_eq!(r.members[0].crc_ok, Some(false));
        assert_eq!(seen[0].1, PICKLE);
    }

    #[test]
    fn reports_crc_mismatch_in_deflate_member_with_descriptor() {
        let mut bad = e("a", &[7u8; 1000]).deflated().descriptor(true);
        bad.crc_override = Some(1);
        let (r, _) = run(&Zip::new().add(bad).add(e("b", b"ok")).finish());
        assert_eq!(codes(&r), vec!["crc-mismatch"]);
        assert_eq!(r.members[1].crc_ok, Some(true));
    }

    fn small_limits() -> Limits {
        Limits {
            max_ratio: 100,
            ratio_min_bytes: 64 << 10,
            ..Limits::default()
        }
    }

    #[test]
    fn reports_bomb_and_continues() {
        let zeros = vec![0u8; 4 << 20];
        let bytes = Zip::new()
            .add(e("bomb", &zeros).deflated())
            .add(e("next.pkl", PICKLE))
            .finish();
        assert!(bytes.len() < 10_000);
        let (r, seen) = run_with(&bytes, &small_limits(), 8192);
        assert_eq!(codes(&r), vec!["bomb"]);
        assert!(!seen[0].2, "the stopped stream ends in an error");
        assert!(seen[0].1.len() < 4 << 20);
        assert_eq!(seen[1], ("next.pkl".into(), PICKLE.to_vec(), true));
        assert_eq!(r.members[0].crc_ok, None);
    }

    #[test]
    fn reports_bomb_in_descriptor_member_and_resyncs() {
        let zeros = vec![0u8; 4 << 20];
        let bytes = Zip::new()
            .add(e("bomb", &zeros).deflated().descriptor(true))
            .add(e("next.pkl", PICKLE))
            .finish();
        let (r, seen) = run_with(&bytes, &small_limits(), 8192);
        assert_eq!(codes(&r), vec!["bomb", "resync"]);
        assert_eq!(seen[1], ("next.pkl".into(), PICKLE.to_vec(), true));
        assert!(r.members.iter().all(|m| m.in_central_directory));
    }

    #[test]
    fn reports_member_too_large() {
        let limits = Limits {
            max_member_bytes: 1000,
            ..Limits::default()
        };
        let bytes = Zip::new()
            .add(e("big", &[1u8; 5000]))
            .add(e("next.pkl", PICKLE))
            .finish();
        let (r, seen) = run_with(&bytes, &limits, 8192);
        assert_eq!(codes(&r), vec!["member-too-large"]);
        assert_eq!(seen[0].1.len(), 1000);
        assert_eq!(seen[1].1, PICKLE);
    }

    #[test]
    fn reports_total_limit() {
        let limits = Limits {
            max_total_bytes: 1500,
            ..Limits::default()
        };
        let bytes = Zip::new()
            .add(e("a", &[1u8; 1000]))
            .add(e("b", &[1u8; 1000]).deflated())
            .finish();
        let (r, _) = run_with(&bytes, &limits, 8192);
        assert_eq!(codes(&r), vec!["limit-total-bytes"]);
    }

    #[test]
    fn reports_cd_local_mismatch() {
        let mut a = e("archive/data.pkl", PICKLE);
        a.cd_name = Some(b"archive/other.pkl".to_vec());
        let mut b = e("b", b"bbb");
        b.cd_crc = Some(5);
        let (r, _) = run(&Zip::new().add(a).add(b).finish());
        assert_eq!(codes(&r), vec!["cd-local-mismatch", "cd-local-mismatch"]);
        assert!(
            r.problems[0]
                .message
                .contains("name 'archive/data.pkl' vs 'archive/other.pkl'")
        );
        assert!(r.problems[1].message.contains("crc-32"));
    }

    #[test]
    fn reports_and_scans_local_only_member() {
        let mut hidden = e("archive/hidden.pkl", b"\x80\x04cos\nsystem\n.");
        hidden.in_cd = false;
        let (r, seen) = run(&Zip::new()
            .add(e("archive/data.pkl", PICKLE))
            .add(hidden)
            .finish());
        assert_eq!(codes(&r), vec!["local-only-member"]);
        assert_eq!(seen[1].0, "archive/hidden.pkl");
        assert!(!r.members[1].in_central_directory);
    }

    #[test]
    fn reports_cd_only_member() {
        // A central directory entry pointing into the middle of another member's stored data,
        // where a complete local header hides (the overlapping-member trick).
        let inner = Zip::new().add(e("archive/data.pkl", b"evil")).out.clone();
        let mut cover = e("cover.bin", &[b"xxxx".as_slice(), &inner].concat());
        cover.in_cd = true;
        let mut ghost = e("archive/data.pkl", b"evil");
        ghost.local = false;
        ghost.cd_offset = Some(30 + 9 + 4);
        let (r, seen) = run(&Zip::new().add(cover).add(ghost).finish());
        assert_eq!(codes(&r), vec!["cd-only-member"]);
        assert_eq!(seen.len(), 1);
        let ghost = &r.members[1];
        assert!(!ghost.has_local_header && ghost.in_central_directory);
        assert_eq!(ghost.local_offset, 43);
    }

    #[test]
    fn reports_duplicate_names_and_scans_both() {
        let bytes = Zip::new()
            .add(e("archive/data.pkl", PICKLE))
            .add(e("archive/data.pkl", b"\x80\x04cos\nsystem\n."))
            .finish();
        let (r, seen) = run(&bytes);
        assert_eq!(codes(&r), vec!["duplicate-name"]);
        assert_eq!(seen.len(), 2);
        assert!(r.members.iter().all(|m| m.duplicate));
    }

    #[test]
    fn reads_deflate_descriptors_with_and_without_signature() {
        let data: Vec<u8> = (0..20_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let bytes = Zip::new()
            .add(e("a", &data).deflated().descriptor(true))
            .add(e("b", &data).deflated().descriptor(false))
            .add(e("c", &data).deflated().descriptor(true).zip64())
            .add(e("d", PICKLE))
            .finish();
        for cap in [1, 3, 17, 8192] {
            let (r, seen) = run_with(&bytes, &Limits::default(), cap);
            assert!(r.problems.is_empty(), "cap {cap}: {:?}", r.problems);
            assert_eq!(seen.len(), 4);
            assert!(seen[..3].iter().all(|s| s.1 == data));
            assert!(
                r.members
                    .iter()
                    .all(|m| m.crc_ok == Some(true) && m.in_central_directory)
            );
            assert_eq!(r.members[2].uncompressed_size, data.len() as u64);
        }
    }

    #[test]
    fn reads_stored_descriptor_by_validated_signature() {
        // The content itself contains a descriptor signature that must not end the member.
        let mut data = b"abc PK\x07\x08 fake PK\x07\x08\0\0\0\0\x05\0\0\0\x05\0\0\0 tail".to_vec();
        data.extend_from_slice(&[b'P'; 100]);
        let bytes = Zip::new()
            .add(e("s", &data).descriptor(true))
            .add(e("t", &data).descriptor(true).zip64())
            .add(e("d", PICKLE))
            .finish();
        for cap in [1, 5, 8192] {
            let (r, seen) = run_with(&bytes, &Limits::default(), cap);
            assert!(r.problems.is_empty(), "{:?}", r.problems);
            assert_eq!(seen[0].1, data);
            assert_eq!(seen[1].1, data);
            assert_eq!(seen[2].1, PICKLE);
        }
    }

    #[test]
    fn reports_truncated_archive() {
        let bytes = torch_zip(false);
        let (r, _) = run(&bytes[..40]);
        assert!(r.has("truncated"), "{:?}", r.problems);
        let cd_cut = bytes.len() - 30;
        let (r, seen) = run(&bytes[..cd_cut]);
        assert!(r.has("truncated"));
        assert_eq!(seen.len(), 5);
    }

    #[test]
    fn reports_prefix_data_with_both_offset_conventions() {
        // Self-extractor style: offsets relative to the archive start...
        let mut z = Zip::new();
        z.raw(b"#!/bin/sh\nexit 0\n");
        z.base = z.out.len() as u64;
        let rel = z.add(e("archive/data.pkl", PICKLE)).finish();
        // ...and `zip -A` style: offsets adjusted to the file start.
        let abs = Zip::new()
            .raw(b"#!/bin/sh\nexit 0\n")
            .add(e("archive/data.pkl", PICKLE))
            .finish();
        for bytes in [rel, abs] {
            let (r, seen) = run(&bytes);
            assert_eq!(codes(&r), vec!["prefix-data"]);
            assert_eq!(r.prefix_bytes, 17);
            assert_eq!(seen.len(), 1);
        }
    }

    #[test]
    fn reports_gap_and_trailing_data() {
        let mut z = Zip::new();
        z.add(e("a", b"1")).raw(b"hidden bytes").add(e("b", b"2"));
        let mut bytes = z.finish_with(b"hi");
        bytes.extend_from_slice(b"trailer");
        let (r, seen) = run(&bytes);
        assert_eq!(codes(&r), vec!["gap-data", "trailing-data"]);
        assert_eq!(r.comment_len, 2);
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn reports_encrypted_and_unsupported_members() {
        let mut enc = e("enc", b"secret");
        enc.flags = FLAG_ENCRYPTED;
        let mut lz = e("lz", b"whatever");
        lz.method = 14;
        let mut enc_dd = e("enc2", b"secret2").descriptor(true);
        enc_dd.flags = FLAG_ENCRYPTED;
        let bytes = Zip::new()
            .add(enc)
            .add(lz)
            .add(enc_dd)
            .add(e("ok", PICKLE))
            .finish();
        let (r, seen) = run(&bytes);
        assert_eq!(
            codes(&r),
            vec!["encrypted", "unsupported-method", "encrypted", "resync"]
        );
        assert_eq!(seen.len(), 1);
        assert!(r.members[0].encrypted);
        assert!(r.members[2].in_central_directory);
    }

    #[test]
    fn reads_bzip2_members() {
        let data = vec![3u8; 10_000];
        let mut b = e("b.pkl", &data);
        b.method = METHOD_BZIP2;
        let (r, seen) = run(&Zip::new().add(b).finish());
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(seen[0].1, data);
    }

    #[test]
    fn reports_path_traversal() {
        for name in ["../x.pkl", "/etc/x", "a\\..\\b", "C:x", "a/../../b"] {
            let (r, _) = run(&Zip::new().add(e(name, b"x")).finish());
            assert_eq!(codes(&r), vec!["path-traversal"], "{name}");
        }
    }

    #[test]
    fn reads_zip64_records() {
        let bytes = Zip::new()
            .add(e("a", b"hello").zip64())
            .add(e("b", b"world").deflated().zip64())
            .finish();
        let (r, seen) = run(&bytes);
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(seen[1].1, b"world");
        assert_eq!(r.members[1].uncompressed_size, 5);
    }

    #[test]
    fn reports_depth_exceeded_without_reading() {
        let bytes = torch_zip(false);
        let mut r = &bytes[..];
        let limits = Limits::default();
        let rep = walk(
            &mut r,
            bytes.len() as u64,
            limits.max_depth + 1,
            &limits,
            &mut |_, _| {},
        );
        assert_eq!(codes(&rep), vec!["depth-exceeded"]);
        assert_eq!(r.len(), bytes.len());
    }

    #[test]
    fn reports_too_many_members() {
        let limits = Limits {
            max_members: 2,
            ..Limits::default()
        };
        let (r, seen) = run_with(&torch_zip(false), &limits, 8192);
        assert_eq!(seen.len(), 2);
        assert!(r.has("too-many-members") && r.has("unscanned-data"));
    }

    #[test]
    fn reports_long_names_and_multiple_eocd() {
        let limits = Limits {
            max_name_len: 4,
            ..Limits::default()
        };
        let (r, _) = run_with(&Zip::new().add(e("abcdefgh", b"x")).finish(), &limits, 8192);
        assert!(r.has("name-too-long"));
        assert_eq!(r.members[0].name, "abcd");
        let mut two = torch_zip(false);
        let second = Zip::new().add(e("other/data.pkl", PICKLE)).finish();
        two.extend_from_slice(&second);
        let (r, seen) = run(&two);
        assert!(r.has("multiple-eocd"));
        assert_eq!(seen.len(), 6);
    }

    #[test]
    fn partial_callback_read_still_checks_crc() {
        let data = vec![9u8; 300_000];
        let bytes = Zip::new()
            .add(e("a", &data).deflated())
            .add(e("b", &data).descriptor(true))
            .finish();
        let mut r = &bytes[..];
        let rep = walk(
            &mut r,
            bytes.len() as u64,
            0,
            &Limits::default(),
            &mut |_, s| {
                let mut b = [0u8; 10];
                s.read_exact(&mut b).unwrap();
            },
        );
        assert!(rep.problems.is_empty(), "{:?}", rep.problems);
        assert!(rep.members.iter().all(|m| m.crc_ok == Some(true)));
    }

    #[test]
    fn deflate_decoder_does_not_over_read_a_bufread() {
        let mut bytes = deflate(&[5u8; 100_000]);
        bytes.extend_from_slice(b"MARKER");
        for cap in [1, 2, 7, 64, 65536] {
            let mut r = io::BufReader::with_capacity(cap, &bytes[..]);
            let mut out = Vec::new();
            DeflateDecoder::new(&mut r).read_to_end(&mut out).unwrap();
            assert_eq!(out.len(), 100_000);
            let mut rest = Vec::new();
            r.read_to_end(&mut rest).unwrap();
            assert_eq!(rest, b"MARKER", "cap {cap}");
        }
    }

    #[test]
    fn rejects_non_zip_input() {
        let (r, seen) = run(b"not a zip at all");
        assert_eq!(codes(&r), vec!["bad-signature", "truncated"]);
        assert!(seen.is_empty());
        assert!(is_zip(b"PK\x03\x04rest") && is_zip(b"PK\x05\x06") && !is_zip(b"\x80\x02"));
    }

    fn oracle_archive(streaming: bool) -> (Vec<u8>, Vec<(String, Vec<u8>)>) {
        use zip::write::SimpleFileOptions;
        let files: Vec<(String, Vec<u8>)> = vec![
            ("archive/data.pkl".into(), PICKLE.to_vec()),
            (
                "archive/data/0".into(),
                (0..50_000u32).map(|i| (i * 7 % 13) as u8).collect(),
            ),
            ("archive/version".into(), b"3\n".to_vec()),
            ("empty".into(), Vec::new()),
        ];
        let mut buf = Vec::new();
        {
            let write_all = |w: &mut dyn FnMut(&str, &[u8], zip::CompressionMethod)| {
                for (i, (n, d)) in files.iter().enumerate() {
                    let m = if i % 2 == 0 {
                        zip::CompressionMethod::Stored
                    } else {
                        zip::CompressionMethod::Deflated
                    };
                    w(n, d, m);
                }
            };
            if streaming {
                let mut z = zip::ZipWriter::new_stream(&mut buf);
                write_all(&mut |n, d, m| {
                    z.start_file(n, SimpleFileOptions::default().compression_method(m))
                        .unwrap();
                    z.write_all(d).unwrap();
                });
                z.finish().unwrap();
            } else {
                let mut z = zip::ZipWriter::new(io::Cursor::new(&mut buf));
                write_all(&mut |n, d, m| {
                    z.start_file(n, SimpleFileOptions::default().compression_method(m))
                        .unwrap();
                    z.write_all(d).unwrap();
                });
                z.finish().unwrap();
            }
        }
        (buf, files)
    }

    #[test]
    fn agrees_with_zip_crate_oracle() {
        for streaming in [false, true] {
            let (bytes, files) = oracle_archive(streaming);
            let (r, seen) = run_with(&bytes, &Limits::default(), 13);
            assert!(
                r.problems.is_empty(),
                "streaming {streaming}: {:?}",
                r.problems
            );
            let mut oracle = zip::ZipArchive::new(io::Cursor::new(&bytes)).unwrap();
            assert_eq!(oracle.len(), r.members.len());
            for (i, m) in r.members.iter().enumerate() {
                let f = oracle.by_index(i).unwrap();
                assert_eq!(f.name().unwrap(), m.name);
                assert_eq!(f.size(), m.uncompressed_size);
                assert_eq!(f.compressed_size(), m.compressed_size);
                assert_eq!(f.crc32(), m.crc32);
                assert_eq!(m.crc_ok, Some(true));
                assert_eq!(seen[i].1, files[i].1);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn never_panics_on_garbage(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)) {
            let _ = run_with(&bytes, &Limits::default(), 7);
        }

        #[test]
        fn never_panics_on_truncation_or_corruption(cut in 0usize..2000, flip in 0usize..2000, val: u8) {
            let mut bytes = Zip::new()
                .add(e("archive/data.pkl", PICKLE).deflated().descriptor(true))
                .add(e("s", b"stored PK\x07\x08 data").descriptor(true))
                .add(e("z", b"zip64").zip64())
                .finish();
            if let Some(b) = bytes.get_mut(flip) {
                *b = val;
            }
            bytes.truncate(cut);
            let _ = run_with(&bytes, &Limits::default(), 5);
        }
    }
}
