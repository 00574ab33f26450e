"""Helpers the cluster proofs share: render, apply with the real kubectl, read back."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from tests.cluster.control_plane import ApiError, ControlPlane
from trainjobs.check import run
from trainjobs.k8s.yamlio import dump_all
from trainjobs.spec import load_path

__all__ = [
    "ApplyResult",
    "apply",
    "collection_path",
    "ensure_namespaces",
    "poll",
    "render",
]

Manifest = dict[str, Any]

CORE_PLURALS = {
    "Pod": "pods",
    "Service": "services",
    "Secret": "secrets",
    "ConfigMap": "configmaps",
    "Namespace": "namespaces",
    "Node": "nodes",
    "ServiceAccount": "serviceaccounts",
    "Event": "events",
}


def render(path: Path, target: str | None = None, **options: Any) -> list[Manifest]:
    """What ``trainjobs render`` prints for ``path`` (unredacted: apply needs the objects)."""
    rendering = run(load_path(path), target=target, **options)  # type: ignore[arg-type]
    return list(rendering.manifests)


def collection_path(kind: str, namespace: str | None) -> str:
    """The REST path of a core kind's collection (``/api/v1/namespaces/ns/pods``)."""
    plural = CORE_PLURALS[kind]
    if namespace is None:
        return f"/api/v1/{plural}"
    return f"/api/v1/namespaces/{namespace}/{plural}"


def ensure_namespaces(cluster: ControlPlane, manifests: Iterable[Manifest]) -> None:
    """Create (plain, unlabelled) every namespace the objects live in or declare.

    A dry run creates nothing, so a namespaced object's namespace must exist first;
    the render's own Namespace objects are then dry-run applied over these.
    """
    names = set()
    for m in manifests:
        if m["kind"] == "Namespace":
            names.add(m["metadata"]["name"])
        elif m["metadata"].get("namespace"):
            names.add(m["metadata"]["namespace"])
    for name in sorted(names):
        cluster.ensure_namespace(name)


class ApplyResult:
    """What ``kubectl apply`` said: its exit code, output and errors."""

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def __str__(self) -> str:
        return f"exit {self.returncode}\n{self.stdout}\n{self.stderr}".strip()


def apply(
    cluster: ControlPlane,
    manifests: Sequence[Manifest],
    *,
    dry_run: bool,
    field_manager: str = "trainjobs-tests",
) -> ApplyResult:
    """``kubectl apply --server-side`` of the objects (``--dry-run=server`` if asked)."""
    args = [
        "apply",
        "--server-side",
        "--force-conflicts",
        f"--field-manager={field_manager}",
        "-o",
        "name",
        "-f",
        "-",
    ]
    if dry_run:
        args.insert(1, "--dry-run=server")
    result = cluster.kubectl(*args, stdin=dump_all(manifests), check=False)
    return ApplyResult(result.returncode, result.stdout, result.stderr)


def poll(what: str, probe: Callable[[], Any], timeout: float = 30, every: float = 0.2) -> Any:
    """Call ``probe`` until it returns something truthy; that value. AssertionError on timeout."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except ApiError as exc:
            last = exc
        else:
            if last:
                return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")
