"""Environments: one configuration for the same platform in several accounts and regions.

A configuration with an ``environments`` list deploys each environment as a ``cdk.Stage``
bound to its account and region. The configuration's other keys (``training``,
``inference``, ``deploy_training``, ``notifications``, ...) are the shared defaults; an
environment holds its own keys (:class:`EnvironmentSettings`: ``name``, ``account``,
``region``, ``catalog``, ``plan_file``, ``tags``) and any key of the shared configuration,
which it overrides: mappings are merged key by key (``"training": {"instance_groups":
[...]}`` keeps the shared ``training.availability_zone_id``), any other value (a list, a
number) replaces the shared one whole. An optional ``pipeline`` object
(:class:`PipelineConfig`) adds a CDK Pipelines pipeline deploying the environments in their
order.

Every problem of every environment is reported at once: a problem an environment inherits
from a shared key is named once by the shared key (``training.vpc_cidr``), one of the
environment's own values by its place in the list (``environments[2].training.vpc_cidr``).
A configuration without ``environments`` is read by :func:`~fm_platform.config.load_config`
as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fm_platform.config.app import AppConfig
from fm_platform.hardware.offerings import nearest_offered, offered_in
from fm_platform.hardware.prices import price_regions
from fm_platform.hardware.regions import az_id_prefix, region_of_az_id
from fm_platform.rules.problems import Problems, ValidationError
from fm_platform.rules.types import config_keys, read

ENVIRONMENTS_KEY = "environments"
PIPELINE_KEY = "pipeline"
#: An environment's name is its stage's construct ID and the prefix of its stacks' names
#: (``prod-FmpInference``): CloudFormation stack names take letters, digits and hyphens and
#: start with a letter (AWS::CloudFormation::Stack, StackName); short, so that the names
#: derived from stack names (inference components, 63 characters) keep their model part.
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,19}$")
_STACK_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,127}$")
_ACCOUNT = re.compile(r"^[0-9]{12}$")
#: AWS CodeConnections (formerly CodeStar Connections) connection ARNs, both service names.
_CONNECTION_ARN = re.compile(
    r"^arn:aws[a-z-]*:(codestar-connections|codeconnections):[a-z0-9-]+:[0-9]{12}:"
    r"connection/[0-9a-fA-F-]+$"
)
_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
#: Tag limits (Tagging AWS resources, "Tag naming limits and requirements").
_TAG_KEY_MAX, _TAG_VALUE_MAX = 128, 256


@dataclass(frozen=True, kw_only=True)
class EnvironmentSettings:
    """An environment's own keys.

    name: its stage's name, the prefix of its stacks' names (``prod`` deploys
        ``prod-FmpTraining``); letters, digits and hyphens, starting with a letter, at most
        20 characters, unique.
    account: the 12-digit AWS account its stacks deploy to.
    region: the region its stacks deploy to (one the shipped prices cover).
    catalog: a model catalog planned for this environment's region, whose fleet stacks the
        environment adds (:mod:`fm_platform.stacks.fleet`); by default none.
    plan_file: the catalog's plan file; by default ``<catalog>.<name>.plan.json`` next to
        the catalog, so that each environment keeps its own plan.
    tags: tags on every resource of the environment's stacks; by default none.
    """

    name: str
    account: str
    region: str
    catalog: str | None = None
    plan_file: str | None = None
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class EnvironmentConfig(EnvironmentSettings):
    """One environment: its own keys and its configuration (the shared one with its
    overrides)."""

    config: AppConfig = field(default_factory=AppConfig)


@dataclass(frozen=True, kw_only=True)
class PipelineConfig:
    """A CDK Pipelines pipeline deploying the environments in their order.

    connection_arn: the AWS CodeConnections (CodeStar) connection to the repository; the
        pipeline's source (no lookup at synth).
    repository: the repository, ``owner/name``.
    branch: the branch the pipeline follows; by default ``main``.
    account / region: where the pipeline runs (its tools account).
    approval_before: the environments whose deployment waits for a manual approval, after
        the review step's ``make diff`` report; by default the last environment.
    stack_name: the pipeline stack's name; by default ``FmpPipeline``.
    """

    connection_arn: str
    repository: str
    branch: str = "main"
    account: str
    region: str
    approval_before: tuple[str, ...] | None = None
    stack_name: str = "FmpPipeline"

    def approvals(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """The environments (of ``names``, in their order) deployed after an approval."""
        if self.approval_before is not None:
            return tuple(n for n in names if n in self.approval_before)
        return names[-1:]


@dataclass(frozen=True)
class EnvironmentsConfig:
    """Every environment, in deployment order, and the optional pipeline."""

    environments: tuple[EnvironmentConfig, ...]
    pipeline: PipelineConfig | None = None

    def named(self, name: str) -> EnvironmentConfig:
        """The environment called ``name``; raises a ValidationError naming the others."""
        for environment in self.environments:
            if environment.name == name:
                return environment
        problems = Problems("environment")
        problems.check_choice("environment", name, [e.name for e in self.environments])
        raise problems.error()


def has_environments(data: Any) -> bool:
    """True for a configuration (a config file's content) that names environments."""
    return isinstance(data, Mapping) and ENVIRONMENTS_KEY in data


def merged(shared: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``shared`` with ``overrides`` over it: mappings merged key by key, anything else
    replaced."""
    result = dict(shared)
    for key, value in overrides.items():
        base = result.get(key)
        if isinstance(base, Mapping) and isinstance(value, Mapping):
            result[key] = merged(base, value)
        else:
            result[key] = value
    return result


def load_environments(data: Any) -> EnvironmentsConfig:
    """The environments of ``data`` (a config file's content with ``environments``),
    checked as a whole: raises one :class:`ValidationError` listing every problem."""
    top = Problems("configuration")
    shared = {k: v for k, v in data.items() if k not in (ENVIRONMENTS_KEY, PIPELINE_KEY)}
    items = data[ENVIRONMENTS_KEY]
    if not isinstance(items, list) or not items:
        top.add(ENVIRONMENTS_KEY, items, "must be a non-empty list of environment objects")
        items = []
    shared_messages = set(_problems_of(lambda p: _checked(shared, p)))
    environments, inherited, own = [], [], []
    for index, item in enumerate(items):
        environment, messages = _environment(top, index, item, shared)
        environments.append(environment)
        for message in messages:
            if message in shared_messages:
                inherited.append(message)
            else:
                own.append(f"{ENVIRONMENTS_KEY}[{index}].{message}")
    names = [e.name for e in environments]
    top.check_unique(f"{ENVIRONMENTS_KEY}[].name", names)
    pipeline = None
    if data.get(PIPELINE_KEY) is not None:
        pipeline = read(top, f"{PIPELINE_KEY}.", data[PIPELINE_KEY], PipelineConfig)
        _check_pipeline(top.scoped(f"{PIPELINE_KEY}."), pipeline, names)
    messages = (*top.messages, *dict.fromkeys(inherited), *own)
    if messages:
        raise ValidationError("configuration", tuple(messages))
    return EnvironmentsConfig(tuple(environments), pipeline)


def _problems_of(check: Any) -> tuple[str, ...]:
    problems = Problems("configuration")
    check(problems)
    return problems.messages


def _checked(data: Mapping[str, Any], problems: Problems) -> AppConfig:
    config = AppConfig.from_mapping(data, problems)
    config.check(problems)
    return config


def _environment(
    top: Problems, index: int, item: Any, shared: Mapping[str, Any]
) -> tuple[EnvironmentConfig, tuple[str, ...]]:
    """Environment ``index``: its own keys (problems in ``top``) and its configuration
    (the problems of which are returned, unprefixed, for the caller to attribute)."""
    where = f"{ENVIRONMENTS_KEY}[{index}]."
    if not isinstance(item, Mapping):
        top.add(where[:-1], item, "must be an object with name, account and region")
        item = {}
    own_keys = config_keys(EnvironmentSettings)
    own = {k: v for k, v in item.items() if k in own_keys}
    settings = read(top, where, own, EnvironmentSettings)
    overrides = {k: v for k, v in item.items() if k not in own_keys}
    problems = Problems("configuration")
    config = _checked(merged(shared, overrides), problems)
    _check_settings(top.scoped(where), settings)
    _check_region_fit(problems, settings, config)
    fields = {k: getattr(settings, k) for k in own_keys}
    return EnvironmentConfig(**fields, config=config), problems.messages


def _check_settings(problems: Problems, settings: EnvironmentSettings) -> None:
    if settings.name is not None and not _NAME.match(settings.name):
        problems.add(
            "name",
            settings.name,
            "must start with a letter and hold only letters, digits and hyphens, at most 20 "
            "characters (it prefixes the environment's stack names)",
        )
    if settings.account is not None and not _ACCOUNT.match(settings.account):
        problems.add("account", settings.account, "must be a 12-digit AWS account ID")
    problems.check_choice("region", settings.region, price_regions())
    if settings.plan_file is not None and settings.catalog is None:
        problems.add("plan_file", settings.plan_file, "needs a catalog to plan; add catalog")
    for key, value in (settings.tags or {}).items():
        if not key or len(key) > _TAG_KEY_MAX or key.lower().startswith("aws:"):
            problems.add(
                "tags",
                key,
                f"a tag key has 1 to {_TAG_KEY_MAX} characters and does not start with aws: "
                "(reserved for AWS)",
            )
        if value is not None and len(value) > _TAG_VALUE_MAX:
            problems.add(
                f"tags.{key}", value, f"a tag value has at most {_TAG_VALUE_MAX} characters"
            )


def _check_region_fit(problems: Problems, settings: EnvironmentSettings, config: AppConfig) -> None:
    """What the environment deploys against its region: the training AZ ID's region, and
    every hosting type of its endpoints offered there (with the nearest one that is)."""
    region = settings.region
    if region is None or region not in price_regions():
        return
    if config.deploy_training and config.training is not None:
        zone = config.training.availability_zone_id
        zone_region = region_of_az_id(zone) if isinstance(zone, str) else None
        if zone_region is not None and zone_region != region:
            problems.add(
                "training.availability_zone_id",
                zone,
                f"is in {zone_region}; environment {settings.name!r} deploys to {region}: "
                f"give an AZ ID of {region} ({az_id_prefix(region)}-az1, ...) in the "
                "environment's training",
            )
    if config.deploy_inference and config.inference is not None:
        for key, instance_type in _hosting_types(config):
            if instance_type is None or offered_in(instance_type, region):
                continue
            nearest = nearest_offered(instance_type, region)
            problems.add(
                key,
                instance_type,
                f"is not offered for SageMaker hosting in {region} (environment "
                f"{settings.name!r}; shipped prices of fm_platform/hardware)"
                + (f"; nearest offered there: {nearest}" if nearest else ""),
            )


def _hosting_types(config: AppConfig) -> list[tuple[str, str | None]]:
    """Each hosting instance type of the configuration's endpoints, by key."""
    inference = config.inference
    found: list[tuple[str, str | None]] = []
    for kind in ("ic_endpoints", "single_model_endpoints", "multi_model_endpoints"):
        for i, endpoint in enumerate(getattr(inference, kind) or ()):
            if endpoint is None:
                continue
            found.append((f"inference.{kind}[{i}].instance_type", endpoint.instance_type))
            for j, other in enumerate(getattr(endpoint, "fallback_instance_types", None) or ()):
                found.append((f"inference.{kind}[{i}].fallback_instance_types[{j}]", other))
            for j, pool in enumerate(getattr(endpoint, "fallback_pools", None) or ()):
                key = f"inference.{kind}[{i}].fallback_pools[{j}].instance_type"
                found.append((key, pool.instance_type))
    for i, endpoint in enumerate(inference.async_endpoints or ()):
        if endpoint is not None:
            found.append((f"inference.async_endpoints[{i}].instance_type", endpoint.instance_type))
    return found


def _check_pipeline(problems: Problems, pipeline: PipelineConfig, names: list[str]) -> None:
    if pipeline.connection_arn is not None and not _CONNECTION_ARN.match(pipeline.connection_arn):
        problems.add(
            "connection_arn",
            pipeline.connection_arn,
            "must be an AWS CodeConnections connection ARN "
            "(arn:aws:codeconnections:REGION:ACCOUNT:connection/ID; create the connection "
            "in the console and complete its handshake first)",
        )
    if pipeline.repository is not None and not _REPOSITORY.match(pipeline.repository):
        problems.add("repository", pipeline.repository, "must be owner/name")
    if pipeline.account is not None and not _ACCOUNT.match(pipeline.account):
        problems.add("account", pipeline.account, "must be a 12-digit AWS account ID")
    problems.check_choice("region", pipeline.region, price_regions())
    for i, name in enumerate(pipeline.approval_before or ()):
        problems.check_choice(f"approval_before[{i}]", name, names)
    if pipeline.stack_name is not None and not _STACK_NAME.match(pipeline.stack_name):
        problems.add(
            "stack_name",
            pipeline.stack_name,
            "must start with a letter and hold only letters, digits and hyphens, at most 128 "
            "characters (a CloudFormation stack name)",
        )
