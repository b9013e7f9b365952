"""A LoRA adapter served on a base model's inference component.

An adapter inference component names its base component
(``Specification.BaseInferenceComponentName``) and the adapter's weights
(``Specification.Container.ArtifactUrl``) and has no compute of its own: it shares the
base's copies, and SageMaker loads the adapter into them (SageMaker Developer Guide,
"Fine-tuned models with adapter inference components"). Callers invoke it by its
component name, as any component. The base's container must serve adapters (LMI with
``OPTION_ENABLE_LORA=true``).
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from fm_platform.constructs.inference.component_naming import (
    component_names_in_stack,
    default_component_name,
)
from fm_platform.constructs.inference.inference_component import InferenceComponentModel
from fm_platform.constructs.inference.role_grants import add_model_artifacts
from fm_platform.core.tokens import is_unresolved
from fm_platform.rules.adapters import check_adapter_artifact
from fm_platform.rules.components import check_component_name_free
from fm_platform.rules.problems import Problems


@dataclass(frozen=True, kw_only=True)
class AdapterComponentProps:
    """Props of :class:`AdapterComponent`.

    base: the base model's :class:`InferenceComponentModel`.
    adapter_name: a stable logical name (1-63 letters, digits and hyphens); with the
        stack's name it names the component unless ``component_name`` is given.
    artifact_url: the ``s3://`` URI of the adapter's weights, one gzip-compressed tar
        archive ending in ``.tar.gz`` (botocore ``ArtifactUrl``: a single archive, not a
        prefix; :mod:`fm_platform.rules.adapters`); the base endpoint's execution role gets
        read on it.
    artifact_key: the KMS key encrypting them; by default none is granted.
    component_name: the adapter component's name, used to invoke it; by default
        ``<stack name>-<adapter_name>-<endpoint key>`` (the base endpoint's replacement key,
        as for its models), followed by the base's ``name_suffix`` when it has one (a
        moved base's adapters move with it); trimmed with a hash to 63 characters.
    """

    base: InferenceComponentModel
    adapter_name: str
    artifact_url: str
    artifact_key: kms.IKey | None = None
    component_name: str | None = None

    def validate(self, *, component_name: str, taken: set[str]) -> None:
        """Raise one error listing every problem of these props; ``taken``: component
        names already used in the stack."""
        problems = Problems("adapter component props")
        problems.check_shape("adapter_name", self.adapter_name, "InferenceComponentName")
        problems.check_shape("component_name", self.component_name, "InferenceComponentName")
        check_adapter_artifact(
            problems,
            "artifact_url",
            None if is_unresolved(self.artifact_url) else self.artifact_url,
        )
        placed = component_name in taken or component_name in self.base.endpoint.component_names
        check_component_name_free(problems, "component_name", component_name, placed)
        problems.raise_if_any()


class AdapterComponent(Construct):
    """A LoRA adapter on ``props.base``'s component (module docstring).

    Attributes: ``base``, ``adapter_name``, ``component_name``, ``component`` (the
    ``CfnInferenceComponent``).
    """

    def __init__(self, scope: Construct, construct_id: str, props: AdapterComponentProps) -> None:
        super().__init__(scope, construct_id)
        self.base = props.base
        self.adapter_name = props.adapter_name
        # Like the base's own component, an adapter follows its endpoint's replacement key:
        # a replaced endpoint gets new components, under new names (names are unique per
        # account and Region, and a component cannot move to another endpoint in place).
        # A base moved between endpoints of one key (its name_suffix) takes its adapters
        # along under new names and construct IDs, for the same reason.
        key = props.base.endpoint.replacement_key
        suffix = props.base.name_suffix
        self.component_name = props.component_name or default_component_name(
            self, props.adapter_name, key, suffix
        )
        in_stack = component_names_in_stack(self)
        props.validate(component_name=self.component_name, taken=in_stack)
        in_stack.add(self.component_name)
        endpoint = props.base.endpoint
        endpoint.record_component_name(self.component_name)
        add_model_artifacts(endpoint.execution_role, props.artifact_url, props.artifact_key)
        ic = sagemaker.CfnInferenceComponent
        self.component = ic(
            self,
            f"Component{key or ''}" + (f"-{suffix}" if suffix else ""),
            endpoint_name=endpoint.endpoint_name,
            inference_component_name=self.component_name,
            specification=ic.InferenceComponentSpecificationProperty(
                base_inference_component_name=props.base.component_name,
                container=ic.InferenceComponentContainerSpecificationProperty(
                    artifact_url=props.artifact_url
                ),
            ),
        )
        # the base component must exist before an adapter names it
        self.component.node.add_dependency(props.base.component)

    def grant_invoke(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` invoke the endpoint; callers name this component in each
        request."""
        return self.base.endpoint.grant_invoke(grantee)
