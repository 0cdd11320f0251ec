//! Byte-exact 7z archives from a tiny writer (Copy, LZMA, LZMA2, Deflate and BZip2 coders,
//! plain or encoded header), and hostile variants of them: each gives a problem, never a panic.

use std::io::{Cursor, Write};

use super::header::id;
use super::*;

/// 7z UINT64.
pub(super) fn number(out: &mut Vec<u8>, v: u64) {
    let mut first = 0u8;
    let mut mask = 0x80u8;
    let mut n = 0;
    while n < 8 {
        if v < (1u64 << (7 * (n + 1))) {
            first |= (v >> (8 * n)) as u8;
            break;
        }
        first |= mask;
        mask >>= 1;
        n += 1;
    }
    out.push(first);
    for j in 0..n {
        out.push((v >> (8 * j)) as u8);
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Coding {
    Copy,
    Lzma,
    Lzma2,
    Deflate,
    Bzip2,
}

/// `(coder id, properties, packed bytes)` for `data`.
fn pack(coding: Coding, data: &[u8]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    match coding {
        Coding::Copy => (vec![0x00], vec![], data.to_vec()),
        Coding::Lzma => {
            let mut out = Vec::new();
            let opts = lzma_rs::compress::Options {
                unpacked_size: lzma_rs::compress::UnpackedSize::SkipWritingToHeader,
            };
            lzma_rs::lzma_compress_with_options(&mut &data[..], &mut out, &opts).unwrap();
            let props = out[..5].to_vec();
            (vec![0x03, 0x01, 0x01], props, out[5..].to_vec())
        }
        Coding::Lzma2 => {
            let mut out = Vec::new();
            lzma_rs::lzma2_compress(&mut &data[..], &mut out).unwrap();
            (vec![0x21], vec![0x10], out)
        }
        Coding::Deflate => {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
            e.write_all(data).unwrap();
            (vec![0x04, 0x01, 0x08], vec![], e.finish().unwrap())
        }
        Coding::Bzip2 => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            e.write_all(data).unwrap();
            (vec![0x04, 0x02, 0x02], vec![], e.finish().unwrap())
        }
    }
}

fn folder(out: &mut Vec<u8>, coder_id: &[u8], props: &[u8], unpack: u64, crc: Option<u32>) {
    out.push(id::UNPACK_INFO);
    out.push(id::FOLDER);
    number(out, 1);
    out.push(0);
    number(out, 1);
    let flags = coder_id.len() as u8 | if props.is_empty() { 0 } else { 0x20 };
    out.push(flags);
    out.extend_from_slice(coder_id);
    if !props.is_empty() {
        number(out, props.len() as u64);
        out.extend_from_slice(props);
    }
    out.push(id::CODERS_UNPACK_SIZE);
    number(out, unpack);
    if let Some(c) = crc {
        out.push(id::CRC);
        out.push(1);
        out.extend_from_slice(&c.to_le_bytes());
    }
    out.push(id::END);
}

fn pack_info(out: &mut Vec<u8>, pos: u64, size: u64) {
    out.push(id::PACK_INFO);
    number(out, pos);
    number(out, 1);
    out.push(id::SIZE);
    number(out, size);
    out.push(id::END);
}

fn utf16(name: &str) -> Vec<u8> {
    let mut v: Vec<u8> = name.encode_utf16().flat_map(u16::to_le_bytes).collect();
    v.extend_from_slice(&[0, 0]);
    v
}

fn bits(flags: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; flags.len().div_ceil(8)];
    for (i, &f) in flags.iter().enumerate() {
        if f {
            out[i / 8] |= 0x80 >> (i % 8);
        }
    }
    out
}

/// A solid archive: every file with content in one folder, empty files and directories
/// (names ending in `/`) as empty streams.
pub(crate) struct Builder {
    pub files: Vec<(String, Vec<u8>)>,
    pub coding: Coding,
    pub encode_header: bool,
    /// Replaces the coder id (unsupported and encrypted folders).
    pub coder_id: Option<Vec<u8>>,
    /// Adds this much to the stored CRC of the first member.
    pub crc_delta: u32,
}

impl Builder {
    pub fn new(files: &[(&str, &[u8])]) -> Self {
        Builder {
            files: files
                .iter()
                .map(|(n, d)| (n.to_string(), d.to_vec()))
                .collect(),
            coding: Coding::Copy,
            encode_header: false,
            coder_id: None,
            crc_delta: 0,
        }
    }

    pub fn coding(mut self, c: Coding) -> Self {
        self.coding = c;
        self
    }

    pub fn encoded(mut self) -> Self {
        self.encode_header = true;
        self
    }

    /// The plain header and the packed data.
    fn header(&self) -> (Vec<u8>, Vec<u8>) {
        let streams: Vec<&(String, Vec<u8>)> = self
            .files
            .iter()
            .filter(|(n, d)| !n.ends_with('/') && !d.is_empty())
            .collect();
        let data: Vec<u8> = streams.iter().flat_map(|(_, d)| d.clone()).collect();
        let (cid, props, packed) = pack(self.coding, &data);
        let cid = self.coder_id.clone().unwrap_or(cid);
        let mut h = vec![id::HEADER];
        if !streams.is_empty() {
            h.push(id::MAIN_STREAMS);
            pack_info(&mut h, 0, packed.len() as u64);
            folder(&mut h, &cid, &props, data.len() as u64, None);
            h.push(id::SUBSTREAMS);
            h.push(id::NUM_UNPACK_STREAM);
            number(&mut h, streams.len() as u64);
            if streams.len() > 1 {
                h.push(id::SIZE);
                for (_, d) in &streams[..streams.len() - 1] {
                    number(&mut h, d.len() as u64);
                }
            }
            h.push(id::CRC);
            h.push(1);
            for (i, (_, d)) in streams.iter().enumerate() {
                let mut c = crc32fast::hash(d);
                if i == 0 {
                    c = c.wrapping_add(self.crc_delta);
                }
                h.extend_from_slice(&c.to_le_bytes());
            }
            h.push(id::END);
            h.push(id::END);
        }
        h.push(id::FILES);
        number(&mut h, self.files.len() as u64);
        let empty: Vec<bool> = self
            .files
            .iter()
            .map(|(n, d)| n.ends_with('/') || d.is_empty())
            .collect();
        if empty.iter().any(|&e| e) {
            let field = bits(&empty);
            h.push(id::EMPTY_STREAM);
            number(&mut h, field.len() as u64);
            h.extend_from_slice(&field);
            let files: Vec<bool> = self
                .files
                .iter()
                .filter(|(n, d)| n.ends_with('/') || d.is_empty())
                .map(|(n, _)| !n.ends_with('/'))
                .collect();
            let field = bits(&files);
            h.push(id::EMPTY_FILE);
            number(&mut h, field.len() as u64);
            h.extend_from_slice(&field);
        }
        let mut names = vec![0u8];
        for (n, _) in &self.files {
            names.extend(utf16(n.trim_end_matches('/')));
        }
        h.push(id::NAME);
        number(&mut h, names.len() as u64);
        h.extend(names);
        h.push(id::END);
        h.push(id::END);
        let packed = if streams.is_empty() {
            Vec::new()
        } else {
            packed
        };
        (h, packed)
    }

    pub fn build(&self) -> Vec<u8> {
        let (header, mut body) = self.header();
        let next = if self.encode_header {
            let (cid, props, packed) = pack(self.coding, &header);
            let mut e = vec![id::ENCODED_HEADER];
            pack_info(&mut e, body.len() as u64, packed.len() as u64);
            folder(
                &mut e,
                &cid,
                &props,
                header.len() as u64,
                Some(crc32fast::hash(&header)),
            );
            e.push(id::END);
            body.extend(packed);
            e
        } else {
            header
        };
        assemble(&body, &next)
    }
}

/// Signature header + body + next header, CRCs right.
pub(super) fn assemble(body: &[u8], next: &[u8]) -> Vec<u8> {
    let mut start = Vec::new();
    start.extend_from_slice(&(body.len() as u64).to_le_bytes());
    start.extend_from_slice(&(next.len() as u64).to_le_bytes());
    start.extend_from_slice(&crc32fast::hash(next).to_le_bytes());
    let mut out = SIGNATURE.to_vec();
    out.extend_from_slice(&[0, 4]);
    out.extend_from_slice(&crc32fast::hash(&start).to_le_bytes());
    out.extend(start);
    out.extend_from_slice(body);
    out.extend_from_slice(next);
    out
}

/// Walks `bytes`, collecting each member's name and content.
pub(super) fn read_all(bytes: &[u8], limits: &Limits) -> (SevenZReport, Vec<(String, Vec<u8>)>) {
    let mut seen = Vec::new();
    let report = walk(
        &mut Cursor::new(bytes),
        bytes.len() as u64,
        0,
        limits,
        &mut |m, r| {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            seen.push((m.name.clone(), v));
        },
    );
    (report, seen)
}

const PICKLE: &[u8] =
    b"\x80\x04\x95\x15\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x8c\x06system\x93\x8c\x02id\x85R.";

fn files() -> Vec<(&'static str, &'static [u8])> {
    vec![
        ("weights.bin", PICKLE),
        ("docs/", b""),
        ("docs/readme.txt", b"hello 7z"),
        ("empty.txt", b""),
    ]
}

#[test]
fn reads_every_supported_coder_with_plain_and_encoded_headers() {
    for coding in [
        Coding::Copy,
        Coding::Lzma,
        Coding::Lzma2,
        Coding::Deflate,
        Coding::Bzip2,
    ] {
        for encoded in [false, true] {
            let mut b = Builder::new(&files()).coding(coding);
            if encoded {
                b = b.encoded();
            }
            let (report, seen) = read_all(&b.build(), &Limits::default());
            assert!(
                report.problems.is_empty(),
                "{coding:?} {encoded}: {:?}",
                report.problems
            );
            assert_eq!(report.encoded_header, encoded);
            let names: Vec<&str> = report.members.iter().map(|m| m.name.as_str()).collect();
            assert_eq!(
                names,
                ["weights.bin", "docs", "docs/readme.txt", "empty.txt"]
            );
            assert!(report.members[1].is_dir && !report.members[3].is_dir);
            assert_eq!(
                seen,
                [
                    ("weights.bin".to_string(), PICKLE.to_vec()),
                    ("docs/readme.txt".to_string(), b"hello 7z".to_vec())
                ],
                "{coding:?}"
            );
        }
    }
}

#[test]
fn reads_an_empty_archive() {
    let bytes = assemble(&[], &[]);
    let (report, seen) = read_all(&bytes, &Limits::default());
    assert!(report.problems.is_empty() && report.members.is_empty() && seen.is_empty());
}

#[test]
fn rejects_a_bad_start_header_crc() {
    let mut bytes = Builder::new(&files()).build();
    bytes[8] ^= 1;
    let (report, seen) = read_all(&bytes, &Limits::default());
    assert!(report.has("crc-mismatch") && seen.is_empty());
}

#[test]
fn rejects_a_bad_next_header_crc() {
    let mut bytes = Builder::new(&files()).build();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x40;
    let (report, _) = read_all(&bytes, &Limits::default());
    assert!(report.has("crc-mismatch"), "{:?}", report.problems);
}

#[test]
fn rejects_a_member_crc_mismatch() {
    let mut b = Builder::new(&files());
    b.crc_delta = 1;
    let (report, seen) = read_all(&b.build(), &Limits::default());
    assert!(report.has("crc-mismatch"));
    // The member was still read and handed on: its content is what gets judged.
    assert_eq!(seen.len(), 2);
}

/// A start header whose next-header fields are `offset`, `size` and the right CRCs for them.
fn with_next(offset: u64, size: u64) -> Vec<u8> {
    let mut start = Vec::new();
    start.extend_from_slice(&offset.to_le_bytes());
    start.extend_from_slice(&size.to_le_bytes());
    start.extend_from_slice(&0u32.to_le_bytes());
    let mut out = SIGNATURE.to_vec();
    out.extend_from_slice(&[0, 4]);
    out.extend_from_slice(&crc32fast::hash(&start).to_le_bytes());
    out.extend(start);
    out.extend_from_slice(&[0; 64]);
    out
}

#[test]
fn rejects_a_next_header_past_the_end_of_the_file() {
    for (offset, size) in [
        (1 << 40, 10),
        (u64::MAX, 10),
        (10, 1 << 20),
        (u64::MAX - 31, 1),
    ] {
        let (report, _) = read_all(&with_next(offset, size), &Limits::default());
        assert!(
            report.has("truncated"),
            "{offset} {size}: {:?}",
            report.problems
        );
    }
    let (report, _) = read_all(&with_next(0, 1 << 40), &Limits::default());
    assert!(report.has("limit-header"));
}

#[test]
fn reports_every_truncation_without_panicking() {
    let bytes = Builder::new(&files())
        .coding(Coding::Lzma)
        .encoded()
        .build();
    for n in 0..bytes.len() {
        let (report, _) = read_all(&bytes[..n], &Limits::default());
        assert!(!report.problems.is_empty(), "prefix {n}");
    }
}

#[test]
fn refuses_hostile_counts_before_allocating() {
    // 2^62 files, 2^62 folders, 2^62 pack streams, 2^62 substreams: each a problem.
    let huge = 1u64 << 62;
    let mut files_count = vec![id::HEADER, id::FILES];
    number(&mut files_count, huge);
    files_count.extend_from_slice(&[0, 0]);
    let mut folders = vec![id::HEADER, id::MAIN_STREAMS, id::UNPACK_INFO, id::FOLDER];
    number(&mut folders, huge);
    let mut packs = vec![id::HEADER, id::MAIN_STREAMS, id::PACK_INFO, 0];
    number(&mut packs, huge);
    let mut coders = vec![
        id::HEADER,
        id::MAIN_STREAMS,
        id::UNPACK_INFO,
        id::FOLDER,
        1,
        0,
    ];
    number(&mut coders, huge);
    let mut subs = vec![id::HEADER, id::MAIN_STREAMS];
    pack_info(&mut subs, 0, 0);
    folder(&mut subs, &[0], &[], 0, None);
    subs.extend_from_slice(&[id::SUBSTREAMS, id::NUM_UNPACK_STREAM]);
    number(&mut subs, huge);
    for next in [files_count, folders, packs, coders, subs] {
        let (report, _) = read_all(&assemble(&[], &next), &Limits::default());
        assert!(
            report.has("bad-count") || report.has("too-many-members"),
            "{next:02x?}: {:?}",
            report.problems
        );
    }
}

#[test]
fn walks_a_header_of_many_folders_in_linear_time() {
    // 200,000 folders of an unknown coder, one pack stream each: every folder is looked at once
    // (pack offsets and member lists are not searched again per folder).
    let n = 200_000u64;
    let mut h = vec![id::HEADER, id::MAIN_STREAMS, id::PACK_INFO, 0];
    number(&mut h, n);
    h.push(id::SIZE);
    h.extend(std::iter::repeat_n(0u8, n as usize));
    h.extend_from_slice(&[id::END, id::UNPACK_INFO, id::FOLDER]);
    number(&mut h, n);
    h.push(0);
    for _ in 0..n {
        h.extend_from_slice(&[1, 0x01, 0x99]);
    }
    h.push(id::CODERS_UNPACK_SIZE);
    h.extend(std::iter::repeat_n(0u8, n as usize));
    h.extend_from_slice(&[id::END, id::END, id::END]);
    let started = std::time::Instant::now();
    let (report, _) = read_all(&assemble(&[], &h), &Limits::default());
    assert!(report.has("unsupported-method") && report.has("too-many-problems"));
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn stops_at_the_member_limit() {
    let names: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
    let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"x"[..])).collect();
    let limits = Limits {
        max_members: 10,
        ..Limits::default()
    };
    let (report, seen) = read_all(&Builder::new(&files).build(), &limits);
    assert!(report.has("too-many-members") && seen.is_empty());
}

#[test]
fn limits_encoded_header_rounds() {
    // An encoded header that decodes to an encoded header... (Copy coder, CRCs right).
    let mut body = Vec::new();
    let mut next = vec![id::HEADER, id::END];
    for _ in 0..8 {
        let mut e = vec![id::ENCODED_HEADER];
        pack_info(&mut e, body.len() as u64, next.len() as u64);
        folder(
            &mut e,
            &[0],
            &[],
            next.len() as u64,
            Some(crc32fast::hash(&next)),
        );
        e.push(id::END);
        body.extend_from_slice(&next);
        next = e;
    }
    let (report, _) = read_all(&assemble(&body, &next), &Limits::default());
    assert!(report.has("limit-header"), "{:?}", report.problems);
}

#[test]
fn names_encrypted_and_unsupported_coders_and_still_lists_members() {
    for (cid, code, named) in [
        (vec![0x06, 0xf1, 0x07, 0x01], "encrypted", "AES-256"),
        (
            vec![0x03, 0x03, 0x01, 0x03],
            "unsupported-method",
            "BCJ x86",
        ),
        (vec![0x03, 0x04, 0x01], "unsupported-method", "PPMd"),
    ] {
        let mut b = Builder::new(&files());
        b.coder_id = Some(cid);
        let (report, seen) = read_all(&b.build(), &Limits::default());
        assert!(seen.is_empty());
        assert_eq!(report.members.len(), 4);
        let p = report.problems.iter().find(|p| p.code == code).unwrap();
        assert!(
            p.message.contains(named) && p.message.contains("'weights.bin'"),
            "{}",
            p.message
        );
    }
}

#[test]
fn names_a_multi_coder_chain() {
    // ARM feeding LZMA2: two coders, one bind pair; the ARM filter is not decoded.
    let mut h = vec![id::HEADER, id::MAIN_STREAMS];
    pack_info(&mut h, 0, 4);
    h.extend_from_slice(&[id::UNPACK_INFO, id::FOLDER, 1, 0, 2]);
    h.extend_from_slice(&[0x04, 0x03, 0x03, 0x05, 0x01]);
    h.extend_from_slice(&[0x21, 0x21, 0x01, 0x10]);
    h.extend_from_slice(&[0, 1]);
    h.extend_from_slice(&[id::CODERS_UNPACK_SIZE, 4, 4, id::END, id::END]);
    h.extend_from_slice(&[id::FILES, 1, id::NAME, 9, 0]);
    h.extend(utf16("a.x"));
    h.extend_from_slice(&[id::END, id::END]);
    let (report, _) = read_all(&assemble(b"abcd", &h), &Limits::default());
    let p = report
        .problems
        .iter()
        .find(|p| p.code == "unsupported-method")
        .unwrap();
    assert!(p.message.contains("ARM + LZMA2"), "{}", p.message);
    assert_eq!(report.coders, ["ARM + LZMA2"]);
}

#[test]
fn refuses_a_decompression_bomb_before_decoding() {
    let zeros = vec![0u8; 2 << 20];
    let bytes = Builder::new(&[("big.bin", &zeros)])
        .coding(Coding::Deflate)
        .build();
    let limits = Limits {
        max_ratio: 50,
        ..Limits::default()
    };
    let (report, seen) = read_all(&bytes, &limits);
    assert!(
        report.has("bomb") && seen.is_empty(),
        "{:?}",
        report.problems
    );
}

#[test]
fn cuts_a_member_at_the_size_limit() {
    let data = vec![7u8; 5000];
    let bytes = Builder::new(&[("a.bin", &data), ("b.bin", b"b")]).build();
    let limits = Limits {
        max_member_bytes: 1000,
        ..Limits::default()
    };
    let (report, seen) = read_all(&bytes, &limits);
    assert!(report.has("member-too-large"));
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1.len(), 1000);
}

#[test]
fn refuses_a_solid_block_past_the_buffer() {
    let data = vec![1u8; 70_000];
    let bytes = Builder::new(&[("a.bin", &data)])
        .coding(Coding::Lzma2)
        .build();
    let limits = Limits {
        max_buffer: 65_536,
        ..Limits::default()
    };
    let (report, seen) = read_all(&bytes, &limits);
    assert!(
        report.has("limit-solid-block") && seen.is_empty(),
        "{:?}",
        report.problems
    );
}

#[test]
fn rejects_lzma2_chunks_that_disagree_with_the_folder() {
    // Declare one byte less than the chunks hold: the decoder is never started.
    let mut packed = Vec::new();
    lzma_rs::lzma2_compress(&mut &b"hello"[..], &mut packed).unwrap();
    let mut h = vec![id::HEADER, id::MAIN_STREAMS];
    pack_info(&mut h, 0, packed.len() as u64);
    folder(&mut h, &[0x21], &[0x10], 4, None);
    h.extend_from_slice(&[id::END, id::FILES, 1, id::NAME, 5, 0]);
    h.extend(utf16("a"));
    h.extend_from_slice(&[id::END, id::END]);
    let (report, seen) = read_all(&assemble(&packed, &h), &Limits::default());
    assert!(
        report.has("size-mismatch") && seen.is_empty(),
        "{:?}",
        report.problems
    );
}

#[test]
fn reports_corrupt_deflate_data() {
    let mut bytes = Builder::new(&files()).coding(Coding::Deflate).build();
    // The packed stream starts right after the signature header.
    bytes[32] = 0xff;
    bytes[33] = 0xff;
    let (report, _) = read_all(&bytes, &Limits::default());
    assert!(
        report.has("corrupt-data") || report.has("truncated") || report.has("crc-mismatch"),
        "{:?}",
        report.problems
    );
}

#[test]
fn reports_traversal_names() {
    let bytes = Builder::new(&[("../../etc/cron.d/x", b"x")]).build();
    let (report, _) = read_all(&bytes, &Limits::default());
    assert!(report.has("path-traversal"));
}

#[test]
fn stops_at_the_depth_limit() {
    let bytes = Builder::new(&files()).build();
    let limits = Limits::default();
    let report = walk(
        &mut Cursor::new(&bytes),
        bytes.len() as u64,
        limits.max_depth + 1,
        &limits,
        &mut |_, _| {},
    );
    assert!(report.has("depth-exceeded"));
}

/// `py7zr` 1.1.4 (`SevenZipFile(path, "w")`, its default filters: BCJ x86 then LZMA2, header
/// encoded with LZMA2) over `small/code.bin` (60 x86-like records `55 89 e5 e8 <rel32>`, 480
/// bytes, CRC-32 0xbd734f71) and `small/model.pkl` (a pickle calling `os.system`). Made by
/// `scripts/sevenz-interop.sh`; the CRCs the archive stores are checked by the reader.
const PY7ZR_DEFAULT: &[&str] = &[
    "377abcaf271c0004f2fecfb263010000000000001700000000000000cb0b0902e001fe00d05d002aa258ae879c7f727d",
    "428543d83a1bd3354495b7f2f7b168dd450c3eb84d0f94400663ed21eae0507d605f4dd662e0f2f5aed1400a6b14fc29",
    "ed2fd82b45fca73b26913d766205cc3242fa025528837f12a93fb03220c73cd06dfc912a402a2f59fe9a8556c7ef6738",
    "8c031824e4a5e64b81fd95674ba7081acbf16ca198b03ee9ac6a120bfb129138dc00d5fe462fb2f4bfa1a193a8d44612",
    "096fca9a9a2656b34b2ddb811227618fc0b752a31a33b749d0d457cec23f77925b78b9e42fca1929cd8e90e7df39e8ea",
    "712eb6668e265600e000b600835d0000813307ae0fd5319aa71724d1cfe3f764d15ac96fdf809a53d9bfd0d6eb933653",
    "4dd56d90b47d9734b8db722e0048885bbb9df34490820af143556f76d0a258ab91c6d9c26c745dda3d6dc18a99f4e9da",
    "9ec278bd75ac88ae9f1642bc1170b998c194db69f228bc788f8fdd7a188c9f11c0e7cbc98257f89e5fdc715baa7b9e00",
    "000000170680d80109808b00070b010001212101180c80b70000",
];

fn unhex(lines: &[&str]) -> Vec<u8> {
    let s: String = lines.concat();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn reads_a_py7zr_default_archive_with_bcj_and_an_encoded_header() {
    let bytes = unhex(PY7ZR_DEFAULT);
    let (report, seen) = read_all(&bytes, &Limits::default());
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert!(report.encoded_header);
    assert_eq!(report.coders, ["LZMA2 + BCJ x86"]);
    let names: Vec<&str> = report.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["small", "small/code.bin", "small/model.pkl"]);
    assert_eq!(seen[0].1.len(), 480);
    assert_eq!(crc32fast::hash(&seen[0].1), 0xbd734f71);
    assert_eq!(seen[1].1, PICKLE);
}

#[test]
fn bcj_x86_decoding_undoes_the_encoder_and_leaves_other_bytes() {
    // One CALL at offset 0 whose absolute target 0x105 becomes relative 0x100 (0x105 - 5).
    let mut buf = vec![0xe8, 0x05, 0x01, 0x00, 0x00, 0x90, 0x90];
    bcj_x86(&mut buf);
    assert_eq!(buf, [0xe8, 0x00, 0x01, 0x00, 0x00, 0x90, 0x90]);
    // Too short to hold an operand: unchanged.
    let mut short = vec![0xe8, 1, 2, 3];
    bcj_x86(&mut short);
    assert_eq!(short, [0xe8, 1, 2, 3]);
}

#[test]
fn delta_decoding_adds_the_byte_a_distance_back() {
    let mut buf = vec![1, 10, 1, 10, 1, 10];
    super::decode::delta_decode(&mut buf, 2);
    assert_eq!(buf, [1, 10, 2, 20, 3, 30]);
}

fn bcj_x86(buf: &mut [u8]) {
    super::decode::bcj_x86_decode(buf);
}

/// Found by the `sevenz` fuzz target: a BZip2 folder whose data is broken after the first
/// member. libbz2-rs-sys 0.2.6 indexes out of bounds inside its `extern "C"` entry point when
/// read again after a data error, which aborts the process (no unwinding to catch); the reader
/// must never read a folder stream again once it failed or once a member is done.
const FUZZ_BZIP2_AFTER_ERROR: &[&str] = &[
    "377abcaf271c0004adfb4880fc000000000000001600000000000000c1d3d02a425a6839314159265359b6e540090000",
    "000000000002000001100006668c2042040a00200050a0d1a341901a08a9000d1934c4d20d487d84c0455bf569cc0455",
    "aca4a82ad0c711568022ac20022ae16ac646b5bd72bdff177245385090b6e540e5e000f600935d0000813307ae0fd39c",
    "cb3d40c090cee5cb76f6573b40bdbac854ed9f70da492e8d8be6e964ed88d7d1170abdd894597215cb707a60c1f563e4",
    "be29d6ae24b961b0776e80788ff2303fb6e30ff34c94ab7b0b1f8b768b95ad53b7331bfdc1e5d4e20680042a99066c00",
    "55052839fd7b32a14125c385ac925dc3401618b0cabeac0101c3dde3ee52d096d71bf5083d9fc4640000000017066101",
    "09809b00070b010001212101180c80f70000",
];

#[test]
fn a_failed_bzip2_folder_is_never_read_again() {
    let bytes = unhex(FUZZ_BZIP2_AFTER_ERROR);
    let (report, _) = read_all(&bytes, &Limits::default());
    assert!(report.has("corrupt-data"), "{:?}", report.problems);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    #[test]
    fn never_panics_on_mutated_archives(
        at in 0usize..400,
        value in proptest::prelude::any::<u8>(),
        coding in 0usize..5,
        encoded in proptest::prelude::any::<bool>(),
    ) {
        let coding = [Coding::Copy, Coding::Lzma, Coding::Lzma2, Coding::Deflate, Coding::Bzip2][coding];
        let mut b = Builder::new(&files()).coding(coding);
        if encoded {
            b = b.encoded();
        }
        let mut bytes = b.build();
        let i = at % bytes.len();
        bytes[i] = value;
        let _ = read_all(&bytes, &Limits::default());
    }
}
