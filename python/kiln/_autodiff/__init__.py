"""Function transforms on the autodiff tape (kiln/autodiff.h), the same in PyNative and, traced, in Graph mode:
custom_grad.py (a Cell's bprop, HookBackward, Tensor.register_hook, Cell backward hooks), functional_ad.py
(vjp, jvp, jacrev, jacfwd), vmap.py, recompute.py (Cell.recompute, kiln.recompute). `grad` and `value_and_grad`
are MindSpore's mindspore.common.api and stay in kiln/common/api.py."""
