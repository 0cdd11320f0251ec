//! OpenVINO IR (issue 40): the network XML (`<net version="11">`, its `<layers>` and `<edges>`)
//! and the `.bin` of raw constants beside it.
//!
//! The XML is read with quick-xml, which never expands entities or fetches external references:
//! a `DOCTYPE` is reported as it is, never processed. OpenVINO's own reader (pugixml) ignores a
//! DTD too, but the same file opened by another XML tool can expand entities or fetch an external
//! one, and no OpenVINO serializer writes a `DOCTYPE`: entity or external declarations are an XXE
//! attempt (`FMT009`, with `external` when they name a `SYSTEM`/`PUBLIC` resource), any other
//! `DOCTYPE` broken structure (`FMT007`).
//!
//! Facts: the IR version and name, every layer (at any depth: `Loop`/`TensorIterator`/`If`
//! bodies nest their own `<layers>`) counted by op type and by opset, and the weight ranges that
//! `Const` layers read from the `.bin` (`<data offset= size=>`). A layer whose `version` is not a
//! standard opset (`opsetN`, or OpenVINO's own `ie_internal_opset`/`internal`), or whose type no
//! opset defines, needs an extension library: `FMT008`. A weight range whose end overflows, or
//! whose size is smaller than its element type and shape need, is `FMT009`; the ranges are
//! sized against the `.bin` itself by `repository::check_openvino_weights`, which also records
//! the `.bin` as `openvino-weights`.
//!
//! Bounded: the XML is read into memory up to `json_bytes` (SCAN004 past it), events borrow from
//! that buffer, element nesting stops at [`MAX_DEPTH`], and the facts keep at most
//! [`MAX_OP_TYPES`] op types and [`MAX_LISTED`] custom layers.

use std::collections::BTreeMap;
use std::io::{self, BufRead};

use serde::Serialize;
use serde_json::Value;

use super::context::Ctx;
use super::problem::{Problem, ProblemKind};
use super::read;
use crate::classify::Format;
use crate::model::facts::Fact;
use crate::model::rules::RuleId;

/// Deepest element nesting read (an IR nests a few levels per `Loop` body).
pub const MAX_DEPTH: usize = 1024;

/// Most distinct op types and opsets counted in the facts.
pub const MAX_OP_TYPES: usize = 1024;

/// Most custom layers listed (all are counted).
pub const MAX_LISTED: usize = 256;

/// Most problems kept per IR (one note says there were more; facts still count everything).
pub const MAX_PROBLEMS: usize = 256;

/// Keeps at most [`MAX_PROBLEMS`] problems; the first one past it becomes a note.
fn push(problems: &mut Vec<Problem>, p: Problem) {
    match problems.len() {
        n if n < MAX_PROBLEMS => problems.push(p),
        n if n == MAX_PROBLEMS => problems.push(Problem::note(
            "problems-capped",
            format!("more than {MAX_PROBLEMS} problems in the IR XML; the rest are not listed"),
        )),
        _ => {}
    }
}

/// Longest attribute value kept in facts and messages.
const MAX_VALUE_CHARS: usize = 128;

/// Every op type of OpenVINO's opsets 1 to 17 (`src/core/include/openvino/opsets/opset*_tbl.hpp`),
/// under both names: the class name and the one the IR serializer writes instead for four of
/// them (`Constant` as `Const`, `PRelu` as `PReLU`, `Relu` as `ReLU`, `Softmax` as `SoftMax`;
/// the IR reader maps them back and accepts either). Issue 40: `ov.save_model` of openvino
/// 2024.6 writes `ReLU`/`SoftMax`, which were FMT008 while only the class names were listed.
pub const OPS: &[&str] = &[
    "Abs",
    "Acos",
    "Acosh",
    "AdaptiveAvgPool",
    "AdaptiveMaxPool",
    "Add",
    "Asin",
    "Asinh",
    "Assign",
    "Atan",
    "Atanh",
    "AvgPool",
    "BatchNormInference",
    "BatchToSpace",
    "BGRtoNV12",
    "BinaryConvolution",
    "BitwiseAnd",
    "BitwiseLeftShift",
    "BitwiseNot",
    "BitwiseOr",
    "BitwiseRightShift",
    "BitwiseXor",
    "Broadcast",
    "Bucketize",
    "Ceiling",
    "Clamp",
    "Col2Im",
    "Concat",
    "Const",
    "Constant",
    "Convert",
    "ConvertLike",
    "ConvertPromoteTypes",
    "Convolution",
    "ConvolutionBackpropData",
    "Cos",
    "Cosh",
    "CTCGreedyDecoder",
    "CTCGreedyDecoderSeqLen",
    "CTCLoss",
    "CumSum",
    "DeformableConvolution",
    "DeformablePSROIPooling",
    "DepthToSpace",
    "DetectionOutput",
    "DFT",
    "Divide",
    "Einsum",
    "Elu",
    "EmbeddingBagOffsets",
    "EmbeddingBagOffsetsSum",
    "EmbeddingBagPacked",
    "EmbeddingBagPackedSum",
    "EmbeddingSegmentsSum",
    "Equal",
    "Erf",
    "ErfInv",
    "Exp",
    "ExperimentalDetectronDetectionOutput",
    "ExperimentalDetectronGenerateProposalsSingleImage",
    "ExperimentalDetectronPriorGridGenerator",
    "ExperimentalDetectronROIFeatureExtractor",
    "ExperimentalDetectronTopKROIs",
    "ExtractImagePatches",
    "Eye",
    "FakeConvert",
    "FakeQuantize",
    "Floor",
    "FloorMod",
    "Gather",
    "GatherElements",
    "GatherND",
    "GatherTree",
    "Gelu",
    "GenerateProposals",
    "Greater",
    "GreaterEqual",
    "GridSample",
    "GRN",
    "GroupConvolution",
    "GroupConvolutionBackpropData",
    "GroupNormalization",
    "GRUCell",
    "GRUSequence",
    "HardSigmoid",
    "HSigmoid",
    "HSwish",
    "I420toBGR",
    "I420toRGB",
    "Identity",
    "IDFT",
    "If",
    "Interpolate",
    "Inverse",
    "IRDFT",
    "IsFinite",
    "IsInf",
    "IsNaN",
    "ISTFT",
    "Less",
    "LessEqual",
    "Log",
    "LogicalAnd",
    "LogicalNot",
    "LogicalOr",
    "LogicalXor",
    "LogSoftmax",
    "Loop",
    "LRN",
    "LSTMCell",
    "LSTMSequence",
    "MatMul",
    "MatrixNms",
    "Maximum",
    "MaxPool",
    "Minimum",
    "Mish",
    "Mod",
    "MOE",
    "Multinomial",
    "MulticlassNms",
    "Multiply",
    "MVN",
    "Negative",
    "NMSRotated",
    "NonMaxSuppression",
    "NonZero",
    "NormalizeL2",
    "NotEqual",
    "NV12toBGR",
    "NV12toRGB",
    "OneHot",
    "Pad",
    "Parameter",
    "Power",
    "PRelu",
    "PReLU",
    "PriorBox",
    "PriorBoxClustered",
    "Proposal",
    "PSROIPooling",
    "RandomUniform",
    "Range",
    "RDFT",
    "ReadValue",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogicalAnd",
    "ReduceLogicalOr",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceProd",
    "ReduceSum",
    "RegionYolo",
    "Relu",
    "ReLU",
    "ReorgYolo",
    "Reshape",
    "Result",
    "Reverse",
    "ReverseSequence",
    "RGBtoNV12",
    "RNNCell",
    "RNNSequence",
    "ROIAlign",
    "ROIAlignRotated",
    "ROIPooling",
    "Roll",
    "Round",
    "ScaledDotProductAttention",
    "ScatterElementsUpdate",
    "ScatterNDUpdate",
    "ScatterUpdate",
    "SearchSorted",
    "SegmentMax",
    "Select",
    "Selu",
    "ShapeOf",
    "ShuffleChannels",
    "Sigmoid",
    "Sign",
    "Sin",
    "Sinh",
    "Slice",
    "SliceScatter",
    "Softmax",
    "SoftMax",
    "SoftPlus",
    "SoftSign",
    "SpaceToBatch",
    "SpaceToDepth",
    "SparseConv",
    "SparseFillEmptyRows",
    "Split",
    "Sqrt",
    "SquaredDifference",
    "Squeeze",
    "STFT",
    "StridedSlice",
    "StringTensorPack",
    "StringTensorUnpack",
    "Subtract",
    "Swish",
    "Tan",
    "Tanh",
    "TensorIterator",
    "Tile",
    "TopK",
    "Transpose",
    "Unique",
    "Unsqueeze",
    "VariadicSplit",
    "Xor",
];

/// `version` values of layers that OpenVINO itself defines besides `opsetN`.
const OWN_VERSIONS: &[&str] = &["ie_internal_opset", "internal"];

/// Whether a layer `version` is a standard opset or one of OpenVINO's own.
pub fn is_standard_version(v: &str) -> bool {
    OWN_VERSIONS.contains(&v)
        || v.strip_prefix("opset")
            .is_some_and(|n| !n.is_empty() && n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Byte size of one element of an IR `element_type`, for the types whose size is whole bytes.
fn element_bytes(t: &str) -> Option<u64> {
    Some(match t {
        "f64" | "i64" | "u64" => 8,
        "f32" | "i32" | "u32" => 4,
        "f16" | "bf16" | "i16" | "u16" => 2,
        "i8" | "u8" | "boolean" | "f8e4m3" | "f8e5m2" | "f8e8m0" => 1,
        _ => return None,
    })
}

/// The weight ranges the `Const` layers read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Weights {
    /// `Const` layers with an `offset` and `size`.
    pub ranges: u64,
    /// The largest `offset + size`: the `.bin` must hold at least this many bytes.
    pub end: u64,
    /// The layer whose range ends at `end`.
    pub end_layer: Option<String>,
    /// Sum of the ranges' sizes.
    pub bytes: u64,
}

/// What an IR XML describes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// `<net version>`.
    pub version: Option<String>,
    /// `<net name>`.
    pub name: Option<String>,
    /// Layers at every depth.
    pub layers: u64,
    /// Layers per op type (at most [`MAX_OP_TYPES`] keys).
    pub op_types: BTreeMap<String, u64>,
    /// Layers per `version` (opset).
    pub opsets: BTreeMap<String, u64>,
    /// `type@version` of layers that need an extension (at most [`MAX_LISTED`]).
    pub custom_layers: Vec<String>,
    /// Edges between layers.
    pub edges: u64,
    /// The `.bin` ranges of `Const` layers.
    pub weights: Weights,
}

/// Whether `head` starts like an IR: optional BOM, XML declaration, comments and `DOCTYPE`,
/// then the root `<net ...>` with a `version` attribute.
pub fn is_ir(head: &[u8]) -> bool {
    let mut s = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    for _ in 0..64 {
        s = s.trim_ascii_start();
        if let Some(rest) = s.strip_prefix(b"<?") {
            let Some(end) = find(rest, b"?>") else {
                return false;
            };
            s = &rest[end + 2..];
        } else if let Some(rest) = s.strip_prefix(b"<!--") {
            let Some(end) = find(rest, b"-->") else {
                return false;
            };
            s = &rest[end + 3..];
        } else if let Some(rest) = s.strip_prefix(b"<!DOCTYPE") {
            // An internal subset ends at `]`, then `>`.
            let open = rest.iter().position(|&b| b == b'[');
            let close = rest.iter().position(|&b| b == b'>');
            let end = match (open, close) {
                (Some(o), Some(c)) if o < c => find(rest, b"]")
                    .and_then(|e| rest[e..].iter().position(|&b| b == b'>').map(|p| e + p)),
                (_, c) => c,
            };
            let Some(end) = end else {
                // A DTD of entity declarations longer than the probe sees: padding that would
                // hide the root (and the XXE) from a name-blind probe is read as a candidate, so
                // the parse reports the entities (and a root that is not `<net>`).
                return find(rest, b"<!ENTITY").is_some();
            };
            s = &rest[end + 1..];
        } else {
            break;
        }
    }
    let Some(rest) = s.strip_prefix(b"<net") else {
        return false;
    };
    if !rest.first().is_some_and(|b| b.is_ascii_whitespace()) {
        return false;
    }
    let tag = match rest.iter().position(|&b| b == b'>') {
        Some(end) => &rest[..end],
        None => rest,
    };
    find(tag, b"version").is_some_and(|at| {
        tag[at + 7..].trim_ascii_start().starts_with(b"=")
            && (at == 0 || tag[at - 1].is_ascii_whitespace())
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

fn clip(s: &str) -> String {
    s.chars().take(MAX_VALUE_CHARS).collect()
}

/// What one element carried that the walk needs.
#[derive(Default)]
struct Layer {
    name: String,
    op: String,
    version: Option<String>,
}

/// The walk's state.
#[derive(Default)]
struct Walk {
    facts: Facts,
    problems: Vec<Problem>,
    /// Names of the open elements.
    stack: Vec<String>,
    /// The `layer` element open now.
    layer: Option<Layer>,
    custom: u64,
    saw_root: bool,
}

impl Walk {
    /// An opening (or empty) element; false stops the walk.
    fn open(&mut self, e: &quick_xml::events::BytesStart<'_>, empty: bool, at: u64) -> bool {
        if self.stack.len() >= MAX_DEPTH {
            push(
                &mut self.problems,
                Problem::limit(
                    "xml-too-deep",
                    format!("IR XML nests elements deeper than {MAX_DEPTH}; not read further"),
                )
                .at(at),
            );
            return false;
        }
        let name = clip(e.name().into_inner());
        let mut attrs: BTreeMap<&'static str, String> = BTreeMap::new();
        for a in e.attributes().with_checks(false).flatten() {
            // quick-xml leaves references in attribute values as written: `&name;` stays text.
            let mut rest: &str = &a.value;
            while let Some(amp) = rest.find('&') {
                let tail = &rest[amp + 1..];
                let Some(semi) = tail.find(';').filter(|&n| n <= 64) else {
                    break;
                };
                entity_reference(&tail[..semi], at, &mut self.problems);
                rest = &tail[semi + 1..];
            }
            let key = match a.key.into_inner() {
                "name" => "name",
                "type" => "type",
                "version" => "version",
                "offset" => "offset",
                "size" => "size",
                "element_type" => "element_type",
                "shape" => "shape",
                _ => continue,
            };
            attrs.insert(key, a.value.chars().take(4096).collect());
        }
        if self.stack.is_empty() {
            if self.saw_root || name != "net" {
                push(
                    &mut self.problems,
                    Problem::malformed(
                        "xml-root",
                        format!("IR XML root element is `<{name}>`, not `<net>`"),
                    )
                    .at(at),
                );
                return false;
            }
            self.saw_root = true;
            self.facts.version = attrs.get("version").map(|v| clip(v));
            self.facts.name = attrs.get("name").map(|v| clip(v));
        }
        let parent = self.stack.last().map(String::as_str);
        if name == "layer" && parent == Some("layers") {
            self.facts.layers += 1;
            let l = Layer {
                name: attrs.get("name").map(|v| clip(v)).unwrap_or_default(),
                op: attrs.get("type").map(|v| clip(v)).unwrap_or_default(),
                version: attrs.get("version").map(|v| clip(v)),
            };
            record_layer(
                &l,
                &mut self.facts,
                &mut self.custom,
                at,
                &mut self.problems,
            );
            self.layer = Some(l);
        } else if name == "edge" && parent == Some("edges") {
            self.facts.edges += 1;
        } else if name == "data"
            && parent == Some("layer")
            && let Some(l) = &self.layer
            && (l.op == "Const" || l.op == "Constant")
            && let (Some(off), Some(size)) = (attrs.get("offset"), attrs.get("size"))
        {
            const_range(
                l,
                off,
                size,
                &attrs,
                at,
                &mut self.facts,
                &mut self.problems,
            );
        }
        if !empty {
            self.stack.push(name);
        }
        true
    }
}

/// Parses an IR XML. Never expands entities, never reads anything but `xml`.
pub fn parse(xml: &[u8]) -> (Facts, Vec<Problem>) {
    use quick_xml::events::Event;
    let mut w = Walk::default();
    let text = match std::str::from_utf8(xml) {
        Ok(t) => t,
        Err(e) => {
            push(
                &mut w.problems,
                Problem::malformed("xml-encoding", format!("IR XML is not UTF-8: {e}"))
                    .at(e.valid_up_to() as u64),
            );
            return (w.facts, w.problems);
        }
    };
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut syntax = false;
    loop {
        let at = reader.buffer_position();
        let event = match reader.read_event() {
            Ok(e) => e,
            Err(e) => {
                syntax = true;
                push(
                    &mut w.problems,
                    Problem::malformed("xml-syntax", format!("IR XML is not well-formed: {e}"))
                        .at(reader.error_position()),
                );
                break;
            }
        };
        let go_on = match event {
            Event::DocType(d) => {
                doctype(&d, at, &mut w.problems);
                true
            }
            Event::GeneralRef(r) => {
                entity_reference(&r, at, &mut w.problems);
                true
            }
            Event::Start(e) => w.open(&e, false, at),
            Event::Empty(e) => w.open(&e, true, at),
            Event::End(_) => {
                if w.stack.pop().as_deref() == Some("layer") {
                    w.layer = None;
                }
                true
            }
            Event::Eof => false,
            _ => true,
        };
        if !go_on {
            break;
        }
    }
    if !syntax && !w.stack.is_empty() && !w.problems.iter().any(|p| p.code == "xml-too-deep") {
        let open = clip(w.stack.last().map(String::as_str).unwrap_or_default());
        push(
            &mut w.problems,
            Problem::malformed(
                "xml-unclosed",
                format!(
                    "IR XML ends with `<{open}>` (and {} more) still open: truncated",
                    w.stack.len() - 1
                ),
            )
            .at(xml.len() as u64),
        );
    }
    if !w.saw_root && !syntax {
        push(
            &mut w.problems,
            Problem::malformed("xml-root", "IR XML has no `<net>` root element"),
        );
    }
    if w.custom > MAX_LISTED as u64 {
        let more = w.custom - MAX_LISTED as u64;
        w.facts.custom_layers.push(format!("... and {more} more"));
    }
    (w.facts, w.problems)
}

/// `&name;` outside the five predefined entities and character references: only a DTD defines it.
fn entity_reference(name: &str, at: u64, problems: &mut Vec<Problem>) {
    let predefined = matches!(name, "lt" | "gt" | "amp" | "apos" | "quot") || name.starts_with('#');
    if predefined {
        return;
    }
    push(problems,
        Problem::new(
            ProblemKind::Exploit,
            "xml-entity-reference",
            format!(
                "IR XML refers to the entity `&{};`, which only a DTD can define: XML tools that expand entities would substitute (or fetch) it",
                clip(name)
            ),
            Some(at),
        )
        .with("entity", clip(name)),
    );
}

fn doctype(d: &str, at: u64, problems: &mut Vec<Problem>) {
    let entity = d.contains("<!ENTITY");
    let external = d.contains("SYSTEM") || d.contains("PUBLIC");
    let excerpt = crate::model::problem::excerpt(d, 160);
    if entity || external {
        let what = match (entity, external) {
            (true, true) => "declares entities with an external reference (XXE)",
            (true, false) => "declares entities (expansion bombs, XXE building blocks)",
            _ => "references an external DTD",
        };
        push(problems,
            Problem::new(
                ProblemKind::Exploit,
                "xml-doctype-entities",
                format!(
                    "IR XML has a DOCTYPE that {what}; OpenVINO never writes one, and XML tools that process it read files or URLs the attacker names: `{excerpt}`"
                ),
                Some(at),
            )
            .with("external", external.to_string())
            .with("doctype", excerpt),
        );
    } else {
        push(
            problems,
            Problem::malformed(
                "xml-doctype",
                format!("IR XML has a DOCTYPE, which OpenVINO never writes: `{excerpt}`"),
            )
            .at(at),
        );
    }
}

fn record_layer(
    l: &Layer,
    facts: &mut Facts,
    custom: &mut u64,
    at: u64,
    problems: &mut Vec<Problem>,
) {
    let known = facts.op_types.len() < MAX_OP_TYPES || facts.op_types.contains_key(&l.op);
    if known {
        *facts.op_types.entry(l.op.clone()).or_insert(0) += 1;
    }
    if let Some(v) = &l.version
        && (facts.opsets.len() < MAX_OP_TYPES || facts.opsets.contains_key(v))
    {
        *facts.opsets.entry(v.clone()).or_insert(0) += 1;
    }
    // IR v7 and older name layers differently and are not loaded by current OpenVINO: only the
    // versioned layers of IR v10+ are judged.
    let modern = facts
        .version
        .as_deref()
        .and_then(|v| v.parse::<u32>().ok())
        .is_none_or(|v| v >= 10);
    let why = match &l.version {
        Some(v) if !is_standard_version(v) => {
            Some(format!("its version `{v}` is not a standard opset"))
        }
        Some(v) if !OPS.contains(&l.op.as_str()) && !OWN_VERSIONS.contains(&v.as_str()) => {
            Some(format!("no OpenVINO opset defines the type `{}`", l.op))
        }
        None if modern && !OPS.contains(&l.op.as_str()) => {
            Some(format!("no OpenVINO opset defines the type `{}`", l.op))
        }
        _ => None,
    };
    let Some(why) = why else {
        return;
    };
    *custom += 1;
    let tag = format!("{}@{}", l.op, l.version.as_deref().unwrap_or(""));
    if (*custom as usize) <= MAX_LISTED {
        facts.custom_layers.push(tag.clone());
    }
    push(problems,
        Problem::new(
            ProblemKind::CustomOp,
            "custom-layer",
            format!(
                "layer `{}` of type `{}` needs an OpenVINO extension: {why}; the extension is native code from outside the model",
                l.name, l.op
            ),
            Some(at),
        )
        .with("layer", l.name.clone())
        .with("op", l.op.clone())
        .with("version", l.version.clone().unwrap_or_default())
        .with("domain", tag),
    );
}

fn const_range(
    l: &Layer,
    off: &str,
    size: &str,
    attrs: &BTreeMap<&str, String>,
    at: u64,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) {
    let exploit = |code: &'static str, message: String| {
        Problem::new(ProblemKind::Exploit, code, message, Some(at))
            .with("layer", l.name.clone())
            .with("offset", clip(off))
            .with("size", clip(size))
    };
    let (Ok(o), Ok(n)) = (off.trim().parse::<u64>(), size.trim().parse::<u64>()) else {
        push(
            problems,
            exploit(
                "const-range-invalid",
                format!(
                    "Const layer `{}` has a weight range that is not two unsigned integers (offset `{}`, size `{}`)",
                    l.name,
                    clip(off),
                    clip(size)
                ),
            ),
        );
        return;
    };
    let Some(end) = o.checked_add(n) else {
        push(
            problems,
            exploit(
                "const-range-overflow",
                format!(
                    "Const layer `{}` reads {n} bytes at offset {o}: the end overflows",
                    l.name
                ),
            ),
        );
        return;
    };
    facts.weights.ranges += 1;
    facts.weights.bytes = facts.weights.bytes.saturating_add(n);
    if end > facts.weights.end || facts.weights.end_layer.is_none() {
        facts.weights.end = end.max(facts.weights.end);
        if end >= facts.weights.end {
            facts.weights.end_layer = Some(l.name.clone());
        }
    }
    // The size its element type and shape need; a smaller range makes the reader run past it.
    let Some(elem) = attrs
        .get("element_type")
        .and_then(|t| element_bytes(t.trim()))
    else {
        return;
    };
    let Some(shape) = attrs.get("shape") else {
        return;
    };
    let mut count: Option<u64> = Some(1);
    for d in shape.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        count = d
            .parse::<u64>()
            .ok()
            .and_then(|d| count.and_then(|c| c.checked_mul(d)));
    }
    let need = count.and_then(|c| c.checked_mul(elem));
    match need {
        Some(need) if need <= n => {}
        Some(need) => push(
            problems,
            exploit(
                "const-size-mismatch",
                format!(
                    "Const layer `{}` declares {} of shape [{}] ({need} bytes) but its range holds {n} bytes",
                    l.name,
                    clip(attrs.get("element_type").map(String::as_str).unwrap_or("")),
                    clip(shape)
                ),
            ),
        ),
        None => push(
            problems,
            exploit(
                "const-shape-overflow",
                format!(
                    "Const layer `{}` declares the shape [{}], whose byte size overflows",
                    l.name,
                    clip(shape)
                ),
            ),
        ),
    }
}

/// The IR XML at the top level: read (bounded by `json_bytes`), parsed, recorded.
pub fn inspect_ir(ctx: &mut Ctx<'_>, r: &mut dyn BufRead) -> io::Result<Format> {
    let limit = ctx.cfg.limits.json_bytes;
    let (bytes, more) = read::read_bounded(r, limit)?;
    if more {
        let cfg = ctx.cfg;
        let d = ctx.detect(
            RuleId::LimitExceeded,
            "json_bytes",
            format!(
                "OpenVINO IR XML is larger than the json_bytes limit ({limit}); its layers were not read; {}",
                super::context::raise_hint("json_bytes")
            ),
            crate::model::finding::Location::default(),
        );
        super::context::name_limit(d, cfg, "json_bytes");
        return Ok(Format::Openvino);
    }
    let (facts, problems) = parse(&bytes);
    drop(bytes);
    ctx.fact(
        Fact::Openvino,
        serde_json::to_value(&facts).unwrap_or(Value::Null),
    );
    super::formats::record_problems(ctx, &problems, RuleId::FormatExploitShape, None, &[]);
    Ok(Format::Openvino)
}

#[cfg(test)]
mod tests;
