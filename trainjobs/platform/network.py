"""Who may reach a listening backend: a NetworkPolicy, and the label that admits a job.

A backend that listens (a Redis service) renders a NetworkPolicy that selects its own
pods and admits, on its port only, the pods labelled :data:`BACKEND_LABEL` with its name.
A job that names the backend gets that label on every pod template; the operators keep
a template's labels on the pods they create (Training Operator, MPI Operator, the
Caffe2 and kubebuilder MindSpore operators, JobSet and so Trainer v2), and the ``pods``
target copies them, so on every target the pods of the jobs that use the backend — and
only those — carry it. Where a job's pods cannot be admitted that way, the job is
refused with the fix (see the rules below). Opting out is explicit: the backend's
``networkPolicy: false``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from trainjobs.errors import Finding, Rule
from trainjobs.k8s.data import Manifest, deep_copy
from trainjobs.k8s.names import shorten
from trainjobs.plan import JobPlan
from trainjobs.plan.listeners import Listener
from trainjobs.platform.base import Reference
from trainjobs.platform.workload import MANAGED_BY

__all__ = [
    "BACKEND_LABEL",
    "POLICY_NAMESPACE",
    "POLICY_UNREACHABLE",
    "admission_problems",
    "backend_policy",
    "label_pods",
    "listener_policy",
    "network_policy_field",
]

BACKEND_LABEL = "trainjobs.dev/backend"
"""The pod label (value: the backend's name) a backend's NetworkPolicy admits."""

_DROPS_TEMPLATE_LABELS = {("kubeflow.org/v1", "MSJob")}
"""Kinds whose operator gives its pods only labels of its own (the 2020 ms-operator's
MSJob: the template's metadata is not copied, and the ``pods`` target does as it does),
so the backend label never reaches them."""

POLICY_NAMESPACE = Rule(
    "backend.policy_namespace",
    "backend {backend!r} admits only pods of its own namespace {namespace!r} (its "
    "NetworkPolicy), but the job runs in {job_namespace!r}",
    hint="put the backend in namespace {job_namespace!r}, or set networkPolicy: false on "
    "the backend to let any pod in the cluster connect",
)
POLICY_UNREACHABLE = Rule(
    "backend.policy_unreachable",
    "backend {backend!r} admits only pods labelled {label}={backend}, but {why}, so its "
    "NetworkPolicy would refuse the job's pods",
    hint="set networkPolicy: false on the backend to let any pod in the cluster connect "
    "(a password still guards it), or {fix}",
)


def network_policy_field(what: str) -> Any:
    """The ``networkPolicy`` field of a listening kind: on unless explicitly false."""
    return Field(
        default=True,
        description=(
            "true (default): a NetworkPolicy lets only the pods of the jobs that name "
            f"this backend (they get the label trainjobs.dev/backend=<name>) reach {what}. "
            "false: no NetworkPolicy; any pod that can reach the Service may connect. "
            "Write false only on purpose (e.g. for a job on the host network)."
        ),
    )


def backend_policy(
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    selector: Mapping[str, str],
    ports: Sequence[int],
) -> Manifest:
    """The NetworkPolicy named ``name`` selecting the backend's pods (``selector``) and
    admitting, on ``ports`` (TCP), only pods labelled :data:`BACKEND_LABEL` = ``name``."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "podSelector": {"matchLabels": dict(selector)},
            "policyTypes": ["Ingress"],
            "ingress": [
                {
                    "from": [{"podSelector": {"matchLabels": {BACKEND_LABEL: name}}}],
                    "ports": [{"protocol": "TCP", "port": port} for port in ports],
                }
            ],
        },
    }


def admission_problems(
    backend: str, namespace: str, plan: JobPlan, ref: Reference
) -> list[Finding]:
    """Why the NetworkPolicy of ``backend`` (in ``namespace``) could not admit the pods of
    the job of ``plan``; none when it can."""
    if namespace != plan.namespace and not ref.undecided(namespace, plan.namespace):
        return [
            POLICY_NAMESPACE.at(
                ref.path,
                ref.name,
                backend=backend,
                namespace=namespace,
                job_namespace=plan.namespace,
            )
        ]
    why = fix = ""
    if any((s.template.get("spec") or {}).get("hostNetwork") is True for s in plan.pod_sets):
        # A NetworkPolicy sees a host-network pod's traffic as the node's, not the pod's.
        why, fix = "the job's pods use the host network", "drop hostNetwork from the job"
    elif (plan.kind.api_version, plan.kind.kind) in _DROPS_TEMPLATE_LABELS:
        # The pods target reproduces that operator, labels included.
        why = f"the {plan.kind.kind} operator does not copy the template's labels to its pods"
        fix = "select its pods yourself in a NetworkPolicy of your own"
    if not why:
        return []
    return [
        POLICY_UNREACHABLE.at(
            ref.path, ref.name, backend=backend, label=BACKEND_LABEL, why=why, fix=fix
        )
    ]


def label_pods(plan: JobPlan, backend: str) -> JobPlan:
    """The plan with :data:`BACKEND_LABEL` = ``backend`` on every pod template."""
    templates: dict[str, dict[str, Any]] = {}
    for pod_set in plan.pod_sets:
        template = deep_copy(dict(pod_set.template))
        metadata = template.pop("metadata", None) or {}
        metadata["labels"] = {**(metadata.get("labels") or {}), BACKEND_LABEL: backend}
        # metadata first, as people write a template.
        templates[pod_set.role] = {"metadata": metadata, **template}
    return plan.with_templates(templates)


def listener_policy(job: str, namespace: str, listener: Listener) -> Manifest:
    """The NetworkPolicy ``<job>-<suffix>`` selecting the pods of ``job`` that run the
    listener and admitting, on its ports (TCP), only the pods of the same job in the
    client roles."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {
            "name": shorten(f"{job}-{listener.suffix}"),
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": MANAGED_BY},
        },
        "spec": {
            "podSelector": {"matchLabels": {listener.server_label: job}},
            "policyTypes": ["Ingress"],
            "ingress": [
                {
                    "from": [
                        {"podSelector": {"matchLabels": {label: job}}}
                        for label in listener.client_labels
                    ],
                    "ports": [{"protocol": "TCP", "port": port} for port in listener.ports],
                }
            ],
        },
    }
