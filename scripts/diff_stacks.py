#!/usr/bin/env python3
"""Every stack of the app as the working tree builds it, against a base: what a change does
to the deployed CloudFormation, stack by stack, as `cdk diff` words it (resources added,
removed, modified, and which would be REPLACED), with a summary of the replacements and of
the IAM and security changes. Run with ``make diff``; needs no AWS credentials.

The base is one of:

- a git commit (``--base REF``, ``HEAD`` by default: your uncommitted change): the commit
  is checked out in a temporary ``git worktree`` and its own app is synthesized there, with
  its own code and configuration file, by this checkout's virtualenv and CDK CLI;
- the committed snapshots (``--snapshots``): the app built from the tests' configuration
  (tests/fixtures/app-config.json) against tests/__snapshots__/test_app, asset hashes
  replaced the way the snapshots do.

Each stack is diffed on its own (``cdk diff --template BASE STACK --exclusively``: without
``--exclusively`` the CLI refuses a stack with dependencies). Arguments the script does not
know go to both `cdk synth` runs, e.g. ``-c config=other.json`` (a relative path is read in
each tree; give an absolute one to build both sides from one file). ``--markdown FILE``
writes the result for a pull-request comment; ``--env NAME`` keeps the stacks of one
environment's stage (``make diff ENV=prod``); ``--repo DIR`` compares another checkout
(this one by default). After CloudFormation's summary comes what happens to running things
(:mod:`change_impact`: nodes, file systems, endpoints, components, alarms). Exits non-zero
when the CLI or git fails (1) or when the services would refuse a change (2, with the
steps to take); differences alone are not a failure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from change_impact import Impact, change_impacts, markdown_lines, report_lines
from diff_report import StackDiff, markdown, read_cli_output, summary

ROOT = Path(__file__).resolve().parent.parent
CDK = ROOT / "node_modules" / ".bin" / "cdk"
SNAPSHOTS = Path("tests") / "__snapshots__" / "test_app"
TESTS_CONFIG = Path("tests") / "fixtures" / "app-config.json"
_ASSET_HASH = re.compile(r"\b[0-9a-f]{64}\b")


class CommandFailed(Exception):
    """A git or CDK CLI command exited non-zero; ``returncode`` is its exit status."""

    def __init__(self, what: str, returncode: int) -> None:
        super().__init__(what)
        self.returncode = returncode


@dataclass(frozen=True)
class Side:
    """One side of the comparison: a label and each stack's template file."""

    label: str
    templates: dict[str, Path]


def cli_env() -> dict[str, str]:
    """This interpreter's bin directory first on PATH, so the app (``python3 app.py``)
    runs in this virtualenv, with its Node.js, whichever tree it is in."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["CDK_DISABLE_CLI_TELEMETRY"] = "true"
    return env


def run(command: Sequence[str], cwd: Path, what: str) -> str:
    """Run ``command``, echo nothing, return its combined output; raise
    :class:`CommandFailed` (after printing the output) when it fails."""
    result = subprocess.run(
        list(command), cwd=cwd, env=cli_env(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        print(result.stdout, end="", file=sys.stderr)
        raise CommandFailed(f"{what} failed (exit {result.returncode})", result.returncode)
    return result.stdout


def stack_templates(assembly: Path) -> dict[str, Path]:
    """Each stack of the cloud assembly in ``assembly`` and its template file, every stack
    after the stacks it depends on (the order `cdk deploy --all` takes). Stacks of stages
    (an environment's, docs/environments.md) are read from their nested assemblies and
    named as `cdk ls` names them (``prod/FmpTraining``)."""
    manifest = json.loads((assembly / "manifest.json").read_text())
    stacks = {
        name: artifact
        for name, artifact in manifest["artifacts"].items()
        if artifact["type"] == "aws:cloudformation:stack"
    }
    ordered: dict[str, Path] = {}

    def visit(name: str) -> None:
        display = stacks[name].get("displayName", name)
        if display in ordered:
            return
        for dependency in stacks[name].get("dependencies", []):
            if dependency in stacks:
                visit(dependency)
        ordered[display] = assembly / stacks[name]["properties"]["templateFile"]

    for name in stacks:
        visit(name)
    for artifact in manifest["artifacts"].values():
        if artifact["type"] == "cdk:cloud-assembly":
            ordered.update(stack_templates(assembly / artifact["properties"]["directoryName"]))
    return ordered


def of_environment(templates: dict[str, Path], environment: str | None) -> dict[str, Path]:
    """The stacks of ``environment``'s stage (``<env>/<stack>``, under a pipeline
    ``<pipeline>/<env>/<stack>``); every stack without one."""
    if environment is None:
        return templates
    return {
        stack: path for stack, path in templates.items() if stack.split("/")[-2:-1] == [environment]
    }


def synthesize(project: Path, outdir: Path, extra: Sequence[str], what: str) -> dict[str, Path]:
    """`cdk synth` of the app in ``project`` into ``outdir``; its stacks' templates."""
    print(f"fmp-diff: synthesizing {what}", file=sys.stderr, flush=True)
    command = [str(CDK), "synth", "--quiet", "--no-notices", "--output", str(outdir), *extra]
    output = run(command, project, f"cdk synth of {what}")
    for line in output.splitlines():
        if line.startswith("fm_platform:"):
            print(f"  {line}", file=sys.stderr)
    return stack_templates(outdir)


def resolve(repo: Path, ref: str) -> str:
    """The commit ``ref`` names in ``repo``, abbreviated; raises :class:`CommandFailed`
    if it names none."""
    command = ["git", "rev-parse", "--short", "--verify", f"{ref}^{{commit}}"]
    try:
        return run(command, repo, "git rev-parse").strip()
    except CommandFailed as error:
        message = f"{ref!r} names no commit of {repo}"
        raise CommandFailed(message, error.returncode) from None


@contextmanager
def worktree(repo: Path, ref: str, directory: Path) -> Iterator[Path]:
    """The commit ``ref`` of ``repo`` checked out (detached) in a temporary worktree under
    ``directory``, removed again afterwards."""
    path = directory / "base-tree"
    command = ["git", "worktree", "add", "--detach", "--quiet", str(path), ref]
    run(command, repo, "git worktree add")
    try:
        yield path
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(path)], cwd=repo, check=False,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip


def normalize_asset_hashes(templates: dict[str, Path]) -> None:
    """Replace asset hashes in the template files the way the snapshots store them."""
    for path in templates.values():
        path.write_text(_ASSET_HASH.sub("<asset-hash>", path.read_text()))


def diff_stack(stack: str, app: Path, base: Path | None, empty: Path) -> StackDiff:
    """``cdk diff`` of ``stack`` in the assembly ``app`` against the template ``base``
    (``None``: a stack the base does not have, compared with an empty template)."""
    template = base if base is not None else empty
    command = [str(CDK), "diff", "--no-notices", "--app", str(app)]
    command += ["--template", str(template), stack, "--exclusively"]
    result = subprocess.run(
        command, cwd=ROOT, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        return StackDiff(stack, "failed", result.stdout)
    diff = read_cli_output(stack, result.stdout)
    if base is None:
        diff.status = "new"
    return diff


def compare(head: Side, base: Side, app: Path, workdir: Path) -> list[StackDiff]:
    """Every stack of either side, the working tree's first (in its order), each diffed
    on its own and printed as it comes."""
    empty = workdir / "empty.template.json"
    empty.write_text("{}")
    diffs = []
    for stack in head.templates:
        print(f"=== {stack}: {head.label} against {base.label}", flush=True)
        diff = diff_stack(stack, app, base.templates.get(stack), empty)
        print(diff.output, end="", flush=True)
        diffs.append(diff)
    for stack in base.templates.keys() - head.templates.keys():
        print(f"=== {stack}: only in {base.label}", flush=True)
        diffs.append(StackDiff(stack, "removed"))
    return diffs


def against_snapshots(repo: Path, app: Path, extra: Sequence[str]) -> tuple[dict[str, Path], Side]:
    """The working tree's app built from the tests' configuration into ``app``, and the
    committed snapshots as the base (:func:`snapshot_side`)."""
    extra = ["-c", f"config={TESTS_CONFIG}", *extra]
    templates = synthesize(repo, app, extra, "the working tree with the tests' configuration")
    return templates, snapshot_side(repo, templates)


def snapshot_side(repo: Path, templates: dict[str, Path]) -> Side:
    """The committed snapshot of each stack that has one, with the asset hashes of
    ``templates`` (rewritten in place) replaced the way the snapshots store them."""
    normalize_asset_hashes(templates)
    files = {
        stack: repo / SNAPSHOTS / f"test_template_snapshot[{stack}].json" for stack in templates
    }
    return Side(str(SNAPSHOTS), {s: path for s, path in files.items() if path.exists()})


def against_commit(
    repo: Path, ref: str, app: Path, extra: Sequence[str], workdir: Path
) -> tuple[dict[str, Path], Side]:
    """The app of commit ``ref`` (built in a temporary worktree) as the base, and the
    working tree's app built into ``app``."""
    label = f"{ref} ({resolve(repo, ref)})"
    with worktree(repo, ref, workdir) as tree:
        base = synthesize(tree, workdir / "base.out", extra, label)
    return synthesize(repo, app, extra, "the working tree"), Side(label, base)


def parse_args(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None, allow_abbrev=False
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--base", default="HEAD", help="git commit to compare with (HEAD)")
    group.add_argument(
        "--snapshots", action="store_true", help="compare with tests/__snapshots__ instead"
    )
    parser.add_argument("--markdown", type=Path, help="also write the result as Markdown")
    parser.add_argument(
        "--env", help="only the stacks of this environment (make diff ENV=...); all by default"
    )
    parser.add_argument(
        "--repo", type=Path, default=ROOT, help="the checkout to compare (this one)"
    )
    return parser.parse_known_args(argv)


def main(argv: Sequence[str]) -> int:
    args, extra = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fmp-diff-") as tmp:
        workdir = Path(tmp)
        app = workdir / "working-tree.out"
        try:
            if args.snapshots:
                templates, base = against_snapshots(args.repo, app, extra)
            else:
                templates, base = against_commit(args.repo, args.base, app, extra, workdir)
        except CommandFailed as error:
            print(f"fmp-diff: {error}", file=sys.stderr)
            return error.returncode
        templates = of_environment(templates, args.env)
        base = Side(base.label, of_environment(base.templates, args.env))
        if args.env and not templates and not base.templates:
            print(f"fmp-diff: no stack of environment {args.env!r} on either side", file=sys.stderr)
            return 1
        diffs = compare(Side("the working tree", templates), base, app, workdir)
        impacts = change_impacts(load_templates(base.templates), load_templates(templates))
    print("\n".join(["", "Summary:", *summary(diffs)]))
    print("\n".join(["", f"{IMPACT_TITLE}:", *report_lines(impacts)]))
    if args.markdown:
        text = markdown(diffs, base.label, "the working tree")
        args.markdown.write_text(text + "\n".join(markdown_lines(impacts)) + "\n")
        print(f"fmp-diff: wrote {args.markdown}", file=sys.stderr)
    return exit_status(diffs, impacts)


#: The section after CloudFormation's summary.
IMPACT_TITLE = "What happens to running things"


def load_templates(files: dict[str, Path]) -> dict[str, dict]:
    """Each stack's template, read from its file."""
    return {stack: json.loads(path.read_text()) for stack, path in files.items()}


def exit_status(diffs: Sequence[StackDiff], impacts: Sequence[Impact] = ()) -> int:
    """1 (saying so on stderr) when `cdk diff` failed for any stack, 2 when the services
    would refuse a change (each with what to do instead), else 0: differences are what the
    command reports, not a failure."""
    failed = [diff.stack for diff in diffs if diff.status == "failed"]
    if failed:
        print(f"fmp-diff: cdk diff failed for {', '.join(failed)}", file=sys.stderr)
        return 1
    refused = [impact for impact in impacts if impact.refused]
    if refused:
        print(
            f"fmp-diff: {len(refused)} change(s) the services refuse; see "
            f"'{IMPACT_TITLE}' for what to do instead",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
