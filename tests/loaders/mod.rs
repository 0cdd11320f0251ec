//! Loader patterns in code (issue 22): model confusion (SRC005) and the 2025 loader rules
//! (SRC004 sub-codes), each with its positive, its safe spelling and a mere mention.

use crate::support::*;

fn calls(r: &serde_json::Value, rule: &str) -> Vec<(String, String, u64)> {
    findings(r, rule)
        .into_iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap_or_default().to_string(),
                f["evidence"]["call"]
                    .as_str()
                    .or(f["evidence"]["why"].as_str())
                    .unwrap_or_default()
                    .to_string(),
                f["location"]["line"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn a_hub_download_of_a_local_output_folder_is_model_confusion_not_an_unpinned_download() {
    let repo = Repo::new();
    repo.file("README.md", "---\nlicense: mit\n---\n")
        .file(
            "train.py",
            "from transformers import AutoModel\n\
             # AutoModel.from_pretrained('checkpoints/best') in a comment is nothing\n\
             m = AutoModel.from_pretrained('checkpoints/best')\n\
             ok = AutoModel.from_pretrained('./checkpoints/best')\n",
        )
        .file(
            "eval/run.py",
            "from transformers import AutoModel\nm = AutoModel.from_pretrained('acme/encoder')\n",
        )
        // `acme/encoder` is a directory of this repository (next to the code): the same trap.
        .file(
            "eval/acme/encoder/config.json",
            "{\"model_type\": \"bert\"}",
        );
    let (_, r) = scan_json(repo.path(), &[]);
    let mut got = calls(&r, "SRC005");
    got.sort();
    assert_eq!(
        got,
        vec![
            (
                "eval/run.py".to_string(),
                "directory-in-repository".to_string(),
                2
            ),
            ("train.py".to_string(), "local-folder-name".to_string(), 3),
        ],
        "{r:#}"
    );
    // One call, one finding: neither is also reported as a plain unpinned download.
    assert!(findings(&r, "SRC003").is_empty(), "{r:#}");
    let msg = findings(&r, "SRC005")[0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(msg.contains("./"), "{msg}");
    // Under strict it is a deny.
    let strict = concat!(env!("CARGO_MANIFEST_DIR"), "/policies/strict.toml");
    let (_, r) = scan_json(repo.path(), &["--policy", strict]);
    assert!(
        findings(&r, "SRC005").iter().all(|f| f["action"] == "deny"),
        "{r:#}"
    );
    assert_eq!(findings(&r, "SRC005").len(), 2);
}

#[test]
fn an_ordinary_hub_id_stays_an_unpinned_download() {
    let repo = Repo::new();
    repo.file(
        "run.py",
        "from transformers import AutoModel\nm = AutoModel.from_pretrained('bert-base/uncased')\n",
    );
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(findings(&r, "SRC005").is_empty(), "{r:#}");
    assert_eq!(findings(&r, "SRC003").len(), 1, "{r:#}");
}

#[test]
fn loader_rules_fire_with_positions_and_never_on_mentions() {
    let repo = Repo::new();
    repo.file(
        "load.py",
        "import torch, ctypes, yaml, keras\n\
         from hydra.utils import instantiate\n\
         keras.config.enable_unsafe_deserialization()\n\
         m = torch.jit.load('m.pt')\n\
         torch.ops.load_library('ops.so')\n\
         lib = ctypes.CDLL('./libx.so')\n\
         c = yaml.full_load(open('c.yaml'))\n\
         obj = instantiate(c['model'])\n\
         k = keras.models.load_model('m.keras', custom_objects={'L': object})\n",
    )
    // A model directory: native-library loads count only in one (see the test below).
    .file("config.json", "{\"model_type\": \"bert\"}")
    .file(
        "mentions.py",
        "# torch.jit.load(p), ctypes.CDLL(x), yaml.full_load(s)\n\
         DOC = 'hydra.utils.instantiate(cfg); keras.config.enable_unsafe_deserialization()'\n\
         import yaml\nyaml.safe_load('a: 1')\n",
    );
    let (_, r) = scan_json(repo.path(), &[]);
    let got = calls(&r, "SRC004");
    assert!(got.iter().all(|(p, _, _)| p == "load.py"), "{got:?}");
    let mut codes: Vec<(String, u64)> = got.into_iter().map(|(_, c, l)| (c, l)).collect();
    codes.sort_by_key(|c| c.1);
    assert_eq!(
        codes,
        vec![
            ("keras-unsafe-deserialization".to_string(), 3),
            ("torch-jit-load".to_string(), 4),
            ("native-library-load".to_string(), 5),
            ("native-library-load".to_string(), 6),
            ("yaml-full-load".to_string(), 7),
            ("hydra-instantiate".to_string(), 8),
            ("keras-custom-objects".to_string(), 9),
        ]
    );
    assert!(
        findings(&r, "SRC004")
            .iter()
            .all(|f| f["location"]["column"].as_u64().is_some())
    );
}

#[test]
fn native_library_loads_count_only_in_model_directories() {
    let repo = Repo::new();
    repo.file("model/config.json", "{\"model_type\": \"bert\"}")
        .file(
            "model/custom/ops.py",
            "import torch\ntorch.ops.load_library('ops.so')\n",
        )
        .file(
            "tools/build.py",
            "import ctypes\nlib = ctypes.CDLL('./libx.so')\nimport torch\ntorch.jit.load('m.pt')\n",
        );
    let (_, r) = scan_json(repo.path(), &[]);
    let mut got = calls(&r, "SRC004");
    got.sort();
    assert_eq!(
        got,
        vec![
            (
                "model/custom/ops.py".to_string(),
                "native-library-load".to_string(),
                2
            ),
            (
                "tools/build.py".to_string(),
                "torch-jit-load".to_string(),
                4
            ),
        ],
        "{r:#}"
    );
}
