#!/usr/bin/env python3
"""Draw every CloudWatch dashboard of a synthesized cloud assembly as the grid it is.

    python scripts/docs_dashboards.py cdk.out docs/diagrams

Per dashboard resource, ``<stack>-dashboard[-N].png`` (the stack's name without its
``Fmp`` prefix, in lower case: ``inference-dashboard.png``): each widget a box at its
place on CloudWatch's 24-column grid, with its title and how many metric lines or alarms
it holds. Everything drawn is read from the dashboard body in the template, its
CloudFormation references shown by the resource they name. Rendered by the project's
pinned Graphviz (``docs_graphviz``: WebAssembly builds from npm), positions as given
(``nop2``, which is ``neato -n2``)."""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_graphviz import render_png  # noqa: E402

#: Points per grid unit, across and down (CloudWatch's grid: 24 columns).
COLUMN_PT, ROW_PT = 40, 22
FONT = "DejaVu Sans"
COLORS = {"metric": "#e8f1fb", "alarm": "#fdecea", "text": "#f3eefb", "log": "#e6f4ea"}


def reference(value: Any) -> str:
    """A readable stand-in for a CloudFormation value inside a body: the resource or export
    it names."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if "Ref" in value:
            return "AWS-Region" if value["Ref"] == "AWS::Region" else str(value["Ref"])
        if "Fn::GetAtt" in value:
            return str(value["Fn::GetAtt"][0])
        if "Fn::ImportValue" in value:
            return str(value["Fn::ImportValue"]).split(":")[0] + "-export"
        if "Fn::Join" in value:
            separator, parts = value["Fn::Join"]
            return separator.join(reference(part) for part in parts)
    return "?"


def body_text(body: Any) -> str:
    """The dashboard body as JSON text, each reference replaced by :func:`reference`."""
    if isinstance(body, str):
        return body
    if "Fn::Sub" in body:
        text, variables = body["Fn::Sub"]
        text = text.replace("${AWS::Region}", "AWS-Region").replace("${!", "${")
        for name, value in variables.items():
            text = text.replace("${" + name + "}", reference(value).replace('"', ""))
        return text
    if "Fn::Join" in body:
        separator, parts = body["Fn::Join"]
        return separator.join(
            part if isinstance(part, str) else reference(part).replace('"', "") for part in parts
        )
    raise ValueError(f"a dashboard body neither text, Fn::Sub nor Fn::Join: {body!r:.80}")


def caption(widget: dict[str, Any]) -> tuple[str, str]:
    """The widget's title and what it holds, in words."""
    properties = widget.get("properties", {})
    kind = widget["type"]
    if kind == "text":
        return re.sub(r"^#+\s*", "", properties.get("markdown", "")), ""
    if kind == "alarm":
        return properties.get("title", "alarms"), f"{len(properties.get('alarms', []))} alarms"
    if kind == "log":
        return properties.get("title", "logs"), "Logs Insights query"
    lines = len(properties.get("metrics", []))
    return properties.get("title", ""), f"{lines} line{'s' if lines != 1 else ''}"


def dot(widgets: list[dict[str, Any]], title: str) -> str:
    """A Graphviz (``neato -n2``) source placing each widget as a box on the grid."""
    bottom = max((w["y"] + w["height"] for w in widgets), default=0)
    lines = [
        "graph dashboard {",
        f'  graph [fontname="{FONT}", label="{html.escape(title)}", labelloc=t, fontsize=14];',
        f'  node [shape=box, style="filled,rounded", fixedsize=true, fontname="{FONT}", '
        "fontsize=9, penwidth=0.8];",
    ]
    for index, widget in enumerate(widgets):
        name, holds = caption(widget)
        width, height = widget["width"] * COLUMN_PT, widget["height"] * ROW_PT
        x = widget["x"] * COLUMN_PT + width / 2
        y = (bottom - widget["y"]) * ROW_PT - height / 2
        label = html.escape(name[:90]) + (
            f"<BR/><FONT POINT-SIZE='8'>{holds}</FONT>" if holds else ""
        )
        lines.append(
            f'  w{index} [pos="{x:.0f},{y:.0f}!", width={(width - 4) / 72:.3f}, '
            f"height={(height - 4) / 72:.3f}, "
            f'fillcolor="{COLORS.get(widget["type"], "#ffffff")}", label=<{label}>];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def dashboards(template: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The template's dashboards in logical-ID order: logical ID and widgets."""
    found = []
    for logical_id, resource in sorted(template.get("Resources", {}).items()):
        if resource["Type"] == "AWS::CloudWatch::Dashboard":
            body = json.loads(body_text(resource["Properties"]["DashboardBody"]))
            found.append((logical_id, body["widgets"]))
    return found


def picture_name(stack_name: str, number: int) -> str:
    base = re.sub(r"^Fmp", "", stack_name).lower() or stack_name.lower()
    return f"{base}-dashboard" + ("" if number == 1 else f"-{number}")


def render(assembly_dir: Path, out_dir: Path) -> list[Path]:
    """Write one ``.dot`` and ``.png`` per dashboard of every template; return the PNGs."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(assembly_dir.glob("*.template.json")):
        stack_name = path.name.removesuffix(".template.json")
        template = json.loads(path.read_text())
        for number, (_, widgets) in enumerate(dashboards(template), start=1):
            name = picture_name(stack_name, number)
            source = out_dir / f"{name}.dot"
            source.write_text(dot(widgets, f"{stack_name}: dashboard {number}"))
            png = out_dir / f"{name}.png"
            render_png(source, png, engine="nop2", dpi=96)
            written.append(png)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assembly", type=Path, help="a synthesized cloud assembly (cdk.out)")
    parser.add_argument("out", type=Path, help="where to write <name>.dot and <name>.png")
    args = parser.parse_args()
    for png in render(args.assembly, args.out):
        print(png)


if __name__ == "__main__":
    main()
