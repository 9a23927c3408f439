"""torchx.components: the builtin components as Python functions returning AppDefs.

``torchx.components.dist.ddp(...)``, ``torchx.components.utils.echo(...)`` etc. are built from the
core's declarations (one declaration per component serves the CLI, ``--help`` and Python), so
their signatures, defaults and docstrings are the ones ``torchx run`` shows.
"""
