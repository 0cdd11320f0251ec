//! Parser micro-benchmarks: the work done per file on top of hashing.
//!
//! Run with `cargo bench --manifest-path bench/Cargo.toml` (a package of its own: see its
//! `Cargo.toml`). Inputs are built in memory by the small builders
//! below (no fixtures, no Python): a safetensors header with 1,000 tensors, a ~10 MB pickle
//! shaped like a PyTorch state dict, and a GGUF header with a 32,000-token vocabulary.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_main};
use modelgate::inspect::{gguf, pickle, safetensors};

/// A safetensors prefix (length + JSON header) for `count` F32 tensors of 4 KiB each, and the
/// size of the whole file it describes.
fn safetensors_header(count: u64) -> (Vec<u8>, u64) {
    let mut json = String::from("{\"__metadata__\":{\"format\":\"pt\"}");
    for i in 0..count {
        let (b, e) = (i * 4096, (i + 1) * 4096);
        json.push_str(&format!(
            ",\"model.layers.{i}.mlp.weight\":{{\"dtype\":\"F32\",\"shape\":[32,32],\"data_offsets\":[{b},{e}]}}"
        ));
    }
    json.push('}');
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(json.as_bytes());
    let size = out.len() as u64 + count * 4096;
    (out, size)
}

fn unicode(p: &mut Vec<u8>, s: &str) {
    p.push(b'X');
    p.extend_from_slice(&(s.len() as u32).to_le_bytes());
    p.extend_from_slice(s.as_bytes());
}

/// The protocol-2 pickle `torch.save` writes for an `OrderedDict` of `count` tensors
/// (`_rebuild_tensor_v2` over persistent storages), with the memo puts torch emits.
fn state_dict_pickle(count: u32) -> Vec<u8> {
    let mut p = vec![0x80, 2];
    p.extend_from_slice(b"ccollections\nOrderedDict\nq\x00)Rq\x01");
    let mut memo = 2u32;
    let mut put = |p: &mut Vec<u8>| {
        p.push(b'r');
        p.extend_from_slice(&memo.to_le_bytes());
        memo += 1;
    };
    for i in 0..count {
        unicode(&mut p, &format!("model.layers.{i}.self_attn.q_proj.weight"));
        put(&mut p);
        p.extend_from_slice(b"ctorch._utils\n_rebuild_tensor_v2\n");
        put(&mut p);
        p.extend_from_slice(b"((");
        unicode(&mut p, "storage");
        p.extend_from_slice(b"ctorch\nFloatStorage\n");
        put(&mut p);
        unicode(&mut p, &i.to_string());
        unicode(&mut p, "cpu");
        p.push(b'J');
        p.extend_from_slice(&(1u32 << 20).to_le_bytes());
        p.extend_from_slice(b"tQK\x00(J");
        p.extend_from_slice(&1024u32.to_le_bytes());
        p.push(b'J');
        p.extend_from_slice(&1024u32.to_le_bytes());
        p.extend_from_slice(b"t(J");
        p.extend_from_slice(&1024u32.to_le_bytes());
        p.extend_from_slice(b"K\x01t\x89ccollections\nOrderedDict\n)RtR");
        put(&mut p);
        p.push(b's');
    }
    p.push(b'.');
    p
}

fn gguf_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// A GGUF v3 header like a 7B llama's: architecture keys, a 32,000-token vocabulary with scores,
/// a chat template and 291 tensor infos. Returns the header and the size of the file it claims.
fn gguf_header() -> (Vec<u8>, u64) {
    const STRING: u32 = 8;
    const ARRAY: u32 = 9;
    const U32: u32 = 4;
    const F32: u32 = 6;
    let tokens = 32_000u64;
    let tensors = 291u64;
    let mut h = b"GGUF".to_vec();
    h.extend_from_slice(&3u32.to_le_bytes());
    h.extend_from_slice(&tensors.to_le_bytes());
    h.extend_from_slice(&6u64.to_le_bytes());
    let kv_string = |h: &mut Vec<u8>, k: &str, v: &str| {
        gguf_string(h, k);
        h.extend_from_slice(&STRING.to_le_bytes());
        gguf_string(h, v);
    };
    kv_string(&mut h, "general.architecture", "llama");
    kv_string(&mut h, "general.name", "bench");
    gguf_string(&mut h, "llama.context_length");
    h.extend_from_slice(&U32.to_le_bytes());
    h.extend_from_slice(&4096u32.to_le_bytes());
    gguf_string(&mut h, "tokenizer.ggml.tokens");
    h.extend_from_slice(&ARRAY.to_le_bytes());
    h.extend_from_slice(&STRING.to_le_bytes());
    h.extend_from_slice(&tokens.to_le_bytes());
    for i in 0..tokens {
        gguf_string(&mut h, &format!("tok{i}"));
    }
    gguf_string(&mut h, "tokenizer.ggml.scores");
    h.extend_from_slice(&ARRAY.to_le_bytes());
    h.extend_from_slice(&F32.to_le_bytes());
    h.extend_from_slice(&tokens.to_le_bytes());
    for i in 0..tokens {
        h.extend_from_slice(&(-(i as f32)).to_le_bytes());
    }
    kv_string(
        &mut h,
        "tokenizer.chat_template",
        "{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}",
    );
    let tensor_bytes = 4096u64 * 4096 * 4;
    for i in 0..tensors {
        gguf_string(&mut h, &format!("blk.{i}.attn_q.weight"));
        h.extend_from_slice(&2u32.to_le_bytes());
        h.extend_from_slice(&4096u64.to_le_bytes());
        h.extend_from_slice(&4096u64.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&(i * tensor_bytes).to_le_bytes());
    }
    let data_start = (h.len() as u64).div_ceil(32) * 32;
    (h, data_start + tensors * tensor_bytes)
}

fn parsers(c: &mut Criterion) {
    let (st, st_size) = safetensors_header(1_000);
    let st_limits = safetensors::Limits::default();
    let mut g = c.benchmark_group("safetensors");
    g.throughput(Throughput::Bytes(st.len() as u64));
    g.bench_function("parse_header_bytes/1000_tensors", |b| {
        b.iter(|| safetensors::parse_header_bytes(black_box(&st), st_size, &st_limits).is_ok())
    });
    g.finish();

    let pk = state_dict_pickle(60_000);
    let pk_limits = pickle::Limits::default();
    let mut g = c.benchmark_group("pickle");
    g.throughput(Throughput::Bytes(pk.len() as u64));
    g.sample_size(10);
    g.bench_function("analyze/state_dict_10MB", |b| {
        b.iter(|| {
            pickle::analyze(&mut black_box(&pk[..]), &pk_limits)
                .imports
                .len()
        })
    });
    g.finish();

    let (gg, gg_size) = gguf_header();
    let gg_limits = gguf::Limits::default();
    let mut g = c.benchmark_group("gguf");
    g.throughput(Throughput::Bytes(gg.len() as u64));
    g.bench_function("inspect/32k_vocab_291_tensors", |b| {
        b.iter(|| {
            gguf::inspect(&mut black_box(&gg[..]), gg_size, &gg_limits)
                .1
                .len()
        })
    });
    g.finish();
}

// `criterion_group!` defines a `pub fn`; a private module keeps it out of `missing_docs`.
mod group {
    criterion::criterion_group!(benches, super::parsers);
}
criterion_main!(group::benches);
