//! The knowledge base's answer for one imported global ([`Verdict`]), the entries a policy adds
//! to the built-in lists ([`ExtraLists`]), and the one matching rule every list uses: an entry
//! covers its own path and the dotted names below it, on component boundaries.

#[cfg(doc)]
use super::capabilities::Capability;
use super::names::normalize_module;

/// The knowledge base's opinion of one imported global.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Importing (and usually calling) this global can run code, touch files or the network.
    Dangerous {
        /// The capability's [`Capability::code`] (`process-execution`), or [`POLICY_CATEGORY`]
        /// for a name only the policy denies: one vocabulary with the code judges (issue 38).
        category: &'static str,
        /// Why it is dangerous, lowercase, for the finding's message.
        reason: &'static str,
    },
    /// A plain rebuilder or container type that ordinary model pickles import.
    Safe,
    /// Neither list knows it.
    Unknown,
}

/// Entries a policy adds to the built-in lists. `(module, None)` covers the module, its
/// submodules and every name in them; `(module, Some(name))` covers that name and its attributes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraLists {
    /// Globals the policy denies; these beat the built-in safe list.
    pub dangerous: Vec<(String, Option<String>)>,
    /// Globals the policy allows; these never override a built-in dangerous entry.
    pub safe: Vec<(String, Option<String>)>,
}

impl ExtraLists {
    /// Parses the policy's `module.name` / `module.*` entries.
    pub fn from_policy(safe: &[String], dangerous: &[String]) -> Self {
        let split = |g: &String| -> (String, Option<String>) {
            match g.strip_suffix(".*") {
                Some(module) => (module.to_string(), None),
                None => match g.rsplit_once('.') {
                    Some((m, n)) => (m.to_string(), Some(n.to_string())),
                    None => (g.clone(), None),
                },
            }
        };
        ExtraLists {
            dangerous: dangerous.iter().map(split).collect(),
            safe: safe.iter().map(split).collect(),
        }
    }
}

/// Category used for globals denied by the policy's extra list.
pub const POLICY_CATEGORY: &str = "policy";

/// Does the dangerous prefix `path` cover the qualified name (same path, or a dotted child)?
pub(super) fn covers(path: &str, qualified: &str) -> bool {
    match qualified.strip_prefix(path) {
        Some(rest) => rest.is_empty() || rest.starts_with('.'),
        None => false,
    }
}

/// Does a policy entry `(module, name)` cover the qualified name? The entry's module is
/// normalised like the pickle's, so `posix` in a policy means `os`.
pub(super) fn covers_entry(module: &str, name: Option<&str>, qualified: &str) -> bool {
    let module = normalize_module(module);
    match name {
        Some(name) => covers(&format!("{module}.{name}"), qualified),
        None => covers(&module, qualified),
    }
}
