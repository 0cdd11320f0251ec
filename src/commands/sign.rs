//! `modelgate sign`: an OpenSSF Model Signing bundle for a tree, or an in-toto attestation of an
//! SBOM. The library is `modelgate::sign`; this reads arguments, calls it and writes the file.

use anyhow::{Context, Result, bail};
use modelgate::sign;

use crate::cli::SignArgs;

/// `modelgate sign PATH --key K [--certificate-chain C...] [-o model.sig]` or `sign --sbom F`.
pub fn run(args: SignArgs) -> Result<u8> {
    let limits = sign::Limits::default();
    let material = sign::inputs::signing_material(&args.key, &args.certificate_chain, &limits)?;
    let (bytes, out) = if let Some(sbom) = &args.sbom {
        let text =
            std::fs::read(sbom).with_context(|| format!("cannot read sbom {}", sbom.display()))?;
        let out = args.output.clone().unwrap_or_else(|| {
            let mut name = sbom.file_name().unwrap_or_default().to_os_string();
            name.push(".intoto.json");
            sbom.with_file_name(name)
        });
        (sign::attest::attest_sbom(&text, &material, &limits)?, out)
    } else {
        let Some(path) = &args.path else {
            bail!("sign needs a PATH or --sbom FILE");
        };
        let out = args.output.clone().unwrap_or_else(|| {
            if path.is_dir() {
                path.join("model.sig")
            } else {
                path.with_extension("sig")
            }
        });
        let mut ignore_paths = args.ignore_paths.clone();
        // The signature file must not sign itself (the reference ignores it too).
        ignore_paths.extend(sign::relative_inside(path, &out));
        let opts = sign::SignOptions {
            ignore_paths,
            ignore_git_paths: !args.no_ignore_git_paths,
            shard_size: args.shard_size,
        };
        (sign::sign(path, &material, &opts, &limits)?, out)
    };
    std::fs::write(&out, bytes).with_context(|| format!("cannot write {}", out.display()))?;
    super::process::status(&format!("modelgate: wrote {}", out.display()));
    Ok(0)
}
