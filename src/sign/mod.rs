//! OpenSSF Model Signing (OMS): sign a model tree and verify a signature, compatible with the
//! reference `model_signing` tool (sigstore/model-transparency, 1.x).
//!
//! A signature is a Sigstore bundle (JSON) holding a DSSE envelope whose payload is an in-toto
//! Statement v1 with predicate `https://model_signing/signature/v1.0`: the manifest of every
//! file's SHA-256 plus the serialization parameters needed to recompute it.
//!
//! ```text
//! sign:   tree --walk+hash--> Manifest --statement--> payload --PAE+ECDSA--> bundle JSON
//! verify: bundle --parse (bounded)--> signer check (key | cert chain | Fulcio+Rekor) --> Manifest
//!         tree --walk+hash (same serialization, same ignores)--> resources --diff--> TreeDiff
//! ```
//!
//! Signer methods: `key` (ECDSA P-256/P-384; the bundle names the key by a hint), `certificate`
//! (the bundle carries a signing certificate and its chain, verified to roots the verifier
//! supplies), and keyless `sigstore` (verify only: a Fulcio certificate, Rekor evidence, checked
//! offline against a trusted root JSON). Every input is bounded by [`Limits`]; a hostile bundle
//! is an error, never a panic. This module has no CLI; `app` calls [`sign`] and [`verify`].

pub mod attest;
pub mod bundle;
pub mod check;
pub mod inputs;
pub mod keys;
pub mod manifest;
pub mod sigstore;
pub mod statement;
pub mod x509;

mod envelope;
mod error;
mod limits;
mod signer;
mod tree;

use std::path::Path;

use serde::Serialize;

pub use envelope::{SigningMaterial, Trust, VerifiedBundle, sign_payload, verify_bundle};
pub use error::SignError;
pub use inputs::read_small;
pub use keys::{PrivateKey, PublicKey};
pub use limits::Limits;
pub use manifest::{Changed, Manifest, TreeDiff};
pub use signer::{Signer, SubjectMatch};
pub use sigstore::TrustedRoot;
pub use tree::{VerifyOptions, check_tree, relative_inside};
pub use x509::Cert;

use manifest::{HashType, IgnoreSet, Serialization};
use statement::hex;

/// How to serialize the tree when signing.
#[derive(Debug, Clone)]
pub struct SignOptions {
    /// Extra root-relative paths to leave out (the signature file's own path belongs here when
    /// it is inside the tree).
    pub ignore_paths: Vec<String>,
    /// Leave out `.git`, `.gitattributes`, `.github`, `.gitignore` (the reference's default).
    pub ignore_git_paths: bool,
    /// Use the `shards` method with this piece size instead of `files`.
    pub shard_size: Option<u64>,
}

impl Default for SignOptions {
    fn default() -> Self {
        SignOptions {
            ignore_paths: Vec::new(),
            ignore_git_paths: true,
            shard_size: None,
        }
    }
}

/// The model name the reference records: the final component of the (resolved) path.
pub fn model_name(root: &Path) -> String {
    let name = root
        .file_name()
        .filter(|n| *n != "..")
        .map(|n| n.to_string_lossy().into_owned());
    name.or_else(|| {
        std::fs::canonicalize(root)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
    })
    .unwrap_or_default()
}

/// Computes the manifest of `root` (no signing): also what `scan` can record as a digest.
pub fn manifest_of(
    root: &Path,
    opts: &SignOptions,
    limits: &Limits,
) -> Result<Manifest, SignError> {
    let mut ignore = IgnoreSet::default();
    if opts.ignore_git_paths {
        ignore.add_git_paths();
    }
    for p in &opts.ignore_paths {
        ignore.add(p)?;
    }
    let ignore_paths = ignore.to_strings();
    let serialization = match opts.shard_size {
        None => Serialization::Files {
            hash: HashType::Sha256,
            ignore_paths,
        },
        Some(0) => return Err(SignError::Tree("shard size must be positive".into())),
        Some(size) => Serialization::Shards {
            hash: HashType::Sha256,
            shard_size: size,
            ignore_paths,
        },
    };
    let files = manifest::walk_tree(root, &ignore, limits)?;
    let mut resources = manifest::hash_files(&files, &serialization)?;
    if resources.len() > limits.max_resources {
        return Err(SignError::TooLarge {
            what: "manifest resources",
            len: resources.len() as u64,
            max: limits.max_resources as u64,
        });
    }
    // Shards of one file come out in offset order already; files are in component order.
    resources.sort_by(|a, b| resource_key(&a.name).cmp(&resource_key(&b.name)));
    Manifest::new(model_name(root), serialization, resources)
}

fn resource_key(name: &str) -> (Vec<&str>, u64, u64) {
    let mut parts = name.rsplitn(3, ':');
    let (e, s, p) = (parts.next(), parts.next(), parts.next());
    match (
        p,
        s.and_then(|s| s.parse().ok()),
        e.and_then(|e| e.parse().ok()),
    ) {
        (Some(p), Some(s), Some(e)) => (p.split('/').collect(), s, e),
        _ => (name.split('/').collect(), 0, 0),
    }
}

/// Signs `root`: returns the bundle JSON bytes (what `model.sig` holds).
pub fn sign(
    root: &Path,
    material: &SigningMaterial,
    opts: &SignOptions,
    limits: &Limits,
) -> Result<Vec<u8>, SignError> {
    let m = manifest_of(root, opts, limits)?;
    let payload = statement::statement_for_manifest(&m);
    Ok(sign_payload(&payload, material))
}

/// The verdict on a model tree.
#[derive(Debug, Clone, Serialize)]
pub struct Verification {
    /// Who signed.
    pub signer: Signer,
    /// Model name recorded by the signer (informative).
    pub model_name: String,
    /// Serialization method (`files` / `shards`).
    pub method: &'static str,
    /// The statement subject digest: SHA-256 over every resource digest.
    pub manifest_digest: String,
    /// Tree versus manifest.
    pub diff: TreeDiff,
}

impl Verification {
    /// Signature and tree both verify.
    pub fn is_clean(&self) -> bool {
        self.diff.is_clean()
    }

    /// Human-readable verdict; paths and identities are sanitized.
    pub fn render_text(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        use crate::report::text::sanitize;
        render_signer(&self.signer, w)?;
        writeln!(
            w,
            "manifest  {} ({} serialization, model {})",
            self.manifest_digest,
            self.method,
            sanitize(&self.model_name)
        )?;
        for c in &self.diff.changed {
            match (&c.expected, &c.actual) {
                (Some(e), Some(a)) => writeln!(
                    w,
                    "changed   {}: signed sha256 {e}, found {a}",
                    sanitize(&c.path)
                )?,
                _ => writeln!(w, "changed   {}", sanitize(&c.path))?,
            }
        }
        for p in &self.diff.missing {
            writeln!(w, "missing   {}", sanitize(p))?;
        }
        for p in &self.diff.added {
            writeln!(w, "added     {}", sanitize(p))?;
        }
        writeln!(
            w,
            "checked {} signed files: {} ok, {} changed, {} missing, {} added",
            self.diff.checked,
            self.diff.ok,
            self.diff.changed.len(),
            self.diff.missing.len(),
            self.diff.added.len()
        )?;
        writeln!(
            w,
            "result: {}",
            if self.is_clean() {
                "VERIFIED"
            } else {
                "MISMATCH"
            }
        )
    }
}

/// One line naming a verified signer.
pub fn render_signer(s: &Signer, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    use crate::report::text::sanitize;
    write!(
        w,
        "signature verified: {} {}",
        s.method,
        sanitize(&s.identity)
    )?;
    if let Some(i) = &s.issuer {
        write!(w, " (issuer {})", sanitize(i))?;
    }
    if let Some(c) = &s.certificate {
        write!(w, " certificate {c}")?;
    }
    if let Some(t) = &s.tlog {
        write!(w, "; {t}")?;
    }
    writeln!(w)
}

/// Verifies the bundle, then the tree against the signed manifest.
pub fn verify(
    root: &Path,
    bundle_bytes: &[u8],
    trust: &Trust,
    opts: &VerifyOptions,
    limits: &Limits,
) -> Result<Verification, SignError> {
    let vb = verify_bundle(bundle_bytes, trust, opts.now, limits)?;
    let expected = statement::manifest_from_statement(&vb.statement, limits)?;
    let diff = check_tree(root, &expected, opts, limits)?;
    Ok(Verification {
        signer: vb.signer,
        model_name: expected.model_name.clone(),
        method: expected.serialization.method(),
        manifest_digest: format!("sha256:{}", hex(&expected.root_digest())),
        diff,
    })
}

#[cfg(test)]
mod tests;
