//! Per-file inspection: one sequential read feeds the digests and the format inspector.
//!
//! `scan_file` opens a file without following links or blocking on FIFOs, sniffs its first
//! block, picks an inspector by content, lets it pull what it needs through a
//! [`read::HashingReader`], then drains the rest so the digest covers every byte. Inspectors are
//! pure functions of the bytes (under [`Limits`]); they record facts and detections and never
//! execute anything.

pub mod archive;
pub mod blocks;
pub mod compress;
pub mod config;
pub mod context;
pub mod coreml;
pub mod executorch;
mod flatbuf;
pub mod formats;
pub mod ggml;
pub mod gguf;
pub mod hdf5;
pub mod keras;
pub mod llamafile;
pub mod msgpack;
pub mod native;
pub mod numpy;
pub mod onnx;
pub mod openvino;
pub mod package;
pub mod paddle;
pub mod pickle;
pub mod pickle_stream;
pub mod polyglot;
pub mod problem;
pub mod protobuf;
pub mod pyc;
pub mod ranged;
pub mod read;
pub mod safetensors;
mod scan;
pub mod sevenz;
pub mod skops;
pub mod source;
pub mod tar;
pub mod template;
pub mod tensorrt;
pub mod tf;
pub mod tflite;
pub mod torchscript;
pub mod trees;
pub mod zip;

/// The FlatBuffer builder and ExecuTorch programs of the CLI tests (issue 40).
#[cfg(test)]
#[path = "../../tests/support/executorch.rs"]
pub(crate) mod executorch_fixtures;
#[cfg(test)]
mod limit_tests;
/// Byte-exact Flax, Core ML and Paddle fixtures, shared with the CLI tests (issue 40).
#[cfg(test)]
#[path = "../../tests/support/flax_coreml_paddle.rs"]
pub(crate) mod proto_fixtures;

pub(crate) use context::unreadable;
pub use context::{Ctx, FileScan, Limits, ScanConfig, name_limit, pickle_limits, raise_hint};
pub use pickle_stream::{
    fold_per_file, grade_pickle_format, inspect_pickle_stream, inspect_storage_record,
    inspect_torch_legacy, inspect_torch_tar_records, record_weights_only,
};
pub use read::open_regular;
pub use scan::{scan_file, scan_reader, scan_reader_at};

#[cfg(test)]
mod format_tests {
    use super::{ScanConfig, scan_file};
    use crate::classify::Format;

    fn scan(name: &str, bytes: &[u8]) -> super::FileScan {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        scan_file(&path, name, bytes.len() as u64, &ScanConfig::default())
    }

    /// Issue 17: a Flex op whose NodeDef runs `ReadFile` is FMT006 with the op and node named;
    /// the TF op names are facts; builtin ops are named from the schema.
    #[test]
    fn issue_17_tflite_flex_file_op_is_tf_unsafe_op() {
        use crate::inspect::tflite::tests::{flex_options, model_with_operators, node_def};
        use crate::model::rules::RuleId;
        let opts = flex_options("ReadFile", &node_def("steal", "ReadFile"));
        let bytes = model_with_operators(
            &[(3, None), (32, Some("FlexReadFile"))],
            &[(0, None), (1, Some(&opts))],
        );
        let scan = scan("model.tflite", &bytes);
        assert_eq!(scan.format, Some(Format::Tflite));
        let d: Vec<_> = scan
            .detections
            .iter()
            .filter(|d| d.rule == RuleId::TfUnsafeOp)
            .collect();
        assert_eq!(d.len(), 1, "{:?}", scan.detections);
        assert_eq!(d[0].evidence["op"], "ReadFile");
        assert_eq!(d[0].evidence["node"], "steal");
        assert_eq!(scan.facts["tflite"]["flex_ops"][0], "ReadFile");
        assert_eq!(scan.facts["tflite"]["operator_codes"][0]["name"], "CONV_2D");
        // The custom op itself is still FMT008.
        assert!(
            scan.detections
                .iter()
                .any(|d| d.rule == RuleId::CustomOperator)
        );
    }

    #[test]
    fn coreml_spec_is_recorded_as_coreml_not_onnx() {
        // Issue 18: a Core ML spec (field 1 = spec version 4, field 2 = description) also
        // starts like an ONNX ModelProto.
        let spec = b"\x08\x04\x12\x04\x0a\x02\x0a\x00";
        assert_eq!(scan("model.mlmodel", spec).format, Some(Format::Coreml));
        assert_eq!(scan("model.onnx", spec).format, Some(Format::Onnx));
    }
}
