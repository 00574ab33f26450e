"""Stack file text the pulumi_up tests share."""

from __future__ import annotations


def small_tfjob_entry(name: str, namespace: str, target: str) -> str:
    """An entry of ``trainjobs:jobs`` (indented as in a stack file): a TFJob of one small
    Worker, on ``target``."""
    return f"""\
    - apiVersion: kubeflow.org/v1
      kind: TFJob
      metadata: {{name: {name}, namespace: {namespace}}}
      spec:
        runPolicy: {{ttlSecondsAfterFinished: 86400}}
        tfReplicaSpecs:
          Worker:
            replicas: 1
            restartPolicy: Never
            template:
              spec:
                containers:
                  - name: tensorflow
                    image: ghcr.io/example/tf-mnist:1.0
                    resources: {{requests: {{cpu: 100m, memory: 64Mi}}, limits: {{memory: 64Mi}}}}
      trainjobs: {{target: {target}}}
"""
