"""fm_platform: AWS CDK constructs and stacks for training (SageMaker HyperPod with Slurm)
and serving (SageMaker real-time endpoints) foundation models.

Every construct takes one frozen props object: its plain options (``XxxOptions``, shared
with the app's configuration) and the resources it references (``XxxProps`` extends the
options). The props are validated at construction: one ``ValueError`` lists every problem.
Constructs expose the resources they create as attributes.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

#: The package version (semantic versioning; see CHANGELOG.md). pyproject.toml reads it.
__version__ = "0.4.0"

# The public names and the modules that define them. They are imported on first use, so
# that the ``fmp`` command (fm_platform.cli) starts without loading aws-cdk-lib.
_EXPORTS = {
    "acknowledge": "fm_platform.compliance",
    "AppConfig": "fm_platform.config",
    "apply_compliance_packs": "fm_platform.compliance",
    "AsyncEndpoint": "fm_platform.constructs.inference.async_endpoint",
    "AsyncEndpointConfig": "fm_platform.config",
    "AsyncEndpointOptions": "fm_platform.constructs.inference.async_endpoint",
    "AsyncEndpointProps": "fm_platform.constructs.inference.async_endpoint",
    "AsyncScaling": "fm_platform.constructs.inference.async_scaling",
    "build_app": "fm_platform.app",
    "Capacity": "fm_platform.constructs.training.instance_groups",
    "ClusterNetwork": "fm_platform.constructs.training.network",
    "ClusterNetworkOptions": "fm_platform.constructs.training.network",
    "ClusterNetworkProps": "fm_platform.constructs.training.network",
    "ComponentScaling": "fm_platform.constructs.inference.component_scaling",
    "ContainerImage": "fm_platform.constructs.inference.container_image",
    "DataCaptureOptions": "fm_platform.constructs.inference.single_model_endpoint",
    "DataCaptureProps": "fm_platform.constructs.inference.single_model_endpoint",
    "DataRepositoryAssociationProps": "fm_platform.constructs.training.filesystem",
    "deep_learning_container_image": "fm_platform.images",
    "EndpointAttributes": "fm_platform.constructs.inference.imported_endpoint",
    "HomeFileSystem": "fm_platform.constructs.training.home_filesystem",
    "HomeFileSystemOptions": "fm_platform.constructs.training.home_filesystem",
    "HomeFileSystemProps": "fm_platform.constructs.training.home_filesystem",
    "HostingRole": "fm_platform.constructs.inference.execution_role",
    "HostingRoleProps": "fm_platform.constructs.inference.execution_role",
    "HyperPodCluster": "fm_platform.constructs.training.hyperpod",
    "HyperPodClusterOptions": "fm_platform.constructs.training.hyperpod",
    "HyperPodClusterProps": "fm_platform.constructs.training.hyperpod",
    "IAsyncEndpoint": "fm_platform.constructs.inference.endpoint_interface",
    "IEndpoint": "fm_platform.constructs.inference.endpoint_interface",
    "IInferenceComponentEndpoint": "fm_platform.constructs.inference.endpoint_interface",
    "InferenceComponentEndpoint": "fm_platform.constructs.inference.component_endpoint",
    "InferenceComponentEndpointAttributes": "fm_platform.constructs.inference.component_endpoint",
    "InferenceComponentEndpointBase": "fm_platform.constructs.inference.component_endpoint",
    "InferenceComponentEndpointConfig": "fm_platform.config",
    "InferenceComponentModelConfig": "fm_platform.config",
    "InferenceComponentEndpointOptions": "fm_platform.constructs.inference.component_endpoint",
    "InferenceComponentEndpointProps": "fm_platform.constructs.inference.component_endpoint",
    "InferenceComponentModel": "fm_platform.constructs.inference.inference_component",
    "InferenceComponentModelOptions": "fm_platform.constructs.inference.inference_component",
    "InferenceComponentModelProps": "fm_platform.constructs.inference.inference_component",
    "InferenceConfig": "fm_platform.config",
    "InferenceStack": "fm_platform.stacks.inference",
    "instance_spec": "fm_platform.hardware.instances",
    "InstanceGroup": "fm_platform.constructs.training.instance_groups",
    "InstanceScaling": "fm_platform.constructs.inference.instance_scaling",
    "InstanceSpec": "fm_platform.hardware.instances",
    "LifecycleScripts": "fm_platform.constructs.training.lifecycle",
    "LifecycleScriptsOptions": "fm_platform.constructs.training.lifecycle",
    "LifecycleScriptsProps": "fm_platform.constructs.training.lifecycle",
    "LifecycleStorage": "fm_platform.constructs.training.lifecycle",
    "load_config": "fm_platform.config",
    "ModelContainer": "fm_platform.constructs.inference.model_container",
    "MultiModelEndpoint": "fm_platform.constructs.inference.multi_model_endpoint",
    "MultiModelEndpointConfig": "fm_platform.config",
    "MultiModelEndpointOptions": "fm_platform.constructs.inference.multi_model_endpoint",
    "MultiModelEndpointProps": "fm_platform.constructs.inference.multi_model_endpoint",
    "node_setup": "fm_platform.constructs.training.instance_groups",
    "NodeHealthAlarm": "fm_platform.constructs.training.node_health_alarm",
    "NodeProvisioning": "fm_platform.constructs.training.hyperpod",
    "NodeRole": "fm_platform.constructs.training.instance_groups",
    "Problems": "fm_platform.rules.problems",
    "provisioning_parameters": "fm_platform.constructs.training.instance_groups",
    "register_instance_type": "fm_platform.hardware.instances",
    "register_instance_types_from_file": "fm_platform.hardware.instances",
    "RollingUpdate": "fm_platform.constructs.inference.inference_component",
    "ScheduledUpdate": "fm_platform.constructs.training.instance_groups",
    "SecureBucket": "fm_platform.constructs.secure_bucket",
    "SecureBucketProps": "fm_platform.constructs.secure_bucket",
    "SharedFileSystem": "fm_platform.constructs.training.filesystem",
    "SharedFileSystemOptions": "fm_platform.constructs.training.filesystem",
    "SharedFileSystemProps": "fm_platform.constructs.training.filesystem",
    "SharedUser": "fm_platform.constructs.training.lifecycle",
    "SingleModelEndpoint": "fm_platform.constructs.inference.single_model_endpoint",
    "SingleModelEndpointConfig": "fm_platform.config",
    "SingleModelEndpointOptions": "fm_platform.constructs.inference.single_model_endpoint",
    "SingleModelEndpointProps": "fm_platform.constructs.inference.single_model_endpoint",
    "SlurmAccountingDatabase": "fm_platform.constructs.training.accounting",
    "SlurmAccountingDatabaseOptions": "fm_platform.constructs.training.accounting",
    "SlurmAccountingDatabaseProps": "fm_platform.constructs.training.accounting",
    "SlurmMode": "fm_platform.constructs.training.hyperpod",
    "TrainingConfig": "fm_platform.config",
    "TrainingDataStack": "fm_platform.stacks.training_data",
    "TrainingStack": "fm_platform.stacks.training",
    "ValidationError": "fm_platform.rules.problems",
    "VariantSpec": "fm_platform.constructs.inference.single_model_endpoint",
}

# Names kept for compatibility: each warns once used, naming its replacement (CHANGELOG).
_DEPRECATED = {
    "ContainerSpec": ("fm_platform.constructs.inference.model_container", "ModelContainer"),
    "IcEndpointSpec": ("fm_platform.config", "InferenceComponentEndpointConfig"),
    "IcModelSpec": (
        "fm_platform.constructs.inference.inference_component",
        "InferenceComponentModelOptions",
    ),
    "MultiModelEndpointSpec": ("fm_platform.config", "MultiModelEndpointConfig"),
    "SingleModelEndpointSpec": ("fm_platform.config", "SingleModelEndpointConfig"),
}

__all__ = [
    "AppConfig",
    "AsyncEndpoint",
    "AsyncEndpointConfig",
    "AsyncEndpointOptions",
    "AsyncEndpointProps",
    "AsyncScaling",
    "Capacity",
    "ClusterNetwork",
    "ClusterNetworkOptions",
    "ClusterNetworkProps",
    "ComponentScaling",
    "ContainerImage",
    "DataCaptureOptions",
    "DataCaptureProps",
    "DataRepositoryAssociationProps",
    "EndpointAttributes",
    "HomeFileSystem",
    "HomeFileSystemOptions",
    "HomeFileSystemProps",
    "HostingRole",
    "HostingRoleProps",
    "HyperPodCluster",
    "HyperPodClusterOptions",
    "HyperPodClusterProps",
    "IAsyncEndpoint",
    "IEndpoint",
    "IInferenceComponentEndpoint",
    "InferenceComponentEndpoint",
    "InferenceComponentEndpointAttributes",
    "InferenceComponentEndpointBase",
    "InferenceComponentEndpointConfig",
    "InferenceComponentModelConfig",
    "InferenceComponentEndpointOptions",
    "InferenceComponentEndpointProps",
    "InferenceComponentModel",
    "InferenceComponentModelOptions",
    "InferenceComponentModelProps",
    "InferenceConfig",
    "InferenceStack",
    "InstanceGroup",
    "InstanceScaling",
    "InstanceSpec",
    "LifecycleScripts",
    "LifecycleScriptsOptions",
    "LifecycleScriptsProps",
    "LifecycleStorage",
    "ModelContainer",
    "MultiModelEndpoint",
    "MultiModelEndpointConfig",
    "MultiModelEndpointOptions",
    "MultiModelEndpointProps",
    "NodeHealthAlarm",
    "NodeProvisioning",
    "NodeRole",
    "Problems",
    "RollingUpdate",
    "ScheduledUpdate",
    "SecureBucket",
    "SecureBucketProps",
    "SharedFileSystem",
    "SharedFileSystemOptions",
    "SharedFileSystemProps",
    "SharedUser",
    "SingleModelEndpoint",
    "SingleModelEndpointConfig",
    "SingleModelEndpointOptions",
    "SingleModelEndpointProps",
    "SlurmAccountingDatabase",
    "SlurmAccountingDatabaseOptions",
    "SlurmAccountingDatabaseProps",
    "SlurmMode",
    "TrainingConfig",
    "TrainingDataStack",
    "TrainingStack",
    "ValidationError",
    "VariantSpec",
    "acknowledge",
    "apply_compliance_packs",
    "build_app",
    "deep_learning_container_image",
    "instance_spec",
    "load_config",
    "node_setup",
    "provisioning_parameters",
    "register_instance_type",
    "register_instance_types_from_file",
]


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        source, replacement = _DEPRECATED[name]
        warnings.warn(
            f"fm_platform.{name} is deprecated: use fm_platform.{replacement}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(source), replacement)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
    from fm_platform.app import build_app
    from fm_platform.compliance import acknowledge, apply_compliance_packs
    from fm_platform.config import (
        AppConfig,
        AsyncEndpointConfig,
        InferenceComponentEndpointConfig,
        InferenceComponentModelConfig,
        InferenceConfig,
        MultiModelEndpointConfig,
        SingleModelEndpointConfig,
        TrainingConfig,
        load_config,
    )
    from fm_platform.constructs.inference.async_endpoint import (
        AsyncEndpoint,
        AsyncEndpointOptions,
        AsyncEndpointProps,
    )
    from fm_platform.constructs.inference.async_scaling import AsyncScaling
    from fm_platform.constructs.inference.component_endpoint import (
        InferenceComponentEndpoint,
        InferenceComponentEndpointAttributes,
        InferenceComponentEndpointBase,
        InferenceComponentEndpointOptions,
        InferenceComponentEndpointProps,
    )
    from fm_platform.constructs.inference.component_scaling import ComponentScaling
    from fm_platform.constructs.inference.container_image import ContainerImage
    from fm_platform.constructs.inference.endpoint_interface import (
        IAsyncEndpoint,
        IEndpoint,
        IInferenceComponentEndpoint,
    )
    from fm_platform.constructs.inference.execution_role import HostingRole, HostingRoleProps
    from fm_platform.constructs.inference.imported_endpoint import EndpointAttributes
    from fm_platform.constructs.inference.inference_component import (
        InferenceComponentModel,
        InferenceComponentModelOptions,
        InferenceComponentModelProps,
        RollingUpdate,
    )
    from fm_platform.constructs.inference.instance_scaling import InstanceScaling
    from fm_platform.constructs.inference.model_container import ModelContainer
    from fm_platform.constructs.inference.multi_model_endpoint import (
        MultiModelEndpoint,
        MultiModelEndpointOptions,
        MultiModelEndpointProps,
    )
    from fm_platform.constructs.inference.single_model_endpoint import (
        DataCaptureOptions,
        DataCaptureProps,
        SingleModelEndpoint,
        SingleModelEndpointOptions,
        SingleModelEndpointProps,
        VariantSpec,
    )
    from fm_platform.constructs.secure_bucket import SecureBucket, SecureBucketProps
    from fm_platform.constructs.training.accounting import (
        SlurmAccountingDatabase,
        SlurmAccountingDatabaseOptions,
        SlurmAccountingDatabaseProps,
    )
    from fm_platform.constructs.training.filesystem import (
        DataRepositoryAssociationProps,
        SharedFileSystem,
        SharedFileSystemOptions,
        SharedFileSystemProps,
    )
    from fm_platform.constructs.training.home_filesystem import (
        HomeFileSystem,
        HomeFileSystemOptions,
        HomeFileSystemProps,
    )
    from fm_platform.constructs.training.hyperpod import (
        HyperPodCluster,
        HyperPodClusterOptions,
        HyperPodClusterProps,
        NodeProvisioning,
        SlurmMode,
    )
    from fm_platform.constructs.training.instance_groups import (
        Capacity,
        InstanceGroup,
        NodeRole,
        ScheduledUpdate,
        node_setup,
        provisioning_parameters,
    )
    from fm_platform.constructs.training.lifecycle import (
        LifecycleScripts,
        LifecycleScriptsOptions,
        LifecycleScriptsProps,
        LifecycleStorage,
        SharedUser,
    )
    from fm_platform.constructs.training.network import (
        ClusterNetwork,
        ClusterNetworkOptions,
        ClusterNetworkProps,
    )
    from fm_platform.constructs.training.node_health_alarm import NodeHealthAlarm
    from fm_platform.hardware.instances import (
        InstanceSpec,
        instance_spec,
        register_instance_type,
        register_instance_types_from_file,
    )
    from fm_platform.images import deep_learning_container_image
    from fm_platform.rules.problems import Problems, ValidationError
    from fm_platform.stacks.inference import InferenceStack
    from fm_platform.stacks.training import TrainingStack
    from fm_platform.stacks.training_data import TrainingDataStack
