#pragma once
// The parameter GEMMs of one attention block, listed once for every cost that needs their shapes
// (parameters, FLOPs, the layer's kernels, weights per rank, fp8 copies), so standard attention and
// multi-head latent attention (MLA) are priced alike.
//
// Standard (h hidden, a heads, d head width, kv key/value heads):
//   qkv       h → a·d + 2·kv·d   column-parallel: a/tp query heads and max(1, kv/tp) key/value heads a rank
//   out_proj  a·d → h            row-parallel
// MLA (DeepSeek-V2 Sec. 2.1; q_r = q_lora_rank, c = kv_lora_rank, n/r/v the nope/rope/value head widths):
//   q_down    h → q_r            replicated on every tp rank, an RMSNorm of q_r after it
//   q_up      q_r → a·(n + r)    column-parallel   (no q_lora_rank: one "q" projection h → a·(n + r))
//   kv_down   h → c + r          replicated, an RMSNorm of c after it (the r rope part is one key for all
//                                heads)
//   kv_up     c → a·(n + v)      column-parallel
//   out_proj  a·v → h            row-parallel
// Megatron-Core's MLA keeps the down-projections whole on every tensor-parallel rank (they are small) and
// splits the up-projections and the output projection by heads; that is the split here.
#include <array>
#include <cstdint>
#include <string_view>

#include "models/spec/transformer_spec.hpp"

namespace trainsim::model {

/// One projection: an (in × out) weight, on one tensor-parallel rank local_in × local_out (elements).
struct Projection {
  std::string_view name;
  std::int64_t in = 0, out = 0;              ///< the whole weight
  std::int64_t local_in = 0, local_out = 0;  ///< one tp rank's part (the whole when replicated)
  bool before_core = true;                   ///< runs before the attention core (false: out_proj)
  bool replicated = false;                   ///< every tp rank holds and computes all of it
  std::int64_t norm = 0;                     ///< width of the RMSNorm on its output (MLA latents), 0: none
  /// Bias elements when spec.bias (qkv: its outputs; out_proj: h, replicated), whole and on one rank.
  std::int64_t bias = 0, local_bias = 0;
};

/// The projections of one attention block in forward order, out_proj last.
struct AttentionProjections {
  std::array<Projection, 5> list{};
  int count = 0;

  [[nodiscard]] const Projection* begin() const { return list.data(); }
  [[nodiscard]] const Projection* end() const { return list.data() + count; }
};

/// The projections of spec's attention on one of `tp` ranks. Precondition: check_shard's divisibility
/// (tp divides heads).
[[nodiscard]] AttentionProjections attention_projections(const TransformerSpec& spec, int tp);

}  // namespace trainsim::model
