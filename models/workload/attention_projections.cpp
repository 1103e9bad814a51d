#include "models/workload/attention_projections.hpp"

#include <algorithm>

namespace trainsim::model {

AttentionProjections attention_projections(const TransformerSpec& spec, int tp) {
  AttentionProjections p;
  const std::int64_t t = std::max(1, tp);
  const std::int64_t h = spec.hidden;
  const std::int64_t heads = spec.heads;
  const std::int64_t heads_local = heads / t;
  auto add = [&](Projection x) { p.list[static_cast<std::size_t>(p.count++)] = x; };
  auto column = [&](std::string_view name, std::int64_t in, std::int64_t per_head) {
    add(Projection{name, in, heads * per_head, in, heads_local * per_head, true, false, 0, 0, 0});
  };
  auto replicated = [&](std::string_view name, std::int64_t out, std::int64_t norm) {
    add(Projection{name, h, out, h, out, true, true, norm, 0, 0});
  };
  if (spec.is_mla()) {
    const std::int64_t qk = spec.qk_head_dim();
    if (spec.q_lora_rank > 0) {
      replicated("q_down", spec.q_lora_rank, spec.q_lora_rank);
      column("q_up", spec.q_lora_rank, qk);
    } else {
      column("q", h, qk);
    }
    replicated("kv_down", spec.kv_lora_rank + spec.qk_rope_head_dim, spec.kv_lora_rank);
    column("kv_up", spec.kv_lora_rank, spec.qk_nope_head_dim + spec.v_head_dim);
  } else {
    const std::int64_t d = spec.head_dim_or_default();
    // Key/value heads split by tp while there are enough, else each rank keeps a copy of one.
    const std::int64_t kv_local = std::max<std::int64_t>(spec.kv_heads_or_heads() / t, 1);
    const std::int64_t out = spec.query_width() + 2 * spec.kv_width();
    const std::int64_t local_out = heads_local * d + 2 * kv_local * d;
    add(Projection{"qkv", h, out, h, local_out, true, false, 0, spec.bias ? out : 0,
                   spec.bias ? local_out : 0});
  }
  if (spec.bias && spec.is_mla()) {
    for (int i = 0; i < p.count; ++i) {
      Projection& x = p.list[static_cast<std::size_t>(i)];
      x.bias = x.out;
      x.local_bias = x.local_out;
    }
  }
  const std::int64_t o = spec.attention_out_width();
  add(Projection{"out_proj", o, h, o / t, h, false, false, 0, spec.bias ? h : 0, spec.bias ? h : 0});
  return p;
}

}  // namespace trainsim::model
