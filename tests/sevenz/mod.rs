//! Issue 40: 7z archives are read by content under any name; their members go through the same
//! inspectors as zip and tar members, and what cannot be read is ARC001.

use crate::support::sevenz::{Coder, sevenz};
use crate::support::*;

#[test]
fn a_pickle_calling_os_system_in_a_7z_under_an_innocent_name_is_denied() {
    for (coder, encoded) in [(Coder::Copy, false), (Coder::Lzma2, true)] {
        let repo = Repo::new();
        let evil = pickle_call("os", "system", "id");
        let archive = sevenz(
            &[("notes/readme.txt", b"hello"), ("notes/data.txt", &evil)],
            coder,
            encoded,
        );
        repo.file("assets/notes.dat", &archive);
        let (code, r) = scan_json(repo.path(), &[]);
        assert_eq!(code, 1, "{r:#}");
        let f = file(&r, "assets/notes.dat");
        assert_eq!(f["format"], "7z");
        assert_eq!(
            f["facts"]["archive_member_names"],
            serde_json::json!(["notes/readme.txt", "notes/data.txt"])
        );
        let pkl = findings(&r, "PKL001");
        assert_eq!(pkl.len(), 1, "{r:#}");
        assert_eq!(pkl[0]["path"], "assets/notes.dat");
        assert_eq!(pkl[0]["location"]["member"], "notes/data.txt");
        assert_eq!(pkl[0]["action"], "deny");
    }
}

#[test]
fn a_benign_7z_passes_and_is_listed_in_the_sbom() {
    let repo = Repo::new();
    let archive = sevenz(
        &[("config.json", b"{\"a\": 1}"), ("README.md", b"# model")],
        Coder::Lzma2,
        true,
    );
    repo.file("bundle.7z", &archive);
    let sbom = repo.abs("out.cdx.json");
    let (code, r) = scan_json(repo.path(), &["--sbom", sbom.to_str().unwrap()]);
    assert_eq!(code, 0, "{r:#}");
    assert!(rules_on(&r, "bundle.7z").is_empty(), "{r:#}");
    let f = file(&r, "bundle.7z");
    assert_eq!(f["format"], "7z");
    assert_eq!(f["facts"]["archive_members"], 2);
    assert_eq!(f["facts"]["archive_coders"], serde_json::json!(["LZMA2"]));
    let bom = std::fs::read_to_string(&sbom).unwrap();
    assert!(
        bom.contains("\"value\": \"7z\"") || bom.contains("\"value\":\"7z\""),
        "{bom}"
    );
}

#[test]
fn a_7z_inside_a_zip_is_opened_too() {
    let repo = Repo::new();
    let evil = pickle_call("os", "system", "id");
    let inner = sevenz(&[("w.bin", &evil)], Coder::Copy, false);
    repo.file("bundle.zip", zip_stored(&[("inner.7z", &inner)]));
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let pkl = findings(&r, "PKL001");
    assert_eq!(pkl.len(), 1, "{r:#}");
    assert_eq!(pkl[0]["location"]["member"], "inner.7z!w.bin");
}

#[test]
fn an_encrypted_7z_is_arc001_naming_the_coder_and_listing_members() {
    let repo = Repo::new();
    let archive = sevenz(&[("model.pkl", b"\x80\x02N.")], Coder::Aes, true);
    repo.file("model.7z", &archive);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let arc = findings(&r, "ARC001");
    assert_eq!(arc.len(), 1, "{r:#}");
    assert_eq!(arc[0]["evidence"]["problem"], "encrypted");
    let message = arc[0]["message"].as_str().unwrap();
    assert!(
        message.contains("AES-256") && message.contains("'model.pkl'"),
        "{message}"
    );
    let f = file(&r, "model.7z");
    assert_eq!(
        f["facts"]["archive_member_names"],
        serde_json::json!(["model.pkl"])
    );
}

#[test]
fn a_truncated_7z_is_arc001() {
    let repo = Repo::new();
    let mut archive = sevenz(&[("a.txt", b"hello")], Coder::Copy, false);
    archive.truncate(archive.len() - 3);
    repo.file("a.7z", &archive);
    let (code, r) = scan_json(repo.path(), &[]);
    assert_eq!(code, 1, "{r:#}");
    let arc = findings(&r, "ARC001");
    assert_eq!(arc[0]["evidence"]["problem"], "truncated", "{r:#}");
}
