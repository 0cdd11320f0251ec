//! Precision on real models (issue 15): ordinary files of real packages are not denied. Each test
//! builds the byte-exact shape of one false alarm seen on real PyPI packages.

use crate::support::*;

/// A protocol-2 torch-style zip: `archive/data.pkl` holding an OrderedDict, plus `version`.
fn torch_zip() -> Vec<u8> {
    zip_stored(&[
        ("archive/data.pkl", &pickle_ordered_dict()),
        ("archive/version", b"3\n"),
    ])
}

#[test]
fn text_whose_ninth_byte_is_a_brace_is_not_safetensors() {
    // Cause 1: a one-line Python module and notes; both were denied as ST001.
    let repo = Repo::new();
    repo.file("pkg/params.py", "P={'lr': 0.1, 'depth': 3}\n")
        .file("pkg/notes.txt", "Notes:\n\n{todo} retrain\n")
        .file("pkg/data.json", "[1234567{}]");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(findings(&r, "ST001").is_empty(), "{:#}", r["findings"]);
    assert_eq!(file(&r, "pkg/params.py")["format"], "python");
    assert_eq!(file(&r, "pkg/notes.txt")["format"], "text");
}

#[test]
fn a_near_miss_named_safetensors_is_still_validated() {
    // The weak signature cannot decide, but the name sends the file to the validator.
    let repo = Repo::new();
    repo.file("model.safetensors", "P={'lr': 0.1, 'depth': 3}\n");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(rules_on(&r, "model.safetensors"), ["ST001"]);
}

#[test]
fn null_metadata_as_mlx_writes_it_is_valid() {
    // Cause 2: `"__metadata__": null`.
    let repo = Repo::new();
    repo.file(
        "mlx/model.safetensors",
        safetensors(&[("w", "F32", &[2], &[0u8; 8])], Some("null")),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert_eq!(file(&r, "mlx/model.safetensors")["facts"]["valid"], true);
}

#[test]
fn torch_checkpoints_under_compound_names_are_not_mismatches() {
    // Cause 3: `model_best.pth.tar`, `checkpoint.pt.tar`, `last.ckpt`.
    let repo = Repo::new();
    repo.file("ckpt/model_best.pth.tar", torch_zip())
        .file("ckpt/checkpoint.pt.tar", pickle_ordered_dict())
        .file("ckpt/last.ckpt", torch_zip());
    let (_, r) = scan_json(repo.path(), &[]);
    assert!(findings(&r, "FMT001").is_empty(), "{:#}", r["findings"]);
}

#[test]
fn an_empty_weight_file_is_invalid() {
    // Cause 9: a 0-byte `.safetensors` passed silently.
    let repo = Repo::new();
    repo.file("model.safetensors", "")
        .file("model.onnx", "")
        .file("empty.txt", "");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(rules_on(&r, "model.safetensors"), ["ST001"]);
    assert_eq!(rules_on(&r, "model.onnx"), ["FMT002"]);
    assert!(rules_on(&r, "empty.txt").is_empty());
}

#[test]
fn long_protocol0_string_lines_are_data_not_malformed() {
    // Cause 9: a CRF model pickled with protocol 0 holds its weights as one multi-megabyte
    // STRING line (and UNICODE the same way).
    let mut p = b"(dp0\nS'model'\np1\nS'".to_vec();
    p.extend(std::iter::repeat_n(b'x', 3 << 20));
    p.extend_from_slice(b"'\np2\nsVtext\np3\nV");
    p.extend(std::iter::repeat_n(b'y', 2 << 20));
    p.extend_from_slice(b"\np4\ns.");
    let repo = Repo::new();
    repo.file("crf.pkl", &p);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(findings(&r, "PKL004").is_empty(), "{:#}", r["findings"]);
}

#[test]
fn a_data_pickle_with_many_memo_entries_is_not_malformed() {
    // Cause 5: 1.3 million memo entries (a 20 MB data-only pickle had 1.26 million).
    let mut p = b"\x80\x02]q\x00".to_vec();
    for i in 1u32..1_300_000 {
        p.push(b'K');
        p.push((i % 200) as u8);
        p.push(b'r');
        p.extend_from_slice(&i.to_le_bytes());
        p.push(b'a');
    }
    p.push(b'.');
    let repo = Repo::new();
    repo.file("big.pkl", &p);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(findings(&r, "PKL004").is_empty(), "{:#}", r["findings"]);
}

#[test]
fn compiled_python_in_a_model_directory_is_code() {
    // Cause 8: `.pyc` beside the weights runs when the directory's code is imported.
    let repo = Repo::new();
    repo.file(
        "m/model.safetensors",
        safetensors(&[("w", "F32", &[2], &[0u8; 8])], None),
    )
    .file("m/README.md", "# m\n")
    .file(
        "m/__pycache__/modeling.cpython-311.pyc",
        b"\xa7\r\r\n\0\0\0\0\0\0\0\0\0\0\0\0\xe3\0\0\0",
    )
    .file(
        "m/modeling.cpython-311.pyc",
        b"\xa7\r\r\n\0\0\0\0\0\0\0\0\0\0\0\0\xe3\0\0\0",
    );
    let (_, r) = scan_json(repo.path(), &[]);
    let src: Vec<_> = findings(&r, "SRC001")
        .into_iter()
        .filter(|f| f["path"] == "m/modeling.cpython-311.pyc")
        .collect();
    assert_eq!(src.len(), 1, "{:#}", r["findings"]);
}

/// A joblib < 0.10 compressed dump: `ZF`, the length in hex padded to 19 bytes, then zlib (one
/// stored block, as `zlib.compress(data, 0)` writes it).
fn joblib_zfile(data: &[u8]) -> Vec<u8> {
    let mut out = b"ZF".to_vec();
    out.extend_from_slice(format!("{:<19}", format!("0x{:x}", data.len())).as_bytes());
    out.extend_from_slice(&[0x78, 0x01, 0x01]);
    let n = data.len() as u16;
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&(!n).to_le_bytes());
    out.extend_from_slice(data);
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

#[test]
fn old_joblib_zfile_containers_are_analysed() {
    // Cause 6: `ZF` + zlib was `unknown`, so the pickle inside escaped analysis.
    let repo = Repo::new();
    repo.file("old/model.pkl", joblib_zfile(&pickle_ordered_dict()));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert_eq!(file(&r, "old/model.pkl")["format"], "joblib");
    let evil = Repo::new();
    evil.file(
        "old/model.pkl",
        joblib_zfile(&pickle_call("os", "system", "id")),
    );
    let (code, r) = scan_json(evil.path(), &[]);
    assert_eq!(code, 1);
    assert!(rules_on(&r, "old/model.pkl").contains(&"PKL001".to_string()));
}

#[test]
fn an_executable_named_like_weights_is_high() {
    // Cause 8: an ELF renamed `weights.pt` is not a low "unrecognised weights".
    let mut elf = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3e\0".to_vec();
    elf.resize(256, 0);
    let mut pe = vec![0u8; 256];
    pe[..2].copy_from_slice(b"MZ");
    pe[0x3c] = 0x80;
    pe[0x80..0x84].copy_from_slice(b"PE\0\0");
    let repo = Repo::new();
    repo.file("weights.pt", &elf)
        .file("pytorch_model.bin", &pe)
        .file("junk.pt", [0x01u8, 0x02, 0x03, 0x00]);
    let (_, r) = scan_json(repo.path(), &[]);
    let fmt = findings(&r, "FMT002");
    let sev = |p: &str| {
        fmt.iter()
            .find(|f| f["path"] == p)
            .unwrap_or_else(|| panic!("no FMT002 on {p}: {:#}", r["findings"]))["severity"]
            .clone()
    };
    assert_eq!(sev("weights.pt"), "high");
    assert_eq!(sev("pytorch_model.bin"), "high");
    assert_eq!(sev("junk.pt"), "low");
}

/// The head of profanity-check 1.0.3's `model.joblib` (scikit-learn 0.20, 2018): a protocol-3
/// pickle whose arrays are `sklearn.externals.joblib.numpy_pickle.NumpyArrayWrapper`s, each
/// followed by the array's raw bytes (here `classes_ = [0, 1]`, two little-endian int64).
fn sklearn_externals_joblib(after: &[u8]) -> Vec<u8> {
    let mut p = b"\x80\x03csklearn.externals.joblib.numpy_pickle\nNumpyArrayWrapper\nq\x00)\x81q\x01}q\x02(X\x08\x00\x00\x00subclassq\x03cnumpy\nndarray\nq\x04X\x05\x00\x00\x00shapeq\x05K\x02\x85q\x06X\x05\x00\x00\x00orderq\x07X\x01\x00\x00\x00Cq\x08X\x05\x00\x00\x00dtypeq\tcnumpy\ndtype\nq\nX\x02\x00\x00\x00i8q\x0bK\x00K\x01\x87q\x0cRq\r(K\x03X\x01\x00\x00\x00<q\x0eNNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tq\x0fbX\n\x00\x00\x00allow_mmapq\x10\x88ub".to_vec();
    p.extend_from_slice(b"\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00");
    p.extend_from_slice(after);
    p.push(b'.');
    p
}

#[test]
fn sklearn_externals_joblib_arrays_are_skipped_like_joblib_issue_15() {
    // Cause 6: the vendored module name made the array bytes read as opcodes (PKL004 deny).
    let repo = Repo::new();
    repo.file("data/model.joblib", sklearn_externals_joblib(b""));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(findings(&r, "PKL004").is_empty(), "{:#}", r["findings"]);
    assert_eq!(
        file(&r, "data/model.joblib")["facts"]["pickle_raw_bytes"],
        16
    );
    // What follows the array is still read as opcodes.
    let evil = Repo::new();
    evil.file(
        "data/model.joblib",
        sklearn_externals_joblib(b"0cos\nsystem\n(S'id'\ntR"),
    );
    let (code, r) = scan_json(evil.path(), &[]);
    assert_eq!(code, 1);
    assert!(rules_on(&r, "data/model.joblib").contains(&"PKL001".to_string()));
}

/// gensim 4.3.3's `test_data/tfidf_model.tst` shape: a model whose `normalize` attribute is
/// `functools.partial(gensim.models.tfidfmodel.smartirs_normalize, norm_scheme='c')`, with the
/// partial's state set by BUILD as `partial.__reduce__` writes it.
fn gensim_partial(target_module: &str, target_name: &str, state_target: &str) -> Vec<u8> {
    let mut p = b"\x80\x02cgensim.models.tfidfmodel\nTfidfModel\nq\x01)\x81q\x02}q\x03(U\tnormalizeq\x04cfunctools\npartial\nq\x05c".to_vec();
    p.extend_from_slice(format!("{target_module}\n{target_name}\n").as_bytes());
    p.extend_from_slice(b"q\x06\x85Rq\x07(");
    p.extend_from_slice(state_target.as_bytes());
    p.extend_from_slice(b")}q\x08U\x0bnorm_schemeq\tU\x01csNtbub.");
    p
}

#[test]
fn a_partial_is_judged_by_its_target_issue_15() {
    // Cause 4: a partial over the package's own function is that function's business (PKL002
    // warn), not a deny.
    let repo = Repo::new();
    repo.file(
        "tfidf_model.tst",
        gensim_partial("gensim.models.tfidfmodel", "smartirs_normalize", "h\x06"),
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(findings(&r, "PKL001").is_empty(), "{:#}", r["findings"]);
    // Issue 32: the file's unknown globals are one PKL002, each a site of its evidence.
    let target = pkl002_site(&r, "gensim.models.tfidfmodel.smartirs_normalize");
    // Calling the partial calls its target.
    assert_eq!(target["called"], true);

    // Over a dangerous callable, the partial is dangerous, however it was built.
    for evil in [
        gensim_partial("os", "system", "h\x06"),
        gensim_partial("posix", "system", "h\x06"),
        // `partial.__setstate__` replaces the wrapped callable: judged by that one too.
        gensim_partial(
            "gensim.models.tfidfmodel",
            "smartirs_normalize",
            "cos\nsystem\n",
        ),
        // A callable the scanner cannot name keeps the partial dangerous.
        gensim_partial("gensim.models.tfidfmodel", "smartirs_normalize", "S'x'\n"),
    ] {
        let repo = Repo::new();
        repo.file("tfidf_model.tst", &evil);
        let (code, r) = scan_json(repo.path(), &[]);
        assert_eq!(code, 1, "{:#}", r["findings"]);
        assert!(
            findings(&r, "PKL001")
                .iter()
                .any(|f| f["evidence"]["global"] == "functools.partial"),
            "{:#}",
            r["findings"]
        );
    }
}

#[test]
fn a_referenced_unknown_global_is_below_a_called_one_issue_15() {
    // Cause 7: `sklearn_crfsuite...FileResource` stored as a type is not called.
    let p = b"\x80\x02}q\x00(U\x01aq\x01cpkg.mod\nStored\nq\x02U\x01bq\x03cpkg.mod\nBuilt\nq\x04)Rq\x05u.";
    let repo = Repo::new();
    repo.file("m.pkl", p);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let sev = |g: &str| pkl002_site(&r, g)["severity"].clone();
    assert_eq!(sev("pkg.mod.Stored"), "low");
    assert_eq!(sev("pkg.mod.Built"), "medium");
    // The folded finding takes the worst of its sites.
    assert_eq!(findings(&r, "PKL002")[0]["severity"], "medium");
}

#[test]
fn mkdocs_name_tags_are_not_denied_issue_15() {
    // llama-cpp-python's mkdocs.yml: `!!python/name:` of an extension's function.
    let repo = Repo::new();
    repo.file(
        "mkdocs.yml",
        "markdown_extensions:\n  - pymdownx.emoji:\n      emoji_index: !!python/name:materialx.emoji.twemoji\n      emoji_generator: !!python/name:materialx.emoji.to_svg\n",
    );
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    // Issue 32: one CFG003 per config file, each tag a site with its line.
    assert_eq!(rules_on(&r, "mkdocs.yml"), ["CFG003"]);
    let sites = findings(&r, "CFG003")[0]["evidence"]["sites"].clone();
    assert_eq!(sites.as_array().map(Vec::len), Some(2), "{sites:#}");
    assert_eq!(sites[0]["line"], 3);
    let evil = Repo::new();
    evil.file("conf.yml", "a: !!python/name:os.system\n");
    let (code, _) = scan_json(evil.path(), &[]);
    assert_eq!(code, 1);
}

/// onnx 1.16.2's `test_abs/test_data_set_0/input_0.pb`: a TensorProto (dims 3, 4, 5; FLOAT;
/// name `x`; raw_data), shortened to 8 floats.
const ONNX_TENSOR: &[u8] = b"\x08\x02\x08\x04\x10\x01B\x01xJ\x20\x00\x00\x80?\x00\x00\x00@\x00\x00@@\x00\x00\x80@\x00\x00\x80?\x00\x00\x00@\x00\x00@@\x00\x00\x80@";
/// onnx's `test_identity_opt/test_data_set_0/input_0.pb`: an OptionalProto of a sequence.
const ONNX_OPTIONAL: &[u8] = b"\n\x06opt_in\x10\x03*\x1e\x10\x01\x1a\x1a\x08\x05\x10\x01J\x14\x00\x00\x80?\x00\x00\x00@\x00\x00@@\x00\x00\x80@\x00\x00\xa0@";

#[test]
fn onnx_test_data_is_not_a_tf_graph_nor_a_model_directory_issue_15() {
    // Cause 8 and 10: the tensors were "tf-graph" weights (some FMT007), and each test folder a
    // card-less model directory (2,844 CARD001 on onnx's wheel).
    let model = b"\x08\x07\x12\x04test:\x02\x10\x01";
    let repo = Repo::new();
    repo.file("onnx/backend/test/data/node/test_abs/model.onnx", model)
        .file(
            "onnx/backend/test/data/node/test_abs/test_data_set_0/input_0.pb",
            ONNX_TENSOR,
        )
        .file(
            "onnx/backend/test/data/node/test_identity_opt/test_data_set_0/input_0.pb",
            ONNX_OPTIONAL,
        )
        .file("graph/frozen.pb", b"\n\x0b\n\x01x\x12\x06Const");
    let (_, r) = scan_json(repo.path(), &[]);
    for p in [
        "onnx/backend/test/data/node/test_abs/test_data_set_0/input_0.pb",
        "onnx/backend/test/data/node/test_identity_opt/test_data_set_0/input_0.pb",
    ] {
        assert_eq!(file(&r, p)["format"], "onnx-tensor");
        assert_eq!(file(&r, p)["kind"], "data");
        assert!(rules_on(&r, p).is_empty(), "{:#}", r["findings"]);
    }
    assert_eq!(file(&r, "graph/frozen.pb")["format"], "tf-graph");
    let cards: Vec<_> = findings(&r, "CARD001")
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(cards, ["graph"], "{:#}", r["findings"]);
}

#[test]
fn nested_model_directories_share_one_missing_card_issue_15() {
    // Cause 10: basic-pitch's `saved_models/icassp_2022/{nmp.onnx, nmp/, nmp.mlpackage/...}`
    // was three CARD001; a card at the top would fix all three, so it is one.
    let st = safetensors(&[("w", "F32", &[2], &[0u8; 8])], None);
    let repo = Repo::new();
    repo.file("pkg/models/a.safetensors", &st)
        .file("pkg/models/nmp/b.safetensors", &st)
        .file("pkg/models/nmp/deep/c.safetensors", &st)
        .file("other/d.safetensors", &st);
    let (_, r) = scan_json(repo.path(), &[]);
    let cards = findings(&r, "CARD001");
    let paths: Vec<_> = cards.iter().map(|f| f["path"].clone()).collect();
    assert_eq!(paths, ["other", "pkg/models"], "{:#}", r["findings"]);
    assert_eq!(cards[1]["evidence"]["nested_directories"], 2);
}

#[test]
fn one_card_above_many_model_directories_is_checked_once() {
    // lleaves 1.3.0 (scripts/real-world.sh): one README without a license above ten model
    // folders gave ten CARD002 findings with one fingerprint, the same finding repeated.
    let st = safetensors(&[("w", "F32", &[2], &[0u8; 8])], None);
    let repo = Repo::new();
    repo.file("README.md", "---\ntags: [x]\n---\n# Models\n")
        .file("a/m.safetensors", &st)
        .file("b/m.safetensors", &st)
        .file("c/d/m.safetensors", &st);
    let (_, r) = scan_json(repo.path(), &[]);
    let cards = findings(&r, "CARD002");
    assert_eq!(cards.len(), 1, "{:#}", r["findings"]);
    assert_eq!(cards[0]["path"], "README.md");
    // Every directory still names the card that covers it.
    let dirs = r["repository"]["model_dirs"].as_array().unwrap();
    assert_eq!(dirs.len(), 3, "{r:#}");
    assert!(dirs.iter().all(|d| d["card_path"] == "README.md"), "{r:#}");
}

#[test]
fn pickle_format_folds_into_the_files_other_pickle_findings_issue_15() {
    // Cause 10: "this is a pickle" beside "this pickle imports X" is one thing to act on; a
    // TorchScript-like archive with a pickle in every member is one file to act on.
    let unknown = b"\x80\x02cpkg.mod\nThing\n)R.";
    let repo = Repo::new();
    repo.file("a.pkl", unknown)
        .file("b.pkl", pickle_ordered_dict())
        .file(
            "c.pt",
            zip_stored(&[
                ("c/data.pkl", &pickle_ordered_dict()),
                ("c/constants.pkl", &pickle_ordered_dict()),
                ("c/version", b"3\n"),
            ]),
        );
    let (_, r) = scan_json(repo.path(), &[]);
    assert_eq!(rules_on(&r, "a.pkl"), ["PKL002"]);
    assert_eq!(rules_on(&r, "b.pkl"), ["PKL003"]);
    let on_c = rules_on(&r, "c.pt");
    assert_eq!(
        on_c.iter().filter(|r| *r == "PKL003").count(),
        1,
        "{:#}",
        r["findings"]
    );
    // A policy stricter on PKL003 than on PKL002 still sees it.
    let policy = repo.abs("p.toml");
    std::fs::write(
        &policy,
        "version = 1\n[rules]\nPKL002 = \"allow\"\nPKL003 = \"deny\"\n",
    )
    .unwrap();
    let (code, r) = scan_json(repo.path(), &["--policy", policy.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(rules_on(&r, "a.pkl").contains(&"PKL003".to_string()));
}

#[test]
fn fasttext_and_word2vec_binaries_are_recognised_issue_15() {
    // Cause 8: gensim's `toy-model.bin` (fastText) was FMT002 "unrecognised weights".
    let mut ft = 793_712_314u32.to_le_bytes().to_vec();
    ft.extend_from_slice(&12u32.to_le_bytes());
    ft.extend_from_slice(&[5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0]);
    let mut w2v = b"2 3\nthe ".to_vec();
    w2v.extend_from_slice(&[
        0x00, 0x00, 0x80, 0x3f, 0xb9, 0xc8, 0xd7, 0x3e, 0x0e, 0x8b, 0x50, 0xbd,
    ]);
    w2v.extend_from_slice(b"\ncat ");
    w2v.extend_from_slice(&[
        0x00, 0x00, 0x80, 0xbf, 0xb9, 0xc8, 0xd7, 0xbe, 0x0e, 0x8b, 0x50, 0x3d,
    ]);
    let repo = Repo::new();
    repo.file("vec/toy-model.bin", &ft)
        .file("vec/model.ftz", &ft)
        .file("vec/vectors.bin", &w2v)
        .file("vec/README.md", "---\nlicense: mit\n---\n# vectors\n");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert_eq!(file(&r, "vec/toy-model.bin")["format"], "fasttext");
    assert_eq!(file(&r, "vec/model.ftz")["format"], "fasttext");
    assert_eq!(file(&r, "vec/vectors.bin")["format"], "word2vec");
    let acted: Vec<_> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["action"] != "allow")
        .collect();
    assert!(acted.is_empty(), "{acted:#?}");
}

#[test]
fn joblib_08_zfile_headers_and_pkl_gzip_names_are_joblib_issue_15() {
    // Cause 6: joblib 0.8 padded the `ZF` length to 20 bytes (one more than 0.9), so
    // `joblib_0.8.4_compressed_pickle_py27_np17.gz` was `unknown` and its pickle unread; the
    // `.pkl.gzip` dumps of joblib's test data were `gzip` of kind `other`.
    let mut zf08 = joblib_zfile(&pickle_call("os", "system", "id"));
    zf08.insert(21, b' ');
    let mut gz = vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03];
    let data = pickle_ordered_dict();
    // A stored deflate block, then CRC-32 and length.
    gz.push(0x01);
    gz.extend_from_slice(&(data.len() as u16).to_le_bytes());
    gz.extend_from_slice(&(!(data.len() as u16)).to_le_bytes());
    gz.extend_from_slice(&data);
    gz.extend_from_slice(&crc32(&data).to_le_bytes());
    gz.extend_from_slice(&(data.len() as u32).to_le_bytes());
    let repo = Repo::new();
    repo.file("data/joblib_0.8.4_compressed_pickle.gz", &zf08)
        .file("data/joblib_0.10.0_pickle.pkl.gzip", &gz);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(
        file(&r, "data/joblib_0.8.4_compressed_pickle.gz")["format"],
        "joblib"
    );
    assert!(rules_on(&r, "data/joblib_0.8.4_compressed_pickle.gz").contains(&"PKL001".to_string()));
    let f = file(&r, "data/joblib_0.10.0_pickle.pkl.gzip");
    assert_eq!(
        (&f["format"], &f["kind"]),
        (&"joblib".into(), &"weights".into())
    );
}

/// A protobuf length-delimited field.
fn pb(field: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![(field << 3) | 2, payload.len() as u8];
    out.extend_from_slice(payload);
    out
}

#[test]
fn tf1_checkpoints_are_recognised_and_their_graph_is_walked_issue_15() {
    // Cause 8: `model.ckpt.meta` is a MetaGraphDef (meta_info_def, graph_def), walked like a
    // SavedModel's graph; `.index` and `.data-*` are the checkpoint's tensors.
    let meta_info = pb(1, &pb(1, b"tensorflow"));
    let graph = |op: &[u8]| {
        [
            meta_info.clone(),
            pb(2, &pb(1, &[pb(1, b"n"), pb(2, op)].concat())),
        ]
        .concat()
    };
    let index = b"\x00\x00\x06\x08\x01\x1a\x02\x08\x01\x00\x1c\x11_CHECKPOINTABLE";
    let repo = Repo::new();
    repo.file("ckpt/model.ckpt.meta", graph(b"SaveV2"))
        .file("ckpt/model.ckpt.index", index)
        .file(
            "ckpt/model.ckpt.data-00000-of-00001",
            [0x66u8, 0xfa, 0xf9, 0x3e, 0x00, 0x01],
        )
        .file("ckpt/README.md", "# ckpt\n");
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert_eq!(file(&r, "ckpt/model.ckpt.meta")["format"], "tf-metagraph");
    assert_eq!(file(&r, "ckpt/model.ckpt.index")["format"], "tf-checkpoint");
    assert_eq!(
        file(&r, "ckpt/model.ckpt.data-00000-of-00001")["format"],
        "tf-checkpoint"
    );
    let evil = Repo::new();
    evil.file("ckpt/model.ckpt.meta", graph(b"PyFunc"));
    let (code, r) = scan_json(evil.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(rules_on(&r, "ckpt/model.ckpt.meta"), ["FMT006"]);
}

/// The PKL002 site (issue 32: a file's unknown globals fold into one finding) for `global`.
fn pkl002_site(r: &serde_json::Value, global: &str) -> serde_json::Value {
    findings(r, "PKL002")
        .into_iter()
        .flat_map(|f| {
            f["evidence"]["sites"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|s| s["global"] == global)
        .unwrap_or_else(|| panic!("no site {global}: {:#}", r["findings"]))
}
