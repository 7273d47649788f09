// Deployable model files (kiln/deploy.h): the writer behind kiln.export(..., file_format="KILN")
// (kiln/train/_kiln_export.py). Loading and running are C++-only (kiln::deploy::Model; examples/cpp).
#include "bindings.h"
#include "kiln/deploy.h"

namespace kiln::py {

void bind_deploy(nb::module_& m) {
  m.def("deploy_save", [](const graph::Graph& g, const std::vector<std::string>& weight_names,
                          const std::vector<std::string>& input_names, const std::vector<std::string>& output_names,
                          const std::string& path) {
    nb::gil_scoped_release release;
    deploy::save(path, g, weight_names, input_names, output_names);
  }, nb::arg("graph"), nb::arg("weight_names"), nb::arg("input_names"), nb::arg("output_names"), nb::arg("path"),
     "Writes `graph` (an inference graph; its captures are the weights, named in value order) as a Kiln model "
     "file (kiln/deploy.h). ValueError for a graph with state updates, random ops or prints, or bad names.");
  m.attr("DEPLOY_FORMAT_VERSION") = deploy::kModelFormatVersion;
}

}  // namespace kiln::py
