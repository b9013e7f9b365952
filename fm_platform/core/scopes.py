"""The stack of a construct and the stack's partition, region and account, each looked up
in the CDK runtime once.

Constructs built by the hundred (one per model) ask for their stack's values; each
``Stack.of`` or attribute read is a call into the CDK runtime, so the answer is remembered
per construct (per stack for its values), and a construct created directly under a known
scope can inherit it.
"""

from __future__ import annotations

import weakref

from aws_cdk import Stack
from constructs import Construct, IConstruct


def stack_of(scope: IConstruct) -> Stack:
    """``Stack.of(scope)``, remembered per scope (a construct never changes stack)."""
    if isinstance(scope, Stack):
        return scope
    stack = _STACKS.get(scope)
    if stack is None:
        stack = _STACKS[scope] = Stack.of(scope)
    return stack


def region_of(stack: Stack) -> str:
    """``stack.region`` (a token for an environment-agnostic stack), remembered per stack."""
    return _attribute(stack, "region")


def partition_of(stack: Stack) -> str:
    """``stack.partition`` (a token unless CDK can tell it from a literal region),
    remembered per stack."""
    return _attribute(stack, "partition")


def account_of(stack: Stack) -> str:
    """``stack.account`` (a token for an environment-agnostic stack), remembered per
    stack."""
    return _attribute(stack, "account")


def arn_in(stack: Stack, service: str, resource: str, name: str, separator: str = "/") -> str:
    """The ARN ``stack.format_arn`` builds for ``resource`` ``name`` of ``service`` in
    ``stack``'s partition, region and account (``separator`` between resource and name:
    ``/`` or ``:``), written here from the remembered values instead of asking the CDK
    runtime."""
    return (
        f"arn:{partition_of(stack)}:{service}:{region_of(stack)}:{account_of(stack)}:"
        f"{resource}{separator}{name}"
    )


def inherit_stack(construct: Construct, scope: Construct) -> None:
    """Record that ``construct``, created directly under ``scope``, is in ``scope``'s stack
    (unless ``construct`` is itself a stack)."""
    if not isinstance(construct, Stack):
        _STACKS[construct] = stack_of(scope)


def _attribute(stack: Stack, name: str) -> str:
    values = _VALUES.setdefault(stack, {})
    value = values.get(name)
    if value is None:
        value = values[name] = getattr(stack, name)
    return value


_STACKS: weakref.WeakKeyDictionary[IConstruct, Stack] = weakref.WeakKeyDictionary()
_VALUES: weakref.WeakKeyDictionary[Stack, dict[str, str]] = weakref.WeakKeyDictionary()
