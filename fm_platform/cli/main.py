"""Entry point of `fmp`: argument parsing and the one place errors become messages."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from fm_platform.cli.context import ClientFactory, Context, SessionClients
from fm_platform.cli.errors import describe_error

PROG = "fmp"

# Each command group and the module that registers it. Only the group named on the command
# line is imported (every group for `fmp --help`), so `fmp plan` starts without the AWS
# commands' botocore and boto3.
GROUPS = {
    "cluster": "fm_platform.cli.cluster",
    "job": "fm_platform.cli.job",
    "endpoint": "fm_platform.cli.endpoint",
    "plan": "fm_platform.cli.plan",
    "alarms": "fm_platform.cli.alarms",
    "fleet": "fm_platform.cli.fleet_status",
}


def _global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    # On sub-commands the defaults are suppressed so a value given before the sub-command
    # is not overwritten by the sub-command's default.
    default: dict[str, Any] = {"default": argparse.SUPPRESS} if suppress else {}
    parser.add_argument(
        "--region", help="AWS region (default: from environment/profile)", **default
    )
    parser.add_argument("--profile", help="AWS profile (default: from environment)", **default)


class _VersionAction(argparse.Action):
    """``--version``: prints the installed distribution's version (looked up only then:
    importlib.metadata costs about 50 ms of every start)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from importlib import metadata

        try:
            version = metadata.version("fm-platform")
        except metadata.PackageNotFoundError:  # run from a checkout without installing
            version = "unknown (not installed)"
        print(f"{PROG} {version}")
        parser.exit()


def build_parser(group: str | None = None) -> argparse.ArgumentParser:
    """The `fmp` argument parser: every command group, or only ``group`` (one of
    ``GROUPS``)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Operate the fm_platform training cluster and inference endpoints; "
        "plan model catalogs.",
        epilog="examples:\n  fmp cluster status\n  fmp endpoint status --endpoint NAME --json\n"
        "  fmp plan examples/catalog.yaml\n  fmp COMMAND ACTION --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    _global_options(parser, suppress=False)
    common = argparse.ArgumentParser(add_help=False)
    _global_options(common, suppress=True)
    groups = parser.add_subparsers(dest="group", required=True, metavar="COMMAND")
    for name, module in GROUPS.items():
        if group in (None, name):
            importlib.import_module(module).add_parser(groups, common)
    return parser


def _named_group(argv: Sequence[str] | None) -> str | None:
    """The command group on the command line when it is one of ``GROUPS``, else ``None``
    (the full parser then reports what is wrong)."""
    peek = argparse.ArgumentParser(add_help=False)
    _global_options(peek, suppress=False)
    peek.add_argument("group", nargs="?")
    known, _ = peek.parse_known_args(argv)
    return known.group if known.group in GROUPS else None


def main(argv: Sequence[str] | None = None, *, clients: ClientFactory | None = None) -> int:
    """Run `fmp` with `argv` (default: the process arguments); returns the exit code.

    `clients` supplies AWS clients; by default a boto3 session from --profile/--region.
    """
    args = build_parser(_named_group(argv)).parse_args(argv)
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


def console() -> NoReturn:
    """The `fmp` console script: :func:`main` on the process arguments, then exit."""
    sys.exit(main())


if __name__ == "__main__":
    console()
