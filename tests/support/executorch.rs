//! A FlatBuffer builder and byte-exact ExecuTorch `.pte` programs (issue 40).
//! Self-contained (no crate imports): the unit tests in `src/inspect/executorch.rs` include this
//! file with `#[path]`, the CLI tests through `tests/support`.
#![allow(dead_code)]

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
