#!/usr/bin/env python3
"""The documentation pages (README.md, docs/*.md, CHANGELOG.md) as part of the HTML site.

    python scripts/docs_pages.py docs/api          # after pdoc: the pages beside the API
    python scripts/docs_pages.py --check-links     # every relative link resolves (no HTML)

README.md becomes the site's ``index.html``, ``docs/<page>.md`` becomes ``<page>.html`` and
CHANGELOG.md ``changelog.html``, each with a navigation bar to every page and to the API
reference (``fm_platform.html``, written by pdoc); the pictures they show are copied beside
them (``diagrams/``, ``fleet/``). Headings get GitHub's anchors (``slug``), so a link that
works on GitHub (``configuration.md#training``) works in the site, and links between pages
are rewritten to the HTML files. A link to a file the site does not hold, or to a heading a
page does not have, is refused (``link_problems``: the tests run it on every page)."""

from __future__ import annotations

import argparse
import functools
import html
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

import markdown2

ROOT = Path(__file__).resolve().parent.parent
#: Markdown extensions: GitHub's tables and fenced code; ``code-friendly`` leaves the
#: underscores of configuration keys alone; ``cuddled-lists`` takes a list right after a
#: paragraph line, as GitHub does.
EXTRAS = ["fenced-code-blocks", "tables", "code-friendly", "cuddled-lists"]

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_MARKUP = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|[`*]|<[^>]+>")
_HTML_HEADING = re.compile(r"<h([1-6])>(.*?)</h\1>", re.S)
_HTML_URL = re.compile(r"""(?P<attr>\b(?:href|src))="(?P<url>[^"]*)\"""")


@dataclass(frozen=True)
class Page:
    """A Markdown file of the repository and the HTML file the site makes of it."""

    source: str  # repository path, POSIX
    output: str  # path in the site
    title: str  # in the navigation bar


#: The pages in a reader's order; a page not listed follows them, in name order.
ORDER = (
    "training",
    "inference",
    "operations",
    "configuration",
    "planner",
    "diffs",
    "embedding",
    "development",
)


def pages(root: Path = ROOT) -> list[Page]:
    """README first, then ``docs/*.md`` (``ORDER``, then the others by name), then the
    changelog. A page's title in the navigation is its first heading up to a colon."""
    found = [Page("README.md", "index.html", "Home")]
    rank = {stem: index for index, stem in enumerate(ORDER)}
    for path in sorted(
        (root / "docs").glob("*.md"), key=lambda p: (rank.get(p.stem, len(ORDER)), p.stem)
    ):
        text = path.read_text()
        heading = _HEADING.search(_strip_code(text))
        title = _plain(heading.group(2)) if heading else path.stem
        found.append(Page(f"docs/{path.name}", f"{path.stem}.html", title.split(":")[0]))
    found.append(Page("CHANGELOG.md", "changelog.html", "Changelog"))
    return found


def slug(text: str) -> str:
    """GitHub's anchor of a heading: its text lower-cased, punctuation other than ``-`` and
    ``_`` dropped, each space a hyphen (duplicates are numbered by ``anchors``)."""
    return re.sub(r"[^\w\- ]", "", _plain(text).lower()).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every heading anchor of a Markdown text, the second of a name ``-1``, and so on."""
    seen: dict[str, int] = {}
    found = set()
    for match in _HEADING.finditer(_strip_code(markdown)):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(markdown: str) -> Iterator[str]:
    """The targets of the Markdown links and images outside code."""
    for match in _LINK.finditer(_CODE_SPAN.sub("", _strip_code(markdown))):
        yield match.group(1)


def link_problems(root: Path = ROOT) -> list[str]:
    """A line per relative link of a page that leads to no file, or to a heading the target
    page does not have; and per link to a file the HTML site would not hold."""
    problems = []
    site = _site_paths(root)
    for page in pages(root):
        source = root / page.source
        for target in links(source.read_text()):
            if urlsplit(target).scheme:
                continue
            path_part, _, fragment = target.partition("#")
            resolved = (source.parent / path_part).resolve() if path_part else source
            where = f"{page.source}: link {target}"
            if not resolved.is_file():
                problems.append(f"{where}: no file {_relative(resolved, root)}")
                continue
            repo_path = _relative(resolved, root)
            if repo_path not in site and not _is_picture(repo_path):
                problems.append(f"{where}: {repo_path} is not part of the HTML site")
            if (
                fragment
                and resolved.suffix == ".md"
                and fragment not in anchors(resolved.read_text())
            ):
                problems.append(f"{where}: no heading #{fragment} in {repo_path}")
    return problems


def build(out: Path, root: Path = ROOT) -> list[Path]:
    """Write every page into ``out`` (pdoc's output directory) with the pictures it shows;
    return the pages written."""
    problems = link_problems(root)
    if problems:
        raise ValueError("broken links:\n  " + "\n  ".join(problems))
    out.mkdir(parents=True, exist_ok=True)
    site = _site_paths(root)
    all_pages = pages(root)
    written = []
    for page in all_pages:
        source = root / page.source
        body = markdown2.markdown(source.read_text(), extras=EXTRAS)
        body = _with_anchors(str(body))
        in_site = functools.partial(_site_url, source=source, root=root, site=site, out=out)
        body = _HTML_URL.sub(in_site, body)
        target = out / page.output
        target.write_text(_frame(page, all_pages, body))
        written.append(target)
    return written


def _site_paths(root: Path) -> dict[str, str]:
    return {page.source: page.output for page in pages(root)}


def _is_picture(repo_path: str) -> bool:
    return repo_path.startswith("docs/") and repo_path.endswith((".png", ".svg"))


def _site_url(
    match: re.Match[str], *, source: Path, root: Path, site: dict[str, str], out: Path
) -> str:
    """A page's relative link or picture as a path of the site (the picture copied there)."""
    url = html.unescape(match.group("url"))
    if not url or url.startswith("#") or urlsplit(url).scheme:
        return match.group(0)
    path_part, hash_mark, fragment = url.partition("#")
    repo_path = _relative((source.parent / path_part).resolve(), root)
    if repo_path in site:
        new = site[repo_path]
    else:  # a picture (link_problems refused anything else): docs/<dir>/<file> -> <dir>/<file>
        new = str(PurePosixPath(repo_path).relative_to("docs"))
        (out / new).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / repo_path, out / new)
    return f'{match.group("attr")}="{html.escape(new + hash_mark + fragment)}"'


def _with_anchors(body: str) -> str:
    """Give each heading GitHub's anchor as its id (numbered as GitHub numbers repeats)."""
    seen: dict[str, int] = {}

    def heading(match: re.Match[str]) -> str:
        base = slug(html.unescape(re.sub(r"<[^>]+>", "", match.group(2))))
        count = seen.get(base, 0)
        seen[base] = count + 1
        anchor = base if count == 0 else f"{base}-{count}"
        level, text = match.group(1), match.group(2)
        return f'<h{level} id="{anchor}"><a class="anchor" href="#{anchor}">{text}</a></h{level}>'

    return _HTML_HEADING.sub(heading, body)


def _frame(page: Page, all_pages: list[Page], body: str) -> str:
    here = ' class="here"'
    nav = "".join(
        f'<a href="{p.output}"{here if p == page else ""}>{html.escape(p.title)}</a>'
        for p in all_pages
    )
    nav += '<a href="fm_platform.html">API reference</a>'
    title = "fm_platform" if page.output == "index.html" else f"{page.title} - fm_platform"
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{STYLE}</style>
</head>
<body>
<nav class="site">{nav}</nav>
<main>
{body}
</main>
</body>
</html>
"""


STYLE = """
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; }
nav.site { position: sticky; top: 0; background: #f6f8fa; border-bottom: 1px solid #d0d7de;
  padding: .5rem 1rem; display: flex; flex-wrap: wrap; gap: .25rem 1rem; z-index: 1; }
nav.site a { color: #0969da; text-decoration: none; }
nav.site a.here { font-weight: 600; color: #1f2328; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem 2rem 4rem; }
h1, h2, h3, h4 { line-height: 1.25; margin-top: 1.6em; scroll-margin-top: 3rem; }
h1 { border-bottom: 1px solid #d0d7de; padding-bottom: .3em; }
a.anchor { color: inherit; text-decoration: none; }
a.anchor:hover { text-decoration: underline; }
code { font: 85% ui-monospace, SFMono-Regular, Menlo, monospace; background: #eff1f3;
  padding: .1em .3em; border-radius: 4px; }
pre { background: #f6f8fa; padding: 1rem; overflow-x: auto; border-radius: 6px; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; margin: 1rem 0; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: .35rem .6rem; vertical-align: top; text-align: left; }
th { background: #f6f8fa; }
img { max-width: 100%; }
"""


def _strip_code(markdown: str) -> str:
    return _FENCE.sub("", markdown)


def _plain(text: str) -> str:
    return _MARKUP.sub(lambda m: m.group(1) or "", text).strip()


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", help="the site's directory (docs/api)")
    parser.add_argument("--check-links", action="store_true", help="only check the links")
    args = parser.parse_args()
    if args.check_links or args.out is None:
        problems = link_problems()
        for problem in problems:
            print(problem)
        print(f"docs links: {len(problems)} problem(s)")
        sys.exit(1 if problems else 0)
    for path in build(args.out):
        print(path)


if __name__ == "__main__":
    main()
