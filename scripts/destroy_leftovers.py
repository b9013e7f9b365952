#!/usr/bin/env python3
"""List what remains after `cdk destroy` of every stack of a cloud assembly, with the
commands that remove it (see :mod:`leftovers`). Run by ``make destroy``:

1. ``destroy_leftovers.py cdk.out --record cdk.out/deployed.json`` before the destroy:
   asks CloudFormation (boto3's default credentials; the stack's region, else the default
   region, as the CDK CLI) for each stack's ID, outputs and physical resource IDs; a stack
   that is not deployed is left out;
2. ``destroy_leftovers.py cdk.out --deployed cdk.out/deployed.json`` after it: the listing
   with the recorded names.

Without either option it lists offline, from the templates alone, with placeholders for
the names the templates do not fix. ``--env NAME`` keeps the stacks of that environment's
stage (``make destroy ENV=NAME``); without it every stack, those in stages included.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from docs_assembly import Assembly
from leftovers import Deployed, Leftovers, render


def record(cloudformation: Any, stacks: Iterable[str]) -> dict[str, Deployed]:
    """Each deployed stack's ID, outputs and physical resource IDs, from the boto3
    CloudFormation client ``cloudformation``; stacks that do not exist are left out."""
    recorded = {}
    for name in stacks:
        try:
            (stack,) = cloudformation.describe_stacks(StackName=name)["Stacks"]
        except cloudformation.exceptions.ClientError as error:
            if "does not exist" in str(error):
                continue
            raise
        resources = {}
        pages = cloudformation.get_paginator("list_stack_resources").paginate(StackName=name)
        for page in pages:
            for resource in page["StackResourceSummaries"]:
                if "PhysicalResourceId" in resource:
                    resources[resource["LogicalResourceId"]] = resource["PhysicalResourceId"]
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        recorded[name] = Deployed(stack["StackId"], outputs, resources)
    return recorded


def load_record(path: Path) -> dict[str, Deployed]:
    return {name: Deployed(**data) for name, data in json.loads(path.read_text()).items()}


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("assembly", type=Path, help="the cloud assembly directory (cdk.out)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--record", type=Path, help="record the deployed stacks into this file")
    group.add_argument("--deployed", type=Path, help="list with the names recorded in this file")
    parser.add_argument("--env", help="only the stacks of this environment's stage")
    args = parser.parse_args(argv)
    assembly = Assembly.load(args.assembly)
    if args.env:
        assembly = assembly.of_stage(args.env)
    if args.record:
        import boto3
        from botocore.exceptions import BotoCoreError, ClientError

        regions = {stack.region for stack in assembly.stacks.values()}
        try:
            deployed = {}
            for region in sorted(regions, key=str):
                client = boto3.client("cloudformation", region_name=region)
                names = [n for n, s in assembly.stacks.items() if s.region == region]
                deployed.update(record(client, names))
        except (BotoCoreError, ClientError) as error:
            print(f"destroy_leftovers: cannot read the deployed stacks: {error}", file=sys.stderr)
            return 1
        args.record.write_text(json.dumps({n: asdict(d) for n, d in deployed.items()}, indent=1))
        print(f"recorded {', '.join(deployed) or 'no deployed stack'} into {args.record}")
        return 0
    deployed_stacks = load_record(args.deployed) if args.deployed else None
    print(render(Leftovers(assembly, deployed_stacks)), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
