//! Header mode's range planning and the bounded range reader: `inspect::ranged::scan_ranges`
//! over an in-memory file (the first byte picks the name, so zip central directories, safetensors
//! headers, GGUF, HDF5 and TFLite structures, ONNX and TensorFlow protobuf walks (jumping over
//! skipped payloads) and the polyglot probes are all planned from ranges; the second picks how
//! the "server" behaves), and `inspect::blocks::Blocks` reads at positions the input chooses,
//! checked against the bytes.
#![no_main]

use std::cell::RefCell;
use std::io::{self, Read, Seek, SeekFrom};

use libfuzzer_sys::fuzz_target;
use modelgate::inspect::ScanConfig;
use modelgate::inspect::blocks::Blocks;
use modelgate::inspect::ranged::{RangeSource, scan_ranges};
use modelgate::inspect::read::Reopen;

const NAMES: [&str; 8] = [
    "model.pt",
    "model.safetensors",
    "model.gguf",
    "model.h5",
    "model.tflite",
    "model.keras",
    "model.onnx",
    "saved_model.pb",
];

/// A file in memory; `mode` 0 serves honestly, 1 sends short bodies, 2 ignores the range.
struct Mem<'a> {
    bytes: &'a [u8],
    mode: u8,
}

impl RangeSource for Mem<'_> {
    fn read_at(&mut self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let size = self.bytes.len() as u64;
        let (a, b) = match self.mode {
            1 => (offset, offset.saturating_add(len / 2)),
            2 => (0, size),
            _ => (offset, offset.saturating_add(len)),
        };
        let b = usize::try_from(b.min(size)).unwrap_or(usize::MAX);
        let a = usize::try_from(a.min(size)).unwrap_or(usize::MAX).min(b);
        Ok(self.bytes[a..b].to_vec())
    }
}

fuzz_target!(|data: &[u8]| {
    let [pick, mode, file @ ..] = data else {
        return;
    };
    let name = NAMES[usize::from(*pick) % NAMES.len()];
    let size = file.len() as u64;
    let mut src = Mem {
        bytes: file,
        mode: mode % 3,
    };
    let _ = scan_ranges(&mut src, name, size, &ScanConfig::default());

    // Positioned reads at offsets taken from the input, against the bytes themselves.
    let mut honest = Mem {
        bytes: file,
        mode: 0,
    };
    let cell = RefCell::new(Blocks::new(&mut honest, size, 1 << 20, 64));
    let Ok(mut r) = cell.reopen("fuzz") else {
        return;
    };
    for pair in file.chunks_exact(4).take(32) {
        let at = u64::from(u16::from_le_bytes([pair[0], pair[1]])) % (size + 1);
        let len = usize::from(pair[2]) * 64 + usize::from(pair[3]);
        let mut buf = vec![0u8; len];
        if r.seek(SeekFrom::Start(at)).is_err() {
            break;
        }
        let Ok(n) = r.read(&mut buf) else {
            break;
        };
        let at = usize::try_from(at).unwrap_or(usize::MAX);
        assert_eq!(&buf[..n], &file[at..at + n]);
    }
});
