//! TorchScript source inside model archives (issue 16). `torch.jit.save` writes the model's
//! code as Python-syntax files under `code/`; `torch.jit.load` compiles and runs them, and so
//! did `torch.load(weights_only=True)` before torch 2.6 (CVE-2025-32434). The files are parsed
//! with the same tree-sitter scanner as repository code, bounded by `code_file_bytes`, and every
//! call that reaches files, native libraries or processes (`torch.from_file`,
//! `torch.ops.load_library`, `open`, `os.*`, ...) is a PKL001 finding: it runs at load time,
//! like a dangerous pickle global. Nothing is compiled or evaluated.

use std::io::{self, BufRead};

use serde_json::json;

use super::context::Ctx;
use super::read;
use crate::code::python as code;
use crate::model::finding::{Location, Severity};
use crate::model::rules::RuleId;

/// Is this archive member TorchScript source? (`<archive>/code/**/*.py`, wherever the
/// `code/` folder sits, as [`super::zip::torchscript_code`] lists them.)
pub fn is_code_member(name: &str) -> bool {
    (name.contains("/code/") || name.starts_with("code/")) && name.ends_with(".py")
}

/// Reads one TorchScript source member and reports its dangerous calls.
pub fn inspect_code_member(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, member: &str) -> io::Result<()> {
    let limit = ctx.cfg.limits.code_file_bytes;
    let (bytes, more) = read::read_bounded(r, limit)?;
    let at = |pos: Option<(usize, usize)>| Location {
        member: Some(member.to_string()),
        line: pos.map(|(l, _)| l as u64),
        column: pos.map(|(_, c)| c as u64),
        ..Location::default()
    };
    if more {
        // Unread TorchScript is unchecked code that runs on load.
        let cfg = ctx.cfg;
        let d = ctx.detect(
            RuleId::LimitExceeded,
            format!("code_file_bytes:{member}"),
            format!(
                "torchscript source `{member}` is larger than the code_file_bytes limit ({limit} bytes); its calls were not checked; {}",
                super::context::raise_hint("code_file_bytes")
            ),
            at(None),
        );
        super::context::name_limit(d, cfg, "code_file_bytes");
        return Ok(());
    }
    let text = String::from_utf8_lossy(&bytes);
    let limits = code::Limits {
        max_source_bytes: crate::model::limits::usize_of(limit),
        ..code::Limits::default()
    };
    let list = code::list_calls(&text, &limits);
    for call in &list.calls {
        let Some((name, category, reason)) = crate::knowledge::torchscript_call(&call.names) else {
            continue;
        };
        let inside = call
            .function
            .as_deref()
            .map(|f| format!(" in `{f}`"))
            .unwrap_or_default();
        let setstate = if call.function.as_deref() == Some("__setstate__") {
            " (`__setstate__` runs while the archive is loaded)"
        } else {
            ""
        };
        let d = ctx.detect(
            RuleId::PickleUnsafeGlobal,
            format!("torchscript:{member}:{name}"),
            format!(
                "torchscript code `{member}` line {}{inside} calls `{}` (`{name}`): {reason}{setstate}; torch.jit.load runs this code, and torch.load(weights_only=True) does on torch < 2.6",
                call.line, call.callee
            ),
            at(Some((call.line, call.column))),
        );
        d.severity = Severity::Critical;
        d.evidence.extend([
            ("global".to_string(), json!(name)),
            ("category".to_string(), json!(category)),
            ("callee".to_string(), json!(call.callee)),
            ("function".to_string(), json!(call.function)),
            ("source".to_string(), json!("torchscript")),
            (
                "references".to_string(),
                json!(crate::knowledge::TORCHSCRIPT_REFERENCES),
            ),
        ]);
    }
    if let Some(by) = list.truncated_by {
        let d = ctx.detect(
            RuleId::LimitExceeded,
            format!("torchscript-truncated:{member}"),
            format!("torchscript source `{member}` was not fully scanned ({by}); calls after that point were not checked"),
            at(None),
        );
        d.evidence.insert("problem".into(), json!(by));
    }
    Ok(())
}
