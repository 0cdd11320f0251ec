//! A bounded random-access reader over byte ranges of a remote file, for the formats a
//! streamed (remote) scan cannot inspect front to back: HDF5 and TFLite (their parsers follow
//! addresses and offsets anywhere in the file) and the polyglot probes (an HDF5 superblock at
//! 0, 512, 1024, ...; a zip end record at the end; a pickle after the declared data).
//!
//! Reads are served from a cache of aligned [`BLOCK`]-byte blocks; a read that misses fetches the
//! missing run of blocks with one range request (sequential reads fetch a doubling window, up to
//! [`MAX_RUN`] bytes). Two caps bound what one file can cost, the same as header mode's:
//! `max_bytes` held and `max_requests` made. Reaching a cap, a failed request or a server that
//! answers with another number of bytes than asked (one that ignores `Range`, or a short body)
//! stops the reader for good: that read and every later one fail, [`Reopen::failure`] says why,
//! and the inspector's caller turns it into a finding. Nothing is retried here and nothing
//! waits beyond the HTTP client's own timeouts, so a hostile server costs at most the caps.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, Read, Seek, SeekFrom};

use super::read::{Failure, ReadSeek, Reopen};

/// Cache block: reads are fetched in aligned blocks of this size (HDF5 and FlatBuffer
/// structures are small; a polyglot probe at a power of two costs one block, so a 10 GB file's
/// probes cost about 25 blocks).
pub const BLOCK: u64 = 4 << 10;
/// Most bytes fetched with one request (a sequential read's window grows to this).
pub const MAX_RUN: u64 = 1 << 20;

/// Reads byte ranges of one file (a remote file over HTTP `Range`, or a test's buffer).
pub trait RangeSource {
    /// The bytes `[offset, offset + len)`; fewer only where the file ends.
    fn read_at(&mut self, offset: u64, len: u64) -> io::Result<Vec<u8>>;
}

/// The byte ranges of one file of `size` bytes, cached in blocks, under caps.
pub struct Blocks<'s> {
    src: &'s mut dyn RangeSource,
    size: u64,
    cache: BTreeMap<u64, Vec<u8>>,
    max_bytes: u64,
    max_requests: u64,
    fetched: u64,
    requests: u64,
    failure: Option<Failure>,
    /// The checks that opened this reader, and whether each finished without a failure.
    checks: Vec<(&'static str, bool)>,
    /// Where the last read ended (a read starting there is sequential) and the next window.
    seq_end: u64,
    window: u64,
}

/// What a [`Blocks`] reader cost and covered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes fetched.
    pub fetched: u64,
    /// Range requests made.
    pub requests: u64,
    /// Checks that ran to the end on the bytes they asked for.
    pub checked: Vec<&'static str>,
    /// Checks that a cap or a failed request stopped.
    pub not_checked: Vec<&'static str>,
    /// Why reads stopped, if they did.
    pub failure: Option<Failure>,
}

impl<'s> Blocks<'s> {
    /// A reader of `src` (a file of `size` bytes) holding at most `max_bytes` and making at most
    /// `max_requests` requests.
    pub fn new(src: &'s mut dyn RangeSource, size: u64, max_bytes: u64, max_requests: u64) -> Self {
        Blocks {
            src,
            size,
            cache: BTreeMap::new(),
            max_bytes,
            max_requests,
            fetched: 0,
            requests: 0,
            failure: None,
            checks: Vec::new(),
            seq_end: u64::MAX,
            window: BLOCK,
        }
    }

    /// Bytes of the file already fetched elsewhere (header mode's first ranges), kept as the
    /// whole blocks they cover; they cost no request and count against no cap here.
    pub fn seed(&mut self, offset: u64, bytes: &[u8]) {
        let mut b = offset.div_ceil(BLOCK);
        loop {
            let start = b.saturating_mul(BLOCK);
            let end = start.saturating_add(BLOCK).min(self.size);
            let (Some(a), Some(z)) = (
                start
                    .checked_sub(offset)
                    .and_then(|a| usize::try_from(a).ok()),
                end.checked_sub(offset)
                    .and_then(|z| usize::try_from(z).ok()),
            ) else {
                break;
            };
            let Some(block) = bytes.get(a..z).filter(|_| start < end) else {
                break;
            };
            self.cache.entry(b).or_insert_with(|| block.to_vec());
            b += 1;
        }
    }

    /// What this reader cost and covered.
    pub fn stats(&self) -> Stats {
        let mut s = Stats {
            fetched: self.fetched,
            requests: self.requests,
            failure: self.failure.clone(),
            ..Stats::default()
        };
        for &(check, ok) in &self.checks {
            let list = if ok {
                &mut s.checked
            } else {
                &mut s.not_checked
            };
            if !list.contains(&check) {
                list.push(check);
            }
        }
        s.checked.retain(|c| !s.not_checked.contains(c));
        s
    }

    /// Stops the reader for good and marks the running check as not finished.
    fn fail(&mut self, limit: bool, message: String) -> io::Error {
        if let Some(last) = self.checks.last_mut() {
            last.1 = false;
        }
        let e = io::Error::other(message.clone());
        self.failure.get_or_insert(Failure { limit, message });
        e
    }

    /// Fetches blocks `first..=last` (all missing) with one request.
    fn fetch(&mut self, first: u64, last: u64) -> io::Result<()> {
        if let Some(f) = &self.failure {
            return Err(io::Error::other(f.message.clone()));
        }
        let start = first * BLOCK;
        let end = last.saturating_add(1).saturating_mul(BLOCK).min(self.size);
        let len = end - start;
        if self.requests >= self.max_requests {
            let m = format!(
                "positioned reads stopped at the cap of {} range requests for one file",
                self.max_requests
            );
            return Err(self.fail(true, m));
        }
        if self.fetched.saturating_add(len) > self.max_bytes {
            let m = format!(
                "positioned reads stopped at the cap of {} bytes fetched for one file",
                self.max_bytes
            );
            return Err(self.fail(true, m));
        }
        let bytes = match self.src.read_at(start, len) {
            Ok(b) => b,
            Err(e) => return Err(self.fail(false, format!("range request failed: {e}"))),
        };
        self.requests += 1;
        self.fetched = self.fetched.saturating_add(bytes.len() as u64);
        if bytes.len() as u64 != len {
            // More: the server ignored the range; fewer: a short body. Either way the bytes are
            // not known to be the ones at this offset.
            let m = format!(
                "the server answered a {len}-byte range at offset {start} with {} bytes",
                bytes.len()
            );
            return Err(self.fail(false, m));
        }
        for (i, chunk) in bytes.chunks(BLOCK as usize).enumerate() {
            self.cache.insert(first + i as u64, chunk.to_vec());
        }
        Ok(())
    }

    /// Reads at most `out.len()` bytes at `pos` (fewer at the end of the file, and at most
    /// [`MAX_RUN`] in one call); 0 at or past the end.
    pub fn read_at(&mut self, pos: u64, out: &mut [u8]) -> io::Result<usize> {
        if pos >= self.size || out.is_empty() {
            return Ok(0);
        }
        let want = (out.len() as u64).min(self.size - pos).min(MAX_RUN);
        let first = pos / BLOCK;
        let last = (pos + want - 1) / BLOCK;
        let blocks = self.size.div_ceil(BLOCK);
        // A read that continues the last one is sequential: fetch ahead, doubling.
        let ahead = if pos == self.seq_end {
            self.window = (self.window * 2).min(MAX_RUN);
            self.window / BLOCK
        } else {
            self.window = BLOCK;
            1
        };
        let mut b = first;
        while b <= last {
            if self.cache.contains_key(&b) {
                b += 1;
                continue;
            }
            let mut end = b;
            let limit = (b + ahead.max(last - b + 1)).min(blocks) - 1;
            while end < limit && !self.cache.contains_key(&(end + 1)) {
                end += 1;
            }
            self.fetch(b, end)?;
            b = end + 1;
        }
        let mut n = 0usize;
        let mut at = pos;
        while (n as u64) < want {
            let block = self.cache.get(&(at / BLOCK)).map(Vec::as_slice);
            let from = usize::try_from(at % BLOCK).unwrap_or(usize::MAX);
            let Some(avail) = block.and_then(|b| b.get(from..)) else {
                break;
            };
            let k = avail
                .len()
                .min(usize::try_from(want).unwrap_or(usize::MAX) - n);
            let (Some(dst), Some(src)) = (out.get_mut(n..n + k), avail.get(..k)) else {
                break;
            };
            dst.copy_from_slice(src);
            n += k;
            at += k as u64;
        }
        self.seq_end = at;
        Ok(n)
    }
}

/// A reader at a position of a shared [`Blocks`] (each check gets its own position).
struct Cursor<'b, 's> {
    blocks: &'b RefCell<Blocks<'s>>,
    size: u64,
    pos: u64,
}

impl Read for Cursor<'_, '_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.blocks.borrow_mut().read_at(self.pos, out)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Cursor<'_, '_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.size.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek before the start or past u64",
            )
        })?;
        Ok(self.pos)
    }
}

impl Reopen for RefCell<Blocks<'_>> {
    fn reopen(&self, check: &'static str) -> io::Result<Box<dyn ReadSeek + '_>> {
        let mut b = self.borrow_mut();
        let failed = b.failure.clone();
        b.checks.push((check, failed.is_none()));
        if let Some(f) = failed {
            return Err(io::Error::other(f.message));
        }
        let size = b.size;
        drop(b);
        Ok(Box::new(Cursor {
            blocks: self,
            size,
            pos: 0,
        }))
    }

    fn failure(&self) -> Option<Failure> {
        self.borrow().failure.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file in memory that counts requests; `mode` makes it misbehave.
    struct Mem {
        bytes: Vec<u8>,
        requests: Vec<(u64, u64)>,
        mode: Mode,
    }

    #[derive(PartialEq)]
    enum Mode {
        Honest,
        /// Sends the whole file from byte 0 whatever the range (a server ignoring `Range`).
        IgnoresRange,
        /// Sends half of each range.
        Short,
        /// Fails every request.
        Broken,
    }

    impl RangeSource for Mem {
        fn read_at(&mut self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
            self.requests.push((offset, len));
            let (a, b) = match self.mode {
                Mode::Honest => (offset, offset + len),
                Mode::IgnoresRange => (0, self.bytes.len() as u64),
                Mode::Short => (offset, offset + len / 2),
                Mode::Broken => return Err(io::Error::other("connection reset")),
            };
            let b = usize::try_from(b).unwrap().min(self.bytes.len());
            let a = usize::try_from(a).unwrap().min(b);
            Ok(self.bytes[a..b].to_vec())
        }
    }

    fn mem(n: usize, mode: Mode) -> Mem {
        Mem {
            bytes: (0..n).map(|i| (i % 251) as u8).collect(),
            requests: Vec::new(),
            mode,
        }
    }

    #[test]
    fn serves_any_position_from_aligned_blocks_and_caches_them() {
        let mut m = mem(100_000, Mode::Honest);
        let expect = m.bytes.clone();
        let cell = RefCell::new(Blocks::new(&mut m, 100_000, 1 << 20, 100));
        let mut r = cell.reopen("hdf5").unwrap();
        let mut buf = [0u8; 10];
        r.seek(SeekFrom::Start(50_000)).unwrap();
        r.read_exact(&mut buf).unwrap();
        assert_eq!(buf, expect[50_000..50_010]);
        // A read across a block boundary, then the same bytes again: no new request for them.
        r.seek(SeekFrom::Start(BLOCK * 2 - 5)).unwrap();
        r.read_exact(&mut buf).unwrap();
        assert_eq!(buf, expect[BLOCK as usize * 2 - 5..BLOCK as usize * 2 + 5]);
        let before = cell.borrow().stats().requests;
        r.seek(SeekFrom::Start(50_002)).unwrap();
        r.read_exact(&mut buf[..4]).unwrap();
        assert_eq!(cell.borrow().stats().requests, before);
        r.seek(SeekFrom::End(-3)).unwrap();
        let mut tail = Vec::new();
        r.read_to_end(&mut tail).unwrap();
        assert_eq!(tail, expect[99_997..]);
        drop(r);
        let s = cell.into_inner().stats();
        assert_eq!(s.checked, vec!["hdf5"]);
        assert!(s.failure.is_none());
        for &(off, len) in &m.requests {
            assert_eq!(off % BLOCK, 0, "aligned: {off}");
            assert!(len <= MAX_RUN);
        }
    }

    #[test]
    fn seeded_bytes_cost_no_request() {
        let mut m = mem(100_000, Mode::Honest);
        let expect = m.bytes.clone();
        let cell = RefCell::new(Blocks::new(&mut m, 100_000, 1 << 20, 100));
        // From offset 100 (not aligned): only whole blocks after it are kept.
        cell.borrow_mut()
            .seed(100, &expect[100..3 * BLOCK as usize + 10]);
        let mut r = cell.reopen("polyglot").unwrap();
        let mut buf = [0u8; 16];
        r.seek(SeekFrom::Start(BLOCK + 3)).unwrap();
        r.read_exact(&mut buf).unwrap();
        assert_eq!(buf, expect[BLOCK as usize + 3..BLOCK as usize + 19]);
        r.seek(SeekFrom::Start(10)).unwrap();
        r.read_exact(&mut buf).unwrap();
        drop(r);
        assert_eq!(m.requests, vec![(0, BLOCK)]);
    }

    #[test]
    fn sequential_reads_fetch_a_growing_window() {
        let mut m = mem(4 << 20, Mode::Honest);
        let cell = RefCell::new(Blocks::new(&mut m, 4 << 20, 8 << 20, 1000));
        let mut r = cell.reopen("polyglot").unwrap();
        let mut all = Vec::new();
        io::copy(&mut io::BufReader::new(&mut r), &mut all).unwrap();
        drop(r);
        assert_eq!(all.len(), 4 << 20);
        // 4 MiB in 16 KiB reads would be 256 requests; the window makes it a handful.
        assert!(
            cell.borrow().stats().requests < 12,
            "{:?}",
            m.requests.len()
        );
    }

    #[test]
    fn the_request_cap_stops_reads_for_good() {
        let mut m = mem(1 << 20, Mode::Honest);
        let cell = RefCell::new(Blocks::new(&mut m, 1 << 20, 1 << 30, 3));
        let mut r = cell.reopen("hdf5").unwrap();
        let mut b = [0u8; 1];
        for i in 0..3 {
            r.seek(SeekFrom::Start(i * 4 * BLOCK)).unwrap();
            r.read_exact(&mut b).unwrap();
        }
        r.seek(SeekFrom::Start(20 * BLOCK)).unwrap();
        assert!(r.read_exact(&mut b).is_err());
        // A check that starts after the failure is refused at once.
        drop(r);
        assert!(cell.reopen("polyglot").is_err());
        let s = cell.into_inner().stats();
        assert!(s.failure.as_ref().is_some_and(|f| f.limit), "{s:?}");
        assert_eq!(s.not_checked, vec!["hdf5", "polyglot"]);
        assert_eq!(s.requests, 3);
        assert_eq!(m.requests.len(), 3);
    }

    #[test]
    fn the_byte_cap_stops_reads_before_fetching() {
        let mut m = mem(1 << 20, Mode::Honest);
        let cell = RefCell::new(Blocks::new(&mut m, 1 << 20, 2 * BLOCK, 100));
        let mut r = cell.reopen("tflite").unwrap();
        let mut big = vec![0u8; 3 * BLOCK as usize];
        assert!(r.read_exact(&mut big).is_err());
        drop(r);
        let s = cell.into_inner().stats();
        assert!(s.failure.unwrap().limit);
        assert!(s.fetched <= 2 * BLOCK);
    }

    #[test]
    fn a_server_ignoring_range_is_refused_and_bounded() {
        let mut m = mem(200_000, Mode::IgnoresRange);
        let cell = RefCell::new(Blocks::new(&mut m, 200_000, 1 << 30, 1000));
        let mut r = cell.reopen("hdf5").unwrap();
        let mut b = [0u8; 8];
        r.seek(SeekFrom::Start(100_000)).unwrap();
        assert!(r.read_exact(&mut b).is_err());
        assert!(r.read_exact(&mut b).is_err());
        drop(r);
        let s = cell.into_inner().stats();
        assert_eq!(s.requests, 1, "one request, then stopped");
        assert!(!s.failure.unwrap().limit);
    }

    #[test]
    fn short_bodies_and_failed_requests_stop_the_reader() {
        for mode in [Mode::Short, Mode::Broken] {
            let mut m = mem(200_000, mode);
            let cell = RefCell::new(Blocks::new(&mut m, 200_000, 1 << 30, 1000));
            let mut r = cell.reopen("tflite").unwrap();
            let mut b = [0u8; 8];
            assert!(r.read_exact(&mut b).is_err());
            drop(r);
            let s = cell.into_inner().stats();
            assert!(s.failure.is_some());
            assert_eq!(s.not_checked, vec!["tflite"]);
            assert!(m.requests.len() <= 1);
        }
    }

    #[test]
    fn an_inspector_on_a_stopped_source_reports_the_stop_not_a_malformed_file() {
        use crate::inspect::read::Positioned;
        use crate::inspect::{Ctx, ScanConfig, formats};
        use crate::model::rules::RuleId;
        let cfg = ScanConfig::default();
        for (name, check) in [("model.tflite", "tflite"), ("model.h5", "hdf5")] {
            let mut m = mem(1 << 20, Mode::Broken);
            let cell = RefCell::new(Blocks::new(&mut m, 1 << 20, 1 << 20, 10));
            let mut ctx = Ctx::at(&cfg, name, Positioned::None);
            let at = Positioned::Source(&cell);
            if check == "tflite" {
                formats::inspect_tflite(&mut ctx, at, 1 << 20).unwrap();
            } else {
                formats::inspect_hdf5(&mut ctx, at, 1 << 20).unwrap();
            }
            let rules: Vec<RuleId> = ctx.detections.iter().map(|d| d.rule).collect();
            assert_eq!(rules, vec![RuleId::UnreadableFile], "{:?}", ctx.detections);
            assert_eq!(ctx.detections[0].key, format!("positioned-reads:{check}"));
            assert_eq!(ctx.detections[0].evidence["check"], check);
            // A second check on the same stopped source: refused, reported once more under
            // its own name.
            formats::record_polyglots(&mut ctx, at, 1 << 20, None).unwrap();
            assert_eq!(ctx.detections.len(), 2, "{:?}", ctx.detections);
            drop(ctx);
            let s = cell.into_inner().stats();
            assert_eq!(s.not_checked, vec![check, "polyglot"]);
        }
    }

    #[test]
    fn reads_past_the_end_return_nothing_and_seeks_before_the_start_fail() {
        let mut m = mem(10, Mode::Honest);
        let cell = RefCell::new(Blocks::new(&mut m, 10, 1 << 20, 10));
        let mut r = cell.reopen("polyglot").unwrap();
        r.seek(SeekFrom::Start(1 << 40)).unwrap();
        assert_eq!(r.read(&mut [0u8; 4]).unwrap(), 0);
        assert!(r.seek(SeekFrom::Current(-(1 << 41))).is_err());
        drop(r);
        assert_eq!(m.requests.len(), 0);
    }
}
