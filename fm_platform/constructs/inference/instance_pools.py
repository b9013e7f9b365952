"""Capacity fallback: a production variant that takes instances from up to five instance
types in priority order (``InstancePools``): on an Inference Components endpoint with the
per-type resources of a component placed on it (``Specifications``), on a single-model
endpoint with, per pool, the model its instances run (``ModelNameOverride``).

SageMaker provisions from the first type and falls back to the next one when it finds no
capacity, until ``VariantInstanceProvisionTimeoutInSeconds`` (SageMaker Developer Guide,
"Deploy to multiple instance types with instance pools"). A variant with pools names no
``InstanceType`` of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import aws_sagemaker as sagemaker

from fm_platform.constructs.inference.model_container import ModelContainer
from fm_platform.rules.capacity import CopyDemand
from fm_platform.rules.pools import check_pool_model
from fm_platform.rules.problems import Problems

_IC = sagemaker.CfnInferenceComponent


@dataclass(frozen=True, kw_only=True)
class InstanceTypeResources:
    """What each copy of a component reserves on one fallback instance type (the
    configuration's ``per_instance_type`` items of a model too).

    instance_type: one of the endpoint's ``fallback_instance_types``.
    accelerators: accelerator devices each copy needs there; 0 for CPU.
    min_memory_mib: host memory reserved for each copy there.
    cpu_cores: CPU cores reserved there; by default none reserved.
    max_memory_mib: host memory limit there; by default no limit.
    container: the model each copy runs there instead of the component's (another image
        for that hardware, another tensor-parallel degree for another device count),
        created beside it with the same execution role (image pull and artifact read
        granted), network isolation and VPC, and named in that type's ``Specifications``
        entry; by default the component's model.
    """

    instance_type: str
    accelerators: int
    min_memory_mib: int
    cpu_cores: float | None = None
    max_memory_mib: int | None = None
    container: ModelContainer | None = None

    def demand(self, base: CopyDemand) -> CopyDemand:
        """``base`` (the component's copies) with this type's resources."""
        return CopyDemand(
            name=base.name,
            accelerators=self.accelerators,
            cpu_cores=self.cpu_cores,
            min_memory_mib=self.min_memory_mib,
            min_copies=base.min_copies,
            initial_copies=base.initial_copies,
        )


@dataclass(frozen=True, kw_only=True)
class FallbackPool:
    """A fallback instance type of a single-model endpoint's production variant (an item of
    the configuration's ``fallback_pools`` too): SageMaker provisions it, in list order,
    when the types before it have no capacity.

    instance_type: a hosting instance type.
    container: the model this pool's instances run instead of the variant's (another image
        or an artifact compiled for this hardware); the endpoint creates it beside the
        variant's model, with the same execution role (image pull and artifact read
        granted), network isolation and VPC placement, and names it in the pool's
        ``ModelNameOverride``. By default the pool runs the variant's model.
    model_name_override: the name of an existing SageMaker model the pool's instances run
        instead (botocore ``ModelName``: letters, digits and hyphens, 1-63); its role and
        grants are its own. By default none; not with ``container``.
    """

    instance_type: str
    container: ModelContainer | None = None
    model_name_override: str | None = None

    def check(self, problems: Problems, field: str) -> None:
        """Record the problems of this pool's model under ``field``."""
        if self.container is not None:
            self.container.check(problems, f"{field}.container")
        check_pool_model(
            problems,
            field,
            model_name_override=self.model_name_override,
            has_container=self.container is not None,
        )


def variant_pools(
    instance_type: str,
    fallbacks: Sequence[str],
    model_overrides: Sequence[str | None] = (),
) -> list[sagemaker.CfnEndpointConfig.InstancePoolProperty] | None:
    """The variant's ``InstancePools`` (``instance_type`` first), None without fallbacks;
    ``model_overrides``: per fallback, the model its pool runs instead (None: the
    variant's)."""
    if not fallbacks:
        return None
    overrides = [None, *model_overrides, *([None] * (len(fallbacks) - len(model_overrides)))]
    return [
        sagemaker.CfnEndpointConfig.InstancePoolProperty(
            instance_type=t, priority=rank, model_name_override=override
        )
        for rank, (t, override) in enumerate(
            zip([instance_type, *fallbacks], overrides, strict=True), start=1
        )
    ]


def demands_by_type(
    base: CopyDemand,
    instance_types: Sequence[str],
    per_type: Sequence[InstanceTypeResources],
) -> dict[str, CopyDemand]:
    """What the copies reserve on each of the endpoint's ``instance_types``: the type's
    own resources where given, else the component's."""
    given = {entry.instance_type: entry for entry in per_type}
    return {t: given[t].demand(base) if t in given else base for t in instance_types}


def specifications(
    *,
    model_names: Mapping[str, str],
    instance_types: Sequence[str],
    resources: Mapping[str, _IC.InferenceComponentComputeResourceRequirementsProperty],
    startup: _IC.InferenceComponentStartupParametersProperty | None,
    scheduling: _IC.InferenceComponentSchedulingConfigProperty | None,
    data_cache: _IC.InferenceComponentDataCacheConfigProperty | None,
) -> list[_IC.InferenceComponentSpecificationForInstanceTypeProperty]:
    """One ``Specifications`` entry per instance type: the type's model and resources."""
    return [
        _IC.InferenceComponentSpecificationForInstanceTypeProperty(
            instance_type=t,
            model_name=model_names[t],
            compute_resource_requirements=resources[t],
            startup_parameters=startup,
            scheduling_config=scheduling,
            data_cache_config=data_cache,
        )
        for t in instance_types
    ]
