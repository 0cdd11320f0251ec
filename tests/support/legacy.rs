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
