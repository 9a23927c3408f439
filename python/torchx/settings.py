"""The environment variables TorchX reads and sets, by their TorchX names (``settings.ENV_*``)."""

# Tracker wiring passed into jobs (a comma-separated list of tracker names, and the parent run).
ENV_TORCHX_TRACKERS: str = "TORCHX_TRACKERS"
ENV_TORCHX_PARENT_RUN_ID: str = "TORCHX_PARENT_RUN_ID"
# Set in every replica: the app handle of the job it belongs to.
ENV_TORCHX_JOB_ID: str = "TORCHX_JOB_ID"
# Path of the .torchxconfig to read; set to "" to read none.
ENV_TORCHXCONFIG: str = "TORCHXCONFIG"
# Lets child processes of a launcher share its session id.
ENV_TORCHX_INTERNAL_SESSION_ID: str = "TORCHX_INTERNAL_SESSION_ID"
# The image builtin components default to.
ENV_TORCHX_IMAGE: str = "TORCHX_IMAGE"
