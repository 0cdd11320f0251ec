//! The one table of fact keys.
//!
//! Facts are what the scan learned about a file (or a root), as opposed to judgements: a tensor
//! count, the pickle globals, the LFS oid a pointer names. They are written by the inspectors and
//! the repository checks and read back by the SBOM, the repository checks and the policy, and they
//! appear in the JSON report under `files[].facts` / `repository.roots[]`. Every key is declared
//! once, in the `facts!` invocation below, so a writer and a reader cannot drift apart on a
//! spelling: code names a [`Fact`], never a string (a test in `tests/architecture` refuses string
//! keys), and the README's `facts` table lists exactly these names (a test checks it).

use serde_json::{Map, Value};

macro_rules! facts {
    ($( $variant:ident = $name:literal, $doc:literal; )*) => {
        /// A fact key. Its [`name`](Fact::name) is the key in the JSON report.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Fact {
            $( #[doc = $doc] $variant, )*
        }

        impl Fact {
            /// Every fact key, in declaration order.
            pub const ALL: &[Fact] = &[ $( Fact::$variant, )* ];

            /// The key as it appears in the JSON report.
            pub const fn name(self) -> &'static str {
                match self { $( Fact::$variant => $name, )* }
            }

            /// One line: what the fact holds.
            pub const fn doc(self) -> &'static str {
                match self { $( Fact::$variant => $doc, )* }
            }

            /// The key called `name`, if there is one.
            pub fn from_name(name: &str) -> Option<Fact> {
                match name { $( $name => Some(Fact::$variant), )* _ => None }
            }
        }
    };
}

facts! {
    // Any file.
    SymlinkTarget = "symlink_target", "where a followed symlink points";
    NotFollowed = "not_followed", "why a symlink was not followed (escapes-root, absolute, dangling, loop, directory, special)";
    Special = "special", "what a special file is (fifo, socket, ...); it is never opened";
    LfsCovered = "lfs_covered", "weights: whether a .gitattributes LFS rule covers the file";
    HfRepo = "hf_repo", "Hugging Face cache: the repository id";
    HfCommit = "hf_commit", "Hugging Face cache: the snapshot's commit";
    HfPath = "hf_path", "Hugging Face cache: the path inside the repository";
    HfBlob = "hf_blob", "Hugging Face cache: the blob the snapshot entry links to";
    HfGitBlob = "hf_git_blob", "Hugging Face cache: the git blob id computed for a non-LFS blob";
    Notes = "notes", "checks that could not be completed";
    // Weights (safetensors, GGUF, numpy, archives).
    Valid = "valid", "safetensors: whether every format rule held";
    TensorCount = "tensor_count", "number of tensors";
    Parameters = "parameters", "number of parameters (sum of tensor element counts)";
    Dtypes = "dtypes", "count of tensors per dtype";
    DataBytes = "data_bytes", "bytes of tensor data";
    HeaderLen = "header_len", "safetensors: the header length N";
    Metadata = "metadata", "safetensors: the __metadata__ map";
    FirstTensor = "first_tensor", "safetensors: the tensor at the start of the buffer";
    LastTensor = "last_tensor", "safetensors: the tensor at the end of the buffer";
    ValuesChecked = "values_checked", "safetensors: whether tensor values were checked for NaN/Inf";
    // Pickles, in any container.
    PickleGlobals = "pickle_globals", "sorted module.name of every import";
    PickleProtocol = "pickle_protocol", "protocol of the first pickle";
    PickleCount = "pickle_count", "number of pickles read";
    PickleTrailingOffset = "pickle_trailing_offset", "offset of non-pickle data after the last pickle";
    PickleRawBytes = "pickle_raw_bytes", "joblib array bytes skipped inside pickles";
    TorchWeightsOnly = "torch_weights_only", "pytorch checkpoints: whether torch.load(weights_only=True) accepts it (`accepted`), the globals and opcodes it refuses, and the torch source mirrored";
    // Archives.
    ArchiveLayout = "archive_layout", "pytorch, torchscript, keras, npz, skops, torchserve, nemo or zip";
    ArchiveMembers = "archive_members", "number of members";
    ArchiveMemberNames = "archive_member_names", "member names (the first 1000)";
    ArchivePrefixBytes = "archive_prefix_bytes", "bytes before the first member";
    ArchiveUnexpectedMembers = "archive_unexpected_members", "members a layout does not expect";
    ArchiveCoders = "archive_coders", "7z: the coder chain of each folder (LZMA2, BCJ x86 + LZMA2, ...)";
    Compression = "compression", "compression of a compressed stream";
    DecompressedBytes = "decompressed_bytes", "bytes after decompression";
    // NumPy.
    NpyDtype = "npy_dtype", "numpy: the array dtype";
    NpyShape = "npy_shape", "numpy: the array shape";
    NpyFortranOrder = "npy_fortran_order", "numpy: fortran_order";
    NpyObjectDtype = "npy_object_dtype", "numpy: whether the dtype holds Python objects (a pickle)";
    // LFS pointers.
    LfsOid = "lfs_oid", "the content's SHA-256 a pointer names";
    LfsSize = "lfs_size", "the content's size a pointer names";
    LfsVersion = "lfs_version", "the pointer's version URL";
    LfsMalformed = "lfs_malformed", "why a pointer-like file is not a valid pointer";
    // Other weight formats.
    Gguf = "gguf", "GGUF header facts (version, architecture, counts, tensor types, chat templates)";
    Onnx = "onnx", "ONNX model facts (ir_version, opsets, producer, op types, custom domains)";
    ExternalDataLocations = "external_data_locations", "ONNX: external data locations";
    Hdf5 = "hdf5", "HDF5 facts (superblock, root attributes and members, keras config)";
    Keras = "keras", "Keras config facts";
    KerasMetadata = "keras_metadata", "Keras metadata.json facts";
    Tflite = "tflite", "TFLite facts (version, operator codes, custom ops)";
    Tf = "tf", "TensorFlow graph facts (op types, node and function counts)";
    Skops = "skops", "skops schema facts (protocol, skops version, node count, loaders, the types and callables it names)";
    Openvino = "openvino", "OpenVINO IR facts (version, layer count, op types and opsets, custom layers, weight ranges; on a `.bin`: the IR that describes it)";
    Msgpack = "msgpack", "Flax/JAX msgpack facts (arrays by dtype, the first arrays with key path, shape and bytes, scalars, chunked arrays, other extension types)";
    Coreml = "coreml", "Core ML facts (spec version, model type, layers and their types, custom layers and models; `.mlpackage` manifest items; weight blobs)";
    Paddle = "paddle", "PaddlePaddle facts (program version, blocks, operator types, variables; `.pdiparams` tensors)";
    Llamafile = "llamafile", "llamafile: the executable image's size, the appended zip's members and each embedded GGUF (member, offset, size, its `gguf` facts)";
    Executorch = "executorch", "ExecuTorch facts (identifier, version, extended header, plans, operators, custom ops, delegates with their backend id and blob size, segment count)";
    Tensorrt = "tensorrt", "TensorRT facts (whether the `ftrt` tag is present, serialization version, native images embedded in the plan)";
    Xgboost = "xgboost", "XGBoost facts (encoding, num_trees, version)";
    Lightgbm = "lightgbm", "LightGBM facts (version, num_class, num_tree_per_iteration, objective, tree_count)";
    Catboost = "catboost", "CatBoost facts (core_size)";
    Ggml = "ggml", "legacy GGML facts (magic, version, layout, hparams, vocabulary size, tensor count and types)";
    // Code and configs.
    PythonSyntaxErrors = "python_syntax_errors", "Python: syntax errors met in the statements parsed (scanning goes on)";
    PythonTruncatedBy = "python_truncated_by", "Python: the limit that stopped the scan";
    PythonCapabilities = "python_capabilities", "Python model code: the capabilities its behaviour analysis found (SRC006), each with its site count and worst severity";
    NotebookCellsScanned = "notebook_cells_scanned", "notebook: code cells scanned";
    NotebookLanguage = "notebook_language", "notebook: kernel language";
    NotebookError = "notebook_error", "notebook: why the JSON could not be read";
    Card = "card", "model card facts (front matter, license, datasets, base_model, ...)";
    Config = "config", "config.json facts (architectures, model_type, auto_map, ...)";
    ConfigError = "config_error", "config.json: why it could not be read";
    ConfigTargets = "config_targets", "Hydra-style _target_ names in a config";
    ConfigUnchecked = "config_unchecked", "why a config's instantiation keys were not checked";
    ChatTemplates = "chat_templates", "chat templates a tokenizer/processor config or `.jinja` file carries, by name (`default`, `tool_use`), each judged by FMT005";
    LoaderCode = "loader_code", "config fields that make a loader fetch or import code: loader, field, JSON path, value, target (issue 39)";
    // Repository level (`repository.roots[]`).
    Huggingface = "huggingface", "repository: the Hugging Face cache's identity and snapshots";
    ModelDirs = "model_dirs", "repository: directories that hold a model";
    Signature = "signature", "repository: the OMS signature checked (file, digest, verified, signer, reason)";
    Hub = "hub", "remote scans: the Hub's record of a file (oid, lfs, scan status) or of the repository (commit, purl)";
    Roots = "roots", "repository: each root's path, git and Hugging Face facts (multi-root scans)";
    // Model packages (issue 17).
    Torchserve = "torchserve", "TorchServe .mar: MAR-INF/MANIFEST.json (handler, serialized file, model file, runtime)";
    Mlflow = "mlflow", "MLflow MLmodel: flavors and their model files, loader module, code paths";
    Coverage = "coverage", "header-mode remote scans: what was read of a file (level, bytes_read, unread, not_checked) or of the repository";
    // Native code and bytecode (issue 31).
    Native = "native", "ELF/Mach-O/PE: format, architecture, kind (executable, library, object), initialisers, notable imports, fat slices";
    Bytecode = "bytecode", "compiled Python: python version, magic, header (timestamp or hash), code objects, names, resolved calls, the source it matches";
}

impl Fact {
    /// The key as an owned map key.
    pub fn key(self) -> String {
        self.name().to_owned()
    }
}

/// Typed access to a facts map (the JSON object stored in the report).
pub trait FactMap {
    /// The value of a fact, if recorded.
    fn fact(&self, key: Fact) -> Option<&Value>;
    /// Records a fact, replacing an earlier value.
    fn set_fact(&mut self, key: Fact, value: impl Into<Value>);
    /// Removes a fact, returning its value.
    fn take_fact(&mut self, key: Fact) -> Option<Value>;
    /// The strings of a list-of-strings fact (empty when absent; non-strings skipped).
    fn fact_strings(&self, key: Fact) -> Vec<String> {
        self.fact(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl FactMap for Map<String, Value> {
    fn fact(&self, key: Fact) -> Option<&Value> {
        self.get(key.name())
    }

    fn set_fact(&mut self, key: Fact, value: impl Into<Value>) {
        self.insert(key.key(), value.into());
    }

    fn take_fact(&mut self, key: Fact) -> Option<Value> {
        self.remove(key.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for &f in Fact::ALL {
            let n = f.name();
            assert!(seen.insert(n), "duplicate fact name {n}");
            assert!(
                n.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{n} is not snake_case"
            );
            assert_eq!(Fact::from_name(n), Some(f));
            assert!(!f.doc().is_empty());
        }
        assert_eq!(Fact::from_name("no_such_fact"), None);
    }

    #[test]
    fn map_access_uses_the_name() {
        let mut m = Map::new();
        m.set_fact(Fact::TensorCount, 3);
        assert_eq!(m.get("tensor_count"), Some(&Value::from(3)));
        assert_eq!(m.fact(Fact::TensorCount), Some(&Value::from(3)));
        assert_eq!(m.take_fact(Fact::TensorCount), Some(Value::from(3)));
        assert!(m.is_empty());
    }
}
