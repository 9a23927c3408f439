"""Utility components: echo, touch, sh, python, binary, copy, booth (Ax's test function)."""

from torchx.components._builtin import builtin

echo = builtin("utils.echo", __name__)
touch = builtin("utils.touch", __name__)
sh = builtin("utils.sh", __name__)
python = builtin("utils.python", __name__)
binary = builtin("utils.binary", __name__)
copy = builtin("utils.copy", __name__)
booth = builtin("utils.booth", __name__)
