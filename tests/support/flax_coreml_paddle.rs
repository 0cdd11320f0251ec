//! Byte-exact Flax msgpack checkpoints, Core ML specs and packages, and PaddlePaddle programs
//! and parameter files for tests (issue 40), written from the formats' own encoders:
//! `flax/serialization.py` (`msgpack.packb` of the pytree, arrays as extension type 1 holding
//! `packb((shape, dtype.name, bytes), use_bin_type=True)`), coremltools' `Model.proto`,
//! `NeuralNetwork.proto`, `CustomModel.proto` and `MILBlob/Blob/StorageFormat.hpp`, Paddle's
//! `framework.proto` and `SerializeToStream`/`TensorToStream`.
//! Self-contained (no crate imports): the unit tests in `src/inspect` include this file with
//! `#[path]`, the CLI tests through `tests/support`.
#![allow(dead_code)]

// ---- msgpack -------------------------------------------------------------------------------

/// A msgpack string (fixstr or str8/16/32).
pub fn mp_str(s: &str) -> Vec<u8> {
    let n = s.len();
    let mut v = if n < 32 {
        vec![0xa0 | n as u8]
    } else if n < 256 {
        vec![0xd9, n as u8]
    } else if n < 65536 {
        let mut v = vec![0xda];
        v.extend_from_slice(&(n as u16).to_be_bytes());
        v
    } else {
        let mut v = vec![0xdb];
        v.extend_from_slice(&(n as u32).to_be_bytes());
        v
    };
    v.extend_from_slice(s.as_bytes());
    v
}

/// A msgpack binary (bin8/16/32), as `use_bin_type=True` writes bytes.
pub fn mp_bin(b: &[u8]) -> Vec<u8> {
    let n = b.len();
    let mut v = if n < 256 {
        vec![0xc4, n as u8]
    } else if n < 65536 {
        let mut v = vec![0xc5];
        v.extend_from_slice(&(n as u16).to_be_bytes());
        v
    } else {
        let mut v = vec![0xc6];
        v.extend_from_slice(&(n as u32).to_be_bytes());
        v
    };
    v.extend_from_slice(b);
    v
}

/// An unsigned integer in msgpack's smallest form.
pub fn mp_uint(x: u64) -> Vec<u8> {
    if x < 128 {
        vec![x as u8]
    } else if x < 256 {
        vec![0xcc, x as u8]
    } else if x < 65536 {
        let mut v = vec![0xcd];
        v.extend_from_slice(&(x as u16).to_be_bytes());
        v
    } else if x < (1 << 32) {
        let mut v = vec![0xce];
        v.extend_from_slice(&(x as u32).to_be_bytes());
        v
    } else {
        let mut v = vec![0xcf];
        v.extend_from_slice(&x.to_be_bytes());
        v
    }
}

/// An array header.
pub fn mp_array(n: usize) -> Vec<u8> {
    if n < 16 {
        vec![0x90 | n as u8]
    } else {
        let mut v = vec![0xdd];
        v.extend_from_slice(&(n as u32).to_be_bytes());
        v
    }
}

/// A map header.
pub fn mp_map(n: usize) -> Vec<u8> {
    if n < 16 {
        vec![0x80 | n as u8]
    } else {
        let mut v = vec![0xdf];
        v.extend_from_slice(&(n as u32).to_be_bytes());
        v
    }
}

/// An extension value (fixext where the length fits one, else ext8/16/32).
pub fn ext(ty: i8, payload: &[u8]) -> Vec<u8> {
    let n = payload.len();
    let mut v = match n {
        1 => vec![0xd4],
        2 => vec![0xd5],
        4 => vec![0xd6],
        8 => vec![0xd7],
        16 => vec![0xd8],
        _ if n < 256 => vec![0xc7, n as u8],
        _ if n < 65536 => {
            let mut v = vec![0xc8];
            v.extend_from_slice(&(n as u16).to_be_bytes());
            v
        }
        _ => {
            let mut v = vec![0xc9];
            v.extend_from_slice(&(n as u32).to_be_bytes());
            v
        }
    };
    v.push(ty as u8);
    v.extend_from_slice(payload);
    v
}

/// `packb((shape, dtype, data), use_bin_type=True)`: Flax's ndarray payload.
pub fn ndarray_payload(shape: &[u64], dtype: &str, data: &[u8]) -> Vec<u8> {
    let mut v = mp_array(3);
    v.extend(mp_array(shape.len()));
    for d in shape {
        v.extend(mp_uint(*d));
    }
    v.extend(mp_str(dtype));
    v.extend(mp_bin(data));
    v
}

/// An ndarray extension value (type 1) with whatever shape, dtype and data are given.
pub fn ndarray_raw(shape: &[u64], dtype: &str, data: &[u8]) -> Vec<u8> {
    ext(1, &ndarray_payload(shape, dtype, data))
}

/// A consistent ndarray of `dtype` (item size `item`) filled with a byte pattern.
pub fn ndarray(shape: &[u64], dtype: &str, item: u64) -> Vec<u8> {
    let n = shape.iter().product::<u64>() * item;
    let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    ndarray_raw(shape, dtype, &data)
}

/// An ndarray whose shape holds `-1` (int8 encoding).
pub fn ndarray_neg_dim() -> Vec<u8> {
    let mut p = mp_array(3);
    p.extend(mp_array(1));
    p.push(0xff);
    p.extend(mp_str("float32"));
    p.extend(mp_bin(&[]));
    ext(1, &p)
}

/// A map of named values, as the top level of a Flax file.
pub fn flax_file(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut v = mp_map(entries.len());
    for (k, val) in entries {
        v.extend(mp_str(k));
        v.extend_from_slice(val);
    }
    v
}

/// A small Flax checkpoint: `params/Dense_0/{kernel,bias}` float32, `params/embed/0` bfloat16
/// (a list), a NumPy int64 scalar `step` (ext 3) and a complex `c` (ext 2).
pub fn flax_params() -> Vec<u8> {
    let dense = flax_file(&[
        ("kernel", ndarray(&[4, 2], "float32", 4)),
        ("bias", ndarray(&[2], "float32", 4)),
    ]);
    let mut embed = mp_array(1);
    embed.extend(ndarray(&[3], "bfloat16", 2));
    let params = flax_file(&[("Dense_0", dense), ("embed", embed)]);
    let mut complex = mp_array(2);
    complex.push(0xcb);
    complex.extend_from_slice(&1.5f64.to_be_bytes());
    complex.push(0xcb);
    complex.extend_from_slice(&(-2.0f64).to_be_bytes());
    flax_file(&[
        ("params", params),
        (
            "step",
            ext(3, &ndarray_payload(&[], "int64", &[7, 0, 0, 0, 0, 0, 0, 0])),
        ),
        ("c", ext(2, &complex)),
    ])
}

/// A chunked array map as `_chunk` writes it: `{"__msgpack_chunked_array__": true, "shape":
/// {"0": d0, ...}, "chunks": {"0": chunk0, ...}}`.
pub fn chunked(shape: &[u64], chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut v = mp_map(3);
    v.extend(mp_str("__msgpack_chunked_array__"));
    v.push(0xc3);
    v.extend(mp_str("shape"));
    v.extend(mp_map(shape.len()));
    for (i, d) in shape.iter().enumerate() {
        v.extend(mp_str(&i.to_string()));
        v.extend(mp_uint(*d));
    }
    v.extend(mp_str("chunks"));
    v.extend(mp_map(chunks.len()));
    for (i, c) in chunks.iter().enumerate() {
        v.extend(mp_str(&i.to_string()));
        v.extend_from_slice(c);
    }
    v
}

/// A chunked float32 array of 4 elements in two chunks under `big`.
pub fn flax_chunked() -> Vec<u8> {
    flax_file(&[(
        "big",
        chunked(
            &[4],
            &[ndarray(&[2], "float32", 4), ndarray(&[2], "float32", 4)],
        ),
    )])
}

// ---- protobuf ------------------------------------------------------------------------------

/// Appends a varint.
pub fn varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A varint field.
pub fn pb_varint(field: u32, v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, u64::from(field) << 3);
    varint(&mut out, v);
    out
}

/// A length-delimited field.
pub fn pb_bytes(field: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, (u64::from(field) << 3) | 2);
    varint(&mut out, payload.len() as u64);
    out.extend_from_slice(payload);
    out
}

/// A string field.
pub fn pb_str(field: u32, s: &str) -> Vec<u8> {
    pb_bytes(field, s.as_bytes())
}

// ---- Core ML -------------------------------------------------------------------------------

/// A `ModelDescription` with one input and one output feature named `x` and `y`.
fn coreml_description() -> Vec<u8> {
    [pb_bytes(1, &pb_str(1, "x")), pb_bytes(10, &pb_str(1, "y"))].concat()
}

/// A `NeuralNetworkLayer` named `name` whose layer type is field `field` (empty parameters).
pub fn coreml_layer(name: &str, field: u32) -> Vec<u8> {
    [
        pb_str(1, name),
        pb_str(2, "x"),
        pb_str(3, "y"),
        pb_bytes(field, &[]),
    ]
    .concat()
}

/// A `NeuralNetworkLayer` of type `custom` (field 500) with `CustomLayerParams.className`.
pub fn coreml_custom_layer(name: &str, class: &str) -> Vec<u8> {
    [
        pb_str(1, name),
        pb_str(2, "x"),
        pb_str(3, "y"),
        pb_bytes(
            500,
            &[pb_str(10, class), pb_str(40, "a custom layer")].concat(),
        ),
    ]
    .concat()
}

/// A Core ML `Model` (spec version 4) whose type is `neuralNetwork` (field 500) with `layers`.
pub fn coreml_neural_network(layers: &[Vec<u8>]) -> Vec<u8> {
    let nn: Vec<u8> = layers.iter().flat_map(|l| pb_bytes(1, l)).collect();
    [
        pb_varint(1, 4),
        pb_bytes(2, &coreml_description()),
        pb_bytes(500, &nn),
    ]
    .concat()
}

/// A Core ML `Model` of type `customModel` (field 555) naming `class`.
pub fn coreml_custom_model(class: &str) -> Vec<u8> {
    [
        pb_varint(1, 4),
        pb_bytes(2, &coreml_description()),
        pb_bytes(555, &[pb_str(10, class)].concat()),
    ]
    .concat()
}

/// A Core ML `Model` of type `pipeline` (field 202) holding `models`.
pub fn coreml_pipeline(models: &[Vec<u8>]) -> Vec<u8> {
    let p: Vec<u8> = models.iter().flat_map(|m| pb_bytes(1, m)).collect();
    [
        pb_varint(1, 4),
        pb_bytes(2, &coreml_description()),
        pb_bytes(202, &p),
    ]
    .concat()
}

/// An `.mlpackage` `Manifest.json` with `(identifier, path)` items, the first the root model.
pub fn coreml_manifest(items: &[(&str, &str)]) -> String {
    let entries: Vec<String> = items
        .iter()
        .map(|(id, path)| {
            let name = path.rsplit('/').next().unwrap_or(path);
            format!(
                r#"    "{id}": {{
      "author": "com.apple.CoreML",
      "description": "CoreML Model",
      "name": "{name}",
      "path": "{path}"
    }}"#
            )
        })
        .collect();
    format!(
        "{{\n  \"fileFormatVersion\": \"1.0.0\",\n  \"itemInfoEntries\": {{\n{}\n  }},\n  \"rootModelIdentifier\": \"{}\"\n}}\n",
        entries.join(",\n"),
        items.first().map_or("", |i| i.0)
    )
}

/// A MIL blob storage file (`weights/weight.bin`): the 64-byte header (count, version 2), then
/// per blob a 64-byte metadata record (sentinel 0xDEADBEEF, dtype, size, offset) and its data,
/// each 64-byte aligned, as `StorageWriter::WriteData` lays them out.
pub fn coreml_weight_bin(blobs: &[&[u8]]) -> Vec<u8> {
    let mut v = vec![0u8; 64];
    v[0..4].copy_from_slice(&(blobs.len() as u32).to_le_bytes());
    v[4..8].copy_from_slice(&2u32.to_le_bytes());
    for b in blobs {
        while !v.len().is_multiple_of(64) {
            v.push(0);
        }
        let meta = v.len() as u64;
        let mut m = vec![0u8; 64];
        m[0..4].copy_from_slice(&0xDEAD_BEEFu32.to_le_bytes());
        m[4..8].copy_from_slice(&1u32.to_le_bytes());
        m[8..16].copy_from_slice(&(b.len() as u64).to_le_bytes());
        m[16..24].copy_from_slice(&(meta + 64).to_le_bytes());
        v.extend(m);
        v.extend_from_slice(b);
    }
    v
}

// ---- PaddlePaddle --------------------------------------------------------------------------

/// An `OpDesc` of `op_type` with one input and output and one int attribute.
pub fn paddle_op(op_type: &str, attr: (&str, i64)) -> Vec<u8> {
    let var = |param: &str, arg: &str| [pb_str(1, param), pb_str(2, arg)].concat();
    let attr_msg = [
        pb_str(1, attr.0),
        pb_varint(2, 0),
        pb_varint(3, attr.1 as u64),
    ]
    .concat();
    [
        pb_bytes(1, &var("X", "x")),
        pb_bytes(2, &var("Out", "y")),
        pb_str(3, op_type),
        pb_bytes(4, &attr_msg),
    ]
    .concat()
}

/// An `OpDesc` of `op_type` with a string attribute (`file_path` of save/load ops).
pub fn paddle_op_str(op_type: &str, attr: (&str, &str)) -> Vec<u8> {
    let attr_msg = [pb_str(1, attr.0), pb_varint(2, 2), pb_str(5, attr.1)].concat();
    [pb_str(3, op_type), pb_bytes(4, &attr_msg)].concat()
}

/// A `ProgramDesc` with one block per entry of `blocks`, each holding the given ops and a
/// persistable variable `w`; version 2006000 (Paddle 2.6).
pub fn paddle_program(blocks: &[Vec<Vec<u8>>]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, ops) in blocks.iter().enumerate() {
        let var_type = pb_bytes(
            2,
            &[
                pb_varint(1, 7),
                pb_bytes(
                    3,
                    &pb_bytes(1, &[pb_varint(1, 5), pb_varint(2, 4)].concat()),
                ),
            ]
            .concat(),
        );
        let var = [pb_str(1, "w"), var_type, pb_varint(3, 1)].concat();
        let mut block = [
            pb_varint(1, i as u64),
            pb_varint(2, if i == 0 { u64::MAX } else { 0 }),
            pb_bytes(3, &var),
        ]
        .concat();
        for op in ops {
            block.extend(pb_bytes(4, op));
        }
        out.extend(pb_bytes(1, &block));
    }
    out.extend(pb_bytes(4, &pb_varint(1, 2_006_000)));
    out
}

/// A benign inference program: feed, matmul, relu, fetch.
pub fn paddle_benign_program() -> Vec<u8> {
    paddle_program(&[vec![
        paddle_op("feed", ("col", 0)),
        paddle_op("matmul_v2", ("trans_x", 0)),
        paddle_op("relu", ("use_cudnn", 0)),
        paddle_op("fetch", ("col", 0)),
    ]])
}

/// Paddle's `VarType.Type` data types and their sizes, as `TensorToStream` writes them.
pub const PADDLE_FP32: u64 = 5;

/// One `.pdiparams` tensor record's header (no data): for declared sizes no data follows.
pub fn paddle_param_header(dtype: u64, dims: &[u64]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend(0u32.to_le_bytes());
    v.extend(0u64.to_le_bytes());
    v.extend(0u32.to_le_bytes());
    let mut desc = pb_varint(1, dtype);
    for d in dims {
        desc.extend(pb_varint(2, *d));
    }
    v.extend((desc.len() as i32).to_le_bytes());
    v.extend(&desc);
    v
}

/// A `.pdiparams` file (`save_combine`): per tensor, the LoDTensor version 0 and LoD level 0,
/// the Tensor version 0, the `TensorDesc` size and bytes, then the raw data.
pub fn paddle_params(tensors: &[(u64, &[u64])]) -> Vec<u8> {
    let mut v = Vec::new();
    for (dtype, dims) in tensors {
        v.extend(0u32.to_le_bytes());
        v.extend(0u64.to_le_bytes());
        v.extend(0u32.to_le_bytes());
        let mut desc = pb_varint(1, *dtype);
        for d in *dims {
            desc.extend(pb_varint(2, *d));
        }
        v.extend((desc.len() as i32).to_le_bytes());
        v.extend(&desc);
        let size = match dtype {
            0 | 20 | 21 => 1,
            1 | 4 | 22 => 2,
            2 | 5 => 4,
            _ => 8,
        };
        let n = dims.iter().product::<u64>() * size;
        v.extend((0..n).map(|i| (i % 7) as u8));
    }
    v
}
