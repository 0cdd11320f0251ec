//! Who signed: the verified [`Signer`] and the [`SubjectMatch`] a keyless identity must meet.
//! Imports only the folder's leaves ([`SignError`]).

use serde::Serialize;

use super::error::SignError;

/// How a keyless signer's certificate SAN must look.
#[derive(Debug, Clone)]
pub enum SubjectMatch {
    /// This exact SAN.
    Exact(String),
    /// A regular expression the whole SAN must match (anchored here, unlike cosign's
    /// `--certificate-identity-regexp`, so `https://github.com/org/` cannot be satisfied by
    /// `https://evil.example/?https://github.com/org/`).
    Regex(regex::Regex),
}

impl SubjectMatch {
    /// Largest compiled pattern accepted: a policy is trusted input, but a mistyped `{1000}`
    /// should be an error rather than megabytes of automaton.
    const MAX_REGEX_BYTES: usize = 1 << 20;

    /// Compiles `pattern` to match whole SANs only.
    pub fn regex(pattern: &str) -> Result<Self, SignError> {
        regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
            .size_limit(Self::MAX_REGEX_BYTES)
            .build()
            .map(Self::Regex)
            .map_err(|e| SignError::Method(format!("identity regex {pattern:?}: {e}")))
    }

    /// Whether `san` is the expected identity.
    pub fn matches(&self, san: &str) -> bool {
        match self {
            Self::Exact(want) => san == want,
            Self::Regex(re) => re.is_match(san),
        }
    }
}

impl std::fmt::Display for SubjectMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exact(want) => write!(f, "{want:?}"),
            // Show the pattern as written, without the anchors added above.
            Self::Regex(re) => {
                let p = re.as_str();
                let inner = p
                    .strip_prefix("^(?:")
                    .and_then(|p| p.strip_suffix(")$"))
                    .unwrap_or(p);
                write!(f, "regex {inner:?}")
            }
        }
    }
}

/// Who signed, as established by verification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Signer {
    /// `key`, `certificate`, `sigstore`, or `key-fingerprint` (a certificate's key pinned by
    /// fingerprint).
    pub method: &'static str,
    /// Key fingerprint, certificate subject, or Sigstore SAN.
    pub identity: String,
    /// OIDC issuer (keyless) or the root's subject (certificate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// Signing-certificate fingerprint (certificate / keyless).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate: Option<String>,
    /// Rekor log index and integrated time (keyless).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tlog: Option<String>,
}
