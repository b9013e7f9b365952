"""`make diff` (scripts/diff_stacks.py): every stack of the working tree's app against a
base, each diffed on its own by the real CDK CLI, a summary of replacements and IAM
changes, Markdown for a pull request, and a non-zero exit when git or the CLI fails."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import APP_CONFIG, CloudAssembly
from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from diff_report import StackDiff, markdown, parse_resource_line, read_cli_output  # noqa: E402
from diff_stacks import (  # noqa: E402
    Side,
    compare,
    diff_stack,
    exit_status,
    main,
    snapshot_side,
    stack_templates,
    synthesize,
)

CONTROLLER = {
    "name": "controller",
    "role": "controller",
    "instance_type": "ml.m5.12xlarge",
    "instance_count": 1,
}
#: A small app (one multi-model endpoint) for the end-to-end runs: seconds to synthesize.
SMALL = {
    "deploy_training": False,
    "inference_stack_name": "FmpDiffCheck",
    "inference": {
        "ic_endpoints": [],
        "single_model_endpoints": [],
        "multi_model_endpoints": [{"name": "small-models", "instance_type": "ml.m5.xlarge"}],
    },
}


@pytest.fixture(scope="module")
def training_change(
    default_assembly: CloudAssembly, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, StackDiff]:
    """The tests' app with the workers changed from 4 x ml.trn1.32xlarge to
    2 x ml.p4d.24xlarge (and no inference stack), against the session's default app."""
    workdir = tmp_path_factory.mktemp("training-change")
    config = json.loads((ROOT / APP_CONFIG).read_text())
    workers = {"name": "workers", "role": "worker", "instance_type": "ml.p4d.24xlarge"}
    workers |= {"instance_count": 2, "partition": "dev"}
    config["training"]["instance_groups"] = [CONTROLLER, workers]
    config["deploy_inference"] = False
    config_file = workdir / "p4d.json"
    config_file.write_text(json.dumps(config))
    app = workdir / "app.out"
    head = synthesize(ROOT, app, ["-c", f"config={config_file}"], "the p4d configuration")
    base = stack_templates(default_assembly.directory)
    diffs = compare(Side("p4d", head), Side("default", base), app, workdir)
    return {diff.stack: diff for diff in diffs}


@pytest.mark.slow
def test_a_training_change_shows_in_the_cluster_stack(training_change):
    cluster = training_change["FmpTraining"]
    assert cluster.status == "changed"
    changed = [(c.operation, c.type, c.logical_id) for c in cluster.resources]
    assert ("modified", "AWS::SageMaker::Cluster", "ClusterEB0386A7") in changed
    # Its dashboard draws the groups' instance types and counts.
    assert sorted(t for o, t, _ in changed if o == "modified") == [
        "AWS::CloudWatch::Dashboard",
        "AWS::SageMaker::Cluster",
    ]
    assert '[-] "InstanceType": "ml.trn1.32xlarge"' in cluster.output
    assert '[+] "InstanceType": "ml.p4d.24xlarge"' in cluster.output
    assert '[+] "InstanceCount": 2' in cluster.output


@pytest.mark.slow
def test_every_stack_is_compared_data_stack_first(training_change):
    stacks = list(training_change)
    assert stacks[:2] == ["FmpTrainingData", "FmpTraining"]
    assert set(stacks[2:]) == {"FmpInferenceArtifacts", "FmpInference"}
    assert training_change["FmpTrainingData"].status == "unchanged"
    # A stack the change drops from the app is named, not silently skipped.
    assert training_change["FmpInference"].status == "removed"


@pytest.mark.slow
def test_a_failing_cdk_diff_is_reported_and_fails_the_command(default_assembly, tmp_path):
    broken = tmp_path / "broken.template.json"
    broken.write_text('{"Resources": ')
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    diff = diff_stack("FmpTraining", default_assembly.directory, broken, empty)
    assert diff.status == "failed"
    assert diff.output.strip()
    assert exit_status([StackDiff("FmpTrainingData", "unchanged"), diff]) == 1
    assert exit_status([StackDiff("FmpTrainingData", "changed")]) == 0


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of this repository's last commit with the small configuration committed."""
    clone = tmp_path_factory.mktemp("repo") / "clone"
    git(ROOT, "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone))
    (clone / "small.json").write_text(json.dumps(SMALL))
    git(clone, "add", "small.json")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "small")
    return clone


@pytest.mark.slow
def test_make_diff_compares_the_working_tree_with_the_base_commits_own_app(repo, tmp_path, capsys):
    # Uncommitted: a bigger instance type and another model location in the configuration
    # file, and a changed output description in the code.
    changed = json.loads(json.dumps(SMALL))
    endpoint = changed["inference"]["multi_model_endpoints"][0]
    endpoint |= {"instance_type": "ml.m5.2xlarge", "models_s3_prefix": "s3://other/models/"}
    (repo / "small.json").write_text(json.dumps(changed))
    description = "Every endpoint's name, comma-separated (read by the fmp CLI)"
    (source,) = [p for p in (repo / "fm_platform").rglob("*.py") if description in p.read_text()]
    source.write_text(source.read_text().replace(description, "Names of the endpoints"))

    report = tmp_path / "diff.md"
    argv = ["--repo", str(repo), "--markdown", str(report), "-c", "config=small.json"]
    assert main(argv) == 0
    out = capsys.readouterr().out

    # The base commit's code and configuration were built (in a worktree), not the
    # working tree's: the diff shows both uncommitted changes.
    assert re.search(r'\[-\] +"InstanceType": "ml.m5.xlarge"', out)
    assert re.search(r'\[\+\] +"InstanceType": "ml.m5.2xlarge"', out)
    assert "Names of the endpoints" in out
    summary = out[out.index("Summary:") :]
    assert "  FmpDiffCheck: modified AWS::SageMaker::EndpointConfig" in summary
    assert "EndpointConfig21DAFC2F): REPLACE" in summary
    assert "  FmpDiffCheck: IAM Statement Changes: 2 added, 2 removed" in summary
    text = report.read_text()
    assert text.startswith("### CloudFormation changes: the working tree against HEAD (")
    assert "| `FmpDiffCheck` | 0 added, 3 modified, 0 removed | 2 | 2 |" in text
    assert "**Replacements**" in text and "**IAM and security changes**" in text
    assert "**Removed but retained**: none" in text
    assert "<details><summary><code>FmpDiffCheck</code>" in text
    assert re.search(r'\[\+\] +"InstanceType": "ml.m5.2xlarge"', text)
    # The temporary worktree is gone again.
    listed = subprocess.run(
        ["git", "worktree", "list"], cwd=repo, capture_output=True, text=True, check=True
    )
    assert len(listed.stdout.splitlines()) == 1


@pytest.mark.slow
def test_a_base_that_fails_to_synthesize_fails_the_command(repo, capsys):
    assert main(["--repo", str(repo), "-c", "config=missing.json"]) != 0
    assert "config='missing.json': no such file" in capsys.readouterr().err


@pytest.mark.slow
def test_a_base_that_is_no_commit_fails_the_command(repo, capsys):
    assert main(["--repo", str(repo), "--base", "no-such-branch"]) != 0
    assert "'no-such-branch' names no commit" in capsys.readouterr().err


def test_resource_lines_are_read_with_their_path_and_impact():
    line = "[~] AWS::SageMaker::Model Endpoint/Model EndpointModel1234ABCD replace"
    change = parse_resource_line(line)
    assert change is not None
    assert (change.operation, change.type, change.path) == (
        "modified",
        "AWS::SageMaker::Model",
        "Endpoint/Model",
    )
    assert (change.logical_id, change.impact) == ("EndpointModel1234ABCD", "replace")
    removed = parse_resource_line("[-] AWS::S3::Bucket Data/Bucket DataBucketABCD orphan")
    assert removed is not None and (removed.operation, removed.impact) == ("removed", "orphan")
    assert parse_resource_line('        [-] "InstanceCount": 4,') is None


def test_a_stack_without_differences_reads_as_unchanged():
    diff = read_cli_output("S", "Stack S\nThere were no differences\n")
    assert (diff.status, diff.resources, diff.security_changes) == ("unchanged", [], [])


@pytest.mark.slow
def test_the_snapshot_comparison_finds_the_tests_app_equal_to_its_snapshots(
    default_assembly, tmp_path
):
    app = tmp_path / "app.out"
    shutil.copytree(default_assembly.directory, app)
    templates = stack_templates(app)
    diffs = compare(Side("tests", templates), snapshot_side(ROOT, templates), app, tmp_path)
    assert {diff.stack: diff.status for diff in diffs} == {
        "FmpTrainingData": "unchanged",
        "FmpTraining": "unchanged",
        "FmpInferenceArtifacts": "unchanged",
        "FmpInference": "unchanged",
    }


@pytest.mark.slow
def test_the_markdown_shows_the_output_of_the_stacks_that_changed(training_change):
    text = markdown(list(training_change.values()), "default", "p4d")
    # The cluster, and its dashboard, which draws the groups' types and counts.
    assert "| `FmpTraining` | 0 added, 2 modified, 0 removed | 0 | 0 |" in text
    assert "<details><summary><code>FmpTraining</code>" in text
    assert "<code>FmpTrainingData</code>" not in text
    assert "**Replacements**: none" in text
