//! Core ML (issue 40): the `.mlmodel` protobuf model spec, the `.mlpackage` folder's
//! `Manifest.json`, and its MIL weight blob file (`Data/com.apple.CoreML/weights/weight.bin`).
//!
//! A Core ML spec is a `Model` message (coremltools `mlmodel/format/Model.proto`): a spec version
//! (field 1), a description (2), and one model type (a `oneof` from field 200 on). Core ML runs
//! what the spec names with Apple's own implementations, except in two places where the app
//! must supply code: a neural-network layer of type `custom` (`CustomLayerParams.className`, a
//! class conforming to `MLCustomLayer`) and a `customModel` (`CustomModel.className`, a class
//! conforming to `MLCustomModel`). Both are reported as FMT008 with the class named: not code in
//! the file, but code outside the format that must be trusted. Pipelines nest whole models, and
//! `branch`/`loop` layers nest networks; the walk keeps its own frame stack over the bounded wire
//! reader (depth `coreml_depth`), never recursing, and skips weights without reading them. An
//! ML program (`mlProgram`, what an `.mlpackage` holds; `MIL.proto`) is walked the same way:
//! functions, their block specializations, operations and the blocks operations nest, each
//! operation counted by its MIL type (`op_types`).
//!
//! An `.mlpackage` is a folder: `Manifest.json` lists its items (`itemInfoEntries`, each a
//! `path` relative to the package's `Data/`), and the root model is the spec in
//! `Data/com.apple.CoreML/model.mlmodel`. The manifest is read here (bounded by `json_bytes`);
//! whether its paths stay inside the package and exist is checked against the crawled tree
//! ([`check_manifest`], from `repository`). The weight file is MIL blob storage
//! (`mlmodel/src/MILBlob/Blob/StorageFormat.hpp`): a 64-byte header (blob count, version 2),
//! then per blob a 64-byte metadata record (sentinel `0xDEADBEEF`, data type, size, offset) and
//! its data, 64-byte aligned; each record is checked and each blob must end inside the file.

use std::collections::BTreeMap;
use std::io::BufRead;

use serde::Serialize;
use serde_json::Value;

use super::problem::{Problem, ProblemKind, excerpt};
use super::protobuf::{WireError, WireReader, WireType};

/// Bounds for the Core ML walk.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Deepest message nesting accepted (`coreml_depth`).
    pub max_depth: usize,
    /// Longest layer or class name kept.
    pub max_string_len: usize,
    /// Most distinct layer and model types recorded.
    pub max_types: usize,
    /// Most custom layers and models listed (the counts stay exact).
    pub max_listed: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    fn from(l: &crate::model::limits::Limits) -> Self {
        Self {
            max_depth: crate::model::limits::usize_of(l.coreml_depth),
            max_string_len: 1024,
            max_types: 2048,
            max_listed: 256,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

/// A custom layer of a neural network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CustomLayer {
    /// The layer's name.
    pub layer: String,
    /// `CustomLayerParams.className`.
    pub class: String,
}

/// What a Core ML model spec holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Facts {
    /// `specificationVersion` of the top-level model.
    pub spec_version: Option<u64>,
    /// The top-level model's type (`neuralNetwork`, `pipeline`, `mlProgram`, ...).
    pub model_type: Option<String>,
    /// Models in the file (pipelines nest them), by type.
    pub model_types: BTreeMap<String, u64>,
    /// Neural-network layers, nested networks included.
    pub layer_count: u64,
    /// Layers by type.
    pub layer_types: BTreeMap<String, u64>,
    /// Whether more types existed than were recorded.
    pub types_truncated: bool,
    /// Custom layers (at most `Limits::max_listed`).
    pub custom_layers: Vec<CustomLayer>,
    /// Custom models' class names (at most `Limits::max_listed`).
    pub custom_models: Vec<String>,
    /// ML program (`mlProgram`) operations, in every function, block specialization and nested
    /// block (absent for other model types).
    #[serde(skip_serializing_if = "is_zero")]
    pub op_count: u64,
    /// ML program operations by MIL op type (`const`, `linear`, `relu`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub op_types: BTreeMap<String, u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Model types by `Model` field number (`oneof Type`).
const MODEL_TYPES: &[(u32, &str)] = &[
    (200, "pipelineClassifier"),
    (201, "pipelineRegressor"),
    (202, "pipeline"),
    (300, "glmRegressor"),
    (301, "supportVectorRegressor"),
    (302, "treeEnsembleRegressor"),
    (303, "neuralNetworkRegressor"),
    (304, "bayesianProbitRegressor"),
    (400, "glmClassifier"),
    (401, "supportVectorClassifier"),
    (402, "treeEnsembleClassifier"),
    (403, "neuralNetworkClassifier"),
    (404, "kNearestNeighborsClassifier"),
    (500, "neuralNetwork"),
    (501, "itemSimilarityRecommender"),
    (502, "mlProgram"),
    (555, "customModel"),
    (556, "linkedModel"),
    (560, "classConfidenceThresholding"),
    (600, "oneHotEncoder"),
    (601, "imputer"),
    (602, "featureVectorizer"),
    (603, "dictVectorizer"),
    (604, "scaler"),
    (606, "categoricalMapping"),
    (607, "normalizer"),
    (609, "arrayFeatureExtractor"),
    (610, "nonMaximumSuppression"),
    (900, "identity"),
    (2000, "textClassifier"),
    (2001, "wordTagger"),
    (2002, "visionFeaturePrint"),
    (2003, "soundAnalysisPreprocessing"),
    (2004, "gazetteer"),
    (2005, "wordEmbedding"),
    (2006, "audioFeaturePrint"),
    (3000, "serializedModel"),
];

/// Neural-network layer types by `NeuralNetworkLayer` field number (`oneof layer`).
const LAYER_TYPES: &[(u32, &str)] = &[
    (100, "convolution"),
    (120, "pooling"),
    (130, "activation"),
    (140, "innerProduct"),
    (150, "embedding"),
    (160, "batchnorm"),
    (165, "mvn"),
    (170, "l2normalize"),
    (175, "softmax"),
    (180, "lrn"),
    (190, "crop"),
    (200, "padding"),
    (210, "upsample"),
    (211, "resizeBilinear"),
    (212, "cropResize"),
    (220, "unary"),
    (230, "add"),
    (231, "multiply"),
    (240, "average"),
    (245, "scale"),
    (250, "bias"),
    (260, "max"),
    (261, "min"),
    (270, "dot"),
    (280, "reduce"),
    (290, "loadConstant"),
    (300, "reshape"),
    (301, "flatten"),
    (310, "permute"),
    (320, "concat"),
    (330, "split"),
    (340, "sequenceRepeat"),
    (345, "reorganizeData"),
    (350, "slice"),
    (400, "simpleRecurrent"),
    (410, "gru"),
    (420, "uniDirectionalLSTM"),
    (430, "biDirectionalLSTM"),
    (500, "custom"),
    (600, "copy"),
    (605, "branch"),
    (615, "loop"),
    (620, "loopBreak"),
    (625, "loopContinue"),
    (635, "rangeStatic"),
    (640, "rangeDynamic"),
    (660, "clip"),
    (665, "ceil"),
    (670, "floor"),
    (680, "sign"),
    (685, "round"),
    (700, "exp2"),
    (710, "sin"),
    (715, "cos"),
    (720, "tan"),
    (730, "asin"),
    (735, "acos"),
    (740, "atan"),
    (750, "sinh"),
    (755, "cosh"),
    (760, "tanh"),
    (770, "asinh"),
    (775, "acosh"),
    (780, "atanh"),
    (790, "erf"),
    (795, "gelu"),
    (815, "equal"),
    (820, "notEqual"),
    (825, "lessThan"),
    (827, "lessEqual"),
    (830, "greaterThan"),
    (832, "greaterEqual"),
    (840, "logicalOr"),
    (845, "logicalXor"),
    (850, "logicalNot"),
    (855, "logicalAnd"),
    (865, "modBroadcastable"),
    (870, "minBroadcastable"),
    (875, "maxBroadcastable"),
    (880, "addBroadcastable"),
    (885, "powBroadcastable"),
    (890, "divideBroadcastable"),
    (895, "floorDivBroadcastable"),
    (900, "multiplyBroadcastable"),
    (905, "subtractBroadcastable"),
    (920, "tile"),
    (925, "stack"),
    (930, "gather"),
    (935, "scatter"),
    (940, "gatherND"),
    (945, "scatterND"),
    (950, "softmaxND"),
    (952, "gatherAlongAxis"),
    (954, "scatterAlongAxis"),
    (960, "reverse"),
    (965, "reverseSeq"),
    (975, "splitND"),
    (980, "concatND"),
    (985, "transpose"),
    (995, "sliceStatic"),
    (1000, "sliceDynamic"),
    (1005, "slidingWindows"),
    (1015, "topK"),
    (1020, "argMin"),
    (1025, "argMax"),
    (1040, "embeddingND"),
    (1045, "batchedMatmul"),
    (1065, "getShape"),
    (1070, "loadConstantND"),
    (1080, "fillLike"),
    (1085, "fillStatic"),
    (1090, "fillDynamic"),
    (1100, "broadcastToLike"),
    (1105, "broadcastToStatic"),
    (1110, "broadcastToDynamic"),
    (1120, "squeeze"),
    (1125, "expandDims"),
    (1130, "flattenTo2D"),
    (1135, "reshapeLike"),
    (1140, "reshapeStatic"),
    (1145, "reshapeDynamic"),
    (1150, "rankPreservingReshape"),
    (1155, "constantPad"),
    (1170, "randomNormalLike"),
    (1175, "randomNormalStatic"),
    (1180, "randomNormalDynamic"),
    (1190, "randomUniformLike"),
    (1195, "randomUniformStatic"),
    (1200, "randomUniformDynamic"),
    (1210, "randomBernoulliLike"),
    (1215, "randomBernoulliStatic"),
    (1220, "randomBernoulliDynamic"),
    (1230, "categoricalDistribution"),
    (1250, "reduceL1"),
    (1255, "reduceL2"),
    (1260, "reduceMax"),
    (1265, "reduceMin"),
    (1270, "reduceSum"),
    (1275, "reduceProd"),
    (1280, "reduceMean"),
    (1285, "reduceLogSum"),
    (1290, "reduceSumSquare"),
    (1295, "reduceLogSumExp"),
    (1313, "whereNonZero"),
    (1315, "matrixBandPart"),
    (1320, "lowerTriangular"),
    (1325, "upperTriangular"),
    (1330, "whereBroadcastable"),
    (1350, "layerNormalization"),
    (1400, "NonMaximumSuppression"),
    (1450, "oneHot"),
    (1455, "cumSum"),
    (1460, "clampedReLU"),
    (1461, "argSort"),
    (1465, "pooling3d"),
    (1466, "globalPooling3d"),
    (1470, "sliceBySize"),
    (1471, "convolution3d"),
];

/// Whether `head` (the first bytes of a file) reads as a Core ML `Model` whatever its name
/// (issue 40). Its top-level fields come in field order: `specificationVersion` (1, a varint
/// of at most 100), `description` (2, a message), `isUpdatable` (10, a varint), then the model
/// of `oneof Type` (`MODEL_TYPES`, a message), a field number no ONNX `ModelProto` (1 to 25)
/// or TensorFlow protobuf has. Decided only when that model field is reached inside `head`;
/// any other field or wire type, or a length running past `head` first, decides against.
pub fn is_spec(head: &[u8]) -> bool {
    use super::protobuf::varint_at as varint;
    let mut at = 0;
    let mut first = true;
    while at < head.len() {
        let Some(tag) = varint(head, &mut at) else {
            return false;
        };
        let (field, wire) = (tag >> 3, tag & 7);
        if first && (field, wire) != (1, 0) {
            return false;
        }
        first = false;
        match (field, wire) {
            (1, 0) => {
                if !varint(head, &mut at).is_some_and(|v| (1..=100).contains(&v)) {
                    return false;
                }
            }
            (10, 0) => {
                if varint(head, &mut at).is_none() {
                    return false;
                }
            }
            (2, 2) => {
                let Some(len) = varint(head, &mut at).and_then(|l| usize::try_from(l).ok()) else {
                    return false;
                };
                match at.checked_add(len).filter(|&end| end <= head.len()) {
                    Some(end) => at = end,
                    None => return false,
                }
            }
            (f, 2) => return u32::try_from(f).ok().and_then(model_type).is_some(),
            _ => return false,
        }
    }
    false
}

/// The name of a model type field, if it is one.
fn model_type(field: u32) -> Option<&'static str> {
    MODEL_TYPES
        .iter()
        .find(|(f, _)| *f == field)
        .map(|(_, n)| *n)
}

/// The name of a layer type field, if it is one.
fn layer_type(field: u32) -> Option<&'static str> {
    LAYER_TYPES
        .iter()
        .find(|(f, _)| *f == field)
        .map(|(_, n)| *n)
}

enum Frame {
    Model {
        top: bool,
    },
    /// `PipelineClassifier` / `PipelineRegressor`: field 1 is the pipeline.
    PipelineWrapper,
    /// `Pipeline`: field 1 repeats models.
    Pipeline,
    /// `NeuralNetwork` (and its classifier/regressor forms): field 1 repeats layers.
    Network,
    Layer {
        name: String,
        offset: u64,
    },
    CustomLayer {
        class: String,
        offset: u64,
    },
    /// `BranchLayerParams` (networks 1, 2) or `LoopLayerParams` (networks 3, 4).
    Nested {
        fields: [u32; 2],
    },
    CustomModel {
        class: String,
        offset: u64,
    },
    /// MIL `Program` (`MIL.proto`): field 2 maps function names to functions.
    Program,
    /// A protobuf map entry (key 1, value 2) whose value is a MIL `Function` or `Block`.
    Entry {
        function: bool,
    },
    /// MIL `Function`: field 3 maps specialization names (`CoreML5`) to blocks.
    Function,
    /// MIL `Block`: field 3 repeats operations.
    Block,
    /// MIL `Operation`: its type (1) and the blocks it nests (4: `cond`, `while_loop` bodies).
    Operation,
}

/// Walks a Core ML model spec from offset 0 of `reader` (`size` bytes), to its end.
pub fn inspect_spec(reader: &mut dyn BufRead, size: u64, limits: &Limits) -> (Facts, Vec<Problem>) {
    let mut r = WireReader::new(reader, size, limits.max_depth);
    let mut facts = Facts::default();
    let mut problems = Vec::new();
    if let Err(err) = walk(&mut r, limits, &mut facts, &mut problems) {
        problems.push(err.problem("core ml model spec", "coreml"));
    }
    (facts, problems)
}

fn count(map: &mut BTreeMap<String, u64>, key: &str, limits: &Limits, truncated: &mut bool) {
    if let Some(n) = map.get_mut(key) {
        *n += 1;
    } else if map.len() < limits.max_types {
        map.insert(key.to_string(), 1);
    } else {
        *truncated = true;
    }
}

fn walk(
    r: &mut WireReader<'_>,
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) -> Result<(), WireError> {
    let mut frames = vec![Frame::Model { top: true }];
    loop {
        let Some((field, wire)) = r.next_field()? else {
            let Some(done) = frames.pop() else {
                return Ok(());
            };
            record_custom(done, &frames, limits, facts, problems);
            if frames.is_empty() {
                return Ok(());
            }
            r.leave()?;
            continue;
        };
        let Some(top) = frames.last_mut() else {
            return Ok(());
        };
        let child = child_frame(top, field, wire, r, limits, facts)?;
        if let Some(child) = child {
            r.enter_message()?;
            frames.push(child);
        }
    }
}

/// A custom layer or custom model frame, once fully read, names an app class Core ML runs:
/// lists it (with the enclosing layer's name) and raises its finding.
fn record_custom(
    done: Frame,
    frames: &[Frame],
    limits: &Limits,
    facts: &mut Facts,
    problems: &mut Vec<Problem>,
) {
    match done {
        Frame::CustomLayer { class, offset } => {
            let layer = frames.iter().rev().find_map(|f| match f {
                Frame::Layer { name, .. } => Some(name.clone()),
                _ => None,
            });
            let layer = layer.unwrap_or_default();
            if facts.custom_layers.len() < limits.max_listed {
                facts.custom_layers.push(CustomLayer {
                    layer: layer.clone(),
                    class: class.clone(),
                });
            }
            if problems.len() < limits.max_listed {
                problems.push(
                    Problem::new(
                        ProblemKind::CustomOp,
                        "custom-layer",
                        format!(
                            "layer '{}' is a custom layer: Core ML runs the app's class '{}' (MLCustomLayer) for it",
                            excerpt(&layer, 200),
                            excerpt(&class, 200)
                        ),
                        Some(offset),
                    )
                    .with("layer", excerpt(&layer, 200))
                    .with("class", excerpt(&class, 200)),
                );
            }
        }
        Frame::CustomModel { class, offset } => {
            if facts.custom_models.len() < limits.max_listed {
                facts.custom_models.push(class.clone());
            }
            if problems.len() < limits.max_listed {
                problems.push(
                    Problem::new(
                        ProblemKind::CustomOp,
                        "custom-model",
                        format!(
                            "the model is a custom model: Core ML runs the app's class '{}' (MLCustomModel) for it",
                            excerpt(&class, 200)
                        ),
                        Some(offset),
                    )
                    .with("class", excerpt(&class, 200)),
                );
            }
        }
        _ => {}
    }
}

/// Handles one field of the innermost message: records what it says and returns the frame
/// to enter when the field is a sub-message worth walking, skipping everything else.
fn child_frame(
    top: &mut Frame,
    field: u32,
    wire: WireType,
    r: &mut WireReader<'_>,
    limits: &Limits,
    facts: &mut Facts,
) -> Result<Option<Frame>, WireError> {
    let max = limits.max_string_len;
    let child = match (top, field, wire) {
        (Frame::Model { top: true }, 1, WireType::Varint) => {
            facts.spec_version = Some(r.read_varint()?);
            None
        }
        (Frame::Model { top }, f, WireType::Len) if f >= 200 => {
            let name = model_type(f).map_or_else(|| format!("model-{f}"), str::to_string);
            if *top {
                facts.model_type = Some(name.clone());
            }
            count(
                &mut facts.model_types,
                &name,
                limits,
                &mut facts.types_truncated,
            );
            match f {
                200 | 201 => Some(Frame::PipelineWrapper),
                202 => Some(Frame::Pipeline),
                303 | 403 | 500 => Some(Frame::Network),
                555 => Some(Frame::CustomModel {
                    class: String::new(),
                    offset: r.position(),
                }),
                502 => Some(Frame::Program),
                _ => {
                    r.skip(wire)?;
                    None
                }
            }
        }
        (Frame::PipelineWrapper, 1, WireType::Len) => Some(Frame::Pipeline),
        (Frame::Pipeline, 1, WireType::Len) => Some(Frame::Model { top: false }),
        (Frame::Network, 1, WireType::Len) => {
            facts.layer_count += 1;
            Some(Frame::Layer {
                name: String::new(),
                offset: r.position(),
            })
        }
        (Frame::Layer { name, .. }, 1, WireType::Len) => {
            *name = r.read_string(max)?.0;
            None
        }
        (Frame::Layer { offset, .. }, f, WireType::Len) if f >= 100 => {
            let offset = *offset;
            let name = layer_type(f).map_or_else(|| format!("layer-{f}"), str::to_string);
            count(
                &mut facts.layer_types,
                &name,
                limits,
                &mut facts.types_truncated,
            );
            match f {
                500 => Some(Frame::CustomLayer {
                    class: String::new(),
                    offset,
                }),
                605 => Some(Frame::Nested { fields: [1, 2] }),
                615 => Some(Frame::Nested { fields: [3, 4] }),
                _ => {
                    r.skip(wire)?;
                    None
                }
            }
        }
        (Frame::Nested { fields }, f, WireType::Len) if fields.contains(&f) => Some(Frame::Network),
        // Issue 40: an ML program's operations, listed like a network's layers (no MIL op runs
        // app code: custom layers exist only in neural networks).
        (Frame::Program, 2, WireType::Len) => Some(Frame::Entry { function: true }),
        (Frame::Entry { function }, 2, WireType::Len) => Some(if *function {
            Frame::Function
        } else {
            Frame::Block
        }),
        (Frame::Function, 3, WireType::Len) => Some(Frame::Entry { function: false }),
        (Frame::Block, 3, WireType::Len) => {
            facts.op_count += 1;
            Some(Frame::Operation)
        }
        (Frame::Operation, 1, WireType::Len) => {
            let op = r.read_string(max)?.0;
            count(&mut facts.op_types, &op, limits, &mut facts.types_truncated);
            None
        }
        (Frame::Operation, 4, WireType::Len) => Some(Frame::Block),
        (Frame::CustomLayer { class, .. }, 10, WireType::Len)
        | (Frame::CustomModel { class, .. }, 10, WireType::Len) => {
            *class = r.read_string(max)?.0;
            None
        }
        _ => {
            r.skip(wire)?;
            None
        }
    };
    Ok(child)
}

/// The MIL blob storage sentinel at the start of each blob's metadata.
const BLOB_SENTINEL: u32 = 0xDEAD_BEEF;

/// Whether `head` starts like a MIL blob storage file (see [`crate::classify::is_coreml_weights`]).
pub fn is_weight_blob(head: &[u8]) -> bool {
    crate::classify::is_coreml_weights(head)
}

/// What a MIL weight blob file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WeightFacts {
    /// Storage format version (2).
    pub version: u32,
    /// Blobs declared in the header.
    pub blob_count: u64,
    /// Blobs read.
    pub blobs_read: u64,
    /// Bytes of blob data.
    pub data_bytes: u64,
    /// Blobs per MIL data type code.
    pub data_types: BTreeMap<String, u64>,
}

/// Walks a MIL blob storage file (`weight.bin`) front to back: each metadata record where the
/// writer puts it, its sentinel, and its data inside the file.
pub fn inspect_weights(reader: &mut dyn BufRead, size: u64) -> (WeightFacts, Vec<Problem>) {
    let mut facts = WeightFacts::default();
    let mut problems = Vec::new();
    let mut pos = 0u64;
    if let Err(p) = walk_weights(reader, size, &mut pos, &mut facts) {
        problems.push(p.with("parser", "coreml-weights"));
    }
    (facts, problems)
}

fn read_exact(
    reader: &mut dyn BufRead,
    pos: &mut u64,
    size: u64,
    buf: &mut [u8],
) -> Result<(), Problem> {
    let truncated = |at: u64| {
        Problem::new(
            ProblemKind::Malformed,
            "truncated",
            format!("core ml weights: the file ends at {size} inside a record at offset {at}"),
            Some(at),
        )
    };
    if pos.saturating_add(buf.len() as u64) > size {
        return Err(truncated(*pos));
    }
    reader.read_exact(buf).map_err(|_| truncated(*pos))?;
    *pos += buf.len() as u64;
    Ok(())
}

fn skip_to(reader: &mut dyn BufRead, pos: &mut u64, target: u64) -> Result<(), Problem> {
    while *pos < target {
        let available = reader.fill_buf().map(<[u8]>::len).unwrap_or(0);
        if available == 0 {
            return Err(Problem::new(
                ProblemKind::Malformed,
                "truncated",
                format!("core ml weights: the file ends at {pos} before offset {target}"),
                Some(*pos),
            ));
        }
        let step = usize::try_from(target - *pos).map_or(available, |n| n.min(available));
        reader.consume(step);
        *pos += step as u64;
    }
    Ok(())
}

fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    u64::from_le_bytes(a)
}

fn walk_weights(
    reader: &mut dyn BufRead,
    size: u64,
    pos: &mut u64,
    facts: &mut WeightFacts,
) -> Result<(), Problem> {
    let mut header = [0u8; 64];
    read_exact(reader, pos, size, &mut header)?;
    let count = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    facts.version = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    facts.blob_count = u64::from(count);
    if facts.version != 2 {
        return Err(Problem::new(
            ProblemKind::Malformed,
            "unknown-version",
            format!(
                "core ml weights: storage version {} (Core ML reads version 2)",
                facts.version
            ),
            Some(4),
        ));
    }
    // Each blob takes a 64-byte record at least: a count the file cannot hold is crafted.
    if u64::from(count).saturating_mul(64) > size.saturating_sub(64) {
        return Err(Problem::new(
            ProblemKind::Exploit,
            "count-past-eof",
            format!(
                "core ml weights: the header declares {count} blobs, more than the {size}-byte file can hold"
            ),
            Some(0),
        ));
    }
    for i in 0..count {
        let record = pos.div_ceil(64) * 64;
        skip_to(reader, pos, record)?;
        let mut meta = [0u8; 64];
        read_exact(reader, pos, size, &mut meta)?;
        let sentinel = u32::from_le_bytes([meta[0], meta[1], meta[2], meta[3]]);
        if sentinel != BLOB_SENTINEL {
            return Err(Problem::new(
                ProblemKind::Malformed,
                "bad-sentinel",
                format!(
                    "core ml weights: blob {i}'s metadata at offset {record} has sentinel {sentinel:#x}, not 0xdeadbeef"
                ),
                Some(record),
            ));
        }
        let data_type = u32::from_le_bytes([meta[4], meta[5], meta[6], meta[7]]);
        let len = le_u64(&meta[8..16]);
        let offset = le_u64(&meta[16..24]);
        let end = offset.checked_add(len);
        if end.is_none_or(|e| e > size) {
            return Err(Problem::new(
                ProblemKind::Exploit,
                "blob-past-eof",
                format!(
                    "core ml weights: blob {i} declares {len} bytes at offset {offset}, past the end of the {size}-byte file"
                ),
                Some(record),
            ));
        }
        if offset != record + 64 {
            return Err(Problem::new(
                ProblemKind::Malformed,
                "bad-offset",
                format!(
                    "core ml weights: blob {i}'s data is declared at offset {offset}, not right after its metadata at {record}"
                ),
                Some(record),
            ));
        }
        skip_to(reader, pos, offset.saturating_add(len))?;
        facts.blobs_read += 1;
        facts.data_bytes = facts.data_bytes.saturating_add(len);
        if facts.data_types.len() < 64 || facts.data_types.contains_key(&data_type.to_string()) {
            *facts.data_types.entry(data_type.to_string()).or_insert(0) += 1;
        }
    }
    Ok(())
}

/// One item of an `.mlpackage` manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ManifestItem {
    /// The item's identifier (the key in `itemInfoEntries`).
    pub id: String,
    /// Its path, relative to the package's `Data/`.
    pub path: String,
    /// Its `name`.
    pub name: String,
}

/// An `.mlpackage` `Manifest.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Manifest {
    /// `fileFormatVersion`.
    pub version: Option<String>,
    /// `rootModelIdentifier`.
    pub root: Option<String>,
    /// Items, in the manifest's order (at most 1000).
    pub items: Vec<ManifestItem>,
}

/// Whether `rel` is the manifest of an `.mlpackage` folder.
pub fn is_manifest(rel: &str) -> bool {
    rel.rsplit_once('/').is_some_and(|(dir, name)| {
        name == "Manifest.json"
            && dir
                .rsplit('/')
                .next()
                .is_some_and(|d| d.to_ascii_lowercase().ends_with(".mlpackage"))
    })
}

/// Parses a manifest's JSON (already read, bounded by the caller).
pub fn parse_manifest(bytes: &[u8]) -> Result<Manifest, Problem> {
    let bad = |msg: String| Problem::new(ProblemKind::Malformed, "bad-manifest", msg, None);
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|e| bad(format!("core ml package manifest is not JSON: {e}")))?;
    let Some(obj) = v.as_object() else {
        return Err(bad("core ml package manifest is not a JSON object".into()));
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(|s| excerpt(s, 1024));
    let mut m = Manifest {
        version: text(obj.get("fileFormatVersion")),
        root: text(obj.get("rootModelIdentifier")),
        items: Vec::new(),
    };
    let Some(entries) = obj.get("itemInfoEntries").and_then(Value::as_object) else {
        return Err(bad(
            "core ml package manifest has no itemInfoEntries object".into(),
        ));
    };
    for (id, item) in entries.iter().take(1000) {
        let Some(path) = item.get("path").and_then(Value::as_str) else {
            return Err(bad(format!(
                "core ml package manifest item '{}' has no path",
                excerpt(id, 200)
            )));
        };
        m.items.push(ManifestItem {
            id: excerpt(id, 1024),
            path: path.to_string(),
            name: text(item.get("name")).unwrap_or_default(),
        });
    }
    Ok(m)
}

/// Checks a manifest against the tree: every item's path is relative, stays inside the
/// package's `Data/` (`data_dir`, `/`-separated, relative to the scan root) and names a file or
/// a folder holding files (`exists`); the root model identifier names an item.
pub fn check_manifest(m: &Manifest, data_dir: &str, exists: &dyn Fn(&str) -> bool) -> Vec<Problem> {
    let mut out = Vec::new();
    for item in &m.items {
        let p = &item.path;
        let mut parts: Vec<&str> = Vec::new();
        let mut escapes = p.starts_with('/') || p.contains('\\') || p.contains(':') || p.is_empty();
        for part in p.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        escapes = true;
                    }
                }
                other => parts.push(other),
            }
        }
        if escapes {
            out.push(
                Problem::new(
                    ProblemKind::Exploit,
                    "path-escape",
                    format!(
                        "core ml package item '{}' has path '{}', which is absolute or leaves the package",
                        excerpt(&item.id, 200),
                        excerpt(p, 200)
                    ),
                    None,
                )
                .with("item", excerpt(&item.id, 200))
                .with("location", excerpt(p, 200)),
            );
            continue;
        }
        let full = format!("{data_dir}/{}", parts.join("/"));
        if !exists(&full) {
            out.push(
                Problem::new(
                    ProblemKind::Malformed,
                    "item-missing",
                    format!(
                        "core ml package item '{}' names '{}', which is not in the package",
                        excerpt(&item.id, 200),
                        excerpt(p, 200)
                    ),
                    None,
                )
                .with("item", excerpt(&item.id, 200))
                .with("location", excerpt(p, 200)),
            );
        }
    }
    if let Some(root) = &m.root
        && !m.items.iter().any(|i| &i.id == root)
    {
        out.push(
            Problem::new(
                ProblemKind::Malformed,
                "root-missing",
                format!(
                    "core ml package manifest's root model '{}' is not one of its items",
                    excerpt(root, 200)
                ),
                None,
            )
            .with("item", excerpt(root, 200)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::proto_fixtures as build;

    fn spec(bytes: &[u8]) -> (Facts, Vec<Problem>) {
        let mut r: &[u8] = bytes;
        inspect_spec(&mut r, bytes.len() as u64, &Limits::default())
    }

    #[test]
    fn a_spec_is_recognised_by_its_model_field_and_onnx_is_not() {
        use crate::inspect::protobuf::encode::{cat, field_bytes, field_str, field_varint};
        let nn = build::coreml_neural_network(&[build::coreml_layer("conv", 100)]);
        assert!(is_spec(&nn));
        assert!(is_spec(&build::coreml_custom_model("M")));
        // Cut before the model field: undecided, so not Core ML.
        assert!(!is_spec(&nn[..4]));
        // An ONNX ModelProto starts the same way: ir_version, producer_name, then a graph.
        let onnx = cat(&[
            field_varint(1, 8),
            field_str(2, "pytorch"),
            field_bytes(7, b""),
        ]);
        assert!(!is_spec(&onnx));
        // A version past any Core ML release; a first field that is not the version.
        assert!(!is_spec(&cat(&[
            field_varint(1, 1000),
            field_bytes(500, b"")
        ])));
        assert!(!is_spec(&cat(&[
            field_bytes(2, b""),
            field_bytes(500, b"")
        ])));
        assert!(is_spec(&cat(&[field_varint(1, 7), field_bytes(500, b"")])));
    }

    #[test]
    fn reads_a_neural_network_and_its_layer_types() {
        let bytes = build::coreml_neural_network(&[
            build::coreml_layer("conv", 100),
            build::coreml_layer("act", 130),
            build::coreml_layer("fc", 140),
        ]);
        let (f, p) = spec(&bytes);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(f.spec_version, Some(4));
        assert_eq!(f.model_type.as_deref(), Some("neuralNetwork"));
        assert_eq!(f.layer_count, 3);
        assert_eq!(f.layer_types["convolution"], 1);
        assert_eq!(f.layer_types["activation"], 1);
        assert_eq!(f.layer_types["innerProduct"], 1);
    }

    #[test]
    fn issue_40_an_ml_program_lists_its_operations() {
        use crate::inspect::protobuf::encode::{cat, field_bytes, field_str, field_varint};
        // The shape coremltools 8.1 writes for an `.mlpackage` (scripts/format-samples.sh):
        // Model { 1: 6, 2: description, 502: Program { 1: 1, 2: {"main": Function { 1: input,
        // 2: "CoreML5", 3: {"CoreML5": Block { 2: outputs, 3: operations }} }} } }; here one
        // operation also nests a block (as `cond` and `while_loop` do).
        let op = |ty: &str, nested: &[Vec<u8>]| {
            let mut parts = vec![
                field_str(1, ty),
                field_bytes(2, &cat(&[field_str(1, "x"), field_bytes(2, b"")])),
            ];
            parts.extend(nested.iter().map(|b| field_bytes(4, b)));
            field_bytes(3, &cat(&parts))
        };
        let inner = cat(&[op("relu", &[])]);
        let block = cat(&[
            field_str(2, "out"),
            op("const", &[]),
            op("const", &[]),
            op("linear", &[inner]),
        ]);
        let function = cat(&[
            field_bytes(1, &field_str(1, "x")),
            field_str(2, "CoreML5"),
            field_bytes(3, &cat(&[field_str(1, "CoreML5"), field_bytes(2, &block)])),
        ]);
        let program = cat(&[
            field_varint(1, 1),
            field_bytes(2, &cat(&[field_str(1, "main"), field_bytes(2, &function)])),
            field_str(3, "doc"),
        ]);
        let bytes = cat(&[
            field_varint(1, 6),
            field_bytes(2, b""),
            field_bytes(502, &program),
        ]);
        assert!(is_spec(&bytes));
        let (f, p) = spec(&bytes);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(f.model_type.as_deref(), Some("mlProgram"));
        assert_eq!(f.op_count, 4);
        assert_eq!(f.op_types["const"], 2);
        assert_eq!(f.op_types["linear"], 1);
        assert_eq!(f.op_types["relu"], 1);
        assert_eq!(f.layer_count, 0);
        // Cut inside the program: broken structure, never a panic.
        let (_, p) = spec(&bytes[..bytes.len() - 5]);
        assert!(!p.is_empty());
        // Blocks nested past the depth limit are a problem, not a deep recursion.
        let mut nested = cat(&[op("relu", &[])]);
        for _ in 0..200 {
            nested = cat(&[op("cond", &[nested])]);
        }
        let deep = cat(&[
            field_varint(1, 6),
            field_bytes(
                502,
                &field_bytes(
                    2,
                    &cat(&[
                        field_str(1, "main"),
                        field_bytes(
                            2,
                            &field_bytes(
                                3,
                                &cat(&[field_str(1, "CoreML5"), field_bytes(2, &nested)]),
                            ),
                        ),
                    ]),
                ),
            ),
        ]);
        let (_, p) = spec(&deep);
        assert!(!p.is_empty());
    }

    #[test]
    fn custom_layer_and_custom_model_are_custom_ops() {
        let bytes = build::coreml_neural_network(&[
            build::coreml_layer("conv", 100),
            build::coreml_custom_layer("evil", "EvilLayer"),
        ]);
        let (f, p) = spec(&bytes);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].kind, ProblemKind::CustomOp);
        assert_eq!(p[0].code, "custom-layer");
        assert_eq!(p[0].detail("layer"), Some("evil"));
        assert_eq!(p[0].detail("class"), Some("EvilLayer"));
        assert_eq!(f.custom_layers[0].class, "EvilLayer");
        let (f, p) = spec(&build::coreml_custom_model("MyModel"));
        assert_eq!(f.model_type.as_deref(), Some("customModel"));
        assert_eq!(p[0].code, "custom-model");
        assert_eq!(p[0].detail("class"), Some("MyModel"));
    }

    #[test]
    fn custom_layers_inside_pipelines_and_branches_are_found() {
        use build::{pb_bytes, pb_str};
        let inner_net: Vec<u8> = pb_bytes(1, &build::coreml_custom_layer("deep", "Deep"));
        let branch_layer = [pb_str(1, "if"), pb_bytes(605, &pb_bytes(1, &inner_net))].concat();
        let nn = build::coreml_neural_network(&[branch_layer]);
        let pipeline = build::coreml_pipeline(&[build::coreml_custom_model("Inner"), nn]);
        let (f, p) = spec(&pipeline);
        assert_eq!(f.model_type.as_deref(), Some("pipeline"));
        assert_eq!(f.model_types["customModel"], 1);
        assert_eq!(f.model_types["neuralNetwork"], 1);
        assert_eq!(f.layer_count, 2);
        let codes: Vec<_> = p.iter().map(|p| p.code).collect();
        assert_eq!(codes, ["custom-model", "custom-layer"]);
    }

    #[test]
    fn hostile_specs_are_problems() {
        let bytes = build::coreml_neural_network(&[build::coreml_custom_layer("evil", "E")]);
        let mut cur: &[u8] = &bytes[..bytes.len() - 3];
        let (_, p) = inspect_spec(&mut cur, bytes.len() as u64, &Limits::default());
        assert_eq!(p.last().map(|p| p.code), Some("truncated"));
        // A length past the file.
        let (_, p) = spec(&[0x08, 0x04, 0xa2, 0x1f, 0xff, 0xff, 0x03]);
        assert_eq!(p.last().map(|p| p.code), Some("length-exceeds-parent"));
        // Pipelines nested past the depth limit.
        let mut m = build::coreml_custom_model("X");
        for _ in 0..40 {
            m = build::coreml_pipeline(&[m]);
        }
        let (_, p) = spec(&m);
        assert_eq!(
            p.last().map(|p| (p.kind, p.code)),
            Some((ProblemKind::LimitExceeded, "too-deep"))
        );
    }

    fn weights(bytes: &[u8]) -> (WeightFacts, Vec<Problem>) {
        let mut r: &[u8] = bytes;
        inspect_weights(&mut r, bytes.len() as u64)
    }

    #[test]
    fn weight_blobs_are_walked_and_sized() {
        let bytes = build::coreml_weight_bin(&[&[1u8; 10], &[2u8; 64], &[]]);
        assert!(is_weight_blob(&bytes));
        let (f, p) = weights(&bytes);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!((f.blob_count, f.blobs_read, f.data_bytes), (3, 3, 74));
        assert!(is_weight_blob(&build::coreml_weight_bin(&[])));
        assert!(!is_weight_blob(&[0u8; 64]));
    }

    #[test]
    fn hostile_weight_files_are_problems() {
        let good = build::coreml_weight_bin(&[&[1u8; 10]]);
        // A blob size past the end.
        let mut big = good.clone();
        big[64 + 8..64 + 16].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert_eq!(weights(&big).1[0].code, "blob-past-eof");
        assert_eq!(weights(&big).1[0].kind, ProblemKind::Exploit);
        let mut count = good.clone();
        count[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(weights(&count).1[0].code, "count-past-eof");
        let mut sentinel = good.clone();
        sentinel[64] = 0;
        assert_eq!(weights(&sentinel).1[0].code, "bad-sentinel");
        let mut offset = good.clone();
        offset[64 + 16] = 0;
        assert_eq!(weights(&offset).1[0].code, "bad-offset");
        // Cut inside the data: the declared blob ends past the (cut) file.
        assert_eq!(weights(&good[..130]).1[0].code, "blob-past-eof");
        // A stream shorter than the size stated for it.
        let mut short: &[u8] = &good[..130];
        let (_, p) = inspect_weights(&mut short, good.len() as u64);
        assert_eq!(p[0].code, "truncated");
        let mut version = good;
        version[4] = 3;
        assert_eq!(weights(&version).1[0].code, "unknown-version");
    }

    #[test]
    fn manifest_paths_must_stay_inside_and_exist() {
        let json = build::coreml_manifest(&[
            ("A", "com.apple.CoreML/model.mlmodel"),
            ("B", "com.apple.CoreML/weights"),
            ("C", "../../secret.bin"),
            ("D", "com.apple.CoreML/missing.bin"),
        ]);
        assert!(is_manifest("x/M.mlpackage/Manifest.json"));
        assert!(!is_manifest("x/Manifest.json"));
        let m = parse_manifest(json.as_bytes()).unwrap();
        assert_eq!(m.root.as_deref(), Some("A"));
        let present = [
            "M.mlpackage/Data/com.apple.CoreML/model.mlmodel",
            "M.mlpackage/Data/com.apple.CoreML/weights/weight.bin",
        ];
        let exists = |p: &str| {
            present
                .iter()
                .any(|f| *f == p || f.starts_with(&format!("{p}/")))
        };
        let p = check_manifest(&m, "M.mlpackage/Data", &exists);
        let codes: Vec<_> = p.iter().map(|p| (p.code, p.detail("item"))).collect();
        assert_eq!(
            codes,
            [("path-escape", Some("C")), ("item-missing", Some("D"))]
        );
        assert!(parse_manifest(b"[1]").is_err());
        assert!(parse_manifest(b"{\"itemInfoEntries\": {\"a\": {}}}").is_err());
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_random_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = spec(&bytes);
            let _ = weights(&bytes);
            let _ = parse_manifest(&bytes);
        }

        #[test]
        fn never_panics_on_mutated_specs(pos in 0usize..200, byte in proptest::prelude::any::<u8>()) {
            let mut bytes = build::coreml_neural_network(&[build::coreml_custom_layer("evil", "E")]);
            let len = bytes.len();
            bytes[pos % len] = byte;
            let _ = spec(&bytes);
        }
    }
}
