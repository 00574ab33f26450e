"""Run Pulumi code under ``pulumi.runtime.set_mocks`` and collect what it registers.

Mocks turn every number into a float; :func:`normalise` turns whole floats back
into ints. That normalisation lives here, in the tests, never in the renderer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi


@dataclass
class Registered:
    """One resource the program registered (``parent`` is the parent's URN, or "")."""

    type: str
    name: str
    inputs: dict[str, Any]
    parent: str
    custom: bool
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Mocks(pulumi.runtime.Mocks):
    resources: list[Registered] = field(default_factory=list)
    requests: list[Any] = field(default_factory=list)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        request = self.requests[-1] if self.requests else None
        self.resources.append(
            Registered(
                args.typ,
                args.name,
                normalise(dict(args.inputs)),
                getattr(request, "parent", ""),
                bool(args.custom),
                {
                    "retain_on_delete": bool(getattr(request, "retainOnDelete", False)),
                    "dependencies": list(getattr(request, "dependencies", [])),
                },
            )
        )
        return f"{args.name}-id", dict(args.inputs)

    def call(
        self, args: pulumi.runtime.MockCallArgs
    ) -> tuple[dict[Any, Any], list[tuple[str, str]] | None]:
        return {}, None


# How Pulumi marks a secret value on the wire (pulumi.runtime.rpc); pulumi_kubernetes
# makes every Secret's data and stringData secret.
_SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


def normalise(value: Any) -> Any:
    """Whole floats back to ints and secrets unwrapped, recursively (undoes the mocks)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict) and value.get(_SECRET_SIG_KEY) == _SECRET_SIG:
        return normalise(value.get("value"))
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def run_program(
    program: Callable[[], Any],
    config: dict[str, Any] | None = None,
    stack: str = "test",
    project: str = "trainjobs",
) -> list[Registered]:
    """Run ``program`` under mocks with the given ``trainjobs:*`` config; return registrations."""
    mocks = _Mocks()
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=False)
    # MockResourceArgs has no parent or options; keep the raw request to read them.
    monitor: Any = pulumi.runtime.settings.get_monitor()
    register = monitor.RegisterResource

    def recording(request: Any) -> Any:
        mocks.requests.append(request)
        return register(request)

    monitor.RegisterResource = recording
    pulumi.runtime.set_all_config(
        {k: v if isinstance(v, str) else json.dumps(v) for k, v in (config or {}).items()}
    )
    try:

        @pulumi.runtime.test  # type: ignore[untyped-decorator]
        def _run() -> pulumi.Output[Any]:
            program()
            return pulumi.Output.from_input(0)

        _run()
    finally:
        pulumi.runtime.set_all_config({})
    return mocks.resources


def manifests_of(resources: list[Registered]) -> list[dict[str, Any]]:
    """The Kubernetes objects among the registrations, in registration order."""
    return [r.inputs for r in resources if r.custom and r.type.startswith("kubernetes:")]
