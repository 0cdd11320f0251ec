//! What a scan of Python reports: [`CodeReport`] and its [`CodeItem`]s with their kinds.
//! This is a leaf of `code/python`: it imports nothing from `mod.rs` or its siblings.

use serde::Serialize;

/// What one Python source contains, as far as provenance is concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CodeReport {
    /// Reported calls in source order.
    pub calls: Vec<CodeItem>,
    /// tree-sitter had to recover from syntax errors; the items found are still reported.
    pub syntax_errors: bool,
    /// A limit stopped the scan early; `truncated_by` names it.
    pub truncated: bool,
    /// Sub-code of the limit that stopped the scan: `source-too-large`, `parse-budget`,
    /// `parse-timeout`, `node-budget`, `item-budget` or `binding-budget`.
    pub truncated_by: Option<&'static str>,
}

/// One reported call (or dictionary entry, for `{"trust_remote_code": True}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodeItem {
    /// What was found.
    pub kind: ItemKind,
    /// 1-based line of the start of the call.
    pub line: usize,
    /// 1-based column of the start of the call, in chars.
    pub column: usize,
    /// The called expression as written (whitespace collapsed, bounded).
    pub callee: String,
    /// The relevant argument text (whitespace collapsed, bounded).
    pub excerpt: String,
}

/// The kinds of reported item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ItemKind {
    /// A download from a model/dataset hub (Hugging Face, or GitHub for `torch.hub.load`).
    HubDownload {
        /// The repository argument.
        repo: RepoRef,
        /// Whether the download is pinned to a commit.
        revision: RevisionState,
        /// Which API downloads (`from_pretrained`, `hf_hub_download`, `torch.hub.load`, …).
        api: &'static str,
    },
    /// `trust_remote_code` set to something that is or may be true.
    TrustRemoteCode {
        /// How the value was determined.
        value: TrustValue,
    },
    /// A call that deserializes with a loader able to run code.
    UnsafeLoad {
        /// Stable sub-code, e.g. `torch-load-no-weights-only`, `pickle-load`.
        code: &'static str,
        /// Lowercase explanation naming the call.
        reason: String,
    },
}

/// The repository argument of a hub download.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum RepoRef {
    /// A string literal.
    Literal {
        /// The repository id.
        value: String,
    },
    /// A module-level constant assigned once.
    Constant {
        /// The constant's name.
        name: String,
        /// Its value.
        value: String,
    },
    /// An f-string: the repository cannot be verified.
    FString {
        /// The f-string as written.
        text: String,
    },
    /// Any other expression (or `**kwargs`): the repository cannot be verified.
    Unverifiable {
        /// The expression as written.
        expr: String,
    },
}

/// How a download's revision is pinned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum RevisionState {
    /// No revision (or `None`): the default branch at download time.
    Missing,
    /// A full 40-hex commit id: pinned.
    Pinned {
        /// The commit id.
        sha: String,
        /// The constant it came from, if any.
        via: Option<String>,
    },
    /// A branch or tag name (`main`, `v1.0`): movable.
    BranchOrTag {
        /// The name.
        value: String,
        /// The constant it came from, if any.
        via: Option<String>,
    },
    /// 7 to 39 hex digits: an abbreviated commit id the hub may not resolve, and that collides.
    ShortSha {
        /// The digits.
        value: String,
        /// The constant it came from, if any.
        via: Option<String>,
    },
    /// A name or expression that is not a module-level constant.
    Unverifiable {
        /// The expression as written.
        expr: String,
    },
}

/// How a `trust_remote_code` value was determined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum TrustValue {
    /// The literal `True`.
    Literal,
    /// A module-level constant assigned `True` once.
    Constant {
        /// The constant's name.
        name: String,
    },
    /// An expression that may be true at run time.
    Unverifiable {
        /// The expression as written.
        expr: String,
    },
}
