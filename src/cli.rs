//! Command-line arguments (clap derive): the binary's raw words. Each command in `commands/`
//! turns them into the library's options; the library knows nothing of clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use modelgate::model::report::FailOn;
use modelgate::report::OutputFormat;
use modelgate::report::cyclonedx::SbomFormat;

/// modelgate: a supply-chain policy gate for machine-learning model repositories.
#[derive(Debug, Parser)]
#[command(name = "modelgate", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
// Parsed once per run: boxing `ScanArgs` to shrink the enum would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Scan one or more model repositories (default: the current directory).
    Scan(ScanArgs),
    /// Show one file's facts: header, tensors, pickle imports, findings.
    Inspect(InspectArgs),
    /// Check a tree against a model signature and/or the digests an SBOM recorded.
    ///
    /// An SBOM is trusted as given: an SBOM edited together with the files passes. It is only
    /// as trustworthy as the channel it came from; check its signature (`--signature`, or an
    /// attestation of the SBOM) where one exists.
    Verify(VerifyArgs),
    /// Sign a model tree (OpenSSF Model Signing bundle), or attest an SBOM.
    Sign(SignArgs),
    /// Validate or create policy files.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// List every rule.
    Rules(RulesArgs),
    /// Explain one rule: help, default level per preset, an example.
    Explain(ExplainArgs),
    /// Check the built binary's panic isolation (CI runs it on the release build; hidden).
    #[command(hide = true)]
    Selftest,
}

/// SBOM serialisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SbomFormatArg {
    /// CycloneDX JSON.
    Json,
    /// CycloneDX XML.
    Xml,
}

impl From<SbomFormatArg> for SbomFormat {
    fn from(a: SbomFormatArg) -> Self {
        match a {
            SbomFormatArg::Json => SbomFormat::Json,
            SbomFormatArg::Xml => SbomFormat::Xml,
        }
    }
}

/// `scan --sbom-spec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SbomSpecArg {
    /// CycloneDX 1.5 (JSON or XML).
    #[value(name = "1.5")]
    V1_5,
    /// CycloneDX 1.6 (JSON).
    #[value(name = "1.6")]
    V1_6,
    /// CycloneDX 1.7 (JSON).
    #[value(name = "1.7")]
    V1_7,
}

impl From<SbomSpecArg> for modelgate::report::cyclonedx::SbomSpec {
    fn from(a: SbomSpecArg) -> Self {
        match a {
            SbomSpecArg::V1_5 => Self::V1_5,
            SbomSpecArg::V1_6 => Self::V1_6,
            SbomSpecArg::V1_7 => Self::V1_7,
        }
    }
}

/// Report formats for `scan --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Human-readable text.
    Text,
    /// The JSON report (schema_version 1).
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// A Markdown summary (GitHub job summaries).
    Markdown,
}

impl From<FormatArg> for OutputFormat {
    fn from(a: FormatArg) -> Self {
        match a {
            FormatArg::Text => OutputFormat::Text,
            FormatArg::Json => OutputFormat::Json,
            FormatArg::Sarif => OutputFormat::Sarif,
            FormatArg::Markdown => OutputFormat::Markdown,
        }
    }
}

/// What makes `scan` exit with 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    /// A denied finding (the default).
    Deny,
    /// A denied or warned finding.
    Warn,
    /// Never: always exit 0 unless the tool itself fails.
    Never,
}

impl From<FailOnArg> for FailOn {
    fn from(a: FailOnArg) -> Self {
        match a {
            FailOnArg::Deny => FailOn::Deny,
            FailOnArg::Warn => FailOn::Warn,
            FailOnArg::Never => FailOn::Never,
        }
    }
}

/// Extra digest algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HashAlg {
    /// SHA-512 (SHA-256 is always computed).
    Sha512,
}

/// Text or JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextOrJson {
    /// Human-readable text.
    Text,
    /// JSON.
    Json,
}

/// How a remote target is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RemoteArg {
    /// Every byte, streamed once.
    Full,
    /// Byte ranges of headers and code-capable parts only.
    Headers,
}

impl From<RemoteArg> for modelgate::hub::RemoteMode {
    fn from(a: RemoteArg) -> Self {
        match a {
            RemoteArg::Full => modelgate::hub::RemoteMode::Full,
            RemoteArg::Headers => modelgate::hub::RemoteMode::Headers,
        }
    }
}

/// `modelgate scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Directories (or files) to scan, or one Hugging Face repository: `hf://ns/name[@rev]`,
    /// `hf://datasets/ns/name[@rev]` or `https://huggingface.co/ns/name[/tree/rev]`.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Policy file (default: modelgate.toml at the scan root, else the built-in default).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: FormatArg,
    /// Write the report here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write a CycloneDX SBOM of the tree (1.5 unless `--sbom-spec 1.6` or `1.7`).
    #[arg(long, value_name = "FILE")]
    pub sbom: Option<PathBuf>,
    /// SBOM serialisation.
    #[arg(long, value_enum, default_value = "json")]
    pub sbom_format: SbomFormatArg,
    /// CycloneDX version of the SBOM (1.6 and 1.7 are JSON only).
    #[arg(long, value_enum, default_value = "1.5")]
    pub sbom_spec: SbomSpecArg,
    /// Add the author of the scanned git HEAD commit to the SBOM's `metadata.authors`.
    #[arg(long, conflicts_with = "no_git")]
    pub sbom_author_from_git: bool,
    /// The SBOM's supplier (the organisation releasing the model), where the Hub or GitHub
    /// namespace does not say it.
    #[arg(long, value_name = "NAME")]
    pub sbom_supplier: Option<String>,
    /// The supplier's URL (its security contact page, for instance), with `--sbom-supplier`.
    #[arg(long, value_name = "URL", requires = "sbom_supplier")]
    pub sbom_supplier_url: Option<String>,
    /// The released version the SBOM describes (`metadata.component.version`). Without it the
    /// tag on the scanned commit is used (a clean tree with exactly one tag, or the highest
    /// version-looking one), else the commit id; a plain folder has no version.
    #[arg(long, value_name = "VERSION")]
    pub sbom_version: Option<String>,
    /// An author of the SBOM, `metadata.authors` (repeatable).
    #[arg(long, value_name = "NAME")]
    pub sbom_author: Vec<String>,
    /// Extra digests computed in the same read (repeatable).
    #[arg(long = "hash", value_enum)]
    pub hashes: Vec<HashAlg>,
    /// Also write SARIF 2.1.0 here.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// SARIF `automationDetails.id` (the code-scanning category); omitted when not given, so
    /// a workflow's `upload-sarif` `category` applies.
    #[arg(long, value_name = "CATEGORY")]
    pub sarif_category: Option<String>,
    /// What makes the exit code 1.
    #[arg(long, value_enum, default_value = "deny")]
    pub fail_on: FailOnArg,
    /// Scan float tensors for NaN/Inf (ST002).
    #[arg(long)]
    pub check_values: bool,
    /// Exclude paths matching this glob (relative to the root; repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Worker threads (default: number of CPUs).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Skip git provenance.
    #[arg(long)]
    pub no_git: bool,
    /// No progress output.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print diagnostics (SHA-256 backend, timings) to stderr.
    #[arg(long, short)]
    pub verbose: bool,
    /// Result cache directory: files unchanged since the last scan (same path, device, inode,
    /// size, modification and change time, same modelgate build, policy and options) are not read
    /// again. The directory must be as trusted as the binary.
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub cache: Option<PathBuf>,
    /// Read every file even if a cache is configured.
    #[arg(long)]
    pub no_cache: bool,
    /// Read block size in bytes (benchmarking).
    #[arg(long, value_name = "BYTES", hide = true)]
    pub block_size: Option<usize>,
    /// Remote scans: read the Hub token from this file (default: HF_TOKEN, else
    /// $HF_HOME/token). The token is sent only to the Hub endpoint and never printed.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Remote scans: `full` streams every byte once (digests computed); `headers` reads byte
    /// ranges only (safetensors headers, zip central directories and pickle members, GGUF
    /// metadata, small text files whole), takes digests from the Hub and records what was not
    /// read (`facts.coverage`, HUB003/HUB004).
    #[arg(long, value_enum, default_value = "full", value_name = "MODE")]
    pub remote: RemoteArg,
    /// Scan many remote targets: one per line (blank lines and `#` comments skipped). Writes
    /// one JSON report per line (JSON Lines) to -o or stdout; the exit code is the worst one,
    /// and 2 if any target failed (after the others were scanned).
    #[arg(long, value_name = "FILE")]
    pub repos_from: Option<PathBuf>,
    /// With --repos-from: scan only slice K of N (1-based). After duplicates are dropped, the
    /// target on line i (0-based) belongs to slice i mod N + 1.
    #[arg(long, value_name = "K/N", requires = "repos_from")]
    pub shard: Option<String>,
    /// Model signature options (issue 19), on top of the policy's `[signing]` table.
    #[command(flatten)]
    pub signing: ScanSigningArgs,
}

/// `scan`'s signature flags: they add to the policy's `[signing]` table.
#[derive(Debug, Args)]
#[command(next_help_heading = "Signature (OpenSSF Model Signing)")]
#[command(group(clap::ArgGroup::new("keyless_signer").args(["identity", "identity_regex"])))]
pub struct ScanSigningArgs {
    /// The signature to check (default: `[signing] signature`, `model.sig` at the scan root).
    /// One scan root only.
    #[arg(long, value_name = "FILE")]
    pub signature: Option<PathBuf>,
    /// Fail (SIG001) when the scan root has no signature, as `[signing] require = true`.
    #[arg(long)]
    pub require_signature: bool,
    /// Trust this public key (PEM; repeatable), or a key fingerprint `sha256:<hex>` (checked
    /// against the key a certificate signature carries).
    #[arg(long = "key", value_name = "PEM|FINGERPRINT")]
    pub keys: Vec<PathBuf>,
    /// Trust these root certificates (PEM; repeatable).
    #[arg(long = "certificate-chain", value_name = "PEM")]
    pub certificate_chain: Vec<PathBuf>,
    /// Keyless: trust this signer identity (certificate SAN), exact match.
    #[arg(long, value_name = "SAN", requires_all = ["issuer", "trust_root"])]
    pub identity: Option<String>,
    /// Keyless: trust any signer identity the whole of which matches this regular expression.
    #[arg(
        long = "identity-regex",
        value_name = "REGEX",
        conflicts_with = "identity",
        requires_all = ["issuer", "trust_root"]
    )]
    pub identity_regex: Option<String>,
    /// Keyless: the identity's OIDC issuer, exact match.
    #[arg(long, value_name = "URL", requires = "keyless_signer")]
    pub issuer: Option<String>,
    /// Keyless: a Sigstore trusted root JSON (verification is offline).
    #[arg(long = "trust-root", value_name = "FILE", requires = "keyless_signer")]
    pub trust_root: Option<PathBuf>,
}

/// `modelgate inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The file.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: TextOrJson,
    /// Print a pickle opcode listing (like pickletools.dis).
    #[arg(long)]
    pub disassemble: bool,
    /// Scan float tensors for NaN/Inf.
    #[arg(long)]
    pub check_values: bool,
    /// Policy whose options and limits apply.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

/// `modelgate verify`.
#[derive(Debug, Args)]
#[command(after_help = VERIFY_AFTER_HELP)]
pub struct VerifyArgs {
    /// The CycloneDX SBOM (JSON or XML) produced by `scan --sbom`.
    #[arg(long, value_name = "FILE", required_unless_present_any = ["signature", "attestation"])]
    pub sbom: Option<PathBuf>,
    /// The tree to check (default: the current directory).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: TextOrJson,
    /// Verify the tree against this OpenSSF Model Signing signature (Sigstore bundle).
    #[arg(long, value_name = "FILE")]
    pub signature: Option<PathBuf>,
    /// Check this in-toto attestation of the SBOM (from `sign --sbom`) before trusting it.
    #[arg(long, value_name = "FILE", requires = "sbom")]
    pub attestation: Option<PathBuf>,
    /// Whom to trust for `--signature` / `--attestation`.
    #[command(flatten)]
    pub trust: SignatureTrustArgs,
}

/// Extra help for `verify`: which flags prove what.
const VERIFY_AFTER_HELP: &str = "\
Signature verification (exit 0 only when the signature and the tree both verify):
  --signature model.sig --key pub.pem              key method (ECDSA P-256/P-384)
  --signature model.sig --certificate-chain ca.pem certificate method, chain checked to ca.pem now
                                                   (SOURCE_DATE_EPOCH sets the clock)
  --signature model.sig --identity I --issuer U --trust-root trusted_root.json
                                                   keyless Sigstore, offline: Fulcio chain, SAN and
                                                   OIDC issuer, Rekor SET and inclusion proof
                                                   (--identity-regex R: the whole SAN matches R)
SBOM:
  --sbom model.cdx.json [--attestation att.json --key pub.pem]
                                                   files match the SBOM (signed by the key)";

/// Who the verifier trusts (shared by `verify --signature` and `verify --attestation`).
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("keyless_signer").args(["identity", "identity_regex"])))]
pub struct SignatureTrustArgs {
    /// Trust this public key (PEM).
    #[arg(long, value_name = "PEM", conflicts_with_all = ["certificate_chain", "keyless_signer"])]
    pub key: Option<PathBuf>,
    /// Trust these root certificates (PEM; repeatable).
    #[arg(
        long = "certificate-chain",
        value_name = "PEM",
        conflicts_with = "keyless_signer"
    )]
    pub certificate_chain: Vec<PathBuf>,
    /// Keyless: the signer's identity (certificate SAN: email or URI), exact match.
    #[arg(long, value_name = "SAN", requires_all = ["issuer", "trust_root"])]
    pub identity: Option<String>,
    /// Keyless: a regular expression the whole certificate SAN must match (anchored, unlike
    /// cosign's), e.g. `https://github\.com/org/repo/\.github/workflows/.*@refs/tags/v.*`.
    #[arg(
        long = "identity-regex",
        value_name = "REGEX",
        conflicts_with = "identity",
        requires_all = ["issuer", "trust_root"]
    )]
    pub identity_regex: Option<String>,
    /// Keyless: the OIDC issuer, exact match (e.g. `https://token.actions.githubusercontent.com`).
    #[arg(long, value_name = "URL", requires = "keyless_signer")]
    pub issuer: Option<String>,
    /// Keyless: a Sigstore trusted root JSON (verification is offline).
    #[arg(long = "trust-root", value_name = "FILE", requires = "keyless_signer")]
    pub trust_root: Option<PathBuf>,
    /// A path (relative to the tree) to leave out, like the reference's --ignore-paths; repeatable.
    #[arg(long = "ignore-path", value_name = "REL")]
    pub ignore_paths: Vec<String>,
    /// Include .git, .gitattributes, .github and .gitignore (ignored by default, as the reference does).
    #[arg(long)]
    pub no_ignore_git_paths: bool,
}

/// `modelgate sign`.
#[derive(Debug, Args)]
pub struct SignArgs {
    /// The model directory (or single file) to sign.
    #[arg(required_unless_present = "sbom")]
    pub path: Option<PathBuf>,
    /// The private key (PEM, ECDSA P-256 or P-384, unencrypted).
    #[arg(long, value_name = "PEM")]
    pub key: PathBuf,
    /// Certificate method: the signing certificate and its chain (PEM; repeatable). The
    /// certificate holding the key's public key becomes the signing certificate.
    #[arg(long = "certificate-chain", value_name = "PEM")]
    pub certificate_chain: Vec<PathBuf>,
    /// Where to write the bundle (default: PATH/model.sig, or SBOM.intoto.json with --sbom).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Attest this CycloneDX JSON SBOM (in-toto, predicate `https://cyclonedx.org/bom`) instead of signing a tree.
    #[arg(long, value_name = "FILE", conflicts_with = "path")]
    pub sbom: Option<PathBuf>,
    /// A path (relative to the tree) to leave out of the signature; repeatable.
    #[arg(long = "ignore-path", value_name = "REL")]
    pub ignore_paths: Vec<String>,
    /// Include .git, .gitattributes, .github and .gitignore (left out by default, as the reference does).
    #[arg(long)]
    pub no_ignore_git_paths: bool,
    /// Use the `shards` serialization with pieces of this many bytes (default: whole files).
    #[arg(long, value_name = "BYTES")]
    pub shard_size: Option<u64>,
}

/// `modelgate policy`.
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Validate a policy file and print the effective levels.
    Check {
        /// The policy file.
        file: PathBuf,
    },
    /// Write a commented starter modelgate.toml.
    Init {
        /// Preset to start from: default, strict or audit.
        #[arg(long, default_value = "default")]
        preset: String,
        /// Where to write it.
        #[arg(short, long, default_value = "modelgate.toml")]
        output: PathBuf,
        /// Overwrite an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Accept today's findings: write a digest-bound exception for each one the policy denies
    /// or warns, so that only new problems fail the gate.
    Baseline(BaselineArgs),
}

/// `modelgate policy baseline`.
#[derive(Debug, Args)]
pub struct BaselineArgs {
    /// The repository to scan.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Policy to evaluate with (default: modelgate.toml at the scan root, else the built-in
    /// default).
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Where to write the policy with the exceptions (default: the --policy file, else
    /// modelgate.toml at the scan root; `-` for stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Add to an existing output file (keeping its text) instead of refusing to touch it.
    #[arg(long)]
    pub append: bool,
    /// Days until the exceptions expire.
    #[arg(long, value_name = "DAYS", default_value_t = modelgate::policy::baseline::DEFAULT_EXPIRY_DAYS)]
    pub expires_in: u32,
}

/// `modelgate rules`.
#[derive(Debug, Args)]
pub struct RulesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: TextOrJson,
}

/// `modelgate explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Rule code or name (e.g. PKL001 or pickle-unsafe-global).
    pub rule: String,
}
