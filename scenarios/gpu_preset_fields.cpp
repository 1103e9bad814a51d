#include "scenarios/gpu_preset_fields.hpp"

#include <string_view>

#include "scenarios/quantity.hpp"

namespace trainsim::scenario {

namespace {

// How a key's text is read: a quantity with a unit, a bare number or count with bounds, a name, or text.
struct Field {
  GpuBlock block;
  std::string_view key;
  Dimension dim = Dimension::seconds;  // quantities only
  Bound bound = Bound::positive;       // quantities only
  double min = 0, max = 0;             // numbers and counts
  bool is_quantity = false;
};

Field quantity(GpuBlock b, std::string_view key, Dimension dim, Bound bound = Bound::positive) {
  return Field{.block = b, .key = key, .dim = dim, .bound = bound, .is_quantity = true};
}
Field number(GpuBlock b, std::string_view key, double min, double max) {
  return Field{.block = b, .key = key, .min = min, .max = max};
}

// The table. `visit(field, member)` is called for every key in order; Gpu is GpuSpec or const GpuSpec.
template <class Gpu, class Visit>
void for_each_field(Gpu& g, Visit&& visit) {
  using B = GpuBlock;
  using D = Dimension;
  constexpr Bound kAny = Bound::non_negative;
  visit(quantity(B::peak, "fp32", D::flops_per_s, kAny), g.peak.fp32);
  visit(quantity(B::peak, "tf32", D::flops_per_s, kAny), g.peak.tf32);
  visit(quantity(B::peak, "fp16", D::flops_per_s, kAny), g.peak.fp16);
  visit(quantity(B::peak, "bf16", D::flops_per_s, kAny), g.peak.bf16);
  visit(quantity(B::peak, "fp8", D::flops_per_s, kAny), g.peak.fp8);
  visit(quantity(B::peak, "int8", D::flops_per_s, kAny), g.peak.int8);
  visit(quantity(B::top, "hbm", D::bytes), g.hbm_bytes);
  visit(quantity(B::top, "hbm_bandwidth", D::bytes_per_s), g.hbm_bytes_per_s);
  visit(quantity(B::top, "nvlink", D::bytes_per_s, kAny), g.nvlink_bytes_per_s);
  visit(quantity(B::top, "tdp", D::watts), g.tdp_w);
  visit(quantity(B::top, "idle", D::watts, kAny), g.idle_w);
  visit(quantity(B::top, "power_limit", D::watts, kAny), g.power_limit_w);
  visit(number(B::top, "sms", 0, 100000), g.sm_count);
  visit(number(B::top, "variability", 0, 0.5), g.variability);
  visit(number(B::top, "efficiency_fit_gpus", 1, 1e7), g.efficiency_fit_gpus);
  visit(Field{.block = B::top, .key = "validation"}, g.validation);
  auto& e = g.efficiency;
  visit(number(B::efficiency, "matmul_peak_fraction", 1e-3, 1.0), e.matmul_peak_fraction);
  visit(number(B::efficiency, "matmul_half_flops", 0, 1e18), e.matmul_half_flops);
  visit(number(B::efficiency, "memory_bandwidth_fraction", 1e-3, 1.0), e.memory_bandwidth_fraction);
  visit(number(B::efficiency, "elementwise_bandwidth_fraction", 0, 1.0), e.elementwise_bandwidth_fraction);
  visit(quantity(B::efficiency, "kernel_overhead", D::seconds, kAny), e.kernel_overhead_s);
  visit(Field{.block = B::efficiency, .key = "attention_kernel"}, e.attention_kernel);
  visit(number(B::efficiency, "flash2_attention_fraction", 0, 1.0), e.flash2_attention_fraction);
  visit(number(B::efficiency, "flash3_attention_fraction", 0, 1.0), e.flash3_attention_fraction);
  visit(number(B::efficiency, "cudnn_attention_fraction", 0, 1.0), e.cudnn_attention_fraction);
  visit(number(B::efficiency, "flash_attention_half_flops", 0, 1e18), e.flash_attention_half_flops);
  visit(number(B::efficiency, "cudnn_attention_half_key_len", 0, 1e6), e.cudnn_attention_half_key_len);
  visit(number(B::efficiency, "cudnn_attention_backward_ratio", 0, 2.0), e.cudnn_attention_backward_ratio);
  // The GEMM shape model, the sustained clock and the overlap slow-down (models/workload/gemm_time.hpp,
  // kernel_time.hpp).
  visit(number(B::efficiency, "matmul_tile_m", 8, 1024), e.matmul_tile_m);
  visit(number(B::efficiency, "matmul_tile_n", 8, 1024), e.matmul_tile_n);
  visit(number(B::efficiency, "matmul_half_tile_efficiency", 1e-3, 1.0), e.matmul_half_tile_efficiency);
  visit(number(B::efficiency, "matmul_quarter_tile_efficiency", 1e-3, 1.0), e.matmul_quarter_tile_efficiency);
  visit(number(B::efficiency, "matmul_tile_k_overhead", 0, 1e6), e.matmul_tile_k_overhead);
  visit(number(B::efficiency, "matmul_split_k_min", 0, 1e9), e.matmul_split_k_min);
  visit(number(B::efficiency, "matmul_wave_quantisation", 0, 1.0), e.matmul_wave_quantisation);
  visit(number(B::efficiency, "fp8_matmul_peak_fraction", 0, 1.0), e.fp8_matmul_peak_fraction);
  visit(number(B::efficiency, "sustained_clock_fraction", 1e-2, 1.0), e.sustained_clock_fraction);
  visit(number(B::efficiency, "overlap_compute_slowdown", 0, 1.0), e.overlap_compute_slowdown);
  visit(quantity(B::efficiency, "sm_peer_copy_bandwidth", D::bytes_per_s, kAny), e.sm_peer_copy_bytes_per_s);
}

void read_field(MapReader& r, const Field& f, double& out) {
  if (f.is_quantity) {
    r.quantity(f.key, out, f.dim, f.bound);
  } else {
    r.number(f.key, out, f.min, f.max);
  }
}
void read_field(MapReader& r, const Field& f, int& out) {
  r.count(f.key, out, f.min, f.max);
}
void read_field(MapReader& r, const Field& f, topo::AttentionKernel& out) {
  r.choice(f.key, out, topo::kAttentionKernelNames);
}
void read_field(MapReader& r, const Field& f, std::string& out) {
  r.string(f.key, out);
}

std::string field_text(const Field& f, double value) {
  return f.is_quantity ? yaml_quote(format_quantity(value, f.dim)) : format_number(value);
}
std::string field_text(const Field& /*f*/, int value) {
  return std::to_string(value);
}
std::string field_text(const Field& /*f*/, topo::AttentionKernel value) {
  return std::string(topo::to_string(value));
}
std::string field_text(const Field& /*f*/, const std::string& value) {
  return yaml_quote(value);
}

}  // namespace

std::vector<std::string> gpu_block_keys(GpuBlock block) {
  std::vector<std::string> keys;
  const topo::GpuSpec probe;
  for_each_field(probe, [&](const Field& f, const auto& /*member*/) {
    if (f.block == block) keys.emplace_back(f.key);
  });
  return keys;
}

void read_gpu_block(MapReader& r, GpuBlock block, topo::GpuSpec& gpu) {
  for_each_field(gpu, [&](const Field& f, auto& member) {
    if (f.block == block) read_field(r, f, member);
  });
}

std::vector<GpuPresetEntry> gpu_preset_entries(const topo::GpuSpec& gpu) {
  std::vector<GpuPresetEntry> entries;
  for_each_field(gpu, [&](const Field& f, const auto& member) {
    entries.push_back({f.block, std::string(f.key), field_text(f, member)});
  });
  return entries;
}

std::string gpu_to_flow_yaml(const topo::GpuSpec& gpu) {
  std::string top, peak, efficiency;
  for (const GpuPresetEntry& e : gpu_preset_entries(gpu)) {
    std::string& block = e.block == GpuBlock::top ? top : e.block == GpuBlock::peak ? peak : efficiency;
    block += (block.empty() ? "" : ", ") + e.key + ": " + e.value;
  }
  return "{name: " + yaml_quote(gpu.name) + ", peak: {" + peak + "}, " + top + ", efficiency: {" +
         efficiency + "}}";
}

std::string gpu_to_block_yaml(const topo::GpuSpec& gpu, const std::vector<std::string>& notes) {
  std::string top, peak, efficiency;
  for (const GpuPresetEntry& e : gpu_preset_entries(gpu)) {
    if (e.block == GpuBlock::top) top += e.key + ": " + e.value + "\n";
    if (e.block == GpuBlock::peak) peak += "  " + e.key + ": " + e.value + "\n";
    if (e.block == GpuBlock::efficiency) efficiency += "  " + e.key + ": " + e.value + "\n";
  }
  std::string y;
  for (const std::string& n : notes) y += "# " + n + "\n";
  return y + "name: " + yaml_quote(gpu.name) + "\npeak:\n" + peak + top + "efficiency:\n" + efficiency;
}

}  // namespace trainsim::scenario
