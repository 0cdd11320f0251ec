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
//!
//! The parts: `source` is the counting, peeking byte source; `walker` dispatches on record
//! signatures and cross-checks the central directory against the local headers; `member` reads
//! one member (local header, bounded CRC-checked content, data descriptor); `pytorch` recognises
//! model layouts from member names. This file holds the public types and [`walk`].

mod central;
#[cfg(test)]
mod fixtures;
mod format;
mod member;
mod pytorch;
mod source;
mod walker;

use std::io::BufRead;

use super::problem::Problem;

pub(in crate::inspect) use central::{TAIL_LEN, end_record, parse_central_directory, zip64_end};
pub(in crate::inspect) use format::display_name;
use format::*;
pub use format::{Limits, METHOD_BZIP2, METHOD_DEFLATE, METHOD_STORED, Member, ZipReport};
pub(in crate::inspect) use member::traversal_reason;
pub use pytorch::{Layout, TorchLayout, classify_pytorch, storage_archive, torchscript_code};
use source::{DynRead, Src};
use walker::{Halt, Walker};

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
        walker.problem(Problem::limit(
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
        walker.halted(e, at);
        // Keep the "reads to its end" promise so the caller's digest covers the whole file.
        if let Ok(n) = src.skip(u64::MAX)
            && n > 0
        {
            walker.problem(
                Problem::note(
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

impl Walker<'_> {
    /// Records why a walk stopped before the end (`Halt::Stop` is the caller's choice: nothing).
    fn halted(&mut self, e: Halt, at: u64) {
        match e {
            Halt::Io(e) => {
                self.problem(Problem::note("io-error", format!("read failed: {e}")).at(at))
            }
            Halt::Truncated(what) => self.problem(
                Problem::malformed(
                    "truncated",
                    format!("archive ends inside {what} at offset {at}"),
                )
                .at(at),
            ),
            Halt::Stop => {}
        }
    }
}

/// Walks an archive from ranges of it (header mode: the records of the members that were read,
/// then the central directory to the end of the file), each `(file offset, bytes)`, sorted by
/// offset. The walk is the same as [`walk`]'s, with every offset a file offset; members in
/// `skipped` were left unread on purpose (the caller records them as not covered), so their
/// `cd-only-member` problem is dropped. What only a sequential pass can see (data between
/// records, members only in local headers) is not checked here.
pub fn walk_segments(
    segments: &[(u64, Vec<u8>)],
    file_size: u64,
    limits: &Limits,
    skipped: &std::collections::BTreeSet<String>,
    on_member: &mut dyn FnMut(&Member, &mut dyn BufRead),
) -> ZipReport {
    let mut joined = Vec::new();
    let mut map = Vec::with_capacity(segments.len());
    for (offset, bytes) in segments {
        map.push((joined.len() as u64, *offset));
        joined.extend_from_slice(bytes);
    }
    let mut walker = Walker::new(limits, file_size);
    let mut r: &[u8] = &joined;
    let mut src = Src::mapped(&mut r, map);
    if let Err(e) = walker.run(&mut src, on_member) {
        let at = src.position();
        walker.halted(e, at);
    }
    walker.finish();
    let mut report = walker.report;
    report.problems.retain(|p| {
        !(p.code == "cd-only-member" && p.member.as_ref().is_some_and(|m| skipped.contains(m)))
    });
    report
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;
    use std::io::{self, Write};

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
