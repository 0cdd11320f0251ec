//! Remote scans of Hugging Face Hub repositories (`hf://ns/name@rev`): what a target names, the
//! Hub's API responses (untrusted input, parsed under bounds in [`api`]), the HTTP client
//! ([`client`]) and the checks that compare what was streamed with what the Hub records.
//!
//! A remote scan resolves the requested revision to a commit first and makes every later request
//! at that commit, so the scan is of one immutable snapshot. Each file's download stream is the
//! one read (digest and inspectors) of `inspect::scan_reader`; nothing is written to disk.

pub mod api;
pub mod client;
mod target;

use serde_json::{Value, json};

use crate::inspect::FileScan;
use crate::model::finding::Detection;
use crate::model::rules::RuleId;

pub use target::{
    DEFAULT_ENDPOINT, RemoteMode, RepoKind, Target, TargetError, encode_path, is_commit, is_remote,
    parse_target,
};

/// The repository-level facts of a remote scan (`repository.hub` in the report).
/// `digest_source` is `computed` when every digest was computed from the bytes, `hub` when
/// some come from the Hub's record (header mode).
pub fn hub_facts(
    target: &Target,
    commit: &str,
    endpoint: &str,
    files: usize,
    mode: RemoteMode,
    digest_source: &str,
) -> Value {
    json!({
        "mode": mode.as_str(),
        "repo": target.repo,
        "type": target.kind.as_str(),
        "commit": commit,
        "requested_revision": target.requested(),
        "pinned": target.revision.as_deref().is_some_and(is_commit),
        "endpoint": endpoint,
        "purl": purl(target, commit),
        "files": files,
        "digest_source": digest_source,
    })
}

/// The package URL of the scanned snapshot: `pkg:huggingface/ns/name@commit`. The purl-spec
/// `huggingface` type has a namespace (user or organisation), a name, the commit as version and
/// one qualifier, `repository_url` (default `https://huggingface.co`); it has no key for the
/// repository type that `huggingface_hub` calls `repo_type`. A dataset therefore carries
/// `repository_url=https://huggingface.co/datasets`: the spec's own qualifier, the URL its files
/// resolve under, and the same purl the SBOM gives a dataset a model card names.
pub fn purl(target: &Target, commit: &str) -> String {
    let base = format!("pkg:huggingface/{}@{commit}", target.repo);
    match target.kind {
        RepoKind::Model => base,
        RepoKind::Dataset => format!("{base}?{DATASET_PURL_QUALIFIER}"),
    }
}

/// The purl qualifier of a Hub dataset repository (see [`purl`]).
pub const DATASET_PURL_QUALIFIER: &str = "repository_url=https%3A%2F%2Fhuggingface.co%2Fdatasets";

/// The detection for a scan of a moving target (a branch or tag, not a commit): the report names
/// the commit that was scanned, and the policy decides whether an unpinned scan may pass.
pub fn check_pinned(target: &Target, commit: &str) -> Option<Detection> {
    let requested = target.requested();
    if is_commit(requested) {
        return None;
    }
    Some(
        Detection::new(
            RuleId::UnpinnedRevision,
            "",
            "remote-target",
            format!(
                "remote scan of `{}` at `{requested}`, a moving revision; the scanned snapshot is commit {commit}",
                target.repo
            ),
        )
        .with("requested_revision", requested)
        .with("commit", commit),
    )
}

/// Compares a streamed file with the Hub's record of it: size, SHA-256 (`lfs.oid`) for LFS files,
/// the git blob id (`oid`) for the others; and the Hub's own scan verdict.
pub fn check_entry(
    entry: &api::TreeEntry,
    scan: &FileScan,
    git_blob: Option<&str>,
) -> Vec<Detection> {
    let mut out = Vec::new();
    let path = entry.path.as_str();
    // A file that could not be read has no digest to compare: its SCAN001 already says so.
    if let Some(sha) = &scan.sha256 {
        let expected_size = entry.lfs.as_ref().map_or(entry.size, |l| l.size);
        if scan.size != expected_size {
            out.push(
                Detection::new(
                    RuleId::HubDigestMismatch,
                    path,
                    "size",
                    format!(
                        "the Hub records {expected_size} bytes for this file, {} bytes were served",
                        scan.size
                    ),
                )
                .with("expected", expected_size)
                .with("actual", scan.size),
            );
        } else if let Some(lfs) = &entry.lfs {
            if !lfs.oid.eq_ignore_ascii_case(sha) {
                out.push(
                    Detection::new(
                        RuleId::HubDigestMismatch,
                        path,
                        "sha256",
                        "the served bytes do not hash to the SHA-256 the Hub records for this file (lfs.oid)",
                    )
                    .with("expected", lfs.oid.clone())
                    .with("actual", sha.clone()),
                );
            }
        } else if let (Some(oid), Some(blob)) = (&entry.oid, git_blob)
            && !oid.eq_ignore_ascii_case(blob)
        {
            out.push(
                Detection::new(
                    RuleId::HubDigestMismatch,
                    path,
                    "git-oid",
                    "the served bytes do not match the git blob id the Hub records for this file (oid)",
                )
                .with("expected", oid.clone())
                .with("actual", blob),
            );
        }
    }
    if let Some(status) = &entry.security_status
        && status == "unsafe"
    {
        out.push(
            Detection::new(
                RuleId::HubFlagged,
                path,
                "unsafe",
                "the Hugging Face Hub's own security scan marks this file unsafe",
            )
            .with("hub_status", status.clone()),
        );
    }
    out
}

/// The per-file facts a remote scan adds (`hub` in a file's facts). `digest_source` says
/// whether the file's recorded SHA-256 was computed from its bytes or taken from the Hub.
pub fn entry_facts(entry: &api::TreeEntry, digest_source: &str) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("digest_source".into(), json!(digest_source));
    if let Some(oid) = &entry.oid {
        m.insert("oid".into(), json!(oid));
    }
    if let Some(lfs) = &entry.lfs {
        m.insert("lfs_oid".into(), json!(lfs.oid));
        m.insert("lfs_size".into(), json!(lfs.size));
    }
    if let Some(s) = &entry.security_status {
        m.insert("security_status".into(), json!(s));
    }
    if let Some(s) = &entry.security {
        m.insert("security".into(), s.clone());
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(kind: RepoKind, repo: &str, rev: Option<&str>) -> Target {
        Target {
            kind,
            repo: repo.into(),
            revision: rev.map(String::from),
        }
    }

    #[test]
    fn parses_every_target_form() {
        let cases = [
            ("hf://acme/bert", t(RepoKind::Model, "acme/bert", None)),
            (
                "hf://acme/bert@v1.0",
                t(RepoKind::Model, "acme/bert", Some("v1.0")),
            ),
            (
                "hf://datasets/acme/squad@main",
                t(RepoKind::Dataset, "acme/squad", Some("main")),
            ),
            (
                "https://huggingface.co/acme/bert",
                t(RepoKind::Model, "acme/bert", None),
            ),
            (
                "https://huggingface.co/acme/bert/tree/refs%2Fpr%2F1",
                t(RepoKind::Model, "acme/bert", Some("refs/pr/1")),
            ),
            (
                "https://huggingface.co/datasets/acme/squad/tree/dev/",
                t(RepoKind::Dataset, "acme/squad", Some("dev")),
            ),
        ];
        for (arg, want) in cases {
            assert_eq!(parse_target(arg), Some(Ok(want)), "{arg}");
        }
    }

    #[test]
    fn local_paths_are_not_targets() {
        assert_eq!(parse_target("models/bert"), None);
        assert_eq!(parse_target("./hf:/x"), None);
        assert!(!is_remote("."));
    }

    #[test]
    fn rejects_hostile_repo_ids_and_revisions() {
        for bad in [
            "hf://../etc",
            "hf://a/..",
            "hf://a",
            "hf://a/b/c",
            "hf://a/b c",
        ] {
            assert!(
                matches!(parse_target(bad), Some(Err(TargetError::BadRepo(_)))),
                "{bad}"
            );
        }
        assert!(matches!(
            parse_target("hf://a/b@"),
            Some(Err(TargetError::BadRevision(_)))
        ));
        assert!(matches!(
            parse_target("hf://a/b@x\ny"),
            Some(Err(TargetError::BadRevision(_)))
        ));
    }

    #[test]
    fn encodes_revisions_as_one_segment_and_paths_with_slashes() {
        assert_eq!(encode_path("refs/pr/1", false), "refs%2Fpr%2F1");
        assert_eq!(encode_path("a b/c.bin", true), "a%20b/c.bin");
    }

    #[test]
    fn an_unpinned_target_is_a_detection_a_commit_is_not() {
        let c = "a".repeat(40);
        assert!(check_pinned(&t(RepoKind::Model, "a/b", None), &c).is_some());
        assert!(check_pinned(&t(RepoKind::Model, "a/b", Some(&c)), &c).is_none());
        assert_eq!(
            purl(&t(RepoKind::Model, "a/b", None), &c),
            format!("pkg:huggingface/a/b@{c}")
        );
        assert_eq!(
            purl(&t(RepoKind::Dataset, "a/b", None), &c),
            format!(
                "pkg:huggingface/a/b@{c}?repository_url=https%3A%2F%2Fhuggingface.co%2Fdatasets"
            )
        );
    }

    fn entry(lfs: Option<(&str, u64)>, oid: Option<&str>, size: u64) -> api::TreeEntry {
        api::TreeEntry {
            path: "m.bin".into(),
            size,
            oid: oid.map(String::from),
            lfs: lfs.map(|(o, s)| api::Lfs {
                oid: o.into(),
                size: s,
            }),
            security_status: None,
            security: None,
        }
    }

    fn scan(sha: &str, size: u64) -> FileScan {
        FileScan {
            size,
            sha256: Some(sha.into()),
            ..FileScan::default()
        }
    }

    #[test]
    fn lfs_digest_mismatch_is_hub001() {
        let d = check_entry(&entry(Some(("aa", 3)), None, 3), &scan("bb", 3), None);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].rule, RuleId::HubDigestMismatch);
        assert_eq!(d[0].key, "sha256");
        assert!(check_entry(&entry(Some(("aa", 3)), None, 3), &scan("AA", 3), None).is_empty());
    }

    #[test]
    fn size_and_git_oid_mismatches_are_hub001() {
        let d = check_entry(&entry(None, Some("11"), 4), &scan("x", 3), Some("11"));
        assert_eq!(d[0].key, "size");
        let d = check_entry(&entry(None, Some("11"), 3), &scan("x", 3), Some("22"));
        assert_eq!(d[0].key, "git-oid");
        assert!(check_entry(&entry(None, Some("11"), 3), &scan("x", 3), Some("11")).is_empty());
    }

    #[test]
    fn a_file_the_hub_marks_unsafe_is_hub002() {
        let mut e = entry(None, None, 0);
        e.security_status = Some("unsafe".into());
        let d = check_entry(&e, &FileScan::default(), None);
        assert_eq!(d[0].rule, RuleId::HubFlagged);
    }
}
