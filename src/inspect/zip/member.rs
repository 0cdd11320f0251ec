//! One member: its local header, its content stream (stored, deflate or bzip2, within the
//! size, total and ratio caps, CRC-32 checked), and where it ends (known size, data descriptor,
//! or a search for the next signature when the end cannot be known).

use std::cell::Cell;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

use bzip2::bufread::BzDecoder;
use flate2::bufread::DeflateDecoder;

use super::format::*;
use super::source::{Le, Src, zip64_field};
use super::walker::{Halt, Walker};
use crate::codec::Ratio;
use crate::inspect::problem::Problem;
use crate::inspect::problem::ProblemKind;

/// Names that escape the extraction directory if someone unpacks the archive naively.
pub(in crate::inspect) fn traversal_reason(name: &[u8]) -> Option<&'static str> {
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
    ratio: Ratio,
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
        if self.stop.is_none() && self.ratio.exceeded(self.out, input) {
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
        crate::inspect::read::read_via_fill_buf(self, buf)
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

/// A stream stopped by a cap is a limit hit; one stopped by bad data is a malformed member.
fn stop_kind(stop: &Stop) -> ProblemKind {
    match stop {
        Stop::MemberLimit(_) | Stop::TotalLimit(_) | Stop::Bomb { .. } => {
            ProblemKind::LimitExceeded
        }
        Stop::Corrupt(_) => ProblemKind::Malformed,
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

/// What streaming one member's body left behind, read out before the stream over `src`
/// is dropped.
struct Streamed {
    out: u64,
    crc: u32,
    stop: Option<Stop>,
    known_size: bool,
    unread: u64,
    scan_found: Option<(Option<Descriptor>, bool)>,
}

impl Walker<'_> {
    pub(super) fn local(
        &mut self,
        src: &mut Src<'_>,
        on_member: &mut dyn FnMut(&Member, &mut dyn BufRead),
    ) -> Result<(), Halt> {
        let offset = src.position();
        if self.locals.len() >= self.limits.max_members {
            self.problem(
                Problem::limit(
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
                Problem::malformed("path-traversal", format!("member name '{name}': {reason}"))
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
            self.problem(Problem::note(code, msg).member(&name).at(offset));
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

    pub(super) fn read_name(
        &mut self,
        src: &mut Src<'_>,
        len: usize,
        at: u64,
    ) -> Result<Vec<u8>, Halt> {
        let keep = len.min(self.limits.max_name_len);
        let name = src.read_vec(keep)?.ok_or(Halt::Truncated("member name"))?;
        if keep < len {
            let rest = (len - keep) as u64;
            if src.skip(rest)? < rest {
                return Err(Halt::Truncated("member name"));
            }
            self.problem(
                Problem::limit(
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
        let data_start = src.position();
        let csize = rec.csize.unwrap_or(0);
        let Streamed {
            out,
            crc,
            stop,
            known_size,
            unread,
            scan_found,
        } = self.run_body(src, rec, zip64, on_member);
        self.total_out = self.total_out.saturating_add(out);
        let name = rec.name.clone();
        if let Some(stop) = &stop {
            self.report_stop(stop, &name, rec.offset);
        }
        if known_size {
            // Skip what the decoder left: after a stop the rest of the compressed data, or
            // bytes after the end of a deflate stream that no reader would look at.
            if src.skip(unread)? < unread {
                return Err(Halt::Truncated("member data"));
            }
            if stop.is_none() && unread > 0 {
                self.problem(
                    Problem::malformed(
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
            self.check_crc_and_size(rec, &name, crc, out);
        }
        Ok(())
    }

    /// Builds the decoder for the member's method, hands the capped stream to the callback,
    /// drains what it left, and returns what the stream saw once it no longer borrows `src`.
    fn run_body(
        &mut self,
        src: &mut Src<'_>,
        rec: &LocalRec,
        zip64: bool,
        on_member: &mut dyn FnMut(&Member, &mut dyn BufRead),
    ) -> Streamed {
        let descriptor = rec.flags & FLAG_DESCRIPTOR != 0;
        let counter = Rc::clone(&src.pos);
        // The counter is the raw stream position (`position()` may be mapped to file offsets).
        let raw_start = src.pos.get();
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
            ratio: Ratio {
                max_ratio: self.limits.max_ratio,
                min_bytes: self.limits.ratio_min_bytes,
            },
            counter,
            in_start: raw_start,
            stop: None,
            finished: false,
        };
        on_member(&snapshot, &mut stream);
        stream.drain();
        Streamed {
            out: stream.out,
            crc: stream.crc.clone().finalize(),
            stop: stream.stop.clone(),
            known_size: stream.body.known_size(),
            unread: stream.body.unread_compressed(),
            scan_found: match &stream.body {
                Body::StoredScan(s) => Some((s.found, s.eof)),
                _ => None,
            },
        }
    }

    /// Turns the reason a member stream stopped early (a limit, a bomb, corrupt data) into
    /// its finding.
    fn report_stop(&mut self, stop: &Stop, name: &str, offset: u64) {
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
            Problem::new(stop_kind(stop), stop_code(stop), msg, None)
                .member(name)
                .at(offset),
        );
    }

    /// Compares a fully streamed member's crc-32 and size with what its headers declared.
    fn check_crc_and_size(&mut self, rec: &mut LocalRec, name: &str, crc: u32, out: u64) {
        if let Some(expected) = rec.crc {
            let ok = expected == crc;
            rec.crc_ok = Some(ok);
            if !ok {
                self.problem(
                    Problem::malformed(
                        "crc-mismatch",
                        format!(
                            "member '{name}': crc-32 is {crc:#010x}, header says {expected:#010x}"
                        ),
                    )
                    .member(name)
                    .at(rec.offset),
                );
            }
        }
        if let Some(declared) = rec.usize
            && declared != out
        {
            self.problem(
                Problem::malformed(
                    "size-mismatch",
                    format!("member '{name}': {out} bytes decompressed, header says {declared}"),
                )
                .member(name)
                .at(rec.offset),
            );
        }
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
                        Problem::malformed(
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
    pub(super) fn resync(
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
            Problem::note(
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
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;
    use crate::inspect::zip::walk;

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
}
