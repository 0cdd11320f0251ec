//! X.509 certificates for the certificate and keyless methods: chain building to given roots,
//! validity at a given time, key usage, and the identity Fulcio writes into a certificate.
//!
//! Only ECDSA issuers (P-256/P-384 with SHA-256/SHA-384) are verified: that covers Sigstore's
//! Fulcio roots and the reference's own test PKI. An unknown critical extension, a non-CA
//! issuer, an issuer whose key usage forbids certificate signing, or a chain longer than the
//! limit is refused rather than skipped.

use der::{Decode, Encode};
use sha2::{Digest, Sha256, Sha384};
use x509_cert::Certificate;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAltName};

use super::error::SignError;
use super::keys::PublicKey;
use super::limits::Limits;

const OID_ECDSA_SHA256: &str = "1.2.840.10045.4.3.2";
const OID_ECDSA_SHA384: &str = "1.2.840.10045.4.3.3";
const OID_BASIC_CONSTRAINTS: &str = "2.5.29.19";
const OID_KEY_USAGE: &str = "2.5.29.15";
const OID_EXT_KEY_USAGE: &str = "2.5.29.37";
const OID_SAN: &str = "2.5.29.17";
const OID_CODE_SIGNING: &str = "1.3.6.1.5.5.7.3.3";
/// Fulcio: OIDC issuer (v1, raw bytes).
const OID_FULCIO_ISSUER_V1: &str = "1.3.6.1.4.1.57264.1.1";
/// Fulcio: OIDC issuer (v2, DER UTF8String).
const OID_FULCIO_ISSUER_V2: &str = "1.3.6.1.4.1.57264.1.8";

/// A parsed certificate with the facts the verifiers need.
#[derive(Debug, Clone)]
pub struct Cert {
    /// The decoded certificate.
    pub inner: Certificate,
    /// Its DER bytes as given.
    pub der: Vec<u8>,
}

impl Cert {
    /// Decodes DER under a size cap.
    pub fn from_der(der: &[u8], limits: &Limits) -> Result<Cert, SignError> {
        if der.len() > limits.max_cert_bytes {
            return Err(SignError::TooLarge {
                what: "certificate",
                len: der.len() as u64,
                max: limits.max_cert_bytes as u64,
            });
        }
        let inner = Certificate::from_der(der)
            .map_err(|e| SignError::Certificate(format!("not a DER certificate: {e}")))?;
        Ok(Cert {
            inner,
            der: der.to_vec(),
        })
    }

    /// Reads every `CERTIFICATE` block of a PEM text.
    pub fn from_pem_chain(pem: &[u8], limits: &Limits) -> Result<Vec<Cert>, SignError> {
        let certs = Certificate::load_pem_chain(pem)
            .map_err(|e| SignError::Certificate(format!("not a PEM certificate chain: {e}")))?;
        if certs.is_empty() {
            return Err(SignError::Certificate("no certificate in PEM".into()));
        }
        certs
            .into_iter()
            .map(|c| {
                let der = c
                    .to_der()
                    .map_err(|e| SignError::Certificate(e.to_string()))?;
                Cert::from_der(&der, limits)
            })
            .collect()
    }

    /// The subject public key.
    pub fn public_key(&self) -> Result<PublicKey, SignError> {
        let spki = self
            .inner
            .tbs_certificate
            .subject_public_key_info
            .to_der()
            .map_err(|e| SignError::Certificate(e.to_string()))?;
        PublicKey::from_spki_der(&spki)
    }

    /// `sha256:<hex>` of the DER certificate.
    pub fn fingerprint(&self) -> String {
        format!(
            "sha256:{}",
            super::statement::hex(&Sha256::digest(&self.der))
        )
    }

    /// Subject as an RFC 4514 string.
    pub fn subject(&self) -> String {
        self.inner.tbs_certificate.subject.to_string()
    }

    fn extension(&self, oid: &str) -> Option<&[u8]> {
        self.inner
            .tbs_certificate
            .extensions
            .as_ref()?
            .iter()
            .find(|e| e.extn_id.to_string() == oid)
            .map(|e| e.extn_value.as_bytes())
    }

    fn check_critical_extensions(&self) -> Result<(), SignError> {
        let known = [
            OID_BASIC_CONSTRAINTS,
            OID_KEY_USAGE,
            OID_EXT_KEY_USAGE,
            OID_SAN,
        ];
        for e in self.inner.tbs_certificate.extensions.iter().flatten() {
            let id = e.extn_id.to_string();
            if e.critical && !known.contains(&id.as_str()) {
                return Err(SignError::Certificate(format!(
                    "{}: unknown critical extension {id}",
                    self.subject()
                )));
            }
        }
        Ok(())
    }

    fn is_ca(&self) -> Result<bool, SignError> {
        let Some(v) = self.extension(OID_BASIC_CONSTRAINTS) else {
            return Ok(false);
        };
        let bc = BasicConstraints::from_der(v)
            .map_err(|e| SignError::Certificate(format!("basicConstraints: {e}")))?;
        Ok(bc.ca)
    }

    fn key_usage(&self) -> Result<Option<KeyUsage>, SignError> {
        self.extension(OID_KEY_USAGE)
            .map(|v| {
                KeyUsage::from_der(v).map_err(|e| SignError::Certificate(format!("keyUsage: {e}")))
            })
            .transpose()
    }

    fn has_code_signing_eku(&self) -> Result<bool, SignError> {
        let Some(v) = self.extension(OID_EXT_KEY_USAGE) else {
            return Ok(false);
        };
        let eku = ExtendedKeyUsage::from_der(v)
            .map_err(|e| SignError::Certificate(format!("extKeyUsage: {e}")))?;
        Ok(eku.0.iter().any(|o| o.to_string() == OID_CODE_SIGNING))
    }

    /// Whether the certificate may sign data: key usage digitalSignature, or the code-signing
    /// extended key usage (the reference accepts either).
    pub fn can_sign(&self) -> Result<bool, SignError> {
        if self.key_usage()?.is_some_and(|ku| ku.digital_signature()) {
            return Ok(true);
        }
        self.has_code_signing_eku()
    }

    /// Not-before and not-after, in seconds since the epoch.
    pub fn validity(&self) -> (i64, i64) {
        let v = &self.inner.tbs_certificate.validity;
        (
            v.not_before.to_unix_duration().as_secs() as i64,
            v.not_after.to_unix_duration().as_secs() as i64,
        )
    }

    fn check_time(&self, at: i64) -> Result<(), SignError> {
        let (nb, na) = self.validity();
        if at < nb || at > na {
            return Err(SignError::Certificate(format!(
                "{}: not valid at {} (valid {} .. {})",
                self.subject(),
                fmt_time(at),
                fmt_time(nb),
                fmt_time(na)
            )));
        }
        Ok(())
    }

    /// Every SAN as text: email, URI, DNS name (Fulcio identities are emails or URIs).
    pub fn san_identities(&self) -> Result<Vec<String>, SignError> {
        let Some(v) = self.extension(OID_SAN) else {
            return Ok(Vec::new());
        };
        let san = SubjectAltName::from_der(v)
            .map_err(|e| SignError::Certificate(format!("subjectAltName: {e}")))?;
        Ok(san
            .0
            .iter()
            .filter_map(|g| match g {
                GeneralName::Rfc822Name(s) => Some(s.to_string()),
                GeneralName::UniformResourceIdentifier(s) => Some(s.to_string()),
                GeneralName::DnsName(s) => Some(s.to_string()),
                _ => None,
            })
            .collect())
    }

    /// The OIDC issuer Fulcio recorded (v2 extension preferred, v1 otherwise).
    pub fn fulcio_issuer(&self) -> Result<Option<String>, SignError> {
        if let Some(v) = self.extension(OID_FULCIO_ISSUER_V2) {
            let s = der::asn1::Utf8StringRef::from_der(v)
                .map_err(|e| SignError::Certificate(format!("Fulcio issuer extension: {e}")))?;
            return Ok(Some(s.as_str().to_string()));
        }
        if let Some(v) = self.extension(OID_FULCIO_ISSUER_V1) {
            let s = std::str::from_utf8(v)
                .map_err(|_| SignError::Certificate("Fulcio issuer (v1) is not UTF-8".into()))?;
            return Ok(Some(s.to_string()));
        }
        Ok(None)
    }

    /// Checks that `issuer` signed this certificate.
    fn verify_signed_by(&self, issuer: &Cert) -> Result<(), SignError> {
        let alg = self.inner.signature_algorithm.oid.to_string();
        let tbs = self
            .inner
            .tbs_certificate
            .to_der()
            .map_err(|e| SignError::Certificate(e.to_string()))?;
        let digest: Vec<u8> = match alg.as_str() {
            OID_ECDSA_SHA256 => Sha256::digest(&tbs).to_vec(),
            OID_ECDSA_SHA384 => Sha384::digest(&tbs).to_vec(),
            other => {
                return Err(SignError::Certificate(format!(
                    "{}: unsupported signature algorithm {other} (ECDSA with SHA-256/384 only)",
                    self.subject()
                )));
            }
        };
        let sig = self.inner.signature.as_bytes().ok_or_else(|| {
            SignError::Certificate("certificate signature has unused bits".into())
        })?;
        issuer
            .public_key()?
            .verify_prehash(&digest, sig)
            .map_err(|_| {
                SignError::Certificate(format!(
                    "{}: signature does not verify with the key of {}",
                    self.subject(),
                    issuer.subject()
                ))
            })
    }

    fn may_issue(&self) -> Result<(), SignError> {
        if !self.is_ca()? {
            return Err(SignError::Certificate(format!(
                "{}: issuer is not a CA (basicConstraints)",
                self.subject()
            )));
        }
        if let Some(ku) = self.key_usage()?
            && !ku.key_cert_sign()
        {
            return Err(SignError::Certificate(format!(
                "{}: issuer key usage forbids certificate signing",
                self.subject()
            )));
        }
        Ok(())
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
pub fn fmt_time(secs: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| secs.to_string())
}

/// Verifies that `leaf` chains through `intermediates` to one of `roots`, every certificate valid
/// at `at`. Returns the path (leaf first, root last).
pub fn verify_chain<'a>(
    leaf: &'a Cert,
    intermediates: &'a [Cert],
    roots: &'a [Cert],
    at: i64,
    limits: &Limits,
) -> Result<Vec<&'a Cert>, SignError> {
    leaf.check_critical_extensions()?;
    leaf.check_time(at)?;
    let mut path = vec![leaf];
    let mut current = leaf;
    for _ in 0..=limits.max_chain_len {
        // The certificate is itself a trust anchor (a self-signed root given directly).
        if roots.iter().any(|r| r.der == current.der) {
            return Ok(path);
        }
        let issuer_name = &current.inner.tbs_certificate.issuer;
        let by_name = |c: &&Cert| c.inner.tbs_certificate.subject == *issuer_name;
        if let Some(root) = roots
            .iter()
            .filter(by_name)
            .find(|r| current.verify_signed_by(r).is_ok())
        {
            root.may_issue()?;
            root.check_time(at)?;
            path.push(root);
            return Ok(path);
        }
        let Some(next) = intermediates
            .iter()
            .filter(by_name)
            .find(|c| c.der != current.der && current.verify_signed_by(c).is_ok())
        else {
            return Err(SignError::Certificate(format!(
                "{}: no trusted issuer found for it",
                current.subject()
            )));
        };
        next.check_critical_extensions()?;
        next.may_issue()?;
        next.check_time(at)?;
        path.push(next);
        current = next;
    }
    Err(SignError::Certificate(format!(
        "certificate chain longer than {} certificates",
        limits.max_chain_len
    )))
}
