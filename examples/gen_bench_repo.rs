//! Writes the synthetic model repositories that `scripts/bench.sh` measures.
//!
//! ```text
//! cargo run --release --example gen_bench_repo -- repo  DIR MIB     # shards + torch zip + small files
//! cargo run --release --example gen_bench_repo -- big   FILE MIB    # one safetensors file
//! cargo run --release --example gen_bench_repo -- small DIR COUNT   # COUNT small text files
//! ```
//!
//! Every safetensors file is valid (header tiles the data exactly) and its data decodes to
//! finite values under F32, F16 and BF16 alike, so `--check-values` does the full scan and finds
//! nothing. The data is one pseudo-random block written over and over: content does not change
//! SHA-256 throughput, and writing stays as fast as the disk.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Bytes per write (and size of the repeated pseudo-random block).
const BLOCK: usize = 8 << 20;
/// Elements per tensor row; tensors are `[rows, ROW]`.
const ROW: u64 = 4096;

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize| -> io::Result<u64> {
        args.get(i)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::other(usage()))
    };
    let (Some(mode), Some(path)) = (args.first(), args.get(1)) else {
        return Err(io::Error::other(usage()));
    };
    let path = Path::new(path);
    let block = data_block();
    match mode.as_str() {
        "repo" => repo(path, number(2)? << 20, &block),
        "big" => safetensors_file(path, number(2)? << 20, "F32", &block).map(drop),
        "small" => small_files(path, number(2)?),
        _ => Err(io::Error::other(usage())),
    }
}

fn usage() -> String {
    "usage: gen_bench_repo (repo DIR MIB | big FILE MIB | small DIR COUNT)".to_string()
}

/// A block whose every 16-bit word has bit 14 clear: the F16/BF16 exponent (and the F32
/// exponent, from the high word) can then never be all ones, so no NaN or Inf anywhere.
fn data_block() -> Vec<u8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut out = Vec::with_capacity(BLOCK);
    while out.len() < BLOCK {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        for word in state.to_le_bytes().chunks_exact(2) {
            let w = u16::from_le_bytes([word[0], word[1]]) & 0xBFFF;
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    out
}

/// Shards of about 1 GiB (F32 and F16 alternating), a PyTorch zip, and a few thousand
/// code/config files, together about `bytes` bytes.
fn repo(dir: &Path, bytes: u64, block: &[u8]) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let zip_bytes = (bytes / 16).min(256 << 20);
    let shard_total = bytes.saturating_sub(zip_bytes);
    let shards = shard_total.div_ceil(1 << 30).max(1);
    let mut index = String::from("{\"metadata\": {}, \"weight_map\": {");
    for i in 0..shards {
        let name = format!("model-{:05}-of-{shards:05}.safetensors", i + 1);
        let dtype = if i % 2 == 0 { "F32" } else { "F16" };
        let names = safetensors_file(&dir.join(&name), shard_total / shards, dtype, block)?;
        for t in names {
            if !index.ends_with('{') {
                index.push(',');
            }
            index.push_str(&format!("\"{t}\": \"{name}\""));
        }
    }
    index.push_str("}}\n");
    fs::write(dir.join("model.safetensors.index.json"), index)?;
    torch_zip(&dir.join("pytorch_model.bin"), zip_bytes, block)?;
    fs::write(
        dir.join("config.json"),
        "{\"model_type\": \"llama\", \"hidden_size\": 4096}\n",
    )?;
    fs::write(
        dir.join("README.md"),
        "---\nlicense: apache-2.0\n---\n# bench model\n",
    )?;
    let code = dir.join("code");
    for d in 0..30 {
        let sub = code.join(format!("pkg{d:02}"));
        fs::create_dir_all(&sub)?;
        for f in 0..50 {
            fs::write(
                sub.join(format!("mod{f:02}.py")),
                format!("import math\n\n\ndef f{f}(x):\n    return math.sqrt(x) * {d}\n"),
            )?;
            fs::write(
                sub.join(format!("conf{f:02}.json")),
                format!("{{\"layer\": {f}, \"dir\": {d}, \"dropout\": 0.1}}\n"),
            )?;
        }
    }
    Ok(())
}

/// One safetensors file of about `bytes` bytes; returns the tensor names.
fn safetensors_file(path: &Path, bytes: u64, dtype: &str, block: &[u8]) -> io::Result<Vec<String>> {
    let width = if dtype == "F32" { 4 } else { 2 };
    // Tensors of 16 MiB-ish so a shard has a realistic few dozen of them.
    let rows = ((16u64 << 20) / (ROW * width)).max(1);
    let tensor_bytes = rows * ROW * width;
    let count = (bytes / tensor_bytes).max(1);
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model")
        .replace('-', "_");
    let mut names = Vec::new();
    let mut header = String::from("{\"__metadata__\":{\"format\":\"pt\"}");
    for i in 0..count {
        let name = format!("{stem}.layers.{i}.weight");
        let (b, e) = (i * tensor_bytes, (i + 1) * tensor_bytes);
        header.push_str(&format!(
            ",\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{rows},{ROW}],\"data_offsets\":[{b},{e}]}}"
        ));
        names.push(name);
    }
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut w = BufWriter::with_capacity(BLOCK, File::create(path)?);
    w.write_all(&(header.len() as u64).to_le_bytes())?;
    w.write_all(header.as_bytes())?;
    write_repeated(&mut w, count * tensor_bytes, block)?;
    w.flush()?;
    Ok(names)
}

fn write_repeated(w: &mut (impl Write + ?Sized), mut n: u64, block: &[u8]) -> io::Result<()> {
    while n > 0 {
        let take = n.min(block.len() as u64) as usize;
        w.write_all(&block[..take])?;
        n -= take as u64;
    }
    Ok(())
}

/// A `torch.save`-style zip (stored members): `archive/data.pkl` naming one storage per tensor,
/// `archive/data/N` holding the bytes.
fn torch_zip(path: &Path, bytes: u64, block: &[u8]) -> io::Result<()> {
    let storage = 16u64 << 20;
    let count = (bytes / storage).max(1);
    let mut entries: Vec<(String, Vec<u8>)> = vec![("archive/data.pkl".into(), state_dict(count))];
    entries.push(("archive/byteorder".into(), b"little".to_vec()));
    entries.push(("archive/version".into(), b"3\n".to_vec()));
    let mut w = BufWriter::with_capacity(BLOCK, File::create(path)?);
    let mut central = Vec::new();
    let mut offset = 0u64;
    let mut members = 0u16;
    let mut add = |w: &mut BufWriter<File>,
                   name: &str,
                   data: &dyn Fn(&mut dyn Write) -> io::Result<()>,
                   len: u64,
                   crc: u32|
     -> io::Result<()> {
        let mut local = Vec::new();
        local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        local.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        local.extend_from_slice(&crc.to_le_bytes());
        local.extend_from_slice(&(len as u32).to_le_bytes());
        local.extend_from_slice(&(len as u32).to_le_bytes());
        local.extend_from_slice(&(name.len() as u16).to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes());
        local.extend_from_slice(name.as_bytes());
        w.write_all(&local)?;
        data(w)?;
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&(len as u32).to_le_bytes());
        central.extend_from_slice(&(len as u32).to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&(offset as u32).to_le_bytes());
        central.extend_from_slice(name.as_bytes());
        offset += local.len() as u64 + len;
        members += 1;
        Ok(())
    };
    for (name, data) in &entries {
        let crc = crc32fast::hash(data);
        add(&mut w, name, &|w| w.write_all(data), data.len() as u64, crc)?;
    }
    let mut h = crc32fast::Hasher::new();
    let mut left = storage;
    while left > 0 {
        let take = left.min(block.len() as u64) as usize;
        h.update(&block[..take]);
        left -= take as u64;
    }
    let crc = h.finalize();
    for i in 0..count {
        add(
            &mut w,
            &format!("archive/data/{i}"),
            &|w| write_repeated(w, storage, block),
            storage,
            crc,
        )?;
    }
    let cd_len = central.len() as u32;
    w.write_all(&central)?;
    let mut end = Vec::new();
    end.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    end.extend_from_slice(&[0, 0, 0, 0]);
    end.extend_from_slice(&members.to_le_bytes());
    end.extend_from_slice(&members.to_le_bytes());
    end.extend_from_slice(&cd_len.to_le_bytes());
    end.extend_from_slice(&(offset as u32).to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    w.write_all(&end)?;
    w.flush()
}

/// The protocol-2 pickle `torch.save` writes for an `OrderedDict` of `count` float tensors.
fn state_dict(count: u64) -> Vec<u8> {
    let mut p = vec![0x80, 2];
    p.extend_from_slice(b"ccollections\nOrderedDict\n)R");
    for i in 0..count {
        let name = format!("layers.{i}.weight");
        unicode(&mut p, &name);
        p.extend_from_slice(b"ctorch._utils\n_rebuild_tensor_v2\n(");
        p.push(b'(');
        unicode(&mut p, "storage");
        p.extend_from_slice(b"ctorch\nFloatStorage\n");
        unicode(&mut p, &i.to_string());
        unicode(&mut p, "cpu");
        p.push(b'J');
        p.extend_from_slice(&(4u32 << 20).to_le_bytes());
        p.extend_from_slice(b"tQ");
        p.extend_from_slice(&[b'K', 0]);
        p.extend_from_slice(b"(J");
        p.extend_from_slice(&1024u32.to_le_bytes());
        p.push(b'J');
        p.extend_from_slice(&4096u32.to_le_bytes());
        p.extend_from_slice(b"t(J");
        p.extend_from_slice(&4096u32.to_le_bytes());
        p.extend_from_slice(&[b'K', 1]);
        p.extend_from_slice(b"t\x89ccollections\nOrderedDict\n)RtRs");
    }
    p.push(b'.');
    p
}

fn unicode(p: &mut Vec<u8>, s: &str) {
    p.push(b'X');
    p.extend_from_slice(&(s.len() as u32).to_le_bytes());
    p.extend_from_slice(s.as_bytes());
}

/// `count` small JSON/Python/Markdown files of 200 bytes to 4 KiB, 1,000 per directory.
fn small_files(dir: &Path, count: u64) -> io::Result<()> {
    let filler = "x = [0.1, 0.2, 0.3]  # filler\n".repeat(140);
    for i in 0..count {
        let sub = dir.join(format!("d{:03}", i / 1000));
        if i % 1000 == 0 {
            fs::create_dir_all(&sub)?;
        }
        let len = 200 + (i * 7919 % 3900) as usize;
        let body = filler.get(..len).unwrap_or(&filler);
        let (name, text) = match i % 3 {
            0 => (
                format!("f{i}.json"),
                format!("{{\"i\": {i}, \"s\": {body:?}}}\n"),
            ),
            1 => (format!("f{i}.py"), format!("# file {i}\n{body}")),
            _ => (format!("f{i}.md"), format!("# note {i}\n\n{body}")),
        };
        fs::write(sub.join(name), text)?;
    }
    Ok(())
}
