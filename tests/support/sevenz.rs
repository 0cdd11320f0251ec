//! A tiny 7z writer for the CLI tests: one solid folder (Copy, or LZMA2 in stored chunks as
//! `lzma-rs` writes them), member CRCs, and optionally the header encoded with the same coder,
//! as 7-Zip does by default.

/// 7z UINT64.
fn number(out: &mut Vec<u8>, v: u64) {
    let (mut first, mut mask, mut n) = (0u8, 0x80u8, 0);
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
    out.extend((0..n).map(|j| (v >> (8 * j)) as u8));
}

/// The coder of the archive's folder.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Coder {
    /// Stored.
    Copy,
    /// LZMA2 (stored chunks).
    Lzma2,
    /// The 7zAES id with Copy data: an encrypted folder as far as a reader can tell.
    Aes,
}

fn pack(coder: Coder, data: &[u8]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    match coder {
        Coder::Copy => (vec![0x00], vec![], data.to_vec()),
        Coder::Lzma2 => {
            let mut out = Vec::new();
            lzma_rs::lzma2_compress(&mut &data[..], &mut out).unwrap();
            (vec![0x21], vec![0x10], out)
        }
        Coder::Aes => (vec![0x06, 0xf1, 0x07, 0x01], vec![], data.to_vec()),
    }
}

fn streams(out: &mut Vec<u8>, pack_pos: u64, packed: u64, coder: (&[u8], &[u8]), unpack: u64) {
    out.extend_from_slice(&[0x06]);
    number(out, pack_pos);
    out.extend_from_slice(&[0x01, 0x09]);
    number(out, packed);
    out.extend_from_slice(&[0x00, 0x07, 0x0b, 0x01, 0x00, 0x01]);
    let (id, props) = coder;
    out.push(id.len() as u8 | if props.is_empty() { 0 } else { 0x20 });
    out.extend_from_slice(id);
    if !props.is_empty() {
        number(out, props.len() as u64);
        out.extend_from_slice(props);
    }
    out.push(0x0c);
    number(out, unpack);
    out.push(0x00);
}

/// A 7z archive of `files` (all with content) in one folder.
pub fn sevenz(files: &[(&str, &[u8])], coder: Coder, encode_header: bool) -> Vec<u8> {
    let data: Vec<u8> = files.iter().flat_map(|(_, d)| d.to_vec()).collect();
    let (id, props, mut body) = pack(coder, &data);
    let mut h = vec![0x01, 0x04];
    streams(
        &mut h,
        0,
        body.len() as u64,
        (&id, &props),
        data.len() as u64,
    );
    h.extend_from_slice(&[0x08, 0x0d]);
    number(&mut h, files.len() as u64);
    h.push(0x09);
    for (_, d) in &files[..files.len() - 1] {
        number(&mut h, d.len() as u64);
    }
    h.extend_from_slice(&[0x0a, 0x01]);
    for (_, d) in files {
        h.extend_from_slice(&crate::support::crc32(d).to_le_bytes());
    }
    h.extend_from_slice(&[0x00, 0x00, 0x05]);
    number(&mut h, files.len() as u64);
    let mut names = vec![0u8];
    for (n, _) in files {
        names.extend(n.encode_utf16().flat_map(u16::to_le_bytes));
        names.extend_from_slice(&[0, 0]);
    }
    h.push(0x11);
    number(&mut h, names.len() as u64);
    h.extend(names);
    h.extend_from_slice(&[0x00, 0x00]);
    let next = if encode_header {
        let coder = if coder == Coder::Aes {
            Coder::Copy
        } else {
            coder
        };
        let (id, props, packed) = pack(coder, &h);
        let mut e = vec![0x17];
        streams(
            &mut e,
            body.len() as u64,
            packed.len() as u64,
            (&id, &props),
            h.len() as u64,
        );
        e.push(0x00);
        body.extend(packed);
        e
    } else {
        h
    };
    let mut start = (body.len() as u64).to_le_bytes().to_vec();
    start.extend_from_slice(&(next.len() as u64).to_le_bytes());
    start.extend_from_slice(&crate::support::crc32(&next).to_le_bytes());
    let mut out = vec![b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c, 0, 4];
    out.extend_from_slice(&crate::support::crc32(&start).to_le_bytes());
    out.extend(start);
    out.extend(body);
    out.extend(next);
    out
}
