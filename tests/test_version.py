"""The version is semantic and the changelog has a section for it."""

from __future__ import annotations

import re

import fm_platform
from tests.support import ROOT

# semver.org's pattern for MAJOR.MINOR.PATCH with optional pre-release and build parts.
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


def test_version_is_semantic() -> None:
    assert SEMVER.match(fm_platform.__version__), fm_platform.__version__


def test_changelog_has_a_section_for_the_version() -> None:
    headings = re.findall(r"^## (\S+) - ", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert headings[0] == fm_platform.__version__
