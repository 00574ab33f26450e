"""MPIOperator: the Kubeflow MPI Operator v0.8 install (MPIJob ``kubeflow.org/v2beta1``).

Objects, as ``deploy/v2beta1/mpi-operator.yaml`` of kubeflow/mpi-operator release-0.8
lists them (kubeflow-operators.md §6.2), every one labelled with the four upstream
labels: Namespace ``mpi-operator``, the MPIJob CRD, ServiceAccount, the Kubeflow
aggregated ClusterRoles ``kubeflow-mpijobs-admin|edit|view``, ClusterRole and
ClusterRoleBinding ``mpi-operator`` and Deployment ``mpi-operator``. No Service, no
webhook.

RBAC: upstream grants ``*`` on MPIJobs, leases and PodGroups, and on Volcano queues and
two retired scheduling groups the v0.8 controller never calls. trainjobs grants by
default only the verbs the controller uses (``rbac: least-privilege``); ``rbac:
upstream`` reproduces the upstream rules exactly, and a warning says so.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from trainjobs.errors import Finding
from trainjobs.k8s.data import Manifest
from trainjobs.platform import install
from trainjobs.platform.base import PlatformResource
from trainjobs.platform.install import WILDCARD, PolicyRule
from trainjobs.platform.operator import (
    GangScheduler,
    OperatorKind,
    OperatorSpec,
    gang_prerequisite,
    wildcard_findings,
)

__all__ = ["DEFAULT_IMAGE", "MPIOperator", "MPIOperatorKind", "MPIOperatorSpec"]

NAME = "mpi-operator"
VERSION = "v0.8"
DEFAULT_IMAGE = "mpioperator/mpi-operator:0.8.0"
"""The v0.8.0 release image. Upstream's release-0.8 manifest names the floating tag
``0.8``; trainjobs pins the release (override with ``spec.image``)."""
CRD_FILE = f"mpi-operator-{VERSION}/kubeflow.org_mpijobs.yaml"
LABELS = {
    "app": NAME,
    "app.kubernetes.io/component": "mpijob",
    "app.kubernetes.io/name": NAME,
    "kustomize.component": NAME,
}
AGGREGATE = "rbac.authorization.kubeflow.org/aggregate-to-"
JOB_VERBS = ("get", "list", "watch", "create", "delete", "deletecollection", "patch", "update")


class MPIOperatorSpec(OperatorSpec):
    """``spec`` of an MPIOperator."""

    gang_scheduler: str | None = Field(
        default=None,
        description=(
            "--gang-scheduling: 'volcano' for Volcano PodGroups, any other name for "
            "scheduler-plugins coscheduling with that scheduler. Default off."
        ),
    )
    rbac: Literal["least-privilege", "upstream"] = Field(
        default="least-privilege",
        description=(
            "least-privilege (default): only the verbs the v0.8 controller uses. upstream: "
            "the release's rules verbatim, '*' on MPIJobs, leases, PodGroups and queues."
        ),
    )
    aggregate_roles: bool = Field(
        default=True,
        description=(
            "Install the ClusterRoles kubeflow-mpijobs-admin|edit|view that Kubeflow's "
            "user roles aggregate; default true, as upstream."
        ),
    )


class MPIOperator(PlatformResource):
    """An MPIOperator document."""

    kind: Literal["MPIOperator"] = "MPIOperator"
    spec: MPIOperatorSpec = Field(default_factory=MPIOperatorSpec)


class MPIOperatorKind(OperatorKind[MPIOperator]):
    """Renders the MPI Operator v0.8 install."""

    title = f"Kubeflow MPI Operator {VERSION} (MPIJob kubeflow.org/v2beta1)"
    default_namespace = "mpi-operator"
    version = VERSION
    served = (("kubeflow.org/v2beta1", "MPIJob"),)

    def gang(self, resource: PlatformResource) -> GangScheduler | None:
        flag = self.document(resource).spec.gang_scheduler
        return GangScheduler.from_flag(flag) if flag else None

    def validate(self, resource: PlatformResource) -> list[Finding]:
        return [
            *wildcard_findings(
                self.rules(resource),
                "spec.rbac",
                "use rbac: least-privilege unless the operator fails for a missing permission",
            ),
            *gang_prerequisite(self.document(resource).spec.gang_scheduler),
        ]

    def rules(self, resource: PlatformResource) -> list[PolicyRule]:
        """The ClusterRole ``mpi-operator``: upstream's, or only what v0.8 calls."""
        upstream = self.document(resource).spec.rbac == "upstream"
        every = (WILDCARD,)
        common = [
            PolicyRule(
                ("",), ("configmaps", "secrets", "services"), ("create", "list", "watch", "update")
            ),
            PolicyRule(
                ("",), ("pods",), ("create", "get", "list", "watch", "delete", "update", "patch")
            ),
            PolicyRule(("",), ("pods/exec",), ("create",)),
            PolicyRule(("",), ("endpoints",), ("create", "get", "update")),
            PolicyRule(("",), ("events",), ("create", "patch")),
            PolicyRule(("batch",), ("jobs",), ("create", "list", "update", "watch")),
            PolicyRule(
                ("apiextensions.k8s.io",), ("customresourcedefinitions",), ("create", "get")
            ),
        ]
        priority = PolicyRule(
            ("scheduling.k8s.io",), ("priorityclasses",), ("get", "list", "watch")
        )
        if upstream:
            return [
                *common,
                PolicyRule(
                    ("kubeflow.org",), ("mpijobs", "mpijobs/finalizers", "mpijobs/status"), every
                ),
                PolicyRule(("coordination.k8s.io",), ("leases",), every),
                PolicyRule(
                    ("scheduling.incubator.k8s.io", "scheduling.sigs.dev", "scheduling.volcano.sh"),
                    ("queues", "podgroups"),
                    every,
                ),
                PolicyRule(("scheduling.x-k8s.io",), ("podgroups",), every),
                priority,
            ]
        # The controller lists and watches MPIJobs, writes their status, owns objects
        # through them (finalizers), elects a leader with a Lease, and manages PodGroups.
        podgroup_verbs = ("create", "delete", "get", "list", "update", "watch")
        return [
            *common,
            PolicyRule(
                ("kubeflow.org",), ("mpijobs",), ("get", "list", "watch", "update", "patch")
            ),
            PolicyRule(("kubeflow.org",), ("mpijobs/finalizers",), ("update",)),
            PolicyRule(("kubeflow.org",), ("mpijobs/status",), ("get", "update", "patch")),
            PolicyRule(("coordination.k8s.io",), ("leases",), ("create", "get", "update")),
            PolicyRule(("scheduling.volcano.sh",), ("podgroups",), podgroup_verbs),
            PolicyRule(("scheduling.x-k8s.io",), ("podgroups",), podgroup_verbs),
            priority,
        ]

    def manifests(self, resource: PlatformResource) -> list[Manifest]:
        spec = self.document(resource).spec
        ns = self.required_namespace(resource)
        objects: list[Manifest] = []
        if spec.create_namespace:
            objects.append(install.namespace(ns, LABELS))
        objects.append(install.crd(CRD_FILE, LABELS))
        objects.append(install.service_account(NAME, ns, LABELS))
        if spec.aggregate_roles:
            job_rule = PolicyRule(("kubeflow.org",), ("mpijobs", "mpijobs/status"), JOB_VERBS)
            view_rule = PolicyRule(
                ("kubeflow.org",), ("mpijobs", "mpijobs/status"), ("get", "list", "watch")
            )
            objects += [
                install.aggregated_cluster_role(
                    "kubeflow-mpijobs-admin",
                    {f"{AGGREGATE}kubeflow-mpijobs-admin": "true"},
                    {**LABELS, f"{AGGREGATE}kubeflow-admin": "true"},
                ),
                install.cluster_role(
                    "kubeflow-mpijobs-edit",
                    [job_rule],
                    {
                        **LABELS,
                        f"{AGGREGATE}kubeflow-edit": "true",
                        f"{AGGREGATE}kubeflow-mpijobs-admin": "true",
                    },
                ),
                install.cluster_role(
                    "kubeflow-mpijobs-view",
                    [view_rule],
                    {**LABELS, f"{AGGREGATE}kubeflow-view": "true"},
                ),
            ]
        objects += [
            install.cluster_role(NAME, self.rules(resource), LABELS),
            install.cluster_role_binding(NAME, NAME, NAME, ns, LABELS),
            install.deployment(
                NAME,
                ns,
                LABELS,
                self._pod_spec(resource, ns),
                pod_annotations={"sidecar.istio.io/inject": "false"},
            ),
        ]
        return objects

    def _pod_spec(self, resource: PlatformResource, ns: str) -> dict[str, Any]:
        spec = self.document(resource).spec
        args = ["-alsologtostderr", f"--lock-namespace={ns}"]
        if spec.gang_scheduler:
            args.append(f"--gang-scheduling={spec.gang_scheduler}")
        container: dict[str, Any] = {
            "args": args,
            "image": spec.image or DEFAULT_IMAGE,
            "name": NAME,
        }
        spec.apply_resources(container)
        return spec.finish_pod_spec({"containers": [container], "serviceAccountName": NAME})


KIND = MPIOperatorKind()
