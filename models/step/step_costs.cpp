#include "models/step/step_costs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "models/step/activation_offload.hpp"
#include "models/step/communicators.hpp"
#include "models/step/host_issue.hpp"
#include "models/step/kept_units.hpp"
#include "models/step/memory.hpp"
#include "models/step/merged_passes.hpp"
#include "models/step/pipeline_schedule.hpp"
#include "models/step/shared_links.hpp"
#include "models/step/unit_pricing.hpp"
#include "models/workload/activation_memory.hpp"
#include "models/workload/distributed_update.hpp"
#include "models/workload/kernel_time.hpp"
#include "models/workload/layer_ops.hpp"
#include "models/workload/optimizer.hpp"
#include "models/workload/rank_tensors.hpp"
#include "models/workload/shard.hpp"
#include "sim/error.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::model {

namespace {

// Bucket counts above this are merged: per-bucket latency is then < 1% of a bucket and the event graph
// stays small. Megatron's own default (40 MB) gives ~70 buckets per stage for GPT-3 on 128-way model
// parallelism.
constexpr int kMaxBuckets = 128;

// Prices one step's pieces (step_costs): the units of every virtual stage, ZeRO-3's per-unit collectives,
// the pipeline sends, and each pipeline rank's data-parallel collectives and optimizer update. One object
// per call; price() fills and returns the costs.
class StepPricer {
 public:
  StepPricer(const StepInput& in, const StepPlan& plan, FabricPricing fabric)
      : in_(in),
        plan_(plan),
        pl_(in.plan),
        fw_(in.plan.framework),
        comms_(communicators(in.plan, in.cluster)),
        shard_(shard_of(in.plan, in.training)),
        generic_(!in.model.generic_layers.empty()) {
    // The data-parallel collectives and the pipeline sends are priced on the uncontended fabric: routed,
    // their flows meet the fabric's shared links in the simulation; collapsed, the busiest link under
    // every sibling group slows their bandwidth terms (shared_links.hpp). (A copy only across nodes.)
    if (in.cluster.nodes > 1 && fabric != FabricPricing::closed_form)
      open_cluster_ = topo::uncontended_fabric(in.cluster);
    out_.fabric = fabric;
    const OptimizerSpec& opt = in.training.optimizer;
    grad_elem_ = topo::bytes_per_element(gradient_precision(opt, in.training.precision));
    reduce_elem_ = fw_.grad_reduce_dtype ? topo::bytes_per_element(*fw_.grad_reduce_dtype) : grad_elem_;
    weight_elem_ = topo::bytes_per_element(weight_storage_precision(in.training.precision));
  }

  StepCosts price() {
    price_units();
    if (out_.gathers_weights) price_zero3();
    for (std::size_t vs = 0; vs < out_.chunk_units.size(); ++vs) {
      out_.passes[vs] = pass_cost(out_.units, out_.chunk_units[vs]);
    }
    price_pipeline_sends();
    price_stages();
    return std::move(out_);
  }

 private:
  [[nodiscard]] const topo::ClusterSpec* routed() const {
    return out_.fabric == FabricPricing::routed && open_cluster_ ? &*open_cluster_ : nullptr;
  }

  // A data-parallel collective or a pipeline send over `group`, one of `traffic`'s concurrent groups.
  // Routed: on the uncontended fabric. Shared links: the same, its bandwidth term times the fabric's
  // slowdown under every sibling group at once; the closed form's own leaf shares where the cluster is too
  // large to route, and with closed_form pricing.
  [[nodiscard]] topo::CollectiveEstimate transfer(topo::CollectiveOp op, double bytes,
                                                  const topo::CommGroup& group, FabricTraffic traffic) const {
    if (!group.crosses_nodes() || !open_cluster_)
      return topo::estimate_collective(op, bytes, group, in_.cluster);
    if (routed() != nullptr) return topo::estimate_collective(op, bytes, group, *open_cluster_);
    return shared_links_estimate(pl_, in_.cluster, *open_cluster_, traffic, op, bytes, group);
  }
  [[nodiscard]] int virtual_stage_count() const { return plan_.pp * plan_.virtual_stages; }

  UnitCost unit(std::string name, const LayerOps& ops) const {
    return price_unit(std::move(name), ops, in_, comms_, routed(),
                      out_.fabric == FabricPricing::shared_links);
  }

  // Whose gradients and weights a data-parallel collective carries: the dense layers', over comms_.grad,
  // shard and replica, priced by transfer(); or the experts', over the expert-data-parallel group
  // (communicators.hpp: expert_grad, expert_shard, then replica). Collapsed, an expert collective is priced
  // by the closed form on the cluster's own leaf shares (the shared-links slowdown lists the dense groups'
  // siblings). Routed, both are priced on the uncontended fabric and listed as flows over their own groups
  // (step_network.hpp's data_parallel_groups), so the full cluster reduces the experts' share of a bucket
  // over the expert-data-parallel group as the collapsed step prices it.
  enum class Owner : std::uint8_t { dense, expert };

  [[nodiscard]] static DataGroup data_group(Owner owner, DataGroup over) {
    if (owner == Owner::dense || over == DataGroup::replicas) return over;
    return over == DataGroup::shard ? DataGroup::expert_shard : DataGroup::expert_gradient;
  }

  [[nodiscard]] const topo::CommGroup& group_of(DataGroup over) const {
    switch (over) {
      case DataGroup::gradient:
        return comms_.grad;
      case DataGroup::shard:
        return comms_.shard;
      case DataGroup::replicas:
        return comms_.replica;
      case DataGroup::expert_gradient:
        return comms_.expert_grad;
      case DataGroup::expert_shard:
        return comms_.expert_shard;
    }
    return comms_.grad;
  }
  [[nodiscard]] const topo::CommGroup& group_of(Owner owner, DataGroup over) const {
    return group_of(data_group(owner, over));
  }

  // Routed, every data-parallel collective is listed as its algorithm's flows (RoutedCollective), over
  // `over`'s groups.
  void add_flows(RoutedCollectives& list, topo::CollectiveOp op, double bytes,
                 const topo::CollectiveEstimate& e, DataGroup over) const {
    if (routed() != nullptr && group_of(over).size > 1 && bytes > 0)
      list.push_back(RoutedCollective{op, bytes, e.algo, e.protocol, over});
  }

  // A data-parallel collective of `owner`'s over `over`; its flows appended to `list` (routed).
  topo::CollectiveEstimate data_parallel(Owner owner, topo::CollectiveOp op, double bytes, DataGroup over,
                                         RoutedCollectives& list) const {
    const DataGroup ranks = data_group(owner, over);
    const topo::CommGroup& group = group_of(ranks);
    if (owner == Owner::expert) {
      if (!(bytes > 0) || group.size <= 1) return {};
      if (routed() == nullptr) return topo::estimate_collective(op, bytes, group, in_.cluster);
    }
    const FabricTraffic traffic = over == DataGroup::replicas ? FabricTraffic::replicas
                                  : over == DataGroup::shard  ? FabricTraffic::shard
                                                              : FabricTraffic::gradient;
    const auto e = transfer(op, bytes, group, traffic);
    add_flows(list, op, bytes, e, ranks);
    return e;
  }

  // `owner`'s gradients reduced over its sharding group, then (HSDP) the shard all-reduced over its
  // replicas; a dense reduction's flows appended to `list` (routed).
  topo::CollectiveEstimate reduce_gradients(Owner owner, double bytes, RoutedCollectives& list) const {
    auto e = data_parallel(owner, topo::CollectiveOp::reduce_scatter, bytes, DataGroup::shard, list);
    if (comms_.replica.size > 1) {
      const double shard_bytes = bytes / static_cast<double>(group_of(owner, DataGroup::shard).size);
      const auto r =
          data_parallel(owner, topo::CollectiveOp::all_reduce, shard_bytes, DataGroup::replicas, list);
      e.time_s += r.time_s;
      e.latency_s += r.latency_s;
    }
    return e;
  }

  void price_units() {
    const auto nvs = static_cast<std::size_t>(virtual_stage_count());
    out_.passes.assign(nvs, PassCost{});
    out_.chunk_units.assign(nvs, {});
    if (generic_) {
      price_generic_units();
    } else {
      price_transformer_units();
    }
    out_.gathers_weights = pl_.gathers_weights();
    out_.weight_pass = pl_.schedule == Schedule::zero_bubble_h1 || is_v_shape(pl_.schedule);
    if (!shards_weights(pl_.zero) && pl_.overlap_grad_reduce && comms_.grad.size > 1)
      out_.bucket_overlap_slowdown = in_.cluster.node.gpu.efficiency.overlap_compute_slowdown;
  }

  void price_generic_units() {
    for (int vs = 0; vs < virtual_stage_count(); ++vs) {
      const int first = plan_.first_layer_of(vs);
      for (int l = first; l < first + plan_.chunk_layers[static_cast<std::size_t>(vs)]; ++l) {
        const GenericLayer& layer = in_.model.generic_layers[static_cast<std::size_t>(l)];
        out_.chunk_units[static_cast<std::size_t>(vs)].push_back(
            UnitRun{static_cast<int>(out_.units.size()), 1, l});
        out_.units.push_back(unit(layer.name, generic_layer_ops(layer, shard_)));
      }
    }
  }

  // The unit that prices transformer layer `layer`, priced the first time its kind is met (a lookup:
  // every layer of every virtual stage asks).
  int layer_unit(int layer) {
    const bool dense = in_.model.is_dense_layer(layer);
    const bool windowed = in_.model.is_windowed(layer);
    const UnitSlot slot = layer_slot(dense, windowed);
    int& unit = unit_of_kind_[static_cast<std::size_t>(slot)];
    if (unit < 0) unit = new_layer_unit(slot, dense, windowed);
    return unit;
  }

  // A transformer layer's unit of a kind not met before; returns its index.
  int new_layer_unit(UnitSlot slot, bool dense, bool windowed) {
    const auto index = static_cast<int>(out_.units.size());
    out_.units.push_back(transformer_unit(slot, [&] {
      const TransformerSpec spec =
          (dense ? in_.model.as_dense_layer() : in_.model).as_attention_layer(windowed);
      const std::string name = std::string(dense ? "dense_" : "") + (windowed ? "windowed_layer" : "layer");
      UnitCost u = unit(name, transformer_layer_ops(spec, shard_));
      if (shard_.offload_modules != 0) {
        add_offload_waits(
            u, offload_cost(layer_activation(spec, shard_).offloaded, in_.cluster.node.pcie_bytes_per_s,
                            u.total.forward(), u.total.backward()));
      }
      return u;
    }));
    return index;
  }

  // Transformer unit `slot`: priced by price(), or a copy of the one kept for a step priced alike
  // (kept_units.hpp; closed-form pricing only).
  template <class Price>
  UnitCost transformer_unit(UnitSlot slot, Price&& price) {
    if (kept_ == nullptr) return price();
    std::optional<UnitCost>& kept = (*kept_)[static_cast<std::size_t>(slot)];
    if (!kept) kept = price();
    return *kept;
  }

  // Transformer layers are identical but for a MoE model's dense layers and for their attention
  // (full, or a sliding window on some layers): price one layer of each kind, repeat it for each run of
  // consecutive layers of that kind in each virtual stage. Units 0 (the kind of the first MoE layer, or
  // of the first layer of a dense model), 1 the embedding, 2 the head, then the other kinds as they come.
  void price_transformer_units() {
    const TransformerSpec& model = in_.model;
    if (out_.fabric == FabricPricing::closed_form) kept_ = &kept_units(in_, comms_);
    layer_unit(static_cast<int>(std::min(model.first_moe_layer(), model.layers - 1)));
    out_.units.push_back(transformer_unit(UnitSlot::embedding,
                                          [&] { return unit("embedding", embedding_ops(model, shard_)); }));
    out_.units.push_back(
        transformer_unit(UnitSlot::head, [&] { return unit("head", head_ops(model, shard_)); }));
    // Multi-token prediction on the last virtual stage, after the head: per module its own ops, a layer
    // like the model's last, and the head again.
    const int mtp_unit = static_cast<int>(out_.units.size());
    if (model.mtp_layers > 0)
      out_.units.push_back(
          transformer_unit(UnitSlot::mtp, [&] { return unit("mtp", mtp_ops(model, shard_)); }));
    const int nvs = virtual_stage_count();
    for (int vs = 0; vs < nvs; ++vs) {
      auto& runs = out_.chunk_units[static_cast<std::size_t>(vs)];
      // Room for the embedding, a run of each layer kind and the head, allocated once.
      runs.reserve(static_cast<std::size_t>(3 + 3 * model.mtp_layers));
      if (vs == 0) runs.push_back(UnitRun{1, 1, -1});
      const int first = plan_.first_layer_of(vs);
      for (int l = first; l < first + plan_.chunk_layers[static_cast<std::size_t>(vs)]; ++l) {
        const int u = layer_unit(l);
        if (!runs.empty() && runs.back().unit == u) {
          ++runs.back().count;
        } else {
          runs.push_back(UnitRun{u, 1, l});
        }
      }
      if (vs == nvs - 1) {
        runs.push_back(UnitRun{2, 1, -1});
        for (std::int64_t d = 0; d < model.mtp_layers; ++d) {
          runs.push_back(UnitRun{mtp_unit, 1, -1});
          runs.push_back(UnitRun{layer_unit(static_cast<int>(model.layers) - 1), 1, -1});
          runs.push_back(UnitRun{2, 1, -1});
        }
      }
    }
  }

  // ZeRO-3: `n` collectives of `params` of `owner`'s parameters each on unit `u`: the gather of its
  // weights and the reduction of its gradients, each paying its full α-β time and the host's time to issue
  // it; routed, their flows as n times the bytes of one (the bandwidth terms of equal collectives add up).
  void price_zero3_collectives(UnitCost& u, double params, double n, Owner owner = Owner::dense) const {
    if (!(params > 0) || !(n > 0)) return;
    const double rank_host =
        fw_.collective_host_per_rank_s * static_cast<double>(group_of(owner, DataGroup::shard).size);
    const double staging_bytes = gradient_staging_bytes(fw_.gradient_staging, grad_elem_, reduce_elem_);
    RoutedCollectives gather_flows, reduce_flows;
    const auto gather = data_parallel(owner, topo::CollectiveOp::all_gather, params * weight_elem_,
                                      DataGroup::shard, gather_flows);
    const auto reduce = reduce_gradients(owner, params * reduce_elem_, reduce_flows);
    for (RoutedCollective& c : gather_flows) c.bytes *= n;
    for (RoutedCollective& c : reduce_flows) c.bytes *= n;
    u.gather_flows.insert(u.gather_flows.end(), gather_flows.begin(), gather_flows.end());
    u.reduce_flows.insert(u.reduce_flows.end(), reduce_flows.begin(), reduce_flows.end());
    const double gather_host = fw_.gather_host_s + rank_host;
    u.gather_s += n * (gather.time_s + gather_host);
    u.gather_latency_s += n * (gather.latency_s + gather_host);
    // The gradients' staging copies run on the reduce stream before each collective (not a flow).
    const double staging = staging_bytes > 0
                               ? kernel_time(KernelCost{OpKind::memory_bound, 0, params * staging_bytes},
                                             in_.cluster.node.gpu, in_.training.precision)
                               : 0.0;
    u.reduce_s += n * (reduce.time_s + rank_host + staging);
    u.reduce_latency_s += n * (reduce.latency_s + rank_host + staging);
  }

  // ZeRO-3: a unit of `params` of `owner`'s parameters in `collectives` collectives, or one per tensor
  // (framework.gather_per_tensor).
  void price_zero3_unit(UnitCost& u, double params, std::span<const TensorShape> tensors, int collectives,
                        Owner owner = Owner::dense) const {
    if (!fw_.gather_per_tensor || tensors.empty()) {
      price_zero3_collectives(u, params / collectives, collectives, owner);
      return;
    }
    for (const TensorShape& t : tensors) price_zero3_collectives(u, t.elements() / t.count, t.count, owner);
  }

  // ZeRO-3: a MoE layer's unit. With expert parallelism its routed experts are a sharding unit of their own,
  // gathered and reduced over the expert-data-parallel group, as torchtitan's apply_fsdp wraps them
  // (torchtitan/models/llama4/infra/parallelize.py: fully_shard(transformer_block.moe.experts) on edp_mesh,
  // ["dp_replicate", "efsdp"], when ep_degree > 1; the router and shared experts stay with the block on
  // dp_mesh); without, they are sharded with the rest of the layer.
  void price_zero3_moe_layer(UnitCost& u, const UnitParameters& up, int per_layer) const {
    if (pl_.ep <= 1 || !(up.layer_expert > 0)) {
      price_zero3_unit(u, up.layer, up.layer_tensors, per_layer);
      return;
    }
    const std::span<const TensorShape> tensors(up.layer_tensors);
    const std::size_t dense_tensors = tensors.size() - up.layer_expert_tensors;
    price_zero3_unit(u, up.layer - up.layer_expert, tensors.first(dense_tensors), per_layer);
    if (group_of(Owner::expert, DataGroup::shard).size > 1 || comms_.replica.size > 1)
      price_zero3_unit(u, up.layer_expert, tensors.subspan(dense_tensors), 1, Owner::expert);
  }

  // ZeRO-3 / FSDP: every unit gathers its own weights over the sharding group before it computes and
  // reduces its own gradients after its backward, `collectives` collectives per unit (or one per tensor).
  void price_zero3() {
    const UnitParameters up = unit_parameters(in_.model, pl_);
    const int per_layer = std::max(1, fw_.gathers_per_layer);
    out_.zero3_prefetch = prefetch_units(fw_, up.layer / per_layer);
    out_.synchronous_zero3 = fw_.synchronous_collectives;
    if (generic_) {
      for (const auto& runs : out_.chunk_units) {
        for (const UnitRun& r : runs) {
          price_zero3_collectives(
              out_.units[static_cast<std::size_t>(r.unit)],
              in_.model.generic_layers[static_cast<std::size_t>(r.first_layer)].params / pl_.tp, 1);
        }
      }
    } else {
      price_zero3_unit(out_.units[1], up.embedding, up.embedding_tensors, 1);
      price_zero3_unit(out_.units[2], up.head, up.head_tensors, 1);
      // Every layer kind gathers as much as a MoE layer (unit_parameters sizes one MoE layer; the dense
      // first layers are taken at its size, over the dense group, a window adds no weights).
      for (std::size_t slot = 0; slot < unit_of_kind_.size(); ++slot) {
        if (unit_of_kind_[slot] < 0) continue;  // no layer of this kind
        UnitCost& u = out_.units[static_cast<std::size_t>(unit_of_kind_[slot])];
        if (slot >= static_cast<std::size_t>(UnitSlot::dense_layer)) {
          price_zero3_unit(u, up.layer, up.layer_tensors, per_layer);
        } else {
          price_zero3_moe_layer(u, up, per_layer);
        }
      }
    }
    // A unit computes beside its neighbours' collectives: in the forward the gather of the unit ahead
    // (when gathers run ahead), in the backward that gather again (resharded weights) and the reduction
    // of the unit behind. Those are units like it, so their time is taken as its own.
    const bool ahead = out_.zero3_prefetch > 0;
    for (UnitCost& u : out_.units) {
      const double forward_beside = ahead ? u.gather_s : 0.0;
      const double backward_beside = (ahead && fw_.reshard_after_forward ? u.gather_s : 0.0) +
                                     (fw_.synchronous_collectives ? 0.0 : u.reduce_s);
      slow_unit_beside_collectives(u, forward_beside, backward_beside, in_.cluster.node.gpu, fw_);
    }
  }

  // Activations handed between stages: Megatron scatters them over the tp ranks (sequence parallel) so
  // each rank sends 1/tp.
  void price_pipeline_sends() {
    const int p = plan_.pp;
    const double tokens = shard_.tokens(in_.model.seq_len);
    const double width = generic_ ? 0.0 : static_cast<double>(in_.model.hidden);
    out_.p2p_bytes = p > 1 ? tokens * width * topo::bytes_per_element(in_.training.precision) /
                                 (pl_.sequence_parallel ? pl_.tp : 1)
                           : 0.0;
    if (p > 1) {
      const auto e =
          transfer(topo::CollectiveOp::send_recv, out_.p2p_bytes, comms_.p2p, FabricTraffic::pipeline_send);
      out_.p2p_s = e.time_s;
      out_.p2p_latency_s = e.latency_s;
    }
    out_.stage_node = comms_.stage_node;
    out_.dp_crosses_nodes = comms_.grad.crosses_nodes();
  }

  // Data parallelism and the optimizer, per pipeline rank (the layer split of the plan, not memory's own).
  void price_stages() {
    ParallelPlan split = pl_;
    split.stage_layers = plan_.chunk_layers;  // per virtual stage: the split exactly as planned
    out_.stages.assign(static_cast<std::size_t>(plan_.pp), StageCost{});
    check_layout_counts(in_.model, split);
    const std::vector<int> layers = stage_layer_counts(in_.model, split);  // once, not once per rank
    // ZeRO 0–2: a rank's cost depends on its parameter tensors alone, and most ranks hold the same ones
    // (the middle of the pipeline): each distinct list is priced once.
    std::vector<int> priced;  // ranks priced, each with tensors no rank before it holds
    for (int s = 0; s < plan_.pp; ++s) {
      StageCost& sc = out_.stages[static_cast<std::size_t>(s)];
      if (!shards_weights(pl_.zero)) {
        const auto same = std::find_if(priced.begin(), priced.end(), [&](int r) {
          return same_rank_tensors(in_.model, split, layers, r, s);
        });
        if (same != priced.end()) {
          sc = out_.stages[static_cast<std::size_t>(*same)];
          continue;
        }
        priced.push_back(s);
      }
      RankTensors held = rank_tensors(in_.model, split, s, layers);
      const double expert_params = elements(held.expert);
      const std::size_t expert_tensors = held.expert.size();
      std::vector<TensorShape> tensors = std::move(held.dense);
      tensors.insert(tensors.end(), held.expert.begin(), held.expert.end());
      for (const auto& t : tensors) sc.params += t.elements();
      sc.expert_params = expert_params;
      sc.grad_bytes = sc.params * grad_elem_;
      sc.weight_bytes = sc.params * weight_elem_;
      if (shards_weights(pl_.zero)) {
        price_zero3_stage(sc, s);
      } else {
        price_data_parallel(sc);
      }
      price_optimizer(sc, tensors, expert_tensors);
    }
  }

  // ZeRO 0–2: gradient buckets reduced (all-reduce, or reduce-scatter under ZeRO 1–2), and under ZeRO 1–2
  // the updated weights gathered after the update.
  void price_data_parallel(StageCost& sc) const {
    const double want = std::ceil(sc.grad_bytes / std::max(pl_.bucket_bytes, 1.0));
    sc.buckets = static_cast<int>(std::clamp(want, 1.0, static_cast<double>(kMaxBuckets)));
    // Each bucket carries its share of the dense gradients, reduced over the dense group, and of the
    // expert gradients, reduced over the expert-data-parallel group (Megatron-Core keeps them in buffers
    // of their own: DistributedDataParallel.__init__ gives expert buffers intra_expt_dp_group).
    const double dense_params = sc.params - sc.expert_params;
    const double bucket_bytes = dense_params * reduce_elem_ / sc.buckets;
    const double expert_bucket_bytes = sc.expert_params * reduce_elem_ / sc.buckets;
    topo::CollectiveEstimate bucket;
    topo::CollectiveEstimate expert_bucket;
    if (pl_.zero == ZeroStage::none) {
      bucket = data_parallel(Owner::dense, topo::CollectiveOp::all_reduce, bucket_bytes, DataGroup::gradient,
                             sc.bucket_flows);
      expert_bucket = data_parallel(Owner::expert, topo::CollectiveOp::all_reduce, expert_bucket_bytes,
                                    DataGroup::gradient, sc.bucket_flows);
    } else {
      bucket = reduce_gradients(Owner::dense, bucket_bytes, sc.bucket_flows);
      expert_bucket = reduce_gradients(Owner::expert, expert_bucket_bytes, sc.bucket_flows);
    }
    sc.bucket_s = bucket.time_s + expert_bucket.time_s;
    sc.bucket_latency_s = bucket.latency_s + expert_bucket.latency_s;
    sc.dp_bytes_per_step = (comms_.grad.size > 1 ? dense_params * reduce_elem_ : 0.0) +
                           (comms_.expert_grad.size > 1 ? sc.expert_params * reduce_elem_ : 0.0);
    if (shards_optimizer_states(pl_.zero)) {
      const double dense_weight_bytes = dense_params * weight_elem_;
      const double expert_weight_bytes = sc.expert_params * weight_elem_;
      auto gather = data_parallel(Owner::dense, topo::CollectiveOp::all_gather, dense_weight_bytes,
                                  DataGroup::shard, sc.param_gather_flows);
      const auto expert_gather = data_parallel(Owner::expert, topo::CollectiveOp::all_gather,
                                               expert_weight_bytes, DataGroup::shard, sc.param_gather_flows);
      gather.time_s += expert_gather.time_s;
      gather.latency_s += expert_gather.latency_s;
      sc.param_gather_s = gather.time_s;
      sc.param_gather_latency_s = gather.latency_s;
      sc.dp_bytes_per_step += (comms_.grad.size > 1 ? dense_weight_bytes : 0.0) +
                              (comms_.expert_grad.size > 1 ? expert_weight_bytes : 0.0);
    }
  }

  // ZeRO-3: pipeline rank s's units' collectives summed.
  void price_zero3_stage(StageCost& sc, int s) {
    sc.buckets = 0;
    sum_zero3_stage(out_, plan_, s);
    // Gathered before every forward and (resharded after it) every backward pass, gradients reduced
    // after every backward (no gradient accumulation in full precision).
    const double gathers = fw_.reshard_after_forward ? 2.0 : 1.0;
    const auto m = static_cast<double>(plan_.micro_batches);
    sc.dp_bytes_per_step =
        out_.gathers_weights ? m * (gathers * sc.weight_bytes + sc.params * reduce_elem_) : 0.0;
  }

  // The update kernels (memory-bound on HBM, ÷ the sharding degree under ZeRO ≥ 1, plus the optimizer's
  // own matmuls) and the gradient-norm all-reduces. The last `expert_tensors` of `tensors` are experts',
  // their update sharded over the expert-data-parallel group as memory shards their state.
  void price_optimizer(StageCost& sc, const std::vector<TensorShape>& tensors,
                       std::size_t expert_tensors) const {
    const OptimizerSpec& opt = in_.training.optimizer;
    const auto& gpu = in_.cluster.node.gpu;
    const OptimizerCost oc = optimizer_cost(opt, in_.training.precision, tensors);
    const std::span<const TensorShape> experts(tensors.end() - static_cast<std::ptrdiff_t>(expert_tensors),
                                               tensors.end());
    const OptimizerCost expert_oc = optimizer_cost(opt, in_.training.precision, experts);
    // = dp_shard·cp·ep and the expert group's sharding part, as memory shards
    const bool sharded = shards_optimizer_states(pl_.zero);
    const double opt_shard = sharded ? static_cast<double>(comms_.shard.size) : 1.0;
    const double expert_shard = sharded ? static_cast<double>(comms_.expert_shard.size) : 1.0;
    const double flops = (oc.elementwise_flops - expert_oc.elementwise_flops) / opt_shard +
                         expert_oc.elementwise_flops / expert_shard;
    const double moved =
        (oc.bytes_moved - expert_oc.bytes_moved) / opt_shard + expert_oc.bytes_moved / expert_shard;
    sc.optimizer_s = per_tensor_update_s(
        tensors, kernel_time(KernelCost{OpKind::memory_bound, flops, moved, 0, 0}, gpu, Precision::fp32),
        fw_);
    // A whole-matrix update: the dense matrices' owners spread over the sharding group, the experts' over
    // the expert group's sharding part, where the distributed optimizer holds their shards
    // (communicators.hpp: Megatron-Core's expert buffers on the expert-data-parallel group), so an expert
    // matrix is gathered from, and its update scattered to, that group. Each rank owns pieces of both: the
    // busiest is taken to run the two assignments' busiest owners' matmuls (an upper bound, reached when one
    // rank is both).
    const std::span<const TensorShape> dense =
        std::span<const TensorShape>(tensors).first(tensors.size() - experts.size());
    for (const Owner owner : {Owner::dense, Owner::expert}) {
      const MatrixUpdateWork whole =
          matrix_update_work(opt, in_.training.precision, owner == Owner::dense ? dense : experts, sharded,
                             group_of(owner, DataGroup::shard).size);
      if (whole.matmul_flops > 0)
        sc.optimizer_s +=
            kernel_time(KernelCost{OpKind::matmul, whole.matmul_flops, 0, 0, 0}, gpu, whole.precision);
      for (const UpdateCollective& c : whole.collectives) {
        const auto e = data_parallel(owner, c.op, c.bytes, DataGroup::shard, sc.optimizer_comm_flows);
        sc.optimizer_comm_s += e.time_s;
        sc.optimizer_comm_latency_s += e.latency_s;
      }
    }
    if (opt.grad_clipping || oc.reduction_values > 0) {
      // Local partial norms, then one small fp32 all-reduce over each axis the gradients are spread on.
      const double bytes = 4.0 * std::max(1.0, oc.reduction_values / opt_shard);
      sc.grad_norm_s = grad_norm_time(bytes);
    }
  }

  // The gradient norm's all-reduces of `bytes` over tp, pp and the gradient group, one after another; the
  // last rank's kept for the next, which mostly reduces as many (a ZeRO-3 stage's).
  double grad_norm_time(double bytes) const {
    if (grad_norm_ && grad_norm_->first == bytes) return grad_norm_->second;
    double seconds = 0;
    for (const topo::CommGroup* grp : {&comms_.tp, &comms_.pp, &comms_.grad})
      seconds += topo::collective_time(topo::CollectiveOp::all_reduce, bytes, *grp, in_.cluster);
    grad_norm_.emplace(bytes, seconds);
    return seconds;
  }

  const StepInput& in_;
  const StepPlan& plan_;
  const ParallelPlan& pl_;
  const Framework& fw_;
  const Communicators comms_;
  const Shard shard_;
  const bool generic_;
  std::optional<topo::ClusterSpec> open_cluster_;             // the uncontended fabric, across nodes
  double grad_elem_ = 0, reduce_elem_ = 0, weight_elem_ = 0;  // bytes per element
  std::array<int, 4> unit_of_kind_{-1, -1, -1, -1};           // by layer_slot: its unit, -1 before it is met
  mutable std::optional<std::pair<double, double>> grad_norm_;  // the last grad_norm_time: bytes, seconds
  KeptUnitCosts* kept_ = nullptr;  // closed-form pricing: the units kept for steps priced alike
  StepCosts out_;
};

}  // namespace

StepCosts step_costs(const StepInput& in, const StepPlan& plan, FabricPricing fabric) {
  TRAINSIM_CHECK(plan.feasible, "step_costs needs a feasible plan");
  return StepPricer(in, plan, fabric).price();
}

void sum_zero3_stage(StepCosts& costs, const StepPlan& plan, int stage) {
  StageCost& sc = costs.stages[static_cast<std::size_t>(stage)];
  sc.zero3_gather_s = 0;
  sc.zero3_reduce_s = 0;
  for (int c = 0; c < plan.virtual_stages; ++c) {
    for (const UnitRun& r : costs.chunk_units[plan.virtual_stage_index(c, stage)]) {
      const UnitCost& u = costs.units[static_cast<std::size_t>(r.unit)];
      sc.zero3_gather_s += r.count * u.gather_s;
      sc.zero3_reduce_s += r.count * u.reduce_s;
    }
  }
}

namespace {

// The kernels of virtual stage vs's gradient-producing pass: its backward, or under ZB-H1 its W pass.
double grads_pass_kernels(const StepCosts& costs, int vs) {
  const PassCost& pc = costs.passes[static_cast<std::size_t>(vs)];
  return costs.weight_pass ? pc.weight_compute : pc.backward_compute;
}

}  // namespace

double last_grads_slowdown(const StepCosts& costs, const StepPlan& plan, int vs) {
  if (costs.bucket_overlap_slowdown <= 0) return 1.0;
  const int s = plan.rank_of(vs);
  const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
  const double stage_layers = std::max(1, plan.stage_layers[static_cast<std::size_t>(s)]);
  const double buckets_s =
      sc.bucket_s * sc.buckets * plan.chunk_layers[static_cast<std::size_t>(vs)] / stage_layers;
  return beside_collectives_factor(costs.bucket_overlap_slowdown, buckets_s, grads_pass_kernels(costs, vs));
}

double last_grads_extra(const StepCosts& costs, const StepPlan& plan, int vs) {
  return (last_grads_slowdown(costs, plan, vs) - 1.0) * grads_pass_kernels(costs, vs);
}

TimeBreakdown stage_work(const StepCosts& costs, const StepPlan& plan, int stage) {
  TimeBreakdown tb;
  const auto m = static_cast<double>(plan.micro_batches);
  std::shared_ptr<const PipelineOrder> order;  // fetched when a pass run alone adds time
  for (int c = 0; c < plan.virtual_stages; ++c) {
    const std::size_t vs = plan.virtual_stage_index(c, stage);
    const PassCost& pc = costs.passes[vs];
    tb.compute +=
        m * (pc.forward_compute + pc.backward_compute) + last_grads_extra(costs, plan, static_cast<int>(vs));
    const double ep = pc.forward_ep_comm + pc.backward_ep_comm;
    tb.exposed_tp_comm += m * (pc.forward_comm + pc.backward_comm - ep);
    tb.exposed_ep_comm += m * ep;
    // framework.ep_comm_overlap: the passes run alone expose their all-to-alls (PassCost::forward_alone).
    if (pc.forward_alone > 0 || pc.backward_alone > 0) {
      if (!order) {
        order = shared_pipeline_schedule(plan.schedule, plan.pp, static_cast<int>(plan.micro_batches),
                                         plan.virtual_stages);
      }
      tb.exposed_ep_comm += alone_passes(*order, stage, c, PassKind::forward) * pc.forward_alone +
                            alone_passes(*order, stage, c, PassKind::backward) * pc.backward_alone;
    }
  }
  const StageCost& sc = costs.stages[static_cast<std::size_t>(stage)];
  tb.optimizer = sc.optimizer_s + sc.optimizer_comm_s + sc.grad_norm_s;
  return tb;
}

std::vector<TimeBreakdown> stage_works(const StepCosts& costs, const StepPlan& plan) {
  std::vector<TimeBreakdown> works;
  works.reserve(static_cast<std::size_t>(plan.pp));
  for (int s = 0; s < plan.pp; ++s) works.push_back(stage_work(costs, plan, s));
  return works;
}

}  // namespace trainsim::model
