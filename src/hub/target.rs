//! What a remote target names: `hf://ns/name@rev` parsed into a [`Target`], with the path
//! encoding and commit check every Hub request uses. The folder's leaf: it imports nothing from
//! `hub`, so the API parser and the client use it without an arrow back up to `mod.rs`.

/// The default Hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Longest repository id or revision accepted from the command line.
const MAX_NAME: usize = 256;

/// Which kind of Hub repository a target names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepoKind {
    /// A model repository (`hf://ns/name`).
    Model,
    /// A dataset repository (`hf://datasets/ns/name`).
    Dataset,
}

impl RepoKind {
    /// The API path segment (`models`, `datasets`).
    pub fn api_segment(self) -> &'static str {
        match self {
            RepoKind::Model => "models",
            RepoKind::Dataset => "datasets",
        }
    }

    /// The prefix of file URLs (`""` for models, `datasets/` for datasets).
    pub fn url_prefix(self) -> &'static str {
        match self {
            RepoKind::Model => "",
            RepoKind::Dataset => "datasets/",
        }
    }

    /// `model` or `dataset`, as the report records it.
    pub fn as_str(self) -> &'static str {
        match self {
            RepoKind::Model => "model",
            RepoKind::Dataset => "dataset",
        }
    }
}

/// How a remote scan reads each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RemoteMode {
    /// Every byte, streamed once (digests computed and checked against the Hub's).
    #[default]
    Full,
    /// Range reads of the parts that can hold code or metadata; digests from the Hub.
    Headers,
}

impl RemoteMode {
    /// `full` or `headers`, as the report records it.
    pub fn as_str(self) -> &'static str {
        match self {
            RemoteMode::Full => "full",
            RemoteMode::Headers => "headers",
        }
    }
}

/// A remote scan target: a repository and the revision asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Model or dataset.
    pub kind: RepoKind,
    /// `ns/name`.
    pub repo: String,
    /// The revision as given (branch, tag or commit); `None`: the default branch, `main`.
    pub revision: Option<String>,
}

impl Target {
    /// The revision to resolve (`main` when none was given).
    pub fn requested(&self) -> &str {
        self.revision.as_deref().unwrap_or("main")
    }

    /// The target in `hf://` form, as the report's root.
    pub fn display(&self) -> String {
        let kind = match self.kind {
            RepoKind::Model => "",
            RepoKind::Dataset => "datasets/",
        };
        match &self.revision {
            Some(r) => format!("hf://{kind}{}@{r}", self.repo),
            None => format!("hf://{kind}{}", self.repo),
        }
    }
}

/// Why a target that looks remote cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The repository id is not `ns/name` of allowed characters.
    #[error(
        "invalid Hugging Face repository id `{0}`: expected `namespace/name` of letters, digits, `-`, `_` and `.`"
    )]
    BadRepo(String),
    /// The revision is empty, too long or holds control characters.
    #[error("invalid revision `{0}`")]
    BadRevision(String),
}

/// Whether `arg` names a remote repository (`hf://…` or a `https://huggingface.co/…` URL).
pub fn is_remote(arg: &str) -> bool {
    arg.starts_with("hf://") || hub_url_rest(arg).is_some()
}

/// `https://huggingface.co/<rest>` (also `www.` and a trailing `/`): the rest.
fn hub_url_rest(arg: &str) -> Option<&str> {
    ["https://huggingface.co/", "https://www.huggingface.co/"]
        .iter()
        .find_map(|p| arg.strip_prefix(p))
}

/// Parses a remote target: `hf://ns/name[@rev]`, `hf://datasets/ns/name[@rev]`,
/// `https://huggingface.co/[datasets/]ns/name[/tree/<rev>]`. `None`: not a remote target.
pub fn parse_target(arg: &str) -> Option<Result<Target, TargetError>> {
    if let Some(rest) = arg.strip_prefix("hf://") {
        let (kind, rest) = split_kind(rest);
        let (repo, revision) = match rest.split_once('@') {
            Some((repo, rev)) => (repo, Some(rev.to_string())),
            None => (rest, None),
        };
        return Some(build(kind, repo.trim_end_matches('/'), revision));
    }
    let rest = hub_url_rest(arg)?;
    let (kind, rest) = split_kind(rest);
    let parts: Vec<&str> = rest.trim_end_matches('/').splitn(4, '/').collect();
    let (repo, revision) = match parts.as_slice() {
        [ns, name] => (format!("{ns}/{name}"), None),
        [ns, name, "tree", rev] => (format!("{ns}/{name}"), Some(percent_decode(rev))),
        _ => return Some(Err(TargetError::BadRepo(rest.to_string()))),
    };
    Some(build(kind, &repo, revision))
}

fn split_kind(rest: &str) -> (RepoKind, &str) {
    if let Some(r) = rest.strip_prefix("datasets/") {
        (RepoKind::Dataset, r)
    } else if let Some(r) = rest.strip_prefix("models/") {
        (RepoKind::Model, r)
    } else {
        (RepoKind::Model, rest)
    }
}

fn build(kind: RepoKind, repo: &str, revision: Option<String>) -> Result<Target, TargetError> {
    if !valid_repo_id(repo) {
        return Err(TargetError::BadRepo(repo.to_string()));
    }
    if let Some(r) = &revision
        && (r.is_empty() || r.len() > MAX_NAME || r.chars().any(char::is_control))
    {
        return Err(TargetError::BadRevision(r.clone()));
    }
    Ok(Target {
        kind,
        repo: repo.to_string(),
        revision,
    })
}

/// `ns/name`, each part of `[A-Za-z0-9._-]`, not starting with `.` or `-` (so never `..`).
fn valid_repo_id(repo: &str) -> bool {
    let parts: Vec<&str> = repo.split('/').collect();
    repo.len() <= MAX_NAME
        && parts.len() == 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && !p.starts_with(['.', '-'])
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
}

/// Decodes `%XX` escapes (a revision such as `refs%2Fpr%2F1` in a browser URL).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Percent-encodes `s` for a URL path; `/` is kept when `keep_slash` (file paths), encoded
/// otherwise (a revision such as `refs/pr/1` is one path segment to the API).
pub fn encode_path(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Whether `rev` is a full commit id (40 lowercase hex digits).
pub fn is_commit(rev: &str) -> bool {
    rev.len() == 40 && rev.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
