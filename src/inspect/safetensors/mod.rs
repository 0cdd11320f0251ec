//! Strict, streaming validator for safetensors files and sharded safetensors checkpoints.
//!
//! A safetensors file is `N` (u64, little endian), then `N` bytes of JSON header, then a byte
//! buffer that the header's tensors must tile exactly. Loaders differ in what they forgive
//! (duplicate keys, padding, unknown fields, trailing bytes), and every forgiven byte is room for
//! a parser differential or a polyglot (a pickle or zip appended after the tensors). So this module
//! accepts only what every loader must agree on: it is deliberately stricter than the official
//! `safetensors` crate, which the tests use as an oracle (anything it rejects, we reject).
//!
//! The header is read with one bounded allocation, checked against [`Limits`] before it is made,
//! and parsed by a small hand-written RFC 8259 parser (serde_json would hide duplicate keys and
//! number spellings). Tensor values are never loaded: [`scan_values`] streams the data region once
//! in blocks to count NaN and infinities (ST002). [`check_shard_index`] compares a
//! `*.safetensors.index.json` with the shards' headers (ST003).
//!
//! # Sub-codes
//!
//! ST001 (`safetensors-invalid`), returned by [`read_header`] / [`parse_header_bytes`]:
//!
//! | sub-code | broken rule | official crate |
//! |---|---|---|
//! | `file-too-small` | the file holds fewer than 8 bytes | rejects |
//! | `header-too-large` | `N` exceeds [`Limits::max_header_bytes`] | rejects (100 MB) |
//! | `header-exceeds-file` | `8 + N` exceeds the file size | rejects |
//! | `truncated` | the file is shorter than its header promises (reader ran dry, or tensors end past the file) | rejects |
//! | `header-not-utf8` | the header is not strict UTF-8 | rejects |
//! | `header-leading-byte` | the header does not start with `{` (whitespace, BOM, garbage) | accepts leading JSON whitespace |
//! | `not-an-object` | the header is a JSON value other than an object | rejects |
//! | `header-invalid-json` | RFC 8259 syntax error (comments, trailing commas, `NaN`, `+1`, `01`, lone surrogates, control characters) | rejects |
//! | `json-too-deep` | nesting deeper than [`Limits::max_json_depth`] | accepts deep unknown fields |
//! | `header-trailing-bytes` | after the closing `}`, a byte other than 0x20 before `8 + N` | accepts tab, LF, CR |
//! | `duplicate-key` | a key repeated in any object, compared after unescaping | accepts (last wins) |
//! | `too-many-tensors` | more tensors than [`Limits::max_tensors`] | accepts |
//! | `metadata-not-string-map` | `__metadata__` is neither `null` (read as absent, as MLX writes it) nor an object of strings | accepts `null` too |
//! | `tensor-not-object` | a tensor entry is not a JSON object | accepts the array form `[dtype, shape, offsets]` |
//! | `tensor-missing-field` | a tensor lacks `dtype`, `shape` or `data_offsets` | rejects |
//! | `tensor-extra-field` | a tensor has any other field | accepts (ignored) |
//! | `invalid-dtype` | dtype is not a string naming a known dtype (case-sensitive) | rejects (accepts `{"F32":null}`) |
//! | `invalid-shape` | shape is not an array of integers in `0..2^64` written plainly | rejects |
//! | `rank-too-large` | more dimensions than [`Limits::max_rank`] | accepts |
//! | `invalid-offsets` | data_offsets is not an array of exactly two such integers | rejects |
//! | `size-overflow` | product of the non-zero dims times the dtype's bits overflows u64 | rejects only when the overflow comes before a zero dim |
//! | `sub-byte-misaligned` | a 4/6-bit tensor does not fill whole bytes | rejects |
//! | `reversed-range` | `begin > end` | rejects |
//! | `size-mismatch` | `end - begin` differs from the size shape and dtype give | rejects |
//! | `does-not-start-at-zero` | the first tensor's data does not begin at 0 | rejects |
//! | `hole` | bytes between two tensors that no tensor covers | rejects |
//! | `overlap` | two tensors share bytes (aliasing included) | rejects |
//! | `trailing-bytes` | bytes after the last tensor (an appended pickle or zip: a polyglot) | rejects |
//!
//! ST003 (`shard-index-mismatch`), returned by [`check_shard_index`]: `index-too-large`,
//! `index-invalid-json`, `duplicate-key`, `shard-name-invalid`, `missing-shard`,
//! `tensor-not-in-shard`, `tensor-not-in-index`, `tensor-in-wrong-shard`, `unreferenced-shard`,
//! `shard-count-mismatch`, `total-size-mismatch` (the only one with `warning` set). See
//! [`code`] for each.
//!
//! # Layout
//!
//! This file holds the entry points; `header` holds the header types and the sub-code table.
//! The header is checked in two passes, `syntax` (strict JSON) then `schema` (dtypes, shapes,
//! offsets tiling, duplicates, metadata); `values` holds the NaN/Inf scan and `index` the shard
//! index check. The differential tests against the official crate live in `differential.rs`.

use std::collections::BTreeMap;
use std::io::{self, Read};

use serde::Serialize;

#[cfg(test)]
mod differential;
mod header;
mod index;
mod schema;
mod syntax;
mod values;

use header::PREFIX_LEN;
pub(crate) use header::violation;
pub use header::{Dtype, Header, Limits, TensorInfo, Violation, code};
pub use index::{ShardSummary, check_shard_index};
pub use values::{NonFinite, scan_values};

use schema::{Schema, check_tiling};
use syntax::check_syntax;

/// Why [`read_header`] could not produce a header.
#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    /// The reader failed (not a property of the file's format).
    #[error("reading safetensors header: {0}")]
    Io(#[from] io::Error),
    /// The file breaks a format rule.
    #[error(transparent)]
    Invalid(Violation),
}

/// Reads exactly `8 + N` bytes from `r` (positioned at the file start) and validates rules 1-8.
///
/// `file_size` is the size of the whole file; the reader is left positioned at the data buffer,
/// ready for [`scan_values`]. `N` is checked against the limit and the file size before the one
/// allocation of `N` bytes.
pub fn read_header<R: Read>(
    r: &mut R,
    file_size: u64,
    limits: &Limits,
) -> Result<Header, HeaderError> {
    if file_size < PREFIX_LEN {
        return Err(HeaderError::Invalid(file_too_small(file_size)));
    }
    let mut prefix = [0u8; 8];
    if let Err(e) = r.read_exact(&mut prefix) {
        return Err(match e.kind() {
            io::ErrorKind::UnexpectedEof => HeaderError::Invalid(
                violation(
                    code::TRUNCATED,
                    "file ended inside the 8-byte length prefix",
                )
                .at(0),
            ),
            _ => HeaderError::Io(e),
        });
    }
    let (n, n_usize) = check_header_len(u64::from_le_bytes(prefix), file_size, limits)
        .map_err(HeaderError::Invalid)?;
    let mut json = Vec::with_capacity(n_usize);
    r.by_ref().take(n).read_to_end(&mut json)?;
    if json.len() != n_usize {
        return Err(HeaderError::Invalid(
            violation(
                code::TRUNCATED,
                format!("file ended after {} of {n} header bytes", json.len()),
            )
            .at(PREFIX_LEN.saturating_add(json.len() as u64)),
        ));
    }
    parse_json_header(&json, n, file_size, limits).map_err(HeaderError::Invalid)
}

/// Validates rules 1-8 on in-memory bytes: `bytes` is a prefix of the file holding at least
/// `8 + N` bytes (the whole file is fine); `file_size` is authoritative for the tiling checks.
pub fn parse_header_bytes(
    bytes: &[u8],
    file_size: u64,
    limits: &Limits,
) -> Result<Header, Violation> {
    if file_size < PREFIX_LEN {
        return Err(file_too_small(file_size));
    }
    let Some(prefix) = bytes.first_chunk::<8>() else {
        return Err(violation(
            code::TRUNCATED,
            format!(
                "only {} bytes given, the length prefix needs 8",
                bytes.len()
            ),
        )
        .at(0));
    };
    let (n, n_usize) = check_header_len(u64::from_le_bytes(*prefix), file_size, limits)?;
    let Some(json) = bytes.get(8..).and_then(|rest| rest.get(..n_usize)) else {
        return Err(violation(
            code::TRUNCATED,
            format!(
                "only {} bytes given, the header needs {}",
                bytes.len(),
                n_usize.saturating_add(8)
            ),
        )
        .at(bytes.len() as u64));
    };
    parse_json_header(json, n, file_size, limits)
}

fn file_too_small(file_size: u64) -> Violation {
    violation(
        code::FILE_TOO_SMALL,
        format!("file holds {file_size} bytes, fewer than the 8-byte length prefix"),
    )
    .at(0)
}

/// Rule 1: checks `N` against the limit and the file before anything of size `N` is allocated.
fn check_header_len(n: u64, file_size: u64, limits: &Limits) -> Result<(u64, usize), Violation> {
    if n > limits.max_header_bytes {
        return Err(violation(
            code::HEADER_TOO_LARGE,
            format!(
                "header length {n} exceeds the limit of {} bytes",
                limits.max_header_bytes
            ),
        )
        .at(0));
    }
    if n > file_size.saturating_sub(PREFIX_LEN) {
        return Err(violation(
            code::HEADER_EXCEEDS_FILE,
            format!("header length {n} plus 8 exceeds the file size {file_size}"),
        )
        .at(0));
    }
    let Ok(n_usize) = usize::try_from(n) else {
        return Err(violation(
            code::HEADER_TOO_LARGE,
            format!("header length {n} does not fit in memory addresses"),
        )
        .at(0));
    };
    Ok((n, n_usize))
}

/// Rules 2-8 on the `N` header bytes.
fn parse_json_header(
    json: &[u8],
    n: u64,
    file_size: u64,
    limits: &Limits,
) -> Result<Header, Violation> {
    let text = match std::str::from_utf8(json) {
        Ok(t) => t,
        Err(e) => {
            return Err(violation(
                code::HEADER_NOT_UTF8,
                format!("header is not utf-8 after {} valid bytes", e.valid_up_to()),
            )
            .at(PREFIX_LEN.saturating_add(e.valid_up_to() as u64)));
        }
    };
    check_syntax(text, limits)?;
    let (tensors, metadata) = Schema::new(text, limits).parse()?;
    let data_start = PREFIX_LEN.saturating_add(n);
    let data_len = file_size.saturating_sub(data_start);
    let mut tensors = tensors;
    tensors.sort_by(|a, b| (a.begin, a.end, &a.name).cmp(&(b.begin, b.end, &b.name)));
    check_tiling(&tensors, data_start, data_len, file_size)?;
    Ok(Header {
        header_len: n,
        tensors,
        metadata,
    })
}

/// Facts about a valid file, for `inspect` output and the SBOM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SafetensorsFacts {
    /// Number of tensors.
    pub tensor_count: u64,
    /// Sum of element counts over all tensors.
    pub parameters: u128,
    /// Tensor count per dtype name.
    pub dtypes: BTreeMap<String, u64>,
    /// Size of the data buffer in bytes.
    pub data_bytes: u64,
    /// `N`, the header length.
    pub header_len: u64,
    /// The `__metadata__` map, when present.
    pub metadata: Option<BTreeMap<String, String>>,
    /// Name of the tensor whose data comes first.
    pub first_tensor: Option<String>,
    /// Name of the tensor whose data comes last.
    pub last_tensor: Option<String>,
}

/// Summarises a validated header.
pub fn facts(h: &Header) -> SafetensorsFacts {
    let mut dtypes: BTreeMap<String, u64> = BTreeMap::new();
    let mut parameters: u128 = 0;
    for t in &h.tensors {
        let n = dtypes.entry(t.dtype.name().to_owned()).or_default();
        *n = n.saturating_add(1);
        parameters = parameters.saturating_add(u128::from(t.elements()));
    }
    SafetensorsFacts {
        tensor_count: h.tensors.len() as u64,
        parameters,
        dtypes,
        data_bytes: h.data_len(),
        header_len: h.header_len,
        metadata: h.metadata.clone(),
        first_tensor: h.tensors.first().map(|t| t.name.clone()),
        last_tensor: h.tensors.last().map(|t| t.name.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A file from a header text and `data` zero bytes; `N` is the header's exact length.
    pub(super) fn file(header: &str, data: usize) -> Vec<u8> {
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend_from_slice(header.as_bytes());
        out.resize(out.len() + data, 0);
        out
    }

    pub(super) fn check(bytes: &[u8]) -> Result<Header, Violation> {
        parse_header_bytes(bytes, bytes.len() as u64, &Limits::default())
    }

    pub(super) fn code_of(header: &str, data: usize) -> &'static str {
        match check(&file(header, data)) {
            Ok(_) => "ok",
            Err(v) => v.code,
        }
    }

    pub(super) const T_A: &str = r#""a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}"#;

    #[test]
    fn accepts_minimal_file() {
        let h = check(&file(&format!("{{{T_A}}}"), 8)).unwrap();
        assert_eq!(h.tensors.len(), 1);
        assert_eq!(h.tensors[0].shape, vec![2]);
        assert_eq!(h.data_start(), 8 + h.header_len);
    }

    #[test]
    fn accepts_empty_tensor_map_with_metadata() {
        assert_eq!(code_of("{}", 0), "ok");
        let h = check(&file(r#"{"__metadata__":{"k":"v"}}"#, 0)).unwrap();
        assert_eq!(h.metadata.unwrap().get("k").map(String::as_str), Some("v"));
    }

    #[test]
    fn rejects_file_too_small() {
        assert!(matches!(
            check(b"\x02\0\0"),
            Err(Violation {
                code: "file-too-small",
                ..
            })
        ));
    }

    #[test]
    fn rejects_header_too_large() {
        let mut b = 100_000_001u64.to_le_bytes().to_vec();
        b.extend_from_slice(b"{}");
        let v = parse_header_bytes(&b, u64::MAX, &Limits::default()).unwrap_err();
        assert_eq!(v.code, code::HEADER_TOO_LARGE);
        let low = Limits {
            max_header_bytes: 4,
            ..Limits::default()
        };
        let b = file(&format!("{{{T_A}}}"), 8);
        assert!(matches!(
            parse_header_bytes(&b, b.len() as u64, &low),
            Err(Violation {
                code: "header-too-large",
                ..
            })
        ));
    }

    #[test]
    fn rejects_header_exceeding_file() {
        let mut b = 3u64.to_le_bytes().to_vec();
        b.extend_from_slice(b"{}");
        assert!(matches!(
            check(&b),
            Err(Violation {
                code: "header-exceeds-file",
                offset: Some(0),
                ..
            })
        ));
    }

    #[test]
    fn rejects_truncated_reader_before_allocating_too_much() {
        // The file size claims more than the reader delivers.
        let b = file(&format!("{{{T_A}}}"), 8);
        let short = b.get(..20).unwrap().to_vec();
        let err =
            read_header(&mut Cursor::new(short), b.len() as u64, &Limits::default()).unwrap_err();
        assert!(matches!(
            err,
            HeaderError::Invalid(Violation {
                code: "truncated",
                offset: Some(20),
                ..
            })
        ));
        let err = parse_header_bytes(b.get(..20).unwrap(), b.len() as u64, &Limits::default())
            .unwrap_err();
        assert_eq!(err.code, code::TRUNCATED);
    }

    #[test]
    fn read_header_leaves_reader_at_data() {
        let b = file(&format!("{{{T_A}}}"), 8);
        let mut r = Cursor::new(b.clone());
        let h = read_header(&mut r, b.len() as u64, &Limits::default()).unwrap();
        assert_eq!(r.position(), h.data_start());
    }

    #[test]
    fn rejects_non_utf8_header() {
        let mut b = file("{\"\u{e9}\":1}", 0);
        b[11] = 0xff;
        assert!(matches!(
            check(&b),
            Err(Violation {
                code: "header-not-utf8",
                offset: Some(10),
                ..
            })
        ));
    }

    #[test]
    fn violation_offsets_point_into_the_file() {
        let h = r#"{"a":{"dtype":"BAD","shape":[0],"data_offsets":[0,0]}}"#;
        let v = check(&file(h, 0)).unwrap_err();
        assert_eq!(v.offset, Some(8 + h.find("\"BAD").unwrap() as u64));
    }

    #[test]
    fn facts_summarise_header() {
        let h = r#"{"__metadata__":{"format":"pt"},"b":{"dtype":"F16","shape":[3],"data_offsets":[8,14]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"c":{"dtype":"F4","shape":[2,2],"data_offsets":[14,16]}}"#;
        let f = facts(&check(&file(h, 16)).unwrap());
        assert_eq!(f.tensor_count, 3);
        assert_eq!(f.parameters, 9);
        assert_eq!(f.data_bytes, 16);
        assert_eq!(f.dtypes.get("F32"), Some(&1));
        assert_eq!(
            (f.first_tensor.as_deref(), f.last_tensor.as_deref()),
            (Some("a"), Some("c"))
        );
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["metadata"]["format"], "pt");
    }

    #[test]
    fn dtype_table_is_consistent() {
        for d in Dtype::ALL {
            assert_eq!(Dtype::from_name(d.name()), Some(d));
        }
        assert_eq!(Dtype::F6_E2M3.bits(), 6);
        assert_eq!(Dtype::C64.bits(), 64);
        assert!(Dtype::F8_E8M0.is_float() && !Dtype::BOOL.is_float());
    }
}
