//! `modelgate rules`: the rule registry, as text or JSON, with the gradings rules declare.

use std::io::Write;

use anyhow::Result;
use modelgate::model::finding::Action;
use modelgate::model::grading::{DECLARED, Grading};
use modelgate::model::rules::{RuleId, RuleInfo, Severity};
use serde::Serialize;

use crate::cli::TextOrJson;

/// One rule as `rules --format json` lists it: the registry's fields, and the levels whose
/// meaning the rule declares instead of the standard grading (`model::grading::DECLARED`).
#[derive(Serialize)]
struct Listed {
    #[serde(flatten)]
    info: RuleInfo,
    /// Level -> grading, only for the levels the rule grades its own way.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    gradings: Vec<Declared>,
}

/// A level's declared grading: what each severity gets at that level.
#[derive(Serialize)]
struct Declared {
    level: Action,
    warn_from: Option<Severity>,
    deny_from: Option<Severity>,
    /// The same, in words (`info..medium warn, high..critical deny`).
    text: String,
}

fn declared(rule: RuleId) -> Vec<(Action, Grading)> {
    DECLARED
        .iter()
        .filter(|(r, _, _)| *r == rule)
        .map(|(_, level, g)| (*level, *g))
        .collect()
}

/// Lists every rule.
pub fn run(format: TextOrJson) -> Result<u8> {
    let mut w = super::process::output(None)?;
    match format {
        TextOrJson::Json => {
            let all: Vec<Listed> = RuleId::ALL
                .iter()
                .map(|r| Listed {
                    info: RuleInfo::from(*r),
                    gradings: declared(*r)
                        .into_iter()
                        .map(|(level, g)| Declared {
                            level,
                            warn_from: g.warn_from,
                            deny_from: g.deny_from,
                            text: g.to_string(),
                        })
                        .collect(),
                })
                .collect();
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
                for (level, g) in declared(*r) {
                    writeln!(w, "{:<45} at {}: {g}", "", level.as_str())?;
                }
            }
        }
    }
    w.flush()?;
    Ok(0)
}
