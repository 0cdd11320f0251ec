//! The JSON report: the [`Report`] serialized as is (schema_version 1), pretty-printed, with a
//! trailing newline. Keys come out sorted where they are maps, so equal reports are equal bytes.

use std::io::{self, Write};

use crate::model::report::Report;

/// Writes the report as JSON.
pub fn render(report: &Report, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, report)?;
    w.write_all(b"\n")
}

/// Writes the report as one line of JSON (JSON Lines: `scan --repos-from`).
pub fn render_line(report: &Report, w: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer(&mut *w, report)?;
    w.write_all(b"\n")
}
