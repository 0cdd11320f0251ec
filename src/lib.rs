//! modelgate: a supply-chain policy gate for machine-learning model repositories.
//!
//! ```text
//! walk ──> classify ──> inspect (one pass per file: digest + format parser) ──> facts
//!                                                    provenance (git, code, model card) ──> facts
//! facts ──> policy::evaluate ──> findings ──> report: text | json | sarif | markdown
//! facts ──────────────────────────────────────────> sbom: CycloneDX 1.5 (json | xml)
//! ```
//!
//! Facts are not judgements: inspectors describe what is there and produce
//! [`finding::Detection`]s; only the [`policy`] decides deny / warn / allow. Nothing from a
//! scanned file is ever executed, imported or unpickled.

pub mod app;
pub mod classify;
pub mod cli;
pub mod finding;
pub mod inspect;
pub mod knowledge;
pub mod policy;
pub mod progress;
pub mod provenance;
pub mod report;
pub mod repository;
pub mod rules;
pub mod sign;
pub mod verify;
pub mod walk;
