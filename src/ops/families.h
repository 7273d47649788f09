// Each op family file defines its ops and registers them here. Registration is explicit (not static
// initializers) so that linking the core as a static library keeps every op.
#pragma once

namespace kiln::ops_impl {
void register_elementwise_binary();
void register_elementwise_unary();
void register_gelu_grad();
void register_softmax();
void register_reduce();
void register_shape_ops();
void register_index();
void register_matmul();
void register_creation();
void register_state();
void register_print();
void register_fused();
void register_conv();
void register_pool();
void register_norm();
void register_layer_norm();
void register_scatter();
void register_collective();
void register_control_flow();  // src/graph/control_flow.cpp

inline void register_all() {
  register_elementwise_binary();
  register_elementwise_unary();
  register_gelu_grad();
  register_softmax();
  register_reduce();
  register_shape_ops();
  register_index();
  register_matmul();
  register_creation();
  register_state();
  register_print();
  register_fused();
  register_conv();
  register_pool();
  register_norm();
  register_layer_norm();
  register_scatter();
  register_collective();
  register_control_flow();
}
}  // namespace kiln::ops_impl
