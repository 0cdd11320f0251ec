//! Keyless (Sigstore) verification, offline: the trusted root JSON, Rekor evidence, and the
//! Fulcio certificate's chain and identity.
//!
//! What is checked, in order: the Rekor entry's signed entry timestamp (SET) under a log key
//! from the trusted root, which fixes the signing time; that the entry's body names this
//! envelope's payload digest, signature and certificate; the Merkle inclusion proof and the
//! checkpoint signed by the same log key, when the bundle carries them; the certificate's chain
//! to a Fulcio CA of the trusted root at that time; its code-signing usage, SAN identity and
//! OIDC issuer. Not checked: the certificate's embedded SCTs (CT log promises), RFC 3161
//! timestamps, and whether the log's checkpoint is consistent with any checkpoint seen before
//! (there is no witness offline).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::bundle::{TlogEntry, decode_b64};
use super::error::SignError;
use super::keys::PublicKey;
use super::limits::Limits;
use super::signer::SubjectMatch;
use super::statement::hex;
use super::x509::{Cert, fmt_time, verify_chain};

/// A Sigstore trusted root (`application/vnd.dev.sigstore.trustedroot+json;version=0.1`).
#[derive(Debug, Clone)]
pub struct TrustedRoot {
    /// Rekor logs.
    pub tlogs: Vec<LogKey>,
    /// Fulcio certificate authorities.
    pub cas: Vec<CertAuthority>,
}

/// One transparency log's key.
#[derive(Debug, Clone)]
pub struct LogKey {
    /// SHA-256 of the key's DER (the log id).
    pub key_id: Vec<u8>,
    /// The key.
    pub key: PublicKey,
    /// Validity window (seconds since the epoch).
    pub valid: (i64, i64),
}

/// One Fulcio CA: its chain (intermediates first, root last) and validity window.
#[derive(Debug, Clone)]
pub struct CertAuthority {
    /// Certificates as listed.
    pub chain: Vec<Cert>,
    /// Validity window (seconds since the epoch).
    pub valid: (i64, i64),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRoot {
    media_type: String,
    #[serde(default)]
    tlogs: Vec<RawTlog>,
    #[serde(default)]
    certificate_authorities: Vec<RawCa>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTlog {
    public_key: RawPublicKey,
    log_id: RawLogId,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPublicKey {
    #[serde(default)]
    raw_bytes: Option<String>,
    #[serde(default)]
    valid_for: Option<RawValidFor>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawLogId {
    key_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCa {
    cert_chain: RawChain,
    #[serde(default)]
    valid_for: Option<RawValidFor>,
}

#[derive(Deserialize)]
struct RawChain {
    certificates: Vec<RawCert>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCert {
    raw_bytes: String,
}

#[derive(Deserialize)]
struct RawValidFor {
    #[serde(default)]
    start: Option<String>,
    #[serde(default)]
    end: Option<String>,
}

fn window(v: Option<&RawValidFor>) -> Result<(i64, i64), SignError> {
    let parse = |s: &str| {
        time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
            .map(|t| t.unix_timestamp())
            .map_err(|e| SignError::TrustRoot(format!("validFor time {s:?}: {e}")))
    };
    let start = match v.and_then(|v| v.start.as_deref()) {
        Some(s) => parse(s)?,
        None => i64::MIN,
    };
    let end = match v.and_then(|v| v.end.as_deref()) {
        Some(s) => parse(s)?,
        None => i64::MAX,
    };
    Ok((start, end))
}

impl TrustedRoot {
    /// Parses a trusted root JSON. Log keys of a type this build cannot verify (e.g. Ed25519
    /// keys of newer logs) are skipped; an entry from such a log then fails as "unknown log".
    pub fn parse(bytes: &[u8], limits: &Limits) -> Result<TrustedRoot, SignError> {
        if bytes.len() as u64 > limits.max_trust_root_bytes {
            return Err(SignError::TooLarge {
                what: "trusted root",
                len: bytes.len() as u64,
                max: limits.max_trust_root_bytes,
            });
        }
        let raw: RawRoot = serde_json::from_slice(bytes)
            .map_err(|e| SignError::TrustRoot(format!("not a Sigstore trusted root: {e}")))?;
        if !raw
            .media_type
            .starts_with("application/vnd.dev.sigstore.trustedroot")
        {
            return Err(SignError::TrustRoot(format!(
                "media type {:?} is not a Sigstore trusted root",
                raw.media_type
            )));
        }
        let mut tlogs = Vec::new();
        for t in &raw.tlogs {
            let Some(rb) = &t.public_key.raw_bytes else {
                continue;
            };
            let der = decode_b64("tlogs[].publicKey.rawBytes", rb, 4096)
                .map_err(|e| SignError::TrustRoot(e.to_string()))?;
            let Ok(key) = PublicKey::from_spki_der(&der) else {
                continue;
            };
            tlogs.push(LogKey {
                key_id: decode_b64("tlogs[].logId.keyId", &t.log_id.key_id, 64)
                    .map_err(|e| SignError::TrustRoot(e.to_string()))?,
                key,
                valid: window(t.public_key.valid_for.as_ref())?,
            });
        }
        let mut cas = Vec::new();
        for ca in &raw.certificate_authorities {
            let mut chain = Vec::new();
            for c in ca.cert_chain.certificates.iter().take(limits.max_chain_len) {
                let der = decode_b64(
                    "certChain.certificates[].rawBytes",
                    &c.raw_bytes,
                    limits.max_cert_bytes as u64,
                )
                .map_err(|e| SignError::TrustRoot(e.to_string()))?;
                chain.push(Cert::from_der(&der, limits)?);
            }
            if !chain.is_empty() {
                cas.push(CertAuthority {
                    chain,
                    valid: window(ca.valid_for.as_ref())?,
                });
            }
        }
        if cas.is_empty() {
            return Err(SignError::TrustRoot(
                "trusted root lists no certificate authority".into(),
            ));
        }
        Ok(TrustedRoot { tlogs, cas })
    }
}

/// The keyless verdict: who signed, when the log saw it.
#[derive(Debug, Clone)]
pub struct KeylessSigner {
    /// The matched SAN.
    pub identity: String,
    /// The OIDC issuer from the certificate.
    pub issuer: String,
    /// Rekor's integrated time.
    pub integrated_time: i64,
    /// Rekor log index.
    pub log_index: u64,
    /// Whether an inclusion proof with a signed checkpoint was verified.
    pub inclusion_proof: bool,
}

#[derive(Serialize)]
struct SetPayload<'a> {
    body: &'a str,
    #[serde(rename = "integratedTime")]
    integrated_time: i64,
    #[serde(rename = "logID")]
    log_id: String,
    #[serde(rename = "logIndex")]
    log_index: u64,
}

#[derive(Deserialize)]
struct DsseBody {
    kind: String,
    spec: DsseSpec,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DsseSpec {
    payload_hash: HashValue,
    signatures: Vec<BodySignature>,
}

#[derive(Deserialize)]
struct HashValue {
    algorithm: String,
    value: String,
}

#[derive(Deserialize)]
struct BodySignature {
    signature: String,
    verifier: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawProof {
    log_index: String,
    root_hash: String,
    tree_size: String,
    hashes: Vec<String>,
    checkpoint: RawCheckpoint,
}

#[derive(Deserialize)]
struct RawCheckpoint {
    envelope: String,
}

/// Everything the keyless check needs from the bundle.
pub struct KeylessInput<'a> {
    /// Fulcio certificate (leaf) and any further chain certificates from the bundle.
    pub certs: &'a [Cert],
    /// Log entries.
    pub entries: &'a [TlogEntry],
    /// DSSE payload bytes.
    pub payload: &'a [u8],
    /// Signature as written in the envelope (base64).
    pub signature_b64: &'a str,
}

/// Verifies the keyless material; returns the leaf's key to check the DSSE signature with.
pub fn verify_keyless(
    input: &KeylessInput<'_>,
    root: &TrustedRoot,
    identity: &SubjectMatch,
    issuer: &str,
    limits: &Limits,
) -> Result<(PublicKey, KeylessSigner), SignError> {
    let Some((leaf, extra)) = input.certs.split_first() else {
        return Err(SignError::Bundle(
            "keyless bundle has no certificate".into(),
        ));
    };
    let Some(entry) = input.entries.first() else {
        return Err(SignError::Transparency(
            "bundle has no transparency-log entry: the signing time cannot be established".into(),
        ));
    };
    let (log, integrated_time, log_index) = verify_set(entry, root)?;
    check_body(entry, input, leaf)?;
    let inclusion_proof = match &entry.inclusion_proof {
        Some(p) => {
            verify_inclusion(entry, p, log)?;
            true
        }
        None => false,
    };
    let mut last_err = None;
    let mut verified = false;
    for ca in &root.cas {
        if integrated_time < ca.valid.0 || integrated_time > ca.valid.1 {
            continue;
        }
        let Some((anchor, inters)) = ca.chain.split_last() else {
            continue;
        };
        let mut pool: Vec<Cert> = extra.to_vec();
        pool.extend(inters.iter().cloned());
        match verify_chain(
            leaf,
            &pool,
            std::slice::from_ref(anchor),
            integrated_time,
            limits,
        ) {
            Ok(_) => {
                verified = true;
                break;
            }
            Err(e) => last_err = Some(e),
        }
    }
    if !verified {
        return Err(last_err.unwrap_or_else(|| {
            SignError::Certificate(format!(
                "no Fulcio CA in the trusted root was valid at {}",
                fmt_time(integrated_time)
            ))
        }));
    }
    if !leaf.can_sign()? {
        return Err(SignError::Certificate(
            "signing certificate is not allowed to sign (key usage / code signing)".into(),
        ));
    }
    let sans = leaf.san_identities()?;
    let Some(san) = sans.iter().find(|s| identity.matches(s)) else {
        return Err(SignError::Identity(format!(
            "certificate identity {:?} does not match {identity}",
            sans.join(", ")
        )));
    };
    let got_issuer = leaf.fulcio_issuer()?.ok_or_else(|| {
        SignError::Identity("certificate has no Fulcio OIDC issuer extension".into())
    })?;
    if got_issuer != issuer {
        return Err(SignError::Identity(format!(
            "certificate issuer {got_issuer:?} does not match {issuer:?}"
        )));
    }
    Ok((
        leaf.public_key()?,
        KeylessSigner {
            identity: san.clone(),
            issuer: got_issuer,
            integrated_time,
            log_index,
            inclusion_proof,
        },
    ))
}

fn parse_num<T: std::str::FromStr>(what: &str, s: &str) -> Result<T, SignError> {
    s.parse()
        .map_err(|_| SignError::Transparency(format!("{what} {s:?} is not a number")))
}

/// Checks the signed entry timestamp; returns the log, integrated time and index.
fn verify_set<'r>(
    entry: &TlogEntry,
    root: &'r TrustedRoot,
) -> Result<(&'r LogKey, i64, u64), SignError> {
    let key_id = decode_b64("logId.keyId", &entry.log_id.key_id, 64)?;
    let Some(log) = root.tlogs.iter().find(|l| l.key_id == key_id) else {
        return Err(SignError::Transparency(format!(
            "entry is from log {} which the trusted root does not list (or whose key type is unsupported)",
            hex(&key_id)
        )));
    };
    let integrated_time: i64 = parse_num("integratedTime", &entry.integrated_time)?;
    let log_index: u64 = parse_num("logIndex", &entry.log_index)?;
    if integrated_time < log.valid.0 || integrated_time > log.valid.1 {
        return Err(SignError::Transparency(
            "entry's integrated time is outside the log key's validity".into(),
        ));
    }
    let Some(promise) = &entry.inclusion_promise else {
        return Err(SignError::Transparency(
            "entry has no signed entry timestamp (inclusion promise)".into(),
        ));
    };
    let sig = decode_b64(
        "signedEntryTimestamp",
        &promise.signed_entry_timestamp,
        1024,
    )?;
    // Rekor signs the canonical JSON (sorted keys, no spaces) of these four fields.
    let payload = serde_json::to_vec(&SetPayload {
        body: &entry.canonicalized_body,
        integrated_time,
        log_id: hex(&key_id),
        log_index,
    })
    .map_err(|e| SignError::Transparency(e.to_string()))?;
    log.key.verify(&payload, &sig).map_err(|_| {
        SignError::Transparency("signed entry timestamp does not verify with the log key".into())
    })?;
    Ok((log, integrated_time, log_index))
}

/// The entry must be about this envelope: same payload digest, signature and certificate.
fn check_body(entry: &TlogEntry, input: &KeylessInput<'_>, leaf: &Cert) -> Result<(), SignError> {
    if entry.kind_version.kind != "dsse" {
        return Err(SignError::Transparency(format!(
            "log entry kind {:?}, expected \"dsse\"",
            entry.kind_version.kind
        )));
    }
    let raw = decode_b64("canonicalizedBody", &entry.canonicalized_body, 1 << 20)?;
    let body: DsseBody = serde_json::from_slice(&raw)
        .map_err(|e| SignError::Transparency(format!("log entry body: {e}")))?;
    if body.kind != "dsse" || body.spec.payload_hash.algorithm != "sha256" {
        return Err(SignError::Transparency(
            "log entry body is not a sha256 dsse entry".into(),
        ));
    }
    if !body
        .spec
        .payload_hash
        .value
        .eq_ignore_ascii_case(&hex(&Sha256::digest(input.payload)))
    {
        return Err(SignError::Transparency(
            "log entry records a different payload".into(),
        ));
    }
    let limits = Limits::default();
    let matches = body.spec.signatures.iter().any(|s| {
        s.signature == input.signature_b64
            && decode_b64("verifier", &s.verifier, 64 << 10)
                .ok()
                .and_then(|pem| Cert::from_pem_chain(&pem, &limits).ok())
                .is_some_and(|c| c.first().is_some_and(|c| c.der == leaf.der))
    });
    if !matches {
        return Err(SignError::Transparency(
            "log entry records a different signature or certificate".into(),
        ));
    }
    Ok(())
}

fn hash_children(l: &[u8], r: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(l);
    h.update(r);
    h.finalize().into()
}

/// RFC 9162 inclusion proof plus the checkpoint's signature by the log key.
fn verify_inclusion(
    entry: &TlogEntry,
    proof: &serde_json::Value,
    log: &LogKey,
) -> Result<(), SignError> {
    let p: RawProof = serde_json::from_value(proof.clone())
        .map_err(|e| SignError::Transparency(format!("inclusion proof: {e}")))?;
    let index: u64 = parse_num("inclusionProof.logIndex", &p.log_index)?;
    let size: u64 = parse_num("inclusionProof.treeSize", &p.tree_size)?;
    if index >= size || p.hashes.len() > 64 {
        return Err(SignError::Transparency(
            "inclusion proof is malformed".into(),
        ));
    }
    let root = decode_b64("rootHash", &p.root_hash, 32)?;
    let body = decode_b64("canonicalizedBody", &entry.canonicalized_body, 1 << 20)?;
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(&body);
    let mut r: [u8; 32] = h.finalize().into();
    let (mut fnode, mut snode) = (index, size - 1);
    for hs in &p.hashes {
        let sib = decode_b64("inclusionProof.hashes", hs, 32)?;
        if snode == 0 {
            return Err(SignError::Transparency(
                "inclusion proof is too long".into(),
            ));
        }
        if fnode & 1 == 1 || fnode == snode {
            r = hash_children(&sib, &r);
            if fnode & 1 == 0 {
                while fnode & 1 == 0 && fnode != 0 {
                    fnode >>= 1;
                    snode >>= 1;
                }
            }
        } else {
            r = hash_children(&r, &sib);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    if snode != 0 || r.as_slice() != root.as_slice() {
        return Err(SignError::Transparency(
            "inclusion proof does not lead to the root hash".into(),
        ));
    }
    verify_checkpoint(&p.checkpoint.envelope, size, &root, log)
}

/// A signed note: `origin\nsize\nroot\n...\n\n— name base64(keyhint4 || sig)\n`.
fn verify_checkpoint(note: &str, size: u64, root: &[u8], log: &LogKey) -> Result<(), SignError> {
    let Some(split) = note.find("\n\n") else {
        return Err(SignError::Transparency(
            "checkpoint is not a signed note".into(),
        ));
    };
    let text = &note[..=split];
    let mut lines = text.lines();
    let _origin = lines.next();
    let ok_size = lines.next().and_then(|l| l.parse::<u64>().ok()) == Some(size);
    let ok_root = lines
        .next()
        .and_then(|l| decode_b64("checkpoint root", l, 32).ok())
        .is_some_and(|r| r == root);
    if !ok_size || !ok_root {
        return Err(SignError::Transparency(
            "checkpoint does not match the inclusion proof's tree".into(),
        ));
    }
    for line in note[split + 2..].lines() {
        let Some(rest) = line.strip_prefix("\u{2014} ") else {
            continue;
        };
        let Some(sig_b64) = rest.rsplit(' ').next() else {
            continue;
        };
        let Ok(raw) = decode_b64("checkpoint signature", sig_b64, 1024) else {
            continue;
        };
        if raw.len() > 4
            && raw[..4] == log.key_id[..4.min(log.key_id.len())]
            && log.key.verify(text.as_bytes(), &raw[4..]).is_ok()
        {
            return Ok(());
        }
    }
    Err(SignError::Transparency(
        "checkpoint carries no valid signature by the log key".into(),
    ))
}
