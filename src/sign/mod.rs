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

use std::path::Path;

use serde::Serialize;

pub use keys::{PrivateKey, PublicKey};
pub use manifest::{Changed, Manifest, TreeDiff};
pub use sigstore::TrustedRoot;
pub use x509::Cert;

use bundle::{CertificateChain, PublicKeyIdentifier, RawBytes, VerificationMaterial};
use manifest::{HashType, IgnoreSet, Serialization};
use statement::{IN_TOTO_PAYLOAD_TYPE, hex, pae};

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

/// Why signing or verification failed. Messages are one line and name what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// An input exceeds a limit.
    #[error("{what} is too large ({len} > {max})")]
    TooLarge {
        /// What.
        what: &'static str,
        /// Its size or count.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// The bundle is not a well-formed Sigstore bundle.
    #[error("unreadable signature bundle: {0}")]
    Bundle(String),
    /// A base64 field does not decode.
    #[error("unreadable signature bundle: {field} is not base64 ({reason})")]
    Base64 {
        /// Which field.
        field: &'static str,
        /// Decoder message.
        reason: String,
    },
    /// The envelope's statement or manifest is malformed or of an unknown type.
    #[error("bad signed statement: {0}")]
    Statement(String),
    /// A serialization this build does not implement.
    #[error("unsupported signature: {0}")]
    Unsupported(String),
    /// The signature does not verify with the key.
    #[error("signature does not verify with the given key")]
    BadSignature,
    /// The bundle names another key.
    #[error("wrong key: the signature was made with key {bundle}, not with the given key {given}")]
    KeyMismatch {
        /// The hint in the bundle.
        bundle: String,
        /// The hint of the key given.
        given: String,
    },
    /// The bundle's material does not suit the verification asked for.
    #[error("{0}")]
    Method(String),
    /// A key file cannot be used.
    #[error("key: {0}")]
    Key(String),
    /// A certificate or chain problem.
    #[error("certificate: {0}")]
    Certificate(String),
    /// The signer is not the expected identity or issuer.
    #[error("untrusted signer: {0}")]
    Identity(String),
    /// Transparency-log evidence is missing or does not verify.
    #[error("transparency log: {0}")]
    Transparency(String),
    /// The trusted root JSON cannot be used.
    #[error("trusted root: {0}")]
    TrustRoot(String),
    /// The tree cannot be serialized (symlink, special file, unreadable file).
    #[error("model tree: {0}")]
    Tree(String),
}

/// What signs.
#[derive(Debug, Clone)]
pub enum SigningMaterial {
    /// A bare key: the bundle carries the key's hint.
    Key(PrivateKey),
    /// A key with its certificate (first) and the rest of the chain.
    Certificate {
        /// The private key.
        key: PrivateKey,
        /// Signing certificate first.
        chain: Vec<Cert>,
    },
}

impl SigningMaterial {
    /// Pairs a key with certificates: the certificate whose public key is the key's becomes
    /// the signing certificate, the others follow in the order given.
    pub fn with_certificates(
        key: PrivateKey,
        certs: Vec<Cert>,
    ) -> Result<SigningMaterial, SignError> {
        let public = key.public();
        let pos = certs
            .iter()
            .position(|c| c.public_key().ok().as_ref() == Some(&public))
            .ok_or_else(|| {
                SignError::Certificate(
                    "no certificate in the chain holds the signing key's public key".into(),
                )
            })?;
        let mut chain = certs;
        let leaf = chain.remove(pos);
        if !leaf.can_sign()? {
            return Err(SignError::Certificate(
                "signing certificate is not allowed to sign (key usage / code signing)".into(),
            ));
        }
        chain.insert(0, leaf);
        Ok(SigningMaterial::Certificate { key, chain })
    }

    fn key(&self) -> &PrivateKey {
        match self {
            SigningMaterial::Key(k) | SigningMaterial::Certificate { key: k, .. } => k,
        }
    }
}

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

/// Signs an arbitrary in-toto statement (used for SBOM attestations too).
pub fn sign_payload(payload: &[u8], material: &SigningMaterial) -> Vec<u8> {
    let sig = material.key().sign(&pae(IN_TOTO_PAYLOAD_TYPE, payload));
    let vm = match material {
        SigningMaterial::Key(k) => VerificationMaterial {
            public_key: Some(PublicKeyIdentifier {
                hint: Some(k.public().hint()),
                raw_bytes: None,
                key_details: None,
            }),
            ..VerificationMaterial::default()
        },
        SigningMaterial::Certificate { chain, .. } => VerificationMaterial {
            x509_certificate_chain: Some(CertificateChain {
                certificates: chain
                    .iter()
                    .map(|c| RawBytes {
                        raw_bytes: bundle::encode_b64(&c.der),
                    })
                    .collect(),
            }),
            ..VerificationMaterial::default()
        },
    };
    let b = bundle::build(vm, payload, &sig);
    let mut out = serde_json::to_vec(&b).unwrap_or_default();
    out.push(b'\n');
    out
}

/// What the verifier trusts.
#[derive(Debug, Clone)]
pub enum Trust {
    /// A public key (key method).
    Key(PublicKey),
    /// Root certificates (certificate method); chains are checked at `now`.
    Certificates(Vec<Cert>),
    /// A signing key pinned by fingerprint (`sha256:<hex>` of its DER SubjectPublicKeyInfo). The
    /// key itself comes from the bundle's leaf certificate, so only certificate and keyless
    /// signatures can match; the pin is the trust, so the chain and dates are not consulted.
    KeyFingerprint(String),
    /// Keyless: a Sigstore trusted root plus the expected identity and OIDC issuer.
    Sigstore {
        /// The trusted root.
        root: TrustedRoot,
        /// Expected SAN (email or URI).
        identity: SubjectMatch,
        /// Expected OIDC issuer, exact match.
        issuer: String,
    },
}

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

/// A bundle whose signature verified: its signer and payload.
#[derive(Debug, Clone)]
pub struct VerifiedBundle {
    /// Who signed.
    pub signer: Signer,
    /// The verified statement.
    pub statement: statement::Statement,
}

/// Verifies the bundle's signature under `trust` (no tree yet). `now` (seconds since the epoch)
/// is the time certificate chains are checked at for the certificate method.
pub fn verify_bundle(
    bytes: &[u8],
    trust: &Trust,
    now: i64,
    limits: &Limits,
) -> Result<VerifiedBundle, SignError> {
    let parsed = bundle::parse(bytes, limits)?;
    // The payload type is part of what is signed (PAE), and the reference signs only in-toto.
    if parsed.payload_type != IN_TOTO_PAYLOAD_TYPE {
        return Err(SignError::Statement(format!(
            "DSSE payload type {:?}, expected {IN_TOTO_PAYLOAD_TYPE:?}",
            parsed.payload_type
        )));
    }
    let signed = pae(&parsed.payload_type, &parsed.payload);
    let vm = &parsed.bundle.verification_material;
    let signer = match trust {
        Trust::Key(key) => {
            let Some(pk) = &vm.public_key else {
                return Err(SignError::Method(
                    "the signature was made with a certificate, not a bare key: verify with --certificate-chain or keyless options".into(),
                ));
            };
            if let Some(hint) = pk.hint.as_deref().filter(|h| !h.is_empty()) {
                let given = key.hint();
                if hint != given {
                    return Err(SignError::KeyMismatch {
                        bundle: hint.to_string(),
                        given,
                    });
                }
            }
            key.verify(&signed, &parsed.signature)?;
            Signer {
                method: "key",
                identity: key.fingerprint(),
                issuer: None,
                certificate: None,
                tlog: None,
            }
        }
        Trust::Certificates(roots) => {
            let Some(chain) = &vm.x509_certificate_chain else {
                return Err(SignError::Method(
                    "the signature carries no certificate chain: verify with --key or keyless options".into(),
                ));
            };
            let certs = decode_certs(&chain.certificates, limits)?;
            let (leaf, rest) = certs
                .split_first()
                .ok_or_else(|| SignError::Bundle("empty certificate chain".into()))?;
            let path = x509::verify_chain(leaf, rest, roots, now, limits)?;
            if !leaf.can_sign()? {
                return Err(SignError::Certificate(
                    "signing certificate is not allowed to sign (key usage / code signing)".into(),
                ));
            }
            leaf.public_key()?.verify(&signed, &parsed.signature)?;
            Signer {
                method: "certificate",
                identity: leaf.subject(),
                issuer: path.last().map(|c| c.subject()),
                certificate: Some(leaf.fingerprint()),
                tlog: None,
            }
        }
        Trust::KeyFingerprint(want) => {
            let raw: &[RawBytes] = match (&vm.certificate, &vm.x509_certificate_chain) {
                (Some(c), _) => std::slice::from_ref(c),
                (None, Some(ch)) => &ch.certificates,
                _ => {
                    return Err(SignError::Method(format!(
                        "the policy pins key {want} by fingerprint, but a bare-key signature does not carry its key: list the public key PEM in `keys` (or pass --key key.pem)"
                    )));
                }
            };
            let certs = decode_certs(raw.get(..1).unwrap_or_default(), limits)?;
            let leaf = certs
                .first()
                .ok_or_else(|| SignError::Bundle("empty certificate chain".into()))?;
            let key = leaf.public_key()?;
            let got = key.fingerprint();
            if &got != want {
                return Err(SignError::KeyMismatch {
                    bundle: got,
                    given: want.clone(),
                });
            }
            key.verify(&signed, &parsed.signature)?;
            Signer {
                method: "key-fingerprint",
                identity: got,
                issuer: None,
                certificate: Some(leaf.fingerprint()),
                tlog: None,
            }
        }
        Trust::Sigstore {
            root,
            identity,
            issuer,
        } => {
            let raw: Vec<RawBytes> = match (&vm.certificate, &vm.x509_certificate_chain) {
                (Some(c), _) => vec![c.clone()],
                (None, Some(ch)) => ch.certificates.clone(),
                _ => {
                    return Err(SignError::Method(
                        "the signature was made with a bare key, not keylessly: verify with --key"
                            .into(),
                    ));
                }
            };
            let certs = decode_certs(&raw, limits)?;
            let input = sigstore::KeylessInput {
                certs: &certs,
                entries: &vm.tlog_entries,
                payload: &parsed.payload,
                signature_b64: &parsed.signature_b64,
            };
            let (key, who) = sigstore::verify_keyless(&input, root, identity, issuer, limits)?;
            key.verify(&signed, &parsed.signature)?;
            Signer {
                method: "sigstore",
                identity: who.identity,
                issuer: Some(who.issuer),
                certificate: certs.first().map(Cert::fingerprint),
                tlog: Some(format!(
                    "rekor index {} at {}{}",
                    who.log_index,
                    x509::fmt_time(who.integrated_time),
                    if who.inclusion_proof {
                        ", inclusion proof verified"
                    } else {
                        ""
                    }
                )),
            }
        }
    };
    let statement = statement::parse_statement(&parsed.payload_type, &parsed.payload)?;
    Ok(VerifiedBundle { signer, statement })
}

fn decode_certs(raw: &[RawBytes], limits: &Limits) -> Result<Vec<Cert>, SignError> {
    raw.iter()
        .take(limits.max_chain_len)
        .map(|c| {
            let der = bundle::decode_b64(
                "certificate rawBytes",
                &c.raw_bytes,
                limits.max_cert_bytes as u64,
            )?;
            Cert::from_der(&der, limits)
        })
        .collect()
}

/// Options for checking the tree.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// Seconds since the epoch: when certificate chains must be valid (certificate method).
    pub now: i64,
    /// Extra root-relative paths to ignore (the signature file's path when inside the tree).
    pub ignore_paths: Vec<String>,
    /// Ignore the reference's git paths (its default).
    pub ignore_git_paths: bool,
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

/// Recomputes the tree's resources with the signed serialization and compares.
pub fn check_tree(
    root: &Path,
    expected: &Manifest,
    opts: &VerifyOptions,
    limits: &Limits,
) -> Result<TreeDiff, SignError> {
    let mut ignore = IgnoreSet::default();
    if opts.ignore_git_paths {
        ignore.add_git_paths();
    }
    for p in expected.serialization.ignore_paths() {
        // A recorded path that would cover the whole model is signed nonsense: refuse it.
        ignore.add(p)?;
    }
    for p in &opts.ignore_paths {
        ignore.add(p)?;
    }
    let files = manifest::walk_tree(root, &ignore, limits)?;
    let actual = manifest::hash_files(&files, &expected.serialization)?;
    Ok(manifest::diff(expected, &actual))
}

/// The path of `file` relative to `root` when it lies inside it (for ignoring the signature
/// file). Both are resolved; `None` when outside or unresolvable.
pub fn relative_inside(root: &Path, file: &Path) -> Option<String> {
    let root = std::fs::canonicalize(root).ok()?;
    let parent = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let abs = std::fs::canonicalize(parent).ok()?.join(file.file_name()?);
    let rel = abs.strip_prefix(&root).ok()?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    let parts = parts?;
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Reads a small PEM/JSON input file under the PEM limit.
pub fn read_small(path: &Path, max: u64) -> Result<Vec<u8>, SignError> {
    use std::io::Read;
    let f = std::fs::File::open(path)
        .map_err(|e| SignError::Key(format!("{}: {e}", path.display())))?;
    let mut buf = Vec::new();
    f.take(max + 1)
        .read_to_end(&mut buf)
        .map_err(|e| SignError::Key(format!("{}: {e}", path.display())))?;
    if buf.len() as u64 > max {
        return Err(SignError::TooLarge {
            what: "input file",
            len: buf.len() as u64,
            max,
        });
    }
    Ok(buf)
}

#[cfg(test)]
mod tests;
