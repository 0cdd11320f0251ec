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

/// `--identity-regex` (verify and scan) and `subject_regex` (policy) trust a signer by pattern;
/// the pattern must match the whole SAN, and the report names the SAN, not the pattern.
#[test]
fn keyless_signers_can_be_trusted_by_an_anchored_identity_regex() {
    let verify = |pattern: &str| {
        out(&[
            "verify",
            &fx("keyless/model"),
            "--signature",
            &fx("keyless/model.sig"),
            "--identity-regex",
            pattern,
            "--issuer",
            "https://sigstore.verify.ibm.com/oauth2",
            "--trust-root",
            &fx("keyless/trusted_root.json"),
        ])
    };
    let (code, text, err) = verify(r".+@us\.ibm\.com");
    assert_eq!(code, 0, "{text} {err}");
    assert!(text.contains("sigstore stefanb@us.ibm.com"), "{text}");
    let (code, text, _) = verify(r"us\.ibm\.com");
    assert_eq!(code, 1, "a partial match must not pass: {text}");
    let (code, _, err) = verify("(");
    assert_eq!(code, 2);
    assert!(err.contains("identity regex"), "{err}");
    let (code, _, err) = out(&[
        "verify",
        &fx("keyless/model"),
        "--signature",
        &fx("keyless/model.sig"),
        "--identity-regex",
        ".*",
        "--identity",
        "x",
        "--issuer",
        "https://sigstore.verify.ibm.com/oauth2",
        "--trust-root",
        &fx("keyless/trusted_root.json"),
    ]);
    assert_eq!(code, 2, "{err}");

    let keyless = PathBuf::from(fx("keyless/model"));
    let (code, r) = scan_json(
        &keyless,
        &[
            "--signature",
            &fx("keyless/model.sig"),
            "--identity-regex",
            r"stefanb@.*",
            "--issuer",
            "https://sigstore.verify.ibm.com/oauth2",
            "--trust-root",
            &fx("keyless/trusted_root.json"),
            "--require-signature",
        ],
    );
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert_eq!(
        r["repository"]["signature"]["signer"]["identity"],
        "stefanb@us.ibm.com"
    );

    let policy_dir = tempfile::tempdir().unwrap();
    let policy = policy_dir.path().join("gate.toml");
    let write = |subject: &str| {
        std::fs::write(
            &policy,
            format!(
                "version = 1\n[signing]\nrequire = true\nsignature = {sig:?}\ntrust_root = {root:?}\n\
                 identities = [{{ subject_regex = '{subject}', issuer = \"https://sigstore.verify.ibm.com/oauth2\" }}]\n",
                sig = fx("keyless/model.sig"),
                root = fx("keyless/trusted_root.json"),
            ),
        )
        .unwrap();
    };
    write(r"[a-z]+@us\.ibm\.com");
    let (code, r) = scan_json(&keyless, &["--policy", p(&policy)]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    write(r"[a-z]+@example\.com");
    let (code, r) = scan_json(&keyless, &["--policy", p(&policy)]);
    assert_eq!(code, 1);
    assert_eq!(sig_rules(&r), owned(&[("SIG002", "", "deny")]));
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

// ---- scan and policy integration (SIG001-SIG003, `[signing]`) ----

/// A private copy of the fixture model, signed by modelgate with the P-256 key (`model.sig`).
fn signed_repo() -> Repo {
    let repo = model_repo();
    let (code, _, err) = out(&["sign", p(repo.path()), "--key", &fx("keys/p256.pem")]);
    assert_eq!(code, 0, "{err}");
    repo
}

fn sig_rules(r: &serde_json::Value) -> Vec<(String, String, String)> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("SIG"))
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["path"].as_str().unwrap().to_string(),
                f["action"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn owned(v: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    v.iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

#[test]
fn scan_passes_a_signed_tree_and_records_the_signer() {
    let repo = signed_repo();
    let key = fx("keys/p256.pub.pem");
    let (code, r) = scan_json(repo.path(), &["--require-signature", "--key", &key]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(sig_rules(&r).is_empty(), "{:?}", sig_rules(&r));
    let sig = &r["repository"]["signature"];
    assert_eq!(sig["file"], "model.sig");
    assert_eq!(sig["verified"], true);
    assert_eq!(sig["tree_matches"], true);
    assert_eq!(sig["serialization"], "files");
    assert_eq!(sig["signer"]["method"], "key");
    assert!(
        sig["manifest_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    let bytes = std::fs::read(repo.abs("model.sig")).unwrap();
    assert_eq!(sig["sha256"], sha256_hex(&bytes).as_str());
    let (code, text, _) = out(&["scan", p(repo.path()), "--no-git", "--key", &key]);
    assert_eq!(code, 0);
    assert!(
        text.contains("signature: model.sig verified (key ") && text.contains("), files match"),
        "{text}"
    );
}

#[test]
fn scan_denies_a_tampered_an_added_and_a_deleted_file_by_name() {
    let repo = signed_repo();
    let mut w = std::fs::read(repo.abs("weights.bin")).unwrap();
    w[0] ^= 1;
    repo.file("weights.bin", w);
    repo.file("sub/extra.py", "import os");
    std::fs::remove_file(repo.abs("config.json")).unwrap();
    // Ignored by the signature (as by the reference tool): changing it is not a mismatch.
    repo.file(".gitattributes", "*.bin filter=lfs\n");
    let (code, r) = scan_json(repo.path(), &["--key", &fx("keys/p256.pub.pem")]);
    assert_eq!(code, 1);
    let mut got = sig_rules(&r);
    got.sort();
    assert_eq!(
        got,
        owned(&[
            ("SIG003", "config.json", "deny"),
            ("SIG003", "sub/extra.py", "deny"),
            ("SIG003", "weights.bin", "deny"),
        ])
    );
    assert_eq!(r["repository"]["signature"]["verified"], true);
    assert_eq!(r["repository"]["signature"]["tree_matches"], false);
    let f = findings(&r, "SIG003");
    assert!(f.iter().all(|f| f["evidence"]["signature"] == "model.sig"));
}

/// A signed file left out of the scan is not called deleted: the finding says it was not scanned.
#[test]
fn scan_names_a_signed_file_it_did_not_read_as_not_scanned() {
    let repo = signed_repo();
    let (code, r) = scan_json(
        repo.path(),
        &["--key", &fx("keys/p256.pub.pem"), "--exclude", "sub/**"],
    );
    assert_eq!(code, 1);
    assert_eq!(
        sig_rules(&r),
        owned(&[("SIG003", "sub/tokenizer.txt", "deny")])
    );
    let message = findings(&r, "SIG003")[0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("was not scanned"), "{message}");
    std::fs::remove_file(repo.abs("sub/tokenizer.txt")).unwrap();
    let (_, r) = scan_json(repo.path(), &["--key", &fx("keys/p256.pub.pem")]);
    let message = findings(&r, "SIG003")[0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("is missing"), "{message}");
}

#[test]
fn scan_denies_a_signature_from_an_untrusted_key() {
    let repo = signed_repo();
    let (code, r) = scan_json(repo.path(), &["--key", &fx("keys/other.pub.pem")]);
    assert_eq!(code, 1);
    assert_eq!(sig_rules(&r), owned(&[("SIG002", "model.sig", "deny")]));
    assert!(
        findings(&r, "SIG002")[0]["message"]
            .as_str()
            .unwrap()
            .contains("wrong key"),
        "{:#}",
        r["findings"]
    );
    assert_eq!(r["repository"]["signature"]["verified"], false);
    assert!(r["repository"]["signature"]["reason"].is_string());
}

#[test]
fn scan_denies_a_missing_signature_only_when_required() {
    let repo = model_repo();
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0);
    assert!(sig_rules(&r).is_empty());
    assert!(r["repository"].get("signature").is_none());
    let (code, r) = scan_json(repo.path(), &["--require-signature"]);
    assert_eq!(code, 1);
    assert_eq!(sig_rules(&r), owned(&[("SIG001", "", "deny")]));

    // The strict preset requires a signature (among much else).
    let strict = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/strict.toml");
    let (code, r) = scan_json(repo.path(), &["--policy", strict.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(sig_rules(&r), owned(&[("SIG001", "", "deny")]));
}

#[test]
fn scan_records_an_unjudged_signature_when_the_policy_trusts_nobody() {
    let repo = signed_repo();
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert!(sig_rules(&r).is_empty());
    let sig = &r["repository"]["signature"];
    assert_eq!(sig["verified"], false);
    assert!(
        sig["reason"]
            .as_str()
            .unwrap()
            .contains("no trusted signer")
    );
    // Required but nobody trusted: it can never pass, and says so.
    let (code, r) = scan_json(repo.path(), &["--require-signature"]);
    assert_eq!(code, 1);
    assert_eq!(sig_rules(&r), owned(&[("SIG002", "model.sig", "deny")]));
}

#[test]
fn signing_policy_table_resolves_keys_next_to_the_policy_file() {
    let repo = signed_repo();
    let policy_dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(policy_dir.path().join("keys")).unwrap();
    std::fs::copy(
        fx("keys/p256.pub.pem"),
        policy_dir.path().join("keys/release.pub.pem"),
    )
    .unwrap();
    let policy = policy_dir.path().join("gate.toml");
    std::fs::write(
        &policy,
        "version = 1\n[signing]\nrequire = true\nkeys = [\"keys/release.pub.pem\"]\n",
    )
    .unwrap();
    let (code, r) = scan_json(repo.path(), &["--policy", p(&policy)]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert_eq!(r["repository"]["signature"]["verified"], true);

    // `signature` names another file, relative to the scan root: absent -> SIG001.
    std::fs::write(
        &policy,
        "version = 1\n[signing]\nrequire = true\nsignature = \"release.sig\"\nkeys = [\"keys/release.pub.pem\"]\n",
    )
    .unwrap();
    let (code, r) = scan_json(repo.path(), &["--policy", p(&policy)]);
    assert_eq!(code, 1);
    assert_eq!(sig_rules(&r), owned(&[("SIG001", "", "deny")]));
    assert!(
        findings(&r, "SIG001")[0]["message"]
            .as_str()
            .unwrap()
            .contains("release.sig")
    );

    // A bad table is a policy error (exit 2), like any other.
    std::fs::write(
        &policy,
        "version = 1\n[signing]\nrequire = \"yes\"\nidentities = [{ subject = \"a@b.c\" }]\n",
    )
    .unwrap();
    let (code, _, err) = out(&["scan", p(repo.path()), "--policy", p(&policy)]);
    assert_eq!(code, 2);
    assert!(err.contains("`require` must be a boolean"), "{err}");
    assert!(err.contains("identity is missing `issuer`"), "{err}");
    assert!(err.contains("`identities` needs `trust_root`"), "{err}");
}

#[test]
fn scan_checks_reference_made_certificate_and_keyless_signatures() {
    let model = PathBuf::from(fx("model"));
    let (code, r) = scan_json(
        &model,
        &[
            "--signature",
            &fx("cert.sig"),
            "--certificate-chain",
            &fx("keys/root-ca.crt"),
            "--require-signature",
        ],
    );
    assert_eq!(code, 0, "{:#}", r["findings"]);
    assert_eq!(
        r["repository"]["signature"]["signer"]["method"],
        "certificate"
    );
    let (code, r) = scan_json(
        &model,
        &[
            "--signature",
            &fx("cert-expired.sig"),
            "--certificate-chain",
            &fx("keys/root-ca.crt"),
        ],
    );
    assert_eq!(code, 1);
    // Outside the scan root, the finding is on the model as a whole.
    assert_eq!(sig_rules(&r), owned(&[("SIG002", "", "deny")]));

    let keyless = PathBuf::from(fx("keyless/model"));
    let trust = |identity: &str| {
        scan_json(
            &keyless,
            &[
                "--signature",
                &fx("keyless/model.sig"),
                "--identity",
                identity,
                "--issuer",
                "https://sigstore.verify.ibm.com/oauth2",
                "--trust-root",
                &fx("keyless/trusted_root.json"),
                "--require-signature",
            ],
        )
    };
    let (code, r) = trust("stefanb@us.ibm.com");
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let sig = &r["repository"]["signature"];
    assert_eq!(sig["signer"]["method"], "sigstore");
    assert_eq!(sig["signer"]["identity"], "stefanb@us.ibm.com");
    let (code, r) = trust("someone@example.com");
    assert_eq!(code, 1);
    assert_eq!(sig_rules(&r), owned(&[("SIG002", "", "deny")]));
}

/// `keys` may name a key by fingerprint (`openssl x509 -pubkey | openssl pkey -pubin -outform
/// DER | sha256sum`): it pins the key a certificate signature carries.
#[test]
fn a_policy_key_fingerprint_pins_a_certificate_signers_key() {
    const SIGNER_KEY: &str =
        "sha256:958aaf5d837f47ce3aa01746ad4db47c4dc4a10e0fd23f00ffb648471bb48116";
    let model = PathBuf::from(fx("model"));
    let policy_dir = tempfile::tempdir().unwrap();
    let policy = policy_dir.path().join("gate.toml");
    let write = |key: &str| {
        std::fs::write(
            &policy,
            format!(
                "version = 1\n[signing]\nrequire = true\nsignature = {sig:?}\nkeys = [{key:?}]\n",
                sig = fx("cert.sig"),
            ),
        )
        .unwrap();
    };
    write(&SIGNER_KEY.to_uppercase().replace("SHA256:", "sha256:"));
    let (code, r) = scan_json(&model, &["--policy", p(&policy)]);
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let signer = &r["repository"]["signature"]["signer"];
    assert_eq!(signer["method"], "key-fingerprint");
    assert_eq!(signer["identity"], SIGNER_KEY);

    // The same pin from the command line; another key's fingerprint is an untrusted signer.
    let (code, _) = scan_json(
        &model,
        &[
            "--signature",
            &fx("cert.sig"),
            "--require-signature",
            "--key",
            SIGNER_KEY,
        ],
    );
    assert_eq!(code, 0);
    write(&format!("sha256:{}", "ab".repeat(32)));
    let (code, r) = scan_json(&model, &["--policy", p(&policy)]);
    assert_eq!(code, 1);
    assert_eq!(sig_rules(&r), owned(&[("SIG002", "", "deny")]));

    // A bare-key signature cannot be checked against a fingerprint alone: SIG002 says why.
    std::fs::write(
        &policy,
        format!(
            "version = 1\n[signing]\nrequire = true\nsignature = {sig:?}\nkeys = [{SIGNER_KEY:?}]\n",
            sig = fx("key-p256.sig"),
        ),
    )
    .unwrap();
    let (code, r) = scan_json(&model, &["--policy", p(&policy)]);
    assert_eq!(code, 1);
    let m = findings(&r, "SIG002")[0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(m.contains("list the public key PEM"), "{m}");

    // A malformed fingerprint is a policy error, not a path.
    std::fs::write(&policy, "version = 1\n[signing]\nkeys = [\"sha256:abc\"]\n").unwrap();
    let (code, _, err) = out(&["scan", p(&model), "--policy", p(&policy)]);
    assert_eq!(code, 2);
    assert!(
        err.contains("a key fingerprint is `sha256:` and 64 hex digits"),
        "{err}"
    );
}

#[test]
fn scan_signature_flag_takes_one_root() {
    let repo = signed_repo();
    let (code, _, err) = out(&[
        "scan",
        p(repo.path()),
        p(repo.path()),
        "--signature",
        p(&repo.abs("model.sig")),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--signature names one file"), "{err}");
}

fn cyclonedx_validator() -> jsonschema::Validator {
    let schema = |name: &str| -> serde_json::Value {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/schemas")
            .join(name);
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    };
    jsonschema::options()
        .with_resource(
            "http://cyclonedx.org/schema/spdx.SNAPSHOT.schema.json",
            jsonschema::Resource::from_contents(schema("spdx.SNAPSHOT.schema.json")).unwrap(),
        )
        .with_resource(
            "http://cyclonedx.org/schema/jsf-0.82.SNAPSHOT.schema.json",
            jsonschema::Resource::from_contents(schema("jsf-0.82.SNAPSHOT.schema.json")).unwrap(),
        )
        .should_validate_formats(true)
        .build(&schema("bom-1.5.SNAPSHOT.schema.json"))
        .unwrap()
}

#[test]
fn sbom_records_the_signature_and_stays_schema_valid() {
    let repo = signed_repo();
    let sbom_dir = tempfile::tempdir().unwrap();
    let sbom = sbom_dir.path().join("model.cdx.json");
    let (code, r) = scan_json(
        repo.path(),
        &["--key", &fx("keys/p256.pub.pem"), "--sbom", p(&sbom)],
    );
    assert_eq!(code, 0, "{:#}", r["findings"]);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&sbom).unwrap()).unwrap();
    let errors: Vec<String> = cyclonedx_validator()
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let meta = &doc["metadata"]["component"];
    let refs = meta["externalReferences"].as_array().unwrap();
    let att = refs
        .iter()
        .find(|r| r["type"] == "attestation")
        .expect("attestation reference");
    assert_eq!(att["url"], "model.sig");
    let bytes = std::fs::read(repo.abs("model.sig")).unwrap();
    assert_eq!(att["hashes"][0]["content"], sha256_hex(&bytes).as_str());
    let props: Vec<(&str, &str)> = meta["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["value"].as_str().unwrap()))
        .collect();
    assert!(
        props.contains(&("modelgate:signature:verified", "true")),
        "{props:?}"
    );
    assert!(
        props.contains(&("modelgate:signature:method", "key")),
        "{props:?}"
    );
    assert!(
        props
            .iter()
            .any(|(n, v)| *n == "modelgate:signature:manifest-digest" && v.starts_with("sha256:")),
        "{props:?}"
    );
}

#[test]
fn multi_root_scans_check_each_roots_signature_under_its_prefix() {
    let signed = signed_repo();
    let unsigned = model_repo();
    std::fs::remove_file(signed.abs("config.json")).unwrap();
    let ws = signed.path().parent().unwrap();
    let (a, b) = (
        signed.path().file_name().unwrap().to_str().unwrap(),
        unsigned.path().file_name().unwrap().to_str().unwrap(),
    );
    let o = modelgate()
        .current_dir(ws)
        .args(["scan", a, b, "--format", "json", "--no-git", "--key"])
        .arg(fx("keys/p256.pub.pem"))
        .arg("--require-signature")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut got = sig_rules(&r);
    got.sort();
    assert_eq!(
        got,
        owned(&[
            ("SIG001", b, "deny"),
            ("SIG003", &format!("{a}/config.json"), "deny"),
        ])
    );
    let roots = r["repository"]["roots"].as_array().unwrap();
    let signed_root = roots.iter().find(|x| x["path"] == a).unwrap();
    assert_eq!(signed_root["signature"]["verified"], true);
    assert!(
        roots
            .iter()
            .find(|x| x["path"] == b)
            .unwrap()
            .get("signature")
            .is_none()
    );
}
