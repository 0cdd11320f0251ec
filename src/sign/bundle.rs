//! Sigstore bundle (v0.3 JSON) wire types: parse a hostile bundle strictly, build ours.
//!
//! The bundle is the outer layer of an OpenSSF Model Signing signature: verification material
//! (a public-key hint, a certificate chain, or a Fulcio certificate plus transparency-log
//! entries) and a DSSE envelope. Only the fields the protobuf spec defines are accepted
//! (`deny_unknown_fields`), every base64 field is decoded under a byte cap, and counts are capped
//! before anything is verified: a bundle is input from elsewhere.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use super::error::SignError;
use super::limits::Limits;

/// The media type the reference tool writes and requires.
pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";

/// The whole bundle.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Bundle {
    /// Must be [`BUNDLE_MEDIA_TYPE`].
    pub media_type: String,
    /// Key hint, certificate chain or Fulcio certificate, and log entries.
    pub verification_material: VerificationMaterial,
    /// The signed statement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsse_envelope: Option<Envelope>,
    /// A signature over a message digest (never used for model signatures; rejected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_signature: Option<serde_json::Value>,
}

/// `verificationMaterial`: exactly one of the three content fields.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerificationMaterial {
    /// Key method: a hint naming the key (hex SHA-256 of its PEM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<PublicKeyIdentifier>,
    /// Certificate method: signing certificate first, then the rest of its chain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x509_certificate_chain: Option<CertificateChain>,
    /// Keyless Sigstore: the short-lived Fulcio certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<RawBytes>,
    /// Transparency-log entries (Rekor).
    #[serde(default)]
    pub tlog_entries: Vec<TlogEntry>,
    /// RFC 3161 timestamps (recorded, not verified).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_verification_data: Option<serde_json::Value>,
}

/// `publicKey`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublicKeyIdentifier {
    /// Hex SHA-256 of the PEM public key (reference tool >= 1.0.1); absent in older bundles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Older bundles carried the key itself; never trusted, the verifier's key is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_bytes: Option<String>,
    /// Older bundles: the key type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_details: Option<String>,
}

/// `x509CertificateChain`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CertificateChain {
    /// DER certificates, signing certificate first.
    pub certificates: Vec<RawBytes>,
}

/// A base64 `rawBytes` holder (certificates).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawBytes {
    /// Base64 (standard alphabet) of the DER bytes.
    pub raw_bytes: String,
}

/// One Rekor entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TlogEntry {
    /// Index in the log (a decimal string in protobuf JSON).
    pub log_index: String,
    /// Which log.
    pub log_id: LogId,
    /// Entry kind and version (`dsse` / `0.0.1` for model signatures).
    pub kind_version: KindVersion,
    /// Seconds since the epoch at which the log integrated the entry.
    pub integrated_time: String,
    /// The signed entry timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inclusion_promise: Option<InclusionPromise>,
    /// Merkle inclusion proof with a checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inclusion_proof: Option<serde_json::Value>,
    /// Base64 of the canonical entry body.
    pub canonicalized_body: String,
}

/// `logId`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogId {
    /// Base64 SHA-256 of the log's public key (DER).
    pub key_id: String,
}

/// `kindVersion`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KindVersion {
    /// Entry kind.
    pub kind: String,
    /// Entry version.
    pub version: String,
}

/// `inclusionPromise`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InclusionPromise {
    /// Base64 signature by the log's key over the entry.
    pub signed_entry_timestamp: String,
}

/// The DSSE envelope.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Envelope {
    /// Base64 of the in-toto statement JSON.
    pub payload: String,
    /// Must be `application/vnd.in-toto+json`.
    pub payload_type: String,
    /// Exactly one signature.
    pub signatures: Vec<EnvelopeSignature>,
}

/// One DSSE signature.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnvelopeSignature {
    /// Base64 of the DER ECDSA signature.
    pub sig: String,
    /// Unused by the reference tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyid: Option<String>,
}

/// The bundle's signed content, decoded: what every verification method starts from.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The wire bundle (for the verification material).
    pub bundle: Bundle,
    /// Decoded DSSE payload (the in-toto statement bytes).
    pub payload: Vec<u8>,
    /// The envelope's payload type.
    pub payload_type: String,
    /// Decoded signature bytes (DER ECDSA).
    pub signature: Vec<u8>,
    /// The base64 signature as written (the Rekor entry repeats it).
    pub signature_b64: String,
}

/// Parses and decodes a bundle under `limits`; no cryptography yet.
pub fn parse(bytes: &[u8], limits: &Limits) -> Result<Parsed, SignError> {
    if bytes.len() as u64 > limits.max_bundle_bytes {
        return Err(SignError::TooLarge {
            what: "bundle",
            len: bytes.len() as u64,
            max: limits.max_bundle_bytes,
        });
    }
    let bundle: Bundle = serde_json::from_slice(bytes)
        .map_err(|e| SignError::Bundle(format!("not a Sigstore bundle: {e}")))?;
    if bundle.media_type != BUNDLE_MEDIA_TYPE {
        return Err(SignError::Bundle(format!(
            "media type {:?}, expected {BUNDLE_MEDIA_TYPE:?}",
            bundle.media_type
        )));
    }
    if bundle.message_signature.is_some() {
        return Err(SignError::Bundle(
            "bundle holds a message signature, not a DSSE envelope".into(),
        ));
    }
    let vm = &bundle.verification_material;
    let kinds = usize::from(vm.public_key.is_some())
        + usize::from(vm.x509_certificate_chain.is_some())
        + usize::from(vm.certificate.is_some());
    if kinds != 1 {
        return Err(SignError::Bundle(format!(
            "verification material must hold exactly one of publicKey, x509CertificateChain, certificate (found {kinds})"
        )));
    }
    if let Some(chain) = &vm.x509_certificate_chain
        && (chain.certificates.is_empty() || chain.certificates.len() > limits.max_chain_len)
    {
        return Err(SignError::Bundle(format!(
            "certificate chain has {} certificates (1..={} allowed)",
            chain.certificates.len(),
            limits.max_chain_len
        )));
    }
    if vm.tlog_entries.len() > limits.max_tlog_entries {
        return Err(SignError::Bundle(format!(
            "{} transparency-log entries (at most {})",
            vm.tlog_entries.len(),
            limits.max_tlog_entries
        )));
    }
    let Some(env) = &bundle.dsse_envelope else {
        return Err(SignError::Bundle("bundle has no DSSE envelope".into()));
    };
    // The reference verifies signatures[0] only; a second signature would be unverified data
    // riding along, so exactly one is accepted.
    if env.signatures.len() != 1 {
        return Err(SignError::Bundle(format!(
            "DSSE envelope has {} signatures, expected exactly 1",
            env.signatures.len()
        )));
    }
    let payload = decode_b64(
        "dsseEnvelope.payload",
        &env.payload,
        limits.max_bundle_bytes,
    )?;
    let signature = decode_b64(
        "dsseEnvelope.signatures[0].sig",
        &env.signatures[0].sig,
        1024,
    )?;
    Ok(Parsed {
        payload,
        payload_type: env.payload_type.clone(),
        signature,
        signature_b64: env.signatures[0].sig.clone(),
        bundle,
    })
}

/// Decodes standard base64 (padding required, as protobuf JSON writes it) under a byte cap.
pub fn decode_b64(field: &'static str, s: &str, max: u64) -> Result<Vec<u8>, SignError> {
    // The decoded size follows from the text's length and padding: check before allocating.
    let pad = s.bytes().rev().take(2).filter(|b| *b == b'=').count() as u64;
    if (s.len() as u64).div_ceil(4) * 3 - pad.min(s.len() as u64 / 4 * 3) > max {
        return Err(SignError::TooLarge {
            what: field,
            len: s.len() as u64,
            max,
        });
    }
    STANDARD
        .decode(s.as_bytes())
        .map_err(|e| SignError::Base64 {
            field,
            reason: e.to_string(),
        })
}

/// Standard base64 with padding.
pub fn encode_b64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Builds the bundle the reference tool writes for the key and certificate methods.
pub fn build(material: VerificationMaterial, payload: &[u8], signature: &[u8]) -> Bundle {
    Bundle {
        media_type: BUNDLE_MEDIA_TYPE.to_string(),
        verification_material: material,
        dsse_envelope: Some(Envelope {
            payload: encode_b64(payload),
            payload_type: super::statement::IN_TOTO_PAYLOAD_TYPE.to_string(),
            signatures: vec![EnvelopeSignature {
                sig: encode_b64(signature),
                keyid: None,
            }],
        }),
        message_signature: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lim() -> Limits {
        Limits::default()
    }

    #[test]
    fn a_bundle_nested_100000_deep_is_an_error_not_a_crash_issue_37() {
        // The typed schema (`deny_unknown_fields`) refuses the first level that does not fit,
        // and serde_json's 128 levels bound any other descent: an error, never a deep walk.
        let n = 100_000;
        for key in ["mediaType", "x"] {
            let deep = format!("{{\"{key}\": {}{}}}", "[".repeat(n), "]".repeat(n));
            assert!(matches!(
                parse(deep.as_bytes(), &lim()),
                Err(SignError::Bundle(_))
            ));
        }
    }

    fn minimal() -> serde_json::Value {
        serde_json::json!({
            "mediaType": BUNDLE_MEDIA_TYPE,
            "verificationMaterial": {"publicKey": {"hint": "00"}, "tlogEntries": []},
            "dsseEnvelope": {"payload": "e30=", "payloadType": "application/vnd.in-toto+json",
                             "signatures": [{"sig": "AAAA"}]}
        })
    }

    #[test]
    fn parses_minimal_key_bundle() {
        let p = parse(minimal().to_string().as_bytes(), &lim()).unwrap();
        assert_eq!(p.payload, b"{}");
        assert_eq!(p.signature, vec![0, 0, 0]);
    }

    #[test]
    fn rejects_oversized_bundle() {
        let l = Limits {
            max_bundle_bytes: 10,
            ..Limits::default()
        };
        let e = parse(minimal().to_string().as_bytes(), &l).unwrap_err();
        assert!(matches!(e, SignError::TooLarge { what: "bundle", .. }));
    }

    #[test]
    fn rejects_non_json() {
        assert!(matches!(parse(b"\xff{", &lim()), Err(SignError::Bundle(_))));
    }

    #[test]
    fn rejects_unknown_fields() {
        let mut v = minimal();
        v["extra"] = serde_json::json!(1);
        assert!(matches!(
            parse(v.to_string().as_bytes(), &lim()),
            Err(SignError::Bundle(_))
        ));
    }

    #[test]
    fn rejects_wrong_media_type() {
        let mut v = minimal();
        v["mediaType"] = "application/vnd.dev.sigstore.bundle+json;version=0.1".into();
        let e = parse(v.to_string().as_bytes(), &lim()).unwrap_err();
        assert!(e.to_string().contains("media type"), "{e}");
    }

    #[test]
    fn rejects_two_kinds_of_material() {
        let mut v = minimal();
        v["verificationMaterial"]["certificate"] = serde_json::json!({"rawBytes": "AA=="});
        assert!(matches!(
            parse(v.to_string().as_bytes(), &lim()),
            Err(SignError::Bundle(_))
        ));
    }

    #[test]
    fn rejects_missing_envelope() {
        let mut v = minimal();
        v.as_object_mut().unwrap().remove("dsseEnvelope");
        let e = parse(v.to_string().as_bytes(), &lim()).unwrap_err();
        assert!(e.to_string().contains("no DSSE envelope"), "{e}");
    }

    #[test]
    fn rejects_two_signatures() {
        let mut v = minimal();
        v["dsseEnvelope"]["signatures"] = serde_json::json!([{"sig": "AAAA"}, {"sig": "AAAA"}]);
        assert!(matches!(
            parse(v.to_string().as_bytes(), &lim()),
            Err(SignError::Bundle(_))
        ));
    }

    #[test]
    fn rejects_bad_base64() {
        let mut v = minimal();
        v["dsseEnvelope"]["payload"] = "e30".into();
        assert!(matches!(
            parse(v.to_string().as_bytes(), &lim()),
            Err(SignError::Base64 {
                field: "dsseEnvelope.payload",
                ..
            })
        ));
    }

    #[test]
    fn rejects_oversized_signature_before_decoding() {
        let mut v = minimal();
        v["dsseEnvelope"]["signatures"][0]["sig"] = "A".repeat(8192).into();
        assert!(matches!(
            parse(v.to_string().as_bytes(), &lim()),
            Err(SignError::TooLarge { .. })
        ));
    }
}
