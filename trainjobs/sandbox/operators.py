"""Which operators a sandbox runs, and how: the stack's own install components, else the
built-in ones.

A stack that installs an operator (a ``TrainingOperator``, ``MPIOperator``, ``JobSet`` or
``Trainer`` among its ``operators``) gets that operator run where and as the stack
declares it: in the install's namespace, with its job kinds (``enabledSchemes``), its gang
scheduler flag, and its own webhook configurations (registered by URL, since no Service
routes to loopback). The program is always the version the project pins
(``tests/cluster/versions.env``); an install that asks for another says so in a note. An
operator kind the stack does not install runs as the sandbox's built-in one, as a cluster
would already have it. Operators trainjobs installs but the sandbox has no program for
(Caffe2, MindSpore, PaddlePaddle EDL) are named in a note: their Deployments are created
(kwok runs no container), their jobs are not reconciled.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainjobs.k8s.images import KUBECTL_DELIVERY_IMAGE
from trainjobs.sandbox.installs import (
    CRD_PREFERRED,
    MPI_OPERATOR_LOCK_NAMESPACE,
    MPIJOB_V1_CRD,
    TRAINER_NAMESPACE,
    TRAINING_OPERATOR_NAMESPACE,
    TRAINING_OPERATOR_SCHEMES,
)

if TYPE_CHECKING:
    from trainjobs.render.model import Rendering
    from trainjobs.spec.entry import PlatformEntry

__all__ = ["PINNED", "OperatorRun", "Operators", "operators_from", "stack_operators"]

PINNED = {
    "TrainingOperator": "v1.9.4",
    "MPIOperator": "v0.8.0",
    "JobSet": "v0.12.0",
    "Trainer": "v2.3.0",
}
"""The release of each operator program the sandbox runs (``tests/cluster/versions.env``)."""


@dataclass(frozen=True)
class OperatorRun:
    """How the sandbox runs one operator program."""

    namespace: str
    """Where it runs: its Secrets, Lease and (for the Training Operator) webhook Service
    namespace."""
    args: tuple[str, ...] = ()
    """Flags of the install the program gets as they are (job kinds, gang scheduler);
    every other flag (ports, certificates, kubeconfig) is the sandbox's."""
    webhooks: tuple[Mapping[str, Any], ...] = ()
    """The install's webhook configurations as rendered (Service references); empty:
    the built-in ones."""
    source: str = "built-in"
    """``built-in``, or the stack's install: ``operators[0] TrainingOperator 'x'``."""

    @property
    def runs_mpijob_v1(self) -> bool:
        """Whether this Training Operator run reconciles MPIJob v1 (``--enable-scheme=mpijob``)."""
        return "--enable-scheme=mpijob" in self.args


@dataclass(frozen=True)
class Operators:
    """The operator programs of a sandbox (None: not run)."""

    training_operator: OperatorRun | None = OperatorRun(
        TRAINING_OPERATOR_NAMESPACE,
        tuple(f"--enable-scheme={s}" for s in TRAINING_OPERATOR_SCHEMES),
    )
    mpi_operator: OperatorRun | None = OperatorRun(MPI_OPERATOR_LOCK_NAMESPACE)
    jobset: OperatorRun | None = OperatorRun(TRAINER_NAMESPACE)
    trainer: OperatorRun | None = OperatorRun(TRAINER_NAMESPACE)
    notes: tuple[str, ...] = field(default=())
    """What differs from what the stack declares, for people."""

    @property
    def mpijob_crd(self) -> str:
        """The shipped CRD file to serve ``mpijobs.kubeflow.org`` from: the Training
        Operator's (v1) when it runs MPIJob v1, else the MPI Operator's (v2beta1)."""
        run = self.training_operator
        if run is not None and run.runs_mpijob_v1:
            return MPIJOB_V1_CRD
        return CRD_PREFERRED["mpijobs.kubeflow.org"]

    @property
    def webhook_names(self) -> set[str]:
        """Names of the stack's webhook configurations the sandbox registers itself."""
        runs = (self.training_operator, self.mpi_operator, self.jobset, self.trainer)
        return {h["metadata"]["name"] for run in runs if run for h in run.webhooks}

    def described(self, running: Collection[str] | None = None) -> list[str]:
        """One line per operator program: where it runs and whose install it is (only
        the programs named in ``running``, when given)."""
        runs = {
            "training-operator": self.training_operator,
            "mpi-operator": self.mpi_operator,
            "jobset": self.jobset,
            "trainer-controller-manager": self.trainer,
        }
        return [
            f"{name} in namespace {run.namespace} ({run.source})"
            for name, run in runs.items()
            if run is not None and (running is None or name in running)
        ]


def _training_operator(
    entry: PlatformEntry, source: str, notes: list[str], *, with_mpi_operator: bool
) -> OperatorRun | None:
    from trainjobs.platform.training_operator import TrainingOperatorKind

    kind = entry.plugin
    assert isinstance(kind, TrainingOperatorKind)
    spec = kind.document(entry.resource).spec
    schemes = [s.kind.lower() for s in kind.schemes(entry.resource)]
    if "mpijob" in schemes and with_mpi_operator:
        # Both serve mpijobs.kubeflow.org (v1 here, v2beta1 there): one CRD, one owner.
        schemes.remove("mpijob")
        notes.append(
            f"{source}: MPIJob v1 is not run by the Training Operator here: the stack's "
            "MPIOperator serves mpijobs.kubeflow.org (v2beta1)"
        )
    if not schemes:
        notes.append(f"{source}: runs no other kind, so the sandbox runs no Training Operator")
        return None
    args = [f"--enable-scheme={s}" for s in schemes]
    if spec.gang_scheduler:
        args.append(f"--gang-scheduler-name={spec.gang_scheduler}")
    if "mpijob" in schemes:
        args.append(f"--mpi-kubectl-delivery-image={KUBECTL_DELIVERY_IMAGE}")
    return OperatorRun(kind.required_namespace(entry.resource), tuple(args), source=source)


def _mpi_operator(entry: PlatformEntry, source: str) -> OperatorRun:
    from trainjobs.platform.mpi_operator import MPIOperatorKind

    kind = entry.plugin
    assert isinstance(kind, MPIOperatorKind)
    spec = kind.document(entry.resource).spec
    args = (f"--gang-scheduling={spec.gang_scheduler}",) if spec.gang_scheduler else ()
    return OperatorRun(kind.required_namespace(entry.resource), args, source=source)


def _asked_version(entry: PlatformEntry) -> str | None:
    version = getattr(entry.resource.spec, "version", None)  # only TrainingOperator has one
    return str(version) if version else None


def operators_from(
    platform: Sequence[PlatformEntry], rendering: Rendering | None = None
) -> Operators:
    """The sandbox's operators for a stack's platform entries (see the module doc).

    ``rendering``: the stack's render, whose webhook configurations of each install the
    sandbox registers by URL; without it the built-in ones are.
    """
    chosen: dict[str, OperatorRun | None] = {}
    notes: list[str] = []
    for entry in platform:
        if entry.plugin.category != "operator":
            continue
        kind = entry.resource.kind
        source = f"{entry.path} {kind} {entry.resource.name!r}"
        field_name = {
            "TrainingOperator": "training_operator",
            "MPIOperator": "mpi_operator",
            "JobSet": "jobset",
            "Trainer": "trainer",
        }.get(kind)
        if field_name is None:
            notes.append(
                f"{source}: the sandbox has no program of it (its Deployment is created, "
                "kwok runs no container): its jobs are not reconciled"
            )
            continue
        if field_name in chosen:
            notes.append(f"{source}: a second install of {kind}; the sandbox runs the first")
            continue
        asked = _asked_version(entry)
        if asked and asked != PINNED[kind]:
            notes.append(
                f"{source}: asks for {asked}; the sandbox runs {PINNED[kind]}, the version "
                "the project pins"
            )
        run: OperatorRun | None
        if kind == "TrainingOperator":
            run = _training_operator(
                entry, source, notes, with_mpi_operator=_installs(platform, "MPIOperator")
            )
        elif kind == "MPIOperator":
            run = _mpi_operator(entry, source)
        else:
            namespace = entry.plugin.namespace(entry.resource) or TRAINER_NAMESPACE
            run = OperatorRun(namespace, source=source)
        if run is not None and rendering is not None:
            run = replace(run, webhooks=_webhooks_of(rendering, entry.path, kind))
        chosen[field_name] = run
        if run is None:
            continue
        if kind == "Trainer" and "jobset" not in chosen and _installs_jobset(entry):
            hooks = _webhooks_of(rendering, entry.path, "JobSet") if rendering else ()
            chosen["jobset"] = OperatorRun(run.namespace, webhooks=hooks, source=source)
    training = chosen.get("training_operator")
    if training is not None and training.runs_mpijob_v1 and "mpi_operator" not in chosen:
        # The cluster the stack describes has MPIJob v1 from its Training Operator, so
        # mpijobs.kubeflow.org is v1 there: no built-in MPI Operator beside it.
        chosen["mpi_operator"] = None
        notes.append(
            f"{training.source}: runs MPIJob v1 (kubeflow.org/v1), so the sandbox installs "
            "the Training Operator's mpijobs.kubeflow.org and runs no MPI Operator"
        )
    return replace(Operators(), **chosen, notes=tuple(notes))


def _installs(platform: Sequence[PlatformEntry], kind: str) -> bool:
    return any(e.plugin.category == "operator" and e.resource.kind == kind for e in platform)


def _installs_jobset(entry: PlatformEntry) -> bool:
    """Whether a Trainer install brings the JobSet controller (``installJobSet``)."""
    return bool(getattr(entry.resource.spec, "install_jobset", False))


def _webhooks_of(rendering: Rendering, origin: str, kind: str) -> tuple[Mapping[str, Any], ...]:
    """The webhook configurations the install at ``origin`` renders; a Trainer install's
    JobSet ones go to the JobSet program (``kind`` JobSet), the others to the Trainer."""
    hooks = []
    for obj in rendering.objects:
        manifest = obj.manifest
        if obj.origin != origin or not str(manifest.get("kind", "")).endswith(
            "WebhookConfiguration"
        ):
            continue
        is_jobset = str(manifest["metadata"]["name"]).startswith("jobset")
        if kind in ("Trainer", "JobSet") and is_jobset != (kind == "JobSet"):
            continue
        hooks.append(manifest)
    return tuple(hooks)


def stack_operators(stack: str | Path) -> Operators:
    """The sandbox's operators for a stack file (SpecError when it does not load)."""
    from trainjobs.render import render
    from trainjobs.spec import load_path

    loaded = load_path(stack)
    return operators_from(loaded.platform, render(loaded))
