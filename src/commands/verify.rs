//! `modelgate verify`: are the files still the ones the SBOM recorded (`--sbom`), and is the tree
//! the one a signature covers (`--signature`, `--attestation`)? A bad signature or a mismatching
//! tree is a verdict (exit 1); unreadable keys, certificates or trust roots are the tool's
//! failure (exit 2).

use std::io::Write;

use anyhow::{Context, Result, bail};
use modelgate::sign;
use serde_json::{Map, Value, json};

use crate::cli::{TextOrJson, VerifyArgs};

/// Exit 1 when any file differs from the SBOM.
pub fn run(args: VerifyArgs) -> Result<u8> {
    if std::fs::symlink_metadata(&args.path).is_err() {
        bail!("path does not exist: {}", args.path.display());
    }
    if args.signature.is_some() || args.attestation.is_some() {
        return verify_signed(&args);
    }
    let Some(sbom) = &args.sbom else {
        bail!("verify needs --sbom FILE or --signature FILE");
    };
    let result = modelgate::verify::verify(sbom, &args.path, super::process::default_jobs())?;
    let mut w = super::process::output(None)?;
    match args.format {
        TextOrJson::Text => result.render_text(&mut w)?,
        TextOrJson::Json => result.render_json(&mut w)?,
    }
    w.flush()?;
    Ok(u8::from(!result.is_clean()))
}

/// `verify --signature` and/or `verify --sbom F --attestation A`, with the trust flags.
fn verify_signed(args: &VerifyArgs) -> Result<u8> {
    let limits = sign::Limits::default();
    let t = &args.trust;
    let spec = sign::inputs::TrustSpec {
        key: t.key.clone(),
        certificate_chain: t.certificate_chain.clone(),
        identity: t.identity.clone(),
        identity_regex: t.identity_regex.clone(),
        issuer: t.issuer.clone(),
        trust_root: t.trust_root.clone(),
    };
    let trust = sign::inputs::trust(&spec, &limits)?;
    let now_secs = super::process::clock()?.now().unix_timestamp();
    let mut w = super::process::output(None)?;
    let mut json = Map::new();
    let mut ok = true;
    if let Some(sig) = &args.signature {
        let bytes = std::fs::read(sig)
            .with_context(|| format!("cannot read signature {}", sig.display()))?;
        let mut ignore_paths = t.ignore_paths.clone();
        ignore_paths.extend(sign::relative_inside(&args.path, sig));
        let opts = sign::VerifyOptions {
            now: now_secs,
            ignore_paths,
            ignore_git_paths: !t.no_ignore_git_paths,
        };
        match sign::verify(&args.path, &bytes, &trust, &opts, &limits) {
            Ok(v) => {
                ok &= v.is_clean();
                match args.format {
                    TextOrJson::Text => v.render_text(&mut w)?,
                    TextOrJson::Json => {
                        let mut o = serde_json::to_value(&v)?;
                        o["verified"] = json!(v.is_clean());
                        json.insert("signature".into(), o);
                    }
                }
            }
            Err(e) => {
                ok = false;
                match args.format {
                    TextOrJson::Text => writeln!(w, "signature INVALID: {e}\nresult: INVALID")?,
                    TextOrJson::Json => {
                        json.insert(
                            "signature".into(),
                            json!({"verified": false, "error": e.to_string()}),
                        );
                    }
                }
            }
        }
    }
    if let (Some(att), Some(sbom)) = (&args.attestation, &args.sbom) {
        let att_bytes = std::fs::read(att)
            .with_context(|| format!("cannot read attestation {}", att.display()))?;
        let sbom_bytes =
            std::fs::read(sbom).with_context(|| format!("cannot read sbom {}", sbom.display()))?;
        match sign::attest::verify_sbom_attestation(
            &att_bytes,
            &sbom_bytes,
            &trust,
            now_secs,
            &limits,
        ) {
            Ok(signer) => match args.format {
                TextOrJson::Text => {
                    write!(w, "sbom attestation: ")?;
                    sign::render_signer(&signer, &mut w)?;
                }
                TextOrJson::Json => {
                    json.insert(
                        "attestation".into(),
                        json!({"verified": true, "signer": signer}),
                    );
                }
            },
            Err(e) => {
                ok = false;
                match args.format {
                    TextOrJson::Text => writeln!(w, "sbom attestation INVALID: {e}")?,
                    TextOrJson::Json => {
                        json.insert(
                            "attestation".into(),
                            json!({"verified": false, "error": e.to_string()}),
                        );
                    }
                }
            }
        }
    }
    // The SBOM is checked against the tree only once its attestation verified.
    if let Some(sbom) = args.sbom.as_ref().filter(|_| ok) {
        let result = modelgate::verify::verify(sbom, &args.path, super::process::default_jobs())?;
        ok &= result.is_clean();
        match args.format {
            TextOrJson::Text => result.render_text(&mut w)?,
            TextOrJson::Json => {
                json.insert("sbom".into(), serde_json::to_value(&result)?);
            }
        }
    }
    if args.format == TextOrJson::Json {
        serde_json::to_writer_pretty(&mut w, &Value::Object(json))?;
        writeln!(w)?;
    }
    w.flush()?;
    Ok(u8::from(!ok))
}
