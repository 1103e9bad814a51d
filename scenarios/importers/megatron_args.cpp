#include "scenarios/importers/megatron_args.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "models/spec/parallel_plan.hpp"
#include "scenarios/importers/import_comment.hpp"
#include "scenarios/importers/megatron_patterns.hpp"
#include "scenarios/importers/megatron_recipe.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/presets.hpp"
#include "sim/enum_names.hpp"
#include "sim/error.hpp"
#include "sim/utf8_text.hpp"

namespace trainsim::scenario {

namespace {

// Flags that take no value: present or absent.
const std::set<std::string, std::less<>> kSwitches = {"--swiglu",
                                                      "--untie-embeddings-and-output-weights",
                                                      "--disable-bias-linear",
                                                      "--group-query-attention",
                                                      "--use-flash-attn",
                                                      "--sequence-parallel",
                                                      "--recompute-activations",
                                                      "--use-distributed-optimizer",
                                                      "--overlap-grad-reduce",
                                                      "--overlap-param-gather",
                                                      "--tp-comm-overlap",
                                                      "--overlap-moe-expert-parallel-comm",
                                                      "--delay-wgrad-compute",
                                                      "--moe-router-fusion",
                                                      "--moe-router-force-load-balancing",
                                                      "--moe-pad-expert-input-to-capacity",
                                                      "--fine-grained-activation-offloading",
                                                      "--use-precision-aware-optimizer",
                                                      "--multi-latent-attention",
                                                      "--qk-layernorm",
                                                      "--account-for-embedding-in-pipeline-split",
                                                      "--account-for-loss-in-pipeline-split",
                                                      "--moe-paged-stash",
                                                      "--moe-enable-deepep",
                                                      "--use-transformer-engine-op-fuser",
                                                      "--external-cuda-graph",
                                                      "--enable-cuda-graph",
                                                      "--fp16",
                                                      "--bf16"};

// Flags read for a value.
const std::set<std::string, std::less<>> kValued = {"--num-layers",
                                                    "--hidden-size",
                                                    "--num-attention-heads",
                                                    "--num-query-groups",
                                                    "--kv-channels",
                                                    "--ffn-hidden-size",
                                                    "--seq-length",
                                                    "--normalization",
                                                    "--position-embedding-type",
                                                    "--vocab-size",
                                                    "--tokenizer-type",
                                                    "--make-vocab-size-divisible-by",
                                                    "--num-experts",
                                                    "--moe-router-topk",
                                                    "--moe-router-num-groups",
                                                    "--moe-router-group-topk",
                                                    "--moe-ffn-hidden-size",
                                                    "--moe-token-dispatcher-type",
                                                    "--moe-flex-dispatcher-backend",
                                                    "--moe-flex-dispatcher-num-sms",
                                                    "--moe-deepep-num-sms",
                                                    "--moe-hybridep-num-sms",
                                                    "--moe-expert-capacity-factor",
                                                    "--moe-layer-freq",
                                                    "--moe-shared-expert-intermediate-size",
                                                    "--q-lora-rank",
                                                    "--kv-lora-rank",
                                                    "--qk-head-dim",
                                                    "--qk-pos-emb-head-dim",
                                                    "--v-head-dim",
                                                    "--pipeline-model-parallel-layout",
                                                    "--cuda-graph-impl",
                                                    "--fp8-recipe",
                                                    "--main-grads-dtype",
                                                    "--main-params-dtype",
                                                    "--mtp-num-layers",
                                                    "--hidden-dropout",
                                                    "--attention-backend",
                                                    "--transformer-impl",
                                                    "--tensor-model-parallel-size",
                                                    "--pipeline-model-parallel-size",
                                                    "--context-parallel-size",
                                                    "--expert-model-parallel-size",
                                                    "--expert-tensor-parallel-size",
                                                    "--num-layers-per-virtual-pipeline-stage",
                                                    "--virtual-pipeline-model-parallel-size",
                                                    "--num-virtual-stages-per-pipeline-rank",
                                                    "--micro-batch-size",
                                                    "--global-batch-size",
                                                    "--recompute-granularity",
                                                    "--fp8-format",
                                                    "--train-iters",
                                                    "--train-samples",
                                                    "--optimizer",
                                                    "--exp-avg-dtype",
                                                    "--exp-avg-sq-dtype",
                                                    "--nnodes"};

// Flags read for a list: every word up to the next flag (argparse's nargs='+').
const std::set<std::string, std::less<>> kListed = {"--recompute-modules", "--offload-modules",
                                                    "--cuda-graph-scope", "--cuda-graph-modules"};

// Flags that decide the price but that this importer does not read, each with what to write instead.
// They are refused (a run priced without them would be another run) unless --lenient, which leaves them
// out and lists them as it lists unknown flags.
const std::map<std::string, std::string, std::less<>> kNotRead = {
    {"--offload-optimizer-states", "optimizer states offloaded to host memory are not modelled"},
    {"--experimental-attention-variant",
     "attention variants (DeepSeek-V4's, gated delta nets) are not modelled"},
    {"--enable-hyper-connections", "hyper-connections (several residual streams) are not modelled"}};

// Flags that change the run in a way trainsim does not price, read and named in the output's header (a
// comment) rather than refused: what they do is small beside the step or not modelled, and the recipes
// that set them are priced without it (scenarios/validation/moe-recipes.csv, `not_modelled`).
const std::map<std::string, std::string, std::less<>> kNotPriced = {
    {"--fp8-param-gather", "ZeRO's weight all-gather in fp8 (overlapped with the forward)"},
    {"--reuse-grad-buf-for-mxfp8-param-ag",
     "the gradient buffer reused for the MXFP8 weight gather (memory)"},
    {"--moe-expert-rank-capacity-factor", "the paged stash's buffer size (routing is as model.routing says)"},
    {"--moe-router-padding-for-quantization", "tokens per expert padded to the quantisation block"},
    {"--moe-router-padding-for-fp8", "tokens per expert padded to the fp8 GEMM's multiple"}};

// Flags Megatron-LM (pretrain_gpt.py's argparse) and its launchers (torchrun) take that decide nothing
// trainsim prices: learning rates and schedules, initialisation, data, checkpoints, logging, fusions that
// change no kernel count, rendezvous. They are left out and listed; any other flag is unknown (a misspelt
// one would otherwise price a different run) and refused unless --lenient.
const std::set<std::string, std::less<>> kPricedNothing = {
    // optimiser hyper-parameters and schedules
    "--lr", "--min-lr", "--lr-decay-style", "--lr-decay-iters", "--lr-decay-samples", "--lr-warmup-fraction",
    "--lr-warmup-iters", "--lr-warmup-samples", "--lr-warmup-init", "--weight-decay", "--start-weight-decay",
    "--end-weight-decay", "--weight-decay-incr-style", "--adam-beta1", "--adam-beta2", "--adam-eps",
    "--sgd-momentum", "--clip-grad", "--rampup-batch-size", "--loss-scale", "--initial-loss-scale",
    "--min-loss-scale", "--loss-scale-window", "--hysteresis", "--seed", "--init-method-std",
    "--init-method-xavier-uniform", "--attention-dropout", "--norm-epsilon", "--rotary-percent",
    "--rotary-base", "--rotary-seq-len-interpolation-factor", "--max-position-embeddings",
    "--apply-query-key-layer-scaling", "--attention-softmax-in-fp32", "--accumulate-allreduce-grads-in-fp32",
    "--moe-aux-loss-coeff", "--moe-z-loss-coeff", "--moe-router-load-balancing-type", "--use-mcore-models",
    "--moe-token-drop-policy",  // which slots a full expert drops, not how many
    // the router's arithmetic and MLA's RoPE scaling: no kernel count or size changes
    "--moe-router-pre-softmax", "--moe-router-topk-scaling-factor", "--moe-router-score-function",
    "--moe-router-enable-expert-bias", "--moe-router-bias-update-rate", "--moe-router-dtype",
    "--mtp-loss-scaling-factor", "--rotary-scaling-factor", "--mscale", "--mscale-all-dim",
    // trainsim prices the grouped expert GEMMs and fused permutation Megatron-Core's recipes run
    "--moe-grouped-gemm", "--moe-permute-fusion", "--cross-entropy-loss-fusion",
    "--cross-entropy-fusion-impl",
    // CUDA-graph warm-up, RNG tracking and the paged stash's and offloading's bookkeeping
    "--cuda-graph-warmup-steps", "--te-rng-tracker", "--moe-paged-stash-page-size",
    "--moe-paged-stash-buffer-size-factor-cuda", "--moe-paged-stash-buffer-size-factor-cpu",
    "--moe-pad-experts-for-cuda-graph-inference", "--moe-mlp-glu-interleave-size",
    "--delay-offload-until-cuda-graph", "--fine-grained-offloading-max-inflight-offloads",
    "--no-check-for-nan-in-loss-and-grad", "--no-create-attention-mask-in-dataloader",
    "--enable-experimental", "--original-max-position-embeddings",
    // Megatron-Core's pipeline sends, which trainsim prices non-blocking already (framework.blocking_p2p)
    "--overlap-p2p-comm", "--no-masked-softmax-fusion", "--no-bias-gelu-fusion", "--no-bias-swiglu-fusion",
    "--no-bias-dropout-fusion", "--no-rope-fusion", "--no-gradient-accumulation-fusion",
    "--no-async-tensor-model-parallel-allreduce", "--distributed-backend", "--distributed-timeout-minutes",
    "--manual-gc", "--manual-gc-interval", "--logging-level", "--dist-ckpt-strictness",
    "--num-dataset-builder-threads", "--log-memory-interval", "--log-device-memory-used",
    // data
    "--data-path", "--train-data-path", "--valid-data-path", "--test-data-path", "--data-cache-path",
    "--vocab-file", "--merge-file", "--tokenizer-model", "--split", "--num-workers", "--dataloader-type",
    "--mock-data", "--reset-position-ids", "--reset-attention-mask", "--eod-mask-loss",
    // checkpoints, evaluation and logging
    "--save", "--load", "--save-interval", "--no-save-optim", "--no-save-rng", "--no-load-optim",
    "--no-load-rng", "--finetune", "--use-checkpoint-args", "--ckpt-format", "--async-save",
    "--use-dist-ckpt", "--auto-detect-ckpt-format", "--eval-interval", "--eval-iters", "--exit-interval",
    "--exit-duration-in-mins", "--log-interval", "--log-throughput", "--log-timers-to-tensorboard",
    "--log-validation-ppl-to-tensorboard", "--log-memory-to-tensorboard", "--log-params-norm",
    "--log-num-zeros-in-grad", "--timing-log-level", "--tensorboard-dir", "--tensorboard-queue-size",
    "--wandb-project", "--wandb-exp-name", "--wandb-save-dir",
    // torchrun
    "--nproc_per_node", "--nproc-per-node", "--node_rank", "--node-rank", "--master_addr", "--master-addr",
    "--master_port", "--master-port", "--rdzv_backend", "--rdzv-backend", "--rdzv_endpoint",
    "--rdzv-endpoint", "--rdzv_id", "--rdzv-id", "--standalone", "--max_restarts", "--max-restarts"};

// The largest count read (beyond it a double no longer holds every whole number and products overflow);
// parallel sizes, which multiply together, at most kMaxParallel. Sizes, batches and lengths are read with
// a minimum of 1: Megatron-LM refuses 0 too (its asserts divide by them), so 0 is not read as 1.
constexpr long long kMaxCount = 1'000'000'000'000;
constexpr long long kMaxParallel = 1'000'000;
// The most GPUs one model replica may take (products of parallel sizes stay far from overflow).
constexpr long long kMaxGpus = 100'000'000;

// GPT-2 BPE (Megatron's GPT2BPETokenizer), before padding.
constexpr long long kGpt2Vocab = 50257;

struct Flags {
  std::map<std::string, std::vector<std::string>, std::less<>> values;  // every flag seen, its words
  std::map<std::string, std::string, std::less<>> environment;          // NAME=value the run sets
  [[nodiscard]] bool has(std::string_view flag) const { return values.find(flag) != values.end(); }
  /// A listed flag's words (kListed), empty when the flag is absent.
  [[nodiscard]] std::vector<std::string> list(std::string_view flag) const {
    const auto it = values.find(flag);
    if (it == values.end()) return {};
    if (it->second.empty()) throw InputError(std::string(flag) + " needs a value");
    return it->second;
  }
  [[nodiscard]] std::optional<std::string> text(std::string_view flag) const {
    const auto it = values.find(flag);
    if (it == values.end()) return std::nullopt;
    if (it->second.empty()) throw InputError(std::string(flag) + " needs a value");
    return it->second.front();
  }
  [[nodiscard]] std::optional<double> number(std::string_view flag) const {
    const std::optional<std::string> t = text(flag);
    if (!t) return std::nullopt;
    if (!t->empty() && t->front() == '$') {
      throw InputError(std::string(flag) + " is the shell variable " + *t +
                       ": write its value in the argument list");
    }
    double v = 0;
    const auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (ec != std::errc() || end != t->data() + t->size() || !std::isfinite(v)) {
      throw InputError(std::string(flag) + " expects a number, got '" + *t + "'");
    }
    return v;
  }
  /// A whole number in [min, max], or `fallback` when the flag is absent.
  [[nodiscard]] long long count(std::string_view flag, long long fallback, long long min = 0,
                                long long max = kMaxCount) const {
    const std::optional<double> v = number(flag);
    if (!v) return fallback;
    if (*v < static_cast<double>(min) || *v > static_cast<double>(max) || *v != std::floor(*v)) {
      throw InputError(fmt::format("{} expects a whole number from {} to {}, got {}", flag, min, max,
                                   sim::escaped_excerpt(*text(flag), 24)));
    }
    return static_cast<long long>(*v);
  }
  /// A whole number >= 1 that the list must give.
  [[nodiscard]] long long required(std::string_view flag) const {
    if (!has(flag)) throw InputError("the argument list does not give " + std::string(flag));
    return count(flag, 0, 1);
  }
};

Flags parse_flags(const std::vector<std::string>& words) {
  Flags f;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() < 3 || w.compare(0, 2, "--") != 0) continue;  // launcher words, script names, variables
    std::string flag = w;
    std::vector<std::string> values;
    if (const std::size_t eq = w.find('='); eq != std::string::npos) {  // --flag=value
      flag = w.substr(0, eq);
      values.push_back(w.substr(eq + 1));
    } else if (!kSwitches.contains(flag)) {
      // A valued flag takes one word; a listed or unknown one every word up to the next flag
      // (--rampup-batch-size 16 16 5859375: an unknown one's are then ignored).
      const bool one = kValued.contains(flag);
      while (i + 1 < words.size() && words[i + 1].compare(0, 2, "--") != 0) {
        values.push_back(words[++i]);
        if (one) break;
      }
    }
    // A repeated flag: the last one counts, as argparse reads it (a script appends overrides).
    f.values[flag] = std::move(values);
  }
  return f;
}

long long round_up(long long value, long long multiple) {
  return multiple <= 0 ? value : (value + multiple - 1) / multiple * multiple;
}

// Every flag is one trainsim reads, one known to price nothing (listed in ignored_flags), one read whose
// effect is not priced (kNotPriced: listed in not_priced with what it does), or unknown: listed in
// unknown_flags when the import is lenient, refused (with the nearest known flag, or kNotRead's reason)
// otherwise.
void sort_flags(const Flags& f, bool lenient, MegatronImport& out) {
  for (const auto& [flag, values] : f.values) {
    if (kSwitches.contains(flag) || kValued.contains(flag) || kListed.contains(flag)) continue;
    if (const auto unpriced = kNotPriced.find(flag); unpriced != kNotPriced.end()) {
      out.not_priced.push_back(flag + " (" + unpriced->second + ")");
      continue;
    }
    if (kPricedNothing.contains(flag)) {
      out.ignored_flags.push_back(flag);
      continue;
    }
    if (lenient) {
      out.unknown_flags.push_back(flag);
      continue;
    }
    if (const auto unread = kNotRead.find(flag); unread != kNotRead.end()) {
      throw InputError(flag + " is not read by this importer: " + unread->second +
                       "; give --lenient to import the rest and list the flags left out");
    }
    std::vector<std::string> known(kSwitches.begin(), kSwitches.end());
    known.insert(known.end(), kValued.begin(), kValued.end());
    known.insert(known.end(), kListed.begin(), kListed.end());
    known.insert(known.end(), kPricedNothing.begin(), kPricedNothing.end());
    for (const auto& [name, why] : kNotPriced) known.push_back(name);
    const std::string near = closest_match(flag, known);
    throw InputError(sim::escaped_excerpt(flag) + " is not a Megatron-LM flag this importer knows" +
                     (near.empty() ? std::string() : " (did you mean " + near + "?)") +
                     "; give --lenient to import the rest and list the flags left out");
  }
}

// What the arguments decide beyond single flags the YAML copies: each value as Megatron derives it.
struct MegatronRun {
  long long layers = 0, hidden = 0, heads = 0, seq = 0;
  long long tp = 1, pp = 1, cp = 1, ep = 1;
  long long expert_tp = 0;  // --expert-tensor-parallel-size; 0: Megatron-Core's default, tp
  [[nodiscard]] long long expert_tensor_parallel() const { return expert_tp > 0 ? expert_tp : tp; }
  bool swiglu = false;
  long long ffn = 0, vocab = 0;
  std::string norm, position;
  bool flash = false;
  std::string precision;
  std::string fp8_recipe;        // --fp8-recipe under fp8; empty: not given (Megatron's default, delayed)
  std::string recompute;         // a mode, or {modules: [...]}
  std::string offload;           // {modules: [...]}, or empty: none
  std::string moe_dispatcher;    // empty on a dense model
  long long dispatcher_sms = 0;  // the flex dispatcher's SMs; 0: the backend's default
  std::string routing;           // empty on a dense model
  std::optional<double> capacity_factor;
  std::string state_precision;  // the Adam moments' type; empty: fp32, Megatron's default
  long long mtp_layers = 0;
  long long virtual_stages = 0;
  std::vector<int> stage_layers;  // decoder layers per virtual stage; empty: Megatron's even split
  std::string optimizer;
  long long nodes = 0;
  // MoE layers among the dense ones (--moe-layer-freq) and the shared experts, in expert widths.
  long long dense_layers = 0, moe_layer_step = 1, shared_experts = 0;
  bool cuda_graphs = false;             // the whole step one graph
  bool fused_grouped_mlp = false;       // TransformerEngine's fused MXFP8 grouped MLP
  bool paged_stash = false;             // --moe-paged-stash: fixed-size expert buffers, no host wait
  std::vector<std::string> not_priced;  // what the list sets that the scenario does not price
};

// The vocabulary, padded as Megatron pads it (multiple of make-vocab-size-divisible-by · tp): the list's
// --vocab-size, else the importer's (MegatronImportOptions::vocab_size), else GPT-2's for its tokenizer.
long long padded_vocab(const Flags& f, long long tp, long long given) {
  const long long divisible = f.count("--make-vocab-size-divisible-by", 128, 1, kMaxParallel) * tp;
  long long vocab = 0;
  if (f.has("--vocab-size")) {
    vocab = f.count("--vocab-size", 0, 1);
  } else if (given > 0) {
    vocab = given;
  } else if (f.text("--tokenizer-type").value_or("GPT2BPETokenizer") == "GPT2BPETokenizer") {
    vocab = kGpt2Vocab;
  } else {
    throw InputError("the vocabulary of tokenizer " + *f.text("--tokenizer-type") +
                     " is not in the argument list: add --vocab-size N to it, or give trainsim import "
                     "megatron --vocab-size N (the tokenizer's length, before padding)");
  }
  return round_up(vocab, divisible);
}

// The most virtual stages a rank may hold (parallelism.virtual_stages' bound).
constexpr long long kMaxVirtualStages = 10'000;

// The pipeline's virtual stages and, where Megatron-LM splits the layers unevenly, the decoder layers of
// each. --pipeline-model-parallel-layout names them (Megatron-LM refuses it beside the flags below). Else a
// rank's virtual stages are --num-layers-per-virtual-pipeline-stage's share of the layers or
// --num-virtual-stages-per-pipeline-rank (older scripts: --virtual-pipeline-model-parallel-size), with
// --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split counting the embedding
// and the loss as one layer each of the first and the last virtual stage (megatron/training/arguments.py).
// A virtual stage with no decoder layer is taken at the ends only, where the embedding or the loss is all
// it holds (parallelism.stage_layers).
void read_pipeline_split(const Flags& f, MegatronRun& r) {
  const bool embedding = f.has("--account-for-embedding-in-pipeline-split");
  const bool loss = f.has("--account-for-loss-in-pipeline-split");
  const long long per = f.count("--num-layers-per-virtual-pipeline-stage", 0);
  const long long stages = f.has("--num-virtual-stages-per-pipeline-rank")
                               ? f.count("--num-virtual-stages-per-pipeline-rank", 0, 1, kMaxVirtualStages)
                               : f.count("--virtual-pipeline-model-parallel-size", 0, 0, kMaxVirtualStages);
  if (const auto layout = f.text("--pipeline-model-parallel-layout")) {
    if (embedding || loss || per > 0 || stages > 0) {
      throw InputError(
          "--pipeline-model-parallel-layout names every virtual stage's layers: Megatron-LM refuses it "
          "beside --num-layers-per-virtual-pipeline-stage, a virtual-stage count or the "
          "--account-for-*-in-pipeline-split flags");
    }
    r.stage_layers = layout_stage_layers(*layout, r.layers, r.mtp_layers, r.pp);
    r.virtual_stages = static_cast<long long>(r.stage_layers.size()) / r.pp;
    if (r.virtual_stages > kMaxVirtualStages)
      throw InputError(
          "--pipeline-model-parallel-layout: more than 10,000 virtual stages a rank are not modelled");
    for (std::size_t i = 1; i + 1 < r.stage_layers.size(); ++i) {
      if (r.stage_layers[i] == 0) {
        throw InputError("--pipeline-model-parallel-layout " + sim::escaped_excerpt(*layout, 60) +
                         ": virtual stage " + std::to_string(i) +
                         " holds no decoder layer (an MTP module alone?); trainsim places the MTP modules "
                         "with the loss and takes empty virtual stages at the ends only: write "
                         "parallelism.stage_layers");
      }
    }
    if (r.stage_layers.size() == 1) r.stage_layers.clear();
    return;
  }
  const long long extra = (embedding ? 1 : 0) + (loss ? 1 : 0);
  const long long counted = r.layers + extra;
  const std::string what = extra > 0 ? " (the embedding and the loss counted as layers)" : "";
  long long chunks = r.pp;
  if (per > 0) {
    if (counted % (r.pp * per) != 0) {
      throw InputError(
          fmt::format("--num-layers-per-virtual-pipeline-stage {} does not divide --num-layers over the "
                      "pipeline stages{}",
                      per, what));
    }
    chunks = counted / per;
  } else if (stages > 1) {
    chunks = r.pp * stages;
  }
  if (chunks / r.pp > kMaxVirtualStages)
    throw InputError("more than 10,000 virtual pipeline stages a rank are not modelled");
  r.virtual_stages = chunks / r.pp;
  if (extra == 0 || chunks == 1) return;  // an even split: the scenario's own
  if (counted % chunks != 0) {
    throw InputError(fmt::format("--num-layers {}{} does not split evenly into {} virtual stages", r.layers,
                                 what, chunks));
  }
  const long long each = counted / chunks;
  if (each > std::numeric_limits<int>::max())
    throw InputError("more than 2^31 layers in a virtual stage are not modelled");
  r.stage_layers.assign(static_cast<std::size_t>(chunks), static_cast<int>(each));
  if (embedding) --r.stage_layers.front();
  if (loss) --r.stage_layers.back();
}

// `{modules: [a, b]}` of a listed flag's words, each checked against the modules trainsim models.
template <class Enum, std::size_t N>
std::string modules_yaml(const Flags& f, std::string_view flag, const EnumNames<Enum, N>& modelled) {
  std::string yaml = "{modules: [";
  bool first = true;
  for (const std::string& module : f.list(flag)) {
    if (!parse_in(modelled, module)) {
      throw InputError(fmt::format("{} {} is not modelled ({})", flag, sim::escaped_excerpt(module, 24),
                                   fmt::join(names_of(modelled), ", ")));
    }
    yaml += (first ? "" : ", ") + module;
    first = false;
  }
  return yaml + "]}";
}

// `recompute:`: Megatron's --recompute-granularity (selective by --recompute-activations), and under
// selective its --recompute-modules (Megatron's default without them: core_attn, trainsim's selective).
// Megatron reads the modules only under selective granularity, so elsewhere they change nothing.
std::string recompute_setting(const Flags& f) {
  std::string recompute = f.has("--recompute-activations") ? "selective" : "none";
  if (const auto g = f.text("--recompute-granularity")) {
    if (*g != "full" && *g != "selective")
      throw InputError("--recompute-granularity " + *g + " is not modelled");
    recompute = *g;
  }
  if (recompute == "selective" && f.has("--recompute-modules"))
    return modules_yaml(f, "--recompute-modules", model::kRecomputeModuleNames);
  return recompute;
}

// `offload:`: --offload-modules under --fine-grained-activation-offloading (Megatron reads the modules
// only then); empty when nothing is offloaded.
std::string offload_setting(const Flags& f) {
  if (!f.has("--fine-grained-activation-offloading") || !f.has("--offload-modules")) return "";
  return modules_yaml(f, "--offload-modules", model::kOffloadModuleNames);
}

// framework.moe_dispatcher: --moe-token-dispatcher-type (Megatron-Core's default allgather), its flex
// dispatcher's --moe-flex-dispatcher-backend (default deepep) naming the backend.
std::string moe_dispatcher(const Flags& f) {
  std::string type = f.text("--moe-token-dispatcher-type").value_or("allgather");
  // --moe-enable-deepep (deprecated): DeepEP, which Megatron-Core takes only with the flex dispatcher
  // and no other backend named (transformer_config.py).
  if (f.has("--moe-enable-deepep")) {
    if (type != "flex" || f.text("--moe-flex-dispatcher-backend").value_or("deepep") != "deepep") {
      throw InputError(
          "--moe-enable-deepep needs --moe-token-dispatcher-type flex and no other "
          "--moe-flex-dispatcher-backend (Megatron-Core refuses it otherwise)");
    }
    return "deepep";
  }
  if (type == "alltoall" || type == "allgather") return type;
  if (type != "flex")
    throw InputError("--moe-token-dispatcher-type " + type + " is not modelled (alltoall, allgather, flex)");
  std::string backend = f.text("--moe-flex-dispatcher-backend").value_or("deepep");
  if (backend != "deepep" && backend != "hybridep")
    throw InputError("--moe-flex-dispatcher-backend " + backend + " is not modelled (deepep, hybridep)");
  return backend;
}

// framework.moe_dispatcher_sms: --moe-flex-dispatcher-num-sms, else the deprecated --moe-deepep-num-sms or
// --moe-hybridep-num-sms, which Megatron-Core routes to it whatever the backend and refuses when they
// disagree (TransformerConfig.__post_init__); 0: unset, the backend's default.
long long dispatcher_sms(const Flags& f) {
  if (f.has("--moe-flex-dispatcher-num-sms")) return f.count("--moe-flex-dispatcher-num-sms", 0, 1, 10000);
  const long long deepep = f.count("--moe-deepep-num-sms", 0, 1, 10000);
  const long long hybridep = f.count("--moe-hybridep-num-sms", 0, 1, 10000);
  if (deepep > 0 && hybridep > 0 && deepep != hybridep) {
    throw InputError("--moe-deepep-num-sms " + std::to_string(deepep) + " and --moe-hybridep-num-sms " +
                     std::to_string(hybridep) +
                     " disagree (Megatron-Core refuses them): give one --moe-flex-dispatcher-num-sms");
  }
  return std::max(deepep, hybridep);
}

// The Adam moments' type under --use-precision-aware-optimizer (Megatron reads --exp-avg-dtype and
// --exp-avg-sq-dtype only then; fp32 otherwise): one type, as trainsim holds both moments alike.
std::string state_precision(const Flags& f) {
  if (!f.has("--use-precision-aware-optimizer")) return "";
  const std::string first = f.text("--exp-avg-dtype").value_or("fp32");
  const std::string second = f.text("--exp-avg-sq-dtype").value_or("fp32");
  for (const auto& [flag, type] :
       {std::pair{"--exp-avg-dtype", first}, std::pair{"--exp-avg-sq-dtype", second}}) {
    if (type != "fp32" && type != "fp16" && type != "bf16" && type != "fp8")
      throw InputError(std::string(flag) + " " + type + " is not a moment type (fp32, fp16, bf16, fp8)");
  }
  if (first != second) {
    throw InputError("--exp-avg-dtype " + first + " and --exp-avg-sq-dtype " + second +
                     " differ: trainsim holds both moments in one type (training.optimizer.state_precision)");
  }
  return first == "fp32" ? "" : first;
}

// model.routing and its capacity_factor: --moe-router-force-load-balancing is force-balanced (padded to
// --moe-expert-capacity-factor under --moe-pad-expert-input-to-capacity; otherwise no expert reaches its
// capacity); else a capacity factor is capacity routing; else Megatron's dropless.
void read_routing(const Flags& f, MegatronRun& r) {
  const std::optional<double> factor = f.number("--moe-expert-capacity-factor");
  if (factor && (*factor < 0.001 || *factor > 1000)) {
    throw InputError(fmt::format("--moe-expert-capacity-factor expects a number from 0.001 to 1000, got {}",
                                 sim::escaped_excerpt(*f.text("--moe-expert-capacity-factor"), 24)));
  }
  if (f.has("--moe-router-force-load-balancing")) {
    r.routing = "force-balanced";
    if (f.has("--moe-pad-expert-input-to-capacity")) r.capacity_factor = factor;
  } else if (factor) {
    r.routing = "capacity";
    r.capacity_factor = factor;
  } else {
    r.routing = "dropless";
  }
}

// Where the experts are (--moe-layer-freq: model.dense_layers and model.moe_layer_step) and the shared
// experts' width (--moe-shared-expert-intermediate-size) in experts of --moe-ffn-hidden-size.
void read_moe_layers(const Flags& f, MegatronRun& r) {
  // 1, Megatron-LM's default, puts experts on every layer: nothing to read.
  if (const auto freq = f.text("--moe-layer-freq"); freq && *freq != "1") {
    const MoeLayerSplit split = moe_layer_split(moe_layer_pattern(*freq, r.layers));
    r.dense_layers = split.dense_layers;
    r.moe_layer_step = split.moe_layer_step;
  }
  if (const long long shared = f.count("--moe-shared-expert-intermediate-size", 0, 1); shared > 0) {
    const long long width = f.count("--moe-ffn-hidden-size", r.ffn, 1);
    if (shared % width != 0) {
      throw InputError(
          fmt::format("--moe-shared-expert-intermediate-size {} is not a whole number of experts "
                      "of width {} (trainsim holds shared experts as model.shared_experts of "
                      "the expert width)",
                      shared, width));
    }
    r.shared_experts = shared / width;
  }
}

// The step's CUDA graphs: Megatron-LM captures the whole step only under --cuda-graph-impl full_iteration
// or the full_iteration scope (--cuda-graph-scope, deprecated, or --cuda-graph-modules); per-layer scopes
// (attn, moe_router, moe_preprocess, …, or --external-cuda-graph / --enable-cuda-graph with none) leave
// the layers' other ops eager, which is how trainsim prices them (framework.cuda_graphs covers whole steps
// only). TransformerEngine's fused MXFP8 grouped MLP runs under --use-transformer-engine-op-fuser with
// NVTE_CUTEDSL_FUSED_GROUPED_MLP=1 in an MXFP8 run (--fp8-recipe mxfp8), one rank an expert.
// --moe-paged-stash sizes the experts' buffers ahead, so the layer does not wait on the host for its token
// counts (framework.moe_host_sync false).
void read_graphs_and_fusion(const Flags& f, MegatronRun& r) {
  const std::string impl = f.text("--cuda-graph-impl").value_or("none");
  if (impl != "none" && impl != "local" && impl != "transformer_engine" && impl != "full_iteration")
    throw InputError("--cuda-graph-impl " + impl +
                     " is not modelled (none, local, transformer_engine, full_iteration)");
  std::vector<std::string> scopes =
      f.has("--cuda-graph-scope") ? f.list("--cuda-graph-scope") : std::vector<std::string>{};
  if (f.has("--cuda-graph-modules")) {
    const std::vector<std::string> modules = f.list("--cuda-graph-modules");
    scopes.insert(scopes.end(), modules.begin(), modules.end());
  }
  const bool full_scope = std::find(scopes.begin(), scopes.end(), "full_iteration") != scopes.end();
  if (full_scope && impl == "transformer_engine") {
    throw InputError(
        "--cuda-graph-scope full_iteration needs --cuda-graph-impl local (Megatron-LM refuses it with "
        "transformer_engine)");
  }
  r.cuda_graphs = impl == "full_iteration" || full_scope;
  const bool per_layer = impl == "local" || impl == "transformer_engine" || f.has("--external-cuda-graph") ||
                         f.has("--enable-cuda-graph");
  if (!r.cuda_graphs && per_layer) {
    r.not_priced.push_back(fmt::format(
        "CUDA graphs of {} (per-layer graphs: priced eager)",
        scopes.empty() ? std::string("whole layers") : fmt::format("{}", fmt::join(scopes, ", "))));
  }
  const auto fused = f.environment.find("NVTE_CUTEDSL_FUSED_GROUPED_MLP");
  r.fused_grouped_mlp =
      f.has("--num-experts") && r.precision == "fp8" && f.text("--fp8-recipe").value_or("") == "mxfp8" &&
      f.has("--use-transformer-engine-op-fuser") && fused != f.environment.end() && fused->second == "1";
  if (r.fused_grouped_mlp && r.expert_tensor_parallel() != 1) {
    throw InputError(
        "the fused grouped MLP (--use-transformer-engine-op-fuser with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1) "
        "needs one rank an expert, --expert-tensor-parallel-size 1 (Megatron-Core asserts it)");
  }
  r.paged_stash = f.has("--num-experts") && f.has("--moe-paged-stash");
  if (r.precision == "fp8" && f.text("--fp8-recipe").value_or("") == "blockwise")
    r.not_priced.emplace_back(
        "--fp8-recipe blockwise (block-scaled GEMMs priced as fp8 GEMMs; its casts as "
        "training.fp8_recipe prices them)");
}

// The nodes: --nodes, else torchrun's --nnodes when the script gives it as a number rather than a shell
// variable, else enough of the node preset's for one replica's GPUs (`model_parallel`: the expert group
// folded into the attention's ranks, as Megatron-Core places it).
long long node_count(const Flags& f, const MegatronImportOptions& options, long long model_parallel) {
  const topo::NodeSpec node = node_preset(options.node);
  long long nodes = options.nodes;
  if (nodes <= 0 && f.has("--nnodes") && !f.text("--nnodes")->starts_with('$'))
    nodes = f.count("--nnodes", 0);
  const long long per_node = options.gpus_per_node > 0 ? options.gpus_per_node : node.gpus_per_node;
  if (nodes <= 0) nodes = std::max(1LL, round_up(model_parallel, per_node) / per_node);
  return nodes;
}

// Reads the run's values in the order the flags are checked, so that the first bad flag is the one named.
MegatronRun read_run(const Flags& f, const MegatronImportOptions& options) {
  MegatronRun r;
  r.layers = f.required("--num-layers");
  r.hidden = f.required("--hidden-size");
  r.heads = f.required("--num-attention-heads");
  r.seq = f.required("--seq-length");
  r.tp = f.count("--tensor-model-parallel-size", 1, 1, kMaxParallel);
  r.pp = f.count("--pipeline-model-parallel-size", 1, 1, kMaxParallel);
  r.cp = f.count("--context-parallel-size", 1, 1, kMaxParallel);
  r.ep = f.count("--expert-model-parallel-size", 1, 1, kMaxParallel);
  r.expert_tp = f.count("--expert-tensor-parallel-size", 0, 1, kMaxParallel);
  r.swiglu = f.has("--swiglu");
  // Megatron's default FFN width (megatron/training/arguments.py): 4h, or for SwiGLU 2/3 of it rounded
  // down to a multiple of 64.
  const long long ffn_default = r.swiglu ? (4 * r.hidden * 2 / 3) / 64 * 64 : 4 * r.hidden;
  r.ffn = f.count("--ffn-hidden-size", ffn_default, 1);
  r.vocab = padded_vocab(f, r.tp, options.vocab_size);

  r.norm = f.text("--normalization").value_or("LayerNorm");
  if (r.norm != "LayerNorm" && r.norm != "RMSNorm")
    throw InputError("--normalization " + r.norm + " is not modelled");
  r.position = f.text("--position-embedding-type").value_or("learned_absolute");
  if (r.position != "learned_absolute" && r.position != "rope") {
    throw InputError("--position-embedding-type " + r.position + " is not modelled (learned_absolute, rope)");
  }
  const std::string backend = f.text("--attention-backend").value_or("auto");
  const std::string impl = f.text("--transformer-impl").value_or("transformer_engine");
  r.flash = backend != "unfused" && (impl == "transformer_engine" || f.has("--use-flash-attn"));

  r.precision = "fp32";
  if (f.has("--fp16")) r.precision = "fp16";
  if (f.has("--bf16")) r.precision = "bf16";
  if (f.has("--fp8-format")) r.precision = "fp8";
  if (const auto recipe = f.text("--fp8-recipe"); recipe && r.precision == "fp8") {
    if (*recipe != "delayed" && *recipe != "tensorwise" && *recipe != "blockwise" && *recipe != "mxfp8")
      throw InputError("--fp8-recipe " + *recipe +
                       " is not modelled (delayed, tensorwise, blockwise, mxfp8)");
    r.fp8_recipe = *recipe;
  }
  // The distributed optimizer's main gradients and weights: fp32, as trainsim holds them.
  for (const char* flag : {"--main-grads-dtype", "--main-params-dtype"}) {
    if (const auto type = f.text(flag); type && *type != "fp32")
      throw InputError(std::string(flag) + " " + *type + " is not modelled (fp32 only)");
  }

  r.recompute = recompute_setting(f);
  r.offload = offload_setting(f);
  if (f.has("--num-experts")) {
    r.moe_dispatcher = moe_dispatcher(f);
    r.dispatcher_sms = dispatcher_sms(f);
    read_routing(f, r);
    read_moe_layers(f, r);
  }
  r.mtp_layers = f.count("--mtp-num-layers", 0, 0, 1000);
  read_pipeline_split(f, r);
  read_graphs_and_fusion(f, r);
  r.optimizer = f.text("--optimizer").value_or("adam");
  if (r.optimizer != "adam" && r.optimizer != "sgd")
    throw InputError("--optimizer " + r.optimizer + " is not modelled");
  if (r.optimizer == "adam") r.state_precision = state_precision(f);
  // Megatron-Core folds the expert group into the attention's tp × cp × dp ranks (expert_tp ranks
  // splitting each expert): one replica needs pp · lcm(tp · cp, ep · expert_tp) GPUs.
  const long long expert_ranks = r.ep * r.expert_tensor_parallel();
  const long long lcm = std::lcm(r.tp * r.cp, expert_ranks);
  if (static_cast<double>(r.pp) * static_cast<double>(lcm) > static_cast<double>(kMaxGpus)) {
    throw InputError(fmt::format(
        "one replica of this layout needs more than {} GPUs (pp · lcm(tp · cp, ep · expert tp))", kMaxGpus));
  }
  r.nodes = node_count(f, options, r.pp * lcm);
  return r;
}

// The scenario's model: block.
std::string model_yaml(const Flags& f, const MegatronRun& r) {
  std::string y = "model:\n";
  y += fmt::format("  layers: {}\n  hidden: {}\n  heads: {}\n", r.layers, r.hidden, r.heads);
  // Megatron-LM takes --num-query-groups only under --group-query-attention (argument_utils.py,
  // core_transformer_config_from_args: num_query_groups None otherwise, every head its own K and V).
  if (f.has("--group-query-attention")) {
    y += fmt::format("  kv_heads: {}\n", f.count("--num-query-groups", 1, 1));
  }
  if (f.has("--multi-latent-attention")) {
    // Multi-head latent attention with Megatron-LM's defaults (megatron/training/arguments.py,
    // _add_mla_args): no query compression without --q-lora-rank, --kv-channels unused.
    if (f.has("--q-lora-rank")) y += fmt::format("  q_lora_rank: {}\n", f.count("--q-lora-rank", 0, 1));
    y += fmt::format("  kv_lora_rank: {}\n  qk_nope_head_dim: {}\n  qk_rope_head_dim: {}\n  v_head_dim: {}\n",
                     f.count("--kv-lora-rank", 32, 1), f.count("--qk-head-dim", 128, 1),
                     f.count("--qk-pos-emb-head-dim", 64, 1), f.count("--v-head-dim", 128, 1));
  } else if (f.has("--kv-channels")) {
    y += fmt::format("  head_dim: {}\n", f.count("--kv-channels", 0, 1));
  }
  // --qk-layernorm: the norm over each query and key head; under MLA it is the latents' norms, which the
  // model's MLA holds already (megatron/core/transformer/multi_latent_attention.py: q_layernorm over
  // q_lora_rank, kv_layernorm over kv_lora_rank).
  if (f.has("--qk-layernorm") && !f.has("--multi-latent-attention")) y += "  qk_norm: true\n";
  y += fmt::format("  ffn_hidden: {}\n  vocab: {}\n  seq_len: {}\n", r.ffn, r.vocab, r.seq);
  y += std::string("  mlp: ") + (r.swiglu ? "swiglu" : "gelu") + "\n";
  y += std::string("  norm: ") + (r.norm == "RMSNorm" ? "rmsnorm" : "layernorm") + "\n";
  y += std::string("  position: ") + (r.position == "rope" ? "rope" : "learned") + "\n";
  y += std::string("  bias: ") + (f.has("--disable-bias-linear") ? "false" : "true") + "\n";
  y += std::string("  tied_embeddings: ") +
       (f.has("--untie-embeddings-and-output-weights") ? "false" : "true") + "\n";
  y += std::string("  attention: ") + (r.flash ? "flash" : "standard") + "\n";
  y += fmt::format("  dropout: {}\n", f.number("--hidden-dropout").value_or(0.1));
  if (f.has("--num-experts")) {
    y += fmt::format("  experts: {}\n  top_k: {}\n", f.count("--num-experts", 0),
                     f.count("--moe-router-topk", 2, 1));
    if (f.has("--moe-ffn-hidden-size"))
      y += fmt::format("  expert_ffn_hidden: {}\n", f.count("--moe-ffn-hidden-size", 0, 1));
    if (r.shared_experts > 0) y += fmt::format("  shared_experts: {}\n", r.shared_experts);
    if (r.dense_layers > 0) y += fmt::format("  dense_layers: {}\n", r.dense_layers);
    if (r.moe_layer_step > 1) y += fmt::format("  moe_layer_step: {}\n", r.moe_layer_step);
    y += "  routing: " + r.routing + "\n";
    if (r.capacity_factor) y += fmt::format("  capacity_factor: {}\n", *r.capacity_factor);
    // Group-limited routing: Megatron-Core uses it when --moe-router-num-groups is given (with
    // --moe-router-group-topk); the scenario's loader checks the two against experts and top_k.
    if (f.has("--moe-router-num-groups") != f.has("--moe-router-group-topk")) {
      throw InputError(
          "--moe-router-num-groups and --moe-router-group-topk go together (group-limited "
          "routing); found only " +
          std::string(f.has("--moe-router-num-groups") ? "--moe-router-num-groups"
                                                       : "--moe-router-group-topk"));
    }
    if (f.has("--moe-router-num-groups")) {
      y += fmt::format("  routing_groups: {}\n  routing_group_top_k: {}\n",
                       f.count("--moe-router-num-groups", 0, 1), f.count("--moe-router-group-topk", 0, 1));
    }
  }
  if (r.mtp_layers > 0) y += fmt::format("  mtp_layers: {}\n", r.mtp_layers);
  return y;
}

// The scenario's parallelism: block.
std::string parallelism_yaml(const Flags& f, const MegatronRun& r) {
  std::string y = "parallelism:\n";
  y += fmt::format("  tp: {}\n  pp: {}\n  cp: {}\n  ep: {}\n  dp: auto\n", r.tp, r.pp, r.cp, r.ep);
  if (r.ep > 1) y += "  expert_folding: true\n";
  if (r.expert_tp > 0) y += fmt::format("  expert_tp: {}\n", r.expert_tp);
  y += fmt::format("  micro_batch: {}\n", f.count("--micro-batch-size", 1, 1));
  if (r.pp > 1) y += std::string("  schedule: ") + (r.virtual_stages > 1 ? "interleaved" : "1f1b") + "\n";
  if (r.pp > 1 && r.virtual_stages > 1) y += fmt::format("  virtual_stages: {}\n", r.virtual_stages);
  if (!r.stage_layers.empty()) y += fmt::format("  stage_layers: [{}]\n", fmt::join(r.stage_layers, ", "));
  y += std::string("  sequence_parallel: ") + (f.has("--sequence-parallel") ? "true" : "false") + "\n";
  y += "  recompute: " + r.recompute + "\n";
  if (!r.offload.empty()) y += "  offload: " + r.offload + "\n";
  y += std::string("  zero: ") + (f.has("--use-distributed-optimizer") ? "1" : "0") + "\n";
  y += std::string("  overlap_grad_reduce: ") + (f.has("--overlap-grad-reduce") ? "true" : "false") + "\n";
  return y;
}

// The scenario's training: and framework: blocks.
std::string training_yaml(const Flags& f, const MegatronRun& r) {
  std::string y = "training:\n";
  y += fmt::format("  global_batch: {}\n", f.required("--global-batch-size"));
  y += "  precision: " + r.precision + "\n";
  if (!r.fp8_recipe.empty()) y += "  fp8_recipe: " + r.fp8_recipe + "\n";
  if (!r.state_precision.empty()) {
    y += "  optimizer: {kind: adamw, state_precision: " + r.state_precision + "}\n";
  } else {
    y += std::string("  optimizer: ") + (r.optimizer == "sgd" ? "sgd-momentum" : "adamw") + "\n";
  }
  if (f.has("--train-iters")) {
    y += fmt::format("  steps: {}\n", f.count("--train-iters", 1, 1));
  } else if (f.has("--train-samples")) {
    y += fmt::format("  tokens: {}\n",
                     static_cast<double>(f.count("--train-samples", 1, 1)) * static_cast<double>(r.seq));
  } else {
    y += "  steps: 1                  # neither --train-iters nor --train-samples given\n";
  }
  y += "framework:\n  preset: megatron-core\n";
  y += std::string("  tp_comm_overlap: ") + (f.has("--tp-comm-overlap") ? "true" : "false") + "\n";
  y += std::string("  overlap_param_gather: ") + (f.has("--overlap-param-gather") ? "true" : "false") + "\n";
  if (r.cuda_graphs) y += "  cuda_graphs: true\n";
  if (!r.moe_dispatcher.empty()) {
    y += "  moe_dispatcher: " + r.moe_dispatcher + "\n";
    const std::optional<model::MoeDispatcher> dispatcher =
        parse_in(model::kMoeDispatcherNames, r.moe_dispatcher);
    if (dispatcher && model::token_based(*dispatcher) && r.dispatcher_sms > 0)
      y += "  moe_dispatcher_sms: " + std::to_string(r.dispatcher_sms) + "\n";
    y += std::string("  ep_comm_overlap: ") +
         (f.has("--overlap-moe-expert-parallel-comm") ? "true" : "false") + "\n";
    if (f.has("--delay-wgrad-compute")) y += "  delay_wgrad_compute: true\n";
    if (r.fused_grouped_mlp) y += "  fused_grouped_mlp: true\n";
    if (r.paged_stash) y += "  moe_host_sync: false\n";
    // Megatron-Core runs its router unfused unless --moe-router-fusion (model::Framework::router_kernels).
    y += fmt::format("  router_kernels: {}\n", f.has("--moe-router-fusion") ? model::kFusedRouterKernels
                                                                            : model::kUnfusedRouterKernels);
  }
  return y;
}

}  // namespace

std::vector<std::string> shell_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  auto flush = [&] {
    if (in_word) {
      // Bash array brackets: NAME=( opens a list, ) closes it; neither is an argument.
      if (word != ")" && word != "(" && !(word.size() > 2 && word.compare(word.size() - 2, 2, "=(") == 0)) {
        words.push_back(word);
      }
    }
    word.clear();
    in_word = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;  // line continuation
    } else if (c == '#' && !in_word) {
      while (i < text.size() && text[i] != '\n') ++i;
      flush();
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) throw InputError("the argument list has an unclosed quote");
  flush();
  return words;
}

MegatronImport import_megatron_args(const std::string& text, const std::string& source,
                                    const MegatronImportOptions& options) {
  // A Megatron-LM recipe file (ARGS, ENV_VARS), else a launch script or flag file, whose NAME=value words
  // (an `export` or a command's prefix) are its environment.
  const std::optional<MegatronRecipe> recipe = read_megatron_recipe(text, source);
  const std::vector<std::string> words = recipe ? recipe->words : shell_words(text);
  Flags f = parse_flags(words);
  if (recipe) {
    f.environment = recipe->environment;
  } else {
    for (const std::string& w : words) {
      const std::size_t eq = w.find('=');
      if (eq == std::string::npos || eq == 0 || w.starts_with("--")) continue;
      const std::string name = w.substr(0, eq);
      if (std::all_of(name.begin(), name.end(), [](char c) {
            return std::isupper(static_cast<unsigned char>(c)) ||
                   std::isdigit(static_cast<unsigned char>(c)) || c == '_';
          }))
        f.environment[name] = w.substr(eq + 1);
    }
  }
  if (f.values.empty()) throw InputError("no --flags found in " + source);
  MegatronImport out;
  sort_flags(f, options.lenient, out);
  if (f.has("--num-query-groups") && !f.has("--group-query-attention")) {
    (void)f.count("--num-query-groups", 1, 1);  // still a count, as argparse reads it
    out.ignored_flags.emplace_back("--num-query-groups");
  }
  const MegatronRun run = read_run(f, options);
  out.not_priced.insert(out.not_priced.end(), run.not_priced.begin(), run.not_priced.end());

  std::string& y = out.yaml;
  y += "# Imported by `trainsim import megatron` from " + source + " (Megatron-LM arguments).\n";
  y += comment_list("# Read and left out (they price nothing):", out.ignored_flags);
  y += comment_list("# Not known to this importer, left out (--lenient):", out.unknown_flags);
  y += comment_list("# Read, but not priced (trainsim does not model what they change):", out.not_priced);
  y += fmt::format(
      "# The cluster is not in Megatron's arguments: {} x {} (trainsim import --node, --nodes).\n", run.nodes,
      options.node);
  y += "name: " + std::filesystem::path(source).stem().string() + "\n";
  y += model_yaml(f, run);
  y +=
      fmt::format("cluster: {{node: {}, nodes: {}{}}}\n", options.node, run.nodes,
                  options.gpus_per_node > 0 ? fmt::format(", gpus_per_node: {}", options.gpus_per_node) : "");
  y += parallelism_yaml(f, run);
  y += training_yaml(f, run);
  return out;
}

}  // namespace trainsim::scenario
