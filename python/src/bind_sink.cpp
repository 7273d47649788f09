// Data sink: the batch queue and the C++ step loop (kiln::BatchQueue, kiln::graph::run_sink).
#include <Python.h>

#include <chrono>

#include <nanobind/ndarray.h>

#include <optional>

#include "bindings.h"
#include "kiln/sink.h"

namespace kiln::py {
namespace {

const char* status_name(graph::SinkResult::Status s) {
  switch (s) {
    case graph::SinkResult::Status::Done: return "done";
    case graph::SinkResult::Status::NeedsCompile: return "needs_compile";
    case graph::SinkResult::Status::Finished: return "finished";
    case graph::SinkResult::Status::Failed: return "failed";
    case graph::SinkResult::Status::Closed: return "closed";
    case graph::SinkResult::Status::Stopped: return "stopped";
  }
  return "?";
}

using HostArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

// The Kiln dtype of a NumPy element type, or nothing for one Kiln lacks (the caller then uses kiln.Tensor()).
std::optional<DType> kiln_dtype(nb::dlpack::dtype d) {
  using C = nb::dlpack::dtype_code;
  const int b = d.bits;
  if (d.lanes != 1) return std::nullopt;
  if (d.code == uint8_t(C::Bool) && b == 8) return DType::Bool;
  if (d.code == uint8_t(C::Float))
    return b == 16 ? std::optional(DType::Float16) : b == 32 ? std::optional(DType::Float32)
         : b == 64 ? std::optional(DType::Float64) : std::nullopt;
  if (d.code == uint8_t(C::Int))
    return b == 8 ? std::optional(DType::Int8) : b == 16 ? std::optional(DType::Int16)
         : b == 32 ? std::optional(DType::Int32) : b == 64 ? std::optional(DType::Int64) : std::nullopt;
  if (d.code == uint8_t(C::UInt))
    return b == 8 ? std::optional(DType::UInt8) : b == 16 ? std::optional(DType::UInt16)
         : b == 32 ? std::optional(DType::UInt32) : b == 64 ? std::optional(DType::UInt64) : std::nullopt;
  return std::nullopt;
}

}  // namespace

void bind_sink(nb::module_& m) {
  nb::class_<BatchQueue>(m, "BatchQueue",
                         "Bounded thread-safe FIFO of batches (lists of Tensors); see include/kiln/batch_queue.h.")
      .def(nb::init<size_t, size_t>(), nb::arg("capacity"), nb::arg("max_bytes") = 0)
      // Blocking calls run without the GIL, so that the other side (and every other Python thread) can run.
      .def("push", [](BatchQueue& q, std::vector<Tensor> batch) {
        nb::gil_scoped_release release;
        return q.push(std::move(batch));
      }, nb::arg("batch"), "Appends a batch, blocking while full; False when the queue is closed or ended.")
      .def("pop", [](BatchQueue& q, double timeout) -> nb::object {
        BatchQueue::Batch out;
        BatchQueue::PopStatus st;
        {
          nb::gil_scoped_release release;
          st = timeout < 0 ? q.pop(out) : q.pop_for(out, std::chrono::milliseconds(int64_t(timeout * 1000)));
        }
        if (st == BatchQueue::PopStatus::Ok) return nb::cast(out);
        const char* names[] = {"ok", "finished", "failed", "closed", "timeout"};
        return nb::str(names[int(st)]);
      }, nb::arg("timeout") = -1.0,
         "The oldest batch (a list), or 'finished' / 'failed' / 'closed' / 'timeout' (timeout in seconds; < 0: "
         "wait as long as needed).")
      .def("finish", &BatchQueue::finish, "Ends the stream normally.")
      .def("fail", &BatchQueue::fail, nb::arg("message"), "Ends the stream with an error.")
      .def("close", [](BatchQueue& q) {
        nb::gil_scoped_release release;  // dropping the queued batches frees tensors only
        q.close();
      }, "Drops the queued batches and wakes every waiting thread; later pushes return False.")
      .def_prop_ro("size", &BatchQueue::size)
      .def_prop_ro("bytes", &BatchQueue::bytes)
      .def_prop_ro("capacity", &BatchQueue::capacity)
      .def_prop_ro("max_bytes", &BatchQueue::max_bytes)
      .def_prop_ro("closed", &BatchQueue::closed)
      .def_prop_ro("error", &BatchQueue::error);

  m.def("_tensors_from_arrays", [](nb::handle row) -> nb::object {
    // The producer's fast path: a batch's column values as new Tensors (copies: the dataset may reuse its arrays),
    // converted here instead of through kiln.Tensor's Python converter. Handles Tensors (kept) and C-contiguous
    // NumPy arrays of a Kiln dtype in native byte order; returns None when an element is anything else (the caller
    // converts the row with kiln.Tensor, which handles every case and raises its errors).
    std::vector<Tensor> out;
    for (nb::handle v : row) {
      if (nb::isinstance<Tensor>(v)) {
        out.push_back(nb::cast<Tensor>(v));
        continue;
      }
      HostArray a;
      if (!nb::try_cast<HostArray>(v, a, false)) return nb::none();
      std::optional<DType> dt = kiln_dtype(a.dtype());
      if (!dt) return nb::none();
      Shape shape(a.ndim());
      for (size_t i = 0; i < a.ndim(); ++i) shape[i] = int64_t(a.shape(i));
      out.push_back(Tensor::from_data(a.data(), shape, *dt));
    }
    return nb::cast(out);
  }, nb::arg("row"), "Tensors (copies) of a row of NumPy arrays / Tensors, or None when one needs kiln.Tensor().");

  m.def("run_sink", [](const std::vector<graph::Executable*>& exes, BatchQueue& queue, int64_t steps,
                       bool check_signals) {
    // The loop runs without the GIL. When asked (the caller is Python's main thread), it takes the GIL back about
    // every 20 ms to run Python's signal handlers: Ctrl-C (KeyboardInterrupt) stops it between two steps.
    using clock = std::chrono::steady_clock;
    bool raised = false;
    auto next_check = clock::now() + std::chrono::milliseconds(20);
    std::function<bool()> stop;
    if (check_signals) {
      stop = [&]() {
        auto now = clock::now();
        if (now < next_check) return false;
        next_check = now + std::chrono::milliseconds(20);
        nb::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) raised = true;  // the exception stays set on this thread
        return raised;
      };
    }
    graph::SinkResult r;
    {
      nb::gil_scoped_release release;
      r = graph::run_sink(exes, queue, steps, stop, std::chrono::milliseconds(20));
    }
    if (raised) throw nb::python_error();
    return nb::make_tuple(status_name(r.status), r.steps, r.executable, nb::cast(r.outputs), nb::cast(r.pending));
  }, nb::arg("executables"), nb::arg("queue"), nb::arg("steps"), nb::arg("check_signals") = false,
     "Runs up to `steps` compiled steps on batches popped from `queue` (see include/kiln/sink.h). Returns (status, "
     "steps run, index of the executable of the last step or -1, its outputs, the pending batch): status is "
     "'done', 'needs_compile', 'finished', 'failed', 'closed' or 'stopped'. With check_signals, Python's signal "
     "handlers run about every 20 ms and their exception (KeyboardInterrupt) propagates.");
}

}  // namespace kiln::py
