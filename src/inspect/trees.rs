//! Gradient-boosted tree models in their libraries' own formats: XGBoost (`save_model` JSON and
//! UBJSON), LightGBM (the text model `save_model` writes) and CatBoost (`.cbm`). Each is data
//! only: loading one builds trees, imports nothing and runs no code (unlike the pickles the same
//! models are also shipped as, which are judged as pickles). So they are recognised, described
//! from their header (a tree count where one is cheap to read), listed in the SBOM, and never
//! "unknown weights".
//!
//! - XGBoost JSON: an object whose first key is `learner` (`{"learner":{...},"version":[2,0,3]}`);
//!   `gradient_booster.model.gbtree_model_param.num_trees` comes early, the version last.
//! - XGBoost UBJSON: the same document in Universal Binary JSON: `{`, a length marker
//!   (`i U I l L`), the key `learner`.
//! - LightGBM: text starting `tree\nversion=v`; a header of `key=value` lines (`num_class`,
//!   `num_tree_per_iteration`, `objective`, `tree_sizes` with one size per tree) up to a blank
//!   line, then `Tree=0` ....
//! - CatBoost: `CBM1`, a little-endian `u32` size of the FlatBuffers model core that follows.
//!
//! Only the first block of the file (`head`) is looked at; nothing here allocates more than it.

use serde::Serialize;

use super::problem::{Problem, ProblemKind, excerpt};

/// XGBoost facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Xgboost {
    /// `json` or `ubjson`.
    pub encoding: &'static str,
    /// `num_trees` of the gbtree model parameters, when it is in the first block.
    pub num_trees: Option<u64>,
    /// The XGBoost version that wrote it (`2.0.3`), when the whole document is in the first block.
    pub version: Option<String>,
}

/// LightGBM facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Lightgbm {
    /// The model format version (`v3`, `v4`).
    pub version: String,
    /// `num_class`.
    pub num_class: Option<u64>,
    /// `num_tree_per_iteration`.
    pub num_tree_per_iteration: Option<u64>,
    /// `objective`.
    pub objective: Option<String>,
    /// Trees, from `tree_sizes` (one size per tree), when the header is in the first block.
    pub tree_count: Option<u64>,
}

/// CatBoost facts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Catboost {
    /// Bytes of the FlatBuffers model core.
    pub core_size: u32,
}

/// XGBoost JSON: the document's first key is `learner`.
pub fn is_xgboost_json(head: &[u8]) -> bool {
    let t = head.trim_ascii_start();
    let Some(rest) = t.strip_prefix(b"{") else {
        return false;
    };
    rest.trim_ascii_start().starts_with(b"\"learner\"")
}

/// LightGBM's text model.
pub fn is_lightgbm(head: &[u8]) -> bool {
    head.starts_with(b"tree\nversion=v") || head.starts_with(b"tree\r\nversion=v")
}

/// Reads XGBoost facts from the first block of a JSON or UBJSON model.
pub fn xgboost(head: &[u8], whole: bool, ubjson: bool) -> Xgboost {
    let mut f = Xgboost {
        encoding: if ubjson { "ubjson" } else { "json" },
        ..Xgboost::default()
    };
    if ubjson {
        f.num_trees = ubjson_string_after(head, b"num_trees").and_then(|s| s.parse().ok());
        if whole {
            f.version = ubjson_version(head);
        }
        return f;
    }
    f.num_trees = json_string_after(head, b"\"num_trees\"").and_then(|s| s.parse().ok());
    if whole
        && let Ok(v) = serde_json::from_slice::<serde_json::Value>(head)
        && let Some(parts) = v.get("version").and_then(|v| v.as_array())
    {
        let nums: Vec<String> = parts
            .iter()
            .take(4)
            .filter_map(|p| p.as_u64().map(|n| n.to_string()))
            .collect();
        if !nums.is_empty() {
            f.version = Some(nums.join("."));
        }
    }
    f
}

/// The short string value after `key` in JSON text: `"key":"value"`.
fn json_string_after<'a>(head: &'a [u8], key: &[u8]) -> Option<&'a str> {
    let at = find(head, key)? + key.len();
    let rest = head.get(at..)?.trim_ascii_start().strip_prefix(b":")?;
    let rest = rest.trim_ascii_start().strip_prefix(b"\"")?;
    let end = rest.iter().take(32).position(|&b| b == b'"')?;
    std::str::from_utf8(&rest[..end]).ok()
}

/// The short string value after `key` in UBJSON: `key`, `S`, a length marker, the length, bytes.
fn ubjson_string_after<'a>(head: &'a [u8], key: &[u8]) -> Option<&'a str> {
    let at = find(head, key)? + key.len();
    let rest = head.get(at..)?.strip_prefix(b"S")?;
    let (len, rest) = ubjson_len(rest)?;
    let s = rest.get(..usize::try_from(len).ok().filter(|&l| l <= 32)?)?;
    std::str::from_utf8(s).ok()
}

/// A UBJSON length: a marker and a big-endian integer. Returns it and what follows.
pub fn ubjson_len(b: &[u8]) -> Option<(u64, &[u8])> {
    let (&marker, rest) = b.split_first()?;
    let n = match marker {
        b'i' | b'U' => 1,
        b'I' => 2,
        b'l' => 4,
        b'L' => 8,
        _ => return None,
    };
    let bytes = rest.get(..n)?;
    let mut v: u64 = 0;
    for &x in bytes {
        v = (v << 8) | u64::from(x);
    }
    // Signed markers: a negative length is no length.
    if marker != b'U' && bytes.first().is_some_and(|&x| x & 0x80 != 0) {
        return None;
    }
    Some((v, &rest[n..]))
}

/// The `version` array that closes a whole UBJSON model (its last key): `version`, `[`, an
/// optional `$` element type, an optional `#` count, then integers (`[#L<3>i\x02i\x01i\x04}` from
/// XGBoost 2.1.4). Looked for in the last 64 bytes only; at most four parts are read, and a cut
/// array gives the parts before the cut.
fn ubjson_version(doc: &[u8]) -> Option<String> {
    let tail = &doc[doc.len().saturating_sub(64)..];
    let at = tail.windows(8).rposition(|w| w == b"version[")? + 8;
    let mut rest = tail.get(at..)?;
    let mut typed = None;
    if let Some(r) = rest.strip_prefix(b"$") {
        let (&t, r) = r.split_first()?;
        typed = Some(t);
        rest = r;
    }
    let mut count = None;
    if let Some(r) = rest.strip_prefix(b"#") {
        let (n, r) = ubjson_len(r)?;
        count = Some(n.min(4));
        rest = r;
    }
    let mut parts = Vec::new();
    while parts.len() < 4 && count.is_none_or(|n| (parts.len() as u64) < n) {
        if count.is_none() && rest.first() == Some(&b']') {
            break;
        }
        let next = match typed {
            Some(t) => {
                let mut marked = [t; 9];
                let n = rest.len().min(8);
                marked[1..=n].copy_from_slice(&rest[..n]);
                ubjson_len(&marked[..=n])
                    .and_then(|(v, left)| Some((v, rest.get(n - left.len()..)?)))
            }
            None => ubjson_len(rest),
        };
        // A cut or damaged array: the parts read so far.
        let Some((v, r)) = next else {
            break;
        };
        parts.push(v.to_string());
        rest = r;
    }
    (!parts.is_empty()).then(|| parts.join("."))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

/// Reads LightGBM facts from the header lines in the first block.
pub fn lightgbm(head: &[u8]) -> Lightgbm {
    let text = String::from_utf8_lossy(head);
    let mut f = Lightgbm::default();
    let mut complete = false;
    for line in text.lines().skip(1) {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            complete = true;
            break;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        match k {
            "version" => f.version = excerpt(v, 16),
            "num_class" => f.num_class = v.parse().ok(),
            "num_tree_per_iteration" => f.num_tree_per_iteration = v.parse().ok(),
            "objective" => f.objective = Some(excerpt(v, 64)),
            "tree_sizes" => f.tree_count = Some(v.split_ascii_whitespace().count() as u64),
            _ => {}
        }
    }
    if !complete {
        // A `tree_sizes` line cut by the block's end undercounts: not a count.
        f.tree_count = None;
    }
    f
}

/// Reads CatBoost facts: the core size must fit the file (a larger one is a crafted header).
pub fn catboost(head: &[u8], size: u64) -> (Catboost, Vec<Problem>) {
    let mut problems = Vec::new();
    let core_size = head
        .get(4..8)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if head.len() < 8 {
        problems.push(Problem::new(
            ProblemKind::Malformed,
            "truncated",
            format!("catboost: the file ends at {size} bytes, inside the 8-byte header"),
            Some(0),
        ));
    } else if u64::from(core_size) > size - 8 {
        problems.push(Problem::new(
            ProblemKind::Exploit,
            "core-past-end",
            format!(
                "catboost: the model core declares {core_size} bytes, past the end of the {size}-byte file"
            ),
            Some(4),
        ));
    }
    (Catboost { core_size }, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xgboost_json_and_ubjson() {
        let j = br#"{"learner":{"gradient_booster":{"model":{"gbtree_model_param":{"num_parallel_tree":"1","num_trees":"3"},"trees":[]},"name":"gbtree"}},"version":[2,0,3]}"#;
        assert!(is_xgboost_json(j));
        assert!(!is_xgboost_json(br#"{"architectures":["x"]}"#));
        let f = xgboost(j, true, false);
        assert_eq!(f.num_trees, Some(3));
        assert_eq!(f.version.as_deref(), Some("2.0.3"));
        let u = b"{L\x00\x00\x00\x00\x00\x00\x00\x07learner{L\x00\x00\x00\x00\x00\x00\x00\x09num_treesSL\x00\x00\x00\x00\x00\x00\x00\x0212}";
        assert!(crate::classify::is_xgboost_ubjson(u));
        assert_eq!(xgboost(u, true, true).num_trees, Some(12));
        assert_eq!(xgboost(u, true, true).version, None);
        // Issue 40: the version array as xgboost 2.1.4 ends a UBJSON model
        // (scripts/format-samples.sh), counted and untyped; then typed, and open-ended.
        let tail = b"}L\x00\x00\x00\x00\x00\x00\x00\x07version[#L\x00\x00\x00\x00\x00\x00\x00\x03i\x02i\x01i\x04}";
        let v = [&u[..u.len() - 1], &tail[..]].concat();
        assert_eq!(xgboost(&v, true, true).version.as_deref(), Some("2.1.4"));
        assert_eq!(xgboost(&v, false, true).version, None);
        let typed = [
            &u[..u.len() - 1],
            &b"}U\x07version[$U#U\x03\x03\x00\x01}"[..],
        ]
        .concat();
        assert_eq!(
            xgboost(&typed, true, true).version.as_deref(),
            Some("3.0.1")
        );
        let open = [&u[..u.len() - 1], &b"}U\x07version[i\x01i\x07]}"[..]].concat();
        assert_eq!(xgboost(&open, true, true).version.as_deref(), Some("1.7"));
        // Cut, or with a count past what is there: as far as it reads, never past the end.
        assert_eq!(
            xgboost(&v[..v.len() - 3], true, true).version.as_deref(),
            Some("2.1")
        );
        let huge = [
            &u[..u.len() - 1],
            &b"}U\x07version[#L\x7f\xff\xff\xff\xff\xff\xff\xffi\x01"[..],
        ]
        .concat();
        assert_eq!(xgboost(&huge, true, true).version.as_deref(), Some("1"));
        // A hostile length is no value.
        let h = b"{L\x00\x00\x00\x00\x00\x00\x00\x07learner{L\x00\x00\x00\x00\x00\x00\x00\x09num_treesSL\xff\xff\xff\xff\xff\xff\xff\xff12}";
        assert_eq!(xgboost(h, true, true).num_trees, None);
    }

    #[test]
    fn lightgbm_header() {
        let m = b"tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\nobjective=binary sigmoid:1\ntree_sizes=120 118 121\n\nTree=0\n";
        assert!(is_lightgbm(m));
        let f = lightgbm(m);
        assert_eq!(f.version, "v4");
        assert_eq!(f.tree_count, Some(3));
        assert_eq!(f.objective.as_deref(), Some("binary sigmoid:1"));
        // A header cut by the block's end gives no count.
        assert_eq!(lightgbm(&m[..70]).tree_count, None);
    }

    #[test]
    fn catboost_core_size() {
        let mut c = b"CBM1".to_vec();
        c.extend_from_slice(&4u32.to_le_bytes());
        c.extend_from_slice(b"core");
        let (f, p) = catboost(&c, c.len() as u64);
        assert_eq!(f.core_size, 4);
        assert!(p.is_empty());
        c[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        let (_, p) = catboost(&c, c.len() as u64);
        assert!(matches!(p.as_slice(), [q] if q.kind == ProblemKind::Exploit));
        let (_, p) = catboost(b"CBM1", 4);
        assert!(matches!(p.as_slice(), [q] if q.code == "truncated"));
    }
}
