"""Default inference component names, unique per account and region.

SageMaker requires inference component names (and Application Auto Scaling the resource IDs
``inference-component/<name>`` built from them) to be unique per account and region, so a
name taken from the model alone collides when a second copy of a stack (another
environment, another tenant) is deployed there. CloudFormation stack names are unique per
account and region too, so the default name is ``<stack name>-<model name>``.
"""

from __future__ import annotations

import hashlib

from aws_cdk import Stack
from constructs import Construct

from fm_platform.specs.sagemaker_model import shape_rule
from fm_platform.validation import is_unresolved

_HASH_LENGTH = 8


def component_name_for(stack_name: str, model_name: str) -> str:
    """``<stack_name>-<model_name>`` when it fits the name limit (63 characters).

    A longer name keeps the whole model name and as much of the stack name as fits, with
    8 hex digits of the SHA-256 of the untrimmed name between them
    (``<stack prefix>-<hash>-<model_name>``), so that trimmed names stay distinct; a model
    name too long for even that gives ``<first characters>-<hash>``.
    """
    full = f"{stack_name}-{model_name}"
    limit = shape_rule("InferenceComponentName").max or 63
    if len(full) <= limit:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:_HASH_LENGTH]
    room = limit - len(model_name) - len(digest) - 2
    if room >= 1:
        return f"{stack_name[:room].rstrip('-')}-{digest}-{model_name}"
    return f"{full[: limit - len(digest) - 1].rstrip('-')}-{digest}"


def default_component_name(scope: Construct, model_name: str) -> str:
    """The default component name of ``model_name`` in ``scope``'s stack (see
    :func:`component_name_for`); a nested stack, whose name is only known at deploy time,
    uses the name of the nearest enclosing stack with a known name."""
    stack = Stack.of(scope)
    while is_unresolved(stack.stack_name) and stack.nested_stack_parent is not None:
        stack = stack.nested_stack_parent
    return component_name_for(stack.stack_name, model_name)
