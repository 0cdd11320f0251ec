//! The model at the bottom of the crate: the vocabulary every stage speaks and nothing more.
//!
//! Rules and severities, how a rule's level grades by severity, detections and findings, formats
//! and kinds, the file records and the report, the one table of limits, and the clock. This
//! module imports nothing else of the crate, so walk, inspect, provenance, policy and report can
//! all depend on it without depending on each other (a test in `tests/architecture` keeps it
//! that way).

pub mod clock;
pub mod facts;
pub mod finding;
pub mod format;
pub mod grading;
pub mod limits;
pub mod problem;
pub mod report;
pub mod rules;
