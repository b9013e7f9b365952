"""Which settings of an endpoint SageMaker cannot change in place, and the key that makes
CloudFormation replace the endpoint (and what is bound to it) when one of them changes.

CloudFormation updates an ``AWS::SageMaker::Endpoint`` in place (``UpdateEndpoint`` to the
new endpoint config) unless its logical ID or its ``EndpointName`` changes. SageMaker
refuses some of those updates:

- an endpoint hosting inference components cannot move to a config with another instance
  type ("Cannot update endpoint with a different instance type for endpoints to which you
  plan to deploy Inference Components"), and ``UpdateInferenceComponent`` cannot move a
  component to another endpoint or variant (it takes no ``EndpointName`` or
  ``VariantName``);
- "If the update would change the instance type for any model that is a target for auto
  scaling, the update fails" (SageMaker Developer Guide, "Update endpoints that use auto
  scaling", which says to deregister the scalable target first). A renamed scaled variant
  is treated the same way (its scalable target names the variant; not documented either
  way).

The constructs put :func:`replacement_key` of those settings into the endpoint's logical
ID (and into the logical IDs and default names of its components), so a change creates a
new endpoint beside the old one; CloudFormation deletes the old one once the update has
succeeded. See docs/day2-changes.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

KEY_LENGTH = 8


def replacement_key(settings: dict[str, object]) -> str:
    """8 hex digits of the SHA-256 of ``settings`` (as sorted JSON): the same settings
    always give the same key, any change of one gives another."""
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


def component_endpoint_key(
    *, instance_type: str, variant_name: str, pool_types: Iterable[str] = ()
) -> str:
    """The replacement key of an Inference Components endpoint: its instance type, its
    variant's name and the instance types of its pools (none of which SageMaker changes in
    place on an endpoint with components)."""
    settings: dict[str, object] = {"instance_type": instance_type, "variant": variant_name}
    pools = sorted(pool_types)
    if pools:
        settings["pools"] = pools
    return replacement_key(settings)


def scaled_variants_key(
    variants: Iterable[tuple[str, str]], *, pool_types: Iterable[str] = ()
) -> str | None:
    """The replacement key of an endpoint whose variants ``(name, instance type)`` are
    auto-scaling targets, with the fallback pool types of its scaled production variant
    (instance types of that variant too); None without any (an update then runs in
    place)."""
    scaled = sorted(variants)
    if not scaled:
        return None
    settings: dict[str, object] = {"scaled_variants": [list(v) for v in scaled]}
    pools = sorted(pool_types)
    if pools:
        settings["pools"] = pools
    return replacement_key(settings)
