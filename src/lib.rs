//! modelgate: a supply-chain policy gate for machine-learning model repositories.
//!
//! ```text
//! roots ─> walk ─> classify ─> inspect (one pass per file: digest + format parser) ─> facts
//!                              code (Python source, bytecode, notebooks) ─────────────> facts
//!                              provenance (git, model card, HF cache, auto_map) ──────> facts
//! facts ─> policy::evaluate (once, over every root) ─> findings ─> Report
//! Report ─> report: text | json | sarif | markdown | CycloneDX SBOM
//! ```
//!
//! [`Scanner`] is the engine: built from a [`policy::Policy`] and [`ScanOptions`], given one or
//! more roots, it returns one [`model::report::Report`]. The `modelgate` binary is a thin layer of
//! commands over it. The layers, top-down (ARCHITECTURE.md has the picture):
//!
//! - [`engine`]: runs the stages, evaluates the policy once.
//! - stages: [`walk`], [`classify`], [`inspect`], [`code`] (what shipped code does),
//!   [`provenance`], [`repository`], [`policy`], [`report`] (renderers), [`verify`].
//! - data: [`knowledge`] (what is known about pickle globals, with sources) and [`model`] (the
//!   vocabulary every stage speaks; it imports nothing else of the crate).
//! - [`codec`]: every decompressor and text decoder, one header check per format, bounded;
//!   below the stages that decode (`inspect`, `code`, `classify`), importing nothing of the
//!   crate.
//!
//! Facts are not judgements: inspectors describe what is there and produce
//! [`model::finding::Detection`]s; only the [`policy`] decides deny / warn / allow. Nothing from
//! a scanned file is ever executed, imported or unpickled.

pub mod classify;
pub mod code;
pub mod codec;
pub mod engine;
pub mod hub;
pub mod inspect;
pub mod knowledge;
pub mod model;
pub mod policy;
pub mod progress;
pub mod provenance;
pub mod report;
pub mod repository;
pub mod sign;
pub mod verify;
pub mod walk;

pub use engine::{ScanOptions, Scanner};
