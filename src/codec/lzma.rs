//! xz and legacy `.lzma` decoded in memory, under caps, with `lzma-rs`.
//!
//! lzma-rs pushes its output into a writer instead of being pulled, and refuses the bytes
//! after a stream's end only once it has dropped what it decoded. Both callers (the streaming
//! decompressor of `inspect::compress` and the blob decoder of `code::python::decode`) therefore
//! run it here: into a sink that refuses output past the [`Caps`], and, when bytes follow the
//! stream, a second time on the input cut where the decoder stopped reading.
//!
//! lzma-rs also holds an xz block's whole output before pushing any of it, so a caller refuses
//! an xz stream from [`super::header::xz_unpacked_size`] before calling [`decode`]: the sink
//! caps what is kept, not what lzma-rs allocates.

use std::io::{self, Write};

pub use super::ratio::Ratio;

/// Why the sink refused more output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The output reached [`Caps::max_output`].
    Size,
    /// The output outgrew its input by more than the [`Ratio`].
    Ratio,
}

/// The message of the error the sink returns at [`Stop::Size`]; lzma-rs hands it back as its
/// own `IoError`.
pub const SIZE_STOP: &str = "decoded size limit";

/// Caps on decoding one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Most output bytes kept.
    pub max_output: u64,
    /// Largest lzma-alone dictionary lzma-rs may allocate (its `memlimit`).
    pub max_dict: usize,
    /// The bomb test, if the caller judges the ratio.
    pub ratio: Option<Ratio>,
}

/// What one decoding produced.
#[derive(Debug)]
pub struct Run {
    /// The output kept (up to the caps, also when decoding failed).
    pub data: Vec<u8>,
    /// Which cap stopped the output, if one did.
    pub stop: Option<Stop>,
    /// How decoding ended.
    pub result: Result<(), lzma_rs::error::Error>,
    /// Input bytes taken: where the stream ended when bytes followed it, else where the decoder
    /// stopped reading.
    pub used: usize,
    /// Whether bytes followed the end of the stream (not decoded: a second concatenated stream
    /// lands here too).
    pub trailing: bool,
}

/// Decodes the xz (`xz` true) or lzma-alone stream at the start of `input` within `caps`.
pub fn decode(input: &[u8], xz: bool, caps: &Caps) -> Run {
    let mut run = run_once(input, xz, caps);
    if let Err(e) = &run.result {
        let message = e.to_string();
        if ["after last XZ block", "more bytes are available"]
            .iter()
            .any(|m| message.contains(m))
        {
            let cut = run.used.min(input.len());
            run = run_once(input.get(..cut).unwrap_or_default(), xz, caps);
            run.used = cut;
            run.trailing = true;
        }
    }
    run
}

fn run_once(input: &[u8], xz: bool, caps: &Caps) -> Run {
    let mut sink = Sink {
        data: Vec::new(),
        cap: caps.max_output,
        compressed: input.len() as u64,
        ratio: caps.ratio,
        stop: None,
    };
    let mut cursor = io::Cursor::new(input);
    let result = if xz {
        lzma_rs::xz_decompress(&mut cursor, &mut sink)
    } else {
        let opts = lzma_rs::decompress::Options {
            memlimit: Some(caps.max_dict),
            ..Default::default()
        };
        lzma_rs::lzma_decompress_with_options(&mut cursor, &mut sink, &opts)
    };
    Run {
        data: sink.data,
        stop: sink.stop,
        result,
        used: usize::try_from(cursor.position()).unwrap_or(usize::MAX),
        trailing: false,
    }
}

/// Output sink for the push-style decoders: keeps bytes up to the cap, then refuses.
struct Sink {
    data: Vec<u8>,
    cap: u64,
    compressed: u64,
    ratio: Option<Ratio>,
    stop: Option<Stop>,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let have = self.data.len() as u64;
        let room = usize::try_from(self.cap.saturating_sub(have)).unwrap_or(usize::MAX);
        if buf.len() > room {
            self.data
                .extend_from_slice(buf.get(..room).unwrap_or_default());
            self.stop = Some(Stop::Size);
            return Err(io::Error::other(SIZE_STOP));
        }
        self.data.extend_from_slice(buf);
        let out = self.data.len() as u64;
        if self.ratio.is_some_and(|r| r.exceeded(out, self.compressed)) {
            self.stop = Some(Stop::Ratio);
            return Err(io::Error::other("compression ratio limit"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alone(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let opts = lzma_rs::compress::Options {
            unpacked_size: lzma_rs::compress::UnpackedSize::WriteToHeader(None),
        };
        lzma_rs::lzma_compress_with_options(&mut &data[..], &mut out, &opts).unwrap();
        out
    }

    fn xz(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        lzma_rs::xz_compress(&mut &data[..], &mut out).unwrap();
        out
    }

    const OPEN: Caps = Caps {
        max_output: 1 << 20,
        max_dict: 1 << 24,
        ratio: None,
    };

    #[test]
    fn decodes_a_stream_and_cuts_what_follows_it() {
        for (stream, is_xz) in [(alone(b"payload"), false), (xz(b"payload"), true)] {
            let run = decode(&stream, is_xz, &OPEN);
            assert!(run.result.is_ok(), "{:?}", run.result);
            assert_eq!(
                (run.data.as_slice(), run.trailing),
                (&b"payload"[..], false)
            );
            let with_junk = [stream.clone(), b"JUNK".to_vec()].concat();
            let run = decode(&with_junk, is_xz, &OPEN);
            assert!(run.result.is_ok(), "{:?}", run.result);
            assert_eq!(run.data, b"payload");
            assert_eq!((run.trailing, run.used), (true, stream.len()));
        }
    }

    #[test]
    fn stops_at_the_output_cap_and_at_the_ratio() {
        let zeros = vec![0u8; 1 << 16];
        for (stream, is_xz) in [(alone(&zeros), false), (xz(&zeros), true)] {
            let small = Caps {
                max_output: 1000,
                ..OPEN
            };
            let run = decode(&stream, is_xz, &small);
            assert_eq!((run.stop, run.data.len()), (Some(Stop::Size), 1000));
            assert!(run.result.is_err());
            if is_xz {
                // lzma-rs's xz encoder stores chunks uncompressed: no ratio to exceed.
                continue;
            }
            let ratio = Caps {
                ratio: Some(Ratio {
                    max_ratio: 1,
                    min_bytes: 100,
                }),
                ..OPEN
            };
            let run = decode(&stream, is_xz, &ratio);
            assert_eq!(run.stop, Some(Stop::Ratio));
        }
    }
}
