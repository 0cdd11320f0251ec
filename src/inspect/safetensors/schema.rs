//! Phase 2 of header validation: the safetensors schema on text already known to be strict JSON.
//!
//! Dtypes, shapes, offsets, duplicate names and `__metadata__` are checked per entry, then
//! [`check_tiling`] makes sure the sorted tensors cover the data buffer exactly once.

use std::collections::{BTreeMap, HashSet};

use super::header::{Dtype, Limits, TensorInfo, Violation, code, violation};
use super::syntax::Json;

/// Parses a number token as a plain non-negative integer: digits only (the lexer already refused
/// leading zeros), no `-0`, no fraction, no exponent, below 2^64.
fn plain_u64(token: &str) -> Option<u64> {
    if token.is_empty() || !token.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    token.parse::<u64>().ok()
}

/// Phase 2 of the header: the safetensors schema on text already known to be strict JSON.
pub(super) struct Schema<'a> {
    p: Json<'a>,
    limits: &'a Limits,
}

type Parsed = (Vec<TensorInfo>, Option<BTreeMap<String, String>>);

impl<'a> Schema<'a> {
    pub(super) fn new(text: &'a str, limits: &'a Limits) -> Self {
        Self {
            p: Json::new(text),
            limits,
        }
    }

    pub(super) fn parse(mut self) -> Result<Parsed, Violation> {
        let mut tensors = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        let mut metadata = None;
        // `"__metadata__": null` leaves `metadata` empty, so a second key is caught by this flag.
        let mut seen_metadata = false;
        self.p.expect_byte(b'{')?;
        self.p.skip_ws();
        if self.p.peek() == Some(b'}') {
            return Ok((tensors, metadata));
        }
        loop {
            self.p.skip_ws();
            let key_pos = self.p.pos;
            let mut key = String::new();
            self.p.string(Some(&mut key))?;
            self.p.skip_ws();
            self.p.expect_byte(b':')?;
            self.p.skip_ws();
            if key == "__metadata__" {
                if seen_metadata {
                    return Err(violation(code::DUPLICATE_KEY, "__metadata__ appears twice")
                        .at(self.p.file_offset(key_pos)));
                }
                seen_metadata = true;
                // MLX writes `"__metadata__": null` when there is no metadata, and the official
                // readers take it as absent: it hides nothing, so it is not a violation.
                if self.p.peek() == Some(b'n') {
                    self.p.literal("null")?;
                } else {
                    metadata = Some(self.metadata()?);
                }
            } else {
                // Two entries for one name: loaders keep the first or the last, so a reviewer
                // and a loader can see different weights.
                if names.contains(&key) {
                    return Err(violation(
                        code::DUPLICATE_KEY,
                        format!("tensor {key:?} appears twice"),
                    )
                    .with("tensor", &key)
                    .at(self.p.file_offset(key_pos)));
                }
                if tensors.len() >= self.limits.max_tensors {
                    return Err(violation(
                        code::TOO_MANY_TENSORS,
                        format!("more than {} tensors", self.limits.max_tensors),
                    )
                    .with("tensor", &key)
                    .at(self.p.file_offset(key_pos)));
                }
                let t = self.tensor(key.clone(), key_pos)?;
                names.insert(key);
                tensors.push(t);
            }
            self.p.skip_ws();
            match self.p.peek() {
                Some(b',') => self.p.bump(),
                Some(b'}') => return Ok((tensors, metadata)),
                _ => return Err(self.p.invalid("',' or '}'")),
            }
        }
    }

    fn metadata(&mut self) -> Result<BTreeMap<String, String>, Violation> {
        let mut map = BTreeMap::new();
        if self.p.peek() != Some(b'{') {
            return Err(self.p.fail(
                code::METADATA_NOT_STRING_MAP,
                format!(
                    "__metadata__ must be an object of strings, found {}",
                    self.p.found()
                ),
            ));
        }
        self.p.bump();
        self.p.skip_ws();
        if self.p.peek() == Some(b'}') {
            self.p.bump();
            return Ok(map);
        }
        loop {
            self.p.skip_ws();
            let key_pos = self.p.pos;
            let mut key = String::new();
            self.p.string(Some(&mut key))?;
            if map.contains_key(&key) {
                return Err(violation(
                    code::DUPLICATE_KEY,
                    format!("__metadata__ key {key:?} appears twice"),
                )
                .at(self.p.file_offset(key_pos)));
            }
            self.p.skip_ws();
            self.p.expect_byte(b':')?;
            self.p.skip_ws();
            if self.p.peek() != Some(b'"') {
                return Err(self.p.fail(
                    code::METADATA_NOT_STRING_MAP,
                    format!(
                        "__metadata__ value for {key:?} must be a string, found {}",
                        self.p.found()
                    ),
                ));
            }
            let mut value = String::new();
            self.p.string(Some(&mut value))?;
            map.insert(key, value);
            self.p.skip_ws();
            match self.p.peek() {
                Some(b',') => self.p.bump(),
                Some(b'}') => {
                    self.p.bump();
                    return Ok(map);
                }
                _ => return Err(self.p.invalid("',' or '}'")),
            }
        }
    }

    fn tensor(&mut self, name: String, key_pos: usize) -> Result<TensorInfo, Violation> {
        let entry_pos = self.p.pos;
        if self.p.peek() != Some(b'{') {
            return Err(self
                .p
                .fail(
                    code::TENSOR_NOT_OBJECT,
                    format!(
                        "tensor {name:?} must be an object, found {}",
                        self.p.found()
                    ),
                )
                .with("tensor", &name));
        }
        self.p.bump();
        let mut dtype = None;
        let mut shape = None;
        let mut offsets = None;
        self.p.skip_ws();
        if self.p.peek() == Some(b'}') {
            self.p.bump();
        } else {
            loop {
                self.p.skip_ws();
                let field_pos = self.p.pos;
                let mut field = String::new();
                self.p.string(Some(&mut field))?;
                self.p.skip_ws();
                self.p.expect_byte(b':')?;
                self.p.skip_ws();
                let already = match field.as_str() {
                    "dtype" => dtype.is_some(),
                    "shape" => shape.is_some(),
                    "data_offsets" => offsets.is_some(),
                    // Unknown fields are ignored by loaders and could smuggle data past review.
                    _ => {
                        return Err(violation(
                            code::TENSOR_EXTRA_FIELD,
                            format!("tensor {name:?} has unexpected field {field:?}"),
                        )
                        .with("tensor", &name)
                        .at(self.p.file_offset(field_pos)));
                    }
                };
                if already {
                    return Err(violation(
                        code::DUPLICATE_KEY,
                        format!("tensor {name:?} has field {field:?} twice"),
                    )
                    .with("tensor", &name)
                    .at(self.p.file_offset(field_pos)));
                }
                match field.as_str() {
                    "dtype" => dtype = Some(self.dtype(&name)?),
                    "shape" => shape = Some(self.shape(&name)?),
                    _ => offsets = Some(self.offsets(&name)?),
                }
                self.p.skip_ws();
                match self.p.peek() {
                    Some(b',') => self.p.bump(),
                    Some(b'}') => {
                        self.p.bump();
                        break;
                    }
                    _ => return Err(self.p.invalid("',' or '}'")),
                }
            }
        }
        let missing: Vec<&str> = [
            ("dtype", dtype.is_none()),
            ("shape", shape.is_none()),
            ("data_offsets", offsets.is_none()),
        ]
        .into_iter()
        .filter_map(|(f, gone)| gone.then_some(f))
        .collect();
        let (Some(dtype), Some(shape), Some((begin, end))) = (dtype, shape, offsets) else {
            return Err(violation(
                code::TENSOR_MISSING_FIELD,
                format!("tensor {name:?} lacks {}", missing.join(", ")),
            )
            .with("tensor", &name)
            .at(self.p.file_offset(entry_pos)));
        };
        let t = TensorInfo {
            name,
            dtype,
            shape,
            begin,
            end,
        };
        check_tensor_size(&t)
            .map_err(|v| v.with("tensor", &t.name).at(self.p.file_offset(key_pos)))?;
        Ok(t)
    }

    fn dtype(&mut self, name: &str) -> Result<Dtype, Violation> {
        let at = self.p.pos;
        if self.p.peek() != Some(b'"') {
            return Err(self
                .p
                .fail(
                    code::INVALID_DTYPE,
                    format!(
                        "dtype of {name:?} must be a string, found {}",
                        self.p.found()
                    ),
                )
                .with("tensor", name));
        }
        let mut s = String::new();
        self.p.string(Some(&mut s))?;
        Dtype::from_name(&s).ok_or_else(|| {
            violation(
                code::INVALID_DTYPE,
                format!("unknown dtype {s:?} for tensor {name:?}"),
            )
            .with("tensor", name)
            .at(self.p.file_offset(at))
        })
    }

    /// Lexes `[u64, ...]`; `max_len` bounds the vector before each push.
    fn u64_array(
        &mut self,
        name: &str,
        what: &'static str,
        sub_code: &'static str,
        max_len: usize,
    ) -> Result<Vec<u64>, Violation> {
        let mut out = Vec::new();
        if self.p.peek() != Some(b'[') {
            return Err(self
                .p
                .fail(
                    sub_code,
                    format!(
                        "{what} of {name:?} must be an array, found {}",
                        self.p.found()
                    ),
                )
                .with("tensor", name));
        }
        self.p.bump();
        self.p.skip_ws();
        if self.p.peek() == Some(b']') {
            self.p.bump();
            return Ok(out);
        }
        loop {
            self.p.skip_ws();
            let at = self.p.pos;
            if !matches!(self.p.peek(), Some(b'-' | b'0'..=b'9')) {
                return Err(self
                    .p
                    .fail(
                        sub_code,
                        format!(
                            "{what} of {name:?} must hold integers, found {}",
                            self.p.found()
                        ),
                    )
                    .with("tensor", name));
            }
            let token = self.p.number()?;
            let Some(v) = plain_u64(token) else {
                return Err(violation(
                    sub_code,
                    format!("{what} of {name:?} holds {token}, not an integer in 0..2^64"),
                )
                .with("tensor", name)
                .at(self.p.file_offset(at)));
            };
            if out.len() >= max_len {
                let (c, m) = if sub_code == code::INVALID_SHAPE {
                    (
                        code::RANK_TOO_LARGE,
                        format!("tensor {name:?} has more than {max_len} dimensions"),
                    )
                } else {
                    (
                        sub_code,
                        format!("{what} of {name:?} must hold exactly {max_len} integers"),
                    )
                };
                return Err(violation(c, m)
                    .with("tensor", name)
                    .at(self.p.file_offset(at)));
            }
            out.push(v);
            self.p.skip_ws();
            match self.p.peek() {
                Some(b',') => self.p.bump(),
                Some(b']') => {
                    self.p.bump();
                    return Ok(out);
                }
                _ => return Err(self.p.invalid("',' or ']'")),
            }
        }
    }

    fn shape(&mut self, name: &str) -> Result<Vec<u64>, Violation> {
        self.u64_array(name, "shape", code::INVALID_SHAPE, self.limits.max_rank)
    }

    fn offsets(&mut self, name: &str) -> Result<(u64, u64), Violation> {
        let at = self.p.pos;
        let v = self.u64_array(name, "data_offsets", code::INVALID_OFFSETS, 2)?;
        match v.as_slice() {
            [b, e] => Ok((*b, *e)),
            _ => Err(violation(
                code::INVALID_OFFSETS,
                format!(
                    "data_offsets of {name:?} must hold exactly 2 integers, found {}",
                    v.len()
                ),
            )
            .with("tensor", name)
            .at(self.p.file_offset(at))),
        }
    }
}

/// Rule 6 for one tensor. The product runs over the non-zero dims only, so the verdict does not
/// depend on dimension order: `[0, 2^63, 2]` and `[2^63, 2, 0]` are both refused (the official
/// crate accepts the first), because a consumer multiplying in another order overflows.
fn check_tensor_size(t: &TensorInfo) -> Result<(), Violation> {
    if t.begin > t.end {
        return Err(violation(
            code::REVERSED_RANGE,
            format!(
                "tensor {:?} has data_offsets [{}, {}] with begin after end",
                t.name, t.begin, t.end
            ),
        ));
    }
    let bits = t
        .shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(u64::from(t.dtype.bits()), |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| {
            violation(
                code::SIZE_OVERFLOW,
                format!(
                    "tensor {:?} with shape {:?} and dtype {} overflows 64 bits of size",
                    t.name,
                    t.shape,
                    t.dtype.name()
                ),
            )
        })?;
    let bits = if t.shape.contains(&0) { 0 } else { bits };
    if bits % 8 != 0 {
        return Err(violation(
            code::SUB_BYTE_MISALIGNED,
            format!(
                "tensor {:?} with shape {:?} and dtype {} fills {bits} bits, not whole bytes",
                t.name,
                t.shape,
                t.dtype.name()
            ),
        ));
    }
    let size = bits / 8;
    let span = t.end - t.begin;
    if span != size {
        return Err(violation(
            code::SIZE_MISMATCH,
            format!(
                "tensor {:?} spans {span} bytes but shape {:?} of {} needs {size}",
                t.name,
                t.shape,
                t.dtype.name()
            ),
        ));
    }
    Ok(())
}

/// Rule 7: sorted tensors cover `0..data_len` exactly once. Holes and trailing bytes can hide a
/// second payload (a polyglot pickle or zip); overlaps and aliasing make one byte two weights.
pub(super) fn check_tiling(
    tensors: &[TensorInfo],
    data_start: u64,
    data_len: u64,
    file_size: u64,
) -> Result<(), Violation> {
    let mut expected = 0u64;
    let mut previous: Option<&TensorInfo> = None;
    for t in tensors {
        if t.begin > expected {
            let v = match previous.filter(|_| expected > 0) {
                None => violation(
                    code::DOES_NOT_START_AT_ZERO,
                    format!("first tensor data begins at {}, not 0", t.begin),
                ),
                Some(p) => violation(
                    code::HOLE,
                    format!(
                        "bytes {expected}..{} between {:?} and {:?} belong to no tensor",
                        t.begin, p.name, t.name
                    ),
                ),
            };
            return Err(v
                .with("tensor", &t.name)
                .at(data_start.saturating_add(expected)));
        }
        if t.begin < expected {
            let other = previous.map(|p| p.name.as_str()).unwrap_or_default();
            let how = match previous {
                Some(p) if p.begin == t.begin && p.end == t.end => "aliases",
                _ => "overlaps",
            };
            return Err(violation(
                code::OVERLAP,
                format!(
                    "tensor {:?} at {}..{} {how} {other:?} which ends at {expected}",
                    t.name, t.begin, t.end
                ),
            )
            .with("tensor", &t.name)
            .at(data_start.saturating_add(t.begin)));
        }
        expected = t.end;
        previous = Some(t);
    }
    if expected < data_len {
        return Err(violation(
            code::TRAILING_BYTES,
            format!(
                "{} bytes follow the last tensor's data",
                data_len - expected
            ),
        )
        .at(data_start.saturating_add(expected)));
    }
    if expected > data_len {
        let v = violation(
            code::TRUNCATED,
            format!("tensors need {expected} data bytes but the file holds {data_len}"),
        )
        .at(file_size);
        return Err(match previous {
            Some(p) => v.with("tensor", &p.name),
            None => v,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{T_A, check, code_of, file};
    use super::super::{Limits, Violation, code, parse_header_bytes};

    #[test]
    fn accepts_zero_size_tensors_at_boundaries() {
        let h = r#"{"z1":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"z2":{"dtype":"I8","shape":[3,0],"data_offsets":[0,0]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"z3":{"dtype":"U8","shape":[0],"data_offsets":[8,8]}}"#;
        let parsed = check(&file(h, 8)).unwrap();
        let names: Vec<&str> = parsed.tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["z1", "z2", "a", "z3"]);
    }

    #[test]
    fn rejects_truncated_data() {
        let v = check(&file(&format!("{{{T_A}}}"), 4)).unwrap_err();
        assert_eq!(v.code, code::TRUNCATED);
        assert_eq!(v.detail("tensor"), Some("a"));
    }

    #[test]
    fn rejects_duplicate_keys() {
        let dup_tensor = format!("{{{T_A},{}}}", T_A.replacen("[0,8]", "[8,16]", 1));
        assert_eq!(code_of(&dup_tensor, 16), code::DUPLICATE_KEY);
        // Equal only after unescaping.
        let escaped = format!(
            "{{{T_A},{}}}",
            T_A.replacen("\"a\"", r#""\u0061""#, 1)
                .replacen("[0,8]", "[8,16]", 1)
        );
        let v = check(&file(&escaped, 16)).unwrap_err();
        assert_eq!(
            (v.code, v.detail("tensor")),
            (code::DUPLICATE_KEY, Some("a"))
        );
        let pair = r#"{"😀":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"\ud83d\ude00":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}"#;
        assert_eq!(code_of(pair, 0), code::DUPLICATE_KEY);
        assert_eq!(
            code_of(r#"{"__metadata__":{},"__metadata__":{}}"#, 0),
            code::DUPLICATE_KEY
        );
        assert_eq!(
            code_of(r#"{"__metadata__":{"k":"1","k":"2"}}"#, 0),
            code::DUPLICATE_KEY
        );
        let field = r#"{"a":{"dtype":"F32","dtype":"F32","shape":[0],"data_offsets":[0,0]}}"#;
        assert_eq!(code_of(field, 0), code::DUPLICATE_KEY);
    }

    #[test]
    fn rejects_too_many_tensors() {
        let limits = Limits {
            max_tensors: 1,
            ..Limits::default()
        };
        let h = r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}"#;
        let b = file(h, 0);
        let v = parse_header_bytes(&b, b.len() as u64, &limits).unwrap_err();
        assert_eq!(
            (v.code, v.detail("tensor")),
            (code::TOO_MANY_TENSORS, Some("b"))
        );
    }

    #[test]
    fn rejects_rank_above_limit() {
        // The format sets no rank limit; `tensor_rank` is a resource limit (default 1024), so
        // the 65-dimension tensor is refused only under a limit of 64.
        let limits = Limits {
            max_rank: 64,
            ..Limits::default()
        };
        let h = format!(
            r#"{{"a":{{"dtype":"U8","shape":[{}],"data_offsets":[0,1]}}}}"#,
            vec!["1"; 65].join(",")
        );
        let b = file(&h, 1);
        let v = parse_header_bytes(&b, b.len() as u64, &limits).unwrap_err();
        assert_eq!(v.code, code::RANK_TOO_LARGE);
    }

    #[test]
    fn accepts_a_65_dimension_tensor_by_default() {
        let h = format!(
            r#"{{"a":{{"dtype":"U8","shape":[{}],"data_offsets":[0,1]}}}}"#,
            vec!["1"; 65].join(",")
        );
        let b = file(&h, 1);
        let header = parse_header_bytes(&b, b.len() as u64, &Limits::default()).unwrap();
        assert_eq!(header.tensors[0].shape.len(), 65);
    }

    #[test]
    fn accepts_null_metadata_once() {
        // Byte-exact: what MLX writes for a model without metadata (issue 15, cause 2).
        let h = check(&file(
            r#"{"__metadata__":null,"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
            8,
        ))
        .unwrap();
        assert_eq!(h.metadata, None);
        assert_eq!(h.tensors.len(), 1);
        assert_eq!(
            code_of(r#"{"__metadata__":null,"__metadata__":{}}"#, 0),
            code::DUPLICATE_KEY
        );
        assert_eq!(
            code_of(r#"{"__metadata__":{},"__metadata__":null}"#, 0),
            code::DUPLICATE_KEY
        );
    }

    #[test]
    fn rejects_metadata_not_string_map() {
        for m in [
            "[]",
            "1",
            "\"s\"",
            r#"{"k":1}"#,
            r#"{"k":null}"#,
            r#"{"k":{}}"#,
            r#"{"k":["v"]}"#,
            r#"{"k":true}"#,
        ] {
            assert_eq!(
                code_of(&format!(r#"{{"__metadata__":{m}}}"#), 0),
                code::METADATA_NOT_STRING_MAP,
                "{m}"
            );
        }
    }

    #[test]
    fn rejects_tensor_that_is_not_an_object() {
        assert_eq!(
            code_of(r#"{"a":["F32",[2],[0,8]]}"#, 8),
            code::TENSOR_NOT_OBJECT
        );
        assert_eq!(code_of(r#"{"a":null}"#, 0), code::TENSOR_NOT_OBJECT);
    }

    #[test]
    fn rejects_tensor_missing_field() {
        let v = check(&file(r#"{"a":{"dtype":"F32","shape":[0]}}"#, 0)).unwrap_err();
        assert_eq!(v.code, code::TENSOR_MISSING_FIELD);
        assert!(v.message.contains("data_offsets"), "{}", v.message);
        assert_eq!(code_of(r#"{"a":{}}"#, 0), code::TENSOR_MISSING_FIELD);
    }

    #[test]
    fn rejects_tensor_extra_field() {
        let h = r#"{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0],"payload":"x"}}"#;
        let v = check(&file(h, 0)).unwrap_err();
        assert_eq!(
            (v.code, v.detail("tensor")),
            (code::TENSOR_EXTRA_FIELD, Some("a"))
        );
        assert_eq!(v.offset, Some(8 + h.find("\"payload").unwrap() as u64));
    }

    #[test]
    fn rejects_invalid_dtype() {
        for d in [
            r#""f32""#,
            r#""F128""#,
            "32",
            r#"{"F32":null}"#,
            r#""F32 ""#,
        ] {
            let h = format!(r#"{{"a":{{"dtype":{d},"shape":[0],"data_offsets":[0,0]}}}}"#);
            assert_eq!(code_of(&h, 0), code::INVALID_DTYPE, "{d}");
        }
    }

    #[test]
    fn rejects_invalid_shape() {
        for s in [
            "[1.0]",
            "[-0]",
            "[-1]",
            "[1e0]",
            "[18446744073709551616]",
            "[\"1\"]",
            "[[1]]",
            "2",
            "null",
        ] {
            let h = format!(r#"{{"a":{{"dtype":"U8","shape":{s},"data_offsets":[0,1]}}}}"#);
            assert_eq!(code_of(&h, 1), code::INVALID_SHAPE, "{s}");
        }
    }

    #[test]
    fn rejects_invalid_offsets() {
        for o in [
            "[0]",
            "[0,1,1]",
            "[]",
            "[0,1.0]",
            "[-0,1]",
            "{}",
            "[0,18446744073709551616]",
        ] {
            let h = format!(r#"{{"a":{{"dtype":"U8","shape":[1],"data_offsets":{o}}}}}"#);
            assert_eq!(code_of(&h, 1), code::INVALID_OFFSETS, "{o}");
        }
    }

    #[test]
    fn rejects_size_overflow_in_any_dim_order() {
        for s in [
            "[0,9223372036854775808,2]",
            "[9223372036854775808,2,0]",
            "[4611686018427387904]",
        ] {
            let h = format!(r#"{{"a":{{"dtype":"U8","shape":{s},"data_offsets":[0,0]}}}}"#);
            assert_eq!(code_of(&h, 0), code::SIZE_OVERFLOW, "{s}");
        }
        // The largest size that fits is not an overflow.
        let h = r#"{"a":{"dtype":"U8","shape":[0,2305843009213693951],"data_offsets":[0,0]}}"#;
        assert_eq!(code_of(h, 0), "ok");
    }

    #[test]
    fn rejects_sub_byte_misaligned() {
        assert_eq!(
            code_of(
                r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}"#,
                1
            ),
            code::SUB_BYTE_MISALIGNED
        );
        assert_eq!(
            code_of(
                r#"{"a":{"dtype":"F6_E2M3","shape":[2],"data_offsets":[0,1]}}"#,
                1
            ),
            code::SUB_BYTE_MISALIGNED
        );
        assert_eq!(
            code_of(
                r#"{"a":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[0,3]}}"#,
                3
            ),
            "ok"
        );
    }

    #[test]
    fn rejects_reversed_range() {
        assert_eq!(
            code_of(
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,0]}}"#,
                1
            ),
            code::REVERSED_RANGE
        );
    }

    #[test]
    fn rejects_size_mismatch() {
        assert_eq!(
            code_of(
                r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,7]}}"#,
                7
            ),
            code::SIZE_MISMATCH
        );
    }

    #[test]
    fn rejects_data_not_starting_at_zero() {
        let v = check(&file(r#"{"z":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#, 2)).unwrap_err();
        assert_eq!(v.code, code::DOES_NOT_START_AT_ZERO);
    }

    #[test]
    fn rejects_hole_between_tensors() {
        let h = r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}}"#;
        let v = check(&file(h, 3)).unwrap_err();
        assert_eq!((v.code, v.detail("tensor")), (code::HOLE, Some("b")));
        assert_eq!(v.offset, Some(8 + h.len() as u64 + 1));
    }

    #[test]
    fn rejects_overlapping_offsets() {
        let h = r#"{"a":{"dtype":"U16","shape":[1],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#;
        assert_eq!(code_of(h, 2), code::OVERLAP);
        let alias = r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}"#;
        let v = check(&file(alias, 1)).unwrap_err();
        assert_eq!(v.code, code::OVERLAP);
        assert!(v.message.contains("aliases"), "{}", v.message);
        // A zero-size tensor inside another tensor's bytes.
        let inside = r#"{"a":{"dtype":"U16","shape":[1],"data_offsets":[0,2]},"z":{"dtype":"U8","shape":[0],"data_offsets":[1,1]}}"#;
        assert_eq!(code_of(inside, 2), code::OVERLAP);
    }

    #[test]
    fn rejects_trailing_bytes_after_tensors() {
        let mut b = file(&format!("{{{T_A}}}"), 8);
        b.extend_from_slice(b"PK\x03\x04");
        assert!(matches!(
            check(&b),
            Err(Violation {
                code: "trailing-bytes",
                ..
            })
        ));
        assert_eq!(code_of("{}", 1), code::TRAILING_BYTES);
    }
}
