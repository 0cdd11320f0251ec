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

/// Issue 32: a pickle round trip (`pickle.loads` of what `pickle.dumps` just made, nested or
/// through a name its function binds once) unpickles nothing from outside the process and is
/// not SRC004; its near misses still are; in model code (a file a loader imports) a round trip
/// of a hostile `__reduce__` is denied by SRC006 and stays SRC004; a `.pyi` stub, which Python never runs, reports no
/// call sites.
#[test]
fn a_pickle_round_trip_is_not_an_unsafe_load_but_its_near_misses_and_stubs_are_judged() {
    let notebook = serde_json::json!({
        "cells": [
            {"cell_type": "code", "source": ["import pickle as pkl\n", "from pickle import loads as l, dumps as d\n"], "metadata": {}, "outputs": []},
            {"cell_type": "code", "source": ["b = pkl.dumps(obj)\n", "restored = pkl.loads(b)\n", "again = pkl.loads(pkl.dumps(restored))\n"], "metadata": {}, "outputs": []},
            {"cell_type": "code", "source": ["third = l(d(again))\n"], "metadata": {}, "outputs": []},
            {"cell_type": "code", "source": ["other = pkl.loads(open('x.pkl', 'rb').read())\n", "l(other)\n"], "metadata": {}, "outputs": []}
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    });
    let repo = Repo::new();
    repo.file(
        "tests/test_roundtrip.py",
        "import pickle\n\
         from pickle import dumps, loads\n\
         import _pickle as cPickle\n\
         \n\
         def test_nested(error):\n\
         \x20   assert pickle.loads(pickle.dumps(error)) == error\n\
         \x20   assert loads((dumps(error, protocol=2))) == error\n\
         \x20   cPickle.loads(cPickle.dumps(error))\n\
         \n\
         def test_named(a):\n\
         \x20   for proto in range(2, 5):\n\
         \x20       pk_dmp = pickle.dumps(a, protocol=proto)\n\
         \x20       assert pickle.loads(pk_dmp) == a\n",
    )
    .file(
        "tests/test_near_miss.py",
        "import pickle, json\n\
         \n\
         def load(path, blob):\n\
         \x20   s = pickle.dumps(blob)\n\
         \x20   s = open(path, 'rb').read()\n\
         \x20   a = pickle.loads(s)\n\
         \x20   b = pickle.loads(blob)\n\
         \x20   c = pickle.loads(json.dumps(blob))\n\
         \x20   return a, b, c\n",
    )
    .file("notebooks/demo.ipynb", notebook.to_string())
    .file(
        "src/pkg/io.pyi",
        "import numpy as np\nimport torch\nfrom transformers import AutoModel\n\
         a = np.load(pathlib_path, allow_pickle=True)\n\
         b = torch.load(p)\n\
         m = AutoModel.from_pretrained('o/m', trust_remote_code=True)\n",
    )
    .file(
        "model/config.json",
        r#"{"model_type":"x","auto_map":{"AutoModel":"modeling_x.XModel"}}"#,
    )
    .file(
        "model/modeling_x.py",
        "import os\nimport pickle\n\
         \n\
         class Payload:\n\
         \x20   def __reduce__(self):\n\
         \x20       return (os.system, ('id',))\n\
         \n\
         class XModel:\n\
         \x20   def __init__(self):\n\
         \x20       pickle.loads(pickle.dumps(Payload()))\n",
    );
    let (_, r) = scan_json(repo.path(), &[]);
    let mut got = calls(&r, "SRC004");
    got.sort();
    assert_eq!(
        got,
        vec![
            (
                "model/modeling_x.py".to_string(),
                "pickle-load".to_string(),
                10
            ),
            (
                "notebooks/demo.ipynb".to_string(),
                "pickle-load".to_string(),
                1
            ),
            (
                "notebooks/demo.ipynb".to_string(),
                "pickle-load".to_string(),
                2
            ),
            (
                "tests/test_near_miss.py".to_string(),
                "pickle-load".to_string(),
                6
            ),
            (
                "tests/test_near_miss.py".to_string(),
                "pickle-load".to_string(),
                7
            ),
            (
                "tests/test_near_miss.py".to_string(),
                "pickle-load".to_string(),
                8
            ),
        ],
        "{r:#}"
    );
    // The stub reports no call site of any kind (it is still code: SRC001 judges stubs as
    // before wherever it does).
    for rule in ["SRC002", "SRC003", "SRC004"] {
        assert!(
            findings(&r, rule)
                .iter()
                .all(|f| f["path"] != "src/pkg/io.pyi"),
            "{rule}: {r:#}"
        );
    }
    // The same calls in a `.py` are reported: the stub is exempt for being a stub.
    let twin = Repo::new();
    twin.file(
        "src/pkg/io.py",
        "import numpy as np\nimport torch\n\
         a = np.load(pathlib_path, allow_pickle=True)\nb = torch.load(p)\n",
    );
    let (_, t) = scan_json(twin.path(), &[]);
    assert_eq!(findings(&t, "SRC004").len(), 2, "{t:#}");
    // The hostile round trip gains nothing: what `pickle.loads(pickle.dumps(Payload()))` runs
    // is what `Payload.__reduce__` returns (`os.system` here), a site of the behaviour judge
    // (SRC006, denied); and model code keeps the round trip's SRC004 besides, since the
    // object's `__reduce__` may live where SRC006 does not look.
    let src6: Vec<&serde_json::Value> = findings(&r, "SRC006")
        .into_iter()
        .filter(|f| f["path"] == "model/modeling_x.py")
        .collect();
    assert!(
        src6.iter()
            .any(|f| f["action"] == "deny" && f.to_string().contains("os.system")),
        "{r:#}"
    );
    let model: Vec<(String, String, u64)> = calls(&r, "SRC004")
        .into_iter()
        .filter(|(p, _, _)| p == "model/modeling_x.py")
        .collect();
    assert_eq!(
        model,
        vec![(
            "model/modeling_x.py".to_string(),
            "pickle-load".to_string(),
            10
        )],
        "{r:#}"
    );
}
