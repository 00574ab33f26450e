"""Operator kinds: options, validation, the CRD rule, and how jobs wait for operators."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import EXAMPLES
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.platform import API_VERSION, PLATFORM
from trainjobs.platform.install import PolicyRule
from trainjobs.platform.mpi_operator import MPIOperatorKind
from trainjobs.platform.operator import GangScheduler
from trainjobs.platform.training_operator import TrainingOperatorKind
from trainjobs.render import UnitRef
from trainjobs.spec import StackSpec, load_path, parse_documents
from trainjobs.spec.load import parse_entry

REQUESTS: dict[str, Any] = {"requests": {"cpu": "100m", "memory": "64Mi"}}
"""Controller requests that satisfy the resources.requests check."""


def _doc(kind: str, spec: dict[str, Any] | None = None, name: str = "op") -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name}, "spec": spec or {}}


def _manifests(kind: str, spec: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    plugin = PLATFORM.by_kind(kind)
    assert plugin is not None
    return plugin.manifests(plugin.model.model_validate(_doc(kind, spec)))


def _by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def _errors(doc: dict[str, Any]) -> list[str]:
    return [f.render() for f in parse_entry(doc, path="operators[0]").findings]


TFJOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "tf", "namespace": "ml"},
    "spec": {
        "tfReplicaSpecs": {
            "Worker": {
                "replicas": 2,
                "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}},
            }
        }
    },
}


def test_enabled_schemes_choose_crds_webhooks_rules_and_flags() -> None:
    objects = _manifests("TrainingOperator", {"enabledSchemes": ["TFJob", "pytorchjob"]})
    assert [c["metadata"]["name"] for c in _by_kind(objects, "CustomResourceDefinition")] == [
        "tfjobs.kubeflow.org",
        "pytorchjobs.kubeflow.org",
    ]
    (hooks,) = _by_kind(objects, "ValidatingWebhookConfiguration")
    assert [w["name"] for w in hooks["webhooks"]] == [
        "validator.pytorchjob.training-operator.kubeflow.org",
        "validator.tfjob.training-operator.kubeflow.org",
    ]
    (role,) = _by_kind(objects, "ClusterRole")
    job_resources = [r["resources"][0] for r in role["rules"] if r["apiGroups"] == ["kubeflow.org"]]
    assert job_resources == [
        "pytorchjobs",
        "pytorchjobs/finalizers",
        "pytorchjobs/status",
        "tfjobs",
        "tfjobs/finalizers",
        "tfjobs/status",
    ]
    (deployment,) = _by_kind(objects, "Deployment")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "--enable-scheme=tfjob",
        "--enable-scheme=pytorchjob",
    ]


def test_gang_scheduler_flag() -> None:
    kind = TrainingOperatorKind()
    resource = kind.model.model_validate(_doc("TrainingOperator", {"gangScheduler": "volcano"}))
    (deployment,) = _by_kind(kind.manifests(resource), "Deployment")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "--gang-scheduler-name=volcano",
        # Every kind is enabled, MPIJob v1 among them: its launcher's helper image, pinned.
        "--mpi-kubectl-delivery-image=ghcr.io/kubeflow/training-v1/kubectl-delivery:v1-4445c12",
    ]
    assert kind.gang(resource) == GangScheduler("volcano", "volcano")
    mpi = MPIOperatorKind()
    coscheduled = mpi.model.model_validate(_doc("MPIOperator", {"gangScheduler": "sched"}))
    assert mpi.gang(coscheduled) == GangScheduler("scheduler-plugins", "sched")
    (deployment,) = _by_kind(mpi.manifests(coscheduled), "Deployment")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "-alsologtostderr",
        "--lock-namespace=mpi-operator",
        "--gang-scheduling=sched",
    ]


def test_a_v181_install_runs_mxjob_and_not_jaxjob() -> None:
    kind = TrainingOperatorKind()
    resource = kind.model.model_validate(_doc("TrainingOperator", {"version": "v1.8.1"}))
    assert ("kubeflow.org/v1", "MXJob") in kind.served_kinds(resource)
    assert ("kubeflow.org/v1", "JAXJob") not in kind.served_kinds(resource)
    (hooks,) = _by_kind(kind.manifests(resource), "ValidatingWebhookConfiguration")
    mx = hooks["webhooks"][0]
    assert mx["name"] == "validator.mxjob.training-operator.kubeflow.org"
    assert mx["rules"][0]["operations"] == ["CREATE", "UPDATE", "DELETE"]


def test_scheme_validation_names_the_release_that_has_it() -> None:
    assert _errors(_doc("TrainingOperator", {"enabledSchemes": ["MXJob", "Caffe2Job"]})) == [
        "error: operators[0].spec.enabledSchemes[0]: Training Operator v1.9.4 does not run "
        "MXJob (got 'MXJob'); fix: MXJob needs version: v1.8.1",
        "error: operators[0].spec.enabledSchemes[1]: Training Operator v1.9.4 does not run "
        "Caffe2Job (got 'Caffe2Job'); fix: use one of TFJob, PyTorchJob, XGBoostJob, MPIJob, "
        "PaddleJob, JAXJob",
    ]
    assert _errors(_doc("TrainingOperator", {"enabledSchemes": []})) == [
        "error: operators[0].spec.enabledSchemes: an operator that runs no job kind installs "
        "nothing useful (got []); fix: name at least one of TFJob, PyTorchJob, XGBoostJob, "
        "MPIJob, PaddleJob, JAXJob, or drop the field"
    ]


def test_mpi_operator_grants_no_wildcard_unless_asked() -> None:
    for objects in (_manifests("MPIOperator"), _manifests("TrainingOperator")):
        for role in _by_kind(objects, "ClusterRole"):
            for rule in role.get("rules", []):
                assert "*" not in rule["verbs"], (role["metadata"]["name"], rule)
    stack = parse_documents([_doc("MPIOperator", {"rbac": "upstream", "resources": REQUESTS})])
    assert [f.render() for f in run(stack).findings] == [
        "warning: operators[0].spec.rbac: the operator is granted '*' on "
        "coordination.k8s.io: leases; kubeflow.org: mpijobs, mpijobs/finalizers, "
        "mpijobs/status; scheduling.incubator.k8s.io/scheduling.sigs.dev/"
        "scheduling.volcano.sh: queues, podgroups; scheduling.x-k8s.io: podgroups "
        "(got 'upstream'); fix: use rbac: least-privilege unless the operator fails for a "
        "missing permission"
    ]


def test_rule_wildcards_and_url_rules() -> None:
    assert PolicyRule(("",), ("pods",), ("*",)).is_wildcard
    assert not PolicyRule(("",), ("pods",), ("get",)).is_wildcard
    assert PolicyRule.urls(("/metrics",), ("get",)).to_manifest() == {
        "nonResourceURLs": ["/metrics"],
        "verbs": ["get"],
    }


def test_trainer_without_jobset_leaves_it_out_and_says_so() -> None:
    objects = _manifests("Trainer", {"installJobSet": False})
    assert not [o for o in objects if "jobset" in o["metadata"]["name"]]
    stack = parse_documents([_doc("Trainer", {"installJobSet": False, "resources": REQUESTS})])
    assert [f.render() for f in run(stack).findings] == [
        "advice: operators[0].spec.installJobSet: Trainer runs every TrainJob as a JobSet; "
        "JobSet v0.12.0 must be installed before Trainer starts (got false); fix: add a JobSet "
        "operator to this stack, or install JobSet in the cluster"
    ]


def test_namespace_and_image_are_options() -> None:
    plugin = PLATFORM.by_kind("MPIOperator")
    assert plugin is not None
    doc = _doc(
        "MPIOperator", {"image": "registry.example/mpi-operator:0.8.0", "createNamespace": False}
    )
    doc["metadata"]["namespace"] = "kubeflow"
    objects = plugin.manifests(plugin.model.model_validate(doc))
    assert not _by_kind(objects, "Namespace")
    (deployment,) = _by_kind(objects, "Deployment")
    assert deployment["metadata"]["namespace"] == "kubeflow"
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example/mpi-operator:0.8.0"
    assert container["args"] == ["-alsologtostderr", "--lock-namespace=kubeflow"]


@pytest.mark.parametrize("kind", ["TrainingOperator", "MPIOperator", "Trainer", "JobSet"])
def test_controller_resources_are_an_option_and_unset_requests_are_warned(kind: str) -> None:
    def controller(objects: list[dict[str, Any]]) -> dict[str, Any]:
        managers = [
            d for d in _by_kind(objects, "Deployment") if "jobset" not in d["metadata"]["name"]
        ] or _by_kind(objects, "Deployment")
        container: dict[str, Any] = managers[0]["spec"]["template"]["spec"]["containers"][0]
        return container

    assert controller(_manifests(kind, {"resources": REQUESTS}))["resources"] == REQUESTS
    default = controller(_manifests(kind)).get("resources")
    codes = [f.code for f in run(parse_documents([_doc(kind)])).findings]
    if kind == "JobSet":
        # JobSet's upstream install requests 500m/128Mi itself.
        assert default == {
            "limits": {"memory": "4Gi"},
            "requests": {"cpu": "500m", "memory": "128Mi"},
        }
        assert "resources.requests" not in codes
    else:
        assert default is None
        assert "resources.requests" in codes


def test_two_installs_of_one_crd_are_one_clear_error() -> None:
    stack = parse_documents(
        [_doc("TrainingOperator", name="kubeflow"), _doc("MPIOperator", name="mpi")]
    )
    with pytest.raises(SpecError) as err:
        run(stack)
    assert [f.render() for f in err.value.errors] == [
        "error: operators[1]: MPIOperator mpi-operator/mpi installs the CRD "
        "mpijobs.kubeflow.org (v2beta1), and so does operators[0] (TrainingOperator "
        "kubeflow/kubeflow, v1); a cluster holds one definition per name, so one install "
        "would replace the other's (got 'mpijobs.kubeflow.org'); fix: install it once: leave "
        "the kind out of one operator (a TrainingOperator's spec.enabledSchemes, a Trainer's "
        "installJobSet: false), or put the operators in stacks for different clusters"
    ]
    without_mpi = ["TFJob", "PyTorchJob", "XGBoostJob", "PaddleJob", "JAXJob"]
    fixed = parse_documents(
        [
            _doc(
                "TrainingOperator",
                {"enabledSchemes": without_mpi, "resources": REQUESTS},
                name="kubeflow",
            ),
            _doc("MPIOperator", {"resources": REQUESTS}, name="mpi"),
        ]
    )
    assert run(fixed).findings == ()


def test_operator_target_jobs_wait_for_the_operator_that_installs_their_crd() -> None:
    stack = parse_documents([_doc("TrainingOperator", name="kubeflow"), TFJOB])
    rendering = run(stack)
    (job,) = rendering.jobs
    assert job.depends_on == (UnitRef("operator", "kubeflow/kubeflow"),)
    assert [str(u.ref) for u in rendering.units] == ["operator kubeflow/kubeflow", "job ml/tf"]
    assert run(stack, target="pods").jobs[0].depends_on == ()


def test_a_job_needing_a_version_the_installed_crd_lacks() -> None:
    container = {"name": "mpi", "image": "horovod/horovod:0.28.1"}
    replica = {"replicas": 1, "template": {"spec": {"containers": [container]}}}
    mpijob = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "pi", "namespace": "ml"},
        "spec": {"mpiReplicaSpecs": {"Launcher": replica, "Worker": replica}},
    }
    with pytest.raises(SpecError) as err:
        run(parse_documents([_doc("TrainingOperator", name="kubeflow"), mpijob]))
    assert [f.render() for f in err.value.errors] == [
        "error: jobs[0]: MPIJob ml/pi is kubeflow.org/v2beta1, but the CRD mpijobs.kubeflow.org "
        "that operators[0] (TrainingOperator kubeflow/kubeflow) installs serves v1 only (got "
        "'kubeflow.org/v2beta1'); fix: render the job with `trainjobs: {target: pods}` (no "
        "operator needed), or install the operator that serves this version instead"
    ]
    served = run(parse_documents([_doc("MPIOperator", name="mpi"), mpijob]))
    assert served.jobs[0].depends_on == (UnitRef("operator", "mpi-operator/mpi"),)


def test_mxjob_users_pick_the_v181_install() -> None:
    (mxjob,) = load_path(EXAMPLES / "mxnet-legacy" / "mxjob.yaml").jobs
    operator = parse_documents([_doc("TrainingOperator", {"version": "v1.8.1"}, "legacy")])
    stack = StackSpec(jobs=(mxjob,), platform=operator.platform)
    (job,) = run(stack, target="operator").jobs
    assert job.depends_on[0] == UnitRef("operator", "kubeflow/legacy")
