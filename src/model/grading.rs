//! Grading: how a rule's level becomes an action for each severity.
//!
//! A policy gives every rule a level (`deny`, `warn`, `allow`), but a finding's severity says how
//! bad this one is, and some rules fire on things that differ a lot in how bad they are. A
//! [`Grading`] is the whole answer for one rule: findings from `deny_from` up are denied, from
//! `warn_from` up warned, the rest allowed (recorded). The policy may write one per rule
//! (`SRC006 = { deny_from = "medium" }`); a plain level means the grading this table declares
//! for it ([`declared`]), so every rule's meaning is data here, not a special case in the policy.

use std::fmt;

use super::finding::Action;
use super::rules::{RuleId, Severity};

/// A monotone map from severity to action: a more severe finding never gets a milder action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Grading {
    /// The lowest severity that is warned (or denied); lower ones are allowed. `None`: nothing
    /// below `deny_from` is warned, so it is all allowed.
    pub warn_from: Option<Severity>,
    /// The lowest severity that is denied. `None`: nothing is denied.
    pub deny_from: Option<Severity>,
}

impl Grading {
    /// The same action at every severity.
    pub const fn uniform(action: Action) -> Grading {
        match action {
            Action::Allow => Grading {
                warn_from: None,
                deny_from: None,
            },
            Action::Warn => Grading {
                warn_from: Some(Severity::Info),
                deny_from: None,
            },
            Action::Deny => Grading {
                warn_from: None,
                deny_from: Some(Severity::Info),
            },
        }
    }

    /// What a level means for a rule that declares nothing else: the level at every severity,
    /// except that `warn` allows an `info` finding. An info finding has nothing to review (a
    /// pickle read in full whose every import is on the safe list, issue 32), so warning about it
    /// would only teach people to skip warnings; `deny` still denies it, so a policy that refuses
    /// every pickle (`strict`) keeps doing so.
    pub const fn standard(level: Action) -> Grading {
        match level {
            Action::Warn => Grading {
                warn_from: Some(Severity::Low),
                deny_from: None,
            },
            other => Grading::uniform(other),
        }
    }

    /// The action for a finding of `severity`.
    pub fn action(self, severity: Severity) -> Action {
        if self.deny_from.is_some_and(|d| severity >= d) {
            Action::Deny
        } else if self.warn_from.is_some_and(|w| severity >= w) {
            Action::Warn
        } else {
            Action::Allow
        }
    }

    /// The action for each severity, from `info` to `critical`.
    pub fn actions(self) -> [(Severity, Action); 5] {
        Severity::ALL.map(|s| (s, self.action(s)))
    }

    /// Whether every severity gets the same action.
    pub fn is_uniform(self) -> bool {
        let first = self.action(Severity::Info);
        Severity::ALL.iter().all(|s| self.action(*s) == first)
    }
}

/// Severity bands with their action, from `info` up: `info allow, low..critical warn`;
/// a uniform grading is `deny at every severity`.
impl fmt::Display for Grading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_uniform() {
            return write!(
                f,
                "{} at every severity",
                self.action(Severity::Info).as_str()
            );
        }
        let actions = self.actions();
        let mut bands: Vec<(Severity, Severity, Action)> = Vec::new();
        for (s, a) in actions {
            match bands.last_mut() {
                Some((_, to, action)) if *action == a => *to = s,
                _ => bands.push((s, s, a)),
            }
        }
        let text: Vec<String> = bands
            .iter()
            .map(|(from, to, a)| {
                if from == to {
                    format!("{} {}", from.as_str(), a.as_str())
                } else {
                    format!("{}..{} {}", from.as_str(), to.as_str(), a.as_str())
                }
            })
            .collect();
        f.write_str(&text.join(", "))
    }
}

/// The rules whose levels grade differently from [`Grading::standard`], with why. Every other
/// rule grades every level the standard way. A policy that writes a level for one of these gets
/// the grading declared here; it can write its own grading table instead.
pub const DECLARED: &[(RuleId, Action, Grading)] = &[
    // Issue 30: at `deny`, SRC006 denies high and critical sites (a process, decoded code, a
    // hard-coded host that is not the Hub's, a credential file) and warns about medium and low
    // ones (a URL the caller passes, one secret variable read, a kernel compiled at run time),
    // so ordinary model code that fetches an image is not blocked while every payload class is.
    (
        RuleId::CustomCodeBehaviour,
        Action::Deny,
        Grading {
            warn_from: Some(Severity::Info),
            deny_from: Some(Severity::High),
        },
    ),
    // Issue 31: at `warn`, SRC007 still denies a critical finding (a library whose initialiser
    // can start a process, a shipped library the repository's code loads that imports one).
    (
        RuleId::NativeCode,
        Action::Warn,
        Grading {
            warn_from: Some(Severity::Low),
            deny_from: Some(Severity::Critical),
        },
    ),
];

/// What `level` means for `rule`: its [`DECLARED`] grading, else the standard one.
pub fn declared(rule: RuleId, level: Action) -> Grading {
    DECLARED
        .iter()
        .find(|(r, l, _)| *r == rule && *l == level)
        .map_or(Grading::standard(level), |(_, _, g)| *g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_gradings_give_their_action_everywhere() {
        for a in [Action::Allow, Action::Warn, Action::Deny] {
            let g = Grading::uniform(a);
            assert!(g.is_uniform());
            assert!(Severity::ALL.iter().all(|s| g.action(*s) == a));
            assert_eq!(g.to_string(), format!("{} at every severity", a.as_str()));
        }
    }

    #[test]
    fn the_standard_warn_records_info_and_warns_the_rest() {
        let g = Grading::standard(Action::Warn);
        assert_eq!(g.action(Severity::Info), Action::Allow);
        for s in [
            Severity::Low,
            Severity::Medium,
            Severity::High,
            Severity::Critical,
        ] {
            assert_eq!(g.action(s), Action::Warn);
        }
        assert_eq!(g.to_string(), "info allow, low..critical warn");
        assert_eq!(
            Grading::standard(Action::Deny),
            Grading::uniform(Action::Deny)
        );
        assert_eq!(
            Grading::standard(Action::Allow),
            Grading::uniform(Action::Allow)
        );
    }

    #[test]
    fn declared_gradings_are_the_graded_rules_and_nothing_else() {
        assert_eq!(
            declared(RuleId::CustomCodeBehaviour, Action::Deny).to_string(),
            "info..medium warn, high..critical deny"
        );
        assert_eq!(
            declared(RuleId::NativeCode, Action::Warn).to_string(),
            "info allow, low..high warn, critical deny"
        );
        assert_eq!(
            declared(RuleId::CustomCodeBehaviour, Action::Warn),
            Grading::standard(Action::Warn)
        );
        assert_eq!(
            declared(RuleId::PickleFormat, Action::Warn),
            Grading::standard(Action::Warn)
        );
    }

    #[test]
    fn every_declared_grading_is_monotone_and_keeps_the_level_at_the_rules_severity() {
        for (rule, level, g) in DECLARED {
            if let (Some(w), Some(d)) = (g.warn_from, g.deny_from) {
                assert!(w <= d, "{rule}");
            }
            // A level still means itself for a finding of the rule's own severity.
            assert_eq!(g.action(rule.default_severity()), *level, "{rule}");
        }
    }

    #[test]
    fn bands_with_no_warning_are_allow_then_deny() {
        let g = Grading {
            warn_from: None,
            deny_from: Some(Severity::High),
        };
        assert_eq!(g.to_string(), "info..medium allow, high..critical deny");
    }
}
