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

from trainjobs.k8s import generated
from trainjobs.k8s.ownership import STACK_ANNOTATION, STACK_LABEL, stack_label


@dataclass
class Registered:
    """One resource the program registered (``parent`` is the parent's URN, or "")."""

    type: str
    name: str
    inputs: dict[str, Any]
    parent: str
    custom: bool
    options: dict[str, Any] = field(default_factory=dict)
    urn: str = ""
    """The URN the mock monitor computed (type chain through the parent, and name)."""
    stack_frames: int = 0
    """How many Python frames the SDK sent as the resource's stack trace."""


@dataclass
class _Mocks(pulumi.runtime.Mocks):
    resources: list[Registered] = field(default_factory=list)
    requests: list[Any] = field(default_factory=list)
    live: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        # Registrations run concurrently: find this resource's own request.
        request = next(
            (
                r
                for r in reversed(self.requests)
                if getattr(r, "type", None) == args.typ and getattr(r, "name", None) == args.name
            ),
            None,
        )
        outputs = dict(args.inputs)
        outputs.update(generated_outputs(args.typ, args.name))
        # What the cluster adds to the object (its status), as the provider returns it.
        outputs.update(self.live.get(args.typ, {}))
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
                    "secret_outputs": list(getattr(request, "additionalSecretOutputs", [])),
                    "secret_inputs": secret_keys(dict(args.inputs)),
                    "custom_timeouts": _timeouts(request),
                    "aliases": _aliases(request),
                    "provider": str(getattr(request, "provider", "") or ""),
                },
                _urn(request),
                len(request.stackTrace.frames) if request is not None else 0,
            )
        )
        return f"{args.name}-id", outputs

    def call(
        self, args: pulumi.runtime.MockCallArgs
    ) -> tuple[dict[Any, Any], list[tuple[str, str]] | None]:
        # A function the engine serves itself (the stack's last outputs): ``live`` keyed
        # by its token says what it returns, as for a resource type.
        self.calls.append(args.token)
        return dict(self.live.get(args.token, {})), []


def _urn(request: Any) -> str:
    """The URN the mock monitor gives ``request`` (it computes it the same way on register)."""
    if request is None:
        return ""
    monitor: Any = pulumi.runtime.settings.get_monitor()
    return str(monitor.make_urn(request.parent, request.type, request.name))


def _timeouts(request: Any) -> dict[str, str]:
    timeouts = getattr(request, "customTimeouts", None)
    if timeouts is None:
        return {}
    return {k: getattr(timeouts, k) for k in ("create", "update", "delete") if getattr(timeouts, k)}


def _aliases(request: Any) -> list[str]:
    """The names the resource was aliased from.

    Only renames count; the provider's own aliases from older API versions of a
    type (``rbac/v1beta1`` …) keep the name and are left out.
    """
    found = []
    for alias in getattr(request, "aliases", []):
        name = alias.urn.rsplit("::", 1)[-1] if alias.urn else alias.spec.name
        if name:
            found.append(name)
    return found


# What the mocks "generate" for each generating resource, so tests can tell a
# substituted value from the placeholder it replaced.
_GENERATED = {
    "pulumi-python:dynamic/trainjobs:GeneratedKeyPair": {
        "private_key_pem": "mock-private-key:{name}",
        "public_key_openssh": "mock-public-key:{name}",
    },
    "pulumi-python:dynamic/trainjobs:GeneratedPassword": {"result": "mock-password:{name}"},
}
_PLACEHOLDER_VALUE = {
    "ecdsa-p521-private": "mock-private-key:{group}",
    "ecdsa-p521-public": "mock-public-key:{group}",
    "password": "mock-password:{group}",
}


def generated_outputs(type_: str, name: str) -> dict[str, str]:
    """The mock outputs of a generating resource (a key pair, a password)."""
    return {k: v.format(name=name) for k, v in _GENERATED.get(type_, {}).items()}


def with_generated(value: Any) -> Any:
    """``value`` with each placeholder replaced by what the mocks generate for it."""
    if isinstance(value, dict):
        return {k: with_generated(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_generated(v) for v in value]
    found = generated.parse(value)
    if found is None:
        return value
    return _PLACEHOLDER_VALUE[found.kind].format(group=found.group)


_SECRET_SIG = pulumi.runtime.rpc._special_sig_key
_SECRET_VALUE = pulumi.runtime.rpc._special_secret_sig


def secret_keys(inputs: dict[str, Any]) -> list[str]:
    """Top-level input keys whose value holds a secret (before :func:`normalise`)."""

    def holds(value: Any) -> bool:
        if isinstance(value, dict):
            return value.get(_SECRET_SIG) == _SECRET_VALUE or any(map(holds, value.values()))
        return isinstance(value, list) and any(map(holds, value))

    return sorted(k for k, v in inputs.items() if holds(v))


def as_registered(
    manifest: dict[str, Any],
    annotations: dict[str, str],
    project: str = "trainjobs",
    stack: str = "test",
) -> dict[str, Any]:
    """A rendered manifest as the components register it: generated values as the mocks
    make them, the given (Pulumi lifecycle) annotations merged into its metadata, and the
    label and annotation naming the stack that made it (``project``/``stack``, as
    :func:`run_program` names them; the mocks have no organization)."""
    out: dict[str, Any] = with_generated(manifest)
    meta = dict(out["metadata"])
    meta["labels"] = {**meta.get("labels", {}), STACK_LABEL: stack_label(project, stack)}
    meta["annotations"] = {
        **meta.get("annotations", {}),
        STACK_ANNOTATION: f"{project}/{stack}",
        **annotations,
    }
    return {**out, "metadata": meta}


def normalise(value: Any) -> Any:
    """Whole floats back to ints and secrets unwrapped, recursively (undoes the mocks)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        if value.get(_SECRET_SIG) == _SECRET_VALUE:
            return normalise(value["value"])
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def run_program(
    program: Callable[[], Any],
    config: dict[str, Any] | None = None,
    stack: str = "test",
    project: str = "trainjobs",
    live: dict[str, dict[str, Any]] | None = None,
    secret_keys: list[str] | None = None,
    into: list[Registered] | None = None,
    calls: list[str] | None = None,
) -> list[Registered]:
    """Run ``program`` under mocks with the given ``trainjobs:*`` config; return registrations.

    ``live`` (resource type → outputs) is what the cluster reports for objects of that
    type, e.g. a job's ``status``; keyed by a function's token, what that function
    returns (``pulumi:pulumi:readStackOutputs``: the last update's outputs);
    ``secret_keys`` are config keys set with ``--secret``;
    ``into`` collects the registrations even when the program fails; ``calls`` the
    tokens of the functions it called.
    """
    mocks = _Mocks(live=dict(live or {}))
    if into is not None:
        mocks.resources = into
    if calls is not None:
        mocks.calls = calls
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=False)
    # MockResourceArgs has no parent or options; keep the raw request to read them.
    monitor: Any = pulumi.runtime.settings.get_monitor()
    register = monitor.RegisterResource

    def recording(request: Any) -> Any:
        mocks.requests.append(request)
        return register(request)

    monitor.RegisterResource = recording
    read = monitor.ReadResource

    def reading(request: Any) -> Any:
        mocks.requests.append(request)
        return read(request)

    # A read (``Namespace.get``) is recorded too: its URN is the one the resource has.
    monitor.ReadResource = reading
    pulumi.runtime.set_all_config(
        {k: v if isinstance(v, str) else json.dumps(v) for k, v in (config or {}).items()},
        secret_keys or [],
    )
    try:

        @pulumi.runtime.test  # type: ignore[untyped-decorator]
        def _run() -> pulumi.Output[Any]:
            program()
            return pulumi.Output.from_input(0)

        _run()
    finally:
        pulumi.runtime.set_all_config({}, [])
    return mocks.resources


def manifests_of(resources: list[Registered]) -> list[dict[str, Any]]:
    """The Kubernetes objects among the registrations, in registration order."""
    return [r.inputs for r in resources if r.custom and r.type.startswith("kubernetes:")]
