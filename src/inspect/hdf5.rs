//! HDF5 inspector for legacy Keras `.h5` models. Keras 2 stores the whole model description
//! as JSON in attributes of the file's root group (`model_config`, `training_config`,
//! `keras_version`, `backend`); loading the model rebuilds every layer that JSON names,
//! including `Lambda` layers with marshalled bytecode. We read just enough HDF5 to reach
//! those attributes and hand the JSON to [`super::keras`].
//!
//! HDF5 is a random-access format, so this module takes `Read + Seek` (the caller opens the
//! file a second time) and reads only small bounded structures: the superblock (at 0 or after
//! a user block at 512, 1024, 2048, ...), the root object header (versions 1 and 2, following
//! a bounded number of continuation blocks), attribute messages in compact storage, variable-
//! length strings in global heap collections, and the root group's member names (v1 symbol
//! table B-tree + local heap, or v2 link messages). Dense attribute storage (a fractal heap,
//! used when attributes exceed 64 KiB) is not implemented: it is reported as
//! `attributes-not-reached` rather than silently passed. Checksums are not verified.

use std::io::{Read, Seek};

use serde::Serialize;

use super::keras;
use super::problem::{Problem, ProblemKind, excerpt};

/// The 8-byte HDF5 format signature.
pub const SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// Bounds for the HDF5 walk.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Highest offset probed for a superblock (probes are 0, 512, 1024, ... doubling).
    pub max_superblock_offset: u64,
    /// Most object header messages read for the root group.
    pub max_messages: usize,
    /// Most continuation blocks followed.
    pub max_continuations: usize,
    /// Largest attribute value read (fixed-length or from the global heap).
    pub max_attribute_bytes: u64,
    /// Most objects scanned in one global heap collection.
    pub max_heap_objects: usize,
    /// Most B-tree nodes visited for the root group's members.
    pub max_btree_nodes: usize,
    /// Most root group members and attribute names recorded.
    pub max_names: usize,
    /// Longest member or attribute name read.
    pub max_name_len: usize,
    /// Largest object header block, B-tree node or symbol node read into memory (the
    /// attribute and link messages kept from one header may total eight times this).
    pub max_block_bytes: u64,
    /// Bounds for the Keras JSON found in the attributes.
    pub keras: keras::Limits,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// `hdf5_messages`, and `json_bytes` for the attribute values (the attributes read are Keras
    /// JSON configs). The superblock probe bound, continuation, heap, B-tree, name and block caps
    /// are fixed internal bounds on the few small structures this reader visits (the scan only
    /// sends files with the signature at offset 0 here, so the probe bound is not a user knob).
    fn from(l: &crate::model::limits::Limits) -> Self {
        use crate::model::limits::usize_of;
        Self {
            max_superblock_offset: 1 << 30,
            max_messages: usize_of(l.hdf5_messages),
            max_continuations: 64,
            max_attribute_bytes: l.json_bytes,
            max_heap_objects: 1 << 16,
            max_btree_nodes: 1024,
            max_names: 4096,
            max_name_len: 1024,
            max_block_bytes: 1 << 20,
            keras: keras::Limits::from(l),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// What an HDF5 file's root group says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// Offset of the superblock (the user block size).
    pub superblock_offset: u64,
    /// Superblock version (0..=3).
    pub superblock_version: u8,
    /// Names of the root group's attributes.
    pub root_attributes: Vec<String>,
    /// Names of the root group's members (groups and datasets), when reachable.
    pub root_members: Vec<String>,
    /// `keras_version` attribute.
    pub keras_version: Option<String>,
    /// `backend` attribute.
    pub backend: Option<String>,
    /// Size of the `model_config` JSON, when present.
    pub model_config_bytes: Option<u64>,
    /// Whether the file holds weights only (no `model_config`, but Keras weight groups or a
    /// `layer_names` attribute): nothing in it is rebuilt as code.
    pub weights_only: bool,
    /// Facts from `model_config`, when present.
    pub keras: Option<keras::Facts>,
}

/// Sniffs the HDF5 signature at offset 0 (files with a user block put it at 512, 1024, ...;
/// [`inspect`] probes those).
pub fn is_hdf5(head: &[u8]) -> bool {
    head.starts_with(SIGNATURE)
}

#[derive(Debug)]
struct Bad {
    kind: ProblemKind,
    code: &'static str,
    message: String,
    offset: u64,
}

fn malformed(code: &'static str, message: String, offset: u64) -> Bad {
    Bad {
        kind: ProblemKind::Malformed,
        code,
        message,
        offset,
    }
}

fn limit(code: &'static str, message: String, offset: u64) -> Bad {
    Bad {
        kind: ProblemKind::LimitExceeded,
        code,
        message,
        offset,
    }
}

const UNDEFINED: u64 = u64::MAX;

struct File<'a, R> {
    inner: &'a mut R,
    size: u64,
    /// Size of offsets and lengths in bytes (2, 4 or 8).
    offset_size: u8,
    length_size: u8,
    /// Absolute position that file addresses are relative to.
    base: u64,
}

impl<R: Read + Seek> File<'_, R> {
    fn read_at(&mut self, offset: u64, out: &mut [u8]) -> Result<(), Bad> {
        super::read::read_at(self.inner, self.size, offset, out)
            .map_err(|e| malformed(e.code, e.message, e.offset))
    }

    fn bytes_at(&mut self, offset: u64, len: u64, max: u64) -> Result<Vec<u8>, Bad> {
        if len > max {
            return Err(limit(
                "value-too-large",
                format!("value of {len} bytes at offset {offset} exceeds the limit of {max}"),
                offset,
            ));
        }
        let n = usize::try_from(len).map_err(|_| {
            malformed(
                "offset-out-of-bounds",
                format!("length {len} too large"),
                offset,
            )
        })?;
        let mut out = vec![0u8; n];
        self.read_at(offset, &mut out)?;
        Ok(out)
    }

    /// Converts a file address to an absolute offset.
    fn abs(&self, addr: u64, at: u64) -> Result<u64, Bad> {
        if addr == UNDEFINED {
            return Err(malformed(
                "undefined-address",
                format!("undefined address at offset {at}"),
                at,
            ));
        }
        self.base
            .checked_add(addr)
            .filter(|a| *a < self.size)
            .ok_or_else(|| {
                malformed(
                    "offset-out-of-bounds",
                    format!("address {addr} at offset {at} is past the end of the file"),
                    at,
                )
            })
    }
}

/// Little-endian field reads from an in-memory block, all bounds-checked.
struct Block<'b> {
    bytes: &'b [u8],
    /// Absolute offset of `bytes[0]`, for messages.
    origin: u64,
}

impl Block<'_> {
    fn err(&self, at: usize, what: &str) -> Bad {
        malformed(
            "truncated-structure",
            format!(
                "{what} at offset {} runs past its structure",
                self.origin + at as u64
            ),
            self.origin + at as u64,
        )
    }

    fn uint(&self, at: usize, width: u8, what: &str) -> Result<u64, Bad> {
        let end = at
            .checked_add(usize::from(width))
            .ok_or_else(|| self.err(at, what))?;
        let slice = self.bytes.get(at..end).ok_or_else(|| self.err(at, what))?;
        let mut buf = [0u8; 8];
        buf.get_mut(..slice.len())
            .ok_or_else(|| self.err(at, what))?
            .copy_from_slice(slice);
        let value = u64::from_le_bytes(buf);
        // An all-ones value of any width is HDF5's "undefined address".
        if width < 8 && width > 0 && value == (1u64 << (8 * u32::from(width))) - 1 {
            return Ok(UNDEFINED);
        }
        Ok(value)
    }

    /// A little-endian u16 count or size (never an address, so all-ones is just 65535).
    fn u16(&self, at: usize, what: &str) -> Result<u16, Bad> {
        let b = self.slice(at, 2, what)?;
        let pair = b.first_chunk::<2>().ok_or_else(|| self.err(at, what))?;
        Ok(u16::from_le_bytes(*pair))
    }

    fn u8(&self, at: usize, what: &str) -> Result<u8, Bad> {
        self.bytes
            .get(at)
            .copied()
            .ok_or_else(|| self.err(at, what))
    }

    fn slice(&self, at: usize, len: usize, what: &str) -> Result<&[u8], Bad> {
        at.checked_add(len)
            .and_then(|end| self.bytes.get(at..end))
            .ok_or_else(|| self.err(at, what))
    }
}

/// An attribute as found in an attribute message.
struct RawAttribute {
    name: String,
    /// Decoded string value, for string attributes whose value we wanted.
    value: Option<Vec<u8>>,
}

/// Attributes whose values we read; the others are recorded by name only.
const WANTED: &[&str] = &[
    "model_config",
    "training_config",
    "keras_version",
    "backend",
];

/// Reads the root group of an HDF5 file of `size` bytes.
pub fn inspect<R: Read + Seek>(
    reader: &mut R,
    size: u64,
    limits: &Limits,
) -> (Facts, Vec<Problem>) {
    let mut facts = Facts::default();
    let mut problems = Vec::new();
    if let Err(bad) = parse(reader, size, limits, &mut facts, &mut problems) {
        problems.push(Problem::new(
            bad.kind,
            bad.code,
            format!("hdf5: {}", bad.message),
            Some(bad.offset),
        ));
    }
    (facts, problems)
}

fn find_superblock<R: Read + Seek>(reader: &mut R, size: u64, limits: &Limits) -> Result<u64, Bad> {
    let mut file = File {
        inner: reader,
        size,
        offset_size: 8,
        length_size: 8,
        base: 0,
    };
    let mut at = 0u64;
    while at <= limits.max_superblock_offset && at.saturating_add(8) <= size {
        let mut sig = [0u8; 8];
        file.read_at(at, &mut sig)?;
        if &sig == SIGNATURE {
            return Ok(at);
        }
        at = if at == 0 { 512 } else { at.saturating_mul(2) };
    }
    if at > limits.max_superblock_offset && at.saturating_add(8) <= size {
        return Err(limit(
            "superblock-beyond-limit",
            format!(
                "no hdf5 superblock at or below offset {}; later user-block boundaries were not probed",
                limits.max_superblock_offset
            ),
            0,
        ));
    }
    Err(malformed(
        "no-superblock",
        "no hdf5 superblock signature found at offset 0 or any user-block boundary".to_owned(),
        0,
    ))
}

fn parse<R: Read + Seek>(
    reader: &mut R,
    size: u64,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) -> Result<(), Bad> {
    let sb = find_superblock(reader, size, limits)?;
    facts.superblock_offset = sb;
    let mut file = File {
        inner: reader,
        size,
        offset_size: 8,
        length_size: 8,
        base: sb,
    };
    let (root_header, mut symbol_table) = read_superblock(&mut file, sb, facts)?;
    let header_at = file.abs(root_header, sb)?;
    let messages = read_object_header(&mut file, header_at, limits)?;
    let (attributes, mut links) =
        read_root_messages(&mut file, &messages, &mut symbol_table, limits, problems)?;
    if let Some((btree, heap)) = symbol_table {
        links.extend(read_symbol_table(&mut file, btree, heap, limits)?);
    }
    links.truncate(limits.max_names);
    facts.root_members = links;
    record_root_attributes(attributes, limits, facts, problems);
    Ok(())
}

/// Reads the superblock at `sb`, sets the file's offset and length widths, and returns the
/// root object header address and, for version 0/1, the root symbol table it caches.
fn read_superblock<R: Read + Seek>(
    file: &mut File<'_, R>,
    sb: u64,
    facts: &mut Facts,
) -> Result<(u64, Option<(u64, u64)>), Bad> {
    let size = file.size;
    let mut head = [0u8; 96];
    let n = usize::try_from(size.saturating_sub(sb).min(96)).unwrap_or(0);
    let head_slice = head.get_mut(..n).unwrap_or_default();
    file.read_at(sb, head_slice)?;
    let block = Block {
        bytes: head.get(..n).unwrap_or_default(),
        origin: sb,
    };
    let version = block.u8(8, "superblock version")?;
    facts.superblock_version = version;
    let (offset_size, length_size) = match version {
        0 | 1 => (
            block.u8(13, "size of offsets")?,
            block.u8(14, "size of lengths")?,
        ),
        2 | 3 => (
            block.u8(9, "size of offsets")?,
            block.u8(10, "size of lengths")?,
        ),
        other => {
            return Err(malformed(
                "unsupported-superblock",
                format!("superblock version {other} is not supported"),
                sb + 8,
            ));
        }
    };
    for (what, width) in [("offsets", offset_size), ("lengths", length_size)] {
        if !matches!(width, 2 | 4 | 8) {
            return Err(malformed(
                "bad-superblock",
                format!("size of {what} is {width}, not 2, 4 or 8"),
                sb + 13,
            ));
        }
    }
    file.offset_size = offset_size;
    file.length_size = length_size;
    let o = usize::from(offset_size);
    if version <= 1 {
        // base, free-space, end-of-file and driver addresses, then the root symbol table entry.
        let addresses = if version == 0 { 24 } else { 28 };
        let entry = addresses + 4 * o;
        let header = block.uint(entry + o, offset_size, "root object header address")?;
        let cache_type = block.uint(entry + 2 * o, 4, "root cache type")?;
        let scratch = entry + 2 * o + 8;
        let table = if cache_type == 1 {
            Some((
                block.uint(scratch, offset_size, "root b-tree address")?,
                block.uint(scratch + o, offset_size, "root heap address")?,
            ))
        } else {
            None
        };
        Ok((header, table))
    } else {
        Ok((
            block.uint(12 + 3 * o, offset_size, "root object header address")?,
            None,
        ))
    }
}

/// Walks the root group's header messages for its attributes and link names, notes the
/// dense (fractal heap) storage this reader does not follow, and picks up a symbol table
/// message into `symbol_table`.
fn read_root_messages<R: Read + Seek>(
    file: &mut File<'_, R>,
    messages: &[(u16, u64, Vec<u8>)],
    symbol_table: &mut Option<(u64, u64)>,
    limits: &Limits,
    problems: &mut Vec<Problem>,
) -> Result<(Vec<RawAttribute>, Vec<String>), Bad> {
    let offset_size = file.offset_size;
    let o = usize::from(offset_size);
    let mut attributes = Vec::new();
    let mut links = Vec::new();
    for (msg_type, data_at, data) in messages {
        let block = Block {
            bytes: data,
            origin: *data_at,
        };
        match msg_type {
            0x000C => attributes.push(read_attribute(file, &block, limits)?),
            0x0011 => {
                *symbol_table = Some((
                    block.uint(0, offset_size, "symbol table b-tree")?,
                    block.uint(o, offset_size, "symbol table heap")?,
                ));
            }
            0x0006 => {
                if let Some(name) = read_link_name(&block, limits)? {
                    links.push(name);
                }
            }
            0x0015 => {
                // Attribute info: a defined fractal heap address means dense attributes.
                let flags = block.u8(1, "attribute info flags")?;
                let heap_at = if flags & 1 != 0 { 4 } else { 2 };
                let heap = block.uint(heap_at, offset_size, "attribute heap address")?;
                if heap != UNDEFINED {
                    problems.push(Problem::new(
                        ProblemKind::Note,
                        "attributes-not-reached",
                        "root group stores attributes densely (fractal heap), which this reader does not follow; model_config may be hidden there".to_owned(),
                        Some(*data_at),
                    ));
                }
            }
            0x0002 => {
                let flags = block.u8(1, "link info flags")?;
                let heap_at = if flags & 1 != 0 { 10 } else { 2 };
                let heap = block.uint(heap_at, offset_size, "link heap address")?;
                if heap != UNDEFINED {
                    problems.push(Problem::new(
                        ProblemKind::Note,
                        "members-not-reached",
                        "root group stores links densely (fractal heap); member names were not read".to_owned(),
                        Some(*data_at),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok((attributes, links))
}

/// Records the root attributes' names and the Keras ones (config, versions), and hands the
/// model and training configs to the Keras config checks.
fn record_root_attributes(
    attributes: Vec<RawAttribute>,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) {
    let mut model_config = None;
    let mut training_config = None;
    for attr in attributes {
        if facts.root_attributes.len() < limits.max_names {
            facts.root_attributes.push(attr.name.clone());
        }
        let Some(value) = attr.value else {
            continue;
        };
        match attr.name.as_str() {
            "model_config" => model_config = Some(value),
            "training_config" => training_config = Some(value),
            "keras_version" => facts.keras_version = Some(lossy(&value, 100)),
            "backend" => facts.backend = Some(lossy(&value, 100)),
            _ => {}
        }
    }
    if let Some(json) = &model_config {
        facts.model_config_bytes = Some(json.len() as u64);
        let (keras_facts, keras_problems) = keras::check_config(json, &limits.keras);
        facts.keras = Some(keras_facts);
        problems.extend(keras_problems);
    }
    if let Some(json) = &training_config {
        problems.extend(keras::check_training_config(json, &limits.keras));
    }
    let weight_groups = facts
        .root_members
        .iter()
        .any(|m| matches!(m.as_str(), "layers" | "vars" | "model_weights"));
    let layer_names = facts.root_attributes.iter().any(|a| a == "layer_names");
    facts.weights_only = model_config.is_none() && (weight_groups || layer_names);
}

fn lossy(bytes: &[u8], max: usize) -> String {
    excerpt(&String::from_utf8_lossy(bytes), max)
}

/// Header messages whose bodies are kept: link info, link, attribute, symbol table,
/// attribute info.
const KEPT_MESSAGES: &[u16] = &[0x0002, 0x0006, 0x000C, 0x0011, 0x0015];

/// Reads every message of the object header at `at`, following continuation blocks.
/// Returns (type, absolute data offset, data).
fn read_object_header<R: Read + Seek>(
    file: &mut File<'_, R>,
    at: u64,
    limits: &Limits,
) -> Result<Vec<(u16, u64, Vec<u8>)>, Bad> {
    let mut prefix = [0u8; 4];
    file.read_at(at, &mut prefix)?;
    let v2 = &prefix == b"OHDR";
    let mut messages = Vec::new();
    // Blocks still to read: (absolute start, length, is it a v2 continuation "OCHK" block).
    let mut blocks: Vec<(u64, u64, bool)> = Vec::new();
    let mut track_order = false;
    if v2 {
        let mut fixed = [0u8; 6];
        file.read_at(at, &mut fixed)?;
        let [.., flags] = fixed;
        track_order = flags & 0x04 != 0;
        let mut pos = at + 6;
        if flags & 0x20 != 0 {
            pos += 16;
        }
        if flags & 0x10 != 0 {
            pos += 4;
        }
        let width = 1u8 << (flags & 3);
        let mut raw = [0u8; 8];
        let slot = raw.get_mut(..usize::from(width)).unwrap_or_default();
        file.read_at(pos, slot)?;
        let chunk = u64::from_le_bytes(raw);
        blocks.push((pos + u64::from(width), chunk, false));
    } else {
        let mut fixed = [0u8; 16];
        file.read_at(at, &mut fixed)?;
        let [version, _, _, _, _, _, _, _, s0, s1, s2, s3, ..] = fixed;
        if version != 1 {
            return Err(malformed(
                "unsupported-object-header",
                format!("object header at {at} has version {version}"),
                at,
            ));
        }
        let size = u64::from(u32::from_le_bytes([s0, s1, s2, s3]));
        blocks.push((at + 16, size, false));
    }
    let mut followed = 0;
    let mut kept_bytes = 0usize;
    let mut seen = 0usize;
    while let Some((start, len, ochk)) = blocks.pop() {
        // Continuation blocks are as large as the header says; cap what we hold at once.
        let data = file.bytes_at(start, len, limits.max_block_bytes)?;
        let block = Block {
            bytes: &data,
            origin: start,
        };
        let mut pos = 0usize;
        let mut end = data.len();
        if v2 && ochk {
            if block.slice(0, 4, "continuation signature")? != b"OCHK" {
                return Err(malformed(
                    "bad-continuation",
                    format!("continuation block at {start} lacks the OCHK signature"),
                    start,
                ));
            }
            pos = 4;
            end = end.saturating_sub(4);
        }
        let header_len = if v2 {
            4 + if track_order { 2 } else { 0 }
        } else {
            8
        };
        while pos + header_len <= end {
            let (msg_type, size) = if v2 {
                (
                    u16::from(block.u8(pos, "message type")?),
                    block.uint(pos + 1, 2, "message size")?,
                )
            } else {
                (
                    block.uint(pos, 2, "message type")? as u16,
                    block.uint(pos + 2, 2, "message size")?,
                )
            };
            let size = usize::try_from(size).unwrap_or(usize::MAX);
            let data_pos = pos + header_len;
            let body = block.slice(data_pos, size, "header message")?;
            seen += 1;
            if seen > limits.max_messages {
                return Err(limit(
                    "too-many-messages",
                    format!(
                        "object header at {at} has more than {} messages",
                        limits.max_messages
                    ),
                    at,
                ));
            }
            if msg_type == 0x0010 {
                let o = file.offset_size;
                let body_block = Block {
                    bytes: body,
                    origin: start + data_pos as u64,
                };
                let addr = body_block.uint(0, o, "continuation address")?;
                let length =
                    body_block.uint(usize::from(o), file.length_size, "continuation length")?;
                followed += 1;
                if followed > limits.max_continuations {
                    return Err(limit(
                        "too-many-continuations",
                        format!(
                            "object header at {at} has more than {} continuation blocks",
                            limits.max_continuations
                        ),
                        at,
                    ));
                }
                let abs = file.abs(addr, start + data_pos as u64)?;
                blocks.push((abs, length, v2));
            } else if KEPT_MESSAGES.contains(&msg_type) {
                kept_bytes = kept_bytes.saturating_add(body.len());
                if kept_bytes as u64 > limits.max_block_bytes.saturating_mul(8) {
                    return Err(limit(
                        "header-too-large",
                        format!(
                            "object header at {at} holds more attribute and link data than the limit"
                        ),
                        at,
                    ));
                }
                messages.push((msg_type, start + data_pos as u64, body.to_vec()));
            }
            pos = data_pos + size;
        }
    }
    Ok(messages)
}

/// Decodes an attribute message; reads the value of the attributes in [`WANTED`].
fn read_attribute<R: Read + Seek>(
    file: &mut File<'_, R>,
    block: &Block<'_>,
    limits: &Limits,
) -> Result<RawAttribute, Bad> {
    let version = block.u8(0, "attribute version")?;
    let flags = block.u8(1, "attribute flags")?;
    // Sizes are plain 16-bit counts: read them raw, because `uint` maps an all-ones value to
    // UNDEFINED (u64::MAX), which overflowed the padding arithmetic below (found by fuzzing).
    let name_size = usize::from(block.u16(2, "attribute name size")?);
    let dt_size = usize::from(block.u16(4, "attribute datatype size")?);
    let ds_size = usize::from(block.u16(6, "attribute dataspace size")?);
    let pad = |n: usize| if version == 1 { n.div_ceil(8) * 8 } else { n };
    let name_at = match version {
        1 | 2 => 8,
        3 => 9,
        other => {
            return Err(malformed(
                "unsupported-attribute",
                format!(
                    "attribute message version {other} at offset {}",
                    block.origin
                ),
                block.origin,
            ));
        }
    };
    let raw_name = block.slice(
        name_at,
        name_size.min(limits.max_name_len),
        "attribute name",
    )?;
    let name_end = raw_name
        .iter()
        .position(|b| *b == 0)
        .unwrap_or(raw_name.len());
    let name = String::from_utf8_lossy(raw_name.get(..name_end).unwrap_or_default()).into_owned();
    let dt_at = name_at + pad(name_size);
    let ds_at = dt_at + pad(dt_size);
    let data_at = ds_at + pad(ds_size);
    if !WANTED.contains(&name.as_str()) || flags & 0x03 != 0 {
        // Not wanted, or a shared datatype/dataspace we do not resolve.
        return Ok(RawAttribute { name, value: None });
    }
    let class_byte = block.u8(dt_at, "datatype class")?;
    let class = class_byte & 0x0f;
    let elem_size = block.uint(dt_at + 4, 4, "datatype size")?;
    let value = match class {
        // Fixed-length string: the value is `elem_size` bytes, cut at the first NUL.
        3 => {
            if elem_size > limits.max_attribute_bytes {
                return Err(limit(
                    "value-too-large",
                    format!("attribute '{}' is {elem_size} bytes", excerpt(&name, 100)),
                    block.origin,
                ));
            }
            let len = usize::try_from(elem_size).unwrap_or(usize::MAX);
            let raw = block.slice(data_at, len, "attribute value")?;
            let end = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
            Some(raw.get(..end).unwrap_or_default().to_vec())
        }
        // Variable-length: bits 0-3 of the class bit field say sequence (0) or string (1).
        9 if block.u8(dt_at + 1, "vlen type")? & 0x0f == 1 => {
            let o = file.offset_size;
            let len = block.uint(data_at, 4, "vlen length")?;
            let collection = block.uint(data_at + 4, o, "global heap address")?;
            let index = block.uint(data_at + 4 + usize::from(o), 4, "global heap index")?;
            Some(read_global_heap(file, collection, index, len, limits)?)
        }
        _ => None,
    };
    Ok(RawAttribute { name, value })
}

/// Reads object `index` of the global heap collection at `addr`.
fn read_global_heap<R: Read + Seek>(
    file: &mut File<'_, R>,
    addr: u64,
    index: u64,
    expected: u64,
    limits: &Limits,
) -> Result<Vec<u8>, Bad> {
    let at = file.abs(addr, 0)?;
    let l = file.length_size;
    let mut head = [0u8; 16];
    let head_len = 8 + usize::from(l);
    file.read_at(at, head.get_mut(..head_len).unwrap_or_default())?;
    let block = Block {
        bytes: head.get(..head_len).unwrap_or_default(),
        origin: at,
    };
    if block.slice(0, 4, "global heap signature")? != b"GCOL" {
        return Err(malformed(
            "bad-global-heap",
            format!("no GCOL signature at offset {at}"),
            at,
        ));
    }
    let collection_size = block.uint(8, l, "global heap size")?;
    let end = at.saturating_add(collection_size).min(file.size);
    let mut pos = at + head_len as u64;
    for _ in 0..limits.max_heap_objects {
        let obj_head_len = 8 + usize::from(l);
        if pos.saturating_add(obj_head_len as u64) > end {
            break;
        }
        let mut raw = [0u8; 16];
        file.read_at(pos, raw.get_mut(..obj_head_len).unwrap_or_default())?;
        let obj = Block {
            bytes: raw.get(..obj_head_len).unwrap_or_default(),
            origin: pos,
        };
        let obj_index = obj.uint(0, 2, "heap object index")?;
        let obj_size = obj.uint(8, l, "heap object size")?;
        if obj_index == 0 {
            break;
        }
        let data_at = pos + obj_head_len as u64;
        if obj_index == index {
            let len = expected.min(obj_size);
            if data_at.saturating_add(len) > end {
                return Err(malformed(
                    "bad-global-heap",
                    format!("heap object {index} at {pos} runs past its collection"),
                    pos,
                ));
            }
            return file.bytes_at(data_at, len, limits.max_attribute_bytes);
        }
        pos = data_at.saturating_add(obj_size.div_ceil(8).saturating_mul(8));
    }
    Err(malformed(
        "bad-global-heap",
        format!("global heap collection at {at} has no object {index}"),
        at,
    ))
}

/// Name of a link message (v2 groups).
fn read_link_name(block: &Block<'_>, limits: &Limits) -> Result<Option<String>, Bad> {
    let flags = block.u8(1, "link flags")?;
    let mut pos = 2;
    if flags & 0x08 != 0 {
        pos += 1;
    }
    if flags & 0x04 != 0 {
        pos += 8;
    }
    if flags & 0x10 != 0 {
        pos += 1;
    }
    let width = 1u8 << (flags & 3);
    let len = block.uint(pos, width, "link name length")?;
    let len = usize::try_from(len)
        .unwrap_or(usize::MAX)
        .min(limits.max_name_len);
    let name = block.slice(pos + usize::from(width), len, "link name")?;
    Ok(Some(String::from_utf8_lossy(name).into_owned()))
}

/// Names in a v1 group: walks the B-tree (bounded) to its symbol table nodes.
fn read_symbol_table<R: Read + Seek>(
    file: &mut File<'_, R>,
    btree: u64,
    heap: u64,
    limits: &Limits,
) -> Result<Vec<String>, Bad> {
    let o = file.offset_size;
    let l = file.length_size;
    let heap_at = file.abs(heap, 0)?;
    let mut raw = [0u8; 32];
    let heap_len = 8 + 2 * usize::from(l) + usize::from(o);
    file.read_at(heap_at, raw.get_mut(..heap_len).unwrap_or_default())?;
    let hb = Block {
        bytes: raw.get(..heap_len).unwrap_or_default(),
        origin: heap_at,
    };
    if hb.slice(0, 4, "local heap signature")? != b"HEAP" {
        return Err(malformed(
            "bad-local-heap",
            format!("no HEAP signature at offset {heap_at}"),
            heap_at,
        ));
    }
    let segment_size = hb.uint(8, l, "local heap size")?;
    let segment = file.abs(
        hb.uint(8 + 2 * usize::from(l), o, "local heap data")?,
        heap_at,
    )?;
    let mut names = Vec::new();
    let mut queue = vec![btree];
    let mut visited = 0;
    while let Some(node) = queue.pop() {
        visited += 1;
        if visited > limits.max_btree_nodes {
            return Err(limit(
                "too-many-btree-nodes",
                format!(
                    "root group b-tree has more than {} nodes",
                    limits.max_btree_nodes
                ),
                node,
            ));
        }
        let at = file.abs(node, 0)?;
        let mut head = [0u8; 24];
        let head_len = 8 + 2 * usize::from(o);
        file.read_at(at, head.get_mut(..head_len).unwrap_or_default())?;
        let nb = Block {
            bytes: head.get(..head_len).unwrap_or_default(),
            origin: at,
        };
        let sig = nb.slice(0, 4, "b-tree signature")?;
        if sig == b"SNOD" {
            // A 16-bit count, read raw: `uint` would turn 0xffff into UNDEFINED (u64::MAX) and
            // the multiplication below would overflow (found by fuzzing).
            let count = u64::from(nb.u16(6, "symbol count")?);
            let entry = 2 * u64::from(o) + 24;
            let body =
                file.bytes_at(at.saturating_add(8), count * entry, limits.max_block_bytes)?;
            let sb = Block {
                bytes: &body,
                origin: at + 8,
            };
            for i in 0..count as usize {
                let name_offset = sb.uint(i * entry as usize, o, "link name offset")?;
                if name_offset >= segment_size || names.len() >= limits.max_names {
                    continue;
                }
                let avail = (segment_size - name_offset).min(limits.max_name_len as u64);
                let raw = file.bytes_at(
                    segment.saturating_add(name_offset),
                    avail,
                    limits.max_name_len as u64,
                )?;
                let end = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
                names
                    .push(String::from_utf8_lossy(raw.get(..end).unwrap_or_default()).into_owned());
            }
            continue;
        }
        if sig != b"TREE" {
            return Err(malformed(
                "bad-btree",
                format!("no TREE or SNOD signature at offset {at}"),
                at,
            ));
        }
        let node_type = nb.u8(4, "b-tree node type")?;
        if node_type != 0 {
            return Err(malformed(
                "bad-btree",
                format!("b-tree at {at} is not a group node"),
                at,
            ));
        }
        // Raw 16-bit count, as for `symbol count` above (fuzzing found the overflow here too).
        let used = u64::from(nb.u16(6, "b-tree entries")?);
        // Keys (heap offsets, `l` bytes) and children alternate: key0 child0 ... keyN.
        let pair = u64::from(l) + u64::from(o);
        let body = file.bytes_at(
            at.saturating_add(head_len as u64),
            used * pair + u64::from(l),
            limits.max_block_bytes,
        )?;
        let bb = Block {
            bytes: &body,
            origin: at.saturating_add(head_len as u64),
        };
        for i in 0..used as usize {
            let child = bb.uint(i * pair as usize + usize::from(l), o, "b-tree child")?;
            if queue.len() >= limits.max_btree_nodes {
                return Err(limit(
                    "too-many-btree-nodes",
                    format!(
                        "root group b-tree has more than {} nodes",
                        limits.max_btree_nodes
                    ),
                    at,
                ));
            }
            queue.push(child);
        }
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Cursor;

    /// One v1 header message (type, body padded to 8).
    fn message(msg_type: u16, body: &[u8]) -> Vec<u8> {
        let mut body = body.to_vec();
        while !body.len().is_multiple_of(8) {
            body.push(0);
        }
        let mut out = msg_type.to_le_bytes().to_vec();
        out.extend((body.len() as u16).to_le_bytes());
        out.extend([0u8; 4]);
        out.extend(body);
        out
    }

    fn padded(bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        while !out.len().is_multiple_of(8) {
            out.push(0);
        }
        out
    }

    /// A v1 attribute message holding a scalar fixed-length string.
    pub(crate) fn string_attribute(name: &str, value: &[u8]) -> Vec<u8> {
        let mut name_z = name.as_bytes().to_vec();
        name_z.push(0);
        let mut datatype = vec![0x13, 0, 0, 0];
        datatype.extend((value.len() as u32).to_le_bytes());
        let dataspace = vec![1u8, 0, 0, 0, 0, 0, 0, 0];
        let mut body = vec![1u8, 0];
        body.extend((name_z.len() as u16).to_le_bytes());
        body.extend((datatype.len() as u16).to_le_bytes());
        body.extend((dataspace.len() as u16).to_le_bytes());
        body.extend(padded(&name_z));
        body.extend(padded(&datatype));
        body.extend(padded(&dataspace));
        body.extend(value);
        message(0x000C, &body)
    }

    /// Superblock v0 (8-byte offsets and lengths) after `user_block` zero bytes, then a v1
    /// root object header holding `messages`. Addresses are relative to the superblock.
    pub(crate) fn h5_file(user_block: usize, messages: &[Vec<u8>]) -> Vec<u8> {
        let mut out = vec![0u8; user_block];
        out.extend(SIGNATURE);
        out.extend([0, 0, 0, 0, 0, 8, 8, 0]);
        out.extend(4u16.to_le_bytes());
        out.extend(16u16.to_le_bytes());
        out.extend(0u32.to_le_bytes());
        let body: Vec<u8> = messages.concat();
        let eof = 96 + 16 + body.len() as u64;
        for addr in [0, u64::MAX, eof, u64::MAX] {
            out.extend(addr.to_le_bytes());
        }
        out.extend(0u64.to_le_bytes()); // link name offset
        out.extend(96u64.to_le_bytes()); // object header address
        out.extend([0u8; 24]); // cache type 0, reserved, scratch
        out.extend([1, 0]);
        out.extend((messages.len() as u16).to_le_bytes());
        out.extend(1u32.to_le_bytes());
        out.extend((body.len() as u32).to_le_bytes());
        out.extend([0u8; 4]);
        out.extend(body);
        out
    }

    const LAMBDA_CONFIG: &str = r#"{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "Lambda", "config": {"name": "evil", "function": ["4wEAAAAA", null, null], "function_type": "lambda"}}]}}"#;

    fn run(bytes: &[u8]) -> (Facts, Vec<Problem>) {
        inspect(
            &mut Cursor::new(bytes.to_vec()),
            bytes.len() as u64,
            &Limits::default(),
        )
    }

    fn codes(problems: &[Problem]) -> Vec<&'static str> {
        problems.iter().map(|p| p.code).collect()
    }

    #[test]
    fn finds_lambda_in_model_config() {
        let bytes = h5_file(
            0,
            &[
                string_attribute("keras_version", b"2.12.0"),
                string_attribute("backend", b"tensorflow"),
                string_attribute("model_config", LAMBDA_CONFIG.as_bytes()),
            ],
        );
        assert!(is_hdf5(&bytes));
        let (facts, problems) = run(&bytes);
        assert_eq!(codes(&problems), ["lambda-layer"]);
        assert_eq!(facts.keras_version.as_deref(), Some("2.12.0"));
        assert_eq!(facts.backend.as_deref(), Some("tensorflow"));
        assert_eq!(
            facts.root_attributes,
            ["keras_version", "backend", "model_config"]
        );
        assert_eq!(facts.model_config_bytes, Some(LAMBDA_CONFIG.len() as u64));
        assert!(!facts.weights_only);
        assert_eq!(
            facts.keras.as_ref().map(|k| k.lambda_layers.clone()),
            Some(vec!["evil".to_owned()])
        );
    }

    #[test]
    fn finds_superblock_after_user_block() {
        let bytes = h5_file(
            1024,
            &[string_attribute("model_config", LAMBDA_CONFIG.as_bytes())],
        );
        assert!(!is_hdf5(&bytes));
        let (facts, problems) = run(&bytes);
        assert_eq!(facts.superblock_offset, 1024);
        assert_eq!(codes(&problems), ["lambda-layer"]);
    }

    #[test]
    fn follows_continuation_blocks() {
        // Root header: one continuation message pointing to a block with the attribute.
        let attr = string_attribute("model_config", LAMBDA_CONFIG.as_bytes());
        let mut cont = Vec::new();
        cont.extend(0u64.to_le_bytes()); // patched below
        cont.extend((attr.len() as u64).to_le_bytes());
        let mut bytes = h5_file(0, &[message(0x0010, &cont)]);
        let block_at = bytes.len() as u64;
        bytes.extend(&attr);
        let patch_at = 96 + 16 + 8;
        bytes[patch_at..patch_at + 8].copy_from_slice(&block_at.to_le_bytes());
        let (_, problems) = run(&bytes);
        assert_eq!(codes(&problems), ["lambda-layer"]);
    }

    #[test]
    fn rejects_continuation_loop() {
        let mut cont = Vec::new();
        cont.extend(112u64.to_le_bytes()); // the root header's own message block
        cont.extend(24u64.to_le_bytes());
        let bytes = h5_file(0, &[message(0x0010, &cont)]);
        let (_, problems) = run(&bytes);
        assert_eq!(codes(&problems), ["too-many-continuations"]);
    }

    #[test]
    fn rejects_attribute_sizes_of_all_ones_without_overflow() {
        // Fuzzing found `0xffff` name/datatype/dataspace sizes read as UNDEFINED (u64::MAX),
        // which overflowed the 8-byte padding of a v1 attribute message.
        let mut body = vec![1u8, 0];
        body.extend([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        // A name long enough that the capped name read succeeds and the padding is computed.
        body.extend(b"model_config\0");
        body.resize(8 + 2048, 0);
        let bytes = h5_file(0, &[message(0x000C, &body)]);
        let (_, problems) = run(&bytes);
        assert!(
            problems
                .iter()
                .all(|p| matches!(p.kind, ProblemKind::Malformed | ProblemKind::Note)),
            "{problems:?}"
        );
        assert_eq!(codes(&problems), ["truncated-structure"]);
    }

    #[test]
    fn notes_dense_attributes() {
        let mut info = vec![0u8, 0];
        info.extend(4096u64.to_le_bytes());
        info.extend(u64::MAX.to_le_bytes());
        let bytes = h5_file(0, &[message(0x0015, &info)]);
        let (_, problems) = run(&bytes);
        assert_eq!(codes(&problems), ["attributes-not-reached"]);
    }

    #[test]
    fn rejects_missing_signature() {
        let (_, problems) = run(&[0u8; 4096]);
        assert_eq!(codes(&problems), ["no-superblock"]);
    }

    #[test]
    fn rejects_truncated_file() {
        let bytes = h5_file(
            0,
            &[string_attribute("model_config", LAMBDA_CONFIG.as_bytes())],
        );
        for cut in [20, 70, 100, bytes.len() - 10] {
            let (_, problems) = run(&bytes[..cut]);
            assert!(
                matches!(
                    problems.as_slice(),
                    [Problem {
                        kind: ProblemKind::Malformed,
                        ..
                    }]
                ),
                "cut at {cut}: {problems:?}"
            );
        }
    }

    #[test]
    fn rejects_oversized_attribute() {
        let bytes = h5_file(
            0,
            &[string_attribute("model_config", LAMBDA_CONFIG.as_bytes())],
        );
        let limits = Limits {
            max_attribute_bytes: 16,
            ..Limits::default()
        };
        let (_, problems) = inspect(&mut Cursor::new(bytes.clone()), bytes.len() as u64, &limits);
        assert_eq!(codes(&problems), ["value-too-large"]);
    }

    #[test]
    fn rejects_too_many_messages() {
        let msgs: Vec<Vec<u8>> = (0..10).map(|_| message(0x0000, &[])).collect();
        let bytes = h5_file(0, &msgs);
        let limits = Limits {
            max_messages: 5,
            ..Limits::default()
        };
        let (_, problems) = inspect(&mut Cursor::new(bytes.clone()), bytes.len() as u64, &limits);
        assert_eq!(codes(&problems), ["too-many-messages"]);
    }

    #[test]
    fn rejects_bad_offset_size() {
        let mut bytes = h5_file(0, &[]);
        bytes[13] = 3;
        assert_eq!(codes(&run(&bytes).1), ["bad-superblock"]);
    }

    #[test]
    fn rejects_symbol_counts_of_all_ones_without_overflow() {
        // Fuzzing found 0xffff b-tree entry and symbol node counts read as UNDEFINED (u64::MAX),
        // which overflowed `count * entry size`. Patch both counts of a real h5py file.
        let original = include_bytes!("../../tests/fixtures/hdf5/keras2_lambda.h5");
        for sig in [&b"TREE"[..], &b"SNOD"[..]] {
            let mut bytes = original.to_vec();
            let at = bytes
                .windows(4)
                .position(|w| w == sig)
                .expect("fixture has the structure");
            bytes[at + 6] = 0xff;
            bytes[at + 7] = 0xff;
            let (_, problems) = run(&bytes);
            assert!(
                problems
                    .iter()
                    .any(|p| matches!(p.kind, ProblemKind::Malformed | ProblemKind::LimitExceeded)),
                "{}: {problems:?}",
                String::from_utf8_lossy(sig)
            );
        }
    }

    /// Files written by h5py 3.16 / HDF5 2.0 (see tests/fixtures/hdf5/make_fixtures.py).
    #[test]
    fn reads_h5py_fixed_string_file() {
        let bytes = include_bytes!("../../tests/fixtures/hdf5/keras2_lambda.h5");
        let (facts, problems) = run(bytes);
        assert_eq!(codes(&problems), ["lambda-layer"]);
        assert_eq!(facts.superblock_version, 0);
        assert_eq!(facts.keras_version.as_deref(), Some("2.12.0"));
        assert_eq!(facts.backend.as_deref(), Some("tensorflow"));
        assert_eq!(facts.root_members, ["model_weights"]);
        assert!(!facts.weights_only);
    }

    #[test]
    fn reads_h5py_vlen_strings() {
        let bytes = include_bytes!("../../tests/fixtures/hdf5/vlen_earliest.h5");
        let (facts, problems) = run(bytes);
        assert_eq!(codes(&problems), ["lambda-layer"]);
        assert_eq!(facts.backend.as_deref(), Some("jax"));
        let bytes = include_bytes!("../../tests/fixtures/hdf5/vlen_latest.h5");
        let (facts, problems) = run(bytes);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(facts.superblock_version >= 2);
        assert_eq!(facts.keras_version.as_deref(), Some("3.3.3"));
        assert_eq!(facts.root_members, ["model_weights"]);
        assert_eq!(
            facts.keras.map(|k| k.class_name),
            Some(Some("Sequential".to_owned()))
        );
    }

    #[test]
    fn detects_weights_only_file() {
        let bytes = include_bytes!("../../tests/fixtures/hdf5/weights_only.weights.h5");
        let (facts, problems) = run(bytes);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(facts.root_members, ["layers", "vars"]);
        assert!(facts.weights_only);
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
            let _ = run(&bytes);
            let mut signed = SIGNATURE.to_vec();
            signed.extend(&bytes);
            let _ = run(&signed);
        }

        #[test]
        fn never_panics_on_mutated_file(pos in 0usize..400, byte in proptest::prelude::any::<u8>()) {
            let mut bytes = h5_file(0, &[string_attribute("model_config", b"{}"), string_attribute("backend", b"x")]);
            let len = bytes.len();
            bytes[pos % len] = byte;
            let _ = run(&bytes);
        }

        #[test]
        fn never_panics_on_mutated_h5py_file(pos in 0usize..6472, byte in proptest::prelude::any::<u8>()) {
            let mut bytes = include_bytes!("../../tests/fixtures/hdf5/keras2_lambda.h5").to_vec();
            let len = bytes.len();
            bytes[pos % len] = byte;
            let _ = run(&bytes);
        }
    }
}
