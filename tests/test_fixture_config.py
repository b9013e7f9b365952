"""The tests own their configuration: the session synth builds the app from
tests/fixtures/app-config.json, so a user's edit of fmp-config.json (the file cdk.json
names, which `make synth` and `make deploy` read) never turns the suite red."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import APP_CONFIG, CDK_CLI, load_assembly, synth_env, synthesize
from tests.support import ROOT

#: A small app (one multi-model endpoint), so that the copy synthesizes in seconds.
SMALL = {
    "deploy_training": False,
    "inference_stack_name": "FmpFixtureCheck",
    "inference": {
        "ic_endpoints": [],
        "single_model_endpoints": [],
        "multi_model_endpoints": [{"name": "small-models", "instance_type": "ml.m5.xlarge"}],
    },
}


def project_with_broken_user_config(directory: Path) -> Path:
    """A copy of the project (cdk.json, app.py, the package) whose fmp-config.json is not
    even JSON, and whose test configuration is :data:`SMALL`."""
    project = directory / "project"
    project.mkdir()
    for name in ("app.py", "cdk.json"):
        shutil.copy(ROOT / name, project / name)
    (project / "fm_platform").symlink_to(ROOT / "fm_platform")
    (project / "fmp-config.json").write_text('{"training": {"availability_zone_id": ')
    fixture = project / APP_CONFIG
    fixture.parent.mkdir(parents=True)
    fixture.write_text(json.dumps(SMALL))
    return project


@pytest.mark.slow
def test_the_session_synth_reads_the_tests_configuration_not_fmp_config(tmp_path):
    project = project_with_broken_user_config(tmp_path)

    # What `make synth` does there: it reads the broken file named in cdk.json and stops.
    user = subprocess.run(
        [str(CDK_CLI), "synth", "--quiet", "--no-notices", "--output", str(tmp_path / "user")],
        cwd=project,
        env=synth_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert user.returncode != 0
    assert "config='fmp-config.json': not valid JSON" in user.stderr

    # The session fixture's synth, in the same project, builds the tests' app.
    result = synthesize(project, tmp_path / "tests")
    assert result.returncode == 0, result.stderr
    assert f"fm_platform: using configuration file {APP_CONFIG}" in result.stderr
    assert set(load_assembly(tmp_path / "tests").templates) == {
        "FmpFixtureCheck",
        "FmpFixtureCheckArtifacts",
    }
