"""`kiln.JitConfig` (MindSpore's `mindspore.JitConfig`): compile options passed to `data_sink(jit_config=...)`.

Kiln compiles every graph the same way (trace, the standard pass pipeline, the flat executor), so the options are
validated and recorded as MindSpore does, and do not change Kiln's compilation."""

__all__ = ["JitConfig"]


class JitConfig:
    """Compile options, as MindSpore 2.x's JitConfig.

    Args:
        jit_level (str): "", "O0", "O1" or "O2" (MindSpore's optimization level). Default "".
        exc_mode (str): "auto", "sink" or "no_sink". Default "auto".
        jit_syntax_level (str): "", "STRICT", "COMPATIBLE" or "LAX". Default "".
        debug_level (str): "RELEASE" or "DEBUG". Default "RELEASE".
        infer_boost (str): "on" or "off" (deprecated in MindSpore 2.10). Default "off".
        **kwargs: further options, kept in `jit_config_dict`.

    Attributes:
        jit_config_dict (dict): kwargs plus the five options above, and "backend" ("ms_backend" for O0/O1, "GE"
            for O2) unless given, as MindSpore fills it.

    Raises:
        ValueError: an option outside its allowed values (MindSpore's messages).
    """

    def __init__(self, jit_level="", exc_mode="auto", jit_syntax_level="", debug_level="RELEASE", infer_boost="off",
                 **kwargs):
        kwargs.pop("suppress_infer_boost_warning", None)
        if jit_level not in ("", "O0", "O1", "O2"):
            raise ValueError("For 'jit_level' must be one of ['O0', 'O1', 'O2'].")
        if exc_mode not in ("auto", "sink", "no_sink"):
            raise ValueError("For 'exc_mode' must be one of '['auto', 'sink', 'no_sink']'.")
        if jit_syntax_level not in ("", "STRICT", "COMPATIBLE", "LAX"):
            raise ValueError("For 'jit_syntax_level' must be one of '['STRICT', 'LAX']'.")
        if debug_level not in ("RELEASE", "DEBUG"):
            raise ValueError("For 'debug_level' must be one of '['RELEASE', 'DEBUG']'.")
        if infer_boost not in ("", "on", "off"):
            raise ValueError("For 'infer_boost' must be one of '['on', 'off']'.")
        self.jit_config_dict = kwargs
        self.jit_config_dict["jit_level"] = jit_level
        self.jit_config_dict["exc_mode"] = exc_mode
        self.jit_config_dict["jit_syntax_level"] = jit_syntax_level
        self.jit_config_dict["debug_level"] = debug_level
        self.jit_config_dict["infer_boost"] = infer_boost
        if "backend" not in self.jit_config_dict:
            if jit_level in ("O0", "O1"):
                self.jit_config_dict["backend"] = "ms_backend"
            elif jit_level == "O2":
                self.jit_config_dict["backend"] = "GE"

    def __repr__(self):
        return f"JitConfig({self.jit_config_dict})"
