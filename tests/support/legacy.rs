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

/// A tiny FlatBuffer builder that writes back to front like `flatc` (children first, so
/// every uoffset points forward). Handles are distances from an object to the buffer's end.
pub struct Fb {
    pub buf: Vec<u8>,
}

/// A field value for `Fb::table`.
pub enum V {
    U8(u8),
    U32(u32),
    U64(u64),
    /// A uoffset to an object written earlier (its handle).
    Ref(usize),
}

impl Fb {
    pub fn new() -> Self {
        Fb { buf: Vec::new() }
    }

    fn prepend(&mut self, mut chunk: Vec<u8>) -> usize {
        while !chunk.len().is_multiple_of(4) {
            chunk.push(0);
        }
        let h = self.buf.len() + chunk.len();
        self.buf.splice(0..0, chunk);
        h
    }

    /// A string; returns its handle.
    pub fn string(&mut self, s: &str) -> usize {
        let mut c = (s.len() as u32).to_le_bytes().to_vec();
        c.extend_from_slice(s.as_bytes());
        c.push(0);
        self.prepend(c)
    }

    /// A byte vector; returns its handle.
    pub fn bytes(&mut self, b: &[u8]) -> usize {
        let mut c = (b.len() as u32).to_le_bytes().to_vec();
        c.extend_from_slice(b);
        self.prepend(c)
    }

    /// A vector of references to `targets`; returns its handle.
    pub fn refs(&mut self, targets: &[usize]) -> usize {
        let len = 4 + 4 * targets.len();
        let end = self.buf.len() + len;
        let mut c = (targets.len() as u32).to_le_bytes().to_vec();
        for (i, &t) in targets.iter().enumerate() {
            let here = end - (4 + 4 * i);
            c.extend_from_slice(&((here - t) as u32).to_le_bytes());
        }
        self.prepend(c)
    }

    /// A table with `fields` in field id order, its vtable right before it; returns the
    /// table's handle.
    pub fn table(&mut self, fields: &[Option<V>]) -> usize {
        let vt_len = 4 + 2 * fields.len();
        let vt_total = vt_len.next_multiple_of(4);
        let body_len = 8 + 8 * fields.iter().filter(|f| f.is_some()).count();
        let end = self.buf.len() + vt_total + body_len;
        let mut vt = (vt_len as u16).to_le_bytes().to_vec();
        vt.extend_from_slice(&(body_len as u16).to_le_bytes());
        let mut body = (vt_total as i32).to_le_bytes().to_vec();
        body.extend_from_slice(&[0; 4]);
        for f in fields {
            let Some(v) = f else {
                vt.extend_from_slice(&0u16.to_le_bytes());
                continue;
            };
            vt.extend_from_slice(&(body.len() as u16).to_le_bytes());
            match v {
                V::U8(x) => body.extend_from_slice(&[*x, 0, 0, 0, 0, 0, 0, 0]),
                V::U32(x) => {
                    body.extend_from_slice(&x.to_le_bytes());
                    body.extend_from_slice(&[0; 4]);
                }
                V::U64(x) => body.extend_from_slice(&x.to_le_bytes()),
                V::Ref(t) => {
                    let here = end - (vt_total + body.len());
                    body.extend_from_slice(&((here - t) as u32).to_le_bytes());
                    body.extend_from_slice(&[0; 4]);
                }
            }
        }
        vt.resize(vt_total, 0);
        vt.extend_from_slice(&body);
        self.prepend(vt) - vt_total
    }

    /// Prepends the file header (root offset, identifier, extended header) and returns the
    /// file.
    pub fn finish(mut self, root: usize, ident: &[u8; 4]) -> Vec<u8> {
        let total = self.buf.len() + 40;
        let mut h = ((total - root) as u32).to_le_bytes().to_vec();
        h.extend_from_slice(ident);
        h.extend_from_slice(b"eh00");
        h.extend_from_slice(&32u32.to_le_bytes());
        h.extend_from_slice(&(total as u64).to_le_bytes());
        h.extend_from_slice(&(total as u64).to_le_bytes());
        h.extend_from_slice(&0u64.to_le_bytes());
        self.buf.splice(0..0, h);
        self.buf
    }
}

/// A `.pte`: root offset, `ET12`, an extended header, then a program with one plan using
/// `ops` (name, overload) and delegates (id, inline blob).
pub fn pte(ops: &[(&str, &str)], delegates: &[(&str, &[u8])], segments: &[(u64, u64)]) -> Vec<u8> {
    let mut fb = Fb::new();
    let mut op_tables = Vec::new();
    for (n, o) in ops {
        let n = fb.string(n);
        let o = fb.string(o);
        op_tables.push(fb.table(&[Some(V::Ref(n)), Some(V::Ref(o))]));
    }
    let mut blobs = Vec::new();
    let mut dels = Vec::new();
    for (i, (id, blob)) in delegates.iter().enumerate() {
        let data = fb.bytes(blob);
        blobs.push(fb.table(&[Some(V::Ref(data))]));
        let r = fb.table(&[Some(V::U8(0)), Some(V::U32(i as u32))]);
        let id = fb.string(id);
        dels.push(fb.table(&[Some(V::Ref(id)), Some(V::Ref(r))]));
    }
    let ops_v = fb.refs(&op_tables);
    let dels_v = fb.refs(&dels);
    let name = fb.string("forward");
    let plan = fb.table(&[
        Some(V::Ref(name)),
        None,
        None,
        None,
        None,
        None,
        Some(V::Ref(ops_v)),
        Some(V::Ref(dels_v)),
    ]);
    let plans = fb.refs(&[plan]);
    let blobs_v = fb.refs(&blobs);
    let segs: Vec<usize> = segments
        .iter()
        .map(|&(o, s)| fb.table(&[Some(V::U64(o)), Some(V::U64(s))]))
        .collect();
    let segs_v = fb.refs(&segs);
    let root = fb.table(&[
        Some(V::U32(0)),
        Some(V::Ref(plans)),
        None,
        Some(V::Ref(blobs_v)),
        Some(V::Ref(segs_v)),
    ]);
    fb.finish(root, b"ET12")
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
