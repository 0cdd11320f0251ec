//! Byte-exact builders for the legacy and native-runtime model formats of issue 40: legacy GGML,
//! llamafile, ExecuTorch, TensorRT, XGBoost, LightGBM, CatBoost.

pub use super::executorch::pte;

/// One ggml tensor record: dims, name, type, then `data` bytes of 0x11 (aligned to 32 first
/// when `align`, as `ggjt` and `ggla` do).
pub fn ggml_tensor(out: &mut Vec<u8>, dims: &[i32], name: &str, ty: i32, data: usize, align: bool) {
    out.extend_from_slice(&(dims.len() as i32).to_le_bytes());
    out.extend_from_slice(&(name.len() as i32).to_le_bytes());
    out.extend_from_slice(&ty.to_le_bytes());
    for d in dims {
        out.extend_from_slice(&d.to_le_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    if align {
        while !out.len().is_multiple_of(32) {
            out.push(0);
        }
    }
    out.extend(std::iter::repeat_n(0x11u8, data));
}

/// The header of a ggjt v3 llama file: magic, version, 7 hparams (n_vocab = 3), 3 scored tokens.
pub fn ggjt_header(n_vocab: i32) -> Vec<u8> {
    let mut v = 0x6767_6a74u32.to_le_bytes().to_vec();
    v.extend_from_slice(&3u32.to_le_bytes());
    for h in [n_vocab, 8, 256, 2, 1, 4, 2] {
        v.extend_from_slice(&h.to_le_bytes());
    }
    for t in ["<unk>", "<s>", "</s>"] {
        v.extend_from_slice(&(t.len() as u32).to_le_bytes());
        v.extend_from_slice(t.as_bytes());
        v.extend_from_slice(&0f32.to_le_bytes());
    }
    v
}

/// A well-formed ggjt v3 llama file: an F32 [8, 3] embedding and a Q4_0 [32] norm.
pub fn ggjt_model() -> Vec<u8> {
    let mut v = ggjt_header(3);
    ggml_tensor(&mut v, &[8, 3], "tok_embeddings.weight", 0, 96, true);
    ggml_tensor(&mut v, &[32], "norm.weight", 2, 18, true);
    v
}

/// A GGUF v3 file with no tensors and one string metadata entry.
pub fn gguf_with(key: &str, value: &str) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&1u64.to_le_bytes());
    out.extend_from_slice(&(key.len() as u64).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&(value.len() as u64).to_le_bytes());
    out.extend_from_slice(value.as_bytes());
    while !out.len().is_multiple_of(32) {
        out.push(0);
    }
    out
}

/// `exe` with a zip appended the way llamafile's `zipalign` does it: members stored, each
/// member's data aligned to `align` bytes, offsets counted from the start of the file.
pub fn llamafile(exe: &[u8], members: &[(&str, &[u8])], align: usize) -> Vec<u8> {
    let mut out = exe.to_vec();
    let mut central = Vec::new();
    for (name, data) in members {
        // Pad before the local header so that the data after it lands aligned.
        while !(out.len() + 30 + name.len()).is_multiple_of(align) {
            out.push(0);
        }
        let local = out.len() as u32;
        let crc = super::crc32(data);
        out.extend_from_slice(b"PK\x03\x04");
        out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        central.extend_from_slice(b"PK\x01\x02");
        central.extend_from_slice(&[20, 3, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(data.len() as u32).to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0u8; 12]);
        central.extend_from_slice(&local.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_at = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    out.extend_from_slice(&(members.len() as u16).to_le_bytes());
    out.extend_from_slice(&(members.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_at.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// A TensorRT engine: the `ftrt` tag, a serialization version, opaque bytes, `payload`, more
/// opaque bytes.
pub fn trt_engine(payload: &[u8]) -> Vec<u8> {
    let mut e = b"ftrt\x00\x00\x00\x00\xe8\x00\x00\x00".to_vec();
    e.extend((0..3000u32).map(|i| (i * 31 % 251) as u8));
    e.extend_from_slice(payload);
    e.extend((0..3000u32).map(|i| (i * 17 % 241) as u8));
    e
}

/// An XGBoost JSON model (`Booster.save_model("m.json")` shape) with `trees` trees.
pub fn xgboost_json(trees: usize) -> String {
    let tree = r#"{"base_weights":[0.5],"left_children":[-1],"right_children":[-1],"split_indices":[0],"split_conditions":[0.5],"tree_param":{"num_nodes":"1","num_feature":"2"},"id":0}"#;
    let all = vec![tree; trees].join(",");
    format!(
        r#"{{"learner":{{"attributes":{{}},"feature_names":[],"feature_types":[],"gradient_booster":{{"model":{{"gbtree_model_param":{{"num_parallel_tree":"1","num_trees":"{trees}"}},"iteration_indptr":[0],"tree_info":[0],"trees":[{all}]}},"name":"gbtree"}},"learner_model_param":{{"base_score":"5E-1","num_class":"0","num_feature":"2","num_target":"1"}},"objective":{{"name":"binary:logistic","reg_loss_param":{{"scale_pos_weight":"1"}}}}}},"version":[2,1,0]}}"#
    )
}

/// An XGBoost UBJSON model head: `{`, `L` + length 7 + `learner`, then `num_trees`.
pub fn xgboost_ubj(trees: &str) -> Vec<u8> {
    let key = |k: &str| {
        let mut v = b"L".to_vec();
        v.extend_from_slice(&(k.len() as u64).to_be_bytes());
        v.extend_from_slice(k.as_bytes());
        v
    };
    let mut out = b"{".to_vec();
    out.extend(key("learner"));
    out.push(b'{');
    out.extend(key("num_trees"));
    out.push(b'S');
    out.extend(key(trees));
    out.extend_from_slice(b"}");
    out.extend(key("version"));
    out.extend_from_slice(b"[$L#i\x03");
    for v in [2u64, 1, 0] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.push(b'}');
    out
}

/// A LightGBM text model with three trees.
pub const LIGHTGBM_MODEL: &str = "tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\nmax_feature_idx=1\nobjective=binary sigmoid:1\nfeature_names=a b\nfeature_infos=[0:1] [0:1]\ntree_sizes=120 118 121\n\nTree=0\nnum_leaves=1\nleaf_value=0.1\n\n\nTree=1\nnum_leaves=1\nleaf_value=0.1\n\n\nTree=2\nnum_leaves=1\nleaf_value=0.1\n\n\nend of trees\n";

/// A CatBoost `.cbm`: `CBM1`, the core size, the core.
pub fn catboost_cbm(declared: u32, core: &[u8]) -> Vec<u8> {
    let mut v = b"CBM1".to_vec();
    v.extend_from_slice(&declared.to_le_bytes());
    v.extend_from_slice(core);
    v
}
