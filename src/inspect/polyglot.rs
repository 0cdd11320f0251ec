//! Polyglots: a weight file (a strictly valid safetensors file, a GGUF or ONNX model) whose
//! bytes also form a second, loadable container where that container's loader looks for it.
//! Renamed, the same bytes load as the other format: `h5py`/Keras find an HDF5 superblock at
//! offset 0, 512, 1024, 2048, ... (the user-block sizes); `zipfile` and `torch.load` find a zip
//! by its end-of-central-directory record at the end of the file, even with data in front of it.
//! Tensor data may hold any bytes, so a magic number alone proves nothing: a second container
//! counts only when it is structurally sound (an HDF5 superblock whose root object header
//! parses; an end-of-central-directory record whose central directory holds a real entry whose
//! local header is where the entry says).
//!
//! All reads are positioned reads of small structures (the HDF5 reader's own, and at most a
//! 64 KiB tail plus one central-directory entry for zip), so a large weight file costs a few
//! dozen reads.

use std::io::{Read, Seek};

use super::hdf5;
use super::problem::{Problem, ProblemKind};
use super::read::read_at;

/// End-of-central-directory record: signature, then fixed fields, then a comment.
const EOCD_SIG: &[u8; 4] = b"PK\x05\x06";
const EOCD_LEN: u64 = 22;
/// The longest zip comment, hence how far from the end an EOCD record may start.
const MAX_COMMENT: u64 = 0xffff;
const ZIP64_LOCATOR_SIG: &[u8; 4] = b"PK\x06\x07";
const ZIP64_EOCD_SIG: &[u8; 4] = b"PK\x06\x06";
const CENTRAL_SIG: &[u8; 4] = b"PK\x01\x02";
const LOCAL_SIG: &[u8; 4] = b"PK\x03\x04";
/// Fixed part of a central-directory entry.
const CENTRAL_LEN: usize = 46;

/// The second containers found in a weight file. `Unsafe` problems with code `polyglot` (and
/// evidence `polyglot` = `hdf5` or `zip`, `offset`), followed by what the HDF5 reader found
/// inside an embedded HDF5 model (a Lambda layer in its `model_config`, for instance).
pub fn check<R: Read + Seek>(reader: &mut R, size: u64, limits: &hdf5::Limits) -> Vec<Problem> {
    let mut problems = Vec::new();
    problems.extend(check_hdf5(reader, size, limits));
    if let Some(p) = check_zip(reader, size) {
        problems.push(p);
    }
    problems
}

/// An HDF5 superblock at a user-block boundary whose root object header parses.
fn check_hdf5<R: Read + Seek>(reader: &mut R, size: u64, limits: &hdf5::Limits) -> Vec<Problem> {
    // The HDF5 library probes every doubling up to the end of the file: so do we (one 8-byte
    // read per power of two).
    let limits = hdf5::Limits {
        max_superblock_offset: u64::MAX,
        ..limits.clone()
    };
    let (facts, problems) = hdf5::inspect(reader, size, &limits);
    // No signature, or a signature in front of garbage: not a file h5py would open.
    if problems
        .iter()
        .any(|p| matches!(p.kind, ProblemKind::Malformed | ProblemKind::LimitExceeded))
    {
        return Vec::new();
    }
    let at = facts.superblock_offset;
    let what = if facts.keras.is_some() {
        "a keras hdf5 model"
    } else {
        "an hdf5 file"
    };
    let mut out = vec![
        Problem::new(
            ProblemKind::Unsafe,
            "polyglot",
            format!(
                "the file is also {what}: a valid hdf5 superblock (version {}) at offset {at} with a readable root group; renamed `.h5`, the same bytes load with h5py/keras",
                facts.superblock_version
            ),
            Some(at),
        )
        .with("polyglot", "hdf5")
        .with("offset", at.to_string()),
    ];
    // What the embedded model would do when loaded (Lambda layers, custom objects).
    out.extend(
        problems
            .into_iter()
            .filter(|p| p.kind == ProblemKind::Unsafe),
    );
    out
}

fn le(bytes: &[u8], at: usize, width: usize) -> Option<u64> {
    let slice = bytes.get(at..at.checked_add(width)?)?;
    let mut buf = [0u8; 8];
    buf.get_mut(..width)?.copy_from_slice(slice);
    Some(u64::from_le_bytes(buf))
}

/// A zip end-of-central-directory record at the end whose central directory's first entry is
/// real and points at a real local header. Offsets may be relative to a zip that starts later
/// in the file (`zipfile` adjusts for data in front, as for self-extracting archives).
fn check_zip<R: Read + Seek>(reader: &mut R, size: u64) -> Option<Problem> {
    if size < EOCD_LEN {
        return None;
    }
    let tail_len = size.min(EOCD_LEN + MAX_COMMENT);
    let tail_start = size - tail_len;
    let mut tail = vec![0u8; usize::try_from(tail_len).ok()?];
    read_at(reader, size, tail_start, &mut tail).ok()?;
    // The last record whose comment runs exactly to the end of the file.
    let eocd = (0..=tail.len().checked_sub(EOCD_LEN as usize)?)
        .rev()
        .find(|&i| {
            tail.get(i..i + 4) == Some(EOCD_SIG.as_slice())
                && le(&tail, i + 20, 2).is_some_and(|c| (i as u64) + EOCD_LEN + c == tail_len)
        })?;
    let eocd_at = tail_start + eocd as u64;
    let mut entries = le(&tail, eocd + 10, 2)?;
    let mut cd_size = le(&tail, eocd + 12, 4)?;
    let mut cd_offset = le(&tail, eocd + 16, 4)?;
    // The directory ends where the EOCD (or the zip64 records before it) begins.
    let mut cd_end = eocd_at;
    if cd_offset == 0xffff_ffff || cd_size == 0xffff_ffff || entries == 0xffff {
        let loc_at = eocd_at.checked_sub(20)?;
        let mut loc = [0u8; 20];
        read_at(reader, size, loc_at, &mut loc).ok()?;
        if &loc[..4] != ZIP64_LOCATOR_SIG {
            return None;
        }
        let rec_at = loc_at.checked_sub(56)?;
        let mut rec = [0u8; 56];
        read_at(reader, size, rec_at, &mut rec).ok()?;
        if &rec[..4] != ZIP64_EOCD_SIG {
            return None;
        }
        entries = le(&rec, 32, 8)?;
        cd_size = le(&rec, 40, 8)?;
        cd_offset = le(&rec, 48, 8)?;
        cd_end = rec_at;
    }
    if entries == 0 {
        return None;
    }
    let cd_at = cd_end.checked_sub(cd_size)?;
    // zipfile's "concat": bytes in front of the zip that its own offsets do not count.
    let concat = cd_at.checked_sub(cd_offset)?;
    let mut entry = [0u8; CENTRAL_LEN];
    read_at(reader, size, cd_at, &mut entry).ok()?;
    if &entry[..4] != CENTRAL_SIG {
        return None;
    }
    let name_len = usize::try_from(le(&entry, 28, 2)?).ok()?;
    if CENTRAL_LEN as u64 + name_len as u64 > cd_size {
        return None;
    }
    let local_at = concat.checked_add(le(&entry, 42, 4)?)?;
    let mut local = [0u8; 4];
    read_at(reader, size, local_at, &mut local).ok()?;
    if &local != LOCAL_SIG {
        return None;
    }
    let mut name = vec![0u8; name_len.min(256)];
    read_at(reader, size, cd_at + CENTRAL_LEN as u64, &mut name).ok()?;
    let first = String::from_utf8_lossy(&name).into_owned();
    Some(
        Problem::new(
            ProblemKind::Unsafe,
            "polyglot",
            format!(
                "the file is also a zip archive: end-of-central-directory at offset {eocd_at}, {entries} entr{} from offset {concat} (first `{}`); renamed, the same bytes load with zipfile/torch.load",
                if entries == 1 { "y" } else { "ies" },
                super::problem::excerpt(&first, 100)
            ),
            Some(eocd_at),
        )
        .with("polyglot", "zip")
        .with("offset", concat.to_string())
        .with("member", super::problem::excerpt(&first, 200)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn run(bytes: &[u8]) -> Vec<Problem> {
        check(
            &mut Cursor::new(bytes.to_vec()),
            bytes.len() as u64,
            &hdf5::Limits::default(),
        )
    }

    /// A stored zip of one member, offsets relative to its own start.
    fn zip_one(name: &str, data: &[u8]) -> Vec<u8> {
        let crc = crc32fast::hash(data);
        let len = (data.len() as u32).to_le_bytes();
        let name_len = (name.len() as u16).to_le_bytes();
        let mut out = LOCAL_SIG.to_vec();
        out.extend([20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend(crc.to_le_bytes());
        out.extend(len);
        out.extend(len);
        out.extend(name_len);
        out.extend([0, 0]);
        out.extend(name.as_bytes());
        out.extend(data);
        let cd_offset = out.len() as u32;
        let mut central = CENTRAL_SIG.to_vec();
        central.extend([20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend(crc.to_le_bytes());
        central.extend(len);
        central.extend(len);
        central.extend(name_len);
        central.extend([0u8; 12]);
        central.extend(0u32.to_le_bytes());
        central.extend(name.as_bytes());
        out.extend(&central);
        out.extend(EOCD_SIG);
        out.extend([0, 0, 0, 0, 1, 0, 1, 0]);
        out.extend((central.len() as u32).to_le_bytes());
        out.extend(cd_offset.to_le_bytes());
        out.extend([0, 0]);
        out
    }

    fn weights(data: &[u8]) -> Vec<u8> {
        let header = format!(
            r#"{{"w":{{"dtype":"U8","shape":[{}],"data_offsets":[0,{}]}}}}"#,
            data.len(),
            data.len()
        );
        let mut header = header.into_bytes();
        while header.len() % 8 != 0 {
            header.push(b' ');
        }
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend(header);
        out.extend(data);
        out
    }

    #[test]
    fn finds_zip_at_the_end_of_tensor_data() {
        let zip = zip_one("archive/data.pkl", b"\x80\x02}q\x00.");
        let mut data = vec![7u8; 100];
        data.extend(&zip);
        let file = weights(&data);
        let problems = run(&file);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].code, "polyglot");
        assert_eq!(problems[0].detail("polyglot"), Some("zip"));
        assert_eq!(problems[0].detail("member"), Some("archive/data.pkl"));
        let start = (file.len() - zip.len()).to_string();
        assert_eq!(problems[0].detail("offset"), Some(start.as_str()));
    }

    #[test]
    fn a_bare_eocd_magic_in_tensor_data_is_not_a_zip() {
        // The 22 bytes of an empty zip's EOCD, and one that claims an entry nowhere.
        let mut data = vec![1u8; 64];
        data.extend(b"PK\x05\x06\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
        assert!(run(&weights(&data)).is_empty());
        let mut data = vec![1u8; 64];
        data.extend(b"PK\x05\x06\0\0\0\0\x01\0\x01\0\x2e\0\0\0\x05\0\0\0\0\0");
        assert!(run(&weights(&data)).is_empty());
    }

    #[test]
    fn finds_hdf5_superblock_at_a_user_block_boundary() {
        let h5 = hdf5::tests::h5_file(
            0,
            &[hdf5::tests::string_attribute(
                "model_config",
                br#"{"class_name": "Sequential", "config": {"layers": [{"class_name": "Lambda", "config": {"name": "evil", "function": ["AA==", null, null]}}]}}"#,
            )],
        );
        // Pad the tensor data so that the HDF5 file starts at offset 512.
        let mut pad = 0;
        let file = loop {
            let mut data = vec![0u8; pad];
            data.extend(&h5);
            let file = weights(&data);
            let start = file.len() - data.len();
            if start + pad == 512 {
                break file;
            }
            pad = 512 - start;
        };
        check_hdf5_polyglot(&file);
    }

    fn check_hdf5_polyglot(file: &[u8]) {
        let problems = run(file);
        let codes: Vec<&str> = problems.iter().map(|p| p.code).collect();
        assert_eq!(codes, ["polyglot", "lambda-layer"], "{problems:?}");
        assert_eq!(problems[0].detail("polyglot"), Some("hdf5"));
        assert_eq!(problems[0].detail("offset"), Some("512"));
    }

    #[test]
    fn a_bare_hdf5_signature_in_tensor_data_is_not_hdf5() {
        let file = weights(&[0u8; 2048]);
        for at in [512usize, 1024, 2048] {
            if at + 8 <= file.len() {
                let mut f = file.clone();
                f[at..at + 8].copy_from_slice(b"\x89HDF\r\n\x1a\n");
                assert!(run(&f).is_empty(), "signature at {at}");
            }
        }
    }

    #[test]
    fn random_tensor_bytes_are_not_polyglots() {
        // A deterministic xorshift stream: tensor data of every byte value.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let data: Vec<u8> = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        assert!(run(&weights(&data)).is_empty());
    }

    proptest::proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)) {
            let _ = run(&bytes);
        }
    }
}
