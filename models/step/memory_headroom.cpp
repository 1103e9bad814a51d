#include "models/step/memory_headroom.hpp"

#include <fmt/format.h>

namespace trainsim::model {

namespace {

constexpr double kCudaContextBytes = 300e6;       // pytorch/pytorch#107667
constexpr double kNcclCommunicatorBytes = 688e6;  // NVIDIA/nccl#964, a communicator of more than 2 GPUs
constexpr int kCommunicatorsBeyondRuntime = 2;    // tp, pp, dp: the runtime reserve holds one
constexpr double kFragmentationFraction = 0.15;   // GMLake, ASPLOS 2024: mean over eight LLMs

}  // namespace

MemoryHeadroom default_memory_headroom(double hbm_bytes) {
  MemoryHeadroom h;
  h.parts.push_back(
      {.name = "CUDA context",
       .bytes = 0,
       .formula = fmt::format("{:.0f} MB, inside the modelled 1 GB runtime reserve", kCudaContextBytes / 1e6),
       .source = "pytorch/pytorch#107667 (ptrblck, 2023-08-28: ~300 MB with CUDA >= 11.7 lazy "
                 "loading)"});
  h.parts.push_back(
      {.name = "NCCL buffers",
       .bytes = kCommunicatorsBeyondRuntime * kNcclCommunicatorBytes,
       .formula =
           fmt::format("{} communicators beyond the one in the runtime reserve (tp, pp, dp) x {:.0f} MB",
                       kCommunicatorsBeyondRuntime, kNcclCommunicatorBytes / 1e6),
       .source = "NVIDIA/nccl#964 (2023-08-16: 544 MB per 2-GPU and 688 MB per larger communicator, "
                 "4x A100 NVLink)"});
  h.parts.push_back(
      {.name = "allocator fragmentation",
       .bytes = kFragmentationFraction * hbm_bytes,
       .formula = fmt::format("{:.0f} % of HBM (PyTorch's caching allocator)", kFragmentationFraction * 100),
       .source = "GMLake, Guo et al., ASPLOS 2024 (arXiv:2401.08156): 15 % mean fragmentation removed over "
                 "eight LLMs on A100 80 GB"});
  for (const HeadroomPart& p : h.parts) h.bytes += p.bytes;
  h.fraction = hbm_bytes > 0 ? h.bytes / hbm_bytes : 0;
  return h;
}

double headroom_fraction_or_default(std::optional<double> given, double hbm_bytes) {
  return given ? *given : default_memory_headroom(hbm_bytes).fraction;
}

}  // namespace trainsim::model
