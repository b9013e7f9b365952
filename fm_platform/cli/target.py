"""Which endpoint an `fmp endpoint ...` command acts on: ENDPOINT, --endpoint, or the one in
the inference stack's outputs."""

from __future__ import annotations

import argparse

from fm_platform.cli.context import Context
from fm_platform.cli.errors import CliError
from fm_platform.cli.outputs import INFERENCE_STACK, resolve_endpoint


def endpoint_options() -> argparse.ArgumentParser:
    """A parent parser with the optional ENDPOINT argument, --endpoint (the same, as an
    option) and --stack (default FmpInference)."""
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument(
        "endpoint",
        nargs="?",
        metavar="ENDPOINT",
        help="endpoint name (default: the one in the inference stack's outputs)",
    )
    target.add_argument(
        "--endpoint", dest="endpoint_option", metavar="NAME", help="the same as ENDPOINT"
    )
    target.add_argument(
        "--stack", default=INFERENCE_STACK, help="inference stack name (default: %(default)s)"
    )
    return target


def endpoint_name(ctx: Context, args: argparse.Namespace) -> str:
    """The endpoint named by ENDPOINT or --endpoint, else the only one in --stack's outputs."""
    given, option = args.endpoint, args.endpoint_option
    if given and option and given != option:
        raise CliError(f"two endpoints given ({given} and --endpoint {option}): name one")
    return resolve_endpoint(ctx.clients, given or option, args.stack)
