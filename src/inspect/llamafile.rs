//! llamafile (Mozilla-Ocho/llamafile): one file that is both a native executable and a model.
//! The executable is an Actually Portable Executable (a PE/ELF/Mach-O polyglot built with
//! Cosmopolitan) or a plain ELF/PE/Mach-O, and a zip archive is appended to it: the program's own
//! assets, `.args`, and the weights as a `.gguf` member stored uncompressed and aligned (by
//! `zipalign`) so the program maps them in place. Large weights need zip64 records.
//!
//! So a llamafile is judged twice: as native code (the executable image, the bytes before the
//! zip's first member, read by `inspect::native`: SRC007) and as a GGUF (each stored `.gguf`
//! member read by `inspect::gguf`: FMT005 for its chat template, FMT007/FMT009 for its header).
//! This module finds the archive from the file's end with positioned reads of small structures
//! (the end records and the central directory, bounded by the zip limits) and says where the
//! image ends and where each GGUF lies; it reads no member data.

use std::io::{Read, Seek, SeekFrom};

use serde::Serialize;

use super::problem::{Problem, ProblemKind, excerpt};

/// One `.gguf` member: its name, where its data starts and how long it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Embedded {
    /// The member's name in the zip.
    pub member: String,
    /// File offset of its first byte.
    pub offset: u64,
    /// Its length in bytes.
    pub size: u64,
}

/// What the appended zip says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Layout {
    /// Bytes of the executable image (before the zip's first member).
    pub executable_bytes: u64,
    /// Members of the appended zip.
    pub zip_members: u64,
    /// The stored `.gguf` members.
    pub ggufs: Vec<Embedded>,
}

/// Bounds: the zip limits' central directory size and member count.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest central directory read.
    pub max_cd_bytes: u64,
    /// Most central directory records read.
    pub max_members: usize,
}

impl From<&crate::model::limits::Limits> for Limits {
    fn from(l: &crate::model::limits::Limits) -> Self {
        let z = super::zip::Limits::from(l);
        Self {
            max_cd_bytes: z.max_cd_bytes,
            max_members: z.max_members,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from(&crate::model::limits::Limits::default())
    }
}

fn read_at<R: Read + Seek>(r: &mut R, at: u64, len: u64, size: u64) -> Result<Vec<u8>, Problem> {
    at.checked_add(len).filter(|&e| e <= size).ok_or_else(|| {
        Problem::new(
            ProblemKind::Exploit,
            "zip-offset-past-end",
            format!("llamafile: the appended zip points at {len} bytes at offset {at}, past the end of the file ({size} bytes)"),
            Some(at),
        )
    })?;
    let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
    r.seek(SeekFrom::Start(at))
        .and_then(|_| r.read_exact(&mut buf))
        .map_err(|e| {
            Problem::new(
                ProblemKind::Malformed,
                "read-error",
                format!("llamafile: read error at offset {at}: {e}"),
                Some(at),
            )
        })?;
    Ok(buf)
}

fn le16(b: &[u8], i: usize) -> u64 {
    b.get(i..i + 2)
        .map_or(0, |x| u64::from(u16::from_le_bytes([x[0], x[1]])))
}

/// Finds the zip appended to a native executable of `size` bytes and its `.gguf` members.
/// `Ok(None)`: no zip, or a zip without a GGUF (a plain executable, a self-extractor). Problems
/// that say the archive is broken or points outside the file come with the layout found so far.
pub fn probe<R: Read + Seek>(
    r: &mut R,
    size: u64,
    limits: &Limits,
) -> (Option<Layout>, Vec<Problem>) {
    match probe_inner(r, size, limits) {
        Ok((layout, problems)) => (layout, problems),
        Err(p) => (None, vec![p]),
    }
}

fn probe_inner<R: Read + Seek>(
    r: &mut R,
    size: u64,
    limits: &Limits,
) -> Result<(Option<Layout>, Vec<Problem>), Problem> {
    let tail_len = size.min(super::zip::TAIL_LEN);
    let tail_at = size - tail_len;
    let tail = read_at(r, tail_at, tail_len, size)?;
    let Some(end) = super::zip::end_record(&tail, tail_at) else {
        return Ok((None, Vec::new()));
    };
    let (mut cd_size, mut cd_offset, mut end_of_cd) = (end.cd_size, end.cd_offset, end.at);
    if let Some(z_at) = end.zip64_at {
        let z = read_at(r, z_at, 56, size)?;
        (cd_size, cd_offset) = super::zip::zip64_end(&z).ok_or_else(|| {
            Problem::new(
                ProblemKind::Malformed,
                "zip64-locator",
                "llamafile: the zip64 locator does not point at a zip64 end record",
                Some(z_at),
            )
        })?;
        end_of_cd = z_at;
    }
    if cd_size > limits.max_cd_bytes {
        return Err(Problem::new(
            ProblemKind::LimitExceeded,
            "central-directory-too-large",
            format!(
                "llamafile: central directory of {cd_size} bytes, over the {}-byte limit",
                limits.max_cd_bytes
            ),
            Some(end_of_cd),
        ));
    }
    let Some(cd_start) = end_of_cd.checked_sub(cd_size) else {
        return Err(Problem::new(
            ProblemKind::Exploit,
            "zip-offset-past-end",
            format!(
                "llamafile: a central directory of {cd_size} bytes would start before the file"
            ),
            Some(end_of_cd),
        ));
    };
    // The archive's own offsets count from its start; bytes in front of it shift them (zipalign
    // writes file offsets, so the shift is usually 0).
    let base = cd_start.saturating_sub(cd_offset);
    let cd = read_at(r, cd_start, cd_size, size)?;
    let entries = super::zip::parse_central_directory(&cd, limits.max_members);
    let mut layout = Layout {
        executable_bytes: cd_start,
        zip_members: entries.len() as u64,
        ggufs: Vec::new(),
    };
    let mut problems = Vec::new();
    for e in &entries {
        let local = base.saturating_add(e.fields.local_offset);
        layout.executable_bytes = layout.executable_bytes.min(local);
        if !e.name.to_ascii_lowercase().ends_with(".gguf") {
            continue;
        }
        let name = excerpt(&e.name, 200);
        if e.fields.method != 0 {
            problems.push(
                Problem::new(
                    ProblemKind::Malformed,
                    "compressed-gguf",
                    format!("llamafile: `{name}` is compressed (method {}); llamafile maps weights stored uncompressed, so it was not read", e.fields.method),
                    Some(local),
                )
                .with("member", name.clone()),
            );
            continue;
        }
        let h = match read_at(r, local, 30, size) {
            Ok(h) if h.starts_with(b"PK\x03\x04") => h,
            Ok(_) => {
                problems.push(
                    Problem::new(
                        ProblemKind::Malformed,
                        "bad-local-header",
                        format!("llamafile: no local header for `{name}` at offset {local}"),
                        Some(local),
                    )
                    .with("member", name.clone()),
                );
                continue;
            }
            Err(p) => {
                problems.push(p.with("member", name.clone()));
                continue;
            }
        };
        let offset = local + 30 + le16(&h, 26) + le16(&h, 28);
        let len = e.fields.csize;
        if offset.checked_add(len).is_none_or(|end| end > size) {
            problems.push(
                Problem::new(
                    ProblemKind::Exploit,
                    "member-past-end",
                    format!(
                        "llamafile: `{name}` declares {len} bytes at offset {offset}, past the end of the file ({size} bytes)"
                    ),
                    Some(offset),
                )
                .with("member", name.clone()),
            );
            continue;
        }
        layout.ggufs.push(Embedded {
            member: e.name.clone(),
            offset,
            size: len,
        });
    }
    if layout.ggufs.is_empty() && problems.is_empty() {
        return Ok((None, Vec::new()));
    }
    Ok((Some(layout), problems))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A stored zip member list appended to `exe`, offsets counted from the file's start.
    pub(crate) fn append_zip(exe: &[u8], members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = exe.to_vec();
        let mut central = Vec::new();
        for (name, data) in members {
            let local = out.len() as u32;
            out.extend_from_slice(b"PK\x03\x04");
            out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            out.extend_from_slice(&0u32.to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(data);
            central.extend_from_slice(b"PK\x01\x02");
            central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
            central.extend_from_slice(&0u32.to_le_bytes());
            central.extend_from_slice(&(data.len() as u32).to_le_bytes());
            central.extend_from_slice(&(data.len() as u32).to_le_bytes());
            central.extend_from_slice(&(name.len() as u16).to_le_bytes());
            central.extend_from_slice(&[0u8; 12]);
            central.extend_from_slice(&local.to_le_bytes());
            central.extend_from_slice(name.as_bytes());
        }
        let cd_at = out.len() as u32;
        out.extend_from_slice(&central);
        out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
        out.extend_from_slice(&(members.len() as u16).to_le_bytes());
        out.extend_from_slice(&(members.len() as u16).to_le_bytes());
        out.extend_from_slice(&(central.len() as u32).to_le_bytes());
        out.extend_from_slice(&cd_at.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }

    fn run(bytes: &[u8]) -> (Option<Layout>, Vec<Problem>) {
        probe(
            &mut Cursor::new(bytes),
            bytes.len() as u64,
            &Limits::default(),
        )
    }

    #[test]
    fn finds_the_stored_gguf_and_the_image_end() {
        let exe = b"\x7fELF executable image bytes".to_vec();
        let f = append_zip(&exe, &[(".args", b"-m\nm.gguf\n"), ("m.gguf", b"GGUF....")]);
        let (l, p) = run(&f);
        assert!(p.is_empty(), "{p:?}");
        let l = l.unwrap();
        assert_eq!(l.executable_bytes, exe.len() as u64);
        assert_eq!(l.zip_members, 2);
        assert_eq!(l.ggufs.len(), 1);
        let g = &l.ggufs[0];
        assert_eq!(&f[g.offset as usize..][..4], b"GGUF");
        assert_eq!(g.size, 8);
    }

    #[test]
    fn no_zip_or_no_gguf_is_a_plain_executable() {
        assert_eq!(run(b"\x7fELF just code").0, None);
        let f = append_zip(b"\x7fELF", &[(".args", b"-m x")]);
        assert_eq!(run(&f), (None, Vec::new()));
    }

    #[test]
    fn member_past_the_end_is_an_exploit_shape() {
        let mut f = append_zip(b"\x7fELF", &[("m.gguf", b"GGUF....")]);
        // The central record's compressed size.
        let cd = f.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
        f[cd + 20..cd + 24].copy_from_slice(&u32::MAX.to_le_bytes());
        let (l, p) = run(&f);
        assert!(l.is_some());
        assert!(
            matches!(p.as_slice(), [q] if q.code == "member-past-end" && q.kind == ProblemKind::Exploit),
            "{p:?}"
        );
    }

    /// A zip64 archive appended to `exe` (what `zipalign` writes for weights over 4 GiB): the
    /// central record's sizes and offset saturated, their values in the zip64 extra field, the
    /// zip64 end record and its locator before the classic end record.
    fn append_zip64(exe: &[u8], name: &str, data: &[u8]) -> Vec<u8> {
        let mut out = exe.to_vec();
        let local = out.len() as u64;
        out.extend_from_slice(b"PK\x03\x04");
        out.extend_from_slice(&[45, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&u32::MAX.to_le_bytes());
        out.extend_from_slice(&u32::MAX.to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&16u16.to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(data);
        let cd_at = out.len() as u64;
        let mut cd = b"PK\x01\x02".to_vec();
        cd.extend_from_slice(&[45, 3, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        cd.extend_from_slice(&0u32.to_le_bytes());
        cd.extend_from_slice(&u32::MAX.to_le_bytes());
        cd.extend_from_slice(&u32::MAX.to_le_bytes());
        cd.extend_from_slice(&(name.len() as u16).to_le_bytes());
        cd.extend_from_slice(&28u16.to_le_bytes());
        // Comment length, disk, internal and external attributes.
        cd.extend_from_slice(&[0u8; 10]);
        cd.extend_from_slice(&u32::MAX.to_le_bytes());
        cd.extend_from_slice(name.as_bytes());
        cd.extend_from_slice(&1u16.to_le_bytes());
        cd.extend_from_slice(&24u16.to_le_bytes());
        cd.extend_from_slice(&(data.len() as u64).to_le_bytes());
        cd.extend_from_slice(&(data.len() as u64).to_le_bytes());
        cd.extend_from_slice(&local.to_le_bytes());
        out.extend_from_slice(&cd);
        let z_at = out.len() as u64;
        out.extend_from_slice(b"PK\x06\x06");
        out.extend_from_slice(&44u64.to_le_bytes());
        out.extend_from_slice(&[45, 3, 45, 0]);
        out.extend_from_slice(&[0u8; 8]);
        out.extend_from_slice(&1u64.to_le_bytes());
        out.extend_from_slice(&1u64.to_le_bytes());
        out.extend_from_slice(&(cd.len() as u64).to_le_bytes());
        out.extend_from_slice(&cd_at.to_le_bytes());
        out.extend_from_slice(b"PK\x06\x07");
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&z_at.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
        out.extend_from_slice(&u16::MAX.to_le_bytes());
        out.extend_from_slice(&u16::MAX.to_le_bytes());
        out.extend_from_slice(&u32::MAX.to_le_bytes());
        out.extend_from_slice(&u32::MAX.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out
    }

    #[test]
    fn reads_zip64_records() {
        let exe = b"\x7fELF image".to_vec();
        let f = append_zip64(&exe, "big.gguf", b"GGUF1234");
        let (l, p) = run(&f);
        assert!(p.is_empty(), "{p:?}");
        let l = l.unwrap();
        assert_eq!(l.executable_bytes, exe.len() as u64);
        let g = &l.ggufs[0];
        assert_eq!(g.size, 8);
        assert_eq!(&f[g.offset as usize..][..8], b"GGUF1234");
    }

    #[test]
    fn compressed_gguf_is_reported_not_read() {
        let mut f = append_zip(b"\x7fELF", &[("m.gguf", b"GGUF....")]);
        let cd = f.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
        f[cd + 10] = 8;
        let (l, p) = run(&f);
        assert!(l.is_some_and(|l| l.ggufs.is_empty()));
        assert!(
            matches!(p.as_slice(), [q] if q.code == "compressed-gguf"),
            "{p:?}"
        );
    }

    #[test]
    fn central_directory_outside_the_file_is_reported() {
        let mut f = append_zip(b"\x7fELF", &[("m.gguf", b"GGUF....")]);
        let n = f.len();
        // The end record's central directory size.
        f[n - 10..n - 6].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
        let (l, p) = run(&f);
        assert!(l.is_none());
        assert!(
            matches!(p.as_slice(), [q] if q.code == "zip-offset-past-end" || q.kind == ProblemKind::LimitExceeded),
            "{p:?}"
        );
    }
}
