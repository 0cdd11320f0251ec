//! Tests of `config`: parsing, validation and the problems a bad policy file reports.

use super::*;

fn problems(text: &str) -> Vec<Problem> {
    match parse(text, PolicySource::File("modelgate.toml".into())) {
        Ok(_) => Vec::new(),
        Err(e) => e.problems().to_vec(),
    }
}

fn codes(text: &str) -> Vec<&'static str> {
    problems(text).iter().map(|p| p.code).collect()
}

fn rendered(text: &str) -> String {
    match parse(text, PolicySource::File("modelgate.toml".into())) {
        Ok(_) => "(no error)".to_string(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn accepts_the_documented_example() {
    let text = r#"version = 1
[rules]
PKL001 = "deny"
pickle-format = "warn"
[pickle]
safe_globals = ["mypkg.layers.Custom", "mypkg.safe.*"]
dangerous_globals = ["mypkg.evil"]
[safetensors]
max_header_bytes = 100000000
check_values = false
[card]
required_fields = ["license"]
allowed_licenses = ["apache-2.0", "MIT"]
[source]
pinned_revisions = ["commit", "tag"]
[scan]
exclude = ["vendor/**"]
[limits]
max_file_bytes = 1099511627776
[[exceptions]]
rule = "PKL003"
path = "legacy/*.bin"
sha256 = "ABCDEF0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789"
reason = "audited by X on 2026-05-01, ticket SEC-12"
expires = 2027-01-01
[[exceptions]]
rule = "pickle-unknown-global"
path = "legacy/**"
reason = "string date"
expires = "2027-02-03"
"#;
    let p = parse(text, PolicySource::File("modelgate.toml".into()));
    assert!(
        p.is_ok(),
        "{}",
        p.err().map(|e| e.to_string()).unwrap_or_default()
    );
    let Ok(p) = p else { return };
    assert_eq!(
        p.pickle.safe_globals,
        ["mypkg.layers.Custom", "mypkg.safe.*"]
    );
    assert_eq!(
        p.card.allowed_licenses.as_deref(),
        Some(&["apache-2.0".to_string(), "MIT".to_string()][..])
    );
    assert!(p.source_code.pinned_revisions.contains("tag"));
    assert!(p.source_code.pinned_revisions.contains("commit"));
    assert_eq!(p.exceptions.len(), 2);
    assert_eq!(
        p.exceptions[0].sha256.as_deref(),
        Some("abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789")
    );
    assert_eq!(p.exceptions[0].line, 20);
    assert_eq!(
        p.exceptions[0].expires,
        Some(time::macros::date!(2027 - 01 - 01))
    );
    assert_eq!(
        p.exceptions[1].expires,
        Some(time::macros::date!(2027 - 02 - 03))
    );
    assert!(p.exceptions[1].matches_path("legacy/a/b.bin"));
}

#[test]
fn rejects_unknown_rule_with_suggestion() {
    insta::assert_snapshot!(rendered("version = 1\n[rules]\nPKL01 = \"deny\"\n"));
}

#[test]
fn rejects_invalid_level_with_suggestion() {
    insta::assert_snapshot!(rendered("version = 1\n[rules]\nPKL001 = \"dney\"\n"));
}

#[test]
fn rejects_unknown_keys_in_every_table() {
    let text = "version = 1\n[pikle]\n[pickle]\nsafe_global = []\n[safetensors]\nmax_header = 1\n\
                [card]\nlicenses = []\n[source]\npinned = []\n[scan]\nexclud = []\n\
                [[exceptions]]\nrule = \"PKL003\"\npath = \"a\"\nreason = \"r\"\nexpire = 2027-01-01\n";
    assert_eq!(codes(text), ["unknown-key"; 7]);
    insta::assert_snapshot!(rendered(text));
}

#[test]
fn rejects_wrong_types() {
    let text = "version = \"1\"\n[rules]\nPKL001 = true\n[safetensors]\ncheck_values = \"yes\"\n\
                [pickle]\nsafe_globals = \"a.b\"\n[card]\nrequired_fields = [\"license\", 3]\n\
                [limits]\nmax_files = 1.5\n[scan]\nexclude = \"vendor\"\n";
    assert_eq!(codes(text), ["wrong-type"; 7]);
    insta::assert_snapshot!(rendered(text));
}

#[test]
fn rejects_toml_syntax_error_with_its_position() {
    let p = problems("version = 1\n[rules]\nPKL001 = deny\n");
    assert_eq!(p.len(), 1);
    assert!(matches!(
        &p[0],
        Problem {
            code: "syntax",
            line: 3,
            ..
        }
    ));
    insta::assert_snapshot!(rendered("version = 1\n[rules]\nPKL001 = deny\n"));
}

#[test]
fn rejects_missing_version() {
    insta::assert_snapshot!(rendered("[rules]\nPKL001 = \"deny\"\n"));
}

#[test]
fn rejects_unsupported_version() {
    assert_eq!(codes("version = 2\n"), ["unsupported-version"]);
}

#[test]
fn rejects_duplicate_rule_by_code_and_name() {
    let text = "version = 1\n[rules]\nPKL003 = \"deny\"\npickle-format = \"warn\"\n";
    assert_eq!(codes(text), ["duplicate-rule"]);
    insta::assert_snapshot!(rendered(text));
}

fn graded(text: &str) -> Policy {
    match parse(text, PolicySource::File("modelgate.toml".into())) {
        Ok(p) => p,
        Err(e) => panic!("policy should parse:\n{e}"),
    }
}

#[test]
fn a_grading_table_says_deny_from_and_allow_below() {
    // "deny SRC006 from medium up", written inline and as a sub-table.
    for text in [
        "version = 1\n[rules]\nSRC006 = { deny_from = \"medium\" }\n",
        "version = 1\n[rules.custom-code-behaviour]\ndeny_from = \"medium\"\n",
    ] {
        let p = graded(text);
        let g = p.grading(RuleId::CustomCodeBehaviour);
        assert_eq!(g.to_string(), "info..low warn, medium..critical deny");
        assert_eq!(p.level(RuleId::CustomCodeBehaviour), Action::Deny);
    }
    // "allow info findings" of a rule that is otherwise denied.
    let p =
        graded("version = 1\n[rules]\nPKL003 = { deny_from = \"low\", allow_below = \"low\" }\n");
    let g = p.grading(RuleId::PickleFormat);
    assert_eq!(g.action(Severity::Info), Action::Allow);
    assert_eq!(g.action(Severity::Low), Action::Deny);
    assert_eq!(p.level(RuleId::PickleFormat), Action::Deny);
    // Only `allow_below`: warned from there up, never denied.
    let p = graded("version = 1\n[rules]\nSRC007 = { allow_below = \"high\" }\n");
    assert_eq!(
        p.grading(RuleId::NativeCode).to_string(),
        "info..medium allow, high..critical warn"
    );
    // The level a table stands for is its action at the rule's own severity (medium).
    assert_eq!(p.level(RuleId::NativeCode), Action::Allow);
}

#[test]
fn a_level_means_the_grading_the_registry_declares_for_it() {
    let p =
        graded("version = 1\n[rules]\nSRC006 = \"deny\"\nSRC007 = \"warn\"\nPKL003 = \"warn\"\n");
    for rule in [
        RuleId::CustomCodeBehaviour,
        RuleId::NativeCode,
        RuleId::PickleFormat,
    ] {
        let level = p.level(rule);
        assert_eq!(p.grading(rule), grading::declared(rule, level), "{rule}");
    }
}

#[test]
fn the_readme_rules_example_parses_as_documented() {
    let readme = include_str!("../../policies/README.md");
    let section = readme.split("### `[rules]`").nth(1).unwrap_or_default();
    let block = section
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap_or_default();
    let p = graded(&format!("version = 1\n{block}"));
    assert_eq!(
        p.grading(RuleId::PickleNeedsUnsafeLoad).to_string(),
        "info allow, low..medium warn, high..critical deny"
    );
    assert_eq!(
        p.grading(RuleId::NativeCode).to_string(),
        "info..medium warn, high..critical deny"
    );
    assert_eq!(
        p.grading(RuleId::CustomCodeBehaviour).to_string(),
        "info..low warn, medium..critical deny"
    );
}

#[test]
fn rejects_bad_grading_tables() {
    let text = "version = 1\n[rules]\n\
                SRC006 = { deny_from = \"meduim\" }\n\
                SRC007 = { deny_form = \"high\" }\n\
                PKL003 = {}\n\
                PKL002 = { deny_from = \"medium\", allow_below = \"high\" }\n\
                PKL005 = { allow_below = \"info\" }\n\
                FMT002 = 3\n\
                FMT007 = { deny_from = 1, allow_below = \"lo\" }\n";
    assert_eq!(
        codes(text),
        [
            "invalid-severity",
            "unknown-key",
            "empty-grading",
            "conflicting-grading",
            "invalid-grading",
            "wrong-type",
            "wrong-type",
            "invalid-severity",
        ]
    );
    insta::assert_snapshot!(rendered(text));
}

#[test]
fn rejects_a_rule_set_by_level_and_by_grading_table() {
    let text = "version = 1\n[rules]\nSRC006 = \"deny\"\n\
                custom-code-behaviour = { deny_from = \"medium\" }\n";
    assert_eq!(codes(text), ["duplicate-rule"]);
}

#[test]
fn rejects_bad_globs() {
    let text = "version = 1\n[scan]\nexclude = [\"vendor/[\"]\n[[exceptions]]\nrule = \"PKL003\"\n\
                path = \"a/{b\"\nreason = \"r\"\n";
    assert_eq!(codes(text), ["bad-glob", "bad-glob"]);
    insta::assert_snapshot!(rendered(text));
}

#[test]
fn rejects_bad_pickle_globals() {
    let text =
        "version = 1\n[pickle]\nsafe_globals = [\"mypkg\", \"a.*.b\", \"a.b c\", \"ok.name\"]\n";
    assert_eq!(codes(text), ["bad-global"; 3]);
}

#[test]
fn rejects_malformed_sha256_and_dates() {
    let text = "version = 1\n[[exceptions]]\nrule = \"PKL003\"\npath = \"a.bin\"\nsha256 = \"abc\"\n\
                reason = \"r\"\nexpires = \"2027-13-01\"\n[[exceptions]]\nrule = \"PKL003\"\n\
                path = \"b.bin\"\nsha256 = \"zz\"\nreason = \"r\"\nexpires = 2027-01-01T10:00:00Z\n\
                [[exceptions]]\nrule = \"PKL003\"\npath = \"c.bin\"\nreason = \"r\"\nexpires = 10:00:00\n";
    assert_eq!(
        codes(text),
        [
            "bad-sha256",
            "bad-date",
            "bad-sha256",
            "bad-date",
            "bad-date"
        ]
    );
    insta::assert_snapshot!(rendered(text));
}

#[test]
fn rejects_missing_and_empty_reason() {
    let text = "version = 1\n[[exceptions]]\nrule = \"PKL003\"\npath = \"a.bin\"\n\n\
                [[exceptions]]\nrule = \"PKL003\"\npath = \"b.bin\"\nreason = \"  \"\n";
    assert_eq!(codes(text), ["missing-reason", "missing-reason"]);
    insta::assert_snapshot!(rendered(text));
}

#[test]
fn rejects_exception_missing_rule_and_path() {
    assert_eq!(
        codes("version = 1\n[[exceptions]]\nreason = \"r\"\n"),
        ["missing-key", "missing-key"]
    );
}

#[test]
fn rejects_exception_for_unknown_or_policy_rule() {
    let text = "version = 1\n[[exceptions]]\nrule = \"pickle-formt\"\npath = \"a\"\nreason = \"r\"\n\
                [[exceptions]]\nrule = \"POL002\"\npath = \"a\"\nreason = \"r\"\n";
    assert_eq!(codes(text), ["unknown-rule", "policy-rule-exception"]);
    let p = problems(text);
    assert_eq!(p[0].help.as_deref(), Some("did you mean `pickle-format`?"));
}

#[test]
fn rejects_unknown_limits_and_out_of_range_values() {
    let text = "version = 1\n[safetensors]\nmax_header_bytes = 100000001\n[limits]\n\
                max_fils = 10\narchive_depth = -1\n";
    assert_eq!(
        codes(text),
        ["out-of-range", "unknown-limit", "out-of-range"]
    );
    insta::assert_snapshot!(rendered(text));
    assert_eq!(
        codes("version = 1\n[safetensors]\nmax_header_bytes = 0\n"),
        ["out-of-range"]
    );
}

#[test]
fn rejects_header_limit_set_twice() {
    let text = "version = 1\n[safetensors]\nmax_header_bytes = 10\n[limits]\n\
                safetensors_header_bytes = 10\n";
    assert_eq!(codes(text), ["conflicting-setting"]);
}

#[test]
fn header_limit_and_option_agree() {
    let p = parse(
        "version = 1\n[limits]\nsafetensors_header_bytes = 1000\n",
        PolicySource::Builtin("test"),
    );
    assert!(matches!(&p, Ok(p) if p.safetensors.max_header_bytes == 1000
        && p.limit("safetensors_header_bytes") == 1000));
    let p = parse(
        "version = 1\n[safetensors]\nmax_header_bytes = 2000\n",
        PolicySource::Builtin("test"),
    );
    assert!(matches!(&p, Ok(p) if p.safetensors.max_header_bytes == 2000
        && p.limit("safetensors_header_bytes") == 2000));
}

#[test]
fn rejects_unknown_revision_forms() {
    let text = "version = 1\n[source]\npinned_revisions = [\"tags\", \"branch\"]\n";
    assert_eq!(
        codes(text),
        ["unknown-revision-form", "unknown-revision-form"]
    );
    let p = problems(text);
    assert_eq!(p[0].help.as_deref(), Some("did you mean `tag`?"));
}

#[test]
fn rejects_empty_card_entries() {
    assert_eq!(
        codes("version = 1\n[card]\nrequired_fields = [\"\"]\n"),
        ["empty-value"]
    );
}

#[test]
fn reports_several_problems_together_in_source_order() {
    let text = r#"version = 1

[rules]
PKL01 = "deny"
ST002 = "dney"

[limits]
max_fils = 10

[[exceptions]]
rule = "PKL003"
path = "legacy/*.bin"
sha256 = "1234"
"#;
    let p = problems(text);
    let at: Vec<_> = p.iter().map(|p| (p.line, p.column, p.code)).collect();
    assert_eq!(
        at,
        [
            (4, 1, "unknown-rule"),
            (5, 9, "invalid-level"),
            (8, 1, "unknown-limit"),
            (10, 1, "missing-reason"),
            (13, 10, "bad-sha256"),
        ]
    );
    insta::assert_snapshot!(rendered(text));
}

#[test]
fn columns_count_characters_not_bytes() {
    let p = problems("version = 1\n[rules]\n\"héllo\" = \"deny\"\n");
    assert_eq!(p.len(), 1);
    assert_eq!((p[0].line, p[0].column, p[0].width), (3, 1, 7));
}

#[test]
fn odd_inputs_give_problems_not_panics() {
    for text in [
        "",
        "\u{feff}",
        "version = 1\r\n[rules]\r\nPKL01 = \"deny\"\r\n",
        "version = 1\n[[exceptions]]\n",
        "version = 1\nexceptions = [{ rule = \"PKL003\" }]\n",
        "version = 1\nexceptions = 3\n[rules.PKL001]\n",
        "version = 9999999999999999999\n",
        "v\u{e9}rsion = \"\u{1f600}\"\nrules = \"x\"",
        "version = 1\n[rules]\nPKL001 = \"deny\"\nPKL001 = \"warn\"\n",
        "[",
    ] {
        let p = problems(text);
        assert!(!p.is_empty(), "{text:?} should be rejected");
        assert!(
            p.iter()
                .all(|p| p.line >= 1 && p.column >= 1 && p.width >= 1)
        );
        let _ = rendered(text);
    }
    let crlf = problems("version = 1\r\n[rules]\r\nPKL01 = \"deny\"\r\n");
    assert_eq!((crlf[0].line, crlf[0].column, crlf[0].width), (3, 1, 5));
    assert!(!crlf[0].snippet.contains('\r'));
}

#[test]
fn signing_table_resolves_trust_paths_against_the_policy_file() {
    let text = "version = 1\n[signing]\nrequire = true\nsignature = \"release.sig\"\n\
                keys = [\"k/a.pem\"]\ncertificate_chain = [\"ca.pem\"]\n\
                identities = [{ subject = \"a@b.c\", issuer = \"https://issuer\" }]\n\
                trust_root = \"tr.json\"\n";
    let p = parse(text, PolicySource::File("cfg/modelgate.toml".into()));
    assert!(p.is_ok(), "{:?}", p.err().map(|e| e.to_string()));
    let Ok(p) = p else { return };
    let s = &p.signing;
    assert!(s.require);
    assert_eq!(s.signature, Path::new("release.sig"));
    assert_eq!(s.keys, [PathBuf::from("cfg/k/a.pem")]);
    assert_eq!(s.certificate_chain, [PathBuf::from("cfg/ca.pem")]);
    assert_eq!(s.trust_root.as_deref(), Some(Path::new("cfg/tr.json")));
    assert_eq!(
        s.identities,
        [SigningIdentity {
            subject: "a@b.c".into(),
            subject_regex: false,
            issuer: "https://issuer".into()
        }]
    );
    let d = parse("version = 1\n", PolicySource::Builtin("x"));
    assert!(matches!(d, Ok(p) if p.signing == SigningOptions::default()));
}

#[test]
fn signing_identities_take_an_exact_subject_or_a_regex() {
    let text = "version = 1\n[signing]\ntrust_root = \"tr.json\"\n\
                identities = [{ subject_regex = 'https://github\\.com/org/.*', issuer = \"https://i\" }]\n";
    let p = parse(text, PolicySource::Builtin("x"));
    assert!(p.is_ok(), "{:?}", p.err().map(|e| e.to_string()));
    let Ok(p) = p else { return };
    assert_eq!(
        p.signing.identities,
        [SigningIdentity {
            subject: r"https://github\.com/org/.*".into(),
            subject_regex: true,
            issuer: "https://i".into()
        }]
    );
    let both = "version = 1\n[signing]\ntrust_root = \"tr.json\"\n\
                identities = [{ subject = \"a\", subject_regex = \"b\", issuer = \"https://i\" }]\n";
    assert_eq!(codes(both), ["conflicting-setting"]);
    let bad = "version = 1\n[signing]\ntrust_root = \"tr.json\"\n\
               identities = [{ subject_regex = \"(x\", issuer = \"https://i\" }]\n";
    assert_eq!(codes(bad), ["bad-regex"]);
    let p = problems(bad);
    assert_eq!((p[0].line, p[0].column), (4, 33));
}

#[test]
fn rejects_bad_signing_tables() {
    let text = "version = 1\n[signing]\nrequire = 1\nsignature = \"\"\nkeys = [\"\", 3]\n\
                identities = [{ subject = \"a@b.c\" }, { issuer = \"\", subject = \"x\", sub = 1 }]\n\
                trusted = \"x\"\n";
    assert_eq!(
        codes(text),
        [
            "wrong-type",
            "empty-value",
            "empty-value",
            "wrong-type",
            "missing-key",
            "missing-key",
            "empty-value",
            "unknown-key",
            "unknown-key",
        ]
    );
    let p = problems(text);
    assert_eq!(
        p.last().and_then(|p| p.help.as_deref()),
        Some("did you mean `trust_root`?")
    );
}

#[test]
fn read_error_names_the_path() {
    let e = load_file(Path::new("/nonexistent/modelgate.toml"));
    assert!(matches!(&e, Err(PolicyError::Read { .. })));
    if let Err(e) = e {
        assert!(e.problems().is_empty());
        assert!(
            e.to_string()
                .starts_with("error: cannot read policy `/nonexistent/modelgate.toml`")
        );
    }
}
