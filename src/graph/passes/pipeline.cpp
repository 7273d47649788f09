// The standard optimization pipeline.
//
// Order: dead code first (the reverse pass of value_and_grad leaves unused branches, e.g. the exponent's
// gradient of Pow), then constant folding (so simplification sees folded constants), algebraic simplification,
// CSE (simplification makes more expressions identical), dead code again (fusion needs exact use counts: a dead
// use would block it), matmul+bias+activation fusion before elementwise fusion (else the bias Add and the
// activation would be taken into an elementwise group), and a final dead-code sweep.
#include "kiln/graph.h"

namespace kiln::graph {

std::vector<std::string> optimize(Graph& g) {
  std::vector<std::string> log;
  auto run = [&](const char* name, int (*pass)(Graph&)) {
    int n = pass(g);
    g.verify();
    log.push_back(std::string(name) + ": " + std::to_string(n));
  };
  run("dead_code_elimination", dead_code_elimination);
  run("constant_folding", constant_folding);
  run("algebraic_simplification", algebraic_simplification);
  run("common_subexpression_elimination", common_subexpression_elimination);
  run("dead_code_elimination", dead_code_elimination);
  run("fuse_matmul_bias_activation", fuse_matmul_bias_activation);
  run("fuse_elementwise", fuse_elementwise);
  run("dead_code_elimination", dead_code_elimination);
  return log;
}

}  // namespace kiln::graph
