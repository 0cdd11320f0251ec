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
    SevenZip => "7z", "7-Zip archive (recognised, not opened)";
    Rar => "rar", "RAR archive (recognised, not opened)";
    Onnx => "onnx", "ONNX model (protobuf)";
    Gguf => "gguf", "GGUF (llama.cpp) model";
    Hdf5 => "hdf5", "HDF5 file";
    Keras => "keras", "Keras model (v3 zip or legacy HDF5 with a model config)";
    Tflite => "tflite", "TensorFlow Lite flatbuffer";
    TfSavedmodel => "tf-savedmodel", "TensorFlow SavedModel protobuf";
    TfGraph => "tf-graph", "TensorFlow frozen GraphDef protobuf";
    Coreml => "coreml", "Core ML model";
    Msgpack => "msgpack", "Flax/msgpack serialized weights";
    LfsPointer => "lfs-pointer", "Git LFS pointer (content not present)";
    Python => "python", "Python source";
    Notebook => "notebook", "Jupyter notebook";
    Json => "json", "JSON";
    Yaml => "yaml", "YAML";
    Toml => "toml", "TOML";
    Markdown => "markdown", "Markdown";
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
}

impl Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Format {
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
                | Format::Msgpack
                | Format::Fasttext
                | Format::Word2vec
                | Format::TfMetagraph
                | Format::TfCheckpoint
        )
    }
}
