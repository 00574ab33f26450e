"""What a cluster holds, read with ``kubectl get -o json -n <ns> -- <kind> <name>`` (never written).

Each live object's labels are kept as the cluster has them (``Side.labels``): who made
it (``trainjobs.dev/stack``) decides what ``pulumi up`` may do with it
(:mod:`trainjobs.preview.ownership`).

One ``kubectl get`` per object: every object of the new render, and every
object of the last stored render that the new one no longer has (so a
removal shows as a delete). An object the cluster does not have, or whose
kind it does not serve (the CRD is not installed), is absent. When kubectl
calls a kind unknown, the server is asked about the kind's group version
(``kubectl get --raw=/apis/<group>/<version>``): only a served list, or the
server's NotFound, means the kind is not there; any other answer means API
discovery failed (an aggregated API whose backend is down), and kubectl's
"unknown kind" says nothing about the object, so it is an error, never a create.

The cluster adds fields of its own — defaults, injected volumes, status — so
each live object is cut down to the fields the new render or the last
stored render sets (``prune``) before it is compared; a field the render no
longer sets shows as removed only if the stored render still had it.
Quantities of built-in objects compare by the text the API server stores
(``1`` and ``"1"``, ``0.5`` and ``500m``; :mod:`trainjobs.preview.spelling`), those of a
custom resource as written, as ``pulumi preview`` compares them.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trainjobs.errors import TrainjobsError
from trainjobs.output import printable
from trainjobs.preview.objects import Key, PreviewObject, Side, job_of, strip_server_fields
from trainjobs.preview.secrets import fingerprint, is_secret, mask_secrets, secret_bytes

__all__ = ["Kubectl", "LiveError", "live_labels", "live_side", "prune", "resource_arg"]

_NOT_FOUND = "(NotFound)"
"""kubectl's stderr for an object (or a whole type) the server says it does not have."""

_UNKNOWN_TYPE = ("doesn't have a resource type", "the server could not find")
"""kubectl's stderr for a type its discovery did not find: absent only if discovery worked.

kubectl 1.36 says just this when the type's group failed discovery (aggregated discovery
marks the group stale, and kubectl prints no discovery error), so the words alone cannot
tell a missing CRD from an API server that cannot reach an aggregated API's backend."""

_ASKS_FOR_LOGIN = "Please enter Username"
"""What kubectl prints (on stdout) before it reads a username from stdin, which preview
closes: a kubeconfig user without credentials."""

_GROUP = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
_VERSION = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
"""A group and a version as the API server names them (a DNS subdomain, a DNS label): only
these go into a discovery path."""


class LiveError(TrainjobsError):
    """kubectl failed for a reason other than a missing object (no cluster, no access …)."""


@dataclass(frozen=True)
class Kubectl:
    """How to call kubectl.

    Attributes:
        program: the kubectl executable; default ``kubectl`` on PATH.
        kubeconfig: ``--kubeconfig`` to pass; default none (KUBECONFIG or ~/.kube/config).
        context: ``--context`` to pass; default none (the kubeconfig's current context).
        timeout: seconds to wait for one call; default 60.
    """

    program: str = "kubectl"
    kubeconfig: str | None = None
    context: str | None = None
    timeout: float = 60.0

    def _options(self) -> list[str]:
        """``--kubeconfig`` and ``--context`` as given (glued: a value is never an option)."""
        args = []
        if self.kubeconfig:
            args.append(f"--kubeconfig={self.kubeconfig}")
        if self.context:
            args.append(f"--context={self.context}")
        return args

    def command(self, manifest: Mapping[str, Any]) -> list[str]:
        """The kubectl call that reads ``manifest``'s object.

        Every value from the input goes where kubectl cannot take it for an option:
        the namespace glued to its flag (``--namespace=-x`` is a namespace), the
        kind and name after ``--`` (a name ``--kubeconfig=/x`` is a name).
        """
        meta = manifest.get("metadata") or {}
        args = [self.program, "get", "--output=json"]
        if meta.get("namespace"):
            args.append(f"--namespace={meta['namespace']}")
        return [*args, *self._options(), "--", resource_arg(manifest), str(meta.get("name"))]

    def discovery_command(self, manifest: Mapping[str, Any]) -> list[str] | None:
        """The kubectl call that asks the server for the group version of ``manifest``'s kind.

        None when the ``apiVersion`` is not one a server could serve (no such type: absent).
        """
        group, _, version = str(manifest.get("apiVersion", "")).rpartition("/")
        if not _VERSION.fullmatch(version) or (group and not _GROUP.fullmatch(group)):
            return None
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        return [self.program, "get", f"--raw={path}", *self._options()]

    def _run(self, command: list[str]) -> subprocess.CompletedProcess[str]:
        try:
            # No stdin: a kubeconfig user without credentials makes kubectl ask for a
            # username on the terminal, and preview would wait there until the timeout.
            return subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise LiveError(
                f"kubectl did not answer in {self.timeout:g}s: {printable(shlex.join(command))}"
            ) from None

    def _discovery_failure(self, manifest: Mapping[str, Any]) -> str | None:
        """Why the server could not say whether it serves the kind; None when it could."""
        command = self.discovery_command(manifest)
        if command is None:
            return None
        done = self._run(command)
        if done.returncode == 0 or _NOT_FOUND in done.stderr:
            return None
        lines = done.stderr.strip().splitlines()
        return lines[-1] if lines else f"exit code {done.returncode}"

    def get(self, manifest: Mapping[str, Any]) -> dict[str, Any] | None:
        """The live object, or None when the cluster does not have it."""
        if shutil.which(self.program) is None:
            raise LiveError(f"{self.program} is not on PATH; install it or leave out --live")
        command = self.command(manifest)
        done = self._run(command)
        if done.returncode != 0:
            if _NOT_FOUND in done.stderr:
                return None
            if _ASKS_FOR_LOGIN in done.stdout:
                context = f"context {self.context}" if self.context else "its current context"
                raise LiveError(
                    printable(
                        f"kubectl asks for a username: the kubeconfig user of {context} has no "
                        "credentials; fix: give that user a token, client certificate or exec "
                        "plugin in the kubeconfig, or choose another --context"
                    )
                )
            if any(marker in done.stderr for marker in _UNKNOWN_TYPE):
                failure = self._discovery_failure(manifest)
                if failure is None:
                    return None
                raise LiveError(_discovery_message(manifest, failure))
            message = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
            raise LiveError(f"kubectl get failed: {printable(message[0])}")
        try:
            found = json.loads(done.stdout)
        except json.JSONDecodeError:
            raise LiveError(
                f"kubectl printed no JSON for {printable(shlex.join(command))}"
            ) from None
        if not isinstance(found, dict):
            raise LiveError(f"kubectl printed no object for {printable(shlex.join(command))}")
        return found


def _discovery_message(manifest: Mapping[str, Any], failure: str) -> str:
    meta = manifest.get("metadata") or {}
    where = f" in namespace {meta['namespace']}" if meta.get("namespace") else ""
    group_version = str(manifest.get("apiVersion", ""))
    return printable(
        f"cannot tell whether {resource_arg(manifest)} {meta.get('name')}{where} exists: "
        f"kubectl calls its kind unknown, but API discovery failed for {group_version} "
        f"(asked for its kinds, the API server said: {failure}), so the kind may well be "
        f"there; fix: check the cluster's APIServices (`kubectl get apiservices`: the one "
        f"serving {group_version} is not Available) and `kubectl api-resources`, then "
        f"preview again"
    )


def resource_arg(manifest: Mapping[str, Any]) -> str:
    """``Pod`` for core kinds, ``TFJob.v1.kubeflow.org`` for others (never ambiguous)."""
    group, _, version = str(manifest.get("apiVersion", "")).rpartition("/")
    kind = str(manifest.get("kind"))
    return f"{kind}.{version}.{group}" if group else kind


def prune(live: Any, shapes: Sequence[Any]) -> Any:
    """``live`` cut down to the map keys and list lengths any of ``shapes`` has."""
    maps = [s for s in shapes if isinstance(s, Mapping)]
    if isinstance(live, Mapping) and maps:
        return {
            key: prune(value, [s[key] for s in maps if key in s])
            for key, value in live.items()
            if any(key in s for s in maps)
        }
    lists = [s for s in shapes if isinstance(s, list)]
    if isinstance(live, list) and lists:
        length = max(len(s) for s in lists)
        return [prune(v, [s[i] for s in lists if i < len(s)]) for i, v in enumerate(live[:length])]
    return live


def _secret_view(
    live: Mapping[str, Any], shapes: Sequence[Mapping[str, Any]], key: bytes
) -> dict[str, Any]:
    """A live Secret shaped as the render writes it, values as fingerprints.

    The cluster keeps every value under ``data`` (base64); a value the render
    leaves to be generated at apply time (or never saw) compares as equal.
    """
    data = live.get("data") or {}
    out = {k: v for k, v in live.items() if k not in ("data", "stringData")}
    for field in ("data", "stringData"):
        wanted: dict[str, Any] = {}
        for shape in shapes:
            values = shape.get(field)
            if isinstance(values, Mapping):
                wanted.update(values)
        if not wanted:
            continue
        view: dict[str, Any] = {}
        for name, desired in wanted.items():
            if name not in data:
                continue
            masked = mask_secrets(
                {"apiVersion": "v1", "kind": "Secret", field: {name: desired}}, key
            )
            if masked[field][name] == desired:  # not a comparable value: keep the render's
                view[name] = desired
            else:
                view[name] = fingerprint(secret_bytes("data", str(data[name])), key)
        out[field] = view
    return out


def live_side(
    new: Side,
    last: Side | None,
    key: bytes,
    kubectl: Kubectl | None = None,
    label: str = "the cluster",
) -> Side:
    """What the cluster holds of the objects of ``new`` and ``last``, comparable with ``new``."""
    client = kubectl or Kubectl()
    wanted: dict[Key, list[Mapping[str, Any]]] = {}
    for side in (new, last):
        for obj_key, obj in (side.objects if side else {}).items():
            wanted.setdefault(obj_key, []).append(obj.manifest)
    objects: dict[Key, PreviewObject] = {}
    labels: dict[Key, dict[str, str]] = {}
    for obj_key, shapes in wanted.items():
        found = client.get(shapes[0])
        if found is None:
            continue
        # Who made it (trainjobs.dev/stack) is a label the render never sets: read here,
        # before prune cuts the object down to the render's fields.
        labels[obj_key] = live_labels(found)
        live = strip_server_fields(found)
        if is_secret(live):
            live = _secret_view(live, shapes, key)
        pruned = prune(live, shapes)
        known = new.objects.get(obj_key) or (last.objects.get(obj_key) if last else None)
        job = known.job if known else job_of(pruned)
        objects[obj_key] = PreviewObject(pruned, job, label)
    return Side(label, objects, labels)


def live_labels(found: Mapping[str, Any]) -> dict[str, str]:
    """The labels of an object as the cluster holds it (none: empty)."""
    meta = found.get("metadata")
    given = meta.get("labels") if isinstance(meta, Mapping) else None
    return {str(k): str(v) for k, v in given.items()} if isinstance(given, Mapping) else {}
