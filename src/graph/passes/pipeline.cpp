// The standard optimization pipeline.
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
  run("common_subexpression_elimination", common_subexpression_elimination);
  run("dead_code_elimination", dead_code_elimination);
  return log;
}

}  // namespace kiln::graph
