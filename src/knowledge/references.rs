//! The published advisories (CVE and GHSA ids) behind dangerous globals, for a finding's
//! `evidence.references`.

#[cfg(doc)]
use super::dangerous::DANGEROUS;
use super::names::normalize_module;
use super::traversal::explain_traversal;
use super::verdict::covers;

/// Published advisories per dangerous path (prefix on component boundaries, like
/// [`DANGEROUS`]), for a finding's `evidence.references`. Sources: the picklescan advisories
/// (github.com/mmaitre314/picklescan/security), fickling PR #210 (which maps the 2025 picklescan
/// bypasses to their ids), ModelAudit PR #598 (CVE-2025-1716), and the PyTorch advisories.
const REFERENCES: &[(&str, &[&str])] = &[
    ("pip", &["CVE-2025-1716", "GHSA-vqmv-47xg-9wpr"]),
    ("venv", &["GHSA-vqmv-47xg-9wpr"]),
    ("ensurepip", &["GHSA-vqmv-47xg-9wpr", "GHSA-xp4f-hrf8-rxw7"]),
    (
        "operator.attrgetter",
        &["GHSA-m273-6v24-x4m4", "GHSA-955r-x9j8-7rhh"],
    ),
    (
        "operator.itemgetter",
        &["GHSA-m273-6v24-x4m4", "GHSA-955r-x9j8-7rhh"],
    ),
    (
        "operator.methodcaller",
        &["GHSA-m273-6v24-x4m4", "GHSA-955r-x9j8-7rhh"],
    ),
    ("profile", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    ("cProfile", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    ("trace", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    ("pdb", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    ("bdb", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    ("doctest", &["GHSA-46h3-79wf-xr6c", "GHSA-4675-36f9-wf6r"]),
    (
        "timeit",
        &[
            "GHSA-46h3-79wf-xr6c",
            "GHSA-4675-36f9-wf6r",
            "GHSA-v7x6-rv5q-mhwc",
        ],
    ),
    ("pickle", &["GHSA-84r2-jw7c-4r5q"]),
    ("idlelib", &["GHSA-r8g5-cgf2-4m4m"]),
    ("lib2to3", &["GHSA-r8g5-cgf2-4m4m"]),
    (
        "asyncio.unix_events._UnixSubprocessTransport",
        &["CVE-2025-10157"],
    ),
    ("pkgutil.resolve_name", &["GHSA-vvpj-8cmc-gx39"]),
    ("torch.jit.annotations.parse_type_line", &["CVE-2022-45907"]),
    ("torch.jit.load", &["CVE-2025-32434", "GHSA-53q9-r3pm-6pq6"]),
];

/// Advisory ids for a dotted-name traversal (protocol 4 getattr chains): fickling's
/// GHSA-5j3x-jp52-966f.
pub const TRAVERSAL_REFERENCES: &[&str] = &["GHSA-5j3x-jp52-966f"];

/// Advisory ids for code that TorchScript archives run on load: torch.load(weights_only=True)
/// runs TorchScript on torch < 2.6.
pub const TORCHSCRIPT_REFERENCES: &[&str] = &["CVE-2025-32434", "GHSA-53q9-r3pm-6pq6"];

/// The published advisories (CVE/GHSA ids) behind a dangerous global, in table order, without
/// duplicates; empty when none is on file.
pub fn references(module: &str, name: &str) -> Vec<&'static str> {
    let qualified = format!("{}.{name}", normalize_module(module));
    let mut out: Vec<&'static str> = Vec::new();
    for (path, ids) in REFERENCES {
        if covers(path, &qualified) {
            for id in *ids {
                if !out.contains(id) {
                    out.push(id);
                }
            }
        }
    }
    if explain_traversal(module, name).is_some() {
        for id in TRAVERSAL_REFERENCES {
            if !out.contains(id) {
                out.push(id);
            }
        }
    }
    out
}
