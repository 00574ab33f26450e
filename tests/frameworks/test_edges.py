"""Issue 16, "faithful at the edges": each test pins one operator behaviour and cites
the upstream line it reproduces.

Sources (read, never copied):
  TO   = kubeflow/training-operator@078ec30ff26649a07d2e28893c332d4cef70e233 (release-1.9)
  MPI  = kubeflow/mpi-operator@1bfc6b3ac4b0a178c22a5141254434802a999d82 (v0.8.0)
  K8S  = https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/
         custom-resource-definitions/#defaulting-and-nullable
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.preview.jobs import example
from tests.preview.jobs import render as preview_render
from tests.support.v1jobs import document, render_checked, replica
from trainjobs.errors import Severity, SpecError
from trainjobs.frameworks.jax import FRAMEWORK as JAX
from trainjobs.frameworks.mpi import FRAMEWORK as MPI
from trainjobs.frameworks.paddle import FRAMEWORK as PADDLE
from trainjobs.frameworks.pytorch import FRAMEWORK as PT
from trainjobs.frameworks.tensorflow import FRAMEWORK as TF
from trainjobs.frameworks.tensorflow import TFJob
from trainjobs.frameworks.xgboost import FRAMEWORK as XGB
from trainjobs.k8s.yamlio import dump_all
from trainjobs.preview.plan import make_plan
from trainjobs.preview.words import explain
from trainjobs.spec import load_path

TARGETS = ("operator", "pods")


def _with_nulls() -> dict[str, Any]:
    master = replica("pytorch", 1)
    container = master["template"]["spec"]["containers"][0]
    container.update({"command": None, "args": None, "workingDir": None})
    master["restartPolicy"] = None
    return document(PT, {"Master": master, "Worker": replica("pytorch", None)}, "blank")


@pytest.mark.parametrize("target", TARGETS)
def test_null_fields_are_unset_fields_on_every_target(target: str) -> None:
    # K8S "Defaulting and Nullable": null values of fields that are not nullable are
    # pruned before defaulting; no Kubeflow CRD marks a field nullable.
    _, text = render_checked(_with_nulls(), target)
    unset = {"Master": replica("pytorch", 1), "Worker": replica("pytorch", None)}
    _, clean = render_checked(document(PT, unset, "blank"), target)
    assert text == clean
    assert ": null" not in text


def test_null_fields_given_as_bare_keys_in_yaml(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: bare, namespace: ns}\n"
        "spec:\n  tfReplicaSpecs:\n    Worker:\n      replicas:\n      template:\n"
        "        spec:\n          containers:\n          - name: tensorflow\n"
        "            image: img:1\n            command:\n            args:\n"
    )
    (entry,) = load_path(path).jobs
    defaulted = TF.default(TFJob.model_validate(entry.job.to_manifest()))
    assert defaulted.replica_specs["Worker"].replicas == 1
    container = defaulted.replica_specs["Worker"].template["spec"]["containers"][0]
    assert set(container) == {"name", "image", "ports"}


def test_template_metadata_travels_to_the_pods_finalizers_included() -> None:
    # TO pkg/controller.v1/control/pod_control.go#L76-L95 and #L118-L127:
    # GetPodFromTemplate copies the template's labels, annotations and finalizers.
    worker = replica("pytorch", 1)
    worker["template"]["metadata"] = {
        "labels": {"team": "vision"},
        "annotations": {"sidecar.istio.io/inject": "false"},
        "finalizers": ["example.com/keep-logs"],
    }
    rendering, _ = render_checked(document(PT, {"Master": worker}, "meta"), "pods")
    (pod,) = [m for m in rendering.manifests if m["kind"] == "Pod"]
    assert pod["metadata"]["labels"]["team"] == "vision"
    assert pod["metadata"]["annotations"] == {"sidecar.istio.io/inject": "false"}
    assert pod["metadata"]["finalizers"] == ["example.com/keep-logs"]


def test_a_kubectl_list_is_a_stream_of_its_items(tmp_path: Path) -> None:
    # `kubectl get -o yaml` of several objects prints one v1 List; kubectl apply
    # (k8s.io/cli-runtime pkg/resource visitor, FlattenListVisitor) takes its items.
    first = document(TF, {"Worker": replica("tensorflow", 1)}, "first")
    second = document(TF, {"Worker": replica("tensorflow", 2)}, "second")
    stream = tmp_path / "stream.yaml"
    stream.write_text(dump_all([first, second]))
    listed = tmp_path / "list.yaml"
    nested = {"apiVersion": "v1", "kind": "List", "items": [second]}
    listed.write_text(
        dump_all(
            [
                {
                    "apiVersion": "v1",
                    "kind": "List",
                    "metadata": {"resourceVersion": ""},
                    "items": [first, nested],
                }
            ]
        )
    )
    assert [e.job.name for e in load_path(listed).jobs] == ["first", "second"]
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text("config:\n  trainjobs:jobs:\n    - file: list.yaml\n")
    assert [e.job.name for e in load_path(stack).jobs] == ["first", "second"]
    assert [e.job for e in load_path(listed).jobs] == [e.job for e in load_path(stream).jobs]


SUSPEND_FIX = (
    "fix: remove suspend (the pods start when the stack is applied), or use the operator "
    "target and resume with: kubectl patch <kind> <name> --type=merge "
    '-p \'{"spec":{"runPolicy":{"suspend":false}}}\''
)


def _refusals(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as caught:
        render_checked(doc, "pods")
    return [f.render() for f in caught.value.findings if f.severity is Severity.ERROR]


@pytest.mark.parametrize(
    ("fw", "container", "types"),
    [(TF, "tensorflow", ("Worker",)), (PT, "pytorch", ("Master",)), (MPI, "", ())],
)
def test_a_suspended_job_is_refused_on_the_pods_target(
    fw: Any, container: str, types: tuple[str, ...]
) -> None:
    # TO pkg/controller.v1/common/job.go#L146-L165: a suspended job's pods and services
    # are deleted and none are created until suspend is false.
    # MPI pkg/controller/mpi_job_controller.go#L665 and #L1547: no workers, the launcher
    # Job suspended. Nothing resumes it without the operator, so the target refuses.
    if fw is MPI:
        doc = _mpijob(runPolicy={"suspend": True})
    else:
        doc = document(fw, {t: replica(container, 1) for t in types}, "held")
        doc["spec"]["runPolicy"] = {"suspend": True}
    assert _refusals(doc) == [
        "error: jobs[0].spec.runPolicy.suspend: a suspended job has no pods until it is "
        "resumed, and on the pods target no operator is there to resume it and create them "
        f"(got true); {SUSPEND_FIX}"
    ]
    rendering, _ = render_checked(doc, "operator")
    (resource,) = rendering.manifests
    assert resource["spec"]["runPolicy"]["suspend"] is True


def _mpijob(**spec: Any) -> dict[str, Any]:
    def role(replicas: int) -> dict[str, Any]:
        return {"replicas": replicas, **replica("mpi", image="mpi:1")}

    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "pi", "namespace": "kubeflow"},
        "spec": {"mpiReplicaSpecs": {"Launcher": role(1), "Worker": role(2)}, **spec},
    }


@pytest.mark.parametrize("fw", [TF, PT, XGB, PADDLE, MPI])
def test_a_multikueue_job_is_refused_on_the_pods_target(fw: Any) -> None:
    # TO pkg/controller.v1/common/job.go#L459 (ManagedByExternalController) and e.g.
    # pkg/controller.v1/pytorch/pytorchjob_controller.go#L135: the controller skips a
    # job another controller manages. MPI pkg/controller/mpi_job_controller.go#L598.
    if fw is MPI:
        doc = _mpijob(runPolicy={"managedBy": "kueue.x-k8s.io/multikueue"})
        own = "kubeflow.org/mpi-operator"
    else:
        doc = document(fw, {fw.replica_types[0]: replica(fw.default_container, 1)}, "remote")
        doc["spec"]["runPolicy"] = {"managedBy": "kueue.x-k8s.io/multikueue"}
        own = "kubeflow.org/training-operator"
    assert _refusals(doc) == [
        "error: jobs[0].spec.runPolicy.managedBy: the job is managed by "
        "kueue.x-k8s.io/multikueue, not by its operator: the operator creates no pods for it "
        "in this cluster, so the pods target cannot either (got 'kueue.x-k8s.io/multikueue'); "
        "fix: use the operator target (the manager dispatches the job to a worker cluster), "
        f"or remove managedBy (default {own}) to run it here"
    ]
    render_checked(doc, "operator")


def test_jaxjob_managed_by_is_ignored_so_the_pods_target_renders_it() -> None:
    # TO pkg/controller.v1/jax/jaxjob_controller.go has no ManagedByExternalController
    # call: the JAX controller runs every job whatever managedBy says.
    doc = document(JAX, {"Worker": replica("jax", 2)}, "j")
    doc["spec"]["runPolicy"] = {"managedBy": "kueue.x-k8s.io/multikueue"}
    rendering, _ = render_checked(doc, "pods")
    assert sum(m["kind"] == "Pod" for m in rendering.manifests) == 2


def _suspend(value: bool | None) -> Callable[[dict[str, Any]], None]:
    def edit(job: dict[str, Any]) -> None:
        policy = job["spec"].setdefault("runPolicy", {})
        if value is None:
            policy.pop("suspend", None)
        else:
            policy["suspend"] = value

    return edit


def test_preview_says_resuming_starts_the_job() -> None:
    bench = [example("tf-benchmarks")]
    held = preview_render(bench, target="operator", edit=_suspend(True))
    running = preview_render(bench, target="operator", edit=_suspend(None))
    ((_, resumed),) = [(s.job, list(s.summary)) for s in explain(make_plan(held, running))]
    assert resumed == [
        "job tf-benchmarks is resumed: its operator creates its Pods and the job starts "
        "(from its last checkpoint, if it ran before)"
    ]
    ((_, suspended),) = [(s.job, list(s.summary)) for s in explain(make_plan(running, held))]
    assert suspended == [
        "job tf-benchmarks is suspended: its operator deletes its Pods and the job stops "
        "until it is resumed; the work since its last checkpoint is lost"
    ]


def test_a_replica_name_over_63_characters_is_refused_not_hashed() -> None:
    # TO pkg/controller.v1/common/util.go#L50-L53 (GenGeneralName) and
    # pkg/controller.v1/common/service.go#L243: the Service is named
    # <job>-<type>-<index> with no shortening; the API server refuses a Service name
    # that is not a DNS-1035 label (at most 63), so the operator never runs the job.
    name = "n" * 52  # with "-worker-11": 62 characters, fits
    fits = document(
        TF, {"Chief": replica("tensorflow", 1), "Worker": replica("tensorflow", 12)}, name
    )
    rendering, _ = render_checked(fits, "pods")
    tf_config = json.loads(
        next(
            e["value"]
            for m in rendering.manifests
            if m["kind"] == "Pod" and m["metadata"]["name"] == f"{name}-chief-0"
            for e in m["spec"]["containers"][0]["env"]
            if e["name"] == "TF_CONFIG"
        )
    )
    assert tf_config["cluster"]["worker"][11] == f"{name}-worker-11.kubeflow.svc:2222"
    over = document(TF, {"Worker": replica("tensorflow", 101)}, name + "x")
    for target in TARGETS:
        with pytest.raises(SpecError) as caught:
            render_checked(over, target)
        assert [f.render() for f in caught.value.findings] == [
            f"error: jobs[0].metadata.name: the Service and Pod name '{name}x-worker-100' has "
            "64 characters; a DNS-1035 label has at most 63, so the operator cannot create it "
            f"(got '{name}x'); fix: shorten the job name to at most 52 characters"
        ]


def _tf_config(specs: dict[str, Any], **spec: Any) -> dict[str, str]:
    doc = document(TF, specs, "tf", "ns", **spec)
    rendering, _ = render_checked(doc, "pods")
    return {
        m["metadata"]["name"]: e["value"]
        for m in rendering.manifests
        if m["kind"] == "Pod"
        for e in m["spec"]["containers"][0].get("env", [])
        if e["name"] == "TF_CONFIG"
    }


def test_tf_config_dense_is_byte_equal_to_the_operator() -> None:
    # TO pkg/controller.v1/tensorflow/tensorflow.go#L112-L155 and #L157-L187:
    # TFConfig{cluster, task, environment:"cloud"} marshalled by json.Marshal (struct
    # field order; the ClusterSpec map's keys sorted); 0 replicas give [] (make(..., 0)).
    values = _tf_config(
        {
            "Worker": replica("tensorflow", 2),
            "PS": replica("tensorflow", 0),
            "Chief": replica("tensorflow", 1),
        }
    )
    assert values["tf-worker-1"] == (
        '{"cluster":{"chief":["tf-chief-0.ns.svc:2222"],"ps":[],'
        '"worker":["tf-worker-0.ns.svc:2222","tf-worker-1.ns.svc:2222"]},'
        '"task":{"type":"worker","index":1},"environment":"cloud"}'
    )


def test_tf_config_sparse_ps_is_null_without_a_ps_type() -> None:
    # TO pkg/controller.v1/tensorflow/tensorflow.go#L74-L84 convertClusterSpecToSparseClusterSpec:
    # a worker's PS = clusterSpec["ps"], nil when the job has no PS type -> "ps":null;
    # the chief keeps the initial []string{} -> "ps":[]. SparseTFConfig has no environment.
    values = _tf_config(
        {"Chief": replica("tensorflow", 1), "Worker": replica("tensorflow", 2)},
        enableDynamicWorker=True,
    )
    assert values == {
        "tf-chief-0": '{"cluster":{"worker":{},"ps":[]},"task":{"type":"chief","index":0}}',
        "tf-worker-0": '{"cluster":{"worker":{"0":"tf-worker-0.ns.svc:2222"},"ps":null},'
        '"task":{"type":"worker","index":0}}',
        "tf-worker-1": '{"cluster":{"worker":{"1":"tf-worker-1.ns.svc:2222"},"ps":null},'
        '"task":{"type":"worker","index":1}}',
    }
    with_ps = _tf_config(
        {"PS": replica("tensorflow", 1), "Worker": replica("tensorflow", 1)},
        enableDynamicWorker=True,
    )
    assert with_ps == {
        "tf-ps-0": '{"cluster":{"worker":{},"ps":["tf-ps-0.ns.svc:2222"]},'
        '"task":{"type":"ps","index":0}}',
        "tf-worker-0": '{"cluster":{"worker":{"0":"tf-worker-0.ns.svc:2222"},'
        '"ps":["tf-ps-0.ns.svc:2222"]},"task":{"type":"worker","index":0}}',
    }


def test_tf_config_is_not_set_for_a_single_replica() -> None:
    # TO pkg/controller.v1/tensorflow/util.go#L74-L95 isDistributed: exactly one replica
    # over Chief, Evaluator, Master, PS and Worker means no TF_CONFIG.
    assert _tf_config({"Worker": replica("tensorflow", 1)}) == {}
    two = {"Worker": replica("tensorflow", 1), "PS": replica("tensorflow", 1)}
    assert sorted(_tf_config(two)) == ["tf-ps-0", "tf-worker-0"]


def _errors(doc: dict[str, Any], target: str = "pods") -> list[str]:
    with pytest.raises(SpecError) as caught:
        render_checked(doc, target)
    return [f.render() for f in caught.value.findings]


def test_several_service_ports_must_be_named() -> None:
    # TO pkg/core/service.go#L83-L101 GetPortsFromJob: every port of the default
    # container goes to the replica's headless Service, keyed by name; the API server
    # refuses a multi-port Service with an unnamed port (core/v1 validation,
    # "spec.ports[0].name: Required value").
    worker = replica("tensorflow", 2)
    worker["template"]["spec"]["containers"][0]["ports"] = [
        {"containerPort": 8080},
        {"name": "metrics", "containerPort": 9090},
    ]
    doc = document(TF, {"Worker": worker}, "ports")
    for target in TARGETS:
        assert _errors(doc, target) == [
            "error: jobs[0].spec.tfReplicaSpecs.Worker.template.spec.containers: container "
            "'tensorflow' has several ports and one without a name; the replica's Service gets "
            "them all, and the API server refuses a Service with several ports unless every "
            "one is named (got [8080]); fix: name every port of container 'tensorflow', e.g. "
            "{name: port-8080, containerPort: 8080}"
        ]
    worker["template"]["spec"]["containers"][0]["ports"][0]["name"] = "http"
    rendering, _ = render_checked(doc, "pods")
    (service, *_) = [m for m in rendering.manifests if m["kind"] == "Service"]
    assert service["spec"]["ports"] == [
        {"name": "http", "port": 8080},
        {"name": "metrics", "port": 9090},
        {"name": "tfjob-port", "port": 2222},
    ]


def test_a_v1_field_outside_run_policy_names_its_real_place() -> None:
    # TO pkg/apis/kubeflow.org/v1/common_types.go#L194-L197 RunPolicy: cleanPodPolicy and
    # ttlSecondsAfterFinished live in spec.runPolicy (v1beta2 had them in spec).
    doc = document(TF, {"Worker": replica("tensorflow", 1)}, "moved")
    doc["spec"]["cleanPodPolicy"] = "All"
    assert _errors(doc) == [
        "error: jobs[0].spec.cleanPodPolicy: unknown field (got 'All'); fix: move it to "
        "spec.runPolicy.cleanPodPolicy; it is not a field here"
    ]


def test_a_replica_without_a_pod_template_is_told_what_to_add() -> None:
    # TO pkg/apis/kubeflow.org/v1/common_types.go#L96-L104 ReplicaSpec.Template: pods of a
    # replica type are created from it; a replica without one has nothing to run.
    doc = document(PT, {"Master": {"replicas": 1}}, "bare")
    assert _errors(doc) == [
        "error: jobs[0].spec.pytorchReplicaSpecs.Master.template: required field is missing; "
        "fix: add template: {spec: {containers: [{name: …, image: …}]}} — the pod template "
        "every replica of this type runs"
    ]


def test_the_webhook_sees_the_job_trainjobs_writes_with_its_defaults() -> None:
    # v1.9.4 has no mutating webhook (manifests/base/webhook/manifests.yaml holds only a
    # ValidatingWebhookConfiguration): the controller applies the defaults
    # (pkg/apis/kubeflow.org/v1/pytorch_defaults.go#L77-L90: type names to CamelCase #L58,
    # replicas default 1, restartPolicy #L88, the default port #L30-L36) in memory only.
    # The operator target writes the defaulted job, so the validating webhook
    # (pkg/webhooks/pytorch/pytorchjob_webhook.go#L152-L155: Master replicas "must be 1")
    # sees a lowercase `master` key already renamed and held to the Master rule; the same
    # file applied as written is refused (tests/cluster/test_accepted.py proves both).
    doc = document(PT, {"master": replica("pytorch", 2), "worker": replica("pytorch")}, "order")
    (error,) = [line for line in _errors(doc) if line.startswith("error:")]
    assert "spec.pytorchReplicaSpecs.Master.replicas" in error
    doc = document(PT, {"master": replica("pytorch", 1), "worker": replica("pytorch")}, "order")
    rendering, _ = render_checked(doc, "operator")
    (resource,) = rendering.manifests
    specs = resource["spec"]["pytorchReplicaSpecs"]
    assert list(specs) == ["Master", "Worker"]
    assert specs["Worker"]["replicas"] == 1
    assert specs["Worker"]["restartPolicy"] == "OnFailure"
    ports = specs["Master"]["template"]["spec"]["containers"][0]["ports"]
    assert ports == [{"name": "pytorchjob-port", "containerPort": 23456}]


def test_the_webhook_rules_of_v1_9() -> None:
    # pytorchjob_webhook.go#L80 NameIsDNS1035Label(job name); #L144-L150 a container
    # named pytorch; tfjob webhook: at most one of Chief/Master.
    bad_name = document(PT, {"Master": replica("pytorch", 1)}, "Bad_Name")
    assert any("metadata.name" in e for e in _errors(bad_name))
    no_pytorch = document(PT, {"Master": replica("trainer", 1)}, "nocontainer")
    assert any("no container is named 'pytorch'" in e for e in _errors(no_pytorch))
    both = document(
        TF, {"Chief": replica("tensorflow", 1), "Master": replica("tensorflow", 1)}, "two"
    )
    assert any("a TFJob may have a Chief or a Master, not both" in e for e in _errors(both))
