"""The EdlController component under Pulumi mocks."""

from __future__ import annotations

from tests.support.pulumi_harness import run_program
from trainjobs.components import EdlController
from trainjobs.platform.edl_controller import EdlControllerSpec


def test_the_controller_registers_its_objects_and_keeps_the_crd() -> None:
    resources = run_program(
        lambda: EdlController("edl", EdlControllerSpec(max_load_desired=0.8, create_namespace=True))
    )
    component = resources[0]
    assert (component.type, component.name) == ("trainjobs:index:EdlController", "edl")
    children = {r.type.split(":", 1)[1]: r for r in resources[1:]}
    assert sorted(children) == [
        "apiextensions.k8s.io/v1:CustomResourceDefinition",
        "apps/v1:Deployment",
        "core/v1:Namespace",
        "core/v1:ServiceAccount",
        "rbac.authorization.k8s.io/v1:ClusterRole",
        "rbac.authorization.k8s.io/v1:ClusterRoleBinding",
    ]
    assert all(r.parent.endswith("trainjobs:index:EdlController::edl") for r in resources[1:])
    crd = children["apiextensions.k8s.io/v1:CustomResourceDefinition"]
    assert crd.options["retain_on_delete"] is True
    deployment = children["apps/v1:Deployment"]
    (container,) = deployment.inputs["spec"]["template"]["spec"]["containers"]
    assert container["command"][-2:] == ["-max_load_desired", "0.8"]
    # The Deployment waits for its definitions (CRD, ServiceAccount, RBAC).
    assert len(deployment.options["dependencies"]) == 5
