//! **package-install**: the code installs Python packages.
//!
//! Reported for `pip.main`, anything under `pip._internal`, `ensurepip`, and a process whose
//! literal command installs (`pip install`, `python -m pip install`, `sys.executable -m pip
//! install`, `conda`/`uv` installs, `easy_install`, `setup.py install`/`develop`). Installing
//! from inside a model load changes the environment of everyone who loads it, often from another
//! index: **critical**.

use super::analyzer::{Analyzer, CallSite};
use super::process::command_words;
use crate::knowledge::capabilities::{self as caps, Capability};
use crate::model::finding::Severity;

/// A process started with a literal install command.
pub(super) fn judge_command<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    let Some(words) = command_words(a, site) else {
        return;
    };
    let refs: Vec<&str> = words.iter().map(String::as_str).collect();
    if !caps::is_install_command(&refs) {
        return;
    }
    let detail = format!("installs packages: `{}`", a.excerpt(&words.join(" ")));
    a.push(
        site.node,
        Capability::PackageInstall,
        Severity::Critical,
        site.confidence,
        &site.name,
        detail,
        Capability::PackageInstall.cwe(),
    );
}

/// `pip.main([...])`, `pip._internal...`: pip driven in-process.
pub(super) fn judge_call<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    let args = site
        .args
        .node
        .map(|n| a.excerpt(a.text(n)))
        .unwrap_or_default();
    a.push(
        site.node,
        Capability::PackageInstall,
        Severity::Critical,
        site.confidence,
        &site.name,
        format!(
            "runs pip in-process{}",
            if args.is_empty() {
                String::new()
            } else {
                format!(": `{args}`")
            }
        ),
        site.entry.cwe,
    );
}
