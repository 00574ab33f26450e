"""Rules the Kubernetes API server enforces on a pod spec that its OpenAPI schema cannot
say: environment variable names, ``value`` beside ``valueFrom``, port ranges and port
names. Checked here, offline, so ``render`` never prints what ``pulumi up`` would then
see refused (k8s.io/kubernetes pkg/apis/core/validation: validateEnv, validateContainerPorts).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["Problem", "env_name_problem", "pod_spec_problems"]

Problem = tuple[str, str, Any, str]
"""(path, rule, bad value, fix)."""

_CLASSIC_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_IANA_SVC_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
_RELAXED_FROM = (1, 32)
"""RelaxedEnvironmentVariableValidation is on by default from Kubernetes 1.32 (beta),
GA in 1.34: any printable ASCII but '='. Before, the C-identifier-like rule."""
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _relaxed(version: str) -> bool:
    try:
        major, minor = (int(part) for part in version.split(".")[:2])
    except ValueError:
        return True
    return (major, minor) >= _RELAXED_FROM


def env_name_problem(name: str, version: str) -> str | None:
    """Why the API server of ``version`` refuses ``name`` as an env var name, or None."""
    if not name:
        return "an environment variable needs a name"
    if "=" in name:
        return "an environment variable name may not hold '='"
    if not all(32 <= ord(c) <= 126 for c in name):
        return "an environment variable name is printable ASCII only"
    if not _relaxed(version) and not _CLASSIC_ENV_NAME.match(name):
        return (
            f"before Kubernetes {_RELAXED_FROM[0]}.{_RELAXED_FROM[1]} an environment variable "
            "name is letters, digits, '_', '-' and '.', not starting with a digit"
        )
    return None


def _port_problem(value: Any, lowest: int) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None  # the schema check reports the type
    if not lowest <= value <= 65535:
        return f"a port number is between {lowest} and 65535"
    return None


def _containers(pod_spec: Mapping[str, Any], where: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for field in _CONTAINER_LISTS:
        containers = pod_spec.get(field)
        if not isinstance(containers, list):
            continue
        for i, container in enumerate(containers):
            if isinstance(container, Mapping):
                yield f"{where}.{field}[{i}]", container


def _env_problems(container: Mapping[str, Any], where: str, version: str) -> list[Problem]:
    found: list[Problem] = []
    env = container.get("env")
    for i, var in enumerate(env if isinstance(env, list) else []):
        if not isinstance(var, Mapping):
            continue
        name = var.get("name")
        if isinstance(name, str):
            problem = env_name_problem(name, version)
            if problem:
                found.append(
                    (
                        f"{where}.env[{i}].name",
                        problem,
                        name,
                        "rename the variable, e.g. MY_SETTING",
                    )
                )
        if var.get("value") not in (None, "") and var.get("valueFrom") is not None:
            found.append(
                (
                    f"{where}.env[{i}].valueFrom",
                    "an environment variable takes value or valueFrom, not both",
                    var.get("name", ""),
                    "remove value to read it from valueFrom, or remove valueFrom",
                )
            )
    return found


def _port_problems(container: Mapping[str, Any], where: str) -> list[Problem]:
    found: list[Problem] = []
    ports = container.get("ports")
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        if not isinstance(port, Mapping):
            continue
        for field, lowest in (("containerPort", 1), ("hostPort", 0)):
            problem = _port_problem(port.get(field), lowest)
            if problem:
                found.append(
                    (
                        f"{where}.ports[{i}].{field}",
                        problem,
                        port.get(field),
                        "use the port the program listens on, e.g. 2222",
                    )
                )
        name = port.get("name")
        if isinstance(name, str) and (
            len(name) > 15 or not _IANA_SVC_NAME.match(name) or not re.search("[a-z]", name)
        ):
            found.append(
                (
                    f"{where}.ports[{i}].name",
                    "a port name is at most 15 lower-case letters, digits and '-', with a "
                    "letter, not starting or ending with '-'",
                    name,
                    "e.g. name: tfjob-port",
                )
            )
    return found


def pod_spec_problems(pod_spec: Any, where: str, version: str) -> list[Problem]:
    """Every API-server rule above broken in ``pod_spec``, paths below ``where``."""
    if not isinstance(pod_spec, Mapping):
        return []
    found: list[Problem] = []
    for path, container in _containers(pod_spec, where):
        found += _env_problems(container, path, version)
        found += _port_problems(container, path)
    return found
