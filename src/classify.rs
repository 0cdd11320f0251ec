//! Classification: what a file is, from its content first and its name second.
//!
//! Attackers choose file names; loaders sniff content (torch.load opens anything that is a zip
//! or a pickle). So the format comes from magic bytes, and the name only breaks ties and sets what
//! the file *claims* to be. When the claim and the content disagree, that is `FMT001`.
//!
//! # Strong and weak signatures
//!
//! A *strong* signature is one text or an ordinary file does not produce by accident: the zip,
//! HDF5, GGUF, NumPy, gzip/bzip2/xz, tar, 7z and RAR magics, the legacy PyTorch magic pickle, a
//! binary pickle (`\x80` + protocol 2..5 followed by valid opcodes). A strong signature decides
//! the format whatever the name says, because the loader that opens the file sniffs the same
//! bytes (a zip named `.bin` is still what `torch.load` reads); the name then only decides
//! whether to report `FMT001`.
//!
//! The safetensors signature (a little-endian length, then `{`) is *weak*: the content decides it
//! alone only when the whole check in [`sniff`] passes (the length fits the file, the header is
//! text and closes with `}`). Otherwise a `.safetensors` name sends the file to the validator,
//! which reports why it is broken, and any other name leaves it text or unknown. So a Python
//! module `P={...}` or a `notes.txt` whose ninth byte is `{` is never taken for safetensors.
//! The check runs before the strong magics: no zip, GGUF, HDF5, NumPy or binary pickle passes it
//! (their would-be length is absurd or what follows is not a text header), while a real
//! safetensors header of, say, 0x0280 bytes starts `\x80\x02` and must not become a pickle.

pub use crate::model::format::{Format, Kind};

use crate::codec::header;

/// Lower-cased extension of the last path component (`model.safetensors` -> `safetensors`).
pub fn extension(rel: &str) -> String {
    let base = basename(rel);
    match base.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

/// The last path component.
pub fn basename(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// Extensions under which weights are published; unknown content under these is `FMT002`.
pub const WEIGHT_EXTENSIONS: &[&str] = &[
    "safetensors",
    "bin",
    "pt",
    "pth",
    "ckpt",
    "pkl",
    "pickle",
    "joblib",
    "npy",
    "npz",
    "onnx",
    "gguf",
    "ggml",
    "h5",
    "hdf5",
    "keras",
    "tflite",
    "pb",
    "mlmodel",
    "msgpack",
    "pdmodel",
    "pdiparams",
    "pdparams",
    "ot",
    "model",
    "dill",
    "sav",
    "skops",
];

/// What a file's name claims it is. `None` when the name makes no claim we check.
pub fn claimed_format(rel: &str) -> Option<&'static [Format]> {
    use Format::*;
    let ext = extension(rel);
    let name = basename(rel);
    if name == "saved_model.pb" {
        return Some(&[TfSavedmodel]);
    }
    // Research code saves `torch.save(...)` output as `model.pth.tar` / `checkpoint.pt.tar`: the
    // `.tar` is habit, and torch.load opens the file by content (a zip or a legacy pickle), so the
    // compound name claims the PyTorch family as well as a real tar.
    let lower = name.to_ascii_lowercase();
    if [".pth.tar", ".pt.tar", ".ckpt.tar", ".pkl.tar"]
        .iter()
        .any(|s| lower.ends_with(s))
    {
        return Some(&[
            PytorchZip,
            PytorchLegacy,
            PytorchTar,
            Torchscript,
            Pickle,
            Tar,
            Zip,
        ]);
    }
    Some(match ext.as_str() {
        "safetensors" => &[Safetensors],
        // `.ckpt` is every framework's checkpoint (Lightning's torch zip, Keras HDF5, Flax
        // msgpack): none of those contradicts the name.
        "ckpt" => &[
            PytorchZip,
            PytorchLegacy,
            PytorchTar,
            Torchscript,
            Pickle,
            Safetensors,
            Zip,
            Hdf5,
            Msgpack,
            Empty,
        ],
        "pt" | "pth" => &[
            PytorchZip,
            PytorchLegacy,
            PytorchTar,
            Torchscript,
            Pickle,
            Safetensors,
            Empty,
        ],
        // `.bin` is also fastText's and word2vec's name (issue 15, cause 8), and Core ML's
        // `weight.bin` (issue 40).
        "bin" => &[
            CoremlWeights,
            PytorchZip,
            PytorchLegacy,
            PytorchTar,
            Torchscript,
            Pickle,
            Safetensors,
            Empty,
            Fasttext,
            Word2vec,
            Ggml,
            // XGBoost 2.1+ writes UBJSON under any extension it does not know.
            Xgboost,
        ],
        "pkl" | "pickle" | "dill" | "sav" => &[Pickle, Joblib, PytorchLegacy, Gzip, Bzip2, Xz],
        "joblib" => &[Joblib, Pickle, Zlib, Gzip, Bzip2, Xz, Lzma],
        "npy" => &[Numpy],
        "npz" => &[Npz, Zip],
        "onnx" => &[Onnx],
        "gguf" => &[Gguf],
        "ggml" => &[Ggml, Gguf],
        "pte" => &[Executorch],
        "h5" | "hdf5" => &[Hdf5, Keras],
        "keras" => &[Keras, Hdf5],
        "tflite" => &[Tflite],
        "skops" => &[Skops],
        "mlmodel" => &[Coreml],
        // Issue 40: PaddlePaddle's program and parameters; `paddle.save` writes pickles.
        "pdmodel" => &[Paddle],
        "pdiparams" => &[PaddleParams],
        "pdparams" => &[Pickle],
        "zip" => &[Zip, PytorchZip, Torchscript, Npz, Keras],
        "gz" | "tgz" => &[Gzip, Joblib, Tar, PytorchTar],
        "bz2" => &[Bzip2, Joblib],
        "xz" => &[Xz, Joblib],
        "lzma" => &[Lzma, Joblib],
        "zst" | "zstd" => &[Zstd, Joblib],
        "lz4" => &[Lz4, Joblib],
        "z" => &[Zlib, Joblib],
        "tar" => &[Tar, PytorchTar],
        "7z" => &[SevenZip],
        "rar" => &[Rar],
        "json" => &[Json, Xgboost],
        "ubj" => &[Xgboost],
        "cbm" => &[Catboost],
        _ => return None,
    })
}

/// Sniffs the content. `head` is the first bytes of the file (at least 4 KiB when the file is
/// that large), `size` the whole file's size.
pub fn sniff(head: &[u8], size: u64) -> Format {
    use Format::*;
    if size == 0 {
        return Empty;
    }
    if is_safetensors(head, size) {
        return Safetensors;
    }
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return Zip;
    }
    if head.starts_with(b"\x93NUMPY") {
        return Numpy;
    }
    if head.starts_with(b"GGUF") {
        return Gguf;
    }
    if head.starts_with(b"\x89HDF\r\n\x1a\n") {
        return Hdf5;
    }
    if head.get(4..8) == Some(b"TFL3") {
        return Tflite;
    }
    // TensorRT 8+ engines start with their `ftrt` tag (issue 40).
    if head.starts_with(b"ftrt") && head.len() >= 16 {
        return Tensorrt;
    }
    if is_executorch(head) {
        return Executorch;
    }
    if is_xgboost_ubjson(head) {
        return Xgboost;
    }
    if head.starts_with(b"CBM1") {
        return Catboost;
    }
    if is_legacy_ggml(head) {
        return Ggml;
    }
    if is_fasttext(head) {
        return Fasttext;
    }
    // Magics alone: the decompressor's stricter header check reports a damaged one.
    if head.starts_with(header::GZIP_MAGIC) {
        return Gzip;
    }
    if head.starts_with(header::BZIP2_MAGIC)
        && head.get(3).is_some_and(|b| (b'1'..=b'9').contains(b))
    {
        return Bzip2;
    }
    if head.starts_with(header::XZ_MAGIC) {
        return Xz;
    }
    if head.get(257..262) == Some(b"ustar") {
        return Tar;
    }
    if head.starts_with(b"7z\xbc\xaf\x27\x1c") {
        return SevenZip;
    }
    if head.starts_with(b"Rar!\x1a\x07") {
        return Rar;
    }
    if let Some(native) = native_format(head) {
        return native;
    }
    // The pyc magic is two bytes and `\r\n`: text can start that way (` \r\r\n`), a header
    // with its flags and sizes cannot be text.
    if crate::model::format::is_pyc(head) && !is_text(head) {
        return PythonBytecode;
    }
    if head.starts_with(b"version https://git-lfs") || head.starts_with(b"version https://hawser") {
        return LfsPointer;
    }
    if is_legacy_torch(head) {
        return PytorchLegacy;
    }
    if head.first() == Some(&0x80) && head.get(1).is_some_and(|p| (2..=5).contains(p)) {
        return Pickle;
    }
    if header::is_zlib(head) {
        return Zlib;
    }
    if is_text(head) {
        return Text;
    }
    Unknown
}

/// ELF (`\x7fELF`), PE (an `MZ` stub whose `e_lfanew` points at `PE\0\0` within `head`) or
/// Mach-O (thin, either byte order, 32 or 64 bits; or fat/universal). These are strong
/// signatures: the loader (`dlopen`, `ctypes`, the kernel) reads the same bytes whatever the
/// name. A fat Mach-O shares `CA FE BA BE` with Java class files; it is only taken when the
/// architecture count that follows is small (a class file has its major version, 45 or more,
/// there), as `file(1)` decides.
pub fn native_format(head: &[u8]) -> Option<Format> {
    if head.starts_with(b"\x7fELF") {
        return Some(Format::Elf);
    }
    if head.starts_with(b"MZ") {
        let pe = head
            .get(0x3c..0x40)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
            .and_then(|off| usize::try_from(off).ok())
            .and_then(|off| head.get(off..off.checked_add(4)?));
        return (pe == Some(b"PE\0\0")).then_some(Format::Pe);
    }
    const THIN: [[u8; 4]; 4] = [
        [0xfe, 0xed, 0xfa, 0xce],
        [0xfe, 0xed, 0xfa, 0xcf],
        [0xce, 0xfa, 0xed, 0xfe],
        [0xcf, 0xfa, 0xed, 0xfe],
    ];
    if THIN.iter().any(|m| head.starts_with(m)) {
        return Some(Format::Macho);
    }
    if head.starts_with(&[0xca, 0xfe, 0xba, 0xbe]) || head.starts_with(&[0xca, 0xfe, 0xba, 0xbf]) {
        let n = head
            .get(4..8)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_be_bytes)?;
        return (1..45).contains(&n).then_some(Format::Macho);
    }
    None
}

/// Content probes that need a parser's own sniffer. The inspector computes them (only for a file
/// that [`sniff`] left as text or unknown, the only case where they matter) and passes them to
/// [`route`], so the decision table stays here while the sniffers stay with their parsers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Probes {
    /// A pickle stream by its opcodes (protocol 0/1 pickles have no magic).
    pub pickle: bool,
    /// A TensorFlow SavedModel protobuf (`08 01 12`).
    pub tf_saved_model: bool,
    /// An ONNX ModelProto (`ir_version` then another ModelProto field).
    pub onnx: bool,
    /// An lzma-alone stream (no reliable magic: only decided with a joblib/pickle name).
    pub lzma: bool,
    /// A joblib < 0.10 `ZF` container (header, then a zlib stream).
    pub joblib_zf: bool,
    /// An ONNX `TensorProto` (or sequence/optional/map of tensors): backend test data `.pb`.
    pub onnx_tensor: bool,
    /// An OpenVINO IR network: XML whose root element is `<net>` with a `version` attribute.
    pub openvino_ir: bool,
    /// A Core ML `Model` spec: its model type field reached in the head (issue 40).
    pub coreml_spec: bool,
    /// A Paddle `ProgramDesc`: block 0 with `idx` 0 and `parent_idx` -1 first (issue 40).
    pub paddle_program: bool,
    /// A Flax/JAX msgpack checkpoint: a string-keyed map reaching a Flax array (issue 40).
    pub flax_msgpack: bool,
}

/// Which inspector reads a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The inspector of this format.
    As(Format),
    /// A joblib < 0.10 `ZF` container: skip its header, then inflate the zlib stream.
    JoblibZf,
}

/// Decides which inspector reads a file, from the sniffed format, the name and the probes.
///
/// Content decides first ([`sniff`]); the name only routes what content left as text or
/// unknown, and a strong signature is never overridden here. The name-based cases:
/// - a `.safetensors` name sends text, unknown and empty content to the validator (unless it is
///   a pickle), so the finding names the exact rule broken (ST001) instead of "unrecognised",
///   and a 0-byte `.safetensors` is a broken file (`file-too-small`), not a silent placeholder;
/// - `saved_model.pb` (or the SavedModel probe) is a SavedModel, `.onnx` (or the ONNX probe) is
///   ONNX, a `.pb` that reads as an ONNX tensor (field 2 a varint) ONNX test data, any other
///   `.pb` a frozen TensorFlow graph;
/// - `.mlmodel` with a protobuf field-1 varint first byte is Core ML; a msgpack map under a
///   Flax/Orbax checkpoint name ([`is_msgpack_name`]) is Flax weights; `.pdmodel` starting with
///   a block field is a Paddle program, `.pdiparams` starting with a version 0 Paddle
///   parameters; a MIL blob storage header ([`is_coreml_weights`]) is Core ML weights under any
///   name (issue 40); so are, under any name, a Core ML spec, a Paddle program and a Flax
///   checkpoint that the probes recognise by their structure (`Probes::coreml_spec`,
///   `paddle_program`, `flax_msgpack`);
/// - an lzma-alone stream is only believed under `.joblib`, `.lzma` or `.pkl`;
/// - unknown content under `.engine`, `.plan` or `.trt` is a TensorRT engine of a release that
///   wrote no `ftrt` tag.
///
/// Content-only cases follow: a joblib `ZF` container, then a pickle hiding under any name
/// (`pickle.load` reads it all the same).
pub fn route(rel: &str, head: &[u8], sniffed: Format, probes: &Probes) -> Route {
    use Format::*;
    let ext = extension(rel);
    if matches!(sniffed, Unknown | Text | Empty) && ext == "safetensors" && !probes.pickle {
        return Route::As(Safetensors);
    }
    if !matches!(sniffed, Unknown | Text) {
        return Route::As(sniffed);
    }
    let unknown = sniffed == Unknown;
    let msgpack_map = head
        .first()
        .is_some_and(|b| (0x80..=0x8f).contains(b) || *b == 0xde || *b == 0xdf);
    // Core ML specs are protobuf that start like an ONNX ModelProto (field 1 varint, field 2
    // message), so the `.mlmodel` name is asked first (issue 18: Core ML was recorded as ONNX).
    let format = if unknown
        && (ext == "mlmodel" && head.first() == Some(&0x08) || probes.coreml_spec)
    {
        Coreml
    } else if basename(rel) == "saved_model.pb" || probes.tf_saved_model {
        TfSavedmodel
    } else if ext == "onnx" || probes.onnx {
        Onnx
    } else if ext == "meta" && head.first() == Some(&0x0a) {
        // Issue 15, cause 8: a TF1 checkpoint's `model.ckpt.meta` is a MetaGraphDef (field 1,
        // meta_info_def, first), whose graph is walked like a SavedModel's.
        TfMetagraph
    } else if unknown && is_tf_checkpoint(rel, head) {
        TfCheckpoint
    } else if ext == "pb" && probes.onnx_tensor {
        // Issue 15, cause 8: ONNX's `test_data_set_*/input_0.pb` are tensors, not TF graphs.
        OnnxTensor
    } else if ext == "pb" {
        TfGraph
    } else if unknown && (ext == "pdmodel" && head.first() == Some(&0x0a) || probes.paddle_program)
    {
        // Issue 40: a ProgramDesc starts with its first block (field 1, length-delimited);
        // under another name, with block 0's required fields as well.
        Paddle
    } else if unknown && ext == "pdiparams" && head.starts_with(&[0, 0, 0, 0]) {
        // Issue 40: the first tensor record's version 0.
        PaddleParams
    } else if unknown && is_coreml_weights(head) {
        CoremlWeights
    } else if unknown && matches!(ext.as_str(), "engine" | "plan" | "trt") {
        // TensorRT engines without the `ftrt` tag (older releases): by name (issue 40).
        Tensorrt
    } else if unknown && msgpack_map && (is_msgpack_name(rel) || probes.flax_msgpack) {
        Msgpack
    } else if unknown && matches!(ext.as_str(), "joblib" | "lzma" | "pkl") && probes.lzma {
        Lzma
    } else if probes.openvino_ir {
        // Issue 40: an OpenVINO IR under any name (`openvino_model.xml`, `model.xml`).
        Openvino
    } else if probes.joblib_zf {
        return Route::JoblibZf;
    } else if probes.pickle {
        Pickle
    } else if unknown && is_word2vec_binary(head) {
        Word2vec
    } else {
        sniffed
    };
    Route::As(format)
}

/// A Core ML MIL blob storage file (issue 40; `mlmodel/src/MILBlob/Blob/StorageFormat.hpp`): a
/// 64-byte header of the blob count, version 2 and zero reserved fields, and when blobs are
/// declared the first metadata record's sentinel `0xDEADBEEF` at offset 64. Decided by content,
/// so `weight.bin` is recognised under any name (the writer names it, the MIL program refers to
/// it by path).
pub fn is_coreml_weights(head: &[u8]) -> bool {
    let Some(header) = head.get(..64) else {
        return false;
    };
    let count = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    header[4..8] == 2u32.to_le_bytes()
        && header[8..].iter().all(|&b| b == 0)
        && (count == 0 || head.get(64..68) == Some(&0xDEAD_BEEFu32.to_le_bytes()[..]))
}

/// Names Flax and Orbax give msgpack checkpoints (issue 40): `*.msgpack` (`flax_model.msgpack`),
/// `flax.training.checkpoints`' `checkpoint_<step>` and Orbax's `checkpoint` (no extension),
/// and `.ckpt`. Only asked of binary content that starts with a msgpack map.
pub fn is_msgpack_name(rel: &str) -> bool {
    let ext = extension(rel);
    let name = basename(rel);
    ext == "msgpack"
        || ext == "ckpt"
        || name == "checkpoint"
        || name
            .strip_prefix("checkpoint_")
            .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
}

/// A TensorFlow checkpoint's tensor files (issue 15, cause 8): the `.index` table (a LevelDB
/// table whose first entry, key "", is the `BundleHeaderProto`: shared 0, key length 0, the
/// value's length, then field 1 `num_shards`) and its `.data-NNNNN-of-NNNNN` shards (raw tensor
/// bytes, recognised by name: TensorFlow reads them only as the index says).
pub fn is_tf_checkpoint(rel: &str, head: &[u8]) -> bool {
    let name = basename(rel);
    let shard = name.rsplit_once(".data-").is_some_and(|(_, n)| {
        n.split_once("-of-").is_some_and(|(a, b)| {
            !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
        })
    });
    shard || (extension(rel) == "index" && matches!(head, [0x00, 0x00, 1..=0x7f, 0x08, ..]))
}

/// fastText's `.bin`/`.ftz` (issue 15, cause 8): the int32 magic 793712314 and a format version
/// (11 or 12 in every release; `FASTTEXT_VERSION` in `src/fasttext.cc`), little-endian. The
/// file holds the training arguments, a dictionary and float matrices; loading runs nothing.
pub fn is_fasttext(head: &[u8]) -> bool {
    head.starts_with(&793_712_314u32.to_le_bytes())
        && head
            .get(4..8)
            .is_some_and(|v| (1..=64).contains(&u32::from_le_bytes([v[0], v[1], v[2], v[3]])))
}

/// Legacy GGML (issue 40): a little-endian `u32` magic `ggml` (0x67676d6c), `ggmf`
/// (0x67676d66), `ggjt` (0x67676a74) or `ggla` (0x67676c61), followed by binary header fields
/// (a text file that happens to start `lmgg` stays text).
pub fn is_legacy_ggml(head: &[u8]) -> bool {
    let magic = head
        .get(..4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_le_bytes);
    matches!(
        magic,
        Some(0x6767_6d6c | 0x6767_6d66 | 0x6767_6a74 | 0x6767_6c61)
    ) && head
        .get(4..head.len().min(64))
        .is_some_and(|rest| rest.len() >= 8 && rest.contains(&0))
}

/// An ExecuTorch program (issue 40): a FlatBuffer whose file identifier at bytes 4..8 is `ET`
/// and two digits (`ET12`), with a 4-aligned root offset past the identifier.
pub fn is_executorch(head: &[u8]) -> bool {
    let root = head
        .get(..4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_le_bytes);
    matches!(head.get(4..8), Some([b'E', b'T', a, b]) if a.is_ascii_digit() && b.is_ascii_digit())
        && root.is_some_and(|r| r >= 8 && r.is_multiple_of(4))
}

/// XGBoost's UBJSON model (issue 40): `{`, a UBJSON length marker and length, then the key
/// `learner` (the first key of every XGBoost model document).
pub fn is_xgboost_ubjson(head: &[u8]) -> bool {
    let Some(rest) = head.strip_prefix(b"{") else {
        return false;
    };
    let width = match rest.first() {
        Some(b'i' | b'U') => 1,
        Some(b'I') => 2,
        Some(b'l') => 4,
        Some(b'L') => 8,
        _ => return false,
    };
    let len = rest
        .get(1..1 + width)
        .map(|b| b.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x)));
    len == Some(7) && rest.get(1 + width..1 + width + 7) == Some(b"learner")
}

/// word2vec's binary format (`save_word2vec_format(binary=True)`, the original C tool): a text
/// line `<words> <dimensions>\n`, then each word, a space and raw floats. Only asked of content
/// that is not text (the floats), so a text vector file stays text.
pub fn is_word2vec_binary(head: &[u8]) -> bool {
    let Some(end) = head.iter().take(48).position(|&b| b == b'\n') else {
        return false;
    };
    let line = &head[..end];
    let mut parts = line.split(|&b| b == b' ');
    let number = |p: Option<&[u8]>| {
        p.is_some_and(|p| {
            !p.is_empty() && p.len() <= 12 && p.iter().all(u8::is_ascii_digit) && p[0] != b'0'
        })
    };
    number(parts.next()) && number(parts.next()) && parts.next().is_none()
}

/// The legacy (pre-1.6) PyTorch format starts with a protocol-2 pickle of a long magic number.
pub fn is_legacy_torch(head: &[u8]) -> bool {
    // \x80\x02 PROTO 2, \x8a\x0a LONG1 of 10 bytes, then 0x1950a86a20f9469cfc6c little-endian.
    head.starts_with(b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19")
}

/// The weak safetensors signature, checked as a whole: an 8-byte little-endian length `N` that
/// fits the file and the 100 MB cap of the reference reader, then `{`, then a header that is
/// text (UTF-8 without NUL) and, when all of it is in `head`, ends with `}` before its padding.
///
/// A length prefix and a brace are cheap to match by accident: eight ASCII bytes read as a
/// little-endian number are at least 0x2020_2020_2020_2020, so no text file passes the "fits the
/// file" test, and a binary file with a small count before a `{` fails the text test. A file that
/// fails here but is *named* `.safetensors` still goes to the validator (see `inspect::dispatch`),
/// which then says exactly which rule it breaks; so a broken header with an absurd `N` is still
/// reported, only never decided by content alone.
fn is_safetensors(head: &[u8], size: u64) -> bool {
    let Some(len) = head.get(0..8) else {
        return false;
    };
    let mut b = [0u8; 8];
    b.copy_from_slice(len);
    let n = u64::from_le_bytes(b);
    // 100 MB is the reference reader's own header cap: a larger N is no file it would open, and
    // the cap keeps text out even where the size is unknown (an archive member).
    if head.get(8) != Some(&b'{') || n < 2 || n > size.saturating_sub(8) || n > 100_000_000 {
        return false;
    }
    let end = usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_add(8))
        .unwrap_or(usize::MAX);
    let Some(visible) = head.get(8..end.min(head.len())) else {
        return false;
    };
    if !is_text(visible) {
        return false;
    }
    if end <= head.len() {
        let trimmed = visible.trim_ascii_end();
        return trimmed.last() == Some(&b'}');
    }
    true
}

/// Whether the bytes look like text: valid UTF-8 (a sequence cut at the end of `head` is fine)
/// without NUL bytes.
pub fn is_text(head: &[u8]) -> bool {
    if head.contains(&0) {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && e.valid_up_to() + 4 > head.len(),
    }
}

/// Refines a text format by name.
pub fn text_format(rel: &str) -> Format {
    match extension(rel).as_str() {
        "py" | "pyi" => Format::Python,
        "ipynb" => Format::Notebook,
        "json" | "jsonl" => Format::Json,
        "yaml" | "yml" => Format::Yaml,
        "toml" => Format::Toml,
        "md" | "markdown" => Format::Markdown,
        "jinja" => Format::Jinja,
        _ => Format::Text,
    }
}

/// Card file names, in order of preference.
pub const CARD_NAMES: &[&str] = &["README.md", "MODEL_CARD.md", "model_card.md", "README.MD"];

/// The role of a file from its final format and its name.
pub fn kind_of(rel: &str, format: Format) -> Kind {
    let name = basename(rel);
    let lower = name.to_ascii_lowercase();
    let ext = extension(rel);
    if format.is_weights() || matches!(format, Format::Pickle | Format::PytorchLegacy) {
        return Kind::Weights;
    }
    if format == Format::LfsPointer && WEIGHT_EXTENSIONS.contains(&ext.as_str()) {
        return Kind::Weights;
    }
    if format == Format::OnnxTensor {
        return Kind::Data;
    }
    // Issue 31: native objects and bytecode are code a loader can run, whatever their name.
    if format.is_native() || format == Format::PythonBytecode {
        return Kind::Code;
    }
    if CARD_NAMES.contains(&name) {
        return Kind::ModelCard;
    }
    if lower.starts_with("tokenizer")
        || lower == "vocab.txt"
        || lower == "vocab.json"
        || lower == "merges.txt"
        || lower == "special_tokens_map.json"
        || lower == "added_tokens.json"
        || lower.ends_with(".tiktoken")
        || (ext == "model" && lower.contains("spiece"))
        || lower == "sentencepiece.bpe.model"
        // Chat templates: transformers saves them with the tokenizer or processor.
        || ext == "jinja"
        || lower == "chat_template.json"
    {
        return Kind::Tokenizer;
    }
    match ext.as_str() {
        "py" | "pyi" | "ipynb" | "sh" | "bash" | "js" | "ts" | "rs" | "c" | "cc" | "cpp" | "cu"
        | "h" | "hpp" | "go" | "java" | "rb" | "pl" | "ps1" | "bat" | "cmd" | "jar" | "class" => {
            Kind::Code
        }
        "json" | "yaml" | "yml" | "toml" | "cfg" | "ini" | "conf" => Kind::Config,
        "csv" | "tsv" | "parquet" | "arrow" | "jsonl" | "txt" | "feather" | "avro" | "tfrecord" => {
            Kind::Data
        }
        _ if matches!(
            format,
            Format::Zip
                | Format::Gzip
                | Format::Bzip2
                | Format::Xz
                | Format::Zlib
                | Format::Lzma
                | Format::Tar
                | Format::SevenZip
                | Format::Rar
                | Format::Hdf5
        ) && WEIGHT_EXTENSIONS.contains(&ext.as_str()) =>
        {
            Kind::Weights
        }
        _ => Kind::Other,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fasttext_word2vec_and_tf_checkpoints_issue_15() {
        let mut ft = 793_712_314u32.to_le_bytes().to_vec();
        ft.extend_from_slice(&12u32.to_le_bytes());
        assert_eq!(sniff(&ft, 8), Format::Fasttext);
        ft[4] = 0;
        assert_ne!(sniff(&ft, 8), Format::Fasttext, "version 0 is not fastText");
        assert!(is_word2vec_binary(b"2747 10\nthe \xb9\xc8"));
        assert!(!is_word2vec_binary(b"2747 10 3\nthe"));
        assert!(!is_word2vec_binary(b"02 10\nthe"));
        assert!(!is_word2vec_binary(b"two 10\nthe"));
        assert!(is_tf_checkpoint("v/variables.data-00000-of-00001", b"\x66"));
        assert!(!is_tf_checkpoint(
            "v/variables.data-0000x-of-00001",
            b"\x66"
        ));
        assert!(is_tf_checkpoint(
            "v/variables.index",
            b"\x00\x00\x06\x08\x01"
        ));
        assert!(!is_tf_checkpoint("faiss.index", b"IxF2"));
    }

    use super::*;

    fn st(header: &str) -> Vec<u8> {
        let mut v = (header.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(header.as_bytes());
        v
    }

    #[test]
    fn sniffs_each_magic() {
        let s = st("{}");
        assert_eq!(sniff(&s, s.len() as u64), Format::Safetensors);
        assert_eq!(sniff(b"PK\x03\x04rest", 10), Format::Zip);
        assert_eq!(sniff(b"\x93NUMPY\x01\x00", 10), Format::Numpy);
        assert_eq!(sniff(b"GGUF\x03\x00\x00\x00", 10), Format::Gguf);
        assert_eq!(sniff(b"\x89HDF\r\n\x1a\n\x00", 10), Format::Hdf5);
        assert_eq!(sniff(b"\x1c\x00\x00\x00TFL3\x00\x00", 10), Format::Tflite);
        assert_eq!(sniff(b"\x1f\x8b\x08\x00", 10), Format::Gzip);
        assert_eq!(sniff(b"BZh91AY", 10), Format::Bzip2);
        assert_eq!(sniff(b"\xfd7zXZ\x00\x00", 10), Format::Xz);
        assert_eq!(sniff(b"\x78\x9c\x01\x02", 10), Format::Zlib);
        assert_eq!(sniff(b"\x80\x04\x95\x00", 10), Format::Pickle);
        assert_eq!(
            sniff(
                b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.",
                20
            ),
            Format::PytorchLegacy
        );
        assert_eq!(
            sniff(b"version https://git-lfs.github.com/spec/v1\n", 50),
            Format::LfsPointer
        );
        assert_eq!(sniff(b"hello", 5), Format::Text);
        assert_eq!(sniff(b"\x00\x01\x02", 3), Format::Unknown);
        assert_eq!(sniff(b"", 0), Format::Empty);
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        assert_eq!(sniff(&tar, 1024), Format::Tar);
    }

    #[test]
    fn weak_safetensors_signature_needs_a_plausible_header() {
        // Issue 15, cause 1: text whose ninth byte is `{` (byte-exact neighbours).
        let py = b"P={'a': {'b': 1}}\n";
        assert_eq!(py[8], b'{');
        assert_eq!(sniff(py, py.len() as u64), Format::Text);
        let notes = b"Notes:\n\n{todo} check the weights\n";
        assert_eq!(notes[8], b'{');
        assert_eq!(sniff(notes, notes.len() as u64), Format::Text);
        // A binary record with a small count, then `{`, then NULs: not a JSON header.
        let mut bin = 4u64.to_le_bytes().to_vec();
        bin.extend_from_slice(b"{\0\0\0\x01\x02");
        assert_eq!(sniff(&bin, bin.len() as u64), Format::Unknown);
        // A header that does not close within its length.
        let open = st("{\"a\":1 ");
        assert_eq!(sniff(&open, open.len() as u64), Format::Unknown);
        // A length past the end of the file.
        let mut past = st("{}");
        past[0] = 200;
        assert_eq!(sniff(&past, past.len() as u64), Format::Unknown);
        // Text where the size is unknown (an archive member): its would-be length is absurd.
        assert_eq!(sniff(py, u64::MAX), Format::Text);
        // Space padding after `}` is what writers do.
        let padded = st("{}      ");
        assert_eq!(sniff(&padded, padded.len() as u64), Format::Safetensors);
        // A header longer than `head` is judged on what is visible.
        let mut long = st(&format!(
            "{{\"__metadata__\":{{\"k\":\"{}\"}}}}",
            "v".repeat(100)
        ));
        let size = long.len() as u64;
        long.truncate(40);
        assert_eq!(sniff(&long, size), Format::Safetensors);
    }

    #[test]
    fn strong_signatures_are_not_taken_for_safetensors() {
        // Each strong magic with a `{` as ninth byte stays what its magic says: its length field
        // is absurd for any real file, and the binary fields after it are not a JSON header.
        for (magic, want) in [
            (&b"PK\x03\x04\x14\x00\x00\x00{"[..], Format::Zip),
            (b"GGUF\x03\x00\x00\x00{", Format::Gguf),
            (b"\x89HDF\r\n\x1a\n{", Format::Hdf5),
            (b"\x93NUMPY\x01\x00{", Format::Numpy),
        ] {
            let mut v = magic.to_vec();
            v.extend_from_slice(b"\x00\x00\x01\x00 }");
            assert_eq!(sniff(&v, v.len() as u64), want, "{magic:?}");
            assert_eq!(sniff(&v, 1 << 50), want, "{magic:?} in a huge file");
        }
        // A real pickle cannot be a plausible safetensors: bytes 5..8 of its length would be
        // zero, which no opcode sequence after PROTO produces.
        let p = b"\x80\x02}q\x00(X\x01\x00\x00\x00aK\x01u.";
        assert_eq!(sniff(p, p.len() as u64), Format::Pickle);
    }

    #[test]
    fn extension_is_lowercased_and_dotfiles_have_none() {
        assert_eq!(extension("a/B.SafeTensors"), "safetensors");
        assert_eq!(extension(".gitattributes"), "");
        assert_eq!(extension("dir.d/file"), "");
    }

    #[test]
    fn kinds_from_names() {
        assert_eq!(kind_of("README.md", Format::Markdown), Kind::ModelCard);
        assert_eq!(kind_of("tokenizer.json", Format::Json), Kind::Tokenizer);
        assert_eq!(kind_of("config.json", Format::Json), Kind::Config);
        assert_eq!(kind_of("modeling.py", Format::Python), Kind::Code);
        assert_eq!(kind_of("x.txt", Format::Pickle), Kind::Weights);
    }

    #[test]
    fn compound_torch_names_claim_the_torch_family() {
        // Issue 15, cause 3.
        for name in ["model_best.pth.tar", "ckpt/Checkpoint.PT.TAR", "x.ckpt.tar"] {
            let c = claimed_format(name).unwrap();
            for f in [
                Format::PytorchZip,
                Format::PytorchLegacy,
                Format::Pickle,
                Format::Tar,
            ] {
                assert!(c.contains(&f), "{name} {f:?}");
            }
            assert!(!c.contains(&Format::Gguf), "{name}");
        }
        let ckpt = claimed_format("last.ckpt").unwrap();
        assert!(ckpt.contains(&Format::PytorchZip) && ckpt.contains(&Format::Zip));
        assert!(!ckpt.contains(&Format::Onnx));
        // A plain tar name still claims a tar only.
        assert!(
            !claimed_format("data.tar")
                .unwrap()
                .contains(&Format::PytorchZip)
        );
    }

    #[test]
    fn route_lets_names_decide_only_what_content_left_open() {
        let none = Probes::default();
        let r = |rel, head: &[u8], sniffed, p: &Probes| route(rel, head, sniffed, p);
        // The safetensors name sends broken and empty content to the validator...
        assert_eq!(
            r("m.safetensors", b"hello", Format::Text, &none),
            Route::As(Format::Safetensors)
        );
        assert_eq!(
            r("m.safetensors", b"", Format::Empty, &none),
            Route::As(Format::Safetensors)
        );
        // ...but not a pickle, and never overrides a strong signature.
        let pickle = Probes {
            pickle: true,
            ..Probes::default()
        };
        assert_eq!(
            r("m.safetensors", b"(", Format::Text, &pickle),
            Route::As(Format::Pickle)
        );
        assert_eq!(
            r("m.safetensors", b"PK", Format::Zip, &none),
            Route::As(Format::Zip)
        );
        assert_eq!(
            r("m.onnx", b"GGUF", Format::Gguf, &none),
            Route::As(Format::Gguf)
        );
        // TensorFlow and ONNX protobufs.
        assert_eq!(
            r("a/saved_model.pb", b"x", Format::Unknown, &none),
            Route::As(Format::TfSavedmodel)
        );
        let saved = Probes {
            tf_saved_model: true,
            ..Probes::default()
        };
        assert_eq!(
            r("x.bin", b"x", Format::Unknown, &saved),
            Route::As(Format::TfSavedmodel)
        );
        assert_eq!(
            r("m.onnx", b"x", Format::Text, &none),
            Route::As(Format::Onnx)
        );
        assert_eq!(
            r("graph.pb", b"x", Format::Unknown, &none),
            Route::As(Format::TfGraph)
        );
        // Core ML and msgpack need both the name and a plausible first byte, and binary content.
        assert_eq!(
            r("m.mlmodel", b"\x08\x04", Format::Unknown, &none),
            Route::As(Format::Coreml)
        );
        assert_eq!(
            r("m.mlmodel", b"\x09", Format::Unknown, &none),
            Route::As(Format::Unknown)
        );
        assert_eq!(
            r("m.msgpack", b"\x82", Format::Unknown, &none),
            Route::As(Format::Msgpack)
        );
        assert_eq!(
            r("m.msgpack", b"\x82", Format::Text, &none),
            Route::As(Format::Text)
        );
        // Issue 40: Flax/Orbax checkpoint names, Paddle names, Core ML blobs by content.
        for name in ["checkpoint_1000", "a/checkpoint", "m.ckpt"] {
            assert_eq!(
                r(name, b"\x82", Format::Unknown, &none),
                Route::As(Format::Msgpack),
                "{name}"
            );
        }
        assert_eq!(
            r("checkpoint_x", b"\x82", Format::Unknown, &none),
            Route::As(Format::Unknown)
        );
        assert_eq!(
            r("inference.pdmodel", b"\x0a\x10", Format::Unknown, &none),
            Route::As(Format::Paddle)
        );
        assert_eq!(
            r("inference.pdiparams", b"\0\0\0\0\0", Format::Unknown, &none),
            Route::As(Format::PaddleParams)
        );
        let mut blob = vec![0u8; 64];
        blob[4] = 2;
        assert_eq!(
            r("anything.dat", &blob, Format::Unknown, &none),
            Route::As(Format::CoremlWeights)
        );
        blob[0] = 1;
        assert_eq!(
            r("anything.dat", &blob, Format::Unknown, &none),
            Route::As(Format::Unknown),
            "a declared blob needs its sentinel"
        );
        // lzma-alone is believed only under a joblib/pickle name.
        let lzma = Probes {
            lzma: true,
            ..Probes::default()
        };
        assert_eq!(
            r("m.joblib", b"]", Format::Unknown, &lzma),
            Route::As(Format::Lzma)
        );
        assert_eq!(
            r("m.dat", b"]", Format::Unknown, &lzma),
            Route::As(Format::Unknown)
        );
        // Content-only probes apply under any name.
        let zf = Probes {
            joblib_zf: true,
            ..Probes::default()
        };
        assert_eq!(r("notes.txt", b"ZF0x", Format::Text, &zf), Route::JoblibZf);
        assert_eq!(
            r("notes.txt", b"(", Format::Text, &pickle),
            Route::As(Format::Pickle)
        );
        assert_eq!(
            r("notes.txt", b"hi", Format::Text, &none),
            Route::As(Format::Text)
        );
    }
}
