//! One test for the one table of limits: every limit in [`LIMITS`] is set low and shown to take
//! effect on a small file that reaches it, through the same `scan_file` the scan runs. A new
//! limit without a case here fails `every_limit_has_a_case`.

use crate::model::facts::{Fact, FactMap};
use std::io::Write;

use serde_json::json;

use super::context::{FileScan, ScanConfig};
use super::scan::scan_file;
use crate::inspect::proto_fixtures;
use crate::model::limits::{LIMITS, Limits};
use crate::model::rules::RuleId;

/// Limits the walk enforces before any file is opened; their tests run the binary on a tree
/// (tests/hostile: `limit_max_files_stops_the_walk_with_scan004`, `limit_max_depth_...`).
const WALK_LIMITS: &[&str] = &["max_files", "max_depth"];

struct Case {
    limit: &'static str,
    value: u64,
    /// The file's relative name (the dispatcher looks at it for a few formats).
    name: &'static str,
    bytes: Vec<u8>,
    /// The rule the limit hit is reported under: SCAN004, or the container rule for limits
    /// that stop an archive or pickle stream (ARC001, PKL004; existing behaviour), or ST001
    /// for the safetensors header size (a format rule past 100 MB).
    rule: RuleId,
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zip_stored(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut buf = Vec::new();
    {
        let mut z = ::zip::ZipWriter::new(std::io::Cursor::new(&mut buf));
        for (name, data) in members {
            z.start_file(
                *name,
                ::zip::write::SimpleFileOptions::default()
                    .compression_method(::zip::CompressionMethod::Stored),
            )
            .unwrap();
            z.write_all(data).unwrap();
        }
        z.finish().unwrap();
    }
    buf
}

fn safetensors(header: &str, data: usize) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend(header.as_bytes());
    out.extend(vec![0u8; data]);
    out
}

/// A protobuf length-delimited field.
fn field(number: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3) | 2, u8::try_from(body.len()).unwrap()];
    out.extend(body);
    out
}

fn cases() -> Vec<Case> {
    let two_tensors = r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#;
    let rank3 = r#"{"a":{"dtype":"U8","shape":[1,1,1],"data_offsets":[0,1]}}"#;
    let mut nested = b"\x80\x02N.".to_vec();
    for _ in 0..3 {
        nested = gzip(&nested);
    }
    // GGUF v3 with one tensor and one key/value pair declared.
    let mut gguf = b"GGUF\x03\0\0\0".to_vec();
    gguf.extend(1u64.to_le_bytes());
    gguf.extend(1u64.to_le_bytes());
    let key = b"general.name";
    gguf.extend((key.len() as u64).to_le_bytes());
    gguf.extend(key);
    gguf.extend(8u32.to_le_bytes()); // string
    gguf.extend(1u64.to_le_bytes());
    gguf.extend(b"x");
    let mut gguf_kv = b"GGUF\x03\0\0\0".to_vec();
    gguf_kv.extend(0u64.to_le_bytes());
    gguf_kv.extend(2u64.to_le_bytes());
    // ONNX: ModelProto{ir_version, graph{node{op_type}}}.
    let mut onnx = vec![0x08, 0x08];
    onnx.extend(field(7, &field(1, &field(4, b"Relu"))));
    // SavedModel{schema_version, meta_graphs{graph_def{node{op}}}}.
    let mut tf = vec![0x08, 0x01];
    tf.extend(field(2, &field(2, &field(1, &field(2, b"Relu")))));
    // `exec` of a blob decoded twice whose payload runs another blob: two steps, two levels.
    let blob = zip_stored(&[(
        "handler.py",
        b"import base64\nexec(base64.b64decode(base64.b64decode(\"YVcxd2IzSjBJR0poYzJVMk5BcGxlR1ZqS0dKaGMyVTJOQzVpTmpSa1pXTnZaR1VvSW1GWFVUMGlLU2tL\")))\n",
    )]);
    let npy_header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }          \n";
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend(u16::try_from(npy_header.len()).unwrap().to_le_bytes());
    npy.extend(npy_header);
    npy.extend([0u8; 4]);
    let h5 = super::hdf5::tests::h5_file(
        0,
        &[
            super::hdf5::tests::string_attribute("a", b"1"),
            super::hdf5::tests::string_attribute("b", b"2"),
        ],
    );
    let keras_config = r#"{"class_name": "Sequential", "config": {"layers": [{"class_name": "Dense", "config": {"a": [[[1]]]}}]}}"#;
    let deep_safetensors =
        r#"{"__metadata__":{"k":"v"},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
    let memo = b"\x80\x02]q\x00]q\x01]q\x02]q\x03e.".to_vec();
    let mut opcodes = b"\x80\x02]q\x00(".to_vec();
    for _ in 0..100 {
        opcodes.extend_from_slice(b"K\x01");
    }
    opcodes.extend_from_slice(b"e.");
    let pyc = include_bytes!("../../tests/fixtures/bytecode/os_system.cpython-311.pyc").to_vec();
    let macho = super::native::tests::build::macho_dylib(0, &["_system", "_printf"], false);
    let c = |limit, value, name, bytes: Vec<u8>, rule| Case {
        limit,
        value,
        name,
        bytes,
        rule,
    };
    use RuleId::{ArchiveMalformed as Arc, LimitExceeded as Scan, PickleMalformed as Pkl};
    vec![
        c("max_file_bytes", 5, "a.bin", vec![1; 10], Scan),
        c(
            "safetensors_header_bytes",
            16,
            "model.safetensors",
            safetensors(two_tensors, 2),
            RuleId::SafetensorsInvalid,
        ),
        c(
            "safetensors_tensor_count",
            1,
            "model.safetensors",
            safetensors(two_tensors, 2),
            Scan,
        ),
        c(
            "tensor_rank",
            2,
            "model.safetensors",
            safetensors(rank3, 1),
            Scan,
        ),
        c("pickle_opcodes", 50, "model.pkl", opcodes, Pkl),
        c("pickle_memo", 2, "model.pkl", memo, Pkl),
        c(
            "pickle_string_bytes",
            4,
            "model.pkl",
            b"\x80\x02S'abcdefgh'\n.".to_vec(),
            Pkl,
        ),
        c("archive_depth", 1, "model.pkl.gz", nested, Arc),
        c(
            "archive_members",
            1,
            "a.zip",
            zip_stored(&[("a", b"1"), ("b", b"2"), ("c", b"3")]),
            Arc,
        ),
        c(
            "archive_member_bytes",
            1000,
            "a.gz",
            gzip(&[0u8; 4096]),
            Arc,
        ),
        c(
            "archive_total_bytes",
            1000,
            "a.zip",
            zip_stored(&[("a", &[b'a'; 600]), ("b", &[b'b'; 600])]),
            Arc,
        ),
        c("archive_ratio", 10, "a.gz", gzip(&vec![0u8; 4 << 20]), Arc),
        c(
            "json_depth",
            2,
            "model.safetensors",
            safetensors(deep_safetensors, 1),
            Scan,
        ),
        // Issue 39: padding a config with harmless loader fields must not hide a remote one.
        c(
            "loader_fields",
            1,
            "config.json",
            br#"{"a": {"auto_map": {"A": "m.A"}}, "b": {"auto_map": {"B": "o/r--m.B"}}}"#.to_vec(),
            Scan,
        ),
        c(
            "yaml_depth",
            2,
            "model_config.yaml",
            b"model:\n  net:\n    _target_: acme.Net\n".to_vec(),
            Scan,
        ),
        c(
            "yaml_nodes",
            5,
            "model_config.yaml",
            b"a: &a [x, y]\nb: *a\n".to_vec(),
            Scan,
        ),
        c(
            "json_bytes",
            10,
            ".gitattributes",
            b"*.bin filter=lfs diff=lfs merge=lfs -text\n".to_vec(),
            Scan,
        ),
        c(
            "yaml_bytes",
            10,
            "README.md",
            b"---\nlicense: apache-2.0\nlibrary_name: transformers\n---\n# m\n".to_vec(),
            Scan,
        ),
        c(
            "code_file_bytes",
            10,
            "modeling.py",
            b"import os\nprint(os.getcwd())\n".to_vec(),
            Scan,
        ),
        c("gguf_kv_count", 1, "m.gguf", gguf_kv, Scan),
        c("gguf_tensor_count", 0, "m.gguf", gguf.clone(), Scan),
        c("gguf_metadata_bytes", 30, "m.gguf", gguf, Scan),
        c("onnx_depth", 1, "model.onnx", onnx, Scan),
        c("tf_depth", 1, "saved_model.pb", tf, Scan),
        // Issue 40: Flax msgpack, Core ML and Paddle walks.
        c(
            "msgpack_depth",
            1,
            "flax_model.msgpack",
            proto_fixtures::flax_params(),
            Scan,
        ),
        c(
            "coreml_depth",
            1,
            "model.mlmodel",
            proto_fixtures::coreml_neural_network(&[proto_fixtures::coreml_layer("conv", 100)]),
            Scan,
        ),
        c(
            "paddle_depth",
            1,
            "inference.pdmodel",
            proto_fixtures::paddle_benign_program(),
            Scan,
        ),
        c("hdf5_messages", 1, "model.h5", h5, Scan),
        c(
            "tflite_operator_codes",
            1,
            "model.tflite",
            super::tflite::tests::model(&[(0, None), (1, None)]),
            Scan,
        ),
        c("numpy_header_bytes", 8, "a.npy", npy, Scan),
        // A `.py` member of a model archive gets the behaviour analysis (issue 30).
        c("blob_decoded_bytes", 4, "handler.mar", blob.clone(), Scan),
        c("blob_decode_steps", 1, "handler.mar", blob.clone(), Scan),
        c("blob_nesting_depth", 1, "handler.mar", blob.clone(), Scan),
        // Issue 37: the code judge's evaluation budget.
        c("code_eval_steps", 1, "handler.mar", blob.clone(), Scan),
        c("code_eval_bytes", 4, "handler.mar", blob.clone(), Scan),
        c("code_eval_depth", 1, "handler.mar", blob, Scan),
        c("bytecode_bytes", 10, "m.pyc", pyc.clone(), Scan),
        c("marshal_depth", 1, "m.pyc", pyc.clone(), Scan),
        c("marshal_objects", 5, "m.pyc", pyc, Scan),
        c("native_bytes", 64, "libop.dylib", macho.clone(), Scan),
        c("native_symbols", 1, "libop.dylib", macho, Scan),
    ]
    .into_iter()
    .chain(std::iter::once(c(
        "json_depth",
        2,
        "model.keras",
        zip_stored(&[("config.json", keras_config.as_bytes())]),
        Scan,
    )))
    .collect()
}

fn scan(case: &Case, limits: Limits) -> FileScan {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(case.name);
    std::fs::write(&path, &case.bytes).unwrap();
    let cfg = ScanConfig {
        limits,
        ..ScanConfig::default()
    };
    scan_file(&path, case.name, case.bytes.len() as u64, &cfg)
}

#[test]
fn every_limit_has_a_case() {
    let cases = cases();
    for spec in LIMITS {
        assert!(
            WALK_LIMITS.contains(&spec.name) || cases.iter().any(|c| c.limit == spec.name),
            "limit `{}` has no case in inspect/limit_tests.rs",
            spec.name
        );
    }
}

#[test]
fn each_limit_set_low_takes_effect_and_names_itself() {
    for case in cases() {
        let mut low = Limits::default();
        assert!(low.set(case.limit, case.value), "{}", case.limit);
        let hit = scan(&case, low);
        let named: Vec<_> = hit
            .detections
            .iter()
            .filter(|d| d.rule == case.rule)
            .filter(|d| {
                case.rule == RuleId::SafetensorsInvalid
                    || d.evidence.get("limit") == Some(&json!(case.limit))
            })
            .collect();
        assert!(
            !named.is_empty(),
            "`{} = {}` on {}: expected {} naming it, got {:#?}",
            case.limit,
            case.value,
            case.name,
            case.rule.code(),
            hit.detections
        );
        if case.rule == RuleId::LimitExceeded {
            let d = named[0];
            assert_eq!(
                d.evidence.get("value"),
                Some(&json!(case.value)),
                "{}",
                case.limit
            );
            if case.limit != "max_file_bytes" {
                assert!(
                    d.message.contains(&format!("[limits] {}", case.limit))
                        || d.message.contains(case.limit),
                    "{}: {}",
                    case.limit,
                    d.message
                );
            }
        }
        // Under the defaults the same file reaches no limit.
        let clean = scan(&case, Limits::default());
        assert!(
            !clean
                .detections
                .iter()
                .any(|d| { d.rule == RuleId::LimitExceeded || d.evidence.contains_key("limit") }),
            "{} on {} under the defaults: {:#?}",
            case.limit,
            case.name,
            clean.detections
        );
    }
}

#[test]
fn a_65_dimension_tensor_is_valid_by_default() {
    let header = format!(
        r#"{{"a":{{"dtype":"U8","shape":[{}],"data_offsets":[0,1]}}}}"#,
        vec!["1"; 65].join(",")
    );
    let case = Case {
        limit: "tensor_rank",
        value: 0,
        name: "model.safetensors",
        bytes: safetensors(&header, 1),
        rule: RuleId::LimitExceeded,
    };
    let s = scan(&case, Limits::default());
    assert!(s.detections.is_empty(), "{:#?}", s.detections);
    assert_eq!(s.facts.fact(Fact::Valid), Some(&json!(true)));
}

/// Issue 40: a 7z archive reaches the same archive limits as zip and tar, and each names itself.
#[test]
fn archive_limits_take_effect_on_7z_archives_too() {
    use super::sevenz::tests::{Builder, Coding};
    let inner = Builder::new(&[("a", b"1")]).build();
    let middle = Builder::new(&[("inner.7z", &inner)]).build();
    // Compresses about 15:1 with deflate: past a ratio limit of 10, well within the default.
    let mut seed = 1u32;
    let sparse: Vec<u8> = (0..4u32 << 20)
        .map(|i| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            if i % 50 == 0 { (seed >> 24) as u8 } else { 0 }
        })
        .collect();
    let cases = [
        (
            "archive_members",
            1,
            Builder::new(&[("a", b"1"), ("b", b"2"), ("c", b"3")]).build(),
        ),
        (
            "archive_member_bytes",
            1000,
            Builder::new(&[("a", &[b'a'; 4096])]).build(),
        ),
        (
            "archive_total_bytes",
            1000,
            Builder::new(&[("a", &[b'a'; 600]), ("b", &[b'b'; 600])]).build(),
        ),
        (
            "archive_ratio",
            10,
            Builder::new(&[("z", &sparse)])
                .coding(Coding::Deflate)
                .build(),
        ),
        ("archive_depth", 0, middle),
    ];
    for (limit, value, bytes) in cases {
        let case = Case {
            limit,
            value,
            name: "a.7z",
            bytes,
            rule: RuleId::ArchiveMalformed,
        };
        let mut low = Limits::default();
        assert!(low.set(limit, value), "{limit}");
        let hit = scan(&case, low);
        assert!(
            hit.detections
                .iter()
                .any(|d| d.rule == RuleId::ArchiveMalformed
                    && d.evidence.get("limit") == Some(&json!(limit))),
            "{limit}: {:#?}",
            hit.detections
        );
        let clean = scan(&case, Limits::default());
        assert!(
            clean.detections.is_empty(),
            "{limit}: {:#?}",
            clean.detections
        );
    }
}
