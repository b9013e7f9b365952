"""`fmp plan CATALOG`: place a model catalog on endpoints and stacks (no AWS calls).

The plan file (by default next to the catalog, ``<catalog>.plan.json``) is state: commit
it. Re-planning keeps every model on its endpoint, recomputes copies, scale to zero and
instance counts from the catalog, moves a model that no longer fits, and prints what
changed. ``--repack`` shows the moves whose saving reaches ``--min-saving`` (USD a month);
``--repack --apply`` writes them. ``--explain MODEL`` says why a model got its option.
Every catalog field, its default and unit: docs/planner.md, "Catalog fields".
"""

from __future__ import annotations

import argparse
import configparser
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError
from fm_platform.fleet.deciding.choices import (
    ChoiceCost,
    choice_costs,
    choice_lines,
    choice_warnings,
)
from fm_platform.fleet.outputs.bound import lower_bound
from fm_platform.fleet.outputs.changes import plan_changes
from fm_platform.fleet.outputs.charts import INSTALL_HINT as CHARTS_HINT
from fm_platform.fleet.outputs.charts import charts_available, draw_charts
from fm_platform.fleet.outputs.plan import Plan, default_plan_file, read_plan
from fm_platform.fleet.outputs.report import endpoint_table, explain, model_table, summary
from fm_platform.fleet.outputs.serving import annotate, serving_line
from fm_platform.fleet.placing.cost import HOURS_PER_MONTH
from fm_platform.fleet.placing.repack import repack
from fm_platform.fleet.planning import PlannedCatalog, plan_catalog
from fm_platform.hardware.prices import DEFAULT_REGION

DEFAULT_MIN_SAVING = 100.0


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    """Register `fmp plan`."""
    parser = subparsers.add_parser(
        "plan",
        parents=[common],
        help="plan a model catalog onto endpoints and stacks",
        description="Plan a model catalog onto SageMaker endpoints and stacks for one region: "
        "its on-demand prices and container images, and the region the fleet stacks deploy "
        "to. The region is --region, else the plan file's region (a plan keeps its region "
        "until --region moves it), else AWS_REGION, else AWS_DEFAULT_REGION, else the "
        "region of the profile (--profile, else AWS_PROFILE, else default) in the AWS config "
        "file, else us-east-1. Every catalog field, its default and unit: docs/planner.md, "
        "section 'Catalog fields'.",
    )
    parser.add_argument("catalog", help="catalog file (YAML or JSON)")
    parser.add_argument(
        "--plan-file", help="plan state to keep and update (default: <catalog>.plan.json)"
    )
    parser.add_argument("--explain", metavar="MODEL", help="why MODEL got its option")
    parser.add_argument(
        "--charts",
        metavar="DIR",
        help="write overview.png and spider-chart PNGs into DIR (needs the charts extra)",
    )
    parser.add_argument("--repack", action="store_true", help="show moves that save money")
    parser.add_argument(
        "--min-saving",
        type=float,
        default=DEFAULT_MIN_SAVING,
        metavar="USD",
        help=f"with --repack: the least a step must save a month (default {DEFAULT_MIN_SAVING:g})",
    )
    parser.add_argument("--apply", action="store_true", help="with --repack: write it")
    parser.set_defaults(handler=run)


def run(ctx: Context, args: argparse.Namespace) -> int:
    if args.charts and not charts_available():
        raise CliError(f"--charts needs matplotlib: {CHARTS_HINT}")
    plan_file = Path(args.plan_file) if args.plan_file else default_plan_file(args.catalog)
    try:
        previous = read_plan(plan_file)
        region, source = _region(args, previous)
        planned = plan_catalog(args.catalog, region, previous)
        for warning in planned.served.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if args.explain:
            _explain(planned, args.explain, f"planned for {region} (from {source})")
            return 0
        changes = (
            plan_changes(previous, planned.plan, planned.planner.moves, planned.planner.opened)
            if previous
            else []
        )
        plan = _repacked(planned, args.min_saving) if args.repack else planned.plan
        if args.repack and not args.apply:
            print("nothing written; add --apply to write the repacked plan")
            return 0
    except ValueError as error:
        raise CliError(str(error)) from None
    planner = planned.planner
    bound, note = _bound(lambda: lower_bound(planner)) if plan is planner.plan else (None, "")
    costs = choice_costs(planner) if plan is planner.plan else []
    for warning in choice_warnings(costs, planner.catalog.choice_warning_monthly):
        print(f"warning: {warning}", file=sys.stderr)
    plan.write(plan_file)
    if ctx.as_json:
        print(plan.to_json(), end="")
    else:
        _print_plan(plan, costs, bound, note, changes if previous else None)
        print(f"planned for {region} (from {source}); plan written to {plan_file}")
    if args.charts:
        written = draw_charts(plan, args.charts)
        print(f"{len(written)} charts (overview and spider charts) written to {args.charts}")
    return 0


def _region(args: argparse.Namespace, previous: Plan | None) -> tuple[str, str]:
    """The region to plan for and where it came from (:func:`planning_region`), after
    printing what the user should know about it."""
    kept = previous.region if previous else None
    profile = getattr(args, "profile", None)
    region, source = planning_region(
        getattr(args, "region", None), kept, profile, os.environ, DEFAULT_REGION
    )
    for warning in _region_warnings(kept, region, source, profile):
        print(f"warning: {warning}", file=sys.stderr)
    return region, source


def _explain(planned: PlannedCatalog, name: str, region_line: str) -> None:
    """`fmp plan --explain NAME`: why the model got its option, how it is served and what
    the catalog's choices cost it."""
    base = next((p.name for p in planned.plan.placements.values() if name in p.adapters), None)
    if base is not None:
        print(
            f"{name}: a LoRA adapter served on {base}'s copies (no compute of its own; "
            f"{base} is sized for its adapters' traffic); what follows is {base}'s"
        )
        name = base
    if name not in planned.plan.placements:
        raise ValueError(f"--explain {name!r}: no such model in the catalog")
    print(explain(planned.planner, name))
    print(serving_line(planned.plan, name))
    print(region_line)
    mine = [c for c in choice_costs(planned.planner) if name in c.models]
    if mine:
        print("cost of the catalog's choice:\n" + "\n".join(choice_lines(mine)))


def _repacked(planned: PlannedCatalog, min_saving: float) -> Plan:
    """The plan after the repacking moves that save at least ``min_saving`` a month, each
    printed, with the saving."""
    plan = planned.plan
    repacked, moves = repack(planned.planner.catalog, plan, min_saving)
    annotate(repacked, planned.served)
    for move in moves:
        print(f"move {move.model}: {move.before} -> {move.after}")
    saving = (
        sum(e.expected_hourly for e in plan.endpoints.values())
        - sum(e.expected_hourly for e in repacked.endpoints.values())
    ) * HOURS_PER_MONTH
    print(
        f"repacking moves {len(moves)} models and saves ${saving:,.0f} a month "
        f"(steps saving at least ${min_saving:,.0f} a month)"
    )
    return repacked


def _print_plan(
    plan: Plan,
    costs: list[ChoiceCost],
    bound: float | None,
    note: str,
    changes: list[str] | None,
) -> None:
    """The plan's tables, what the catalog's choices cost, its summary and (``changes``
    given: re-planned from a plan file) what changed."""
    print(model_table(plan), end="\n\n")
    print(endpoint_table(plan), end="\n\n")
    if costs:
        print("what the catalog's group and isolation choices cost (expected):")
        print("\n".join(choice_lines(costs)), end="\n\n")
    print("\n".join(summary(plan, bound, note)))
    bases = [p for p in plan.placements.values() if p.adapters]
    if bases:
        count = sum(len(p.adapters) for p in bases)
        print(
            f"{count} LoRA adapters on {len(bases)} base "
            + ("model's" if len(bases) == 1 else "models'")
            + " copies (no compute of "
            "their own; each base sized for its adapters' traffic)"
        )
    if changes is not None:
        print("changes since the plan file:" if changes else "no changes since the plan file")
        for line in changes:
            print(f"  {line}")


def _region_warnings(
    planned: str | None, region: str, source: str, profile: str | None
) -> list[str]:
    """What to say when the plan file's region is not the one planned for now (the plan
    moves), or the environment names another region than the plan file's."""
    if planned is None:
        return []
    if planned != region:
        return [
            f"the plan moves from {planned} to {region}: its stacks deploy to {region}; those "
            f"deployed in {planned} stay until you destroy them"
        ]
    ambient = environment_region(profile, os.environ)
    if source == "the plan file" and ambient is not None and ambient[0] != region:
        return [
            f"planning for {region}, the plan file's region; {ambient[1]} names {ambient[0]}: "
            f"pass --region {ambient[0]} to re-plan the catalog for it"
        ]
    return []


def planning_region(
    flag: str | None,
    plan_region: str | None,
    profile: str | None,
    environ: Mapping[str, str],
    default: str,
) -> tuple[str, str]:
    """The region to plan for and where it came from: ``--region``, the plan file's
    region, AWS_REGION, AWS_DEFAULT_REGION, the profile's region, ``default``."""
    if flag:
        return flag, "--region"
    if plan_region:
        return plan_region, "the plan file"
    return environment_region(profile, environ) or (default, "the default: no region set")


def environment_region(profile: str | None, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """The region the environment names and where: AWS_REGION, AWS_DEFAULT_REGION, else
    ``region`` of the profile (``profile``, else AWS_PROFILE, else ``default``) in the AWS
    config file (AWS_CONFIG_FILE, else ~/.aws/config), the order of the AWS SDKs and Tools
    Reference Guide, "AWS Region" (feature-region) and the AWS CLI User Guide,
    "Configuring environment variables" (a variable overrides the profile); None when
    none does. Read without botocore (which reads AWS_DEFAULT_REGION only): `fmp plan`
    starts without it."""
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if environ.get(name):
            return environ[name], name
    name = profile or environ.get("AWS_PROFILE") or "default"
    path = Path(environ.get("AWS_CONFIG_FILE") or Path.home() / ".aws" / "config").expanduser()
    config = configparser.RawConfigParser()
    try:
        config.read(path)
    except configparser.Error:
        return None
    sections = ["default", "profile default"] if name == "default" else [f"profile {name}"]
    for section in sections:
        if config.has_option(section, "region"):
            return config.get(section, "region"), f"profile {name} in {path}"
    return None


def _bound(bound_of: Callable[[], float]) -> tuple[float | None, str]:
    try:
        return bound_of(), ""
    except ImportError as error:
        return None, str(error)
