"""`mindspore.nn.utils` (MindSpore 2.10): `no_init_parameters`, the context manager that defers the initialization of
the Parameters a network creates (kiln/common/_deferred_init.py)."""
from ..common._deferred_init import no_init_parameters

__all__ = ["no_init_parameters"]
