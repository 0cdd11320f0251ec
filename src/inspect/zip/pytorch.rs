//! Which well-known model layout an archive's member names follow: the PyTorch `torch.save` /
//! TorchScript `torch.jit.save` folder layout (`<archive>/data.pkl`, `data/<key>`, `version`,
//! `code/`, `constants.pkl`, ...), and the Keras v3 and NumPy `.npz` name sets that share the
//! zip container. Names only: the content is inspected elsewhere.

use super::format::Member;

/// Which well-known model layout an archive's member names follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// `torch.save` zip (or TorchScript `torch.jit.save`) layout under one top-level folder.
    PyTorch(TorchLayout),
    /// Keras v3 `.keras` archive.
    Keras {
        /// Members outside the expected set.
        unexpected: Vec<String>,
    },
    /// NumPy `.npz`: every member is a `.npy` file.
    Npz {
        /// Number of arrays.
        arrays: usize,
    },
}

/// Details of a PyTorch zip layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TorchLayout {
    /// The top-level folder name (`archive` for recent torch versions, the file stem before).
    pub archive: String,
    /// `code/` or `constants.pkl` present: a TorchScript archive.
    pub torchscript: bool,
    /// Pickle members the loader unpickles (`data.pkl`, `constants.pkl`).
    pub pickles: Vec<String>,
    /// Members outside the layout (extra pickles, files outside the folder, ...).
    pub unexpected: Vec<String>,
}

/// Recognises PyTorch, Keras v3 and npz layouts from member names.
pub fn classify_pytorch(members: &[Member]) -> Option<Layout> {
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    if let Some(l) = classify_torch(&names) {
        return Some(Layout::PyTorch(l));
    }
    let keras_core = ["config.json", "metadata.json", "model.weights.h5"];
    if keras_core.iter().all(|k| names.contains(k)) {
        let unexpected = names
            .iter()
            .filter(|n| !keras_core.contains(n) && !n.starts_with("assets/"))
            .map(|n| (*n).to_string())
            .collect();
        return Some(Layout::Keras { unexpected });
    }
    if !names.is_empty() && names.iter().all(|n| n.ends_with(".npy")) {
        return Some(Layout::Npz {
            arrays: names.len(),
        });
    }
    None
}

/// Members of a TorchScript archive that hold the Python source `torch.jit.load` compiles and
/// runs: every file (not folder entry) with a `code/` path component, wherever it sits, so a
/// code file outside the archive folder is listed too.
pub fn torchscript_code(members: &[Member]) -> impl Iterator<Item = &str> {
    members
        .iter()
        .filter(|m| m.name.contains("/code/") && !m.name.ends_with('/'))
        .map(|m| m.name.as_str())
}

/// The archive folder of a PyTorch storage record name, `<archive>/data/<key>` as `torch.save`
/// writes it (one top-level folder, a non-empty alphanumeric key); `None` for any other name.
pub fn storage_archive(name: &str) -> Option<&str> {
    let (archive, key) = name.split_once("/data/")?;
    let plain = !archive.is_empty()
        && !archive.contains('/')
        && !key.is_empty()
        && key.bytes().all(|b| b.is_ascii_alphanumeric());
    plain.then_some(archive)
}

fn classify_torch(names: &[&str]) -> Option<TorchLayout> {
    let data_pkl = names.iter().find_map(|n| {
        n.strip_suffix("/data.pkl")
            .filter(|a| !a.is_empty() && !a.contains('/'))
    })?;
    let archive = data_pkl.to_string();
    let prefix = format!("{archive}/");
    let mut torchscript = false;
    let mut pickles = Vec::new();
    let mut unexpected = Vec::new();
    for name in names {
        let Some(rest) = name.strip_prefix(&prefix) else {
            unexpected.push((*name).to_string());
            continue;
        };
        let expected = match rest {
            "data.pkl" | "constants.pkl" => {
                pickles.push((*name).to_string());
                torchscript |= rest == "constants.pkl";
                true
            }
            "version"
            | ".data/version"
            | "byteorder"
            | ".data/serialization_id"
            | ".format_version"
            | ".storage_alignment" => true,
            _ if rest.starts_with("code/")
                || rest.starts_with("constants/")
                || rest.starts_with("extra/") =>
            {
                torchscript |= rest.starts_with("code/");
                true
            }
            _ => rest
                .strip_prefix("data/")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())),
        };
        if !expected {
            unexpected.push((*name).to_string());
        }
    }
    Some(TorchLayout {
        archive,
        torchscript,
        pickles,
        unexpected,
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::super::{Limits, walk};
    use super::*;

    #[test]
    fn walks_pytorch_layout_and_flags_extra_member() {
        let (r, seen) = run(&torch_zip(true));
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[0], ("archive/data.pkl".into(), PICKLE.to_vec(), true));
        assert!(
            r.members
                .iter()
                .all(|m| m.in_central_directory && m.has_local_header && m.crc_ok == Some(true))
        );
        let Some(Layout::PyTorch(t)) = classify_pytorch(&r.members) else {
            panic!("not torch")
        };
        assert_eq!(t.archive, "archive");
        assert_eq!(t.pickles, vec!["archive/data.pkl"]);
        assert_eq!(t.unexpected, vec!["archive/evil.pkl"]);
        assert!(!t.torchscript);
        let (r, _) = run(&torch_zip(false));
        let Some(Layout::PyTorch(t)) = classify_pytorch(&r.members) else {
            panic!("not torch")
        };
        assert!(t.unexpected.is_empty());
    }

    #[test]
    fn classifies_torchscript_keras_and_npz() {
        let names = |ns: &[&str]| -> Vec<Member> {
            let mut z = Zip::new();
            for n in ns {
                z.add(e(n, b"x"));
            }
            run(&z.finish()).0.members
        };
        let ts = names(&[
            "m/data.pkl",
            "m/constants.pkl",
            "m/code/__torch__/m.py",
            "m/version",
        ]);
        assert!(matches!(
            classify_pytorch(&ts),
            Some(Layout::PyTorch(TorchLayout {
                torchscript: true,
                ..
            }))
        ));
        let k = names(&["metadata.json", "config.json", "model.weights.h5", "x.pkl"]);
        assert_eq!(
            classify_pytorch(&k),
            Some(Layout::Keras {
                unexpected: vec!["x.pkl".into()]
            })
        );
        let n = names(&["a.npy", "b.npy"]);
        assert_eq!(classify_pytorch(&n), Some(Layout::Npz { arrays: 2 }));
        assert_eq!(classify_pytorch(&names(&["a.npy", "b.txt"])), None);
    }

    /// A `.npy` file as `np.save` writes it (header padded to 64 bytes).
    fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut header = dict.as_bytes().to_vec();
        header.extend(std::iter::repeat_n(
            b' ',
            (64 - (10 + header.len() + 1) % 64) % 64,
        ));
        header.push(b'\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_npz_members_as_npy() {
        use crate::inspect::numpy;
        let a = npy(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }",
            &[0; 32],
        );
        let b = npy(
            "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
            PICKLE,
        );
        let bytes = Zip::new()
            .add(e("a.npy", &a).deflated())
            .add(e("b.npy", &b))
            .finish();
        let mut facts = Vec::new();
        let mut r = &bytes[..];
        let rep = walk(
            &mut r,
            bytes.len() as u64,
            0,
            &Limits::default(),
            &mut |m, s| {
                let h = numpy::read_header(s, &numpy::Limits::default()).unwrap();
                let size_problem = numpy::check_size(&h, m.uncompressed_size);
                let mut rest = Vec::new();
                s.read_to_end(&mut rest).unwrap();
                facts.push((h.has_object_dtype, size_problem, rest));
            },
        );
        assert!(rep.problems.is_empty(), "{:?}", rep.problems);
        assert_eq!(
            classify_pytorch(&rep.members),
            Some(Layout::Npz { arrays: 2 })
        );
        assert_eq!(facts[0], (false, None, vec![0; 32]));
        assert_eq!(facts[1], (true, None, PICKLE.to_vec()));
    }
}
