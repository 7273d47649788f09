"""kiln.dataset.transforms — MindSpore's `mindspore.dataset.transforms` (issue 8, under construction)."""
