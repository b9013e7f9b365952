"""fm_platform: AWS CDK constructs and stacks for training (SageMaker HyperPod with Slurm)
and serving (SageMaker real-time endpoints) foundation models.

Every construct takes one frozen props object: its plain options (``XxxOptions``, shared
with the app's configuration) and the resources it references (``XxxProps`` extends the
options). The props are validated at construction: one ``ValueError`` lists every problem.
Constructs expose the resources they create as attributes.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

#: The package version (semantic versioning; see CHANGELOG.md). pyproject.toml reads it.
__version__ = "0.4.0"

# The public API, written once: each name imported from the module that defines it. Type
# checkers read these imports (``name as name`` marks a re-export). At run time the block
# is not executed: ``_EXPORTS`` is read from it, and each name is imported on first use,
# so that the ``fmp`` command (fm_platform.cli) starts without loading aws-cdk-lib.
if TYPE_CHECKING:
    from fm_platform.app import (
        build_app as build_app,
    )
    from fm_platform.config import (
        AppConfig as AppConfig,
        AsyncEndpointConfig as AsyncEndpointConfig,
        InferenceComponentEndpointConfig as InferenceComponentEndpointConfig,
        InferenceComponentModelConfig as InferenceComponentModelConfig,
        InferenceConfig as InferenceConfig,
        load_config as load_config,
        MultiModelEndpointConfig as MultiModelEndpointConfig,
        SingleModelEndpointConfig as SingleModelEndpointConfig,
        TrainingConfig as TrainingConfig,
    )
    from fm_platform.config.environments import (
        EnvironmentsConfig as EnvironmentsConfig,
        load_environments as load_environments,
    )
    from fm_platform.constructs.inference.adapter_component import (
        AdapterComponent as AdapterComponent,
        AdapterComponentProps as AdapterComponentProps,
    )
    from fm_platform.constructs.inference.async_endpoint import (
        AsyncEndpoint as AsyncEndpoint,
        AsyncEndpointOptions as AsyncEndpointOptions,
        AsyncEndpointProps as AsyncEndpointProps,
    )
    from fm_platform.constructs.inference.async_scaling import (
        AsyncScaling as AsyncScaling,
    )
    from fm_platform.constructs.inference.component_endpoint import (
        InferenceComponentEndpointAttributes as InferenceComponentEndpointAttributes,
        InferenceComponentEndpoint as InferenceComponentEndpoint,
        InferenceComponentEndpointBase as InferenceComponentEndpointBase,
        InferenceComponentEndpointOptions as InferenceComponentEndpointOptions,
        InferenceComponentEndpointProps as InferenceComponentEndpointProps,
    )
    from fm_platform.constructs.inference.component_scaling import (
        ComponentScaling as ComponentScaling,
    )
    from fm_platform.constructs.inference.container_image import (
        ContainerImage as ContainerImage,
    )
    from fm_platform.constructs.inference.endpoint_interface import (
        IAsyncEndpoint as IAsyncEndpoint,
        IEndpoint as IEndpoint,
        IInferenceComponentEndpoint as IInferenceComponentEndpoint,
    )
    from fm_platform.constructs.inference.execution_role import (
        HostingRole as HostingRole,
        HostingRoleProps as HostingRoleProps,
    )
    from fm_platform.constructs.inference.imported_endpoint import (
        EndpointAttributes as EndpointAttributes,
    )
    from fm_platform.constructs.inference.inference_component import (
        InferenceComponentModel as InferenceComponentModel,
        InferenceComponentModelOptions as InferenceComponentModelOptions,
        InferenceComponentModelProps as InferenceComponentModelProps,
        RollingUpdate as RollingUpdate,
    )
    from fm_platform.constructs.inference.component_placement import (
        ComponentScheduling as ComponentScheduling,
    )
    from fm_platform.constructs.inference.instance_pools import (
        FallbackPool as FallbackPool,
        InstanceTypeResources as InstanceTypeResources,
    )
    from fm_platform.constructs.inference.instance_scaling import (
        InstanceScaling as InstanceScaling,
    )
    from fm_platform.constructs.inference.model_container import (
        ModelContainer as ModelContainer,
    )
    from fm_platform.constructs.inference.multi_model_endpoint import (
        MultiModelEndpoint as MultiModelEndpoint,
        MultiModelEndpointOptions as MultiModelEndpointOptions,
        MultiModelEndpointProps as MultiModelEndpointProps,
    )
    from fm_platform.constructs.inference.serverless_endpoint import (
        ServerlessEndpoint as ServerlessEndpoint,
        ServerlessEndpointOptions as ServerlessEndpointOptions,
        ServerlessEndpointProps as ServerlessEndpointProps,
    )
    from fm_platform.constructs.inference.single_model_endpoint import (
        DataCaptureOptions as DataCaptureOptions,
        DataCaptureProps as DataCaptureProps,
        SingleModelEndpoint as SingleModelEndpoint,
        SingleModelEndpointOptions as SingleModelEndpointOptions,
        SingleModelEndpointProps as SingleModelEndpointProps,
        VariantSpec as VariantSpec,
    )
    from fm_platform.constructs.inference.variant_features import (
        CapacityReservation as CapacityReservation,
        EndpointMetrics as EndpointMetrics,
        PrefixAwareRouting as PrefixAwareRouting,
        ScaleInPolicy as ScaleInPolicy,
    )
    from fm_platform.constructs.secure_bucket import (
        BucketOptions as BucketOptions,
        BucketOptionsAspect as BucketOptionsAspect,
        SecureBucket as SecureBucket,
        SecureBucketProps as SecureBucketProps,
    )
    from fm_platform.constructs.training.accounting import (
        SlurmAccountingDatabase as SlurmAccountingDatabase,
        SlurmAccountingDatabaseOptions as SlurmAccountingDatabaseOptions,
        SlurmAccountingDatabaseProps as SlurmAccountingDatabaseProps,
    )
    from fm_platform.constructs.training.cluster_interface import (
        HyperPodClusterAttributes as HyperPodClusterAttributes,
        IHyperPodCluster as IHyperPodCluster,
    )
    from fm_platform.constructs.training.eks_cluster import (
        EksControlPlane as EksControlPlane,
        EksControlPlaneProps as EksControlPlaneProps,
    )
    from fm_platform.constructs.training.eks_options import (
        EksAddOns as EksAddOns,
        EksInstanceGroup as EksInstanceGroup,
        EksOptions as EksOptions,
        KubernetesTaint as KubernetesTaint,
        Orchestrator as Orchestrator,
        PriorityClass as PriorityClass,
        Team as Team,
    )
    from fm_platform.constructs.training.filesystem import (
        DataRepositoryAssociationProps as DataRepositoryAssociationProps,
        SharedFileSystem as SharedFileSystem,
        SharedFileSystemOptions as SharedFileSystemOptions,
        SharedFileSystemProps as SharedFileSystemProps,
    )
    from fm_platform.constructs.training.helm_releases import (
        GitChart as GitChart,
        HelmReleases as HelmReleases,
        HelmReleasesProps as HelmReleasesProps,
    )
    from fm_platform.constructs.training.home_filesystem import (
        HomeFileSystem as HomeFileSystem,
        HomeFileSystemOptions as HomeFileSystemOptions,
        HomeFileSystemProps as HomeFileSystemProps,
    )
    from fm_platform.constructs.training.hyperpod import (
        HyperPodCluster as HyperPodCluster,
        HyperPodClusterOptions as HyperPodClusterOptions,
        HyperPodClusterProps as HyperPodClusterProps,
        NodeProvisioning as NodeProvisioning,
        SlurmMode as SlurmMode,
    )
    from fm_platform.constructs.training.hyperpod_eks import (
        HyperPodEksCluster as HyperPodEksCluster,
        HyperPodEksClusterProps as HyperPodEksClusterProps,
    )
    from fm_platform.constructs.training.instance_groups import (
        Capacity as Capacity,
        InstanceGroup as InstanceGroup,
        node_setup as node_setup,
        NodeRole as NodeRole,
        provisioning_parameters as provisioning_parameters,
        ScheduledUpdate as ScheduledUpdate,
    )
    from fm_platform.constructs.training.lifecycle import (
        LifecycleScripts as LifecycleScripts,
        LifecycleScriptsOptions as LifecycleScriptsOptions,
        LifecycleScriptsProps as LifecycleScriptsProps,
        LifecycleStorage as LifecycleStorage,
        SharedUser as SharedUser,
    )
    from fm_platform.constructs.training.network import (
        ClusterNetwork as ClusterNetwork,
        ClusterNetworkOptions as ClusterNetworkOptions,
        ClusterNetworkProps as ClusterNetworkProps,
    )
    from fm_platform.constructs.training.node_health_alarm import (
        NodeHealthAlarm as NodeHealthAlarm,
    )
    from fm_platform.core.compliance import (
        acknowledge as acknowledge,
        apply_compliance_packs as apply_compliance_packs,
    )
    from fm_platform.hardware.instances import (
        instance_spec as instance_spec,
        InstanceSpec as InstanceSpec,
        register_instance_type as register_instance_type,
        register_instance_types_from_file as register_instance_types_from_file,
    )
    from fm_platform.rules.problems import (
        Problems as Problems,
        ValidationError as ValidationError,
    )
    from fm_platform.stacks.environment import (
        EnvironmentStage as EnvironmentStage,
    )
    from fm_platform.stacks.inference import (
        InferenceStack as InferenceStack,
    )
    from fm_platform.stacks.pipeline import (
        PipelineStack as PipelineStack,
    )
    from fm_platform.stacks.training import (
        TrainingStack as TrainingStack,
    )
    from fm_platform.stacks.training_data import (
        TrainingDataStack as TrainingDataStack,
    )
    from fm_platform.stacks.training_eks import (
        TrainingEksStack as TrainingEksStack,
    )


def _exports() -> dict[str, str]:
    """Each public name and its module, from the ``if TYPE_CHECKING:`` imports above."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )
    return {
        alias.asname or alias.name: statement.module
        for statement in block.body
        if isinstance(statement, ast.ImportFrom) and statement.module
        for alias in statement.names
    }


_EXPORTS = _exports()

if not TYPE_CHECKING:
    # Written at run time only: for a type checker, the ``as`` imports are the exports.
    __all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
