//! The one table of resource limits.
//!
//! Every length, count, depth and size the scanner reads from a file is checked against a named
//! limit before it allocates or loops. Each limit is declared exactly once, in the `limits!`
//! invocation below (name, default, bounds, one line of documentation). From that one place come:
//! the typed [`Limits`] every parser takes its bounds from, the [`LIMITS`] table the policy's
//! `[limits]` parser validates against, the `policies/README.md` table (a test checks it) and
//! the comments `modelgate policy init` writes.
//!
//! A limit is not a format rule: hitting one is `SCAN004 limit-exceeded` (naming the limit and how
//! to raise it), never the format's "invalid" rule.

/// A named resource limit as the policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitSpec {
    /// The name used in `[limits]`.
    pub name: &'static str,
    /// The value when the policy does not set it.
    pub default: u64,
    /// The smallest accepted value.
    pub min: u64,
    /// The largest accepted value.
    pub max: u64,
    /// One line: what the limit bounds.
    pub doc: &'static str,
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;
const TIB: u64 = 1024 * GIB;
/// No upper bound beyond what a TOML integer can say.
const ANY: u64 = i64::MAX as u64;

/// The largest safetensors header any policy may allow: the safetensors library itself refuses
/// bigger headers, so a larger value would only let a header-bomb through.
pub const MAX_SAFETENSORS_HEADER: u64 = 100_000_000;

/// The largest `archive_depth` a policy may set: archive nesting is walked by recursion, about
/// 16 KiB of stack a level in a debug build (zip in zip; measured, see [`WORKER_STACK_BYTES`]).
pub const MAX_ARCHIVE_DEPTH: u64 = 64;

/// The largest `json_depth` a policy may set: the safetensors header check descends once a
/// level, about 2 KiB of stack a level in a debug build (see [`WORKER_STACK_BYTES`]).
pub const MAX_JSON_DEPTH: u64 = 1024;

/// Stack of every thread that reads scanned files (the scan's workers, remote and `verify`
/// workers, `inspect`), the second line of defence behind the depth limits (issue 37): every
/// recursive walker stops at a limit with a finding first; this is sized so that the deepest
/// walk any policy can allow fits several times over.
///
/// Measured on a debug build (the largest frames; `RUST_MIN_STACK` bisected for the smallest
/// stack a scan of the file survives, before this constant existed): defaults: a YAML config
/// 128 deep 456 KiB, a safetensors header 128 deep 288 KiB, `config.json` 127 deep 228 KiB,
/// zips nested 4 deep 132 KiB; at the largest settable limits: zips nested 64 deep 1.04 MiB
/// (`MAX_ARCHIVE_DEPTH`), a safetensors header 1,000 deep 1.93 MiB (`MAX_JSON_DEPTH`), which
/// is about the 2 MiB a thread gets by default. 16 MiB leaves eight times the deepest of them
/// for the judges' own bounded walks and for release builds to differ; it is address space,
/// not memory, until a walk touches it.
pub const WORKER_STACK_BYTES: usize = 16 << 20;

macro_rules! limits {
    ($( $(#[$attr:meta])* $name:ident = $default:expr, [$min:expr, $max:expr], $doc:literal; )*) => {
        /// Every resource limit, typed. Built from the policy (`Policy::limits`); the default is
        /// each limit's documented default.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Limits {
            $( #[doc = $doc] $(#[$attr])* pub $name: u64, )*
        }

        impl Default for Limits {
            fn default() -> Self {
                Limits { $( $name: $default, )* }
            }
        }

        /// Every limit, in declaration order. Unknown names in `[limits]` are errors.
        pub const LIMITS: &[LimitSpec] = &[
            $( LimitSpec { name: stringify!($name), default: $default, min: $min, max: $max, doc: $doc }, )*
        ];

        impl Limits {
            /// The value of the limit called `name`.
            pub fn get(&self, name: &str) -> Option<u64> {
                match name {
                    $( stringify!($name) => Some(self.$name), )*
                    _ => None,
                }
            }

            /// Sets the limit called `name`; false when there is no such limit.
            pub fn set(&mut self, name: &str, value: u64) -> bool {
                match name {
                    $( stringify!($name) => { self.$name = value; true } )*
                    _ => false,
                }
            }
        }
    };
}

limits! {
    max_files = 1_000_000, [0, ANY], "files visited by the walk";
    max_file_bytes = TIB, [0, ANY], "size of one file that is read and hashed";
    max_depth = 256, [0, ANY], "directory levels below the scan root";
    safetensors_header_bytes = MAX_SAFETENSORS_HEADER, [1, MAX_SAFETENSORS_HEADER],
        "safetensors JSON header size (same as `[safetensors] max_header_bytes`)";
    pickle_opcodes = 50_000_000, [0, ANY], "opcodes walked in one pickle stream";
    // Sized for real files (issue 15): a 20 MB data-only pickle holds 1.26 million memo entries.
    pickle_memo = 20_000_000, [0, ANY], "memo entries tracked in one pickle stream";
    safetensors_tensor_count = 1_000_000, [0, ANY], "tensors declared in one safetensors header";
    tensor_rank = 1024, [0, ANY],
        "dimensions of one safetensors tensor (the format sets no limit; a valid 65-dim tensor passes)";
    // A protocol-0 STRING/UNICODE line is streamed and only a short prefix is kept (like a long
    // binary string), so this bounds reading, not memory: a CRF model's multi-megabyte line is
    // data, not a malformed pickle (issue 15, cause 9).
    pickle_string_bytes = GIB, [0, ANY],
        "longest protocol-0 pickle string line read (only a prefix is kept in memory)";
    // Each level is a recursion (member -> zip/tar/decompressor -> member); the bound keeps
    // it inside WORKER_STACK_BYTES (issue 37).
    archive_depth = 4, [0, MAX_ARCHIVE_DEPTH], "archives nested inside archives";
    archive_members = 100_000, [0, ANY], "members of one archive";
    archive_member_bytes = 16 * GIB, [0, ANY], "decompressed size of one archive member";
    archive_total_bytes = 64 * GIB, [0, ANY],
        "decompressed size of all members of one archive";
    archive_ratio = 1000, [0, ANY],
        "decompressed/compressed size ratio of a member (zip bombs)";
    // The safetensors header check descends once per level; the bound keeps it inside
    // WORKER_STACK_BYTES (issue 37). serde_json stops at 128 whatever this says.
    json_depth = 128, [0, MAX_JSON_DEPTH], "nesting depth of JSON documents";
    // The YAML parser refuses deeper documents itself (issue 37), so this can only be lowered.
    yaml_depth = 128, [0, 128], "nesting depth of YAML configs (the YAML parser stops at 128)";
    // The YAML parser bounds alias replays, not what they build: a few KiB of aliases can
    // expand to millions of nodes (issue 37). A node is about 100 bytes in memory.
    yaml_nodes = 1_000_000, [0, ANY],
        "nodes of one YAML document once its aliases are expanded (configs, card front matter)";
    loader_fields = 4096, [0, ANY],
        "config fields that make a loader fetch or import code, kept from one config file";
    json_bytes = 64 * MIB, [0, ANY], "config, index and notebook files read into memory";
    yaml_bytes = 256 * KIB, [0, ANY], "model-card YAML front matter read";
    code_file_bytes = 8 * MIB, [0, ANY], "source files read by the code scan";
    gguf_kv_count = 1_000_000, [0, ANY], "GGUF metadata key/value pairs";
    gguf_tensor_count = 1_000_000, [0, ANY], "GGUF tensor descriptors (and legacy GGML tensor records)";
    gguf_metadata_bytes = 512 * MIB, [0, ANY], "GGUF metadata section size";
    onnx_depth = 64, [0, ANY], "ONNX protobuf nesting depth (subgraphs)";
    tf_depth = 64, [0, ANY], "TensorFlow graph protobuf nesting depth (functions, attributes)";
    // Issue 40: Flax msgpack, Core ML and PaddlePaddle protobuf walks (explicit stacks).
    msgpack_depth = 128, [0, ANY], "nesting depth of msgpack arrays and maps (Flax/JAX checkpoints)";
    coreml_depth = 64, [0, ANY], "Core ML model spec protobuf nesting depth (pipelines, branches, loops)";
    paddle_depth = 64, [0, ANY], "PaddlePaddle program protobuf nesting depth";
    hdf5_messages = 4096, [0, ANY], "object header messages read for an HDF5 root group";
    tflite_operator_codes = 4096, [0, ANY], "operator codes read from a TFLite model (and operators from an ExecuTorch program)";
    numpy_header_bytes = 64 * KIB, [0, ANY], "NumPy `.npy` header dictionary size";
    // Literal blobs in shipped Python (issue 30): payloads are kilobytes; a bigger output is a
    // decompression bomb, not code anyone hides.
    blob_decoded_bytes = 16 * MIB, [0, ANY],
        "bytes one literal blob in Python code may decode to, at every step of its decode chain";
    blob_decode_steps = 64, [0, ANY],
        "codec steps (base64, zlib, rot13, ...) applied to one literal blob";
    blob_nesting_depth = 8, [0, ANY],
        "decoded payloads analysed again inside decoded payloads (code hidden in decoded code)";
    // Issue 37: one evaluation budget per Python file for the code judge (names followed,
    // strings and blobs built, payloads decoded and analysed again); sized far above what
    // real model code and the standard library spend.
    code_eval_steps = 4_000_000, [0, ANY],
        "evaluation steps the code judge spends on one Python file (names, strings, blobs)";
    code_eval_bytes = 64 * MIB, [0, ANY],
        "bytes of strings, blobs and decoded payloads the code judge builds for one Python file";
    code_eval_depth = 64, [1, 128],
        "nesting of expressions the code judge follows (names, calls, strings, decoded code)";
    // Issue 31: Python bytecode and native objects.
    bytecode_bytes = 64 * MIB, [0, ANY], "`.pyc` files read into memory to walk their marshal data";
    marshal_depth = 1000, [0, ANY], "nesting depth of marshal objects (CPython allows 2000)";
    marshal_objects = 10_000_000, [0, ANY], "objects read from one marshal stream";
    native_bytes = 512 * MIB, [0, ANY], "ELF, Mach-O and PE files read into memory for their headers and imports";
    native_symbols = 1_000_000, [0, ANY], "imported symbols read from one native object file";
}

/// A limit as a `usize` count or length (saturating on 32-bit targets, where a larger value
/// could not be reached anyway).
pub fn usize_of(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// A limit as a `u32` (saturating: a larger value means "no bound" for a `u32` counter).
pub fn u32_of(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// The limit called `name`, if there is one.
pub fn limit_spec(name: &str) -> Option<&'static LimitSpec> {
    LIMITS.iter().find(|l| l.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_defaults_in_bounds() {
        let mut names: Vec<&str> = LIMITS.iter().map(|l| l.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), LIMITS.len());
        let d = Limits::default();
        for spec in LIMITS {
            assert!(
                (spec.min..=spec.max).contains(&spec.default),
                "{}",
                spec.name
            );
            assert_eq!(d.get(spec.name), Some(spec.default));
        }
    }

    #[test]
    fn set_and_get_by_name() {
        let mut l = Limits::default();
        assert!(l.set("archive_depth", 2));
        assert_eq!(l.archive_depth, 2);
        assert!(!l.set("no_such_limit", 1));
        assert_eq!(l.get("no_such_limit"), None);
    }
}
