// kiln_run_model: loads a Kiln model file (written by kiln.export(..., file_format="KILN")) and runs it on inputs
// read from .npy or raw files, with the C++ library only (no Python). Prints the model's signature and each output;
// --save writes the outputs as .npy files.
//
//   kiln_run_model MODEL.kiln [INPUT ...] [--save PREFIX] [--max-values N] [--repeat N] [--graph]
//
// INPUT: one file per model input, in order: a .npy file (its dtype and shape must be the input's) or any other
// file, read as the input's raw bytes (little-endian, C order). With no INPUT the model's signature is printed and
// nothing is run. --save PREFIX writes output k to PREFIX<k>.npy. --max-values N prints at most N values per output
// (default 64; 0: all). --repeat N runs N times and prints the mean time per run. --graph prints the graph.
// Exit status: 0 success, 1 an error (bad model or input file: the message is printed on stderr), 2 bad usage.
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "kiln/deploy.h"
#include "npy_io.h"

namespace {

constexpr const char* kUsage =
    "usage: kiln_run_model MODEL.kiln [INPUT ...] [--save PREFIX] [--max-values N] [--repeat N] [--graph]\n"
    "  INPUT: a .npy file or a raw file (the input's bytes, little-endian, C order), one per model input\n";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string spec_str(const kiln::deploy::TensorSpec& s) {
  return s.name + ": " + kiln::dtype_name(s.dtype) + kiln::shape_str(s.shape);
}

void print_values(const kiln::Tensor& t, int64_t max_values) {
  int64_t n = t.numel();
  int64_t shown = max_values > 0 && max_values < n ? max_values : n;
  std::printf("  [");
  if (kiln::is_floating(t.dtype())) {
    kiln::Tensor d = kiln::Tensor::empty(t.shape(), kiln::DType::Float64);
    kiln::copy_into(t, d);
    const bool f64 = t.dtype() == kiln::DType::Float64;
    for (int64_t i = 0; i < shown; ++i) std::printf(i ? ", %.*g" : "%.*g", f64 ? 17 : 9, d.data<double>()[i]);
  } else if (t.dtype() == kiln::DType::UInt64) {
    for (int64_t i = 0; i < shown; ++i)
      std::printf(i ? ", %llu" : "%llu", static_cast<unsigned long long>(t.data<uint64_t>()[i]));
  } else {
    kiln::Tensor d = kiln::Tensor::empty(t.shape(), kiln::DType::Int64);
    kiln::copy_into(t, d);
    for (int64_t i = 0; i < shown; ++i)
      std::printf(i ? ", %lld" : "%lld", static_cast<long long>(d.data<int64_t>()[i]));
  }
  std::printf("%s]\n", shown < n ? ", ..." : "");
}

int64_t parse_count(const std::string& flag, const char* value) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(value, &end, 10);
  if (*value == '\0' || *end != '\0' || v < 0)
    throw std::invalid_argument(flag + " needs a count >= 0, got '" + value + "'");
  if (errno == ERANGE || v > (1LL << 40))  // strtoll saturates at LLONG_MAX on overflow
    throw std::invalid_argument(flag + " count is out of range (at most 2^40), got '" + value + "'");
  return v;
}

int run(int argc, char** argv) {
  std::vector<std::string> positional;
  std::string save_prefix;
  int64_t max_values = 64, repeat = 1;
  bool show_graph = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") { std::printf("%s", kUsage); return 0; }
    if (a == "--graph") { show_graph = true; continue; }
    if (a == "--save" || a == "--max-values" || a == "--repeat") {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      const char* v = argv[++i];
      if (a == "--save") save_prefix = v;
      else if (a == "--max-values") max_values = parse_count(a, v);
      else repeat = parse_count(a, v);
      continue;
    }
    if (a.size() > 1 && a[0] == '-' && a != "-") throw std::invalid_argument("unknown option " + a);
    positional.push_back(a);
  }
  if (positional.empty()) throw std::invalid_argument("no model file given");
  if (repeat < 1) throw std::invalid_argument("--repeat needs a count >= 1");

  kiln::deploy::Model model = kiln::deploy::Model::load(positional[0]);
  std::printf("model %s: %zu nodes, %zu weights\n", model.name().c_str(), model.num_nodes(),
              model.weight_names().size());
  for (auto& s : model.inputs()) std::printf("input  %s\n", spec_str(s).c_str());
  for (auto& s : model.outputs()) std::printf("output %s\n", spec_str(s).c_str());
  if (show_graph) std::printf("%s", model.graph_text().c_str());
  std::vector<std::string> files(positional.begin() + 1, positional.end());
  if (files.empty()) return 0;
  if (files.size() != model.inputs().size())
    throw std::runtime_error("the model takes " + std::to_string(model.inputs().size()) + " input(s), but " +
                             std::to_string(files.size()) + " input file(s) were given");

  std::vector<kiln::Tensor> inputs;
  for (size_t k = 0; k < files.size(); ++k) {
    const auto& spec = model.inputs()[k];
    kiln::Tensor x = ends_with(files[k], ".npy") ? kiln_example::read_npy(files[k])
                                                 : kiln_example::read_raw(files[k], spec.shape, spec.dtype);
    inputs.push_back(x);  // Model::run checks its shape and dtype against the model's input
  }
  std::vector<kiln::Tensor> outputs = model.run(inputs);
  if (repeat > 1) {
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t r = 0; r < repeat; ++r) outputs = model.run(inputs);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%lld runs: %.4f ms per run\n", static_cast<long long>(repeat), ms / double(repeat));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    std::printf("%s\n", spec_str(model.outputs()[k]).c_str());
    print_values(outputs[k], max_values);
    if (!save_prefix.empty()) kiln_example::write_npy(save_prefix + std::to_string(k) + ".npy", outputs[k]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "kiln_run_model: %s\n%s", e.what(), kUsage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_run_model: error: %s\n", e.what());
    return 1;
  }
}
