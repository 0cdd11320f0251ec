//! `modelgate policy baseline`: accept what a repository holds today, gate only what is new.
//!
//! A team switching the gate on for a repository that already ships pickles cannot fix every
//! finding first. The baseline turns each finding the current policy denies or warns into an
//! `[[exceptions]]` entry pinned to the file's SHA-256, with a placeholder reason and an expiry:
//! the scan passes today, a changed or new file fails again, and the placeholders and expiry
//! dates keep the debt visible (POL001 once they lapse).
//!
//! [`baseline`] is a pure function from a scan's findings (plus each file's digest) and the
//! existing policy text to the text to write. The existing text is kept byte for byte and the
//! new entries are appended, so comments and layout survive; the result is parsed back with the
//! policy parser before it is returned, so what is written is always a valid policy.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::model::finding::{Action, Finding};
use crate::model::rules::RuleId;

use super::config::{PolicyError, parse};
use super::types::PolicySource;

/// Days until a baseline exception expires when `--expires-in` is not given.
pub const DEFAULT_EXPIRY_DAYS: u32 = 90;

/// What one exception pins: a rule on one path, and the file's digest when it has one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    /// The rule the finding is of.
    pub rule: RuleId,
    /// The finding's path, relative to the scan root (not a glob).
    pub path: String,
    /// The file's SHA-256 (lowercase hex); `None` for a directory or a file that was not read.
    pub sha256: Option<String>,
}

/// The outcome of [`baseline`].
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The policy text to write: the existing text, then one `[[exceptions]]` per added entry.
    pub text: String,
    /// Entries appended, sorted by path and rule.
    pub added: Vec<Entry>,
    /// Entries an existing exception already names (same rule, path and digest), for instance
    /// an expired one: renewing it is a reviewer's decision, so it is left alone.
    pub already_listed: Vec<Entry>,
    /// Denied or warned findings no exception can cover: repository-level ones (no path) and
    /// the policy's own POL001/POL002. Their rule codes, sorted, without duplicates.
    pub not_covered: Vec<RuleId>,
}

/// Builds the baseline: for every finding whose action is deny or warn, an exception for its
/// rule and path, pinned to `digest_of(path)` when the file has a digest, with a placeholder
/// reason dated `today` and `expires` as its last day. `existing` is the policy text to extend
/// (`None`: a new policy on the built-in defaults); it must be a valid policy.
pub fn baseline(
    findings: &[Finding],
    digest_of: &dyn Fn(&str) -> Option<String>,
    existing: Option<&str>,
    source: &PolicySource,
    today: time::Date,
    expires: time::Date,
) -> Result<Baseline, PolicyError> {
    let listed: BTreeSet<Entry> = match existing {
        Some(text) => parse(text, source.clone())?
            .exceptions
            .into_iter()
            .map(|e| Entry {
                rule: e.rule,
                path: e.path,
                sha256: e.sha256,
            })
            .collect(),
        None => BTreeSet::new(),
    };

    let mut wanted = BTreeSet::new();
    let mut not_covered = BTreeSet::new();
    for f in findings {
        if !matches!(f.action, Action::Deny | Action::Warn) {
            continue;
        }
        let is_policy_rule = matches!(f.rule, RuleId::ExceptionExpired | RuleId::ExceptionUnused);
        // An exception needs a non-empty path glob, and POL001/POL002 are never covered.
        if is_policy_rule || f.path.is_empty() {
            not_covered.insert(f.rule);
            continue;
        }
        wanted.insert(Entry {
            rule: f.rule,
            sha256: digest_of(&f.path).map(|d| d.to_ascii_lowercase()),
            path: f.path.clone(),
        });
    }
    let (already_listed, mut added): (Vec<Entry>, Vec<Entry>) = wanted.into_iter().partition(|e| {
        listed.contains(&Entry {
            path: glob_literal(&e.path),
            ..e.clone()
        })
    });
    added.sort_by(|a, b| a.path.cmp(&b.path).then(a.rule.cmp(&b.rule)));

    let mut text = match existing {
        Some(t) if t.is_empty() || t.ends_with('\n') => t.to_string(),
        Some(t) => format!("{t}\n"),
        None => NEW_POLICY_HEADER.to_string(),
    };
    if !added.is_empty() {
        write_entries(&mut text, &added, today, expires);
    }
    // The result must load: a policy that declares `exceptions = [...]` inline, for instance,
    // cannot take `[[exceptions]]` tables after it.
    parse(&text, source.clone())?;
    Ok(Baseline {
        text,
        added,
        already_listed,
        not_covered: not_covered.into_iter().collect(),
    })
}

/// The start of a policy written from scratch: the built-in default levels, nothing else.
const NEW_POLICY_HEADER: &str = "\
# modelgate policy (see `modelgate policy init` for every setting). Rules not listed here keep
# the built-in default level.
version = 1
";

/// Placeholder reasons start with this, so `grep -n TODO modelgate.toml` lists the unreviewed.
pub const REASON_PLACEHOLDER: &str = "TODO: review";

fn write_entries(text: &mut String, added: &[Entry], today: time::Date, expires: time::Date) {
    // `write!` to a String cannot fail.
    let _ = write!(
        text,
        "\n# Baseline written by `modelgate policy baseline` on {today}: {n} finding(s) present\n\
         # when the gate was adopted. Each exception is bound to the file's SHA-256 (a changed file\n\
         # fails again) and lapses after {expires}. Replace each reason with who reviewed what, or\n\
         # fix the file and delete its entry.\n",
        n = added.len()
    );
    for e in added {
        let _ = write!(
            text,
            "\n[[exceptions]]\nrule = {rule}  # {name}\npath = {path}\n",
            rule = toml_string(e.rule.code()),
            name = e.rule.name(),
            path = toml_string(&glob_literal(&e.path)),
        );
        match &e.sha256 {
            Some(digest) => {
                let _ = writeln!(text, "sha256 = {}", toml_string(digest));
            }
            None => text.push_str("# no sha256: a directory, or a file that could not be read\n"),
        }
        let reason = format!(
            "{REASON_PLACEHOLDER} (accepted as found by `modelgate policy baseline` on {today})"
        );
        let _ = write!(
            text,
            "reason = {}\nexpires = {expires}\n",
            toml_string(&reason)
        );
    }
}

/// A TOML basic string with every character that needs it escaped (quotes, backslashes,
/// control characters such as a line break in a hostile file name).
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A glob that matches exactly `path`: every glob metacharacter becomes a one-character class,
/// so a file named `model[1].bin` or `*.pkl` is not turned into a pattern covering others.
pub fn glob_literal(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '*' | '?' | '[' | ']' | '{' | '}' | '\\' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::finding::Detection;
    use time::macros::date;

    const TODAY: time::Date = date!(2026 - 12 - 01);
    const EXPIRES: time::Date = date!(2027 - 03 - 01);
    const DIGEST_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const DIGEST_B: &str = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";

    fn source() -> PolicySource {
        PolicySource::File("modelgate.toml".into())
    }

    fn finding(rule: RuleId, path: &str, action: Action) -> Finding {
        Finding::from_detection(Detection::new(rule, path, "k", "m"), action, None)
    }

    fn digests(path: &str) -> Option<String> {
        match path {
            "a.bin" => Some(DIGEST_A.to_string()),
            "weird[1]*.pkl" => Some(DIGEST_B.to_string()),
            _ => None,
        }
    }

    fn run(findings: &[Finding], existing: Option<&str>) -> Baseline {
        match baseline(findings, &digests, existing, &source(), TODAY, EXPIRES) {
            Ok(b) => b,
            Err(e) => panic!("baseline failed:\n{e}"),
        }
    }

    fn sample() -> Vec<Finding> {
        vec![
            finding(RuleId::PickleUnsafeGlobal, "a.bin", Action::Deny),
            // A second finding of the same rule on the same file: one exception.
            finding(RuleId::PickleUnsafeGlobal, "a.bin", Action::Deny),
            finding(RuleId::PickleFormat, "a.bin", Action::Warn),
            finding(RuleId::PickleFormat, "weird[1]*.pkl", Action::Warn),
            finding(RuleId::ModelCardMissing, "models/x", Action::Warn),
            // Allowed: nothing to accept.
            finding(RuleId::NoGitRepository, "", Action::Allow),
            finding(RuleId::PickleFormat, "ok.bin", Action::Allow),
            // Not coverable by an exception.
            finding(RuleId::DirtyWorktree, "", Action::Warn),
            finding(RuleId::ExceptionUnused, "", Action::Warn),
        ]
    }

    #[test]
    fn writes_one_digest_bound_exception_per_rule_and_path() {
        let b = run(&sample(), None);
        let got: Vec<(&str, &str, Option<&str>)> = b
            .added
            .iter()
            .map(|e| (e.rule.code(), e.path.as_str(), e.sha256.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("PKL001", "a.bin", Some(DIGEST_A)),
                ("PKL003", "a.bin", Some(DIGEST_A)),
                ("CARD001", "models/x", None),
                (
                    "PKL003",
                    "weird[1]*.pkl",
                    Some(&DIGEST_B.to_ascii_lowercase()[..])
                ),
            ]
        );
        assert_eq!(
            b.not_covered,
            [RuleId::DirtyWorktree, RuleId::ExceptionUnused]
        );
        assert!(b.already_listed.is_empty());
        assert!(b.text.starts_with(NEW_POLICY_HEADER));
        assert!(b.text.contains(
            "\n[[exceptions]]\nrule = \"PKL001\"  # pickle-unsafe-global\npath = \"a.bin\"\n\
             sha256 = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n\
             reason = \"TODO: review (accepted as found by `modelgate policy baseline` on \
             2026-12-01)\"\nexpires = 2027-03-01\n"
        ));
    }

    #[test]
    fn the_written_policy_allows_exactly_todays_findings() {
        let b = run(&sample(), None);
        let policy = parse(&b.text, source()).expect("baseline parses");
        assert_eq!(policy.exceptions.len(), 4);
        assert!(policy.exceptions.iter().all(|e| e.expires == Some(EXPIRES)));
        let detections = vec![
            Detection::new(RuleId::PickleUnsafeGlobal, "a.bin", "k", "m"),
            Detection::new(RuleId::PickleFormat, "weird[1]*.pkl", "k", "m"),
            Detection::new(RuleId::ModelCardMissing, "models/x", "k", "m"),
            Detection::new(RuleId::PickleFormat, "a.bin", "k", "m"),
        ];
        let findings = policy.evaluate(detections.clone(), &digests, TODAY);
        assert!(
            findings.iter().all(|f| f.action == Action::Allow),
            "{findings:?}"
        );

        // A changed file (new digest) is no longer covered; nor is a file the glob merely
        // resembles; nor is anything after the expiry date.
        let changed = |p: &str| (p == "a.bin").then(|| DIGEST_B.to_string());
        let after = policy.evaluate(
            vec![
                Detection::new(RuleId::PickleUnsafeGlobal, "a.bin", "k", "m"),
                Detection::new(RuleId::PickleFormat, "weird1x.pkl", "k", "m"),
            ],
            &changed,
            TODAY,
        );
        let denied: Vec<&str> = after
            .iter()
            .filter(|f| f.action != Action::Allow)
            .map(|f| f.rule.code())
            .collect();
        assert!(
            denied.contains(&"PKL001") && denied.contains(&"PKL003"),
            "{after:?}"
        );
        let lapsed = policy.evaluate(detections, &digests, date!(2027 - 03 - 02));
        assert!(lapsed.iter().any(|f| f.rule == RuleId::ExceptionExpired));
    }

    #[test]
    fn a_rerun_on_its_own_output_adds_nothing() {
        let first = run(&sample(), None);
        let second = run(&sample(), Some(&first.text));
        assert!(second.added.is_empty());
        assert_eq!(second.already_listed.len(), 4);
        assert_eq!(second.text, first.text);
    }

    #[test]
    fn appends_to_an_existing_policy_verbatim() {
        let existing = "version = 1 # ours\n[rules]\nPKL003 = \"deny\"\n\n[[exceptions]]\nrule = \"PKL001\"\n\
                        path = \"a.bin\"\nsha256 = \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"\n\
                        reason = \"audited\"";
        let b = run(&sample(), Some(existing));
        assert!(
            b.text
                .starts_with(&format!("{existing}\n\n# Baseline written"))
        );
        // PKL001 on a.bin with that digest is already there (digests compare case-insensitively).
        assert_eq!(b.already_listed.len(), 1);
        assert_eq!(b.added.len(), 3);
        assert!(parse(&b.text, source()).is_ok());
    }

    #[test]
    fn rejects_an_invalid_existing_policy_and_an_unappendable_one() {
        let invalid = baseline(
            &sample(),
            &digests,
            Some("version = 1\n[rules]\nPKL01 = \"deny\"\n"),
            &source(),
            TODAY,
            EXPIRES,
        );
        assert!(invalid.is_err());
        let inline = "version = 1\nexceptions = []\n";
        let r = baseline(&sample(), &digests, Some(inline), &source(), TODAY, EXPIRES);
        assert!(r.is_err(), "inline exceptions array cannot be extended");
        // With nothing to add, the same policy is fine.
        assert!(baseline(&[], &digests, Some(inline), &source(), TODAY, EXPIRES).is_ok());
    }

    #[test]
    fn glob_literal_matches_only_the_name() {
        for name in [
            "plain/a.bin",
            "a*b.pkl",
            "q?.bin",
            "m[1].bin",
            "m]x[.bin",
            "{a,b}.pt",
            "back\\slash.bin",
            "dir/**/x.bin",
            "!neg.bin",
        ] {
            let glob = globset::GlobBuilder::new(&glob_literal(name))
                .literal_separator(true)
                .build()
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .compile_matcher();
            assert!(glob.is_match(name), "{name} -> {}", glob_literal(name));
            for other in [
                "plain/b.bin",
                "axb.pkl",
                "q1.bin",
                "m1.bin",
                "a.pt",
                "dir/y/x.bin",
            ] {
                assert!(!glob.is_match(other), "{name} matches {other}");
            }
        }
    }

    #[test]
    fn hostile_paths_stay_inside_their_toml_string() {
        let name = "x\"\n[rules]\nPKL001 = \"allow\"\n#.bin";
        let f = vec![finding(RuleId::PickleFormat, name, Action::Warn)];
        let b = run(&f, None);
        let policy = parse(&b.text, source()).expect("parses");
        assert_eq!(policy.level(RuleId::PickleUnsafeGlobal), Action::Deny);
        assert_eq!(policy.exceptions.len(), 1);
        assert!(policy.exceptions[0].matches_path(name));
    }
}
