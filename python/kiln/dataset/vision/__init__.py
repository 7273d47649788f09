"""kiln.dataset.vision — MindSpore's `mindspore.dataset.vision` (issue 8, under construction)."""
