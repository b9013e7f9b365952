"""Every shell command the docs show (README.md and docs/*.md: their ``sh``, ``bash``,
``console`` and ``shell`` blocks) runs as typed after the README's `make synth`, in the
project, offline and without AWS credentials, and leaves the project's tracked files as
they are (what it writes beside them, e.g. `diff.md`, is removed again); or it is on one of
two reviewed lists, with why it does not run here: :data:`NEEDS_AWS` (an account,
credentials or a deployed stack; each `fmp` one is still read by fmp's own parser) and
:data:`NOT_IN_THE_SUITE`. The pages in :data:`OWN_TESTS` have a test of their own that runs
each of their commands and checks what it prints.

Running them takes minutes (`make synth`, `make docs`, two `make diff`, `cdk diff`): the
runs are marked slow; which command runs, and the parse of the AWS ones, are fast."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from fm_platform.cli.main import build_parser
from tests.conftest import synth_env
from tests.docs_support import PAGES, page_name, shell_blocks, shell_commands
from tests.support import ROOT

#: Pages whose own test runs every command of their shell blocks and checks its output.
OWN_TESTS = {
    "docs/planner.md": "tests/test_planner_docs_commands.py",
    "docs/environments.md": "tests/test_environments_docs.py",
}

_DEPLOYS = "deploys to an AWS account (credentials, a bootstrapped account)"
_CLUSTER = "reads or changes the deployed HyperPod cluster (credentials, FmpTraining deployed)"
_ENDPOINT = "reads, invokes or scales a deployed endpoint (credentials, FmpInference deployed)"
_DESTROYS = "destroys deployed stacks (credentials)"
#: Commands that need an AWS account, with why; none runs here.
NEEDS_AWS = {
    "npx cdk bootstrap aws://ACCOUNT/us-east-1": "bootstraps your account (credentials)",
    "npx cdk deploy FmpTraining": _DEPLOYS,
    "npx cdk deploy FmpInferenceArtifacts": _DEPLOYS,
    "npx cdk deploy FmpInference": _DEPLOYS,
    "aws s3 sync ./llama-7b-chat s3://<ModelArtifactsBucket>/models/llama-7b-chat/": (
        "uploads to the deployed model bucket (credentials, FmpInferenceArtifacts deployed)"
    ),
    "aws pricing get-products --region us-east-1 --service-code AmazonSageMaker --filters "
    "Type=TERM_MATCH,Field=regionCode,Value=us-east-1 "
    "Type=TERM_MATCH,Field=instanceName,Value=ml.trn1.32xlarge "
    "--query 'PriceList[]' --output text": "calls the AWS Price List API (credentials)",
    "aws service-quotas list-service-quotas --service-code sagemaker --region us-east-1 "
    "--query \"Quotas[?contains(['ml.trn1.32xlarge for cluster usage', 'ml.m5.12xlarge for "
    "cluster usage', 'ml.g5.12xlarge for endpoint usage', 'ml.g5.2xlarge for endpoint "
    "usage', 'ml.m5.xlarge for endpoint usage'], QuotaName)].[QuotaName,Value]\" "
    "--output table": "reads the account's service quotas (credentials)",
    "fmp cluster status": _CLUSTER,
    "fmp cluster nodes": _CLUSTER,
    "fmp cluster connect": _CLUSTER,
    "fmp cluster scale workers 8": _CLUSTER,
    "fmp cluster update-software --batch-percent 25 --yes": _CLUSTER,
    "fmp cluster reboot-node i-0123456789abcdef0 --yes": _CLUSTER,
    "fmp cluster kubeconfig": _CLUSTER,
    "fmp job submit train.sbatch": "runs sbatch on the deployed cluster's head node",
    "fmp endpoint status --endpoint NAME": _ENDPOINT,
    "fmp endpoint invoke --endpoint NAME --component FmpInference-llama-7b-chat "
    "--body request.json [--stream]": _ENDPOINT,
    "fmp endpoint invoke-async NAME --input s3://BUCKET/request.json": _ENDPOINT,
    "fmp endpoint metrics NAME": _ENDPOINT,
    "fmp endpoint metrics ENDPOINT": _ENDPOINT,
    "fmp endpoint scale NAME --model llama-7b-chat --copies 4": _ENDPOINT,
    "fmp endpoint scale ENDPOINT --model llama-7b-chat --copies 4": _ENDPOINT,
    "fmp endpoint scale ENDPOINT --instances 3 [--variant AllTraffic]": _ENDPOINT,
    "fmp alarms": "reads the deployed stacks' CloudWatch alarms (credentials)",
    "fmp fleet status examples/catalog.plan.json": (
        "compares the deployed plan's endpoints with the plan (credentials, its stacks deployed)"
    ),
    "make destroy": _DESTROYS,
    "npx cdk destroy FmpInference": _DESTROYS,
    "npx cdk destroy FmpTraining": _DESTROYS,
    "npx cdk destroy FmpTrainingData": _DESTROYS,
}
#: Commands that run offline but not inside the suite, with why.
NOT_IN_THE_SUITE = {
    "make test": "runs this whole suite, the slow tests included",
    "make snapshot-update": "runs this suite and rewrites tests/__snapshots__",
    "make docs-check": (
        "opens the site in headless Chromium, installed with apt-get when missing (root, the "
        "network); `make docs`, which it runs first, runs here"
    ),
    "make diff BASE=origin/main": (
        "needs a clone with a remote named origin; `make diff BASE=HEAD~1` runs the same "
        "comparison against another commit here"
    ),
}
SKIPPED = NEEDS_AWS | NOT_IN_THE_SUITE


def runnable(page: Path) -> list[list[str]]:
    """The blocks of ``page`` (not one of :data:`OWN_TESTS`) with the commands that run
    here, in order (the skipped ones left out)."""
    if page_name(page) in OWN_TESTS:
        return []
    blocks = ([c for c in block if c not in SKIPPED] for block in shell_blocks(page))
    return [block for block in blocks if block]


RUNS = [(page_name(page), block) for page in PAGES for block in runnable(page)]


def test_every_command_runs_or_is_listed_with_why():
    shown = {command for page in PAGES for command in shell_commands(page)}
    assert set(SKIPPED) <= shown, "listed but no page shows it"
    assert not set(NEEDS_AWS) & set(NOT_IN_THE_SUITE)
    assert all(len(why) > 20 for why in SKIPPED.values())
    # the pages with a test of their own show their commands in its `sh` blocks
    for name in OWN_TESTS:
        page = ROOT / name
        assert shell_commands(page) == shell_commands(page, ("sh",)), name
    assert RUNS[0] == ("README.md", ["make synth"])
    ran = {command for _, block in RUNS for command in block}
    assert {"make docs", "make diff", "git diff tests/__snapshots__"} <= ran


def _argv(command: str) -> list[str]:
    """``command``'s arguments as typed, its optional ``[...]`` parts left out."""
    return shlex.split(re.sub(r"\s*\[[^]]*\]", "", command))[1:]


@pytest.mark.parametrize("command", [c for c in NEEDS_AWS if c.startswith("fmp ")])
def test_each_fmp_command_that_needs_aws_is_one_fmp_reads(command):
    argv = _argv(command)
    build_parser(argv[0]).parse_args(argv)  # argparse exits on what it cannot read


def _state() -> tuple[str, set[str]]:
    """The tracked files' changes against HEAD and the untracked files."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout

    untracked = set(git("ls-files", "--others", "--exclude-standard").splitlines())
    return git("diff", "HEAD", "--binary"), untracked


def _run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=ROOT,
        env=synth_env(),  # the virtualenv's bin first, no AWS credentials
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=1800,
    )


@pytest.fixture(scope="module")
def after_the_readme() -> subprocess.CompletedProcess[str]:
    """The README's `make synth`, run once as typed: what the other pages' commands follow."""
    (block,) = [block for name, block in RUNS if name == "README.md"]
    return _run("\n".join(block))


@pytest.mark.slow
@pytest.mark.parametrize(("page", "block"), RUNS, ids=[f"{p}:{b[0]}" for p, b in RUNS])
def test_each_command_runs_as_typed(page, block, after_the_readme):
    assert after_the_readme.returncode == 0, after_the_readme.stderr[-3000:]
    if page == "README.md":
        return  # the fixture ran it
    tracked, untracked = _state()
    result = _run("\n".join(block))
    changed, written = _state()
    for name in written - untracked:  # diff.md, old.template.json, train.sbatch
        (ROOT / name).unlink()
    assert result.returncode == 0, "\n".join(block) + result.stdout[-3000:] + result.stderr[-3000:]
    assert changed == tracked, f"{block} changed tracked files"
