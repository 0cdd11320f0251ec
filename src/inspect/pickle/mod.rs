//! Pickle analysis without execution. A pickle is a program for a stack machine; loading it runs
//! `find_class` for every GLOBAL/INST/STACK_GLOBAL and calls what REDUCE, OBJ, NEWOBJ and BUILD
//! are given. This module walks the opcodes of every pickle in a stream (protocols 0-5) through
//! a symbolic model of CPython's `_pickle.c` unpickler (same stack, mark stack and memo rules),
//! so it can tell which globals a stream imports and which of them it calls, even when the
//! module and name strings travel through the memo, DUP or MARK tricks meant to desync a naive
//! reader. Nothing is imported or evaluated; every length and count is checked against
//! [`Limits`] before it is used.
//!
//! Facts only: the imports come out as [`Import`] records and [`crate::knowledge`] judges them.

mod analysis;
mod dis;
mod machine;
pub mod ops;
mod sniff;
pub mod torch;

use std::io::BufRead;

pub(crate) use analysis::malformed;
pub use analysis::{
    Analysis, Import, Limits, Malformed, PickleInfo, RawRegion, Shape, Storage, StringList,
    TensorView, Trailing, Wraps,
};
pub use dis::disassemble;
use ops::Source;
pub use sniff::looks_like_pickle;

/// Analyse every pickle in `r`, one after another, until end of stream, non-pickle data after
/// a STOP, an error or a limit. Never panics and never fails: problems land in
/// [`Analysis::error`] next to the imports found before them.
pub fn analyze<R: BufRead>(r: &mut R, limits: &Limits) -> Analysis {
    run(r, limits, &|_: &Analysis| false)
}

/// The loop of [`analyze`]; `raw_after(analysis)` says, after a complete pickle, that the rest
/// of the stream is raw data whatever it looks like.
fn run<R: BufRead>(r: &mut R, limits: &Limits, raw_after: &dyn Fn(&Analysis) -> bool) -> Analysis {
    let mut out = Analysis::default();
    let mut src = Source::new(r, 0);
    let mut budget = limits.max_opcodes;
    loop {
        if out.pickles.len() >= limits.max_pickles {
            out.error = Some(malformed(
                src.pos,
                "limit-pickles",
                format!(
                    "another pickle starts at offset {} after {} pickles, the limit",
                    src.pos, limits.max_pickles
                ),
            ));
            break;
        }
        let index = out.pickles.len();
        let result = machine::run_pickle(
            &mut src,
            limits,
            index,
            &mut budget,
            &mut out,
            read_embedded_legacy,
        );
        if let Err(e) = result {
            out.error = Some(e);
            break;
        }
        match src.lookahead(limits.sniff_len) {
            Ok([]) => break,
            Ok(head) if !raw_after(&out) && looks_like_pickle(head) => continue,
            Ok(head) => {
                out.trailing_head = head.to_vec();
                out.trailing = Some(Trailing { offset: src.pos });
                break;
            }
            Err(e) => {
                out.error = Some(e);
                break;
            }
        }
    }
    out.bytes_read = src.taken;
    out
}

/// Pickles a legacy (non-zip) PyTorch file holds before its raw storage block: magic number,
/// protocol version, sys_info, the data, the list of storage keys (`torch/serialization.py`
/// `_legacy_save`).
pub const TORCH_LEGACY_PICKLES: usize = 5;

/// [`analyze`] for a legacy PyTorch file (issue 32): once the fifth pickle, the storage key
/// list, is complete, what follows is the raw storage block, which `torch.load` reads as bytes
/// and never unpickles. It is left as [`Analysis::trailing`] whatever its first bytes are (an
/// element count of 640 is `0x80 0x02 ..`, one of 37757 is `} 0x93 ..`), so it is never parsed
/// as a pickle; `check_legacy_block` checks its records.
pub fn analyze_torch_legacy<R: BufRead>(r: &mut R, limits: &Limits) -> Analysis {
    run(r, limits, &legacy_pickles_read)
}

/// [`analyze_torch_legacy`] of bytes a pickle hands to `torch.load`, kept only when all five
/// pickles end without error inside them. The machine reaches it through the function each
/// `machine::run_pickle` is given (the machine sits below this driver and never names it), with
/// `limits.embedded_depth` already lowered by one for this level.
fn read_embedded_legacy(head: &[u8], limits: &Limits) -> Option<Analysis> {
    let nested = analyze_torch_legacy(&mut &head[..], limits);
    let complete = nested.error.is_none()
        && nested.pickles.iter().all(|p| p.complete)
        && legacy_pickles_read(&nested);
    complete.then_some(nested)
}

/// Whether `out` holds a legacy PyTorch file's five pickles, the fifth a list of storage keys:
/// what `torch.load` reads before the raw storage block.
fn legacy_pickles_read(out: &Analysis) -> bool {
    out.pickles.len() == TORCH_LEGACY_PICKLES
        && out
            .string_list
            .as_ref()
            .is_some_and(|l| l.pickle == TORCH_LEGACY_PICKLES - 1)
}

/// The two members of the pre-0.4 tar-based `torch.save` format that interleave pickles with raw
/// records (`torch/serialization.py` `legacy_load`): after a pickle of the record count, each
/// record is a pickle followed by raw bytes that are never unpickled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TarRecords {
    /// `storages`: `(key, location, storage_type)`, then an 8-byte little-endian element count
    /// and that many elements of the storage type.
    Storages,
    /// `tensors`: `(key, storage_id, tensor_type)`, then a 4-byte `ndim` (read as 8), `ndim`
    /// sizes and strides (8 bytes each) and an 8-byte storage offset.
    Tensors,
}

/// Dimensions a legacy tensor record may claim (PyTorch tensors have at most 64).
const MAX_TAR_NDIM: u64 = 64;

/// [`analyze`] for the `storages` or `tensors` member of a tar-based PyTorch file (issue 32):
/// every pickle is read, and the raw record after each is skipped by its own length fields,
/// never parsed as opcodes whatever its first bytes are. A storage record whose type is not a
/// known storage class cannot be sized; what follows it is left as [`Analysis::trailing`].
pub fn analyze_torch_tar_records<R: BufRead>(
    r: &mut R,
    kind: TarRecords,
    limits: &Limits,
) -> Analysis {
    let mut out = Analysis::default();
    let mut src = Source::new(r, 0);
    let mut budget = limits.max_opcodes;
    if let Err(e) = tar_records(&mut src, kind, limits, &mut budget, &mut out) {
        out.error = Some(e);
    }
    out.bytes_read = src.taken;
    out
}

fn tar_records<R: BufRead>(
    src: &mut Source<'_, R>,
    kind: TarRecords,
    limits: &Limits,
    budget: &mut u64,
    out: &mut Analysis,
) -> Result<(), Malformed> {
    machine::run_pickle(src, limits, 0, budget, out, read_embedded_legacy)?;
    loop {
        if src.lookahead(1)?.is_empty() {
            return Ok(());
        }
        let index = out.pickles.len();
        if index >= limits.max_pickles {
            return Err(malformed(
                src.pos,
                "limit-pickles",
                format!(
                    "another record starts at offset {} after {index} pickles, the limit",
                    src.pos
                ),
            ));
        }
        let first_import = out.imports.len();
        machine::run_pickle(src, limits, index, budget, out, read_embedded_legacy)?;
        let at = src.pos;
        let raw = match kind {
            TarRecords::Storages => {
                let itemsize = out.imports.get(first_import..).and_then(|new| {
                    new.iter().rev().find_map(|i| {
                        let (m, n) = (i.module.as_deref()?, i.name.as_deref()?);
                        let m = m.strip_prefix("torch.cuda").map_or(m, |_| "torch");
                        crate::knowledge::torch_storage_itemsize(&format!("{m}.{n}"))
                    })
                });
                let Some(itemsize) = itemsize else {
                    // Unknown storage type: the record cannot be sized.
                    out.trailing = Some(Trailing { offset: at });
                    return Ok(());
                };
                let count = read_u64(src, "storage record count")?;
                count.checked_mul(itemsize)
            }
            TarRecords::Tensors => {
                let ndim = read_u64(src, "tensor record ndim")? & 0xffff_ffff;
                if ndim > MAX_TAR_NDIM {
                    return Err(malformed(
                        at,
                        "bad-argument",
                        format!("tensor record at offset {at} claims {ndim} dimensions"),
                    ));
                }
                Some(16 * ndim + 8)
            }
        };
        let Some(raw) = raw else {
            return Err(malformed(
                at,
                "bad-argument",
                format!("record at offset {at} claims a size that overflows"),
            ));
        };
        if src.skip(raw)? < raw {
            return Err(malformed(
                at,
                "truncated",
                format!("the raw record at offset {at} ends before its {raw} bytes"),
            ));
        }
    }
}

/// An 8-byte little-endian count of a raw record.
fn read_u64<R: BufRead>(src: &mut Source<'_, R>, what: &str) -> Result<u64, Malformed> {
    let p = src.payload(8, 8, what)?;
    let bytes: [u8; 8] = p
        .head
        .as_slice()
        .try_into()
        .map_err(|_| malformed(src.pos, "truncated", format!("{what} is cut short")))?;
    Ok(u64::from_le_bytes(bytes))
}

/// A pickle hidden in bytes that no loader unpickles (a PyTorch storage record, issue 32): the
/// analysis of the first pickle when the bytes start with a valid PROTO (2 to 5) and that
/// pickle parses completely to its STOP; `None` otherwise. Raw tensor bytes that happen to
/// begin like opcodes end in an error long before a STOP, and are then no pickle at all (never
/// a malformed one). Bytes after the STOP are not read.
pub fn analyze_hidden<R: BufRead>(r: &mut R, limits: &Limits) -> Option<Analysis> {
    let mut src = Source::new(r, 0);
    match src.lookahead(2) {
        Ok([0x80, 2..=5, ..]) => {}
        _ => return None,
    }
    let mut out = Analysis::default();
    let mut budget = limits.max_opcodes;
    machine::run_pickle(
        &mut src,
        limits,
        0,
        &mut budget,
        &mut out,
        read_embedded_legacy,
    )
    .ok()?;
    out.bytes_read = src.taken;
    out.pickles
        .first()
        .is_some_and(|p| p.complete)
        .then_some(out)
}

#[cfg(test)]
mod tests;
