//! DSSE pre-authentication encoding and the in-toto Statement v1 that carries the manifest.
//!
//! The signed bytes are `PAE(payloadType, payload)`; the payload is an in-toto statement whose
//! subject is the model (name + SHA-256 over every resource digest in order) and whose predicate
//! (`https://model_signing/signature/v1.0`) holds the serialization parameters and one resource
//! per file (or file shard). The subject digest is recomputed from the resources, so an edited
//! resource list is caught even before the signature is checked.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::SignError;
use super::limits::Limits;
use super::manifest::{HashType, Manifest, Resource, Serialization};

/// DSSE payload type of an in-toto statement.
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// in-toto Statement v1.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The OpenSSF Model Signing predicate, v1.0.
pub const MODEL_SIGNING_PREDICATE: &str = "https://model_signing/signature/v1.0";
/// The pre-1.0 predicate (model_signing 0.2); recognised only to name it in the error.
pub const MODEL_SIGNING_PREDICATE_V01: &str = "https://model_signing/Digests/v0.1";
/// The CycloneDX predicate for SBOM attestations.
pub const CYCLONEDX_PREDICATE: &str = "https://cyclonedx.org/bom";

/// DSSE v1 pre-authentication encoding: `"DSSEv1" SP len(type) SP type SP len(body) SP body`.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {} {} ",
        payload_type.len(),
        payload_type,
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

/// A statement as read: the predicate stays raw until its type is known.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Statement {
    /// Must be [`STATEMENT_TYPE`].
    #[serde(rename = "_type")]
    pub type_: String,
    /// What the statement is about.
    pub subject: Vec<Subject>,
    /// Which predicate.
    pub predicate_type: String,
    /// The predicate body.
    #[serde(default)]
    pub predicate: serde_json::Value,
}

/// An in-toto ResourceDescriptor as used for subjects (name + digest set).
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Subject {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Algorithm -> lowercase hex.
    #[serde(default)]
    pub digest: std::collections::BTreeMap<String, String>,
}

/// Parses the statement envelope (type checks only).
pub fn parse_statement(payload_type: &str, payload: &[u8]) -> Result<Statement, SignError> {
    if payload_type != IN_TOTO_PAYLOAD_TYPE {
        return Err(SignError::Statement(format!(
            "DSSE payload type {payload_type:?}, expected {IN_TOTO_PAYLOAD_TYPE:?}"
        )));
    }
    let st: Statement = serde_json::from_slice(payload)
        .map_err(|e| SignError::Statement(format!("payload is not an in-toto statement: {e}")))?;
    if st.type_ != STATEMENT_TYPE {
        return Err(SignError::Statement(format!(
            "statement type {:?}, expected {STATEMENT_TYPE:?}",
            st.type_
        )));
    }
    Ok(st)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSerialization {
    method: String,
    hash_type: String,
    allow_symlinks: bool,
    #[serde(default)]
    shard_size: Option<serde_json::Number>,
    #[serde(default)]
    ignore_paths: Vec<String>,
}

#[derive(Deserialize)]
struct RawResource {
    name: String,
    algorithm: String,
    digest: String,
}

/// Turns a verified model-signing statement into a manifest, checking its consistency.
pub fn manifest_from_statement(st: &Statement, limits: &Limits) -> Result<Manifest, SignError> {
    if st.predicate_type == MODEL_SIGNING_PREDICATE_V01 {
        return Err(SignError::Statement(format!(
            "predicate type {MODEL_SIGNING_PREDICATE_V01:?} (model_signing 0.2) is not supported; re-sign with model_signing >= 1.0"
        )));
    }
    if st.predicate_type != MODEL_SIGNING_PREDICATE {
        return Err(SignError::Statement(format!(
            "unknown predicate type {:?}, expected {MODEL_SIGNING_PREDICATE:?}",
            st.predicate_type
        )));
    }
    let [subject] = st.subject.as_slice() else {
        return Err(SignError::Statement(format!(
            "expected exactly one subject, found {}",
            st.subject.len()
        )));
    };
    let Some(root_hex) = subject.digest.get("sha256") else {
        return Err(SignError::Statement("subject has no sha256 digest".into()));
    };
    let root = parse_hex32(root_hex)
        .ok_or_else(|| SignError::Statement("subject sha256 is not 64 hex digits".into()))?;
    let pred = st
        .predicate
        .as_object()
        .ok_or_else(|| SignError::Statement("predicate is not an object".into()))?;
    // v1.0: verifiers must ignore predicate fields other than these two.
    let ser_v = pred
        .get("serialization")
        .ok_or_else(|| SignError::Statement("predicate has no serialization".into()))?;
    let res_v = pred
        .get("resources")
        .ok_or_else(|| SignError::Statement("predicate has no resources".into()))?;
    let raw: RawSerialization = serde_json::from_value(ser_v.clone())
        .map_err(|e| SignError::Statement(format!("serialization: {e}")))?;
    let serialization = serialization_from_raw(raw)?;
    let count = res_v.as_array().map_or(0, Vec::len);
    if count > limits.max_resources {
        return Err(SignError::TooLarge {
            what: "manifest resources",
            len: count as u64,
            max: limits.max_resources as u64,
        });
    }
    let raw_res: Vec<RawResource> = serde_json::from_value(res_v.clone())
        .map_err(|e| SignError::Statement(format!("resources: {e}")))?;
    let expected_alg = serialization.resource_algorithm();
    let mut hasher = Sha256::new();
    let mut resources = Vec::with_capacity(raw_res.len());
    for r in raw_res {
        let digest = parse_hex32(&r.digest).ok_or_else(|| {
            SignError::Statement(format!(
                "resource {:?}: digest is not 64 hex digits",
                r.name
            ))
        })?;
        if r.algorithm != expected_alg {
            return Err(SignError::Statement(format!(
                "resource {:?}: algorithm {:?}, the serialization implies {expected_alg:?}",
                r.name, r.algorithm
            )));
        }
        hasher.update(digest);
        resources.push(Resource {
            name: r.name,
            digest,
        });
    }
    let got: [u8; 32] = hasher.finalize().into();
    if got != root {
        return Err(SignError::Statement(format!(
            "manifest is inconsistent: subject digest {root_hex} but the resources hash to {}",
            hex(&got)
        )));
    }
    Manifest::new(subject.name.clone(), serialization, resources)
}

fn serialization_from_raw(raw: RawSerialization) -> Result<Serialization, SignError> {
    let hash = match raw.hash_type.as_str() {
        "sha256" => HashType::Sha256,
        other => {
            return Err(SignError::Unsupported(format!(
                "hash type {other:?} (only sha256 is supported)"
            )));
        }
    };
    if raw.allow_symlinks {
        return Err(SignError::Unsupported(
            "allow_symlinks = true (modelgate never follows symlinks out of a tree)".into(),
        ));
    }
    let ignore_paths = raw.ignore_paths;
    match raw.method.as_str() {
        "files" => {
            if raw.shard_size.is_some() {
                return Err(SignError::Statement(
                    "shard_size given for method \"files\"".into(),
                ));
            }
            Ok(Serialization::Files { hash, ignore_paths })
        }
        "shards" => {
            let n = raw.shard_size.ok_or_else(|| {
                SignError::Statement("method \"shards\" without shard_size".into())
            })?;
            // protobuf Struct numbers are doubles: the reference writes `1000000000.0`.
            let size = n
                .as_u64()
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 1.0 && *f <= 9.0e15)
                        .map(|f| f as u64)
                })
                .filter(|s| *s > 0)
                .ok_or_else(|| {
                    SignError::Statement(format!("shard_size {n} is not a positive integer"))
                })?;
            Ok(Serialization::Shards {
                hash,
                shard_size: size,
                ignore_paths,
            })
        }
        other => Err(SignError::Unsupported(format!(
            "serialization method {other:?} (supported: files, shards)"
        ))),
    }
}

#[derive(Serialize)]
struct OutStatement<'a> {
    #[serde(rename = "_type")]
    type_: &'static str,
    subject: [OutSubject<'a>; 1],
    #[serde(rename = "predicateType")]
    predicate_type: &'static str,
    predicate: OutPredicate<'a>,
}

#[derive(Serialize)]
struct OutSubject<'a> {
    name: &'a str,
    digest: OutDigest,
}

#[derive(Serialize)]
struct OutDigest {
    sha256: String,
}

#[derive(Serialize)]
struct OutPredicate<'a> {
    serialization: OutSerialization<'a>,
    resources: Vec<OutResource<'a>>,
}

#[derive(Serialize)]
struct OutSerialization<'a> {
    method: &'static str,
    hash_type: &'static str,
    allow_symlinks: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    shard_size: Option<u64>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    ignore_paths: &'a [String],
}

#[derive(Serialize)]
struct OutResource<'a> {
    name: &'a str,
    algorithm: &'a str,
    digest: String,
}

/// The statement bytes for a manifest, laid out as the reference writes them.
pub fn statement_for_manifest(m: &Manifest) -> Vec<u8> {
    let alg = m.serialization.resource_algorithm();
    let (method, shard_size) = match &m.serialization {
        Serialization::Files { .. } => ("files", None),
        Serialization::Shards { shard_size, .. } => ("shards", Some(*shard_size)),
    };
    let st = OutStatement {
        type_: STATEMENT_TYPE,
        subject: [OutSubject {
            name: &m.model_name,
            digest: OutDigest {
                sha256: hex(&m.root_digest()),
            },
        }],
        predicate_type: MODEL_SIGNING_PREDICATE,
        predicate: OutPredicate {
            serialization: OutSerialization {
                method,
                hash_type: "sha256",
                allow_symlinks: false,
                shard_size,
                ignore_paths: m.serialization.ignore_paths(),
            },
            resources: m
                .resources
                .iter()
                .map(|r| OutResource {
                    name: &r.name,
                    algorithm: &alg,
                    digest: hex(&r.digest),
                })
                .collect(),
        },
    };
    // Serializing plain structs of strings cannot fail.
    serde_json::to_vec_pretty(&st).unwrap_or_default()
}

/// Lowercase hex (the crate's one helper, re-exported for the signing modules).
pub use crate::model::finding::hex;

/// 64 hex digits (either case) -> 32 bytes.
pub fn parse_hex32(s: &str) -> Option<[u8; 32]> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in b.chunks_exact(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out[i] = (hi * 16 + lo) as u8;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lim() -> Limits {
        Limits::default()
    }

    fn stmt(pred: serde_json::Value, root: &str) -> Statement {
        serde_json::from_value(serde_json::json!({
            "_type": STATEMENT_TYPE,
            "subject": [{"name": "m", "digest": {"sha256": root}}],
            "predicateType": MODEL_SIGNING_PREDICATE,
            "predicate": pred,
        }))
        .unwrap()
    }

    fn one_resource(digest: &str) -> (serde_json::Value, String) {
        let d = parse_hex32(digest).unwrap();
        let root = hex(&Sha256::digest(d));
        (
            serde_json::json!({
                "serialization": {"method": "files", "hash_type": "sha256", "allow_symlinks": false},
                "resources": [{"name": "a", "algorithm": "sha256", "digest": digest}]
            }),
            root,
        )
    }

    #[test]
    fn pae_matches_dsse_spec_example() {
        // From the DSSE protocol document.
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }

    #[test]
    fn parses_consistent_manifest() {
        let (p, root) = one_resource(&"ab".repeat(32));
        let m = manifest_from_statement(&stmt(p, &root), &lim()).unwrap();
        assert_eq!(m.resources.len(), 1);
        assert_eq!(m.resources[0].name, "a");
    }

    #[test]
    fn rejects_edited_resource_digest() {
        let (p, _) = one_resource(&"ab".repeat(32));
        let (_, other_root) = one_resource(&"cd".repeat(32));
        let e = manifest_from_statement(&stmt(p, &other_root), &lim()).unwrap_err();
        assert!(e.to_string().contains("inconsistent"), "{e}");
    }

    #[test]
    fn rejects_unknown_predicate_type() {
        let (p, root) = one_resource(&"ab".repeat(32));
        let mut s = stmt(p, &root);
        s.predicate_type = "https://example.com/x".into();
        let e = manifest_from_statement(&s, &lim()).unwrap_err();
        assert!(e.to_string().contains("unknown predicate type"), "{e}");
    }

    #[test]
    fn rejects_unknown_method() {
        let (mut p, root) = one_resource(&"ab".repeat(32));
        p["serialization"]["method"] = "tensors".into();
        let e = manifest_from_statement(&stmt(p, &root), &lim()).unwrap_err();
        assert!(matches!(e, SignError::Unsupported(_)), "{e}");
        assert!(e.to_string().contains("\"tensors\""));
    }

    #[test]
    fn rejects_unknown_hash_and_symlinks() {
        let (mut p, root) = one_resource(&"ab".repeat(32));
        p["serialization"]["hash_type"] = "blake3".into();
        assert!(matches!(
            manifest_from_statement(&stmt(p.clone(), &root), &lim()),
            Err(SignError::Unsupported(_))
        ));
        p["serialization"]["hash_type"] = "sha256".into();
        p["serialization"]["allow_symlinks"] = true.into();
        assert!(matches!(
            manifest_from_statement(&stmt(p, &root), &lim()),
            Err(SignError::Unsupported(_))
        ));
    }

    #[test]
    fn accepts_float_shard_size() {
        let d = "ab".repeat(32);
        let root = hex(&Sha256::digest(parse_hex32(&d).unwrap()));
        let p = serde_json::json!({
            "serialization": {"method": "shards", "hash_type": "sha256", "allow_symlinks": false,
                              "shard_size": 1000000000.0},
            "resources": [{"name": "a:0:3", "algorithm": "sha256-sharded-1000000000", "digest": d}]
        });
        let m = manifest_from_statement(&stmt(p, &root), &lim()).unwrap();
        assert!(matches!(
            m.serialization,
            Serialization::Shards {
                shard_size: 1_000_000_000,
                ..
            }
        ));
    }

    #[test]
    fn rejects_too_many_resources() {
        let (p, root) = one_resource(&"ab".repeat(32));
        let l = Limits {
            max_resources: 0,
            ..Limits::default()
        };
        assert!(matches!(
            manifest_from_statement(&stmt(p, &root), &l),
            Err(SignError::TooLarge { .. })
        ));
    }

    #[test]
    fn rejects_wrong_payload_type_and_statement_type() {
        assert!(parse_statement("text/plain", b"{}").is_err());
        let e = parse_statement(
            IN_TOTO_PAYLOAD_TYPE,
            br#"{"_type":"x","subject":[],"predicateType":"p"}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("statement type"), "{e}");
    }

    #[test]
    fn statement_round_trips() {
        let m = Manifest::new(
            "model".into(),
            Serialization::Files {
                hash: HashType::Sha256,
                ignore_paths: vec!["model.sig".into()],
            },
            vec![Resource {
                name: "a".into(),
                digest: [7; 32],
            }],
        )
        .unwrap();
        let bytes = statement_for_manifest(&m);
        let st = parse_statement(IN_TOTO_PAYLOAD_TYPE, &bytes).unwrap();
        let back = manifest_from_statement(&st, &lim()).unwrap();
        assert_eq!(back, m);
    }
}
