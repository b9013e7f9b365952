"""Session fixtures: the default app is synthesized ONCE per test session, from the
configuration the tests own (tests/fixtures/app-config.json, never the user's
fmp-config.json), and every app-level test reads that cloud assembly. It is synthesized in
this process with the context the CDK CLI gives the app, so `make test-fast` needs no CLI;
the slow test_app.py::test_cli_synthesizes_both_stacks runs the real CLI and checks that it
writes the same templates."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fm_platform.app import build_app
from fm_platform.config import CONFIG_FILE_CONTEXT_KEY
from tests.support import ROOT, new_app

CDK_CLI = ROOT / "node_modules" / ".bin" / "cdk"
# What differs between two synths of one app in the cdk-nag report: the temporary
# directory of the jsii runtime (in stack traces). No reason may hold a token's text (its
# number counts the tokens the process made before): the comparison would find it.
_KERNEL_DIRECTORY = re.compile(r"/jsii-kernel-[^/]+/")
#: The configuration of the app the snapshot and app tests check, relative to the project
#: root (``-c config=...`` overrides the file cdk.json names, so editing fmp-config.json
#: changes what `make synth` builds and leaves the tests alone).
APP_CONFIG = Path("tests") / "fixtures" / "app-config.json"
#: What `cdk synth` adds to the app's context besides cdk.json's and the ``-c`` options
#: (its CDK_CONTEXT_JSON, CLI 2.1148): path and asset metadata, no version reporting
#: (cdk.json's "versionReporting": false), every stack bundled.
CLI_CONTEXT: dict[str, Any] = {
    "aws:cdk:enable-path-metadata": True,
    "aws:cdk:enable-asset-metadata": True,
    "aws:cdk:disable-version-reporting": True,
    "aws:cdk:bundling-stacks": ["**"],
}


@dataclass(frozen=True)
class CloudAssembly:
    """The default app as `cdk synth` wrote it."""

    directory: Path
    templates: dict[str, dict[str, Any]]
    validation_report: dict[str, Any] | None

    def contents(self) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
        """The templates and the cdk-nag report, without what differs between two synths
        of one app (the jsii runtime's directory)."""
        report = _KERNEL_DIRECTORY.sub("/jsii-kernel/", json.dumps(self.validation_report))
        return self.templates, json.loads(report)


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


def synthesize_in_process(outdir: Path) -> CloudAssembly:
    """The default app as `cdk synth` builds it (cdk.json's feature flags, the CLI's
    context, the tests' configuration), synthesized in this process into ``outdir``."""
    context = {**CLI_CONTEXT, CONFIG_FILE_CONTEXT_KEY: str(ROOT / APP_CONFIG)}
    app = new_app(context=context, outdir=str(outdir))
    build_app(app)
    app.synth()
    return load_assembly(outdir)


#: The mypy run started when the session is collected (see pytest_collection_finish).
_MYPY_WARM_UP = pytest.StashKey[subprocess.Popen[bytes]]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """When a selected test asks for :func:`mypy_cache`, start `make lint`'s mypy run (the
    package, the scripts, app.py) now, beside the tests: on a cold cache it takes about a
    minute of one core, which the tests, one process, leave free; warm, a second."""
    if session.config.option.collectonly:
        return
    if any("mypy_cache" in getattr(item, "fixturenames", ()) for item in session.items):
        session.config.stash[_MYPY_WARM_UP] = subprocess.Popen(
            [sys.executable, "-m", "mypy"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


def pytest_sessionfinish(session: pytest.Session) -> None:
    warm_up = session.config.stash.get(_MYPY_WARM_UP, None)
    if warm_up is not None and warm_up.poll() is None:
        warm_up.terminate()
        warm_up.wait()


@pytest.fixture(scope="session")
def mypy_cache(request: pytest.FixtureRequest) -> Path:
    """The project's mypy cache, filled for the package and aws-cdk-lib: waits for the run
    started at collection (whose findings are `make lint`'s business, not a test's)."""
    warm_up = request.config.stash.get(_MYPY_WARM_UP, None)
    if warm_up is not None:
        warm_up.wait(timeout=900)
    return ROOT / ".mypy_cache"


@pytest.fixture(scope="session")
def default_assembly(tmp_path_factory: pytest.TempPathFactory) -> CloudAssembly:
    """The default app synthesized once (in this process), every stack template loaded."""
    return synthesize_in_process(tmp_path_factory.mktemp("cdk.out"))


@pytest.fixture(scope="session")
def cli_assembly(tmp_path_factory: pytest.TempPathFactory) -> CloudAssembly:
    """The default app as the real CDK CLI writes it (`cdk synth`, which runs app.py)."""
    outdir = tmp_path_factory.mktemp("cli.out")
    result = synthesize(ROOT, outdir)
    assert result.returncode == 0, f"cdk synth failed:\n{result.stdout}\n{result.stderr}"
    return load_assembly(outdir)
