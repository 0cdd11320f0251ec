//! The policy: what a team decides about what the scanner found.
//!
//! Inspectors and provenance readers produce [`Detection`]s (facts). A [`Policy`], loaded from a
//! `modelgate.toml` or one of the embedded presets in `policies/`, turns them into [`Finding`]s:
//! it gives every rule a level (deny / warn / allow) and a grading (the action for each severity,
//! `model::grading`: what the registry declares for the level, or the policy's own), adds team-specific safe and dangerous pickle
//! globals and option values, names resource limits, and lists audited exceptions. Exceptions are
//! narrow on purpose (rule + path glob, optionally pinned to the file's SHA-256) and must carry a
//! reason; expired and unused ones are reported (POL001/POL002) so a stale exception cannot silently
//! cover a file nobody reviewed. Parsing and validation live in [`config`]; rendering for the
//! `policy check`, `policy init` and `explain` commands lives in [`render`]; `policy baseline`'s
//! exceptions for today's findings are written by [`baseline`].

pub mod baseline;
pub mod config;
mod diag;
pub mod render;
mod types;

use std::collections::{BTreeMap, BTreeSet};

use crate::model::finding::{Action, Detection, Finding};
use crate::model::grading::Grading;
pub use crate::model::limits::{LIMITS, LimitSpec, Limits, MAX_SAFETENSORS_HEADER, limit_spec};
use crate::model::rules::{RuleId, Severity};

pub use config::{
    PolicyError, Problem, builtin, default_gradings, default_levels, load_file, parse,
};
pub use render::{example, explain, render_effective, starter_toml};
pub use types::{
    CardOptions, Exception, MAX_POLICY_BYTES, POLICY_VERSION, PRESETS, PickleOptions, Policy,
    PolicySource, SafetensorsOptions, ScanOptions, SigningIdentity, SigningOptions, SourceOptions,
    key_fingerprint, text_digest,
};

impl Default for Policy {
    /// The built-in `default` preset's values, without a source file.
    fn default() -> Self {
        Policy {
            source: PolicySource::Builtin("default"),
            levels: default_levels().clone(),
            gradings: default_gradings().clone(),
            pickle: PickleOptions::default(),
            safetensors: SafetensorsOptions::default(),
            card: CardOptions::default(),
            source_code: SourceOptions::default(),
            scan: ScanOptions::default(),
            signing: SigningOptions::default(),
            limits: Limits::default(),
            exceptions: Vec::new(),
            sha256: PRESETS
                .first()
                .map(|(_, text)| text_digest(text))
                .unwrap_or_default(),
        }
    }
}

/// Finds the policy for a scan: `explicit` (`--policy FILE`), else `modelgate.toml` at `root`
/// (the root's directory when it is a file), else the built-in default.
pub fn locate(
    explicit: Option<&std::path::Path>,
    root: &std::path::Path,
) -> Result<Policy, PolicyError> {
    if let Some(p) = explicit {
        return load_file(p);
    }
    let dir = if root.is_dir() {
        root.to_path_buf()
    } else {
        root.parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default()
    };
    let candidate = dir.join("modelgate.toml");
    // Only a regular file counts: a FIFO or a symlink out of the repository must not be read.
    if std::fs::symlink_metadata(&candidate).is_ok_and(|m| m.is_file()) {
        return load_file(&candidate);
    }
    Ok(Policy::default())
}

impl Policy {
    /// The value of the named limit. Names come from [`LIMITS`]; an unknown name is a bug in the
    /// caller and yields 0, so it fails closed (everything exceeds the limit) instead of open.
    pub fn limit(&self, name: &str) -> u64 {
        self.limits.get(name).unwrap_or(0)
    }

    /// The level of `rule`.
    pub fn level(&self, rule: RuleId) -> Action {
        self.levels
            .get(&rule)
            .copied()
            .unwrap_or_else(|| default_levels().get(&rule).copied().unwrap_or(Action::Deny))
    }

    /// The grading of `rule`: its action for each severity.
    pub fn grading(&self, rule: RuleId) -> Grading {
        self.gradings
            .get(&rule)
            .or_else(|| default_gradings().get(&rule))
            .copied()
            .unwrap_or(Grading::uniform(Action::Deny))
    }

    /// What the policy does with a finding of `rule` at `severity`, before exceptions.
    pub fn action(&self, rule: RuleId, severity: Severity) -> Action {
        self.grading(rule).action(severity)
    }

    /// Turns detections into findings.
    ///
    /// Each detection gets its rule's grading at its severity. Then the first exception (in declaration order) that
    /// matches the rule and path glob, whose `sha256` (if set) equals the file's digest from
    /// `digest_of`, and that has not expired (`expires < today`) turns the action into `allow` and
    /// records its reason. Every expired exception yields one POL001 finding and applies to
    /// nothing; every other exception that covered nothing yields a POL002 finding. POL001/POL002
    /// findings take their level from `levels` and are never covered by exceptions, and have path
    /// `""` (the repository) with the declaring line in the message and evidence.
    ///
    /// The result is sorted by path, rule code, location and message.
    pub fn evaluate(
        &self,
        detections: Vec<Detection>,
        digest_of: &dyn Fn(&str) -> Option<String>,
        today: time::Date,
    ) -> Vec<Finding> {
        self.evaluate_in_roots(detections, digest_of, &|_| None, today)
    }

    /// [`Policy::evaluate`] for a scan of several roots: an exception's path also matches a
    /// detection's path inside its own root (`in_root`), so a policy written for one root's
    /// layout means the same in a multi-root scan. Exceptions are used, or unused, across all
    /// roots together.
    pub fn evaluate_in_roots(
        &self,
        detections: Vec<Detection>,
        digest_of: &dyn Fn(&str) -> Option<String>,
        in_root: &dyn Fn(&str) -> Option<String>,
        today: time::Date,
    ) -> Vec<Finding> {
        let mut digests: BTreeMap<String, Option<String>> = BTreeMap::new();
        let mut used = vec![false; self.exceptions.len()];
        let mut findings = Vec::with_capacity(detections.len() + self.exceptions.len());

        for d in detections {
            let digest = digests
                .entry(d.path.clone())
                .or_insert_with(|| digest_of(&d.path).map(|s| s.to_ascii_lowercase()))
                .clone();
            let inner = in_root(&d.path);
            let covering = self.exceptions.iter().enumerate().find(|(_, e)| {
                e.covers(d.rule, &d.path, digest.as_deref(), today)
                    || inner
                        .as_deref()
                        .is_some_and(|p| e.covers(d.rule, p, digest.as_deref(), today))
            });
            let finding = match covering {
                Some((i, e)) => {
                    if let Some(u) = used.get_mut(i) {
                        *u = true;
                    }
                    let mut f = Finding::from_detection(d, Action::Allow, digest.as_deref());
                    f.exception = Some(e.reason.clone());
                    f
                }
                None => {
                    let action = self.action(d.rule, d.severity);
                    Finding::from_detection(d, action, digest.as_deref())
                }
            };
            findings.push(finding);
        }
        fold_pickle_format(&mut findings, &|rule, severity| self.action(rule, severity));

        for (e, was_used) in self.exceptions.iter().zip(&used) {
            if e.is_expired(today) {
                findings.push(self.exception_finding(RuleId::ExceptionExpired, e));
            } else if !was_used {
                findings.push(self.exception_finding(RuleId::ExceptionUnused, e));
            }
        }

        findings.sort_by(|a, b| {
            a.path
                .cmp(&b.path)
                .then_with(|| a.rule.code().cmp(b.rule.code()))
                .then_with(|| a.location.cmp(&b.location))
                .then_with(|| a.message.cmp(&b.message))
        });
        findings
    }

    /// A POL001/POL002 finding about exception `e`.
    fn exception_finding(&self, rule: RuleId, e: &Exception) -> Finding {
        let what = format!(
            "exception for `{}` on `{}` ({} line {})",
            e.rule.code(),
            e.path,
            self.source,
            e.line
        );
        let message = match (rule, e.expires) {
            (RuleId::ExceptionExpired, Some(date)) => {
                format!("{what} expired on {date}; it no longer applies")
            }
            _ => format!("{what} matched no finding"),
        };
        let key = format!(
            "{}|{}|{}",
            e.rule.code(),
            e.path,
            e.sha256.as_deref().unwrap_or("")
        );
        let mut d = Detection::new(rule, "", key, message)
            .with("policy", self.source.to_string())
            .with("line", e.line)
            .with("rule", e.rule.code())
            .with("path", e.path.clone());
        if let Some(date) = e.expires {
            d = d.with("expires", date.to_string());
        }
        let action = self.action(rule, d.severity);
        Finding::from_detection(d, action, None)
    }
}

/// How strictly the policy acts on a finding of a rule at a severity, before exceptions.
type Strictness<'a> = &'a dyn Fn(RuleId, Severity) -> Action;

/// Issue 15, cause 10: one warning per thing to act on. PKL003 ("this file holds pickle data")
/// is folded into the same file's other pickle findings (PKL001, PKL002, PKL004, PKL005) when one
/// of them is acted on at least as strictly: they already say the file is a pickle and what is
/// wrong with it. Without such a finding the file keeps one PKL003 (the first; an archive with
/// a pickle in every member, like a TorchScript file, is still one file to act on), so a policy
/// that treats PKL003 more strictly than the others still sees every pickle. Strictness is the
/// policy's grading of each finding, not its final action: a file whose PKL001/PKL002 an
/// exception allows (a baseline) has been reviewed as a pickle, so its PKL003 stays folded.
///
/// Issue 32, the same way: PKL005 ("torch.load(weights_only=True) refuses this checkpoint")
/// folds into the file's PKL001, PKL002 or PKL004 acted on at least as strictly, which name
/// the globals that make torch refuse it (the verdict stays a fact); it stands alone when only
/// safe-list globals (`argparse.Namespace`, `pathlib` paths) or protocol-4 opcodes make torch
/// refuse the file.
///
/// This is folding, not grading (issue 38): the rule lists say which facts another finding
/// already states, and every action compared here comes from the policy's declared gradings.
fn fold_pickle_format(findings: &mut Vec<Finding>, strictness: Strictness<'_>) {
    fold_into(
        findings,
        strictness,
        RuleId::PickleNeedsUnsafeLoad,
        &[
            RuleId::PickleUnsafeGlobal,
            RuleId::PickleUnknownGlobal,
            RuleId::PickleMalformed,
        ],
    );
    fold_into(
        findings,
        strictness,
        RuleId::PickleFormat,
        &[
            RuleId::PickleUnsafeGlobal,
            RuleId::PickleUnknownGlobal,
            RuleId::PickleMalformed,
            RuleId::PickleNeedsUnsafeLoad,
        ],
    );
}

/// Drops a `folded` finding of a file that has a finding of one of `into` acted on at least as
/// strictly; otherwise keeps the first `folded` finding of the file.
fn fold_into(
    findings: &mut Vec<Finding>,
    strictness: Strictness<'_>,
    folded: RuleId,
    into: &[RuleId],
) {
    let mut strongest: BTreeMap<String, Action> = BTreeMap::new();
    for f in findings.iter().filter(|f| into.contains(&f.rule)) {
        let a = strictness(f.rule, f.severity);
        let s = strongest.entry(f.path.clone()).or_insert(a);
        *s = (*s).max(a);
    }
    let mut kept: BTreeSet<String> = BTreeSet::new();
    findings.retain(|f| {
        f.rule != folded
            || (strongest
                .get(&f.path)
                .is_none_or(|a| *a < strictness(f.rule, f.severity))
                && kept.insert(f.path.clone()))
    });
}

#[cfg(test)]
mod tests {
    const TIB: u64 = 1 << 40;
    use super::*;
    use crate::model::finding::Location;
    use time::macros::date;

    const TODAY: time::Date = date!(2026 - 06 - 01);
    const DIGEST_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const DIGEST_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    fn policy(text: &str) -> Policy {
        match parse(text, PolicySource::File("modelgate.toml".into())) {
            Ok(p) => p,
            Err(e) => panic!("policy should parse:\n{e}"),
        }
    }

    fn pickle_detection(path: &str) -> Detection {
        Detection::new(
            RuleId::PickleFormat,
            path,
            "pickle",
            "file holds pickle data",
        )
        .at(Location::offset(0))
    }

    fn digest(d: &'static str) -> impl Fn(&str) -> Option<String> {
        move |_| Some(d.to_string())
    }

    fn no_digest(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn every_preset_parses_and_sets_every_rule_explicitly() {
        for (name, text) in PRESETS {
            let p = builtin(name);
            assert!(p.is_some(), "preset {name} must parse");
            let Some(p) = p else { continue };
            assert_eq!(p.source, PolicySource::Builtin(name));
            assert_eq!(p.levels.len(), RuleId::ALL.len());
            assert!(p.exceptions.is_empty());
            // Presets are read by people: each must list every rule, not lean on the fallback.
            let base: BTreeMap<RuleId, Action> = BTreeMap::new();
            assert!(
                config::parse_with_base(text, PolicySource::Builtin(name), &base).is_ok(),
                "{name} must list every rule"
            );
            assert!(text.starts_with('#'), "{name} starts with its intent");
        }
    }

    #[test]
    fn every_preset_applies_to_detections() {
        let detections = || {
            vec![
                Detection::new(
                    RuleId::PickleUnsafeGlobal,
                    "a.bin",
                    "os.system",
                    "os.system",
                ),
                // Another file: on a.bin itself PKL003 folds into the PKL001 (issue 15).
                pickle_detection("b.bin"),
                Detection::new(RuleId::NoGitRepository, "", "", "no git"),
            ]
        };
        let actions = |name: &str| -> Vec<Action> {
            builtin(name)
                .map(|p| p.evaluate(detections(), &no_digest, TODAY))
                .unwrap_or_default()
                .iter()
                .map(|f| f.action)
                .collect()
        };
        // Sorted: "" (PRV001) first, then a.bin PKL001, b.bin PKL003.
        assert_eq!(
            actions("default"),
            [Action::Allow, Action::Deny, Action::Warn]
        );
        assert_eq!(
            actions("strict"),
            [Action::Deny, Action::Deny, Action::Deny]
        );
        assert_eq!(
            actions("audit"),
            [Action::Allow, Action::Allow, Action::Allow]
        );
    }

    #[test]
    fn pickle_format_folds_into_a_pickle_finding_acted_on_as_strictly_issue_15() {
        let detections = || {
            vec![
                Detection::new(RuleId::PickleUnknownGlobal, "a.bin", "m.f", "m.f"),
                pickle_detection("a.bin"),
                pickle_detection("a.bin"),
                pickle_detection("b.bin"),
                pickle_detection("b.bin"),
            ]
        };
        let rules = |p: &Policy| -> Vec<(String, RuleId)> {
            p.evaluate(detections(), &no_digest, TODAY)
                .into_iter()
                .map(|f| (f.path, f.rule))
                .collect()
        };
        let default = builtin("default").unwrap_or_default();
        assert_eq!(
            rules(&default),
            [
                ("a.bin".to_string(), RuleId::PickleUnknownGlobal),
                ("b.bin".to_string(), RuleId::PickleFormat),
            ]
        );
        // PKL003 stricter than PKL002: kept, once per file.
        let p = policy("version = 1\n[rules]\nPKL002 = \"allow\"\nPKL003 = \"deny\"\n");
        assert_eq!(
            rules(&p),
            [
                ("a.bin".to_string(), RuleId::PickleUnknownGlobal),
                ("a.bin".to_string(), RuleId::PickleFormat),
                ("b.bin".to_string(), RuleId::PickleFormat),
            ]
        );
    }

    #[test]
    fn default_toml_matches_the_code_defaults() {
        let p = builtin("default");
        assert!(p.is_some());
        let Some(p) = p else { return };
        let d = Policy::default();
        assert_eq!(&p.levels, default_levels());
        assert_eq!(p.levels, d.levels);
        assert_eq!(p.pickle, d.pickle);
        assert_eq!(p.safetensors, d.safetensors);
        assert_eq!(p.card, d.card);
        assert_eq!(p.source_code, d.source_code);
        assert_eq!(p.scan, d.scan);
        assert_eq!(p.signing, d.signing);
        assert_eq!(p.limits, d.limits);
    }

    /// What `level` means for `rule` at `severity`: the registry's declared grading (issue 38
    /// moved this here from a function of the policy).
    fn graded(rule: RuleId, severity: Severity, level: Action) -> Action {
        crate::model::grading::declared(rule, level).action(severity)
    }

    #[test]
    fn an_info_finding_is_recorded_at_warn_and_still_denied_at_deny() {
        let info = |rule| graded(rule, Severity::Info, Action::Warn);
        assert_eq!(info(RuleId::PickleFormat), Action::Allow);
        assert_eq!(info(RuleId::CustomCode), Action::Allow);
        for s in [Severity::Low, Severity::Medium, Severity::High] {
            assert_eq!(graded(RuleId::PickleFormat, s, Action::Warn), Action::Warn);
        }
        assert_eq!(
            graded(RuleId::PickleFormat, Severity::Info, Action::Deny),
            Action::Deny
        );
        // Through evaluate, with the default and strict presets.
        let mut d = Detection::new(RuleId::PickleFormat, "a.pkl", "pickle", "m");
        d.severity = Severity::Info;
        let findings = Policy::default().evaluate(vec![d.clone()], &|_| None, TODAY);
        assert_eq!(findings[0].action, Action::Allow);
        let Some(strict) = builtin("strict") else {
            panic!("strict parses");
        };
        let findings = strict.evaluate(vec![d], &|_| None, TODAY);
        assert_eq!(findings[0].action, Action::Deny);
    }

    /// `policy::graded` as it was before issue 38: the oracle for what a level meant.
    fn graded_before_issue_38(rule: RuleId, severity: Severity, action: Action) -> Action {
        if action == Action::Warn && severity == Severity::Info {
            return Action::Allow;
        }
        if rule == RuleId::NativeCode && action == Action::Warn && severity == Severity::Critical {
            return Action::Deny;
        }
        if rule == RuleId::CustomCodeBehaviour
            && action == Action::Deny
            && severity < Severity::High
        {
            Action::Warn
        } else {
            action
        }
    }

    /// The presets as they were before issue 38 (levels only).
    const PRESETS_BEFORE_ISSUE_38: &[(&str, &str)] = &[
        (
            "default",
            include_str!("../../tests/fixtures/policies/before-grading/default.toml"),
        ),
        (
            "strict",
            include_str!("../../tests/fixtures/policies/before-grading/strict.toml"),
        ),
        (
            "audit",
            include_str!("../../tests/fixtures/policies/before-grading/audit.toml"),
        ),
    ];

    /// Asserts that `text`, read today, acts on every rule at every severity as the levels it
    /// had before issue 38 did (unlisted rules at the old default's levels).
    fn assert_means_what_it_meant(name: &str, text: &str, old_default: &BTreeMap<RuleId, Action>) {
        let old_levels =
            match config::parse_with_base(text, PolicySource::Builtin("old"), old_default) {
                Ok(p) => p.levels,
                Err(e) => panic!("{name}: {e}"),
            };
        let now = policy(text);
        for rule in RuleId::ALL {
            for severity in Severity::ALL {
                let old = graded_before_issue_38(*rule, severity, old_levels[rule]);
                assert_eq!(
                    now.action(*rule, severity),
                    old,
                    "{name}: {rule} at {}",
                    severity.as_str()
                );
            }
            assert_eq!(
                now.level(*rule),
                old_levels[rule],
                "{name}: level of {rule}"
            );
        }
    }

    #[test]
    fn policies_written_with_levels_mean_what_they_meant_for_every_rule_and_severity() {
        let deny_all: BTreeMap<RuleId, Action> =
            RuleId::ALL.iter().map(|r| (*r, Action::Deny)).collect();
        let old_default = match config::parse_with_base(
            PRESETS_BEFORE_ISSUE_38[0].1,
            PolicySource::Builtin("default"),
            &deny_all,
        ) {
            Ok(p) => p.levels,
            Err(e) => panic!("{e}"),
        };
        // Today's default is the old one, so an empty policy means the same.
        assert_eq!(default_levels(), &old_default);
        assert_means_what_it_meant("empty", "version = 1\n", &old_default);
        // The old presets, and the example policies, as users copied them.
        for (name, text) in PRESETS_BEFORE_ISSUE_38 {
            assert_means_what_it_meant(name, text, &old_default);
        }
        for (name, text) in [
            (
                "research",
                include_str!("../../examples/policies/research.toml"),
            ),
            (
                "release-gate",
                include_str!("../../examples/policies/release-gate.toml"),
            ),
        ] {
            assert_means_what_it_meant(name, text, &old_default);
        }
        // Every rule at every level, by code and by name.
        for rule in RuleId::ALL {
            for level in ["deny", "warn", "allow"] {
                for key in [rule.code(), rule.name()] {
                    let text = format!("version = 1\n[rules]\n{key} = \"{level}\"\n");
                    assert_means_what_it_meant(&text, &text, &old_default);
                }
            }
        }
    }

    #[test]
    fn the_presets_grade_behaviour_as_issue_38_says() {
        let (Some(default), Some(strict), Some(audit)) =
            (builtin("default"), builtin("strict"), builtin("audit"))
        else {
            panic!("presets parse");
        };
        let src006 = RuleId::CustomCodeBehaviour;
        // strict denies medium behaviour; default still warns about it.
        assert_eq!(strict.action(src006, Severity::Medium), Action::Deny);
        assert_eq!(default.action(src006, Severity::Medium), Action::Warn);
        assert_eq!(default.action(src006, Severity::High), Action::Deny);
        assert_eq!(audit.action(src006, Severity::Critical), Action::Allow);
        // Only strict's SRC006 changed: every other rule and severity acts as before.
        for (name, now) in [
            ("default", &default),
            ("strict", &strict),
            ("audit", &audit),
        ] {
            let Some((_, before)) = PRESETS_BEFORE_ISSUE_38.iter().find(|(n, _)| *n == name) else {
                panic!("{name}");
            };
            let before = policy(before);
            for rule in RuleId::ALL {
                for severity in Severity::ALL {
                    let changed =
                        name == "strict" && *rule == src006 && severity == Severity::Medium;
                    let same = now.action(*rule, severity) == before.action(*rule, severity);
                    assert_eq!(same, !changed, "{name}: {rule} at {}", severity.as_str());
                }
            }
        }
    }

    #[test]
    fn a_graded_rule_acts_on_each_finding_by_its_severity() {
        let p = policy("version = 1\n[rules]\nSRC006 = { deny_from = \"medium\" }\n");
        let detection = |severity| {
            let mut d = Detection::new(RuleId::CustomCodeBehaviour, "m.py", "k", "m");
            d.severity = severity;
            d
        };
        let actions: Vec<Action> = [Severity::Low, Severity::Medium, Severity::Critical]
            .into_iter()
            .map(|s| p.evaluate(vec![detection(s)], &no_digest, TODAY)[0].action)
            .collect();
        assert_eq!(actions, [Action::Warn, Action::Deny, Action::Deny]);
        // "allow info findings" of a rule the policy otherwise denies.
        let p = policy(
            "version = 1\n[rules]\nPKL003 = { deny_from = \"low\", allow_below = \"low\" }\n",
        );
        let mut d = pickle_detection("a.pkl");
        d.severity = Severity::Info;
        assert_eq!(
            p.evaluate(vec![d], &no_digest, TODAY)[0].action,
            Action::Allow
        );
        let f = p.evaluate(vec![pickle_detection("b.pkl")], &no_digest, TODAY);
        assert_eq!(f[0].action, Action::Deny);
    }

    #[test]
    fn pickle_format_folds_by_the_graded_action_of_each_finding() {
        // PKL002 graded to deny from medium (its severity): PKL003 (deny) folds into it.
        let p = policy(
            "version = 1\n[rules]\nPKL002 = { deny_from = \"medium\" }\nPKL003 = \"deny\"\n",
        );
        let f = p.evaluate(
            vec![
                Detection::new(RuleId::PickleUnknownGlobal, "a.bin", "m.f", "m.f"),
                pickle_detection("a.bin"),
            ],
            &no_digest,
            TODAY,
        );
        let rules: Vec<RuleId> = f.iter().map(|f| f.rule).collect();
        assert_eq!(rules, [RuleId::PickleUnknownGlobal]);
        // Graded to deny only from high: the medium PKL002 is warned, so PKL003 stays.
        let p =
            policy("version = 1\n[rules]\nPKL002 = { deny_from = \"high\" }\nPKL003 = \"deny\"\n");
        let f = p.evaluate(
            vec![
                Detection::new(RuleId::PickleUnknownGlobal, "a.bin", "m.f", "m.f"),
                pickle_detection("a.bin"),
            ],
            &no_digest,
            TODAY,
        );
        let rules: Vec<RuleId> = f.iter().map(|f| f.rule).collect();
        assert_eq!(rules, [RuleId::PickleUnknownGlobal, RuleId::PickleFormat]);
    }

    #[test]
    fn strict_and_audit_set_the_promised_options() {
        let (Some(strict), Some(audit)) = (builtin("strict"), builtin("audit")) else {
            panic!("presets parse");
        };
        assert!(strict.safetensors.check_values && audit.safetensors.check_values);
        assert_eq!(strict.card.required_fields, ["license"]);
        for rule in [
            RuleId::PickleUnknownGlobal,
            RuleId::PickleFormat,
            RuleId::UnpinnedRevision,
            RuleId::TrustRemoteCode,
            RuleId::UnsafeLoadCall,
            RuleId::ModelCardMissing,
            RuleId::ModelCardFieldMissing,
            RuleId::LicenseNotAllowed,
            RuleId::DirtyWorktree,
            RuleId::UntrackedWeights,
            RuleId::LfsPointer,
            RuleId::NoGitRepository,
        ] {
            assert_eq!(strict.level(rule), Action::Deny, "{rule}");
        }
        assert!(audit.levels.values().all(|a| *a == Action::Allow));
        // Issue 19: a release carries a signature; the other presets only check one if present.
        assert!(strict.signing.require && !audit.signing.require);
        assert_eq!(strict.level(RuleId::Unsigned), Action::Deny);
    }

    #[test]
    fn unlisted_rules_keep_the_default_level() {
        let p = policy("version = 1\n[rules]\nPKL003 = \"deny\"\n");
        assert_eq!(p.level(RuleId::PickleFormat), Action::Deny);
        assert_eq!(p.level(RuleId::PickleUnknownGlobal), Action::Warn);
        assert_eq!(p.levels.len(), RuleId::ALL.len());
    }

    #[test]
    fn levels_by_code_and_by_name_are_equivalent() {
        let by_code = policy("version = 1\n[rules]\nPKL003 = \"allow\"\nST002 = \"deny\"\n");
        let by_name = policy(
            "version = 1\n[rules]\npickle-format = \"allow\"\nsafetensors-nonfinite = \"deny\"\n",
        );
        assert_eq!(by_code.levels, by_name.levels);
        assert_eq!(by_code.level(RuleId::PickleFormat), Action::Allow);
    }

    #[test]
    fn limit_reads_the_policy_then_the_default() {
        let p = policy("version = 1\n[limits]\narchive_depth = 2\n");
        assert_eq!(p.limit("archive_depth"), 2);
        assert_eq!(p.limit("max_file_bytes"), TIB);
        assert_eq!(p.limit("no_such_limit"), 0);
        let names: BTreeSet<_> = LIMITS.iter().map(|l| l.name).collect();
        assert_eq!(names.len(), LIMITS.len());
    }

    const EXCEPTION: &str = r#"version = 1
[rules]
PKL003 = "deny"

[[exceptions]]
rule = "pickle-format"
path = "legacy/*.bin"
sha256 = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
reason = "audited by X on 2026-05-01, ticket SEC-12"
expires = 2027-01-01
"#;

    #[test]
    fn exception_with_matching_digest_allows_and_records_reason() {
        let p = policy(EXCEPTION);
        let f = p.evaluate(
            vec![pickle_detection("legacy/a.bin")],
            &digest(DIGEST_A),
            TODAY,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].action, Action::Allow);
        assert_eq!(
            f[0].exception.as_deref(),
            Some("audited by X on 2026-05-01, ticket SEC-12")
        );
    }

    #[test]
    fn exception_with_matching_path_but_different_digest_does_not_apply() {
        let p = policy(EXCEPTION);
        let f = p.evaluate(
            vec![pickle_detection("legacy/a.bin")],
            &digest(DIGEST_B),
            TODAY,
        );
        let rules: Vec<_> = f.iter().map(|f| (f.rule, f.action)).collect();
        // Sorted by path: the POL002 (path "") comes first.
        assert_eq!(
            rules,
            [
                (RuleId::ExceptionUnused, Action::Warn),
                (RuleId::PickleFormat, Action::Deny)
            ]
        );
        assert!(f[1].exception.is_none());
    }

    #[test]
    fn pinned_exception_does_not_apply_when_the_digest_is_unknown() {
        let p = policy(EXCEPTION);
        let f = p.evaluate(vec![pickle_detection("legacy/a.bin")], &no_digest, TODAY);
        assert!(
            f.iter()
                .any(|f| f.rule == RuleId::PickleFormat && f.action == Action::Deny)
        );
    }

    #[test]
    fn exception_glob_does_not_cross_directories() {
        let p = policy(EXCEPTION);
        let f = p.evaluate(
            vec![pickle_detection("legacy/sub/a.bin")],
            &digest(DIGEST_A),
            TODAY,
        );
        assert!(
            f.iter()
                .any(|f| f.rule == RuleId::PickleFormat && f.action == Action::Deny)
        );
    }

    #[test]
    fn expired_exception_produces_pol001_and_stops_applying() {
        let p = policy(EXCEPTION);
        let later = date!(2027 - 01 - 02);
        let f = p.evaluate(
            vec![
                pickle_detection("legacy/a.bin"),
                pickle_detection("legacy/b.bin"),
            ],
            &digest(DIGEST_A),
            later,
        );
        let pol: Vec<_> = f
            .iter()
            .filter(|f| f.rule == RuleId::ExceptionExpired)
            .collect();
        assert_eq!(pol.len(), 1, "once per exception");
        assert_eq!(pol[0].action, Action::Deny);
        assert_eq!(pol[0].path, "");
        assert_eq!(
            pol[0].message,
            "exception for `PKL003` on `legacy/*.bin` (modelgate.toml line 5) expired on \
             2027-01-01; it no longer applies"
        );
        assert!(!f.iter().any(|f| f.rule == RuleId::ExceptionUnused));
        assert!(
            f.iter()
                .filter(|f| f.rule == RuleId::PickleFormat)
                .all(|f| f.action == Action::Deny && f.exception.is_none())
        );
        // On the expiry day itself it still applies.
        let f = p.evaluate(
            vec![pickle_detection("legacy/a.bin")],
            &digest(DIGEST_A),
            date!(2027 - 01 - 01),
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].action, Action::Allow);
    }

    #[test]
    fn unused_exception_produces_pol002() {
        let p = policy(EXCEPTION);
        let f = p.evaluate(
            vec![pickle_detection("other.bin")],
            &digest(DIGEST_A),
            TODAY,
        );
        let unused: Vec<_> = f
            .iter()
            .filter(|f| f.rule == RuleId::ExceptionUnused)
            .collect();
        assert_eq!(unused.len(), 1);
        assert_eq!(unused[0].action, Action::Warn);
        assert_eq!(
            unused[0].message,
            "exception for `PKL003` on `legacy/*.bin` (modelgate.toml line 5) matched no finding"
        );
        assert_eq!(unused[0].evidence.get("line"), Some(&serde_json::json!(5)));
    }

    #[test]
    fn pol_findings_take_their_level_from_the_policy() {
        let text = EXCEPTION.replace("PKL003 = \"deny\"", "POL002 = \"deny\"");
        let p = policy(&text);
        let f = p.evaluate(Vec::new(), &no_digest, TODAY);
        assert_eq!(f.len(), 1);
        assert!(matches!(
            (f[0].rule, f[0].action),
            (RuleId::ExceptionUnused, Action::Deny)
        ));
    }

    #[test]
    fn strict_with_one_audited_pickle_exception() {
        let (_, strict) = PRESETS[1];
        let text = format!(
            "{strict}\n[[exceptions]]\nrule = \"PKL003\"\npath = \"models/legacy.bin\"\n\
             sha256 = \"{DIGEST_A}\"\nreason = \"audited by sec team, SEC-12\"\n"
        );
        let p = policy(&text);
        assert_eq!(p.level(RuleId::PickleFormat), Action::Deny);

        let f = p.evaluate(
            vec![pickle_detection("models/legacy.bin")],
            &digest(DIGEST_A),
            TODAY,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].rule, f[0].action),
            (RuleId::PickleFormat, Action::Allow)
        );

        let f = p.evaluate(
            vec![pickle_detection("models/legacy.bin")],
            &digest(DIGEST_B),
            TODAY,
        );
        let pkl = f.iter().find(|f| f.rule == RuleId::PickleFormat);
        assert!(matches!(pkl.map(|f| f.action), Some(Action::Deny)));
        // The exception now covers nothing: strict denies stale exceptions too.
        assert!(
            f.iter()
                .any(|f| f.rule == RuleId::ExceptionUnused && f.action == Action::Deny)
        );
    }

    #[test]
    fn findings_are_sorted_by_path_rule_location_message() {
        let p = Policy::default();
        let f = p.evaluate(
            vec![
                // PKL004, not PKL003: a PKL003 beside a PKL001 folds into it (issue 15).
                Detection::new(RuleId::PickleMalformed, "b.bin", "", "m"),
                Detection::new(RuleId::PickleUnsafeGlobal, "b.bin", "", "z")
                    .at(Location::offset(9)),
                Detection::new(RuleId::PickleUnsafeGlobal, "b.bin", "", "y")
                    .at(Location::offset(9)),
                Detection::new(RuleId::PickleUnsafeGlobal, "b.bin", "", "x")
                    .at(Location::offset(10)),
                Detection::new(RuleId::SafetensorsInvalid, "a.safetensors", "", "m"),
            ],
            &no_digest,
            TODAY,
        );
        let order: Vec<_> = f
            .iter()
            .map(|f| (f.path.as_str(), f.rule.code(), f.message.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("a.safetensors", "ST001", "m"),
                ("b.bin", "PKL001", "y"),
                ("b.bin", "PKL001", "z"),
                ("b.bin", "PKL001", "x"),
                ("b.bin", "PKL004", "m"),
            ]
        );
    }

    #[test]
    fn readme_documents_every_preset_level_and_limit() {
        let readme = include_str!("../../policies/README.md");
        let presets: Vec<Policy> = ["default", "strict", "audit"]
            .iter()
            .filter_map(|n| builtin(n))
            .collect();
        assert_eq!(presets.len(), 3);
        for rule in RuleId::ALL {
            let levels: Vec<&str> = presets.iter().map(|p| p.level(*rule).as_str()).collect();
            let row = format!(
                "| {} | {} | {} |\n",
                rule.code(),
                rule.name(),
                levels.join(" | ")
            );
            assert!(readme.contains(&row), "README row for {rule}: {row}");
        }
        for spec in LIMITS {
            let row = format!("| `{}` | {}", spec.name, spec.default);
            assert!(readme.contains(&row), "README row for limit {}", spec.name);
        }
    }

    #[test]
    fn readme_documents_every_preset_grading() {
        let readme = include_str!("../../policies/README.md");
        let mut expected = 0;
        for (name, _) in PRESETS {
            let Some(p) = builtin(name) else {
                panic!("{name} parses");
            };
            for rule in RuleId::ALL {
                let (level, grading) = (p.level(*rule), p.grading(*rule));
                if grading == Grading::standard(level) {
                    continue;
                }
                expected += 1;
                let row = format!(
                    "| {} | {name} | {}: {grading} |\n",
                    rule.code(),
                    level.as_str()
                );
                assert!(readme.contains(&row), "README grading row: {row}");
            }
        }
        let rows = readme
            .lines()
            .filter(|l| {
                let cells: Vec<&str> = l.split(" | ").collect();
                cells.len() == 3
                    && PRESETS.iter().any(|(n, _)| cells[1] == *n)
                    && cells[2].contains(": ")
            })
            .count();
        assert_eq!(rows, expected, "one README row per graded rule and preset");
    }

    #[test]
    fn source_displays_as_documented() {
        assert_eq!(
            PolicySource::Builtin("default").to_string(),
            "built-in:default"
        );
        assert_eq!(
            PolicySource::File("cfg/modelgate.toml".into()).to_string(),
            "cfg/modelgate.toml"
        );
    }
}
