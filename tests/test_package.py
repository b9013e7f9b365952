"""The package's public API and its import cost."""

from __future__ import annotations

import subprocess
import sys

import fm_platform


def test_every_public_name_resolves_to_its_definition():
    for name in fm_platform.__all__:
        value = getattr(fm_platform, name)
        assert value.__name__ == name


def test_the_cli_starts_without_loading_aws_cdk_lib():
    probe = "import sys, fm_platform.cli.main; print('aws_cdk' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
