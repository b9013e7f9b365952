"""How every `fmp` sub-command is declared: a one-line description, an example, and
`--json` only on the commands whose output is data."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


def add_command(
    subparsers: Any,
    name: str,
    *,
    summary: str,
    example: str,
    parents: Sequence[argparse.ArgumentParser] = (),
    json_output: bool = False,
    description: str | None = None,
) -> argparse.ArgumentParser:
    """A sub-command ``name`` whose ``--help`` starts with ``summary`` (one line, also shown
    in its group's list) and ends with ``example``. ``json_output`` adds ``--json``
    (machine-readable output). ``description``: more text after the summary."""
    text = summary[0].upper() + summary[1:] + "."
    if description:
        text = f"{text}\n\n{description}"
    parser = subparsers.add_parser(
        name,
        parents=list(parents),
        help=summary,
        description=text,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if json_output:
        parser.add_argument(
            "--json", action="store_true", default=False, help="machine-readable output"
        )
    return parser
