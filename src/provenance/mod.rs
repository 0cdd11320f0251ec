//! Provenance: where the scanned files came from. Git state, Git LFS pointers, the Hugging Face
//! cache layout, model cards, `auto_map` and the config fields that make a loader fetch code.
//! Dependencies (git2, YAML) are wrapped here; the rest of the crate sees only these modules'
//! own types. What shipped code does is [`crate::code`].

pub mod automap;
pub mod card;
pub mod git;
pub mod hfcache;
pub mod lfs;
pub mod loader_code;
pub mod yaml;
