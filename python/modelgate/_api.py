"""The Python API: run the bundled binary, read its JSON report into typed objects.

Nothing here inspects a model itself: every judgement is the binary's (`modelgate scan
--format json`), so the API's verdict is the command's exit code, by construction. The JSON
report's shape is documented in the README ("JSON report (schema_version 1)").
"""

import json
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

from modelgate._find import find_modelgate_bin

__all__ = [
    "Finding",
    "ModelgateError",
    "Report",
    "ScanError",
    "Summary",
    "UnsafeModelError",
    "check_before_load",
    "scan",
]

StrPath = Union[str, "os.PathLike[str]"]
Verdict = Literal["pass", "deny"]
RemoteMode = Literal["full", "headers"]

SCHEMA_VERSION = 1
_EXIT_PASS = 0
_EXIT_DENY = 1


class ModelgateError(Exception):
    """Base class of the errors this package raises."""


class ScanError(ModelgateError):
    """The scan could not be done: the binary exited 2 (bad arguments, unreadable policy,
    missing path, unreachable Hub, ...), was killed, or printed no JSON report."""

    def __init__(self, message: str, exit_code: Optional[int], stderr: str) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        """The binary's exit code (``None`` when it timed out)."""
        self.stderr = stderr
        """What the binary printed on stderr."""


@dataclass(frozen=True)
class Finding:
    """One finding of the JSON report (README: "JSON report")."""

    rule: str
    """Stable rule code, e.g. ``PKL001``."""
    name: str
    """Rule name, e.g. ``pickle-unsafe-global``."""
    severity: str
    """``critical``, ``high``, ``medium``, ``low`` or ``info``."""
    action: str
    """What the policy decided: ``deny``, ``warn`` or ``allow``."""
    path: str
    """The file, relative to the scan root, ``/``-separated (empty for the root itself)."""
    message: str
    location: Dict[str, Any] = field(default_factory=dict, compare=False)
    evidence: Dict[str, Any] = field(default_factory=dict, compare=False)
    fingerprint: str = ""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Finding":
        """A finding from one element of the report's ``findings`` array."""
        return cls(
            rule=str(data["rule"]),
            name=str(data.get("name", "")),
            severity=str(data.get("severity", "")),
            action=str(data["action"]),
            path=str(data.get("path", "")),
            message=str(data.get("message", "")),
            location=dict(data.get("location") or {}),
            evidence=dict(data.get("evidence") or {}),
            fingerprint=str(data.get("fingerprint", "")),
        )

    def __str__(self) -> str:
        return "{} {} {}: {}".format(self.rule, self.name, self.path or ".", self.message)


@dataclass(frozen=True)
class Summary:
    """The report's ``summary``: counts over the whole scan."""

    files: int
    bytes: int
    denied: int
    warned: int
    allowed: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Summary":
        """The summary from the report's ``summary`` object."""
        return cls(
            files=int(data.get("files", 0)),
            bytes=int(data.get("bytes", 0)),
            denied=int(data.get("denied", 0)),
            warned=int(data.get("warned", 0)),
            allowed=int(data.get("allowed", 0)),
        )


@dataclass(frozen=True)
class Report:
    """One scan's result: the verdict, the findings and the parsed JSON report."""

    verdict: Verdict
    """``"pass"`` (the command exited 0) or ``"deny"`` (it exited 1: the policy denies a
    finding)."""
    exit_code: int
    """The command's exit code: 0 or 1."""
    findings: Tuple[Finding, ...]
    """Every finding, in the report's order (denied, warned and allowed)."""
    summary: Summary
    root: str
    """The scanned root as the report names it."""
    tool_version: str
    """The version of the modelgate binary that made the report."""
    sbom_path: Optional[str] = None
    """The CycloneDX SBOM the scan wrote (absolute path), when ``sbom=`` was given."""
    data: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The whole JSON report as parsed (``files`` with their facts, ``git``, ``policy``, ...)."""

    @property
    def passed(self) -> bool:
        """True when nothing is denied."""
        return self.verdict == "pass"

    @property
    def denied(self) -> Tuple[Finding, ...]:
        """The findings the policy denies."""
        return tuple(f for f in self.findings if f.action == "deny")

    @property
    def warned(self) -> Tuple[Finding, ...]:
        """The findings the policy warns about."""
        return tuple(f for f in self.findings if f.action == "warn")


class UnsafeModelError(ModelgateError):
    """``check_before_load`` refused a model: the policy denies at least one finding."""

    def __init__(self, report: Report) -> None:
        self.report = report
        """The scan's report."""
        self.denied = report.denied
        """The denied findings, each named in the message."""
        lines = ["modelgate denied {} in {}; do not load it:".format(
            _plural(len(self.denied), "finding"), report.root)]
        lines.extend("  " + str(f) for f in self.denied)
        super().__init__("\n".join(lines))


def _plural(n: int, word: str) -> str:
    return "{} {}{}".format(n, word, "" if n == 1 else "s")


def scan(
    target: StrPath,
    policy: Optional[StrPath] = None,
    remote: RemoteMode = "full",
    *,
    sbom: Optional[StrPath] = None,
    check_values: bool = False,
    git: bool = True,
    exclude: Sequence[str] = (),
    extra_args: Sequence[str] = (),
    binary: Optional[StrPath] = None,
    timeout: Optional[float] = None,
) -> Report:
    """Scan a local path or a Hugging Face repository with the bundled modelgate binary.

    ``target`` is a directory or file, or ``hf://ns/name[@rev]`` /
    ``https://huggingface.co/ns/name`` (a remote scan: ``HF_TOKEN`` and ``HF_ENDPOINT`` are read
    from the environment as by the command). ``policy`` is a policy file (default: the scan
    root's ``modelgate.toml``, else the built-in default). ``remote`` is ``"full"`` (every byte
    streamed and hashed) or ``"headers"`` (byte ranges only; remote targets only). ``sbom``
    writes a CycloneDX SBOM there as well (``Report.sbom_path``). ``git=False`` is ``--no-git``;
    ``exclude`` globs are ``--exclude``; ``extra_args`` go to ``modelgate scan`` as they are.

    Returns the report whether or not the policy denies something (see ``Report.verdict``);
    raises ``ScanError`` when the scan could not be done at all.
    """
    if remote not in ("full", "headers"):
        raise ValueError("remote must be 'full' or 'headers', not {!r}".format(remote))
    program = os.fspath(binary) if binary is not None else find_modelgate_bin()
    args = [program, "scan", "--format", "json", "--quiet"]
    if policy is not None:
        args += ["--policy", os.fspath(policy)]
    if remote != "full":
        # Only when asked: the command refuses --remote for a local target.
        args += ["--remote", remote]
    sbom_path = None
    if sbom is not None:
        sbom_path = os.path.abspath(os.fspath(sbom))
        args += ["--sbom", sbom_path]
    if check_values:
        args.append("--check-values")
    if not git:
        args.append("--no-git")
    for glob in exclude:
        args += ["--exclude", glob]
    args += [str(a) for a in extra_args]
    # `--` so that a target starting with '-' is a path, never an option.
    args += ["--", os.fspath(target)]
    return _run(args, sbom_path, timeout)


def check_before_load(
    path: StrPath,
    policy: Optional[StrPath] = None,
    **options: Any,
) -> Report:
    """Scan ``path`` and raise ``UnsafeModelError`` if the policy denies anything.

    Call it on a local snapshot right before a loader reads it
    (``AutoModel.from_pretrained(path)``, ``torch.load``, ...). The exception's message names
    every denied finding (rule, name, file, message); ``.report`` has the whole report. Returns
    the report when nothing is denied (warnings do not stop the load). ``options`` are
    ``scan``'s keyword arguments.
    """
    report = scan(path, policy, **options)
    if report.verdict != "pass":
        raise UnsafeModelError(report)
    return report


def _run(args: List[str], sbom_path: Optional[str], timeout: Optional[float]) -> Report:
    try:
        proc = subprocess.run(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        stderr = (e.stderr or b"").decode("utf-8", "replace")
        raise ScanError("modelgate scan timed out after {} s".format(timeout), None, stderr)
    except OSError as e:
        raise ScanError("could not run {}: {}".format(args[0], e), None, "")
    stderr = proc.stderr.decode("utf-8", "replace")
    if proc.returncode not in (_EXIT_PASS, _EXIT_DENY):
        detail = stderr.strip() or "no message"
        raise ScanError(
            "modelgate scan failed (exit {}): {}".format(proc.returncode, detail),
            proc.returncode,
            stderr,
        )
    try:
        data = json.loads(proc.stdout.decode("utf-8"))
    except ValueError as e:
        raise ScanError("modelgate scan printed no JSON report: {}".format(e), proc.returncode, stderr)
    return _report(data, proc.returncode, sbom_path, stderr)


def _report(data: Any, exit_code: int, sbom_path: Optional[str], stderr: str) -> Report:
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise ScanError(
            "modelgate printed a report this package does not read (schema_version {!r}, expected {})".format(
                data.get("schema_version") if isinstance(data, dict) else None, SCHEMA_VERSION
            ),
            exit_code,
            stderr,
        )
    return Report(
        verdict="pass" if exit_code == _EXIT_PASS else "deny",
        exit_code=exit_code,
        findings=tuple(Finding.from_json(f) for f in data.get("findings", [])),
        summary=Summary.from_json(data.get("summary", {})),
        root=str(data.get("root", "")),
        tool_version=str(data.get("tool", {}).get("version", "")),
        sbom_path=sbom_path,
        data=data,
    )
