"""torchx.pipelines: TorchX apps as stages of ML pipelines (``torchx.pipelines.kfp`` for Kubeflow
Pipelines v2)."""
