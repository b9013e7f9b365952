#!/usr/bin/env python3
"""Compare each stack of the app with its committed snapshot, offline: what a pull request
changes in the deployed CloudFormation, as `cdk diff` words it (resources added, removed,
modified, and which would be REPLACED).

Synthesizes the app with the CDK CLI (reading the configuration named in cdk.json; extra
arguments go to `cdk synth`, e.g. ``-c config=other.json``), replaces asset hashes the way
the snapshots do, then runs ``cdk diff --template <snapshot> <stack>`` on each stack.
Run with ``make diff``. Needs no AWS credentials.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CDK = ROOT / "node_modules" / ".bin" / "cdk"
SNAPSHOTS = ROOT / "tests" / "__snapshots__" / "test_app"
_ASSET_HASH = re.compile(r"\b[0-9a-f]{64}\b")


def snapshot_of(stack: str) -> Path:
    return SNAPSHOTS / f"test_template_snapshot[{stack}].json"


def synthesize(outdir: Path, extra: list[str]) -> dict[str, Path]:
    """Synthesize into ``outdir``; the stacks' template files with asset hashes replaced."""
    command = [str(CDK), "synth", "--quiet", "--no-notices", "--output", str(outdir), *extra]
    subprocess.run(command, cwd=ROOT, check=True)
    manifest = json.loads((outdir / "manifest.json").read_text())
    templates = {}
    for name, artifact in manifest["artifacts"].items():
        if artifact["type"] != "aws:cloudformation:stack":
            continue
        path = outdir / artifact["properties"]["templateFile"]
        path.write_text(_ASSET_HASH.sub("<asset-hash>", path.read_text()))
        templates[name] = path
    return templates


def main(extra: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="fmp-diff-") as tmp:
        outdir = Path(tmp)
        try:
            stacks = synthesize(outdir, extra)
        except subprocess.CalledProcessError as error:
            return error.returncode
        for stack in stacks:
            snapshot = snapshot_of(stack)
            print(f"=== {stack} against {snapshot.relative_to(ROOT)}", flush=True)
            if not snapshot.exists():
                print("(no committed snapshot: a new stack)", flush=True)
                continue
            command = [str(CDK), "diff", "--app", str(outdir), "--no-notices"]
            command += ["--template", str(snapshot), stack]
            subprocess.run(command, cwd=ROOT, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
