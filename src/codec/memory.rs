//! The decompressors of Python's `zlib`, `gzip`, `bz2` and `lzma` modules, on bytes in memory.
//!
//! Each reads what CPython's one-shot function (`zlib.decompress`, `gzip.decompress`, ...)
//! reads, concatenated streams included, and never holds more than `cap` output bytes: a bomb
//! is refused when it passes the cap, not after. The one deliberate leniency: bytes after the
//! end of the last stream are ignored for every format (Python's gzip alone refuses them), since
//! a scanner loses nothing by decoding a little more.

use std::io::{self, Read};

use super::error::ErrorKind;
use super::header::{BZIP2_MAGIC, Check, GZIP_MAGIC, XZ_MAGIC, is_lzma_alone, xz_unpacked_size};
use super::lzma;

/// Reads `r` to its end into `out`, refusing to hold more than `cap` bytes in total.
fn read_capped(r: &mut dyn Read, out: &mut Vec<u8>, cap: usize) -> Result<(), ErrorKind> {
    let room = cap.saturating_sub(out.len());
    let room = u64::try_from(room).unwrap_or(u64::MAX);
    match r.take(room.saturating_add(1)).read_to_end(out) {
        Ok(_) if out.len() > cap => Err(ErrorKind::TooLarge { limit: cap }),
        Ok(_) => Ok(()),
        Err(e) => Err(stream_error(&e)),
    }
}

fn stream_error(e: &io::Error) -> ErrorKind {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        ErrorKind::Truncated
    } else {
        ErrorKind::Corrupt(e.to_string())
    }
}

/// `zlib.decompress`: one stream; what follows it is ignored, as Python does. Driven through
/// `flate2::Decompress` because its readers end quietly when the input stops mid-stream,
/// where Python reports a truncated stream.
pub fn zlib(input: &[u8], cap: usize) -> Result<Vec<u8>, ErrorKind> {
    let mut d = flate2::Decompress::new(true);
    let mut out = Vec::new();
    loop {
        if out.len() == out.capacity() {
            if out.len() > cap {
                return Err(ErrorKind::TooLarge { limit: cap });
            }
            // Grow in steps, one byte past the cap at most, so a bomb is seen, not held.
            out.reserve_exact(
                cap.saturating_add(1)
                    .saturating_sub(out.len())
                    .min(64 * 1024),
            );
        }
        let (before_in, before_out) = (d.total_in(), d.total_out());
        let at = usize::try_from(before_in).unwrap_or(usize::MAX);
        let status = d
            .decompress_vec(
                input.get(at..).unwrap_or_default(),
                &mut out,
                flate2::FlushDecompress::None,
            )
            .map_err(|e| ErrorKind::Corrupt(e.to_string()))?;
        if out.len() > cap {
            return Err(ErrorKind::TooLarge { limit: cap });
        }
        match status {
            flate2::Status::StreamEnd => return Ok(out),
            _ if d.total_in() == before_in && d.total_out() == before_out => {
                return Err(ErrorKind::Truncated);
            }
            _ => {}
        }
    }
}

/// `gzip.decompress`: members in a row, zero padding between and after them skipped.
pub fn gzip(input: &[u8], cap: usize) -> Result<Vec<u8>, ErrorKind> {
    let mut out = Vec::new();
    let mut rest = input;
    loop {
        let mut d = flate2::bufread::GzDecoder::new(rest);
        read_capped(&mut d, &mut out, cap)?;
        rest = d.into_inner();
        let zeros = rest.iter().take_while(|&&b| b == 0).count();
        rest = rest.get(zeros..).unwrap_or_default();
        // Each member consumed at least its header, so this ends.
        if rest.is_empty() || !rest.starts_with(GZIP_MAGIC) {
            return Ok(out);
        }
    }
}

/// `bz2.decompress`: streams in a row; what follows the last one is ignored.
pub fn bz2(input: &[u8], cap: usize) -> Result<Vec<u8>, ErrorKind> {
    let mut out = Vec::new();
    let mut rest = input;
    loop {
        let mut d = bzip2::bufread::BzDecoder::new(rest);
        read_capped(&mut d, &mut out, cap)?;
        rest = d.into_inner();
        if !rest.starts_with(BZIP2_MAGIC) {
            return Ok(out);
        }
    }
}

/// `lzma.decompress` (`FORMAT_AUTO`): xz or legacy lzma streams in a row; what follows the
/// last one is ignored when it is not another stream.
pub fn lzma(input: &[u8], cap: usize) -> Result<Vec<u8>, ErrorKind> {
    let mut out = Vec::new();
    let mut rest = input;
    let mut first = true;
    loop {
        let xz = rest.starts_with(XZ_MAGIC);
        if !xz && !is_lzma_alone(rest, Check::Accepted) {
            // What liblzma's automatic decoder refuses: an error first, trailing data after.
            if first {
                return Err(ErrorKind::Corrupt("not an xz or lzma stream".to_owned()));
            }
            return Ok(out);
        }
        let (data, used) = lzma_stream(rest, xz, cap.saturating_sub(out.len()))?;
        out.extend_from_slice(&data);
        if out.len() > cap {
            return Err(ErrorKind::TooLarge { limit: cap });
        }
        first = false;
        rest = rest.get(used..).unwrap_or_default();
        if used == 0 || rest.is_empty() {
            return Ok(out);
        }
    }
}

/// One xz or lzma-alone stream at the start of `input`: its output and the bytes it used.
fn lzma_stream(input: &[u8], xz: bool, cap: usize) -> Result<(Vec<u8>, usize), ErrorKind> {
    // lzma-rs holds an xz block's whole output in memory before writing any of it, so the
    // output size is read from the LZMA2 chunk headers first (a bomb never starts decoding).
    if xz {
        let Some(size) = xz_unpacked_size(input) else {
            return Err(ErrorKind::Corrupt("xz stream structure".to_owned()));
        };
        if size > cap as u64 {
            return Err(ErrorKind::TooLarge { limit: cap });
        }
    }
    let caps = lzma::Caps {
        max_output: cap as u64,
        // The dictionary buffer never holds more than the output so far.
        max_dict: cap,
        ratio: None,
    };
    let run = lzma::decode(input, xz, &caps);
    match run.result {
        Ok(()) => Ok((run.data, run.used)),
        Err(e) => Err(lzma_error(cap, &e)),
    }
}

fn lzma_error(cap: usize, e: &lzma_rs::error::Error) -> ErrorKind {
    let over = match e {
        lzma_rs::error::Error::LzmaError(m) => m.contains("exceeded memory limit"),
        lzma_rs::error::Error::IoError(io) => io.to_string().contains(lzma::SIZE_STOP),
        _ => false,
    };
    if over {
        return ErrorKind::TooLarge { limit: cap };
    }
    match e {
        lzma_rs::error::Error::IoError(io) => stream_error(io),
        other => ErrorKind::Corrupt(other.to_string()),
    }
}
