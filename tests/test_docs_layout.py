"""docs/development.md's layout is the tree as it is: every path it lists exists, and every
package of fm_platform is listed."""

from __future__ import annotations

import re

from tests.support import ROOT

PAGE = ROOT / "docs" / "development.md"
#: A listed path: its indent (two spaces a level) and its name, a folder ending in ``/``.
_ENTRY = re.compile(r"^( *)([\w.-]+/?)\s")


def listed_paths() -> list[str]:
    text = PAGE.read_text()
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    parents: list[str] = []
    paths = []
    for line in block.splitlines():
        found = _ENTRY.match(line + " ")
        if not found or len(found.group(1)) > 2 * len(parents):
            continue  # a continuation of the description column
        depth = len(found.group(1)) // 2
        parents = parents[:depth]
        path = "".join(parents) + found.group(2)
        paths.append(path)
        if path.endswith("/"):
            parents.append(found.group(2))
    return paths


def test_every_listed_path_exists():
    paths = listed_paths()
    assert "fm_platform/fleet/models/" in paths
    assert [p for p in paths if not (ROOT / p).exists()] == []


def test_every_package_is_listed():
    listed = set(listed_paths())
    packages = {
        f"{init.parent.relative_to(ROOT).as_posix()}/"
        for init in (ROOT / "fm_platform").rglob("__init__.py")
    }
    assert sorted(packages - listed) == []
