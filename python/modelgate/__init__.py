"""modelgate: a supply-chain policy gate for machine-learning model repositories.

This package is the Python face of the ``modelgate`` binary that the ``modelgate-cli`` wheel
installs next to it: ``python -m modelgate ...`` runs that binary, and ``scan`` /
``check_before_load`` run ``modelgate scan --format json`` and return its report as typed
objects. Pure Python, no dependencies; nothing in a scanned model is loaded or executed, here or
in the binary.

    import modelgate

    modelgate.check_before_load("path/to/snapshot")   # raises UnsafeModelError if denied
    report = modelgate.scan("hf://org/model@<commit>", remote="headers")
    print(report.verdict, [str(f) for f in report.denied])
"""

from modelgate._api import (
    Finding,
    ModelgateError,
    Report,
    ScanError,
    Summary,
    UnsafeModelError,
    check_before_load,
    scan,
)
from modelgate._find import find_modelgate_bin

__all__ = [
    "Finding",
    "ModelgateError",
    "Report",
    "ScanError",
    "Summary",
    "UnsafeModelError",
    "__version__",
    "check_before_load",
    "find_modelgate_bin",
    "scan",
]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("modelgate-cli")
    except PackageNotFoundError:  # imported from a source tree, not installed
        return "0+unknown"


__version__ = _version()
"""The installed distribution's version (the binary's own: ``modelgate --version``)."""
