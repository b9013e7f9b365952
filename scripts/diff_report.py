"""What `cdk diff` printed for each stack, read back into a summary a reviewer can act on:
resources added, modified and removed, the ones CloudFormation would REPLACE (or may
replace), removed resources it would orphan (retained), and the IAM and security changes
(the CLI's IAM statement, IAM policy and security group tables, and every changed resource
of a type that grants or guards access). Rendered as text for the terminal and as Markdown
for a pull-request comment.

The CLI's text is the source (``@aws-cdk/cloudformation-diff`` decides what is a
replacement from each resource type's create-only properties); this module only reads its
resource lines (``[~] AWS::Type path/to/Construct LogicalId replace``) and table rows
(``│ + │ ...``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: The CLI's section titles of its IAM and security tables.
SECURITY_SECTIONS = ("IAM Statement Changes", "IAM Policy Changes", "Security Group Changes")
#: Resource types whose change alters who may do what (called out even when the CLI's
#: tables do not cover them, e.g. a key policy or a bucket policy).
SECURITY_TYPES = (
    "AWS::IAM::",
    "AWS::EC2::SecurityGroup",
    "AWS::KMS::Key",
    "AWS::S3::BucketPolicy",
    "AWS::Lambda::Permission",
    "AWS::SNS::TopicPolicy",
    "AWS::SQS::QueuePolicy",
)
_IMPACTS = ("may be replaced", "replace", "destroy", "orphan")
_RESOURCE_LINE = re.compile(r"^\[(?P<op>[-+~])\] (?P<type>[A-Za-z0-9]+::\S+) (?P<rest>.+)$")
_TABLE_ROW = re.compile(r"^│ (?P<sign>[-+]) │")
_OPERATIONS = {"+": "added", "-": "removed", "~": "modified"}


@dataclass(frozen=True)
class ResourceChange:
    """One resource line of the CLI's ``Resources`` section."""

    operation: str  # "added", "removed" or "modified"
    type: str
    path: str  # the construct path, or "" when the template has none
    logical_id: str
    impact: str  # "replace", "may be replaced", "destroy", "orphan" or ""

    @property
    def security(self) -> bool:
        return self.type.startswith(SECURITY_TYPES)

    def describe(self) -> str:
        where = f"{self.path} ({self.logical_id})" if self.path else self.logical_id
        impact = f": {self.impact.upper()}" if self.impact else ""
        return f"{self.operation} {self.type} {where}{impact}"


@dataclass
class StackDiff:
    """One stack's comparison: the CLI's output and what it says."""

    stack: str
    #: "changed", "unchanged", "new" (not in the base), "removed" (not in the working
    #: tree) or "failed" (the CLI failed)
    status: str
    output: str = ""
    resources: list[ResourceChange] = field(default_factory=list)
    #: CLI security table title -> (rows added, rows removed)
    security_tables: dict[str, tuple[int, int]] = field(default_factory=dict)

    def count(self, operation: str) -> int:
        return sum(1 for change in self.resources if change.operation == operation)

    @property
    def replacements(self) -> list[ResourceChange]:
        return [c for c in self.resources if c.impact in ("replace", "may be replaced")]

    @property
    def orphans(self) -> list[ResourceChange]:
        return [c for c in self.resources if c.impact == "orphan"]

    @property
    def security_changes(self) -> list[str]:
        """Each IAM or security change in words: the CLI's table rows, then the changed
        resources of :data:`SECURITY_TYPES`."""
        lines = [
            f"{title}: {added} added, {removed} removed"
            for title, (added, removed) in self.security_tables.items()
        ]
        lines += [change.describe() for change in self.resources if change.security]
        return lines


def parse_resource_line(line: str) -> ResourceChange | None:
    """The change a CLI resource line describes; None for any other line."""
    match = _RESOURCE_LINE.match(line.rstrip())
    if match is None:
        return None
    rest = match["rest"]
    impact = next((i for i in _IMPACTS if rest.endswith(f" {i}")), "")
    if impact:
        rest = rest[: -len(impact) - 1]
    path, _, logical_id = rest.rpartition(" ")
    return ResourceChange(_OPERATIONS[match["op"]], match["type"], path, logical_id, impact)


def read_cli_output(stack: str, output: str) -> StackDiff:
    """What ``cdk diff`` printed for ``stack`` (one stack, ``--exclusively``)."""
    if "There were no differences" in output:
        return StackDiff(stack, "unchanged", output)
    diff = StackDiff(stack, "changed", output)
    section = ""
    for line in output.splitlines():
        title = line.strip()
        if title in SECURITY_SECTIONS:
            section = title
            continue
        change = parse_resource_line(line)
        if change is not None:
            diff.resources.append(change)
            continue
        row = _TABLE_ROW.match(line)
        if row and section:
            added, removed = diff.security_tables.get(section, (0, 0))
            sign = row["sign"]
            diff.security_tables[section] = (added + (sign == "+"), removed + (sign == "-"))
    return diff


def _headline(diff: StackDiff) -> str:
    if diff.status != "changed":
        return {
            "unchanged": "no differences",
            "new": "a new stack: every resource is added",
            "removed": "not in the working tree's app: `cdk deploy` leaves a deployed stack "
            "as it is, `cdk destroy` or `aws cloudformation delete-stack` removes it",
            "failed": "the CDK CLI failed (see its output)",
        }[diff.status]
    counts = [f"{diff.count(op)} {op}" for op in ("added", "modified", "removed")]
    return ", ".join(counts)


def summary(diffs: list[StackDiff]) -> list[str]:
    """The terminal summary: one line per stack, then every replacement, orphaned
    resource and IAM or security change."""
    lines = [f"{diff.stack}: {_headline(diff)}" for diff in diffs]
    for title, pick in (
        ("Replacements (a new resource, the old one deleted)", _replacement_lines),
        ("Removed but retained (left in the account)", _orphan_lines),
        ("IAM and security changes", _security_lines),
    ):
        found = [f"  {diff.stack}: {line}" for diff in diffs for line in pick(diff)]
        lines += [f"{title}:", *(found or ["  none"])]
    return lines


def _replacement_lines(diff: StackDiff) -> list[str]:
    return [change.describe() for change in diff.replacements]


def _orphan_lines(diff: StackDiff) -> list[str]:
    return [change.describe() for change in diff.orphans]


def _security_lines(diff: StackDiff) -> list[str]:
    return diff.security_changes


def markdown(diffs: list[StackDiff], base: str, head: str) -> str:
    """A pull-request comment: the summary as a table and lists, the CLI output of each
    stack that changed (or failed) in a collapsed block."""
    out = [f"### CloudFormation changes: {head} against {base}", ""]
    out += ["| Stack | Result | Replaced | IAM / security |", "| --- | --- | --- | --- |"]
    for diff in diffs:
        replaced = len(diff.replacements)
        security = len(diff.security_changes)
        out.append(f"| `{diff.stack}` | {_headline(diff)} | {replaced} | {security} |")
    for title, pick in (
        ("Replacements", _replacement_lines),
        ("Removed but retained", _orphan_lines),
        ("IAM and security changes", _security_lines),
    ):
        found = [f"- `{diff.stack}`: {line}" for diff in diffs for line in pick(diff)]
        out += ["", f"**{title}**: none"] if not found else ["", f"**{title}**", "", *found]
    for diff in diffs:
        if diff.status in ("changed", "new", "failed"):
            out += ["", f"<details><summary><code>{diff.stack}</code>: {_headline(diff)}"]
            out += ["</summary>", "", "```", diff.output.strip("\n"), "```", "", "</details>"]
    return "\n".join(out) + "\n"
