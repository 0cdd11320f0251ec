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
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Scan one or more model repositories (default: the current directory).
    Scan(ScanArgs),
    /// Show one file's facts: header, tensors, pickle imports, findings.
    Inspect(InspectArgs),
    /// Check that files still match the digests an SBOM recorded.
    Verify(VerifyArgs),
    /// Validate or create policy files.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// List every rule.
    Rules(RulesArgs),
    /// Explain one rule: help, default level per preset, an example.
    Explain(ExplainArgs),
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

/// `modelgate scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Directories (or files) to scan.
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
    /// Also write a CycloneDX 1.5 SBOM of the tree.
    #[arg(long, value_name = "FILE")]
    pub sbom: Option<PathBuf>,
    /// SBOM serialisation.
    #[arg(long, value_enum, default_value = "json")]
    pub sbom_format: SbomFormatArg,
    /// Extra digests computed in the same read (repeatable).
    #[arg(long = "hash", value_enum)]
    pub hashes: Vec<HashAlg>,
    /// Also write SARIF 2.1.0 here.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
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
pub struct VerifyArgs {
    /// The CycloneDX SBOM (JSON or XML) produced by `scan --sbom`.
    #[arg(long, value_name = "FILE")]
    pub sbom: PathBuf,
    /// The tree to check (default: the current directory).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: TextOrJson,
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
