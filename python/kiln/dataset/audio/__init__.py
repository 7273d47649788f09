"""kiln.dataset.audio — MindSpore's `mindspore.dataset.audio`, the part the tutorials use: `BassBiquad` (also under
`kiln.dataset.audio.transforms`). The other audio operations of MindSpore are not here (AttributeError)."""
from . import transforms
from .transforms import BassBiquad

__all__ = ["BassBiquad", "transforms"]
