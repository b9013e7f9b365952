"""Helpers of the docs tests: the pages and the shell commands their code blocks show."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support import ROOT

#: The pages a reader follows: the README, then docs/*.md by name.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: The languages of the code blocks a reader types into a shell.
SHELL = ("sh", "bash", "console", "shell")


def page_name(page: Path) -> str:
    """``README.md``, ``docs/planner.md``: the page relative to the project."""
    return page.relative_to(ROOT).as_posix()


def shell_blocks(page: Path, kinds: tuple[str, ...] = SHELL) -> list[list[str]]:
    """Each code block of ``page`` whose language is one of ``kinds``, as its commands in
    order: comments (``#`` after a space, to the end of the line) and comment lines
    dropped, lines that end in a backslash joined with the next."""
    pattern = rf"```(?:{'|'.join(kinds)})\n(.*?)```"
    blocks = []
    for block in re.findall(pattern, page.read_text(), flags=re.DOTALL):
        joined = re.sub(r"\\\n\s*", "", block)
        lines = (re.sub(r"\s+#(\s.*)?$", "", line).strip() for line in joined.splitlines())
        blocks.append([line for line in lines if line and not line.startswith("#")])
    return [block for block in blocks if block]


def shell_commands(page: Path, kinds: tuple[str, ...] = SHELL) -> list[str]:
    """The commands of every :func:`shell_blocks` of ``page``, in order."""
    return [command for block in shell_blocks(page, kinds) for command in block]
