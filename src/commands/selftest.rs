//! `modelgate selftest` (hidden): checks, in the binary as built, what no test harness can:
//! that a panic inside a file's inspection is caught and becomes that file's `SCAN001` finding.
//! That depends on the profile's `panic` setting, and `cargo test` ignores that setting (the test
//! harness always unwinds), so only the shipped binary itself can show it. `.ci/run` runs it on
//! the static `dist` binary and again inside the container image. No scanned byte reaches it:
//! the panic is raised by this command, never by input.

use anyhow::{Result, bail};
use modelgate::engine::scan_guarded;
use modelgate::model::rules::RuleId;

/// Panics inside `scan_guarded` on a rayon worker (where file scans run) and checks the result.
pub fn run() -> Result<u8> {
    let quiet = std::panic::take_hook();
    // The expected panic would print a scary message; say what happened instead.
    std::panic::set_hook(Box::new(|_| {}));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .stack_size(modelgate::model::limits::WORKER_STACK_BYTES)
        .build()?;
    let scan = pool.install(|| {
        scan_guarded("selftest.bin", || {
            panic!("selftest: a deliberate inspector panic")
        })
    });
    std::panic::set_hook(quiet);
    let caught = scan.detections.len() == 1
        && scan.detections.iter().all(|d| {
            d.rule == RuleId::UnreadableFile
                && d.evidence.get("error").and_then(|e| e.as_str())
                    == Some("selftest: a deliberate inspector panic")
        });
    if !caught {
        bail!("selftest: the panic was not turned into one SCAN001 finding");
    }
    let strategy = if cfg!(panic = "unwind") {
        "unwind"
    } else {
        "abort"
    };
    super::process::status(&format!(
        "panic isolation: ok (panic = \"{strategy}\"; a panicking inspector became SCAN001 and the scan went on)"
    ));
    Ok(0)
}
