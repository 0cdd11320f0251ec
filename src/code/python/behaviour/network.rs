//! **network**: the code opens a connection to a host that is not the Hugging Face Hub.
//!
//! Reported for `socket`, `urllib`, `http.client`, `requests`, `httpx`, `aiohttp`, `ftplib`,
//! `smtplib`, `telnetlib`, `websocket(s)`, `urllib3`, `paramiko` and `pycurl` entry points, and
//! for `.connect((host, port))` on a socket when the file imports `socket`. Requests to the
//! Hub's own hosts (`huggingface.co`, `hf.co`) are what a loader does anyway and are not sites.
//!
//! Severity: **critical** when what is sent is visible and holds the environment or a credential
//! (`requests.post(url, json=dict(os.environ))`, a token read from `~/.cache/huggingface/token`);
//! **high** for a hard-coded host that is not the Hub's; **medium** when the URL comes from the
//! caller or is computed (an image processor that fetches the image it is given).

use crate::code::python::field::{Field, Fields};
use tree_sitter::Node;

use super::analyzer::{Analyzer, CallSite, Confidence};
use crate::knowledge::capabilities::{self as caps, Capability, Role};
use crate::knowledge::places;
use crate::model::finding::Severity;

/// A table entry that connects.
pub(super) fn judge<'s>(a: &mut Analyzer<'s, '_, '_>, site: &CallSite<'s>) {
    // A socket's constructor takes its family, not an address; `.connect` names the host.
    let target = if matches!(site.name.as_str(), "socket.socket" | "socket.fromfd") {
        None
    } else {
        site.args
            .arg(0, &["url", "host", "address", "uri", "endpoint"])
    };
    let host = target.and_then(|t| literal_host(a, t));
    let sent = sent_secret(a, site.node);
    let shown = target.map(|t| a.excerpt(a.text(t))).unwrap_or_default();
    let (severity, detail) = match (&host, &sent) {
        (Some(h), _) if (places::is_hub_host(h) || is_local_host(h)) && sent.is_none() => return,
        (_, Some(what)) => (
            Severity::Critical,
            match &host {
                Some(h) => format!("sends {what} to `{h}`"),
                None => format!("sends {what} over the network (`{shown}`)"),
            },
        ),
        (Some(h), None) => (Severity::High, format!("connects to `{h}` (`{shown}`)")),
        (None, None) if target.is_none() => (
            Severity::Medium,
            "opens a network client or socket".to_owned(),
        ),
        (None, None) => (
            Severity::Medium,
            format!("connects to an address computed at run time (`{shown}`)"),
        ),
    };
    a.push(
        site.node,
        Capability::Network,
        severity,
        site.confidence,
        &site.name,
        detail,
        if sent.is_some() { 200 } else { site.entry.cwe },
    );
}

/// `sock.connect(("1.2.3.4", 4444))` and `sock.send(secret)` on objects the table cannot name,
/// when the file imports `socket`.
pub(super) fn judge_unlisted<'s>(a: &mut Analyzer<'s, '_, '_>, node: Node<'s>, func: Node<'s>) {
    if func.kind() != "attribute" {
        return;
    }
    let Some(method) = func.field(Field::Attribute).map(|m| a.text(m)) else {
        return;
    };
    let sockets = ["socket", "ssl", "websocket", "websockets"]
        .iter()
        .any(|m| a.sc.bindings.imports_module(m));
    if !sockets
        && !matches!(
            method,
            "get" | "post" | "put" | "patch" | "request" | "urlopen" | "fetch"
        )
    {
        return;
    }
    let args = a.sc.args(node);
    match method {
        "connect" | "connect_ex" => {
            let Some(addr) = args.positional.first() else {
                return;
            };
            if addr.kind() != "tuple" {
                return;
            }
            let Some(host) = addr.named_child(0).and_then(|h| a.string(h)) else {
                return;
            };
            if is_local_host(&host) || places::is_hub_host(&host) {
                return;
            }
            let detail = format!("connects a socket to `{}`", a.excerpt(a.text(*addr)));
            a.push(
                node,
                Capability::Network,
                Severity::High,
                Confidence::Medium,
                &format!("socket.{method}"),
                detail,
                494,
            );
        }
        // `session.get(url, params=os.environ)`, `PoolManager().request("POST", url, body=…)`:
        // a client object the table cannot name, sending a secret.
        "get" | "post" | "put" | "patch" | "request" | "urlopen" | "fetch"
            if ["requests", "httpx", "aiohttp", "urllib3", "http", "urllib"]
                .iter()
                .any(|m| a.sc.bindings.imports_module(m)) =>
        {
            let Some(what) = sent_secret(a, node) else {
                return;
            };
            let detail = format!("sends {what} (`{}`)", a.excerpt(a.text(func)));
            a.push(
                node,
                Capability::Network,
                Severity::Critical,
                Confidence::Medium,
                &format!("<client>.{method}"),
                detail,
                200,
            );
        }
        "send" | "sendall" | "sendto" => {
            let Some(what) = sent_secret(a, node) else {
                return;
            };
            let detail = format!("sends {what} over a socket");
            a.push(
                node,
                Capability::Network,
                Severity::Critical,
                Confidence::Medium,
                &format!("socket.{method}"),
                detail,
                200,
            );
        }
        _ => {}
    }
}

/// The host of a literal URL (`https://host:port/...`) or bare host name.
pub(super) fn literal_host<'s>(a: &Analyzer<'s, '_, '_>, node: Node<'s>) -> Option<String> {
    // `(host, port)`, as `socket.create_connection` and `asyncio.open_connection` take it.
    if node.kind() == "tuple" {
        return node
            .named_child(0)
            .and_then(|h| a.string(h))
            .and_then(|h| host_of(&h));
    }
    let text = match a.string(node) {
        Some(s) => s,
        None => {
            // An f-string or concatenation whose literal start names the host.
            let fragments = a.path_fragments(node);
            if !fragments.contains("://") {
                return None;
            }
            fragments
        }
    };
    host_of(&text)
}

/// This machine: not a connection out.
fn is_local_host(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "0.0.0.0" | "::1" | "")
}

/// The host part of a URL or `host:port`.
pub fn host_of(text: &str) -> Option<String> {
    let rest = match text.split_once("://") {
        Some((_, rest)) => rest,
        None => text,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = if host.starts_with('[') {
        host.split(']').next()?.trim_start_matches('[')
    } else {
        host.split(':').next()?
    };
    let host = host.trim();
    (!host.is_empty() && !host.contains(char::is_whitespace)).then(|| host.to_ascii_lowercase())
}

/// What secret the arguments of `call` carry, if any: the environment, a credential variable,
/// a credential file, a token.
fn sent_secret<'s>(a: &Analyzer<'s, '_, '_>, call: Node<'s>) -> Option<String> {
    let args = call.field(Field::Arguments)?;
    secret_in(a, args, 0)
}

/// The secret an expression carries (bounded walk; names assigned once are followed).
pub(super) fn secret_in<'s>(
    a: &Analyzer<'s, '_, '_>,
    node: Node<'s>,
    depth: usize,
) -> Option<String> {
    if depth > 4 {
        return None;
    }
    let mut stack = vec![node];
    let mut seen = 0usize;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > 4096 {
            return None;
        }
        match n.kind() {
            "attribute" | "identifier" if a.resolves_to(n, "os.environ") => {
                return Some("the environment (`os.environ`)".to_owned());
            }
            "identifier" => {
                let name = a.text(n);
                if let Some(what) = a.secrets.get(name) {
                    return Some(what.clone());
                }
                if let Some(v) = a.value_of(name)
                    && v.id() != node.id()
                    && let Some(what) = secret_in(a, v, depth + 1)
                {
                    return Some(what);
                }
            }
            "call" => {
                if let Some(what) = super::credentials::secret_of_call(a, n) {
                    return Some(what);
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    None
}

/// Whether an expression holds bytes fetched from the network (`requests.get(u).content`,
/// `urlopen(u).read()`, or a name assigned once from such).
pub(super) fn is_fetched<'s>(a: &Analyzer<'s, '_, '_>, node: Node<'s>) -> bool {
    fetched_depth(a, node, 0)
}

fn fetched_depth<'s>(a: &Analyzer<'s, '_, '_>, node: Node<'s>, depth: usize) -> bool {
    if depth > 4 {
        return false;
    }
    let mut stack = vec![node];
    let mut seen = 0usize;
    while let Some(n) = stack.pop() {
        seen += 1;
        if seen > 4096 {
            return false;
        }
        match n.kind() {
            "call" => {
                if let Some(f) = n.field(Field::Function)
                    && a.resolve(f)
                        .iter()
                        .any(|name| caps::lookup(name).is_some_and(|e| e.role == Role::Connect))
                {
                    return true;
                }
            }
            "identifier" => {
                if let Some(v) = a.value_of(a.text(n))
                    && v.id() != node.id()
                    && fetched_depth(a, v, depth + 1)
                {
                    return true;
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::host_of;

    #[test]
    fn hosts_of_urls() {
        assert_eq!(
            host_of("https://evil.example:8443/x?y").as_deref(),
            Some("evil.example")
        );
        assert_eq!(
            host_of("http://user:pw@10.0.0.1/").as_deref(),
            Some("10.0.0.1")
        );
        assert_eq!(host_of("huggingface.co").as_deref(), Some("huggingface.co"));
        assert_eq!(host_of("http://[::1]:80/").as_deref(), Some("::1"));
    }
}
