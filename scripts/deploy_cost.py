#!/usr/bin/env python3
"""What the configured stacks cost per hour and per day once deployed, from the shipped
price data (fm_platform/hardware/instance_prices.json: SageMaker on-demand prices per
instance-hour and region), before ``make deploy`` deploys anything; then, with
``--confirm``, the question whether to go on.

Counted: every instance that runs right after the deploy (each training instance group's
``instance_count``; each endpoint's initial instance count). Not counted, and said so: the
types without a price in the region, and what is billed by use (FSx storage, NAT data, logs,
requests); the README's cost table lists those. The region is ``--region``, else
``AWS_REGION`` / ``AWS_DEFAULT_REGION``, else the one of the training AZ ID.

A configuration with environments (docs/environments.md) is priced per environment, in its
own region, with its catalog's fleet as planned for that region: ``--env NAME`` (``make
deploy ENV=NAME``) prices one, without it every one in order.

``--confirm`` asks "Deploy? [y/N]" unless the deploy is already approved: ``--yes``
(``make deploy YES=1``) or ``--require-approval never`` among the CDK arguments. Without a
terminal (CI=true or no stdin) it does not wait for an answer: it stops with exit status 1
and says how to approve.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fm_platform.config import AppConfig, InferenceConfig, load_config
from fm_platform.config.environments import (
    ENVIRONMENTS_KEY,
    EnvironmentConfig,
    has_environments,
    load_environments,
)
from fm_platform.hardware.prices import DEFAULT_REGION, hourly_prices, price_source
from fm_platform.hardware.regions import region_of_az_id
from fm_platform.rules.problems import ValidationError
from fm_platform.stacks.environment import plan_environments
from fm_platform.stacks.fleet import stack_config

ROOT = Path(__file__).resolve().parent.parent
HOURS_PER_DAY = 24
#: Amazon EKS, per cluster and hour in standard support (https://aws.amazon.com/eks/pricing/).
EKS_CONTROL_PLANE_PER_HOUR = 0.10
#: AWS CodeBuild on-demand, general1.small Linux, per build minute in us-east-1
#: (https://aws.amazon.com/codebuild/pricing/).
CODEBUILD_SMALL_PER_MINUTE = 0.005


@dataclass(frozen=True)
class Line:
    """Instances of one kind that run after the deploy."""

    stack: str
    what: str
    instance_type: str
    count: int


def running_instances(config: AppConfig) -> list[Line]:
    """Every instance the configured stacks start."""
    lines: list[Line] = []
    if config.deploy_training:
        stack = config.training_stack_name
        for group in _training_groups(config):
            lines.append(
                Line(
                    stack, f"instance group {group.name}", group.instance_type, group.instance_count
                )
            )
    if config.deploy_inference:
        lines += endpoint_instances(config.inference_stack_name, config.inference)
    return [line for line in lines if line.count > 0]


def _training_groups(config: AppConfig) -> Sequence[Any]:
    """The instance groups the training stack starts (Slurm's or EKS's)."""
    training = config.training
    if not training.uses_eks:
        return training.instance_groups
    return training.eks.instance_groups if training.eks is not None else ()


def endpoint_instances(stack: str, inference: InferenceConfig) -> list[Line]:
    """The instances the endpoints of one inference stack start with."""
    lines = []
    for kind, endpoints in (
        ("inference components endpoint", inference.ic_endpoints),
        ("single-model endpoint", inference.single_model_endpoints),
        ("multi-model endpoint", inference.multi_model_endpoints),
        ("asynchronous endpoint", inference.async_endpoints),
    ):
        for endpoint in endpoints:
            count = int(getattr(endpoint, "initial_instance_count", 1) or 0)
            lines.append(Line(stack, f"{kind} {endpoint.name}", endpoint.instance_type, count))
    return [line for line in lines if line.count > 0]


def environment_instances(environment: EnvironmentConfig) -> list[Line]:
    """Every instance an environment's stacks start: its default stacks', and its fleet's
    as the catalog's plan for its region sizes them (the plan file is re-planned and
    written, as the synth that follows does)."""
    lines = running_instances(environment.config)
    plans = plan_environments((environment,))
    if environment.name in plans:
        plan, catalog = plans[environment.name]
        for stack in plan.stacks:
            lines += endpoint_instances(stack, stack_config(plan, catalog, stack))
    return lines


def cost_lines(lines: Iterable[Line], region: str) -> tuple[list[str], float, list[Line]]:
    """The table's rows, the priced total per hour, and the lines without a price."""
    prices = hourly_prices(region)
    rows, total, unpriced = [], 0.0, []
    for line in lines:
        price = prices.get(line.instance_type)
        if price is None:
            unpriced.append(line)
            rows.append(
                f"  {line.stack:<14} {line.what:<42} {line.count:>3} x {line.instance_type:<18}"
                "    no price"
            )
            continue
        total += price * line.count
        rows.append(
            f"  {line.stack:<14} {line.what:<42} {line.count:>3} x {line.instance_type:<18}"
            f" ${price * line.count:>9,.2f}/h"
        )
    return rows, total, unpriced


def report(
    config: AppConfig,
    region: str,
    *,
    lines: list[Line] | None = None,
    environment: str | None = None,
) -> list[str]:
    """What the deploy costs, in lines for the terminal: the instances of ``config``'s
    stacks, or ``lines`` when given (an environment's, named ``environment``)."""
    rows, total, unpriced = cost_lines(
        running_instances(config) if lines is None else lines, region
    )
    source = price_source()
    which = f"environment {environment}'s stacks" if environment else "the stacks"
    out = [
        f"fm_platform: what {which} cost once deployed in {region} (on-demand, "
        f"{source.get('repo', 'shipped data')} {source.get('file_commit', '')}):".rstrip(),
        *rows,
        f"  total: ${total:,.2f} per hour, ${total * HOURS_PER_DAY:,.2f} per day"
        + (" for the priced instances" if unpriced else ""),
    ]
    if unpriced:
        types = ", ".join(sorted({line.instance_type for line in unpriced}))
        out.append(
            f"  not counted: {types} (no price in the shipped data for {region}; see "
            "https://aws.amazon.com/sagemaker/pricing/)"
        )
    out.append(
        "  plus what is billed by use: FSx storage and throughput, NAT gateway, logs, "
        "requests (README, 'What it costs')"
    )
    if config.deploy_training and config.training.uses_eks:
        out.append(
            f"  plus the EKS control plane: ${EKS_CONTROL_PLANE_PER_HOUR:.2f} per hour while the "
            "cluster exists, before any node (Amazon EKS pricing, standard support; "
            "https://aws.amazon.com/eks/pricing/)"
        )
        out.append(
            f"  plus the Helm release builds: ${CODEBUILD_SMALL_PER_MINUTE:.3f} per build "
            "minute (CodeBuild general1.small Linux; https://aws.amazon.com/codebuild/pricing/), "
            "a few minutes when a deployment creates, changes or deletes a release"
        )
    if config.deploy_training:
        out.append(
            "  the training instances are priced at SageMaker's hosting price of their type: "
            "the shipped data has no HyperPod prices (https://aws.amazon.com/sagemaker/pricing/)"
        )
    return out


def config_path(cdk_args: Sequence[str]) -> Path | None:
    """The configuration file the CDK arguments (``-c config=FILE``) or cdk.json name."""
    for index, arg in enumerate(cdk_args):
        value = None
        if arg in ("-c", "--context") and index + 1 < len(cdk_args):
            value = cdk_args[index + 1]
        elif arg.startswith("--context="):
            value = arg.split("=", 1)[1]
        if value is not None and value.startswith("config="):
            return Path(value.split("=", 1)[1])
    name = json.loads((ROOT / "cdk.json").read_text()).get("context", {}).get("config")
    return ROOT / name if name else None


def region_for(config: AppConfig, given: str | None) -> str:
    zone = config.training.availability_zone_id if config.deploy_training else None
    from_zone = region_of_az_id(zone) if zone else None
    return (
        given
        or os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION")
        or from_zone
        or DEFAULT_REGION
    )


def approved(args: argparse.Namespace, cdk_args: Sequence[str]) -> bool:
    joined = " ".join(cdk_args)
    return args.yes or "--require-approval never" in joined or "--require-approval=never" in joined


def confirm(args: argparse.Namespace, cdk_args: Sequence[str], stdin=sys.stdin) -> int:
    """0 to go on, 1 to stop."""
    if approved(args, cdk_args):
        return 0
    interactive = os.environ.get("CI", "").lower() not in ("true", "1") and stdin.isatty()
    if not interactive:
        print(
            "fm_platform: not deploying without approval: no terminal to ask (CI or no "
            'stdin); approve with `make deploy YES=1` or ARGS="--require-approval never"',
            file=sys.stderr,
        )
        return 1
    print("Deploy? [y/N] ", end="", flush=True)
    answer = stdin.readline().strip().lower()
    return 0 if answer in ("y", "yes") else 1


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--region", help="price region (default: see above)")
    parser.add_argument(
        "--env", help="the environment to price (make deploy ENV=...); by default every one"
    )
    parser.add_argument("--confirm", action="store_true", help="ask before deploying")
    parser.add_argument("--yes", action="store_true", help="the deploy is approved")
    parser.add_argument("cdk_args", nargs=argparse.REMAINDER, help="the CDK arguments (ARGS)")
    args = parser.parse_args(argv)
    cdk_args = [a for a in args.cdk_args if a != "--"]
    path = config_path(cdk_args)
    data = json.loads(path.read_text()) if path is not None and path.exists() else {}
    try:
        text = environments_report(data, args.env) if has_environments(data) else None
        if text is None and args.env:
            raise SystemExit(
                f"fm_platform: ENV={args.env}: the configuration {path} names no environments "
                f'(add an "{ENVIRONMENTS_KEY}" list, docs/environments.md) ; leave ENV out'
            )
    except ValidationError as error:
        print(f"fm_platform: {error}", file=sys.stderr)
        return 1
    if text is None:
        config = load_config(data) if data else AppConfig()
        text = report(config, region_for(config, args.region))
    print("\n".join(text))
    return confirm(args, cdk_args) if args.confirm else 0


def environments_report(data: object, name: str | None) -> list[str]:
    """The cost of environment ``name`` (of every environment, in order, without one):
    each in its own region."""
    environments = load_environments(data)
    chosen = [environments.named(name)] if name else list(environments.environments)
    text: list[str] = []
    for environment in chosen:
        text += report(
            environment.config,
            environment.region,
            lines=environment_instances(environment),
            environment=environment.name,
        )
    return text


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
