//! The sequential walk: dispatches on each record signature, collects the central directory
//! and end records as they stream past, and at the end cross-checks the local view against the
//! central view (members only one side has, disagreeing fields, duplicate names), reporting
//! prefix, gap and trailing data on the way.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, BufRead};

use super::central::CentralFields;
use super::format::*;
use super::source::{Le, Src};
use crate::inspect::problem::Problem;

/// Why the walk stopped early.
pub(super) enum Halt {
    Io(io::Error),
    Truncated(&'static str),
    Stop,
}

impl From<io::Error> for Halt {
    fn from(e: io::Error) -> Self {
        Halt::Io(e)
    }
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

pub(super) struct Walker<'l> {
    pub(super) limits: &'l Limits,
    file_size: u64,
    pub(super) report: ZipReport,
    pub(super) locals: Vec<LocalRec>,
    cds: Vec<CdRec>,
    segment_bases: Vec<Option<u64>>,
    segment: usize,
    segment_records: u64,
    segment_cd_start: Option<u64>,
    cd_bytes: u64,
    pub(super) total_out: u64,
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
    pub(super) fn new(limits: &'l Limits, file_size: u64) -> Self {
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

    pub(super) fn problem(&mut self, p: Problem) {
        crate::model::problem::push_capped(&mut self.report.problems, p, self.limits.max_problems);
    }

    pub(super) fn run(
        &mut self,
        src: &mut Src<'_>,
        on_member: &mut dyn FnMut(&Member, &mut dyn BufRead),
    ) -> Result<(), Halt> {
        let prefix = src.skip_to_signature()?;
        self.report.prefix_bytes = prefix;
        if src.peek(4)?.len() < 4 {
            self.problem(Problem::malformed(
                "bad-signature",
                format!("no zip record signature in {prefix} bytes"),
            ));
            return Ok(());
        }
        if prefix > 0 {
            // Polyglots and self-extractors: the bytes in front are another file format that
            // other tools will happily parse (a pickle in front of a zip, for example).
            self.problem(
                Problem::malformed(
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
                        Problem::note(
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
                        Problem::malformed(
                            code,
                            format!("{n} bytes of unknown data at offset {at}"),
                        )
                        .at(at),
                    );
                }
            }
        }
    }

    fn central(&mut self, src: &mut Src<'_>) -> Result<(), Halt> {
        let record_offset = src.position();
        if self.segment_cd_start.is_none() {
            self.segment_cd_start = Some(record_offset);
        }
        let h = src
            .read_array::<CENTRAL_HEADER_LEN>()?
            .ok_or(Halt::Truncated("central directory record"))?;
        let mut f = CentralFields::parse(&h);
        let (name_len, extra_len, comment_len) = (f.name_len, f.extra_len, f.comment_len as u64);
        let record_len = f.record_len();
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
                    Problem::limit(
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
        f.apply_zip64(&extra);
        let CentralFields {
            flags,
            method,
            crc,
            csize,
            usize,
            disk,
            local_offset,
            ..
        } = f;
        let name = display_name(&raw_name);
        if disk != 0 && disk != U16_MAX {
            self.problem(
                Problem::malformed("multi-disk", format!("member '{name}' is on disk {disk}"))
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
                Problem::limit(
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
                Problem::malformed(
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
                Problem::malformed(
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
                Problem::malformed(
                    "bad-cd-offset",
                    format!("central directory offset {cd_offset} lies past where it starts ({cd_start})"),
                )
                .at(at),
            );
        }
        self.segment_bases.push(base);
        if entries != self.segment_records {
            self.problem(
                Problem::malformed(
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
                Problem::malformed(
                    "eocd-mismatch",
                    format!("end record says the central directory is {cd_size} bytes, it is {actual_cd_size}"),
                )
                .at(at),
            );
        }
        self.report.comment_len = comment_len;
        if comment_len > self.limits.max_comment_len {
            self.problem(
                Problem::limit(
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
    pub(super) fn finish(&mut self) {
        if !self.report.has_eocd {
            self.problem(Problem::malformed(
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
                        Problem::malformed(
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
                    Problem::malformed(
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
                Problem::malformed(
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
        Problem::malformed(
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

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

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
}
