"""kiln.dataset — MindSpore's `mindspore.dataset`: data sources, pipeline operations and iterators.

Under construction in this change set (issue 8): the engine (sources, samplers, operations, iterators) lands in this
package, the per-sample operations in `kiln.dataset.transforms` and `kiln.dataset.vision`."""
from . import transforms  # noqa: F401
from . import vision  # noqa: F401
