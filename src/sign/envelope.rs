//! One bundle: [`sign_payload`] wraps a payload in a signed Sigstore bundle with the
//! [`SigningMaterial`]; [`verify_bundle`] checks a bundle's signer against a [`Trust`] and returns
//! its statement. Shared by tree signing (`mod.rs`) and attestations (`attest`).

use super::bundle::{self, CertificateChain, PublicKeyIdentifier, RawBytes, VerificationMaterial};
use super::error::SignError;
use super::keys::{PrivateKey, PublicKey};
use super::limits::Limits;
use super::signer::{Signer, SubjectMatch};
use super::sigstore::{self, TrustedRoot};
use super::statement::{self, IN_TOTO_PAYLOAD_TYPE, pae};
use super::x509::{self, Cert};

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
