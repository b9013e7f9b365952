"""The stack of a construct, looked up in the CDK runtime once per construct.

Constructs built by the hundred (one per model) ask for their stack's values; each
``Stack.of`` is a call into the CDK runtime, so the answer is remembered per construct, and
a construct created directly under a known scope can inherit it.
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
    region = _REGIONS.get(stack)
    if region is None:
        region = _REGIONS[stack] = stack.region
    return region


def inherit_stack(construct: Construct, scope: Construct) -> None:
    """Record that ``construct``, created directly under ``scope``, is in ``scope``'s stack
    (unless ``construct`` is itself a stack)."""
    if not isinstance(construct, Stack):
        _STACKS[construct] = stack_of(scope)


_STACKS: weakref.WeakKeyDictionary[IConstruct, Stack] = weakref.WeakKeyDictionary()
_REGIONS: weakref.WeakKeyDictionary[Stack, str] = weakref.WeakKeyDictionary()
