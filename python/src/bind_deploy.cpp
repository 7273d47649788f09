// Files: deployable model files (kiln/deploy.h): the bytes behind kiln.export(..., file_format="KILN")
// (kiln/train/_kiln_export.py; loading and running are C++-only: kiln::deploy::Model, examples/cpp), and Kiln's
// one atomic file writer (core/atomic_write.h), which every Python writer of a whole file calls through
// kiln/_atomic_write.py.
#include <cerrno>
#include <system_error>

#include "bindings.h"
#include "core/atomic_write.h"
#include "kiln/deploy.h"

namespace kiln::py {

void bind_deploy(nb::module_& m) {
  m.def("deploy_to_bytes", [](const graph::Graph& g, const std::vector<std::string>& weight_names,
                              const std::vector<std::string>& input_names,
                              const std::vector<std::string>& output_names) {
    std::string bytes;
    {
      nb::gil_scoped_release release;
      bytes = deploy::to_bytes(g, weight_names, input_names, output_names);
    }
    return nb::bytes(bytes.data(), bytes.size());
  }, nb::arg("graph"), nb::arg("weight_names"), nb::arg("input_names"), nb::arg("output_names"),
     "The bytes of a Kiln model file for `graph` (kiln/deploy.h; an inference graph; its captures are the weights, "
     "named in value order); Python writes them with kiln._atomic_write. ValueError for a graph with state "
     "updates, random ops or prints, or bad names.");
  m.def("write_file_atomic", [](nb::bytes path, nb::bytes data, unsigned mode, size_t chunk_bytes,
                                nb::object before_step) {
    io::AtomicWriteOptions o;
    o.mode = mode;
    o.chunk_bytes = chunk_bytes;
    if (!before_step.is_none()) {
      o.before_step = [before_step](const char* step) {
        nb::gil_scoped_acquire gil;
        try {
          before_step(step);
        } catch (nb::python_error& e) {
          e.discard_as_unraisable("kiln._core.write_file_atomic before_step");
        }
      };
    }
    std::string p(path.c_str(), path.size());
    try {
      nb::gil_scoped_release release;
      io::write_file_atomic(p, std::string_view(data.c_str(), data.size()), o);
    } catch (const std::system_error& e) {
      errno = e.code().value();
      nb::object name = nb::steal(PyUnicode_DecodeFSDefaultAndSize(path.c_str(), Py_ssize_t(path.size())));
      PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, name.ptr());
      throw nb::python_error();
    }
  }, nb::arg("path"), nb::arg("data"), nb::arg("mode") = 0666, nb::arg("chunk_bytes") = size_t(1) << 26,
     nb::arg("before_step") = nb::none(),
     "Replaces the file `path` (bytes, os.fsencode) by `data` atomically, leaving no temporary file behind a killed "
     "writer (core/atomic_write.h; Python: kiln._atomic_write.write_file). OSError (errno, path) when it "
     "cannot be written; the old file is then unchanged. `before_step(name)` (tests) is called before each step.");
  m.def("atomic_write_host_tag", [] { return io::temp_host_tag(); },
        "The 8 hex digits naming this host and pid namespace in Kiln's temporary file names.");
  m.attr("DEPLOY_FORMAT_VERSION") = deploy::kModelFormatVersion;
}

}  // namespace kiln::py
