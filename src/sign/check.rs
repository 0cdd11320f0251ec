//! What `scan` needs from signing: find the signature next to a model, verify it under the
//! policy's trust, and compare the signed manifest with the digests the scan already computed
//! (no second read for the `files` method).
//!
//! The result is neutral ([`SignatureCheck`]: facts plus problems tagged with the reserved rule
//! codes SIG001/SIG002/SIG003); the engine turns problems into findings with its `RuleId`s and
//! the policy's levels, so this module depends on neither.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::envelope::{Trust, verify_bundle};
use super::error::SignError;
use super::inputs::{self, read_small};
use super::limits::Limits;
use super::manifest::{self, IgnoreSet, Resource, Serialization};
use super::signer::Signer;
use super::statement;
use super::statement::hex;
use super::tree::{self, VerifyOptions, relative_inside};

/// The reference tool's default signature file name.
pub const DEFAULT_SIGNATURE: &str = "model.sig";

/// The `[signing]` policy table, validated.
#[derive(Debug, Clone, Default)]
pub struct SigningPolicy {
    /// A model without a signature is a problem (SIG001). `strict` sets it.
    pub require: bool,
    /// Trusted public keys (PEM files).
    pub keys: Vec<PathBuf>,
    /// Trusted signing keys by fingerprint (`sha256:<hex>` of the DER SubjectPublicKeyInfo).
    pub key_fingerprints: Vec<String>,
    /// Trusted root certificates for the certificate method (PEM files).
    pub certificate_roots: Vec<PathBuf>,
    /// Trusted keyless identities (need `trust_root`).
    pub identities: Vec<Identity>,
    /// Sigstore trusted root JSON for `identities`.
    pub trust_root: Option<PathBuf>,
    /// Signature path (default: `<root>/model.sig`).
    pub signature: Option<PathBuf>,
}

/// One trusted keyless signer: exact OIDC issuer and certificate SAN (exact, or a pattern).
#[derive(Debug, Clone)]
pub struct Identity {
    /// OIDC issuer.
    pub issuer: String,
    /// SAN (email or URI), or the pattern when `subject_regex` is set.
    pub subject: String,
    /// `subject` is a regular expression the whole SAN must match.
    pub subject_regex: bool,
}

/// Which reserved rule a problem belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SigRule {
    /// SIG001 unsigned.
    Unsigned,
    /// SIG002 signature-invalid.
    Invalid,
    /// SIG003 signature-mismatch.
    Mismatch,
}

impl SigRule {
    /// The reserved code (DESIGN.md).
    pub fn code(self) -> &'static str {
        match self {
            SigRule::Unsigned => "SIG001",
            SigRule::Invalid => "SIG002",
            SigRule::Mismatch => "SIG003",
        }
    }
}

/// One problem, ready to become a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The rule.
    pub rule: SigRule,
    /// Root-relative path (`""` for the model as a whole).
    pub path: String,
    /// What is wrong, lowercase.
    pub message: String,
}

/// Facts about the signature, for the report and the SBOM.
#[derive(Debug, Clone, Serialize)]
pub struct SignatureFacts {
    /// Signature file, relative to the root when inside it.
    pub file: String,
    /// SHA-256 of the signature file.
    pub sha256: String,
    /// Whether the signature verified under the policy's trust (the signer; the tree is
    /// `tree_matches`).
    pub verified: bool,
    /// Whether the scanned files are exactly the signed manifest (when verified).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree_matches: Option<bool>,
    /// Who signed (when verified).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<Signer>,
    /// The statement's subject digest (when verified).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest_digest: Option<String>,
    /// The manifest's serialization, `files` or `shards` (when verified).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serialization: Option<&'static str>,
    /// Why it is not verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The outcome for one model root.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SignatureCheck {
    /// Present when a signature file was found.
    pub facts: Option<SignatureFacts>,
    /// SIG001/SIG002/SIG003 problems.
    pub problems: Vec<Problem>,
}

fn invalid(message: String) -> Problem {
    Problem {
        rule: SigRule::Invalid,
        path: String::new(),
        message,
    }
}

/// Checks `root`'s signature. `files` are the scan's regular files (root-relative `/` paths
/// and SHA-256 digests); `now` is the clock for certificate validity.
pub fn check_tree(
    root: &Path,
    files: &[(String, [u8; 32])],
    policy: &SigningPolicy,
    now: i64,
    limits: &Limits,
) -> SignatureCheck {
    let sig_path = policy
        .signature
        .clone()
        .unwrap_or_else(|| root.join(DEFAULT_SIGNATURE));
    let mut out = SignatureCheck::default();
    if !sig_path.is_file() {
        if policy.require {
            out.problems.push(Problem {
                rule: SigRule::Unsigned,
                path: String::new(),
                message: format!(
                    "the policy requires a model signature and there is none at {}",
                    relative_inside(root, &sig_path)
                        .unwrap_or_else(|| sig_path.display().to_string())
                ),
            });
        }
        return out;
    }
    let rel_sig = relative_inside(root, &sig_path);
    let bytes = match read_small(&sig_path, limits.max_bundle_bytes) {
        Ok(b) => b,
        Err(e) => {
            out.problems
                .push(invalid(format!("cannot read the signature: {e}")));
            return out;
        }
    };
    let fail = |mut out: SignatureCheck, mut facts: SignatureFacts, message: String| {
        facts.reason = Some(message.clone());
        out.problems.push(invalid(message));
        out.facts = Some(facts);
        out
    };
    let mut facts = SignatureFacts {
        file: rel_sig
            .clone()
            .unwrap_or_else(|| sig_path.display().to_string()),
        sha256: hex(&<sha2::Sha256 as sha2::Digest>::digest(&bytes)),
        verified: false,
        tree_matches: None,
        signer: None,
        manifest_digest: None,
        serialization: None,
        reason: None,
    };
    let trusts = match trusts(policy, limits) {
        Ok(t) if !t.is_empty() => t,
        // Nobody to check it against: without `require` the signature is recorded, unverified,
        // and the scan goes on (a model shipping `model.sig` must not fail a default scan);
        // a policy that requires signatures but trusts nobody can never pass, and says so.
        Ok(_) if !policy.require => {
            facts.reason = Some("the policy names no trusted signer ([signing] keys, certificate_chain or identities)".into());
            out.facts = Some(facts);
            return out;
        }
        Ok(_) => {
            return fail(
                out,
                facts,
                "the policy trusts no key, certificate root or identity ([signing] keys / identities)".into(),
            );
        }
        Err(e) => return fail(out, facts, format!("[signing] trust material: {e}")),
    };
    let mut last_err: Option<SignError> = None;
    let mut verified = None;
    for t in &trusts {
        match verify_bundle(&bytes, t, now, limits) {
            Ok(v) => {
                verified = Some(v);
                break;
            }
            Err(e) => last_err = Some(e),
        }
    }
    let Some(vb) = verified else {
        let e = last_err.map_or_else(|| "no trust matched".to_string(), |e| e.to_string());
        return fail(out, facts, e);
    };
    let expected = match statement::manifest_from_statement(&vb.statement, limits) {
        Ok(m) => m,
        Err(e) => return fail(out, facts, e.to_string()),
    };
    facts.verified = true;
    facts.signer = Some(vb.signer);
    facts.manifest_digest = Some(format!("sha256:{}", hex(&expected.root_digest())));
    facts.serialization = Some(expected.serialization.method());
    let diff = match tree_diff(root, files, &expected, rel_sig, now, limits) {
        Ok(d) => d,
        Err(message) => return fail(out, facts, message),
    };
    record_diff(root, &diff, &mut out.problems);
    facts.tree_matches = Some(out.problems.is_empty());
    out.facts = Some(facts);
    out
}

/// Compares the signed manifest with the tree: file manifests against the digests the scan
/// computed, shard manifests by reading the tree again. An error is the signature's failure.
fn tree_diff(
    root: &Path,
    files: &[(String, [u8; 32])],
    expected: &manifest::Manifest,
    rel_sig: Option<String>,
    now: i64,
    limits: &Limits,
) -> Result<manifest::TreeDiff, String> {
    Ok(match &expected.serialization {
        Serialization::Files { ignore_paths, .. } => {
            let mut ignore = IgnoreSet::default();
            ignore.add_git_paths();
            let mut bad = None;
            for p in ignore_paths.iter().chain(rel_sig.iter()) {
                if let Err(e) = ignore.add(p) {
                    bad = Some(e);
                }
            }
            if let Some(e) = bad {
                return Err(e.to_string());
            }
            let actual: Vec<Resource> = files
                .iter()
                .filter(|(p, _)| !ignore.covers(&p.split('/').collect::<Vec<_>>()))
                .map(|(p, d)| Resource {
                    name: p.clone(),
                    digest: *d,
                })
                .collect();
            manifest::diff(expected, &actual)
        }
        // Shard digests are not what the scan computed: read the tree once more.
        Serialization::Shards { .. } => {
            let opts = VerifyOptions {
                now,
                ignore_paths: rel_sig.into_iter().collect(),
                ignore_git_paths: true,
            };
            match tree::check_tree(root, expected, &opts, limits) {
                Ok(d) => d,
                Err(e) => return Err(e.to_string()),
            }
        }
    })
}

/// One mismatch problem per changed, missing or added file, in that order.
fn record_diff(root: &Path, diff: &manifest::TreeDiff, problems: &mut Vec<Problem>) {
    for c in &diff.changed {
        problems.push(Problem {
            rule: SigRule::Mismatch,
            path: c.path.clone(),
            message: "file differs from the signed manifest".into(),
        });
    }
    for p in &diff.missing {
        // The scan's records are what was read; a signed file that is on disk but has no digest
        // was excluded, unreadable or a link not followed. Say so rather than call it deleted:
        // the user then knows to drop the exclusion, not to look for tampering.
        let message = if present_on_disk(root, p) {
            "signed file was not scanned (excluded, unreadable or a link not followed), so it is not checked against the signature"
        } else {
            "signed file is missing"
        };
        problems.push(Problem {
            rule: SigRule::Mismatch,
            path: p.clone(),
            message: message.into(),
        });
    }
    for p in &diff.added {
        problems.push(Problem {
            rule: SigRule::Mismatch,
            path: p.clone(),
            message: "file is not in the signed manifest".into(),
        });
    }
}

/// Whether the manifest path `rel` names something under `root`. Manifest paths come from the
/// signer, so only plain relative paths are looked up, and only with `symlink_metadata` (never
/// opened, never followed).
fn present_on_disk(root: &Path, rel: &str) -> bool {
    let plain = !rel.is_empty()
        && rel
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && !c.contains('\\'))
        && !Path::new(rel).is_absolute();
    plain && root.join(rel).symlink_metadata().is_ok()
}

fn trusts(policy: &SigningPolicy, limits: &Limits) -> Result<Vec<Trust>, SignError> {
    let mut out = Vec::new();
    for k in &policy.keys {
        out.push(inputs::trust(
            &inputs::TrustSpec {
                key: Some(k.clone()),
                ..inputs::TrustSpec::default()
            },
            limits,
        )?);
    }
    out.extend(
        policy
            .key_fingerprints
            .iter()
            .map(|f| Trust::KeyFingerprint(f.clone())),
    );
    if !policy.certificate_roots.is_empty() {
        out.push(Trust::Certificates(inputs::certificates(
            &policy.certificate_roots,
            limits,
        )?));
    }
    for id in &policy.identities {
        out.push(inputs::trust(
            &inputs::TrustSpec {
                identity: (!id.subject_regex).then(|| id.subject.clone()),
                identity_regex: id.subject_regex.then(|| id.subject.clone()),
                issuer: Some(id.issuer.clone()),
                trust_root: policy.trust_root.clone(),
                ..inputs::TrustSpec::default()
            },
            limits,
        )?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    fn fx(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/signing")
            .join(rel)
    }

    fn scan_files(root: &Path) -> Vec<(String, [u8; 32])> {
        let files = manifest::walk_tree(root, &IgnoreSet::default(), &Limits::default()).unwrap();
        files
            .iter()
            .map(|f| {
                (
                    f.rel.clone(),
                    sha2::Sha256::digest(std::fs::read(&f.abs).unwrap()).into(),
                )
            })
            .collect()
    }

    fn policy(sig: &str) -> SigningPolicy {
        SigningPolicy {
            require: true,
            keys: vec![fx("keys/p256.pub.pem")],
            signature: Some(fx(sig)),
            ..SigningPolicy::default()
        }
    }

    #[test]
    fn unsigned_is_sig001_only_when_required() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("w.bin"), b"x").unwrap();
        let p = SigningPolicy {
            require: true,
            ..SigningPolicy::default()
        };
        let c = check_tree(d.path(), &scan_files(d.path()), &p, 0, &Limits::default());
        assert_eq!(c.problems[0].rule, SigRule::Unsigned);
        let c = check_tree(
            d.path(),
            &scan_files(d.path()),
            &SigningPolicy::default(),
            0,
            &Limits::default(),
        );
        assert!(c.problems.is_empty() && c.facts.is_none());
    }

    #[test]
    fn verified_signature_matching_the_scan_has_no_problem() {
        let root = fx("model");
        let c = check_tree(
            &root,
            &scan_files(&root),
            &policy("key-p256.sig"),
            0,
            &Limits::default(),
        );
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        let f = c.facts.unwrap();
        assert!(f.verified);
        assert!(f.manifest_digest.unwrap().starts_with("sha256:"));
    }

    #[test]
    fn untrusted_key_is_sig002_and_changes_are_sig003() {
        let root = fx("model");
        let mut p = policy("key-p256.sig");
        p.keys = vec![fx("keys/other.pub.pem")];
        let c = check_tree(&root, &scan_files(&root), &p, 0, &Limits::default());
        assert_eq!(c.problems[0].rule, SigRule::Invalid);
        assert!(!c.facts.unwrap().verified);

        let mut files = scan_files(&root);
        files.retain(|(p, _)| p != "config.json");
        files.push(("new.py".into(), [0; 32]));
        for f in &mut files {
            // .gitattributes is ignored by the signature: changing it is no problem.
            if f.0 == "weights.bin" || f.0 == ".gitattributes" {
                f.1 = [1; 32];
            }
        }
        let c = check_tree(
            &root,
            &files,
            &policy("key-p256.sig"),
            0,
            &Limits::default(),
        );
        let mut got: Vec<_> = c
            .problems
            .iter()
            .map(|p| (p.rule.code(), p.path.as_str()))
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                ("SIG003", "config.json"),
                ("SIG003", "new.py"),
                ("SIG003", "weights.bin")
            ]
        );
    }
}
