//! [`Ratio`], the decompression-bomb test. A leaf of `codec`: it imports nothing from the folder,
//! so every decoder applies it without an arrow back up to `mod.rs`.

/// The decompression-bomb test every streaming decoder applies (compressed files, zip members,
/// xz and lzma in memory): output per input byte, judged once the output is past a floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ratio {
    /// Highest output/input ratio tolerated.
    pub max_ratio: u64,
    /// Output size at and below which the ratio is not judged.
    pub min_bytes: u64,
}

impl Ratio {
    /// Whether `out` bytes decoded from `input` compressed bytes (at least one counted) break
    /// the ratio.
    pub fn exceeded(&self, out: u64, input: u64) -> bool {
        out > self.min_bytes && out > input.max(1).saturating_mul(self.max_ratio)
    }
}
