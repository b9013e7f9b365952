"""Entry point of `fmp`: argument parsing and the one place errors become messages."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from fm_platform.cli import alarms, cluster, endpoint, fleet_status, job, plan
from fm_platform.cli.context import ClientFactory, Context, SessionClients
from fm_platform.cli.errors import describe_error

PROG = "fmp"


def _global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    # On sub-commands the defaults are suppressed so a value given before the sub-command
    # is not overwritten by the sub-command's default.
    default: dict[str, Any] = {"default": argparse.SUPPRESS} if suppress else {}
    parser.add_argument(
        "--region", help="AWS region (default: from environment/profile)", **default
    )
    parser.add_argument("--profile", help="AWS profile (default: from environment)", **default)


def _version() -> str:
    try:
        return metadata.version("fm-platform")
    except metadata.PackageNotFoundError:  # run from a checkout without installing
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The `fmp` argument parser."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Operate the fm_platform training cluster and inference endpoints; "
        "plan model catalogs.",
        epilog="examples:\n  fmp cluster status\n  fmp endpoint status --endpoint NAME --json\n"
        "  fmp plan examples/catalog.yaml\n  fmp COMMAND ACTION --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    _global_options(parser, suppress=False)
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, suppress=True)
    groups = parser.add_subparsers(dest="group", required=True, metavar="COMMAND")
    cluster.add_parser(groups, common)
    job.add_parser(groups, common)
    endpoint.add_parser(groups, common)
    plan.add_parser(groups, common)
    alarms.add_parser(groups, common)
    fleet_status.add_parser(groups, common)
    return parser


def main(argv: Sequence[str] | None = None, *, clients: ClientFactory | None = None) -> int:
    """Run `fmp` with `argv` (default: the process arguments); returns the exit code.

    `clients` supplies AWS clients; by default a boto3 session from --profile/--region.
    """
    args = build_parser().parse_args(argv)
    if clients is None:
        clients = SessionClients(region=args.region, profile=args.profile)
    ctx = Context(clients=clients, as_json=getattr(args, "json", False))
    try:
        return args.handler(ctx, args)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:
        message = describe_error(exc)
        if message is None:
            raise
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
