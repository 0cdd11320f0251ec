//! The model signature of one scan root (issue 19): find it, verify it under the policy's
//! `[signing]` trust, and compare its manifest with the SHA-256 digests the read stage already
//! computed, so signed files are not read a second time. The neutral result of
//! [`crate::sign::check`] becomes SIG001/SIG002/SIG003 detections and the root's `signature`
//! repository fact (JSON report, SBOM).

use std::path::Path;

use serde_json::Value;

use crate::model::finding::Detection;
use crate::model::report::FileRecord;
use crate::model::rules::RuleId;
use crate::policy::SigningOptions;
use crate::sign::{self, check};

/// What the signature check of one root needs besides the root's files.
#[derive(Debug, Clone, Copy)]
pub struct Signing<'a> {
    /// The policy's `[signing]` table (with `scan --signature`/trust flags applied).
    pub options: &'a SigningOptions,
    /// The run's clock, in seconds since the epoch (certificate validity).
    pub now: i64,
}

/// Checks `root`'s signature against `files` (root-relative records from the read stage).
/// Returns the detections and the `signature` fact (`None` when no signature was found).
pub fn check_root(
    root: &Path,
    files: &[FileRecord],
    signing: &Signing<'_>,
) -> (Vec<Detection>, Option<Value>) {
    let o = signing.options;
    let policy = check::SigningPolicy {
        require: o.require,
        keys: o.keys.clone(),
        key_fingerprints: o.key_fingerprints.clone(),
        certificate_roots: o.certificate_chain.clone(),
        identities: o
            .identities
            .iter()
            .map(|i| check::Identity {
                issuer: i.issuer.clone(),
                subject: i.subject.clone(),
                subject_regex: i.subject_regex,
            })
            .collect(),
        trust_root: o.trust_root.clone(),
        signature: Some(root.join(&o.signature)),
    };
    // Only files with a digest take part: a link not followed or an unreadable file has none,
    // and is then reported as missing from the tree when the manifest lists it.
    let digests: Vec<(String, [u8; 32])> = files
        .iter()
        .filter_map(|f| Some((f.path.clone(), digest(f.sha256.as_deref()?)?)))
        .collect();
    let result = check::check_tree(
        root,
        &digests,
        &policy,
        signing.now,
        &sign::Limits::default(),
    );
    let sig_file = result.facts.as_ref().map(|f| f.file.clone());
    let detections = result
        .problems
        .into_iter()
        .map(|p| {
            let rule = match p.rule {
                check::SigRule::Unsigned => RuleId::Unsigned,
                check::SigRule::Invalid => RuleId::SignatureInvalid,
                check::SigRule::Mismatch => RuleId::SignatureMismatch,
            };
            // An invalid signature is about the signature file: point there when it is inside
            // the root, so SARIF and exceptions have a path to name.
            let path = match (&p.rule, &sig_file) {
                (check::SigRule::Invalid, Some(f)) if p.path.is_empty() && !is_outside(f) => {
                    f.clone()
                }
                _ => p.path,
            };
            let mut d = Detection::new(rule, path, p.message.clone(), p.message);
            if let Some(f) = &sig_file {
                d = d.with("signature", f.as_str());
            }
            d
        })
        .collect();
    let fact = result.facts.and_then(|f| serde_json::to_value(f).ok());
    (detections, fact)
}

/// Lowercase 64-hex -> bytes.
fn digest(hex: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if hex.len() != 64 {
        return None;
    }
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// A signature file named by a path outside the root is recorded as given (absolute or `..`).
fn is_outside(file: &str) -> bool {
    let p = Path::new(file);
    p.is_absolute()
        || p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_parses_only_full_hex() {
        let h = "00".repeat(31) + "ff";
        assert_eq!(digest(&h).map(|d| d[31]), Some(0xff));
        assert_eq!(digest("abc"), None);
        assert_eq!(digest(&"zz".repeat(32)), None);
    }
}
