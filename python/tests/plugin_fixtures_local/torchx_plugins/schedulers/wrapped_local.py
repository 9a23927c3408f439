"""A plugin as TorchX plugin authors write them: it wraps TorchX's local scheduler and, in a
subclass, edits what every replica gets (an env var and an extra argument) in `_submit_dryrun`."""

from typing import Any, Mapping

from torchx.plugins import register
from torchx.schedulers.local_scheduler import LocalScheduler, create_scheduler
from torchx.specs import AppDef, AppDryRunInfo


class TaggingLocalScheduler(LocalScheduler):
    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, Any]) -> AppDryRunInfo:
        info = super()._submit_dryrun(app, cfg)
        for replicas in info.request.role_params.values():
            for replica in replicas:
                replica.env["WRAPPED_BY"] = "wrapped_local"
        return info


@register.scheduler()
def wrapped_local(session_name: str, **kwargs: Any) -> LocalScheduler:
    plain = create_scheduler(session_name, **kwargs)  # the factory plugins wrap
    return TaggingLocalScheduler(session_name, plain._image_provider_class, cache_size=plain._cache_size)
