//! **process-execution**: the code starts another program.
//!
//! Reported for `os.system`, `os.popen`, the `os.exec*`, `os.spawn*` and `os.posix_spawn*`
//! families, `os.fork`, every `subprocess` entry point, `pty.spawn`, asyncio subprocesses,
//! `pexpect` and friends (the capability table lists them all), however they are reached:
//! `import subprocess as sp`, `from os import system as run`, `getattr(os, "sys" + "tem")`,
//! `__import__("os").system`. The command is shown when it is a literal (a string, or a list
//! of strings, where `sys.executable` reads as `python`). Model code never needs to start a
//! program at load time, so every site is **critical**; the confidence is lower when the call
//! was resolved through a computed name.

use super::analyzer::{Analyzer, CallSite};
use crate::knowledge::capabilities::Capability;
use crate::model::finding::Severity;

/// Judges a call whose table role is `Command` or a process `Call` (`os.fork`).
pub(super) fn judge<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    let words = command_words(a, site);
    let detail = match &words {
        Some(w) if w.iter().any(|x| x == "python") && w.first().is_some_and(|x| x == "python") => {
            format!(
                "runs python (`sys.executable`): `{}`",
                a.excerpt(&w.join(" "))
            )
        }
        Some(w) => format!("runs `{}`", a.excerpt(&w.join(" "))),
        None => match site
            .args
            .positional
            .first()
            .copied()
            .or(site.args.keyword("args"))
        {
            Some(arg) => format!("runs the command in `{}`", a.excerpt(a.text(arg))),
            None => "starts a process".to_owned(),
        },
    };
    a.push(
        site.node,
        Capability::ProcessExecution,
        Severity::Critical,
        site.confidence,
        &site.name,
        detail,
        site.entry.cwe,
    );
}

/// The words of a literal command: a string split on whitespace, or a list whose items are
/// literal strings or `sys.executable` (read as `python`). `None` when any part is computed.
pub(super) fn command_words<'s>(
    a: &Analyzer<'s, '_, '_>,
    site: &CallSite<'s>,
) -> Option<Vec<String>> {
    // `os.execv(path, argv)`, `os.spawnv(mode, path, argv)`: the argv list holds the program.
    let arg = site.args.keyword("args").or_else(|| {
        site.args.positional.iter().copied().find(|p| {
            matches!(
                p.kind(),
                "list"
                    | "tuple"
                    | "string"
                    | "concatenated_string"
                    | "binary_operator"
                    | "call"
                    | "attribute"
            ) && !a.text(*p).starts_with("os.P_")
        })
    })?;
    if matches!(arg.kind(), "list" | "tuple") {
        let mut cursor = arg.walk();
        let items: Vec<_> = arg.named_children(&mut cursor).collect();
        let mut out = Vec::new();
        for item in items.into_iter().take(64) {
            if a.resolves_to(item, "sys.executable") {
                out.push("python".to_owned());
            } else {
                out.push(a.string(item)?);
            }
        }
        return Some(out);
    }
    if a.resolves_to(arg, "sys.executable") {
        return Some(vec!["python".to_owned()]);
    }
    let s = a.string(arg)?;
    Some(s.split_whitespace().take(64).map(str::to_owned).collect())
}
