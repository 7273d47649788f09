"""ModelCheckpoint and CheckpointConfig (MindSpore's file names, policies and append_info), written with
kiln.train.serialization.save_checkpoint (atomic writes, MindSpore's .ckpt or .safetensors format).

Not written: MindSpore's `{prefix}-graph.meta` file (a MindIR dump of the graph, which Kiln does not produce;
nothing reads it back when loading a checkpoint)."""
import os
import time

from ...common.tensor import Tensor as _Tensor
from .. import serialization
from ._callback import Callback
from ._checks import non_negative_int, check_bool

__all__ = ["CheckpointConfig", "ModelCheckpoint"]

_INFO_LIST = ("epoch_num", "step_num")


def _chg_ckpt_file_name_if_same_exist(directory, prefix):
    """The prefix to use so that new files do not mix with files of an earlier run in `directory`: `prefix` when
    no `{prefix}-*.ckpt` exists there, else `{prefix}_N` with N one more than the largest suffix found (MindSpore's
    rule: CKP → CKP_1 → CKP_2 ...)."""
    suffix = 0
    n = len(prefix)
    for filename in os.listdir(directory):
        ext = os.path.splitext(filename)[1]
        if ext not in (".ckpt", ".safetensors") or filename.endswith("_breakpoint.ckpt"):
            continue
        if filename.startswith(prefix) and len(filename) > n and not filename[n].isalpha():
            index = filename[n:].find("-")
            if index == 0:
                suffix = max(suffix, 1)
            elif index != -1:
                num = filename[n + 1:n + index]
                if num.isdigit():
                    suffix = max(suffix, int(num) + 1)
    return f"{prefix}_{suffix}" if suffix else prefix


class CheckpointConfig:
    """When ModelCheckpoint saves and how many files it keeps (MindSpore's CheckpointConfig).

    Args:
        save_checkpoint_steps (int ≥ 0): save every this many steps (default 1). When > 0,
            save_checkpoint_seconds is ignored (set to None).
        save_checkpoint_seconds (int ≥ 0): save when this many seconds passed since the last save (default 0).
        keep_checkpoint_max (int ≥ 0): keep at most this many files of this prefix, deleting the oldest
            (default 5). When > 0, keep_checkpoint_per_n_minutes is ignored (set to None); when 0 and
            keep_checkpoint_per_n_minutes is 0 too, it becomes 1.
        keep_checkpoint_per_n_minutes (int ≥ 0): keep one file per this many minutes (default 0).
        integrated_save (bool), async_save (bool, 'process' or 'thread'): passed to save_checkpoint.
        saved_network (Cell, optional): save this network instead of the train network.
        append_info (list, optional): 'epoch_num' and/or 'step_num' (saved as Int64 entries: the epoch and the
            global step of the save, added to the values of a resumed run), and at most one dict
            {name: int/float/bool/Tensor/Parameter} of extra entries.
        enc_key, enc_mode, crc_check, format: passed to save_checkpoint. format is "ckpt" (default) or
            "safetensors" (files `{prefix}-{epoch}_{step}.safetensors`); with "safetensors", enc_key, enc_mode,
            crc_check and exception_save must keep their defaults (MindSpore's rule, ValueError). enc_key (not
            supported by Kiln) is refused here, at once.
        remove_redundancy (bool): must be False (MindSpore 2.10 raises TypeError for True outside parallel
            training; Kiln raises it here, at once). Passed to save_checkpoint, which records it in a
            .safetensors file's metadata as MindSpore does.
        exception_save (bool): when training raises, save `{prefix}-{epoch}_{step}_breakpoint.ckpt` first
            (default False).

    Raises:
        TypeError / ValueError: a count that is not an int ≥ 0; all four policies None or 0; saved_network not a
            Cell; append_info not a list, an unknown string in it, more than one dict, a bad dict entry; a bool
            argument of another type.
        ValueError: format not "ckpt"/"safetensors", or a non-default option with "safetensors".
        TypeError: remove_redundancy=True.
        NotImplementedError: enc_key.
    """

    def __init__(self, save_checkpoint_steps=1, save_checkpoint_seconds=0, keep_checkpoint_max=5,
                 keep_checkpoint_per_n_minutes=0, integrated_save=True, async_save=False, saved_network=None,
                 append_info=None, enc_key=None, enc_mode="AES-GCM", exception_save=False, crc_check=False,
                 remove_redundancy=False, format="ckpt", **kwargs):
        api = "CheckpointConfig"
        if save_checkpoint_steps is not None:
            save_checkpoint_steps = non_negative_int(save_checkpoint_steps, "save_checkpoint_steps", api)
        if save_checkpoint_seconds is not None:
            save_checkpoint_seconds = non_negative_int(save_checkpoint_seconds, "save_checkpoint_seconds", api)
        if keep_checkpoint_max is not None:
            keep_checkpoint_max = non_negative_int(keep_checkpoint_max, "keep_checkpoint_max", api)
        if keep_checkpoint_per_n_minutes is not None:
            keep_checkpoint_per_n_minutes = non_negative_int(keep_checkpoint_per_n_minutes,
                                                             "keep_checkpoint_per_n_minutes", api)
        from ...nn.cell import Cell
        if saved_network is not None and not isinstance(saved_network, Cell):
            raise TypeError(f"For 'CheckpointConfig', the type of 'saved_network' must be None or Cell, but got "
                            f"{type(saved_network)}.")
        if not save_checkpoint_steps and not save_checkpoint_seconds and not keep_checkpoint_max and \
                not keep_checkpoint_per_n_minutes:
            raise ValueError("For 'CheckpointConfig', the input arguments 'save_checkpoint_steps', "
                             "'save_checkpoint_seconds', 'keep_checkpoint_max' and 'keep_checkpoint_per_n_minutes' "
                             "can't be all None or 0.")
        self.exception_save = check_bool(exception_save, "exception_save", api)
        self._save_checkpoint_steps = save_checkpoint_steps
        self._save_checkpoint_seconds = save_checkpoint_seconds
        if save_checkpoint_steps and save_checkpoint_steps > 0:
            self._save_checkpoint_seconds = None
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_per_n_minutes = keep_checkpoint_per_n_minutes
        if keep_checkpoint_max and keep_checkpoint_max > 0:
            self._keep_checkpoint_per_n_minutes = None
        elif not keep_checkpoint_per_n_minutes:
            self._keep_checkpoint_max = 1
        self._integrated_save = check_bool(integrated_save, "integrated_save", api)
        if not isinstance(async_save, bool) and async_save not in ("process", "thread"):
            raise ValueError(f"For 'CheckpointConfig', the argument 'async_save' must be a bool, 'process' or "
                             f"'thread', but got {async_save!r}.")
        self._async_save = async_save
        self._saved_network = saved_network
        self._append_dict = self._handle_append_info(append_info)
        if enc_key is not None and not isinstance(enc_key, bytes):
            raise TypeError(f"For 'CheckpointConfig', the 'enc_key' must be None or bytes, but got "
                            f"{type(enc_key).__name__}.")
        if not isinstance(enc_mode, str):
            raise TypeError(f"For 'CheckpointConfig', the 'enc_mode' must be str, but got {type(enc_mode).__name__}.")
        self._crc_check = check_bool(crc_check, "crc_check", api)
        if not isinstance(format, str):
            raise TypeError(f"For 'CheckpointConfig', the 'format' must be str, but got {type(format).__name__}.")
        self.remove_redundancy = check_bool(remove_redundancy, "remove_redundancy", api)
        # What save_checkpoint cannot do is refused now, not at the first save in the middle of training.
        serialization._check_options("CheckpointConfig", "probe.ckpt", crc_check, format, {})
        if format == "safetensors" and (enc_key is not None or enc_mode != "AES-GCM" or crc_check
                                        or self.exception_save):
            raise ValueError("For 'CheckpointConfig', when format is 'safetensors', the other parameters (enc_key, "
                             "enc_mode, crc_check, exception_save) must be default, but got "
                             f"enc_key={enc_key!r}, enc_mode={enc_mode!r}, crc_check={crc_check!r}, "
                             f"exception_save={self.exception_save!r}.")
        if enc_key is not None:
            raise NotImplementedError("For 'CheckpointConfig', encrypted checkpoints (enc_key) is not supported by "
                                      "Kiln.")
        if remove_redundancy:
            raise TypeError("For 'CheckpointConfig', the deduplication feature for saving checkpoint "
                            "(remove_redundancy=True) can only be used in parallel scenarios, but got "
                            "'stand_alone'.")
        self._enc_key = enc_key
        self._enc_mode = enc_mode
        self._format = format

    @property
    def save_checkpoint_steps(self):
        """Steps between saves (None or 0: by time)."""
        return self._save_checkpoint_steps

    @property
    def save_checkpoint_seconds(self):
        """Seconds between saves (None when save_checkpoint_steps > 0)."""
        return self._save_checkpoint_seconds

    @property
    def keep_checkpoint_max(self):
        """Most files kept."""
        return self._keep_checkpoint_max

    @property
    def keep_checkpoint_per_n_minutes(self):
        """Minutes per kept file (None when keep_checkpoint_max > 0)."""
        return self._keep_checkpoint_per_n_minutes

    @property
    def integrated_save(self):
        return self._integrated_save

    @property
    def async_save(self):
        return self._async_save

    @property
    def saved_network(self):
        return self._saved_network

    @property
    def enc_key(self):
        return self._enc_key

    @property
    def enc_mode(self):
        return self._enc_mode

    @property
    def crc_check(self):
        return self._crc_check

    @property
    def format(self):
        return self._format

    @property
    def append_dict(self):
        """{name: value} saved with every checkpoint (None when append_info was empty)."""
        return self._append_dict

    def get_checkpoint_policy(self):
        """The policy as a dict (save_checkpoint_steps, save_checkpoint_seconds, keep_checkpoint_max,
        keep_checkpoint_per_n_minutes, saved_network)."""
        return {"save_checkpoint_steps": self.save_checkpoint_steps,
                "save_checkpoint_seconds": self.save_checkpoint_seconds,
                "keep_checkpoint_max": self.keep_checkpoint_max,
                "keep_checkpoint_per_n_minutes": self.keep_checkpoint_per_n_minutes,
                "saved_network": self.saved_network}

    @staticmethod
    def _handle_append_info(append_info):
        if append_info is None or append_info == []:
            return None
        if not isinstance(append_info, list):
            raise TypeError(f"For 'CheckpointConfig', the type of 'append_info' must be list, but got "
                            f"{type(append_info)}.")
        out = {}
        for name in _INFO_LIST:
            if name in append_info:
                out[name] = 0
        dicts = 0
        for element in append_info:
            if not isinstance(element, (str, dict)):
                raise TypeError(f"For 'CheckpointConfig', the type of 'append_info' element must be str or dict, "
                                f"but got {type(element)}.")
            if isinstance(element, str) and element not in _INFO_LIST:
                raise ValueError(f"For 'CheckpointConfig', the value of element in the argument 'append_info' must "
                                 f"be in {list(_INFO_LIST)}, but got {element}.")
            if isinstance(element, dict):
                dicts += 1
                if dicts > 1:
                    raise TypeError(f"For 'CheckpointConfig', the element of 'append_info' must has only one dict, "
                                    f"but got {dicts}.")
                for key, value in element.items():
                    if not isinstance(key, str) or not isinstance(value, (int, float, bool, _Tensor)):
                        raise TypeError(f"For 'CheckpointConfig', the key type of the dict 'append_info' must be "
                                        f"string, the value type must be int, float, bool or Tensor, but got key "
                                        f"type {type(key)}, value type {type(value)}.")
                    out[key] = value
        return out


class _CheckpointManager:
    """The checkpoint files of one prefix in a directory, oldest first."""

    def __init__(self, fmt):
        self._files = []
        self._format = fmt
        self._order = {}  # path -> save sequence number (breaks mtime ties: saves can share a timestamp)
        self._seq = 0

    @property
    def ckpoint_num(self):
        return len(self._files)

    def note_saved(self, path):
        self._seq += 1
        self._order[path] = self._seq

    def update_ckpoint_filelist(self, directory, prefix):
        """Lists `{prefix}-<digits, '_', '-', '.'>.{format}` files in directory (MindSpore's filter)."""
        ext = "." + self._format
        self._files = []
        for filename in os.listdir(directory):
            if filename.endswith(ext) and filename.startswith(prefix + "-"):
                mid = filename[len(prefix):-len(ext)]
                if not any(c.isalpha() for c in mid):
                    self._files.append(os.path.join(directory, filename))

    def _age_key(self, path):
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            mtime = 0
        return (mtime, self._order.get(path, 0))

    def remove_oldest_ckpoint_file(self):
        oldest = min(self._files, key=self._age_key)
        self._remove(oldest)

    def _remove(self, path):
        try:
            os.remove(path)
            self._files.remove(path)
            self._order.pop(path, None)
        except OSError:
            pass

    def keep_one_ckpoint_per_minutes(self, minutes, cur_time):
        """Among the files younger than `minutes`, keeps only the oldest."""
        recent = [f for f in self._files if cur_time - os.path.getmtime(f) < 60 * minutes]
        if not recent:
            return
        oldest = min(recent, key=self._age_key)
        for f in recent:
            if f != oldest:
                self._remove(f)


def _wait_async(async_save):
    if async_save:
        serialization._wait_async_saves()


class ModelCheckpoint(Callback):
    """Saves the train network (weights and optimizer state) during training, as MindSpore's ModelCheckpoint.

    Files: `{directory}/{prefix}-{cur_epoch_num}_{step_in_epoch}.ckpt` (e.g. `CKP-2_32.ckpt`); when files of this
    prefix already exist in the directory at construction, the prefix becomes `{prefix}_1`, `{prefix}_2`, ... (so
    an earlier run's files are never overwritten nor counted by keep_checkpoint_max). A last checkpoint is saved
    at the end of training unless the last step was just saved. The `{prefix}-graph.meta` file MindSpore also
    writes is not written (Kiln has no MindIR graph export).

    Args:
        prefix (str or callable): the file name prefix (default 'CKP'; no '/'); a callable(cb_params) returns the
            whole file name stem (then `{stem}.ckpt`, no epoch/step suffix).
        directory (str or callable, optional): created if missing (default: the current directory at import).
        config (CheckpointConfig, optional): default CheckpointConfig().

    Raises:
        ValueError: a prefix that is not a str/callable or contains '/'.
        TypeError: config not a CheckpointConfig.
    `latest_ckpt_file_name` is the path of the last file written.
    """

    def __init__(self, prefix="CKP", directory=None, config=None):
        super().__init__()
        self._latest_ckpt_file_name = ""
        self._last_time = time.time()
        self._last_time_for_keep = time.time()
        self._last_triggered_step = 0
        if not callable(prefix) and (not isinstance(prefix, str) or "/" in prefix):
            raise ValueError(f"For 'ModelCheckpoint', the argument 'prefix' for checkpoint file name is invalid, it "
                             f"must be callable or string that does not contain '/', but got {prefix}.")
        self._prefix_func = prefix if callable(prefix) else None
        self._directory_func = directory if callable(directory) else None
        self._prefix = prefix
        self._exception_prefix = prefix
        if directory is None:
            self._directory = _CWD
        elif callable(directory):
            self._directory = None
        else:
            self._directory = _make_directory(directory)
        if config is None:
            config = CheckpointConfig()
        elif not isinstance(config, CheckpointConfig):
            raise TypeError(f"For 'ModelCheckpoint', the type of argument 'config' should be 'CheckpointConfig', "
                            f"but got {type(config)}.")
        self._config = config
        self._manager = _CheckpointManager(config.format)
        if not callable(directory) and not callable(prefix):
            self._prefix = _chg_ckpt_file_name_if_same_exist(self._directory, self._prefix)
        self._append_dict = dict(config.append_dict or {})
        self._append_epoch_num = self._append_dict.get("epoch_num", 0)
        self._append_step_num = self._append_dict.get("step_num", 0)

    def step_end(self, run_context):
        """Saves when the policy says so (every save_checkpoint_steps steps, or save_checkpoint_seconds)."""
        cb_params = run_context.original_args()
        if self._prefix_func is not None:
            self._prefix = self._prefix_func(cb_params)
            if not isinstance(self._prefix, str) or "/" in self._prefix:
                raise ValueError(f"For 'ModelCheckpoint', the argument 'prefix' for checkpoint file name is callable, "
                                 f"it must return a string that does not contain '/', but got {self._prefix}.")
        if self._directory_func is not None:
            self._directory = _make_directory(self._directory_func(cb_params))
        self._save_ckpt(cb_params)

    def end(self, run_context):
        """Saves the last step (if not saved yet) and waits for an asynchronous save to finish."""
        cb_params = run_context.original_args()
        self._save_ckpt(cb_params, force_to_save=True)
        _wait_async(self._config.async_save)

    def _check_save_ckpt(self, cb_params, force_to_save):
        cfg = self._config
        if cfg.save_checkpoint_steps and cfg.save_checkpoint_steps > 0:
            return (cb_params.cur_step_num >= self._last_triggered_step + cfg.save_checkpoint_steps
                    or force_to_save)
        if cfg.save_checkpoint_seconds and cfg.save_checkpoint_seconds > 0:
            now = time.time()
            if now - self._last_time > cfg.save_checkpoint_seconds or force_to_save:
                self._last_time = now
                return True
        return False

    def _save_ckpt(self, cb_params, force_to_save=False):
        if cb_params.cur_step_num == self._last_triggered_step or self._directory is None:
            return
        if not self._check_save_ckpt(cb_params, force_to_save):
            return
        cfg = self._config
        _wait_async(cfg.async_save)
        step_in_epoch = int((cb_params.cur_step_num - 1) % cb_params.batch_num + 1)
        if self._prefix_func is not None:
            name = f"{self._prefix}.{cfg.format}"
        else:
            name = f"{self._prefix}-{cb_params.cur_epoch_num}_{step_in_epoch}.{cfg.format}"
        self._manager.update_ckpoint_filelist(self._directory, self._prefix)
        if cfg.keep_checkpoint_max and 0 < cfg.keep_checkpoint_max <= self._manager.ckpoint_num:
            while cfg.keep_checkpoint_max <= self._manager.ckpoint_num:
                before = self._manager.ckpoint_num
                self._manager.remove_oldest_ckpoint_file()
                if self._manager.ckpoint_num == before:  # could not delete: do not loop
                    break
        elif cfg.keep_checkpoint_per_n_minutes and cfg.keep_checkpoint_per_n_minutes > 0:
            now = time.time()
            if now - self._last_time_for_keep < cfg.keep_checkpoint_per_n_minutes * 60:
                self._manager.keep_one_ckpoint_per_minutes(cfg.keep_checkpoint_per_n_minutes, now)
        path = os.path.join(self._directory, name)
        self._last_time_for_keep = time.time()
        self._last_triggered_step = cb_params.cur_step_num
        if "epoch_num" in self._append_dict:
            self._append_dict["epoch_num"] = self._append_epoch_num + cb_params.cur_epoch_num
        if "step_num" in self._append_dict:
            self._append_dict["step_num"] = self._append_step_num + cb_params.cur_step_num
        network = cfg.saved_network if cfg.saved_network is not None else cb_params.train_network
        serialization.save_checkpoint(network, path, cfg.integrated_save, cfg.async_save,
                                      self._append_dict or None, cfg.enc_key, cfg.enc_mode,
                                      crc_check=cfg.crc_check, format=cfg.format,
                                      remove_redundancy=cfg.remove_redundancy)
        self._manager.note_saved(path)
        self._latest_ckpt_file_name = path
        cb_params["last_save_ckpt_step"] = cb_params.cur_step_num
        cb_params["latest_ckpt_file"] = path

    def _save_breakpoint(self, cb_params):
        """exception_save: `{prefix}-{epoch}_{step}_breakpoint.ckpt` of the current state (Model calls it when
        training raises)."""
        if self._directory is None:
            return
        prefix = self._exception_prefix if isinstance(self._exception_prefix, str) else self._prefix
        epoch = cb_params.get("cur_epoch_num", 0)
        step = int((cb_params.get("cur_step_num", 1) - 1) % max(cb_params.get("batch_num", 1), 1) + 1)
        path = os.path.join(self._directory, f"{prefix}-{epoch}_{step}_breakpoint.ckpt")
        if "epoch_num" in self._append_dict:
            self._append_dict["epoch_num"] = self._append_epoch_num + epoch
        if "step_num" in self._append_dict:
            self._append_dict["step_num"] = self._append_step_num + cb_params.get("cur_step_num", 0)
        serialization.save_checkpoint(cb_params.train_network, path, self._config.integrated_save, False,
                                      self._append_dict or None)

    @property
    def latest_ckpt_file_name(self):
        """The path of the last checkpoint written ('' before any)."""
        return self._latest_ckpt_file_name


_CWD = os.getcwd()


def _make_directory(path):
    """The absolute path of `path`, created (with parents) if missing. TypeError for a non-str; ValueError for an
    empty path or one that exists as a file."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"For 'ModelCheckpoint', the 'directory' must be a str, but got {type(path).__name__}.")
    path = os.path.abspath(os.path.expanduser(os.fspath(path)))
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"For 'ModelCheckpoint', the 'directory' {path} exists and is not a directory.")
    os.makedirs(path, exist_ok=True)
    return path
