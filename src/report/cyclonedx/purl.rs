//! Package URLs and Hugging Face/GitHub repository identities of the SBOM's components: which
//! remote a scanned tree names, and the purl, VCS URI and commit a consumer pins it by.

use serde_json::Value;

use crate::model::facts::{Fact, FactMap};
use crate::model::report::Report;
use crate::report::sarif::percent_encode_path;

#[derive(Debug, Clone)]
pub(super) struct HfRepo {
    pub(super) repo_id: String,
    pub(super) commit: Option<String>,
    /// A dataset repository (`repo_type: dataset` in the facts, as `huggingface_hub` spells it).
    pub(super) dataset: bool,
}

pub(super) fn is_commit(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

pub(super) fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

pub(super) fn is_sha512(s: &str) -> bool {
    s.len() == 128 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A Hugging Face repo id is `name` or `org/name`, from a restricted alphabet. Anything else
/// from the report is ignored rather than pasted into a purl or a URL.
pub(super) fn valid_repo_id(repo_id: &str) -> bool {
    let ok_segment = |s: &str| {
        !s.is_empty()
            && s.len() <= 96
            && s != "."
            && s != ".."
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    let segments: Vec<&str> = repo_id.split('/').collect();
    segments.len() <= 2 && segments.iter().all(|s| ok_segment(s))
}

pub(super) fn hf_repo(report: &Report) -> Option<HfRepo> {
    hf_of(report.repository.fact(Fact::Huggingface))
}

pub(super) fn hf_of(facts: Option<&Value>) -> Option<HfRepo> {
    let hf = facts?.as_object()?;
    let repo_id = hf.get("repo_id")?.as_str().filter(|r| valid_repo_id(r))?;
    let commit = hf
        .get("commit")
        .and_then(Value::as_str)
        .filter(|c| is_commit(c))
        .map(str::to_ascii_lowercase);
    let dataset = hf.get("repo_type").and_then(Value::as_str) == Some("dataset");
    Some(HfRepo {
        repo_id: repo_id.to_string(),
        commit,
        dataset,
    })
}

/// `(org, repo)` when the remote is on github.com (https, ssh or scp-like form).
pub(super) fn github_repo(remote: &str) -> Option<(String, String)> {
    let rest = remote
        .strip_prefix("https://github.com/")
        .or_else(|| remote.strip_prefix("http://github.com/"))
        .or_else(|| remote.strip_prefix("ssh://git@github.com/"))
        .or_else(|| remote.strip_prefix("git@github.com:"))
        .or_else(|| remote.strip_prefix("git://github.com/"))?;
    let rest = rest.trim_end_matches('/');
    let rest = rest.strip_suffix(".git").unwrap_or(rest);
    let (org, repo) = rest.split_once('/')?;
    let ok = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    (ok(org) && ok(repo)).then(|| (org.to_ascii_lowercase(), repo.to_ascii_lowercase()))
}

/// The remote as a URI for a `vcs` reference: URLs as they are (when they hold no characters a
/// URI cannot), scp-like `user@host:path` as `ssh://user@host/path`; local paths are dropped.
pub(super) fn vcs_uri(remote: &str) -> Option<String> {
    let clean = |s: &str| {
        !s.is_empty()
            && s.bytes().all(|b| {
                b.is_ascii_graphic()
                    && !matches!(b, b'"' | b'<' | b'>' | b'\\' | b'^' | b'`')
                    && !matches!(b, b'{' | b'|' | b'}')
            })
    };
    if !clean(remote) {
        return None;
    }
    if let Some((scheme, _)) = remote.split_once("://") {
        let scheme_ok = !scheme.is_empty()
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        return scheme_ok.then(|| remote.to_string());
    }
    let (user_host, path) = remote.split_once(':')?;
    if user_host.contains('/') || path.is_empty() {
        return None;
    }
    let path = path.trim_start_matches('/');
    Some(format!("ssh://{user_host}/{path}"))
}

pub(super) fn purl_segment(s: &str) -> String {
    percent_encode_path(s).replace('/', "%2F")
}

/// The purl of something fetched from a source repository, most specific first: the Hugging
/// Face repository (what a consumer downloads), else GitHub at the commit, else any git remote
/// at the commit. `subpath` (`#dir`, or empty) names a folder inside it.
pub(super) fn source_purl(
    hf: Option<&HfRepo>,
    github: Option<&(String, String)>,
    remote: Option<&str>,
    commit: Option<&str>,
    name: &str,
    subpath: &str,
) -> Option<String> {
    if let Some(hf) = hf {
        return Some(format!("{}{subpath}", hf_purl(hf)));
    }
    let commit = commit?;
    if let Some((org, repo)) = github {
        return Some(format!(
            "pkg:github/{}/{}@{commit}{subpath}",
            purl_segment(org),
            purl_segment(repo)
        ));
    }
    let url = remote.and_then(vcs_uri)?;
    Some(format!(
        "pkg:generic/{}@{commit}?vcs_url={}{subpath}",
        purl_segment(name),
        purl_segment(&format!("git+{url}@{commit}"))
    ))
}

pub(super) fn hf_purl(hf: &HfRepo) -> String {
    let name = hf
        .repo_id
        .split('/')
        .map(purl_segment)
        .collect::<Vec<_>>()
        .join("/");
    let purl = match &hf.commit {
        Some(c) => format!("pkg:huggingface/{name}@{c}"),
        None => format!("pkg:huggingface/{name}"),
    };
    // The huggingface purl type has no repository-type key: a dataset is named by the URL its
    // files resolve under (see `hub::purl`).
    if hf.dataset {
        format!("{purl}?{}", crate::hub::DATASET_PURL_QUALIFIER)
    } else {
        purl
    }
}
