#pragma once
// The compute time of one GEMM by its shape, C(m×n) = A(m×k)·B(k×n), on a GPU of `sm_count` SMs: a
// closed form (three tile candidates, no search), cheap enough for the analytic path.
//
// The kernel covers C with output tiles; every SM computes one tile at a time and a tile takes
// (k_piece + k_overhead) multiply-accumulate steps of its width. For a tile of tm×tn (of in-tile
// efficiency e_t relative to the largest tile):
//   tiles   = g·⌈m/tm⌉·⌈n/tn⌉       (tile quantisation: partial tiles cost full; g groups of a grouped GEMM,
//                                    e.g. the experts of an MoE layer, share one launch)
//   split   = tiles < SMs ? clamp(⌊SMs/tiles⌋, 1, ⌊k/split_k_min⌋) : 1   (split-K fills idle SMs)
//   x       = tiles·split / SMs
//   waves   = x + q·(⌈x⌉ − x)       (wave quantisation; q = matmul_wave_quantisation, < 1 where persistent
//                                    stream-K schedulers spread a partial last wave)
//   t_tile  = waves · 2·tm·tn·(k/split + k_overhead) / (P_sm · f · e_t)
//             + [split > 1] · 2·4·split·g·m·n / W               (fp32 partial sums written and reduced)
// with P_sm = dense peak / SMs at the precision, f = matmul_peak_fraction (the largest tile's in-tile
// efficiency; fp8_matmul_peak_fraction for fp8 GEMMs), W = HBM bandwidth × memory_bandwidth_fraction. The
// kernel takes the cheapest of the candidate tiles {tm×tn, tm×tn/2, tm/2×tn/2} (cuBLAS's heuristics choose
// among such kernels); the fixed launch cost and the memory roof are added by kernel_time. Calibrated per GPU
// against cuBLAS sweeps (scenarios/validation/kernels/gemm-*.csv).
#include "topologies/hardware.hpp"

namespace trainsim::model {

/// Seconds of tensor-core work of `groups` m×n×k GEMMs in one launch (formula above) at dense peak
/// `peak_flops`, with in-tile efficiency f (matmul_peak_fraction_at); requires gpu.sm_count > 0 and
/// positive m, n, k, groups.
[[nodiscard]] double gemm_compute_time(double m, double n, double k, double groups, double peak_flops,
                                       double f, const topo::GpuSpec& gpu);

}  // namespace trainsim::model
