"""Read a synthesized CDK cloud assembly (``cdk.out``): its stacks, their resources, the
construct path of each resource, and the references between resources, across stacks too
(``Fn::ImportValue`` of another stack's export, ``Fn::GetStackOutput``).

Used by ``docs_diagrams.py``; knows CloudFormation, not this project's construct names."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: A resource's key in the whole assembly: (stack name, logical ID).
Key = tuple[str, str]

_SUB_VARIABLE = re.compile(r"\$\{([A-Za-z0-9]+)(?:\.[A-Za-z0-9.]+)?\}")


@dataclass
class Stack:
    """One CloudFormation stack of the assembly."""

    name: str
    template: dict[str, Any]
    #: logical ID -> construct path below the stack (``Network/Vpc/Resource``)
    paths: dict[str, str]
    #: names of the stacks this one depends on (manifest ``dependencies``)
    depends_on: list[str]
    #: the construct path of the stack (``prod/FmpTraining`` in a stage), its display name
    path: str = ""
    #: the stack's region when the app fixes it, else None (the CLI's default region)
    region: str | None = None

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        resources: dict[str, dict[str, Any]] = self.template.get("Resources", {})
        return resources


@dataclass
class Assembly:
    """Every stack of a cloud assembly, with cross-stack references resolved."""

    stacks: dict[str, Stack]
    #: export name -> the (stack, logical ID) its value refers to
    exports: dict[str, Key] = field(default_factory=dict)

    @classmethod
    def load(cls, directory: Path) -> Assembly:
        """Every stack of the assembly in ``directory``, those of its stages (nested
        assemblies, ``cdk:cloud-assembly`` artifacts) included."""
        stacks: dict[str, Stack] = {}
        _load_stacks(directory, stacks)
        assembly = cls(stacks=stacks)
        assembly.exports = assembly._exports()
        return assembly

    def of_stage(self, stage: str) -> Assembly:
        """The stacks directly in stage ``stage`` (the CDK CLI's pattern ``'**/<stage>/*'``)."""
        stacks = {n: s for n, s in self.stacks.items() if s.path.split("/")[-2:-1] == [stage]}
        assembly = Assembly(stacks=stacks)
        assembly.exports = assembly._exports()
        return assembly

    def _exports(self) -> dict[str, Key]:
        exports: dict[str, Key] = {}
        for stack in self.stacks.values():
            for output in stack.template.get("Outputs", {}).values():
                export_name = output.get("Export", {}).get("Name")
                targets = list(self.references(stack.name, output.get("Value")))
                if isinstance(export_name, str) and len(targets) == 1:
                    exports[export_name] = targets[0]
        return exports

    def resource(self, key: Key) -> dict[str, Any]:
        return self.stacks[key[0]].resources[key[1]]

    def of_type(self, stack_names: list[str], resource_type: str) -> list[Key]:
        """Every resource of ``resource_type`` in the given stacks, in template order."""
        return [
            (name, logical_id)
            for name in stack_names
            for logical_id, resource in self.stacks[name].resources.items()
            if resource.get("Type") == resource_type
        ]

    def references(self, stack: str, value: Any) -> Iterator[Key]:
        """The resources ``value`` (part of a template of ``stack``) refers to."""
        if isinstance(value, list):
            for item in value:
                yield from self.references(stack, item)
        elif isinstance(value, dict):
            if len(value) == 1:
                ((function, argument),) = value.items()
                target = self._target(stack, function, argument)
                if target is not None:
                    yield target
                    return
                if function == "Fn::Sub":
                    text = argument[0] if isinstance(argument, list) else argument
                    for name in _SUB_VARIABLE.findall(str(text)):
                        if name in self.stacks[stack].resources:
                            yield (stack, name)
            for item in value.values():
                yield from self.references(stack, item)

    def _target(self, stack: str, function: str, argument: Any) -> Key | None:
        if function == "Ref" and isinstance(argument, str):
            name = argument
        elif function == "Fn::GetAtt" and isinstance(argument, list) and argument:
            name = str(argument[0])
        elif function == "Fn::GetAtt" and isinstance(argument, str):
            name = argument.split(".")[0]
        elif function == "Fn::ImportValue" and isinstance(argument, str):
            return self.exports.get(argument)
        elif function == "Fn::GetStackOutput" and isinstance(argument, dict):
            return self._stack_output(argument.get("StackName"), argument.get("OutputName"))
        else:
            return None
        return (stack, name) if name in self.stacks[stack].resources else None

    def _stack_output(self, stack: Any, output: Any) -> Key | None:
        """The resource another stack's output refers to (cross-stack references written
        as ``Fn::GetStackOutput`` instead of exports)."""
        if not isinstance(stack, str) or stack not in self.stacks:
            return None
        value = self.stacks[stack].template.get("Outputs", {}).get(output, {}).get("Value")
        targets = list(self.references(stack, value))
        return targets[0] if len(targets) == 1 else None

    def refers_to(self, key: Key, target: Key) -> bool:
        return target in set(self.references(key[0], self.resource(key).get("Properties")))

    def referrers(self, target: Key, stack_names: list[str], resource_type: str) -> list[Key]:
        """Resources of ``resource_type`` whose properties refer to ``target``."""
        return [
            key for key in self.of_type(stack_names, resource_type) if self.refers_to(key, target)
        ]

    def groups(self) -> list[list[str]]:
        """The stacks in groups that refer to each other (exports, dependencies)."""
        parent = {name: name for name in self.stacks}

        def root(name: str) -> str:
            while parent[name] != name:
                name = parent[name]
            return name

        for stack in self.stacks.values():
            linked = {dep for dep in stack.depends_on if dep in self.stacks}
            linked |= {key[0] for key in self.references(stack.name, stack.template)}
            for other in linked:
                parent[root(other)] = root(stack.name)
        groups: dict[str, list[str]] = {}
        for name in self.stacks:
            groups.setdefault(root(name), []).append(name)
        return sorted(groups.values())

    def path(self, key: Key) -> str:
        """The construct path of a resource below its stack, or its logical ID."""
        return self.stacks[key[0]].paths.get(key[1], key[1])


def _logical_id_paths(metadata: dict[str, Any]) -> dict[str, str]:
    paths: dict[str, str] = {}
    for path, entries in metadata.items():
        for entry in entries:
            if entry.get("type") == "aws:cdk:logicalId":
                # "/Stack/Network/Vpc/Resource" -> "Network/Vpc"
                parts = path.strip("/").split("/")[1:]
                if parts and parts[-1] in ("Resource", "Default"):
                    parts = parts[:-1]
                paths[str(entry["data"])] = "/".join(parts)
    return paths


def literal(value: Any) -> str | None:
    """``value`` when it is a plain string or number, else None (an unresolved token)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _load_stacks(directory: Path, stacks: dict[str, Stack]) -> None:
    manifest = json.loads((directory / "manifest.json").read_text())
    artifacts = manifest.get("artifacts", {})
    names: dict[str, str] = {}
    loaded: list[tuple[Stack, list[str]]] = []
    for artifact_id, artifact in artifacts.items():
        properties = artifact.get("properties", {})
        if artifact.get("type") == "cdk:cloud-assembly":
            _load_stacks(directory / properties["directoryName"], stacks)
            continue
        if artifact.get("type") != "aws:cloudformation:stack":
            continue
        template = json.loads((directory / properties["templateFile"]).read_text())
        metadata = dict(artifact.get("metadata", {}))
        extra = artifact.get("additionalMetadataFile")
        if extra:
            metadata.update(json.loads((directory / extra).read_text()))
        name = properties.get("stackName") or artifact.get("displayName") or artifact_id
        names[artifact_id] = name
        region = str(artifact.get("environment", "")).rsplit("/", 1)[-1]
        stack = Stack(
            name=name,
            template=template,
            paths=_logical_id_paths(metadata),
            depends_on=[],
            path=artifact.get("displayName") or name,
            region=None if region in ("", "unknown-region") else region,
        )
        loaded.append((stack, list(artifact.get("dependencies", []))))
        stacks[name] = stack
    # The manifest names dependencies by artifact ID; a stage's stack name differs from it.
    for stack, dependencies in loaded:
        stack.depends_on = [names.get(dependency, dependency) for dependency in dependencies]
