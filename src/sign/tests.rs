//! End-to-end tests of the signing library against fixtures made by the reference tool
//! (`scripts/make-signing-fixtures.sh`) and against its own output.

use std::path::{Path, PathBuf};

use super::*;

/// 2026-05-28: inside the test PKI's validity (2025..2045).
const NOW: i64 = 1_780_000_000;

fn fx(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/signing")
        .join(rel)
}

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(fx(rel)).unwrap()
}

fn pubkey(rel: &str) -> Trust {
    Trust::Key(PublicKey::from_pem(&String::from_utf8(read(rel)).unwrap()).unwrap())
}

fn roots(rel: &str) -> Trust {
    Trust::Certificates(Cert::from_pem_chain(&read(rel), &Limits::default()).unwrap())
}

fn opts() -> VerifyOptions {
    VerifyOptions {
        now: NOW,
        ignore_paths: Vec::new(),
        ignore_git_paths: true,
    }
}

fn verify_fx(model: &Path, sig: &[u8], trust: &Trust) -> Result<Verification, SignError> {
    verify(model, sig, trust, &opts(), &Limits::default())
}

/// A private copy of the fixture model to tamper with.
fn model_copy() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for e in walkdir::WalkDir::new(fx("model")).min_depth(1) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(fx("model")).unwrap();
        if e.file_type().is_dir() {
            std::fs::create_dir_all(d.path().join(rel)).unwrap();
        } else {
            std::fs::copy(e.path(), d.path().join(rel)).unwrap();
        }
    }
    d
}

fn key(rel: &str) -> PrivateKey {
    PrivateKey::from_pem(&String::from_utf8(read(rel)).unwrap()).unwrap()
}

fn keyless_trust(identity: &str, issuer: &str) -> Trust {
    Trust::Sigstore {
        root: TrustedRoot::parse(&read("keyless/trusted_root.json"), &Limits::default()).unwrap(),
        identity: SubjectMatch::Exact(identity.into()),
        issuer: issuer.into(),
    }
}

const KEYLESS_ID: &str = "stefanb@us.ibm.com";
const KEYLESS_ISSUER: &str = "https://sigstore.verify.ibm.com/oauth2";

#[test]
fn verifies_reference_key_signatures() {
    for (sig, pem) in [
        ("key-p256.sig", "keys/p256.pub.pem"),
        ("key-p384.sig", "keys/p384.pub.pem"),
        ("key-p256-shards.sig", "keys/p256.pub.pem"),
    ] {
        let v = verify_fx(&fx("model"), &read(sig), &pubkey(pem)).unwrap();
        assert!(v.is_clean(), "{sig}: {:?}", v.diff);
        assert_eq!(v.signer.method, "key");
        assert_eq!(v.model_name, "model");
    }
}

#[test]
fn reference_shard_signature_uses_shards_method() {
    let v = verify_fx(
        &fx("model"),
        &read("key-p256-shards.sig"),
        &pubkey("keys/p256.pub.pem"),
    )
    .unwrap();
    assert_eq!(v.method, "shards");
    // 4 non-empty files (config 51 B, weights 42 B, tokenizer 12 B); the empty file has no shard.
    assert_eq!(v.diff.checked, 3);
}

#[test]
fn verifies_reference_certificate_signature() {
    let v = verify_fx(&fx("model"), &read("cert.sig"), &roots("keys/root-ca.crt")).unwrap();
    assert!(v.is_clean());
    assert_eq!(v.signer.method, "certificate");
    assert!(
        v.signer.identity.contains("CN=signer"),
        "{}",
        v.signer.identity
    );
}

#[test]
fn rejects_expired_signing_certificate() {
    let e = verify_fx(
        &fx("model"),
        &read("cert-expired.sig"),
        &roots("keys/root-ca.crt"),
    )
    .unwrap_err();
    assert!(matches!(e, SignError::Certificate(_)), "{e}");
    assert!(e.to_string().contains("not valid at"), "{e}");
}

#[test]
fn rejects_certificate_from_another_root() {
    let e = verify_fx(
        &fx("model"),
        &read("cert.sig"),
        &roots("keys/other-root-ca.crt"),
    )
    .unwrap_err();
    assert!(e.to_string().contains("no trusted issuer"), "{e}");
}

#[test]
fn certificate_checked_at_source_date_epoch_clock() {
    // The same chain at a time after the certificates expire.
    let o = VerifyOptions {
        now: 2_400_000_000,
        ..opts()
    };
    let e = verify(
        &fx("model"),
        &read("cert.sig"),
        &roots("keys/root-ca.crt"),
        &o,
        &Limits::default(),
    )
    .unwrap_err();
    assert!(matches!(e, SignError::Certificate(_)), "{e}");
}

#[test]
fn rejects_different_key_by_hint() {
    let e = verify_fx(
        &fx("model"),
        &read("key-p256.sig"),
        &pubkey("keys/other.pub.pem"),
    )
    .unwrap_err();
    assert!(matches!(e, SignError::KeyMismatch { .. }), "{e}");
}

#[test]
fn rejects_different_key_without_hint() {
    let mut b: serde_json::Value = serde_json::from_slice(&read("key-p256.sig")).unwrap();
    b["verificationMaterial"]["publicKey"]
        .as_object_mut()
        .unwrap()
        .remove("hint");
    let bytes = serde_json::to_vec(&b).unwrap();
    let e = verify_fx(&fx("model"), &bytes, &pubkey("keys/other.pub.pem")).unwrap_err();
    assert!(matches!(e, SignError::BadSignature), "{e}");
}

#[test]
fn rejects_key_trust_for_certificate_bundle() {
    let e = verify_fx(
        &fx("model"),
        &read("cert.sig"),
        &pubkey("keys/p256.pub.pem"),
    )
    .unwrap_err();
    assert!(matches!(e, SignError::Method(_)), "{e}");
}

#[test]
fn round_trip_key_and_certificate() {
    let l = Limits::default();
    let k = SigningMaterial::Key(key("keys/p384.pem"));
    let sig = sign(&fx("model"), &k, &SignOptions::default(), &l).unwrap();
    assert!(
        verify_fx(&fx("model"), &sig, &pubkey("keys/p384.pub.pem"))
            .unwrap()
            .is_clean()
    );
    // Same input, same bytes (RFC 6979 signatures, sorted manifest).
    assert_eq!(
        sig,
        sign(&fx("model"), &k, &SignOptions::default(), &l).unwrap()
    );

    let mut certs = Cert::from_pem_chain(&read("keys/int-ca.crt"), &l).unwrap();
    certs.extend(Cert::from_pem_chain(&read("keys/signer.crt"), &l).unwrap());
    let m = SigningMaterial::with_certificates(key("keys/signer.pem"), certs).unwrap();
    let sig = sign(&fx("model"), &m, &SignOptions::default(), &l).unwrap();
    let v = verify_fx(&fx("model"), &sig, &roots("keys/root-ca.crt")).unwrap();
    assert!(v.is_clean());
}

#[test]
fn round_trip_shards() {
    let l = Limits::default();
    let o = SignOptions {
        shard_size: Some(16),
        ..SignOptions::default()
    };
    let sig = sign(
        &fx("model"),
        &SigningMaterial::Key(key("keys/p256.pem")),
        &o,
        &l,
    )
    .unwrap();
    // Same resources as the reference's sharded signature of the same tree.
    let ours = verify_fx(&fx("model"), &sig, &pubkey("keys/p256.pub.pem")).unwrap();
    let theirs = verify_fx(
        &fx("model"),
        &read("key-p256-shards.sig"),
        &pubkey("keys/p256.pub.pem"),
    )
    .unwrap();
    assert_eq!(ours.manifest_digest, theirs.manifest_digest);
}

#[test]
fn modelgate_manifest_digest_equals_reference() {
    let l = Limits::default();
    let sig = sign(
        &fx("model"),
        &SigningMaterial::Key(key("keys/p256.pem")),
        &SignOptions::default(),
        &l,
    )
    .unwrap();
    let ours = verify_fx(&fx("model"), &sig, &pubkey("keys/p256.pub.pem")).unwrap();
    let theirs = verify_fx(
        &fx("model"),
        &read("key-p256.sig"),
        &pubkey("keys/p256.pub.pem"),
    )
    .unwrap();
    assert_eq!(ours.manifest_digest, theirs.manifest_digest);
}

#[test]
fn tampering_is_named_per_file() {
    let d = model_copy();
    let p = d.path().join("weights.bin");
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[3] ^= 1;
    std::fs::write(&p, bytes).unwrap();
    std::fs::write(d.path().join("sub/extra.py"), b"import os").unwrap();
    std::fs::remove_file(d.path().join("config.json")).unwrap();
    // Ignored by the reference's rules: neither added nor a mismatch.
    std::fs::create_dir_all(d.path().join(".git")).unwrap();
    std::fs::write(d.path().join(".git/HEAD"), b"ref").unwrap();
    let v = verify_fx(
        d.path(),
        &read("key-p256.sig"),
        &pubkey("keys/p256.pub.pem"),
    )
    .unwrap();
    assert!(!v.is_clean());
    assert_eq!(
        v.diff
            .changed
            .iter()
            .map(|c| c.path.as_str())
            .collect::<Vec<_>>(),
        ["weights.bin"]
    );
    assert_eq!(v.diff.missing, ["config.json"]);
    assert_eq!(v.diff.added, ["sub/extra.py"]);
    // Shards: the same flip is named by file, not by shard.
    let v = verify_fx(
        d.path(),
        &read("key-p256-shards.sig"),
        &pubkey("keys/p256.pub.pem"),
    )
    .unwrap();
    assert_eq!(v.diff.changed[0].path, "weights.bin");
}

fn edit_payload(sig: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut b: serde_json::Value = serde_json::from_slice(sig).unwrap();
    let payload =
        bundle::decode_b64("p", b["dsseEnvelope"]["payload"].as_str().unwrap(), 1 << 20).unwrap();
    let mut st: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    edit(&mut st);
    b["dsseEnvelope"]["payload"] = bundle::encode_b64(&serde_json::to_vec(&st).unwrap()).into();
    serde_json::to_vec(&b).unwrap()
}

#[test]
fn edited_manifest_entry_fails_signature() {
    let d = model_copy();
    std::fs::write(d.path().join("weights.bin"), b"evil").unwrap();
    let evil = hex(&<sha2::Sha256 as sha2::Digest>::digest(b"evil"));
    let bytes = edit_payload(&read("key-p256.sig"), |st| {
        for r in st["predicate"]["resources"].as_array_mut().unwrap() {
            if r["name"] == "weights.bin" {
                r["digest"] = evil.clone().into();
            }
        }
    });
    let e = verify_fx(d.path(), &bytes, &pubkey("keys/p256.pub.pem")).unwrap_err();
    assert!(matches!(e, SignError::BadSignature), "{e}");
    let e = verify_fx(
        d.path(),
        &edit_payload(&read("cert.sig"), |st| {
            st["predicate"]["resources"].as_array_mut().unwrap().pop();
        }),
        &roots("keys/root-ca.crt"),
    )
    .unwrap_err();
    assert!(matches!(e, SignError::BadSignature), "{e}");
}

#[test]
fn verifies_reference_keyless_bundle_offline() {
    let v = verify_fx(
        &fx("keyless/model"),
        &read("keyless/model.sig"),
        &keyless_trust(KEYLESS_ID, KEYLESS_ISSUER),
    )
    .unwrap();
    assert!(v.is_clean(), "{:?}", v.diff);
    assert_eq!(v.signer.method, "sigstore");
    assert_eq!(v.signer.identity, KEYLESS_ID);
    let tlog = v.signer.tlog.unwrap();
    assert!(tlog.contains("inclusion proof verified"), "{tlog}");
}

#[test]
fn keyless_rejects_wrong_identity_and_issuer() {
    for (id, iss) in [
        ("mallory@example.com", KEYLESS_ISSUER),
        (KEYLESS_ID, "https://accounts.google.com"),
    ] {
        let e = verify_fx(
            &fx("keyless/model"),
            &read("keyless/model.sig"),
            &keyless_trust(id, iss),
        )
        .unwrap_err();
        assert!(matches!(e, SignError::Identity(_)), "{e}");
    }
}

#[test]
fn keyless_identity_regex_matches_the_whole_san_only() {
    let trust = |pattern: &str| Trust::Sigstore {
        root: TrustedRoot::parse(&read("keyless/trusted_root.json"), &Limits::default()).unwrap(),
        identity: SubjectMatch::regex(pattern).unwrap(),
        issuer: KEYLESS_ISSUER.into(),
    };
    let verify = |pattern: &str| {
        verify_fx(
            &fx("keyless/model"),
            &read("keyless/model.sig"),
            &trust(pattern),
        )
    };
    // The signer is the SAN the certificate holds, not the pattern.
    let v = verify(r"[a-z]+@us\.ibm\.com").unwrap();
    assert_eq!(v.signer.identity, KEYLESS_ID);
    // Anchored: a pattern matching only part of the SAN, or the SAN with more around it, fails.
    for partial in ["stefanb", r"us\.ibm\.com", r"stefanb@us\.ibm\.com\.evil"] {
        let e = verify(partial).unwrap_err();
        assert!(matches!(e, SignError::Identity(_)), "{partial}: {e}");
        assert!(e.to_string().contains("regex"), "{e}");
    }
    // An alternation cannot escape the anchors.
    assert!(verify("nobody|.*").is_ok());
    assert!(verify("nobody|stefanb").is_err());
    assert!(matches!(
        SubjectMatch::regex("(unclosed"),
        Err(SignError::Method(_))
    ));
    assert!(SubjectMatch::regex("a{1000}{1000}").is_err(), "size cap");
}

#[test]
fn a_key_fingerprint_pins_the_key_a_certificate_signature_carries() {
    let leaf = Cert::from_pem_chain(&read("keys/signer.crt"), &Limits::default()).unwrap();
    let fp = leaf[0].public_key().unwrap().fingerprint();
    assert!(fp.starts_with("sha256:") && fp.len() == 71, "{fp}");
    let v = verify_fx(
        &fx("model"),
        &read("cert.sig"),
        &Trust::KeyFingerprint(fp.clone()),
    )
    .unwrap();
    assert!(v.is_clean(), "{:?}", v.diff);
    assert_eq!(v.signer.method, "key-fingerprint");
    assert_eq!(v.signer.identity, fp);
    // The pin is the trust: an expired certificate around the pinned key still verifies...
    let expired = Cert::from_pem_chain(&read("keys/signer-expired.crt"), &Limits::default())
        .unwrap()[0]
        .public_key()
        .unwrap()
        .fingerprint();
    assert!(
        verify_fx(
            &fx("model"),
            &read("cert-expired.sig"),
            &Trust::KeyFingerprint(expired)
        )
        .is_ok()
    );
    // ...another key's fingerprint does not, and neither does a tampered tree.
    let other = pubkey("keys/other.pub.pem");
    let Trust::Key(other) = other else { panic!() };
    let e = verify_fx(
        &fx("model"),
        &read("cert.sig"),
        &Trust::KeyFingerprint(other.fingerprint()),
    )
    .unwrap_err();
    assert!(matches!(e, SignError::KeyMismatch { .. }), "{e}");
    let e = verify_fx(
        &fx("model"),
        &edit_payload(&read("cert.sig"), |st| {
            st["predicate"]["resources"].as_array_mut().unwrap().pop();
        }),
        &Trust::KeyFingerprint(fp),
    )
    .unwrap_err();
    assert!(matches!(e, SignError::BadSignature), "{e}");
    // A bare-key signature carries no key: a fingerprint alone cannot check it, and says so.
    let p256 = pubkey("keys/p256.pub.pem");
    let Trust::Key(p256) = p256 else { panic!() };
    let e = verify_fx(
        &fx("model"),
        &read("key-p256.sig"),
        &Trust::KeyFingerprint(p256.fingerprint()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("list the public key PEM"), "{e}");
}

#[test]
fn keyless_rejects_tampered_log_entry_and_missing_entry() {
    let mut b: serde_json::Value = serde_json::from_slice(&read("keyless/model.sig")).unwrap();
    b["verificationMaterial"]["tlogEntries"][0]["integratedTime"] = "1760062341".into();
    let e = verify_fx(
        &fx("keyless/model"),
        &serde_json::to_vec(&b).unwrap(),
        &keyless_trust(KEYLESS_ID, KEYLESS_ISSUER),
    )
    .unwrap_err();
    assert!(matches!(e, SignError::Transparency(_)), "{e}");
    b["verificationMaterial"]["tlogEntries"] = serde_json::json!([]);
    let e = verify_fx(
        &fx("keyless/model"),
        &serde_json::to_vec(&b).unwrap(),
        &keyless_trust(KEYLESS_ID, KEYLESS_ISSUER),
    )
    .unwrap_err();
    assert!(matches!(e, SignError::Transparency(_)), "{e}");
}

#[test]
fn keyless_rejects_tampered_inclusion_proof() {
    let mut b: serde_json::Value = serde_json::from_slice(&read("keyless/model.sig")).unwrap();
    b["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]["hashes"][0] =
        bundle::encode_b64(&[0u8; 32]).into();
    let e = verify_fx(
        &fx("keyless/model"),
        &serde_json::to_vec(&b).unwrap(),
        &keyless_trust(KEYLESS_ID, KEYLESS_ISSUER),
    )
    .unwrap_err();
    assert!(e.to_string().contains("inclusion proof"), "{e}");
}

#[test]
fn keyless_tree_mismatch_is_reported() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("signme-1"), b"changed\n").unwrap();
    std::fs::copy(fx("keyless/model/signme-2"), d.path().join("signme-2")).unwrap();
    let v = verify_fx(
        d.path(),
        &read("keyless/model.sig"),
        &keyless_trust(KEYLESS_ID, KEYLESS_ISSUER),
    )
    .unwrap();
    assert_eq!(v.diff.changed[0].path, "signme-1");
}

#[test]
fn signature_file_inside_tree_is_ignored() {
    let d = model_copy();
    let l = Limits::default();
    let sig_path = d.path().join("model.sig");
    let rel = relative_inside(d.path(), &sig_path).unwrap();
    assert_eq!(rel, "model.sig");
    let o = SignOptions {
        ignore_paths: vec![rel.clone()],
        ..SignOptions::default()
    };
    let sig = sign(
        d.path(),
        &SigningMaterial::Key(key("keys/p256.pem")),
        &o,
        &l,
    )
    .unwrap();
    std::fs::write(&sig_path, &sig).unwrap();
    let v = verify_fx(d.path(), &sig, &pubkey("keys/p256.pub.pem")).unwrap();
    assert!(v.is_clean(), "{:?}", v.diff);
}

#[test]
fn hostile_bundles_are_errors_not_panics() {
    let good = read("key-p256.sig");
    let t = pubkey("keys/p256.pub.pem");
    assert!(verify_bundle(&good, &t, NOW, &Limits::default()).is_ok());
    let mut accepted = Vec::new();
    for cut in (0..good.len()).step_by(97) {
        if verify_bundle(&good[..cut], &t, NOW, &Limits::default()).is_ok() {
            accepted.push(format!("cut at {cut}"));
        }
    }
    let mut flipped = good.clone();
    for i in (0..flipped.len()).step_by(53) {
        flipped[i] ^= 0x20;
        if verify_bundle(&flipped, &t, NOW, &Limits::default()).is_ok() {
            accepted.push(format!("byte {i} flipped ({:?})", char::from(good[i])));
        }
        flipped[i] ^= 0x20;
    }
    assert!(accepted.is_empty(), "accepted: {accepted:?}");
}
