"""Aligned text tables and JSON output."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Sequence
from typing import Any


def cell(value: Any) -> str:
    """Text for one table cell: '-' for missing values, ISO-8601 (seconds) for times."""
    if value is None or value == "":
        return "-"
    if isinstance(value, datetime.datetime):
        return value.isoformat(timespec="seconds")
    return str(value)


def render_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Columns left-aligned to their widest cell, separated by two spaces."""
    text_rows = [[cell(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in text_rows:
        widths = [max(w, len(v)) for w, v in zip(widths, row, strict=True)]
    lines = [headers, *text_rows]
    return "\n".join(
        "  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )


def render_fields(pairs: Iterable[tuple[str, Any]]) -> str:
    """`Label  value` lines, labels padded to the widest one."""
    pairs = list(pairs)
    width = max((len(label) for label, _ in pairs), default=0)
    return "\n".join(f"{label.ljust(width)}  {cell(value)}" for label, value in pairs)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def to_json(data: Any) -> str:
    """Indented JSON with datetimes as ISO-8601 strings."""
    return json.dumps(data, indent=2, default=_json_default)
