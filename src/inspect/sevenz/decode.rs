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

use super::Limits;
use super::header::{Coder, Folder};
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

/// The one coder of a folder this reader decodes, or why it does not.
pub(super) fn supported(f: &Folder) -> Result<(Method, &Coder), Unsupported> {
    if f.coders.iter().any(|c| c.id == AES) {
        return Err(Unsupported {
            code: "encrypted",
            reason: format!("encrypted with {}", chain_name(f)),
        });
    }
    let [coder] = f.coders.as_slice() else {
        return Err(Unsupported {
            code: "unsupported-method",
            reason: format!("coder chain {} is not decoded", chain_name(f)),
        });
    };
    let method = match coder.id.as_slice() {
        [0x00] => Method::Copy,
        [0x03, 0x01, 0x01] => Method::Lzma,
        [0x21] => Method::Lzma2,
        [0x04, 0x01, 0x08] => Method::Deflate,
        [0x04, 0x02, 0x02] => Method::Bzip2,
        other => {
            return Err(Unsupported {
                code: "unsupported-method",
                reason: format!("coder {} is not decoded", method_name(other)),
            });
        }
    };
    if coder.num_in != 1 || coder.num_out != 1 {
        return Err(Unsupported {
            code: "unsupported-method",
            reason: format!(
                "coder {} with {} in and {} out streams",
                method_name(&coder.id),
                coder.num_in,
                coder.num_out
            ),
        });
    }
    Ok((method, coder))
}

/// Whether the method is decoded into memory (and so bounded by `Limits::max_buffer`).
pub(super) fn buffered(m: Method) -> bool {
    matches!(m, Method::Lzma | Method::Lzma2)
}

/// The folder's output, `unpack` bytes (the reader stops there; a decoder that gives fewer is
/// a read error the caller reports). `packed` yields exactly the folder's pack stream.
pub(super) fn open<'a>(
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
    Ok(Box::new(BufReader::with_capacity(
        64 * 1024,
        out.take(unpack),
    )))
}

/// Decodes a small folder whole (the encoded header): `cap` bounds the output.
pub(super) fn decode_all(
    f: &Folder,
    packed: Box<dyn BufRead + '_>,
    pack_size: u64,
    limits: &Limits,
) -> Result<Vec<u8>, Problem> {
    let (method, coder) = supported(f)
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
    let mut r = open(method, coder, packed, pack_size, unpack, limits)?;
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
