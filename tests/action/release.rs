//! The project's own release: `.github/workflows/release.yml`, the archive layout script
//! (`scripts/package.sh`, run here on the host target), the action's checksum table, the
//! distribution profile and the `Dockerfile` (checked statically here; `.ci/run` builds the image
//! and runs it).

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{MANIFEST_DIR, repo_file, stand_in_binary, steps_of, yaml};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The platforms with release archives (README, "Platforms").
const TARGETS: [&str; 5] = [
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
];

fn uses<'a>(workflow: &'a serde_norway::Value, prefix: &str) -> Vec<&'a serde_norway::Value> {
    steps_of(workflow)
        .into_iter()
        .filter(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(prefix)))
        .collect()
}

#[test]
fn release_workflow_builds_five_targets_packages_attests_and_publishes() {
    let wf = yaml(".github/workflows/release.yml");
    let text = repo_file(".github/workflows/release.yml");
    assert!(
        wf["on"]["push"]["tags"][0]
            .as_str()
            .is_some_and(|t| t.starts_with("v[0-9]")),
        "runs on version tags"
    );
    let matrix = wf["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_sequence()
        .expect("build matrix");
    let targets: BTreeSet<&str> = matrix
        .iter()
        .map(|m| m["target"].as_str().expect("target"))
        .collect();
    assert_eq!(targets, TARGETS.into());
    assert!(text.contains("cargo build --locked --profile dist --target \"$TARGET\""));

    // Least privilege: only the jobs that write get write permissions.
    let perms = |job: &str, key: &str| {
        wf["jobs"][job]["permissions"][key]
            .as_str()
            .map(str::to_string)
    };
    assert_eq!(perms("build", "contents").as_deref(), Some("read"));
    assert_eq!(perms("build", "id-token"), None);
    assert_eq!(perms("package", "contents").as_deref(), Some("write"));
    assert_eq!(perms("package", "id-token").as_deref(), Some("write"));
    assert_eq!(perms("package", "attestations").as_deref(), Some("write"));
    assert_eq!(perms("container", "contents").as_deref(), Some("read"));
    assert_eq!(perms("container", "packages").as_deref(), Some("write"));

    // Archives by the tested script, one SHA256SUMS, provenance for every archive in it.
    let package = repo_file(".github/workflows/release.yml");
    assert!(package.contains("scripts/package.sh \"$target\""));
    assert!(package.contains("sha256sum modelgate-* >SHA256SUMS"));
    let attest = uses(&wf, "actions/attest-build-provenance@");
    assert_eq!(
        attest.len(),
        3,
        "archives, Python distributions and image are attested"
    );
    assert_eq!(
        attest[0]["with"]["subject-checksums"].as_str(),
        Some("dist/SHA256SUMS")
    );
    assert!(package.contains("gh release upload") && package.contains("gh release create"));

    // The image: both architectures, pushed, attested in the registry by digest.
    let push = uses(&wf, "docker/build-push-action@");
    assert_eq!(push.len(), 1);
    let platforms = push[0]["with"]["platforms"].as_str().expect("platforms");
    assert!(platforms.contains("linux/amd64") && platforms.contains("linux/arm64"));
    assert_eq!(push[0]["with"]["push"].as_bool(), Some(true));
    let image = attest[2];
    assert_eq!(image["with"]["push-to-registry"].as_bool(), Some(true));
    assert_eq!(
        image["with"]["subject-digest"].as_str(),
        Some("${{ steps.push.outputs.digest }}")
    );

    // The Python wheels (issue 41): maturin around the same dist build on every target, with
    // maturin hash-pinned; the sdist beside them; every file attested like the archives and
    // attached to the release; PyPI by trusted publishing, the only extra job with id-token.
    assert!(text.contains("maturin\" build --locked --profile dist --target \"$TARGET\""));
    assert!(text.contains("--require-hashes --only-binary :all: -r python/build-requirements.txt"));
    assert!(text.contains("--compatibility manylinux2014 musllinux_1_2"));
    assert!(text.contains("maturin/bin/maturin\" sdist --out python-dist"));
    assert!(text.contains("twine\" check --strict python-dist/*"));
    assert_eq!(
        attest[1]["with"]["subject-path"].as_str(),
        Some("python-dist/*")
    );
    assert!(text.contains("gh release upload \"$TAG\" dist/* python-dist/*"));
    assert_eq!(perms("python", "id-token"), None);
    assert_eq!(perms("pypi", "id-token").as_deref(), Some("write"));
    assert_eq!(perms("pypi", "contents"), None);
    assert_eq!(wf["jobs"]["pypi"]["needs"].as_str(), Some("package"));
    let publish = uses(&wf, "pypa/gh-action-pypi-publish@");
    assert_eq!(publish.len(), 1);
    assert_eq!(
        publish[0]["with"]["packages-dir"].as_str(),
        Some("python-dist/")
    );
    // The token reaches only the steps that upload to and download from the release.
    assert_eq!(text.matches("GH_TOKEN:").count(), 2);
}

/// The action downloads exactly the archives the release builds, named as the script names them.
#[test]
fn the_action_installs_the_targets_the_release_builds() {
    let script = repo_file("action/install.sh");
    let mapped: BTreeSet<&str> = script
        .lines()
        .filter_map(|l| l.split_once(") target=").map(|(_, t)| t))
        .map(|t| t.trim_end_matches(" ;;").trim())
        .collect();
    assert_eq!(mapped, TARGETS.into());
    assert!(script.contains("name=\"modelgate-$version-$target\""));

    // Every line of the committed table is `<sha256>  modelgate-<version>-<target>.<ext>`.
    for line in repo_file("action/checksums.txt").lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (digest, file) = line.split_once("  ").expect("two-space separator");
        assert!(
            digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit()),
            "{line}"
        );
        assert!(
            TARGETS
                .iter()
                .any(|t| file.ends_with(&format!("-{t}.tar.gz"))
                    || file.ends_with(&format!("-{t}.zip"))),
            "{line}"
        );
    }
}

fn host_target() -> String {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc -vV");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("host line")
        .to_string()
}

fn package(target: &str, dir: &Path) -> PathBuf {
    let out = Command::new("bash")
        .arg(Path::new(MANIFEST_DIR).join("scripts/package.sh"))
        .arg(target)
        .env("MG_BINARY", stand_in_binary(dir))
        .env("MG_DIST_DIR", dir)
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .output()
        .expect("package.sh runs");
    assert!(out.status.success(), "{out:?}");
    PathBuf::from(String::from_utf8(out.stdout).expect("utf-8").trim())
}

#[test]
fn package_script_lays_out_the_host_archive() {
    let host = host_target();
    let dist = tempfile::tempdir().expect("tmp");
    let archive = package(&host, dist.path());
    let name = format!("modelgate-{VERSION}-{host}");
    let exe = if host.contains("-windows-") {
        ".exe"
    } else {
        ""
    };
    let ext = if exe.is_empty() { "tar.gz" } else { "zip" };
    assert_eq!(archive, dist.path().join(format!("{name}.{ext}")));
    assert!(ext == "tar.gz", "the host test covers the tar.gz layout");

    let bytes = fs::read(&archive).expect("archive");
    let mut entries = Vec::new();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]));
    for entry in tar.entries().expect("tar entries") {
        let mut entry = entry.expect("entry");
        let path = entry.path().expect("path").display().to_string();
        let mode = entry.header().mode().expect("mode");
        let uid = entry.header().uid().expect("uid");
        let gid = entry.header().gid().expect("gid");
        assert_eq!((uid, gid), (0, 0), "{path}");
        let mut content = Vec::new();
        entry.read_to_end(&mut content).expect("read");
        entries.push((path, mode, content));
    }
    let paths: Vec<&str> = entries.iter().map(|(p, _, _)| p.as_str()).collect();
    let want: Vec<String> = ["", "LICENSE", "README.md", "SECURITY.md", "modelgate"]
        .iter()
        .map(|f| format!("{name}/{f}"))
        .collect();
    assert_eq!(paths, want);
    for (path, mode, content) in &entries {
        if path.ends_with("/modelgate") {
            assert_eq!(mode & 0o777, 0o755);
            let packaged = stand_in_binary(dist.path());
            assert_eq!(content, &fs::read(packaged).expect("binary"));
        } else if let Some(doc) = path.strip_prefix(&format!("{name}/"))
            && !doc.is_empty()
        {
            assert_eq!(mode & 0o777, 0o644, "{path}");
            assert_eq!(
                content,
                &fs::read(Path::new(MANIFEST_DIR).join(doc)).expect("doc")
            );
        }
    }

    // The unpacked binary runs; the same inputs give the same archive bytes.
    let unpack = tempfile::tempdir().expect("tmp");
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(unpack.path())
        .status()
        .expect("tar");
    assert!(status.success());
    let version = Command::new(unpack.path().join(&name).join("modelgate"))
        .arg("--version")
        .output()
        .expect("runs");
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("modelgate {VERSION}")
    );
    let again = tempfile::tempdir().expect("tmp");
    assert_eq!(
        fs::read(package(&host, again.path())).expect("again"),
        bytes,
        "archives are reproducible"
    );
}

#[test]
fn package_script_zips_windows_targets() {
    let dist = tempfile::tempdir().expect("tmp");
    let archive = package("x86_64-pc-windows-msvc", dist.path());
    let name = format!("modelgate-{VERSION}-x86_64-pc-windows-msvc");
    assert_eq!(archive, dist.path().join(format!("{name}.zip")));
    let zip = zip::ZipArchive::new(fs::File::open(&archive).expect("zip")).expect("zip parses");
    let mut names: Vec<String> = zip
        .file_names()
        .map(|n| n.expect("utf-8 name").into_owned())
        .collect();
    names.sort_unstable();
    let want: Vec<String> = ["", "LICENSE", "README.md", "SECURITY.md", "modelgate.exe"]
        .iter()
        .map(|f| format!("{name}/{f}"))
        .collect();
    assert_eq!(names, want);

    let bad = Command::new("bash")
        .arg(Path::new(MANIFEST_DIR).join("scripts/package.sh"))
        .arg("x86_64/../../evil")
        .env("MG_BINARY", stand_in_binary(dist.path()))
        .env("MG_DIST_DIR", dist.path())
        .output()
        .expect("runs");
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
}

/// The distribution profile keeps unwinding: each file is inspected under `catch_unwind`, and
/// `panic = "abort"` would turn one inspector bug into a dead scan with no report.
#[test]
fn dist_profile_is_stripped_lto_and_keeps_unwinding() {
    let manifest: toml::Table = repo_file("Cargo.toml").parse().expect("Cargo.toml");
    let dist = &manifest["profile"]["dist"];
    assert_eq!(dist["inherits"].as_str(), Some("release"));
    assert_eq!(dist["panic"].as_str(), Some("unwind"));
    assert_eq!(dist["strip"].as_bool(), Some(true));
    assert_eq!(dist["lto"].as_str(), Some("fat"));
    assert_eq!(dist["codegen-units"].as_integer(), Some(1));
    // The published crate carries no test fixtures.
    let include = manifest["package"]["include"].as_array().expect("include");
    assert!(
        include
            .iter()
            .all(|p| p.as_str().is_some_and(|p| !p.starts_with("/tests"))),
        "{include:?}"
    );
}

/// The image is the release binary in `scratch`, checked line by line here (`.ci/run` builds and
/// runs it): no build stage and nothing pulled (no base image, no `# syntax=` frontend image),
/// the binary from the unpacked archive of the platform being built, not root, `modelgate` as
/// the entrypoint, /scan as the default root, OCI labels.
#[test]
fn dockerfile_copies_the_release_binary_into_a_minimal_non_root_image() {
    let text = repo_file("Dockerfile");
    assert!(
        !text
            .lines()
            .any(|l| l.trim_start().starts_with("# syntax=")),
        "a syntax directive pulls a frontend image"
    );
    // Instructions, with `\` continuations joined.
    let mut instructions: Vec<String> = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let line = line.trim();
        if pending.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => pending.push_str(head),
            None => {
                pending.push_str(line);
                instructions.push(std::mem::take(&mut pending));
            }
        }
    }
    let froms: Vec<&String> = instructions
        .iter()
        .filter(|i| i.starts_with("FROM "))
        .collect();
    assert_eq!(froms, ["FROM scratch"], "one stage, nothing pulled");
    assert!(
        !instructions.iter().any(|i| i.starts_with("RUN ")),
        "nothing is built in the image: {instructions:?}"
    );
    assert!(instructions.contains(&"ARG TARGETARCH=amd64".to_string()));
    assert!(
        instructions
            .contains(&"COPY linux-${TARGETARCH}/modelgate /usr/local/bin/modelgate".to_string()),
        "{instructions:?}"
    );
    let user = instructions
        .iter()
        .find_map(|i| i.strip_prefix("USER "))
        .expect("USER");
    let (uid, gid) = user.split_once(':').expect("uid:gid");
    assert!(
        uid.parse::<u32>().is_ok_and(|u| u != 0) && gid.parse::<u32>().is_ok(),
        "numeric non-root user (scratch has no /etc/passwd): {user}"
    );
    assert!(instructions.contains(&r#"ENTRYPOINT ["modelgate"]"#.to_string()));
    assert!(instructions.contains(&r#"CMD ["scan", "/scan"]"#.to_string()));
    assert!(instructions.contains(&"WORKDIR /scan".to_string()));
    let label = instructions
        .iter()
        .find(|i| i.starts_with("LABEL "))
        .expect("LABEL");
    for key in [
        "org.opencontainers.image.title",
        "org.opencontainers.image.source",
        "org.opencontainers.image.licenses=\"Apache-2.0\"",
        "org.opencontainers.image.version",
        "org.opencontainers.image.revision",
    ] {
        assert!(label.contains(key), "label {key} missing: {label}");
    }
    // Every file copied is in a release archive (scripts/package.sh's layout).
    for i in &instructions {
        if let Some(rest) = i.strip_prefix("COPY ") {
            let words: Vec<&str> = rest.split_whitespace().collect();
            for src in &words[..words.len() - 1] {
                let name = src.strip_prefix("linux-${TARGETARCH}/").expect(src);
                assert!(
                    ["modelgate", "README.md", "LICENSE", "SECURITY.md"].contains(&name),
                    "COPY {src}"
                );
            }
        }
    }

    // release.yml builds it from the published linux-musl archives, checked against SHA256SUMS.
    let wf = yaml(".github/workflows/release.yml");
    assert_eq!(wf["jobs"]["container"]["needs"].as_str(), Some("package"));
    let release = repo_file(".github/workflows/release.yml");
    assert!(release.contains("sha256sum --check --ignore-missing --strict SHA256SUMS"));
    assert!(release.contains("-unknown-linux-musl.tar.gz"));
    assert!(!release.contains("cargo build --locked --profile dist\n"));
    let push = uses(&wf, "docker/build-push-action@");
    assert_eq!(push[0]["with"]["context"].as_str(), Some("ctx"));
}
