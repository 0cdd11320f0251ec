//! `modelgate sign` / `verify --signature` / SBOM attestations, through the real binary, on
//! fixtures made by the reference tool (tests/fixtures/signing, see its README).

use std::path::{Path, PathBuf};

use super::support::*;

fn fx(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/signing")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

/// A private copy of the fixture model.
fn model_repo() -> Repo {
    let repo = Repo::new();
    for e in [
        "config.json",
        "weights.bin",
        "sub/tokenizer.txt",
        "empty.txt",
        ".gitattributes",
    ] {
        repo.file(
            e,
            std::fs::read(PathBuf::from(fx("model")).join(e)).unwrap(),
        );
    }
    repo
}

fn out(args: &[&str]) -> (i32, String, String) {
    let o = run(args);
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn sign_then_verify_with_key_and_catch_tampering() {
    let repo = model_repo();
    let (code, _, err) = out(&["sign", p(repo.path()), "--key", &fx("keys/p256.pem")]);
    assert_eq!(code, 0, "{err}");
    let sig = repo.abs("model.sig");
    assert!(sig.exists());
    let verify = || {
        out(&[
            "verify",
            p(repo.path()),
            "--signature",
            p(&sig),
            "--key",
            &fx("keys/p256.pub.pem"),
        ])
    };
    let (code, text, _) = verify();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("result: VERIFIED"), "{text}");

    let mut w = std::fs::read(repo.abs("weights.bin")).unwrap();
    w[0] ^= 1;
    repo.file("weights.bin", w);
    repo.file("sub/extra.py", "import os");
    std::fs::remove_file(repo.abs("config.json")).unwrap();
    let (code, text, _) = verify();
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("changed   weights.bin"), "{text}");
    assert!(text.contains("missing   config.json"), "{text}");
    assert!(text.contains("added     sub/extra.py"), "{text}");
    assert!(text.contains("result: MISMATCH"), "{text}");
}

#[test]
fn verifies_reference_made_signatures() {
    let model = fx("model");
    for args in [
        vec!["--signature", "key-p256.sig", "--key", "keys/p256.pub.pem"],
        vec!["--signature", "key-p384.sig", "--key", "keys/p384.pub.pem"],
        vec![
            "--signature",
            "key-p256-shards.sig",
            "--key",
            "keys/p256.pub.pem",
        ],
        vec![
            "--signature",
            "cert.sig",
            "--certificate-chain",
            "keys/root-ca.crt",
        ],
    ] {
        let mut a = vec!["verify".to_string(), model.clone()];
        for (i, s) in args.iter().enumerate() {
            a.push(if i % 2 == 1 { fx(s) } else { s.to_string() });
        }
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, text, err) = out(&a);
        assert_eq!(code, 0, "{args:?}: {text} {err}");
    }
}

#[test]
fn verifies_reference_keyless_signature_offline() {
    let (code, text, err) = out(&[
        "verify",
        &fx("keyless/model"),
        "--signature",
        &fx("keyless/model.sig"),
        "--identity",
        "stefanb@us.ibm.com",
        "--issuer",
        "https://sigstore.verify.ibm.com/oauth2",
        "--trust-root",
        &fx("keyless/trusted_root.json"),
    ]);
    assert_eq!(code, 0, "{text} {err}");
    assert!(text.contains("sigstore stefanb@us.ibm.com"), "{text}");
    let (code, text, _) = out(&[
        "verify",
        &fx("keyless/model"),
        "--signature",
        &fx("keyless/model.sig"),
        "--identity",
        "someone@example.com",
        "--issuer",
        "https://sigstore.verify.ibm.com/oauth2",
        "--trust-root",
        &fx("keyless/trusted_root.json"),
    ]);
    assert_eq!(code, 1);
    assert!(text.contains("untrusted signer"), "{text}");
}

#[test]
fn wrong_key_expired_certificate_and_garbage_are_one_line_errors() {
    let model = fx("model");
    for (args, needle) in [
        (
            vec![
                "--signature",
                &fx("key-p256.sig"),
                "--key",
                &fx("keys/other.pub.pem"),
            ],
            "wrong key",
        ),
        (
            vec![
                "--signature",
                &fx("cert-expired.sig"),
                "--certificate-chain",
                &fx("keys/root-ca.crt"),
            ],
            "not valid at",
        ),
        (
            vec![
                "--signature",
                &fx("model/config.json"),
                "--key",
                &fx("keys/p256.pub.pem"),
            ],
            "unreadable signature bundle",
        ),
    ] {
        let mut a = vec!["verify", model.as_str()];
        a.extend(args.iter().map(|s| &**s));
        let (code, text, _) = out(&a);
        assert_eq!(code, 1, "{text}");
        let first = text.lines().next().unwrap();
        assert!(
            first.starts_with("signature INVALID: ") && first.contains(needle),
            "{text}"
        );
    }
}

#[test]
fn verify_without_trust_is_a_usage_error() {
    let (code, _, err) = out(&["verify", &fx("model"), "--signature", &fx("key-p256.sig")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("exactly one of --key"), "{err}");
}

#[test]
fn certificate_signing_round_trip_and_json() {
    let repo = model_repo();
    let sig = repo.abs("model.sig");
    let (code, _, err) = out(&[
        "sign",
        p(repo.path()),
        "--key",
        &fx("keys/signer.pem"),
        "--certificate-chain",
        &fx("keys/int-ca.crt"),
        "--certificate-chain",
        &fx("keys/signer.crt"),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, text, _) = out(&[
        "verify",
        p(repo.path()),
        "--signature",
        p(&sig),
        "--certificate-chain",
        &fx("keys/root-ca.crt"),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["signature"]["verified"], true);
    assert_eq!(v["signature"]["signer"]["method"], "certificate");
    assert_eq!(v["signature"]["diff"]["checked"], 4);
}

#[test]
fn sbom_attestation_is_checked_before_the_sbom_is_trusted() {
    let repo = model_repo();
    // Release assets live next to the model, not inside it.
    let assets = tempfile::tempdir().unwrap();
    let sbom = assets.path().join("model.cdx.json");
    let (code, _) = scan_json(repo.path(), &["--sbom", p(&sbom)]);
    assert!(code == 0 || code == 1);
    let att = assets.path().join("model.cdx.json.intoto.json");
    let (code, _, err) = out(&["sign", "--sbom", p(&sbom), "--key", &fx("keys/p256.pem")]);
    assert_eq!(code, 0, "{err}");
    assert!(att.exists());
    let verify = |key: &str| {
        out(&[
            "verify",
            "--sbom",
            p(&sbom),
            "--attestation",
            p(&att),
            "--key",
            key,
            p(repo.path()),
        ])
    };
    let (code, text, err) = verify(&fx("keys/p256.pub.pem"));
    assert_eq!(code, 0, "{text} {err}");
    assert!(
        text.contains("sbom attestation: signature verified"),
        "{text}"
    );
    let (code, text, _) = verify(&fx("keys/other.pub.pem"));
    assert_eq!(code, 1, "{text}");
    // An SBOM edited to match a tampered tree no longer matches its attestation.
    let edited = std::fs::read_to_string(&sbom)
        .unwrap()
        .replacen("\"SHA-256\"", "\"SHA-256\" ", 1)
        .replace(
            &sha256_hex(&std::fs::read(repo.abs("weights.bin")).unwrap()),
            &sha256_hex(b"evil"),
        );
    std::fs::write(&sbom, edited).unwrap();
    let (code, text, _) = verify(&fx("keys/p256.pub.pem"));
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("different SBOM"), "{text}");
}

#[test]
fn plain_sbom_verify_still_works() {
    let repo = model_repo();
    let assets = tempfile::tempdir().unwrap();
    let sbom = assets.path().join("x.cdx.json");
    scan_json(repo.path(), &["--sbom", p(&sbom)]);
    let (code, text, err) = out(&["verify", "--sbom", p(&sbom), p(repo.path())]);
    assert_eq!(code, 0, "{text} {err}");
}

#[test]
fn verify_help_names_every_method() {
    let (_, text, _) = out(&["verify", "--help"]);
    for flag in [
        "--signature",
        "--key",
        "--certificate-chain",
        "--identity",
        "--issuer",
        "--trust-root",
        "--attestation",
    ] {
        assert!(text.contains(flag), "{flag}: {text}");
    }
}
