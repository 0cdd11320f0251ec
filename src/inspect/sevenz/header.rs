//! The 7z header property tree (`7zFormat.txt` in the 7-Zip sources): streams (pack sizes,
//! folders with their coders and bind pairs, sub-streams) and files (names, empty streams and
//! files, attributes). Every count read from the file is compared with the bytes left in the
//! header and with the member limit before anything is allocated for it; each property carries
//! its own size, so what is not needed (times, comments, padding) is skipped within it.

use super::limits::Limits;
use crate::inspect::problem::Problem;

/// Property ids (`7zFormat.txt`, "Property IDs").
pub(super) mod id {
    pub const END: u8 = 0x00;
    pub const HEADER: u8 = 0x01;
    pub const ARCHIVE_PROPERTIES: u8 = 0x02;
    pub const ADDITIONAL_STREAMS: u8 = 0x03;
    pub const MAIN_STREAMS: u8 = 0x04;
    pub const FILES: u8 = 0x05;
    pub const PACK_INFO: u8 = 0x06;
    pub const UNPACK_INFO: u8 = 0x07;
    pub const SUBSTREAMS: u8 = 0x08;
    pub const SIZE: u8 = 0x09;
    pub const CRC: u8 = 0x0a;
    pub const FOLDER: u8 = 0x0b;
    pub const CODERS_UNPACK_SIZE: u8 = 0x0c;
    pub const NUM_UNPACK_STREAM: u8 = 0x0d;
    pub const EMPTY_STREAM: u8 = 0x0e;
    pub const EMPTY_FILE: u8 = 0x0f;
    pub const ANTI: u8 = 0x10;
    pub const NAME: u8 = 0x11;
    pub const ATTRIBUTES: u8 = 0x15;
    pub const ENCODED_HEADER: u8 = 0x17;
}

/// Most coders in one folder (7-Zip itself writes at most 4: BCJ2 and its three LZMA streams).
const MAX_CODERS: usize = 32;
/// Most in or out streams of one coder.
const MAX_CODER_STREAMS: u64 = 32;
/// Longest codec id (the flags byte's four bits allow 15).
const MAX_PROPS: u64 = 1 << 16;
/// Longest member name kept, in UTF-16 units (the rest is cut and reported).
pub(super) const MAX_NAME_UNITS: usize = 4096;

/// One coder of a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Coder {
    pub id: Vec<u8>,
    pub num_in: u64,
    pub num_out: u64,
    pub props: Vec<u8>,
}

/// A folder: a chain of coders that turns pack streams into one unpacked stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Folder {
    pub coders: Vec<Coder>,
    pub bind_pairs: Vec<(u64, u64)>,
    /// Pack streams the folder reads (their count; indices are implicit in the order).
    pub num_packed: usize,
    /// One size per coder out stream.
    pub unpack_sizes: Vec<u64>,
    pub crc: Option<u32>,
}

impl Folder {
    /// The size of the folder's final output: the out stream no bind pair consumes.
    pub fn unpack_size(&self) -> u64 {
        (0..self.unpack_sizes.len() as u64)
            .find(|o| !self.bind_pairs.iter().any(|&(_, out)| out == *o))
            .and_then(|o| self.unpack_sizes.get(usize::try_from(o).ok()?))
            .copied()
            .unwrap_or(0)
    }
}

/// One file's stream inside a folder's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Sub {
    pub size: u64,
    pub crc: Option<u32>,
}

/// PackInfo, UnpackInfo and SubStreamsInfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Streams {
    pub pack_pos: u64,
    pub pack_sizes: Vec<u64>,
    pub folders: Vec<Folder>,
    /// The sub-streams of each folder (one per folder when SubStreamsInfo is absent).
    pub subs: Vec<Vec<Sub>>,
}

/// One entry of FilesInfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Entry {
    /// UTF-8 form of the UTF-16LE name (lone surrogates as U+FFFD).
    pub name: String,
    pub name_cut: bool,
    pub has_stream: bool,
    pub is_dir: bool,
    pub is_anti: bool,
    pub attributes: Option<u32>,
}

/// The decoded header.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Header {
    pub streams: Option<Streams>,
    pub entries: Vec<Entry>,
}

/// What the next-header bytes hold.
#[derive(Debug)]
pub(super) enum Next {
    Header(Header),
    /// `kEncodedHeader`: the real header is the output of these streams' first folder.
    Encoded(Streams),
}

/// A bounded reader over header bytes.
pub(super) struct Buf<'a> {
    bytes: &'a [u8],
    pos: usize,
}

fn truncated(what: &str) -> Problem {
    Problem::malformed("bad-header", format!("7z header ends inside {what}"))
}

fn bad(message: String) -> Problem {
    Problem::malformed("bad-header", message)
}

impl<'a> Buf<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Buf { bytes, pos: 0 }
    }

    fn left(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    fn byte(&mut self, what: &str) -> Result<u8, Problem> {
        let b = *self.bytes.get(self.pos).ok_or_else(|| truncated(what))?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], Problem> {
        let n = usize::try_from(n).map_err(|_| truncated(what))?;
        let end = self.pos.checked_add(n).ok_or_else(|| truncated(what))?;
        let out = self
            .bytes
            .get(self.pos..end)
            .ok_or_else(|| truncated(what))?;
        self.pos = end;
        Ok(out)
    }

    fn u32(&mut self, what: &str) -> Result<u32, Problem> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A 7z UINT64: the first byte's leading one bits say how many bytes follow.
    fn number(&mut self, what: &str) -> Result<u64, Problem> {
        let first = self.byte(what)?;
        let mut value = 0u64;
        let mut mask = 0x80u8;
        for i in 0..8 {
            if first & mask == 0 {
                let high = u64::from(first & mask.wrapping_sub(1));
                return Ok(value | (high << (8 * i)));
            }
            value |= u64::from(self.byte(what)?) << (8 * i);
            mask >>= 1;
        }
        Ok(value)
    }

    /// A count of items that each take at least `min_bytes` more header bytes: never more
    /// than the header can hold, so a hostile count cannot size an allocation.
    fn count(&mut self, what: &str, min_bytes: usize) -> Result<usize, Problem> {
        let n = self.number(what)?;
        let room = self.left() / min_bytes.max(1);
        match usize::try_from(n) {
            Ok(n) if n <= room => Ok(n),
            _ => Err(Problem::malformed(
                "bad-count",
                format!(
                    "7z {what} count {n} is more than the {} header bytes left can hold",
                    self.left()
                ),
            )),
        }
    }

    fn expect(&mut self, want: u8, what: &str) -> Result<(), Problem> {
        let got = self.byte(what)?;
        if got == want {
            Ok(())
        } else {
            Err(bad(format!(
                "7z {what}: expected property {want:#04x}, found {got:#04x}"
            )))
        }
    }

    /// `n` bits, most significant first.
    fn bits(&mut self, n: usize, what: &str) -> Result<Vec<bool>, Problem> {
        let bytes = self.take(n.div_ceil(8) as u64, what)?;
        Ok((0..n)
            .map(|i| bytes.get(i / 8).is_some_and(|b| b & (0x80 >> (i % 8)) != 0))
            .collect())
    }

    /// Digests: an all-defined byte or a bit field, then a CRC for each defined item.
    fn digests(&mut self, n: usize, what: &str) -> Result<Vec<Option<u32>>, Problem> {
        let all = self.byte(what)? != 0;
        let defined = if all {
            vec![true; n]
        } else {
            self.bits(n, what)?
        };
        defined
            .into_iter()
            .map(|d| d.then(|| self.u32(what)).transpose())
            .collect()
    }
}

/// Parses the next-header bytes: a plain header or an encoded one.
pub(super) fn parse(bytes: &[u8], limits: &Limits) -> Result<Next, Problem> {
    let mut b = Buf::new(bytes);
    match b.byte("the next header")? {
        id::HEADER => parse_header(&mut b, limits).map(Next::Header),
        id::ENCODED_HEADER => parse_streams(&mut b, limits).map(Next::Encoded),
        other => Err(bad(format!(
            "7z next header starts with property {other:#04x}, not a header"
        ))),
    }
}

fn parse_header(b: &mut Buf<'_>, limits: &Limits) -> Result<Header, Problem> {
    let mut header = Header::default();
    let mut t = b.byte("the header")?;
    if t == id::ARCHIVE_PROPERTIES {
        loop {
            let p = b.byte("archive properties")?;
            if p == id::END {
                break;
            }
            let size = b.number("archive properties")?;
            b.take(size, "archive properties")?;
        }
        t = b.byte("the header")?;
    }
    if t == id::ADDITIONAL_STREAMS {
        // Streams for external data; nothing this reader uses refers to them.
        parse_streams(b, limits)?;
        t = b.byte("the header")?;
    }
    if t == id::MAIN_STREAMS {
        header.streams = Some(parse_streams(b, limits)?);
        t = b.byte("the header")?;
    }
    if t == id::FILES {
        header.entries = parse_files(b, limits)?;
        t = b.byte("the header")?;
    }
    if t != id::END {
        return Err(bad(format!("7z header: unexpected property {t:#04x}")));
    }
    Ok(header)
}

/// StreamsInfo: `[PackInfo] [UnpackInfo] [SubStreamsInfo] kEnd`.
pub(super) fn parse_streams(b: &mut Buf<'_>, limits: &Limits) -> Result<Streams, Problem> {
    let mut s = Streams::default();
    let mut t = b.byte("streams info")?;
    if t == id::PACK_INFO {
        s.pack_pos = b.number("pack position")?;
        let n = b.count("pack stream", 1)?;
        loop {
            match b.byte("pack info")? {
                id::END => break,
                id::SIZE => {
                    s.pack_sizes = (0..n)
                        .map(|_| b.number("pack sizes"))
                        .collect::<Result<_, _>>()?;
                }
                id::CRC => {
                    b.digests(n, "pack digests")?;
                }
                other => {
                    return Err(bad(format!(
                        "7z pack info: unexpected property {other:#04x}"
                    )));
                }
            }
        }
        if s.pack_sizes.len() != n {
            return Err(bad(format!("7z pack info lists {n} streams but no sizes")));
        }
        t = b.byte("streams info")?;
    }
    if t == id::UNPACK_INFO {
        s.folders = parse_folders(b)?;
        t = b.byte("streams info")?;
    }
    s.subs = s
        .folders
        .iter()
        .map(|f| {
            vec![Sub {
                size: f.unpack_size(),
                crc: f.crc,
            }]
        })
        .collect();
    if t == id::SUBSTREAMS {
        s.subs = parse_substreams(b, &s.folders, limits)?;
        t = b.byte("streams info")?;
    }
    if t != id::END {
        return Err(bad(format!(
            "7z streams info: unexpected property {t:#04x}"
        )));
    }
    let packed: usize = s.folders.iter().map(|f| f.num_packed).sum();
    if packed > s.pack_sizes.len() {
        return Err(bad(format!(
            "7z folders read {packed} pack streams, the archive has {}",
            s.pack_sizes.len()
        )));
    }
    Ok(s)
}

fn parse_folders(b: &mut Buf<'_>) -> Result<Vec<Folder>, Problem> {
    b.expect(id::FOLDER, "unpack info")?;
    // A folder takes at least three bytes: coder count, coder flags, one id byte.
    let n = b.count("folder", 3)?;
    if b.byte("unpack info")? != 0 {
        return Err(Problem::note(
            "unsupported-method",
            "7z folders stored in an external stream are not supported",
        ));
    }
    let mut folders = Vec::with_capacity(n);
    for _ in 0..n {
        folders.push(parse_folder(b)?);
    }
    b.expect(id::CODERS_UNPACK_SIZE, "unpack info")?;
    for f in &mut folders {
        let outs: u64 = f.coders.iter().map(|c| c.num_out).sum();
        f.unpack_sizes = (0..outs)
            .map(|_| b.number("unpack sizes"))
            .collect::<Result<_, _>>()?;
    }
    loop {
        match b.byte("unpack info")? {
            id::END => break,
            id::CRC => {
                let crcs = b.digests(n, "folder digests")?;
                for (f, c) in folders.iter_mut().zip(crcs) {
                    f.crc = c;
                }
            }
            other => {
                return Err(bad(format!(
                    "7z unpack info: unexpected property {other:#04x}"
                )));
            }
        }
    }
    Ok(folders)
}

fn parse_folder(b: &mut Buf<'_>) -> Result<Folder, Problem> {
    let n = b.count("coder", 2)?;
    if n == 0 || n > MAX_CODERS {
        return Err(bad(format!(
            "7z folder with {n} coders (1 to {MAX_CODERS} allowed)"
        )));
    }
    let mut f = Folder::default();
    let (mut ins, mut outs) = (0u64, 0u64);
    for _ in 0..n {
        let flags = b.byte("coder")?;
        if flags & 0x80 != 0 {
            return Err(bad(
                "7z coder with alternative methods (reserved flag)".into()
            ));
        }
        let id = b.take(u64::from(flags & 0x0f), "coder id")?.to_vec();
        let (num_in, num_out) = if flags & 0x10 != 0 {
            (b.number("coder streams")?, b.number("coder streams")?)
        } else {
            (1, 1)
        };
        if num_in > MAX_CODER_STREAMS || num_out > MAX_CODER_STREAMS || num_out == 0 {
            return Err(bad(format!(
                "7z coder with {num_in} in and {num_out} out streams"
            )));
        }
        let props = if flags & 0x20 != 0 {
            let size = b.number("coder properties")?;
            if size > MAX_PROPS {
                return Err(bad(format!("7z coder properties of {size} bytes")));
            }
            b.take(size, "coder properties")?.to_vec()
        } else {
            Vec::new()
        };
        ins += num_in;
        outs += num_out;
        f.coders.push(Coder {
            id,
            num_in,
            num_out,
            props,
        });
    }
    // Bounded by the coder stream caps above: at most 32 * 32 pairs.
    let pairs = outs - 1;
    for _ in 0..pairs {
        let i = b.number("bind pair")?;
        let o = b.number("bind pair")?;
        if i >= ins || o >= outs {
            return Err(bad(format!(
                "7z bind pair ({i}, {o}) names a stream the folder lacks"
            )));
        }
        f.bind_pairs.push((i, o));
    }
    let packed = ins.checked_sub(pairs).filter(|&p| p >= 1).ok_or_else(|| {
        bad(format!(
            "7z folder with {ins} in streams and {pairs} bind pairs"
        ))
    })?;
    if packed > 1 {
        for _ in 0..packed {
            let i = b.number("packed stream index")?;
            if i >= ins {
                return Err(bad(format!("7z packed stream index {i} out of range")));
            }
        }
    }
    f.num_packed = usize::try_from(packed).unwrap_or(usize::MAX);
    Ok(f)
}

fn parse_substreams(
    b: &mut Buf<'_>,
    folders: &[Folder],
    limits: &Limits,
) -> Result<Vec<Vec<Sub>>, Problem> {
    let mut counts = vec![1usize; folders.len()];
    let mut t = b.byte("substreams info")?;
    if t == id::NUM_UNPACK_STREAM {
        let mut total = 0usize;
        for c in &mut counts {
            let n = b.number("substream count")?;
            total = usize::try_from(n)
                .ok()
                .and_then(|n| total.checked_add(n))
                .filter(|&t| t <= limits.max_members)
                .ok_or_else(|| {
                    Problem::limit(
                        "too-many-members",
                        format!(
                            "7z archive declares more than {} streams",
                            limits.max_members
                        ),
                    )
                })?;
            *c = usize::try_from(n).unwrap_or(usize::MAX);
        }
        // Each stream past a folder's first needs a size byte, each needs a CRC or a bit:
        // a count the header cannot back is refused before the vectors below are sized.
        if total > b.left().saturating_mul(8).saturating_add(folders.len()) {
            return Err(Problem::malformed(
                "bad-count",
                format!("7z substream count {total} is more than the header can hold"),
            ));
        }
        t = b.byte("substreams info")?;
    }
    let mut subs: Vec<Vec<Sub>> = Vec::with_capacity(folders.len());
    let has_sizes = t == id::SIZE;
    for (f, &n) in folders.iter().zip(&counts) {
        let mut list = Vec::with_capacity(n.min(b.left() + 1));
        if n == 0 {
            subs.push(list);
            continue;
        }
        let total = f.unpack_size();
        let mut sum = 0u64;
        if n > 1 && !has_sizes {
            return Err(bad(format!("7z folder with {n} substreams but no sizes")));
        }
        for _ in 1..n {
            let size = b.number("substream sizes")?;
            sum = sum
                .checked_add(size)
                .filter(|&s| s <= total)
                .ok_or_else(|| {
                    bad(format!(
                        "7z substream sizes add up past the folder's {total} bytes"
                    ))
                })?;
            list.push(Sub { size, crc: None });
        }
        list.push(Sub {
            size: total - sum,
            crc: None,
        });
        subs.push(list);
    }
    if has_sizes {
        t = b.byte("substreams info")?;
    }
    // Streams whose CRC the folder does not already give.
    let unknown: usize = folders
        .iter()
        .zip(&counts)
        .map(|(f, &n)| if n == 1 && f.crc.is_some() { 0 } else { n })
        .sum();
    let mut crcs = Vec::new();
    if t == id::CRC {
        crcs = b.digests(unknown, "substream digests")?;
        t = b.byte("substreams info")?;
    }
    let mut crcs = crcs.into_iter();
    for (f, list) in folders.iter().zip(&mut subs) {
        if list.len() == 1 && f.crc.is_some() {
            if let Some(s) = list.first_mut() {
                s.crc = f.crc;
            }
            continue;
        }
        for s in list.iter_mut() {
            s.crc = crcs.next().flatten();
        }
    }
    if t != id::END {
        return Err(bad(format!(
            "7z substreams info: unexpected property {t:#04x}"
        )));
    }
    Ok(subs)
}

fn parse_files(b: &mut Buf<'_>, limits: &Limits) -> Result<Vec<Entry>, Problem> {
    let n = b.number("file count")?;
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n <= limits.max_members)
        .ok_or_else(|| {
            Problem::limit(
                "too-many-members",
                format!(
                    "7z archive declares {n} files, limit {}",
                    limits.max_members
                ),
            )
        })?;
    // Even an entry without a name property costs a bit of the empty-stream field or two name
    // bytes in any archive that says anything about it.
    if n > b.left().saturating_mul(8) {
        return Err(Problem::malformed(
            "bad-count",
            format!(
                "7z file count {n} is more than the {} header bytes left can describe",
                b.left()
            ),
        ));
    }
    let mut empty_stream = vec![false; n];
    let mut empties = 0usize;
    let mut empty_file: Vec<bool> = Vec::new();
    let mut anti: Vec<bool> = Vec::new();
    let mut names: Vec<(String, bool)> = Vec::new();
    let mut attributes: Vec<Option<u32>> = Vec::new();
    loop {
        let t = b.byte("files info")?;
        if t == id::END {
            break;
        }
        let size = b.number("files info")?;
        let mut p = Buf::new(b.take(size, "a file property")?);
        match t {
            id::EMPTY_STREAM => {
                empty_stream = p.bits(n, "empty stream bits")?;
                empties = empty_stream.iter().filter(|&&e| e).count();
            }
            id::EMPTY_FILE => empty_file = p.bits(empties, "empty file bits")?,
            id::ANTI => anti = p.bits(empties, "anti bits")?,
            id::NAME => names = parse_names(&mut p, n)?,
            id::ATTRIBUTES => {
                let all = p.byte("attributes")? != 0;
                let defined = if all {
                    vec![true; n]
                } else {
                    p.bits(n, "attributes")?
                };
                if p.byte("attributes")? != 0 {
                    return Err(Problem::note(
                        "unsupported-method",
                        "7z attributes stored in an external stream are not supported",
                    ));
                }
                attributes = defined
                    .into_iter()
                    .map(|d| d.then(|| p.u32("attributes")).transpose())
                    .collect::<Result<_, _>>()?;
            }
            // Times, start positions, comments, padding: not needed, skipped within their size.
            _ => {}
        }
    }
    let mut entries = Vec::with_capacity(n);
    let mut empty_index = 0usize;
    for i in 0..n {
        let (name, name_cut) = names
            .get(i)
            .cloned()
            .unwrap_or_else(|| (format!("(unnamed {i})"), false));
        let has_stream = !empty_stream.get(i).copied().unwrap_or(false);
        let attributes = attributes.get(i).copied().flatten();
        let mut e = Entry {
            name,
            name_cut,
            has_stream,
            attributes,
            ..Entry::default()
        };
        if !has_stream {
            e.is_dir = !empty_file.get(empty_index).copied().unwrap_or(false);
            e.is_anti = anti.get(empty_index).copied().unwrap_or(false);
            empty_index += 1;
        }
        // FILE_ATTRIBUTE_DIRECTORY.
        if attributes.is_some_and(|a| a & 0x10 != 0) {
            e.is_dir = true;
        }
        entries.push(e);
    }
    Ok(entries)
}

/// `n` zero-terminated UTF-16LE names filling the property exactly.
fn parse_names(p: &mut Buf<'_>, n: usize) -> Result<Vec<(String, bool)>, Problem> {
    if p.byte("names")? != 0 {
        return Err(Problem::note(
            "unsupported-method",
            "7z names stored in an external stream are not supported",
        ));
    }
    let rest = p.take(p.left() as u64, "names")?;
    if rest.len() % 2 != 0 {
        return Err(bad("7z names property has an odd number of bytes".into()));
    }
    let mut names = Vec::with_capacity(n.min(rest.len() / 2));
    let mut units: Vec<u16> = Vec::new();
    let mut cut = false;
    for pair in rest.chunks_exact(2) {
        let u = u16::from_le_bytes([pair[0], pair[1]]);
        if u != 0 {
            if units.len() < MAX_NAME_UNITS {
                units.push(u);
            } else {
                cut = true;
            }
            continue;
        }
        if names.len() == n {
            return Err(bad(format!("7z names property holds more than {n} names")));
        }
        let name: String = char::decode_utf16(units.drain(..))
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect();
        names.push((name, std::mem::take(&mut cut)));
    }
    if !units.is_empty() || names.len() != n {
        return Err(bad(format!(
            "7z names property holds {} terminated names for {n} files",
            names.len()
        )));
    }
    Ok(names)
}
