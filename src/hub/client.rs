//! The HTTP side of a remote scan: a blocking `ureq` agent (rustls, no async runtime next to
//! rayon) with the Hub's endpoints, bounded bodies, bounded retries and our own redirect rule.
//!
//! Redirects are followed here, not by the agent, so that each hop is checked: only `https`
//! targets (plain `http` only between loopback hosts, which is what the tests use), at most
//! [`MAX_REDIRECTS`] hops, and the token is sent only to the endpoint's own origin, never to a
//! CDN or another host a redirect names. The token never appears in a message.
//!
//! Trust roots: the built-in Mozilla roots (webpki-roots), or, for a mirror behind a private CA,
//! the PEM bundle that `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE` or `SSL_CERT_FILE` names. Like
//! requests (and OpenSSL for `SSL_CERT_FILE`), the bundle replaces the built-in roots; a bundle
//! that cannot be read or parsed stops the scan, and verification is never turned off.

use std::io::{self, Read};
use std::time::Duration;

use sha1::{Digest, Sha1};
use ureq::http::{Response, Uri};

use super::api::{self, EntryProblem, TreeEntry};
use super::target::{DEFAULT_ENDPOINT, Target, encode_path};

/// Hops followed for one request (the Hub redirects `resolve` to its CDN once).
pub const MAX_REDIRECTS: usize = 5;
/// Largest JSON body accepted (revision info lists every file; a tree page holds ~1,000 entries).
pub const MAX_JSON_BYTES: u64 = 32 << 20;
/// Tree pages followed at most (with ~1,000 entries a page, far past `max_files`).
pub const MAX_PAGES: usize = 10_000;
/// Longest token accepted from a token file.
const MAX_TOKEN_BYTES: u64 = 4096;
/// Environment variables that name a PEM bundle of trust roots, in the order they are consulted
/// (the first one set to a non-empty value wins): requests' own variable, the curl-compatible one
/// requests also reads, and OpenSSL's.
pub const CA_BUNDLE_VARS: [&str; 3] = ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"];
/// Largest CA bundle read (Mozilla's full bundle is about 220 KB).
pub const MAX_CA_BUNDLE_BYTES: u64 = 4 << 20;

/// Failures of a remote scan that stop it (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// `HF_HUB_OFFLINE` is set.
    #[error("HF_HUB_OFFLINE is set: remote targets cannot be scanned offline")]
    Offline,
    /// The endpoint is not an https URL (or http on a loopback host).
    #[error("invalid Hub endpoint `{0}`: {1}")]
    Endpoint(String, String),
    /// The token file could not be read.
    #[error("cannot read the token file {0}: {1}")]
    TokenFile(String, String),
    /// 401/403: gated, private, or the token lacks access.
    #[error(
        "{what}: access denied (HTTP {status}): the repository is gated or private, or the token has no access to it; set HF_TOKEN or pass --token-file"
    )]
    Auth {
        /// What was being fetched.
        what: String,
        /// The status.
        status: u16,
    },
    /// 404.
    #[error("{what}: not found (HTTP 404): no such repository, revision or file")]
    NotFound {
        /// What was being fetched.
        what: String,
    },
    /// Any other unexpected status (after retries, for 429/5xx).
    #[error("{what}: HTTP {status}")]
    Status {
        /// What was being fetched.
        what: String,
        /// The status.
        status: u16,
    },
    /// Connection, TLS, timeout or protocol failure (after retries).
    #[error("{what}: {message}")]
    Transport {
        /// What was being fetched.
        what: String,
        /// The transport's message.
        message: String,
    },
    /// A redirect that was not followed.
    #[error("{what}: redirect refused: {why}")]
    Redirect {
        /// What was being fetched.
        what: String,
        /// Why.
        why: String,
    },
    /// A JSON body over [`MAX_JSON_BYTES`].
    #[error("{what}: response over {limit} bytes")]
    TooLarge {
        /// What was being fetched.
        what: String,
        /// The cap.
        limit: u64,
    },
    /// The body is not the documented shape.
    // Not named `source`: thiserror would make it the error's source as well, and the chain
    // printed on exit 2 would repeat the problem.
    #[error("{what}: {problem}")]
    Shape {
        /// What was being fetched.
        what: String,
        /// The shape problem.
        problem: api::ShapeError,
    },
    /// The tree holds more files than `max_files`.
    #[error("the repository lists more than {0} files (the max_files limit)")]
    TooManyFiles(u64),
    /// The CA bundle an environment variable names cannot be used (never a reason to connect
    /// without verification).
    #[error("cannot use the CA bundle `{path}` named by {var}: {why}")]
    CaBundle {
        /// The variable that named it.
        var: &'static str,
        /// The path.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// The TLS handshake failed: most often a server certificate the trust roots do not vouch
    /// for. Not retried.
    #[error("{what}: TLS handshake failed: {message}; {hint}")]
    Tls {
        /// What was being fetched.
        what: String,
        /// The TLS library's message.
        message: String,
        /// Which trust roots were used, and how to add a private CA.
        hint: String,
    },
}

/// How to reach the Hub.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// `https://huggingface.co` or a mirror (`HF_ENDPOINT`).
    pub endpoint: String,
    /// Bearer token, sent to the endpoint's origin only.
    pub token: Option<String>,
    /// Connect timeout (also bounds the TLS handshake).
    pub connect_timeout: Duration,
    /// A read that stalls longer than this fails (slow-loris servers).
    pub read_timeout: Duration,
    /// Attempts after the first for 429, 5xx and transport failures.
    pub retries: u32,
    /// First back-off; doubled per attempt, capped at 10 s (a `Retry-After` in seconds wins).
    pub backoff: Duration,
    /// Trust roots that replace the built-in ones (from [`CA_BUNDLE_VARS`]); `None`: the
    /// built-in Mozilla roots.
    pub ca_bundle: Option<CaBundle>,
}

/// Trust roots read from a PEM bundle.
#[derive(Debug, Clone)]
pub struct CaBundle {
    /// The variable that named the bundle (for messages).
    pub var: &'static str,
    /// The bundle's path.
    pub path: String,
    /// The certificates, each checked to be a well-formed X.509 certificate.
    pub roots: Vec<ureq::tls::Certificate<'static>>,
}

impl CaBundle {
    /// The bundle the first of [`CA_BUNDLE_VARS`] set to a non-empty value names, read and
    /// checked; `None` when none is set. An empty value counts as unset: an empty
    /// `CURL_CA_BUNDLE` once turned verification off in requests, and here nothing does.
    pub fn from_env() -> Result<Option<CaBundle>, HubError> {
        for var in CA_BUNDLE_VARS {
            if let Some(path) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                return CaBundle::load(var, std::path::Path::new(&path)).map(Some);
            }
        }
        Ok(None)
    }

    /// Reads the PEM bundle at `path` (at most [`MAX_CA_BUNDLE_BYTES`]). Every `CERTIFICATE`
    /// block must be a well-formed X.509 certificate, and there must be at least one: the TLS
    /// layer skips certificates it cannot use without a word, so a broken bundle is refused here
    /// rather than found out as a baffling handshake failure. Other PEM blocks and the text
    /// between blocks (bundles carry comments) are ignored.
    pub fn load(var: &'static str, path: &std::path::Path) -> Result<CaBundle, HubError> {
        let err = |why: String| HubError::CaBundle {
            var,
            path: path.display().to_string(),
            why,
        };
        if path.is_dir() {
            return Err(err(
                "it is a directory; name one PEM file that holds the CA certificates".into(),
            ));
        }
        let f = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
        let mut bytes = Vec::new();
        f.take(MAX_CA_BUNDLE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| err(e.to_string()))?;
        if bytes.len() as u64 > MAX_CA_BUNDLE_BYTES {
            return Err(err(format!("larger than {MAX_CA_BUNDLE_BYTES} bytes")));
        }
        let roots = parse_ca_bundle(&bytes).map_err(err)?;
        Ok(CaBundle {
            var,
            path: path.display().to_string(),
            roots,
        })
    }
}

/// The certificates of a PEM bundle, each checked to parse as X.509.
fn parse_ca_bundle(pem: &[u8]) -> Result<Vec<ureq::tls::Certificate<'static>>, String> {
    use der::Decode;
    let mut roots = Vec::new();
    for item in ureq::tls::parse_pem(pem) {
        let item = item.map_err(|e| format!("not a valid PEM file ({e})"))?;
        let ureq::tls::PemItem::Certificate(cert) = item else {
            continue;
        };
        if let Err(e) = x509_cert::Certificate::from_der(cert.der()) {
            return Err(format!(
                "certificate {} is not a valid X.509 certificate ({e})",
                roots.len() + 1
            ));
        }
        roots.push(cert);
    }
    if roots.is_empty() {
        return Err(
            "it holds no PEM certificate (`-----BEGIN CERTIFICATE-----`); a DER file converts with `openssl x509 -inform der`"
                .into(),
        );
    }
    Ok(roots)
}

impl ClientOptions {
    /// Options from the environment: `HF_HUB_OFFLINE`, `HF_ENDPOINT`, and the token from
    /// `token_file` if given, else `HF_TOKEN`, else `$HF_HOME/token` (default
    /// `~/.cache/huggingface/token`) when it exists.
    pub fn from_env(token_file: Option<&std::path::Path>) -> Result<ClientOptions, HubError> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        if env("HF_HUB_OFFLINE")
            .is_some_and(|v| matches!(v.as_str(), "1" | "true" | "TRUE" | "yes"))
        {
            return Err(HubError::Offline);
        }
        let endpoint = env("HF_ENDPOINT").unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        let token = match token_file {
            Some(p) => Some(read_token(p)?),
            None => match env("HF_TOKEN") {
                Some(t) => Some(t.trim().to_string()),
                None => {
                    let home = env("HF_HOME").map(std::path::PathBuf::from).or_else(|| {
                        env("HOME").map(|h| std::path::Path::new(&h).join(".cache/huggingface"))
                    });
                    match home.map(|h| h.join("token")).filter(|p| p.is_file()) {
                        Some(p) => Some(read_token(&p)?),
                        None => None,
                    }
                }
            },
        }
        .filter(|t| !t.is_empty());
        // One knob for both timeouts, in milliseconds (tests use short ones; a slow mirror a
        // long one). Unset or unparsable: 20 s to connect, 60 s for a stalled read.
        let timeout = env("MODELGATE_HUB_TIMEOUT_MS")
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis);
        Ok(ClientOptions {
            endpoint,
            token,
            connect_timeout: timeout.unwrap_or(Duration::from_secs(20)),
            read_timeout: timeout.unwrap_or(Duration::from_secs(60)),
            retries: 4,
            backoff: Duration::from_millis(500),
            ca_bundle: CaBundle::from_env()?,
        })
    }
}

fn read_token(path: &std::path::Path) -> Result<String, HubError> {
    let err =
        |e: &dyn std::fmt::Display| HubError::TokenFile(path.display().to_string(), e.to_string());
    let f = std::fs::File::open(path).map_err(|e| err(&e))?;
    let mut s = String::new();
    f.take(MAX_TOKEN_BYTES)
        .read_to_string(&mut s)
        .map_err(|e| err(&e))?;
    let t = s.trim();
    if t.chars().any(|c| c.is_control() || c == ' ') {
        return Err(err(&"the token holds whitespace or control characters"));
    }
    Ok(t.to_string())
}

/// Scheme, host and port: what decides where the token may go.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    https: bool,
    host: String,
    port: u16,
}

impl Origin {
    fn of(uri: &Uri) -> Option<Origin> {
        let https = match uri.scheme_str()? {
            "https" => true,
            "http" => false,
            _ => return None,
        };
        let host = uri.host()?.trim_matches(['[', ']']).to_ascii_lowercase();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        Some(Origin { https, host, port })
    }

    fn is_loopback(&self) -> bool {
        self.host == "localhost"
            || self
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// https anywhere; plain http only on loopback (a test or a local mirror).
    fn allowed(&self) -> bool {
        self.https || self.is_loopback()
    }
}

/// A connection to one Hub endpoint.
pub struct Client {
    agent: ureq::Agent,
    base: String,
    origin: Origin,
    token: Option<String>,
    retries: u32,
    backoff: Duration,
    /// Which trust roots are in use and how to change them (for TLS failure messages).
    tls_hint: String,
}

impl std::fmt::Debug for Client {
    // Hand-written so the token can never reach a debug print.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl Client {
    /// A client for `opts.endpoint`.
    pub fn new(opts: &ClientOptions) -> Result<Client, HubError> {
        let base = opts.endpoint.trim_end_matches('/').to_string();
        let bad = |why: &str| HubError::Endpoint(opts.endpoint.clone(), why.to_string());
        let uri: Uri = base.parse().map_err(|_| bad("not a URL"))?;
        let origin = Origin::of(&uri).ok_or_else(|| bad("not an http(s) URL with a host"))?;
        if !origin.allowed() {
            return Err(bad(
                "plain http is allowed only on a loopback host; use https",
            ));
        }
        let mut config = ureq::Agent::config_builder()
            .max_redirects(0)
            .http_status_as_error(false)
            .timeout_connect(Some(opts.connect_timeout))
            .timeout_recv_response(Some(opts.read_timeout))
            .timeout_per_read(Some(opts.read_timeout))
            .user_agent(format!("modelgate/{}", env!("CARGO_PKG_VERSION")));
        let tls_hint = match &opts.ca_bundle {
            Some(b) => {
                config = config.tls_config(
                    ureq::tls::TlsConfig::builder()
                        .root_certs(ureq::tls::RootCerts::new_with_certs(&b.roots))
                        .build(),
                );
                format!(
                    "the trust roots are the {} certificate(s) of {}={} (they replace the built-in roots)",
                    b.roots.len(),
                    b.var,
                    b.path
                )
            }
            None => format!(
                "the trust roots are the built-in Mozilla roots; for a server with a private CA, set {} to a PEM bundle that holds it",
                CA_BUNDLE_VARS.join(" or ")
            ),
        };
        Ok(Client {
            agent: config.build().into(),
            base,
            origin,
            token: opts.token.clone(),
            retries: opts.retries,
            backoff: opts.backoff,
            tls_hint,
        })
    }

    /// The endpoint, as the report records it.
    pub fn endpoint(&self) -> &str {
        &self.base
    }

    /// Resolves the target's revision to a commit.
    pub fn resolve(&self, target: &Target) -> Result<String, HubError> {
        let url = format!(
            "{}/api/{}/{}/revision/{}",
            self.base,
            target.kind.api_segment(),
            target.repo,
            encode_path(target.requested(), false)
        );
        let what = format!("revision `{}` of {}", target.requested(), target.repo);
        let body = self.get_json(&url, &what)?;
        api::parse_revision(&body).map_err(|problem| HubError::Shape { what, problem })
    }

    /// Every file of the tree at `commit`, following the `Link` pages (on the endpoint's origin
    /// only), sorted by path; entries that cannot be used come back as problems.
    pub fn list_tree(
        &self,
        target: &Target,
        commit: &str,
        max_files: u64,
    ) -> Result<(Vec<TreeEntry>, Vec<EntryProblem>), HubError> {
        let mut url = format!(
            "{}/api/{}/{}/tree/{commit}?recursive=true&expand=true",
            self.base,
            target.kind.api_segment(),
            target.repo
        );
        let what = format!("file list of {} at {commit}", target.repo);
        let mut files = Vec::new();
        let mut problems = Vec::new();
        for _ in 0..MAX_PAGES {
            let resp = self.send(&url, None, &what)?;
            let next = resp
                .headers()
                .get("link")
                .and_then(|v| v.to_str().ok())
                .and_then(api::next_link);
            let body = read_json_body(resp, &what)?;
            let (f, p) = api::parse_tree_page(&body).map_err(|problem| HubError::Shape {
                what: what.clone(),
                problem,
            })?;
            files.extend(f);
            problems.extend(p);
            if files.len() as u64 > max_files {
                return Err(HubError::TooManyFiles(max_files));
            }
            let Some(next) = next else {
                files.sort_by(|a, b| a.path.cmp(&b.path));
                return Ok((files, problems));
            };
            // A next page on another origin would receive the token: refuse it.
            let next_uri: Uri = next.parse().map_err(|_| HubError::Redirect {
                what: what.clone(),
                why: "the next-page link is not a URL".into(),
            })?;
            if Origin::of(&next_uri).as_ref() != Some(&self.origin) {
                return Err(HubError::Redirect {
                    what,
                    why: "the next-page link leaves the endpoint".into(),
                });
            }
            url = next;
        }
        Err(HubError::Transport {
            what,
            message: format!("more than {MAX_PAGES} pages"),
        })
    }

    /// Opens one file's content at `commit` as a stream of at most its declared size plus one
    /// byte (so a server that sends more is caught, and never read without bound). For files
    /// outside LFS, the stream also computes the git blob id.
    pub fn open_file(
        &self,
        target: &Target,
        commit: &str,
        entry: &TreeEntry,
    ) -> Result<FileStream<'_>, HubError> {
        let url = self.file_url(target, commit, entry);
        let what = format!("file `{}`", entry.path);
        let size = entry.content_size();
        let resp = self.send(&url, None, &what)?;
        let body = resp.into_body().into_reader();
        let blob = entry.lfs.is_none().then(|| {
            let mut h = Sha1::new();
            h.update(format!("blob {size}\0").as_bytes());
            h
        });
        Ok(FileStream {
            client: self,
            url,
            what,
            body: Some(Box::new(body)),
            offset: 0,
            limit: size.saturating_add(1),
            resumes: self.retries,
            blob,
        })
    }

    /// The `resolve` URL of one file at `commit`.
    pub fn file_url(&self, target: &Target, commit: &str, entry: &TreeEntry) -> String {
        format!(
            "{}/{}{}/resolve/{commit}/{}",
            self.base,
            target.kind.url_prefix(),
            target.repo,
            encode_path(&entry.path, true)
        )
    }

    /// Reads the bytes `[offset, offset + len)` of the file at `url` with one `Range` request
    /// (header mode). The body is capped at `len` bytes: a server that sends more, starts
    /// elsewhere or ignores the range (past offset 0) is refused. Returns the bytes and the
    /// file's total size as `Content-Range` states it.
    pub fn read_range(
        &self,
        url: &str,
        what: &str,
        offset: u64,
        len: u64,
    ) -> Result<(Vec<u8>, Option<u64>), HubError> {
        if len == 0 {
            return Ok((Vec::new(), None));
        }
        let last = offset.saturating_add(len - 1);
        let resp = self.send(url, Some((offset, Some(last))), what)?;
        let bad = |why: &str| HubError::Transport {
            what: what.to_string(),
            message: why.to_string(),
        };
        let (start, total) = match resp.status().as_u16() {
            206 => {
                let cr = resp
                    .headers()
                    .get("content-range")
                    .and_then(|v| v.to_str().ok())
                    .and_then(parse_content_range)
                    .ok_or_else(|| bad("a 206 response without a valid Content-Range"))?;
                (cr.0, cr.1)
            }
            // The whole file from byte 0: usable for a range at 0 (the rest is not read).
            200 if offset == 0 => (0, None),
            _ => return Err(bad("the server does not serve byte ranges")),
        };
        if start != offset {
            return Err(bad("the server answered a range at another offset"));
        }
        let mut reader = resp.into_body().into_with_config().limit(u64::MAX).reader();
        let mut out = Vec::new();
        (&mut reader)
            .take(len)
            .read_to_end(&mut out)
            .map_err(|e| bad(&e.to_string()))?;
        Ok((out, total))
    }

    /// GETs `url` and reads a JSON body of at most [`MAX_JSON_BYTES`].
    fn get_json(&self, url: &str, what: &str) -> Result<Vec<u8>, HubError> {
        read_json_body(self.send(url, None, what)?, what)
    }

    /// One GET with redirects checked hop by hop and bounded retries on 429, 5xx and transport
    /// failures. Returns a 2xx response; every other outcome is an error.
    fn send(
        &self,
        url: &str,
        range: Option<(u64, Option<u64>)>,
        what: &str,
    ) -> Result<Response<ureq::Body>, HubError> {
        let mut attempt = 0;
        loop {
            let (result, retry_after) = match self.follow(url, range, what) {
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    match status {
                        200..=299 => return Ok(resp),
                        401 | 403 => {
                            return Err(HubError::Auth {
                                what: what.to_string(),
                                status,
                            });
                        }
                        404 => {
                            return Err(HubError::NotFound {
                                what: what.to_string(),
                            });
                        }
                        429 | 500 | 502 | 503 | 504 => {
                            let after = resp
                                .headers()
                                .get("retry-after")
                                .and_then(|v| v.to_str().ok())
                                .and_then(|v| v.trim().parse::<u64>().ok())
                                .map(|s| Duration::from_secs(s.min(10)));
                            (
                                HubError::Status {
                                    what: what.to_string(),
                                    status,
                                },
                                after,
                            )
                        }
                        _ => {
                            return Err(HubError::Status {
                                what: what.to_string(),
                                status,
                            });
                        }
                    }
                }
                Err(e @ HubError::Transport { .. }) => (e, None),
                Err(e) => return Err(e),
            };
            if attempt >= self.retries {
                return Err(result);
            }
            let backoff = self
                .backoff
                .saturating_mul(1 << attempt.min(5))
                .min(Duration::from_secs(10));
            std::thread::sleep(retry_after.unwrap_or(backoff));
            attempt += 1;
        }
    }

    /// Follows redirects from `url` under the redirect rule; returns the first non-redirect.
    fn follow(
        &self,
        url: &str,
        range: Option<(u64, Option<u64>)>,
        what: &str,
    ) -> Result<Response<ureq::Body>, HubError> {
        let refuse = |why: String| HubError::Redirect {
            what: what.to_string(),
            why,
        };
        let mut current: Uri = url.parse().map_err(|_| refuse("not a URL".into()))?;
        for _ in 0..=MAX_REDIRECTS {
            let origin = Origin::of(&current)
                .filter(Origin::allowed)
                .ok_or_else(|| {
                    refuse("only https (or http between loopback hosts) is followed".into())
                })?;
            let mut req = self.agent.get(&current);
            match range {
                Some((from, Some(last))) => {
                    req = req.header("Range", format!("bytes={from}-{last}"))
                }
                Some((from, None)) => req = req.header("Range", format!("bytes={from}-")),
                None => {}
            }
            if origin == self.origin
                && let Some(t) = &self.token
            {
                req = req.header("Authorization", format!("Bearer {t}"));
            }
            let resp = req.call().map_err(|e| match tls_failure(&e) {
                Some(message) if origin.https => HubError::Tls {
                    what: what.to_string(),
                    message,
                    hint: self.tls_hint.clone(),
                },
                _ => HubError::Transport {
                    what: what.to_string(),
                    message: e.to_string(),
                },
            })?;
            if !resp.status().is_redirection() {
                return Ok(resp);
            }
            let location = resp
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| refuse("a redirect without a Location".into()))?;
            let next = resolve_location(&current, location)
                .ok_or_else(|| refuse("the Location is not an http(s) URL".into()))?;
            let next_origin = Origin::of(&next)
                .ok_or_else(|| refuse("the Location is not an http(s) URL".into()))?;
            check_hop(&origin, &next_origin).map_err(|why| refuse(why.into()))?;
            current = next;
        }
        Err(refuse(format!("more than {MAX_REDIRECTS} redirects")))
    }
}

/// The TLS library's message when `e` is a TLS failure (a certificate the roots do not vouch
/// for, a handshake alert): rustls reports those as `InvalidData` I/O errors that carry its own
/// error, and retrying them cannot help.
fn tls_failure(e: &ureq::Error) -> Option<String> {
    match e {
        ureq::Error::Rustls(e) => Some(e.to_string()),
        ureq::Error::Io(io) if io.kind() == io::ErrorKind::InvalidData => {
            io.get_ref().map(|inner| inner.to_string())
        }
        _ => None,
    }
}

/// `bytes <first>-<last>/<total>` (total may be `*`): the first byte and the total size.
fn parse_content_range(v: &str) -> Option<(u64, Option<u64>)> {
    let rest = v.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let (first, last) = range.split_once('-')?;
    let first: u64 = first.trim().parse().ok()?;
    let last: u64 = last.trim().parse().ok()?;
    if last < first {
        return None;
    }
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    Some((first, total))
}

/// The redirect rule for one hop: no downgrade (an https hop never leads to plain http), and
/// plain http only between loopback hosts.
fn check_hop(from: &Origin, to: &Origin) -> Result<(), &'static str> {
    if from.https && !to.https {
        return Err("https to http downgrade");
    }
    if !to.allowed() {
        return Err("only https (or http between loopback hosts) is followed");
    }
    Ok(())
}

/// A `Location` against the URL that returned it: absolute http(s) URLs, scheme-relative
/// `//host/path` and absolute paths `/path`. Anything else (other schemes, relative paths) is
/// refused.
fn resolve_location(current: &Uri, location: &str) -> Option<Uri> {
    let scheme = current.scheme_str()?;
    let full = if location.starts_with("https://") || location.starts_with("http://") {
        location.to_string()
    } else if let Some(rest) = location.strip_prefix("//") {
        format!("{scheme}://{rest}")
    } else if location.starts_with('/') {
        format!("{scheme}://{}{location}", current.authority()?)
    } else {
        return None;
    };
    full.parse().ok()
}

fn read_json_body(resp: Response<ureq::Body>, what: &str) -> Result<Vec<u8>, HubError> {
    let mut reader = resp.into_body().into_with_config().limit(u64::MAX).reader();
    let mut out = Vec::new();
    (&mut reader)
        .take(MAX_JSON_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| HubError::Transport {
            what: what.to_string(),
            message: e.to_string(),
        })?;
    if out.len() as u64 > MAX_JSON_BYTES {
        return Err(HubError::TooLarge {
            what: what.to_string(),
            limit: MAX_JSON_BYTES,
        });
    }
    Ok(out)
}

/// One file's download as the scan's byte stream: capped at the declared size plus one byte,
/// resumed with a `Range` request after a broken connection (bounded), and hashed as a git blob
/// for files outside LFS. Nothing is written to disk.
pub struct FileStream<'a> {
    client: &'a Client,
    url: String,
    what: String,
    body: Option<Box<dyn Read + 'a>>,
    offset: u64,
    limit: u64,
    resumes: u32,
    blob: Option<Sha1>,
}

impl FileStream<'_> {
    /// The git blob id of the bytes read (files outside LFS), lowercase hex.
    pub fn git_blob(self) -> Option<String> {
        self.blob.map(|h| crate::model::finding::hex(&h.finalize()))
    }

    /// Bytes delivered so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn resume(&mut self) -> io::Result<()> {
        let resp = self
            .client
            .send(&self.url, Some((self.offset, None)), &self.what)
            .map_err(io::Error::other)?;
        // A server that ignores the Range would replay the file from byte 0 into the digest.
        let starts_here = resp.status().as_u16() == 206
            && resp
                .headers()
                .get("content-range")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("bytes "))
                .and_then(|v| v.split('-').next())
                .and_then(|v| v.trim().parse::<u64>().ok())
                == Some(self.offset);
        if !starts_here {
            return Err(io::Error::other(
                "the connection broke and the server cannot resume at the same offset",
            ));
        }
        self.body = Some(Box::new(resp.into_body().into_reader()));
        Ok(())
    }
}

impl Read for FileStream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = self.limit.saturating_sub(self.offset);
        if room == 0 {
            return Ok(0);
        }
        let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let Some(dst) = buf.get_mut(..want) else {
            return Ok(0);
        };
        loop {
            let Some(body) = self.body.as_mut() else {
                return Ok(0);
            };
            match body.read(dst) {
                Ok(n) => {
                    if let (Some(h), Some(got)) = (&mut self.blob, dst.get(..n)) {
                        h.update(got);
                    }
                    self.offset += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if self.resumes > 0 => {
                    self.resumes -= 1;
                    self.body = None;
                    if self.resume().is_err() {
                        return Err(e);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range_is_parsed_strictly() {
        assert_eq!(parse_content_range("bytes 0-9/100"), Some((0, Some(100))));
        assert_eq!(parse_content_range("bytes 5-9/*"), Some((5, None)));
        assert_eq!(parse_content_range("bytes 9-5/100"), None);
        assert_eq!(parse_content_range("items 0-9/100"), None);
    }

    #[test]
    fn locations_resolve_only_to_http_urls() {
        let cur: Uri = "https://hub.test/a/resolve/c/f".parse().unwrap();
        assert_eq!(
            resolve_location(&cur, "/b").unwrap().to_string(),
            "https://hub.test/b"
        );
        assert_eq!(
            resolve_location(&cur, "//cdn.test/x").unwrap().to_string(),
            "https://cdn.test/x"
        );
        assert!(resolve_location(&cur, "file:///etc/passwd").is_none());
        assert!(resolve_location(&cur, "relative/x").is_none());
    }

    #[test]
    fn redirects_never_downgrade_https() {
        let o = |u: &str| Origin::of(&u.parse::<Uri>().unwrap()).unwrap();
        assert_eq!(
            check_hop(&o("https://hub.test/a"), &o("http://cdn.test/b")),
            Err("https to http downgrade")
        );
        // Even to a loopback host: https never becomes plain http.
        assert!(check_hop(&o("https://hub.test/a"), &o("http://127.0.0.1/b")).is_err());
        assert!(check_hop(&o("http://127.0.0.1:1/a"), &o("http://example.com/b")).is_err());
        assert!(check_hop(&o("https://hub.test/a"), &o("https://cdn.test/b")).is_ok());
        assert!(check_hop(&o("http://127.0.0.1:1/a"), &o("http://127.0.0.1:2/b")).is_ok());
    }

    #[test]
    fn plain_http_only_on_loopback() {
        let o = |u: &str| Origin::of(&u.parse::<Uri>().unwrap()).unwrap();
        assert!(o("http://127.0.0.1:8080/x").allowed());
        assert!(o("http://localhost/x").allowed());
        assert!(o("http://[::1]:9/x").allowed());
        assert!(!o("http://example.com/x").allowed());
        assert!(o("https://example.com/x").allowed());
        let bad = ClientOptions {
            endpoint: "http://example.com".into(),
            token: None,
            connect_timeout: Duration::from_secs(1),
            read_timeout: Duration::from_secs(1),
            retries: 0,
            backoff: Duration::ZERO,
            ca_bundle: None,
        };
        assert!(matches!(Client::new(&bad), Err(HubError::Endpoint(..))));
    }

    #[test]
    fn debug_never_shows_the_token() {
        let c = Client::new(&ClientOptions {
            endpoint: "https://hub.test".into(),
            token: Some("hf_secret".into()),
            connect_timeout: Duration::from_secs(1),
            read_timeout: Duration::from_secs(1),
            retries: 0,
            backoff: Duration::ZERO,
            ca_bundle: None,
        })
        .unwrap();
        assert!(!format!("{c:?}").contains("hf_secret"));
    }

    const TEST_CA: &[u8] = include_bytes!("../../tests/fixtures/tls/ca.pem");

    #[test]
    fn ca_bundle_reads_every_certificate_and_skips_comments() {
        let mut pem = b"# Issuer: test\n".to_vec();
        pem.extend_from_slice(TEST_CA);
        pem.extend_from_slice(b"\n# a second copy\n");
        pem.extend_from_slice(TEST_CA);
        assert_eq!(parse_ca_bundle(&pem).unwrap().len(), 2);
    }

    #[test]
    fn ca_bundle_without_a_certificate_is_refused() {
        let why = parse_ca_bundle(b"just text\n").unwrap_err();
        assert!(why.contains("no PEM certificate"), "{why}");
        // A DER certificate is not PEM.
        let der = ureq::tls::Certificate::from_pem(TEST_CA)
            .unwrap()
            .der()
            .to_vec();
        assert!(parse_ca_bundle(&der).is_err());
    }

    #[test]
    fn ca_bundle_with_a_broken_certificate_is_refused() {
        // Valid base64 of bytes that are not DER: the TLS layer would skip it without a word.
        let pem = b"-----BEGIN CERTIFICATE-----\nAAECAwQFBgcICQ==\n-----END CERTIFICATE-----\n";
        let mut bundle = TEST_CA.to_vec();
        bundle.extend_from_slice(pem);
        let why = parse_ca_bundle(&bundle).unwrap_err();
        assert!(why.contains("certificate 2 is not a valid X.509"), "{why}");
        // Base64 that does not decode.
        let pem = b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n";
        assert!(
            parse_ca_bundle(pem)
                .unwrap_err()
                .contains("not a valid PEM")
        );
    }

    #[test]
    fn ca_bundle_files_are_bounded_and_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        assert!(matches!(
            CaBundle::load("SSL_CERT_FILE", &missing),
            Err(HubError::CaBundle {
                var: "SSL_CERT_FILE",
                ..
            })
        ));
        let err = CaBundle::load("SSL_CERT_FILE", dir.path()).unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
        let big = dir.path().join("big.pem");
        let mut bytes = TEST_CA.to_vec();
        bytes.resize(usize::try_from(MAX_CA_BUNDLE_BYTES).unwrap() + 1, b'\n');
        std::fs::write(&big, bytes).unwrap();
        let err = CaBundle::load("REQUESTS_CA_BUNDLE", &big).unwrap_err();
        assert!(err.to_string().contains("larger than"), "{err}");
        let ok = dir.path().join("ca.pem");
        std::fs::write(&ok, TEST_CA).unwrap();
        let b = CaBundle::load("REQUESTS_CA_BUNDLE", &ok).unwrap();
        assert_eq!(b.roots.len(), 1);
    }

    #[test]
    fn a_shape_error_is_stated_once() {
        let problem = api::parse_revision(b"<html>").unwrap_err();
        let e = HubError::Shape {
            what: "revision `main` of acme/x".into(),
            problem,
        };
        // main prints the error with its source chain: the problem must not be the source too.
        assert!(std::error::Error::source(&e).is_none());
        assert!(
            e.to_string().starts_with("revision `main` of acme/x: "),
            "{e}"
        );
    }
}
