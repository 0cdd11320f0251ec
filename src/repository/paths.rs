//! Relative paths as the repository checks handle them (UTF-8, `/`): a file's directory and a
//! name joined to a directory. The folder's leaf: it imports nothing from `repository`, so the
//! loader-code and native checks use it without an arrow back up to `repository.rs`.

/// The directory part of a relative path (`""` for top-level files).
pub fn parent(rel: &str) -> &str {
    rel.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// `dir/name`, or `name` alone at the top level.
pub(super) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}
