//! The report: everything one scan learned, in the shape of the JSON schema (schema_version 1),
//! and the renderers that turn it into text, JSON, SARIF, Markdown and CycloneDX.
//!
//! Renderers write to `&mut dyn Write` and never decide the exit code: that is computed once,
//! from the report, by [`crate::model::report::Report::exit_code`].

pub mod cyclonedx;
pub mod json;
pub mod markdown;
pub mod sarif;
pub mod text;

/// Output formats for `scan --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// Human-readable text.
    Text,
    /// The JSON report (schema_version 1).
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// A Markdown summary (GitHub job summaries).
    Markdown,
}
