//! TensorFlow graph inspector for `saved_model.pb` (a `SavedModel` protobuf) and frozen
//! `GraphDef` `.pb` files. TensorFlow runs whatever ops a graph names when the graph is
//! loaded and called, so a graph can carry code: `PyFunc`-family ops call back into Python
//! functions registered by name in the loading process, and file-system ops read or write
//! arbitrary paths. We walk the protobuf once with the bounded wire reader (no recursion),
//! count op types across the graph and its function library, and report those ops.
//!
//! Save/Restore ops are how every SavedModel reads its own `variables/` checkpoint, so in a
//! SavedModel they are only counted. A frozen GraphDef has no variables by construction, so
//! there any Save/Restore op is reported. (Resolving the filename input to a constant would
//! need tensor decoding; that is left out on purpose.)
//!
//! Field numbers (tensorflow/core/protobuf/saved_model.proto, meta_graph.proto,
//! framework/graph.proto, node_def.proto, function.proto, op_def.proto): SavedModel
//! saved_model_schema_version=1, meta_graphs=2; MetaGraphDef graph_def=2; GraphDef node=1,
//! library=2; NodeDef name=1, op=2; FunctionDefLibrary function=1; FunctionDef signature=1
//! (OpDef name=1), node_def=3.

use std::collections::BTreeMap;
use std::io::BufRead;

use serde::Serialize;

use super::problem::{Problem, ProblemKind, excerpt};
use super::protobuf::{Jump, WireError, WireReader, WireType};

/// Which TensorFlow file the bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GraphFile {
    /// `saved_model.pb`: a `SavedModel` message.
    SavedModel,
    /// A frozen `GraphDef` (`.pb` from `freeze_graph` / `convert_variables_to_constants`).
    FrozenGraph,
    /// A TF1 checkpoint's `.meta`: one `MetaGraphDef`, as inside a SavedModel.
    MetaGraph,
}

/// Bounds for the TensorFlow walk.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Deepest message nesting accepted.
    pub max_depth: usize,
    /// Longest node, op or function name kept.
    pub max_string_len: usize,
    /// Most distinct op types recorded.
    pub max_op_types: usize,
    /// Most unsafe-op problems reported (the count in the facts stays exact).
    pub max_problems: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    /// `tf_depth` from the policy; string lengths, op types and problems kept are fixed
    /// internal caps on the facts kept.
    fn from(l: &crate::model::limits::Limits) -> Self {
        Self {
            max_depth: crate::model::limits::usize_of(l.tf_depth),
            max_string_len: 1024,
            max_op_types: 2048,
            max_problems: 256,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// What a TensorFlow graph file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// `saved_model_schema_version` (SavedModel only).
    pub schema_version: Option<u64>,
    /// Meta graphs in the SavedModel (0 for a frozen graph).
    pub meta_graph_count: u64,
    /// Nodes in graphs and in library functions.
    pub node_count: u64,
    /// Functions in the graph libraries.
    pub function_count: u64,
    /// Op types with counts (at most `Limits::max_op_types` keys).
    pub op_types: BTreeMap<String, u64>,
    /// Whether more op types existed than were recorded.
    pub op_types_truncated: bool,
    /// Nodes whose op is reported as unsafe (exact, even past `Limits::max_problems`).
    pub unsafe_op_count: u64,
}

/// Ops that call Python code registered in the loading process.
pub const PYTHON_OPS: &[&str] = &["PyFunc", "PyFuncStateless", "EagerPyFunc"];
/// Ops that read, list or write files by a path taken from the graph.
pub const FILE_OPS: &[&str] = &["ReadFile", "WriteFile", "MatchingFiles"];
/// Checkpoint ops: normal inside a SavedModel's saver, reported in frozen graphs.
pub const CHECKPOINT_OPS: &[&str] = &[
    "Save",
    "SaveV2",
    "SaveSlices",
    "Restore",
    "RestoreV2",
    "RestoreSlice",
];

/// Sniffs a `SavedModel`: field 1 (schema version, varint) then field 2 (meta graph).
pub fn is_saved_model(head: &[u8]) -> bool {
    matches!(head, [0x08, 0x01, 0x12, ..])
}

enum Frame {
    SavedModel,
    MetaGraph,
    Graph,
    Library,
    Function {
        name: String,
    },
    Signature {
        name: String,
    },
    Node {
        name: String,
        op: String,
        offset: u64,
    },
}

/// Walks a TensorFlow graph file from offset 0 of `reader` (`size` bytes), to its end.
pub fn inspect(
    reader: &mut dyn BufRead,
    size: u64,
    kind: GraphFile,
    limits: &Limits,
) -> (Facts, Vec<Problem>) {
    inspect_wire(
        WireReader::new(reader, size, limits.max_depth),
        kind,
        limits,
    )
}

/// [`inspect`] over a source that jumps over what the walk skips (constant tensors, other
/// payloads), for range reads of a remote file: the same facts and problems, the skipped bytes
/// never fetched.
pub fn inspect_jumping(
    reader: &mut dyn Jump,
    size: u64,
    kind: GraphFile,
    limits: &Limits,
) -> (Facts, Vec<Problem>) {
    inspect_wire(
        WireReader::jumping(reader, size, limits.max_depth),
        kind,
        limits,
    )
}

fn inspect_wire(mut r: WireReader<'_>, kind: GraphFile, limits: &Limits) -> (Facts, Vec<Problem>) {
    let mut facts = Facts::default();
    let mut problems = Vec::new();
    if let Err(err) = walk(&mut r, kind, limits, &mut facts, &mut problems) {
        problems.push(err.problem("tensorflow protobuf", "tf"));
    }
    if facts.unsafe_op_count > limits.max_problems as u64 {
        problems.push(Problem::new(
            ProblemKind::LimitExceeded,
            "too-many-unsafe-ops",
            format!(
                "{} unsafe ops found; only the first {} are listed",
                facts.unsafe_op_count, limits.max_problems
            ),
            None,
        ));
    }
    (facts, problems)
}

fn walk(
    r: &mut WireReader<'_>,
    kind: GraphFile,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) -> Result<(), WireError> {
    let max = limits.max_string_len;
    let root = match kind {
        GraphFile::SavedModel => Frame::SavedModel,
        GraphFile::FrozenGraph => Frame::Graph,
        GraphFile::MetaGraph => {
            facts.meta_graph_count = 1;
            Frame::MetaGraph
        }
    };
    let mut frames = vec![root];
    loop {
        let Some((field, wire)) = r.next_field()? else {
            let Some(done) = frames.pop() else {
                return Ok(());
            };
            match done {
                Frame::Node { name, op, offset } => {
                    let function = frames.iter().rev().find_map(|f| match f {
                        Frame::Function { name } => Some(name.clone()),
                        _ => None,
                    });
                    note_node(&name, op, offset, function, kind, limits, facts, problems);
                }
                Frame::Signature { name } => {
                    if let Some(Frame::Function { name: function }) = frames.last_mut() {
                        *function = name;
                    }
                }
                _ => {}
            }
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
            (Frame::SavedModel, 1, WireType::Varint) => {
                facts.schema_version = Some(r.read_varint()?);
                None
            }
            (Frame::SavedModel, 2, WireType::Len) => {
                facts.meta_graph_count += 1;
                Some(Frame::MetaGraph)
            }
            (Frame::MetaGraph, 2, WireType::Len) => Some(Frame::Graph),
            (Frame::Graph, 1, WireType::Len) | (Frame::Function { .. }, 3, WireType::Len) => {
                facts.node_count += 1;
                Some(Frame::Node {
                    name: String::new(),
                    op: String::new(),
                    offset: r.position(),
                })
            }
            (Frame::Graph, 2, WireType::Len) => Some(Frame::Library),
            (Frame::Library, 1, WireType::Len) => {
                facts.function_count += 1;
                Some(Frame::Function {
                    name: String::new(),
                })
            }
            (Frame::Function { .. }, 1, WireType::Len) => Some(Frame::Signature {
                name: String::new(),
            }),
            (Frame::Signature { name }, 1, WireType::Len)
            | (Frame::Node { name, .. }, 1, WireType::Len) => {
                *name = r.read_string(max)?.0;
                None
            }
            (Frame::Node { op, .. }, 2, WireType::Len) => {
                *op = r.read_string(max)?.0;
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

#[allow(clippy::too_many_arguments)]
fn note_node(
    name: &str,
    op: String,
    offset: u64,
    function: Option<String>,
    kind: GraphFile,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) {
    let reason = if PYTHON_OPS.contains(&op.as_str()) {
        Some("calls a python function registered in the loading process")
    } else if FILE_OPS.contains(&op.as_str()) {
        Some("reads, lists or writes files by path")
    } else if kind == GraphFile::FrozenGraph && CHECKPOINT_OPS.contains(&op.as_str()) {
        Some("reads or writes a checkpoint in a frozen graph, which has no variables")
    } else {
        None
    };
    if let Some(reason) = reason {
        facts.unsafe_op_count += 1;
        if problems.len() < limits.max_problems {
            let mut problem = Problem::new(
                ProblemKind::Unsafe,
                "unsafe-op",
                format!(
                    "node '{}' uses op '{}', which {reason}",
                    excerpt(name, 200),
                    excerpt(&op, 100)
                ),
                Some(offset),
            )
            .with("op", op.clone())
            .with("node", name.to_owned());
            if let Some(function) = function {
                problem = problem.with("function", function);
            }
            problems.push(problem);
        }
    }
    if let Some(count) = facts.op_types.get_mut(&op) {
        *count += 1;
    } else if facts.op_types.len() < limits.max_op_types {
        facts.op_types.insert(op, 1);
    } else {
        facts.op_types_truncated = true;
    }
}

#[cfg(test)]
mod tests {
    use super::super::protobuf::encode::*;
    use super::*;

    fn run(bytes: &[u8], kind: GraphFile) -> (Facts, Vec<Problem>) {
        let mut cur = std::io::Cursor::new(bytes.to_vec());
        inspect(&mut cur, bytes.len() as u64, kind, &Limits::default())
    }

    fn node(name: &str, op: &str) -> Vec<u8> {
        cat(&[
            field_str(1, name),
            field_str(2, op),
            field_str(3, "input:0"),
        ])
    }

    fn saved_model(graph_nodes: &[Vec<u8>], functions: &[(&str, Vec<Vec<u8>>)]) -> Vec<u8> {
        let mut graph: Vec<u8> = graph_nodes.iter().flat_map(|n| field_bytes(1, n)).collect();
        let mut library = Vec::new();
        for (name, nodes) in functions {
            let mut f = field_bytes(1, &field_str(1, name));
            for n in nodes {
                f.extend(field_bytes(3, n));
            }
            library.extend(field_bytes(1, &f));
        }
        graph.extend(field_bytes(2, &library));
        let meta = cat(&[field_bytes(1, b"\x0a\x05serve"), field_bytes(2, &graph)]);
        cat(&[field_varint(1, 1), field_bytes(2, &meta)])
    }

    #[test]
    fn reports_pyfunc_in_saved_model() {
        let bytes = saved_model(
            &[node("x", "Placeholder"), node("evil", "PyFunc")],
            &[("__inference_f_12", vec![node("inner", "EagerPyFunc")])],
        );
        assert!(is_saved_model(&bytes));
        let (facts, problems) = run(&bytes, GraphFile::SavedModel);
        assert_eq!(facts.schema_version, Some(1));
        assert_eq!(facts.node_count, 3);
        assert_eq!(facts.function_count, 1);
        assert_eq!(problems.len(), 2);
        assert!(matches!(
            &problems[0],
            Problem {
                code: "unsafe-op",
                kind: ProblemKind::Unsafe,
                ..
            }
        ));
        assert_eq!(
            problems[0].evidence.get("op").map(String::as_str),
            Some("PyFunc")
        );
        assert_eq!(
            problems[1].evidence.get("function").map(String::as_str),
            Some("__inference_f_12")
        );
    }

    #[test]
    fn ignores_saver_ops_in_saved_model() {
        let bytes = saved_model(
            &[
                node("save/SaveV2", "SaveV2"),
                node("save/RestoreV2", "RestoreV2"),
            ],
            &[],
        );
        let (facts, problems) = run(&bytes, GraphFile::SavedModel);
        assert!(problems.is_empty());
        assert_eq!(facts.op_types.get("SaveV2"), Some(&1));
    }

    #[test]
    fn reports_file_and_checkpoint_ops_in_frozen_graph() {
        let graph = cat(&[
            field_bytes(1, &node("a", "Const")),
            field_bytes(1, &node("r", "ReadFile")),
            field_bytes(1, &node("s", "SaveV2")),
        ]);
        let (facts, problems) = run(&graph, GraphFile::FrozenGraph);
        assert_eq!(facts.unsafe_op_count, 2);
        let ops: Vec<&str> = problems
            .iter()
            .filter_map(|p| p.evidence.get("op"))
            .map(String::as_str)
            .collect();
        assert_eq!(ops, ["ReadFile", "SaveV2"]);
    }

    #[test]
    fn rejects_truncated_graph() {
        let bytes = saved_model(&[node("x", "PyFunc")], &[]);
        let mut cur = std::io::Cursor::new(bytes[..bytes.len() / 2].to_vec());
        let (_, problems) = inspect(
            &mut cur,
            bytes.len() as u64,
            GraphFile::SavedModel,
            &Limits::default(),
        );
        assert!(matches!(
            problems.last(),
            Some(Problem {
                code: "truncated",
                ..
            })
        ));
    }

    #[test]
    fn rejects_oversized_length() {
        let mut bytes = vec![0x08, 0x01, 0x12];
        varint(&mut bytes, u64::from(u32::MAX));
        let (_, problems) = run(&bytes, GraphFile::SavedModel);
        assert!(matches!(
            problems.as_slice(),
            [Problem {
                code: "length-exceeds-parent",
                ..
            }]
        ));
    }

    #[test]
    fn bounds_unsafe_op_reports() {
        let nodes: Vec<Vec<u8>> = (0..300).map(|i| node(&format!("n{i}"), "PyFunc")).collect();
        let bytes = saved_model(&nodes, &[]);
        let (facts, problems) = run(&bytes, GraphFile::SavedModel);
        assert_eq!(facts.unsafe_op_count, 300);
        assert_eq!(problems.len(), 257);
        assert!(matches!(
            problems.last(),
            Some(Problem {
                code: "too-many-unsafe-ops",
                ..
            })
        ));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = run(&bytes, GraphFile::SavedModel);
            let _ = run(&bytes, GraphFile::FrozenGraph);
        }

        #[test]
        fn never_panics_on_mutated_saved_model(pos in 0usize..200, byte in proptest::prelude::any::<u8>()) {
            let mut bytes = saved_model(&[node("x", "PyFunc")], &[("f", vec![node("y", "ReadFile")])]);
            let len = bytes.len();
            bytes[pos % len] = byte;
            let _ = run(&bytes, GraphFile::SavedModel);
        }
    }
}
