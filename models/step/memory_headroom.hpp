#pragma once
// The memory headroom a layout must leave free on each GPU to run as a real job, beyond what
// estimate_memory counts (models/step/memory.hpp): the default of `budget.memory_headroom` for `search`,
// whose first answer is the one a user launches. Each part is a published measurement with its source:
//
// - CUDA context: about 300 MB with CUDA >= 11.7's lazy module loading, over 1000 MB before it
//   (pytorch/pytorch#107667, ptrblck, 2023-08-28). Inside estimate_memory's runtime reserve already.
// - NCCL buffers: 544 MB per communicator of 2 GPUs and 688 MB per communicator of more, measured with
//   PyTorch on 4x A100 with NVLink (NVIDIA/nccl#964, 2023-08-16); memory grows with each communicator
//   (NVIDIA/nccl#986, sjeaugey). The runtime reserve (1 GB) holds the context and one communicator; a
//   layout over tensor, pipeline and data parallelism opens three, so two more are headroom.
// - The caching allocator's fragmentation: GMLake (Guo et al., ASPLOS 2024, arXiv:2401.08156) measured the
//   stock PyTorch allocator fragmenting 15 % of the memory on average (up to 33 %) over eight LLMs trained
//   on A100 80 GB with recompute, ZeRO and offloading, the fragmentation its stitching removed; as a
//   fraction of HBM. Every framework preset runs PyTorch's caching allocator (models/spec/framework.hpp),
//   so the default is the same for each.
#include <optional>
#include <string>
#include <vector>

namespace trainsim::model {

struct HeadroomPart {
  std::string name;
  double bytes = 0;  ///< what this part adds to the headroom (0: already inside estimate_memory)
  std::string formula;
  std::string source;
};

struct MemoryHeadroom {
  std::vector<HeadroomPart> parts;
  double bytes = 0;     ///< the sum of the parts: bytes of HBM that must stay free
  double fraction = 0;  ///< bytes / HBM
};

/// The default headroom on a GPU with `hbm_bytes` of memory (see above).
[[nodiscard]] MemoryHeadroom default_memory_headroom(double hbm_bytes);
/// The fraction of HBM a layout must leave free: the scenario's (`given`, BudgetSpec::headroom_fraction) or,
/// when it gives none, the default above.
[[nodiscard]] double headroom_fraction_or_default(std::optional<double> given, double hbm_bytes);

}  // namespace trainsim::model
