//! A tiny zip writer for the parser's unit tests: every field can be bent to build a malformed
//! archive byte by byte, plus helpers that walk the result and collect what the callback saw.

use std::io::{self, BufRead, Write};

use super::*;

pub(super) fn deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

pub(super) fn crc(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// One entry for the tiny test zip writer; every field can be bent to build a malformed
/// archive byte by byte.
#[derive(Clone)]
pub(super) struct E {
    pub(super) name: Vec<u8>,
    pub(super) data: Vec<u8>,
    pub(super) method: u16,
    /// `Some(with_signature)`: sizes and CRC go in a data descriptor.
    pub(super) descriptor: Option<bool>,
    pub(super) zip64: bool,
    pub(super) local: bool,
    pub(super) in_cd: bool,
    pub(super) flags: u16,
    pub(super) crc_override: Option<u32>,
    pub(super) cd_name: Option<Vec<u8>>,
    pub(super) cd_crc: Option<u32>,
    pub(super) cd_offset: Option<u64>,
}

pub(super) fn e(name: &str, data: &[u8]) -> E {
    E {
        name: name.as_bytes().to_vec(),
        data: data.to_vec(),
        method: METHOD_STORED,
        descriptor: None,
        zip64: false,
        local: true,
        in_cd: true,
        flags: 0,
        crc_override: None,
        cd_name: None,
        cd_crc: None,
        cd_offset: None,
    }
}

impl E {
    pub(super) fn deflated(mut self) -> Self {
        self.method = METHOD_DEFLATE;
        self
    }
    pub(super) fn descriptor(mut self, with_sig: bool) -> Self {
        self.descriptor = Some(with_sig);
        self
    }
    pub(super) fn zip64(mut self) -> Self {
        self.zip64 = true;
        self
    }
}

pub(super) struct Zip {
    pub(super) out: Vec<u8>,
    pub(super) cd: Vec<(E, u64, u32, u64, u64)>,
    pub(super) base: u64,
}

impl Zip {
    pub(super) fn new() -> Self {
        Zip {
            out: Vec::new(),
            cd: Vec::new(),
            base: 0,
        }
    }

    pub(super) fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.out.extend_from_slice(b);
        self
    }

    pub(super) fn add(&mut self, en: E) -> &mut Self {
        let offset = self.out.len() as u64 - self.base;
        let payload = match en.method {
            METHOD_DEFLATE => deflate(&en.data),
            METHOD_BZIP2 => {
                let mut w = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
                w.write_all(&en.data).unwrap();
                w.finish().unwrap()
            }
            _ => en.data.clone(),
        };
        let c = en.crc_override.unwrap_or(crc(&en.data));
        let (cs, us) = (payload.len() as u64, en.data.len() as u64);
        if en.local {
            let o = &mut self.out;
            let dd = en.descriptor.is_some();
            o.extend_from_slice(&SIG_LOCAL);
            o.extend_from_slice(&(if en.zip64 { 45u16 } else { 20 }).to_le_bytes());
            o.extend_from_slice(&(en.flags | if dd { FLAG_DESCRIPTOR } else { 0 }).to_le_bytes());
            o.extend_from_slice(&en.method.to_le_bytes());
            o.extend_from_slice(&[0; 4]);
            let (hc, hcs, hus) = if dd { (0, 0, 0) } else { (c, cs, us) };
            o.extend_from_slice(&hc.to_le_bytes());
            if en.zip64 {
                o.extend_from_slice(&U32_MAX.to_le_bytes());
                o.extend_from_slice(&U32_MAX.to_le_bytes());
            } else {
                o.extend_from_slice(&(hcs as u32).to_le_bytes());
                o.extend_from_slice(&(hus as u32).to_le_bytes());
            }
            o.extend_from_slice(&(en.name.len() as u16).to_le_bytes());
            o.extend_from_slice(&(if en.zip64 { 20u16 } else { 0 }).to_le_bytes());
            o.extend_from_slice(&en.name);
            if en.zip64 {
                o.extend_from_slice(&ZIP64_EXTRA_ID.to_le_bytes());
                o.extend_from_slice(&16u16.to_le_bytes());
                o.extend_from_slice(&hus.to_le_bytes());
                o.extend_from_slice(&hcs.to_le_bytes());
            }
            o.extend_from_slice(&payload);
            if let Some(sig) = en.descriptor {
                if sig {
                    o.extend_from_slice(&SIG_DESCRIPTOR);
                }
                o.extend_from_slice(&c.to_le_bytes());
                if en.zip64 {
                    o.extend_from_slice(&cs.to_le_bytes());
                    o.extend_from_slice(&us.to_le_bytes());
                } else {
                    o.extend_from_slice(&(cs as u32).to_le_bytes());
                    o.extend_from_slice(&(us as u32).to_le_bytes());
                }
            }
        }
        if en.in_cd {
            let off = en.cd_offset.unwrap_or(offset);
            let c = en.cd_crc.unwrap_or(c);
            self.cd.push((en, off, c, cs, us));
        }
        self
    }

    pub(super) fn finish(&mut self) -> Vec<u8> {
        self.finish_with(b"")
    }

    pub(super) fn finish_with(&mut self, comment: &[u8]) -> Vec<u8> {
        let cd_start = self.out.len() as u64 - self.base;
        let any64 = self.cd.iter().any(|c| c.0.zip64);
        for (en, off, c, cs, us) in &self.cd {
            let o = &mut self.out;
            let dd = en.descriptor.is_some();
            let name = en.cd_name.clone().unwrap_or(en.name.clone());
            o.extend_from_slice(&SIG_CENTRAL);
            o.extend_from_slice(&[20, 3, 20, 0]);
            o.extend_from_slice(&(en.flags | if dd { FLAG_DESCRIPTOR } else { 0 }).to_le_bytes());
            o.extend_from_slice(&en.method.to_le_bytes());
            o.extend_from_slice(&[0; 4]);
            o.extend_from_slice(&c.to_le_bytes());
            if en.zip64 {
                o.extend_from_slice(&[0xff; 8]);
            } else {
                o.extend_from_slice(&(*cs as u32).to_le_bytes());
                o.extend_from_slice(&(*us as u32).to_le_bytes());
            }
            o.extend_from_slice(&(name.len() as u16).to_le_bytes());
            o.extend_from_slice(&(if en.zip64 { 28u16 } else { 0 }).to_le_bytes());
            o.extend_from_slice(&[0; 10]);
            if en.zip64 {
                o.extend_from_slice(&U32_MAX.to_le_bytes());
            } else {
                o.extend_from_slice(&(*off as u32).to_le_bytes());
            }
            o.extend_from_slice(&name);
            if en.zip64 {
                o.extend_from_slice(&ZIP64_EXTRA_ID.to_le_bytes());
                o.extend_from_slice(&24u16.to_le_bytes());
                o.extend_from_slice(&us.to_le_bytes());
                o.extend_from_slice(&cs.to_le_bytes());
                o.extend_from_slice(&off.to_le_bytes());
            }
        }
        let cd_size = self.out.len() as u64 - self.base - cd_start;
        let n = self.cd.len() as u64;
        if any64 {
            let z64 = self.out.len() as u64 - self.base;
            let o = &mut self.out;
            o.extend_from_slice(&SIG_ZIP64_EOCD);
            o.extend_from_slice(&44u64.to_le_bytes());
            o.extend_from_slice(&[45, 0, 45, 0]);
            o.extend_from_slice(&[0; 8]);
            o.extend_from_slice(&n.to_le_bytes());
            o.extend_from_slice(&n.to_le_bytes());
            o.extend_from_slice(&cd_size.to_le_bytes());
            o.extend_from_slice(&cd_start.to_le_bytes());
            o.extend_from_slice(&SIG_ZIP64_LOCATOR);
            o.extend_from_slice(&[0; 4]);
            o.extend_from_slice(&z64.to_le_bytes());
            o.extend_from_slice(&1u32.to_le_bytes());
        }
        let o = &mut self.out;
        o.extend_from_slice(&SIG_EOCD);
        o.extend_from_slice(&[0; 4]);
        let n16 = if any64 { U16_MAX } else { n as u16 };
        o.extend_from_slice(&n16.to_le_bytes());
        o.extend_from_slice(&n16.to_le_bytes());
        if any64 {
            o.extend_from_slice(&[0xff; 8]);
        } else {
            o.extend_from_slice(&(cd_size as u32).to_le_bytes());
            o.extend_from_slice(&(cd_start as u32).to_le_bytes());
        }
        o.extend_from_slice(&(comment.len() as u16).to_le_bytes());
        o.extend_from_slice(comment);
        self.out.clone()
    }
}

pub(super) type Seen = Vec<(String, Vec<u8>, bool)>;

pub(super) fn run_with(bytes: &[u8], limits: &Limits, cap: usize) -> (ZipReport, Seen) {
    let mut seen = Vec::new();
    let mut r = io::BufReader::with_capacity(cap, bytes);
    let report = walk(&mut r, bytes.len() as u64, 0, limits, &mut |m, s| {
        let mut buf = Vec::new();
        let ok = s.read_to_end(&mut buf).is_ok();
        seen.push((m.name.clone(), buf, ok));
    });
    assert!(
        r.fill_buf().unwrap().is_empty(),
        "walk must read to the end"
    );
    (report, seen)
}

pub(super) fn run(bytes: &[u8]) -> (ZipReport, Seen) {
    run_with(bytes, &Limits::default(), 8192)
}

pub(super) fn codes(r: &ZipReport) -> Vec<&'static str> {
    r.problems.iter().map(|p| p.code).collect()
}

pub(super) const PICKLE: &[u8] = b"\x80\x02}q\x00.";

pub(super) fn torch_zip(extra: bool) -> Vec<u8> {
    let mut z = Zip::new();
    z.add(e("archive/data.pkl", PICKLE))
        .add(e("archive/byteorder", b"little"))
        .add(e("archive/data/0", &[0u8; 64]))
        .add(e("archive/version", b"3\n"))
        .add(e("archive/.data/serialization_id", b"123"));
    if extra {
        z.add(e("archive/evil.pkl", b"\x80\x04cos\nsystem\n."));
    }
    z.finish()
}
