//! Bounded 7z reader (issue 40): the signature header, the header property tree (plain or
//! encoded, as 7-Zip writes it by default) and the folders whose coder this reader decodes.
//!
//! 7z keeps its directory at the end of the file, so the reader needs positioned reads: the file
//! itself at the top level, a bounded in-memory copy for a 7z inside another archive. The header
//! parser is hand-written because every count in it sizes something (folders, coders, streams,
//! files, names) and each is checked against the header bytes left and the member limit first;
//! the header and the encoded header are capped in size and CRC-checked. Member contents are
//! decoded for single-coder folders of Copy, LZMA, LZMA2, Deflate and BZip2 (the coders of the
//! crates already in the tree: lzma-rs, flate2, bzip2), under the same member, total, ratio and
//! depth limits as zip and tar, each member CRC-checked and handed to the caller as a stream.
//! Encrypted folders, filters (BCJ, BCJ2, Delta, ARM...), PPMd and multi-coder chains are
//! reported with the coder named; their members are still listed.

mod decode;
mod header;
mod limits;
#[cfg(test)]
pub(crate) mod tests;

use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};

use header::{Folder, Next, Streams};
pub use limits::Limits;

use super::problem::Problem;
use super::zip::{display_name, traversal_reason};

/// The 7z signature, at offset 0.
pub const SIGNATURE: [u8; 6] = [b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c];

/// Size of the signature header in front of everything.
const SIGNATURE_HEADER: u64 = 32;

/// Rounds of encoded header (an encoded header that decodes to another) followed.
const MAX_ENCODED_ROUNDS: usize = 4;

/// Distinct coder chains recorded in the facts.
const MAX_CODER_CHAINS: usize = 64;

/// How many member names a problem message lists.
const NAMES_IN_MESSAGE: usize = 5;

/// One file of the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Name, UTF-16 decoded (unpaired surrogates as U+FFFD).
    pub name: String,
    /// Unpacked size (0 for directories and empty files).
    pub size: u64,
    /// A directory entry.
    pub is_dir: bool,
    /// The folder holding its bytes, if it has any.
    pub folder: Option<usize>,
}

/// Everything the reader learned about a 7z archive.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SevenZReport {
    /// Files in header order.
    pub members: Vec<Member>,
    /// Problems in the order found.
    pub problems: Vec<Problem>,
    /// Coder chains of the folders, as 7-Zip names them (`LZMA2`, `BCJ x86 + LZMA2`).
    pub coders: Vec<String>,
    /// The header was itself compressed (7-Zip's default).
    pub encoded_header: bool,
}

impl SevenZReport {
    /// Whether a problem with this code was recorded.
    pub fn has(&self, code: &str) -> bool {
        self.problems.iter().any(|p| p.code == code)
    }

    fn push(&mut self, p: Problem, limits: &Limits) {
        crate::model::problem::push_capped(&mut self.problems, p, limits.max_problems);
    }
}

/// Whether `head` starts with the 7z signature.
pub fn is_7z(head: &[u8]) -> bool {
    head.starts_with(&SIGNATURE)
}

/// Reads the 7z archive in `r` (`size` bytes). `on_member(member, content)` is called for each
/// file whose folder is decoded, with its bytes capped by the limits (past a cap, reads fail with
/// `7z member stream stopped:`). Every malformation becomes a [`Problem`]; nothing panics.
pub fn walk<R: Read + Seek + ?Sized>(
    r: &mut R,
    size: u64,
    depth: u32,
    limits: &Limits,
    on_member: &mut dyn FnMut(&Member, &mut dyn BufRead),
) -> SevenZReport {
    let mut report = SevenZReport::default();
    if depth > limits.max_depth {
        report.push(
            Problem::limit(
                "depth-exceeded",
                format!(
                    "archive nested {depth} deep, limit {}; not walked",
                    limits.max_depth
                ),
            ),
            limits,
        );
        return report;
    }
    let mut w = Walk {
        r,
        size,
        limits,
        report,
        total: 0,
        by_folder: Vec::new(),
    };
    if let Err(p) = w.run(on_member) {
        w.report.push(p, limits);
    }
    w.report
}

struct Walk<'r, R: ?Sized> {
    r: &'r mut R,
    size: u64,
    limits: &'r Limits,
    report: SevenZReport,
    total: u64,
    /// Indices into `report.members` of each folder's members, so a message or a walk over one
    /// folder never scans every member (a header can hold millions of folders).
    by_folder: Vec<Vec<usize>>,
}

impl<R: Read + Seek + ?Sized> Walk<'_, R> {
    fn read_at(&mut self, offset: u64, len: u64, what: &str) -> Result<Vec<u8>, Problem> {
        let end = offset.checked_add(len);
        if end.is_none_or(|e| e > self.size) {
            return Err(Problem::malformed(
                "truncated",
                format!(
                    "7z {what} at offset {offset}, {len} bytes, is past the end of the {}-byte file",
                    self.size
                ),
            )
            .at(offset));
        }
        let mut out = vec![0u8; usize::try_from(len).unwrap_or(0)];
        self.r
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.r.read_exact(&mut out))
            .map_err(|e| {
                Problem::note("io-error", format!("7z {what} read failed: {e}")).at(offset)
            })?;
        Ok(out)
    }

    fn run(&mut self, on_member: &mut dyn FnMut(&Member, &mut dyn BufRead)) -> Result<(), Problem> {
        let head = self.read_at(0, SIGNATURE_HEADER, "signature header")?;
        if !is_7z(&head) {
            return Err(Problem::malformed("bad-signature", "no 7z signature").at(0));
        }
        let le64 = |i: usize| {
            u64::from_le_bytes(
                head.get(i..i + 8)
                    .and_then(|s| s.try_into().ok())
                    .unwrap_or_default(),
            )
        };
        let le32 = |i: usize| {
            u32::from_le_bytes(
                head.get(i..i + 4)
                    .and_then(|s| s.try_into().ok())
                    .unwrap_or_default(),
            )
        };
        if head.get(6) != Some(&0) {
            return Err(Problem::note(
                "unsupported-version",
                format!(
                    "7z format version {}.{} is not read",
                    head.get(6).copied().unwrap_or_default(),
                    head.get(7).copied().unwrap_or_default()
                ),
            )
            .at(6));
        }
        let start_crc = crc32fast::hash(head.get(12..32).unwrap_or_default());
        if start_crc != le32(8) {
            return Err(Problem::malformed(
                "crc-mismatch",
                format!(
                    "7z start header CRC is {:08x}, stored {:08x}",
                    start_crc,
                    le32(8)
                ),
            )
            .at(8));
        }
        let (next_offset, next_size, next_crc) = (le64(12), le64(20), le32(28));
        if next_size == 0 {
            // An empty archive: 7-Zip writes no header at all.
            return Ok(());
        }
        if next_size > self.limits.max_header_bytes {
            return Err(Problem::limit(
                "limit-header",
                format!(
                    "7z next header is {next_size} bytes, limit {}",
                    self.limits.max_header_bytes
                ),
            )
            .at(20));
        }
        let at = SIGNATURE_HEADER.checked_add(next_offset).ok_or_else(|| {
            Problem::malformed(
                "truncated",
                format!("7z next header offset {next_offset} overflows"),
            )
            .at(12)
        })?;
        let mut bytes = self.read_at(at, next_size, "next header")?;
        let crc = crc32fast::hash(&bytes);
        if crc != next_crc {
            return Err(Problem::malformed(
                "crc-mismatch",
                format!("7z next header CRC is {crc:08x}, stored {next_crc:08x}"),
            )
            .at(at));
        }
        let mut rounds = 0;
        let header = loop {
            match header::parse(&bytes, self.limits).map_err(|p| p.at(at))? {
                Next::Header(h) => break h,
                Next::Encoded(streams) => {
                    rounds += 1;
                    self.report.encoded_header = true;
                    if rounds > MAX_ENCODED_ROUNDS {
                        return Err(Problem::limit(
                            "limit-header",
                            format!("7z header encoded more than {MAX_ENCODED_ROUNDS} times"),
                        )
                        .at(at));
                    }
                    bytes = self.decode_header(&streams)?;
                }
            }
        };
        self.members(&header);
        if let Some(streams) = &header.streams {
            self.folders(streams, on_member)?;
        }
        Ok(())
    }

    /// The first folder of an encoded header's streams, decoded whole within the header cap.
    fn decode_header(&mut self, s: &Streams) -> Result<Vec<u8>, Problem> {
        let Some(f) = s.folders.first() else {
            return Err(Problem::malformed(
                "bad-header",
                "7z encoded header has no folder",
            ));
        };
        let (start, pack_size) = self.pack_range(s, 0, SIGNATURE_HEADER.checked_add(s.pack_pos))?;
        let limits = self.limits;
        let packed = pack_reader(&mut *self.r, start, pack_size)?;
        let out = decode::decode_all(f, packed, pack_size, limits)?;
        if let Some(want) = f.crc {
            let got = crc32fast::hash(&out);
            if got != want {
                return Err(Problem::malformed(
                    "crc-mismatch",
                    format!("7z encoded header CRC is {got:08x}, stored {want:08x}"),
                ));
            }
        }
        Ok(out)
    }

    /// Offset and size of pack stream `index`, checked against the file.
    /// `start` is where the stream begins (`None` when the sum overflowed); the running sum is
    /// the caller's, so finding every folder's stream stays linear.
    fn pack_range(
        &self,
        s: &Streams,
        index: usize,
        start: Option<u64>,
    ) -> Result<(u64, u64), Problem> {
        let size = s.pack_sizes.get(index).copied().unwrap_or(0);
        match start {
            Some(a) if a.checked_add(size).is_some_and(|e| e <= self.size) => Ok((a, size)),
            _ => Err(Problem::malformed(
                "truncated",
                format!(
                    "7z pack stream {index} ({size} bytes at pack position {}) ends past the end of the {}-byte file",
                    s.pack_pos, self.size
                ),
            )),
        }
    }

    fn members(&mut self, h: &header::Header) {
        let mut folder_of = Vec::new();
        self.by_folder = vec![Vec::new(); h.streams.as_ref().map_or(0, |s| s.folders.len())];
        if let Some(s) = &h.streams {
            for (i, subs) in s.subs.iter().enumerate() {
                folder_of.extend(subs.iter().map(|sub| (i, sub.size)));
            }
        }
        let mut streams = folder_of.into_iter();
        for e in &h.entries {
            let (folder, size) = if e.has_stream {
                match streams.next() {
                    Some((f, s)) => (Some(f), s),
                    None => (None, 0),
                }
            } else {
                (None, 0)
            };
            let name = display_name(e.name.as_bytes());
            if let Some(reason) = traversal_reason(e.name.as_bytes()) {
                self.report.push(
                    Problem::malformed("path-traversal", format!("member name '{name}': {reason}"))
                        .member(&name),
                    self.limits,
                );
            }
            if e.name_cut {
                self.report.push(
                    Problem::limit(
                        "name-too-long",
                        format!(
                            "member name longer than {} UTF-16 units, cut",
                            header::MAX_NAME_UNITS
                        ),
                    )
                    .member(&name),
                    self.limits,
                );
            }
            if e.is_anti {
                self.report.push(
                    Problem::note(
                        "unsupported-entry",
                        format!("member '{name}' is an anti-item"),
                    )
                    .member(&name),
                    self.limits,
                );
            }
            // p7zip keeps a Unix mode in the high 16 bits (flag 0x8000): a symbolic link's
            // content is its target, which a naive extraction follows.
            if e.attributes
                .is_some_and(|a| a & 0x8000 != 0 && (a >> 16) & 0o170000 == 0o120000)
            {
                self.report.push(
                    Problem::note("link-member", format!("member '{name}' is a symbolic link"))
                        .member(&name),
                    self.limits,
                );
            }
            if let Some(list) = folder.and_then(|f| self.by_folder.get_mut(f)) {
                list.push(self.report.members.len());
            }
            self.report.members.push(Member {
                name,
                size,
                is_dir: e.is_dir,
                folder,
            });
        }
        let with_stream = h.entries.iter().filter(|e| e.has_stream).count();
        let streams: usize = h
            .streams
            .as_ref()
            .map_or(0, |s| s.subs.iter().map(Vec::len).sum());
        if with_stream != streams {
            self.report.push(
                Problem::malformed(
                    "size-mismatch",
                    format!("7z header lists {with_stream} files with data but {streams} streams"),
                ),
                self.limits,
            );
        }
    }

    /// The names of the members in folder `i`, for messages.
    fn names_in(&self, i: usize) -> String {
        let names: Vec<&str> = self
            .by_folder
            .get(i)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|&m| self.report.members.get(m))
            .map(|m| m.name.as_str())
            .collect();
        let mut shown = names
            .iter()
            .take(NAMES_IN_MESSAGE)
            .map(|n| format!("'{}'", super::problem::excerpt(n, 200)))
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > NAMES_IN_MESSAGE {
            shown.push_str(&format!(" and {} more", names.len() - NAMES_IN_MESSAGE));
        }
        if shown.is_empty() {
            shown.push_str("no member");
        }
        shown
    }

    fn folders(
        &mut self,
        s: &Streams,
        on_member: &mut dyn FnMut(&Member, &mut dyn BufRead),
    ) -> Result<(), Problem> {
        let mut pack_index = 0usize;
        let mut pack_start = SIGNATURE_HEADER.checked_add(s.pack_pos);
        for (i, f) in s.folders.iter().enumerate() {
            let first_pack = pack_index;
            let folder_start = pack_start;
            for _ in 0..f.num_packed {
                let size = s.pack_sizes.get(pack_index).copied().unwrap_or(0);
                pack_start = pack_start.and_then(|a| a.checked_add(size));
                pack_index = pack_index.saturating_add(1);
            }
            let chain = decode::chain_name(f);
            if self.report.coders.len() < MAX_CODER_CHAINS && !self.report.coders.contains(&chain) {
                self.report.coders.push(chain.clone());
            }
            let plan = match decode::supported(f) {
                Ok(ok) => ok,
                Err(u) => {
                    let p = Problem::note(
                        u.code,
                        format!(
                            "7z folder {i} {}; members not scanned: {}",
                            u.reason,
                            self.names_in(i)
                        ),
                    )
                    .with("coder", chain);
                    self.report.push(p, self.limits);
                    continue;
                }
            };
            let unpack = f.unpack_size();
            let (start, pack_size) = match self.pack_range(s, first_pack, folder_start) {
                Ok(r) => r,
                Err(p) => {
                    self.report.push(p, self.limits);
                    continue;
                }
            };
            if let Some(p) = self.folder_limit(f, i, pack_size, &plan) {
                self.report.push(p, self.limits);
                continue;
            }
            let subs = s.subs.get(i).map_or(&[][..], Vec::as_slice);
            if subs.iter().all(|sub| sub.size == 0) {
                continue;
            }
            let limits = self.limits;
            let names = self.names_in(i);
            let members: Vec<Member> = self
                .by_folder
                .get(i)
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .filter_map(|&m| self.report.members.get(m))
                .cloned()
                .collect();
            let opened = pack_reader(&mut *self.r, start, pack_size)
                .and_then(|packed| decode::open(&plan, packed, pack_size, unpack, limits));
            let mut stream = match opened {
                Ok(r) => r,
                Err(p) => {
                    let p = Problem {
                        message: format!("{}; members not scanned: {names}", p.message),
                        ..p
                    };
                    self.report.push(p.at(start), limits);
                    continue;
                }
            };
            let mut problems = Vec::new();
            let mut total = self.total;
            walk_folder(
                &mut stream,
                &members,
                subs,
                limits,
                &mut total,
                &mut problems,
                on_member,
            );
            drop(stream);
            self.total = total;
            for p in problems {
                self.report.push(p, limits);
            }
        }
        Ok(())
    }

    /// Bombs and blocks too large to decode, before any decoding starts.
    fn folder_limit(
        &self,
        f: &Folder,
        i: usize,
        pack: u64,
        plan: &decode::Plan<'_>,
    ) -> Option<Problem> {
        let unpack = f.unpack_size();
        if unpack >= self.limits.ratio_min_bytes && unpack / pack.max(1) > self.limits.max_ratio {
            return Some(Problem::limit(
                "bomb",
                format!(
                    "7z folder {i} unpacks {pack} bytes to {unpack} (ratio over {}); members not scanned: {}",
                    self.limits.max_ratio,
                    self.names_in(i)
                ),
            ));
        }
        if plan.buffered() && unpack > self.limits.max_buffer {
            return Some(Problem::limit(
                "limit-solid-block",
                format!(
                    "7z folder {i} ({}) unpacks to {unpack} bytes, more than the {} bytes this reader decodes in memory; members not scanned: {}",
                    decode::chain_name(f),
                    self.limits.max_buffer,
                    self.names_in(i)
                ),
            ));
        }
        None
    }
}

/// A reader of `size` bytes of `r` from `start`.
fn pack_reader<'a, R: Read + Seek + ?Sized>(
    r: &'a mut R,
    start: u64,
    size: u64,
) -> Result<Box<dyn BufRead + 'a>, Problem> {
    r.seek(SeekFrom::Start(start))
        .map_err(|e| Problem::note("io-error", format!("7z seek failed: {e}")).at(start))?;
    Ok(Box::new(BufReader::with_capacity(64 * 1024, r.take(size))))
}

/// Hands each member of one folder its bytes, in order, and checks sizes and CRCs. Stops the
/// folder at the first member cut by a limit or broken stream: what follows it in the same
/// solid block could only be reached by decoding through it.
fn walk_folder(
    stream: &mut dyn BufRead,
    members: &[Member],
    subs: &[header::Sub],
    limits: &Limits,
    total: &mut u64,
    problems: &mut Vec<Problem>,
    on_member: &mut dyn FnMut(&Member, &mut dyn BufRead),
) {
    for (m, sub) in members.iter().zip(subs) {
        let allowed = limits
            .max_member_bytes
            .min(limits.max_total_bytes.saturating_sub(*total))
            .min(sub.size);
        let over = allowed < sub.size;
        if over {
            let (code, msg) = if limits.max_member_bytes < sub.size {
                (
                    "member-too-large",
                    format!(
                        "member '{}' is {} bytes, limit {}",
                        m.name, sub.size, limits.max_member_bytes
                    ),
                )
            } else {
                (
                    "limit-total-bytes",
                    format!(
                        "member '{}' goes past the archive total of {} bytes",
                        m.name, limits.max_total_bytes
                    ),
                )
            };
            problems.push(Problem::limit(code, msg).member(&m.name));
        }
        let mut reader = MemberReader {
            inner: &mut *stream,
            left: allowed,
            over,
            crc: crc32fast::Hasher::new(),
            error: None,
        };
        on_member(m, &mut reader);
        let _ = io::copy(&mut reader, &mut io::sink());
        *total = total.saturating_add(allowed - reader.left);
        if let Some(e) = reader.error.take() {
            let (code, what) = if e.kind() == io::ErrorKind::UnexpectedEof {
                ("truncated", "ends before its")
            } else {
                ("corrupt-data", "cannot be decoded to its")
            };
            problems.push(
                Problem::malformed(
                    code,
                    format!("member '{}' {what} {} bytes: {e}", m.name, sub.size),
                )
                .member(&m.name),
            );
            return;
        }
        if over {
            return;
        }
        let got = reader.crc.clone().finalize();
        if let Some(want) = sub.crc
            && got != want
        {
            problems.push(
                Problem::malformed(
                    "crc-mismatch",
                    format!("member '{}' CRC-32 is {got:08x}, stored {want:08x}", m.name),
                )
                .member(&m.name),
            );
        }
    }
}

/// One member's bytes out of its folder's stream: counted, CRC'd, and cut at the cap (reads
/// past it fail, so the consumer knows it saw a prefix). A folder stream that ends early or
/// fails to decode is remembered for the report.
struct MemberReader<'a> {
    inner: &'a mut dyn BufRead,
    left: u64,
    over: bool,
    crc: crc32fast::Hasher,
    error: Option<io::Error>,
}

impl Read for MemberReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        super::read::read_via_fill_buf(self, buf)
    }
}

impl BufRead for MemberReader<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.left == 0 {
            if self.over {
                return Err(io::Error::other(
                    "7z member stream stopped: member-too-large",
                ));
            }
            return Ok(&[]);
        }
        if self.error.is_some() {
            return Err(io::Error::other("7z member stream stopped: corrupt-data"));
        }
        let want = usize::try_from(self.left).unwrap_or(usize::MAX);
        let ended = match self.inner.fill_buf() {
            Ok(buf) => buf.is_empty(),
            Err(e) => {
                self.error = Some(io::Error::new(e.kind(), e.to_string()));
                return Err(io::Error::other("7z member stream stopped: corrupt-data"));
            }
        };
        if ended {
            self.error = Some(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the folder stream ended",
            ));
            return Err(io::Error::other("7z member stream stopped: truncated"));
        }
        let buf = self.inner.fill_buf()?;
        let n = buf.len().min(want);
        Ok(buf.get(..n).unwrap_or_default())
    }

    fn consume(&mut self, amt: usize) {
        // Nothing to take: the folder stream is not asked for more (past a member's end that
        // would decode into the next member, or call a decoder again after it failed).
        if amt == 0 {
            return;
        }
        if let Ok(buf) = self.inner.fill_buf() {
            let n = amt.min(buf.len());
            self.crc.update(buf.get(..n).unwrap_or_default());
            self.inner.consume(n);
            self.left = self.left.saturating_sub(n as u64);
        }
    }
}
