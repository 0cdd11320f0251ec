//! Streaming, bounded tar walker.
//!
//! The first PyTorch serialization format (`torch.save` before 0.4) was a tar archive whose
//! members `sys_info`, `pickle`, `tensors` and `storages` are pickles, and model repositories
//! also ship plain tarballs of checkpoints. This module walks a tar stream once with the `tar`
//! crate in raw mode and hands each regular member's bytes to a callback; nothing is ever
//! unpacked to disk. Raw mode matters: the crate's own handling of GNU long names and PAX
//! headers reads those records into memory without a cap, so we read them ourselves within
//! `Limits::max_name_len` / `Limits::max_pax_len`. Names that would escape an extraction
//! directory, links and device nodes are reported.

use std::io::{self, BufRead, BufReader, Read};

use tar::EntryType;

use super::problem::Problem;
use super::zip::{display_name, traversal_reason};

/// Caps applied while walking a tar stream.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Most entries (of any type) walked.
    pub max_members: usize,
    /// Longest member name kept (GNU long names included).
    pub max_name_len: usize,
    /// Longest PAX extended header read.
    pub max_pax_len: usize,
    /// Most bytes of one member handed to the callback.
    pub max_member_bytes: u64,
    /// Most member bytes handed to the callback for the whole archive.
    pub max_total_bytes: u64,
    /// Deepest nesting of archives in archives; the caller passes the current depth.
    pub max_depth: u32,
    /// Most problems recorded.
    pub max_problems: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// The policy's `archive_*` limits; name and PAX header lengths and the problems kept are
    /// fixed internal caps.
    fn from(l: &crate::model::limits::Limits) -> Self {
        use crate::model::limits::{u32_of, usize_of};
        Limits {
            max_members: usize_of(l.archive_members),
            max_name_len: 4096,
            max_pax_len: 65_536,
            max_member_bytes: l.archive_member_bytes,
            max_total_bytes: l.archive_total_bytes,
            max_depth: u32_of(l.archive_depth),
            max_problems: 1000,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// One tar entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TarMember {
    /// Name (GNU long name or PAX `path` when present); non-UTF-8 bytes as `\xNN`.
    pub name: String,
    /// Entry type byte (`0` regular file, `5` directory, `2` symlink, ...).
    pub entry_type: u8,
    /// Size of the entry's data.
    pub size: u64,
    /// Offset of the entry's header in the stream.
    pub header_offset: u64,
}

/// Everything the walk learned about a tar stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TarReport {
    /// Entries in stream order (extension records excluded).
    pub members: Vec<TarMember>,
    /// Problems in the order found.
    pub problems: Vec<Problem>,
    /// The member names of the legacy tar-based PyTorch format are all present.
    pub legacy_pytorch: bool,
}

impl TarReport {
    /// Whether a problem with this code was recorded.
    pub fn has(&self, code: &str) -> bool {
        self.problems.iter().any(|p| p.code == code)
    }

    fn push(&mut self, p: Problem, limits: &Limits) {
        crate::model::problem::push_capped(&mut self.problems, p, limits.max_problems);
    }
}

/// Members of the pre-0.4 tar-based `torch.save` format (each one a pickle).
pub const LEGACY_PYTORCH_MEMBERS: [&str; 4] = ["sys_info", "pickle", "tensors", "storages"];

/// Whether the members are those of the legacy tar-based PyTorch format.
pub fn is_legacy_pytorch(members: &[TarMember]) -> bool {
    LEGACY_PYTORCH_MEMBERS
        .iter()
        .all(|n| members.iter().any(|m| m.name == *n))
}

/// Whether `head` (at least 512 bytes) starts with a tar header: ustar/GNU magic at offset
/// 257, or an old v7 header whose checksum is right.
pub fn is_tar(head: &[u8]) -> bool {
    let Some(block) = head.get(..512) else {
        return false;
    };
    if block.iter().all(|&b| b == 0) {
        return false;
    }
    let magic = block.get(257..265).unwrap_or(&[]);
    if magic == b"ustar\x0000" || magic == b"ustar  \x00" {
        return true;
    }
    // v7: no magic, so insist on a plausible name and a correct checksum.
    let Some(stored) = parse_octal(block.get(148..156).unwrap_or(&[])) else {
        return false;
    };
    block.first().is_some_and(|&b| b != 0) && stored == header_sums(block).0
}

/// Whether Python's `tarfile.open(mode="r:")` could take `head` (of a value `len` bytes long)
/// for a tar archive, as torch's legacy loader tries before reading pickles: its first block is
/// not all NUL and the checksum field (empty counts as 0) equals the unsigned or the signed sum
/// of the block with that field counted as spaces (`tarfile.py` `calc_chksums`), whatever the
/// magic. A head shorter than a block of a longer value cannot be told apart, so it counts.
pub fn python_tarfile_could_read(head: &[u8], len: u64) -> bool {
    let Some(block) = head.get(..512) else {
        return len >= 512;
    };
    if block.iter().all(|&b| b == 0) {
        return false;
    }
    let field = block.get(148..156).unwrap_or(&[]);
    let stored = if field.iter().all(|&b| b == 0 || b == b' ') {
        Some(0)
    } else {
        parse_octal(field)
    };
    let (unsigned, signed) = header_sums(block);
    stored.is_some_and(|s| s == unsigned || i64::try_from(s).is_ok_and(|s| s == signed))
}

/// The unsigned and signed byte sums of a 512-byte header with its checksum field (148..156)
/// counted as eight spaces, the two values tar readers accept.
fn header_sums(block: &[u8]) -> (u64, i64) {
    let mut unsigned = 0u64;
    let mut signed = 0i64;
    for (i, &b) in block.iter().enumerate() {
        let (u, s) = if (148..156).contains(&i) {
            (32, 32)
        } else {
            (u64::from(b), i64::from(b as i8))
        };
        unsigned += u;
        signed += s;
    }
    (unsigned, signed)
}

fn parse_octal(field: &[u8]) -> Option<u64> {
    let digits: Vec<u8> = field
        .iter()
        .copied()
        .skip_while(|&b| b == b' ')
        .take_while(|b| (b'0'..=b'7').contains(b))
        .collect();
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &d| {
        acc.checked_mul(8)?.checked_add(u64::from(d - b'0'))
    })
}

/// Walks a tar stream. `on_member(member, content)` is called for each regular file with its
/// bytes, capped by the limits (past a cap, reads fail with `tar member stream stopped:` and the
/// problem is in the report). The callback may stop reading early. The stream is read to its
/// end (unless the depth is exceeded) and every malformation becomes a [`Problem`].
pub fn walk<R: Read + ?Sized>(
    r: &mut R,
    depth: u32,
    limits: &Limits,
    on_member: &mut dyn FnMut(&TarMember, &mut dyn BufRead),
) -> TarReport {
    let mut report = TarReport::default();
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
    let mut archive = tar::Archive::new(&mut *r);
    let mut end_offset = 0u64;
    let completed = match archive.entries() {
        Ok(entries) => walk_entries(
            entries.raw(true),
            limits,
            &mut report,
            &mut end_offset,
            on_member,
        ),
        Err(e) => {
            report.push(
                Problem::note("io-error", format!("tar read failed: {e}")),
                limits,
            );
            false
        }
    };
    check_tail(r, end_offset, completed, limits, &mut report);
    report.legacy_pytorch = is_legacy_pytorch(&report.members);
    report
}

/// Extension records (long names, PAX) describing the next entry.
#[derive(Default)]
struct Pending {
    name: Option<Vec<u8>>,
    size: Option<u64>,
}

fn walk_entries<R: Read>(
    entries: tar::Entries<'_, R>,
    limits: &Limits,
    report: &mut TarReport,
    end_offset: &mut u64,
    on_member: &mut dyn FnMut(&TarMember, &mut dyn BufRead),
) -> bool {
    let mut pending = Pending::default();
    let mut total = 0u64;
    let mut seen = 0usize;
    for entry in entries {
        let mut entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let code = if e.kind() == io::ErrorKind::UnexpectedEof {
                    "truncated"
                } else {
                    "bad-header"
                };
                report.push(
                    Problem::malformed(code, format!("tar header after offset {end_offset}: {e}"))
                        .at(*end_offset),
                    limits,
                );
                return false;
            }
        };
        let offset = entry.raw_header_position();
        let size = entry.size();
        *end_offset = entry
            .raw_file_position()
            .saturating_add(size.div_ceil(512).saturating_mul(512));
        seen += 1;
        if seen > limits.max_members {
            report.push(
                Problem::limit(
                    "too-many-members",
                    format!("more than {} tar entries; walk stopped", limits.max_members),
                )
                .at(offset),
                limits,
            );
            return false;
        }
        let kind = entry.header().entry_type();
        if absorb_extension(&mut entry, kind, size, offset, &mut pending, report, limits) {
            continue;
        }
        let raw_name = pending
            .name
            .take()
            .unwrap_or_else(|| entry.path_bytes().into_owned());
        let name = display_name(&raw_name);
        if let Some(pax_size) = pending.size.take()
            && pax_size != size
        {
            // The crate in raw mode frames the entry by its header size; a PAX size that
            // disagrees would make everything after it misparsed.
            report.push(
                Problem::note(
                    "unsupported-entry",
                    format!("member '{name}': pax size {pax_size} overrides header size {size}; walk stopped"),
                )
                .member(&name)
                .at(offset),
                limits,
            );
            return false;
        }
        let member = TarMember {
            name: name.clone(),
            entry_type: kind.as_byte(),
            size,
            header_offset: offset,
        };
        if let Some(reason) = traversal_reason(&raw_name) {
            report.push(
                Problem::malformed("path-traversal", format!("member name '{name}': {reason}"))
                    .member(&name)
                    .at(offset),
                limits,
            );
        }
        report.members.push(member.clone());
        if !has_content(&entry, kind, &name, offset, report, limits) {
            continue;
        }
        match stream_content(&mut entry, &member, total, limits, report, on_member) {
            Some(allowed) => total = total.saturating_add(allowed),
            None => return false,
        }
    }
    true
}

/// GNU long names and PAX headers describe the entry after them, so they are folded into
/// `pending` instead of being listed; returns true when the entry was such a header.
fn absorb_extension<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    kind: EntryType,
    size: u64,
    offset: u64,
    pending: &mut Pending,
    report: &mut TarReport,
    limits: &Limits,
) -> bool {
    match kind {
        EntryType::GNULongName => {
            pending.name = Some(read_capped(
                entry,
                limits.max_name_len,
                offset,
                report,
                limits,
            ));
            true
        }
        EntryType::XHeader => {
            let Some(body) = read_pax(entry, size, offset, report, limits) else {
                return true;
            };
            for (key, value) in pax_records(&body) {
                match key {
                    b"path" => {
                        let keep = value.len().min(limits.max_name_len);
                        pending.name = Some(value.get(..keep).unwrap_or(&[]).to_vec());
                    }
                    b"size" => {
                        pending.size = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok());
                    }
                    _ => {}
                }
            }
            true
        }
        EntryType::GNULongLink | EntryType::XGlobalHeader => true,
        _ => false,
    }
}

/// Only regular files carry bytes worth scanning; links, devices and unknown entry types
/// are noted instead. Returns true when the member's content should be streamed.
fn has_content<R: Read>(
    entry: &tar::Entry<'_, R>,
    kind: EntryType,
    name: &str,
    offset: u64,
    report: &mut TarReport,
    limits: &Limits,
) -> bool {
    match kind {
        EntryType::Regular | EntryType::Continuous => true,
        EntryType::Directory => false,
        EntryType::Symlink | EntryType::Link => {
            let target = entry
                .link_name_bytes()
                .map(|t| display_name(&t))
                .unwrap_or_default();
            report.push(
                Problem::note(
                    "link-member",
                    format!("member '{name}' links to '{target}'"),
                )
                .member(name)
                .at(offset),
                limits,
            );
            false
        }
        EntryType::Char | EntryType::Block | EntryType::Fifo => {
            report.push(
                Problem::note(
                    "special-member",
                    format!("member '{name}' is a device or fifo"),
                )
                .member(name)
                .at(offset),
                limits,
            );
            false
        }
        other => {
            report.push(
                Problem::note(
                    "unsupported-entry",
                    format!(
                        "member '{name}' has entry type {:?}; content not scanned",
                        char::from(other.as_byte())
                    ),
                )
                .member(name)
                .at(offset),
                limits,
            );
            false
        }
    }
}

/// Hands the member's bytes, capped by the per-member and archive-total limits, to the
/// callback and drains the rest. Returns the bytes counted against the total, or None when
/// the member was truncated and the walk must stop.
fn stream_content<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    member: &TarMember,
    total: u64,
    limits: &Limits,
    report: &mut TarReport,
    on_member: &mut dyn FnMut(&TarMember, &mut dyn BufRead),
) -> Option<u64> {
    let name = &member.name;
    let size = member.size;
    let offset = member.header_offset;
    let allowed = limits
        .max_member_bytes
        .min(limits.max_total_bytes.saturating_sub(total))
        .min(size);
    if allowed < size {
        let (code, msg) = if limits.max_member_bytes < size {
            (
                "member-too-large",
                format!(
                    "member '{name}' is {size} bytes, limit {}",
                    limits.max_member_bytes
                ),
            )
        } else {
            (
                "limit-total-bytes",
                format!(
                    "member '{name}' goes past the archive total of {} bytes",
                    limits.max_total_bytes
                ),
            )
        };
        report.push(Problem::limit(code, msg).member(name).at(offset), limits);
    }
    let mut capped = BufReader::with_capacity(
        64 * 1024,
        Capped {
            inner: entry,
            left: allowed,
            over: allowed < size,
            short: false,
        },
    );
    on_member(member, &mut capped);
    // Finish the member ourselves so truncation is noticed even if the callback stopped.
    let short = io::copy(&mut capped, &mut io::sink()).is_err() && !capped.get_ref().over
        || capped.get_ref().short;
    if short {
        report.push(
            Problem::malformed(
                "truncated",
                format!("member '{name}' ends before its {size} bytes"),
            )
            .member(name)
            .at(offset),
            limits,
        );
        return None;
    }
    Some(allowed)
}

/// A member's bytes up to a cap; past the cap reads fail so the consumer knows it was cut.
struct Capped<'a, R: Read> {
    inner: &'a mut R,
    left: u64,
    over: bool,
    short: bool,
}

impl<R: Read> Read for Capped<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            if self.over {
                return Err(io::Error::other(
                    "tar member stream stopped: member-too-large",
                ));
            }
            return Ok(0);
        }
        let want = usize::try_from(self.left)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let n = self.inner.read(buf.get_mut(..want).unwrap_or(&mut []))?;
        if n == 0 && want > 0 {
            self.short = true;
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "tar member truncated",
            ));
        }
        self.left = self.left.saturating_sub(n as u64);
        Ok(n)
    }
}

fn read_capped<R: Read>(
    entry: &mut R,
    cap: usize,
    at: u64,
    report: &mut TarReport,
    limits: &Limits,
) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = entry.take(cap as u64).read_to_end(&mut out);
    let mut probe = [0u8; 1];
    if matches!(entry.read(&mut probe), Ok(1)) {
        report.push(
            Problem::limit(
                "name-too-long",
                format!("gnu long name longer than {cap} bytes cut"),
            )
            .at(at),
            limits,
        );
    }
    while out.last() == Some(&0) {
        out.pop();
    }
    out
}

fn read_pax<R: Read>(
    entry: &mut R,
    size: u64,
    at: u64,
    report: &mut TarReport,
    limits: &Limits,
) -> Option<Vec<u8>> {
    if size > limits.max_pax_len as u64 {
        report.push(
            Problem::limit(
                "limit-pax-header",
                format!(
                    "pax header of {size} bytes, limit {}; ignored",
                    limits.max_pax_len
                ),
            )
            .at(at),
            limits,
        );
        return None;
    }
    let mut out = Vec::new();
    entry.take(size).read_to_end(&mut out).ok()?;
    Some(out)
}

/// `"%d key=value\n"` records of a PAX header; malformed records end the list.
fn pax_records(body: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let Some(sp) = rest.iter().position(|&b| b == b' ') else {
            break;
        };
        let Some(len) = std::str::from_utf8(rest.get(..sp).unwrap_or(&[]))
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        else {
            break;
        };
        let Some(record) = rest.get(sp + 1..len) else {
            break;
        };
        let record = record.strip_suffix(b"\n").unwrap_or(record);
        if let Some(eq) = record.iter().position(|&b| b == b'=') {
            out.push((
                record.get(..eq).unwrap_or(&[]),
                record.get(eq + 1..).unwrap_or(&[]),
            ));
        }
        rest = rest.get(len..).unwrap_or(&[]);
    }
    out
}

/// Reads what follows the end-of-archive marker (or the point where the walk stopped);
/// anything but zero padding is reported.
fn check_tail<R: Read + ?Sized>(
    r: &mut R,
    end_offset: u64,
    completed: bool,
    limits: &Limits,
    report: &mut TarReport,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut nonzero = 0u64;
    let mut total = 0u64;
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                total = total.saturating_add(n as u64);
                nonzero += buf
                    .get(..n)
                    .unwrap_or(&[])
                    .iter()
                    .filter(|&&b| b != 0)
                    .count() as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                report.push(
                    Problem::note("io-error", format!("read failed: {e}")),
                    limits,
                );
                break;
            }
        }
    }
    if !completed && total > 0 {
        report.push(
            Problem::note(
                "unscanned-data",
                format!("{total} bytes after offset {end_offset} not walked"),
            )
            .at(end_offset),
            limits,
        );
    } else if nonzero > 0 {
        report.push(
            Problem::malformed(
                "trailing-data",
                format!("{total} bytes after the last entry (ending at {end_offset}), {nonzero} of them non-zero"),
            )
            .at(end_offset),
            limits,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PICKLE: &[u8] = b"\x80\x02}q\x00.";

    fn builder() -> tar::Builder<Vec<u8>> {
        let mut b = tar::Builder::new(Vec::new());
        b.mode(tar::HeaderMode::Deterministic);
        b
    }

    fn add(b: &mut tar::Builder<Vec<u8>>, name: &str, data: &[u8]) {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(EntryType::Regular);
        b.append_data(&mut h, name, data).unwrap();
    }

    fn run_with(bytes: &[u8], limits: &Limits) -> (TarReport, Vec<(String, Vec<u8>, bool)>) {
        let mut seen = Vec::new();
        let mut r = bytes;
        let rep = walk(&mut r, 0, limits, &mut |m, s| {
            let mut v = Vec::new();
            let ok = s.read_to_end(&mut v).is_ok();
            seen.push((m.name.clone(), v, ok));
        });
        assert!(r.is_empty(), "walk must read to the end");
        (rep, seen)
    }

    fn run(bytes: &[u8]) -> (TarReport, Vec<(String, Vec<u8>, bool)>) {
        run_with(bytes, &Limits::default())
    }

    fn codes(r: &TarReport) -> Vec<&'static str> {
        r.problems.iter().map(|p| p.code).collect()
    }

    #[test]
    fn hands_pickle_member_to_callback() {
        let mut b = builder();
        add(&mut b, "model/weights.pkl", PICKLE);
        add(&mut b, "README", b"hello");
        let bytes = b.into_inner().unwrap();
        assert!(is_tar(&bytes));
        let (r, seen) = run(&bytes);
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(seen[0], ("model/weights.pkl".into(), PICKLE.to_vec(), true));
        assert_eq!(r.members[1].size, 5);
        assert!(!r.legacy_pytorch);
    }

    #[test]
    fn recognises_legacy_pytorch_tar() {
        let mut b = builder();
        for n in LEGACY_PYTORCH_MEMBERS {
            add(&mut b, n, PICKLE);
        }
        let (r, seen) = run(&b.into_inner().unwrap());
        assert!(r.legacy_pytorch);
        assert_eq!(seen.len(), 4);
    }

    #[test]
    fn reads_gnu_long_names_and_pax_paths() {
        let long = format!("{}/data.pkl", "d".repeat(200));
        let mut b = builder();
        add(&mut b, &long, PICKLE);
        b.append_pax_extensions([("path", b"pax/name.pkl".as_slice())])
            .unwrap();
        add(&mut b, "short", b"x");
        let (r, seen) = run(&b.into_inner().unwrap());
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(seen[0].0, long);
        assert_eq!(seen[1].0, "pax/name.pkl");
    }

    #[test]
    fn reports_name_too_long() {
        let mut b = builder();
        add(&mut b, &"n".repeat(300), b"x");
        let limits = Limits {
            max_name_len: 100,
            ..Limits::default()
        };
        let (r, seen) = run_with(&b.into_inner().unwrap(), &limits);
        assert_eq!(codes(&r), vec!["name-too-long"]);
        assert_eq!(seen[0].0.len(), 100);
    }

    #[test]
    fn reports_pax_header_over_limit() {
        let mut b = builder();
        b.append_pax_extensions([("comment", vec![b'c'; 5000].as_slice())])
            .unwrap();
        add(&mut b, "a", b"x");
        let limits = Limits {
            max_pax_len: 1000,
            ..Limits::default()
        };
        let (r, seen) = run_with(&b.into_inner().unwrap(), &limits);
        assert_eq!(codes(&r), vec!["limit-pax-header"]);
        assert_eq!(seen.len(), 1);
    }

    #[test]
    fn reports_member_too_large_and_continues() {
        let mut b = builder();
        add(&mut b, "big", &[1u8; 5000]);
        add(&mut b, "next.pkl", PICKLE);
        let limits = Limits {
            max_member_bytes: 1000,
            ..Limits::default()
        };
        let (r, seen) = run_with(&b.into_inner().unwrap(), &limits);
        assert_eq!(codes(&r), vec!["member-too-large"]);
        assert_eq!((seen[0].1.len(), seen[0].2), (1000, false));
        assert_eq!(seen[1].1, PICKLE);
    }

    #[test]
    fn reports_total_limit() {
        let mut b = builder();
        add(&mut b, "a", &[1u8; 800]);
        add(&mut b, "b", &[1u8; 800]);
        let limits = Limits {
            max_total_bytes: 1000,
            ..Limits::default()
        };
        let (r, seen) = run_with(&b.into_inner().unwrap(), &limits);
        assert_eq!(codes(&r), vec!["limit-total-bytes"]);
        assert_eq!(seen[1].1.len(), 200);
    }

    #[test]
    fn reports_too_many_members() {
        let mut b = builder();
        for i in 0..5 {
            add(&mut b, &format!("f{i}"), b"x");
        }
        let limits = Limits {
            max_members: 3,
            ..Limits::default()
        };
        let (r, seen) = run_with(&b.into_inner().unwrap(), &limits);
        assert_eq!(codes(&r), vec!["too-many-members", "unscanned-data"]);
        assert_eq!(seen.len(), 3);
    }

    #[test]
    fn reports_path_traversal_links_and_devices() {
        let mut b = builder();
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..9].copy_from_slice(b"../up.pkl");
        h.set_size(1);
        h.set_entry_type(EntryType::Regular);
        h.set_cksum();
        b.append(&h, &b"x"[..]).unwrap();
        let mut l = tar::Header::new_gnu();
        l.set_entry_type(EntryType::Symlink);
        l.set_size(0);
        b.append_link(&mut l, "link", "/etc/passwd").unwrap();
        let mut d = tar::Header::new_gnu();
        d.set_entry_type(EntryType::Fifo);
        d.set_size(0);
        b.append_data(&mut d, "fifo", &[][..]).unwrap();
        let (r, seen) = run(&b.into_inner().unwrap());
        assert_eq!(
            codes(&r),
            vec!["path-traversal", "link-member", "special-member"]
        );
        assert_eq!(seen.len(), 1);
    }

    #[test]
    fn reports_truncated_archive() {
        let mut b = builder();
        add(&mut b, "a.pkl", &[7u8; 3000]);
        add(&mut b, "b.pkl", PICKLE);
        let bytes = b.into_inner().unwrap();
        let (r, _) = run(&bytes[..1200]);
        assert!(r.has("truncated"), "{:?}", r.problems);
        let (r, _) = run(&bytes[..300]);
        assert!(
            r.has("truncated") || r.has("bad-header"),
            "{:?}",
            r.problems
        );
    }

    #[test]
    fn reports_bad_header_checksum() {
        let mut b = builder();
        add(&mut b, "a", b"x");
        let mut bytes = b.into_inner().unwrap();
        bytes[10] ^= 1;
        let (r, seen) = run(&bytes);
        assert_eq!(codes(&r), vec!["bad-header", "unscanned-data"]);
        assert!(seen.is_empty());
    }

    #[test]
    fn reports_trailing_data() {
        let mut b = builder();
        add(&mut b, "a", b"x");
        let mut bytes = b.into_inner().unwrap();
        bytes.extend_from_slice(b"\x80\x02hidden pickle");
        let (r, _) = run(&bytes);
        assert_eq!(codes(&r), vec!["trailing-data"]);
    }

    #[test]
    fn reports_depth_exceeded() {
        let limits = Limits::default();
        let rep = walk(&mut &b""[..], limits.max_depth + 1, &limits, &mut |_, _| {});
        assert_eq!(codes(&rep), vec!["depth-exceeded"]);
    }

    #[test]
    fn recognises_v7_headers_by_checksum() {
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..3].copy_from_slice(b"abc");
        h.set_size(0);
        h.set_cksum();
        assert!(is_tar(h.as_bytes()));
        let mut bad = *h.as_bytes();
        bad[0] = b'x';
        assert!(!is_tar(&bad));
        assert!(!is_tar(&[0u8; 512]) && !is_tar(b"short"));
    }

    #[test]
    fn python_tarfile_takes_any_block_whose_checksum_adds_up_signed_or_not() {
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..3].copy_from_slice(b"abc");
        h.set_cksum();
        assert!(python_tarfile_could_read(h.as_bytes(), 512));
        // A high byte: Python also accepts the signed sum some old writers stored.
        let mut block = *h.as_bytes();
        block[100] = 0xff;
        let (unsigned, signed) = header_sums(&block);
        assert_ne!(i64::try_from(unsigned).unwrap(), signed);
        block[148..156].copy_from_slice(format!("{signed:06o}\0 ").as_bytes());
        assert!(python_tarfile_could_read(&block, 512));
        let mut bad = *h.as_bytes();
        bad[0] = b'x';
        assert!(!python_tarfile_could_read(&bad, 512));
        assert!(!python_tarfile_could_read(&[0u8; 512], 512));
        // Too short to tell, but the value is longer: counted as one.
        assert!(python_tarfile_could_read(b"short", 4096));
        assert!(!python_tarfile_could_read(b"short", 5));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
        #[test]
        fn never_panics(cut in 0usize..4000, flip in 0usize..4000, val: u8) {
            let mut b = builder();
            add(&mut b, &"x".repeat(150), PICKLE);
            b.append_pax_extensions([("path", b"p".as_slice()), ("size", b"1".as_slice())]).unwrap();
            add(&mut b, "y", b"z");
            let mut bytes = b.into_inner().unwrap();
            if let Some(x) = bytes.get_mut(flip) {
                *x = val;
            }
            bytes.truncate(cut);
            let _ = run(&bytes);
        }

        #[test]
        fn never_panics_on_garbage(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)) {
            let _ = run(&bytes);
            let _ = is_tar(&bytes);
        }
    }
}
