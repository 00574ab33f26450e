"""The plan in plain words: which jobs restart, which Pods are recreated, what is lost."""

from __future__ import annotations

from typing import Any

from tests.preview.jobs import Edit, example, render, set_image, set_replicas
from tests.support.paths import EXAMPLES
from trainjobs.k8s.yamlio import load_all
from trainjobs.preview.objects import Side
from trainjobs.preview.plan import make_plan
from trainjobs.preview.words import RESTART, explain, noun_of


def _words(old: Side, new: Side) -> list[tuple[str, list[str], list[str]]]:
    return [(s.job, list(s.summary), list(s.details)) for s in explain(make_plan(old, new))]


def test_changing_the_image_of_a_pods_target_job_recreates_its_pods() -> None:
    mnist = [example("tf-mnist")]
    old, new = render(mnist), render(mnist, edit=set_image("kubeflow/tf-mnist:2.0"))
    assert _words(old, new) == [
        (
            "mnist",
            [
                "changing the image of job mnist recreates 4 Pods; "
                "the job restarts from its last checkpoint"
            ],
            [
                "recreates Pod kubeflow/mnist-chief-0: spec.containers[0].image changed",
                "recreates Pod kubeflow/mnist-ps-0: spec.containers[0].image changed",
                "recreates Pod kubeflow/mnist-worker-0: spec.containers[0].image changed",
                "recreates Pod kubeflow/mnist-worker-1: spec.containers[0].image changed",
            ],
        )
    ]


def test_scaling_down_names_the_environment_variables_and_the_lost_pod() -> None:
    ddp = [example("pytorch-ddp")]
    old, new = render(ddp), render(ddp, edit=set_replicas("Worker", 2))
    ((job, summary, details),) = _words(old, new)
    assert job == "pytorch-ddp"
    assert summary == [
        "changing the environment variables WORLD_SIZE and PET_NNODES of job pytorch-ddp "
        "recreates 3 Pods; the job restarts from its last checkpoint",
        "job pytorch-ddp loses 1 Pod",
        "job pytorch-ddp deletes 1 Service",
    ]
    assert details[-2:] == [
        "deletes Service training/pytorch-ddp-worker-2",
        "deletes Pod training/pytorch-ddp-worker-2",
    ]


def test_scaling_up_gains_pods_and_services() -> None:
    mnist = [example("tf-mnist")]
    old, new = render(mnist), render(mnist, edit=set_replicas("Worker", 3))
    ((_, summary, _),) = _words(old, new)
    assert summary == [
        "changing the environment variable TF_CONFIG of job mnist recreates 4 Pods; "
        "the job restarts from its last checkpoint",
        "job mnist gains 1 Service and 1 Pod",
    ]


def test_an_operator_target_job_updates_in_place() -> None:
    bench = [example("tf-benchmarks")]
    old = render(bench, target="operator")
    new = render(bench, target="operator", edit=set_image("tensorflow/tensorflow:2.16.1-gpu"))
    assert _words(old, new) == [
        (
            "tf-benchmarks",
            [
                "changing the image of job tf-benchmarks updates its TFJob in place; "
                "Pods already running keep their old spec until they are recreated"
            ],
            [
                "updates TFJob training/tf-benchmarks in place: "
                "spec.tfReplicaSpecs.Worker.template.spec.containers[0].image changed"
            ],
        )
    ]


def test_an_operator_target_replica_change_is_reconciled_by_the_operator() -> None:
    bench = [example("tf-benchmarks")]
    old = render(bench, target="operator")
    new = render(bench, target="operator", edit=set_replicas("Worker", 2))
    ((_, summary, _),) = _words(old, new)
    assert summary == [
        "changing the replica counts of job tf-benchmarks updates its TFJob in place; "
        "its operator adds or removes Pods to match"
    ]


def test_a_new_and_a_removed_job() -> None:
    mnist, ddp = example("tf-mnist"), example("pytorch-ddp")
    old, new = render([mnist]), render([ddp])
    assert [(job, summary) for job, summary, _ in _words(old, new)] == [
        ("pytorch-ddp", ["job pytorch-ddp is new: creates 4 Services and 4 Pods"]),
        (
            "mnist",
            [
                "job mnist is removed: deletes 4 Services and 4 Pods; the job stops and the "
                "work since its last checkpoint is lost"
            ],
        ),
    ]


def test_switching_target_between_operator_and_pods() -> None:
    mnist = [example("tf-mnist")]
    operator, pods = render(mnist, target="operator"), render(mnist)
    (to_pods,) = explain(make_plan(operator, pods))
    assert to_pods.summary == (
        "job mnist leaves its operator: deletes its TFJob and the Pods the operator runs for "
        "it; the job restarts from its last checkpoint",
        "job mnist gains 4 Services and 4 Pods",
    )
    assert to_pods.details[-1] == "deletes TFJob kubeflow/mnist"
    (to_operator,) = explain(make_plan(pods, operator))
    assert to_operator.summary == (
        "job mnist is handed to its operator: creates its TFJob",
        "job mnist loses 4 Pods; the job restarts from its last checkpoint",
        "job mnist deletes 4 Services",
    )


def test_no_changes_no_words() -> None:
    mnist = [example("tf-mnist")]
    assert explain(make_plan(render(mnist), render(mnist))) == []


def test_restarts_flag_follows_the_words() -> None:
    mnist = [example("tf-mnist")]
    (story,) = explain(make_plan(render(mnist), render(mnist, edit=set_image("x:2"))))
    assert story.restarts and RESTART in story.summary[0]


def _labels(job: dict[str, Any]) -> None:
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["metadata"] = {"labels": {"team": "a"}}


def test_a_label_change_updates_pods_in_place_and_nothing_restarts() -> None:
    mnist = [example("tf-mnist")]
    (story,) = explain(make_plan(render(mnist), render(mnist, edit=_labels)))
    assert story.summary == (
        "changing the labels of job mnist updates 2 Pods in place; nothing restarts",
    )
    assert not story.restarts


def test_stack_objects_are_told_per_object() -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubeflow"}}
    old = Side("old", {})
    from trainjobs.preview.objects import side_from_manifests

    new = side_from_manifests([(ns, "x.yaml")], "new")
    (story,) = explain(make_plan(old, new))
    assert (story.job, story.summary, story.details) == ("", (), ("creates Namespace kubeflow",))
    (gone,) = explain(make_plan(new, old))
    assert gone.details == ("deletes Namespace kubeflow and everything in it",)


def test_nouns() -> None:
    assert noun_of(("spec", "containers", 0, "image")) == "the image"
    assert noun_of(("spec", "containers", 0, "env", 3, "value")) == "the environment"
    assert noun_of(("spec", "tfReplicaSpecs", "Worker", "replicas")) == "the replica counts"
    assert noun_of(("spec", "clusterIP")) == "the cluster IP"
    assert noun_of(("spec", "somethingNew")) == "somethingNew"


REDIS = {
    "apiVersion": "trainjobs.dev/v1alpha1",
    "kind": "RedisBackend",
    "metadata": {"name": "redis", "namespace": "training"},
    "spec": {"password": True},
}


def _redis_image(doc: dict[str, Any]) -> None:
    doc["spec"]["image"] = "redis:7.4"


def test_a_backend_is_told_object_by_object_under_its_own_name() -> None:
    old = render([REDIS])
    new = render([REDIS], edit=_redis_image)
    (story,) = explain(make_plan(old, new))
    assert (story.title, story.summary) == ("backend training/redis", ())
    assert story.details == (
        "updates Deployment training/redis in place: "
        "spec.template.spec.containers[0].image changed",
    )


def _first_env(name: str, value: str) -> Edit:
    def edit(job: dict[str, Any]) -> None:
        for spec in job["spec"]["pytorchReplicaSpecs"].values():
            container = spec["template"]["spec"]["containers"][0]
            container["env"] = [{"name": name, "value": value}, *container.get("env", [])]

    return edit


def test_a_variable_added_first_names_only_that_variable() -> None:
    # Env lists are compared item by item, so one variable put first shifts every other
    # one a place down: the words must still name only the variable that changed, not
    # MASTER_ADDR, RANK … whose values are the same as before.
    ddp = [example("pytorch-ddp")]
    old, new = render(ddp), render(ddp, edit=_first_env("LR", "0.1"))
    ((_, summary, _),) = _words(old, new)
    assert summary == [
        "changing the environment variable LR of job pytorch-ddp recreates 4 Pods; "
        "the job restarts from its last checkpoint"
    ]
    changed = render(ddp, edit=_first_env("LR", "0.2"))
    ((_, summary, _),) = _words(new, changed)
    assert summary[0].startswith("changing the environment variable LR of job pytorch-ddp ")


def test_a_job_with_a_cluster_wide_object_is_one_story() -> None:
    # On the trainer target a job renders its TrainJob (namespaced) and its own
    # ClusterTrainingRuntime (cluster-wide): one job, so one story, under its namespace.
    docs = load_all((EXAMPLES / "trainjob-pytorch" / "trainjob.yaml").read_text())

    def edit(job: dict[str, Any]) -> None:
        worker = job["spec"]["pytorchReplicaSpecs"]["Worker"]
        worker["template"]["spec"]["containers"][0]["command"][-1] = "--epochs=6"
        worker["replicas"] = 3

    old = render([docs[1]], target="trainer")
    new = render([docs[1]], target="trainer", edit=edit)
    (story,) = explain(make_plan(old, new))
    assert story.title == "job mnist-ddp (default)"
    assert [d.split(":")[0] for d in story.details] == [
        "updates ClusterTrainingRuntime default-mnist-ddp in place",
        "cannot update TrainJob default/mnist-ddp",
    ]
