//! A bounded, streaming reader for the protobuf wire format, shared by the ONNX and TensorFlow
//! inspectors. It reads a `&mut dyn BufRead` once, front to back, and never allocates for a
//! payload it skips (`fill_buf`/`consume`). Every length-delimited field it enters must fit
//! inside its parent (a stack of end offsets, bounded by a depth limit) and the outermost
//! message must fit inside the file size the caller states. Callers walk messages with an
//! explicit loop and their own frame stack, so hostile nesting cannot recurse the Rust stack.
//!
//! A source that can move forward without reading ([`Jump`]: range reads of a remote file in
//! header mode) is walked the same way, except that skipped payloads (tensor data) are jumped
//! over instead of read.
//!
//! Non-minimal varints of at most 10 bytes are accepted, as protobuf libraries do; longer ones
//! and ten-byte varints whose last byte overflows 64 bits are rejected. Groups (wire types 3
//! and 4) are deprecated and unused by the schemas we read, so they are rejected too.

use std::io::{self, BufRead};

use thiserror::Error;

/// A protobuf wire type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireType {
    /// 0: a varint.
    Varint,
    /// 1: eight little-endian bytes.
    Fixed64,
    /// 2: a varint length and that many bytes (string, bytes, message, packed repeated).
    Len,
    /// 5: four little-endian bytes.
    Fixed32,
}

/// Why the wire reader stopped.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The stream ended inside a field.
    #[error("truncated protobuf: stream ends at offset {offset}")]
    Truncated {
        /// Offset where more bytes were needed.
        offset: u64,
    },
    /// A varint ran past 10 bytes or overflowed 64 bits.
    #[error("invalid varint at offset {offset}: longer than 10 bytes or overflows 64 bits")]
    BadVarint {
        /// Offset of the varint's first byte.
        offset: u64,
    },
    /// A tag had field number 0 or above 2^29-1.
    #[error("invalid field number {field} at offset {offset}")]
    BadFieldNumber {
        /// The decoded field number.
        field: u64,
        /// Offset of the tag.
        offset: u64,
    },
    /// A wire type this reader does not accept (3, 4 groups; 6, 7 undefined).
    #[error("unsupported wire type {wire_type} at offset {offset}")]
    BadWireType {
        /// The raw wire type.
        wire_type: u8,
        /// Offset of the tag.
        offset: u64,
    },
    /// A length-delimited field claims more bytes than its parent message (or the file) has.
    #[error("length {len} at offset {offset} exceeds the {remaining} bytes left in its parent")]
    LengthExceedsParent {
        /// The claimed length.
        len: u64,
        /// Bytes left in the enclosing message.
        remaining: u64,
        /// Offset of the length varint.
        offset: u64,
    },
    /// Messages nested deeper than the configured limit.
    #[error("messages nested deeper than {limit} at offset {offset}")]
    TooDeep {
        /// The depth limit.
        limit: usize,
        /// Offset of the field that would go deeper.
        offset: u64,
    },
    /// The underlying reader failed.
    #[error("read error at offset {offset}: {message}")]
    Io {
        /// Offset of the failed read.
        offset: u64,
        /// The I/O error text.
        message: String,
    },
}

impl WireError {
    /// Stable kebab-case sub-code for reports.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Truncated { .. } => "truncated",
            Self::BadVarint { .. } => "bad-varint",
            Self::BadFieldNumber { .. } => "bad-field-number",
            Self::BadWireType { .. } => "bad-wire-type",
            Self::LengthExceedsParent { .. } => "length-exceeds-parent",
            Self::TooDeep { .. } => "too-deep",
            Self::Io { .. } => "io-error",
        }
    }

    /// The problem a reader records for a walk this error stopped: nesting past the
    /// configured depth is a resource limit, anything else a broken file. `what` names the
    /// structure (`onnx protobuf`), `parser` goes to the evidence.
    pub fn problem(&self, what: &str, parser: &'static str) -> super::problem::Problem {
        use super::problem::{Problem, ProblemKind};
        let kind = if matches!(self, Self::TooDeep { .. }) {
            ProblemKind::LimitExceeded
        } else {
            ProblemKind::Malformed
        };
        Problem::new(
            kind,
            self.code(),
            format!("malformed {what}: {self}"),
            Some(self.offset()),
        )
        .with("parser", parser)
    }

    /// The offset the error refers to.
    pub fn offset(&self) -> u64 {
        match self {
            Self::Truncated { offset }
            | Self::BadVarint { offset }
            | Self::BadFieldNumber { offset, .. }
            | Self::BadWireType { offset, .. }
            | Self::LengthExceedsParent { offset, .. }
            | Self::TooDeep { offset, .. }
            | Self::Io { offset, .. } => *offset,
        }
    }
}

/// A byte source that can also move forward without delivering the bytes it passes: range
/// reads of a remote file, where a skipped tensor payload is never fetched.
pub trait Jump: BufRead {
    /// Moves `n` bytes forward (within the stated size; the wire reader checks that).
    fn jump(&mut self, n: u64) -> io::Result<()>;
}

/// What the wire reader reads from: a plain stream, or one that can jump.
enum Source<'a> {
    Read(&'a mut dyn BufRead),
    Jump(&'a mut dyn Jump),
}

impl Source<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            Source::Read(r) => r.fill_buf(),
            Source::Jump(r) => r.fill_buf(),
        }
    }

    fn consume(&mut self, n: usize) {
        match self {
            Source::Read(r) => r.consume(n),
            Source::Jump(r) => r.consume(n),
        }
    }
}

/// Largest field number protobuf allows (2^29 - 1).
const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

/// Streaming reader over one protobuf message that fills the whole stream.
pub struct WireReader<'a> {
    inner: Source<'a>,
    pos: u64,
    /// Absolute end offsets of the messages entered so far; the outermost bound is `size`.
    ends: Vec<u64>,
    size: u64,
    max_depth: usize,
}

impl<'a> WireReader<'a> {
    /// A reader at offset 0 of a stream holding `size` bytes; at most `max_depth` nested
    /// messages may be entered.
    pub fn new(inner: &'a mut dyn BufRead, size: u64, max_depth: usize) -> Self {
        Self {
            inner: Source::Read(inner),
            pos: 0,
            ends: Vec::new(),
            size,
            max_depth,
        }
    }

    /// [`WireReader::new`] over a source that jumps over skipped payloads instead of reading
    /// them.
    pub fn jumping(inner: &'a mut dyn Jump, size: u64, max_depth: usize) -> Self {
        Self {
            inner: Source::Jump(inner),
            pos: 0,
            ends: Vec::new(),
            size,
            max_depth,
        }
    }

    /// Current offset from the start of the stream.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// How many messages are currently entered.
    pub fn depth(&self) -> usize {
        self.ends.len()
    }

    fn current_end(&self) -> u64 {
        self.ends.last().copied().unwrap_or(self.size)
    }

    fn io_error(&self, err: &io::Error) -> WireError {
        WireError::Io {
            offset: self.pos,
            message: err.to_string(),
        }
    }

    fn read_byte(&mut self) -> Result<u8, WireError> {
        if self.pos >= self.current_end() {
            return Err(WireError::Truncated { offset: self.pos });
        }
        let buf = match self.inner.fill_buf() {
            Ok(buf) => buf,
            Err(err) => return Err(self.io_error(&err)),
        };
        let Some(&byte) = buf.first() else {
            return Err(WireError::Truncated { offset: self.pos });
        };
        self.inner.consume(1);
        self.pos += 1;
        Ok(byte)
    }

    /// Reads a varint (at most 10 bytes, no overflow).
    pub fn read_varint(&mut self) -> Result<u64, WireError> {
        let start = self.pos;
        let mut value: u64 = 0;
        for index in 0..10u32 {
            let byte = self.read_byte()?;
            let low = u64::from(byte & 0x7f);
            // The tenth byte may only carry the top bit of a u64.
            if index == 9 && low > 1 {
                return Err(WireError::BadVarint { offset: start });
            }
            value |= low << (7 * index);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(WireError::BadVarint { offset: start })
    }

    /// Reads four little-endian bytes.
    pub fn read_fixed32(&mut self) -> Result<u32, WireError> {
        let mut bytes = [0u8; 4];
        for slot in &mut bytes {
            *slot = self.read_byte()?;
        }
        Ok(u32::from_le_bytes(bytes))
    }

    /// The next field's number and wire type, or `None` at the end of the current message
    /// (or of the stream at the top level).
    pub fn next_field(&mut self) -> Result<Option<(u32, WireType)>, WireError> {
        let end = self.current_end();
        if self.pos >= end {
            return Ok(None);
        }
        if self.ends.is_empty() {
            // At the top level a short stream is a clean end only where the caller's size
            // agrees; otherwise the next read reports truncation.
            match self.inner.fill_buf() {
                Ok([]) => {
                    return Err(WireError::Truncated { offset: self.pos });
                }
                Ok(_) => {}
                Err(err) => return Err(self.io_error(&err)),
            }
        }
        let offset = self.pos;
        let tag = self.read_varint()?;
        let field = tag >> 3;
        if field == 0 || field > MAX_FIELD_NUMBER {
            return Err(WireError::BadFieldNumber { field, offset });
        }
        let wire = match tag & 7 {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            5 => WireType::Fixed32,
            other => {
                return Err(WireError::BadWireType {
                    wire_type: other as u8,
                    offset,
                });
            }
        };
        let field =
            u32::try_from(field).map_err(|_| WireError::BadFieldNumber { field, offset })?;
        Ok(Some((field, wire)))
    }

    /// Reads the length of a length-delimited field and checks it fits in the parent.
    pub fn read_len(&mut self) -> Result<u64, WireError> {
        let offset = self.pos;
        let len = self.read_varint()?;
        let remaining = self.current_end().saturating_sub(self.pos);
        if len > remaining {
            return Err(WireError::LengthExceedsParent {
                len,
                remaining,
                offset,
            });
        }
        Ok(len)
    }

    /// Enters a nested message of `len` bytes (already checked by [`Self::read_len`]).
    pub fn enter(&mut self, len: u64) -> Result<(), WireError> {
        if self.ends.len() >= self.max_depth {
            return Err(WireError::TooDeep {
                limit: self.max_depth,
                offset: self.pos,
            });
        }
        let end = self
            .pos
            .checked_add(len)
            .filter(|end| *end <= self.current_end())
            .ok_or(WireError::LengthExceedsParent {
                len,
                remaining: self.current_end().saturating_sub(self.pos),
                offset: self.pos,
            })?;
        self.ends.push(end);
        Ok(())
    }

    /// Reads the length of the length-delimited field just announced by [`Self::next_field`] and
    /// enters it as a nested message (the walkers' step from a frame into its child).
    pub fn enter_message(&mut self) -> Result<(), WireError> {
        let len = self.read_len()?;
        self.enter(len)
    }

    /// Leaves the current nested message; any unread bytes of it are skipped.
    pub fn leave(&mut self) -> Result<(), WireError> {
        let end = self.current_end();
        let rest = end.saturating_sub(self.pos);
        self.skip_bytes(rest)?;
        self.ends.pop();
        Ok(())
    }

    /// Skips `n` bytes without allocating.
    pub fn skip_bytes(&mut self, mut n: u64) -> Result<(), WireError> {
        if let Source::Jump(j) = &mut self.inner {
            // Callers skip only what `read_len`/`enter` checked against the parent's end, so
            // the jump stays inside the stated size.
            if n > 0
                && let Err(err) = j.jump(n)
            {
                return Err(self.io_error(&err));
            }
            self.pos += n;
            return Ok(());
        }
        while n > 0 {
            let available = match self.inner.fill_buf() {
                Ok(buf) => buf.len(),
                Err(err) => return Err(self.io_error(&err)),
            };
            if available == 0 {
                return Err(WireError::Truncated { offset: self.pos });
            }
            let step = usize::try_from(n).map_or(available, |n| n.min(available));
            self.inner.consume(step);
            self.pos += step as u64;
            n -= step as u64;
        }
        Ok(())
    }

    /// Skips the value of a field whose tag was just read.
    pub fn skip(&mut self, wire: WireType) -> Result<(), WireError> {
        match wire {
            WireType::Varint => self.read_varint().map(drop),
            WireType::Fixed64 => self.skip_fixed(8),
            WireType::Fixed32 => self.skip_fixed(4),
            WireType::Len => {
                let len = self.read_len()?;
                self.skip_bytes(len)
            }
        }
    }

    fn skip_fixed(&mut self, n: u64) -> Result<(), WireError> {
        if self.current_end().saturating_sub(self.pos) < n {
            return Err(WireError::Truncated {
                offset: self.current_end(),
            });
        }
        self.skip_bytes(n)
    }

    /// Reads a length-delimited field as text: at most `max` bytes are kept (lossy UTF-8),
    /// the rest is skipped. Returns the text and whether it was cut.
    pub fn read_string(&mut self, max: usize) -> Result<(String, bool), WireError> {
        let len = self.read_len()?;
        let keep = usize::try_from(len).map_or(max, |len| len.min(max));
        let mut bytes = Vec::with_capacity(keep);
        while bytes.len() < keep {
            let buf = match self.inner.fill_buf() {
                Ok(buf) => buf,
                Err(err) => return Err(self.io_error(&err)),
            };
            if buf.is_empty() {
                return Err(WireError::Truncated { offset: self.pos });
            }
            let step = buf.len().min(keep - bytes.len());
            bytes.extend_from_slice(buf.get(..step).unwrap_or_default());
            self.inner.consume(step);
            self.pos += step as u64;
        }
        let rest = len - keep as u64;
        self.skip_bytes(rest)?;
        Ok((String::from_utf8_lossy(&bytes).into_owned(), rest > 0))
    }
}

/// Decodes one varint from `b` at `*at` and advances `at` past it; `None` when `b` ends inside it
/// or it runs past ten bytes. For callers that look at a few bytes already in memory (sniffing a
/// file's head, a message embedded in another format) instead of walking a stream with
/// [`WireReader`].
pub fn varint_at(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Test helpers that encode protobuf wire bytes, shared by the ONNX and TF tests.
#[cfg(test)]
pub mod encode {
    /// Appends a varint.
    pub fn varint(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    /// A varint field.
    pub fn field_varint(field: u32, v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, u64::from(field) << 3);
        varint(&mut out, v);
        out
    }

    /// A length-delimited field.
    pub fn field_bytes(field: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, (u64::from(field) << 3) | 2);
        varint(&mut out, payload.len() as u64);
        out.extend_from_slice(payload);
        out
    }

    /// A length-delimited string field.
    pub fn field_str(field: u32, s: &str) -> Vec<u8> {
        field_bytes(field, s.as_bytes())
    }

    /// Concatenates parts.
    pub fn cat(parts: &[Vec<u8>]) -> Vec<u8> {
        parts.concat()
    }
}

#[cfg(test)]
mod tests {
    use super::encode::*;
    use super::*;

    fn reader(bytes: &[u8]) -> (std::io::Cursor<Vec<u8>>, u64) {
        (std::io::Cursor::new(bytes.to_vec()), bytes.len() as u64)
    }

    #[test]
    fn reads_fields_and_nested_messages() {
        let inner = cat(&[field_str(1, "abc"), field_varint(2, 300)]);
        let bytes = cat(&[
            field_varint(1, 7),
            field_bytes(3, &inner),
            field_varint(4, 1),
        ]);
        let (mut cur, size) = reader(&bytes);
        let mut r = WireReader::new(&mut cur, size, 4);
        assert_eq!(r.next_field().unwrap(), Some((1, WireType::Varint)));
        assert_eq!(r.read_varint().unwrap(), 7);
        assert_eq!(r.next_field().unwrap(), Some((3, WireType::Len)));
        let len = r.read_len().unwrap();
        r.enter(len).unwrap();
        assert_eq!(r.next_field().unwrap(), Some((1, WireType::Len)));
        assert_eq!(r.read_string(2).unwrap(), ("ab".to_owned(), true));
        assert_eq!(r.next_field().unwrap(), Some((2, WireType::Varint)));
        assert_eq!(r.read_varint().unwrap(), 300);
        assert_eq!(r.next_field().unwrap(), None);
        r.leave().unwrap();
        assert_eq!(r.next_field().unwrap(), Some((4, WireType::Varint)));
        r.skip(WireType::Varint).unwrap();
        assert_eq!(r.next_field().unwrap(), None);
    }

    #[test]
    fn rejects_overlong_varint() {
        let bytes = [
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        let (mut cur, size) = reader(&bytes);
        let mut r = WireReader::new(&mut cur, size, 4);
        r.next_field().unwrap();
        assert!(matches!(
            r.read_varint(),
            Err(WireError::BadVarint { offset: 1 })
        ));
    }

    #[test]
    fn rejects_overflowing_varint() {
        let bytes = [
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02,
        ];
        let (mut cur, size) = reader(&bytes);
        let mut r = WireReader::new(&mut cur, size, 4);
        r.next_field().unwrap();
        assert!(matches!(r.read_varint(), Err(WireError::BadVarint { .. })));
    }

    #[test]
    fn accepts_max_u64_varint() {
        let bytes = [
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        let (mut cur, size) = reader(&bytes);
        let mut r = WireReader::new(&mut cur, size, 4);
        r.next_field().unwrap();
        assert_eq!(r.read_varint().unwrap(), u64::MAX);
    }

    #[test]
    fn rejects_length_exceeding_parent() {
        // Outer message of 3 bytes claims an inner field of 10 bytes.
        let bytes = [0x1a, 0x03, 0x0a, 0x0a, 0x00];
        let (mut cur, size) = reader(&bytes);
        let mut r = WireReader::new(&mut cur, size, 4);
        r.next_field().unwrap();
        let len = r.read_len().unwrap();
        r.enter(len).unwrap();
        r.next_field().unwrap();
        assert!(matches!(
            r.read_len(),
            Err(WireError::LengthExceedsParent {
                len: 10,
                remaining: 1,
                ..
            })
        ));
    }

    #[test]
    fn rejects_length_beyond_file_size() {
        let bytes = [0x0a, 0x7f, 0x00];
        let (mut cur, size) = reader(&bytes);
        let mut r = WireReader::new(&mut cur, size, 4);
        r.next_field().unwrap();
        assert!(matches!(
            r.read_len(),
            Err(WireError::LengthExceedsParent { .. })
        ));
    }

    #[test]
    fn rejects_deep_nesting() {
        let bytes = [0x0a, 0x02, 0x0a, 0x00];
        let (mut cur, size) = reader(&bytes);
        let mut r = WireReader::new(&mut cur, size, 1);
        r.next_field().unwrap();
        let len = r.read_len().unwrap();
        r.enter(len).unwrap();
        r.next_field().unwrap();
        let len = r.read_len().unwrap();
        assert!(matches!(
            r.enter(len),
            Err(WireError::TooDeep { limit: 1, .. })
        ));
    }

    #[test]
    fn rejects_group_wire_type() {
        let bytes = [0x0b];
        let (mut cur, size) = reader(&bytes);
        let mut r = WireReader::new(&mut cur, size, 4);
        assert!(matches!(
            r.next_field(),
            Err(WireError::BadWireType { wire_type: 3, .. })
        ));
    }

    #[test]
    fn rejects_field_number_zero() {
        let bytes = [0x00, 0x00];
        let (mut cur, size) = reader(&bytes);
        let mut r = WireReader::new(&mut cur, size, 4);
        assert!(matches!(
            r.next_field(),
            Err(WireError::BadFieldNumber { field: 0, .. })
        ));
    }

    #[test]
    fn reports_truncation_when_stream_shorter_than_size() {
        let bytes = [0x08];
        let mut cur = std::io::Cursor::new(bytes.to_vec());
        let mut r = WireReader::new(&mut cur, 5, 4);
        r.next_field().unwrap();
        assert!(matches!(
            r.read_varint(),
            Err(WireError::Truncated { offset: 1 })
        ));
        let mut cur = std::io::Cursor::new(Vec::new());
        let mut r = WireReader::new(&mut cur, 5, 4);
        assert!(matches!(
            r.next_field(),
            Err(WireError::Truncated { offset: 0 })
        ));
    }

    #[test]
    fn skips_fixed_fields() {
        let bytes = [0x09, 1, 2, 3, 4, 5, 6, 7, 8, 0x15, 1, 2, 3, 4];
        let (mut cur, size) = reader(&bytes);
        let mut r = WireReader::new(&mut cur, size, 4);
        let (_, w) = r.next_field().unwrap().unwrap();
        r.skip(w).unwrap();
        let (_, w) = r.next_field().unwrap().unwrap();
        assert_eq!(w, WireType::Fixed32);
        assert_eq!(r.read_fixed32().unwrap(), 0x0403_0201);
        assert_eq!(r.next_field().unwrap(), None);
    }

    /// A cursor that records what it was asked to jump over.
    struct Jumper(std::io::Cursor<Vec<u8>>, Vec<u64>);

    impl io::Read for Jumper {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.0.read(out)
        }
    }

    impl BufRead for Jumper {
        fn fill_buf(&mut self) -> io::Result<&[u8]> {
            // One byte at a time, so a payload could only be passed by reading or by a jump.
            let pos = usize::try_from(self.0.position()).unwrap();
            Ok(self
                .0
                .get_ref()
                .get(pos..(pos + 1).min(self.0.get_ref().len()))
                .unwrap_or_default())
        }

        fn consume(&mut self, n: usize) {
            self.0.consume(n);
        }
    }

    impl Jump for Jumper {
        fn jump(&mut self, n: u64) -> io::Result<()> {
            self.1.push(n);
            self.0.set_position(self.0.position() + n);
            Ok(())
        }
    }

    #[test]
    fn jumping_reader_jumps_over_skipped_payloads() {
        let payload = vec![7u8; 300];
        let bytes = cat(&[field_bytes(9, &payload), field_varint(1, 5)]);
        let size = bytes.len() as u64;
        let mut src = Jumper(std::io::Cursor::new(bytes), Vec::new());
        let mut r = WireReader::jumping(&mut src, size, 4);
        let (field, w) = r.next_field().unwrap().unwrap();
        assert_eq!((field, w), (9, WireType::Len));
        r.skip(w).unwrap();
        assert_eq!(r.position(), 3 + 300);
        assert_eq!(r.next_field().unwrap(), Some((1, WireType::Varint)));
        assert_eq!(r.read_varint().unwrap(), 5);
        assert_eq!(r.next_field().unwrap(), None);
        assert_eq!(src.1, vec![300]);
    }
}
