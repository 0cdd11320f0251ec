//! **dynamic-code**: the code turns data into code and runs it.
//!
//! Reported for `exec`, `eval`, `compile`, `execfile`, `types.FunctionType`/`CodeType`,
//! `runpy`, `imp.load_source`, and for deserialisers that call code (`pickle`, `dill`,
//! `cloudpickle`, `marshal`) when what they read is a literal, a decoded blob or bytes fetched
//! from the network (a file the caller names is `SRC004`'s business). Literal blobs are decoded
//! as Python would (base64/32/85, hex, `bytes.fromhex`, rot13, zlib, gzip, bz2, lzma, string
//! reversal, nested) and the decoded source is analysed again: its sites are reported at the
//! outer call with the decode chain and an excerpt of the payload.
//!
//! Severity: **critical** for code that is decoded or computed (not a plain literal), and for
//! deserialising literal or fetched bytes; **medium** for evaluating a plain string literal (its
//! content is analysed like any other code, so what it does is reported on its own).

use super::analyzer::{Analyzer, CallSite};
use crate::knowledge::capabilities::Capability;
use crate::model::finding::Severity;

/// `exec`, `eval`, `compile`, code objects.
pub(super) fn judge_evaluate<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    if site.name == "runpy.run_module" {
        return judge_run_module(a, site);
    }
    let arg = site.args.positional.first().copied().or_else(|| {
        site.args
            .keyword("source")
            .or_else(|| site.args.keyword("code"))
    });
    let Some(arg) = arg else {
        return;
    };
    match a.blob(arg) {
        Ok(Some(blob)) => {
            let decoded = blob.is_decoded();
            let excerpt = a.payload_excerpt(&blob.bytes);
            let chain: Vec<String> = blob.chain.iter().map(|c| c.name().to_owned()).collect();
            let (severity, detail) = if decoded {
                (
                    Severity::Critical,
                    format!("runs a decoded blob ({}): `{excerpt}`", chain.join(" -> ")),
                )
            } else {
                (Severity::Medium, format!("runs the literal `{excerpt}`"))
            };
            let at = a.push(
                site.node,
                Capability::DynamicCode,
                severity,
                site.confidence,
                &site.name,
                detail,
                site.entry.cwe,
            );
            if decoded && let Some(s) = a.sites.get_mut(at) {
                s.decoded = Some(super::analyzer::Decoded {
                    chain,
                    excerpt: excerpt.clone(),
                });
            }
            if let Ok(text) = std::str::from_utf8(&blob.bytes) {
                let text = text.to_owned();
                a.analyze_payload(site.node, &text, &blob.chain);
            }
        }
        Ok(None) => {
            let text = a.excerpt(a.text(arg));
            let fetched = super::network::is_fetched(a, arg);
            let detail = if fetched {
                format!("runs code fetched from the network: `{text}`")
            } else {
                format!("runs code computed at run time: `{text}`")
            };
            a.push(
                site.node,
                Capability::DynamicCode,
                Severity::Critical,
                site.confidence
                    .min(super::analyzer::Confidence::Medium)
                    .max(if fetched {
                        super::analyzer::Confidence::High
                    } else {
                        super::analyzer::Confidence::Medium
                    }),
                &site.name,
                detail,
                site.entry.cwe,
            );
        }
        Err(e) => {
            if let Some(limit) = e.limit_name() {
                a.limit_hit.get_or_insert(limit);
            }
            a.push(
                site.node,
                Capability::DynamicCode,
                Severity::Critical,
                site.confidence,
                &site.name,
                format!("runs a literal blob that does not decode ({e})"),
                site.entry.cwe,
            );
        }
    }
}

/// `pickle.loads`, `marshal.loads`, ... of literal, decoded or fetched bytes.
pub(super) fn judge_deserialize<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    let Some(arg) = site
        .args
        .positional
        .first()
        .copied()
        .or_else(|| site.args.keyword("data"))
    else {
        return;
    };
    // Loaders that take a file read a literal as its path (`torch.load("model.bin")`): only
    // bytes wrapped in a file object (`io.BytesIO(blob)`) or a network response are a payload.
    let takes_file = site.name.ends_with(".load")
        || site.name.ends_with("Unpickler")
        || site.name == "shelve.open"
        || site.name == "pandas.read_pickle";
    let arg = if takes_file {
        match a.file_object_content(arg) {
            Some(inner) => inner,
            None if super::network::is_fetched(a, arg) => arg,
            None => return,
        }
    } else {
        arg
    };
    let (detail, decoded) = match a.blob(arg) {
        Ok(Some(blob)) => {
            let chain: Vec<String> = blob.chain.iter().map(|c| c.name().to_owned()).collect();
            let excerpt = a.payload_excerpt(&blob.bytes);
            let how = if chain.is_empty() {
                "literal bytes".to_owned()
            } else {
                format!("a decoded blob ({})", chain.join(" -> "))
            };
            (
                format!("deserialises {how} with a loader that runs code: `{excerpt}`"),
                Some(super::analyzer::Decoded { chain, excerpt }),
            )
        }
        Ok(None) if super::network::is_fetched(a, arg) => (
            format!(
                "deserialises bytes fetched from the network with a loader that runs code: `{}`",
                a.excerpt(a.text(arg))
            ),
            None,
        ),
        Ok(None) => return,
        Err(e) => {
            if let Some(limit) = e.limit_name() {
                a.limit_hit.get_or_insert(limit);
            }
            (
                format!("deserialises a literal blob that does not decode ({e})"),
                None,
            )
        }
    };
    let at = a.push(
        site.node,
        Capability::DynamicCode,
        Severity::Critical,
        site.confidence,
        &site.name,
        detail,
        site.entry.cwe,
    );
    if let Some(s) = a.sites.get_mut(at) {
        s.decoded = decoded.filter(|d| !d.chain.is_empty());
    }
}

/// `runpy.run_module(name)` runs a module as `__main__`: its argument is a module name, not
/// source. `pip` (or `ensurepip`) run that way installs packages with whatever `sys.argv` says,
/// the in-process twin of `python -m pip install`: **critical** package-install. Another module
/// named by a literal is **medium** dynamic code (what it is, is known); a computed name is
/// **critical**.
fn judge_run_module<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    let arg = site
        .args
        .positional
        .first()
        .copied()
        .or_else(|| site.args.keyword("mod_name"));
    let module = arg.and_then(|n| a.string(n));
    let (capability, severity, detail) = match module.as_deref() {
        Some(m) if is_installer_module(m) => (
            Capability::PackageInstall,
            Severity::Critical,
            format!(
                "runs `{}` as a program (`python -m {}`)",
                a.excerpt(m),
                a.excerpt(m)
            ),
        ),
        Some(m) => (
            Capability::DynamicCode,
            Severity::Medium,
            format!("runs the module `{}` as `__main__`", a.excerpt(m)),
        ),
        None => (
            Capability::DynamicCode,
            Severity::Critical,
            format!(
                "runs a module named at run time as `__main__`: `{}`",
                arg.map(|n| a.excerpt(a.text(n))).unwrap_or_default()
            ),
        ),
    };
    a.push(
        site.node,
        capability,
        severity,
        site.confidence,
        &site.name,
        detail,
        capability.cwe(),
    );
}

/// Modules that install packages when run as `__main__`.
fn is_installer_module(module: &str) -> bool {
    let first = module.split('.').next().unwrap_or(module);
    // The one installer list (`knowledge::names::INSTALLERS`), which has `ensurepip` too.
    crate::knowledge::capabilities::is_install_command(&[first, "install"])
}
