"""torchx.cli: the ``torchx`` command's verbs as Python classes (TorchX's module layout), for tools
and plugins that import, extend or embed them. ``python -m torchx.cli.main`` is the command.

Verbs whose work is a Runner call (cancel, delete, describe, status, list, log, runopts,
configure) call the Python ``Runner`` (the core behind it) in this process, so that tools may
patch or wrap them as they do TorchX's. Verbs that the C++ ``torchx`` binary implements whole
(run, builtins, plugins, ...) go to that binary with the same arguments: one implementation,
the same output and exit codes.
"""
