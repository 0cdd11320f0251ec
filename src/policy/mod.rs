//! INTERIM policy (replaced by the policy engine).
#![allow(missing_docs)]
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::finding::{Action, Detection, Finding};
use crate::rules::RuleId;

#[derive(Debug, Clone)]
pub enum PolicySource {
    Builtin(&'static str),
    File(PathBuf),
}
impl std::fmt::Display for PolicySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PolicySource::Builtin(n) => write!(f, "built-in:{n}"),
            PolicySource::File(p) => write!(f, "{}", p.display()),
        }
    }
}
#[derive(Debug, Clone)]
pub struct Policy {
    pub source: PolicySource,
    pub levels: BTreeMap<RuleId, Action>,
    pub limits: BTreeMap<String, u64>,
}
#[derive(Debug)]
pub struct PolicyError(pub String);
impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
pub fn builtin(_: &str) -> Option<Policy> {
    Some(Policy {
        source: PolicySource::Builtin("default"),
        levels: RuleId::ALL.iter().map(|r| (*r, Action::Warn)).collect(),
        limits: BTreeMap::new(),
    })
}
pub fn load_file(p: &std::path::Path) -> Result<Policy, PolicyError> {
    Err(PolicyError(format!("{}: not yet", p.display())))
}
impl Policy {
    pub fn limit(&self, _n: &str) -> u64 {
        u64::MAX
    }
    pub fn evaluate(
        &self,
        d: Vec<Detection>,
        digest_of: &dyn Fn(&str) -> Option<String>,
        _today: time::Date,
    ) -> Vec<Finding> {
        d.into_iter()
            .map(|d| {
                let a = self.levels[&d.rule];
                let dg = digest_of(&d.path);
                Finding::from_detection(d, a, dg.as_deref())
            })
            .collect()
    }
}
