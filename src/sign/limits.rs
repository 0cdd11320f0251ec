//! [`Limits`], the caps on every input signing and verifying reads. A leaf of `sign`: it imports
//! nothing from the folder, so every parser can take it without an arrow back up to `mod.rs`.

/// Bounds on everything read while signing or verifying.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest bundle file (and decoded payload).
    pub max_bundle_bytes: u64,
    /// Resources in one manifest.
    pub max_resources: usize,
    /// Certificates in a chain (bundle or trust root CA).
    pub max_chain_len: usize,
    /// Transparency-log entries in a bundle.
    pub max_tlog_entries: usize,
    /// One DER certificate.
    pub max_cert_bytes: usize,
    /// Trusted root JSON.
    pub max_trust_root_bytes: u64,
    /// Key / certificate PEM files.
    pub max_pem_bytes: u64,
    /// Files in the model tree.
    pub max_files: u64,
    /// Directory depth of the model tree.
    pub max_tree_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bundle_bytes: 256 << 20,
            max_resources: 2_000_000,
            max_chain_len: 8,
            max_tlog_entries: 8,
            max_cert_bytes: 64 << 10,
            max_trust_root_bytes: 8 << 20,
            max_pem_bytes: 1 << 20,
            max_files: 10_000_000,
            max_tree_depth: 256,
        }
    }
}
