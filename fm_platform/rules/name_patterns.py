"""What is wrong with a name that does not match an API name pattern, in words.

botocore declares SageMaker's names as regular expressions such as
``[a-zA-Z0-9](-*[a-zA-Z0-9])*``; a user reading "does not match" has to decode the
expression. :func:`explain_mismatch` says which characters are not allowed, or that the
name must start or end with a letter or digit, reading both from the pattern itself.
"""

from __future__ import annotations

import re
import string
from functools import cache

#: The characters users put in names, to find those a pattern allows.
_CANDIDATES = string.ascii_letters + string.digits + "-_. /:@+=,~*#$%&!?()[]{}'\"|<>;^`"

_NAMED = {
    "_": "underscores",
    ".": "dots",
    " ": "spaces",
    "/": "slashes",
    ":": "colons",
    "@": "at signs",
    "-": "hyphens",
}


def _classes(pattern: str) -> list[re.Pattern[str]]:
    """One-character expressions for each bracket class and literal of ``pattern``."""
    found: list[re.Pattern[str]] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            found.append(re.compile(pattern[i : i + 2]))
            i += 2
        elif char == "[":
            end = pattern.index("]", i + 2 if pattern[i + 1 : i + 2] == "]" else i + 1)
            found.append(re.compile(pattern[i : end + 1]))
            i = end + 1
        elif char == "{":
            i = pattern.index("}", i) + 1  # a repetition count
        elif char in "()*+?|^$":
            i += 1
        elif char == ".":
            found.append(re.compile("."))
            i += 1
        else:
            found.append(re.compile(re.escape(char)))
            i += 1
    return found


@cache
def allowed_characters(pattern: str) -> frozenset[str]:
    """The characters (of those users type in names) some part of ``pattern`` matches."""
    try:
        classes = _classes(pattern)
    except (ValueError, re.error):
        return frozenset(_CANDIDATES)
    return frozenset(c for c in _CANDIDATES if any(k.fullmatch(c) for k in classes))


def _describe_class(chars: frozenset[str]) -> str:
    """ "a letter or digit" and the like, for the characters a position takes."""
    letters = (
        "letter"
        if set(string.ascii_letters) <= chars
        else "lowercase letter"
        if set(string.ascii_lowercase) <= chars
        else None
    )
    digits = "digit" if set(string.digits) <= chars else None
    if letters and digits:
        return f"a {letters} or {digits}"
    if letters or digits:
        return f"a {letters or digits}"
    return "one of " + "".join(sorted(chars))


def _literal_prefix(pattern: str) -> str:
    """The fixed text every match starts with (``"ami-"`` of ``^ami-[0-9a-f]+$``)."""
    prefix = ""
    for char in pattern.removeprefix("^"):
        if char in "[](){}*+?|^$.\\":
            break
        prefix += char
    # A repetition after the last literal makes it optional: leave it out.
    rest = pattern.removeprefix("^")[len(prefix) :]
    return prefix[:-1] if rest[:1] in ("*", "?", "{") else prefix


def _character_words(chars: list[str]) -> str:
    names = [_NAMED.get(c, f"'{c}'") for c in chars]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return listed + (" are" if len(names) > 1 or chars[0] in _NAMED else " is")


def explain_mismatch(pattern: str, value: str) -> str:
    """Why ``value`` does not match ``pattern``, in words (``value`` is assumed not to).

    A blank value; a fixed start the value lacks ("must start with '/'"); characters no part of the
    pattern allows ("underscores are not allowed"); a first or last character the pattern
    refuses ("must start with a letter or digit"); otherwise the shape in general.
    """
    if not value.strip():
        return "must not be empty or only spaces"
    prefix = _literal_prefix(pattern)
    if prefix and not value.startswith(prefix):
        return f"must start with '{prefix}'"
    allowed = allowed_characters(pattern)
    bad = sorted({c for c in value if c not in allowed}, key=value.index)
    if bad:
        return f"{_character_words(bad)} not allowed"
    if "(?" in pattern:  # lookarounds: the first and last characters say nothing alone
        return "has a shape the pattern does not allow"
    anchored = pattern if pattern.startswith("^") else f"^(?:{pattern})$"
    alnum = frozenset(string.ascii_letters + string.digits) & allowed
    # Try the value with its first (or last) character replaced by a letter or digit: if
    # that matches, the first (or last) character is what the pattern refuses.
    for filler in ("a", "0"):
        if value and value[0] not in alnum and re.fullmatch(anchored, filler + value[1:]):
            return f"must start with {_describe_class(alnum)}"
        if value and value[-1] not in alnum and re.fullmatch(anchored, value[:-1] + filler):
            return f"must end with {_describe_class(alnum)}"
    return "has a shape the pattern does not allow"
