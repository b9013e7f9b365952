"""Default inference component names, unique per account and region.

SageMaker requires inference component names (and Application Auto Scaling the resource IDs
``inference-component/<name>`` built from them) to be unique per account and region, so a
name taken from the model alone collides when a second copy of a stack (another
environment, another tenant) is deployed there. CloudFormation stack names are unique per
account and region too, so the default name is ``<stack name>-<model name>``.
"""

from __future__ import annotations

import re
import weakref

from aws_cdk import Stack
from constructs import Construct

from fm_platform.core.tokens import is_unresolved
from fm_platform.rules.components import component_name_for

_NOT_IN_NAMES = re.compile(r"[^a-zA-Z0-9-]")
_NAMES_IN_STACK: weakref.WeakKeyDictionary[Stack, set[str]] = weakref.WeakKeyDictionary()
_PREFIXES: weakref.WeakKeyDictionary[Stack, str] = weakref.WeakKeyDictionary()


def default_component_name(
    scope: Construct,
    model_name: str,
    replacement_key: str | None = None,
    suffix: str | None = None,
) -> str:
    """The default component name of ``model_name`` in ``scope``'s stack, on an endpoint
    with ``replacement_key``, followed by ``suffix`` when given (see
    :func:`component_name_for`). A nested stack's name is
    only known at deploy time, so there the nearest enclosing stack with a known name
    stands in, followed by the construct IDs of the nested stacks in between (letters,
    digits and hyphens kept)."""
    return component_name_for(_stack_prefix(Stack.of(scope)), model_name, replacement_key, suffix)


def _stack_prefix(stack: Stack) -> str:
    """The name prefix of components in ``stack``, worked out once per stack."""
    prefix = _PREFIXES.get(stack)
    if prefix is None:
        named, nested_ids = stack, list[str]()
        while is_unresolved(named.stack_name) and named.nested_stack_parent is not None:
            nested_ids.insert(0, _NOT_IN_NAMES.sub("", named.node.id))
            named = named.nested_stack_parent
        prefix = _PREFIXES[stack] = "-".join([named.stack_name, *(i for i in nested_ids if i)])
    return prefix


def component_names_in_stack(scope: Construct) -> set[str]:
    """The component names already used in ``scope``'s stack (a stack deploys into one
    account and region, where names must be unique); add a name once it is taken."""
    return _NAMES_IN_STACK.setdefault(Stack.of(scope), set())
