"""Every relative link of README.md, docs/*.md and CHANGELOG.md leads to a file and, for a
page, to one of its headings (GitHub's anchors); the HTML site keeps those links working."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from docs_pages import anchors, build, link_problems, pages, slug  # noqa: E402


def test_every_relative_link_of_the_documentation_resolves() -> None:
    assert link_problems() == []


def test_every_docs_page_is_a_page_of_the_site() -> None:
    sources = {page.source for page in pages()}
    assert {f"docs/{path.name}" for path in (ROOT / "docs").glob("*.md")} <= sources
    assert {"README.md", "CHANGELOG.md", "docs/embedding.md", "docs/configuration.md"} <= sources


def test_the_navigation_follows_a_readers_order_with_short_titles() -> None:
    listed = [(page.output, page.title) for page in pages()]
    assert listed[:9] == [
        ("index.html", "Home"),
        ("training.html", "Training"),
        ("inference.html", "Inference"),
        ("operations.html", "Operations"),
        ("configuration.html", "Configuration reference"),
        ("planner.html", "Fleet planner"),
        ("diffs.html", "Diffs in pull requests"),
        ("embedding.html", "Embedding"),
        ("development.html", "Development"),
    ]
    # A page added later follows them, by name; the changelog comes last.
    assert listed[-1] == ("changelog.html", "Changelog")
    assert listed[9:-1] == sorted(listed[9:-1])


def test_the_readme_stays_short_and_points_at_every_page() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    assert "make synth\nmake test\n" in readme
    for path in (ROOT / "docs").glob("*.md"):
        assert f"](docs/{path.name})" in readme, path.name


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Alarms, dashboards and notifications", "alarms-dashboards-and-notifications"),
        ("FmpTrainingData (what the cluster keeps)", "fmptrainingdata-what-the-cluster-keeps"),
        ("`training.instance_groups`", "traininginstance_groups"),
        ("Deploy, use, destroy", "deploy-use-destroy"),
        ("Mistakes: every one at once, by key", "mistakes-every-one-at-once-by-key"),
        ("[Linked](other.md) *words*", "linked-words"),
    ],
)
def test_anchors_are_githubs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_repeated_headings_are_numbered_and_code_is_not_a_heading() -> None:
    text = "# A\n\n## Notes\n\n```bash\n# not a heading\n```\n\n## Notes\n"
    assert anchors(text) == {"a", "notes", "notes-1"}


def _site(tmp_path: Path, readme: str, page: str) -> Path:
    (tmp_path / "docs" / "pictures").mkdir(parents=True)
    (tmp_path / "docs" / "pictures" / "p.png").write_bytes(b"\x89PNG")
    (tmp_path / "README.md").write_text(readme)
    (tmp_path / "docs" / "guide.md").write_text(page)
    (tmp_path / "CHANGELOG.md").write_text("# Changelog\n")
    (tmp_path / "app.py").write_text("")
    return tmp_path


def test_a_missing_file_a_missing_heading_and_a_file_outside_the_site_are_each_named(
    tmp_path: Path,
) -> None:
    root = _site(
        tmp_path,
        "# R\n\n[a](docs/gone.md) [b](docs/guide.md#nowhere) [c](app.py) `[d](x.md)`\n",
        "# Guide\n\n[home](../README.md#r)\n",
    )
    assert link_problems(root) == [
        "README.md: link docs/gone.md: no file docs/gone.md",
        "README.md: link docs/guide.md#nowhere: no heading #nowhere in docs/guide.md",
        "README.md: link app.py: app.py is not part of the HTML site",
    ]
    with pytest.raises(ValueError, match="broken links"):
        build(tmp_path / "site", root)


def test_the_site_rewrites_links_to_its_pages_and_copies_the_pictures(tmp_path: Path) -> None:
    root = _site(
        tmp_path,
        "# R\n\nSee [the guide](docs/guide.md#a-section).\n\n![p](docs/pictures/p.png)\n",
        "# Guide: more\n\n## A section\n\n| key | x |\n| --- | --- |\n| `a_b` | 1 |\n",
    )
    out = tmp_path / "site"
    assert sorted(path.name for path in build(out, root)) == [
        "changelog.html",
        "guide.html",
        "index.html",
    ]
    index = (out / "index.html").read_text()
    assert 'href="guide.html#a-section"' in index and 'src="pictures/p.png"' in index
    assert (out / "pictures" / "p.png").is_file()
    assert 'href="fm_platform.html">API reference' in index
    guide = (out / "guide.html").read_text()
    assert '<h2 id="a-section">' in guide and "<code>a_b</code>" in guide and "<table>" in guide
    assert '<a href="guide.html" class="here">Guide</a>' in guide
