"""Kiln's graph compiler, Python half (Graph mode: `kiln.jit`, `set_context(mode=GRAPH_MODE)`); the C++ half (IR,
passes, executor) is src/graph. MindSpore's public names for it stay where MindSpore has them (kiln.jit,
kiln.common.api.jit, kiln.common.jit, kiln.set_recursion_limit); they are the objects defined here.

The modules in the order a call goes through them (docs/layout.md, section 5):
  jit.py         `jit`, JitFunction: binding, the cache key, the in-memory cache and its fast paths
  guards.py      the Cells a graph depends on (their training flags are part of the key)
  structure.py   arguments and results flattened to tensors and back
  disk_cache.py, cache_names.py    the compile cache on disk; captures named by path
  capture.py     the trace with symbolic tensors (kiln._core Trace), writes into inputs
  ast_rewrite.py, ast_analysis.py  Python control flow rewritten into calls of control_flow.py
  control_flow.py                  if/while/for on graph tensors: If/While nodes over traced sub-graphs
  graph_builtins.py, graph_python.py, graph_assert.py  Python built-ins, f-strings, dict methods, assert/`in`
                                                      with MindSpore's graph-mode meaning
  call_depth.py  the function-call depth limit while tracing
  deferred_writes.py               Parameter writes under a gradient as values
  dynamic.py, symint.py, dynamic_loops.py  dynamic shapes: probe traces fitted into one graph
  compiled.py    CompiledGraph: running a compiled graph, write-back, save_graphs
"""
