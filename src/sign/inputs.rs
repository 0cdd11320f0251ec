//! Reading signing and trust material from files, under size caps: the one place the signing
//! code opens a key, a certificate or a trusted root, so the CLI stays a thin caller.

use std::path::{Path, PathBuf};

use super::envelope::{SigningMaterial, Trust};
use super::error::SignError;
use super::keys::{PrivateKey, PublicKey};
use super::limits::Limits;
use super::signer::SubjectMatch;
use super::sigstore::TrustedRoot;
use super::x509::Cert;

fn read_text(path: &Path, limits: &Limits) -> Result<String, SignError> {
    let bytes = read_small(path, limits.max_pem_bytes)?;
    String::from_utf8(bytes)
        .map_err(|_| SignError::Key(format!("{}: not UTF-8 text", path.display())))
}

fn with_path(path: &Path, e: SignError) -> SignError {
    match e {
        SignError::Key(m) => SignError::Key(format!("{}: {m}", path.display())),
        SignError::Certificate(m) => SignError::Certificate(format!("{}: {m}", path.display())),
        SignError::TrustRoot(m) => SignError::TrustRoot(format!("{}: {m}", path.display())),
        other => other,
    }
}

/// The signing material: a key, plus certificates for the certificate method.
pub fn signing_material(
    key: &Path,
    certificate_chain: &[PathBuf],
    limits: &Limits,
) -> Result<SigningMaterial, SignError> {
    let k = PrivateKey::from_pem(&read_text(key, limits)?).map_err(|e| with_path(key, e))?;
    if certificate_chain.is_empty() {
        return Ok(SigningMaterial::Key(k));
    }
    SigningMaterial::with_certificates(k, certificates(certificate_chain, limits)?)
}

/// Every certificate of the given PEM files, in order.
pub fn certificates(paths: &[PathBuf], limits: &Limits) -> Result<Vec<Cert>, SignError> {
    let mut out = Vec::new();
    for p in paths {
        let text = read_text(p, limits)?;
        out.extend(Cert::from_pem_chain(text.as_bytes(), limits).map_err(|e| with_path(p, e))?);
        if out.len() > limits.max_chain_len * 4 {
            return Err(SignError::TooLarge {
                what: "certificates given",
                len: out.len() as u64,
                max: limits.max_chain_len as u64 * 4,
            });
        }
    }
    Ok(out)
}

/// What the verifier was told to trust.
#[derive(Debug, Clone, Default)]
pub struct TrustSpec {
    /// A public key PEM.
    pub key: Option<PathBuf>,
    /// Root certificate PEMs.
    pub certificate_chain: Vec<PathBuf>,
    /// Keyless identity (exact SAN).
    pub identity: Option<String>,
    /// Keyless identity as a regular expression the whole SAN must match.
    pub identity_regex: Option<String>,
    /// Keyless issuer.
    pub issuer: Option<String>,
    /// Keyless trusted root JSON.
    pub trust_root: Option<PathBuf>,
}

/// Loads the trust named by `spec`; exactly one method must be given.
pub fn trust(spec: &TrustSpec, limits: &Limits) -> Result<Trust, SignError> {
    let identity = match (&spec.identity, &spec.identity_regex) {
        (Some(exact), None) => Some(SubjectMatch::Exact(exact.clone())),
        (None, Some(pattern)) => Some(SubjectMatch::regex(pattern)?),
        (None, None) => None,
        (Some(_), Some(_)) => {
            return Err(SignError::Method(
                "give the keyless identity once: --identity or --identity-regex".into(),
            ));
        }
    };
    match (&spec.key, spec.certificate_chain.is_empty(), identity) {
        (Some(k), true, None) => {
            let pk = PublicKey::from_pem(&read_text(k, limits)?).map_err(|e| with_path(k, e))?;
            Ok(Trust::Key(pk))
        }
        (None, false, None) => Ok(Trust::Certificates(certificates(&spec.certificate_chain, limits)?)),
        (None, true, Some(identity)) => {
            let (Some(issuer), Some(root)) = (&spec.issuer, &spec.trust_root) else {
                return Err(SignError::Method(
                    "keyless verification needs --identity (or --identity-regex), --issuer and --trust-root".into(),
                ));
            };
            let bytes = read_small(root, limits.max_trust_root_bytes)
                .map_err(|e| with_path(root, e))?;
            Ok(Trust::Sigstore {
                root: TrustedRoot::parse(&bytes, limits).map_err(|e| with_path(root, e))?,
                identity,
                issuer: issuer.clone(),
            })
        }
        _ => Err(SignError::Method(
            "say whom to trust: exactly one of --key, --certificate-chain, or --identity/--issuer/--trust-root".into(),
        )),
    }
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
