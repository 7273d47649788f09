// The single list of Kiln ops: KILN_OP(Id, "name"). Enums, names and bindings derive from it.
// The name is MindSpore's primitive name where one exists. Grouped by the file in src/ops/ that defines them.
// (No include guard: included with different KILN_OP definitions.)

// src/ops/elementwise_binary.cpp
KILN_OP(Add, "Add")
KILN_OP(Sub, "Sub")
KILN_OP(Mul, "Mul")
KILN_OP(Div, "Div")
KILN_OP(FloorDiv, "FloorDiv")
KILN_OP(Mod, "FloorMod")
KILN_OP(Pow, "Pow")
KILN_OP(Maximum, "Maximum")
KILN_OP(Minimum, "Minimum")
KILN_OP(Atan2, "Atan2")
KILN_OP(Equal, "Equal")
KILN_OP(NotEqual, "NotEqual")
KILN_OP(Greater, "Greater")
KILN_OP(GreaterEqual, "GreaterEqual")
KILN_OP(Less, "Less")
KILN_OP(LessEqual, "LessEqual")
KILN_OP(LogicalAnd, "LogicalAnd")
KILN_OP(LogicalOr, "LogicalOr")
KILN_OP(LogicalXor, "LogicalXor")
KILN_OP(Select, "Select")

// src/ops/elementwise_unary.cpp
KILN_OP(Neg, "Neg")
KILN_OP(Exp, "Exp")
KILN_OP(Log, "Log")
KILN_OP(Sqrt, "Sqrt")
KILN_OP(Rsqrt, "Rsqrt")
KILN_OP(Abs, "Abs")
KILN_OP(Sign, "Sign")
KILN_OP(Square, "Square")
KILN_OP(Erf, "Erf")
KILN_OP(Erfinv, "Erfinv")
KILN_OP(LogicalNot, "LogicalNot")
KILN_OP(Relu, "ReLU")
KILN_OP(Sigmoid, "Sigmoid")
KILN_OP(Tanh, "Tanh")
KILN_OP(Gelu, "GeLU")
KILN_OP(GeluGrad, "GeLUGrad")  // src/ops/gelu_grad.cpp
KILN_OP(Cast, "Cast")
KILN_OP(Identity, "Identity")
KILN_OP(StopGradient, "StopGradient")

// src/ops/softmax.cpp
KILN_OP(Softmax, "Softmax")
KILN_OP(LogSoftmax, "LogSoftmax")

// src/ops/reduce.cpp
KILN_OP(ReduceSum, "ReduceSum")
KILN_OP(ReduceMean, "ReduceMean")
KILN_OP(ReduceMax, "ReduceMax")
KILN_OP(ReduceMin, "ReduceMin")
KILN_OP(ReduceProd, "ReduceProd")
KILN_OP(CountNonZero, "CountNonZero")
KILN_OP(ReduceAll, "ReduceAll")
KILN_OP(ReduceAny, "ReduceAny")
KILN_OP(Argmax, "Argmax")
KILN_OP(Argmin, "Argmin")

// src/ops/shape_ops.cpp
KILN_OP(Reshape, "Reshape")
KILN_OP(Transpose, "Transpose")
KILN_OP(BroadcastTo, "BroadcastTo")
KILN_OP(Concat, "Concat")
KILN_OP(StridedSlice, "StridedSlice")
KILN_OP(StridedSliceGrad, "StridedSliceGrad")

// src/ops/index.cpp
KILN_OP(Gather, "Gather")
KILN_OP(UnsortedSegmentSum, "UnsortedSegmentSum")
KILN_OP(NonZero, "NonZero")
KILN_OP(ArgSort, "ArgSort")

// src/ops/matmul.cpp
KILN_OP(MatMul, "BatchMatMul")

// src/ops/creation.cpp
KILN_OP(Fill, "Fill")
KILN_OP(Arange, "Range")
KILN_OP(StandardNormal, "StandardNormal")
KILN_OP(UniformReal, "UniformReal")
KILN_OP(UniformInt, "UniformInt")

// src/ops/state.cpp — ops that write Parameters in place
KILN_OP(Assign, "Assign")
KILN_OP(Depend, "Depend")
KILN_OP(Adam, "Adam")
KILN_OP(ApplyMomentum, "ApplyMomentum")
KILN_OP(SGD, "SGD")

// src/ops/print.cpp
KILN_OP(Print, "Print")

// src/ops/elementwise_unary.cpp (added with the compiled learning-rate schedules)
KILN_OP(Cos, "Cos")
KILN_OP(Sin, "Sin")
KILN_OP(Floor, "Floor")
KILN_OP(Ceil, "Ceil")

// src/ops/elementwise_unary.cpp (added for numerically stable softplus / log-sigmoid)
KILN_OP(Log1p, "Log1p")

// src/ops/fused.cpp, fused_matmul.cpp — produced by graph passes only (src/graph/passes/fusion.cpp)
KILN_OP(FusedElementwise, "FusedElementwise")
KILN_OP(MatMulBiasAct, "MatMulBiasAct")

// src/ops/conv.cpp
KILN_OP(Conv2D, "Conv2D")
KILN_OP(Conv2DBackpropInput, "Conv2DBackpropInput")
KILN_OP(Conv2DBackpropFilter, "Conv2DBackpropFilter")

// src/ops/pool.cpp
KILN_OP(MaxPool, "MaxPool")
KILN_OP(MaxPoolGrad, "MaxPoolGrad")
KILN_OP(MaxPoolGradGrad, "MaxPoolGradGrad")
KILN_OP(MaxPoolGradWithArgmax, "MaxPoolGradWithArgmax")
KILN_OP(AvgPool, "AvgPool")
KILN_OP(AvgPoolGrad, "AvgPoolGrad")
KILN_OP(AdaptiveAvgPool2D, "AdaptiveAvgPool2D")
KILN_OP(AdaptiveAvgPool2DGrad, "AdaptiveAvgPool2DGrad")

// src/ops/norm.cpp
KILN_OP(BatchNorm, "BatchNorm")
KILN_OP(BatchNormGrad, "BatchNormGrad")
// src/ops/layer_norm.cpp
KILN_OP(LayerNorm, "LayerNorm")
KILN_OP(LayerNormGrad, "LayerNormGrad")

// src/ops/scatter.cpp — functional item assignment, copies and value checks
KILN_OP(TensorScatterUpdate, "TensorScatterUpdate")
KILN_OP(TensorCopy, "TensorCopy")
KILN_OP(CheckRange, "CheckRange")

// src/ops/collective.cpp — communication between processes (kiln/comm.h); side effects in graphs
KILN_OP(AllReduce, "AllReduce")
KILN_OP(AllGather, "AllGather")
KILN_OP(ReduceScatter, "ReduceScatter")
KILN_OP(Broadcast, "Broadcast")
KILN_OP(Barrier, "Barrier")
KILN_OP(Send, "Send")
KILN_OP(Receive, "Receive")
// src/graph/control_flow.cpp — control flow with sub-graphs (Graph mode: kiln.ops cond/while_loop, the AST rewrite)
KILN_OP(If, "If")
KILN_OP(While, "While")
KILN_OP(WhileGrad, "WhileGrad")
