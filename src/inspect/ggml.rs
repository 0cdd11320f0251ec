//! Legacy GGML files: the formats llama.cpp, whisper.cpp and the ggml examples wrote before
//! GGUF (August 2023), still published as `ggml-model-q4_0.bin` and `ggml-base.en.bin`.
//!
//! Each starts with a little-endian `u32` magic: `ggml` (0x67676d6c, unversioned), `ggmf`
//! (0x67676d66, version 1), `ggjt` (0x67676a74, versions 1-3, tensor data aligned to 32 bytes
//! for mmap) or `ggla` (0x67676c61, a LoRA adapter). Then (llama.cpp's `llama_file_loader`,
//! `convert-lora-to-ggml.py`, the `examples/*/main.cpp` loaders):
//! - llama (`ggml`, `ggmf`, `ggjt`): seven `i32` hyperparameters (n_vocab, n_embd, n_mult,
//!   n_head, n_layer, n_rot, ftype), then n_vocab tokens (`u32` length, bytes, and an `f32` score
//!   in the versioned formats);
//! - ggml examples and whisper.cpp (`ggml`): k `i32` hyperparameters (whisper: 11, then its mel
//!   filter bank: `i32` n_mel, `i32` n_fft, n_mel * n_fft `f32`), an `i32` token count and the
//!   tokens (`u32` length, bytes);
//! - LoRA (`ggla`): version, `i32` r, `i32` alpha;
//! - then tensors to the end of the file: `i32` n_dims, `i32` name length, `i32` ggml type,
//!   n_dims `i32` dimensions, the name, (`ggjt`, `ggla`: padding to a multiple of 32) and the data.
//!
//! Nothing in these files runs code; the risk is the loaders, which trusted every count and
//! size. So the walk is the loaders' walk with every count checked first: a token or tensor
//! count or a size the file cannot hold is a hostile shape (`Exploit`), a broken record
//! `Malformed`, and the tensors must end exactly at the end of the file. The unversioned `ggml`
//! magic has one layout per architecture: the layouts above are tried in turn and the one whose
//! tensors tile the file wins; when none does, the file is recognised and noted, not judged.
//! Random access (`Read + Seek`): tensor data is skipped, never read.

use std::collections::BTreeMap;
use std::io::{BufReader, Read, Seek, SeekFrom};

use serde::Serialize;

use super::problem::{Problem, ProblemKind, excerpt};

/// Bounds for the walk.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Most tensors walked (the policy's `gguf_tensor_count`).
    pub max_tensors: u64,
    /// Most vocabulary entries walked.
    pub max_vocab: u64,
    /// Longest token accepted.
    pub max_token_len: u32,
    /// Longest tensor name accepted (llama.cpp's own limit is 512).
    pub max_name_len: u32,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// `gguf_tensor_count` from the policy; vocabulary and name sizes are fixed internal caps.
    fn from(l: &crate::model::limits::Limits) -> Self {
        Self {
            max_tensors: l.gguf_tensor_count,
            max_vocab: 1 << 22,
            max_token_len: 1 << 16,
            max_name_len: 512,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// What a legacy GGML header says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// The magic: `ggml`, `ggmf`, `ggjt` or `ggla`.
    pub magic: String,
    /// The version that follows the magic (`ggmf`, `ggjt`, `ggla`).
    pub version: Option<u32>,
    /// The layout that read the file: `llama`, `ggml-example`, `whisper`, `lora`; `None` when
    /// none did.
    pub layout: Option<String>,
    /// The hyperparameters as stored (`i32`).
    pub hparams: Vec<i64>,
    /// Vocabulary entries.
    pub vocab_size: Option<u64>,
    /// Tensors walked.
    pub tensor_count: u64,
    /// Tensors per ggml type name.
    pub tensor_types: BTreeMap<String, u64>,
    /// Sum of element counts over all tensors, when it fits in 64 bits.
    pub parameter_count: Option<u64>,
    /// Bytes of tensor data.
    pub data_bytes: u64,
}

/// The four magics, as stored (little-endian `u32`), with their names.
const MAGICS: [(u32, &str); 4] = [
    (0x6767_6d6c, "ggml"),
    (0x6767_6d66, "ggmf"),
    (0x6767_6a74, "ggjt"),
    (0x6767_6c61, "ggla"),
];

/// The magic's name when `head` starts with one of the four.
pub fn magic(head: &[u8]) -> Option<&'static str> {
    let m = u32::from_le_bytes(head.get(..4)?.try_into().ok()?);
    MAGICS.iter().find(|(v, _)| *v == m).map(|(_, n)| *n)
}

/// Sniffs a legacy GGML file: a magic followed by binary header fields (a text file that
/// happens to start `lmgg` is text).
pub fn is_ggml(head: &[u8]) -> bool {
    crate::classify::is_legacy_ggml(head)
}

/// A ggml type: its name, elements per block and bytes per block. Before `ggjt` version 3
/// (llama.cpp #1508, May 2023) Q4_0, Q4_1 and Q8_0 stored their scale as `f32`.
fn type_info(ty: i64, v3: bool) -> Option<(&'static str, u64, u64)> {
    Some(match (ty, v3) {
        (0, _) => ("F32", 1, 4),
        (1, _) => ("F16", 1, 2),
        (2, true) => ("Q4_0", 32, 18),
        (2, false) => ("Q4_0", 32, 20),
        (3, true) => ("Q4_1", 32, 20),
        (3, false) => ("Q4_1", 32, 24),
        (4, false) => ("Q4_2", 16, 10),
        (6, _) => ("Q5_0", 32, 22),
        (7, _) => ("Q5_1", 32, 24),
        (8, true) => ("Q8_0", 32, 34),
        (8, false) => ("Q8_0", 32, 36),
        (9, _) => ("Q8_1", 32, 40),
        (10, true) => ("Q2_K", 256, 84),
        (11, true) => ("Q3_K", 256, 110),
        (12, true) => ("Q4_K", 256, 144),
        (13, true) => ("Q5_K", 256, 176),
        (14, true) => ("Q6_K", 256, 210),
        (15, true) => ("Q8_K", 256, 292),
        (16, true) => ("I8", 1, 1),
        (17, true) => ("I16", 1, 2),
        (18, true) => ("I32", 1, 4),
        _ => return None,
    })
}

/// Where the tensor records start and how they are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// llama.cpp: 7 hparams, n_vocab (= hparams\[0]) tokens, scores when versioned.
    Llama,
    /// ggml examples: `k` hparams, a token count, tokens.
    Example(usize),
    /// whisper.cpp: 11 hparams, mel filters, a token count, tokens.
    Whisper,
    /// ggla: version, r, alpha.
    Lora,
}

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Layout::Llama => "llama",
            Layout::Example(_) => "ggml-example",
            Layout::Whisper => "whisper",
            Layout::Lora => "lora",
        }
    }
}

/// A failed walk: the problem kind, sub-code, message and offset.
#[derive(Debug, Clone)]
struct Bad {
    kind: ProblemKind,
    code: &'static str,
    message: String,
    offset: u64,
}

fn bad(kind: ProblemKind, code: &'static str, message: String, offset: u64) -> Bad {
    Bad {
        kind,
        code,
        message,
        offset,
    }
}

/// The file under a buffered reader, with its position and size.
struct File<'a, R: Read + Seek> {
    inner: BufReader<&'a mut R>,
    pos: u64,
    size: u64,
}

impl<R: Read + Seek> File<'_, R> {
    fn seek(&mut self, to: u64) -> Result<(), Bad> {
        if to > self.size {
            return Err(self.truncated());
        }
        let delta = i64::try_from(to).unwrap_or(i64::MAX) - i64::try_from(self.pos).unwrap_or(0);
        self.inner
            .seek_relative(delta)
            .map_err(|e| self.io_error(&e))?;
        self.pos = to;
        Ok(())
    }

    fn truncated(&self) -> Bad {
        bad(
            ProblemKind::Malformed,
            "truncated",
            format!("file ends at {} inside a header record", self.size),
            self.pos,
        )
    }

    fn io_error(&self, e: &std::io::Error) -> Bad {
        bad(
            ProblemKind::Malformed,
            "read-error",
            format!("read error at offset {}: {e}", self.pos),
            self.pos,
        )
    }

    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], Bad> {
        if self.pos + N as u64 > self.size {
            return Err(self.truncated());
        }
        let mut b = [0u8; N];
        self.inner
            .read_exact(&mut b)
            .map_err(|e| self.io_error(&e))?;
        self.pos += N as u64;
        Ok(b)
    }

    fn i32(&mut self) -> Result<i64, Bad> {
        Ok(i64::from(i32::from_le_bytes(self.bytes::<4>()?)))
    }

    fn u32(&mut self) -> Result<u32, Bad> {
        Ok(u32::from_le_bytes(self.bytes::<4>()?))
    }

    fn skip(&mut self, n: u64) -> Result<(), Bad> {
        let to = self.pos.checked_add(n).ok_or_else(|| self.truncated())?;
        self.seek(to)
    }

    fn remaining(&self) -> u64 {
        self.size.saturating_sub(self.pos)
    }
}

/// Reads a legacy GGML file of `size` bytes.
pub fn inspect<R: Read + Seek>(
    reader: &mut R,
    size: u64,
    limits: &Limits,
) -> (Facts, Vec<Problem>) {
    let mut facts = Facts::default();
    let mut problems = Vec::new();
    if reader.seek(SeekFrom::Start(0)).is_err() {
        problems.push(Problem::malformed(
            "read-error",
            "ggml: cannot read the file",
        ));
        return (facts, problems);
    }
    let mut file = File {
        inner: BufReader::new(reader),
        pos: 0,
        size,
    };
    let head = match file.bytes::<4>() {
        Ok(h) => h,
        Err(b) => {
            problems.push(problem(b));
            return (facts, problems);
        }
    };
    let Some(name) = magic(&head) else {
        problems.push(Problem::malformed("bad-magic", "ggml: no ggml magic"));
        return (facts, problems);
    };
    facts.magic = name.to_string();
    if name != "ggml" {
        match file.u32() {
            Ok(v) => facts.version = Some(v),
            Err(b) => {
                problems.push(problem(b));
                return (facts, problems);
            }
        }
    }
    let version = facts.version.unwrap_or(0);
    let known = match name {
        "ggmf" => version == 1,
        "ggjt" => (1..=3).contains(&version),
        "ggla" => version == 1,
        _ => true,
    };
    if !known {
        problems.push(Problem::new(
            ProblemKind::Malformed,
            "unknown-version",
            format!("ggml: {name} version {version} is not one llama.cpp wrote"),
            Some(4),
        ));
        return (facts, problems);
    }
    let candidates: Vec<Layout> = match name {
        "ggla" => vec![Layout::Lora],
        "ggml" => std::iter::once(Layout::Llama)
            .chain(std::iter::once(Layout::Whisper))
            .chain((5..=12).map(Layout::Example))
            .collect(),
        _ => vec![Layout::Llama],
    };
    let start = file.pos;
    let mut first_error: Option<Bad> = None;
    for layout in candidates {
        let mut attempt = Facts {
            magic: facts.magic.clone(),
            version: facts.version,
            ..Facts::default()
        };
        let walked = file
            .seek(start)
            .and_then(|()| walk(&mut file, name, version, layout, limits, &mut attempt));
        match walked {
            Ok(()) => {
                attempt.layout = Some(layout.name().to_string());
                return (attempt, problems);
            }
            Err(b) if b.kind == ProblemKind::LimitExceeded => {
                // A limit is not evidence against the layout: report it as it stands.
                attempt.layout = Some(layout.name().to_string());
                problems.push(problem(b));
                return (attempt, problems);
            }
            Err(b) => {
                if first_error.is_none() {
                    facts.hparams = attempt.hparams;
                    first_error = Some(b);
                }
            }
        }
    }
    match first_error {
        // The unversioned magic has a layout per architecture: one we do not read is noted.
        Some(_) if name == "ggml" => problems.push(Problem::note(
            "layout-not-read",
            "ggml: no known ggml layout (llama, whisper, the ggml examples) reads this file; its tensors were not listed",
        )),
        Some(b) => problems.push(problem(b)),
        None => {}
    }
    (facts, problems)
}

fn problem(b: Bad) -> Problem {
    Problem::new(
        b.kind,
        b.code,
        format!("ggml: {}", b.message),
        Some(b.offset),
    )
}

/// A count read from the file that each entry of which needs at least `min_entry` bytes:
/// negative or more than the rest of the file can hold is hostile, over `cap` a limit.
fn check_count<R: Read + Seek>(
    file: &File<'_, R>,
    what: &'static str,
    n: i64,
    min_entry: u64,
    cap: u64,
    at: u64,
) -> Result<u64, Bad> {
    let fits = u64::try_from(n)
        .ok()
        .filter(|&n| n.saturating_mul(min_entry) <= file.remaining());
    let Some(n) = fits else {
        return Err(bad(
            ProblemKind::Exploit,
            "hostile-count",
            format!(
                "{what} {n} at offset {at} cannot fit in the {} bytes that follow",
                file.remaining()
            ),
            at,
        ));
    };
    if n > cap {
        return Err(bad(
            ProblemKind::LimitExceeded,
            "too-many-entries",
            format!("{what} {n} at offset {at} exceeds the limit of {cap}"),
            at,
        ));
    }
    Ok(n)
}

/// Walks the vocabulary: `n` tokens, each a `u32` length and bytes, plus an `f32` score.
fn walk_vocab<R: Read + Seek>(
    file: &mut File<'_, R>,
    n: u64,
    scores: bool,
    limits: &Limits,
) -> Result<(), Bad> {
    for i in 0..n {
        let at = file.pos;
        let len = file.u32()?;
        if len > limits.max_token_len || u64::from(len) > file.remaining() {
            return Err(bad(
                ProblemKind::Exploit,
                "hostile-token-length",
                format!("token {i} declares {len} bytes at offset {at}"),
                at,
            ));
        }
        file.skip(u64::from(len) + if scores { 4 } else { 0 })?;
    }
    Ok(())
}

fn walk<R: Read + Seek>(
    file: &mut File<'_, R>,
    magic: &str,
    version: u32,
    layout: Layout,
    limits: &Limits,
    facts: &mut Facts,
) -> Result<(), Bad> {
    read_hparams_and_vocab(file, magic, layout, limits, facts)?;
    let aligned = matches!(magic, "ggjt" | "ggla");
    let v3 = (magic == "ggjt" && version >= 3) || magic == "ggla";
    let mut params: Option<u64> = Some(0);
    while file.remaining() > 0 {
        if facts.tensor_count >= limits.max_tensors {
            return Err(bad(
                ProblemKind::LimitExceeded,
                "too-many-tensors",
                format!(
                    "more than {} tensors; the rest were not walked",
                    limits.max_tensors
                ),
                file.pos,
            ));
        }
        let (at, ty, elements, name) = read_tensor_header(file, limits)?;
        let Some((type_name, block, block_bytes)) = type_info(ty, v3) else {
            return Err(bad(
                ProblemKind::Malformed,
                "unknown-tensor-type",
                format!(
                    "tensor `{name}` at offset {at} has ggml type {ty}, unknown to this version"
                ),
                at,
            ));
        };
        if !elements.is_multiple_of(block) {
            return Err(bad(
                ProblemKind::Exploit,
                "hostile-dims",
                format!(
                    "tensor `{name}` at offset {at}: {elements} elements are not whole {type_name} blocks of {block}"
                ),
                at,
            ));
        }
        let bytes = (elements / block).checked_mul(block_bytes).ok_or_else(|| {
            bad(
                ProblemKind::Exploit,
                "hostile-dims",
                format!("tensor `{name}` at offset {at}: the data size overflows"),
                at,
            )
        })?;
        if aligned {
            let pad = file.pos.wrapping_neg() & 31;
            file.skip(pad)?;
        }
        if bytes > file.remaining() {
            return Err(bad(
                ProblemKind::Exploit,
                "data-past-end",
                format!(
                    "tensor `{name}` at offset {at} declares {bytes} bytes of data, past the end of the file ({} bytes)",
                    file.size
                ),
                at,
            ));
        }
        file.skip(bytes)?;
        facts.tensor_count += 1;
        facts.data_bytes = facts.data_bytes.saturating_add(bytes);
        *facts.tensor_types.entry(type_name.to_string()).or_default() += 1;
        params = params.and_then(|p| p.checked_add(elements));
    }
    facts.parameter_count = params;
    Ok(())
}

/// The hyperparameters, whose number depends on the layout, then the vocabulary (and for
/// whisper the mel filters) that comes before the tensors.
fn read_hparams_and_vocab<R: Read + Seek>(
    file: &mut File<'_, R>,
    magic: &str,
    layout: Layout,
    limits: &Limits,
    facts: &mut Facts,
) -> Result<(), Bad> {
    let hparams = match layout {
        Layout::Llama => 7,
        Layout::Example(k) => k,
        Layout::Whisper => 11,
        Layout::Lora => 2,
    };
    for _ in 0..hparams {
        let v = file.i32()?;
        facts.hparams.push(v);
    }
    match layout {
        Layout::Llama => {
            let n = check_count(file, "n_vocab", facts.hparams[0], 4, limits.max_vocab, 8)?;
            walk_vocab(file, n, magic != "ggml", limits)?;
            facts.vocab_size = Some(n);
        }
        Layout::Example(_) | Layout::Whisper => {
            if layout == Layout::Whisper {
                let at = file.pos;
                let mel = file.i32()?;
                let fft = file.i32()?;
                let cells = mel.checked_mul(fft).unwrap_or(-1);
                let n = check_count(file, "mel filter size", cells, 4, 1 << 20, at)?;
                file.skip(n * 4)?;
            }
            let at = file.pos;
            let count = file.i32()?;
            let n = check_count(file, "token count", count, 4, limits.max_vocab, at)?;
            walk_vocab(file, n, false, limits)?;
            facts.vocab_size = Some(n);
        }
        Layout::Lora => {}
    }
    Ok(())
}

/// Reads one tensor's dimensions and name, checking the dimension count, the element count
/// and the name length before anything is allocated. Returns its offset, ggml type,
/// element count and display name.
fn read_tensor_header<R: Read + Seek>(
    file: &mut File<'_, R>,
    limits: &Limits,
) -> Result<(u64, i64, u64, String), Bad> {
    let at = file.pos;
    let n_dims = file.i32()?;
    let name_len = file.i32()?;
    let ty = file.i32()?;
    if !(1..=4).contains(&n_dims) {
        return Err(bad(
            ProblemKind::Exploit,
            "hostile-dims",
            format!("tensor at offset {at} declares {n_dims} dimensions (ggml has 1 to 4)"),
            at,
        ));
    }
    let mut elements: u64 = 1;
    for _ in 0..n_dims {
        let d = file.i32()?;
        let d = u64::try_from(d).ok().filter(|&d| d > 0).ok_or_else(|| {
            bad(
                ProblemKind::Exploit,
                "hostile-dims",
                format!("tensor at offset {at} has dimension {d}"),
                at,
            )
        })?;
        elements = elements.checked_mul(d).ok_or_else(|| {
            bad(
                ProblemKind::Exploit,
                "hostile-dims",
                format!("tensor at offset {at}: the element count overflows"),
                at,
            )
        })?;
    }
    let name_len = u32::try_from(name_len)
        .ok()
        .filter(|&l| l > 0 && l <= limits.max_name_len)
        .ok_or_else(|| {
            bad(
                ProblemKind::Exploit,
                "hostile-name-length",
                format!("tensor at offset {at} declares a name of {name_len} bytes"),
                at,
            )
        })?;
    if u64::from(name_len) > file.remaining() {
        return Err(file.truncated());
    }
    let mut name = vec![0u8; name_len as usize];
    file.inner
        .read_exact(&mut name)
        .map_err(|e| file.io_error(&e))?;
    file.pos += u64::from(name_len);
    let name = excerpt(&String::from_utf8_lossy(&name), 128);
    Ok((at, ty, elements, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A tensor record: dims, name, ggml type, then `data` bytes, aligned when `align`.
    pub(crate) fn tensor(
        out: &mut Vec<u8>,
        dims: &[i32],
        name: &str,
        ty: i32,
        data: usize,
        align: bool,
    ) {
        out.extend_from_slice(&(dims.len() as i32).to_le_bytes());
        out.extend_from_slice(&(name.len() as i32).to_le_bytes());
        out.extend_from_slice(&ty.to_le_bytes());
        for d in dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(name.as_bytes());
        if align {
            while !out.len().is_multiple_of(32) {
                out.push(0);
            }
        }
        out.extend(std::iter::repeat_n(0x11, data));
    }

    /// A ggjt v3 llama header with 2 tokens.
    fn ggjt_header() -> Vec<u8> {
        let mut v = b"tjgg".to_vec();
        v.extend_from_slice(&3u32.to_le_bytes());
        for h in [2i32, 4, 256, 1, 1, 4, 2] {
            v.extend_from_slice(&h.to_le_bytes());
        }
        for t in ["a", "bc"] {
            v.extend_from_slice(&(t.len() as u32).to_le_bytes());
            v.extend_from_slice(t.as_bytes());
            v.extend_from_slice(&0f32.to_le_bytes());
        }
        v
    }

    /// A ggjt v3 llama file: 2 tokens, an F32 [4, 2] and a Q4_0 [32] tensor.
    fn ggjt() -> Vec<u8> {
        let mut v = ggjt_header();
        tensor(&mut v, &[4, 2], "tok_embeddings.weight", 0, 32, true);
        tensor(&mut v, &[32], "norm.weight", 2, 18, true);
        v
    }

    fn run(bytes: &[u8]) -> (Facts, Vec<Problem>) {
        inspect(
            &mut Cursor::new(bytes),
            bytes.len() as u64,
            &Limits::default(),
        )
    }

    #[test]
    fn reads_a_ggjt_v3_llama_file() {
        let (f, p) = run(&ggjt());
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(f.magic, "ggjt");
        assert_eq!(f.version, Some(3));
        assert_eq!(f.layout.as_deref(), Some("llama"));
        assert_eq!(f.vocab_size, Some(2));
        assert_eq!(f.tensor_count, 2);
        assert_eq!(f.parameter_count, Some(40));
        assert_eq!(f.tensor_types.get("Q4_0"), Some(&1));
        assert!(is_ggml(&ggjt()));
        assert!(!is_ggml(b"tjgg is text, not a header"));
    }

    #[test]
    fn reads_whisper_and_example_layouts_of_the_unversioned_magic() {
        // whisper: 11 hparams, mel 2x2 filters, 1 token, one F16 tensor.
        let mut w = b"lmgg".to_vec();
        for h in [1i32, 2, 3, 4, 5, 6, 7, 8, 9, 2, 1] {
            w.extend_from_slice(&h.to_le_bytes());
        }
        w.extend_from_slice(&2i32.to_le_bytes());
        w.extend_from_slice(&2i32.to_le_bytes());
        w.extend_from_slice(&[0u8; 16]);
        w.extend_from_slice(&1i32.to_le_bytes());
        w.extend_from_slice(&1u32.to_le_bytes());
        w.push(b'x');
        tensor(&mut w, &[3], "encoder.conv1.bias", 1, 6, false);
        let (f, p) = run(&w);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(f.layout.as_deref(), Some("whisper"));
        // gpt-2 example: 6 hparams, a token count, tokens.
        let mut g = b"lmgg".to_vec();
        for h in [3i32, 8, 4, 1, 1, 1] {
            g.extend_from_slice(&h.to_le_bytes());
        }
        g.extend_from_slice(&1i32.to_le_bytes());
        g.extend_from_slice(&2u32.to_le_bytes());
        g.extend_from_slice(b"hi");
        tensor(&mut g, &[4], "model/ln_f/g", 0, 16, false);
        let (f, p) = run(&g);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(f.layout.as_deref(), Some("ggml-example"));
        assert_eq!(f.tensor_count, 1);
    }

    #[test]
    fn unreadable_unversioned_layout_is_a_note() {
        let mut g = b"lmgg".to_vec();
        g.extend_from_slice(&[0x7f; 64]);
        let (f, p) = run(&g);
        assert_eq!(f.layout, None);
        assert!(matches!(p.as_slice(), [q] if q.kind == ProblemKind::Note));
    }

    #[test]
    fn hostile_vocab_count_is_an_exploit_shape() {
        let mut v = ggjt();
        v[8..12].copy_from_slice(&0x7fff_ffffi32.to_le_bytes());
        let (_, p) = run(&v);
        assert!(
            matches!(p.as_slice(), [q] if q.kind == ProblemKind::Exploit && q.code == "hostile-count"),
            "{p:?}"
        );
        v[8..12].copy_from_slice(&(-1i32).to_le_bytes());
        let (_, p) = run(&v);
        assert!(matches!(p.as_slice(), [q] if q.code == "hostile-count"));
    }

    #[test]
    fn hostile_token_length_and_tensor_shapes() {
        let mut v = ggjt();
        // The first token's length.
        v[36..40].copy_from_slice(&u32::MAX.to_le_bytes());
        let (_, p) = run(&v);
        assert!(
            matches!(p.as_slice(), [q] if q.code == "hostile-token-length"),
            "{p:?}"
        );
        // A tensor whose data runs past the end.
        let mut v = ggjt();
        let len = v.len();
        v.truncate(len - 4);
        let (_, p) = run(&v);
        assert!(
            matches!(p.as_slice(), [q] if q.code == "data-past-end" && q.kind == ProblemKind::Exploit),
            "{p:?}"
        );
        // A dimension product that overflows.
        let mut h = ggjt_header();
        tensor(
            &mut h,
            &[i32::MAX, i32::MAX, i32::MAX, i32::MAX],
            "x",
            0,
            64,
            true,
        );
        let (_, p) = run(&h);
        assert!(
            matches!(p.as_slice(), [q] if q.code == "hostile-dims"),
            "{p:?}"
        );
        // A negative dimension.
        let mut h = ggjt_header();
        tensor(&mut h, &[-4], "x", 0, 64, true);
        let (_, p) = run(&h);
        assert!(
            matches!(p.as_slice(), [q] if q.code == "hostile-dims"),
            "{p:?}"
        );
    }

    #[test]
    fn broken_structure_is_malformed() {
        // Truncated inside the hparams.
        let v = ggjt();
        let (_, p) = run(&v[..20]);
        assert!(
            matches!(p.as_slice(), [q] if q.kind == ProblemKind::Malformed && q.code == "truncated")
        );
        // An unknown version.
        let mut u = ggjt();
        u[4] = 9;
        let (_, p) = run(&u);
        assert!(matches!(p.as_slice(), [q] if q.code == "unknown-version"));
        // An unknown tensor type for the version (Q4_3, removed before ggjt).
        let mut x = ggjt();
        let pos = x.windows(11).position(|s| s == b"norm.weight").unwrap();
        x[pos - 8..pos - 4].copy_from_slice(&5i32.to_le_bytes());
        let (_, p) = run(&x);
        assert!(
            matches!(p.as_slice(), [q] if q.code == "unknown-tensor-type"),
            "{p:?}"
        );
    }

    #[test]
    fn reads_a_lora_adapter() {
        let mut v = b"algg".to_vec();
        v.extend_from_slice(&1u32.to_le_bytes());
        v.extend_from_slice(&8i32.to_le_bytes());
        v.extend_from_slice(&16i32.to_le_bytes());
        tensor(
            &mut v,
            &[2, 8],
            "layers.0.attention.wq.weight.loraA",
            0,
            64,
            true,
        );
        let (f, p) = run(&v);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(f.layout.as_deref(), Some("lora"));
        assert_eq!(f.hparams, vec![8, 16]);
    }

    #[test]
    fn tensor_limit_is_a_limit() {
        let limits = Limits {
            max_tensors: 1,
            ..Limits::default()
        };
        let v = ggjt();
        let (_, p) = inspect(&mut Cursor::new(&v), v.len() as u64, &limits);
        assert!(matches!(p.as_slice(), [q] if q.kind == ProblemKind::LimitExceeded));
    }
}
