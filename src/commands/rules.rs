//! `modelgate rules`: the rule registry, as text or JSON.

use std::io::Write;

use anyhow::Result;
use modelgate::model::rules::{RuleId, RuleInfo};

use crate::cli::TextOrJson;

/// Lists every rule.
pub fn run(format: TextOrJson) -> Result<u8> {
    let mut w = super::output(None)?;
    match format {
        TextOrJson::Json => {
            let all: Vec<RuleInfo> = RuleId::ALL.iter().map(|r| RuleInfo::from(*r)).collect();
            serde_json::to_writer_pretty(&mut w, &all)?;
            writeln!(w)?;
        }
        TextOrJson::Text => {
            for r in RuleId::ALL {
                writeln!(
                    w,
                    "{:<8} {:<26} {:<9} {}",
                    r.code(),
                    r.name(),
                    r.default_severity().as_str(),
                    r.summary()
                )?;
            }
        }
    }
    w.flush()?;
    Ok(0)
}
