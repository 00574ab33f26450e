"""The generated secrets of the components the provider makes: the provider's own resources.

A Python program's components generate passwords and key pairs with Pulumi dynamic
resources (:mod:`trainjobs.components.generators`), which the engine runs with the
``pulumi-resource-pulumi-python`` plugin in the *program's* Python. A TypeScript, Go or
YAML program has no such Python: that plugin would run whatever ``python3`` is on PATH,
which need not hold trainjobs (or pulumi). So the components the provider makes
register ``trainjobs:index:GeneratedPassword`` and ``trainjobs:index:GeneratedKeyPair``
instead, which the engine sends to this provider (the trainjobs plugin it already runs):
:class:`GeneratingServicer` answers their Check, Diff, Create, Read, Update and Delete
with the same generating logic (one value per stack, replaced only when what decides it
changes). The names are the dynamic resources'; only the type differs.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import grpc  # type: ignore[import-untyped]  # the SDK serves with it; no stubs
import pulumi
from google.protobuf import (  # type: ignore[import-untyped]  # the SDK ships no stubs
    empty_pb2,
    json_format,
    struct_pb2,
)
from pulumi.provider.server import ProviderServicer
from pulumi.runtime.proto import provider_pb2

from trainjobs.components.generators import KeyPairProvider, PasswordProvider
from trainjobs.components.pod_set import PodSetError, PodSetProvider
from trainjobs.provider.schema import PACKAGE, VERSION

__all__ = ["GENERATORS", "GeneratingServicer", "ServedKeyPair", "ServedPassword", "ServedPodSet"]

PASSWORD = f"{PACKAGE}:index:GeneratedPassword"
KEY_PAIR = f"{PACKAGE}:index:GeneratedKeyPair"
POD_SET = f"{PACKAGE}:index:PodSet"
_Served = PasswordProvider | KeyPairProvider | PodSetProvider
GENERATORS: dict[str, _Served] = {
    PASSWORD: PasswordProvider(),
    KEY_PAIR: KeyPairProvider(),
    POD_SET: PodSetProvider(),
}
"""Each resource type the provider serves, with the logic that generates its value."""

# Pulumi's wire markers of a secret value (a map holding the signature key).
_SIG_KEY = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


def _opts(opts: pulumi.ResourceOptions | None, secrets: tuple[str, ...]) -> pulumi.ResourceOptions:
    # The version names this provider: the engine sends the resource to the plugin that
    # made the component, not to another release of it.
    extra = pulumi.ResourceOptions(additional_secret_outputs=list(secrets), version=VERSION)
    return pulumi.ResourceOptions.merge(opts, extra)


class ServedPassword(pulumi.CustomResource):
    """A password generated once per stack by the provider, kept as a secret (``result``)."""

    result: pulumi.Output[str]

    def __init__(
        self, name: str, length: int = 32, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        props = {"length": length, "result": None}
        super().__init__(PASSWORD, name, props, _opts(opts, PasswordProvider.outputs))


class ServedKeyPair(pulumi.CustomResource):
    """An ECDSA P-521 key pair generated once per stack by the provider, kept as secrets."""

    private_key_pem: pulumi.Output[str]
    public_key_openssh: pulumi.Output[str]

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        props = {"algorithm": "ECDSA-P521", "private_key_pem": None, "public_key_openssh": None}
        super().__init__(KEY_PAIR, name, props, _opts(opts, KeyPairProvider.outputs))


def _plain(value: Any) -> Any:
    """A decoded property value with every secret marker taken off."""
    if isinstance(value, Mapping):
        if value.get(_SIG_KEY) == _SECRET_SIG:
            return _plain(value.get("value"))
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class ServedPodSet(pulumi.CustomResource):
    """A job's Pods and Services as one resource, applied by the provider
    (:mod:`trainjobs.components.pod_set`)."""

    objects: pulumi.Output[dict[str, Any]]
    phases: pulumi.Output[dict[str, Any]]

    def __init__(
        self, name: str, props: Mapping[str, Any], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        inputs = {**props, "phases": None}
        super().__init__(POD_SET, name, inputs, _opts(opts, PodSetProvider.outputs))


def _props(struct: struct_pb2.Struct) -> dict[str, Any]:
    decoded: dict[str, Any] = _plain(json_format.MessageToDict(struct))
    return decoded


def _struct(props: Mapping[str, Any], secrets: tuple[str, ...]) -> struct_pb2.Struct:
    """``props`` on the wire, the generated values marked secret."""
    out = struct_pb2.Struct()
    out.update(
        {
            k: {_SIG_KEY: _SECRET_SIG, "value": v} if k in secrets and v is not None else v
            for k, v in props.items()
        }
    )
    return out


def _generator(urn: str) -> _Served:
    qualified = urn.split("::")[-2]
    token = qualified.rsplit("$", 1)[-1]
    found = GENERATORS.get(token)
    if found is None:
        raise ValueError(f"the trainjobs provider serves no custom resource {token}")
    return found


@contextlib.asynccontextmanager
async def _said(context: Any) -> AsyncIterator[None]:
    """A pod set's refusal reaches the engine as its message alone: the gRPC server
    would print the exception's Python class ahead of it."""
    try:
        yield
    except PodSetError as exc:
        await context.abort(grpc.StatusCode.UNKNOWN, str(exc))


class GeneratingServicer(ProviderServicer):
    """The provider's gRPC service: the SDK's (Construct …) and the generated secrets'
    resource operations, which the SDK's ``pulumi.provider.Provider`` does not offer."""

    async def Check(self, request: Any, context: Any) -> Any:
        _generator(request.urn)
        return provider_pb2.CheckResponse(inputs=request.news)

    async def Diff(self, request: Any, context: Any) -> Any:
        result = _generator(request.urn).diff(
            request.id, _props(request.olds), _props(request.news)
        )
        some, none = provider_pb2.DiffResponse.DIFF_SOME, provider_pb2.DiffResponse.DIFF_NONE
        return provider_pb2.DiffResponse(
            changes=some if result.changes else none,
            replaces=list(result.replaces or []),
            deleteBeforeReplace=False,
        )

    async def Create(self, request: Any, context: Any) -> Any:
        generator = _generator(request.urn)
        if request.preview:
            # Nothing is generated in a preview: the values are unknown until the update.
            return provider_pb2.CreateResponse(id="", properties=request.properties)
        async with _said(context):
            created = generator.create(_props(request.properties))
        return provider_pb2.CreateResponse(
            id=created.id, properties=_struct(created.outs or {}, generator.outputs)
        )

    async def Read(self, request: Any, context: Any) -> Any:
        generator = _generator(request.urn)
        if not isinstance(generator, PodSetProvider):
            # A generated value lives only in the state: a refresh keeps it.
            return provider_pb2.ReadResponse(
                id=request.id, properties=request.properties, inputs=request.inputs
            )
        async with _said(context):
            read = generator.read(request.id, _props(request.properties))
        return provider_pb2.ReadResponse(
            id=read.id or request.id,
            properties=_struct(read.outs or {}, generator.outputs),
            inputs=request.inputs,
        )

    async def Update(self, request: Any, context: Any) -> Any:
        generator = _generator(request.urn)
        async with _said(context):
            updated = generator.update(request.id, _props(request.olds), _props(request.news))
        return provider_pb2.UpdateResponse(
            properties=_struct(updated.outs or {}, generator.outputs)
        )

    async def Delete(self, request: Any, context: Any) -> Any:
        generator = _generator(request.urn)
        if isinstance(generator, PodSetProvider):
            async with _said(context):
                generator.delete(request.id, _props(request.properties))
        return empty_pb2.Empty()
