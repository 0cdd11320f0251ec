//! ONNX model inspector. An ONNX file is one protobuf `ModelProto` with no magic number; we
//! walk it once with the bounded wire reader, skipping tensor payloads, and record what the
//! SBOM needs (IR version, opsets, producer, operator types) plus the two ways an ONNX model
//! reaches beyond its own bytes: tensors whose data lives in external files (a path the
//! runtime opens relative to the model, which an attacker can point at `/etc/passwd` or
//! `../../secrets`), and operators from custom domains (which need a native plugin library).
//! Subgraphs (If/Loop/Scan bodies in node attributes), training graphs and model-local
//! functions are walked with an explicit frame stack, bounded by `Limits::max_depth`.
//!
//! Field numbers follow onnx/onnx.proto: ModelProto ir_version=1, producer_name=2,
//! producer_version=3, domain=4, model_version=5, doc_string=6, graph=7, opset_import=8,
//! metadata_props=14, training_info=20, functions=25; GraphProto node=1, name=2,
//! initializer=5, sparse_initializer=15; NodeProto op_type=4, attribute=5, domain=7;
//! AttributeProto t=5, g=6, tensors=10, graphs=11, sparse_tensor=22, sparse_tensors=23;
//! TensorProto name=8, external_data=13, data_location=14; SparseTensorProto values=1,
//! indices=2; TrainingInfoProto initialization=1, algorithm=2; FunctionProto node=7,
//! opset_import=9, domain=10; OperatorSetIdProto domain=1, version=2; StringStringEntryProto
//! key=1, value=2.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;

use serde::Serialize;

use super::problem::{Problem, ProblemKind, excerpt};
use super::protobuf::{Jump, WireError, WireReader, WireType};

/// Bounds for the ONNX walk.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Deepest message nesting accepted (each subgraph level costs three).
    pub max_depth: usize,
    /// Longest name, domain or path kept (longer ones are cut).
    pub max_string_len: usize,
    /// Most distinct operator types recorded.
    pub max_op_types: usize,
    /// Most external data references recorded.
    pub max_external_refs: usize,
    /// Most opset imports and metadata entries recorded.
    pub max_entries: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// `onnx_depth` from the policy; string lengths and how many op types, references and
    /// entries are recorded are fixed internal caps on the facts kept.
    fn from(l: &crate::model::limits::Limits) -> Self {
        Self {
            max_depth: crate::model::limits::usize_of(l.onnx_depth),
            max_string_len: 1024,
            max_op_types: 1024,
            max_external_refs: 10_000,
            max_entries: 1024,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// One tensor whose data lives outside the model file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExternalData {
    /// The tensor's name.
    pub tensor: String,
    /// The `location` entry (a path relative to the model's directory, by the spec).
    pub location: String,
    /// The `offset` entry, as written.
    pub offset: Option<String>,
    /// The `length` entry, as written.
    pub length: Option<String>,
}

/// What an ONNX model says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// `ModelProto.ir_version`.
    pub ir_version: Option<u64>,
    /// Imported operator sets: domain ("" is the default ONNX domain) -> version.
    pub opsets: BTreeMap<String, i64>,
    /// `producer_name`, e.g. "pytorch".
    pub producer_name: Option<String>,
    /// `producer_version`.
    pub producer_version: Option<String>,
    /// `ModelProto.domain`.
    pub model_domain: Option<String>,
    /// `model_version`.
    pub model_version: Option<u64>,
    /// The main graph's name.
    pub graph_name: Option<String>,
    /// Nodes in every graph, subgraph and function.
    pub node_count: u64,
    /// Dense and sparse initializers in every graph.
    pub initializer_count: u64,
    /// Model-local functions.
    pub function_count: u64,
    /// Operator types with their counts, keyed `op` for the default domain and
    /// `domain:op` otherwise (at most `Limits::max_op_types` keys).
    pub op_types: BTreeMap<String, u64>,
    /// Whether more operator types existed than were recorded.
    pub op_types_truncated: bool,
    /// Node and opset domains outside the standard ONNX ones.
    pub custom_domains: BTreeSet<String>,
    /// Tensors stored in external files.
    pub external_data: Vec<ExternalData>,
    /// `metadata_props` keys and values (cut to `Limits::max_string_len`).
    pub metadata: BTreeMap<String, String>,
}

/// Domains defined by the ONNX specification itself.
pub const STANDARD_DOMAINS: &[&str] = &[
    "",
    "ai.onnx",
    "ai.onnx.ml",
    "ai.onnx.training",
    "ai.onnx.preview.training",
];

/// Sniffs an ONNX `ModelProto` from its first bytes. ONNX has no magic, so this checks the
/// shape writers produce: field 1 (`ir_version`, a one-byte varint 1..=31; onnx 1.23 writes
/// 14) followed by the tag of
/// another known ModelProto field. Callers also accept the `.onnx` extension.
pub fn is_onnx(head: &[u8]) -> bool {
    let [0x08, version, next, rest @ ..] = head else {
        return false;
    };
    if !(1..=31).contains(version) {
        return false;
    }
    match next {
        0x12 | 0x1a | 0x22 | 0x28 | 0x32 | 0x3a | 0x42 | 0x72 => true,
        // training_info=20 (0xa2 0x01) and functions=25 (0xca 0x01) take two tag bytes.
        0xa2 | 0xca => rest.first() == Some(&0x01),
        _ => false,
    }
}

/// True when `head` starts like an ONNX value message, the `input_0.pb`/`output_0.pb` test data
/// ONNX's backend suite and `onnx.numpy_helper` write (issue 15, cause 8): a `TensorProto`, or a
/// `SequenceProto`/`OptionalProto`/`MapProto` holding tensors. All four have field 2 as a
/// varint (`data_type`, `elem_type`, `key_type`), which no TensorFlow `GraphDef` (field 2 is its
/// function library, a message) or `SavedModel` (field 2 holds meta graphs) has. The fields read
/// in `head` must all be fields of those messages with their wire types, the first one field 1
/// or 2; a length that runs past `head` ends the look without deciding against it.
pub fn is_onnx_value(head: &[u8]) -> bool {
    use super::protobuf::varint_at as varint;
    let mut at = 0;
    let mut first = true;
    let mut kind_field = false;
    while at < head.len() {
        let Some(tag) = varint(head, &mut at) else {
            break;
        };
        let (field, wire) = (tag >> 3, tag & 7);
        if first && !matches!(field, 1 | 2) {
            return false;
        }
        first = false;
        // TensorProto fields 1-14 and 16 (`dims`, `data_type`, `segment`, the typed data arrays,
        // `name`, `raw_data`, `doc_string`, `external_data`, `data_location`,
        // `metadata_props`); the container messages use 1-7 with the same wire types or 2.
        let allowed = match field {
            2 | 14 => wire == 0,
            1 | 5 | 7 | 11 => matches!(wire, 0 | 2),
            4 => matches!(wire, 2 | 5),
            10 => matches!(wire, 1 | 2),
            3 => matches!(wire, 0 | 2),
            6 | 8 | 9 | 12 | 13 | 16 => wire == 2,
            _ => false,
        };
        if !allowed {
            return false;
        }
        if field == 2 {
            kind_field = true;
        }
        match wire {
            0 => {
                if varint(head, &mut at).is_none() {
                    break;
                }
            }
            1 => at = at.saturating_add(8),
            5 => at = at.saturating_add(4),
            _ => {
                let Some(len) = varint(head, &mut at) else {
                    break;
                };
                at = at.saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
            }
        }
    }
    kind_field
}

/// What the walker is inside of, with the state collected so far.
enum Frame {
    Model,
    Graph {
        main: bool,
    },
    Node {
        op: String,
        domain: String,
    },
    Attribute,
    Tensor(TensorState),
    SparseTensor,
    Entry {
        target: EntryTarget,
        key: String,
        value: String,
    },
    Opset {
        domain: String,
        version: i64,
    },
    TrainingInfo,
    Function,
}

#[derive(Default)]
struct TensorState {
    name: String,
    external: bool,
    location: Option<String>,
    offset: Option<String>,
    length: Option<String>,
}

#[derive(Clone, Copy)]
enum EntryTarget {
    Metadata,
    ExternalData,
}

/// Walks an ONNX model from offset 0 of `reader` (which holds `size` bytes), reading it to
/// the end. Facts gathered before a wire error are kept; the error becomes a `malformed`
/// problem. Custom domains become `custom-op-domain` problems; external data paths are
/// returned in the facts for [`check_external_data`], which needs the repository.
pub fn inspect(reader: &mut dyn BufRead, size: u64, limits: &Limits) -> (Facts, Vec<Problem>) {
    inspect_wire(WireReader::new(reader, size, limits.max_depth), limits)
}

/// [`inspect`] over a source that jumps over what the walk skips (tensor payloads), for
/// range reads of a remote file: the facts and problems are the same, the skipped bytes are
/// never fetched.
pub fn inspect_jumping(reader: &mut dyn Jump, size: u64, limits: &Limits) -> (Facts, Vec<Problem>) {
    inspect_wire(WireReader::jumping(reader, size, limits.max_depth), limits)
}

fn inspect_wire(mut r: WireReader<'_>, limits: &Limits) -> (Facts, Vec<Problem>) {
    let mut facts = Facts::default();
    let mut problems = Vec::new();
    if let Err(err) = walk(&mut r, limits, &mut facts, &mut problems) {
        problems.push(err.problem("onnx protobuf", "onnx"));
    }
    for domain in &facts.custom_domains {
        problems.push(
            Problem::new(
                ProblemKind::CustomOp,
                "custom-op-domain",
                format!(
                    "model uses operator domain '{}', which needs a custom operator library",
                    excerpt(domain, 200)
                ),
                None,
            )
            .with("domain", domain.clone()),
        );
    }
    (facts, problems)
}

fn walk(
    r: &mut WireReader<'_>,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) -> Result<(), WireError> {
    let max = limits.max_string_len;
    let mut frames: Vec<Frame> = vec![Frame::Model];
    loop {
        let Some((field, wire)) = r.next_field()? else {
            let Some(done) = frames.pop() else {
                return Ok(());
            };
            finish(done, frames.last_mut(), limits, facts, problems);
            if frames.is_empty() {
                return Ok(());
            }
            r.leave()?;
            continue;
        };
        let Some(top) = frames.last_mut() else {
            return Ok(());
        };
        let child = match (top, field, wire) {
            (Frame::Model, 1, WireType::Varint) => {
                facts.ir_version = Some(r.read_varint()?);
                None
            }
            (Frame::Model, 2, WireType::Len) => {
                facts.producer_name = Some(r.read_string(max)?.0);
                None
            }
            (Frame::Model, 3, WireType::Len) => {
                facts.producer_version = Some(r.read_string(max)?.0);
                None
            }
            (Frame::Model, 4, WireType::Len) => {
                facts.model_domain = Some(r.read_string(max)?.0);
                None
            }
            (Frame::Model, 5, WireType::Varint) => {
                facts.model_version = Some(r.read_varint()?);
                None
            }
            (Frame::Model, 7, WireType::Len) => Some(Frame::Graph { main: true }),
            // ModelProto.opset_import=8; FunctionProto.opset_import=9.
            (Frame::Model, 8, WireType::Len) | (Frame::Function, 9, WireType::Len) => {
                Some(Frame::Opset {
                    domain: String::new(),
                    version: 0,
                })
            }
            (Frame::Model, 14, WireType::Len) => Some(Frame::Entry {
                target: EntryTarget::Metadata,
                key: String::new(),
                value: String::new(),
            }),
            (Frame::Model, 20, WireType::Len) => Some(Frame::TrainingInfo),
            (Frame::Model, 25, WireType::Len) => {
                facts.function_count += 1;
                Some(Frame::Function)
            }
            (Frame::TrainingInfo, 1 | 2, WireType::Len) => Some(Frame::Graph { main: false }),
            (Frame::Graph { .. }, 1, WireType::Len) | (Frame::Function, 7, WireType::Len) => {
                facts.node_count += 1;
                Some(Frame::Node {
                    op: String::new(),
                    domain: String::new(),
                })
            }
            (Frame::Graph { main }, 2, WireType::Len) => {
                let main = *main;
                let name = r.read_string(max)?.0;
                if main {
                    facts.graph_name = Some(name);
                }
                None
            }
            (Frame::Graph { .. }, 5, WireType::Len) => {
                facts.initializer_count += 1;
                Some(Frame::Tensor(TensorState::default()))
            }
            (Frame::Graph { .. }, 15, WireType::Len) => {
                facts.initializer_count += 1;
                Some(Frame::SparseTensor)
            }
            (Frame::Function, 10, WireType::Len) => {
                let domain = r.read_string(max)?.0;
                note_domain(facts, &domain, limits);
                None
            }
            (Frame::Node { op, .. }, 4, WireType::Len) => {
                *op = r.read_string(max)?.0;
                None
            }
            (Frame::Node { domain, .. }, 7, WireType::Len) => {
                *domain = r.read_string(max)?.0;
                None
            }
            (Frame::Node { .. }, 5, WireType::Len) => Some(Frame::Attribute),
            (Frame::Attribute, 5 | 10, WireType::Len) => {
                Some(Frame::Tensor(TensorState::default()))
            }
            (Frame::Attribute, 6 | 11, WireType::Len) => Some(Frame::Graph { main: false }),
            (Frame::Attribute, 22 | 23, WireType::Len) => Some(Frame::SparseTensor),
            (Frame::SparseTensor, 1 | 2, WireType::Len) => {
                Some(Frame::Tensor(TensorState::default()))
            }
            (Frame::Tensor(t), 8, WireType::Len) => {
                t.name = r.read_string(max)?.0;
                None
            }
            (Frame::Tensor(t), 14, WireType::Varint) => {
                t.external = r.read_varint()? == 1;
                None
            }
            (Frame::Tensor(_), 13, WireType::Len) => Some(Frame::Entry {
                target: EntryTarget::ExternalData,
                key: String::new(),
                value: String::new(),
            }),
            (Frame::Entry { key, .. }, 1, WireType::Len) => {
                *key = r.read_string(max)?.0;
                None
            }
            (Frame::Entry { value, .. }, 2, WireType::Len) => {
                *value = r.read_string(max)?.0;
                None
            }
            (Frame::Opset { domain, .. }, 1, WireType::Len) => {
                *domain = r.read_string(max)?.0;
                None
            }
            (Frame::Opset { version, .. }, 2, WireType::Varint) => {
                // int64 is encoded as its two's-complement u64.
                *version = r.read_varint()? as i64;
                None
            }
            _ => {
                r.skip(wire)?;
                None
            }
        };
        if let Some(child) = child {
            r.enter_message()?;
            frames.push(child);
        }
    }
}

fn note_domain(facts: &mut Facts, domain: &str, limits: &Limits) {
    if !STANDARD_DOMAINS.contains(&domain) && facts.custom_domains.len() < limits.max_entries {
        facts.custom_domains.insert(domain.to_owned());
    }
}

/// Folds a finished frame into its parent or the facts.
fn finish(
    done: Frame,
    parent: Option<&mut Frame>,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) {
    match done {
        Frame::Node { op, domain } => {
            note_domain(facts, &domain, limits);
            let key = if domain.is_empty() || domain == "ai.onnx" {
                op
            } else {
                format!("{domain}:{op}")
            };
            if let Some(count) = facts.op_types.get_mut(&key) {
                *count += 1;
            } else if facts.op_types.len() < limits.max_op_types {
                facts.op_types.insert(key, 1);
            } else {
                facts.op_types_truncated = true;
            }
        }
        Frame::Opset { domain, version } => {
            note_domain(facts, &domain, limits);
            if facts.opsets.len() < limits.max_entries {
                facts.opsets.insert(domain, version);
            }
        }
        Frame::Entry { target, key, value } => match (target, parent) {
            (EntryTarget::ExternalData, Some(Frame::Tensor(t))) => match key.as_str() {
                "location" => t.location = Some(value),
                "offset" => t.offset = Some(value),
                "length" => t.length = Some(value),
                _ => {}
            },
            (EntryTarget::Metadata, _) if facts.metadata.len() < limits.max_entries => {
                facts.metadata.insert(key, value);
            }
            _ => {}
        },
        Frame::Tensor(t) if t.external || t.location.is_some() => {
            let Some(location) = t.location else {
                problems.push(
                    Problem::new(
                        ProblemKind::Malformed,
                        "external-data-without-location",
                        format!(
                            "tensor '{}' stores its data externally but names no location",
                            excerpt(&t.name, 200)
                        ),
                        None,
                    )
                    .with("tensor", t.name),
                );
                return;
            };
            if facts.external_data.len() < limits.max_external_refs {
                facts.external_data.push(ExternalData {
                    tensor: t.name,
                    location,
                    offset: t.offset,
                    length: t.length,
                });
            }
        }
        _ => {}
    }
}

/// Checks external-data locations against the repository. `model_dir_rel` is the model's
/// directory relative to the scan root (`/`-separated, "" for the root); `exists` answers
/// whether a root-relative normalised path is a regular file in the repository.
///
/// Problems (all for FMT004): `absolute-path` (unix `/…`, windows `C:\…` or `C:/…`, UNC or
/// rooted `\…`), `path-escape` (`..` climbs above the scan root), `missing-file`. A path that
/// leaves the model's directory but stays in the repository is allowed and noted
/// (`outside-model-dir`), since sharded exports sometimes share a data directory.
pub fn check_external_data(
    locations: &[String],
    model_dir_rel: &str,
    exists: &dyn Fn(&str) -> bool,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    let unique: BTreeSet<&String> = locations.iter().collect();
    for location in unique {
        let shown = excerpt(location, 300);
        if is_absolute(location) {
            problems.push(
                Problem::new(
                    ProblemKind::Unsafe,
                    "absolute-path",
                    format!("external data location '{shown}' is an absolute path"),
                    None,
                )
                .with("location", shown),
            );
            continue;
        }
        let base: Vec<&str> = split_path(model_dir_rel).collect();
        let mut parts: Vec<&str> = base.clone();
        let mut escaped = false;
        let mut left_model_dir = false;
        for part in split_path(location) {
            if part == ".." {
                if parts.pop().is_none() {
                    escaped = true;
                    break;
                }
                if parts.len() < base.len() {
                    left_model_dir = true;
                }
            } else {
                parts.push(part);
            }
        }
        if escaped {
            problems.push(
                Problem::new(
                    ProblemKind::Unsafe,
                    "path-escape",
                    format!("external data location '{shown}' climbs out of the repository"),
                    None,
                )
                .with("location", shown),
            );
            continue;
        }
        let normalised = parts.join("/");
        if normalised.is_empty() || location.contains('\0') || !exists(&normalised) {
            problems.push(
                Problem::new(
                    ProblemKind::Unsafe,
                    "missing-file",
                    format!(
                        "external data location '{shown}' is not a file in the repository ('{}')",
                        excerpt(&normalised, 300)
                    ),
                    None,
                )
                .with("location", shown)
                .with("resolved", normalised),
            );
            continue;
        }
        if left_model_dir {
            problems.push(
                Problem::new(
                    ProblemKind::Note,
                    "outside-model-dir",
                    format!("external data location '{shown}' leaves the model's directory"),
                    None,
                )
                .with("location", shown)
                .with("resolved", normalised),
            );
        }
    }
    problems
}

/// Both separators count: an ONNX runtime on Windows accepts `\`.
fn split_path(path: &str) -> impl Iterator<Item = &str> {
    path.split(['/', '\\'])
        .filter(|part| !part.is_empty() && *part != ".")
}

fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    match bytes {
        [b'/' | b'\\', ..] => true,
        [letter, b':', ..] if letter.is_ascii_alphabetic() => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::protobuf::encode::*;
    use super::*;

    fn run(bytes: &[u8]) -> (Facts, Vec<Problem>) {
        let mut cur = std::io::Cursor::new(bytes.to_vec());
        inspect(&mut cur, bytes.len() as u64, &Limits::default())
    }

    fn node(op: &str, domain: &str) -> Vec<u8> {
        let mut n = field_str(4, op);
        if !domain.is_empty() {
            n.extend(field_str(7, domain));
        }
        field_bytes(1, &n)
    }

    fn external_tensor(name: &str, location: &str) -> Vec<u8> {
        let entry = |k: &str, v: &str| field_bytes(13, &cat(&[field_str(1, k), field_str(2, v)]));
        let t = cat(&[
            field_varint(1, 4),
            field_varint(2, 1),
            field_str(8, name),
            entry("location", location),
            entry("offset", "0"),
            entry("length", "16"),
            field_varint(14, 1),
        ]);
        field_bytes(5, &t)
    }

    fn model(graph: &[u8], opsets: &[(&str, u64)]) -> Vec<u8> {
        let mut m = cat(&[
            field_varint(1, 8),
            field_str(2, "pytorch"),
            field_str(3, "2.3.0"),
        ]);
        m.extend(field_bytes(7, graph));
        for (domain, version) in opsets {
            m.extend(field_bytes(
                8,
                &cat(&[field_str(1, domain), field_varint(2, *version)]),
            ));
        }
        m
    }

    #[test]
    fn reads_basic_facts() {
        let raw = field_bytes(9, &[0u8; 64]);
        let init = field_bytes(5, &cat(&[field_str(8, "w"), raw]));
        let graph = cat(&[
            node("Conv", ""),
            node("Relu", ""),
            node("Relu", ""),
            field_str(2, "main_graph"),
            init,
        ]);
        let bytes = model(&graph, &[("", 17)]);
        assert!(is_onnx(&bytes));
        let (facts, problems) = run(&bytes);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(facts.ir_version, Some(8));
        assert_eq!(facts.producer_name.as_deref(), Some("pytorch"));
        assert_eq!(facts.graph_name.as_deref(), Some("main_graph"));
        assert_eq!(facts.node_count, 3);
        assert_eq!(facts.initializer_count, 1);
        assert_eq!(facts.op_types.get("Relu"), Some(&2));
        assert_eq!(facts.opsets.get(""), Some(&17));
    }

    #[test]
    fn reports_custom_op_domain() {
        let graph = node("MyOp", "com.evil");
        let bytes = model(&graph, &[("", 17), ("com.evil", 1), ("ai.onnx.ml", 3)]);
        let (facts, problems) = run(&bytes);
        assert_eq!(facts.op_types.get("com.evil:MyOp"), Some(&1));
        assert_eq!(facts.custom_domains.len(), 1);
        assert!(matches!(
            problems.as_slice(),
            [Problem {
                kind: ProblemKind::CustomOp,
                code: "custom-op-domain",
                ..
            }]
        ));
    }

    #[test]
    fn finds_nodes_and_external_data_in_subgraphs() {
        let body = cat(&[
            node("Add", ""),
            external_tensor("sub_w", "../../etc/passwd"),
        ]);
        let attr = field_bytes(
            5,
            &cat(&[field_str(1, "then_branch"), field_bytes(6, &body)]),
        );
        let if_node = field_bytes(1, &cat(&[field_str(4, "If"), attr]));
        let bytes = model(&if_node, &[("", 17)]);
        let (facts, problems) = run(&bytes);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(facts.node_count, 2);
        assert_eq!(facts.external_data.len(), 1);
        assert_eq!(facts.external_data[0].location, "../../etc/passwd");
        assert_eq!(facts.external_data[0].length.as_deref(), Some("16"));
    }

    #[test]
    fn external_data_checks() {
        let graph = cat(&[
            external_tensor("a", "../../outside.bin"),
            external_tensor("b", "/etc/passwd"),
            external_tensor("c", "weights.bin"),
            external_tensor("d", "C:\\Windows\\win.ini"),
            external_tensor("e", "\\\\server\\share\\x"),
            external_tensor("f", "gone.bin"),
            external_tensor("g", "../shared/data.bin"),
        ]);
        let bytes = model(&graph, &[("", 17)]);
        let (facts, problems) = run(&bytes);
        assert!(problems.is_empty());
        let locations: Vec<String> = facts
            .external_data
            .iter()
            .map(|e| e.location.clone())
            .collect();
        let exists = |p: &str| p == "models/m/weights.bin" || p == "models/shared/data.bin";
        let found = check_external_data(&locations, "models/m", &exists);
        let code_of = |loc: &str| {
            found
                .iter()
                .find(|p| {
                    p.evidence.get("location").map(String::as_str) == Some(&excerpt(loc, 300))
                })
                .map(|p| p.code)
        };
        assert_eq!(code_of("../../outside.bin"), Some("missing-file"));
        assert_eq!(code_of("/etc/passwd"), Some("absolute-path"));
        assert_eq!(code_of("C:\\Windows\\win.ini"), Some("absolute-path"));
        assert_eq!(code_of("\\\\server\\share\\x"), Some("absolute-path"));
        assert_eq!(code_of("weights.bin"), None);
        assert_eq!(code_of("gone.bin"), Some("missing-file"));
        assert_eq!(code_of("../shared/data.bin"), Some("outside-model-dir"));
        let escape = check_external_data(&["../../../x".to_owned()], "models/m", &exists);
        assert!(matches!(
            escape.as_slice(),
            [Problem {
                code: "path-escape",
                ..
            }]
        ));
    }

    #[test]
    fn rejects_external_tensor_without_location() {
        let t = field_bytes(5, &cat(&[field_str(8, "w"), field_varint(14, 1)]));
        let (_, problems) = run(&model(&t, &[]));
        assert!(matches!(
            problems.as_slice(),
            [Problem {
                code: "external-data-without-location",
                ..
            }]
        ));
    }

    #[test]
    fn rejects_truncated_model() {
        let bytes = model(&node("Relu", ""), &[("", 17)]);
        let cut = &bytes[..bytes.len() - 3];
        let mut cur = std::io::Cursor::new(cut.to_vec());
        let (_, problems) = inspect(&mut cur, bytes.len() as u64, &Limits::default());
        assert!(matches!(
            problems.as_slice(),
            [Problem {
                kind: ProblemKind::Malformed,
                ..
            }]
        ));
    }

    #[test]
    fn rejects_oversized_length() {
        let mut bytes = vec![0x08, 0x08, 0x3a];
        varint(&mut bytes, 1 << 40);
        let (_, problems) = run(&bytes);
        assert!(matches!(
            problems.as_slice(),
            [Problem {
                code: "length-exceeds-parent",
                ..
            }]
        ));
    }

    #[test]
    fn rejects_excessive_subgraph_nesting() {
        let mut graph = node("Relu", "");
        for _ in 0..40 {
            let attr = field_bytes(5, &field_bytes(6, &graph));
            graph = field_bytes(1, &cat(&[field_str(4, "If"), attr]));
        }
        let (_, problems) = run(&model(&graph, &[]));
        assert!(matches!(
            problems.as_slice(),
            [Problem {
                code: "too-deep",
                ..
            }]
        ));
    }

    #[test]
    fn sniffs_onnx_heads() {
        assert!(is_onnx(&[0x08, 0x07, 0x12, 0x07]));
        assert!(is_onnx(&[0x08, 0x09, 0xca, 0x01]));
        assert!(!is_onnx(&[0x08, 0x00, 0x12]));
        assert!(!is_onnx(&[0x08, 0x07, 0x99]));
        assert!(!is_onnx(b"GGUF"));
        assert!(!is_onnx(&[]));
    }

    #[test]
    fn sniffs_onnx_test_data_values_not_tf_graphs() {
        // TensorProto (dims, data_type, name, raw_data), scalar TensorProto (data_type first),
        // SequenceProto (name, elem_type, tensor), OptionalProto with an empty value.
        assert!(is_onnx_value(
            b"\x08\x03\x08\x04\x10\x01B\x01xJ\x08\x00\x00\x80?"
        ));
        assert!(is_onnx_value(
            b"\x10\x07J\x08\x01\x00\x00\x00\x00\x00\x00\x00"
        ));
        assert!(is_onnx_value(
            b"\n\x01x\x10\x01\x1a\x06\x08\x01\x10\x01J\x00"
        ));
        assert!(is_onnx_value(b"\n\x0eoptional_input\x10\x00"));
        // A GraphDef (node, library), a SavedModel, a model: field 2 is never a varint there.
        assert!(!is_onnx_value(b"\n\x0b\n\x01x\x12\x06Const\x12\x00"));
        assert!(!is_onnx_value(b"\x08\x01\x12\x02\x08\x01"));
        assert!(!is_onnx_value(&[
            0x08, 0x07, 0x12, 0x04, b't', b'e', b's', b't'
        ]));
        // An unknown field or a first field that no value message starts with.
        assert!(!is_onnx_value(b"\x10\x01\x78\x01"));
        assert!(!is_onnx_value(b"\x1a\x00\x10\x01"));
        assert!(!is_onnx_value(&[]));
    }

    /// Written by the onnx 1.23 Python package (tests/fixtures/onnx/make_fixtures.py).
    #[test]
    fn reads_onnx_package_model() {
        let bytes = include_bytes!("../../tests/fixtures/onnx/external.onnx");
        assert!(is_onnx(bytes));
        let (facts, problems) = run(bytes);
        assert_eq!(facts.ir_version, Some(14));
        assert_eq!(facts.producer_name.as_deref(), Some("modelgate-fixture"));
        assert_eq!(facts.graph_name.as_deref(), Some("g"));
        assert_eq!(facts.node_count, 2);
        assert_eq!(facts.initializer_count, 1);
        assert_eq!(facts.opsets.get("com.example"), Some(&1));
        assert_eq!(facts.op_types.get("com.example:Mystery"), Some(&1));
        assert_eq!(facts.external_data[0].location, "../../outside.bin");
        assert!(matches!(
            problems.as_slice(),
            [Problem {
                code: "custom-op-domain",
                ..
            }]
        ));
        let locations = vec![facts.external_data[0].location.clone()];
        let found = check_external_data(&locations, "m", &|_| true);
        assert!(matches!(
            found.as_slice(),
            [Problem {
                code: "path-escape",
                ..
            }]
        ));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = run(&bytes);
        }

        #[test]
        fn never_panics_on_mutated_model(pos in 0usize..200, byte in proptest::prelude::any::<u8>()) {
            let graph = cat(&[node("Conv", "com.x"), external_tensor("w", "a.bin")]);
            let mut bytes = model(&graph, &[("", 17)]);
            let len = bytes.len();
            bytes[pos % len] = byte;
            let _ = run(&bytes);
        }
    }
}
