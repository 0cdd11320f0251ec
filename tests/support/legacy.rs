//! Byte-exact builders for the legacy and native-runtime model formats of issue 40: legacy GGML,
//! llamafile, ExecuTorch, TensorRT, XGBoost, LightGBM, CatBoost.

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
