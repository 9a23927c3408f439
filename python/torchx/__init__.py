"""torchx: PyTorch's universal job launcher (C++ core, thin Python layer).

The binding to the C++ core arrives with the Python package issue; today this package carries the
helper apps that builtin components run inside a job (``python -m torchx.apps...``) and the
result tracker they write to.
"""

__version__ = "0.1.0"
