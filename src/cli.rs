//! Command-line arguments (clap derive). Raw arguments are validated into settings by `app`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::{FailOn, OutputFormat};

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
pub enum SbomFormat {
    /// CycloneDX JSON.
    Json,
    /// CycloneDX XML.
    Xml,
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
    pub format: OutputFormat,
    /// Write the report here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write a CycloneDX 1.5 SBOM of the tree.
    #[arg(long, value_name = "FILE")]
    pub sbom: Option<PathBuf>,
    /// SBOM serialisation.
    #[arg(long, value_enum, default_value = "json")]
    pub sbom_format: SbomFormat,
    /// Extra digests computed in the same read (repeatable).
    #[arg(long = "hash", value_enum)]
    pub hashes: Vec<HashAlg>,
    /// Also write SARIF 2.1.0 here.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// What makes the exit code 1.
    #[arg(long, value_enum, default_value = "deny")]
    pub fail_on: FailOn,
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
    #[arg(long, value_name = "DAYS", default_value_t = crate::policy::baseline::DEFAULT_EXPIRY_DAYS)]
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
