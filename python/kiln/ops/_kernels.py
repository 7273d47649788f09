"""The raw C++ kernels that Kiln's own Python code outside kiln/ops calls directly (issue 23, "one narrow boundary";
docs/decisions/core-boundary.md). Each name here is the kiln._core function itself, not a wrapper: where kiln.ops has
a public function of the same name, that one adds MindSpore's argument forms and checks (dtype names, Python numbers,
tuples for shapes, keyword names ...) that the callers here do not need and whose cost the hot loops (optimizer updates,
normalization, training steps) must not pay. Ops that kiln.ops exports as the very kernel (kiln.ops.mul is
kiln._core.mul) are not listed: callers use kiln.ops. The list holds exactly the names used outside, as
tests/python/test_import_boundaries.py checks; each line gives the kernel's signature."""
from .._loader import _core

# _cond(arg0: Tensor, arg1: SubGraph, arg2: Sequence[Tensor], arg3: SubGraph, arg4: Sequence[Tenso...)
_cond = _core._cond
_view_select = _core._view_select  # _view_select(x: object | None, dim: object | None, index: object | None)
# _while_loop(arg0: SubGraph, arg1: SubGraph, arg2: Sequence[Tensor], arg3: Sequence[Tensor], arg4...)
_while_loop = _core._while_loop
# adam(param: Tensor, m: Tensor, v: Tensor, beta1_power: Tensor, beta2_power: Tensor, lr: Tensor, ...)
adam = _core.adam
adaptive_avg_pool2d = _core.adaptive_avg_pool2d  # adaptive_avg_pool2d(x: Tensor, output_size: Sequence[int])
all_gather = _core.all_gather  # all_gather(x: Tensor, group: str)
all_reduce = _core.all_reduce  # all_reduce(x: Tensor, op: int, group: str)
# all_to_all_v(x: Tensor, send_counts: Sequence[int], recv_counts: Sequence[int], group: str)
all_to_all_v = _core.all_to_all_v
amax = _core.amax  # amax(x: Tensor, axis: object | None = None, keep_dims: bool = False)
amin = _core.amin  # amin(x: Tensor, axis: object | None = None, keep_dims: bool = False)
# apply_momentum(param: Tensor, accum: Tensor, lr: Tensor, grad: Tensor, momentum: float, use_nest...)
apply_momentum = _core.apply_momentum
arange = _core.arange  # arange(start: float, end: float, step: float, dtype: DType)
argmax = _core.argmax  # argmax(x: Tensor, axis: object | None = None, keep_dims: bool = False)
argmin = _core.argmin  # argmin(x: Tensor, axis: object | None = None, keep_dims: bool = False)
assign = _core.assign  # assign(variable: object, value: Tensor)
atan2 = _core.atan2  # atan2(x: Tensor, y: Tensor)
# avg_pool2d(x: Tensor, kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int], ceil_mod...)
avg_pool2d = _core.avg_pool2d
barrier = _core.barrier  # barrier(group: str): returns when every process of the group has called it
# batch_norm(x: Tensor, scale: Tensor, bias: Tensor, mean: Tensor, variance: Tensor, training: boo...)
batch_norm = _core.batch_norm
broadcast = _core.broadcast  # broadcast(x: Tensor, root: int, group: str)
broadcast_to = _core.broadcast_to  # broadcast_to(x: Tensor, shape: object)
cast = _core.cast  # cast(x: Tensor, dtype: DType)
ceil = _core.ceil  # ceil(x: Tensor)
# check_range(x: Tensor, op: str, what: str, lower: float, upper: float, upper_closed: bool = Fals...)
check_range = _core.check_range
clip = _core.clip  # clip(x: Tensor, lo: Tensor | None, hi: Tensor | None)
concat = _core.concat  # concat(tensors: object, axis: int = 0)
# conv2d(x: Tensor, weight: Tensor, stride: Sequence[int], pad: Sequence[int], dilation: Sequence[...)
conv2d = _core.conv2d
# conv2d_backprop_input(dout: Tensor, weight: Tensor, input_shape: object, stride: Sequence[int], ...)
conv2d_backprop_input = _core.conv2d_backprop_input
cos = _core.cos  # cos(x: Tensor)
count_nonzero = _core.count_nonzero  # count_nonzero(x: Tensor, axis: object | None = None, keep_dims: bool = False)
diagonal = _core.diagonal  # diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1)
depend = _core.depend  # depend(value: Tensor, expr: Tensor)
detach = _core.detach  # detach(arg: Tensor, /)
div = _core.div  # div(x: Tensor, y: Tensor)
erfinv = _core.erfinv  # erfinv(x: Tensor)
expand_dims = _core.expand_dims  # expand_dims(x: Tensor, axis: int)
floor = _core.floor  # floor(x: Tensor)
full = _core.full  # full(shape: object, value: float, dtype: DType)
gather = _core.gather  # gather(x: Tensor, indices: Tensor, axis: int = 0)
gather_d = _core.gather_d  # gather_d(x: Tensor, dim: int, index: Tensor)
gelu = _core.gelu  # gelu(x: Tensor, approximate: bool = False)
identity = _core.identity  # identity(x: Tensor)
# layer_norm(x: Tensor, gamma: Tensor | None, beta: Tensor | None, begin_norm_axis: int, begin_par...)
layer_norm = _core.layer_norm
log1p = _core.log1p  # log1p(x: Tensor)
log_softmax = _core.log_softmax  # log_softmax(x: Tensor, axis: int = -1)
matmul = _core.matmul  # matmul(a: Tensor, b: Tensor, transpose_a: bool = False, transpose_b: bool = False)
# max_pool2d(x: Tensor, kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int], dilation...)
max_pool2d = _core.max_pool2d
mean = _core.mean  # mean(x: Tensor, axis: object | None = None, keep_dims: bool = False)
mod = _core.mod  # mod(x: Tensor, y: Tensor)
ones_like = _core.ones_like  # ones_like(arg: Tensor, /)
pow = _core.pow  # pow(x: Tensor, y: Tensor)
print_ = _core.print_  # print_(text: str, tensors: Sequence[Tensor])
prod = _core.prod  # prod(x: Tensor, axis: object | None = None, keep_dims: bool = False)
# random_gamma(shape: object, alpha: Tensor, beta: Tensor | None, seed: int, offset: int, stream: int = -1)
random_gamma = _core.random_gamma
recv = _core.recv  # recv(shape, dtype, src: int, tag: int, group: str) -> Tensor: a point-to-point receive
reduce_scatter = _core.reduce_scatter  # reduce_scatter(x: Tensor, op: int, group: str)
reshape = _core.reshape  # reshape(x: Tensor, shape: object)
select = _core.select  # select(cond: Tensor, x: Tensor, y: Tensor)
send = _core.send  # send(x: Tensor, dst: int, tag: int, group: str): a point-to-point send
sgd = _core.sgd  # sgd(param: Tensor, grad: Tensor, lr: Tensor, accum: Tensor, stat: Tensor, momentum: float = 0.0,...)
sin = _core.sin  # sin(x: Tensor)
softmax = _core.softmax  # softmax(x: Tensor, axis: int = -1)
split = _core.split  # split(x: Tensor, sizes: Sequence[int], axis: int = 0)
squeeze = _core.squeeze  # squeeze(x: Tensor, axis: object | None = None)
stack = _core.stack  # stack(tensors: object, axis: int = 0)
# standard_normal(shape: object, dtype: DType, seed: int, offset: int, stream: int = -1)
standard_normal = _core.standard_normal
stop_gradient = _core.stop_gradient  # stop_gradient(x: Tensor)
# strided_slice(x: Tensor, begin: Sequence[int], end: Sequence[int], step: Sequence[int])
strided_slice = _core.strided_slice
sum = _core.sum  # sum(x: Tensor, axis: object | None = None, keep_dims: bool = False)
tensor_copy = _core.tensor_copy  # tensor_copy(x: Tensor)
# tensor_scatter_update(input_x: Tensor, indices: Tensor, updates: Tensor)
tensor_scatter_update = _core.tensor_scatter_update
transpose = _core.transpose  # transpose(x: Tensor, perm: object)
# uniform_int(shape: object, low: int, high: int, dtype: DType, seed: int, offset: int, stream: in...)
uniform_int = _core.uniform_int
uniform_real = _core.uniform_real  # uniform_real(shape: object, dtype: DType, seed: int, offset: int, stream: int = -1)
zeros_like = _core.zeros_like  # zeros_like(arg: Tensor, /)
