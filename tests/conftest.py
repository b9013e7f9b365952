"""Session fixtures: the default app is synthesized ONCE per test session, by the real CDK
CLI, from the configuration the tests own (tests/fixtures/app-config.json, never the
user's fmp-config.json), and every app-level test reads that cloud assembly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import ROOT

CDK_CLI = ROOT / "node_modules" / ".bin" / "cdk"
#: The configuration of the app the snapshot and app tests check, relative to the project
#: root (``-c config=...`` overrides the file cdk.json names, so editing fmp-config.json
#: changes what `make synth` builds and leaves the tests alone).
APP_CONFIG = Path("tests") / "fixtures" / "app-config.json"


@dataclass(frozen=True)
class CloudAssembly:
    """The default app as `cdk synth` wrote it."""

    directory: Path
    templates: dict[str, dict[str, Any]]
    validation_report: dict[str, Any] | None


def synth_env() -> dict[str, str]:
    """The environment for the CLI: this interpreter's bin first (so `python3 app.py` runs
    in the project's virtualenv with its Node.js), and no AWS credentials."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["CDK_DISABLE_CLI_TELEMETRY"] = "true"
    return env


def synth_command(outdir: Path) -> list[str]:
    """The `cdk synth` command line of the session fixture: the tests' configuration file,
    the assembly written to ``outdir``."""
    return [
        str(CDK_CLI),
        *("synth", "--quiet", "--no-notices"),
        *("-c", f"config={APP_CONFIG}"),
        *("--output", str(outdir)),
    ]


def load_assembly(outdir: Path) -> CloudAssembly:
    """Every stack template (and the cdk-nag report, if any) of the assembly in ``outdir``."""
    manifest = json.loads((outdir / "manifest.json").read_text())
    templates = {
        name: json.loads((outdir / artifact["properties"]["templateFile"]).read_text())
        for name, artifact in manifest["artifacts"].items()
        if artifact["type"] == "aws:cloudformation:stack"
    }
    report_file = outdir / "validation-report.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else None
    return CloudAssembly(directory=outdir, templates=templates, validation_report=report)


def synthesize(project: Path, outdir: Path) -> subprocess.CompletedProcess[str]:
    """Run :func:`synth_command` in the project directory ``project`` (its cdk.json, app.py
    and fm_platform)."""
    return subprocess.run(
        synth_command(outdir),
        cwd=project,
        env=synth_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="session")
def default_assembly(tmp_path_factory: pytest.TempPathFactory) -> CloudAssembly:
    """Run `cdk synth` on the default app once and load every stack template."""
    outdir = tmp_path_factory.mktemp("cdk.out")
    result = synthesize(ROOT, outdir)
    assert result.returncode == 0, f"cdk synth failed:\n{result.stdout}\n{result.stderr}"
    return load_assembly(outdir)
