"""When an inference component caches its artifacts and image on each instance by
default (``Specification.DataCacheConfig.EnableCaching``), and what a cached start saves.

SageMaker: "With caching enabled, the endpoint caches this data in each instance that it
provisions for the inference component. That way, the inference component deploys faster
during the auto scaling process. If caching isn't enabled, the inference component takes
longer to deploy because of the time it spends downloading the data" (SageMaker API
Reference, ``InferenceComponentDataCacheConfig``); left unset, SageMaker caches on types
with more than 232 GiB of local NVMe storage (CloudFormation schema of
``AWS::SageMaker::InferenceComponent``).

The rule here: a component that may scale to zero copies, on an endpoint whose every
instance type (the first and each fallback) has local NVMe storage, caches by default.
Those components start copies from zero again and again, so each scale-out from zero
skips the download; the cache lives on an instance's local storage, so types without it
keep SageMaker's choice. Other components keep SageMaker's choice too (no
``DataCacheConfig``: their templates stay as they were).

A cached start skips the artifact download only on an instance that already ran the
component (the cache is per instance): a new instance, as when the endpoint itself scales
from zero instances, downloads as before. That a cached start needs no download time at
all is this package's estimate; SageMaker publishes no figure for it.
"""

from __future__ import annotations

from collections.abc import Sequence

from fm_platform.hardware.instances import UnknownInstanceTypeError, instance_spec


def caches_by_default(min_copies: int | None, instance_types: Sequence[str]) -> bool | None:
    """True for a component that may scale to zero copies (``min_copies`` 0) on instance
    types that all have local NVMe storage; None (SageMaker's choice) otherwise, and for
    a type without figures."""
    if min_copies != 0 or not instance_types:
        return None
    try:
        local = all(instance_spec(t).local_nvme for t in instance_types)
    except UnknownInstanceTypeError:
        return None
    return True if local else None


def cached_start_skips_download(caching: bool | None, *, keeps_instances: bool) -> bool:
    """Whether a copy started from zero copies skips the artifact download: with caching
    on, on an endpoint that keeps at least one instance (a new instance has no cache)."""
    return bool(caching) and keeps_instances
