"""docs/architectures.md lists every shipped architecture as the data has it."""

from __future__ import annotations

from fm_platform.fleet.models.architectures import architectures_table, known_architectures
from tests.support import ROOT


def test_the_page_holds_the_table_generated_from_the_data():
    page = (ROOT / "docs" / "architectures.md").read_text()
    table = architectures_table()
    assert table in page, "regenerate: python -m fm_platform.fleet.models.architectures"
    assert len(table.splitlines()) == 2 + len(known_architectures())
    assert "| `sdxl-base-1.0` | image-generation |" in table
