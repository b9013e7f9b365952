"""`fmp plan CATALOG`: place a model catalog on endpoints and stacks (no AWS calls).

The plan file (by default next to the catalog, ``<catalog>.plan.json``) is state: commit
it. Re-planning keeps every assignment in it and places only new models. ``--repack``
prints which models a fresh packing would move and what it would save per hour;
``--repack --apply`` writes that packing (moved endpoints are replaced on deploy).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    """Register `fmp plan`."""
    parser = subparsers.add_parser(
        "plan", parents=[common], help="plan a model catalog onto endpoints and stacks"
    )
    parser.add_argument("catalog", help="catalog file (YAML or JSON)")
    parser.add_argument(
        "--plan-file", help="plan state to keep and update (default: <catalog>.plan.json)"
    )
    parser.add_argument("--charts", metavar="DIR", help="write spider-chart PNGs into DIR")
    parser.add_argument("--repack", action="store_true", help="show a fresh packing's moves")
    parser.add_argument("--apply", action="store_true", help="with --repack: write it")
    parser.set_defaults(handler=run)


def run(ctx: Context, args: argparse.Namespace) -> int:
    from fm_platform.fleet.catalog import load_catalog
    from fm_platform.fleet.cost import plan_cost
    from fm_platform.fleet.plan import default_plan_file, read_plan
    from fm_platform.fleet.planner import plan_fleet, repack_moves
    from fm_platform.fleet.report import plan_table
    from fm_platform.fleet.sizing import families

    plan_file = Path(args.plan_file) if args.plan_file else default_plan_file(args.catalog)
    try:
        catalog = load_catalog(args.catalog, families())
        previous = read_plan(plan_file)
        plan = plan_fleet(catalog, previous)
        if args.repack:
            fresh = plan_fleet(catalog)
            moves = repack_moves(plan, fresh)
            saving = plan_cost(plan).min_hourly - plan_cost(fresh).min_hourly
            for name, now, after in moves:
                print(f"move {name}: {now} -> {after}")
            print(f"repacking moves {len(moves)} models and saves ${saving:,.2f}/h at min scale")
            if not args.apply:
                print("nothing written; add --apply to write the repacked plan")
                return 0
            plan = fresh
    except ValueError as error:
        raise CliError(str(error)) from None
    plan.write(plan_file)
    if ctx.as_json:
        print(plan.to_json(), end="")
    else:
        print(plan_table(plan, catalog))
        print(f"plan written to {plan_file}")
    if args.charts:
        from fm_platform.fleet.charts import draw_charts

        written = draw_charts(plan, catalog, args.charts)
        print(f"{len(written)} spider charts written to {args.charts}")
    return 0
