//! The archive byte source: one sequential reader that counts the absolute position, peeks
//! across the underlying reader's buffer boundaries and skips to the next zip signature, plus the
//! little-endian field reader used on fixed headers and extra fields.

use std::cell::Cell;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

use super::format::{KNOWN_SIGNATURES, ZIP64_EXTRA_ID};

/// Makes a `?Sized` generic reader usable as `dyn BufRead`.
pub(super) struct DynRead<'a, R: BufRead + ?Sized>(pub(super) &'a mut R);

impl<R: BufRead + ?Sized> Read for DynRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: BufRead + ?Sized> BufRead for DynRead<'_, R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.0.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.0.consume(amt)
    }
}

/// The archive byte source: counts the absolute position and can peek a few bytes across the
/// underlying reader's buffer boundaries (signatures, data descriptors).
pub(super) struct Src<'r> {
    inner: &'r mut dyn BufRead,
    look: Vec<u8>,
    look_pos: usize,
    pub(super) pos: Rc<Cell<u64>>,
    /// For a stream stitched from ranges of a file (header mode): `(stream position, file
    /// offset)` where each range starts, sorted. Empty: stream position is file offset.
    map: Vec<(u64, u64)>,
}

impl<'r> Src<'r> {
    pub(super) fn new(inner: &'r mut dyn BufRead) -> Self {
        Src {
            inner,
            look: Vec::new(),
            look_pos: 0,
            pos: Rc::new(Cell::new(0)),
            map: Vec::new(),
        }
    }

    /// A source over ranges of a file laid end to end; `map` says where each range starts in
    /// the stream and in the file, so every offset the walker records is a file offset.
    pub(super) fn mapped(inner: &'r mut dyn BufRead, map: Vec<(u64, u64)>) -> Self {
        Src {
            map,
            ..Src::new(inner)
        }
    }

    /// The file offset of the next byte.
    pub(super) fn position(&self) -> u64 {
        let at = self.pos.get();
        match self.map.iter().rev().find(|(stream, _)| *stream <= at) {
            Some((stream, file)) => file.saturating_add(at - stream),
            None => at,
        }
    }

    pub(super) fn look_left(&self) -> usize {
        self.look.len().saturating_sub(self.look_pos)
    }

    /// Up to `n` bytes from the current position without consuming them (fewer only at EOF).
    pub(super) fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.look_left() == 0 {
            self.look.clear();
            self.look_pos = 0;
            if self.inner.fill_buf()?.len() >= n {
                let buf = self.inner.fill_buf()?;
                return Ok(buf.get(..n).unwrap_or(buf));
            }
        }
        while self.look_left() < n {
            let want = n - self.look_left();
            let buf = self.inner.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            let take = want.min(buf.len());
            self.look.extend_from_slice(buf.get(..take).unwrap_or(buf));
            self.inner.consume(take);
        }
        let end = self.look.len().min(self.look_pos.saturating_add(n));
        Ok(self.look.get(self.look_pos..end).unwrap_or(&[]))
    }

    /// Reads exactly `N` bytes, or `None` at EOF before that.
    pub(super) fn read_array<const N: usize>(&mut self) -> io::Result<Option<[u8; N]>> {
        let mut out = [0u8; N];
        let mut filled = 0;
        while filled < N {
            let n = self.read(out.get_mut(filled..).unwrap_or(&mut []))?;
            if n == 0 {
                return Ok(None);
            }
            filled += n;
        }
        Ok(Some(out))
    }

    /// Reads exactly `n` bytes (the caller bounded `n`), or `None` at EOF before that.
    pub(super) fn read_vec(&mut self, n: usize) -> io::Result<Option<Vec<u8>>> {
        let mut out = Vec::with_capacity(n);
        let got = self.by_ref().take(n as u64).read_to_end(&mut out)?;
        Ok((got == n).then_some(out))
    }

    /// Skips up to `n` bytes; returns how many were skipped (fewer only at EOF).
    pub(super) fn skip(&mut self, n: u64) -> io::Result<u64> {
        let mut left = n;
        while left > 0 {
            let avail = self.fill_buf()?.len();
            if avail == 0 {
                break;
            }
            let k = usize::try_from(left).unwrap_or(usize::MAX).min(avail);
            self.consume(k);
            left -= k as u64;
        }
        Ok(n - left)
    }

    /// Skips to the next known zip signature (or EOF); returns the bytes skipped.
    pub(super) fn skip_to_signature(&mut self) -> io::Result<u64> {
        let mut skipped = 0u64;
        loop {
            let buf = self.fill_buf()?;
            if buf.is_empty() {
                return Ok(skipped);
            }
            let Some(i) = buf.iter().position(|&b| b == b'P') else {
                let n = buf.len();
                self.consume(n);
                skipped += n as u64;
                continue;
            };
            self.consume(i);
            skipped += i as u64;
            let head = self.peek(4)?;
            if KNOWN_SIGNATURES.iter().any(|s| head == s) {
                return Ok(skipped);
            }
            self.consume(1);
            skipped += 1;
        }
    }
}

impl Read for Src<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        crate::inspect::read::read_via_fill_buf(self, buf)
    }
}

impl BufRead for Src<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.look_left() > 0 {
            return Ok(self.look.get(self.look_pos..).unwrap_or(&[]));
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        let left = self.look_left();
        let amt = if left > 0 {
            let k = amt.min(left);
            self.look_pos += k;
            k
        } else {
            self.inner.consume(amt);
            amt
        };
        self.pos.set(self.pos.get().saturating_add(amt as u64));
    }
}

/// Little-endian field reader over a slice (extra fields, fixed headers).
pub(super) struct Le<'a>(pub(super) &'a [u8]);

impl Le<'_> {
    pub(super) fn u16(&mut self) -> Option<u16> {
        let (head, rest) = self.0.split_first_chunk::<2>()?;
        self.0 = rest;
        Some(u16::from_le_bytes(*head))
    }
    pub(super) fn u32(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_le_bytes(*head))
    }
    pub(super) fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*head))
    }
}

/// Body of the zip64 extended-information extra field, if present.
pub(super) fn zip64_field(extra: &[u8]) -> Option<&[u8]> {
    let mut rest = extra;
    while rest.len() >= 4 {
        let mut le = Le(rest);
        let id = le.u16()?;
        let size = usize::from(le.u16()?);
        let body = le.0.get(..size)?;
        if id == ZIP64_EXTRA_ID {
            return Some(body);
        }
        rest = le.0.get(size..)?;
    }
    None
}
