"""The engine of kiln.dataset: pipeline nodes, sources, iterators and workers."""
