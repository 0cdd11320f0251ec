//! Test support: fixture repositories built byte by byte in temp dirs, and a runner for the real
//! binary. Nothing here needs Python, git or the network.
#![allow(dead_code)]

pub mod executorch;
pub mod flax_coreml_paddle;
pub mod formats40;
pub mod legacy;
pub mod native;
pub mod sevenz;

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// A temporary repository.
pub struct Repo {
    pub dir: tempfile::TempDir,
}

impl Repo {
    pub fn new() -> Self {
        Repo {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn file(&self, rel: &str, bytes: impl AsRef<[u8]>) -> &Self {
        let p = self.dir.path().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, bytes).unwrap();
        self
    }

    pub fn dir(&self, rel: &str) -> &Self {
        std::fs::create_dir_all(self.dir.path().join(rel)).unwrap();
        self
    }

    pub fn symlink(&self, rel: &str, target: &str) -> &Self {
        let p = self.dir.path().join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::os::unix::fs::symlink(target, p).unwrap();
        self
    }

    pub fn fifo(&self, rel: &str) -> &Self {
        let p = self.dir.path().join(rel);
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // mkfifo through the libc crate would need unsafe; use the coreutils binary instead.
        let status = std::process::Command::new("mkfifo")
            .arg(c.to_str().unwrap())
            .status()
            .expect("mkfifo");
        assert!(status.success());
        self
    }

    pub fn abs(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
}

/// The binary under test.
pub fn modelgate() -> Command {
    let mut c = Command::cargo_bin("modelgate").unwrap();
    c.env_remove("NO_COLOR")
        .env("SOURCE_DATE_EPOCH", "1767225600");
    c
}

/// Runs `modelgate <args>` and returns the output.
pub fn run(args: &[&str]) -> Output {
    modelgate().args(args).output().unwrap()
}

/// Runs a JSON scan of `root` with extra args; returns (exit code, report).
pub fn scan_json(root: &Path, extra: &[&str]) -> (i32, Value) {
    let out = modelgate()
        .arg("scan")
        .arg(root)
        .args(["--format", "json", "--no-git"])
        .args(extra)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad json ({e}); stderr: {}; stdout: {}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (code, v)
}

/// The file record for `path` in a JSON report.
pub fn file<'a>(report: &'a Value, path: &str) -> &'a Value {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("no file {path} in report"))
}

/// Findings of one rule in a JSON report.
pub fn findings<'a>(report: &'a Value, rule: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

/// Rule codes of findings on `path`.
pub fn rules_on(report: &Value, path: &str) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] == path)
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

/// A safetensors file from (name, dtype, shape, raw bytes), with optional metadata.
pub fn safetensors(tensors: &[(&str, &str, &[u64], &[u8])], metadata: Option<&str>) -> Vec<u8> {
    let mut header = String::from("{");
    let mut first = true;
    if let Some(m) = metadata {
        header.push_str(&format!("\"__metadata__\":{m}"));
        first = false;
    }
    let mut off = 0usize;
    let mut data = Vec::new();
    for (name, dtype, shape, raw) in tensors {
        if !first {
            header.push(',');
        }
        first = false;
        let shape: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        header.push_str(&format!(
            "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
            shape.join(","),
            off,
            off + raw.len()
        ));
        off += raw.len();
        data.extend_from_slice(raw);
    }
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&data);
    out
}

/// A protocol-0 pickle that imports `module.name` and calls it with one string argument.
pub fn pickle_call(module: &str, name: &str, arg: &str) -> Vec<u8> {
    format!("c{module}\n{name}\n(V{arg}\ntR.").into_bytes()
}

/// A protocol-2 pickle of `collections.OrderedDict()` (benign).
pub fn pickle_ordered_dict() -> Vec<u8> {
    b"\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01.".to_vec()
}

/// A stored (uncompressed) zip archive of (name, bytes).
pub fn zip_stored(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in members {
        let crc = crc32(data);
        let offset = out.len() as u32;
        out.extend_from_slice(b"PK\x03\x04");
        out.extend_from_slice(&20u16.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // flags
        out.extend_from_slice(&0u16.to_le_bytes()); // stored
        out.extend_from_slice(&0u32.to_le_bytes()); // time, date
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        central.extend_from_slice(b"PK\x01\x02");
        central.extend_from_slice(&20u16.to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&0u16.to_le_bytes());
        central.extend_from_slice(&0u32.to_le_bytes());
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0u8; 12]); // extra, comment, disk, internal attrs, external attrs
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06");
    out.extend_from_slice(&[0u8; 4]);
    out.extend_from_slice(&(members.len() as u16).to_le_bytes());
    out.extend_from_slice(&(members.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// CRC-32 (IEEE), bitwise: test data is tiny.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// SHA-256 hex of bytes (via the binary's own dependency would be circular; sha2 is a dependency
/// of the crate and available to tests).
pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A `tokenizer_config.json` whose `chat_template` is `template` (a string).
pub fn tokenizer_config_with_template(template: &str) -> String {
    serde_json::json!({
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "chat_template": template,
    })
    .to_string()
}

/// A `tokenizer_config.json` with named chat templates (`[{"name", "template"}]`, transformers'
/// form when a tokenizer has several).
pub fn tokenizer_config_with_named_templates(templates: &[(&str, &str)]) -> String {
    let list: Vec<Value> = templates
        .iter()
        .map(|(name, template)| serde_json::json!({"name": name, "template": template}))
        .collect();
    serde_json::json!({"tokenizer_class": "PreTrainedTokenizerFast", "chat_template": list})
        .to_string()
}

/// A JSON object `{"chat_template": template}` plus `extra` fields (`chat_template.json`,
/// `processor_config.json`, `preprocessor_config.json`).
pub fn chat_template_json(template: &str, extra: &[(&str, &str)]) -> String {
    let mut map = serde_json::Map::new();
    for (k, v) in extra {
        map.insert((*k).to_string(), Value::String((*v).to_string()));
    }
    map.insert("chat_template".into(), Value::String(template.to_string()));
    Value::Object(map).to_string()
}
