"""The hook side of nn.Cell: forward (pre-)hooks, backward (pre-)hooks and the custom-bprop call, as a base class
of Cell (kept apart from cell.py to keep that module focused). The gradient machinery is in
kiln/_autodiff/custom_grad.py."""
import warnings

from .._autodiff import custom_grad as _custom_grad
from .._autodiff import recompute as _recompute


class _CellHooks:
    """Cell's hook registration methods and the call path used when a cell has hooks or a custom bprop."""

    def _call_with_hooks(self, args, kwargs):
        """The call with hooks or a custom bprop, in MindSpore's order: forward pre-hooks, the backward hooks' input
        boundary, construct (under the custom bprop if the class defines one), forward hooks, the backward hooks'
        output boundary, the backward pre-hooks' boundary. Forward hooks registered with always_call=True also run
        when construct raises (their own errors are then turned into warnings)."""
        d = self.__dict__
        out = None
        called = set()
        hook_args, hook_kwargs = args, kwargs
        try:
            for key, hook in list(d["_forward_pre_hooks"].items()):
                if key in d["_hook_kwargs"]:
                    res = hook(self, args, kwargs)
                    if res is not None:
                        if not (isinstance(res, tuple) and len(res) == 2):
                            raise RuntimeError(f"For '{type(self).__name__}', a forward pre-hook with kwargs must "
                                               f"return None or a tuple (new_args, new_kwargs), but got {res!r}.")
                        args, kwargs = res
                        args = tuple(args)
                else:
                    res = hook(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)
            hook_args, hook_kwargs = args, kwargs  # what the hooks see: the call's own args/kwargs (as MindSpore)
            if kwargs:  # construct gets them bound to its signature
                args, kwargs = self._bind_kwargs(args, kwargs)
            args, bw_state = _custom_grad.backward_hook_inputs(self, args)
            if d["_custom_bprop"]:
                out = _custom_grad.call_with_bprop(self, args, kwargs, self._run_construct)
            elif d.get("_recompute") is not None:
                out = _recompute.call(self._run_construct, args, kwargs, list(self.get_parameters()),
                                      f"Cell '{type(self).__name__}'", d["_recompute"]["context_fn"])
            else:
                out = self._run_construct(args, kwargs)
            for key, hook in list(d["_forward_hooks"].items()):
                called.add(key)
                res = hook(self, hook_args, hook_kwargs, out) if key in d["_hook_kwargs"] else \
                    hook(self, hook_args, out)
                if res is not None:
                    out = res
            out = _custom_grad.backward_hook_outputs(self, out, bw_state)
            return _custom_grad.backward_pre_hook_outputs(self, out)
        except Exception:
            for key, hook in list(d["_forward_hooks"].items()):
                if key in d["_hook_always"] and key not in called:
                    try:
                        res = hook(self, hook_args, hook_kwargs, out) if key in d["_hook_kwargs"] else \
                            hook(self, hook_args, out)
                        if res is not None:
                            out = res
                    except Exception as e:  # noqa: BLE001  (the construct error is the one raised)
                        warnings.warn(f"cell forward hook with ``always_call=True`` raised an exception that was "
                                      f"silenced because another error was already raised in forward: {e}")
            raise

    def _update_hook_flag(self):
        d = self.__dict__
        d["_has_hooks"] = bool(d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_pre_hooks"]
                               or d["_backward_hooks"] or d["_custom_bprop"] or d.get("_recompute") is not None)
        self._update_fast_flag()

    def _add_hook(self, table, hook_fn, api, prepend=False):
        d_table = self.__dict__[table]
        handle = _custom_grad.register(d_table, hook_fn, f"{type(self).__name__}.{api}")
        if prepend:
            d_table.move_to_end(handle._key, last=False)
        handle._on_change = self._update_hook_flag
        self._update_hook_flag()
        return handle

    def register_forward_pre_hook(self, hook_fn, *, prepend=False, with_kwargs=False):
        """Registers `hook_fn(cell, args)` (with_kwargs=True: `hook_fn(cell, args, kwargs)`), run before construct
        in registration order (prepend=True: first). A non-None result replaces the positional inputs (a tuple, or
        one value for a single input); with_kwargs, it must be (new_args, new_kwargs). Returns a handle whose
        remove() unregisters it (each registration its own handle). TypeError if hook_fn is not callable."""
        handle = self._add_hook("_forward_pre_hooks", hook_fn, "register_forward_pre_hook", prepend)
        if with_kwargs:
            self._hook_kwargs.add(handle._key)
        return handle

    def register_forward_hook(self, hook_fn, *, prepend=False, with_kwargs=False, always_call=False):
        """Registers `hook_fn(cell, args, output)` (with_kwargs=True: `hook_fn(cell, args, kwargs, output)`), run
        after construct; a non-None result replaces the output. always_call=True: it also runs when construct raises.
        Returns a handle with remove(). TypeError if hook_fn is not callable."""
        handle = self._add_hook("_forward_hooks", hook_fn, "register_forward_hook", prepend)
        if with_kwargs:
            self._hook_kwargs.add(handle._key)
        if always_call:
            self._hook_always.add(handle._key)
        return handle

    def register_backward_pre_hook(self, hook_fn):
        """Registers `hook_fn(cell, grad_output)`, called in the reverse pass with the gradients of the cell's Tensor
        outputs (a tuple) before they flow into the cell; a non-None result (a tuple, or a Tensor for one output)
        replaces them. Fires whenever a grad transform differentiates through a call of this cell (also on the
        gradients of the forward hooks' additions: the boundary is around the whole call, as MindSpore). Returns a
        handle with remove(). TypeError if hook_fn is not callable."""
        return self._add_hook("_backward_pre_hooks", hook_fn, "register_backward_pre_hook")

    def register_backward_hook(self, hook_fn):
        """Registers `hook_fn(cell, grad_input, grad_output)`, called in the reverse pass once the gradients of the
        cell's Tensor positional inputs (grad_input, a tuple) are known; grad_output is the tuple of its outputs'
        gradients. A non-None result (a tuple, or a Tensor for one input) replaces grad_input. When no gradient
        can reach the inputs (only weights differentiated), it still fires, with grad_input None per Tensor input
        (as MindSpore; the result is then unused). Returns a handle with remove(). TypeError if hook_fn is not
        callable."""
        return self._add_hook("_backward_hooks", hook_fn, "register_backward_hook")

