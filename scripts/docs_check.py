#!/usr/bin/env python3
"""Open the generated site (the pages and the API reference) in headless Chromium and check
it as a reader would.

    python scripts/docs_check.py docs/api docs/screenshots

Fails (exit 1, listing every problem) when a page fails to load an asset or a picture or
throws, a local link or anchor leads nowhere, a documentation page (``docs_pages.pages``)
is missing or not linked from the index, or a public name of ``fm_platform.__all__`` has
no section. Writes screenshots of the index (README.md), of every page's top and of one
construct of the reference (``SingleModelEndpoint``)."""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_browser import Browser  # noqa: E402
from docs_pages import pages  # noqa: E402

import fm_platform  # noqa: E402

CONSTRUCT = "SingleModelEndpoint"
#: The construct's section must show these: its props, a grant and a metric helper.
CONSTRUCT_MEMBERS = ("SingleModelEndpointProps", "grant_invoke", "metric_invocations")

_LINKS_JS = """[...document.querySelectorAll('a[href], link[href], script[src], img[src]')]
  .map(e => e.href || e.src)"""
_IDS_JS = "[...document.querySelectorAll('[id]')].map(e => e.id)"
_BROKEN_IMAGES_JS = """[...document.images].filter(i => !i.complete || i.naturalWidth === 0)
  .map(i => i.src)"""
_NAV_JS = "[...document.querySelectorAll('nav.site a')].map(a => a.getAttribute('href'))"


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids.update(value for name, value in attrs if name == "id" and value)


@functools.cache
def _ids_in(page: Path) -> set[str]:
    parser = _Ids()
    parser.feed(page.read_text())
    return parser.ids


def check(api_dir: Path, shots_dir: Path) -> list[str]:
    problems: list[str] = []
    api_dir = api_dir.resolve()
    shots_dir.mkdir(parents=True, exist_ok=True)
    pages = sorted(api_dir.glob("*.html"))
    if not pages:
        return [f"{api_dir}: no HTML pages (run make docs)"]
    with Browser() as browser:
        for page in pages:
            report = browser.load(page.as_uri())
            problems += [f"{page.name}: failed to load {item}" for item in report.failed]
            problems += [f"{page.name}: script error {item}" for item in report.errors]
            for link in sorted(set(browser.evaluate(_LINKS_JS))):
                problems += _check_link(page, str(link))
            problems += [
                f"{page.name}: picture not shown {src}"
                for src in browser.evaluate(_BROKEN_IMAGES_JS)
            ]
        problems += _check_pages(browser, api_dir, shots_dir)
        module_page = api_dir / "fm_platform.html"
        browser.load(module_page.as_uri(), settle_s=1.0)
        ids = set(browser.evaluate(_IDS_JS))
        text = browser.evaluate("document.body.innerText")
        for name in fm_platform.__all__:
            if name not in ids:
                problems.append(f"fm_platform.html: public name {name} has no section")
            if not re.search(rf"\b{re.escape(name)}\b", text):
                problems.append(f"fm_platform.html: public name {name} is not shown")
        browser.load(module_page.as_uri())
        browser.evaluate(
            f"window.scrollTo({{top: document.getElementById('{CONSTRUCT}').offsetTop, "
            "behavior: 'instant'})"
        )
        time.sleep(0.5)
        browser.screenshot(shots_dir / f"{CONSTRUCT}.png")
        section = browser.evaluate(
            f"document.getElementById('{CONSTRUCT}').closest('section').innerText"
        )
        for member in CONSTRUCT_MEMBERS:
            if member not in section:
                problems.append(f"{CONSTRUCT} section does not mention {member}")
    return problems


def _check_pages(browser: Browser, api_dir: Path, shots_dir: Path) -> list[str]:
    """Every documentation page is in the site and in the index's navigation, and links to
    the API reference; a screenshot of each page's top."""
    problems = []
    expected = [page.output for page in pages()]
    for output in expected:
        if not (api_dir / output).is_file():
            problems.append(f"{output}: page missing (make docs writes it)")
            continue
        browser.load((api_dir / output).as_uri())
        navigation = browser.evaluate(_NAV_JS)
        if output == "index.html":
            problems += [
                f"index.html: no link to {name}" for name in expected if name not in navigation
            ]
        if "fm_platform.html" not in navigation:
            problems.append(f"{output}: no link to the API reference")
        browser.screenshot(shots_dir / output.replace(".html", ".png"))
    return problems


def _check_link(page: Path, link: str) -> list[str]:
    """A problem when a local link points to a missing file or anchor."""
    parsed = urlparse(link)
    if parsed.scheme in ("http", "https", "mailto", "data", "javascript"):
        return []
    url, fragment = urldefrag(link)
    target = Path(unquote(urlparse(url).path))
    if not target.is_file():
        return [f"{page.name}: link to missing file {target}"]
    if fragment and target.suffix == ".html" and fragment not in _ids_in(target):
        return [f"{page.name}: link to missing anchor {target.name}#{fragment}"]
    return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("api", type=Path, help="the generated reference (docs/api)")
    parser.add_argument("screenshots", type=Path, help="where to write the screenshots")
    args = parser.parse_args()
    problems = check(args.api, args.screenshots)
    for problem in problems:
        print(problem)
    names = len(fm_platform.__all__)
    print(
        f"docs-check: {len(problems)} problem(s); {names} public names; screenshots in "
        f"{args.screenshots}"
    )
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
