"""The configuration follows the user through every cdk command: cdk.json names the file,
`-c config=FILE` overrides it once, and each command says which configuration it used.
Runs the real CDK CLI offline (synth, ls, diff --template); nothing is deployed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fm_platform.config import CONFIG_FILE_CONTEXT_KEY
from tests.conftest import CDK_CLI, synth_env
from tests.support import ROOT

SMALL = {
    "deploy_training": False,
    "inference_stack_name": "FmpCliCheck",
    "inference": {
        "ic_endpoints": [],
        "single_model_endpoints": [],
        "multi_model_endpoints": [{"name": "small-models", "instance_type": "ml.m5.xlarge"}],
    },
}


def cdk(*args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(CDK_CLI), *args, "--no-notices"],
        cwd=ROOT,
        env=synth_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"cdk {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def small_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("config") / "small.json"
    path.write_text(json.dumps(SMALL))
    return path


@pytest.mark.slow
def test_cdk_ls_synth_and_diff_template_use_the_configuration_file(small_config, tmp_path):
    override = f"{CONFIG_FILE_CONTEXT_KEY}={small_config}"
    # Each command writes into the test's own directory, never the project's cdk.out.
    listed = cdk("ls", "-c", override, "--output", str(tmp_path / "ls.out"))
    assert sorted(listed.stdout.split()) == ["FmpCliCheck", "FmpCliCheckArtifacts"]
    assert f"fm_platform: using configuration file {small_config}" in listed.stderr

    outdir = tmp_path / "cdk.out"
    cdk("synth", "--quiet", "-c", override, "--output", str(outdir))
    template = outdir / "FmpCliCheck.template.json"
    assert template.is_file()

    # A reviewer comparing with an older template sees the replacement in words.
    older = json.loads(template.read_text())
    for resource in older["Resources"].values():
        if resource["Type"] == "AWS::SageMaker::EndpointConfig":
            resource["Properties"]["ProductionVariants"][0]["InstanceType"] = "ml.m5.large"
    older_file = tmp_path / "older.template.json"
    older_file.write_text(json.dumps(older))
    changed = cdk(
        *("diff", "-c", override, "--template", str(older_file), "FmpCliCheck"),
        *("--exclusively", "--output", str(tmp_path / "diff.out")),
    )
    output = changed.stdout + changed.stderr
    assert "AWS::SageMaker::EndpointConfig" in output
    assert "replace" in output
