//! Folder decoding: which coder chains this reader opens (a single Copy, LZMA, LZMA2, Deflate or
//! BZip2 coder, with the crates already in the tree) and the bounded stream each gives.
//!
//! Copy, Deflate and BZip2 stream straight from the file. LZMA and LZMA2 are decoded by
//! `lzma-rs`, which pushes its output (and, for LZMA2, holds all of it until the end), so their
//! folders are decoded into memory: a folder whose declared output is larger than
//! `Limits::max_buffer` is refused before decoding, and an LZMA2 stream's chunk headers must add
//! up to that declared size before the decoder is started.

use std::io::{self, BufRead, BufReader, Read, Write};

use bzip2::bufread::MultiBzDecoder;
use flate2::bufread::DeflateDecoder;

use super::header::{Coder, Folder};
use super::limits::Limits;
use crate::inspect::problem::Problem;

/// A coder this reader decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Copy,
    Lzma,
    Lzma2,
    Deflate,
    Bzip2,
}

const AES: &[u8] = &[0x06, 0xf1, 0x07, 0x01];

/// The 7-Zip name of a codec id (`Methods.txt`), or its hex.
pub(super) fn method_name(id: &[u8]) -> String {
    let name = match id {
        [0x00] => "Copy",
        [0x03] => "Delta",
        [0x04] => "BCJ x86",
        [0x05] => "PPC",
        [0x06] => "IA64",
        [0x07] => "ARM",
        [0x08] => "ARMT",
        [0x09] => "SPARC",
        [0x0a] => "ARM64",
        [0x21] => "LZMA2",
        [0x03, 0x01, 0x01] => "LZMA",
        [0x03, 0x03, 0x01, 0x03] => "BCJ x86",
        [0x03, 0x03, 0x01, 0x1b] => "BCJ2",
        [0x03, 0x03, 0x02, 0x05] => "PPC",
        [0x03, 0x03, 0x04, 0x01] => "IA64",
        [0x03, 0x03, 0x05, 0x01] => "ARM",
        [0x03, 0x03, 0x07, 0x01] => "ARMT",
        [0x03, 0x03, 0x08, 0x05] => "SPARC",
        [0x03, 0x04, 0x01] => "PPMd",
        [0x04, 0x01, 0x08] => "Deflate",
        [0x04, 0x01, 0x09] => "Deflate64",
        [0x04, 0x02, 0x02] => "BZip2",
        [0x04, 0xf7, 0x11, 0x01] => "Zstandard",
        [0x04, 0xf7, 0x11, 0x04] => "LZ4",
        [0x04, 0xf7, 0x11, 0x02] => "Brotli",
        id if id == AES => "AES-256 (7zAES)",
        _ => return format!("coder {}", crate::model::finding::hex(id)),
    };
    name.to_string()
}

/// The coder chain as 7-Zip lists it, outermost first.
pub(super) fn chain_name(f: &Folder) -> String {
    let names: Vec<String> = f.coders.iter().map(|c| method_name(&c.id)).collect();
    names.join(" + ")
}

/// Why a folder is not decoded.
pub(super) struct Unsupported {
    pub code: &'static str,
    pub reason: String,
}

/// A filter applied to a decoded buffer (the second coder of a two-coder chain).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Filter {
    /// x86 branch converter (BCJ), what py7zr applies by default and 7-Zip to executables.
    BcjX86,
    /// Delta with this byte distance.
    Delta(usize),
}

/// How a folder is decoded: one decompressing coder, optionally followed by a filter.
pub(super) struct Plan<'f> {
    pub method: Method,
    pub coder: &'f Coder,
    pub filter: Option<Filter>,
    /// The decompressing coder's output size (the filter's input).
    pub inner_unpack: u64,
}

impl Plan<'_> {
    /// Whether the folder is decoded into memory (and so bounded by `Limits::max_buffer`).
    pub fn buffered(&self) -> bool {
        self.filter.is_some() || matches!(self.method, Method::Lzma | Method::Lzma2)
    }
}

fn method_of(c: &Coder) -> Option<Method> {
    if c.num_in != 1 || c.num_out != 1 {
        return None;
    }
    Some(match c.id.as_slice() {
        [0x00] => Method::Copy,
        [0x03, 0x01, 0x01] => Method::Lzma,
        [0x21] => Method::Lzma2,
        [0x04, 0x01, 0x08] => Method::Deflate,
        [0x04, 0x02, 0x02] => Method::Bzip2,
        _ => return None,
    })
}

fn filter_of(c: &Coder) -> Option<Filter> {
    if c.num_in != 1 || c.num_out != 1 {
        return None;
    }
    match c.id.as_slice() {
        [0x03, 0x03, 0x01, 0x03] | [0x04] if c.props.is_empty() => Some(Filter::BcjX86),
        [0x03] => match c.props.as_slice() {
            [d] => Some(Filter::Delta(usize::from(*d) + 1)),
            _ => None,
        },
        _ => None,
    }
}

/// How this reader decodes a folder, or why it does not: a single Copy, LZMA, LZMA2, Deflate or
/// BZip2 coder, or one of those bound to a BCJ x86 or Delta filter.
pub(super) fn supported(f: &Folder) -> Result<Plan<'_>, Unsupported> {
    if f.coders.iter().any(|c| c.id == AES) {
        return Err(Unsupported {
            code: "encrypted",
            reason: format!("encrypted with {}", chain_name(f)),
        });
    }
    let not_decoded = || Unsupported {
        code: "unsupported-method",
        reason: match f.coders.as_slice() {
            [c] => format!("coder {} is not decoded", method_name(&c.id)),
            _ => format!("coder chain {} is not decoded", chain_name(f)),
        },
    };
    match (f.coders.as_slice(), f.bind_pairs.as_slice()) {
        ([coder], []) => {
            let method = method_of(coder).ok_or_else(not_decoded)?;
            Ok(Plan {
                method,
                coder,
                filter: None,
                inner_unpack: f.unpack_size(),
            })
        }
        // Each coder has one in and one out stream, so stream indices are coder indices: the
        // pair feeds coder `out`'s output into coder `inp`, the filter.
        ([_, _], &[(inp, out)]) if inp != out => {
            let (Ok(inp), Ok(out)) = (usize::try_from(inp), usize::try_from(out)) else {
                return Err(not_decoded());
            };
            let (Some(outer), Some(inner)) = (f.coders.get(inp), f.coders.get(out)) else {
                return Err(not_decoded());
            };
            let filter = filter_of(outer).ok_or_else(not_decoded)?;
            let method = method_of(inner).ok_or_else(not_decoded)?;
            let inner_unpack = f.unpack_sizes.get(out).copied().unwrap_or(0);
            Ok(Plan {
                method,
                coder: inner,
                filter: Some(filter),
                inner_unpack,
            })
        }
        _ => Err(not_decoded()),
    }
}

/// The folder's output, `unpack` bytes (the reader stops there; a decoder that gives fewer is
/// a read error the caller reports). `packed` yields exactly the folder's pack stream.
pub(super) fn open<'a>(
    plan: &Plan<'_>,
    mut packed: Box<dyn BufRead + 'a>,
    pack_size: u64,
    unpack: u64,
    limits: &Limits,
) -> Result<Box<dyn BufRead + 'a>, Problem> {
    let Some(filter) = plan.filter else {
        return open_method(plan.method, plan.coder, packed, pack_size, unpack, limits);
    };
    if plan.inner_unpack != unpack {
        return Err(Problem::malformed(
            "size-mismatch",
            format!(
                "7z filter folder: the filter's {unpack} bytes differ from its input's {}",
                plan.inner_unpack
            ),
        ));
    }
    check_buffer(unpack, limits, "filtered")?;
    let mut buf = match plan.method {
        Method::Lzma => decode_lzma(&plan.coder.props, &mut packed, unpack, limits)?,
        Method::Lzma2 => decode_lzma2(&plan.coder.props, &mut packed, pack_size, unpack, limits)?,
        m => {
            let mut r = open_method(m, plan.coder, packed, pack_size, unpack, limits)?;
            let mut out = Vec::new();
            r.read_to_end(&mut out)
                .map_err(|e| Problem::malformed("corrupt-data", format!("7z folder: {e}")))?;
            out
        }
    };
    match filter {
        Filter::BcjX86 => bcj_x86_decode(&mut buf),
        Filter::Delta(d) => delta_decode(&mut buf, d),
    }
    Ok(Box::new(io::Cursor::new(buf)))
}

fn open_method<'a>(
    method: Method,
    coder: &Coder,
    mut packed: Box<dyn BufRead + 'a>,
    pack_size: u64,
    unpack: u64,
    limits: &Limits,
) -> Result<Box<dyn BufRead + 'a>, Problem> {
    let out: Box<dyn Read + 'a> = match method {
        Method::Copy => {
            if pack_size != unpack {
                return Err(Problem::malformed(
                    "size-mismatch",
                    format!("7z copy folder packs {pack_size} bytes but unpacks {unpack}"),
                ));
            }
            Box::new(packed)
        }
        Method::Deflate => Box::new(DeflateDecoder::new(packed)),
        Method::Bzip2 => Box::new(MultiBzDecoder::new(packed)),
        Method::Lzma => Box::new(io::Cursor::new(decode_lzma(
            &coder.props,
            &mut packed,
            unpack,
            limits,
        )?)),
        Method::Lzma2 => Box::new(io::Cursor::new(decode_lzma2(
            &coder.props,
            &mut packed,
            pack_size,
            unpack,
            limits,
        )?)),
    };
    let fused = Fused {
        inner: out,
        failed: None,
    };
    Ok(Box::new(BufReader::with_capacity(
        64 * 1024,
        fused.take(unpack),
    )))
}

/// A decoder that is never called again once it failed: the first error is returned for every
/// later read. libbz2-rs-sys 0.2.6 indexed out of bounds when a read followed a data error
/// (found by the `sevenz` fuzz target), and no decoder's state is meant to be resumed after one.
struct Fused<'a> {
    inner: Box<dyn Read + 'a>,
    failed: Option<(io::ErrorKind, String)>,
}

impl Read for Fused<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some((kind, message)) = &self.failed {
            return Err(io::Error::new(*kind, message.clone()));
        }
        self.inner.read(buf).inspect_err(|e| {
            self.failed = Some((e.kind(), e.to_string()));
        })
    }
}

/// Decodes a small folder whole (the encoded header), within `Limits::max_header_bytes`.
pub(super) fn decode_all(
    f: &Folder,
    packed: Box<dyn BufRead + '_>,
    pack_size: u64,
    limits: &Limits,
) -> Result<Vec<u8>, Problem> {
    let plan = supported(f)
        .map_err(|u| Problem::note(u.code, format!("7z header cannot be read: {}", u.reason)))?;
    let unpack = f.unpack_size();
    if unpack > limits.max_header_bytes {
        return Err(Problem::limit(
            "limit-header",
            format!(
                "7z encoded header unpacks to {unpack} bytes, limit {}",
                limits.max_header_bytes
            ),
        ));
    }
    let mut r = open(&plan, packed, pack_size, unpack, limits)?;
    let mut out = Vec::new();
    r.read_to_end(&mut out)
        .map_err(|e| Problem::malformed("corrupt-data", format!("7z encoded header: {e}")))?;
    if out.len() as u64 != unpack {
        return Err(Problem::malformed(
            "truncated",
            format!(
                "7z encoded header decoded to {} of {unpack} bytes",
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// Undoes the x86 branch converter over a whole buffer (xz's `simple/x86.c`, decoder side,
/// from the initial state): relative CALL/JMP targets that the encoder made absolute are made
/// relative again. The last four bytes are never converted.
pub(super) fn bcj_x86_decode(buf: &mut [u8]) {
    const ALLOWED: [bool; 8] = [true, true, true, false, true, false, false, false];
    const BIT: [u32; 8] = [0, 1, 2, 2, 3, 3, 3, 3];
    let ms_byte = |b: u8| b == 0 || b == 0xff;
    let Some(limit) = buf.len().checked_sub(5) else {
        return;
    };
    let mut prev_mask = 0u32;
    let mut prev_pos = 0u32.wrapping_sub(5);
    let mut pos = 0usize;
    while pos <= limit {
        let Some(&[b, b1, b2, b3, b4]) = buf.get(pos..pos + 5) else {
            return;
        };
        if b != 0xe8 && b != 0xe9 {
            pos += 1;
            continue;
        }
        // Positions are 32-bit in the reference and wrap the same way.
        let now = pos as u32;
        let offset = now.wrapping_sub(prev_pos);
        prev_pos = now;
        if offset > 5 {
            prev_mask = 0;
        } else {
            for _ in 0..offset {
                prev_mask &= 0x77;
                prev_mask <<= 1;
            }
        }
        if ms_byte(b4) && ALLOWED[((prev_mask >> 1) & 7) as usize] && (prev_mask >> 1) < 0x10 {
            let mut src = u32::from_le_bytes([b1, b2, b3, b4]);
            let mut dest;
            loop {
                dest = src.wrapping_sub(now.wrapping_add(5));
                if prev_mask == 0 {
                    break;
                }
                let i = BIT[((prev_mask >> 1) & 7) as usize];
                if !ms_byte((dest >> (24 - i * 8)) as u8) {
                    break;
                }
                src = dest ^ ((1u32 << (32 - i * 8)) - 1);
            }
            let top = !(((dest >> 24) & 1).wrapping_sub(1)) as u8;
            let [d0, d1, d2, _] = dest.to_le_bytes();
            if let Some(slot) = buf.get_mut(pos + 1..pos + 5) {
                slot.copy_from_slice(&[d0, d1, d2, top]);
            }
            pos += 5;
            prev_mask = 0;
        } else {
            pos += 1;
            prev_mask |= 1;
            if ms_byte(b4) {
                prev_mask |= 0x10;
            }
        }
    }
}

/// Undoes the Delta filter: each byte adds the byte `distance` before it.
pub(super) fn delta_decode(buf: &mut [u8], distance: usize) {
    for i in distance..buf.len() {
        buf[i] = buf[i].wrapping_add(buf[i - distance]);
    }
}

fn check_buffer(unpack: u64, limits: &Limits, what: &str) -> Result<(), Problem> {
    if unpack > limits.max_buffer {
        return Err(Problem::limit(
            "limit-solid-block",
            format!(
                "{what} folder unpacks to {unpack} bytes, more than the {} bytes this reader decodes in memory",
                limits.max_buffer
            ),
        ));
    }
    Ok(())
}

fn corrupt(what: &str, e: &lzma_rs::error::Error) -> Problem {
    Problem::malformed("corrupt-data", format!("7z {what} stream: {e}"))
}

fn decode_lzma(
    props: &[u8],
    packed: &mut dyn BufRead,
    unpack: u64,
    limits: &Limits,
) -> Result<Vec<u8>, Problem> {
    check_buffer(unpack, limits, "LZMA")?;
    let [p, d0, d1, d2, d3] = props else {
        return Err(Problem::malformed(
            "bad-header",
            format!("7z LZMA coder properties are {} bytes, not 5", props.len()),
        ));
    };
    // lzma-rs reads the lzma-alone header (properties, dictionary size); 7z keeps those five
    // bytes in the coder and the size in the folder, so they are put back in front.
    let head = [*p, *d0, *d1, *d2, *d3];
    let mut input = BufReader::new(io::Cursor::new(head).chain(packed));
    let opts = lzma_rs::decompress::Options {
        unpacked_size: lzma_rs::decompress::UnpackedSize::UseProvided(Some(unpack)),
        memlimit: Some(limits.max_lzma_dict),
        allow_incomplete: false,
    };
    let mut sink = Sink::new(unpack);
    lzma_rs::lzma_decompress_with_options(&mut input, &mut sink, &opts)
        .map_err(|e| corrupt("LZMA", &e))?;
    Ok(sink.out)
}

fn decode_lzma2(
    props: &[u8],
    packed: &mut dyn BufRead,
    pack_size: u64,
    unpack: u64,
    limits: &Limits,
) -> Result<Vec<u8>, Problem> {
    check_buffer(unpack, limits, "LZMA2")?;
    if props.len() != 1 || props.first().is_some_and(|&d| d > 40) {
        return Err(Problem::malformed(
            "bad-header",
            "7z LZMA2 coder properties are not one dictionary byte (0..=40)",
        ));
    }
    check_buffer(pack_size, limits, "LZMA2 packed")?;
    let mut input = Vec::new();
    packed
        .take(pack_size)
        .read_to_end(&mut input)
        .map_err(|e| Problem::malformed("truncated", format!("7z LZMA2 pack stream: {e}")))?;
    // lzma-rs keeps an LZMA2 stream's whole output until it ends: the chunk headers must
    // account for exactly the declared size before it is allowed to start.
    match lzma2_unpacked_size(&input) {
        Some(n) if n == unpack => {}
        Some(n) => {
            return Err(Problem::malformed(
                "size-mismatch",
                format!("7z LZMA2 chunks unpack to {n} bytes, the folder declares {unpack}"),
            ));
        }
        None => {
            return Err(Problem::malformed(
                "corrupt-data",
                "7z LZMA2 stream: chunk headers do not parse",
            ));
        }
    }
    let mut sink = Sink::new(unpack);
    lzma_rs::lzma2_decompress(&mut input.as_slice(), &mut sink)
        .map_err(|e| corrupt("LZMA2", &e))?;
    Ok(sink.out)
}

/// The output of a raw LZMA2 stream, summed from its chunk headers up to the end marker.
pub(super) fn lzma2_unpacked_size(input: &[u8]) -> Option<u64> {
    let mut at = 0usize;
    let mut total = 0u64;
    let be16 = |i: usize| -> Option<u64> {
        let hi = *input.get(i)?;
        let lo = *input.get(i + 1)?;
        Some(u64::from(u16::from_be_bytes([hi, lo])) + 1)
    };
    loop {
        let ctrl = *input.get(at)?;
        match ctrl {
            0x00 => return Some(total),
            0x01 | 0x02 => {
                let n = be16(at + 1)?;
                total = total.checked_add(n)?;
                at = at.checked_add(3)?.checked_add(usize::try_from(n).ok()?)?;
            }
            0x80..=0xff => {
                let unpacked = (u64::from(ctrl & 0x1f) << 16) + be16(at + 1)?;
                let packed = be16(at + 3)?;
                total = total.checked_add(unpacked)?;
                let props = usize::from(ctrl >= 0xc0);
                at = at
                    .checked_add(5 + props)?
                    .checked_add(usize::try_from(packed).ok()?)?;
            }
            _ => return None,
        }
    }
}

/// Output sink for the push-style decoders: refuses bytes past the folder's declared size.
struct Sink {
    out: Vec<u8>,
    cap: u64,
}

impl Sink {
    fn new(cap: u64) -> Self {
        Sink {
            out: Vec::with_capacity(usize::try_from(cap.min(1 << 20)).unwrap_or(0)),
            cap,
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.out.len() as u64 + buf.len() as u64 > self.cap {
            return Err(io::Error::other(format!(
                "decodes past the folder's declared {} bytes",
                self.cap
            )));
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
