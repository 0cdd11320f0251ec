//! The one read of a file: a buffered reader that feeds every block it reads to the digests
//! before any inspector sees it.
//!
//! Inspectors pull bytes through [`std::io::BufRead`]; whatever they do not read is drained at the
//! end, so the digest always covers the whole file and the file is read exactly once, in large
//! sequential blocks.

use std::fs::File;
use std::io::{self, BufRead, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ring::digest::{Context, SHA256, SHA512};

/// Default block size. Measured with `scripts/bench.sh` (docs/performance.md; 4 GiB repository,
/// warm cache, 2 cores, median of 3): 256 KiB 3.01 s, 512 KiB 3.02 s, 1 MiB 3.01 s, 2 MiB 2.97 s,
/// 4 MiB 3.01 s, 8 MiB 3.15 s. Everything from 256 KiB to 4 MiB is within noise; 1 MiB keeps
/// peak RSS at 16 MiB (8 MiB blocks: 30 MiB) and the buffer inside L2.
pub const DEFAULT_BLOCK: usize = 1 << 20;

/// The read block for a file of `size` bytes: `configured` (0: [`DEFAULT_BLOCK`]), but small
/// files get a small buffer, so a tree of 100,000 config files does not allocate 1 MiB each.
/// The scan and `verify` read through this one rule.
pub fn block_for(size: u64, configured: usize) -> usize {
    let block = if configured == 0 {
        DEFAULT_BLOCK
    } else {
        configured
    };
    block.min(usize::try_from(size.saturating_add(1).max(4096)).unwrap_or(usize::MAX))
}

/// Time spent reading and hashing blocks, summed over all threads of the process since it
/// started (`scan --verbose` reports the difference across a scan). Two clock reads per block
/// (1 MiB by default): noise next to the hashing itself.
static READ_HASH_NANOS: AtomicU64 = AtomicU64::new(0);

/// Total time every [`HashingReader`] of this process spent reading and hashing blocks.
pub fn read_hash_time() -> Duration {
    Duration::from_nanos(READ_HASH_NANOS.load(Ordering::Relaxed))
}

/// Which SHA-256 code hashes file contents on this CPU: `ring`'s run-time choice, as far as
/// the standard library's feature detection can tell it.
///
/// Mirrors the dispatch of `ring` 0.17 (`src/digest/sha2/sha2_32.rs`): on x86-64 the SHA
/// extensions when the CPU has SHA and SSSE3; else AVX, but only on Intel CPUs (pre-Zen AMD has
/// slow SHLD/SHRD), else SSSE3, else scalar assembly. The vendor check needs `cpuid`, which is
/// not safe code at this crate's minimum Rust, so an AVX CPU is named with both candidates. On
/// aarch64 the ARMv8 SHA2 instructions or scalar assembly; on every other target `ring`'s portable
/// Rust. Printed by `scan --verbose` and the benchmark so a slow scan can be traced to a missing
/// hardware backend.
pub fn sha256_backend() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("sha") && std::is_x86_feature_detected!("ssse3") {
            return "ring, x86-64 SHA-NI";
        }
        if std::is_x86_feature_detected!("avx") {
            return "ring, x86-64 AVX (SSSE3 on non-Intel CPUs)";
        }
        if std::is_x86_feature_detected!("ssse3") {
            return "ring, x86-64 SSSE3";
        }
        "ring, x86-64 scalar assembly"
    }
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("sha2") {
            return "ring, ARMv8 SHA2";
        }
        "ring, aarch64 scalar assembly"
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        "ring, portable"
    }
}

/// Incremental SHA-256 of file contents: every byte a scan, `verify` or the signing manifest
/// reads in bulk goes through here.
///
/// `ring` (BoringSSL's assembly) rather than `sha2` 0.10, whose only fast x86 path is SHA-NI: on
/// a Xeon without SHA-NI `sha2` ran at 100-125 MB/s against `ring`'s 150-210 MB/s and openssl's
/// 220 MB/s (1 GiB in 1 MiB blocks; docs/performance.md). Short hashes of our own data (cache
/// keys, finding ids, signatures) stay on `sha2`.
pub type Sha256Stream = DigestStream<32>;

/// Incremental SHA-512 of file contents (`--hash sha512`); `ring`, as [`Sha256Stream`].
pub type Sha512Stream = DigestStream<64>;

/// An incremental `ring` digest whose output is `N` bytes: [`Sha256Stream`] or [`Sha512Stream`].
pub struct DigestStream<const N: usize>(Context);

impl Default for DigestStream<32> {
    fn default() -> Self {
        DigestStream(Context::new(&SHA256))
    }
}

impl Default for DigestStream<64> {
    fn default() -> Self {
        DigestStream(Context::new(&SHA512))
    }
}

impl<const N: usize> DigestStream<N>
where
    Self: Default,
{
    /// A fresh digest.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of everything fed so far.
    pub fn finish(self) -> [u8; N] {
        let mut out = [0; N];
        // The algorithm of `DigestStream<N>` always gives N bytes.
        out.copy_from_slice(self.0.finish().as_ref());
        out
    }
}

/// A `BufRead` over `R` that hashes every byte it reads from `R`.
pub struct HashingReader<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    filled: usize,
    sha256: Sha256Stream,
    sha512: Option<Sha512Stream>,
    total: u64,
    consumed: u64,
    eof: bool,
}

impl<R: Read> HashingReader<R> {
    /// Wraps `inner` with a block buffer of `block` bytes; `sha512` adds a SHA-512 digest.
    pub fn new(inner: R, block: usize, sha512: bool) -> Self {
        HashingReader {
            inner,
            buf: vec![0; block.max(4096)],
            pos: 0,
            filled: 0,
            sha256: Sha256Stream::new(),
            sha512: sha512.then(Sha512Stream::new),
            total: 0,
            consumed: 0,
            eof: false,
        }
    }

    /// Bytes handed to the caller so far (the current offset in the file).
    pub fn offset(&self) -> u64 {
        self.consumed
    }

    /// Reads (and hashes) the rest of the file.
    pub fn drain(&mut self) -> io::Result<()> {
        loop {
            let n = self.fill_buf()?.len();
            if n == 0 {
                return Ok(());
            }
            self.consume(n);
        }
    }

    /// Total bytes read from the underlying file.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Finishes: returns (sha256 hex, sha512 hex).
    pub fn finish(self) -> (String, Option<String>) {
        let sha256 = crate::model::finding::hex(&self.sha256.finish());
        let sha512 = self.sha512.map(|h| crate::model::finding::hex(&h.finish()));
        (sha256, sha512)
    }

    // Fills the whole buffer (short reads from the OS are retried) so blocks stay large.
    fn refill(&mut self) -> io::Result<()> {
        let started = Instant::now();
        let result = self.refill_block();
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        READ_HASH_NANOS.fetch_add(nanos, Ordering::Relaxed);
        result
    }

    fn refill_block(&mut self) -> io::Result<()> {
        self.pos = 0;
        self.filled = 0;
        while self.filled < self.buf.len() && !self.eof {
            match self.inner.read(&mut self.buf[self.filled..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let block = &self.buf[..self.filled];
        self.sha256.update(block);
        if let Some(h) = &mut self.sha512 {
            h.update(block);
        }
        self.total += self.filled as u64;
        Ok(())
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        read_via_fill_buf(self, out)
    }
}

impl<R: Read> BufRead for HashingReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos >= self.filled {
            if self.eof {
                return Ok(&[]);
            }
            self.refill()?;
        }
        Ok(&self.buf[self.pos..self.filled])
    }

    fn consume(&mut self, amt: usize) {
        let amt = amt.min(self.filled - self.pos);
        self.pos += amt;
        self.consumed += amt as u64;
    }
}

/// `Read::read` for a type whose real interface is `BufRead`: copies what `fill_buf` offers (at
/// most `out.len()` bytes) and consumes exactly that much, so both views of the stream stay in
/// step and every byte passes through the type's own `fill_buf` (hashing, caps, CRC checks).
pub(crate) fn read_via_fill_buf<R: BufRead + ?Sized>(
    r: &mut R,
    out: &mut [u8],
) -> io::Result<usize> {
    let n = {
        let avail = r.fill_buf()?;
        let n = avail.len().min(out.len());
        if let (Some(dst), Some(src)) = (out.get_mut(..n), avail.get(..n)) {
            dst.copy_from_slice(src);
        }
        n
    };
    r.consume(n);
    Ok(n)
}

/// A reader that can also seek: what the positioned-read formats (HDF5, TFLite, the polyglot
/// probes) take.
pub trait ReadSeek: Read + Seek {}

impl<T: Read + Seek + ?Sized> ReadSeek for T {}

/// A source of positioned reads other than a file or a buffer (the byte ranges of a remote file,
/// `inspect::blocks`): it may stop serving reads at a cap, and says why.
pub trait Reopen {
    /// A reader at offset 0 for the check named `check` (`hdf5`, `tflite`, `polyglot`).
    fn reopen(&self, check: &'static str) -> io::Result<Box<dyn ReadSeek + '_>>;
    /// Why reads stopped (a per-file cap, a failed request), once they did; every later read
    /// fails too, so a check after it never passes on bytes it did not see.
    fn failure(&self) -> Option<Failure>;
}

/// Why a positioned source stopped serving reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// A cap on bytes or requests was reached (SCAN004), not a failed read (SCAN001).
    pub limit: bool,
    /// What happened.
    pub message: String,
}

/// Where the positioned-read formats read a file again while its one sequential read goes on.
#[derive(Clone, Copy, Default)]
pub enum Positioned<'a> {
    /// Nothing to read again: those formats say they were not inspected.
    #[default]
    None,
    /// The file on disk (reopened, never following a symlink).
    File(&'a std::path::Path),
    /// The whole file, in memory (a small remote file, kept as it streamed past).
    Memory(&'a [u8]),
    /// Another source (byte ranges of a remote file).
    Source(&'a dyn Reopen),
}

impl<'a> Positioned<'a> {
    /// `File(path)`, or `None` for an empty path.
    pub fn file(path: &'a std::path::Path) -> Self {
        if path.as_os_str().is_empty() {
            Positioned::None
        } else {
            Positioned::File(path)
        }
    }

    /// Whether there is anything to read again.
    pub fn is_none(&self) -> bool {
        matches!(self, Positioned::None)
    }

    /// A reader at offset 0 for the check named `check`.
    pub fn reopen(&self, check: &'static str) -> io::Result<Box<dyn ReadSeek + 'a>> {
        match *self {
            Positioned::None => Err(io::Error::other("nothing to read again")),
            Positioned::File(p) => Ok(Box::new(open_regular(p)?)),
            Positioned::Memory(b) => Ok(Box::new(io::Cursor::new(b))),
            Positioned::Source(s) => s.reopen(check),
        }
    }

    /// See [`Reopen::failure`].
    pub fn failure(&self) -> Option<Failure> {
        match self {
            Positioned::Source(s) => s.failure(),
            _ => None,
        }
    }
}

/// A positioned read that failed: the problem code (`offset-out-of-bounds` or `io-error`), a
/// message naming the read, and the offset asked for. Each format wraps it in its own problem type.
pub(crate) struct ReadAtError {
    pub code: &'static str,
    pub message: String,
    pub offset: u64,
}

/// Fills `out` from `offset` of a seekable file of `size` bytes.
///
/// The bounds check comes first so that a hostile offset or length (HDF5 addresses, FlatBuffers
/// offsets) is reported as out of bounds instead of surfacing as a short read.
pub(crate) fn read_at<R: Read + Seek + ?Sized>(
    r: &mut R,
    size: u64,
    offset: u64,
    out: &mut [u8],
) -> Result<(), ReadAtError> {
    let end = offset.checked_add(out.len() as u64);
    if end.is_none_or(|end| end > size) {
        return Err(ReadAtError {
            code: "offset-out-of-bounds",
            message: format!(
                "read of {} bytes at offset {offset} is past the end of the {size}-byte file",
                out.len(),
            ),
            offset,
        });
    }
    r.seek(SeekFrom::Start(offset))
        .and_then(|_| r.read_exact(out))
        .map_err(|e| ReadAtError {
            code: "io-error",
            message: format!("read at offset {offset} failed: {e}"),
            offset,
        })
}

/// Reads up to `limit` bytes from `r` into a vector. Returns the bytes and whether more followed.
pub fn read_bounded(r: &mut dyn BufRead, limit: u64) -> io::Result<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    r.take(limit).read_to_end(&mut out)?;
    let more = !r.fill_buf()?.is_empty();
    Ok((out, more))
}

/// Reads the first `n` bytes of `r` (fewer at end of stream) and returns them together with a
/// reader that yields those bytes again followed by the rest. Used to sniff streams (archive
/// members, decompressed data) whose own buffers may hand out only a few bytes at a time.
pub fn peek<'a>(r: &'a mut dyn BufRead, n: usize) -> io::Result<(Vec<u8>, impl BufRead + 'a)> {
    let mut head = Vec::with_capacity(n.min(1 << 16));
    r.take(n as u64).read_to_end(&mut head)?;
    let replay = io::Cursor::new(head.clone()).chain(r);
    Ok((head, io::BufReader::with_capacity(1 << 16, replay)))
}

/// Opens a file for reading without following a final symlink and without blocking on a FIFO
/// that replaced it since the crawl; refuses anything that is not a regular file.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = open_no_follow(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other(
            "not a regular file (changed since the crawl)",
        ));
    }
    Ok(file)
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
}

/// Without O_NOFOLLOW: refuse a path that is a link when checked (a narrower race than on Unix,
/// where the open itself refuses it).
#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> io::Result<File> {
    if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(io::Error::other("is a symlink (changed since the crawl)"));
    }
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256, Sha512};

    #[test]
    fn digest_covers_undrained_bytes() {
        let data = b"hello world".repeat(1000);
        let mut r = HashingReader::new(&data[..], 4096, true);
        let mut first = [0u8; 5];
        r.read_exact(&mut first).unwrap();
        r.drain().unwrap();
        assert_eq!(r.total(), data.len() as u64);
        let (d, d512) = r.finish();
        assert_eq!(d, crate::model::finding::hex(&Sha256::digest(&data)));
        assert_eq!(
            d512.unwrap(),
            crate::model::finding::hex(&Sha512::digest(&data))
        );
    }

    #[test]
    fn sha256_backend_is_named() {
        let name = sha256_backend();
        assert!(
            matches!(
                name,
                "ring, x86-64 SHA-NI"
                    | "ring, x86-64 AVX (SSSE3 on non-Intel CPUs)"
                    | "ring, x86-64 SSSE3"
                    | "ring, x86-64 scalar assembly"
                    | "ring, ARMv8 SHA2"
                    | "ring, aarch64 scalar assembly"
                    | "ring, portable"
            ),
            "{name}"
        );
        // The name follows the CPU: SHA-NI is claimed exactly when the CPU has it.
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            name == "ring, x86-64 SHA-NI",
            std::is_x86_feature_detected!("sha") && std::is_x86_feature_detected!("ssse3")
        );
    }

    // Sizes around the padding edges (SHA-256: 55 bytes still fit the length in the last
    // 64-byte block, 56 do not; SHA-512: 111/112 of 128), block boundaries of both digests and of
    // the reader's buffer, and multi-block sizes.
    const EDGE_SIZES: &[usize] = &[
        0, 1, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 1000, 4095, 4096, 4097, 12_289, 100_003,
    ];

    fn sample(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| (i.wrapping_mul(31) ^ (i >> 8)) as u8)
            .collect()
    }

    fn sha2_hex(data: &[u8]) -> (String, Option<String>) {
        (
            crate::model::finding::hex(&Sha256::digest(data)),
            Some(crate::model::finding::hex(&Sha512::digest(data))),
        )
    }

    #[test]
    fn ring_digests_match_sha2_at_padding_edges() {
        for &n in EDGE_SIZES {
            let data = sample(n);
            for block in [4096, 4097, 65_536] {
                let mut r = HashingReader::new(&data[..], block, true);
                r.drain().unwrap();
                assert_eq!(r.finish(), sha2_hex(&data), "{n} bytes, block {block}");
            }
        }
    }

    #[test]
    fn ring_digests_match_sha2_for_odd_update_splits() {
        let data = sample(100_003);
        for split in [1, 3, 55, 56, 63, 64, 65, 127, 129, 4099] {
            let (mut a, mut b) = (Sha256Stream::new(), Sha512Stream::new());
            for chunk in data.chunks(split) {
                a.update(chunk);
                b.update(chunk);
            }
            assert_eq!(a.finish()[..], Sha256::digest(&data)[..], "split {split}");
            assert_eq!(b.finish()[..], Sha512::digest(&data)[..], "split {split}");
        }
    }

    /// A source that hands out at most `step` bytes per read, as a socket or a pipe may.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len());
            let (head, rest) = self.data.split_at(n);
            out[..n].copy_from_slice(head);
            self.data = rest;
            Ok(n)
        }
    }

    #[test]
    fn short_reads_hash_the_same() {
        let data = sample(20_011);
        for step in [1, 7, 1000, 4097] {
            let mut r = HashingReader::new(Trickle { data: &data, step }, 4096, true);
            let mut head = [0u8; 65];
            r.read_exact(&mut head).unwrap();
            r.drain().unwrap();
            assert_eq!(r.finish(), sha2_hex(&data), "step {step}");
        }
    }

    #[test]
    fn peek_replays_head() {
        let data = b"abcdefgh".to_vec();
        let mut src = &data[..];
        let (head, mut rest) = peek(&mut src, 3).unwrap();
        assert_eq!(head, b"abc");
        let mut all = Vec::new();
        rest.read_to_end(&mut all).unwrap();
        assert_eq!(all, data);
    }
}
