"""What the API server's Pod validation refuses that the OpenAPI schema lets through.

The schema types a container name, a port name or an env var name as a string, and
says nothing of duplicates, of a request above its limit or of a mount without its
volume; the API server refuses such a Pod (``pkg/apis/core/validation``), and with it
the operator's attempt to create the replica. Found by running the real API server
(``tests/cluster/test_accepted.py``, the bad-input corpus). Checked in the input's pod
templates (with the user's field path) and in every rendered pod spec.

For the input's templates, given the Kubernetes version, a few more of the server's
rules (``validateEnv``, ``validateContainerPorts``) are checked as ``api.invalid``:
env var names by the version's rule, ``value`` beside ``valueFrom``, host ports. One
problem per path: where a Pod rule already refuses a field, no second one is added.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from trainjobs.errors import format_path
from trainjobs.k8s.names import dns1123_label_problem
from trainjobs.k8s.pods import each_container
from trainjobs.k8s.quantity import QuantityError, parse_quantity

__all__ = ["PodProblem", "pod_spec_problems"]

_PORT_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
PORT_NAME_MAX = 15
"""An IANA service name, as a port name must be: at most 15 characters."""
RESTART_POLICIES = ("Always", "OnFailure", "Never")
_CLASSIC_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_RELAXED_FROM = (1, 32)
"""RelaxedEnvironmentVariableValidation is on by default from Kubernetes 1.32 (beta),
GA in 1.34: any printable ASCII but '='. Before, the C-identifier-like rule."""


class PodProblem(NamedTuple):
    """One refusal: the path inside the object, the rule, the bad value and the fix;
    ``code`` is ``pod.invalid`` (the Pod rules) or ``api.invalid`` (the version's)."""

    path: str
    message: str
    value: Any
    hint: str
    code: str = "pod.invalid"


def _port_name_problem(name: str) -> str | None:
    if len(name) > PORT_NAME_MAX:
        return f"a port name must be at most {PORT_NAME_MAX} characters, has {len(name)}"
    if not _PORT_NAME.match(name) or "--" in name:
        return (
            "a port name may hold only lowercase letters, digits and single '-', starting "
            "and ending with a letter or digit"
        )
    if not re.search(r"[a-z]", name):
        return "a port name must hold at least one letter"
    return None


def _env_name_problem(name: str) -> str | None:
    # Kubernetes 1.32 and later (RelaxedEnvironmentVariableValidation): any printable
    # ASCII character but '='.
    if not name:
        return "an environment variable needs a name"
    if "=" in name or any(not 32 <= ord(c) <= 126 for c in name):
        return "an environment variable name may hold printable ASCII characters other than '='"
    return None


def _relaxed(version: str) -> bool:
    try:
        major, minor = (int(part) for part in version.split(".")[:2])
    except ValueError:
        return True
    return (major, minor) >= _RELAXED_FROM


def _list(value: Any) -> list[Any]:
    """``value`` if it is a list, else nothing (the schema check names a wrong type)."""
    return value if isinstance(value, list) else []


def _container_problems(
    path: str, container: Mapping[str, Any], volumes: set[str] | None
) -> Iterator[PodProblem]:
    name = container.get("name")
    if isinstance(name, str):
        problem = dns1123_label_problem(name)
        if problem:
            yield PodProblem(
                f"{path}.name", f"a container name {problem}", name, "rename the container"
            )
    seen_ports: set[str] = set()
    for i, port in enumerate(_list(container.get("ports"))):
        if not isinstance(port, Mapping):
            continue
        number = port.get("containerPort")
        if isinstance(number, int) and not 1 <= number <= 65535:
            yield PodProblem(
                f"{path}.ports[{i}].containerPort",
                "a port must be between 1 and 65535",
                number,
                "use a port number from 1 to 65535",
            )
        port_name = port.get("name")
        if isinstance(port_name, str) and port_name:
            problem = _port_name_problem(port_name)
            if problem:
                yield PodProblem(
                    f"{path}.ports[{i}].name", problem, port_name, "shorten or rename the port"
                )
            if port_name in seen_ports:
                yield PodProblem(
                    f"{path}.ports[{i}].name",
                    "two ports of one container share a name",
                    port_name,
                    "give each port its own name",
                )
            seen_ports.add(port_name)
    yield from _handler_port_problems(path, container)
    for i, env in enumerate(_list(container.get("env"))):
        if isinstance(env, Mapping) and isinstance(env.get("name"), str):
            problem = _env_name_problem(env["name"])
            if problem:
                yield PodProblem(
                    f"{path}.env[{i}].name", problem, env["name"], "rename the variable"
                )
    for i, mount in enumerate(_list(container.get("volumeMounts"))):
        mounted = mount.get("name") if isinstance(mount, Mapping) else None
        if volumes is not None and isinstance(mounted, str) and mounted not in volumes:
            yield PodProblem(
                f"{path}.volumeMounts[{i}].name",
                "no volume of the pod has this name",
                mounted,
                "add the volume to the pod's volumes, or mount one that is there",
            )
    resources = container.get("resources")
    if isinstance(resources, Mapping):
        requests, limits = resources.get("requests"), resources.get("limits")
        if isinstance(requests, Mapping) and isinstance(limits, Mapping):
            for resource in sorted(set(requests) & set(limits), key=str):
                asked, limit = requests[resource], limits[resource]
                if not all(isinstance(v, (str, int, float)) for v in (asked, limit)):
                    continue  # a wrong type: the schema check names it
                try:
                    above = parse_quantity(asked) > parse_quantity(limit)
                except QuantityError:
                    continue  # quantity.invalid says so
                if above:
                    yield PodProblem(
                        f"{path}.{format_path(['resources', 'requests', str(resource)])}",
                        f"requests {requests[resource]} {resource} but is limited to "
                        f"{limits[resource]}; a request may not exceed its limit",
                        requests[resource],
                        f"lower requests.{resource} or raise limits.{resource}",
                    )


_HANDLERS = (
    ("livenessProbe",),
    ("readinessProbe",),
    ("startupProbe",),
    ("lifecycle", "postStart"),
    ("lifecycle", "preStop"),
)
"""Where a container names a port to probe or call: ``httpGet.port``/``tcpSocket.port``."""


def _handler_port_problems(path: str, container: Mapping[str, Any]) -> Iterator[PodProblem]:
    """A probe's or hook's port is a number from 1 to 65535 or a port name
    (``validatePortNumOrName``): ``port: "2222"`` is a name without a letter, which
    the API server refuses (write ``port: 2222``)."""
    for where in _HANDLERS:
        handler: Any = container
        for key in where:
            handler = handler.get(key) if isinstance(handler, Mapping) else None
        if not isinstance(handler, Mapping):
            continue
        for action in ("httpGet", "tcpSocket"):
            spec = handler.get(action)
            port = spec.get("port") if isinstance(spec, Mapping) else None
            field = f"{path}.{'.'.join(where)}.{action}.port"
            if isinstance(port, int) and not isinstance(port, bool) and not 1 <= port <= 65535:
                yield PodProblem(
                    field, "a port must be between 1 and 65535", port, "use a port from 1 to 65535"
                )
            elif isinstance(port, str):
                problem = _port_name_problem(port)
                if problem:
                    hint = (
                        f"write the number unquoted (port: {port}), or name a port of the container"
                        if port.isdigit()
                        else "name a port of the container (its ports[].name)"
                    )
                    yield PodProblem(field, problem, port, hint)


def _version_problems(
    path: str, container: Mapping[str, Any], version: str
) -> Iterator[PodProblem]:
    """The server rules of ``version`` beyond the Pod rules above (``api.invalid``); where
    both refuse a field, :func:`pod_spec_problems` keeps the Pod rule's."""
    for i, var in enumerate(_list(container.get("env"))):
        if not isinstance(var, Mapping):
            continue
        name = var.get("name")
        # A name the relaxed rule refuses is refused above; only the older rule adds.
        if isinstance(name, str) and not _relaxed(version) and not _CLASSIC_ENV_NAME.match(name):
            yield PodProblem(
                f"{path}.env[{i}].name",
                f"before Kubernetes {_RELAXED_FROM[0]}.{_RELAXED_FROM[1]} an environment "
                "variable name is letters, digits, '_', '-' and '.', not starting with a digit",
                name,
                "rename the variable, e.g. MY_SETTING",
                "api.invalid",
            )
        if var.get("value") not in (None, "") and var.get("valueFrom") is not None:
            yield PodProblem(
                f"{path}.env[{i}].valueFrom",
                "an environment variable takes value or valueFrom, not both",
                var.get("name", ""),
                "remove value to read it from valueFrom, or remove valueFrom",
                "api.invalid",
            )
    for i, port in enumerate(_list(container.get("ports"))):
        if not isinstance(port, Mapping):
            continue
        number = port.get("hostPort")
        if isinstance(number, int) and not isinstance(number, bool) and not 0 <= number <= 65535:
            yield PodProblem(
                f"{path}.ports[{i}].hostPort",
                "a port number is between 0 and 65535",
                number,
                "use the port the program listens on, e.g. 2222",
                "api.invalid",
            )
        # A non-empty name is held to the port-name rule above; this reading also
        # refuses an empty one.
        if port.get("name") == "":
            yield PodProblem(
                f"{path}.ports[{i}].name",
                "a port name is at most 15 lower-case letters, digits and '-', with a "
                "letter, not starting or ending with '-'",
                "",
                "e.g. name: tfjob-port",
                "api.invalid",
            )


def pod_spec_problems(
    pod_spec: Any, prefix: str = "", *, mounts: bool = True, version: str | None = None
) -> list[PodProblem]:
    """What the API server's Pod validation refuses in one pod spec; paths after ``prefix``.

    ``mounts=False`` leaves out volumeMounts naming no volume (a framework reports them).
    ``version`` (a Kubernetes ``major.minor``) adds that version's env, port and
    ``valueFrom`` rules, after the Pod rules; default none (a rendered pod spec).
    """
    if not isinstance(pod_spec, Mapping):
        return []
    where = f"{prefix}." if prefix else ""
    found: list[PodProblem] = []
    volumes = (
        None
        if not mounts
        else {
            v["name"]
            for v in _list(pod_spec.get("volumes"))
            if isinstance(v, Mapping) and isinstance(v.get("name"), str)
        }
    )
    names: dict[str, str] = {}
    for field, index, container in each_container(pod_spec):
        path = f"{where}{field}[{index}]"
        found += _container_problems(path, container, volumes)
        name = container.get("name")
        if isinstance(name, str) and field != "ephemeralContainers":
            if name in names:
                found.append(
                    PodProblem(
                        f"{path}.name",
                        f"two containers of the pod are named {name!r} (also {names[name]})",
                        name,
                        "give each container its own name",
                    )
                )
            names.setdefault(name, path)
    policy = pod_spec.get("restartPolicy")
    if isinstance(policy, str) and policy not in RESTART_POLICIES:
        found.append(
            PodProblem(
                f"{where}restartPolicy",
                f"a pod's restartPolicy is one of {', '.join(RESTART_POLICIES)}",
                policy,
                "set the replica's restartPolicy instead (the operator's, e.g. ExitCode) "
                "or one of the pod's",
            )
        )
    if version is not None:
        seen = {problem.path for problem in found}
        for field, index, container in each_container(pod_spec):
            path = f"{where}{field}[{index}]"
            found += [p for p in _version_problems(path, container, version) if p.path not in seen]
    return found
