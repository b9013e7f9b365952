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
    from fm_platform.fleet.adapters import planning_catalog
    from fm_platform.fleet.bound import lower_bound
    from fm_platform.fleet.catalog import load_catalog
    from fm_platform.fleet.changes import plan_changes
    from fm_platform.fleet.choices import choice_costs, choice_lines, choice_warnings
    from fm_platform.fleet.options import family_types
    from fm_platform.fleet.plan import default_plan_file, read_plan
    from fm_platform.fleet.planner import Planner
    from fm_platform.fleet.report import endpoint_table, explain, model_table, summary
    from fm_platform.fleet.serving import annotate, serving_line
    from fm_platform.hardware.prices import DEFAULT_REGION

    if args.charts:
        from fm_platform.fleet.charts import INSTALL_HINT, charts_available

        if not charts_available():
            raise CliError(f"--charts needs matplotlib: {INSTALL_HINT}")
    plan_file = Path(args.plan_file) if args.plan_file else default_plan_file(args.catalog)
    try:
        previous = read_plan(plan_file)
        kept = previous.region if previous else None
        profile = getattr(args, "profile", None)
        region, source = planning_region(
            getattr(args, "region", None), kept, profile, os.environ, DEFAULT_REGION
        )
        for warning in _region_warnings(kept, region, source, profile):
            print(f"warning: {warning}", file=sys.stderr)
        catalog = load_catalog(args.catalog, family_types(region), region)
        for warning in catalog.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        served, catalog = catalog, planning_catalog(catalog)
        planner = Planner(catalog, previous, region=region)
        plan = annotate(planner.run(), served)
        if args.explain:
            if args.explain not in plan.placements:
                raise ValueError(f"--explain {args.explain!r}: no such model in the catalog")
            print(explain(planner, args.explain))
            print(serving_line(plan, args.explain))
            print(f"planned for {region} (from {source})")
            mine = [c for c in choice_costs(planner) if args.explain in c.models]
            if mine:
                print("cost of the catalog's choice:\n" + "\n".join(choice_lines(mine)))
            return 0
        changes = plan_changes(previous, plan, planner.moves) if previous else []
        if args.repack:
            from fm_platform.fleet.repack import repack

            repacked, moves = repack(catalog, plan, args.min_saving)
            annotate(repacked, served)
            for move in moves:
                print(f"move {move.model}: {move.before} -> {move.after}")
            saving = (
                sum(e.expected_hourly for e in plan.endpoints.values())
                - sum(e.expected_hourly for e in repacked.endpoints.values())
            ) * 730
            print(
                f"repacking moves {len(moves)} models and saves ${saving:,.0f} a month "
                f"(steps saving at least ${args.min_saving:,.0f} a month)"
            )
            if not args.apply:
                print("nothing written; add --apply to write the repacked plan")
                return 0
            plan = repacked
    except ValueError as error:
        raise CliError(str(error)) from None
    bound, note = _bound(lambda: lower_bound(planner)) if plan is planner.plan else (None, "")
    costs = choice_costs(planner) if plan is planner.plan else []
    for warning in choice_warnings(costs, catalog.choice_warning_monthly):
        print(f"warning: {warning}", file=sys.stderr)
    plan.write(plan_file)
    if ctx.as_json:
        print(plan.to_json(), end="")
    else:
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
                f"{count} LoRA adapters on {len(bases)} base models' copies (no compute of "
                "their own; each base sized for its adapters' traffic)"
            )
        if previous is not None:
            print("changes since the plan file:" if changes else "no changes since the plan file")
            for line in changes:
                print(f"  {line}")
        print(f"planned for {region} (from {source}); plan written to {plan_file}")
    if args.charts:
        from fm_platform.fleet.charts import draw_charts

        written = draw_charts(plan, args.charts)
        print(f"{len(written)} charts (overview and spider charts) written to {args.charts}")
    return 0


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
