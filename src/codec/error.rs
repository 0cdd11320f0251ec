//! [`ErrorKind`], why a decoder failed. A leaf of `codec`: it imports nothing from the folder, so
//! every decoder returns it without an arrow back up to `mod.rs`.

/// Why a decoder could not decode its input. The blob decoder of `code::python::decode`
/// reports it for one step of a chain; its limit names (`blob_decoded_bytes`,
/// `blob_decode_steps`, `code_eval_bytes`) are those of the limits table, and the last two
/// variants are the chain's own (a step never returns them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// base64 or base32 whose last group is not completed by its `=` padding (Python:
    /// `binascii.Error: Incorrect padding`, or a single data character left over).
    #[error("incorrect padding")]
    BadPadding,
    /// A byte that is not in the codec's alphabet, at an offset in the step's input
    /// (base32, base85, Ascii85, hex; also Ascii85's `z` inside a group).
    #[error("byte {byte:#04x} at offset {at} is not valid here")]
    BadCharacter {
        /// Offset in the step's input.
        at: usize,
        /// The byte.
        byte: u8,
    },
    /// An odd number of hex digits (`binascii.unhexlify`).
    #[error("odd number of hex digits")]
    OddLength,
    /// A base85/Ascii85 group whose value does not fit in 32 bits.
    #[error("group at offset {at} overflows 32 bits")]
    Overflow {
        /// Offset of the group in the step's input.
        at: usize,
    },
    /// A compressed stream that ends before its end marker.
    #[error("compressed stream ends early")]
    Truncated,
    /// A compressed stream the decompressor rejects (bad header, checksum, data).
    #[error("corrupt compressed stream: {0}")]
    Corrupt(String),
    /// The step would produce more than its cap (the blob decoder's `max_decoded_bytes`).
    #[error("decodes to more than {limit} bytes (limit blob_decoded_bytes)")]
    TooLarge {
        /// The cap.
        limit: usize,
    },
    /// The chain has more than its cap of steps (the blob decoder's `max_steps`).
    #[error("more than {limit} decoding steps (limit blob_decode_steps)")]
    TooManySteps {
        /// The cap.
        limit: usize,
    },
    /// The step would exceed what is left of the file's evaluation byte budget (the caller's
    /// budget, shared by every blob, string and payload of one file).
    #[error("the file's evaluation byte budget is spent (limit code_eval_bytes)")]
    BudgetSpent,
}
