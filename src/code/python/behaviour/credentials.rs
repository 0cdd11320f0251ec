//! **credential-access**: the code reads secrets.
//!
//! Reported for reads of the Hugging Face token (the token file, `HF_TOKEN`,
//! `HUGGING_FACE_HUB_TOKEN`, `huggingface_hub.get_token`), `~/.ssh`, `~/.aws`, `~/.netrc`,
//! `~/.docker/config.json`, `~/.git-credentials` and the other credential paths of the
//! capability table (through `open`, `Path.read_text`, `os.listdir`, `glob`, ... with the path
//! built from literals: `os.path.expanduser("~/.ssh/id_rsa")`, `Path.home() / ".aws"`),
//! keyrings and browser cookie stores, environment variables whose name says they hold a secret,
//! and bulk reads of the environment (`dict(os.environ)`, `os.environ.copy()`, `{**os.environ}`,
//! iterating it, passing it whole to a function).
//!
//! Severity: **high** for credential files, keyrings and cookie stores (model code has no use
//! for them); **medium** for a credential variable or the whole environment, which loaders read
//! for settings too. Reading one ordinary variable (`os.getenv("CUDA_HOME")`) is not a site.
//! Sending any of these over the network is judged by `network` (critical).

use crate::code::python::field::{Field, Fields};
use tree_sitter::Node;

use super::analyzer::{Analyzer, CallSite, Confidence};
use crate::knowledge::capabilities::{self as caps, Capability, Role};
use crate::knowledge::places;
use crate::model::finding::Severity;

/// Methods and functions that read the path they are given (or called on).
const PATH_READERS: &[&str] = &[
    "open",
    "read_text",
    "read_bytes",
    "listdir",
    "scandir",
    "walk",
    "glob",
    "iglob",
    "rglob",
    "iterdir",
    "copy",
    "copy2",
    "copyfile",
    "copytree",
    "make_archive",
    "add",
];

/// Keyrings, cookie stores, the Hub token API.
pub(super) fn judge_call<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    let (severity, detail) = if site.name.contains("token") {
        (Severity::Medium, "reads the Hugging Face token".to_owned())
    } else if site.name.starts_with("keyring") {
        (Severity::High, "reads secrets from the keyring".to_owned())
    } else {
        (
            Severity::High,
            format!("reads stored credentials (`{}`)", site.name),
        )
    };
    a.push(
        site.node,
        Capability::CredentialAccess,
        severity,
        site.confidence,
        &site.name,
        detail,
        site.entry.cwe,
    );
}

/// `os.getenv("HF_TOKEN")`, `os.environ.get("AWS_SECRET_ACCESS_KEY")`.
pub(super) fn judge_env_read<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    let Some(var) = site.args.arg(0, &["key"]).and_then(|v| a.string(v)) else {
        return;
    };
    if !places::credential_variable(&var) {
        return;
    }
    a.push(
        site.node,
        Capability::CredentialAccess,
        Severity::Medium,
        site.confidence,
        &site.name,
        format!("reads the secret variable `{}`", a.excerpt(&var)),
        site.entry.cwe,
    );
}

/// `open(path)` for reading, where the path is a credential file.
pub(super) fn judge_path<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    let Some(path) = site.args.arg(0, &["file", "filename"]) else {
        return;
    };
    if super::persistence::is_write_mode(a, site) {
        return;
    }
    let fragments = a.path_fragments(path);
    let Some(class) = places::path_class(&fragments) else {
        return;
    };
    if class.capability != Capability::CredentialAccess {
        return;
    }
    let detail = format!("reads {} (`{}`)", class.what, a.excerpt(a.text(path)));
    a.push(
        site.node,
        Capability::CredentialAccess,
        Severity::High,
        site.confidence,
        &site.name,
        detail,
        site.entry.cwe,
    );
}

/// `Path.home() / ".ssh"` read with a method the table does not name (`read_text`, `glob`).
pub(super) fn judge_unlisted<'s>(a: &mut Analyzer<'s, '_, '_>, node: Node<'s>, func: Node<'s>) {
    let method = match func.kind() {
        "attribute" => func.field(Field::Attribute).map(|m| a.text(m)),
        _ => None,
    };
    let Some(method) = method else { return };
    if !PATH_READERS.contains(&method) {
        return;
    }
    let fragments = a.path_fragments(node);
    let Some(class) = places::path_class(&fragments) else {
        return;
    };
    if class.capability != Capability::CredentialAccess || !looks_rooted(&fragments) {
        return;
    }
    let detail = format!("reads {} (`{}`)", class.what, a.excerpt(a.text(node)));
    let call = a.excerpt(a.text(func));
    a.push(
        node,
        Capability::CredentialAccess,
        Severity::High,
        Confidence::Medium,
        &call,
        detail,
        522,
    );
}

/// Whether a path built from literals points into a home directory or the system (not a
/// relative path inside the model folder that happens to be called `.aws`).
fn looks_rooted(fragments: &str) -> bool {
    fragments.starts_with('~')
        || fragments.starts_with('/')
        || fragments.contains("/.")
        || fragments.starts_with('.')
}

/// A reference to `os.environ`: a bulk read when the whole mapping is copied, iterated,
/// serialised or passed on; a credential read when a secret variable is subscripted.
pub(super) fn judge_environ<'s>(a: &mut Analyzer<'s, '_, '_>, node: Node<'s>) {
    let Some(parent) = a.parent(node) else { return };
    let bulk = match parent.kind() {
        "attribute" => {
            let attr = parent.field(Field::Attribute).map(|x| a.text(x));
            matches!(
                attr,
                Some("copy" | "items" | "keys" | "values" | "__iter__" | "__dict__")
            ) && a.parent(parent).is_some_and(|g| g.kind() == "call")
        }
        "argument_list" => {
            let call = a.parent(parent);
            let callee = call
                .and_then(|c| c.field(Field::Function))
                .map(|f| a.resolve(f))
                .unwrap_or_default();
            // `os.environ` handed to a process as its environment is not a read.
            !callee
                .iter()
                .any(|n| caps::lookup(n).is_some_and(|e| e.role == Role::Command))
        }
        "dictionary_splat" | "list_splat" => true,
        "for_statement" | "for_in_clause" => {
            parent.field(Field::Right).map(|r| r.id()) == Some(node.id())
        }
        "subscript" => {
            let key = parent.field(Field::Subscript).and_then(|k| a.string(k));
            if let Some(var) = key
                && places::credential_variable(&var)
            {
                a.push(
                    parent,
                    Capability::CredentialAccess,
                    Severity::Medium,
                    Confidence::High,
                    "os.environ[]",
                    format!("reads the secret variable `{}`", a.excerpt(&var)),
                    522,
                );
            }
            false
        }
        _ => false,
    };
    if !bulk {
        return;
    }
    // Show the call the environment goes into (`dict(os.environ)`), not just its arguments.
    let context = match parent.kind() {
        "argument_list" | "attribute" => a.parent(parent).unwrap_or(parent),
        _ => parent,
    };
    let shown = a.excerpt(a.text(context));
    a.push(
        node,
        Capability::CredentialAccess,
        Severity::Medium,
        Confidence::High,
        "os.environ",
        format!("reads the whole environment (`{shown}`)"),
        522,
    );
}

/// The secret a call returns, if it reads one (for the network judge's "what is sent").
pub(super) fn secret_of_call<'s>(a: &Analyzer<'s, '_, '_>, call: Node<'s>) -> Option<String> {
    let func = call.field(Field::Function)?;
    let args = a.sc.args(call);
    for name in a.resolve(func) {
        let Some(entry) = caps::lookup(&name) else {
            continue;
        };
        match entry.role {
            Role::ReadEnv => {
                let var = args.arg(0, &["key"]).and_then(|v| a.string(v))?;
                return places::credential_variable(&var).then(|| format!("the secret `{var}`"));
            }
            Role::Call if entry.capability == Capability::CredentialAccess => {
                return Some(format!("credentials from `{}`", caps::normalize(&name)));
            }
            _ => {}
        }
    }
    let method = match func.kind() {
        "attribute" => func.field(Field::Attribute).map(|m| a.text(m))?,
        "identifier" => a.text(func),
        _ => return None,
    };
    if PATH_READERS.contains(&method) || method == "read" || method == "readlines" {
        let fragments = a.path_fragments(call);
        let class = places::path_class(&fragments)?;
        if class.capability == Capability::CredentialAccess {
            return Some(class.what.to_owned());
        }
    }
    None
}
