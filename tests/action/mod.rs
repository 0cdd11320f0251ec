//! The GitHub Action (`action.yml`), the example workflows, the project's own workflows, the
//! pre-commit hooks and the CI docs.
//!
//! The action is not only parsed: its composite steps are run here with bash against a fake
//! runner (temporary `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, `RUNNER_TEMP`, ...) and the freshly
//! built binary as the `binary` input. A tiny evaluator handles exactly the `${{ }}` forms the
//! action uses, so an action edit that needs more makes these tests fail loudly rather than pass
//! untested. Workflow commands on stdout are parsed the way the runner parses them, honouring
//! `::stop-commands::`, so an attacker-named file that forged a command would show up here.
//!
//! Needs bash and jq (the action's JSON reader); a missing jq fails the tests with a message.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use serde_json::Value;

use super::support::pickle_call;

mod install;
mod release;

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");
const BINARY: &str = env!("CARGO_BIN_EXE_modelgate");

/// The outputs every consumer may rely on (the issue's list).
const REQUIRED_OUTPUTS: [&str; 5] = ["findings", "denied", "sarif-file", "sbom-file", "exit-code"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionFile {
    name: String,
    description: String,
    #[allow(dead_code)]
    author: Option<String>,
    #[allow(dead_code)]
    branding: Option<serde_norway::Value>,
    inputs: BTreeMap<String, Input>,
    outputs: BTreeMap<String, Output>,
    runs: Runs,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    description: String,
    #[allow(dead_code)]
    required: Option<bool>,
    default: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Output {
    description: String,
    value: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Runs {
    using: String,
    steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    id: Option<String>,
    name: Option<String>,
    #[serde(rename = "if")]
    condition: Option<String>,
    uses: Option<String>,
    shell: Option<String>,
    run: Option<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    with: BTreeMap<String, String>,
}

/// A small stand-in for the test binary to package: a script that runs it. The real binary is a
/// debug build of 100+ MB, which gzip would take minutes to compress on a shared machine.
fn stand_in_binary(dir: &Path) -> PathBuf {
    let path = dir.join("modelgate-stand-in");
    fs::write(
        &path,
        format!("#!/usr/bin/env bash\nexec \"{BINARY}\" \"$@\"\n"),
    )
    .expect("stand-in");
    let mut perms = fs::metadata(&path).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&path, perms).expect("chmod");
    path
}

fn repo_file(rel: &str) -> String {
    let p = Path::new(MANIFEST_DIR).join(rel);
    fs::read_to_string(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

fn action() -> ActionFile {
    serde_norway::from_str(&repo_file("action.yml")).expect("action.yml parses")
}

fn yaml(rel: &str) -> serde_norway::Value {
    serde_norway::from_str(&repo_file(rel)).unwrap_or_else(|e| panic!("{rel} parses: {e}"))
}

/// jq is the action's JSON reader; without it the action fails, so these tests cannot run.
fn require_tools() {
    for tool in ["bash", "jq"] {
        let ok = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            ok,
            "`{tool}` is required to run the action's steps (install {tool})"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The harness: a fake runner for composite steps.

/// What evaluating expressions needs to know.
struct Context<'a> {
    inputs: &'a BTreeMap<String, String>,
    steps: &'a BTreeMap<String, BTreeMap<String, String>>,
    runner_temp: &'a Path,
}

impl Context<'_> {
    /// The expression forms the action uses, and nothing else.
    fn value(&self, expr: &str) -> String {
        let expr = expr.trim();
        if let Some(name) = expr.strip_prefix("inputs.") {
            return self
                .inputs
                .get(name)
                .unwrap_or_else(|| panic!("expression uses undeclared input `{name}`"))
                .clone();
        }
        if let Some(rest) = expr.strip_prefix("steps.") {
            let (id, name) = rest
                .split_once(".outputs.")
                .unwrap_or_else(|| panic!("harness does not evaluate `{expr}`"));
            return self
                .steps
                .get(id)
                .and_then(|o| o.get(name))
                .cloned()
                .unwrap_or_default();
        }
        match expr {
            "runner.temp" => self.runner_temp.display().to_string(),
            "runner.os" => "Linux".into(),
            "github.action_path" => MANIFEST_DIR.into(),
            _ => panic!("harness does not evaluate `{expr}`"),
        }
    }

    /// Replaces every `${{ expr }}` in a string.
    fn expand(&self, s: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..]
                .find("}}")
                .unwrap_or_else(|| panic!("unterminated expression in `{s}`"));
            out.push_str(&self.value(&rest[start + 3..start + end]));
            rest = &rest[start + end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// `if:` conditions: `X == 'lit'` and `X != 'lit'` clauses joined by `&&`.
    fn condition(&self, cond: &str) -> bool {
        cond.split("&&").all(|clause| {
            let (lhs, rhs, equal) = if let Some((l, r)) = clause.split_once("==") {
                (l, r, true)
            } else if let Some((l, r)) = clause.split_once("!=") {
                (l, r, false)
            } else {
                panic!("harness does not evaluate the condition `{cond}`")
            };
            let lit = rhs
                .trim()
                .strip_prefix('\'')
                .and_then(|r| r.strip_suffix('\''))
                .unwrap_or_else(|| panic!("condition `{cond}` must compare with a 'literal'"));
            (self.value(lhs) == lit) == equal
        })
    }
}

/// Parses a `GITHUB_OUTPUT` file: `name=value` lines and `name<<DELIM` blocks.
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delim)) = line.split_once("<<") {
            let mut value = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                value.push(l);
            }
            out.insert(name.to_string(), value.join("\n"));
        } else if let Some((name, value)) = line.split_once('=') {
            out.insert(name.to_string(), value.to_string());
        } else {
            panic!("malformed GITHUB_OUTPUT line {line:?}");
        }
    }
    out
}

/// One workflow command the runner would act on.
#[derive(Debug, Clone)]
struct Command_ {
    kind: String,
    props: BTreeMap<String, String>,
    data: String,
}

fn unescape(s: &str) -> String {
    s.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
}

/// The commands in a step's stdout, as the runner reads them: one per line, none between
/// `::stop-commands::TOKEN` and `::TOKEN::`.
fn workflow_commands(stdout: &str) -> Vec<Command_> {
    let mut out = Vec::new();
    let mut stopped: Option<String> = None;
    for line in stdout.lines() {
        if let Some(token) = &stopped {
            if line == format!("::{token}::") {
                stopped = None;
            }
            continue;
        }
        let Some(body) = line.strip_prefix("::") else {
            continue;
        };
        let Some((head, data)) = body.split_once("::") else {
            continue;
        };
        let (kind, props) = head.split_once(' ').unwrap_or((head, ""));
        if kind == "stop-commands" {
            stopped = Some(data.to_string());
            continue;
        }
        let props = props
            .split(',')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').expect("property is key=value");
                (k.to_string(), unescape(v))
            })
            .collect();
        out.push(Command_ {
            kind: kind.to_string(),
            props,
            data: unescape(data),
        });
    }
    out
}

/// The result of running the action once.
struct ActionRun {
    /// The failing step's exit status, or 0.
    status: i32,
    failed_step: Option<String>,
    /// The action's outputs (its `outputs:` evaluated after the last step ran).
    outputs: BTreeMap<String, String>,
    /// Every `run:` step's stdout, in order.
    stdout: String,
    stderr: String,
    /// `GITHUB_STEP_SUMMARY` after the run.
    summary: String,
    /// Steps skipped by their `if:` (by id or name).
    skipped: Vec<String>,
}

impl ActionRun {
    fn commands(&self, kind: &str) -> Vec<Command_> {
        workflow_commands(&self.stdout)
            .into_iter()
            .filter(|c| c.kind == kind)
            .collect()
    }

    fn annotations(&self) -> Vec<Command_> {
        workflow_commands(&self.stdout)
            .into_iter()
            .filter(|c| c.kind == "error" || c.kind == "warning")
            .collect()
    }

    fn output(&self, name: &str) -> &str {
        self.outputs.get(name).map(String::as_str).unwrap_or("")
    }
}

impl std::fmt::Debug for ActionRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "status {} (step {:?})\noutputs {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.status, self.failed_step, self.outputs, self.stdout, self.stderr
        )
    }
}

/// A workspace (the job's checkout) plus the runner's temp dir.
struct Runner {
    workspace: tempfile::TempDir,
    temp: tempfile::TempDir,
    /// Extra environment for every step (as a workflow's `env:` would set).
    env: Vec<(String, String)>,
}

impl Runner {
    fn new() -> Self {
        require_tools();
        Runner {
            workspace: tempfile::tempdir().expect("workspace"),
            temp: tempfile::tempdir().expect("runner temp"),
            env: Vec::new(),
        }
    }

    /// Sets an environment variable for every step.
    fn with_env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    fn ws(&self) -> &Path {
        self.workspace.path()
    }

    /// Copies an example model into the workspace (symlinks copied as symlinks, never followed).
    fn with_example(self, example: &str, to: &str) -> Self {
        copy_tree(
            &Path::new(MANIFEST_DIR).join("examples").join(example),
            &self.ws().join(to),
        );
        self
    }

    /// Runs the action with these `with:` values and `binary` set to the test binary.
    fn run(&self, with: &[(&str, &str)]) -> ActionRun {
        let mut with: Vec<(&str, &str)> = with.to_vec();
        if !with.iter().any(|(k, _)| *k == "binary") {
            with.push(("binary", BINARY));
        }
        self.run_raw(&with, true)
    }

    fn run_raw(&self, with: &[(&str, &str)], execute: bool) -> ActionRun {
        self.run_seeded(with, execute, &[])
    }

    /// Like `run_raw`, with some steps' outputs given up front (`(step id, output, value)`), as
    /// if those steps had already run: lets a dry run follow the branches a step's outputs pick.
    fn run_seeded(
        &self,
        with: &[(&str, &str)],
        execute: bool,
        seeded: &[(&str, &str, &str)],
    ) -> ActionRun {
        let action = action();
        let mut inputs: BTreeMap<String, String> = action
            .inputs
            .iter()
            .map(|(k, i)| (k.clone(), i.default.clone().unwrap_or_default()))
            .collect();
        for (k, v) in with {
            assert!(inputs.contains_key(*k), "the action has no input `{k}`");
            inputs.insert(k.to_string(), v.to_string());
        }
        let summary_path = self.temp.path().join("step_summary.md");
        fs::write(&summary_path, "").expect("summary file");
        let mut steps: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (id, name, value) in seeded {
            steps
                .entry(id.to_string())
                .or_default()
                .insert(name.to_string(), value.to_string());
        }
        let mut run = ActionRun {
            status: 0,
            failed_step: None,
            outputs: BTreeMap::new(),
            stdout: String::new(),
            stderr: String::new(),
            summary: String::new(),
            skipped: Vec::new(),
        };
        for (n, step) in action.runs.steps.iter().enumerate() {
            let label = step
                .id
                .clone()
                .or_else(|| step.name.clone())
                .unwrap_or_else(|| format!("step {n}"));
            let ctx = Context {
                inputs: &inputs,
                steps: &steps,
                runner_temp: self.temp.path(),
            };
            if let Some(cond) = &step.condition
                && !ctx.condition(cond)
            {
                run.skipped.push(label);
                continue;
            }
            if !execute {
                continue;
            }
            let Some(script) = &step.run else {
                panic!("harness cannot run `uses:` step {label} (is `binary` set?)");
            };
            let env: Vec<(String, String)> = step
                .env
                .iter()
                .map(|(k, v)| (k.clone(), ctx.expand(v)))
                .collect();
            let script_path = self.temp.path().join(format!("step{n}.sh"));
            fs::write(&script_path, script).expect("script");
            let output_path = self.temp.path().join(format!("output{n}"));
            fs::write(&output_path, "").expect("output file");
            let out = Command::new("bash")
                // What the runner runs for `shell: bash`.
                .args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&script_path)
                .current_dir(self.ws())
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", self.temp.path())
                .env("GITHUB_OUTPUT", &output_path)
                .env("GITHUB_STEP_SUMMARY", &summary_path)
                .env("GITHUB_ACTION_PATH", MANIFEST_DIR)
                .env("GITHUB_WORKSPACE", self.ws())
                .env("RUNNER_OS", "Linux")
                .env("RUNNER_ARCH", "X64")
                .env("RUNNER_TEMP", self.temp.path())
                .envs(self.env.iter().cloned())
                .envs(env)
                .output()
                .expect("bash runs");
            run.stdout.push_str(&String::from_utf8_lossy(&out.stdout));
            run.stderr.push_str(&String::from_utf8_lossy(&out.stderr));
            let outputs = parse_outputs(&fs::read_to_string(&output_path).expect("outputs"));
            if let Some(id) = &step.id {
                steps.insert(id.clone(), outputs);
            }
            if !out.status.success() {
                run.status = out.status.code().unwrap_or(-1);
                run.failed_step = Some(label);
                break;
            }
        }
        let ctx = Context {
            inputs: &inputs,
            steps: &steps,
            runner_temp: self.temp.path(),
        };
        run.outputs = action
            .outputs
            .iter()
            .map(|(k, o)| (k.clone(), ctx.expand(&o.value)))
            .collect();
        run.summary = fs::read_to_string(&summary_path).expect("summary");
        run
    }
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("read example") {
        let entry = entry.expect("entry");
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().expect("file type");
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src).expect("link"), &dst).expect("symlink");
        } else if kind.is_dir() {
            copy_tree(&src, &dst);
        } else {
            fs::copy(&src, &dst).expect("copy");
        }
    }
}

fn json_file(path: &Path) -> Value {
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is JSON: {e}", path.display()))
}

fn severity_rank(title: &str) -> usize {
    ["(critical)", "(high)", "(medium)", "(low)", "(info)"]
        .iter()
        .position(|s| title.ends_with(s))
        .unwrap_or_else(|| panic!("title `{title}` ends with a severity"))
}

/// What the action must report, from the binary's own JSON report of the same tree: the counts
/// and the annotations it owes, as (kind, rule, path) worst first (deny before warn, then
/// severity, ties in report order), before the `annotations` cap.
struct Expected {
    findings: usize,
    denied: u64,
    warned: u64,
    annotations: Vec<(String, String, String)>,
    /// The line each of `annotations` names, where the finding has one.
    lines: Vec<Option<u64>>,
}

fn expected(ws: &Path, path: &str, args: &[&str]) -> Expected {
    let out = Command::new(BINARY)
        .args(["scan", "--quiet", "--format", "json"])
        .args(args)
        .arg("--")
        .arg(path)
        .current_dir(ws)
        .output()
        .expect("modelgate runs");
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let findings = report["findings"].as_array().expect("findings");
    let rank = |f: &Value| {
        let action = ["deny", "warn"].iter().position(|a| f["action"] == *a);
        let severity = ["critical", "high", "medium", "low", "info"]
            .iter()
            .position(|s| f["severity"] == *s);
        (action, severity)
    };
    let mut owed: Vec<&Value> = findings
        .iter()
        .filter(|f| f["action"] == "deny" || f["action"] == "warn")
        .collect();
    owed.sort_by_key(|f| rank(f));
    let prefix = path.trim_start_matches("./").trim_end_matches('/');
    let lines = owed
        .iter()
        .map(|f| f["location"]["line"].as_u64())
        .collect();
    Expected {
        findings: findings.len(),
        denied: report["summary"]["denied"].as_u64().expect("denied"),
        warned: report["summary"]["warned"].as_u64().expect("warned"),
        annotations: owed
            .into_iter()
            .map(|f| {
                let kind = if f["action"] == "deny" {
                    "error"
                } else {
                    "warning"
                };
                let rel = f["path"].as_str().expect("path");
                let file = if rel.is_empty() {
                    String::new()
                } else {
                    format!("{prefix}/{rel}")
                };
                let rule = f["rule"].as_str().expect("rule").to_string();
                (kind.to_string(), rule, file)
            })
            .collect(),
        lines,
    }
}

/// The annotations as (kind, rule, file) to compare with [`Expected::annotations`].
fn annotation_keys(run: &ActionRun) -> Vec<(String, String, String)> {
    run.annotations()
        .into_iter()
        .map(|c| {
            let rule = c.props["title"]
                .split(' ')
                .nth(1)
                .expect("title names the rule")
                .to_string();
            let file = c.props.get("file").cloned().unwrap_or_default();
            (c.kind, rule, file)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// action.yml structure

#[test]
fn action_is_composite_with_documented_inputs_used_through_env() {
    let action = action();
    assert_eq!(action.name, "modelgate");
    assert!(!action.description.is_empty());
    assert_eq!(action.runs.using, "composite");
    let mut env_values = String::new();
    for step in &action.runs.steps {
        if let Some(script) = &step.run {
            // An expression inside a script is pasted in as code: script injection.
            assert!(
                !script.contains("${{"),
                "a `run:` holds an expression: {script}"
            );
            assert_eq!(step.shell.as_deref(), Some("bash"), "step {:?}", step.id);
            assert!(step.uses.is_none());
        } else {
            let uses = step.uses.as_deref().unwrap_or_default();
            assert!(
                uses.starts_with("actions/cache/"),
                "unexpected action {uses}"
            );
            assert!(step.env.is_empty());
            // The cached binary is found by the key the setup step computed, at its install root.
            assert_eq!(step.with["path"], "${{ steps.setup.outputs.install-root }}");
            assert_eq!(step.with["key"], "${{ steps.setup.outputs.cache-key }}");
        }
        env_values.extend(step.env.values().map(|v| format!("{v}\n")));
    }
    for (name, input) in &action.inputs {
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "input `{name}` is not kebab-case"
        );
        assert!(
            !input.description.trim().is_empty(),
            "input `{name}` has no description"
        );
        assert!(
            env_values.contains(&format!("${{{{ inputs.{name} }}}}")),
            "input `{name}` reaches no step's env"
        );
    }
    let expected: BTreeSet<&str> = [
        "path",
        "policy",
        "fail-on",
        "format",
        "sarif-file",
        "category",
        "sbom-file",
        "sbom-format",
        "sbom-spec",
        "sbom-version",
        "annotations",
        "summary",
        "args",
        "binary",
        "version",
    ]
    .into();
    assert_eq!(
        action
            .inputs
            .keys()
            .map(String::as_str)
            .collect::<BTreeSet<_>>(),
        expected
    );
    for name in REQUIRED_OUTPUTS {
        let out = action
            .outputs
            .get(name)
            .unwrap_or_else(|| panic!("output `{name}` is not declared"));
        assert!(!out.description.is_empty());
        assert_eq!(out.value, format!("${{{{ steps.scan.outputs.{name} }}}}"));
    }
}

/// Every `uses:` of another repository's action is pinned by a full commit SHA with a version
/// comment, in the action and in every workflow.
#[test]
fn third_party_actions_are_pinned_by_commit_sha() {
    let files = [
        "action.yml",
        "examples/workflows/scan.yml",
        "examples/workflows/release.yml",
        ".github/workflows/ci.yml",
        ".github/workflows/action-selftest.yml",
        ".github/workflows/release.yml",
    ];
    let mut pinned = 0;
    for rel in files {
        for line in repo_file(rel).lines() {
            let Some(rest) = line
                .trim_start()
                .trim_start_matches("- ")
                .strip_prefix("uses:")
            else {
                continue;
            };
            let reference = rest.trim();
            if reference.starts_with("./") {
                continue;
            }
            let (target, comment) = reference.split_once(" # ").unwrap_or((reference, ""));
            let (_, sha) = target
                .split_once('@')
                .unwrap_or_else(|| panic!("{rel}: `{reference}` has no @ref"));
            assert!(
                sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()),
                "{rel}: `{reference}` is not pinned by a full commit SHA"
            );
            assert!(
                comment.starts_with('v'),
                "{rel}: `{reference}` has no # vX comment"
            );
            pinned += 1;
        }
    }
    assert!(pinned >= 8, "found only {pinned} pinned uses");
}

#[test]
fn cache_and_build_steps_run_only_without_a_binary() {
    let runner = Runner::new();
    let with_binary = runner.run_raw(&[("binary", BINARY)], false);
    // install, cache restore, build, cache save.
    assert_eq!(with_binary.skipped.len(), 4, "{:?}", with_binary.skipped);
    // Without a binary the install step decides: the source build (cache, build, save) runs
    // only when it chose `source`; a verified release binary skips all three.
    let building = runner.run_seeded(&[], false, &[("install", "method", "source")]);
    assert!(building.skipped.is_empty(), "{:?}", building.skipped);
    let downloaded = runner.run_seeded(&[], false, &[("install", "method", "binary")]);
    assert_eq!(downloaded.skipped.len(), 3, "{:?}", downloaded.skipped);
    assert!(!downloaded.skipped.contains(&"install".to_string()));

    // The setup step alone: the cache key names the OS, arch, version and a source digest.
    let action = action();
    let setup = &action.runs.steps[0];
    assert_eq!(setup.id.as_deref(), Some("setup"));
    let run = runner.run(&[]);
    assert_eq!(run.status, 0, "{run:?}");
    let out_file = runner.temp.path().join("output0");
    let outputs = parse_outputs(&fs::read_to_string(out_file).expect("setup outputs"));
    let key = &outputs["cache-key"];
    let version = env!("CARGO_PKG_VERSION");
    let digest = key
        .strip_prefix(&format!("modelgate-Linux-X64-v{version}-"))
        .unwrap_or_else(|| panic!("cache key {key}"));
    assert!(
        !digest.is_empty() && digest.bytes().all(|b| b.is_ascii_digit()),
        "{key}"
    );
}

// ---------------------------------------------------------------------------------------------
// Running the action

#[test]
fn clean_model_passes() {
    let runner = Runner::new().with_example("clean-model", "model");
    let run = runner.run(&[("path", "model")]);
    assert_eq!(run.status, 0, "{run:?}");
    assert_eq!(run.output("exit-code"), "0");
    assert_eq!(run.output("denied"), "0");
    assert_eq!(run.output("warned"), "0");
    // PRV001 (not a git repository) is allowed by the default policy: a finding, not annotated.
    assert_eq!(run.output("findings"), "1");
    assert!(run.annotations().is_empty(), "{run:?}");
    assert!(
        run.summary.starts_with("## modelgate: PASS"),
        "{}",
        run.summary
    );
    let sarif = json_file(Path::new(run.output("sarif-file")));
    assert_eq!(sarif["version"], "2.1.0");
    let sbom = json_file(Path::new(run.output("sbom-file")));
    assert_eq!(sbom["bomFormat"], "CycloneDX");
    assert!(run.stdout.contains("modelgate: PASS"));
}

#[test]
fn risky_model_fails_with_outputs_annotations_and_summary() {
    let runner = Runner::new().with_example("risky-model", "models/risky");
    let want = expected(runner.ws(), "models/risky", &[]);
    assert!(
        want.denied >= 3 && want.annotations.len() > 10,
        "the example changed"
    );
    let run = runner.run(&[("path", "./models/risky/")]);
    assert_eq!(run.status, 1, "{run:?}");
    assert_eq!(run.failed_step.as_deref(), Some("scan"));
    assert_eq!(run.output("exit-code"), "1");
    assert_eq!(run.output("denied"), want.denied.to_string());
    assert_eq!(run.output("warned"), want.warned.to_string());
    assert_eq!(run.output("findings"), want.findings.to_string());
    assert!(
        run.summary.starts_with("## modelgate: FAIL"),
        "{}",
        run.summary
    );
    assert!(run.summary.contains(&format!("**{} denied**", want.denied)));

    // The default cap, 10: every deny, then the worst warnings, in that order.
    let notes = run.annotations();
    assert_eq!(annotation_keys(&run), want.annotations[..10], "{run:?}");
    assert_eq!(
        notes[0].props["title"],
        "modelgate PKL001 pickle-unsafe-global (critical)"
    );
    for kind in ["error", "warning"] {
        let ranks: Vec<usize> = notes
            .iter()
            .filter(|c| c.kind == kind)
            .map(|c| severity_rank(&c.props["title"]))
            .collect();
        assert!(
            ranks.is_sorted(),
            "{kind} annotations not worst first: {ranks:?}"
        );
    }
    // Paths are relative to the workspace, so GitHub places them on the right file.
    // A finding with a line is annotated on it; one in a binary file on its first line.
    for (c, line) in notes.iter().zip(&want.lines) {
        if let Some(file) = c.props.get("file") {
            assert!(file.starts_with("models/risky/"), "{file}");
            assert!(runner.ws().join(file).symlink_metadata().is_ok(), "{file}");
            let expected = line.unwrap_or(1).to_string();
            assert_eq!(c.props.get("line"), Some(&expected), "{c:?}");
        }
    }
    assert!(
        want.lines[..10].iter().any(Option::is_some),
        "no finding with a line"
    );
    assert!(notes.iter().all(|c| !c.data.is_empty()));
    let notice = run.commands("notice");
    assert_eq!(notice.len(), 1, "{run:?}");
    let more = want.annotations.len() - 10;
    assert!(
        notice[0].data.starts_with(&format!("{more} more")),
        "{}",
        notice[0].data
    );

    let sarif = json_file(Path::new(run.output("sarif-file")));
    assert_eq!(
        sarif["runs"][0]["results"].as_array().map(Vec::len),
        Some(want.findings)
    );
    let sbom = json_file(Path::new(run.output("sbom-file")));
    assert_eq!(sbom["specVersion"], "1.5");
    assert!(run.output("report-file").ends_with(".md"));
    let verdict = format!(
        "modelgate: FAIL: {} denied, {} warned",
        want.denied, want.warned
    );
    assert!(run.stdout.contains(&verdict), "{run:?}");
}

#[test]
fn a_repository_level_finding_is_annotated_without_a_file() {
    let runner = Runner::new().with_example("risky-model", "risky");
    let run = runner.run(&[("path", "risky"), ("annotations", "100")]);
    let want = expected(runner.ws(), "risky", &[]);
    assert_eq!(annotation_keys(&run), want.annotations, "{run:?}");
    assert!(run.commands("notice").is_empty());
    let card = run
        .annotations()
        .into_iter()
        .find(|c| c.props["title"].contains("CARD001"))
        .expect("no model card finding");
    assert!(!card.props.contains_key("file") && !card.props.contains_key("line"));
}

#[test]
fn annotations_are_capped_worst_first_with_a_notice() {
    let runner = Runner::new().with_example("risky-model", "risky");
    let want = expected(runner.ws(), "risky", &[]);
    let run = runner.run(&[("path", "risky"), ("annotations", "3")]);
    assert_eq!(run.status, 1, "{run:?}");
    assert_eq!(annotation_keys(&run), want.annotations[..3]);
    let ranks: Vec<usize> = run
        .annotations()
        .iter()
        .map(|c| severity_rank(&c.props["title"]))
        .collect();
    // Worst first: the example's three critical findings (two pickle globals and the
    // `os.system` its modeling file runs, SRC006) come before the high ones.
    assert_eq!(ranks, [0, 0, 0], "critical, critical, critical");
    let notice = run.commands("notice");
    assert_eq!(notice.len(), 1);
    let more = want.annotations.len() - 3;
    assert!(
        notice[0].data.starts_with(&format!("{more} more")),
        "{}",
        notice[0].data
    );

    let none = runner.run(&[("path", "risky"), ("annotations", "0")]);
    assert_eq!(none.status, 1);
    assert!(none.annotations().is_empty() && none.commands("notice").is_empty());
}

/// File names are chosen by whoever publishes the model: `,` `:` `%` and line breaks must not
/// end a property or the command early, nor forge a second command.
#[test]
fn annotation_properties_and_data_are_escaped() {
    let runner = Runner::new();
    let dir = runner.ws().join("m");
    fs::create_dir_all(&dir).expect("mkdir");
    let names = ["a,b:c%2C.pkl", "two\nlines::error::x.pkl", "cr\r%0A.pkl"];
    for name in names {
        fs::write(dir.join(name), pickle_call("os", "system", "id")).expect("write");
    }
    let run = runner.run(&[("path", "m"), ("annotations", "50")]);
    assert_eq!(run.status, 1, "{run:?}");
    let notes = run.annotations();
    let files: BTreeSet<String> = notes
        .iter()
        .filter_map(|c| c.props.get("file").cloned())
        .collect();
    for name in names {
        assert!(
            files.contains(&format!("m/{name}")),
            "{name:?} not in {files:?}"
        );
    }
    // Nothing but the action's own commands: every error carries a rule title.
    assert!(
        notes.iter().all(|c| c.props.contains_key("title")),
        "{run:?}"
    );
    assert!(
        workflow_commands(&run.stdout)
            .iter()
            .all(|c| ["error", "warning", "notice"].contains(&c.kind.as_str())),
        "{run:?}"
    );
}

/// A wrapper around the real binary that prints forged workflow commands (as a hostile file name
/// echoed in an error message would) and pads the Markdown report past GitHub's 1 MiB limit.
fn hostile_wrapper(dir: &Path) -> PathBuf {
    let path = dir.join("modelgate-wrapper");
    let script = format!(
        r#"#!/usr/bin/env bash
echo '::error::forged by the scanned tree'
echo '::set-output name=denied::0'
"{BINARY}" "$@"
code=$?
while [ $# -gt 0 ]; do
  if [ "$1" = -o ]; then
    for i in $(seq 30000); do echo "| padding row $i with some text to make the summary large |"; done >>"$2"
  fi
  shift
done
exit $code
"#
    );
    fs::write(&path, script).expect("wrapper");
    let mut perms = fs::metadata(&path).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&path, perms).expect("chmod");
    path
}

#[test]
fn scanner_output_cannot_issue_commands_and_the_summary_is_capped() {
    let runner = Runner::new().with_example("risky-model", "risky");
    let wrapper = hostile_wrapper(runner.temp.path());
    let wrapper = wrapper.to_str().expect("utf-8 path");
    let run = runner.run(&[("path", "risky"), ("binary", wrapper)]);
    assert_eq!(run.status, 1, "{run:?}");
    assert!(run.stdout.contains("::error::forged"), "the wrapper ran");
    assert!(run.annotations().iter().all(|c| !c.data.contains("forged")));
    assert!(run.commands("set-output").is_empty());
    let want = expected(runner.ws(), "risky", &[]);
    assert_eq!(run.output("denied"), want.denied.to_string());
    assert!(
        run.summary.len() <= 1_000_000 + 100,
        "{}",
        run.summary.len()
    );
    assert!(run.summary.starts_with("## modelgate: FAIL"));
    assert!(
        run.summary
            .ends_with("*(summary truncated at 1 MB; the SARIF file has every finding)*\n")
    );
    assert!(
        run.summary
            .lines()
            .all(|l| l.is_empty() || !l.starts_with("| padding") || l.ends_with('|'))
    );
}

#[test]
fn inputs_are_never_evaluated_by_the_shell() {
    let runner = Runner::new().with_example("clean-model", "model");
    let run = runner.run(&[
        ("path", "$(touch pwned1)"),
        (
            "args",
            "--no-git $(touch pwned2) `touch pwned3` ; touch pwned4",
        ),
        ("policy", "';touch pwned5;'"),
    ]);
    assert_eq!(run.status, 2, "{run:?}");
    for n in 1..=5 {
        assert!(!runner.ws().join(format!("pwned{n}")).exists(), "pwned{n}");
    }
}

#[test]
fn args_are_split_on_whitespace_and_passed_through() {
    let runner = Runner::new().with_example("risky-model", "risky");
    let run = runner.run(&[
        ("path", "risky"),
        ("args", "--no-git\n  --jobs 1 --exclude **/*.bin"),
    ]);
    assert_eq!(run.status, 1, "{run:?}");
    // pytorch_model.bin is excluded: the glob reached modelgate unexpanded, every flag arrived.
    let want = expected(runner.ws(), "risky", &["--no-git", "--exclude", "**/*.bin"]);
    let all = expected(runner.ws(), "risky", &["--no-git"]);
    assert!(want.denied < all.denied);
    assert_eq!(run.output("denied"), want.denied.to_string());
    let sarif = json_file(Path::new(run.output("sarif-file")));
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert!(
        results
            .iter()
            .all(|r| r["properties"]["path"] != "pytorch_model.bin")
    );
}

#[test]
fn tool_failure_exits_2_with_an_error_and_an_exit_code_output() {
    let runner = Runner::new().with_example("clean-model", "model");
    let run = runner.run(&[("path", "model"), ("policy", "missing.toml")]);
    assert_eq!(run.status, 2, "{run:?}");
    assert_eq!(run.output("exit-code"), "2");
    assert_eq!(run.output("findings"), "");
    let errors = run.commands("error");
    assert_eq!(errors.len(), 1, "{run:?}");
    assert!(errors[0].data.contains("exit code 2"), "{}", errors[0].data);

    let missing = runner.run(&[("path", "model"), ("binary", "no/such/modelgate")]);
    assert_eq!(missing.status, 2, "{missing:?}");
    assert_eq!(missing.output("exit-code"), "2");
}

#[test]
fn bad_inputs_fail_in_setup_with_one_error() {
    let runner = Runner::new().with_example("clean-model", "model");
    for (name, value) in [
        ("fail-on", "sometimes"),
        ("format", "html"),
        ("sbom-format", "spdx"),
        ("sbom-spec", "2.0"),
        ("sbom-version", "1.0\n::set-output name=denied::0"),
        ("summary", "yes"),
        ("annotations", "-1"),
        ("annotations", "9999999"),
        ("sarif-file", "x\n::set-output name=denied::0"),
        ("fail-on", "x\n::set-output name=denied::0"),
    ] {
        let run = runner.run(&[("path", "model"), (name, value)]);
        assert_eq!(run.status, 2, "{name}={value:?}: {run:?}");
        assert_eq!(run.failed_step.as_deref(), Some("setup"));
        let commands = workflow_commands(&run.stdout);
        assert_eq!(commands.len(), 1, "{name}={value:?}: {commands:?}");
        assert_eq!(commands[0].kind, "error");
        assert!(commands[0].data.contains(name), "{}", commands[0].data);
        assert_eq!(run.output("denied"), "");
    }
}

#[test]
fn fail_on_warn_fails_and_never_passes() {
    let runner = Runner::new().with_example("clean-model", "model");
    // No model card once README.md is gone: a warned finding.
    fs::remove_file(runner.ws().join("model/README.md")).expect("rm");
    let warn = runner.run(&[("path", "model"), ("fail-on", "warn")]);
    assert_eq!(warn.status, 1, "{warn:?}");
    assert_eq!(warn.output("warned"), "1");
    assert_eq!(warn.output("denied"), "0");
    assert_eq!(warn.commands("warning").len(), 1);

    let runner = Runner::new().with_example("risky-model", "risky");
    let want = expected(runner.ws(), "risky", &[]);
    let never = runner.run(&[("path", "risky"), ("fail-on", "never")]);
    assert_eq!(never.status, 0, "{never:?}");
    assert_eq!(never.output("denied"), want.denied.to_string());
    assert_eq!(annotation_keys(&never), want.annotations[..10]);
}

#[test]
fn custom_paths_formats_and_no_summary() {
    let runner = Runner::new().with_example("risky-model", "risky");
    let run = runner.run(&[
        ("path", "risky"),
        ("format", "json"),
        ("sarif-file", "out.sarif"),
        ("sbom-file", "out.cdx.xml"),
        ("sbom-format", "xml"),
    ]);
    assert_eq!(run.status, 1, "{run:?}");
    assert_eq!(run.output("sarif-file"), "out.sarif");
    assert_eq!(run.output("sbom-file"), "out.cdx.xml");
    assert!(runner.ws().join("out.sarif").is_file());
    let xml = fs::read_to_string(runner.ws().join("out.cdx.xml")).expect("xml sbom");
    assert!(xml.starts_with("<?xml") && xml.contains("cyclonedx.org/schema/bom/1.5"));
    let want = expected(runner.ws(), "risky", &[]);
    let report = json_file(Path::new(run.output("report-file")));
    assert_eq!(report["summary"]["denied"], want.denied);
    // Not Markdown: the summary is the counts only (numbers, nothing from the scanned tree).
    let (d, w, n) = (want.denied, want.warned, want.findings);
    assert_eq!(
        run.summary,
        format!(
            "## modelgate: FAIL\n\n**{d} denied**, {w} warned, {n} findings in all (report format: json)\n"
        )
    );

    let quiet = runner.run(&[("path", "risky"), ("summary", "false")]);
    assert_eq!(quiet.status, 1);
    assert_eq!(quiet.summary, "");
}

/// `sbom-spec` and `sbom-version` reach the scan: a 1.7 SBOM naming the release; 1.7 as XML
/// is refused in setup.
#[test]
fn sbom_spec_and_version_inputs_pass_through() {
    let runner = Runner::new().with_example("clean-model", "model");
    let run = runner.run(&[
        ("path", "model"),
        ("sbom-file", "out.cdx.json"),
        ("sbom-spec", "1.7"),
        ("sbom-version", "3.1.4"),
    ]);
    assert_eq!(run.status, 0, "{run:?}");
    let bom = json_file(&runner.ws().join("out.cdx.json"));
    assert_eq!(bom["specVersion"], "1.7");
    assert_eq!(bom["metadata"]["component"]["version"], "3.1.4");

    let xml = runner.run(&[
        ("path", "model"),
        ("sbom-spec", "1.7"),
        ("sbom-format", "xml"),
    ]);
    assert_eq!(xml.status, 2, "{xml:?}");
    assert_eq!(xml.failed_step.as_deref(), Some("setup"));
}

#[test]
fn a_file_root_annotates_next_to_the_file() {
    let runner = Runner::new().with_example("risky-model", "risky");
    let run = runner.run(&[("path", "risky/pytorch_model.bin"), ("args", "--no-git")]);
    assert_eq!(run.status, 1, "{run:?}");
    let errors = run.commands("error");
    assert!(!errors.is_empty());
    assert!(
        errors
            .iter()
            .all(|c| c.props.get("file").map(String::as_str) == Some("risky/pytorch_model.bin")),
        "{errors:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Workflows, pre-commit, docs

fn steps_of(workflow: &serde_norway::Value) -> Vec<&serde_norway::Value> {
    let jobs = workflow["jobs"].as_mapping().expect("jobs");
    jobs.values()
        .flat_map(|job| job["steps"].as_sequence().expect("steps").iter())
        .collect()
}

#[test]
fn workflows_use_only_declared_inputs_and_minimal_permissions() {
    let action = action();
    for rel in [
        "examples/workflows/scan.yml",
        "examples/workflows/release.yml",
        ".github/workflows/ci.yml",
        ".github/workflows/action-selftest.yml",
        ".github/workflows/release.yml",
    ] {
        let wf = yaml(rel);
        assert_eq!(
            wf["permissions"]["contents"].as_str(),
            Some("read"),
            "{rel}: top-level permissions"
        );
        for step in steps_of(&wf) {
            if let Some(script) = step["run"].as_str() {
                assert!(
                    !script.contains("${{"),
                    "{rel}: expression inside run: {script}"
                );
            }
            let Some(uses) = step["uses"].as_str() else {
                continue;
            };
            if uses.starts_with("actions/checkout@") {
                assert_eq!(
                    step["with"]["persist-credentials"].as_bool(),
                    Some(false),
                    "{rel}: checkout keeps credentials"
                );
            }
            if uses == "./" || uses.starts_with("modelgate/modelgate@") {
                let with = step["with"].as_mapping().expect("with");
                for key in with.keys() {
                    let key = key.as_str().expect("key");
                    assert!(
                        action.inputs.contains_key(key),
                        "{rel}: unknown input `{key}`"
                    );
                }
            }
        }
    }
    let scan = yaml("examples/workflows/scan.yml");
    assert_eq!(
        scan["jobs"]["scan"]["permissions"]["security-events"].as_str(),
        Some("write")
    );
    let upload = steps_of(&scan)
        .into_iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))
        })
        .expect("upload-sarif step");
    assert!(upload["if"].as_str().expect("if").contains("!cancelled()"));
    let release = yaml("examples/workflows/release.yml");
    assert_eq!(
        release["jobs"]["sbom"]["permissions"]["contents"].as_str(),
        Some("write")
    );
    let release_text = repo_file("examples/workflows/release.yml");
    assert!(release_text.contains("gh release upload") && release_text.contains("GH_TOKEN:"));
    assert!(release_text.contains("modelgate verify --sbom"));
    let selftest = repo_file(".github/workflows/action-selftest.yml");
    for needle in [
        "examples/clean-model",
        "examples/risky-model",
        "continue-on-error: true",
    ] {
        assert!(selftest.contains(needle), "selftest lacks {needle}");
    }
    assert!(repo_file(".github/workflows/ci.yml").contains(".ci/run"));
}

#[test]
fn docs_show_the_example_files_verbatim() {
    let docs = repo_file("README.md");
    for rel in [
        "examples/workflows/scan.yml",
        "examples/workflows/release.yml",
        "examples/workflows/pre-commit-config.yaml",
    ] {
        let text = repo_file(rel);
        assert!(
            docs.contains(&format!("```yaml\n{text}```\n")),
            "README.md (Use in CI) does not show {rel} verbatim"
        );
    }
    for name in action().inputs.keys() {
        assert!(
            docs.contains(&format!("| `{name}` |")),
            "README.md (Use in CI) lacks input {name}"
        );
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Hook {
    id: String,
    name: String,
    description: String,
    entry: String,
    language: String,
    pass_filenames: bool,
    files: String,
}

#[test]
fn pre_commit_hooks_scan_the_staged_files() {
    let hooks: Vec<Hook> =
        serde_norway::from_str(&repo_file(".pre-commit-hooks.yaml")).expect("hooks parse");
    let ids: BTreeSet<&str> = hooks.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "modelgate",
            "modelgate-docker",
            "modelgate-python",
            "modelgate-system"
        ]
        .into()
    );
    let config = yaml("examples/workflows/pre-commit-config.yaml");
    let repo = &config["repos"][0];
    assert_eq!(
        repo["repo"].as_str(),
        Some("https://github.com/modelgate/modelgate")
    );
    for hook in repo["hooks"].as_sequence().expect("hooks") {
        assert!(ids.contains(hook["id"].as_str().expect("id")));
    }

    let ws = tempfile::tempdir().expect("tmp");
    let risky = ws.path().join("risky");
    let clean = ws.path().join("clean");
    copy_tree(
        &Path::new(MANIFEST_DIR).join("examples/risky-model"),
        &risky,
    );
    copy_tree(
        &Path::new(MANIFEST_DIR).join("examples/clean-model"),
        &clean,
    );
    for hook in &hooks {
        assert!(!hook.name.is_empty() && !hook.description.is_empty());
        assert!(["rust", "python", "system", "docker_image"].contains(&hook.language.as_str()));
        assert!(hook.pass_filenames);
        assert!(hook.files.contains("safetensors") && hook.files.contains("pt"));
        // Run the entry as pre-commit would: entry words, then the staged file names. The
        // container hook's first word is the release image, whose entrypoint is modelgate.
        let mut words = hook.entry.split_whitespace();
        let program = if hook.language == "docker_image" {
            format!("ghcr.io/modelgate/modelgate:{}", env!("CARGO_PKG_VERSION"))
        } else {
            "modelgate".to_string()
        };
        assert_eq!(words.next(), Some(program.as_str()));
        let args: Vec<&str> = words.collect();
        let staged = |files: &[PathBuf]| {
            Command::new(BINARY)
                .args(&args)
                .args(files)
                .current_dir(ws.path())
                .output()
                .expect("run hook")
        };
        let bad = staged(&[
            clean.join("model.safetensors"),
            risky.join("pytorch_model.bin"),
        ]);
        assert_eq!(bad.status.code(), Some(1), "{bad:?}");
        let good = staged(&[clean.join("model.safetensors")]);
        assert_eq!(good.status.code(), Some(0), "{good:?}");
    }
}
