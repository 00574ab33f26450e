"""A container's environment as the kubelet would build it, for a replica on loopback.

Order and precedence follow the kubelet: ``envFrom`` sources first, then ``env``
in order; a later entry with the same name wins. Literal values are expanded
(``$(VAR)``) against the variables defined before them; ``valueFrom`` values
are not. Before expansion, replica names in literal values become loopback
addresses and mount paths become the local folders (see ``plan``); values that
come from fieldRefs (``metadata.name``) are data, not names, and stay as they are.
"""

from __future__ import annotations

import base64
import binascii
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trainjobs.errors import Finding
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.generated import Generated, parse
from trainjobs.k8s.quantity import QuantityError, parse_quantity
from trainjobs.k8s.redact import secret_env_name
from trainjobs.local.expansion import expand, lookup_in

__all__ = ["Machine", "PodContext", "container_env", "object_values"]


@dataclass(frozen=True)
class Machine:
    """What fieldRefs and resourceFieldRefs report about "the node": this machine.

    Attributes:
        node_name: ``spec.nodeName``.
        cpus: allocatable CPUs, for a resourceFieldRef with no limit set.
        memory: allocatable memory in bytes, likewise.
    """

    node_name: str = "localhost"
    cpus: int = 1
    memory: int = 1 << 30


@dataclass(frozen=True)
class PodContext:
    """The replica's pod as fieldRefs see it.

    Attributes:
        name: ``metadata.name``.
        namespace: ``metadata.namespace``.
        address: ``status.podIP``, the replica's loopback address.
        labels: ``metadata.labels``.
        annotations: ``metadata.annotations``.
        service_account: ``spec.serviceAccountName``.
        objects: the job's other objects (ConfigMaps, Secrets) by ``(kind, name)``.
        machine: this machine as the node.
        generate: the value of a generated-secret placeholder for this run.
        secrets: collects every value read from a Secret, so output can hide it.
    """

    name: str
    namespace: str
    address: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    service_account: str
    objects: Mapping[tuple[str, str], Manifest]
    machine: Machine
    generate: Callable[[Generated], str]
    secrets: set[str] = field(default_factory=set)


def object_values(manifest: Manifest, generate: Callable[[Generated], str]) -> dict[str, bytes]:
    """The key → bytes of a ConfigMap or Secret, generated placeholders filled in."""
    values: dict[str, bytes] = {}
    if manifest.get("kind") == "Secret":
        for key, value in (manifest.get("data") or {}).items():
            text = str(value)
            generated = parse(text)
            if generated is not None:
                values[key] = generate(generated).encode()
                continue
            try:
                values[key] = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                values[key] = text.encode()
        for key, value in (manifest.get("stringData") or {}).items():
            generated = parse(value)
            values[key] = (generate(generated) if generated else str(value)).encode()
        return values
    for key, value in (manifest.get("data") or {}).items():
        values[key] = str(value).encode()
    for key, value in (manifest.get("binaryData") or {}).items():
        values[key] = base64.b64decode(str(value))
    return values


def _missing(path: str, what: str, hint: str, value: Any) -> Finding:
    return Finding(code="local.env", path=path, message=what, value=value, hint=hint)


def _field_ref(field: str, pod: PodContext, path: str) -> str | Finding:
    simple = {
        "metadata.name": pod.name,
        "metadata.namespace": pod.namespace,
        "metadata.uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{pod.namespace}/{pod.name}")),
        "spec.nodeName": pod.machine.node_name,
        "spec.serviceAccountName": pod.service_account,
        "status.hostIP": "127.0.0.1",
        "status.hostIPs": "127.0.0.1",
        "status.podIP": pod.address,
        "status.podIPs": pod.address,
    }
    if field in simple:
        return simple[field]
    for prefix, source in (
        ("metadata.labels", pod.labels),
        ("metadata.annotations", pod.annotations),
    ):
        if field == prefix:
            return "\n".join(f'{k}="{v}"' for k, v in sorted(source.items()))
        if field.startswith(f"{prefix}['") and field.endswith("']"):
            return source.get(field[len(prefix) + 2 : -2], "")
    return _missing(
        path,
        "run-local cannot resolve this fieldRef",
        "use metadata.name/namespace/uid/labels/annotations, spec.nodeName, "
        "spec.serviceAccountName, status.podIP or status.hostIP",
        field,
    )


def _resource_ref(
    ref: Mapping[str, Any], container: Mapping[str, Any], pod: PodContext, path: str
) -> str | Finding:
    resource = str(ref.get("resource", ""))
    kind, _, name = resource.partition(".")
    resources = container.get("resources") or {}
    value = (resources.get(kind) or {}).get(name)
    if value is None and kind == "requests":  # the kubelet falls back to the limit
        value = (resources.get("limits") or {}).get(name)
    try:
        divisor = parse_quantity(ref.get("divisor") or 1)
        if value is not None:
            amount = parse_quantity(value)
        elif name == "cpu":
            amount = parse_quantity(pod.machine.cpus)
        elif name == "memory":
            amount = parse_quantity(pod.machine.memory)
        else:
            return _missing(
                path,
                "run-local can only report cpu and memory when no value is set",
                f"set resources.{kind}.{name} on the container",
                resource,
            )
    except QuantityError as exc:
        return _missing(path, str(exc), "use a Kubernetes quantity", value)
    if divisor <= 0:
        return _missing(path, "the divisor must be positive", "e.g. divisor: 1Mi", ref)
    return str(math.ceil(amount / divisor))


def _key_ref(kind: str, ref: Mapping[str, Any], pod: PodContext, path: str) -> str | Finding | None:
    name = str(ref.get("name", ""))
    manifest = pod.objects.get((kind, name))
    if manifest is None:
        if ref.get("optional"):
            return None
        return _missing(
            path,
            f"the {kind} {name!r} is not part of the job, so run-local cannot read it",
            f"render the {kind} with the job, or mark the reference optional",
            name,
        )
    values = object_values(manifest, pod.generate)
    key = str(ref.get("key", ""))
    if key not in values:
        if ref.get("optional"):
            return None
        return _missing(path, f"the {kind} {name!r} has no key {key!r}", "fix the key", key)
    value = values[key].decode(errors="replace")
    if kind == "Secret":
        pod.secrets.add(value)
    return value


def container_env(
    container: Mapping[str, Any],
    pod: PodContext,
    literal: Callable[[str], str],
    path: str,
    services: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], list[Finding]]:
    """The container's env, in kubelet order and precedence, and any findings.

    ``literal`` rewrites a literal value (names → addresses, mount paths → local
    folders) before ``$(VAR)`` expansion; ``path`` is the container's path in
    the user's job, prefix of every finding; ``services`` the service
    environment variables (``<SVC>_SERVICE_HOST`` …), which come first and may
    be referred to.
    """
    env: dict[str, str] = dict(services or {})
    findings: list[Finding] = []
    for i, source in enumerate(container.get("envFrom") or []):
        prefix = str(source.get("prefix") or "")
        for kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            ref = source.get(key)
            if ref is None:
                continue
            manifest = pod.objects.get((kind, str(ref.get("name", ""))))
            if manifest is None:
                if not ref.get("optional"):
                    findings.append(
                        _missing(
                            f"{path}.envFrom[{i}].{key}.name",
                            f"the {kind} is not part of the job, so run-local cannot read it",
                            f"render the {kind} with the job, or mark it optional",
                            ref.get("name"),
                        )
                    )
                continue
            for name, value in object_values(manifest, pod.generate).items():
                env[prefix + name] = value.decode(errors="replace")
                if kind == "Secret":
                    pod.secrets.add(env[prefix + name])
    for i, entry in enumerate(_entries(container.get("env"))):
        name = str(entry.get("name", ""))
        where = f"{path}.env[{i}]"
        if "valueFrom" not in entry:
            env[name] = expand(literal(str(entry.get("value", ""))), lookup_in(env))
            if secret_env_name(name):
                # A literal password is as secret as one read from a Secret: never printed.
                pod.secrets.add(env[name])
            continue
        resolved = _value_from(entry["valueFrom"], container, pod, f"{where}.valueFrom")
        if isinstance(resolved, Finding):
            findings.append(resolved)
        elif resolved is not None:
            env[name] = resolved
    return env, findings


def _value_from(
    source: Mapping[str, Any], container: Mapping[str, Any], pod: PodContext, path: str
) -> str | Finding | None:
    if "fieldRef" in source:
        return _field_ref(str(source["fieldRef"].get("fieldPath", "")), pod, f"{path}.fieldRef")
    if "resourceFieldRef" in source:
        return _resource_ref(source["resourceFieldRef"], container, pod, f"{path}.resourceFieldRef")
    if "configMapKeyRef" in source:
        return _key_ref("ConfigMap", source["configMapKeyRef"], pod, f"{path}.configMapKeyRef")
    if "secretKeyRef" in source:
        return _key_ref("Secret", source["secretKeyRef"], pod, f"{path}.secretKeyRef")
    return _missing(
        path,
        "run-local cannot resolve this valueFrom",
        "use fieldRef, resourceFieldRef, configMapKeyRef or secretKeyRef",
        sorted(source),
    )


def _entries(value: Any) -> Sequence[Mapping[str, Any]]:
    return [e for e in value or [] if isinstance(e, Mapping)]
