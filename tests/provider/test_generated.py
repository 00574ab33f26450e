"""The provider's own generated secrets (trainjobs/provider/generated.py).

The resource operations are called as the engine calls them (gRPC requests in, gRPC
responses out); the components the provider makes are run under mocks. That these
resources, not dynamic ones, make a YAML, TypeScript or Go ``pulumi up`` work with no
Python language host is proven on the real engine (tests/cluster/pulumi_up/
test_languages_*.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2  # type: ignore[import-untyped]
from pulumi.runtime.proto import provider_pb2

from tests.provider.same_as_render import PROVIDER_TYPES
from tests.support.pulumi_harness import Registered, run_program
from trainjobs.components import RedisBackend, secrets
from trainjobs.components.generators import ALPHABET
from trainjobs.provider.generated import GeneratingServicer, ServedKeyPair, ServedPassword
from trainjobs.provider.host import TrainjobsProvider

PASSWORD = "urn:pulumi:s::p::trainjobs:index:RedisBackend$trainjobs:index:GeneratedPassword::r"
KEY_PAIR = "urn:pulumi:s::p::trainjobs:index:TrainingJob$trainjobs:index:GeneratedKeyPair::k"
SECRET = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}


def _struct(props: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(props)
    return out


def _dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    found: dict[str, Any] = json_format.MessageToDict(struct)
    return found


def _call(method: str, request: Any) -> Any:
    servicer = GeneratingServicer(TrainjobsProvider(), [], engine_address="")
    # A loop of its own: asyncio.run would leave the thread without one for the mocks.
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(getattr(servicer, method)(request, None))
    finally:
        loop.close()


def test_create_generates_a_password_marked_secret() -> None:
    request = provider_pb2.CreateRequest(
        urn=PASSWORD, properties=_struct({"length": 32.0, "result": None})
    )
    created = _dict(_call("Create", request).properties)
    assert created["length"] == 32
    result = created["result"]
    assert {k: result[k] for k in SECRET} == SECRET
    assert len(result["value"]) == 32 and set(result["value"]) <= set(ALPHABET)


def test_create_generates_a_key_pair_marked_secret() -> None:
    request = provider_pb2.CreateRequest(urn=KEY_PAIR, properties=_struct({"algorithm": "x"}))
    created = _dict(_call("Create", request).properties)
    assert created["private_key_pem"]["value"].startswith("-----BEGIN EC PRIVATE KEY-----")
    assert created["public_key_openssh"]["value"].startswith("ecdsa-sha2-nistp521 ")


def test_a_preview_generates_nothing() -> None:
    request = provider_pb2.CreateRequest(
        urn=PASSWORD, properties=_struct({"length": 32.0}), preview=True
    )
    assert "result" not in _dict(_call("Create", request).properties)


def _diff(olds: dict[str, Any], news: dict[str, Any]) -> Any:
    request = provider_pb2.DiffRequest(urn=PASSWORD, id="x", olds=_struct(olds), news=_struct(news))
    return _call("Diff", request)


def test_an_unchanged_length_keeps_the_password() -> None:
    # The stored outputs hold the value, marked secret: it is no input, so no change.
    olds = {"length": 32.0, "result": {**SECRET, "value": "abc"}}
    diff = _diff(olds, {"length": 32.0, "result": None})
    assert diff.changes == provider_pb2.DiffResponse.DIFF_NONE
    assert list(diff.replaces) == []


def test_another_length_replaces_the_password() -> None:
    diff = _diff({"length": 32.0, "result": "abc"}, {"length": 16.0})
    assert diff.changes == provider_pb2.DiffResponse.DIFF_SOME
    assert list(diff.replaces) == ["length"]


def test_a_refresh_keeps_the_value() -> None:
    props = _struct({"length": 32.0, "result": {**SECRET, "value": "abc"}})
    read = _call("Read", provider_pb2.ReadRequest(urn=PASSWORD, id="x", properties=props))
    assert read.id == "x" and read.properties == props


def test_another_type_is_refused() -> None:
    urn = "urn:pulumi:s::p::trainjobs:index:Nothing::n"
    with pytest.raises(ValueError, match="serves no custom resource trainjobs:index:Nothing"):
        _call("Check", provider_pb2.CheckRequest(urn=urn))


def _seen(resources: list[Registered]) -> list[tuple[str, str, str]]:
    return sorted((PROVIDER_TYPES.get(r.type, r.type), r.name, r.parent) for r in resources)


def test_the_providers_redis_generates_with_its_own_resource(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Same children and names as the Python component's; only the generating
    resource's type is the provider's (as ``serve`` sets it up)."""
    native = run_program(lambda: RedisBackend("redis", namespace="ml"))
    monkeypatch.setattr(secrets, "_MAKERS", dict(secrets._MAKERS))
    secrets.generate_with(ServedPassword, ServedKeyPair)

    def by_provider() -> None:
        inputs = {"namespace": "ml"}
        TrainjobsProvider().construct("redis", "trainjobs:index:RedisBackend", inputs, None)

    provided = run_program(by_provider)
    assert _seen(provided) == _seen(native)
    assert [r.type for r in native if "Generated" in r.type] == [
        "pulumi-python:dynamic/trainjobs:GeneratedPassword"
    ]
    (password,) = [r for r in provided if "Generated" in r.type]
    assert password.type == "trainjobs:index:GeneratedPassword"
    assert password.inputs["length"] == 32


class _Aborted(Exception):
    """What grpc's ``context.abort`` raises: the handler stops there."""


class _Context:
    def __init__(self) -> None:
        self.aborted: tuple[Any, str] | None = None

    async def abort(self, code: Any, details: str) -> None:
        self.aborted = (code, details)
        raise _Aborted


def test_a_pod_sets_refusal_reaches_the_engine_as_its_message_alone(tmp_path: Any) -> None:
    """No Python class or traceback ahead of the words: the engine prints ``details``."""
    import grpc  # type: ignore[import-untyped]

    urn = "urn:pulumi:s::p::trainjobs:index:TrainingJob$trainjobs:index:PodSet::j:pod-set"
    missing = tmp_path / "no-kubeconfig"
    props = _struct({"objects": {}, "cluster": {"kubeconfig": str(missing)}, "owner": {}})
    context = _Context()
    servicer = GeneratingServicer(TrainjobsProvider(), [], engine_address="")
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(_Aborted):
            loop.run_until_complete(
                servicer.Create(provider_pb2.CreateRequest(urn=urn, properties=props), context)
            )
    finally:
        loop.close()
    assert context.aborted is not None
    code, details = context.aborted
    assert code == grpc.StatusCode.UNKNOWN
    assert str(missing) in details
    assert "Traceback" not in details and "PodSetError" not in details
