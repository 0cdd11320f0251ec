//! Places the code judge treats as sensitive: file paths that hold credentials or make a write
//! persist, environment variables that hold secrets, the Hub's own hosts, the modules whose
//! state a tamperer changes, and the directories Python imports from at start-up.

use super::capabilities::{Capability, normalize};
use Capability::{CredentialAccess as Cred, Persistence as Persist};

/// What a file path literal points at, for the read/write judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathClass {
    /// A fragment of the path (matched case-insensitively after `\` becomes `/`).
    pub fragment: &'static str,
    /// What touching it is: [`Capability::CredentialAccess`] for reads of secrets,
    /// [`Capability::Persistence`] for writes that survive or alter other programs.
    pub capability: Capability,
    /// What the path is, for messages.
    pub what: &'static str,
}

const fn p(fragment: &'static str, capability: Capability, what: &'static str) -> PathClass {
    PathClass {
        fragment,
        capability,
        what,
    }
}

/// Paths that hold credentials (read: [`Capability::CredentialAccess`]) or that make a write
/// persist (write: [`Capability::Persistence`]). A credential path written to is persistence
/// too (`~/.ssh/authorized_keys`).
pub const PATHS: &[PathClass] = &[
    p("huggingface/token", Cred, "the Hugging Face token file"),
    p(".huggingface/token", Cred, "the Hugging Face token file"),
    p(".ssh", Cred, "SSH keys"),
    p(".aws/credentials", Cred, "AWS credentials"),
    p(".aws/config", Cred, "AWS configuration"),
    p(".aws", Cred, "AWS credentials"),
    p(".netrc", Cred, "netrc passwords"),
    p(".docker/config.json", Cred, "Docker registry credentials"),
    p(".git-credentials", Cred, "git credentials"),
    p(".gitconfig", Cred, "git configuration"),
    p(".kube/config", Cred, "Kubernetes credentials"),
    p(".pypirc", Cred, "PyPI upload credentials"),
    p(".gnupg", Cred, "GnuPG keys"),
    p(".config/gcloud", Cred, "Google Cloud credentials"),
    p(".azure", Cred, "Azure credentials"),
    p(".config/gh/hosts.yml", Cred, "GitHub CLI token"),
    p(".local/share/keyrings", Cred, "the desktop keyring"),
    p("/etc/shadow", Cred, "system password hashes"),
    p("/etc/passwd", Cred, "the system user list"),
    p(".bashrc", Persist, "a shell profile"),
    p(".bash_profile", Persist, "a shell profile"),
    p(".bash_login", Persist, "a shell profile"),
    p(".profile", Persist, "a shell profile"),
    p(".zshrc", Persist, "a shell profile"),
    p(".zprofile", Persist, "a shell profile"),
    p(".zshenv", Persist, "a shell profile"),
    p("config/fish/config.fish", Persist, "a shell profile"),
    p("/etc/profile", Persist, "a shell profile"),
    p("/etc/bash.bashrc", Persist, "a shell profile"),
    p(
        "sitecustomize",
        Persist,
        "sitecustomize, run by every Python start",
    ),
    p(
        "usercustomize",
        Persist,
        "usercustomize, run by every Python start",
    ),
    p("site-packages", Persist, "installed packages"),
    p("dist-packages", Persist, "installed packages"),
    p("crontab", Persist, "a crontab"),
    p("/etc/cron", Persist, "a cron table"),
    p("/var/spool/cron", Persist, "a cron table"),
    p("systemd/system", Persist, "a systemd unit"),
    p("systemd/user", Persist, "a systemd user unit"),
    p(".config/autostart", Persist, "a desktop autostart entry"),
    p("launchagents", Persist, "a macOS launch agent"),
    p("launchdaemons", Persist, "a macOS launch daemon"),
    p("/etc/rc.local", Persist, "a boot script"),
    p(
        "/etc/ld.so.preload",
        Persist,
        "the dynamic loader preload list",
    ),
    p("authorized_keys", Persist, "SSH authorized keys"),
    p("/usr/bin", Persist, "system executables"),
    p("/usr/local/bin", Persist, "system executables"),
    p(".local/bin", Persist, "user executables"),
];

/// The class of a path literal: credential or persistence location, if it is one. The most
/// specific (longest) fragment wins.
pub fn path_class(path: &str) -> Option<&'static PathClass> {
    let path = path.replace('\\', "/").to_ascii_lowercase();
    PATHS
        .iter()
        .filter(|c| {
            let f = c.fragment;
            match path.find(f) {
                // `.ssh` must be a whole path component (not `.sshconfig_template`); other
                // fragments are distinctive enough as substrings. A `.pth` file is persistence
                // only inside `site-packages` (which matches): `model.pth` is a checkpoint.
                Some(at) if f.starts_with('.') && !f.contains('/') => {
                    let end = at + f.len();
                    let before_ok = at == 0
                        || path.as_bytes().get(at - 1) == Some(&b'/')
                        || path.as_bytes().get(at - 1) == Some(&b'~');
                    let after_ok = matches!(path.as_bytes().get(end), None | Some(b'/'));
                    before_ok && after_ok
                }
                Some(_) => true,
                None => false,
            }
        })
        .max_by_key(|c| c.fragment.len())
}

/// Environment variables that hold secrets; reading one is credential access (reading any
/// other one variable is a setting, not a finding).
pub const CREDENTIAL_VARIABLES: &[&str] = &[
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "HUGGINGFACE_TOKEN",
    "HF_API_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SESSION_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET",
    "WANDB_API_KEY",
    "NPM_TOKEN",
    "PYPI_TOKEN",
    "TWINE_PASSWORD",
    "SSH_AUTH_SOCK",
];

/// Whether reading the environment variable `name` reads a secret: a listed variable, or one
/// whose name says it is a token, secret, password or key.
pub fn credential_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    CREDENTIAL_VARIABLES.contains(&upper.as_str())
        || [
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "API_KEY",
            "ACCESS_KEY",
            "PRIVATE_KEY",
        ]
        .iter()
        .any(|w| upper.contains(w))
}

/// Hosts of the Hugging Face Hub: a connection to one of these is what a model loader does
/// anyway. Matched on the host name or any subdomain.
pub const HUB_HOSTS: &[&str] = &["huggingface.co", "hf.co", "huggingface.tech"];

/// Whether `host` (no scheme, no port) is the Hub's.
pub fn is_hub_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    HUB_HOSTS
        .iter()
        .any(|h| host == *h || host.ends_with(&format!(".{h}")))
}

/// Modules whose attributes code must not replace (`torch.load = …`): assigning to an attribute
/// of any imported module is tampering, and these are the ones named in messages as the usual
/// targets. [`is_tamper_target`] accepts every module; this list is what the judges of other
/// formats (pickle `setattr` gadgets, configs) use when they cannot see imports.
pub const TAMPER_TARGETS: &[&str] = &[
    "builtins",
    "torch",
    "pickle",
    "os",
    "sys",
    "subprocess",
    "importlib",
    "transformers",
    "safetensors",
    "numpy",
    "huggingface_hub",
    "socket",
    "requests",
    "ssl",
    "json",
    "io",
    "shutil",
];

/// Whether replacing an attribute of the module `module` (as resolved) is tampering with a
/// module the judges know: the first segment is in [`TAMPER_TARGETS`].
pub fn is_tamper_target(module: &str) -> bool {
    let module = normalize(module);
    let first = module.split('.').next().unwrap_or_default();
    TAMPER_TARGETS.contains(&first)
}

/// Calls that return the directories Python imports from at start-up: a path built from one
/// is a write into `site-packages` (a `.pth` or `sitecustomize.py` there runs at every start).
pub const SITE_DIRECTORIES: &[&str] = &[
    "site.getsitepackages",
    "site.getusersitepackages",
    "sysconfig.get_path",
    "sysconfig.get_paths",
    "distutils.sysconfig.get_python_lib",
    "site.USER_SITE",
];

/// Whether the resolved name returns (or is) an import directory ([`SITE_DIRECTORIES`]).
pub fn is_site_directory(name: &str) -> bool {
    SITE_DIRECTORIES.contains(&normalize(name).as_str())
}
