//! Pickle streams as findings, for every container that holds one: a plain pickle, a PyTorch
//! checkpoint's `data.pkl`, a legacy or tar-format file, a pickle in a zip member or a storage
//! record. Reads each stream with the symbolic machine (`inspect/pickle`), records its facts
//! (imports, shapes, the `weights_only` verdict) and turns what it imports into PKL001-PKL005
//! detections, folded one per file ([`fold_per_file`]). The dispatcher and the container
//! inspectors (`archive`, `formats`, `ranged`) call it; it calls only the pickle reader and the
//! shared context below it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead};

use serde_json::{Value, json};

use super::context::{Ctx, name_limit, pickle_limits, raise_hint};
use super::pickle;
use crate::model::facts::{Fact, FactMap};
use crate::model::finding::{Detection, Location};
use crate::model::rules::RuleId;

/// Reads every pickle in the stream and records what it imports: PKL001 for dangerous or
/// unresolvable imports, PKL002 for unknown ones, PKL003 for the pickle itself, PKL004 when the
/// stream is damaged. `member` names the archive member the stream came from.
pub fn inspect_pickle_stream(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    member: Option<&str>,
) -> io::Result<()> {
    let analysis = pickle::analyze(&mut &mut *r, &pickle_limits(ctx.cfg));
    record_pickle(ctx, &analysis, member);
    Ok(())
}

/// Issue 32: a PyTorch storage record (`<archive>/data/<key>` of a `torch.save` zip) holds raw
/// tensor bytes that `torch.load` reads as bytes, never as a pickle, so its first bytes say
/// nothing (a float can begin `0x80 0x02`, `}` + `0x93` or `c`). Only a complete pickle from a
/// valid PROTO to its STOP is reported, judged by what it imports; anything else is data.
pub fn inspect_storage_record(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, member: &str) {
    let Some(mut analysis) = pickle::analyze_hidden(&mut &mut *r, &pickle_limits(ctx.cfg)) else {
        return;
    };
    if analysis.imports.is_empty() {
        return;
    }
    // Its storages and views are no part of the archive's own pickles.
    analysis.storages.clear();
    record_pickle(ctx, &analysis, Some(member));
}

/// The `storages` or `tensors` member of a tar-based PyTorch file: its pickles, with the raw
/// records between them skipped by their lengths (issue 32).
pub fn inspect_torch_tar_records(
    ctx: &mut Ctx<'_>,
    r: &mut dyn BufRead,
    member: &str,
    kind: pickle::TarRecords,
) {
    let limits = pickle_limits(ctx.cfg);
    let analysis = pickle::analyze_torch_tar_records(&mut &mut *r, kind, &limits);
    record_pickle(ctx, &analysis, Some(member));
}

/// A legacy (non-zip) PyTorch file: its pickles as [`inspect_pickle_stream`] reads them, then
/// its raw storage block against the storages the pickles declare (issue 16, FMT009).
pub fn inspect_torch_legacy(ctx: &mut Ctx<'_>, r: &mut dyn BufRead, member: Option<&str>) {
    let limits = pickle_limits(ctx.cfg);
    let analysis = pickle::analyze_torch_legacy(&mut &mut *r, &limits);
    record_pickle(ctx, &analysis, member);
    if member.is_none() {
        let streams = std::mem::take(&mut ctx.weights_only);
        let verdicts = streams.iter().map(|(_, w)| w);
        record_weights_only(ctx, verdicts, None);
    }
    let shapes = pickle::torch::check_legacy_block(&analysis, r, limits.max_imports);
    detect_shapes(ctx, &shapes, member, "legacy:", "legacy PyTorch file");
}

/// Issue 32: the `torch.load(weights_only=True)` verdict of a PyTorch checkpoint from the
/// verdicts of the pickle streams torch.load reads (`member`: the archive's `data.pkl`, for the
/// location): the fact, and PKL005 naming what is refused when it would refuse.
pub fn record_weights_only<'w>(
    ctx: &mut Ctx<'_>,
    streams: impl Iterator<Item = &'w pickle::torch::WeightsOnly>,
    member: Option<&str>,
) {
    let mut all = pickle::torch::WeightsOnly::default();
    for w in streams {
        all.merge(w);
    }
    let globals: Vec<&String> = all.globals.keys().collect();
    let opcodes: Vec<&str> = all.opcodes.keys().copied().collect();
    ctx.fact(
        Fact::TorchWeightsOnly,
        json!({
            "accepted": all.accepted(),
            "refused_globals": globals,
            "refused_opcodes": opcodes,
            "mirrors": crate::knowledge::WEIGHTS_ONLY_MIRRORS,
        }),
    );
    if all.accepted() {
        return;
    }
    let list = |items: &[&str]| {
        items
            .iter()
            .take(8)
            .map(|g| format!("`{g}`"))
            .collect::<Vec<_>>()
            .join(", ")
            + if items.len() > 8 { ", ..." } else { "" }
    };
    let mut why = Vec::new();
    if !globals.is_empty() {
        let names: Vec<&str> = globals.iter().map(|g| g.as_str()).collect();
        why.push(format!(
            "{} global(s) outside its allowlist ({})",
            names.len(),
            list(&names)
        ));
    }
    if !opcodes.is_empty() {
        why.push(format!(
            "opcode(s) it does not implement ({})",
            list(&opcodes)
        ));
    }
    let loc = Location {
        offset: all.first_offset(),
        member: member.map(str::to_string),
        ..Location::default()
    };
    let d = ctx.detect(
        RuleId::PickleNeedsUnsafeLoad,
        "weights-only",
        format!(
            "torch.load(weights_only=True) refuses this checkpoint: {}; loading it needs weights_only=False, which runs whatever the pickle imports",
            why.join(" and ")
        ),
        loc,
    );
    d.evidence.insert("globals".into(), json!(globals));
    d.evidence.insert("opcodes".into(), json!(opcodes));
    d.evidence.insert(
        "mirrors".into(),
        json!(crate::knowledge::WEIGHTS_ONLY_MIRRORS),
    );
}

/// One FMT009 detection per exploit-shaped structure of one stream; `tag` keeps the keys of
/// two streams of one file apart, `what` names the stream in the message.
fn detect_shapes(
    ctx: &mut Ctx<'_>,
    shapes: &[pickle::Shape],
    member: Option<&str>,
    tag: &str,
    what: &str,
) {
    let prefix = member.map(|m| format!("{m}:")).unwrap_or_default();
    let within = member
        .map(|m| format!(" in archive member `{m}`"))
        .unwrap_or_default();
    for (i, shape) in shapes.iter().enumerate() {
        let loc = Location {
            offset: Some(shape.offset),
            member: member.map(str::to_string),
            ..Location::default()
        };
        let d = ctx.detect(
            RuleId::FormatExploitShape,
            format!("{prefix}{tag}{}:{i}", shape.code),
            format!("{what}{within}: {}", shape.message),
            loc,
        );
        d.evidence.insert("problem".into(), json!(shape.code));
    }
}

fn record_pickle(ctx: &mut Ctx<'_>, a: &pickle::Analysis, member: Option<&str>) {
    let extra = &ctx.cfg.pickle_extra;
    let at = |offset: u64| Location {
        offset: Some(offset),
        member: member.map(str::to_string),
        ..Location::default()
    };
    let prefix = member.map(|m| format!("{m}:")).unwrap_or_default();
    let within = member
        .map(|m| format!(" in archive member `{m}`"))
        .unwrap_or_default();

    record_pickle_facts(ctx, a, member);

    if !a.pickles.is_empty() || !a.imports.is_empty() {
        let first = a.pickles.first().map(|p| p.offset).unwrap_or(0);
        let d = ctx.detect(
            RuleId::PickleFormat,
            format!("{prefix}pickle"),
            format!(
                "pickle data{within} (protocol {}, {} pickle(s)); loading it runs whatever it imports",
                a.pickles.first().map(|p| p.protocol).unwrap_or(0),
                a.pickles.len()
            ),
            at(first),
        );
        d.evidence.insert("pickles".into(), json!(a.pickles.len()));
    }

    // One detection per distinct global (per member), at its first occurrence.
    let mut seen: BTreeMap<String, (usize, &pickle::Import, bool, Option<&'static str>)> =
        BTreeMap::new();
    for imp in &a.imports {
        let key = import_name(imp);
        let e = seen.entry(key).or_insert((0, imp, false, None));
        e.0 += 1;
        e.2 |= imp.called;
        e.3 = e.3.or(imp.call_opcode);
    }
    // Issue 32: `torch.storage._load_from_bytes` whose every use loads bytes read here as a
    // legacy torch.save (a tensor pickled without torch.save) is judged by those bytes' globals,
    // which are among the imports; one use the machine could not follow keeps its verdict.
    let mut byte_loads: BTreeMap<String, bool> = BTreeMap::new();
    for (i, imp) in a.imports.iter().enumerate() {
        if imp.module.as_deref() == Some("torch.storage")
            && imp.name.as_deref() == Some("_load_from_bytes")
        {
            let e = byte_loads.entry(import_name(imp)).or_insert(true);
            *e &= a.vouched_byte_loads.contains(&i);
        }
    }
    for (name, (occurrences, imp, called, call_opcode)) in seen {
        if byte_loads.get(&name) == Some(&true) {
            continue;
        }
        let Some((rule, severity, message, verdict)) =
            judge_global(a, imp, &name, called, call_opcode, &within, extra)
        else {
            continue;
        };
        let d = ctx.detect(rule, format!("{prefix}{name}"), message, at(imp.offset));
        d.severity = severity;
        d.evidence.extend([
            ("global".to_string(), json!(name)),
            ("module".to_string(), json!(imp.module)),
            ("name".to_string(), json!(imp.name)),
            ("called".to_string(), json!(called)),
            ("opcode".to_string(), json!(imp.opcode)),
            ("category".to_string(), json!(verdict)),
            ("occurrences".to_string(), json!(occurrences)),
        ]);
        if let Some(c) = call_opcode {
            d.evidence.insert("call_opcode".into(), json!(c));
        }
        if verdict == crate::knowledge::JUDGED_BY_NAME {
            d.evidence.insert("judged".into(), json!("name"));
        }
        if rule == RuleId::PickleUnsafeGlobal
            && let (Some(m), Some(n)) = (&imp.module, &imp.name)
        {
            let refs = crate::knowledge::references(m, n);
            if !refs.is_empty() {
                d.evidence.insert("references".into(), json!(refs));
            }
        }
    }

    record_shapes(ctx, a, member);
    let verdict = pickle::torch::weights_only(a, &ctx.cfg.pickle_extra);
    ctx.weights_only.push((member.map(str::to_string), verdict));

    if let Some(err) = &a.error {
        record_pickle_error(ctx, a, err, member, &prefix, &within);
    }
}

/// The pickle facts of one stream: protocol, globals, count, trailing offset, raw bytes. An
/// archive's members add to the file's lists.
fn record_pickle_facts(ctx: &mut Ctx<'_>, a: &pickle::Analysis, member: Option<&str>) {
    let mut globals: BTreeSet<String> = ctx
        .facts
        .fact_strings(Fact::PickleGlobals)
        .into_iter()
        .collect();
    for imp in &a.imports {
        globals.insert(import_name(imp));
    }
    ctx.fact(Fact::PickleGlobals, json!(globals));
    if let Some(first) = a.pickles.first() {
        ctx.facts
            .entry(Fact::PickleProtocol.key())
            .or_insert_with(|| json!(first.protocol));
    }
    let count = ctx
        .facts
        .fact(Fact::PickleCount)
        .and_then(Value::as_u64)
        .unwrap_or(0);
    ctx.fact(Fact::PickleCount, count + a.pickles.len() as u64);
    if let Some(t) = &a.trailing
        && member.is_none()
    {
        ctx.fact(Fact::PickleTrailingOffset, t.offset);
    }
    if !a.raw_regions.is_empty() {
        let bytes: u64 = a.raw_regions.iter().map(|r| r.len).sum();
        ctx.fact(Fact::PickleRawBytes, bytes);
    }
}

/// The verdict on one distinct global a pickle imports: rule, severity, message and category;
/// `None` when it needs no finding (safe, or a call wrapper judged by its target).
fn judge_global(
    a: &pickle::Analysis,
    imp: &pickle::Import,
    name: &str,
    called: bool,
    call_opcode: Option<&'static str>,
    within: &str,
    extra: &crate::knowledge::ExtraLists,
) -> Option<(
    RuleId,
    crate::model::finding::Severity,
    String,
    &'static str,
)> {
    // Issue 32: an unknown callable the pickle calls is judged by what its name says.
    let by_name = match (&imp.module, &imp.name) {
        (Some(m), Some(n)) if call_opcode.is_some_and(is_call) => {
            crate::knowledge::judge_by_name(m, n)
        }
        _ => None,
    };
    let how = if called {
        "imports and calls"
    } else {
        "imports"
    };
    Some(match (&imp.module, &imp.name) {
        (Some(m), Some(n)) => match crate::knowledge::classify_global(m, n, extra) {
            // Issue 15, cause 4: a partial over a safe or unknown global takes its verdict,
            // and that global's own finding (it counts as called) says so.
            crate::knowledge::Verdict::Dangerous { .. }
                if crate::knowledge::is_call_wrapper(m, n)
                    && wrapped_verdict(a, name, extra).is_some_and(|v| {
                        !matches!(v, crate::knowledge::Verdict::Dangerous { .. })
                    }) =>
            {
                return None;
            }
            crate::knowledge::Verdict::Dangerous { category, reason } => (
                RuleId::PickleUnsafeGlobal,
                if called {
                    crate::model::finding::Severity::Critical
                } else {
                    crate::model::finding::Severity::High
                },
                // Issue 16: a dotted name that walks out of its module says how.
                match crate::knowledge::explain_traversal(m, n) {
                    Some(path) => {
                        format!("pickle{within} {how} `{name}`: {reason}; traversal {path}")
                    }
                    None => format!("pickle{within} {how} `{name}`: {reason}"),
                },
                category,
            ),
            crate::knowledge::Verdict::Safe => return None,
            crate::knowledge::Verdict::Unknown if by_name.is_some() => (
                RuleId::PickleUnsafeGlobal,
                crate::model::finding::Severity::Critical,
                format!(
                    "pickle{within} {how} `{name}`, which no table knows; judged by its name: it {}",
                    by_name.unwrap_or_default()
                ),
                crate::knowledge::JUDGED_BY_NAME,
            ),
            crate::knowledge::Verdict::Unknown => (
                RuleId::PickleUnknownGlobal,
                // Issue 15, cause 7: a global that is only referenced (a stored type, a
                // hash function attribute) runs nothing by itself; a called one does.
                if called {
                    RuleId::PickleUnknownGlobal.default_severity()
                } else {
                    crate::model::finding::Severity::Low
                },
                format!(
                    "pickle{within} {how} `{name}`, which is not on the safe list; {}",
                    describe_use(call_opcode)
                ),
                "unknown",
            ),
        },
        _ => (
            // An import that cannot be resolved statically is how scanners are evaded.
            RuleId::PickleUnsafeGlobal,
            crate::model::finding::Severity::Critical,
            format!(
                "pickle{within} {how} a global that cannot be resolved statically ({}{})",
                imp.opcode,
                imp.note
                    .as_deref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            ),
            "unresolvable",
        ),
    })
}

/// PKL004 for a stream that could not be read to its end; a limit stop names the limit.
fn record_pickle_error(
    ctx: &mut Ctx<'_>,
    a: &pickle::Analysis,
    err: &pickle::Malformed,
    member: Option<&str>,
    prefix: &str,
    within: &str,
) {
    let at = |offset: u64| Location {
        offset: Some(offset),
        member: member.map(str::to_string),
        ..Location::default()
    };
    let cfg = ctx.cfg;
    let d = ctx.detect(
        RuleId::PickleMalformed,
        format!("{prefix}{}", err.code),
        format!(
            "pickle stream{within} cannot be fully parsed at byte {}: {} ({} import(s) found before it)",
            err.offset.unwrap_or(0),
            err.message,
            a.imports.len()
        ),
        at(err.offset.unwrap_or(0)),
    );
    d.evidence.insert("problem".into(), json!(err.code));
    // Limit stops stay PKL004 (the stream was not read to its end) and name the limit.
    let limit = match err.code {
        "limit-opcodes" => Some("pickle_opcodes"),
        "limit-memo" => Some("pickle_memo"),
        "limit-line" => Some("pickle_string_bytes"),
        _ => None,
    };
    if let Some(name) = limit {
        d.message = format!("{}; {}", d.message, raise_hint(name));
        name_limit(d, cfg, name);
    }
}

/// Exploit-shaped structures (issue 16) as FMT009: writes into globals or scalars, tensor views
/// past their storage. PyTorch storages are kept for the archive-level check of `data/<key>`.
fn record_shapes(ctx: &mut Ctx<'_>, a: &pickle::Analysis, member: Option<&str>) {
    detect_shapes(ctx, &a.shapes, member, "", "pickle");
    let bound = ctx.cfg.limits.archive_members;
    for s in &a.storages {
        if ctx.torch_storages.len() as u64 >= bound {
            break;
        }
        ctx.torch_storages
            .push((member.map(str::to_string), s.clone()));
    }
}

/// `module.name`, or `?` parts for what could not be resolved.
/// Issue 15, cause 4: the verdict of the call wrapper `name` (`functools.partial`) from what it
/// wraps: the worst of its targets' verdicts (a wrapper over a wrapper is followed). `None`, so
/// the wrapper keeps its own verdict, when an import of it was never built or wraps a value that
/// is not a named global.
fn wrapped_verdict(
    a: &pickle::Analysis,
    name: &str,
    extra: &crate::knowledge::ExtraLists,
) -> Option<crate::knowledge::Verdict> {
    use crate::knowledge::Verdict;
    let mut worst = Verdict::Safe;
    let mut visited = BTreeSet::new();
    let mut pending = vec![name.to_string()];
    while let Some(wrapper) = pending.pop() {
        if !visited.insert(wrapper.clone()) {
            continue;
        }
        for imp in a.imports.iter().filter(|i| import_name(i) == wrapper) {
            let wraps = imp.wraps.as_ref()?;
            if wraps.opaque || wraps.targets.is_empty() {
                return None;
            }
            for target in wraps.targets.iter().filter_map(|&t| a.imports.get(t)) {
                let (Some(m), Some(n)) = (&target.module, &target.name) else {
                    return None;
                };
                if crate::knowledge::is_call_wrapper(m, n) {
                    pending.push(import_name(target));
                    continue;
                }
                match crate::knowledge::classify_global(m, n, extra) {
                    v @ Verdict::Dangerous { .. } => return Some(v),
                    Verdict::Unknown => worst = Verdict::Unknown,
                    Verdict::Safe => {}
                }
            }
        }
    }
    Some(worst)
}

/// Sites listed in a folded finding's evidence (the count says how many there were).
const MAX_FOLDED_SITES: usize = 1000;

/// Most safe-list globals named in a graded PKL003 message (the fact lists them all).
const MAX_NAMED_SAFE_GLOBALS: usize = 6;

/// Issue 32: a pickle with nothing to review. When PKL003 is the only detection of a file, the
/// file was read in full (no PKL004, no SCAN004, no structural finding), imports nothing
/// dangerous or unknown (no PKL001, no PKL002) and, if it is a PyTorch checkpoint,
/// `torch.load(weights_only=True)` accepts it (no PKL005), and no unread bytes follow its last
/// pickle (a legacy checkpoint's checked storage block aside). Its PKL003 then only says "this is a
/// pickle", so it drops to severity `info` and names what the file imports. That is a fact about
/// the file; what to do with it is the policy's grading (`model::grading`): a `warn` level
/// records an info finding without warning about it, `deny`, as in `strict`, still denies every
/// pickle. Any other detection on the file keeps PKL003 at its rule's severity.
pub fn grade_pickle_format(detections: &mut [Detection], facts: &serde_json::Map<String, Value>) {
    if detections.iter().any(|d| d.rule != RuleId::PickleFormat) {
        return;
    }
    // Bytes after the last pickle are explained only in a legacy PyTorch file, whose storage
    // block `check_legacy_block` sizes record by record (FMT009 on any mismatch); anywhere else
    // they are content nobody read, so the file is not vouched for.
    if facts.fact(Fact::PickleTrailingOffset).is_some()
        && facts.fact(Fact::TorchWeightsOnly).is_none()
    {
        return;
    }
    let globals = facts.fact_strings(Fact::PickleGlobals);
    let what = if globals.is_empty() {
        "it imports no globals (plain data)".to_string()
    } else {
        let named: Vec<String> = globals
            .iter()
            .take(MAX_NAMED_SAFE_GLOBALS)
            .map(|g| format!("`{g}`"))
            .collect();
        let more = if globals.len() > MAX_NAMED_SAFE_GLOBALS {
            ", ..."
        } else {
            ""
        };
        format!(
            "every global it imports is judged safe ({}{more})",
            named.join(", ")
        )
    };
    for d in detections
        .iter_mut()
        .filter(|d| d.rule == RuleId::PickleFormat)
    {
        d.severity = crate::model::finding::Severity::Info;
        let head = d
            .message
            .split_once("; loading it runs")
            .map_or(d.message.as_str(), |(head, _)| head);
        d.message = format!("{head}; read in full, {what}: nothing to review");
        d.evidence.insert("safe_only".into(), json!(true));
        d.evidence.insert("globals".into(), json!(globals.len()));
    }
}

/// Issue 32: one warning per file. The PKL002 detections of a file (one per unknown global and
/// archive member) become one finding listing every global with its call/reference count and
/// offset in `evidence.sites`, and so do the CFG003 detections of a config (one per unknown
/// target or tag, with its line). A file with one such detection keeps it as it was (same key,
/// so the same fingerprint) with its one site listed. Policy exceptions match by rule and path,
/// so an exception written for any of the folded findings still matches the folded one.
///
/// FMT008 the same way (the brief's "one warning per file instead of one per name"): an ONNX
/// model's custom operator domains or a TFLite model's custom ops are one thing to act on, the
/// custom-op library the model needs, so they fold into one finding listing each.
pub fn fold_per_file(detections: Vec<Detection>) -> Vec<Detection> {
    let mut out = Vec::with_capacity(detections.len());
    let mut groups: BTreeMap<RuleId, Vec<Detection>> = BTreeMap::new();
    for d in detections {
        if matches!(
            d.rule,
            RuleId::PickleUnknownGlobal | RuleId::ConfigUnknownTarget | RuleId::CustomOperator
        ) {
            groups.entry(d.rule).or_default().push(d);
        } else {
            out.push(d);
        }
    }
    for (rule, group) in groups {
        out.push(fold_group(rule, group));
    }
    out
}

/// One site of a folded detection: its evidence plus where it is.
fn site(d: &Detection) -> Value {
    let mut site = d.evidence.clone();
    site.insert("severity".into(), json!(d.severity));
    for (k, v) in [
        ("offset", d.location.offset.map(|o| json!(o))),
        ("line", d.location.line.map(|l| json!(l))),
        ("member", d.location.member.as_ref().map(|m| json!(m))),
    ] {
        if let Some(v) = v {
            site.insert(k.into(), v);
        }
    }
    Value::Object(site.into_iter().collect())
}

/// Issue 39: what the pickle does with an unknown global, for the PKL002 message, from the
/// first opcode that used it (CPython `Lib/pickle.py`, `load_reduce`, `load_newobj`,
/// `load_build`, `load_appends`, `load_setitems`).
fn describe_use(call_opcode: Option<&str>) -> String {
    match call_opcode {
        Some("REDUCE") => {
            "the pickle calls it with arguments it supplies (REDUCE), so what runs is that \
             callable's own code"
                .to_owned()
        }
        Some(op @ ("NEWOBJ" | "NEWOBJ_EX" | "OBJ" | "INST")) => format!(
            "the pickle builds an instance of it ({op}: its constructor runs with arguments the \
             pickle supplies)"
        ),
        Some("BUILD") => {
            "the pickle sets the state of an instance of it (BUILD: its `__setstate__` runs)"
                .to_owned()
        }
        Some(op @ ("APPEND" | "APPENDS" | "SETITEM" | "SETITEMS" | "ADDITEMS")) => format!(
            "the pickle fills an instance of it ({op}: its append, `__setitem__` or `add` runs)"
        ),
        Some(op) => format!("the pickle calls it ({op})"),
        None => "the pickle only stores a reference to it (nothing of it runs at load)".to_owned(),
    }
}

/// The folded detection of one rule's detections in one file (see [`fold_per_file`]).
fn fold_group(rule: RuleId, mut group: Vec<Detection>) -> Detection {
    let sites: Vec<Value> = group.iter().take(MAX_FOLDED_SITES).map(site).collect();
    if group.len() == 1
        && let Some(mut only) = group.pop()
    {
        only.evidence.insert("count".into(), json!(1));
        only.evidence.insert("sites".into(), json!(sites));
        return only;
    }
    let count = group.len();
    let severity = group.iter().map(|d| d.severity).max();
    let named = |d: &Detection| {
        let what = ["global", "target", "custom_code", "domain"]
            .iter()
            .find_map(|k| d.evidence.get(*k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let how = match (
            d.evidence.get("called").and_then(Value::as_bool),
            d.evidence.get("call_opcode").and_then(Value::as_str),
        ) {
            (Some(true), Some(op)) => format!(" (called by {op})"),
            (Some(true), None) => " (called)".to_owned(),
            (Some(false), _) => " (referenced)".to_owned(),
            (None, _) => String::new(),
        };
        format!("`{what}`{how}")
    };
    let listed: Vec<String> = group.iter().take(8).map(named).collect();
    let more = if count > 8 { ", ..." } else { "" };
    // Located at the earliest site (the detections come sorted by name).
    let earliest = (0..group.len())
        .min_by_key(|&i| group.get(i).map(|d| (d.location.offset, d.location.line)))
        .unwrap_or(0);
    let first = group.swap_remove(earliest);
    let (key, message) = match rule {
        RuleId::PickleUnknownGlobal => (
            "unknown-globals",
            format!(
                "{} {count} globals that are not on the safe list: {}{more}",
                // Issue 40: skops schemas name their types like pickles import globals.
                if first.evidence.get("format") == Some(&json!("skops")) {
                    "skops schema names"
                } else {
                    "pickle imports"
                },
                listed.join(", ")
            ),
        ),
        RuleId::CustomOperator => (
            "custom-ops",
            format!(
                "model uses {count} custom operators or operator domains, which need a custom \
                 operator library or an application-registered kernel: {}{more}",
                listed.join(", ")
            ),
        ),
        _ => (
            "unknown-targets",
            format!(
                "config names {count} targets that are not on the safe list: {}{more}",
                listed.join(", ")
            ),
        ),
    };
    let mut d = Detection::new(rule, first.path.clone(), key, message).at(first.location.clone());
    d.severity = severity.unwrap_or(first.severity);
    d.evidence.insert("count".into(), json!(count));
    d.evidence.insert("sites".into(), json!(sites));
    d
}

/// Opcodes that call what they are given (issue 32's name judge counts only these; APPEND,
/// SETITEM(S) on an instance invoke container methods of a type the pickle built).
fn is_call(opcode: &str) -> bool {
    matches!(
        opcode,
        "REDUCE" | "NEWOBJ" | "NEWOBJ_EX" | "INST" | "OBJ" | "BUILD"
    )
}

fn import_name(imp: &pickle::Import) -> String {
    format!(
        "{}.{}",
        imp.module.as_deref().unwrap_or("?"),
        imp.name.as_deref().unwrap_or("?")
    )
}

#[cfg(test)]
mod fold_tests {
    use super::*;
    use crate::model::finding::Severity;

    fn pickle_format() -> Detection {
        Detection::new(
            RuleId::PickleFormat,
            "m.pkl",
            "pickle",
            "pickle data (protocol 2, 1 pickle(s)); loading it runs whatever it imports",
        )
    }

    fn facts(globals: &[&str]) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert(Fact::PickleGlobals.key(), json!(globals));
        m
    }

    #[test]
    fn a_pickle_that_is_its_files_only_detection_is_info_and_names_its_imports() {
        let mut ds = vec![pickle_format()];
        grade_pickle_format(&mut ds, &facts(&["collections.OrderedDict", "torch.Size"]));
        assert_eq!(ds[0].severity, Severity::Info);
        assert_eq!(
            ds[0].message,
            "pickle data (protocol 2, 1 pickle(s)); read in full, every global it imports is judged \
             safe (`collections.OrderedDict`, `torch.Size`): nothing to review"
        );
        assert_eq!(ds[0].evidence.get("safe_only"), Some(&json!(true)));
        assert_eq!(ds[0].key, "pickle", "the fingerprint does not change");

        let mut plain = vec![pickle_format()];
        grade_pickle_format(&mut plain, &facts(&[]));
        assert!(plain[0].message.contains("imports no globals"));
    }

    #[test]
    fn custom_operators_fold_into_one_detection_per_model() {
        let op = |domain: &str| {
            let mut d = Detection::new(
                RuleId::CustomOperator,
                "m.onnx",
                format!(":custom-op-domain:{domain}"),
                format!("model uses operator domain '{domain}'"),
            );
            d.evidence.insert("domain".into(), json!(domain));
            d
        };
        let folded = fold_per_file(vec![op("com.a"), op("com.b")]);
        assert_eq!(folded.len(), 1);
        assert_eq!(folded[0].key, "custom-ops");
        assert_eq!(folded[0].evidence["count"], json!(2));
        assert!(
            folded[0].message.contains("`com.a`, `com.b`"),
            "{}",
            folded[0].message
        );
        let single = fold_per_file(vec![op("com.a")]);
        assert_eq!(single[0].key, ":custom-op-domain:com.a");
        assert_eq!(single[0].message, "model uses operator domain 'com.a'");
    }

    #[test]
    fn any_other_detection_or_unread_trailing_bytes_keep_pickle_format_low() {
        for other in [
            RuleId::PickleUnknownGlobal,
            RuleId::PickleMalformed,
            RuleId::PickleNeedsUnsafeLoad,
            RuleId::LimitExceeded,
            RuleId::FormatExploitShape,
        ] {
            let mut ds = vec![pickle_format(), Detection::new(other, "m.pkl", "k", "m")];
            grade_pickle_format(&mut ds, &facts(&["collections.OrderedDict"]));
            assert_eq!(ds[0].severity, Severity::Low, "{other:?}");
        }
        let mut trailing = facts(&["collections.OrderedDict"]);
        trailing.insert(Fact::PickleTrailingOffset.key(), json!(40));
        let mut ds = vec![pickle_format()];
        grade_pickle_format(&mut ds, &trailing);
        assert_eq!(ds[0].severity, Severity::Low);
        // A legacy checkpoint: what follows is its storage block, checked record by record.
        trailing.insert(Fact::TorchWeightsOnly.key(), json!({"accepted": true}));
        grade_pickle_format(&mut ds, &trailing);
        assert_eq!(ds[0].severity, Severity::Info);
    }

    fn unknown(global: &str, offset: u64, called: bool) -> Detection {
        let mut d = Detection::new(RuleId::PickleUnknownGlobal, "m.pkl", global, "m")
            .at(Location::offset(offset));
        d.severity = if called {
            crate::model::finding::Severity::Medium
        } else {
            crate::model::finding::Severity::Low
        };
        d.evidence.insert("global".into(), json!(global));
        d.evidence.insert("called".into(), json!(called));
        d
    }

    #[test]
    fn unknown_globals_fold_into_one_detection_per_file_with_every_site() {
        let other = Detection::new(RuleId::PickleFormat, "m.pkl", "pickle", "p");
        let folded = fold_per_file(vec![
            unknown("a.B", 10, false),
            other,
            unknown("a.c", 20, true),
        ]);
        assert_eq!(folded.len(), 2);
        let d = &folded[1];
        assert_eq!(d.rule, RuleId::PickleUnknownGlobal);
        assert_eq!(d.key, "unknown-globals");
        assert_eq!(d.location.offset, Some(10));
        assert_eq!(d.severity, crate::model::finding::Severity::Medium);
        assert_eq!(d.evidence["count"], json!(2));
        assert_eq!(d.evidence["sites"][1]["global"], json!("a.c"));
        assert_eq!(d.evidence["sites"][1]["offset"], json!(20));
        assert!(
            d.message.contains("`a.B` (referenced), `a.c` (called)"),
            "{}",
            d.message
        );
    }

    #[test]
    fn a_single_unknown_global_keeps_its_key_and_fingerprint() {
        let folded = fold_per_file(vec![unknown("a.B", 10, true)]);
        assert_eq!(folded.len(), 1);
        assert_eq!(folded[0].key, "a.B");
        assert_eq!(folded[0].evidence["count"], json!(1));
        assert_eq!(folded[0].evidence["global"], json!("a.B"));
    }
}
