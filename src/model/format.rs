//! The vocabulary of what a file is: its [`Format`] (from content) and the [`Kind`] of role it
//! plays. Classification (`crate::classify`) decides them; everything after reads them.

use serde::Serialize;

/// The role a file plays in a model repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Model weights or any serialized model.
    Weights,
    /// Source code (Python, notebooks, shell).
    Code,
    /// Configuration (`config.json`, generation config, YAML/TOML configs).
    Config,
    /// A model card.
    ModelCard,
    /// Tokenizer files.
    Tokenizer,
    /// Data sets.
    Data,
    /// Anything else.
    Other,
}

impl Kind {
    /// Kebab-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Weights => "weights",
            Kind::Code => "code",
            Kind::Config => "config",
            Kind::ModelCard => "model-card",
            Kind::Tokenizer => "tokenizer",
            Kind::Data => "data",
            Kind::Other => "other",
        }
    }
}

macro_rules! formats {
    ($( $variant:ident => $name:literal, $doc:literal; )*) => {
        /// A file format modelgate recognises.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Format {
            $( #[doc = $doc] $variant, )*
        }
        impl Format {
            /// Every format.
            pub const ALL: &'static [Format] = &[$(Format::$variant),*];
            /// Kebab-case name used in reports.
            pub fn as_str(self) -> &'static str {
                match self { $(Format::$variant => $name),* }
            }
        }
    };
}

formats! {
    Safetensors => "safetensors", "safetensors weights";
    Pickle => "pickle", "a Python pickle stream";
    PytorchZip => "pytorch-zip", "PyTorch zip archive (torch.save since 1.6)";
    PytorchLegacy => "pytorch-legacy", "legacy PyTorch file: a sequence of pickles plus raw storage";
    PytorchTar => "pytorch-tar", "oldest tar-based PyTorch format";
    Torchscript => "torchscript", "TorchScript archive (zip with code/ and constants.pkl)";
    Numpy => "numpy", "NumPy .npy array";
    Npz => "npz", "NumPy .npz archive (zip of .npy)";
    Joblib => "joblib", "joblib pickle (possibly compressed)";
    Zip => "zip", "zip archive";
    Gzip => "gzip", "gzip stream";
    Bzip2 => "bzip2", "bzip2 stream";
    Xz => "xz", "xz stream";
    Zlib => "zlib", "raw zlib stream";
    Lzma => "lzma", "lzma-alone stream";
    Zstd => "zstd", "Zstandard frame(s)";
    Lz4 => "lz4", "LZ4 frame(s)";
    Tar => "tar", "tar archive";
    SevenZip => "7z", "7-Zip archive";
    Rar => "rar", "RAR archive (recognised, not opened)";
    Onnx => "onnx", "ONNX model (protobuf)";
    Gguf => "gguf", "GGUF (llama.cpp) model";
    Hdf5 => "hdf5", "HDF5 file";
    Keras => "keras", "Keras model (v3 zip or legacy HDF5 with a model config)";
    Tflite => "tflite", "TensorFlow Lite flatbuffer";
    TfSavedmodel => "tf-savedmodel", "TensorFlow SavedModel protobuf";
    TfGraph => "tf-graph", "TensorFlow frozen GraphDef protobuf";
    Coreml => "coreml", "Core ML model spec (`.mlmodel`, also inside an `.mlpackage`)";
    CoremlWeights => "coreml-weights", "Core ML weight blob file (an `.mlpackage`'s `weights/weight.bin`: MIL blob storage)";
    Msgpack => "msgpack", "Flax/msgpack serialized weights";
    Paddle => "paddle", "PaddlePaddle inference program (`.pdmodel`: a ProgramDesc protobuf)";
    PaddleParams => "paddle-params", "PaddlePaddle combined parameters (`.pdiparams`: serialized tensors)";
    LfsPointer => "lfs-pointer", "Git LFS pointer (content not present)";
    Python => "python", "Python source";
    Notebook => "notebook", "Jupyter notebook";
    Json => "json", "JSON";
    Yaml => "yaml", "YAML";
    Toml => "toml", "TOML";
    Markdown => "markdown", "Markdown";
    Jinja => "jinja", "Jinja template (`chat_template.jinja`, `additional_chat_templates/*.jinja`): a chat template, judged by FMT005";
    Text => "text", "other UTF-8 text";
    Empty => "empty", "empty file";
    Symlink => "symlink", "a symlink that was not followed";
    Special => "special", "a FIFO, socket or device (never opened)";
    Unknown => "unknown", "unrecognised binary content";
    OnnxTensor => "onnx-tensor", "ONNX TensorProto (or a sequence/optional/map of tensors): test data, not a model";
    Fasttext => "fasttext", "fastText model (.bin/.ftz: word vectors and a linear classifier, no code)";
    Word2vec => "word2vec", "word2vec binary vectors (a count line, then words and floats; no code)";
    TfMetagraph => "tf-metagraph", "TensorFlow 1 checkpoint `.meta` (a MetaGraphDef protobuf)";
    TfCheckpoint => "tf-checkpoint", "TensorFlow checkpoint `.index` table or `.data-*` shard (tensors only)";
    PythonBytecode => "python-bytecode", "compiled Python (`.pyc`): a CPython 3.6-3.14 magic, then a marshalled module";
    Elf => "elf", "ELF executable, shared library or object file";
    Macho => "mach-o", "Mach-O executable or library (thin or fat/universal)";
    Pe => "pe", "PE (Windows) executable or DLL";
    Skops => "skops", "skops (scikit-learn) zip: `schema.json`, a tree of typed nodes skops.io.load builds, plus NumPy members";
    Openvino => "openvino", "OpenVINO IR network XML (`<net>`: layers, their op types and the weight ranges in the `.bin` beside it)";
    OpenvinoWeights => "openvino-weights", "OpenVINO IR weights (`.bin` beside an IR `.xml` of the same stem; raw constants, sized against the XML)";
    Llamafile => "llamafile", "llamafile: a native executable (APE, ELF, PE or Mach-O) with GGUF weights in an appended zip";
    Executorch => "executorch", "ExecuTorch program (`.pte`): a FlatBuffer with identifier `ETxx`";
    Tensorrt => "tensorrt", "TensorRT engine/plan (`ftrt` tag, or `.engine`/`.plan`/`.trt` by name)";
    Xgboost => "xgboost", "XGBoost model (`save_model` JSON or UBJSON: trees and parameters, no code)";
    Lightgbm => "lightgbm", "LightGBM text model (`tree\\nversion=v…`: trees and parameters, no code)";
    Catboost => "catboost", "CatBoost model (`.cbm`, `CBM1` magic: trees and parameters, no code)";
    Ggml => "ggml", "legacy GGML model (`ggml`, `ggmf`, `ggjt`, `ggla` magics: llama.cpp before GGUF, whisper.cpp, the ggml examples)";
}

impl Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Format {
    /// Native code (ELF, Mach-O, PE): what `SRC007` reports in a model directory.
    pub fn is_native(self) -> bool {
        matches!(
            self,
            Format::Elf | Format::Macho | Format::Pe | Format::Llamafile
        )
    }

    /// Formats that are serialized models (weights) whatever their name.
    pub fn is_weights(self) -> bool {
        matches!(
            self,
            Format::Safetensors
                | Format::PytorchZip
                | Format::PytorchLegacy
                | Format::PytorchTar
                | Format::Torchscript
                | Format::Numpy
                | Format::Npz
                | Format::Joblib
                | Format::Onnx
                | Format::Gguf
                | Format::Keras
                | Format::Tflite
                | Format::TfSavedmodel
                | Format::TfGraph
                | Format::Coreml
                | Format::CoremlWeights
                | Format::Msgpack
                | Format::Paddle
                | Format::PaddleParams
                | Format::Fasttext
                | Format::Word2vec
                | Format::TfMetagraph
                | Format::TfCheckpoint
                | Format::Skops
                | Format::Openvino
                | Format::OpenvinoWeights
                | Format::Ggml
                | Format::Llamafile
                | Format::Executorch
                | Format::Tensorrt
                | Format::Xgboost
                | Format::Lightgbm
                | Format::Catboost
        )
    }
}

/// The `.pyc` magic numbers of each CPython 3.x release line, as data: `(minor, first, last)`,
/// each line's range of magic numbers from its alphas to its final release
/// (`Include/internal/pycore_magic_number.h`; `Lib/importlib/_bootstrap_external.py` before 3.13).
/// The final release's number is the range's last. Since 3.11 line `3.n` starts at `2900 + 50n`.
pub const PYC_MAGIC_RANGES: &[(u8, u16, u16)] = &[
    (6, 3360, 3379),
    (7, 3390, 3394),
    (8, 3400, 3413),
    (9, 3420, 3425),
    (10, 3430, 3439),
    (11, 3450, 3495),
    (12, 3500, 3531),
    (13, 3550, 3571),
    (14, 3600, 3627),
];

/// The minor version whose magic number `magic` is, if it is a known 3.6–3.14 magic.
pub fn pyc_version(magic: u16) -> Option<u8> {
    PYC_MAGIC_RANGES
        .iter()
        .find(|(_, lo, hi)| (*lo..=*hi).contains(&magic))
        .map(|(v, _, _)| *v)
}

/// Whether the first bytes are a `.pyc` header of a known version: a magic number from
/// [`PYC_MAGIC_RANGES`] followed by `\r\n`.
pub fn is_pyc(head: &[u8]) -> bool {
    match head {
        [a, b, b'\r', b'\n', ..] => pyc_version(u16::from_le_bytes([*a, *b])).is_some(),
        _ => false,
    }
}
