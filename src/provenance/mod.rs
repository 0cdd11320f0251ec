//! Provenance: where the scanned files came from and what code comes with them. Git state, Git
//! LFS pointers, the Hugging Face cache layout, Python code that downloads or loads models, and
//! model cards. Dependencies (git2, tree-sitter, YAML) are wrapped here; the rest of the crate
//! sees only these modules' own types.

pub mod automap;
pub mod card;
pub mod code;
pub mod git;
pub mod hfcache;
pub mod lfs;
pub mod loader_code;
pub mod notebook;
pub mod yaml;
