"""Endpoints deployed elsewhere, described by :class:`EndpointAttributes`: what every
kind's ``from_endpoint_name``, ``from_endpoint_arn`` and ``from_endpoint_attributes``
return (:class:`ImportedEndpoint`). Nothing is created: an imported endpoint can be
invoked (:meth:`~fm_platform.constructs.inference.endpoint_base.RealtimeEndpoint.grant_invoke`),
measured and alarmed like one made here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from aws_cdk import Arn, ArnFormat, Stack
from constructs import Construct

from fm_platform.constructs.inference.endpoint_base import INVOKE_ACTIONS, RealtimeEndpoint
from fm_platform.constructs.inference.endpoint_interface import IEndpoint
from fm_platform.core.tokens import is_unresolved, known
from fm_platform.rules.problems import Problems

DEFAULT_VARIANT = "AllTraffic"


@dataclass(frozen=True, kw_only=True)
class EndpointAttributes:
    """An endpoint deployed elsewhere, as every kind's ``from_endpoint_attributes`` takes
    it (``from_endpoint_name`` and ``from_endpoint_arn`` fill in one field).

    endpoint_name: the endpoint's name; by default the resource name of ``endpoint_arn``.
        An ARN holds the name lower-cased, so give the name when it has capitals: the
        metrics' ``EndpointName`` dimension is the name as it was created.
    endpoint_arn: the endpoint's ARN; by default built from ``endpoint_name`` in the
        account and region of the importing scope's stack.
    variant_name: the production variant the ``metric_*`` methods measure; by default
        AllTraffic.
    """

    endpoint_name: str | None = None
    endpoint_arn: str | None = None
    variant_name: str = DEFAULT_VARIANT

    def check(self, problems: Problems) -> None:
        """Record every problem of these attributes in ``problems`` (values that are
        tokens are not checked)."""
        if self.endpoint_name is None and self.endpoint_arn is None:
            problems.add("endpoint_name", None, "give the endpoint's name or its ARN")
        problems.check_shape("endpoint_name", known(self.endpoint_name), "EndpointName")
        problems.check_shape("endpoint_arn", known(self.endpoint_arn), "EndpointArn")
        problems.check_shape("variant_name", known(self.variant_name), "VariantName")

    def validate(self, into: Problems | None = None) -> None:
        """Raise one ``ValueError`` listing every problem in these attributes.
        With ``into``, record them there instead (see :meth:`Problems.within`)."""
        problems = Problems.within(into, type(self).__name__)
        self.check(problems)
        problems.raise_if_any()

    def name_and_arn(self, scope: Construct) -> tuple[str, str]:
        """The endpoint's name and ARN, each by default from the other (see the fields)."""
        name = self.endpoint_name
        if name is not None:
            return name, self.endpoint_arn or endpoint_arn_for(scope, name)
        arn = self.endpoint_arn or ""  # validate() rejects attributes without either
        return Arn.split(arn, ArnFormat.SLASH_RESOURCE_NAME).resource_name or arn, arn


def endpoint_arn_for(scope: Construct, name: str) -> str:
    """The ARN of the endpoint ``name`` in the account and region of ``scope``'s stack
    (endpoint ARNs hold the name lower-cased)."""
    return Stack.of(scope).format_arn(
        service="sagemaker",
        resource="endpoint",
        resource_name=name if is_unresolved(name) else name.lower(),
    )


class ImportedEndpoint(RealtimeEndpoint):
    """An endpoint deployed elsewhere (see :class:`EndpointAttributes`): its name, ARN and
    variant, ``grant_invoke`` (``invoke_actions``) and the ``metric_*`` methods (instances
    counted by ``instance_metric``), as the kind that imported it sets them. Its
    ``endpoint`` is None."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        attrs: EndpointAttributes,
        *,
        instance_metric: str = RealtimeEndpoint.INSTANCE_METRIC,
        invoke_actions: Sequence[str] = INVOKE_ACTIONS,
    ) -> None:
        """Describe the endpoint under ``scope``; ``attrs`` are validated first. Its
        account and region (``env``) are those of its ARN."""
        attrs.validate()
        name, arn = attrs.name_and_arn(scope)
        super().__init__(scope, construct_id, environment_from_arn=arn)
        self.endpoint = None
        self._endpoint_name, self._endpoint_arn = name, arn
        self.variant_name = attrs.variant_name
        self.INSTANCE_METRIC = instance_metric
        self.INVOKE_ACTIONS = tuple(invoke_actions)


class ImportableByName:
    """``from_endpoint_name``, ``from_endpoint_arn`` and ``from_endpoint_attributes`` for a
    kind whose imports are plain :class:`ImportedEndpoint` objects measured on the kind's
    ``INSTANCE_METRIC`` (the single-model and multi-model endpoints)."""

    INSTANCE_METRIC: ClassVar[str]

    @classmethod
    def from_endpoint_name(
        cls, scope: Construct, construct_id: str, endpoint_name: str
    ) -> IEndpoint:
        """An existing endpoint of this kind, by name (its variant AllTraffic, its ARN built
        in ``scope``'s account and region), to invoke, measure and alarm. Nothing is
        created."""
        return cls.from_endpoint_attributes(
            scope, construct_id, EndpointAttributes(endpoint_name=endpoint_name)
        )

    @classmethod
    def from_endpoint_arn(cls, scope: Construct, construct_id: str, endpoint_arn: str) -> IEndpoint:
        """An existing endpoint of this kind, by ARN (its name read from it, lower-cased as
        ARNs hold it). Nothing is created."""
        return cls.from_endpoint_attributes(
            scope, construct_id, EndpointAttributes(endpoint_arn=endpoint_arn)
        )

    @classmethod
    def from_endpoint_attributes(
        cls, scope: Construct, construct_id: str, attrs: EndpointAttributes
    ) -> IEndpoint:
        """An existing endpoint of this kind described by ``attrs``. Nothing is created."""
        return ImportedEndpoint(scope, construct_id, attrs, instance_metric=cls.INSTANCE_METRIC)
