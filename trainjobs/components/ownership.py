"""Own only what the stack made: the guard every component's objects pass before they
are registered (the decision is :mod:`trainjobs.k8s.ownership`'s).

The stack program checks every object of the stack at once, so a refusal lists them
all; a component used in a program of one's own checks its own objects. Each object is
read from the cluster once per run. Under ``pulumi.runtime.set_mocks`` there is no
cluster: the guard reads nothing unless a test gives it a reader (:func:`reading`).
A component whose Kubernetes provider is an explicit one is checked only when it is
given the cluster's access (``ClusterAccess``), as the program cannot read a provider's
settings.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import pulumi

from trainjobs.components.cluster_reader import ClusterAccess, ClusterReadError, read_labels
from trainjobs.errors import Finding, SpecError
from trainjobs.k8s.ownership import (
    STACK_ANNOTATION,
    STACK_LABEL,
    Decision,
    ObjectKey,
    decide,
    stack_label,
)

__all__ = [
    "Guard",
    "Reader",
    "configure",
    "guard",
    "owner_metadata",
    "reading",
]

Reader = Callable[[Sequence[ObjectKey]], Mapping[ObjectKey, Mapping[str, str] | None]]
"""Reads the live labels of objects (None: absent)."""

UPSERT_CONFIG = "kubernetes:upsertExistingObjects"
UPSERT_ENV = "PULUMI_K8S_UPSERT_EXISTING_OBJECTS"


def _identity() -> tuple[str, str]:
    project, stack = pulumi.get_project(), pulumi.get_stack()
    organization = pulumi.get_organization()
    full = f"{organization}/{project}/{stack}" if organization else f"{project}/{stack}"
    return stack_label(project, stack), full


def owner_metadata() -> tuple[dict[str, str], dict[str, str]]:
    """The label and annotation every object of this stack carries."""
    label, full = _identity()
    return {STACK_LABEL: label}, {STACK_ANNOTATION: full}


def _provider_creates_client_side() -> bool:
    """Whether the installed Kubernetes SDK (and so the provider plugin it asks for) is a
    release that refuses to create an existing object unless upserting is on."""
    try:
        import pulumi_kubernetes

        args = pulumi_kubernetes.ProviderArgs.__init__.__code__.co_varnames
    except (ImportError, AttributeError):  # pragma: no cover - the SDK is a dependency
        return False
    return "upsert_existing_objects" in args


def _upsert_on() -> bool:
    value = pulumi.Config("kubernetes").get("upsertExistingObjects") or os.environ.get(UPSERT_ENV)
    return str(value).lower() == "true"


def _on_mocks() -> bool:
    from pulumi.runtime import mocks, settings

    return isinstance(getattr(settings.SETTINGS, "monitor", None), mocks.MockMonitor)


@dataclass
class Guard:
    """What one program run knows of the cluster's objects, and the stack's ``adopt``.

    Attributes:
        adopt: the objects the stack's ``adopt`` setting names.
        namespace: the config namespace of the stack's settings (for messages).
        source: the stack file (for messages).
        reader: how live labels are read; default the cluster of the provider's settings.
    """

    adopt: tuple[ObjectKey, ...] = ()
    namespace: str = "trainjobs"
    source: str = ""
    reader: Reader | None = None
    _seen: dict[ObjectKey, Mapping[str, str] | None] = field(default_factory=dict)
    _announced: set[ObjectKey] = field(default_factory=set)

    def _read(self, keys: Sequence[ObjectKey]) -> None:
        todo = [k for k in keys if k not in self._seen]
        if not todo:
            return
        reader = self.reader
        if reader is None:
            if _on_mocks():
                self._seen.update({k: None for k in todo})
                return
            config = pulumi.Config("kubernetes")
            access = ClusterAccess(config.get("kubeconfig"), config.get("context"))
            reader = lambda wanted: read_labels(access, wanted)  # noqa: E731
        try:
            self._seen.update(reader(todo))
        except ClusterReadError as exc:
            raise pulumi.RunError(
                f"trainjobs reads the cluster before an update to make sure the stack takes "
                f"over nothing it did not make, and could not: {exc}. Check the kubeconfig "
                f"the Kubernetes provider uses (kubernetes:kubeconfig, kubernetes:context, "
                f"$KUBECONFIG)."
            ) from None

    def decide(
        self,
        manifests: Iterable[Mapping[str, object]],
        paths: Mapping[ObjectKey, str] | None = None,
    ) -> Decision:
        """The decision for ``manifests`` (objects whose name is not known yet are left out)."""
        keys = [ObjectKey.of(m) for m in manifests]
        keys = [k for k in keys if k.name and "${" not in k.name and not _is_token(k)]
        self._read(keys)
        label, _ = _identity()
        return decide(
            keys,
            {k: self._seen.get(k) for k in keys},
            label,
            self.adopt,
            namespace=self.namespace,
            paths=paths,
            source=self.source,
            shared_hint=True,
        )

    def claim(
        self,
        manifests: Iterable[Mapping[str, object]],
        paths: Mapping[ObjectKey, str] | None = None,
        resource: pulumi.Resource | None = None,
    ) -> None:
        """Stop the run (``pulumi.RunError``) listing every object that exists and is not
        this stack's; say (as a warning, on ``resource``) which it adopts."""
        decision = self.decide(manifests, paths)
        findings: list[Finding] = list(decision.refused)
        fresh = [k for k in decision.adopted if k not in self._announced]
        if fresh and _provider_creates_client_side() and not _upsert_on():
            findings += [
                Finding(
                    code="stack.adopt_provider",
                    path=f"{self.namespace}:adopt",
                    message=(
                        f"{k.title} is to be adopted, but the Kubernetes provider in use "
                        "refuses to create an object that exists"
                    ),
                    value=k.adopt_entry,
                    hint=f"for the update that adopts it: pulumi config set {UPSERT_CONFIG} "
                    f"true (trainjobs still refuses every existing object {self.namespace}:"
                    "adopt does not name)",
                    source=self.source,
                )
                for k in fresh
            ]
        if findings:
            raise pulumi.RunError(str(SpecError.from_findings(findings)))
        for key in fresh:
            self._announced.add(key)
            pulumi.log.warn(
                f"adopting {key.title}: it exists and was not made by this stack; "
                f"{self.namespace}:adopt names it, so this update takes it over and "
                "`pulumi destroy` will delete it",
                resource=resource,
            )


def _is_token(key: ObjectKey) -> bool:
    from trainjobs.components.inputs import is_input_token

    return is_input_token(key.name) or bool(key.namespace and is_input_token(key.namespace))


_GUARD: list[Guard] = []


def guard() -> Guard:
    """The guard of this program run (made on first use)."""
    if not _GUARD:
        _GUARD.append(Guard())
    return _GUARD[0]


def configure(chosen: Guard) -> None:
    """Make ``chosen`` the guard of this program run (the stack program's, with its
    ``adopt`` setting)."""
    _GUARD[:] = [chosen]


@contextlib.contextmanager
def reading(
    reader: Reader | None = None, adopt: Sequence[ObjectKey] = (), namespace: str = "trainjobs"
) -> Iterator[Guard]:
    """Use a guard with ``reader`` and ``adopt`` for the ``with`` block (the stack program,
    tests), the run's earlier guard restored after it."""
    saved = list(_GUARD)
    _GUARD[:] = [Guard(adopt=tuple(adopt), namespace=namespace, reader=reader)]
    try:
        yield _GUARD[0]
    finally:
        _GUARD[:] = saved


def provider_version() -> str:
    """The installed Kubernetes SDK's version (the provider plugin it asks for)."""
    return importlib.metadata.version("pulumi-kubernetes")
