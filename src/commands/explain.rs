//! `modelgate explain RULE`: one rule's help, levels per preset and an example.

use std::io::Write;

use anyhow::{Result, bail};
use modelgate::model::rules::RuleId;

/// Explains `rule` (a code or a name).
pub fn run(rule: &str) -> Result<u8> {
    let Some(id) = RuleId::lookup(rule) else {
        match RuleId::suggest(rule) {
            Some(s) => bail!("unknown rule `{rule}`; did you mean `{s}`?"),
            None => bail!("unknown rule `{rule}` (see `modelgate rules`)"),
        }
    };
    let mut w = super::process::output(None)?;
    modelgate::policy::explain(id, &mut w)?;
    w.flush()?;
    Ok(0)
}
