"""The component provider: serves the Python components over Pulumi's provider protocol.

The engine starts ``pulumi-resource-trainjobs`` (this module's :func:`serve`) and sends a
``Construct`` for each ``trainjobs:index:*`` resource a program in any language declares.
Each is built by the same Python component a Python program would use
(:class:`~trainjobs.components.TrainingJob`, :class:`~trainjobs.components.RedisBackend`
…), so the children, their names and their URNs are those of the Python components, and
the objects are those ``trainjobs render`` prints.

Inputs arrive as the engine decodes them: numbers as floats (a whole number is given back
as an int, so ``replicas: 2`` and ``containerPort: 2222`` stay ints), another component
as its URN (a job's ``backend``), known values with dependencies or secrets as Outputs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import grpc  # type: ignore[import-untyped]  # what pulumi.provider.main serves with
import pulumi
import pulumi.provider as provider
from pulumi.resource import DependencyResource
from pulumi.runtime import ResourceModule, register_resource_module, settings
from pulumi.runtime._grpc_settings import _GRPC_CHANNEL_OPTIONS
from pulumi.runtime.proto import provider_pb2_grpc

from trainjobs.components import PlatformComponent, TrainingJob, TrainingStack
from trainjobs.components.pod_set import serve_with
from trainjobs.components.secrets import generate_with
from trainjobs.errors import SpecError
from trainjobs.provider.generated import (
    GeneratingServicer,
    ServedKeyPair,
    ServedPassword,
    ServedPodSet,
)
from trainjobs.provider.schema import PACKAGE, PLATFORM_RESOURCES, VERSION, schema_text
from trainjobs.spec.load import parse_stack
from trainjobs.spec.stack import DEFAULT_K8S_VERSION

__all__ = ["TrainjobsProvider", "plain", "serve"]


def plain(value: Any) -> Any:
    """``value`` as a component takes it: an integral float as an int, in depth, and a
    known Output whose value is a list or map unwrapped (its strings stay Inputs)."""
    if isinstance(value, pulumi.Output):
        data = _known(value)
        if data is not None and isinstance(data.value, list | dict) and not data.is_secret:
            return plain(data.value)
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _known(output: pulumi.Output[Any]) -> Any:
    """The resolved data of an Output the provider was given, else None.

    The provider server wraps an input with dependencies in an Output whose data is
    already set; a component's arguments (a job document, a component's URN) are read
    here, before any await.
    """
    data = getattr(output, "_data", None)
    if not isinstance(data, asyncio.Future) or not data.done() or data.cancelled():
        return None
    return data.result() if data.exception() is None else None


def _urn(value: Any) -> str | None:
    """The URN a resource reference arrived as: a resource (:class:`_References` gives
    the component back), a string, a known Output of either, or an unknown Output whose
    one dependency is the component."""
    if isinstance(value, pulumi.Resource):
        return _known_urn(value)
    if isinstance(value, str):
        return value
    if not isinstance(value, pulumi.Output):
        return None
    data = _known(value)
    if data is None:
        return None
    if isinstance(data.value, str | pulumi.Resource):
        return _urn(data.value)
    urns = [u for r in data.resources if (u := _known_urn(r))]
    return urns[0] if len(urns) == 1 else None


def _known_urn(resource: pulumi.Resource) -> str | None:
    data = _known(resource.urn)
    return data.value if data is not None and isinstance(data.value, str) else None


def _type_and_name(urn: str) -> tuple[str, str]:
    """A URN's resource type (the last of its qualified type) and name."""
    *_, qualified, name = urn.split("::")
    return qualified.rsplit("$", 1)[-1], name


@contextlib.contextmanager
def _children_of(parent: pulumi.Resource) -> Iterator[None]:
    """Resources made inside without a parent become ``parent``'s children: the stack
    program's components are made as the root's, and here as the Stack component's."""
    token = settings.ROOT.set(parent)
    try:
        yield
    finally:
        settings.ROOT.reset(token)


@contextlib.contextmanager
def _exports_into(exported: dict[str, Any]) -> Iterator[None]:
    """``pulumi.export`` collects into ``exported``: a component is no stack, and the
    stack program's exports (each unit's addresses) become the Stack's ``outputs``."""
    original = pulumi.export

    def collect(name: str, value: Any) -> None:
        exported[name] = value

    pulumi.export = collect
    try:
        yield
    finally:
        pulumi.export = original


class _StackComponent(pulumi.ComponentResource):
    """``trainjobs:index:Stack``: a stack's units, each the component the stack program
    makes, as this component's children."""

    objects: pulumi.Output[list[str]]

    def __init__(self, name: str, inputs: Mapping[str, Any], opts: pulumi.ResourceOptions):
        super().__init__(f"{PACKAGE}:index:Stack", name, None, opts)
        config = {k: plain(v) for k, v in inputs.items() if k != "target" and v is not None}
        try:
            stack = parse_stack(config, source=f"Stack {name}")
        except SpecError as exc:
            raise pulumi.RunError(f"{name}: {exc}") from None
        target = inputs.get("target")
        exported: dict[str, Any] = {}
        with _children_of(self), _exports_into(exported):
            made = TrainingStack(stack, target=target)
        parts: list[pulumi.Output[list[str]]] = [
            *(j.objects for j in made.jobs),
            *(p.objects for p in made.platform),
        ]
        self.objects = pulumi.Output.all(*parts).apply(lambda lists: [o for x in lists for o in x])
        self.outputs = pulumi.Output.from_input(exported)
        self.register_outputs({"objects": self.objects, "outputs": self.outputs})


class _References(ResourceModule):
    """Gives a reference to a ``trainjobs:index:*`` component back as the component.

    Pulumi YAML declares a component as a custom resource, so its reference reaches the
    provider as a custom resource reference with an empty ID, which the SDK would decode
    as an unknown value (losing the URN) unless a module of the package decodes it.
    """

    def __init__(self, host: TrainjobsProvider) -> None:
        self.host = host

    def version(self) -> None:
        # Any version: one provider process serves one version of the package.
        return None

    def construct(self, name: str, typ: str, urn: str) -> pulumi.Resource:
        found = self.host.components.get((typ, name))
        return found if found is not None else DependencyResource(urn)


class TrainjobsProvider(provider.Provider):
    """Constructs ``trainjobs:index:<Kind>`` components; remembers each platform
    component by URN, so a later job of the same update can name it (``backend``)."""

    def __init__(self) -> None:
        super().__init__(VERSION, schema_text())
        self.components: dict[tuple[str, str], PlatformComponent] = {}
        """Each platform component made so far, by type token and name (the parts of its
        URN known before the engine answers)."""

    def construct(
        self,
        name: str,
        resource_type: str,
        inputs: pulumi.Inputs,
        options: pulumi.ResourceOptions | None = None,
    ) -> provider.ConstructResult:
        kind = resource_type.removeprefix(f"{PACKAGE}:index:")
        opts = options or pulumi.ResourceOptions()
        if kind == "TrainingJob":
            job = self._job(name, inputs, opts)
            state: dict[str, Any] = {
                "objects": job.objects,
                "addresses": job.addresses,
                "target": job.rendered.target,
                "status": job.status,
            }
            return provider.ConstructResult(urn=job.urn, state=state)
        if kind == "Stack":
            stack = _StackComponent(name, inputs, opts)
            state = {"objects": stack.objects, "outputs": stack.outputs}
            return provider.ConstructResult(urn=stack.urn, state=state)
        if kind in PLATFORM_RESOURCES:
            component = self._platform(kind, name, inputs, opts)
            state = {"objects": component.objects, "outputs": component.outputs}
            return provider.ConstructResult(urn=component.urn, state=state)
        raise pulumi.RunError(f"{name}: the trainjobs provider has no resource {resource_type}")

    def _component(self, name: str, field: str, value: Any) -> PlatformComponent | None:
        if value is None:
            return None
        if isinstance(value, PlatformComponent):
            return value
        urn = _urn(value)
        found = self.components.get(_type_and_name(urn)) if urn else None
        if found is None:
            raise pulumi.RunError(
                f"{name}: {field} must be a trainjobs component declared in the same "
                f"program (a RedisBackend, GpuNodePool …), not {urn or value!r}"
            )
        return found

    def _job(self, name: str, inputs: Mapping[str, Any], opts: pulumi.ResourceOptions) -> Any:
        return TrainingJob(
            name,
            plain(inputs.get("job")),
            namespace=inputs.get("namespace"),
            target=inputs.get("target"),
            backend=self._component(name, "backend", inputs.get("backend")),
            node_pool=self._component(name, "nodePool", inputs.get("nodePool")),
            queue=self._component(name, "queue", inputs.get("queue")),
            gang=inputs.get("gang"),
            wait=inputs.get("wait"),
            wait_timeout=inputs.get("waitTimeout"),
            registration=inputs.get("registration"),
            k8s_version=inputs.get("k8sVersion") or DEFAULT_K8S_VERSION,
            cluster_domain=inputs.get("clusterDomain") or "cluster.local",
            opts=opts,
        )

    def _platform(
        self, kind: str, name: str, inputs: Mapping[str, Any], opts: pulumi.ResourceOptions
    ) -> PlatformComponent:
        cls = PlatformComponent.for_kind(kind)
        pool = self._component(name, "nodePool", inputs.get("nodePool"))
        extra: dict[str, Any] = {}
        if kind == "RedisBackend" and inputs.get("password") is not None:
            extra["password"] = inputs["password"]
        component = cls(
            name,
            plain(inputs.get("spec")),
            namespace=inputs.get("namespace"),
            uses=[pool] if pool is not None else [],
            k8s_version=inputs.get("k8sVersion") or DEFAULT_K8S_VERSION,
            opts=opts,
            **extra,
        )
        self.components[(f"{PACKAGE}:index:{kind}", name)] = component
        return component


def serve(args: list[str]) -> None:
    """Serve the provider until the engine stops it (``pulumi-resource-trainjobs``):
    ``pulumi.provider.main``, with the servicer that also runs the generated secrets."""
    parser = argparse.ArgumentParser(description="the trainjobs component provider")
    parser.add_argument("engine", help="the Pulumi engine's address")
    engine = parser.parse_known_args(args)[0].engine
    host = TrainjobsProvider()
    register_resource_module(PACKAGE, "index", _References(host))
    generate_with(ServedPassword, ServedKeyPair)
    serve_with(ServedPodSet)

    async def run() -> None:
        # pulumi.provider.main's server (its message-size options), with our servicer:
        # main takes no servicer of one's own.
        server = grpc.aio.server(options=_GRPC_CHANNEL_OPTIONS)
        servicer = GeneratingServicer(host, args, engine_address=engine)
        provider_pb2_grpc.add_ResourceProviderServicer_to_server(servicer, server)
        port = server.add_insecure_port(address="127.0.0.1:0")
        await server.start()
        # The engine reads the port from the first line of stdout.
        sys.stdout.buffer.write(f"{port}\n".encode())
        sys.stdout.buffer.flush()
        await server.wait_for_termination()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())
