"""Changing a running job's target in one update: which objects would be lost.

The ``pods`` and ``jobset`` targets declare objects a controller makes otherwise, under
the names that controller gives them. When a job moves to such a target in one
``pulumi up``, Pulumi creates the new objects before it deletes the old custom resource;
the Kubernetes provider's create (server-side apply) then takes over the controller's
objects of the same kind and name, which keep their owner reference to the old custom
resource, and deleting that resource garbage-collects them: the update succeeds and the
job's Pods are gone (tests/cluster/pulumi_up/test_target_switch.py shows it with the
real engine, provider and Training Operator). :func:`adopted_objects` says which
objects a switch would take over, so the stack program can refuse it.
"""

from __future__ import annotations

from collections.abc import Iterable

from trainjobs.frameworks.capabilities import TrainerConversion
from trainjobs.render.model import RenderedJob, RenderedObject
from trainjobs.targets.registry import PLUGINS

__all__ = ["OWNED_TARGETS", "adopted_objects"]

OWNED_TARGETS = frozenset(name for name, plugin in PLUGINS.items() if plugin.takes_over)
"""The targets whose objects a controller of another target makes under the same names."""

# What Kubeflow Trainer v2.3.0 makes for a TrainJob <tj>, through the JobSet it creates
# (kubeflow-operators.md §7.3-7.5): the JobSet <tj>, its headless Service <tj> (the
# Trainer hard-codes the TrainJob name as the subdomain), the PodGroup <tj> of a gang,
# the MPI Secret <tj>-mpi-ssh-auth and ConfigMap <tj>-mpi-hostfile, and one Job
# <tj>-<replicatedJob>-0 per replicated job (the Trainer sets replicas 1). Its Pods are
# named by the Job controller with a random suffix, so no declared Pod can match them.
_TRAINER_NAMED_AS_JOB = ("JobSet", "Service", "PodGroup")
_TRAINER_SUFFIXED = {"Secret": ("-mpi-ssh-auth",), "ConfigMap": ("-mpi-hostfile",)}
# The JobSet controller makes a JobSet's Jobs and its headless Service; the Secret and
# ConfigMap of an MPI TrainJob are the jobset target's own (same Pulumi resources on
# the pods target, so an update, not a take-over).
_JOBSET_CONTROLLER_KINDS = frozenset({"Job", "Service"})


def adopted_objects(job: RenderedJob, previous: str) -> tuple[str, ...]:
    """The objects (``Kind namespace/name``) ``job`` declares on its target that the
    controllers of its ``previous`` target made under the same kind and name; empty when
    the switch takes nothing over (or ``previous`` is its target, or not a target).

    - ``operator`` → ``pods`` or ``jobset``: every object. Both targets reproduce what
      the operator (a TrainJob's Trainer and JobSet) creates, names included, by design.
    - ``jobset`` → ``pods`` (a TrainJob): the JobSet controller's Jobs and Service. (A
      job of a kind without a jobset target was another kind before: nothing to say.)
    - ``trainer`` → ``pods`` (a v1 job): only what bears a name the Trainer gives. A
      PyTorchJob's Pods and Services (``<job>-worker-0``) never do; an MPIJob's
      headless Service ``<job>`` is the JobSet's Service, so that switch loses it.
    """
    if previous == job.target or job.target not in OWNED_TARGETS:
        return ()
    objects = job.objects
    targets = job.entry.framework.targets
    if previous == "operator":
        found: Iterable[RenderedObject] = objects
    elif previous == "jobset" and job.target == "pods" and "jobset" in targets:
        found = (o for o in objects if o.identity[1] in _JOBSET_CONTROLLER_KINDS)
    elif previous == "trainer" and job.target == "pods":
        taken = _trainer_names(job)
        found = (o for o in objects if o.identity[1:] in taken)
    else:
        found = ()
    return tuple(o.title for o in found)


def _trainer_names(job: RenderedJob) -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of what the Trainer and JobSet make for ``job`` rendered
    to the trainer target (its TrainJob is named as the job)."""
    name, namespace = job.plan.name, job.plan.namespace
    names = {(kind, namespace, name) for kind in _TRAINER_NAMED_AS_JOB}
    for kind, suffixes in _TRAINER_SUFFIXED.items():
        names.update((kind, namespace, name + s) for s in suffixes)
    framework = job.entry.framework
    if isinstance(framework, TrainerConversion):
        trainer, _ = framework.trainer_plan(job.job)
        for replicated in trainer.jobs if trainer is not None else ():
            names.add(("Job", namespace, f"{name}-{replicated.name}-0"))
    return names
