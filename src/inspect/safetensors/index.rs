//! Shard index validation (ST003): a `*.safetensors.index.json` against the headers of the
//! shards next to it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::header::{Header, Limits, Violation, code, violation};
use crate::model::problem::ProblemKind;

/// What [`check_shard_index`] needs to know about one shard: its tensors and their byte sizes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardSummary {
    /// Tensor name to data size in bytes.
    pub tensors: BTreeMap<String, u64>,
}

impl From<&Header> for ShardSummary {
    fn from(h: &Header) -> Self {
        Self {
            tensors: h
                .tensors
                .iter()
                .map(|t| (t.name.clone(), t.byte_len()))
                .collect(),
        }
    }
}

#[derive(Deserialize)]
struct RawIndex {
    #[serde(default)]
    metadata: Option<serde_json::Value>,
    weight_map: PairList,
}

/// A JSON object read as its entries in order, so that duplicate tensor names stay visible.
struct PairList(Vec<(String, String)>);

impl<'de> Deserialize<'de> for PairList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = PairList;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object mapping tensor names to shard file names")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<PairList, A::Error> {
                let mut out = Vec::new();
                while let Some(pair) = m.next_entry::<String, String>()? {
                    out.push(pair);
                }
                Ok(PairList(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Splits `prefix-NNNNN-of-MMMMM.safetensors` into `(NNNNN, MMMMM)`.
fn shard_numbers(name: &str) -> Option<(u64, u64)> {
    let stem = name.strip_suffix(".safetensors")?;
    let (head, total) = stem.rsplit_once("-of-")?;
    let (prefix, index) = head.rsplit_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if prefix.is_empty() || !digits(index) || !digits(total) {
        return None;
    }
    Some((index.parse().ok()?, total.parse().ok()?))
}

/// Shard names must stay inside the index's directory: an index pointing at `../x` or an
/// absolute path would make a loader read a file the scan never attributed to this model.
fn shard_name_ok(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('/')
        && !name.contains('\\')
        && !name.contains(':')
        && name
            .split('/')
            .all(|part| !part.is_empty() && part != ".." && part != ".")
}

/// Checks a `*.safetensors.index.json` against the shards present next to it.
///
/// `shards` holds every shard-like file present (name relative to the index's directory), with
/// `None` for a file that is present but not valid safetensors (its ST001 finding stands on its
/// own; its tensors are not compared). Present files that the index does not reference are
/// reported only when named like `prefix-NNNNN-of-MMMMM.safetensors`.
pub fn check_shard_index(
    index_json: &[u8],
    shards: &BTreeMap<String, Option<ShardSummary>>,
    limits: &Limits,
) -> Vec<Violation> {
    let mut out = Vec::new();
    if index_json.len() as u64 > limits.max_index_bytes {
        out.push(violation(
            code::INDEX_TOO_LARGE,
            format!(
                "index holds {} bytes, over the limit of {}",
                index_json.len(),
                limits.max_index_bytes
            ),
        ));
        return out;
    }
    let raw: RawIndex = match serde_json::from_slice(index_json) {
        Ok(r) => r,
        Err(e) => {
            out.push(violation(
                code::INDEX_INVALID_JSON,
                format!("index is not valid: {e}"),
            ));
            return out;
        }
    };

    let mut weight_map: BTreeMap<&str, &str> = BTreeMap::new();
    for (tensor, shard) in &raw.weight_map.0 {
        if weight_map.insert(tensor, shard).is_some() {
            out.push(
                violation(
                    code::DUPLICATE_KEY,
                    format!("weight_map lists tensor {tensor:?} twice"),
                )
                .with("tensor", tensor),
            );
        }
    }
    let referenced: BTreeSet<&str> = weight_map.values().copied().collect();

    for &shard in &referenced {
        if !shard_name_ok(shard) {
            out.push(
                violation(
                    code::SHARD_NAME_INVALID,
                    format!("weight_map names shard {shard:?} outside the index's directory"),
                )
                .with("shard", shard),
            );
        } else if !shards.contains_key(shard) {
            let n = weight_map.values().filter(|&&s| s == shard).count();
            out.push(
                violation(
                    code::MISSING_SHARD,
                    format!("shard {shard:?} holding {n} indexed tensors is not present"),
                )
                .with("shard", shard),
            );
        }
    }

    // Where each tensor really is, among the valid shards present.
    let mut located: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (shard, summary) in shards {
        for tensor in summary.iter().flat_map(|s| s.tensors.keys()) {
            located.entry(tensor).or_default().push(shard);
        }
    }

    for (&tensor, &shard) in &weight_map {
        let Some(Some(summary)) = shards.get(shard) else {
            continue;
        };
        if !summary.tensors.contains_key(tensor) && !located.contains_key(tensor) {
            out.push(
                violation(
                    code::TENSOR_NOT_IN_SHARD,
                    format!("index maps {tensor:?} to {shard:?}, whose header lacks it"),
                )
                .with("tensor", tensor)
                .with("shard", shard),
            );
        }
    }
    for (&tensor, holders) in &located {
        for &holder in holders {
            match weight_map.get(tensor) {
                None => out.push(
                    violation(
                        code::TENSOR_NOT_IN_INDEX,
                        format!("shard {holder:?} holds {tensor:?}, which the index does not list"),
                    )
                    .with("tensor", tensor)
                    .with("shard", holder),
                ),
                Some(&mapped) if mapped != holder => out.push(
                    violation(
                        code::TENSOR_IN_WRONG_SHARD,
                        format!(
                            "shard {holder:?} holds {tensor:?}, which the index maps to {mapped:?}"
                        ),
                    )
                    .with("tensor", tensor)
                    .with("shard", holder),
                ),
                Some(_) => {}
            }
        }
    }

    for shard in shards.keys() {
        if !referenced.contains(shard.as_str()) && shard_numbers(shard).is_some() {
            out.push(
                violation(
                    code::UNREFERENCED_SHARD,
                    format!("shard-named file {shard:?} is not referenced by the index"),
                )
                .with("shard", shard),
            );
        }
    }

    check_shard_numbering(&referenced, &mut out);
    check_total_size(&raw, &weight_map, &referenced, shards, &mut out);
    out
}

fn check_shard_numbering(referenced: &BTreeSet<&str>, out: &mut Vec<Violation>) {
    let numbered: Vec<(&str, u64, u64)> = referenced
        .iter()
        .filter_map(|s| shard_numbers(s).map(|(i, n)| (*s, i, n)))
        .collect();
    let totals: BTreeSet<u64> = numbered.iter().map(|&(_, _, n)| n).collect();
    if totals.len() > 1 {
        out.push(violation(
            code::SHARD_COUNT_MISMATCH,
            format!("referenced shards disagree on the shard count: {totals:?}"),
        ));
        return;
    }
    let Some(&total) = totals.first() else {
        return;
    };
    for &(shard, i, n) in &numbered {
        if i == 0 || i > n {
            out.push(
                violation(
                    code::SHARD_COUNT_MISMATCH,
                    format!("shard {shard:?} is numbered {i} of {n}"),
                )
                .with("shard", shard),
            );
        }
    }
    if numbered.len() as u64 != total {
        out.push(violation(
            code::SHARD_COUNT_MISMATCH,
            format!(
                "shard names say {total} shards but the index references {}",
                numbered.len()
            ),
        ));
    }
}

/// `metadata.total_size` is advisory in the wild (tied weights, rounding), hence a warning;
/// it is only compared when every referenced shard was read.
fn check_total_size(
    raw: &RawIndex,
    weight_map: &BTreeMap<&str, &str>,
    referenced: &BTreeSet<&str>,
    shards: &BTreeMap<String, Option<ShardSummary>>,
    out: &mut Vec<Violation>,
) {
    let Some(declared) = raw.metadata.as_ref().and_then(|m| m.get("total_size")) else {
        return;
    };
    let mut warn = |message: String| {
        let mut v = violation(code::TOTAL_SIZE_MISMATCH, message);
        v.kind = ProblemKind::Note;
        out.push(v);
    };
    let declared = match declared.as_u64() {
        Some(v) => v,
        None => match declared.as_f64() {
            Some(f) if f >= 0.0 && f.fract() == 0.0 && f < 1.8e19 => f as u64,
            _ => {
                warn(format!(
                    "metadata.total_size is {declared}, not a byte count"
                ));
                return;
            }
        },
    };
    if !referenced
        .iter()
        .all(|s| matches!(shards.get(*s), Some(Some(_))))
    {
        return;
    }
    let mut actual: u64 = 0;
    for (&tensor, &shard) in weight_map {
        let size = shards
            .get(shard)
            .and_then(|s| s.as_ref())
            .and_then(|s| s.tensors.get(tensor))
            .copied()
            .unwrap_or(0);
        actual = actual.saturating_add(size);
    }
    if actual != declared {
        warn(format!(
            "metadata.total_size is {declared} but the indexed tensors hold {actual} bytes"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(tensors: &[(&str, u64)]) -> Option<ShardSummary> {
        Some(ShardSummary {
            tensors: tensors.iter().map(|(n, s)| ((*n).to_owned(), *s)).collect(),
        })
    }

    const S1: &str = "model-00001-of-00002.safetensors";
    const S2: &str = "model-00002-of-00002.safetensors";

    fn index(map: &[(&str, &str)], total: Option<u64>) -> Vec<u8> {
        let wm: serde_json::Map<String, serde_json::Value> = map
            .iter()
            .map(|(t, s)| ((*t).to_owned(), (*s).into()))
            .collect();
        let mut v = serde_json::json!({ "weight_map": wm });
        if let Some(t) = total {
            v["metadata"] = serde_json::json!({ "total_size": t });
        }
        serde_json::to_vec(&v).unwrap()
    }

    fn good_shards() -> BTreeMap<String, Option<ShardSummary>> {
        BTreeMap::from([
            (S1.to_owned(), summary(&[("a", 8), ("b", 4)])),
            (S2.to_owned(), summary(&[("c", 2)])),
        ])
    }

    fn codes(v: &[Violation]) -> Vec<&'static str> {
        v.iter().map(|v| v.code).collect()
    }

    #[test]
    fn accepts_consistent_shard_index() {
        let idx = index(&[("a", S1), ("b", S1), ("c", S2)], Some(14));
        assert!(check_shard_index(&idx, &good_shards(), &Limits::default()).is_empty());
    }

    #[test]
    fn rejects_invalid_index_json() {
        for bad in [
            &b"{"[..],
            b"[]",
            br#"{"weight_map":{"a":1}}"#,
            br#"{"metadata":{}}"#,
            br#"{"weight_map":{},"weight_map":{}}"#,
        ] {
            assert_eq!(
                codes(&check_shard_index(bad, &good_shards(), &Limits::default())),
                [code::INDEX_INVALID_JSON]
            );
        }
        let limits = Limits {
            max_index_bytes: 4,
            ..Limits::default()
        };
        assert_eq!(
            codes(&check_shard_index(
                b"{\"weight_map\":{}}",
                &good_shards(),
                &limits
            )),
            [code::INDEX_TOO_LARGE]
        );
    }

    #[test]
    fn rejects_duplicate_tensor_in_index() {
        let idx = br#"{"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors","a":"model-00002-of-00002.safetensors"}}"#;
        assert!(
            codes(&check_shard_index(idx, &good_shards(), &Limits::default()))
                .contains(&code::DUPLICATE_KEY)
        );
    }

    #[test]
    fn rejects_missing_shard() {
        let mut shards = good_shards();
        shards.remove(S2);
        let idx = index(&[("a", S1), ("b", S1), ("c", S2)], None);
        let v = check_shard_index(&idx, &shards, &Limits::default());
        assert_eq!(codes(&v), [code::MISSING_SHARD]);
        assert_eq!(v[0].detail("shard"), Some(S2));
    }

    #[test]
    fn rejects_shard_name_outside_directory() {
        let idx = index(&[("a", "../evil.safetensors")], None);
        assert!(
            codes(&check_shard_index(
                &idx,
                &BTreeMap::new(),
                &Limits::default()
            ))
            .contains(&code::SHARD_NAME_INVALID)
        );
    }

    #[test]
    fn rejects_tensor_not_in_shard() {
        let idx = index(&[("a", S1), ("b", S1), ("c", S2), ("d", S2)], None);
        let v = check_shard_index(&idx, &good_shards(), &Limits::default());
        assert_eq!(codes(&v), [code::TENSOR_NOT_IN_SHARD]);
        assert_eq!(v[0].detail("tensor"), Some("d"));
    }

    #[test]
    fn rejects_tensor_not_in_index() {
        let idx = index(&[("a", S1), ("c", S2)], None);
        let v = check_shard_index(&idx, &good_shards(), &Limits::default());
        assert_eq!(codes(&v), [code::TENSOR_NOT_IN_INDEX]);
        assert_eq!(
            (v[0].detail("tensor"), v[0].detail("shard")),
            (Some("b"), Some(S1))
        );
    }

    #[test]
    fn rejects_tensor_in_wrong_shard() {
        let idx = index(&[("a", S1), ("b", S2), ("c", S2)], None);
        let v = check_shard_index(&idx, &good_shards(), &Limits::default());
        assert_eq!(codes(&v), [code::TENSOR_IN_WRONG_SHARD]);
    }

    #[test]
    fn rejects_unreferenced_shard() {
        let mut shards = good_shards();
        shards.insert("model-00003-of-00003.safetensors".to_owned(), None);
        shards.insert("notes.safetensors".to_owned(), summary(&[]));
        let idx = index(&[("a", S1), ("b", S1), ("c", S2)], None);
        assert_eq!(
            codes(&check_shard_index(&idx, &shards, &Limits::default())),
            [code::UNREFERENCED_SHARD]
        );
    }

    #[test]
    fn rejects_shard_count_mismatch() {
        let s1 = "model-00001-of-00003.safetensors";
        let s2 = "model-00002-of-00003.safetensors";
        let shards = BTreeMap::from([
            (s1.to_owned(), summary(&[("a", 1)])),
            (s2.to_owned(), summary(&[("b", 1)])),
        ]);
        let idx = index(&[("a", s1), ("b", s2)], None);
        assert_eq!(
            codes(&check_shard_index(&idx, &shards, &Limits::default())),
            [code::SHARD_COUNT_MISMATCH]
        );
    }

    #[test]
    fn warns_on_total_size_mismatch() {
        let idx = index(&[("a", S1), ("b", S1), ("c", S2)], Some(15));
        let v = check_shard_index(&idx, &good_shards(), &Limits::default());
        assert_eq!(codes(&v), [code::TOTAL_SIZE_MISMATCH]);
        assert_eq!(v[0].kind, ProblemKind::Note);
    }

    #[test]
    fn skips_tensor_checks_for_invalid_shards() {
        let mut shards = good_shards();
        shards.insert(S2.to_owned(), None);
        let idx = index(&[("a", S1), ("b", S1), ("c", S2)], Some(99));
        assert!(check_shard_index(&idx, &shards, &Limits::default()).is_empty());
    }
}
