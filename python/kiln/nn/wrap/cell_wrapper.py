"""WithLossCell, WithEvalCell and TrainOneStepCell with MindSpore 2.10's arguments, outputs and errors.

TrainOneStepCell is one Cell: in GRAPH_MODE its call compiles forward, gradients and the optimizer update into one
graph (kiln.nn.Cell compiles `construct`; the gradient transform and the optimizer are traced inline), in
PyNative it runs them eagerly; both give the same numbers."""
import numbers

from ... import ops as _ops
from ...common.tensor import Tensor as _Tensor
from ...ops import _kernels
from ...common import dtype as mstype
from ...common.api import value_and_grad
from ...ops.function import depend
from ..cell import Cell

__all__ = ["WithLossCell", "WithEvalCell", "TrainOneStepCell"]



def _check_cell(api, name, value):
    if not isinstance(value, Cell):
        raise TypeError(f"For '{api}', the argument '{name}' must be a Cell, but got {type(value).__name__}.")


class WithLossCell(Cell):
    """A network joined with its loss function: `construct(data, label) = loss_fn(backbone(data), label)`.

    Args:
        backbone (Cell): the network; called with `data`.
        loss_fn (Cell): called as `loss_fn(output, label)`.
    Output: the loss (whatever loss_fn returns; a 0-d Tensor for the built-in losses with reduction='mean').
    Parameter names are kept (auto_prefix=False), so a checkpoint of the wrapper matches the backbone's.
    `backbone_network` returns the backbone.

    Raises:
        TypeError: backbone or loss_fn not a Cell.
    """

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        _check_cell("WithLossCell", "backbone", backbone)
        _check_cell("WithLossCell", "loss_fn", loss_fn)
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        out = self._backbone(data)
        return self._loss_fn(out, label)

    @property
    def backbone_network(self):
        """The backbone Cell."""
        return self._backbone


class WithEvalCell(Cell):
    """A network and its loss for evaluation: `construct(data, label)` returns `(loss, outputs, label)`, the
    layout Model.eval expects (eval_indexes [0, 1, 2]: loss, prediction, label).

    Args:
        network (Cell): called with `data`.
        loss_fn (Cell): called as `loss_fn(outputs, label)`.
        add_cast_fp32 (bool): cast outputs and float labels to float32 before the loss (default False; Model sets
            it for mixed-precision levels).

    Raises:
        TypeError: network or loss_fn not a Cell; add_cast_fp32 not a bool.
    """

    def __init__(self, network, loss_fn, add_cast_fp32=False):
        super().__init__(auto_prefix=False)
        _check_cell("WithEvalCell", "network", network)
        _check_cell("WithEvalCell", "loss_fn", loss_fn)
        if not isinstance(add_cast_fp32, bool):
            raise TypeError(f"For 'WithEvalCell', the type of 'add_cast_fp32' must be bool, but got "
                            f"{type(add_cast_fp32).__name__}.")
        self._network = network
        self._loss_fn = loss_fn
        self.add_cast_fp32 = add_cast_fp32

    def construct(self, data, label):
        outputs = self._network(data)
        if self.add_cast_fp32:
            if isinstance(label, _Tensor) and mstype.is_float(label.dtype):
                label = _kernels.cast(label, mstype.float32)
            outputs = _kernels.cast(outputs, mstype.float32)
        loss = self._loss_fn(outputs, label)
        return loss, outputs, label


class TrainOneStepCell(Cell):
    """One training step: the loss of `network(*inputs)`, its gradients with respect to `optimizer.parameters`, and
    the optimizer update; returns the loss (computed before the update), as MindSpore's nn.TrainOneStepCell.

    Args:
        network (Cell): returns the loss, a Tensor (usually WithLossCell(net, loss_fn)).
        optimizer (Cell): an nn.Optimizer (anything with `parameters` and called with the gradient tuple).
        sens (int/float, optional): the gradient of the loss that starts back-propagation (default None: 1.0),
            so the gradients are those of sens·loss (a manual loss scale: the optimizer's loss_scale undoes it).
        return_grad (bool): also return {parameter name: gradient} (default False).
    Output: loss (Tensor), or (loss, {name: grad}) with return_grad=True.

    In GRAPH_MODE the call compiles the whole step (forward, backward, update) into one graph.

    Raises:
        TypeError: network not a Cell; optimizer without `parameters`; sens not a number; return_grad not bool;
            at call time, a network output that is not a Tensor.
        ValueError: sens == 0.
    """

    def __init__(self, network, optimizer, sens=None, return_grad=False):
        super().__init__(auto_prefix=False)
        _check_cell("TrainOneStepCell", "network", network)
        if not isinstance(optimizer, Cell) or not hasattr(optimizer, "parameters"):
            raise TypeError(f"For 'TrainOneStepCell', the argument 'optimizer' must be an nn.Optimizer, but got "
                            f"{type(optimizer).__name__}.")
        if sens is not None and (isinstance(sens, bool) or not isinstance(sens, numbers.Real)):
            raise TypeError(f"For 'TrainOneStepCell', the argument 'sens' must be None, int or float, but got "
                            f"{type(sens).__name__}.")
        if sens is not None and sens == 0:
            raise ValueError("The input argument of 'sens' can not be 0.")
        if not isinstance(return_grad, bool):
            raise TypeError(f"For 'TrainOneStepCell', the type of 'return_grad' must be bool, but got "
                            f"{type(return_grad).__name__}.")
        self.network = network
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.sense_flag = sens is not None
        self.sens = 1.0 if sens is None else float(sens)
        self.return_grad = return_grad
        self.__dict__["weights_name"] = [p.name for p in self.weights]
        # Data-parallel mode (set_auto_parallel_context(parallel_mode=DATA_PARALLEL)): the gradients are all-reduced
        # over the processes before the update (MindSpore's reducer_flag / grad_reducer), and making the reducer
        # broadcasts the weights from rank 0.
        from ..._parallel_context import _is_data_parallel
        self.reducer_flag = _is_data_parallel()
        self.grad_reducer = None
        if self.reducer_flag:
            from ..._parallel_context import get_auto_parallel_context
            from .grad_reducer import DistributedGradReducer
            self.grad_reducer = DistributedGradReducer(self.weights, get_auto_parallel_context("gradients_mean"),
                                                       get_auto_parallel_context("device_num"))
            # optimizer parallel: reduce-scatter exactly the gradients of the parameters the optimizer slices
            self.grad_reducer._set_shards(getattr(optimizer, "_opt_shards", None))
        # AutoParallel(network).hsdp(): optimizer parallel for this optimizer (kiln/nn/optim/_parallel.py)
        hsdp = next((c.__dict__["_hsdp"] for _, c in network.cells_and_names() if "_hsdp" in c.__dict__), None)
        if hsdp is not None and hasattr(optimizer, "_opt_shards"):
            from ..optim import _parallel
            _parallel.enable_late(optimizer, *hsdp)
            optimizer.__dict__["_hsdp_applied"] = True
            if self.grad_reducer is not None:
                self.grad_reducer._set_shards(optimizer._opt_shards)
        sens_value = self.sens

        def scaled(*inputs):
            loss = network(*inputs)
            if not isinstance(loss, _Tensor):
                raise TypeError(f"For 'TrainOneStepCell', the network must return the loss as a Tensor, but got "
                                f"{type(loss).__name__}.")
            # Back-propagation starts from sens (MindSpore's sens = fill(loss.dtype, loss.shape, sens)).
            return _ops.mul(loss, _kernels.cast(_kernels.full([], sens_value, mstype.float32), loss.dtype)), loss

        if self.sense_flag:
            self.__dict__["_grad_fn"] = value_and_grad(scaled, None, self.weights, has_aux=True)
        else:
            self.__dict__["_grad_fn"] = value_and_grad(network, None, self.weights)

    def construct(self, *inputs):
        if self.sense_flag:
            (_, loss), grads = self._grad_fn(*inputs)
        else:
            loss, grads = self._grad_fn(*inputs)
        if not isinstance(loss, _Tensor):
            raise TypeError(f"For 'TrainOneStepCell', the network must return the loss as a Tensor, but got "
                            f"{type(loss).__name__}.")
        if self.reducer_flag:
            grads = self.grad_reducer(grads)
        loss = depend(loss, self.optimizer(grads))
        if self.return_grad:
            return loss, dict(zip(self.weights_name, grads))
        return loss
