#include "models/step/memory_headroom.hpp"

#include <doctest/doctest.h>

using namespace trainsim::model;

TEST_CASE("the default headroom is two more NCCL communicators and 15 % of HBM, each part with a source") {
  const double hbm = 80.0 * 1024 * 1024 * 1024;  // H100 SXM, 80 GiB
  const MemoryHeadroom h = default_memory_headroom(hbm);
  // By hand: 2 x 688 MB (NVIDIA/nccl#964) + 0.15 x 85.899 GB (GMLake) = 1.376 + 12.885 = 14.261 GB.
  CHECK(h.bytes == doctest::Approx(2 * 688e6 + 0.15 * hbm));
  CHECK(h.bytes == doctest::Approx(14.261e9).epsilon(1e-4));
  CHECK(h.fraction == doctest::Approx(14.261e9 / 85.899e9).epsilon(1e-3));  // 16.6 %
  double sum = 0;
  for (const HeadroomPart& p : h.parts) {
    CAPTURE(p.name);
    CHECK_FALSE(p.source.empty());
    CHECK_FALSE(p.formula.empty());
    sum += p.bytes;
  }
  CHECK(sum == doctest::Approx(h.bytes));
  REQUIRE(h.parts.size() == 3);
  CHECK(h.parts[0].name == "CUDA context");
  CHECK(h.parts[0].bytes == 0);  // inside estimate_memory's runtime reserve already
  // Half the memory, half the fragmentation; the NCCL part does not scale.
  CHECK(default_memory_headroom(hbm / 2).bytes == doctest::Approx(2 * 688e6 + 0.15 * hbm / 2));
}
