//! The Hub's API responses, parsed as untrusted input: the revision info (`sha`), pages of the
//! recursive tree (`path`, `size`, `oid`, `lfs.oid`, `lfs.size`, `securityFileStatus`) and the
//! `Link` header that points at the next page.
//!
//! Shapes follow `huggingface_hub` (`HfApi.repo_info`, `HfApi.list_repo_tree`, `RepoFile`). The
//! server may be a hostile mirror: bodies are size-capped by the client before they get here,
//! every field is type-checked, and a tree path that is absolute, holds `..`, a backslash or a
//! control character is returned as a problem, never used as a path.

use serde_json::Value;

/// Longest tree path accepted.
const MAX_PATH: usize = 4096;

/// One file of the tree at the scanned commit.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeEntry {
    /// `/`-separated path inside the repository (checked: relative, no `..`).
    pub path: String,
    /// Size in the git tree: the pointer's size for LFS files (their content size is `lfs.size`).
    pub size: u64,
    /// Git blob id (of the pointer, for LFS files).
    pub oid: Option<String>,
    /// LFS content digest and size.
    pub lfs: Option<Lfs>,
    /// The Hub's aggregate scan verdict (`safe`, `caution`, `unsafe`, `unscanned`, ...).
    pub security_status: Option<String>,
    /// The Hub's full scan record, kept as a fact.
    pub security: Option<Value>,
}

impl TreeEntry {
    /// The size of the file's content (LFS size for LFS files).
    pub fn content_size(&self) -> u64 {
        self.lfs.as_ref().map_or(self.size, |l| l.size)
    }
}

/// An LFS file's recorded content.
#[derive(Debug, Clone, PartialEq)]
pub struct Lfs {
    /// SHA-256 of the content, hex.
    pub oid: String,
    /// Content size in bytes.
    pub size: u64,
}

/// A tree entry that was not usable, with the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryProblem {
    /// The path as the server sent it (for the message only; never used as a path).
    pub path: String,
    /// Why the entry was refused.
    pub reason: String,
}

/// A response that is not the documented shape (exit 2: the tool cannot do its job).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected response from the Hub: {0}")]
pub struct ShapeError(pub String);

/// The commit a revision resolves to: the `sha` of `/api/<kind>/<id>/revision/<rev>`.
pub fn parse_revision(body: &[u8]) -> Result<String, ShapeError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ShapeError(format!("revision info is not JSON: {e}")))?;
    let sha = v
        .get("sha")
        .and_then(Value::as_str)
        .ok_or_else(|| ShapeError("revision info has no `sha`".into()))?;
    if !super::target::is_commit(sha) {
        return Err(ShapeError(format!(
            "revision info's `sha` is not a 40-hex commit: {:?}",
            truncate(sha)
        )));
    }
    Ok(sha.to_string())
}

/// One page of `/api/<kind>/<id>/tree/<commit>?recursive=true&expand=true`: its files (directories
/// are skipped) and the entries that were refused.
pub fn parse_tree_page(body: &[u8]) -> Result<(Vec<TreeEntry>, Vec<EntryProblem>), ShapeError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ShapeError(format!("tree page is not JSON: {e}")))?;
    let Value::Array(items) = v else {
        return Err(ShapeError("tree page is not a JSON array".into()));
    };
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for item in &items {
        let raw_path = item.get("path").and_then(Value::as_str).unwrap_or("");
        match item.get("type").and_then(Value::as_str) {
            Some("directory") => continue,
            Some("file") => {}
            other => {
                problems.push(EntryProblem {
                    path: truncate(raw_path),
                    reason: format!("entry of unknown type {:?}", other.map(truncate)),
                });
                continue;
            }
        }
        match parse_entry(item) {
            Ok(e) => files.push(e),
            Err(reason) => problems.push(EntryProblem {
                path: truncate(raw_path),
                reason,
            }),
        }
    }
    Ok((files, problems))
}

fn parse_entry(item: &Value) -> Result<TreeEntry, String> {
    let path = item
        .get("path")
        .and_then(Value::as_str)
        .ok_or("file entry without a string `path`")?;
    check_path(path)?;
    let size = item
        .get("size")
        .and_then(Value::as_u64)
        .ok_or("file entry without a non-negative integer `size`")?;
    let oid = match item.get("oid") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if is_hex(s, 40) => Some(s.to_ascii_lowercase()),
        Some(_) => return Err("`oid` is not a 40-hex git blob id".into()),
    };
    let lfs = match item.get("lfs") {
        None | Some(Value::Null) => None,
        Some(l) => {
            let oid = l
                .get("oid")
                .and_then(Value::as_str)
                .filter(|s| is_hex(s, 64))
                .ok_or("`lfs.oid` is not a 64-hex SHA-256")?;
            let size = l
                .get("size")
                .and_then(Value::as_u64)
                .ok_or("`lfs.size` is not a non-negative integer")?;
            Some(Lfs {
                oid: oid.to_ascii_lowercase(),
                size,
            })
        }
    };
    let security = item
        .get("securityFileStatus")
        .filter(|s| s.is_object())
        .cloned();
    let security_status = security
        .as_ref()
        .and_then(|s| s.get("status"))
        .and_then(Value::as_str)
        .map(truncate);
    Ok(TreeEntry {
        path: path.to_string(),
        size,
        oid,
        lfs,
        security_status,
        security,
    })
}

/// A tree path is used in report paths and URLs: it must be relative, without `.`/`..`
/// segments, empty segments, backslashes or control characters.
pub fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() || path.len() > MAX_PATH {
        return Err("empty or over-long path".into());
    }
    if path.starts_with('/') {
        return Err("absolute path".into());
    }
    if path.contains('\\') || path.chars().any(char::is_control) {
        return Err("path holds a backslash or a control character".into());
    }
    if path
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return Err("path holds an empty, `.` or `..` segment".into());
    }
    Ok(())
}

/// The `rel="next"` target of a `Link` header (`<url>; rel="next", <url>; rel="prev"`).
pub fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (url, params) = part.trim().split_once(';')?;
        let url = url.trim().strip_prefix('<')?.strip_suffix('>')?;
        let is_next = params.split(';').any(|p| {
            let p = p.trim().replace(' ', "");
            p.eq_ignore_ascii_case("rel=\"next\"") || p.eq_ignore_ascii_case("rel=next")
        });
        is_next.then(|| url.to_string())
    })
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// At most 200 characters of server-supplied text, for messages.
fn truncate(s: &str) -> String {
    s.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_nested_100000_deep_are_shape_errors_not_a_crash_issue_37() {
        let n = 100_000;
        let deep = format!("{}{}", "[".repeat(n), "]".repeat(n));
        for err in [
            parse_tree_page(deep.as_bytes()).err(),
            parse_revision(deep.as_bytes()).err(),
        ] {
            assert!(
                err.as_ref()
                    .is_some_and(|e| e.0.contains("recursion limit exceeded")),
                "{err:?}"
            );
        }
    }

    #[test]
    fn revision_sha_must_be_a_commit() {
        let c = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(
            parse_revision(format!(r#"{{"id":"a/b","sha":"{c}"}}"#).as_bytes()),
            Ok(c.to_string())
        );
        assert!(parse_revision(br#"{"sha":"main"}"#).is_err());
        assert!(parse_revision(br#"{"id":"a/b"}"#).is_err());
        assert!(parse_revision(b"<html>").is_err());
    }

    #[test]
    fn tree_page_keeps_files_skips_directories() {
        let body = format!(
            r#"[{{"type":"directory","oid":"{o}","size":0,"path":"sub"}},
               {{"type":"file","oid":"{o}","size":10,"path":"sub/config.json"}},
               {{"type":"file","oid":"{o}","size":134,"path":"model.safetensors",
                 "lfs":{{"oid":"{s}","size":1000,"pointerSize":134}},
                 "securityFileStatus":{{"status":"unsafe","avScan":{{"status":"safe"}}}}}}]"#,
            o = "ab".repeat(20),
            s = "cd".repeat(32)
        );
        let (files, problems) = parse_tree_page(body.as_bytes()).unwrap();
        assert!(problems.is_empty());
        assert_eq!(files.len(), 2);
        assert_eq!(files[1].content_size(), 1000);
        assert_eq!(files[1].security_status.as_deref(), Some("unsafe"));
    }

    #[test]
    fn hostile_tree_paths_are_problems_not_paths() {
        for p in ["/etc/passwd", "../x", "a/../b", "a//b", "a\\b", "a\nb", ""] {
            let body = serde_json::json!([{"type":"file","size":1,"path":p}]).to_string();
            let (files, problems) = parse_tree_page(body.as_bytes()).unwrap();
            assert!(files.is_empty(), "{p:?}");
            assert_eq!(problems.len(), 1, "{p:?}");
        }
    }

    #[test]
    fn malformed_entries_are_problems() {
        for item in [
            serde_json::json!({"type":"file","size":-1,"path":"a"}),
            serde_json::json!({"type":"file","size":1,"path":"a","oid":"zz"}),
            serde_json::json!({"type":"file","size":1,"path":"a","lfs":{"oid":"x","size":1}}),
            serde_json::json!({"type":"symlink","path":"a"}),
        ] {
            let body = serde_json::json!([item]).to_string();
            let (files, problems) = parse_tree_page(body.as_bytes()).unwrap();
            assert!(files.is_empty() && problems.len() == 1, "{item}");
        }
        assert!(parse_tree_page(br#"{"error":"x"}"#).is_err());
    }

    #[test]
    fn link_header_next() {
        assert_eq!(
            next_link(r#"<https://h/api/models/a/b/tree/c?cursor=x>; rel="next""#).as_deref(),
            Some("https://h/api/models/a/b/tree/c?cursor=x")
        );
        assert_eq!(
            next_link(r#"<https://h/p1>; rel="prev", <https://h/p3>; rel="next""#).as_deref(),
            Some("https://h/p3")
        );
        assert_eq!(next_link(r#"<https://h/p1>; rel="prev""#), None);
        assert_eq!(next_link("garbage"), None);
    }
}
