//! `action/install.sh`, the action's download-and-verify step, against a loopback HTTP server
//! the test starts (never the internet): a good archive, a tampered one, a platform without a
//! release, server errors, and a whole action run on the downloaded binary.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use super::{MANIFEST_DIR, Runner, parse_outputs, stand_in_binary, workflow_commands};

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// What the fake runner (Linux, X64) downloads.
const LINUX_X64: &str = "x86_64-unknown-linux-musl";

/// A tiny HTTP/1.1 server on 127.0.0.1: `GET path` answers from a fixed table (404 otherwise),
/// and every requested path is recorded. Its thread lives until the test binary exits.
struct Server {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(routes: BTreeMap<String, (u16, Vec<u8>)>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(&stream);
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    continue;
                }
                // Headers up to the blank line; the request has no body.
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line.trim() != "" {
                    line.clear();
                }
                let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
                seen.lock().expect("lock").push(path.clone());
                let (status, body) = routes
                    .get(&path)
                    .cloned()
                    .unwrap_or((404, b"not found".to_vec()));
                let head = format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&body);
            }
        });
        Server { url, requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

/// The release archive of this build's binary for `target`, made by scripts/package.sh (the
/// script release.yml uses), and its SHA-256.
fn release_archive(dir: &Path, target: &str) -> (PathBuf, String) {
    let out = Command::new("bash")
        .arg(Path::new(MANIFEST_DIR).join("scripts/package.sh"))
        .arg(target)
        .env("MG_BINARY", stand_in_binary(dir))
        .env("MG_DIST_DIR", dir)
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .output()
        .expect("package.sh runs");
    assert!(out.status.success(), "package.sh: {out:?}");
    let path = PathBuf::from(String::from_utf8(out.stdout).expect("utf-8").trim());
    let bytes = fs::read(&path).expect("archive");
    (path, crate::support::sha256_hex(&bytes))
}

fn archive_name(target: &str) -> String {
    format!("modelgate-{VERSION}-{target}.tar.gz")
}

fn route(target: &str) -> String {
    format!("/v{VERSION}/{}", archive_name(target))
}

/// One run of install.sh as the action's install step runs it.
struct Install {
    code: i32,
    stdout: String,
    stderr: String,
    outputs: BTreeMap<String, String>,
}

impl std::fmt::Debug for Install {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\noutputs {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.outputs, self.stdout, self.stderr
        )
    }
}

impl Install {
    fn errors(&self) -> Vec<String> {
        workflow_commands(&self.stdout)
            .into_iter()
            .filter(|c| c.kind == "error")
            .map(|c| c.data)
            .collect()
    }
}

struct Setup {
    temp: tempfile::TempDir,
    table: PathBuf,
}

impl Setup {
    /// A runner temp dir and a checksum table with these lines.
    fn new(table_lines: &[String]) -> Setup {
        let temp = tempfile::tempdir().expect("tmp");
        let table = temp.path().join("checksums.txt");
        let mut text = String::from("# test table\n");
        for line in table_lines {
            text.push_str(line);
            text.push('\n');
        }
        fs::write(&table, text).expect("table");
        Setup { temp, table }
    }

    fn run(&self, server: &Server, env: &[(&str, &str)]) -> Install {
        let output = self.temp.path().join(format!(
            "output-{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        fs::write(&output, "").expect("output file");
        let dir = self.temp.path().join("mg");
        fs::create_dir_all(&dir).expect("dir");
        let out = Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(Path::new(MANIFEST_DIR).join("action/install.sh"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.temp.path())
            .env("GITHUB_OUTPUT", &output)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("RUNNER_TEMP", self.temp.path())
            .env("MG_DIR", &dir)
            .env("MODELGATE_RELEASE_URL", &server.url)
            .env("MODELGATE_CHECKSUMS_FILE", &self.table)
            .env("MODELGATE_DOWNLOAD_RETRIES", "0")
            .envs(env.iter().copied())
            .output()
            .expect("bash runs");
        Install {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            outputs: parse_outputs(&fs::read_to_string(&output).expect("outputs")),
        }
    }
}

#[test]
fn install_downloads_verifies_and_installs_the_release_binary() {
    let dist = tempfile::tempdir().expect("tmp");
    let (archive, digest) = release_archive(dist.path(), LINUX_X64);
    let server =
        Server::start([(route(LINUX_X64), (200, fs::read(&archive).expect("read")))].into());
    // Other releases in the table do not get in the way; sha256sum's binary-mode `*` is accepted.
    let setup = Setup::new(&[
        format!("{}  modelgate-0.0.1-{LINUX_X64}.tar.gz", "0".repeat(64)),
        format!("{}  *{}", digest.to_uppercase(), archive_name(LINUX_X64)),
    ]);
    let run = setup.run(&server, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.outputs["method"], "binary", "{run:?}");
    let bin = PathBuf::from(&run.outputs["binary"]);
    assert!(bin.starts_with(setup.temp.path()), "{}", bin.display());
    let version = Command::new(&bin).arg("--version").output().expect("runs");
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("modelgate {VERSION}")
    );
    assert_eq!(server.requests(), [route(LINUX_X64)]);
    assert!(run.stdout.contains("verified"), "{run:?}");
    assert!(run.errors().is_empty());

    // `vX.Y.Z` names the same release.
    let again = setup.run(&server, &[("MG_VERSION", &format!("v{VERSION}"))]);
    assert_eq!(again.outputs["method"], "binary", "{again:?}");
}

#[test]
fn install_rejects_a_tampered_archive_before_unpacking_it() {
    let dist = tempfile::tempdir().expect("tmp");
    let (archive, digest) = release_archive(dist.path(), LINUX_X64);
    let mut bytes = fs::read(&archive).expect("read");
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let server = Server::start([(route(LINUX_X64), (200, bytes))].into());
    let setup = Setup::new(&[format!("{digest}  {}", archive_name(LINUX_X64))]);
    let run = setup.run(&server, &[]);
    assert_eq!(run.code, 2, "{run:?}");
    let errors = run.errors();
    assert_eq!(errors.len(), 1, "{run:?}");
    assert!(
        errors[0].contains("SHA-256 mismatch") && errors[0].contains(&digest),
        "{}",
        errors[0]
    );
    assert!(!run.outputs.contains_key("method"), "{run:?}");
    // Nothing was unpacked, let alone run.
    let unpacked: Vec<_> = walk_files(setup.temp.path())
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "modelgate"))
        .collect();
    assert!(unpacked.is_empty(), "{unpacked:?}");
}

#[test]
fn install_falls_back_to_the_source_build_without_a_release_for_the_platform() {
    let dist = tempfile::tempdir().expect("tmp");
    let (archive, digest) = release_archive(dist.path(), LINUX_X64);
    let server =
        Server::start([(route(LINUX_X64), (200, fs::read(&archive).expect("read")))].into());
    let setup = Setup::new(&[format!("{digest}  {}", archive_name(LINUX_X64))]);
    for env in [
        // No Windows ARM64 build at all.
        vec![("RUNNER_OS", "Windows"), ("RUNNER_ARCH", "ARM64")],
        // A platform with builds, but the table lists none of this version for it.
        vec![("RUNNER_OS", "macOS"), ("RUNNER_ARCH", "ARM64")],
        // A version the table does not list.
        vec![("MG_VERSION", "9.9.9")],
        // Asked for.
        vec![("MG_VERSION", "source")],
    ] {
        let run = setup.run(&server, &env);
        assert_eq!(run.code, 0, "{env:?}: {run:?}");
        assert_eq!(run.outputs["method"], "source", "{env:?}: {run:?}");
        assert!(!run.outputs.contains_key("binary"));
        assert!(run.stdout.contains("building from source"), "{run:?}");
    }
    // The decision comes from the committed table, so nothing was downloaded.
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn install_fails_clearly_on_a_server_error_or_a_missing_archive() {
    let digest = "ab".repeat(32);
    let server = Server::start([(route(LINUX_X64), (500, b"oops".to_vec()))].into());
    let setup = Setup::new(&[format!("{digest}  {}", archive_name(LINUX_X64))]);
    let run = setup.run(&server, &[]);
    assert_eq!(run.code, 2, "{run:?}");
    let errors = run.errors();
    assert_eq!(errors.len(), 1, "{run:?}");
    assert!(
        errors[0].contains("download of") && errors[0].contains("500"),
        "{}",
        errors[0]
    );
    assert!(!run.outputs.contains_key("method"));

    // Listed in the table but absent from the server: an error, not a silent source build.
    let empty = Server::start(BTreeMap::new());
    let run = setup.run(&empty, &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.errors()[0].contains("404"), "{run:?}");
}

#[test]
fn install_refuses_bad_versions_and_plain_http_to_other_hosts() {
    let server = Server::start(BTreeMap::new());
    let setup = Setup::new(&[]);
    for bad in ["1.2", "../../x", "1.2.3/../../evil", "latest", "1.2.3 4"] {
        let run = setup.run(&server, &[("MG_VERSION", bad)]);
        assert_eq!(run.code, 2, "{bad}: {run:?}");
        assert!(run.errors()[0].contains("input version"), "{run:?}");
    }
    let digest = "ab".repeat(32);
    let setup = Setup::new(&[format!("{digest}  {}", archive_name(LINUX_X64))]);
    let run = setup.run(
        &server,
        &[("MODELGATE_RELEASE_URL", "http://example.com/releases")],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.errors()[0].contains("https://"), "{run:?}");
    assert!(server.requests().is_empty());
}

/// The whole action with no `binary` input: the install step downloads and verifies, the source
/// build steps are skipped, and the scan runs on the downloaded binary.
#[test]
fn action_scans_with_the_downloaded_binary() {
    let dist = tempfile::tempdir().expect("tmp");
    let (archive, digest) = release_archive(dist.path(), LINUX_X64);
    let server =
        Server::start([(route(LINUX_X64), (200, fs::read(&archive).expect("read")))].into());
    let table = dist.path().join("checksums.txt");
    fs::write(&table, format!("{digest}  {}\n", archive_name(LINUX_X64))).expect("table");
    let runner = Runner::new()
        .with_example("clean-model", "model")
        .with_env("MODELGATE_RELEASE_URL", &server.url)
        .with_env("MODELGATE_CHECKSUMS_FILE", table.to_str().expect("utf-8"));
    let started = std::time::Instant::now();
    let run = runner.run_raw(&[("path", "model")], true);
    let took = started.elapsed();
    assert_eq!(run.status, 0, "{run:?}");
    assert_eq!(run.output("denied"), "0");
    assert!(run.stdout.contains("verified"), "{run:?}");
    assert_eq!(server.requests(), [route(LINUX_X64)]);
    // The source build (cache restore, cargo install, cache save) never ran.
    assert_eq!(run.skipped.len(), 3, "{:?}", run.skipped);
    assert!(run.skipped.contains(&"cache".to_string()));
    // Seconds, not the minutes of a cargo build (generous: CI machines are shared).
    assert!(took.as_secs() < 60, "{took:?}");
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk_files(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}
