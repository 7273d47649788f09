"""`kiln.lazy_inline`: MindSpore's decorator for a Cell's `__init__` that marks the Cell's graph as reusable.

MindSpore (on Ascend) then compiles the construct of Cells built with equal `__init__` arguments once, as a
sub-graph called from the network instead of inlined copies, to shorten compilation. Kiln inlines every sub-cell
into one traced graph (compilation is a trace: its time grows with the ops run, not with a parser's work), so the
decorator changes nothing in Kiln's compiled graphs; it keeps MindSpore's checks and sets `cell_init_args` as
MindSpore does, so code written for MindSpore runs unchanged.
"""
import functools
import inspect


def lazy_inline(fn=None, attrs=None, policy=None):
    """Decorates a Cell's `__init__` (as `@lazy_inline` or `@lazy_inline(attrs=..., policy=...)`).

    Args:
        fn: the `__init__` function (None when called with options).
        attrs (Union[None, str, list[str]]): attributes of the cell whose values (after `__init__`) make up
            `cell_init_args` instead of the `__init__` arguments (one name: its value; a list: the list of the values
            of the names the cell has).
        policy (Union[None, str]): None or "front" (MindSpore's inline policy; "front" sets `cell.no_inline =
            False`).

    Returns:
        The wrapped `__init__`: it runs `__init__`, then sets `self.cell_init_args` to "lazy_inline_" + the class
        name + the arguments (or the `attrs` values). Kiln's compiled graphs are the same with or without it.

    Raises:
        ValueError: applied to a class or to a function other than `__init__`; at construction, a policy other
            than None/"front", `attrs` not a str or list of str.
    """
    def wrap(init):
        if inspect.isclass(init):
            raise ValueError(f"The lazy_inline should decorate the __init__ function, not the class {init.__name__}.")
        if getattr(init, "__name__", None) != "__init__":
            raise ValueError(f"The lazy_inline should decorate the __init__ function, not the function: "
                             f"{getattr(init, '__name__', init)!r}.")

        @functools.wraps(init)
        def __init__(self, *args, **kwargs):
            values = None
            if attrs is None:
                bound = inspect.signature(init).bind(self, *args, **kwargs)
                values = [v for k, v in bound.arguments.items() if k != "self"]
            init(self, *args, **kwargs)
            if policy == "front":
                self.no_inline = False
            elif policy is not None:
                raise ValueError(f"For 'lazy_inline', policy must be None or 'front', but got {policy!r}.")
            if isinstance(attrs, str):  # one attribute: its value itself (MindSpore)
                values = getattr(self, attrs, None)
            elif attrs is not None:
                if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
                    raise ValueError(f"For 'lazy_inline', attrs must be a str or a list of str, but got {attrs!r}.")
                values = [getattr(self, a) for a in attrs if hasattr(self, a)]
            self.cell_init_args = "lazy_inline_" + type(self).__name__ + str(values)

        return __init__

    if fn is not None:
        return wrap(fn)
    return wrap
