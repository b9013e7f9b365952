"""Builds the default app: the training and inference stacks from an :class:`AppConfig`,
with the cdk-nag packs applied. :func:`main` is the entry point ``app.py`` runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import aws_cdk as cdk

from fm_platform.config import (
    CONFIG_FILE_CONTEXT_KEY,
    AppConfig,
    config_source,
    load_config,
)
from fm_platform.config.environments import (
    EnvironmentsConfig,
    has_environments,
    load_environments,
)
from fm_platform.core.compliance import apply_compliance_packs
from fm_platform.rules.problems import ValidationError
from fm_platform.stacks.environment import (
    DefaultStacks,
    EnvironmentStage,
    add_default_stacks,
    plan_environments,
)
from fm_platform.stacks.fleet import fleet_stacks_from_file
from fm_platform.stacks.pipeline import PipelineStack

CATALOG_CONTEXT_KEY = "catalog"


def build_app(app: cdk.App, config: AppConfig | None = None) -> DefaultStacks:
    """Add the platform's stacks to ``app`` and run the compliance packs on it.

    With context ``catalog`` (named in ``cdk.json``, or ``-c catalog=FILE`` for one
    command) the app holds only the catalog's planned fleet stacks
    (:mod:`fm_platform.stacks.fleet`) and reads no configuration. Otherwise it holds the
    default stacks from ``config``, by default what the app's context names
    (:meth:`AppConfig.from_context`): the configuration file ``cdk.json`` names (the
    project's ``fmp-config.json`` holds the demo fleet) or a ``fm_platform`` context
    object; without either, the training example and no endpoint. Stacks are
    environment-agnostic: synth needs no credentials and no lookups.

    A configuration that names ``environments`` (:mod:`fm_platform.config.environments`)
    gives one stage per environment instead, bound to its account and region, each with
    its stacks and its catalog's fleet (:func:`build_environments`).
    """
    catalog = app.node.try_get_context(CATALOG_CONTEXT_KEY)
    if catalog:
        fleet_stacks_from_file(app, catalog)
        apply_compliance_packs(app)
        return DefaultStacks(training=None, inference=None)
    if config is None:
        source = config_source(app)
        if has_environments(source.data):
            stages = build_environments(app, load_environments(source.data))
            return DefaultStacks(training=None, inference=None, stages=stages)
        config = AppConfig() if source.data is None else load_config(source.data)
    stacks = add_default_stacks(app, config)
    apply_compliance_packs(app)
    return stacks


def build_environments(
    app: cdk.App, environments: EnvironmentsConfig
) -> dict[str, EnvironmentStage]:
    """One :class:`EnvironmentStage` per environment, in the configuration's order, each
    catalog planned for its environment's region first (every refused catalog reported at
    once); with a ``pipeline``, the stages are the pipeline's (:class:`PipelineStack`,
    deploying them in that order), else the app's. Runs the compliance packs on the app."""
    plans = plan_environments(environments.environments)
    if environments.pipeline is not None:
        config_file = app.node.try_get_context(CONFIG_FILE_CONTEXT_KEY)
        pipeline = PipelineStack(
            app, environments, plans, config_file=str(config_file) if config_file else None
        )
        stages = pipeline.stages
    else:
        stages = {
            e.name: EnvironmentStage(app, e, fleet=plans.get(e.name))
            for e in environments.environments
        }
    apply_compliance_packs(app)
    return stages


def main() -> int:
    """Synthesize the app, saying on stderr what it is built from (so every ``cdk``
    command shows it): the catalog of the fleet mode, or the configuration. A bad
    configuration or catalog prints ``fm_platform: invalid ...:`` and one line per problem,
    a failed synth-time check one line; both return 1 without a traceback."""
    app = cdk.App()
    try:
        catalog = app.node.try_get_context(CATALOG_CONTEXT_KEY)
        if catalog:
            print(_fleet_mode_notice(str(catalog)), file=sys.stderr)
            build_app(app)
        else:
            source = config_source(app)
            print(f"fm_platform: using {source.description}", file=sys.stderr)
            if has_environments(source.data):
                build_environments(app, load_environments(source.data))
            else:
                config = AppConfig() if source.data is None else load_config(source.data)
                build_app(app, config)
        app.synth()
    except ValidationError as error:
        print(f"fm_platform: {error}", file=sys.stderr)
        return 1
    except RuntimeError as error:
        if "Validation failed" not in str(error):
            raise
        print(f"fm_platform: synthesis stopped: {error}", file=sys.stderr)
        return 1
    return 0


def _fleet_mode_notice(catalog: str) -> str:
    """Which catalog the app plans, and whether ``cdk.json`` names it (else this command
    alone builds the fleet, and the next one without ``-c catalog`` the default stacks)."""
    notice = f"fm_platform: fleet mode: stacks planned from catalog {catalog}; the "
    notice += "configuration file is not read"
    if _catalog_in_cdk_json() != catalog:
        notice += (
            f" (given for this command only: without -c {CATALOG_CONTEXT_KEY}=... the app "
            "builds the default stacks instead; name the catalog under "
            f'"{CATALOG_CONTEXT_KEY}" in cdk.json\'s "context" to make the fleet the '
            "project's app for every command)"
        )
    return notice


def _catalog_in_cdk_json() -> str | None:
    path = Path("cdk.json")
    try:
        context = json.loads(path.read_text()).get("context", {})
    except (OSError, ValueError):
        return None
    value = context.get(CATALOG_CONTEXT_KEY)
    return str(value) if value else None
