"""Graphviz labels shared by the architecture pictures (``docs_diagrams.py``,
``docs_eks.py``)."""

from __future__ import annotations

import html


def table(title: str, lines: list[str], *, size: int = 11) -> str:
    """A Graphviz HTML-like label: a bold title over plain lines."""
    rows = [f'<tr><td><font point-size="{size + 1}"><b>{html.escape(title)}</b></font></td></tr>']
    rows += [f"<tr><td>{html.escape(line)}</td></tr>" for line in lines if line]
    return f'<<table border="0" cellborder="0" cellspacing="1">{"".join(rows)}</table>>'
