//! [`SignError`], the one error of signing and verifying. A leaf of `sign`: it imports nothing
//! from the folder, so every signing module can return it without an arrow back up to `mod.rs`.

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
