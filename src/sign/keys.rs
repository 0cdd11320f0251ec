//! ECDSA keys (P-256 with SHA-256, P-384 with SHA-384), as the reference's key method uses them.
//!
//! The reference accepts only elliptic-curve keys (P-256, P-384, P-521) and hashes with the
//! curve's matching SHA-2; signatures are DER-encoded. P-521 is not supported here (no audited
//! pure-Rust verifier in the dependency set); Ed25519 is not part of the reference's key method.
//! Keys are wrapped in our own types so the rest of the code never sees a RustCrypto type.

use p256::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePublicKey, LineEnding};
use sha2::{Digest, Sha256};

use super::error::SignError;
use super::statement::hex;

/// A public key that can verify a model signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublicKey {
    /// NIST P-256, ECDSA with SHA-256.
    P256(p256::ecdsa::VerifyingKey),
    /// NIST P-384, ECDSA with SHA-384.
    P384(p384::ecdsa::VerifyingKey),
}

impl PublicKey {
    /// Reads a PEM `PUBLIC KEY` (SubjectPublicKeyInfo).
    pub fn from_pem(pem: &str) -> Result<PublicKey, SignError> {
        if let Ok(k) = p256::ecdsa::VerifyingKey::from_public_key_pem(pem) {
            return Ok(PublicKey::P256(k));
        }
        if let Ok(k) = p384::ecdsa::VerifyingKey::from_public_key_pem(pem) {
            return Ok(PublicKey::P384(k));
        }
        Err(SignError::Key(
            "not a PEM public key for ECDSA P-256 or P-384".into(),
        ))
    }

    /// Reads a DER SubjectPublicKeyInfo.
    pub fn from_spki_der(der: &[u8]) -> Result<PublicKey, SignError> {
        if let Ok(k) = p256::ecdsa::VerifyingKey::from_public_key_der(der) {
            return Ok(PublicKey::P256(k));
        }
        if let Ok(k) = p384::ecdsa::VerifyingKey::from_public_key_der(der) {
            return Ok(PublicKey::P384(k));
        }
        Err(SignError::Key(
            "unsupported public key (only ECDSA P-256 and P-384)".into(),
        ))
    }

    /// The key as PEM SubjectPublicKeyInfo with LF line endings (what Python's `cryptography`
    /// writes, so the hint matches the reference's).
    pub fn to_pem(&self) -> String {
        let r = match self {
            PublicKey::P256(k) => k.to_public_key_pem(LineEnding::LF),
            PublicKey::P384(k) => k.to_public_key_pem(LineEnding::LF),
        };
        r.unwrap_or_default()
    }

    /// The reference's key hint: hex SHA-256 of [`Self::to_pem`].
    pub fn hint(&self) -> String {
        hex(&Sha256::digest(self.to_pem().as_bytes()))
    }

    /// `sha256:<hex>` of the DER SubjectPublicKeyInfo: the fingerprint reports and policies use.
    pub fn fingerprint(&self) -> String {
        let der = match self {
            PublicKey::P256(k) => k.to_public_key_der().map(|d| d.as_bytes().to_vec()),
            PublicKey::P384(k) => k.to_public_key_der().map(|d| d.as_bytes().to_vec()),
        }
        .unwrap_or_default();
        format!("sha256:{}", hex(&Sha256::digest(der)))
    }

    /// Curve name.
    pub fn curve(&self) -> &'static str {
        match self {
            PublicKey::P256(_) => "P-256",
            PublicKey::P384(_) => "P-384",
        }
    }

    /// Verifies a DER ECDSA signature over `msg` with the curve's hash.
    pub fn verify(&self, msg: &[u8], der_sig: &[u8]) -> Result<(), SignError> {
        use ecdsa::signature::Verifier;
        let bad = |_| SignError::BadSignature;
        match self {
            PublicKey::P256(k) => {
                let sig = p256::ecdsa::Signature::from_der(der_sig).map_err(bad)?;
                k.verify(msg, &sig).map_err(bad)
            }
            PublicKey::P384(k) => {
                let sig = p384::ecdsa::Signature::from_der(der_sig).map_err(bad)?;
                k.verify(msg, &sig).map_err(bad)
            }
        }
    }

    /// Verifies a DER ECDSA signature over an already computed digest (certificate chains,
    /// where the certificate's algorithm, not the curve, names the hash).
    pub fn verify_prehash(&self, digest: &[u8], der_sig: &[u8]) -> Result<(), SignError> {
        use ecdsa::signature::hazmat::PrehashVerifier;
        let bad = |_| SignError::BadSignature;
        match self {
            PublicKey::P256(k) => {
                let sig = p256::ecdsa::Signature::from_der(der_sig).map_err(bad)?;
                k.verify_prehash(digest, &sig).map_err(bad)
            }
            PublicKey::P384(k) => {
                let sig = p384::ecdsa::Signature::from_der(der_sig).map_err(bad)?;
                k.verify_prehash(digest, &sig).map_err(bad)
            }
        }
    }
}

/// A private signing key.
#[derive(Clone)]
pub enum PrivateKey {
    /// NIST P-256.
    P256(p256::ecdsa::SigningKey),
    /// NIST P-384.
    P384(p384::ecdsa::SigningKey),
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        write!(f, "PrivateKey({})", self.public().curve())
    }
}

impl PrivateKey {
    /// Reads a PEM `EC PRIVATE KEY` (SEC1) or unencrypted `PRIVATE KEY` (PKCS#8).
    pub fn from_pem(pem: &str) -> Result<PrivateKey, SignError> {
        if pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")
            || pem.contains("Proc-Type: 4,ENCRYPTED")
        {
            return Err(SignError::Key(
                "encrypted private keys are not supported; decrypt it first (openssl pkey -in KEY -out PLAIN)".into(),
            ));
        }
        if let Ok(k) = p256::SecretKey::from_sec1_pem(pem) {
            return Ok(PrivateKey::P256(k.into()));
        }
        if let Ok(k) = p384::SecretKey::from_sec1_pem(pem) {
            return Ok(PrivateKey::P384(k.into()));
        }
        if let Ok(k) = p256::ecdsa::SigningKey::from_pkcs8_pem(pem) {
            return Ok(PrivateKey::P256(k));
        }
        if let Ok(k) = p384::ecdsa::SigningKey::from_pkcs8_pem(pem) {
            return Ok(PrivateKey::P384(k));
        }
        Err(SignError::Key(
            "not a PEM private key for ECDSA P-256 or P-384".into(),
        ))
    }

    /// The matching public key.
    pub fn public(&self) -> PublicKey {
        match self {
            PrivateKey::P256(k) => PublicKey::P256(*k.verifying_key()),
            PrivateKey::P384(k) => PublicKey::P384(*k.verifying_key()),
        }
    }

    /// Deterministic (RFC 6979) DER ECDSA signature over `msg` with the curve's hash.
    pub fn sign(&self, msg: &[u8]) -> Vec<u8> {
        use ecdsa::signature::Signer;
        match self {
            PrivateKey::P256(k) => {
                let s: p256::ecdsa::Signature = k.sign(msg);
                s.to_der().as_bytes().to_vec()
            }
            PrivateKey::P384(k) => {
                let s: p384::ecdsa::Signature = k.sign(msg);
                s.to_der().as_bytes().to_vec()
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fixed P-256 test key (SEC1 PEM), never used outside tests.
    pub const P256_SEC1: &str = "-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIJKGp31BjuwyKxwmoF0qQhzMAZIsC8cTvzF3aMqB5l2+oAoGCCqGSM49
AwEHoUQDQgAE9HUx9LRmygowWKqo18o8bzZTHCELCNFcKsKlwUw857ye5mOi+nYu
K1OMqqKNJquyz0IZzB9iCgS3jqqLiFOjeQ==
-----END EC PRIVATE KEY-----
";

    #[test]
    fn sign_verify_round_trip_and_hint() {
        let k = PrivateKey::from_pem(P256_SEC1).unwrap();
        let sig = k.sign(b"msg");
        k.public().verify(b"msg", &sig).unwrap();
        assert!(matches!(
            k.public().verify(b"other", &sig),
            Err(SignError::BadSignature)
        ));
        // Value computed by the reference tool for this key (sha256 of its PEM public key).
        assert_eq!(
            k.public().hint(),
            "cbdb4ef68d760860be3bf594394d0046f9f4c85382336f8d386714069411b16c"
        );
        let back = PublicKey::from_pem(&k.public().to_pem()).unwrap();
        assert_eq!(back, k.public());
    }

    #[test]
    fn rejects_garbage_and_encrypted_keys() {
        assert!(matches!(
            PrivateKey::from_pem("nope"),
            Err(SignError::Key(_))
        ));
        let e = PrivateKey::from_pem(
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAA==\n-----END ENCRYPTED PRIVATE KEY-----\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("encrypted"));
        assert!(matches!(
            PublicKey::from_pem("nope"),
            Err(SignError::Key(_))
        ));
        assert!(matches!(
            PublicKey::from_spki_der(&[0x30, 0]),
            Err(SignError::Key(_))
        ));
    }

    #[test]
    fn rejects_malformed_signature() {
        let k = PrivateKey::from_pem(P256_SEC1).unwrap();
        assert!(matches!(
            k.public().verify(b"m", &[0x30, 0x02, 0x01]),
            Err(SignError::BadSignature)
        ));
    }
}
