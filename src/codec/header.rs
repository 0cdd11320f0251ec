//! One header check per compression format, and the xz index walk.
//!
//! Two kinds of caller ask whether bytes start a compressed stream. A decoder that was told the
//! format (Python's `lzma.decompress`, a `.gz` member already sniffed, the next member of a
//! stream) asks whether the library would *accept* the header. A sniffer that has nothing but
//! the bytes (a file with any name, an archive member, a decoded blob) must also avoid taking
//! noise for a stream: legacy `.lzma` has no magic at all, so the sniffer also requires what
//! encoders write by default ([`Check::Written`]). Every other format has a magic of its own
//! (zlib's is one byte: its check takes only the header encoders write) and one check serves
//! both.

/// A recognised compression wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// gzip (RFC 1952), possibly several members.
    Gzip,
    /// zlib (RFC 1950), as written by joblib's default compressor.
    Zlib,
    /// bzip2, possibly several streams.
    Bzip2,
    /// xz container.
    Xz,
    /// Legacy `.lzma` ("lzma-alone") as written by joblib's `lzma` compressor.
    Lzma,
    /// Zstandard frames (joblib `.zst`, `compress='zstd'`).
    Zstd,
    /// LZ4 frames (joblib `.lz4`, `compress='lz4'`), or the legacy LZ4 frame.
    Lz4,
}

impl Compression {
    /// Stable lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zlib => "zlib",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
            Compression::Lzma => "lzma",
            Compression::Zstd => "zstd",
            Compression::Lz4 => "lz4",
        }
    }
}

/// The gzip member magic (ID1, ID2).
pub const GZIP_MAGIC: &[u8] = b"\x1f\x8b";
/// The bzip2 stream magic (`BZh`, before the block-size digit).
pub const BZIP2_MAGIC: &[u8] = b"BZh";
/// The xz stream header magic.
pub const XZ_MAGIC: &[u8] = b"\xfd7zXZ\x00";
/// The zstd frame magic 0xFD2FB528, little-endian.
pub const ZSTD_MAGIC: &[u8] = b"\x28\xb5\x2f\xfd";
/// The LZ4 frame magic 0x184D2204, little-endian.
pub const LZ4_MAGIC: &[u8] = b"\x04\x22\x4d\x18";
/// The legacy LZ4 frame magic 0x184C2102, little-endian.
pub const LZ4_LEGACY_MAGIC: &[u8] = b"\x02\x21\x4c\x18";

/// Bytes [`sniff`] needs to decide every format (the lzma-alone header is the longest).
pub const SNIFF_BYTES: usize = 13;

/// How much the lzma-alone header check asks of bytes (the format has no magic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// What the decoder accepts: the caller already knows a stream of this format should be
    /// there (a Python call named it, or a stream of it just ended).
    Accepted,
    /// What an encoder writes by default, on top of what the decoder accepts: the caller has
    /// only the bytes, and random data must not pass for a stream.
    Written,
}

/// Recognises a compression wrapper from a stream's first bytes ([`SNIFF_BYTES`] are enough
/// for all). Strict ([`Check::Written`]): it decides a format from content alone.
pub fn sniff(head: &[u8]) -> Option<Compression> {
    if is_gzip(head) {
        return Some(Compression::Gzip);
    }
    if head.starts_with(XZ_MAGIC) {
        return Some(Compression::Xz);
    }
    if head.starts_with(ZSTD_MAGIC) {
        return Some(Compression::Zstd);
    }
    if head.starts_with(LZ4_MAGIC) || head.starts_with(LZ4_LEGACY_MAGIC) {
        return Some(Compression::Lz4);
    }
    if is_bzip2(head) {
        return Some(Compression::Bzip2);
    }
    if is_zlib(head) {
        return Some(Compression::Zlib);
    }
    if is_lzma_alone(head, Check::Written) {
        return Some(Compression::Lzma);
    }
    None
}

/// A gzip member header: the magic, method 8 (deflate), and no reserved flag bit set (when the
/// flags byte is there).
pub fn is_gzip(head: &[u8]) -> bool {
    head.starts_with(b"\x1f\x8b\x08") && head.get(3).is_none_or(|f| f & 0xe0 == 0)
}

/// A bzip2 stream header: `BZh`, a block size digit 1-9, then a block or end-of-stream magic
/// (when the bytes reach that far: a short head is judged by what it has).
pub fn is_bzip2(head: &[u8]) -> bool {
    let [b'B', b'Z', b'h', level, rest @ ..] = head else {
        return false;
    };
    (b'1'..=b'9').contains(level)
        && (rest.len() < 6
            || rest.starts_with(b"\x31\x41\x59\x26\x53\x59")
            || rest.starts_with(b"\x17\x72\x45\x38\x50\x90"))
}

/// A zlib header (RFC 1950) as encoders write it: CMF 0x78 (deflate, 32 KiB window), no preset
/// dictionary, the check bits. zlib's inflate also takes smaller windows, but with one byte of
/// magic a sniffer takes only what `zlib.compress` and joblib write.
pub fn is_zlib(head: &[u8]) -> bool {
    let [0x78, flg, ..] = head else {
        return false;
    };
    flg & 0x20 == 0 && (0x7800u16 | u16::from(*flg)).is_multiple_of(31)
}

/// Declared unpacked sizes from here up are refused by liblzma's `.lzma` decoder (256 GiB).
const LZMA_ALONE_MAX_SIZE: u64 = 1 << 38;

/// A legacy `.lzma` ("lzma-alone") header, 13 bytes: properties, dictionary size, unpacked size.
///
/// [`Check::Accepted`] is what liblzma's automatic decoder takes (its "picky" mode, which
/// Python's `lzma.decompress` and `LZMAFile` use): a properties byte below 225, a dictionary
/// size of the form 2^n or 2^n + 2^(n-1) (or all ones), and an unpacked size that is unknown
/// (all ones) or below 256 GiB (`alone_decoder.c`). One leniency: liblzma also refuses
/// properties with lc + lp > 4, which lzma-rs decodes; a scanner loses nothing by decoding a
/// little more. [`Check::Written`] adds what every encoder writes, since the format has no
/// magic: properties 0x5d (lc=3 lp=0 pb=2) and a dictionary of 4 KiB to 1.5 GiB.
pub fn is_lzma_alone(head: &[u8], check: Check) -> bool {
    let Some((&[props, d0, d1, d2, d3, s0, s1, s2, s3, s4, s5, s6, s7], _)) =
        head.split_first_chunk::<13>()
    else {
        return false;
    };
    let dict = u32::from_le_bytes([d0, d1, d2, d3]);
    let low = dict & dict.wrapping_neg();
    let size = u64::from_le_bytes([s0, s1, s2, s3, s4, s5, s6, s7]);
    let accepted = props < 225
        && (dict == u32::MAX || dict == low || dict == low | (low << 1))
        && (size == u64::MAX || size < LZMA_ALONE_MAX_SIZE);
    accepted
        && match check {
            Check::Accepted => true,
            Check::Written => props == 0x5d && (4096..=(3 << 29)).contains(&dict),
        }
}

/// The total output of the first xz stream in `input`, summed from its LZMA2 chunk headers
/// (`None` when the structure does not parse, or the footer's backward size is all ones).
/// Walks the stream header, then each block: its header (skipped by its declared size), its
/// chunks, padding and check, up to the index. lzma-rs holds a block's whole output in memory,
/// so a bomb must be refused from this number before decoding starts.
pub fn xz_unpacked_size(input: &[u8]) -> Option<u64> {
    let flags = *input.get(7)?;
    let check = match flags & 0x0f {
        0 => 0,
        1..=3 => 4,
        4..=6 => 8,
        7..=9 => 16,
        10..=12 => 32,
        _ => 64,
    };
    let mut at = 12usize;
    let mut total = 0u64;
    loop {
        let size_byte = *input.get(at)?;
        if size_byte == 0 {
            // The index, then the footer: lzma-rs computes `backward_size + 1` unchecked (an
            // overflow panic where overflow checks are on), so an all-ones size is refused.
            let footer = xz_index_end(input, at)?;
            let backward = input.get(footer + 4..footer + 8)?;
            return (backward != [0xff; 4]).then_some(total);
        }
        let block = at;
        at = at.checked_add((usize::from(size_byte) + 1) * 4)?;
        loop {
            let ctrl = *input.get(at)?;
            let be16 = |i: usize| {
                let hi = *input.get(at + i)?;
                let lo = *input.get(at + i + 1)?;
                Some(usize::from(u16::from_be_bytes([hi, lo])) + 1)
            };
            match ctrl {
                0x00 => {
                    at += 1;
                    break;
                }
                0x01 | 0x02 => {
                    let n = be16(1)?;
                    total = total.saturating_add(n as u64);
                    at = at.checked_add(3 + n)?;
                }
                0x80..=0xff => {
                    let unpacked = (usize::from(ctrl & 0x1f) << 16) + be16(1)?;
                    let packed = be16(3)?;
                    total = total.saturating_add(unpacked as u64);
                    let props = usize::from(ctrl >= 0xc0);
                    at = at.checked_add(5 + props + packed)?;
                }
                _ => return None,
            }
        }
        // Block padding to a multiple of four, then the check.
        at = at
            .checked_add((4 - (at - block) % 4) % 4)?
            .checked_add(check)?;
    }
}

/// Where the xz index starting at `at` ends (the footer starts): indicator, record count and
/// records (variable-length integers), padding to four bytes, CRC32.
fn xz_index_end(input: &[u8], at: usize) -> Option<usize> {
    let vli = |pos: &mut usize| -> Option<u64> {
        let mut value = 0u64;
        for i in 0..9 {
            let b = *input.get(*pos)?;
            *pos += 1;
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    };
    let mut pos = at + 1;
    let records = vli(&mut pos)?;
    for _ in 0..records {
        // Each record takes at least two bytes, so a count past the input ends here.
        vli(&mut pos)?;
        vli(&mut pos)?;
    }
    pos = pos.checked_add((4 - (pos - at) % 4) % 4)?.checked_add(4)?;
    (pos <= input.len()).then_some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `lzma.compress(b"", format=lzma.FORMAT_ALONE)`'s header (CPython 3.11): props 0x5d,
    /// 8 MiB dictionary, unknown size.
    const ALONE: &[u8] = b"\x5d\x00\x00\x80\x00\xff\xff\xff\xff\xff\xff\xff\xff";

    fn with_size(size: u64) -> Vec<u8> {
        [&ALONE[..5], &size.to_le_bytes()].concat()
    }

    fn with_dict(props: u8, dict: u32) -> Vec<u8> {
        [&[props][..], &dict.to_le_bytes(), &[0xff; 8]].concat()
    }

    /// liblzma's `alone_decoder.c` test of the dictionary size in picky mode, as written there.
    fn liblzma_dict_ok(dict: u32) -> bool {
        if dict == u32::MAX {
            return true;
        }
        let mut d = dict.wrapping_sub(1);
        d |= d >> 2;
        d |= d >> 3;
        d |= d >> 4;
        d |= d >> 8;
        d |= d >> 16;
        d.wrapping_add(1) == dict
    }

    #[test]
    fn lzma_alone_dictionary_shape_matches_liblzmas_rounding() {
        let mut dicts: Vec<u32> = (0..1 << 16).collect();
        for n in 0..32 {
            for k in 0..64u32 {
                dicts.push((1u32 << n).wrapping_add(k));
                dicts.push((1u32 << n).wrapping_sub(k));
                dicts.push((3u32 << n).wrapping_add(k));
                dicts.push((3u32 << n).wrapping_sub(k));
            }
        }
        dicts.push(u32::MAX);
        for dict in dicts {
            assert_eq!(
                is_lzma_alone(&with_dict(0x5d, dict), Check::Accepted),
                liblzma_dict_ok(dict),
                "{dict:#x}"
            );
        }
    }

    #[test]
    fn lzma_alone_accepts_what_liblzma_accepts() {
        assert!(is_lzma_alone(ALONE, Check::Accepted));
        // Properties: lc, lp, pb encoded in one byte below 9 * 5 * 5 (lc + lp > 4, which
        // liblzma refuses and lzma-rs decodes, is let through).
        assert!(is_lzma_alone(&with_dict(224, 1 << 20), Check::Accepted));
        assert!(!is_lzma_alone(&with_dict(225, 1 << 20), Check::Accepted));
        // A known size below 256 GiB, or unknown.
        assert!(is_lzma_alone(&with_size((1 << 38) - 1), Check::Accepted));
        assert!(!is_lzma_alone(&with_size(1 << 38), Check::Accepted));
        assert!(!is_lzma_alone(&ALONE[..12], Check::Accepted));
    }

    #[test]
    fn lzma_alone_sniffing_also_takes_only_what_encoders_write() {
        assert!(is_lzma_alone(ALONE, Check::Written));
        // Valid for liblzma, never written by an encoder.
        for head in [
            with_dict(0x5e, 1 << 23),
            with_dict(0x5d, 2048),
            with_dict(0x5d, 1 << 31),
            with_dict(0x5d, u32::MAX),
        ] {
            assert!(is_lzma_alone(&head, Check::Accepted), "{head:x?}");
            assert!(!is_lzma_alone(&head, Check::Written), "{head:x?}");
        }
        assert!(is_lzma_alone(&with_dict(0x5d, 4096), Check::Written));
        assert!(is_lzma_alone(&with_dict(0x5d, 3 << 29), Check::Written));
        // The size limit is liblzma's for both: a header it refuses is not sniffed as a stream.
        assert!(!is_lzma_alone(&with_size(1 << 38), Check::Written));
        assert_eq!(sniff(&with_size(1 << 38)), None);
        assert_eq!(sniff(&with_size(1 << 20)), Some(Compression::Lzma));
    }

    #[test]
    fn checks_gzip_bzip2_and_zlib_headers() {
        assert!(is_gzip(b"\x1f\x8b\x08\x00"));
        assert!(is_gzip(b"\x1f\x8b\x08"));
        assert!(!is_gzip(b"\x1f\x8b\x08\x20"), "reserved flag");
        assert!(!is_gzip(b"\x1f\x8b\x07\x00"), "not deflate");
        assert!(is_bzip2(b"BZh9\x31\x41\x59\x26\x53\x59"));
        assert!(is_bzip2(b"BZh1\x17\x72\x45\x38\x50\x90"));
        assert!(is_bzip2(b"BZh9"), "a short head is judged by what it has");
        assert!(!is_bzip2(b"BZh9\x00\x00\x00\x00\x00\x00"));
        assert!(!is_bzip2(b"BZh0"));
        assert!(is_zlib(b"\x78\x9c") && is_zlib(b"\x78\x01") && is_zlib(b"\x78\xda"));
        assert!(!is_zlib(b"\x78\x00"), "check bits");
        assert!(!is_zlib(b"\x78\xbb"), "preset dictionary");
        assert!(!is_zlib(b"\x48\x89"), "a window encoders do not write");
    }

    #[test]
    fn sniffs_every_magic() {
        for (head, kind) in [
            (&b"\x1f\x8b\x08\x00"[..], Compression::Gzip),
            (b"\xfd7zXZ\x00\x00\x04", Compression::Xz),
            (b"\x28\xb5\x2f\xfd\x04", Compression::Zstd),
            (b"\x04\x22\x4d\x18\x64", Compression::Lz4),
            (b"\x02\x21\x4c\x18\x00", Compression::Lz4),
            (b"BZh91AY&SY", Compression::Bzip2),
            (b"\x78\x9c\x01", Compression::Zlib),
            (ALONE, Compression::Lzma),
        ] {
            assert_eq!(sniff(head), Some(kind), "{head:x?}");
        }
        assert_eq!(sniff(b"PK\x03\x04"), None);
        assert_eq!(sniff(b""), None);
    }

    #[test]
    fn xz_size_walk_refuses_what_does_not_parse() {
        assert_eq!(xz_unpacked_size(b""), None);
        assert_eq!(xz_unpacked_size(XZ_MAGIC), None);
        // Stream header (12 bytes) then a block header size byte that points past the input.
        let mut cut = [XZ_MAGIC, b"\x00\x04\xe6\xd6\xb4\x46", b"\x02"].concat();
        assert_eq!(xz_unpacked_size(&cut), None);
        cut.truncate(12);
        assert_eq!(xz_unpacked_size(&cut), None);
    }
}
