//! The NaN/Inf value scan (ST002): streams the data region once, in blocks, counting
//! non-finite elements per float tensor without loading any tensor.

use std::io::{self, BufRead};

use serde::Serialize;

use super::header::{Dtype, Header};

/// Non-finite values found in one float tensor by [`scan_values`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NonFinite {
    /// Tensor name.
    pub tensor: String,
    /// Its dtype.
    pub dtype: Dtype,
    /// NaN count (for C64, each part counts).
    pub nan: u64,
    /// +Inf count.
    pub pos_inf: u64,
    /// -Inf count.
    pub neg_inf: u64,
    /// File offset of the first non-finite element (or complex part).
    pub first_offset: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Finite,
    Nan,
    PosInf,
    NegInf,
}

#[derive(Default)]
struct Counts {
    nan: u64,
    pos_inf: u64,
    neg_inf: u64,
    first: Option<u64>,
}

impl Counts {
    fn any(&self) -> bool {
        self.first.is_some()
    }
}

/// The bit layout a float dtype is scanned with; `None` for types without NaN/Inf.
#[derive(Clone, Copy)]
enum Kernel {
    F16,
    BF16,
    F32,
    F64,
    E5M2,
    E4M3,
    Fnuz,
    E8M0,
}

impl Kernel {
    fn for_dtype(d: Dtype) -> Option<Kernel> {
        Some(match d {
            Dtype::F16 => Kernel::F16,
            Dtype::BF16 => Kernel::BF16,
            // A complex64 is two f32 parts; each part is checked on its own.
            Dtype::F32 | Dtype::C64 => Kernel::F32,
            Dtype::F64 => Kernel::F64,
            Dtype::F8_E5M2 => Kernel::E5M2,
            Dtype::F8_E4M3 => Kernel::E4M3,
            Dtype::F8_E4M3FNUZ | Dtype::F8_E5M2FNUZ => Kernel::Fnuz,
            Dtype::F8_E8M0 => Kernel::E8M0,
            _ => return None,
        })
    }

    fn width(self) -> usize {
        match self {
            Kernel::F16 | Kernel::BF16 => 2,
            Kernel::F32 => 4,
            Kernel::F64 => 8,
            Kernel::E5M2 | Kernel::E4M3 | Kernel::Fnuz | Kernel::E8M0 => 1,
        }
    }

    /// Counts over `bytes` (a whole number of units) whose first byte sits at file offset `base`.
    fn count(self, bytes: &[u8], base: u64, c: &mut Counts) {
        match self {
            Kernel::F16 => words::<2>(bytes, base, c, |w| {
                ieee(u64::from(u16::from_le_bytes(w)), 15, 0x7c00)
            }),
            Kernel::BF16 => words::<2>(bytes, base, c, |w| {
                ieee(u64::from(u16::from_le_bytes(w)), 15, 0x7f80)
            }),
            Kernel::F32 => words::<4>(bytes, base, c, |w| {
                ieee(u64::from(u32::from_le_bytes(w)), 31, 0x7f80_0000)
            }),
            Kernel::F64 => words::<8>(bytes, base, c, |w| {
                ieee(u64::from_le_bytes(w), 63, 0x7ff0_0000_0000_0000)
            }),
            Kernel::E5M2 => words::<1>(bytes, base, c, |[b]| ieee(u64::from(b), 7, 0x7c)),
            Kernel::E4M3 => words::<1>(bytes, base, c, |[b]| nan_if(b & 0x7f == 0x7f)),
            Kernel::Fnuz => words::<1>(bytes, base, c, |[b]| nan_if(b == 0x80)),
            Kernel::E8M0 => words::<1>(bytes, base, c, |[b]| nan_if(b == 0xff)),
        }
    }
}

fn nan_if(cond: bool) -> Class {
    if cond { Class::Nan } else { Class::Finite }
}

/// IEEE-style classification: exponent all ones means Inf (zero mantissa) or NaN.
#[inline(always)]
fn ieee(v: u64, sign_bit: u32, exp_mask: u64) -> Class {
    let magnitude = v & !(1u64 << sign_bit);
    if magnitude & exp_mask != exp_mask {
        Class::Finite
    } else if magnitude > exp_mask {
        Class::Nan
    } else if v >> sign_bit == 0 {
        Class::PosInf
    } else {
        Class::NegInf
    }
}

/// Counts special values in fixed-size sub-blocks: a branch-free pass counts "anything not
/// finite" (which the compiler vectorises); only blocks that hold some are classified again.
#[inline(always)]
fn words<const W: usize>(
    bytes: &[u8],
    base: u64,
    c: &mut Counts,
    classify: impl Fn([u8; W]) -> Class,
) {
    const BLOCK: usize = 4096;
    let (units, _) = bytes.as_chunks::<W>();
    let mut block_base = base;
    for block in units.chunks(BLOCK) {
        let special: u64 = block
            .iter()
            .map(|w| u64::from(classify(*w) != Class::Finite))
            .sum();
        if special != 0 {
            let mut at = block_base;
            for w in block {
                match classify(*w) {
                    Class::Finite => {}
                    Class::Nan => c.nan = c.nan.saturating_add(1),
                    Class::PosInf => c.pos_inf = c.pos_inf.saturating_add(1),
                    Class::NegInf => c.neg_inf = c.neg_inf.saturating_add(1),
                }
                if c.first.is_none() && classify(*w) != Class::Finite {
                    c.first = Some(at);
                }
                at = at.saturating_add(W as u64);
            }
        }
        block_base = block_base.saturating_add((block.len() * W) as u64);
    }
}

/// Reads the data region sequentially from `r` (positioned right after the header) and counts
/// NaN, +Inf and -Inf per float tensor. Returns only tensors that hold any. Non-float, F4 and F6
/// tensors are skipped without inspection (F4/F6 have no NaN/Inf encodings).
///
/// Fails with `UnexpectedEof` if the reader ends before the data does and `InvalidInput` if `h`
/// is not a tiling (it always is when it came from
/// [`read_header`](crate::inspect::safetensors::read_header)).
pub fn scan_values<R: BufRead>(r: &mut R, h: &Header) -> io::Result<Vec<NonFinite>> {
    let data_start = h.data_start();
    let mut found = Vec::new();
    let mut pos = 0u64;
    for t in &h.tensors {
        if t.begin != pos {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "tensor {:?} begins at {} but the previous data ends at {pos}",
                    t.name, t.begin
                ),
            ));
        }
        let kernel = Kernel::for_dtype(t.dtype);
        let mut counts = Counts::default();
        let mut carry = [0u8; 8];
        let mut carry_len = 0usize;
        let mut remaining = t.byte_len();
        while remaining > 0 {
            let buf = r.fill_buf()?;
            if buf.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("data ended inside tensor {:?}", t.name),
                ));
            }
            let take = usize::try_from(remaining).map_or(buf.len(), |rem| rem.min(buf.len()));
            let chunk = buf.get(..take).unwrap_or_default();
            let chunk_at = data_start.saturating_add(pos);
            if let Some(k) = kernel {
                let width = k.width();
                let mut rest = chunk;
                // An element split across two reads is assembled in `carry` first.
                if carry_len > 0 {
                    let before = carry_len;
                    let need = (width - carry_len).min(rest.len());
                    let (head, tail) = rest.split_at(need);
                    if let Some(dst) = carry.get_mut(carry_len..carry_len + need) {
                        dst.copy_from_slice(head);
                    }
                    carry_len += need;
                    rest = tail;
                    if carry_len == width {
                        let unit_at = chunk_at.saturating_sub(before as u64);
                        k.count(carry.get(..width).unwrap_or_default(), unit_at, &mut counts);
                        carry_len = 0;
                    }
                }
                let whole = rest.len() - rest.len() % width;
                let (body, tail) = rest.split_at(whole);
                let body_at = chunk_at.saturating_add((chunk.len() - rest.len()) as u64);
                k.count(body, body_at, &mut counts);
                if !tail.is_empty() {
                    if let Some(dst) = carry.get_mut(..tail.len()) {
                        dst.copy_from_slice(tail);
                    }
                    carry_len = tail.len();
                }
            }
            r.consume(take);
            remaining -= take as u64;
            pos = pos.saturating_add(take as u64);
        }
        if counts.any() {
            found.push(NonFinite {
                tensor: t.name.clone(),
                dtype: t.dtype,
                nan: counts.nan,
                pos_inf: counts.pos_inf,
                neg_inf: counts.neg_inf,
                first_offset: counts.first.unwrap_or(data_start),
            });
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::super::TensorInfo;
    use super::*;
    use std::io::{BufReader, Cursor};

    /// A header and data for one tensor per (name, dtype, raw bytes); returns (header, data).
    fn layout(parts: &[(&str, Dtype, Vec<u8>)]) -> (Header, Vec<u8>) {
        let mut tensors = Vec::new();
        let mut data = Vec::new();
        for (name, dtype, bytes) in parts {
            let elements = bytes.len() as u64 * 8 / u64::from(dtype.bits());
            let begin = data.len() as u64;
            data.extend_from_slice(bytes);
            tensors.push(TensorInfo {
                name: (*name).to_owned(),
                dtype: *dtype,
                shape: vec![elements],
                begin,
                end: data.len() as u64,
            });
        }
        (
            Header {
                header_len: 0,
                tensors,
                metadata: None,
            },
            data,
        )
    }

    fn scan_in_blocks(h: &Header, data: &[u8], block: usize) -> Vec<NonFinite> {
        scan_values(
            &mut BufReader::with_capacity(block, Cursor::new(data.to_vec())),
            h,
        )
        .unwrap()
    }

    fn le<const W: usize, T>(vals: &[T], f: impl Fn(&T) -> [u8; W]) -> Vec<u8> {
        vals.iter().flat_map(f).collect()
    }

    #[test]
    fn scan_counts_each_float_dtype_across_block_splits() {
        let f32s = le(
            &[
                1.0f32,
                f32::NAN,
                f32::INFINITY,
                -f32::INFINITY,
                -0.0,
                f32::from_bits(0xffc0_0001),
                f32::MAX,
            ],
            |v| v.to_le_bytes(),
        );
        let c64 = le(&[1.0f32, f32::NAN, f32::NEG_INFINITY, 2.0], |v| {
            v.to_le_bytes()
        });
        let f64s = le(
            &[
                f64::NAN,
                0.5,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::MIN_POSITIVE,
            ],
            |v| v.to_le_bytes(),
        );
        let f16s = le(&[0x3c00u16, 0x7c00, 0xfc00, 0x7e00, 0xfc01, 0x7bff], |v| {
            v.to_le_bytes()
        });
        let bf16s = le(&[0x3f80u16, 0x7f80, 0xff80, 0x7fc0, 0xff81, 0x7f7f], |v| {
            v.to_le_bytes()
        });
        let parts = vec![
            (
                "i",
                Dtype::I32,
                le(&[-1i32, 0x7f80_0000], |v| v.to_le_bytes()),
            ),
            ("f32", Dtype::F32, f32s),
            ("odd", Dtype::U8, vec![0xff; 3]),
            ("c64", Dtype::C64, c64),
            ("f64", Dtype::F64, f64s),
            ("f16", Dtype::F16, f16s),
            ("bf16", Dtype::BF16, bf16s),
            (
                "e5m2",
                Dtype::F8_E5M2,
                vec![0x7c, 0xfc, 0x7d, 0xff, 0x7b, 0x00],
            ),
            ("e4m3", Dtype::F8_E4M3, vec![0x7f, 0xff, 0x7e, 0x78, 0xf8]),
            ("e4m3fnuz", Dtype::F8_E4M3FNUZ, vec![0x80, 0xff, 0x7f, 0x00]),
            ("e5m2fnuz", Dtype::F8_E5M2FNUZ, vec![0x80, 0x80, 0xfc]),
            ("e8m0", Dtype::F8_E8M0, vec![0xff, 0xfe, 0x00]),
            ("f4", Dtype::F4, vec![0xff]),
            ("clean", Dtype::F32, le(&[1.0f32, 2.0], |v| v.to_le_bytes())),
        ];
        let (mut h, data) = layout(&parts);
        h.header_len = 100;
        let expect: Vec<(&str, u64, u64, u64)> = vec![
            ("f32", 2, 1, 1),
            ("c64", 1, 0, 1),
            ("f64", 1, 1, 1),
            ("f16", 2, 1, 1),
            ("bf16", 2, 1, 1),
            ("e5m2", 2, 1, 1),
            ("e4m3", 2, 0, 0),
            ("e4m3fnuz", 1, 0, 0),
            ("e5m2fnuz", 2, 0, 0),
            ("e8m0", 1, 0, 0),
        ];
        for block in [1, 2, 3, 5, 7, 8, 9, 13, 64, 1 << 16] {
            let got = scan_in_blocks(&h, &data, block);
            let summary: Vec<(&str, u64, u64, u64)> = got
                .iter()
                .map(|n| (n.tensor.as_str(), n.nan, n.pos_inf, n.neg_inf))
                .collect();
            assert_eq!(summary, expect, "block {block}");
            let f32_first = got.iter().find(|n| n.tensor == "f32").unwrap().first_offset;
            assert_eq!(f32_first, 108 + 8 + 4, "block {block}");
            let f64_first = got.iter().find(|n| n.tensor == "f64").unwrap().first_offset;
            let f64_begin = h.tensors.iter().find(|t| t.name == "f64").unwrap().begin;
            assert_eq!(f64_first, 108 + f64_begin, "block {block}");
        }
    }

    #[test]
    fn scan_handles_many_blocks_of_specials() {
        let mut vals = vec![0.5f32; 10_000];
        vals[4095] = f32::NAN;
        vals[4096] = f32::INFINITY;
        vals[9999] = f32::NEG_INFINITY;
        let (h, data) = layout(&[("w", Dtype::F32, le(&vals, |v| v.to_le_bytes()))]);
        let got = scan_in_blocks(&h, &data, 4093);
        assert_eq!(
            (
                got[0].nan,
                got[0].pos_inf,
                got[0].neg_inf,
                got[0].first_offset
            ),
            (1, 1, 1, 8 + 4095 * 4)
        );
    }

    #[test]
    fn scan_reports_truncated_data() {
        let (h, data) = layout(&[("w", Dtype::F32, vec![0; 8])]);
        let err = scan_values(&mut Cursor::new(data.get(..5).unwrap().to_vec()), &h).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    #[ignore = "throughput measurement; run with --release -- --ignored --nocapture"]
    fn scan_throughput_f32_256_mib() {
        let n = 64 * 1024 * 1024;
        let mut data = Vec::with_capacity(n * 4);
        for i in 0..n {
            data.extend_from_slice(&((i as f32) * 0.5).to_le_bytes());
        }
        let (h, _) = layout(&[("w", Dtype::F32, Vec::new())]);
        let h = Header {
            tensors: vec![TensorInfo {
                end: data.len() as u64,
                shape: vec![n as u64],
                ..h.tensors[0].clone()
            }],
            ..h
        };
        let run = |data: &[u8], cap: usize, what: &str| {
            let start = std::time::Instant::now();
            let got = if cap == 0 {
                // A slice is a BufRead whose one block is the whole buffer.
                scan_values(&mut &data[..], &h).unwrap()
            } else {
                scan_values(&mut BufReader::with_capacity(cap, data), &h).unwrap()
            };
            let secs = start.elapsed().as_secs_f64();
            let line = format!(
                "scan_values f32 {what}: {:.0} MB/s (block {cap}, {} tensors with non-finite)\n",
                data.len() as f64 / 1e6 / secs,
                got.len()
            );
            std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes()).unwrap();
        };
        for cap in [1 << 16, 1 << 20, 0] {
            run(&data, cap, "clean");
        }
        // Worst case: a NaN in every 4096-element sub-block forces the classifying pass.
        for i in (0..n).step_by(4096) {
            data[i * 4..i * 4 + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        }
        run(&data, 1 << 20, "nan every 4096");
    }
}
