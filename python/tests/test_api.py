"""Tests of the installed modelgate-cli wheel: the bundled binary, `python -m modelgate` and the
Python API, run against the repository's examples/ and test fixtures.

Run from the repository root with the interpreter of a virtual environment the wheel was
installed into (scripts/python-wheel.sh does this): `python -m pytest python/tests`. The package
under test is the installed one, never python/modelgate from the source tree (checked below).
"""

import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

import modelgate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures"
# The command pip installed, found by the scheme's layout (not by the package's own lookup).
CLI = os.path.join(sysconfig.get_path("scripts"), "modelgate" + (sysconfig.get_config_var("EXE") or ""))


def cli_json(*args: str) -> Tuple[int, Dict[str, Any]]:
    """The installed command's exit code and JSON report for `scan ARGS`."""
    proc = subprocess.run(
        [CLI, "scan", "--format", "json", "--quiet", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout.decode())


def sha256_digests(node: Any) -> List[str]:
    """Every SHA-256 `hashes` entry anywhere in a CycloneDX document (components nest)."""
    if isinstance(node, list):
        return [d for item in node for d in sha256_digests(item)]
    if not isinstance(node, dict):
        return []
    found = [h["content"] for h in node.get("hashes", []) if h.get("alg") == "SHA-256"]
    return found + [d for k, v in node.items() if k != "hashes" for d in sha256_digests(v)]


def corpus() -> List[Path]:
    """examples/'s two models and every fixture corpus folder."""
    roots = [EXAMPLES / "clean-model", EXAMPLES / "risky-model"]
    roots += sorted(p for p in FIXTURES.iterdir() if p.is_dir())
    return roots


def test_the_installed_wheel_is_under_test() -> None:
    assert str(ROOT / "python") not in str(Path(modelgate.__file__).resolve())
    assert os.path.isfile(CLI)
    assert Path(modelgate.find_modelgate_bin()).resolve() == Path(CLI).resolve()
    out = subprocess.run([CLI, "--version"], stdout=subprocess.PIPE, check=True).stdout.decode()
    assert out.strip() == "modelgate " + modelgate.__version__


def test_python_dash_m_runs_the_bundled_binary() -> None:
    run = subprocess.run([sys.executable, "-m", "modelgate", "--version"], stdout=subprocess.PIPE)
    assert run.returncode == 0
    assert run.stdout.decode().strip() == "modelgate " + modelgate.__version__


@pytest.mark.parametrize(
    "target,code",
    [("examples/clean-model", 0), ("examples/risky-model", 1), ("examples/no-such-model", 2)],
)
def test_python_dash_m_keeps_the_exit_code(target: str, code: int) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "modelgate", "scan", "--quiet", "--no-git", target],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert run.returncode == code, run.stderr.decode()


@pytest.mark.parametrize("root", corpus(), ids=lambda p: str(p.relative_to(ROOT)))
def test_verdict_and_findings_equal_the_commands(root: Path) -> None:
    code, expected = cli_json(str(root))
    report = modelgate.scan(root)
    assert report.exit_code == code
    assert report.verdict == ("pass" if code == 0 else "deny")
    assert report.passed == (code == 0)
    assert report.data["findings"] == expected["findings"]
    assert [f.rule for f in report.findings] == [f["rule"] for f in expected["findings"]]
    assert [f.fingerprint for f in report.denied] == [
        f["fingerprint"] for f in expected["findings"] if f["action"] == "deny"
    ]
    assert report.summary.denied == expected["summary"]["denied"] == len(report.denied)
    assert report.summary.warned == expected["summary"]["warned"] == len(report.warned)
    assert report.summary.files == expected["summary"]["files"]
    assert report.tool_version == modelgate.__version__


def test_the_corpus_has_both_verdicts() -> None:
    verdicts = {modelgate.scan(root, git=False).verdict for root in corpus()}
    assert verdicts == {"pass", "deny"}


def test_findings_are_typed() -> None:
    report = modelgate.scan(EXAMPLES / "risky-model", git=False)
    assert isinstance(report, modelgate.Report)
    assert report.findings and all(isinstance(f, modelgate.Finding) for f in report.findings)
    pkl = [f for f in report.denied if f.rule == "PKL001" and f.path == "pytorch_model.bin"]
    assert len(pkl) == 1
    assert pkl[0].name == "pickle-unsafe-global"
    assert pkl[0].severity == "critical"
    assert isinstance(pkl[0].evidence, dict) and isinstance(pkl[0].location, dict)
    assert "PKL001 pickle-unsafe-global pytorch_model.bin: " in str(pkl[0])
    assert report.data["git"] is None
    assert report.sbom_path is None


def test_check_before_load_names_every_denied_finding() -> None:
    with pytest.raises(modelgate.UnsafeModelError) as caught:
        modelgate.check_before_load(EXAMPLES / "risky-model", git=False)
    err = caught.value
    assert isinstance(err, modelgate.ModelgateError)
    assert err.report.verdict == "deny"
    assert len(err.denied) == err.report.summary.denied == 5
    message = str(err)
    assert message.startswith("modelgate denied 5 findings in ")
    for f in err.denied:
        assert f.action == "deny"
        assert "{} {} {}: ".format(f.rule, f.name, f.path) in message
    for rule, path in [("PKL001", "pytorch_model.bin"), ("FMT001", "model.safetensors"),
                       ("SCAN002", "secrets.txt"), ("SRC006", "modeling_risky.py")]:
        assert "{} ".format(rule) in message and path in message
    # Warnings are in the report, not in the message.
    assert "CARD001" not in message


def test_check_before_load_returns_the_report_of_a_clean_model() -> None:
    report = modelgate.check_before_load(EXAMPLES / "clean-model")
    assert report.verdict == "pass" and not report.denied
    assert report.summary.files == 3


def test_policy_file_is_used(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('version = 1\n\n[rules]\nCARD001 = "allow"\n')
    default = modelgate.scan(EXAMPLES / "risky-model", git=False)
    custom = modelgate.scan(EXAMPLES / "risky-model", policy=policy, git=False)
    assert [f.action for f in default.findings if f.rule == "CARD001"] == ["warn"]
    assert [f.action for f in custom.findings if f.rule == "CARD001"] == ["allow"]
    assert str(policy) in custom.data["policy"]["source"]


def test_invalid_policy_is_a_scan_error(tmp_path: Path) -> None:
    policy = tmp_path / "bad.toml"
    policy.write_text("version = 1\n[rules]\nNOPE001 = \"deny\"\n")
    with pytest.raises(modelgate.ScanError) as caught:
        modelgate.scan(EXAMPLES / "clean-model", policy=policy)
    assert caught.value.exit_code == 2
    assert "NOPE001" in caught.value.stderr


def test_sbom_is_written_and_its_path_reported(tmp_path: Path) -> None:
    report = modelgate.scan(EXAMPLES / "clean-model", sbom=tmp_path / "model.cdx.json")
    assert report.sbom_path == str(tmp_path / "model.cdx.json")
    sbom = json.loads(Path(report.sbom_path).read_text())
    assert sbom["bomFormat"] == "CycloneDX" and sbom["specVersion"] == "1.5"
    assert {f["sha256"] for f in report.data["files"]} <= set(sha256_digests(sbom))


def test_missing_path_is_a_scan_error() -> None:
    with pytest.raises(modelgate.ScanError) as caught:
        modelgate.scan(EXAMPLES / "no-such-model")
    assert caught.value.exit_code == 2
    assert "does not exist" in str(caught.value)


def test_remote_mode_is_checked() -> None:
    with pytest.raises(ValueError):
        modelgate.scan(EXAMPLES / "clean-model", remote="everything")  # type: ignore[arg-type]
    # The command itself refuses header mode for a local path.
    with pytest.raises(modelgate.ScanError) as caught:
        modelgate.scan(EXAMPLES / "clean-model", remote="headers")
    assert "remote targets" in str(caught.value)


def test_a_target_that_looks_like_an_option_is_a_path(tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "--help").mkdir()
    (tmp_path / "--help" / "config.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    report = modelgate.scan("--help", git=False)
    assert report.verdict == "pass" and report.summary.files == 1


def test_an_unrunnable_binary_is_a_scan_error(tmp_path: Path) -> None:
    with pytest.raises(modelgate.ScanError):
        modelgate.scan(EXAMPLES / "clean-model", binary=tmp_path / "missing-modelgate")


@pytest.fixture(scope="module")
def hub(tmp_path_factory: Any) -> Any:
    """scripts/hub-mock.py serving examples/clean-model as hf://acme/clean-model on 127.0.0.1."""
    port_file = tmp_path_factory.mktemp("hub") / "port"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "hub-mock.py"), "--root", str(EXAMPLES / "clean-model"),
         "--repo", "acme/clean-model", "--port-file", str(port_file), "--seconds", "120"],
    )
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.1)
        yield "http://127.0.0.1:" + port_file.read_text()
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("remote", ["full", "headers"])
def test_hf_url_scans_remotely(hub: str, remote: str, monkeypatch: Any) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    args = ["hf://acme/clean-model"] + (["--remote", remote] if remote != "full" else [])
    code, expected = cli_json(*args)
    report = modelgate.scan("hf://acme/clean-model", remote=remote)  # type: ignore[arg-type]
    assert report.exit_code == code
    assert report.data["findings"] == expected["findings"]
    assert report.data["repository"]["hub"]["repo"] == "acme/clean-model"
    if remote == "full":
        assert report.verdict == "pass"
        local = modelgate.scan(EXAMPLES / "clean-model")
        assert sorted(f["sha256"] for f in report.data["files"]) == sorted(
            f["sha256"] for f in local.data["files"]
        )
