"""The pictures' renderer is the project's pinned Graphviz (WebAssembly, from npm) on the
virtualenv's Node.js, with fonts from a pinned package: no Graphviz of the machine."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from docs_graphviz import FONTS, render_png  # noqa: E402


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_fonts_come_from_a_pinned_package() -> None:
    assert all(font.is_file() and "matplotlib" in font.parts for font in FONTS)


def test_dot_lays_a_graph_out_and_writes_a_png_at_the_dpi_asked(tmp_path: Path) -> None:
    source = tmp_path / "g.dot"
    source.write_text('digraph { node [fontname="DejaVu Sans"]; a -> b [label="reads"]; }')
    small, large = tmp_path / "small.png", tmp_path / "large.png"
    render_png(source, small, engine="dot", dpi=72)
    render_png(source, large, engine="dot", dpi=144)
    (width, height), (width2, height2) = _png_size(small), _png_size(large)
    assert height > width > 20  # two nodes stacked: taller than wide
    assert (width2, height2) == pytest.approx((2 * width, 2 * height), abs=2)


def test_nop2_keeps_the_positions_given(tmp_path: Path) -> None:
    source = tmp_path / "grid.dot"
    source.write_text(
        "graph { node [shape=box, fixedsize=true, width=1, height=0.5]; "
        'a [pos="36,18!"]; b [pos="500,18!"]; }'
    )
    png = tmp_path / "grid.png"
    render_png(source, png, engine="nop2", dpi=72)
    width, _ = _png_size(png)
    assert width > 500  # b stayed 464 points to the right of a


def test_a_graphviz_error_fails_the_render(tmp_path: Path) -> None:
    source = tmp_path / "bad.dot"
    source.write_text("digraph { a -> }")
    with pytest.raises(subprocess.CalledProcessError):
        render_png(source, tmp_path / "bad.png")
