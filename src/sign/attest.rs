//! In-toto attestations of a CycloneDX SBOM (predicate `https://cyclonedx.org/bom`).
//!
//! `verify --sbom` trusts the SBOM it is handed; an attestation lets a consumer check first
//! that the SBOM is the one a trusted key (or certificate, or keyless identity) signed. Following
//! the in-toto SBOM predicate convention, the subjects are the artifacts the SBOM describes: one
//! per file component carrying a `modelgate:path` property and a SHA-256 hash. The predicate is
//! the SBOM JSON itself, so verification compares it (as JSON values) with the SBOM given.

use std::collections::BTreeMap;

use serde::Serialize;

use super::envelope::{SigningMaterial, Trust, sign_payload, verify_bundle};
use super::error::SignError;
use super::limits::Limits;
use super::signer::Signer;
use super::statement::{CYCLONEDX_PREDICATE, STATEMENT_TYPE, Subject};

/// The property modelgate's SBOM uses for a file's path.
const PATH_PROPERTY: &str = "modelgate:path";

/// Largest SBOM attested or compared.
const MAX_SBOM_BYTES: usize = 512 << 20;

#[derive(Serialize)]
struct OutStatement<'a> {
    #[serde(rename = "_type")]
    type_: &'static str,
    subject: &'a [Subject],
    #[serde(rename = "predicateType")]
    predicate_type: &'static str,
    predicate: &'a serde_json::Value,
}

fn parse_sbom(bytes: &[u8]) -> Result<serde_json::Value, SignError> {
    if bytes.len() > MAX_SBOM_BYTES {
        return Err(SignError::TooLarge {
            what: "sbom",
            len: bytes.len() as u64,
            max: MAX_SBOM_BYTES as u64,
        });
    }
    serde_json::from_slice(bytes).map_err(|e| {
        SignError::Statement(format!(
            "the SBOM is not JSON (only CycloneDX JSON can be attested): {e}"
        ))
    })
}

/// The file subjects an SBOM describes, sorted by path (iterative, bounded walk).
fn subjects(sbom: &serde_json::Value, limits: &Limits) -> Result<Vec<Subject>, SignError> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut stack: Vec<(&serde_json::Value, usize)> = sbom
        .get("components")
        .and_then(|c| c.as_array())
        .map(|a| a.iter().map(|c| (c, 0)).collect())
        .unwrap_or_default();
    let mut visited = 0usize;
    while let Some((c, depth)) = stack.pop() {
        visited += 1;
        if visited > limits.max_resources || depth > 64 {
            return Err(SignError::TooLarge {
                what: "sbom components",
                len: visited as u64,
                max: limits.max_resources as u64,
            });
        }
        if let Some(children) = c.get("components").and_then(|c| c.as_array()) {
            stack.extend(children.iter().map(|k| (k, depth + 1)));
        }
        let path = c
            .get("properties")
            .and_then(|p| p.as_array())
            .and_then(|ps| {
                ps.iter()
                    .find(|p| p.get("name").and_then(|n| n.as_str()) == Some(PATH_PROPERTY))
            })
            .and_then(|p| p.get("value"))
            .and_then(|v| v.as_str());
        let sha = c
            .get("hashes")
            .and_then(|h| h.as_array())
            .and_then(|hs| {
                hs.iter()
                    .find(|h| h.get("alg").and_then(|a| a.as_str()) == Some("SHA-256"))
            })
            .and_then(|h| h.get("content"))
            .and_then(|v| v.as_str());
        if let (Some(p), Some(s)) = (path, sha) {
            out.insert(p.to_string(), s.to_ascii_lowercase());
        }
    }
    if out.is_empty() {
        return Err(SignError::Statement(
            "the SBOM lists no file component with a modelgate:path and a SHA-256".into(),
        ));
    }
    Ok(out
        .into_iter()
        .map(|(name, sha)| Subject {
            name,
            digest: BTreeMap::from([("sha256".to_string(), sha)]),
        })
        .collect())
}

/// Signs an in-toto attestation of `sbom_bytes`; returns the bundle JSON.
pub fn attest_sbom(
    sbom_bytes: &[u8],
    material: &SigningMaterial,
    limits: &Limits,
) -> Result<Vec<u8>, SignError> {
    let sbom = parse_sbom(sbom_bytes)?;
    let subject = subjects(&sbom, limits)?;
    let st = OutStatement {
        type_: STATEMENT_TYPE,
        subject: &subject,
        predicate_type: CYCLONEDX_PREDICATE,
        predicate: &sbom,
    };
    let payload = serde_json::to_vec(&st).map_err(|e| SignError::Statement(e.to_string()))?;
    Ok(sign_payload(&payload, material))
}

/// Verifies an SBOM attestation: signer under `trust`, predicate type, and that the attested
/// SBOM is exactly `sbom_bytes` (as JSON).
pub fn verify_sbom_attestation(
    attestation: &[u8],
    sbom_bytes: &[u8],
    trust: &Trust,
    now: i64,
    limits: &Limits,
) -> Result<Signer, SignError> {
    let vb = verify_bundle(attestation, trust, now, limits)?;
    if vb.statement.predicate_type != CYCLONEDX_PREDICATE {
        return Err(SignError::Statement(format!(
            "attestation predicate type {:?}, expected {CYCLONEDX_PREDICATE:?}",
            vb.statement.predicate_type
        )));
    }
    let sbom = parse_sbom(sbom_bytes)?;
    if vb.statement.predicate != sbom {
        return Err(SignError::Statement(
            "the attestation was made for a different SBOM".into(),
        ));
    }
    let expected = subjects(&sbom, limits)?;
    let same = expected.len() == vb.statement.subject.len()
        && expected
            .iter()
            .zip(&vb.statement.subject)
            .all(|(a, b)| a.name == b.name && a.digest == b.digest);
    if !same {
        return Err(SignError::Statement(
            "the attestation's subjects are not the SBOM's files".into(),
        ));
    }
    Ok(vb.signer)
}

#[cfg(test)]
mod tests {
    use super::super::{PrivateKey, keys::tests::P256_SEC1};
    use super::*;

    fn sbom() -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "bomFormat": "CycloneDX", "specVersion": "1.5",
            "components": [{"type": "file", "name": "w.bin",
                "hashes": [{"alg": "SHA-256", "content": "AB".repeat(32)}],
                "properties": [{"name": "modelgate:path", "value": "w.bin"}]}]
        }))
        .unwrap()
    }

    #[test]
    fn attestation_round_trip_and_tamper() {
        let k = PrivateKey::from_pem(P256_SEC1).unwrap();
        let trust = Trust::Key(k.public());
        let l = Limits::default();
        let att = attest_sbom(&sbom(), &SigningMaterial::Key(k), &l).unwrap();
        verify_sbom_attestation(&att, &sbom(), &trust, 0, &l).unwrap();
        let mut other: serde_json::Value = serde_json::from_slice(&sbom()).unwrap();
        other["components"][0]["hashes"][0]["content"] = "cd".repeat(32).into();
        let e = verify_sbom_attestation(&att, &serde_json::to_vec(&other).unwrap(), &trust, 0, &l)
            .unwrap_err();
        assert!(e.to_string().contains("different SBOM"), "{e}");
    }

    #[test]
    fn rejects_sbom_without_files_and_xml() {
        let k = SigningMaterial::Key(PrivateKey::from_pem(P256_SEC1).unwrap());
        let l = Limits::default();
        assert!(attest_sbom(b"{\"components\": []}", &k, &l).is_err());
        assert!(attest_sbom(b"<bom/>", &k, &l).is_err());
    }

    #[test]
    fn model_signature_is_not_an_sbom_attestation() {
        let k = PrivateKey::from_pem(P256_SEC1).unwrap();
        let trust = Trust::Key(k.public());
        let l = Limits::default();
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a"), b"x").unwrap();
        let sig = super::super::sign(
            d.path(),
            &SigningMaterial::Key(k),
            &super::super::SignOptions::default(),
            &l,
        )
        .unwrap();
        let e = verify_sbom_attestation(&sig, &sbom(), &trust, 0, &l).unwrap_err();
        assert!(e.to_string().contains("predicate type"), "{e}");
    }
}
