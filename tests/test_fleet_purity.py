"""The planner and `fmp plan` load no aws-cdk-lib (nor jsii, which starts Node), and the
stacks do not import the CLI."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.support import ROOT


def test_the_planner_and_fmp_plan_import_no_aws_cdk():
    code = (
        "import sys, pkgutil, importlib, fm_platform.fleet as f\n"
        "for m in pkgutil.iter_modules(f.__path__):\n"
        "    importlib.import_module('fm_platform.fleet.' + m.name)\n"
        "import fm_platform.cli.plan, fm_platform.cli.main\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] in ('aws_cdk', 'jsii')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_stacks_never_import_the_cli():
    for path in (ROOT / "fm_platform" / "stacks").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("fm_platform.cli"), path
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("fm_platform.cli") for a in node.names), path
