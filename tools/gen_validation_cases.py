#!/usr/bin/env python3
"""Generate trainsim validation cases (scenarios/validation/**) from published measurements.

Usage: tools/gen_validation_cases.py [--shared DIR] [--out DIR]
  --shared  folder holding published-measurements.csv and vtrain/ (default: ../shared/validation next to
            the repository, i.e. /work/shared/validation in the development tree)
  --out     output root (default: scenarios/validation in this repository)

One YAML scenario per measured configuration (SPEC "Validation cases": a normal scenario plus a
`measured:` block with the source, the metric(s) under their SPEC output names in SI units, and the
relative tolerance). Sub-folders are the sources, which `trainsim validate` reports separately:
  korthikanti/    Korthikanti et al. 2022 (arXiv:2205.05198) Table 5 rows (full and selective recompute;
                  iteration_s -> iteration_time, mfu_pct/hfu_pct -> mfu/hfu as fractions) and Section 6.3
  megatron2020/   Megatron-LM README tables of 2020 (GPT-2 1B-8B, tensor parallel; 128-way data parallel)
  vtrain-single/  vTrain ground truth, 1,440 single-node configurations (Bang et al., MICRO'24, MIT licence)
  vtrain-multi/   vTrain ground truth, 109 configurations on 64-512 GPUs
  collectives/    nccl-tests bus bandwidth rows (NCCL-*: 8x H200, 1 and 4 B200 nodes, NVLS on/off); not
                  scenarios but `collective:` cases (see scenarios/studies/validation_runner.cpp), busbw in B/s
  published/      held-out published training runs from scenarios/validation/published-runs.csv (in this
                  repository): Narayanan et al. 2021 Table 1, Llama 3 Table 4, BLOOM-176B's logged step time,
                  the Megatron-Core MoE report's Table 11 (DeepSeek-V3, Qwen3-235B on GB300, GB200, H100)
  moe-dispatch/   MoE dispatch and combine latencies from scenarios/validation/moe-dispatch-latency.csv (in
                  this repository): Megatron-Core's MoE report, Table 7, HybridEP and all-to-all on GB200 and
                  H100; `dispatch:` cases, time in seconds
  moe-recipes/    Megatron-LM's MoE recipes from scenarios/validation/moe-recipes.csv (in this repository):
                  examples/moe_recipes at commit 9c5258f109, every setting the recipe's own; the README's
                  median TFLOP/s per GPU as tokens/s per GPU by Megatron-LM's FLOP count
Not generated, because trainsim has no output they could be compared with: Korthikanti Table 4 per-layer
times (no per-layer output field), Appendix C micro-batch-level recompute (no such recompute mode), ZeRO
maximum model sizes, failure and checkpoint statistics (run-level inputs, not step predictions).

Tolerances: each folder has a default (floor) below; scenarios/validation/tolerances.csv (columns: case,
tolerance, reason) overrides single cases, each with the reason written down. That file is written by
  tools/gen_validation_cases.py --tolerances-from RESULTS.csv
from the output of `trainsim validate --format csv scenarios/validation` at calibration time: a case whose
measured error plus a margin of 5 points exceeds its folder's floor gets its own tolerance (rounded up to
5 %), so the gate still fails when that case gets worse. Re-running the script is idempotent; it deletes
and rewrites the generated sub-folders only.
Python standard library only.
"""
import argparse
import csv
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Default relative tolerance (floor) per folder, from the error of the calibrated simulator on it (MAPE
# and spread in the table `trainsim validate scenarios/validation` prints): roughly MAPE plus two standard
# deviations of the typical case. Cases beyond it are listed in tolerances.csv with their own reason.
DEFAULT_TOLERANCE = {
    "korthikanti": 0.10,
    "megatron2020": 0.10,
    "vtrain-single": 0.25,
    "vtrain-multi": 0.15,
    "collectives": 0.15,
    "published": 0.15,
    "moe-dispatch": 0.25,
    "moe-recipes": 0.15,
}
MARGIN = 0.05

# Why cases of a folder can sit beyond its floor (from the accuracy analysis in scenarios/validation/README.md).
OUTLIER_REASON = {
    "korthikanti": "largest error of the Korthikanti set",
    "megatron2020": ("2020 DGX A100 (40 GB) runs, efficiency transferred from the 80 GB fit; V100 preset "
                     "not calibrated (4 points are too few to fit and still check)"),
    "vtrain-single": ("small model on 1-8 GPUs: per-kernel launch/framework overhead and small-message TP "
                      "latency are not in the kernel-time model (worst at tp 8, micro-batch 1)"),
    "collectives": ("small message (latency-bound: NCCL protocol/launch costs) or a bandwidth tier the "
                    "collective model fits less well; see topologies/README.md"),
    "published": ("held-out published run, not fitted; layout fields the source does not publish are assumed "
                  "(published-runs.csv `assumed`); see the published/ analysis in scenarios/validation/README.md"),
    "moe-dispatch": ("dispatch latency not fitted: the collective efficiencies of the node preset price it, "
                     "and top-k, precision and tokens per rank are assumed (moe-dispatch-latency.csv); see the "
                     "moe-dispatch/ analysis in scenarios/validation/README.md"),
    "moe-recipes": ("held-out Megatron-LM MoE recipe, not fitted: every priced setting is the recipe's; what "
                    "trainsim does not model of it is moe-recipes.csv's `not_modelled`; see the moe-recipes/ "
                    "analysis in scenarios/validation/README.md"),
    "vtrain-multi": ("outlier of the multi-node set (micro-batch 64, or tp 2 with 16 pipeline stages); "
                     "see the accuracy analysis"),
}

KOR22_SOURCE = "Korthikanti et al. 2022, arXiv:2205.05198"
MR20_SOURCE = "Megatron-LM README (2020) GPT-2 scaling tables"
VTRAIN_SOURCE = "vTrain ground truth (Bang et al., MICRO'24, arXiv:2312.12391), MIT licence"

# vTrain setup (shared/validation/README.md; vTrain's own configs: gpu_name A100, 8 GPUs per node,
# inter_node_bandwidth 800 Gb/s, use_checkpoint true, use_gradient_bucket false, pipeline 1f1b).
# The GPU memory size is not stated by the data set; 80 GB is assumed (it only affects `fits` and the HBM
# bandwidth, which calibration absorbs).
VTRAIN_CLUSTER = {"node": "dgx-a100-80gb", "network": '{nic: "200 Gb/s", nics_per_node: 4}'}


def yaml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fmt_num(x):
    """Shortest exact-enough decimal for YAML (no exponent surprises for counts)."""
    if float(x) == int(float(x)) and abs(float(x)) < 1e15:
        return str(int(float(x)))
    return repr(float(x))


def scenario_text(case):
    m = case["model"]
    if m.get("preset"):
        model = "{preset: %s, seq_len: %d, attention: %s%s%s}" % (
            m["preset"], m["seq_len"], m["attention"],
            ", mtp_layers: %d" % m["mtp_layers"] if m.get("mtp_layers") else "",
            ", routing: %s" % m["routing"] if m.get("routing") else "")
    else:
        model = ("{layers: %d, hidden: %d, heads: %d, ffn_hidden: %d, vocab: %d, seq_len: %d, mlp: gelu, "
                 "attention: %s%s}" % (m["layers"], m["hidden"], m["heads"], m["ffn_hidden"], m["vocab"],
                                        m["seq_len"], m["attention"],
                                        ", tied_embeddings: true" if m.get("tied_embeddings") else ""))
    c = case["cluster"]
    cluster = "{node: %s, nodes: %d" % (c["node"], c["nodes"])
    if c.get("gpus_per_node"):
        cluster += ", gpus_per_node: %d" % c["gpus_per_node"]
    if c.get("network"):
        cluster += ", network: %s" % c["network"]
    cluster += "}"
    p = case["parallelism"]
    par = "{tp: %d, pp: %d, dp: %d" % (p["tp"], p["pp"], p["dp"])
    if p.get("cp", 1) != 1:
        par += ", cp: %d" % p["cp"]
    if p.get("ep", 1) != 1:
        par += ", ep: %d, expert_folding: %s, expert_tp: %d" % (p["ep"], str(p["expert_folding"]).lower(),
                                                              p["expert_tp"])
    par += ", schedule: %s" % p["schedule"]
    if p["schedule"] == "interleaved":
        par += ", virtual_stages: %d" % p["virtual_stages"]
    if p.get("stage_layers"):
        par += ", stage_layers: [%s]" % ", ".join(str(n) for n in p["stage_layers"])
    par += (", micro_batch: %d, sequence_parallel: %s, recompute: %s, zero: %d, overlap_grad_reduce: %s" %
            (p["micro_batch"], str(p["sequence_parallel"]).lower(), p["recompute"], p.get("zero", 0),
             str(p["overlap_grad_reduce"]).lower()))
    if p.get("offload"):
        par += ", offload: %s" % p["offload"]
    par += "}"
    t = case["training"]
    optimizer = ("{kind: adamw, state_precision: %s}" % t["state_precision"] if t.get("state_precision")
                 else "adamw")
    recipe = ", fp8_recipe: %s" % t["fp8_recipe"] if t.get("fp8_recipe") else ""
    training = "{global_batch: %d, precision: %s%s, optimizer: %s, steps: 1}" % (t["global_batch"], t["precision"],
                                                                                recipe, optimizer)
    lines = [
        "# Generated by tools/gen_validation_cases.py from %s; edit the script, not this file." % case["origin"],
        "name: %s" % case["name"],
        "model: %s" % model,
        "cluster: %s" % cluster,
        "parallelism: %s" % par,
    ]
    if case.get("framework"):
        lines.append("framework: %s" % case["framework"])
    lines += [
        "training: %s" % training,
        "measured:",
        "  source: %s" % yaml_str(case["source"]),
    ]
    for metric, value in case["measured"]:
        lines.append("  %s: %s" % (metric, fmt_num(value)))
    lines.append("  tolerance: %s" % fmt_num(case["tolerance"]))
    return "\n".join(lines) + "\n"


def gpt_model(layers, hidden, heads, seq_len, vocab=51200, ffn_hidden=None, attention="standard"):
    return {"layers": int(layers), "hidden": int(hidden), "heads": int(heads),
            "ffn_hidden": int(ffn_hidden) if ffn_hidden else 4 * int(hidden), "vocab": int(vocab),
            "seq_len": int(seq_len), "attention": attention}


def nodes_for(gpus, per_node=8):
    """(nodes, gpus_per_node or None): partial single nodes use gpus_per_node."""
    if gpus < per_node:
        return 1, gpus
    if gpus % per_node:
        sys.exit("gen_validation_cases: %d GPUs is not a whole number of %d-GPU nodes" % (gpus, per_node))
    return gpus // per_node, None


def korthikanti_cases(rows):
    """Table 5 (and Section 6.3) iteration times with MFU/HFU where given, one case per configuration."""
    groups = {}
    for r in rows:
        rid = r["id"]
        if not (rid.startswith("KOR22-T5-") or rid.startswith("KOR22-S63-")):
            continue
        if r["metric"] not in ("iteration_s", "mfu_pct", "hfu_pct"):
            continue
        key = (r["layers"], r["hidden"], r["gpus"], r["dp"], r["recompute"])
        groups.setdefault(key, []).append(r)
    cases = []
    for key, rs in sorted(groups.items(), key=lambda kv: (int(kv[0][2]), kv[0][4])):
        r = rs[0]
        gpus = int(r["gpus"])
        recompute = "full" if r["recompute"].startswith("full") else "selective"
        sp = "+SP" in r["recompute"]
        chunks = int(r["interleave_chunks"]) if r["interleave_chunks"] else 1
        measured = []
        ids = []
        for metric, spec_name, scale in (("iteration_s", "iteration_time", 1.0), ("mfu_pct", "mfu", 0.01),
                                         ("hfu_pct", "hfu", 0.01)):
            for x in rs:
                if x["metric"] == metric:
                    measured.append((spec_name, round(float(x["value"]) * scale, 6)))
                    ids.append(x["id"])
        nodes, per = nodes_for(gpus)
        size = r["model_name"].split()[0].lower()
        section = "t5" if rs[0]["id"].startswith("KOR22-T5") else "s63"
        dp = int(r["dp"])
        name = "kor22-%s-%s-%s%s" % (section, size, recompute, "-dp%d" % dp if dp > 1 else "")
        where = "Table 5" if section == "t5" else "Section 6.3"
        cases.append({
            "folder": "korthikanti",
            # Megatron-LM of 2022: no tensor-parallel communication overlap yet, blocking p2p.
            "framework": "megatron-lm-2021",
            "name": name,
            "origin": "published-measurements.csv rows " + ", ".join(ids),
            "source": "%s, %s, %s, %s recompute%s (%s)" % (KOR22_SOURCE, where, r["model_name"], recompute,
                                                           " + sequence parallelism" if sp else "",
                                                           ", ".join(ids)),
            "model": gpt_model(r["layers"], r["hidden"], r["heads"], r["seq_len"], r["vocab"], r["ffn_hidden"]),
            "cluster": {"node": "dgx-a100-80gb", "nodes": nodes, "gpus_per_node": per},
            "parallelism": {"tp": int(r["tp"]), "pp": int(r["pp"]), "dp": dp,
                            "schedule": "interleaved" if chunks > 1 else "1f1b", "virtual_stages": chunks,
                            "micro_batch": int(r["micro_batch"]), "sequence_parallel": sp,
                            "recompute": recompute,
                            # Section 6.3: "no overlap of gradient all-reduce with back-propagation".
                            "overlap_grad_reduce": False},
            "training": {"global_batch": int(r["global_batch"]), "precision": "bf16"},
            "measured": measured,
        })
    return cases


def megatron2020_cases(rows):
    """GPT-2 1B-8B iteration times (V100 DGX-2, DGX A100, and 128-way data parallel on DGX A100)."""
    cases = []
    for r in rows:
        if not r["id"].startswith("MR20-") or r["metric"] != "iteration_s":
            continue
        gpus = int(r["gpus"])
        tp, dp = int(r["tp"]), int(r["dp"])
        v100 = r["gpu_type"].startswith("V100")
        # DGX-2 has 16 V100 on NVSwitch; these cases use at most 8 GPUs of one node, which the 8-GPU
        # V100 node preset models. The 2020 DGX A100 shipped with 40 GB A100s.
        nodes, per = nodes_for(gpus)
        gb = int(r["global_batch"])
        cases.append({
            "folder": "megatron2020",
            "framework": "megatron-lm-2021",
            "name": r["id"].lower().rsplit("a", 1)[0].rstrip("-") + "-" + r["model_name"].split()[1].lower(),
            "origin": "published-measurements.csv row " + r["id"],
            "source": "%s, %s, %s (%s)" % (MR20_SOURCE, r["model_name"], r["gpu_type"], r["id"]),
            "model": gpt_model(r["layers"], r["hidden"], r["heads"], r["seq_len"], r["vocab"]),
            "cluster": {"node": "dgx-v100" if v100 else "dgx-a100-40gb", "nodes": nodes, "gpus_per_node": per},
            # Megatron-LM 2020 example scripts train with --checkpoint-activations (full recompute) and
            # fp16; one micro-batch per data-parallel rank (no gradient accumulation then).
            "parallelism": {"tp": tp, "pp": 1, "dp": dp, "schedule": "1f1b", "virtual_stages": 1,
                            "micro_batch": gb // dp, "sequence_parallel": False, "recompute": "full",
                            "overlap_grad_reduce": True},
            "training": {"global_batch": gb, "precision": "fp16"},
            "measured": [("iteration_time", float(r["value"]))],
        })
    return cases


def vtrain_cases(path, folder):
    cases = []
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        has_params = header[0].startswith("Parameters")
        width = len(str(1440))
        for i, row in enumerate(reader, start=1):
            if not row:
                continue
            if has_params:
                row = row[1:]
            gpus, gb, mb, hidden, heads, layers, seq, tp, dp, pp = (int(float(x)) for x in row[:10])
            ms = float(row[10])
            if tp * dp * pp != gpus:
                sys.exit("%s:%d: tp*dp*pp != GPUs" % (path, i + 1))
            nodes, per = nodes_for(gpus)
            cluster = dict(VTRAIN_CLUSTER, nodes=nodes, gpus_per_node=per)
            cases.append({
                "folder": folder,
                # Megatron-DeepSpeed: DeepSpeed's pipeline engine (blocking sends).
                "framework": "deepspeed",
                "name": "%s-%0*d" % (folder, width, i),
                "origin": "%s row %d" % (os.path.basename(path), i),
                "source": "%s, %s row %d" % (VTRAIN_SOURCE, os.path.basename(path), i),
                "model": gpt_model(layers, hidden, heads, seq),
                "cluster": cluster,
                "parallelism": {"tp": tp, "pp": pp, "dp": dp, "schedule": "1f1b", "virtual_stages": 1,
                                "micro_batch": mb, "sequence_parallel": False, "recompute": "full",
                                "overlap_grad_reduce": False},
                "training": {"global_batch": gb, "precision": "fp16"},
                "measured": [("iteration_time", round(ms / 1000.0, 9))],
            })
    return cases


PUBLISHED_CSV = os.path.join(ROOT, "scenarios", "validation", "published-runs.csv")
# The MoE rows (the Megatron-Core MoE report's MCORE26-*, Megatron-Bridge's documented runs MBRIDGE-*): the model
# preset of each model name, and the node preset of each system with the GPUs of it a case uses. An NVL72 rack
# is written as NVLink domains of 64 GPUs, as ../shared/validation/moe-steps writes GB200 NVL72: the recipes
# place 64 expert-parallel ranks per NVLink domain, and 256 (or 128) GPUs fill 4 (or 2) such domains.
MOE_MODEL_PRESET = {"DeepSeek-V3": "deepseek-v3", "Qwen3-235B": "qwen3-235b-a22b", "Qwen3-30B-A3B": "qwen3-30b-a3b"}
MOE_NODE = {"GB300": ("gb300-nvl72", 64), "GB200": ("gb200-nvl72", 64), "H100-SXM-80GB": ("dgx-h100", 8)}
# Llama 3 Sec. 3.3.1: 400 Gb/s RoCE per GPU, one NIC per GPU; the layout of scenarios/examples/llama3-405b-8k-16k-h100.yaml.
LLAMA3_NETWORK = '{topology: fat-tree, nic: "400 Gb/s", nics_per_node: 8, rail_optimized: true}'


def csv_bool(path, row, column):
    """A true/false cell of a published row; anything else stops the script, naming the row and column."""
    value = row.get(column)
    if value not in ("true", "false"):
        sys.exit("%s: %s: column %s must be true or false, not %r" % (path, row["id"], column, value))
    return value == "true"


def published_cases(path):
    """Held-out published training runs (published-runs.csv in this repository, not ../shared): Narayanan et al.
    2021 Table 1 (hardware TFLOP/s per GPU, eq. (3) counts the recomputed forward), Llama 3 Table 4 (model
    TFLOP/s per GPU and BF16 MFU), BLOOM-176B's logged iteration time (BigScience tr11 chronicles), the
    Megatron-Core MoE report's Table 11 (tokens/s per GPU, which needs no FLOP convention) and the step time of a
    Megatron-Bridge recipe its documentation reports (MBRIDGE-*). One case per table row;
    the CSV's `assumed` column names the layout fields the source does not publish (its `notes` say what was
    assumed and why)."""
    scale = {"hardware_tflops_per_gpu": ("hardware_tflops_per_gpu", 1.0),
             "model_tflops_per_gpu": ("model_tflops_per_gpu", 1.0), "mfu_pct": ("mfu", 0.01),
             "iteration_s": ("iteration_time", 1.0), "tokens_per_s_per_gpu": ("tokens_per_s_per_gpu", 1.0)}
    groups = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            groups.setdefault((r["source"], r["table_row"]), []).append(r)
    cases = []
    for (_, table_row), rs in groups.items():
        r = rs[0]
        llama = r["id"].startswith("LLAMA3-")
        bloom = r["id"].startswith("BLOOM-")
        moe = r["id"].startswith(("MCORE26-", "MBRIDGE-"))
        stage_layers = None
        framework = None
        fp8_recipe = None
        gpus, tp, cp, pp, dp = (int(r[k]) for k in ("gpus", "tp", "cp", "pp", "dp"))
        if tp * cp * pp * dp != gpus:
            sys.exit("%s: %s: tp*cp*pp*dp != GPUs" % (path, r["id"]))
        chunks = int(r["interleave_chunks"])
        seq = int(r["seq_len"])
        if moe:
            model = {"preset": MOE_MODEL_PRESET[r["model_name"]], "seq_len": seq, "attention": "flash",
                     "mtp_layers": int(r["mtp_layers"]), "routing": "force-balanced"}
            node, per_node = MOE_NODE[r["gpu_type"]]
            if gpus % per_node:
                sys.exit("%s: %s: %d GPUs is not a whole number of %d-GPU nodes" % (path, r["id"], gpus, per_node))
            cluster = {"node": node, "nodes": gpus // per_node, "gpus_per_node": per_node}
            # The report's fp8 rows: FP8 blockwise scaling on H100, MXFP8 on Blackwell (Table 11).
            dtype = {"bf16": "bf16", "fp8": "fp8blk" if r["gpu_type"].startswith("H100") else "mxfp8"}[r["precision"]]
            fp8_recipe = {"fp8blk": "blockwise", "mxfp8": "mxfp8"}.get(dtype)
            if r["id"].startswith("MCORE26-"):
                name = "mcore26-t11-%s-%s-%s-%dgpus-%s%s" % (
                    r["id"].rsplit("-", 1)[1], model["preset"], r["gpu_type"].split("-")[0].lower(), gpus, dtype,
                    "-%dk" % (seq // 1024) if seq != 4096 else "")
            else:
                name = r["id"].lower()
            # The recipe as the report names it (Sec. 8.1, App. B.2): the flex dispatcher's HybridEP or DeepEP
            # backend, the 1F1B expert all-to-all overlap where B.2 turns it on, and CUDA graphs only where the
            # whole step is one graph (the recipes' partial attn/router/preprocess scopes are not).
            framework = "{preset: megatron-core, moe_dispatcher: %s, ep_comm_overlap: %s, cuda_graphs: %s%s}" % (
                r["moe_dispatcher"], str(csv_bool(path, r, "ep_comm_overlap")).lower(),
                str(csv_bool(path, r, "cuda_graphs")).lower(),
                ", moe_dispatcher_sms: %s" % r["moe_dispatcher_sms"] if r["moe_dispatcher_sms"] else "")
        elif llama:
            name = "llama3-t4-%s-%dk-%dgpus" % (table_row.rsplit(" ", 1)[1], seq // 1024, gpus)
            model = {"preset": "llama3-405b", "seq_len": seq, "attention": "flash"}
            cluster = {"node": "dgx-h100", "nodes": gpus // 8, "network": LLAMA3_NETWORK}
            # Sec. 3.3.2: one layer a chunk, the first chunk the embedding alone and the last the LM head alone.
            layers = int(r["layers"])
            if chunks > 1 and pp * chunks - 2 == layers:
                stage_layers = [0] + [1] * layers + [0]
        elif bloom:
            name = "bloom-176b-tr11"
            model = dict(gpt_model(r["layers"], r["hidden"], r["heads"], seq, r["vocab"], r["ffn_hidden"]),
                         tied_embeddings=True)
            # Jean Zay: 8 A100 80GB per node, 4x Omni-Path 100 Gb/s per node (tr11 README "Hardware").
            cluster = {"node": "dgx-a100-80gb", "nodes": gpus // 8, "network": '{nic: "100 Gb/s", nics_per_node: 4}'}
            # tr11 README: --pp-partition-method 'type:transformer|embedding' puts 5 blocks beside each embedding.
            layers = int(r["layers"])
            stage_layers = [5] + [(layers - 10) // (pp - 2)] * (pp - 2) + [5]
            if sum(stage_layers) != layers:
                sys.exit("%s: %s: BLOOM stage partition does not add up" % (path, r["id"]))
        else:
            name = "nar21-t1-%s-%sb" % (r["id"].rsplit("-", 1)[1], r["params_b"].rstrip("0").rstrip("."))
            # 2021 kernels: no FlashAttention (standard attention), GELU MLP, 4h FFN (eq. (2) and (3)).
            model = gpt_model(r["layers"], r["hidden"], r["heads"], seq, r["vocab"], r["ffn_hidden"])
            cluster = {"node": "dgx-a100-80gb", "nodes": gpus // 8}
        measured = []
        for x in rs:
            metric, k = scale[x["metric"]]
            measured.append((metric, round(float(x["value"]) * k, 6)))
        cases.append({
            "folder": "published",
            # Llama 3: Meta's FSDP-based stack (fp32 reduce-scatter, Sec. 3.3.4) whose context parallelism
            # all-gathers K and V before computing the local queries' attention (Sec. 3.3.2); BLOOM:
            # Megatron-DeepSpeed; Narayanan et al.: Megatron-LM of 2021.
            "framework": framework or ("{preset: fsdp2, cp_kv_all_gather: true}" if llama and cp > 1
                                       else "fsdp2" if llama else "deepspeed" if bloom else "megatron-lm-2021"),
            "name": name,
            "origin": "scenarios/validation/published-runs.csv rows " + ", ".join(x["id"] for x in rs),
            "source": "%s, %s (%s)" % (r["source"], table_row, ", ".join(x["id"] for x in rs)),
            "model": model,
            "cluster": cluster,
            "parallelism": {"tp": tp, "pp": pp, "dp": dp, "cp": cp,
                            # Megatron-Core's expert group, folded into the attention's tp x cp x dp ranks.
                            "ep": int(r["ep"]) if moe else 1,
                            "expert_folding": moe and csv_bool(path, r, "expert_folding"),
                            "expert_tp": int(r["expert_tp"]) if moe else None,
                            "schedule": "interleaved" if chunks > 1 else "1f1b", "virtual_stages": chunks,
                            "micro_batch": int(r["micro_batch"]), "stage_layers": stage_layers,
                            # Megatron-LM of 2021 predates sequence parallelism. Whether the gradient reduction
                            # overlaps the backward pass is each row's `overlap_grad_reduce` column: Narayanan et
                            # al.'s script picks PyTorch DDP (overlapped) or Megatron's local DDP (after the
                            # backward) per row, DeepSpeed's pipeline engine (BLOOM) reduces after it, Llama 3's
                            # FSDP overlaps its reduce-scatters. Megatron-Core requires sequence parallelism for a
                            # MoE model under tensor parallelism.
                            "sequence_parallel": llama or (moe and tp > 1), "recompute": r["recompute"],
                            "zero": int(r["zero_stage"]),
                            "overlap_grad_reduce": csv_bool(path, r, "overlap_grad_reduce")},
            "training": {"global_batch": int(r["global_batch"]), "precision": r["precision"],
                         "fp8_recipe": fp8_recipe,
                         "state_precision": r.get("optimizer_state_precision") or None},
            "measured": measured,
        })
    return cases


COLLECTIVE_NODE = {"H200": "hgx-h200", "B200": "dgx-b200"}

# Rows that measure something other than a collective's steady state, and why (topologies/README.md).
NOT_A_STEADY_STATE = {
    "NCCL-B200-4N-01": ("32 KiB in 6.3 ms and 64 KiB in 3.2 ms, against 0.36-0.38 ms for every size from "
                        "256 KiB to 2 MiB on the same 4 nodes: the time falls as the message grows, which no "
                        "latency or bandwidth term does; the harness's first calls (connection set-up)"),
}
NOT_A_STEADY_STATE["NCCL-B200-4N-02"] = NOT_A_STEADY_STATE["NCCL-B200-4N-01"]


def collective_cases(rows):
    """nccl-tests busbw rows whose message size, GPU count and algorithm are known."""
    import re
    cases = []
    for r in rows:
        rid = r["id"]
        if r["metric"] != "busbw_gbps" or not rid.startswith("NCCL-"):
            continue
        family = rid.split("-")[1]
        if family not in COLLECTIVE_NODE:
            continue  # e.g. NCCL-A100-1: payload not stated
        if rid in NOT_A_STEADY_STATE:
            continue
        notes = r["notes"]
        m = re.search(r"(\d+)\s*(KiB|MiB|GiB)", notes)
        if not m:
            continue
        size = "%s %s" % (m.group(1), m.group(2))
        gpus = int(r["gpus"])
        op = "all-reduce"
        if "all-gather" in notes:
            op = "all-gather"
        elif "reduce-scatter" in notes:
            op = "reduce-scatter"
        algo = "ring" if ("NVLS_ENABLE=0" in notes or "NVLS off" in notes or
                          (rid.startswith("NCCL-H200-COLL") and "Ring" in notes)) else "auto"
        nodes, per = (gpus // 8, None) if gpus >= 8 else (1, gpus)
        cluster = "{node: %s, nodes: %d%s, op: %s, size: \"%s\", algo: %s}" % (
            COLLECTIVE_NODE[family], nodes, ", gpus_per_node: %d" % per if per else "", op, size, algo)
        cases.append({"folder": "collectives", "name": rid.lower(), "origin": "published-measurements.csv row " + rid,
                      "component": "collective", "block": cluster,
                      "source": "%s (%s)" % (notes.split(";")[0].split(",")[0], rid),
                      "measured": ("busbw", repr(float(r["value"]) * 1e9))})
    return cases


def component_text(case):
    """A component case (one collective, one MoE dispatch): its block under the component's key, then its one
    measured metric, the value already written as YAML."""
    metric, value = case["measured"]
    return "\n".join([
        "# Generated by tools/gen_validation_cases.py from %s; edit the script, not this file." % case["origin"],
        "name: %s" % case["name"],
        "%s: %s" % (case["component"], case["block"]),
        "measured:",
        "  source: %s" % yaml_str(case["source"]),
        "  %s: %s" % (metric, value),
        "  tolerance: %s" % fmt_num(case["tolerance"]),
    ]) + "\n"


DISPATCH_CSV = os.path.join(ROOT, "scenarios", "validation", "moe-dispatch-latency.csv")


def dispatch_cases(path):
    """One `dispatch:` case per row of moe-dispatch-latency.csv (in this repository, not ../shared): the measured
    time of one expert-parallel dispatch or combine, its shape and cluster as the row gives them (the
    `assumed` column names what the source does not state; its routing_groups and routing_group_top_k, where
    not empty, route each token group-limited)."""
    keys = ("node", "nodes", "gpus_per_node", "ep", "dispatcher", "op", "tokens", "hidden", "top_k", "experts",
            "bytes_per_element")
    optional = ("routing_groups", "routing_group_top_k")
    cases = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if int(r["nodes"]) * int(r["gpus_per_node"]) != int(r["ep"]):
                sys.exit("%s: %s: nodes * gpus_per_node != ep" % (path, r["id"]))
            cases.append({"folder": "moe-dispatch", "name": r["id"].lower(),
                          "origin": "scenarios/validation/moe-dispatch-latency.csv row " + r["id"],
                          "component": "dispatch",
                          "block": "{%s}" % ", ".join("%s: %s" % (k, r[k])
                                                      for k in keys + optional if k in keys or r[k]),
                          "source": "%s, %s (%s)" % (r["source"], r["table_row"], r["id"]),
                          "measured": ("time", yaml_str("%s us" % r["time_us"]))})
    return cases


RECIPES_CSV = os.path.join(ROOT, "scenarios", "validation", "moe-recipes.csv")
RECIPES_SOURCE = ("NVIDIA Megatron-LM examples/moe_recipes (commit 9c5258f109, 2026-08-11), README 'Recipe Index', "
                  "median TFLOP/s/GPU")
# The models' Megatron-LM arguments as the recipes give them (ARGS of each recipe file): what Megatron-LM's
# FLOP count reads, and the trainsim preset with the same shape.
RECIPE_MODELS = {
    "deepseek_v3": {"preset": "deepseek-v3", "mtp_layers": 1, "layers": 61, "hidden": 7168, "heads": 128,
                    "ffn": 18432, "moe_ffn": 2048, "shared_ffn": 2048, "top_k": 8, "dense_first": 3,
                    "vocab": 129280, "mla": {"q_lora": 1536, "kv_lora": 512, "qk": 128, "rope": 64, "v": 128}},
    "qwen3_235b": {"preset": "qwen3-235b-a22b", "mtp_layers": 0, "layers": 94, "hidden": 4096, "heads": 64,
                   "kv_groups": 4, "head_dim": 128, "ffn": 12288, "moe_ffn": 1536, "shared_ffn": 0, "top_k": 8,
                   "dense_first": 0, "vocab": 151936},
    "qwen3_30b": {"preset": "qwen3-30b-a3b", "mtp_layers": 0, "layers": 48, "hidden": 2048, "heads": 32,
                  "kv_groups": 4, "head_dim": 128, "ffn": 6144, "moe_ffn": 768, "shared_ffn": 0, "top_k": 8,
                  "dense_first": 0, "vocab": 151936},
}


def megatron_flops_per_token(m, seq):
    """FLOPs per token of one training step as Megatron-LM logs them (megatron/training/training.py,
    num_floating_point_operations -> transformer_flops, commit 9c5258f109; unpacked BSHD batches): 3 passes x 2
    FLOPs per multiply-add over every GEMM, causal attention scores counted at half, the MTP modules as layers
    (MoE layers when the last layer is one), their eh projection and norms, and one logit GEMM per head. The
    vocabulary is the padded one (the recipes' make_vocab_size_divisible_by gives the model's own)."""
    h, heads = m["hidden"], m["heads"]
    mtp = m["mtp_layers"]
    moe_layers = m["layers"] - m["dense_first"] + mtp  # the last layer is a MoE layer in all three
    dense_layers = m["dense_first"]
    layers = m["layers"] + mtp
    if "mla" in m:
        a = m["mla"]
        q = a["q_lora"] * (h + heads * (a["qk"] + a["rope"]) + 1)
        attn = 6 * (q + a["kv_lora"] * (h + heads * (a["qk"] + a["v"]) + 1) + h * a["rope"] + heads * a["v"] * h)
        core = 6 * (heads * (a["qk"] + a["rope"]) / 2 + heads * a["v"] / 2)
    else:
        qp, kvp = m["head_dim"] * heads, m["head_dim"] * m["kv_groups"]
        attn = 6 * (h * (qp + 2 * kvp) + qp * h)
        core = 6 * qp
    mlp = 6 * h * 3 * (m["ffn"] * dense_layers + (m["moe_ffn"] * m["top_k"] + m["shared_ffn"]) * moe_layers)
    return (mlp + attn * layers + 6 * mtp * (3 * h + 2 * h * h) + 6 * h * m["vocab"] * (mtp + 1) +
            seq * core * layers)


def megatron_stage_layers(layout, layers, pp):
    """Transformer layers per virtual pipeline stage from a recipe's `pipeline_split` column: Megatron-LM's
    --pipeline-model-parallel-layout string (E embedding, t a layer, m the MTP module, L the loss, | a stage
    boundary, (...)*n and t*n repeats), or --num-layers-per-virtual-pipeline-stage n with the embedding and
    the loss each counted as a layer (every recipe that gives n sets account_for_embedding_in_pipeline_split
    and account_for_loss_in_pipeline_split). A transcription of its own, beside the C++ importer's
    (scenarios/importers/megatron_patterns.cpp), so that the two can be checked against each other."""
    import re
    if layout.isdigit():
        n = int(layout)
        chunks = (layers + 2) // n
        if chunks * n != layers + 2 or chunks % pp:
            sys.exit("moe-recipes.csv: %d layers per virtual stage do not split %d layers + 2 over pp %d" %
                     (n, layers, pp))
        return [n - 1] + [n] * (chunks - 2) + [n - 1]
    text = layout
    while "(" in text:
        text = re.sub(r"\(([^()]*)\)\*(\d+)", lambda g: g.group(1) * int(g.group(2)), text)
    text = re.sub(r"t\*(\d+)", lambda g: "t" * int(g.group(1)), text)
    counts = [chunk.count("t") for chunk in text.split("|")]
    if sum(counts) != layers or len(counts) % pp:
        sys.exit("moe-recipes.csv: layout %s does not hold %d layers over pp %d" % (layout, layers, pp))
    return counts


def recipe_cases(path):
    """Megatron-LM's MoE recipes (moe-recipes.csv, a transcription of each recipe file's ARGS and ENV_VARS):
    every setting trainsim prices is the recipe's own; the README's median TFLOP/s/GPU becomes tokens/s/GPU
    with Megatron-LM's own FLOP count (megatron_flops_per_token). What every one of the 14 recipes sets alike
    is written here rather than in a column: seq_length 4096, expert_tensor_parallel_size 1,
    moe_router_force_load_balancing, use_distributed_optimizer (ZeRO-1), context_parallel_size 1."""
    cases = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            m = RECIPE_MODELS[r["model"]]
            gpus, tp, pp, ep = (int(r[k]) for k in ("gpus", "tp", "pp", "ep"))
            seq = 4096
            tokens = float(r["tflops_per_gpu"]) * 1e12 / megatron_flops_per_token(m, seq)
            stage_layers = megatron_stage_layers(r["pipeline_split"], m["layers"], pp) if r["pipeline_split"] else None
            chunks = len(stage_layers) // pp if stage_layers else 1
            modules = r["recompute_modules"].split()
            # Megatron-LM's own defaults where a recipe leaves a flag out (tp_comm_overlap, the overlaps off);
            # the paged stash sizes the experts' buffers ahead, so no layer waits on the host for its counts.
            framework = ("{preset: megatron-core, tp_comm_overlap: %s, overlap_param_gather: %s, moe_dispatcher: %s, "
                         "ep_comm_overlap: %s, delay_wgrad_compute: %s, cuda_graphs: %s, fused_grouped_mlp: %s%s%s}" % (
                             r["tp_comm_overlap"], r["overlap_param_gather"], r["moe_dispatcher"],
                             r["ep_comm_overlap"], r["delay_wgrad_compute"],
                             str(r["cuda_graph_scope"] == "full_iteration").lower(), r["fused_grouped_mlp"],
                             ", moe_host_sync: false" if r["moe_paged_stash"] == "true" else "",
                             ", moe_dispatcher_sms: %s" % r["moe_dispatcher_sms"] if r["moe_dispatcher_sms"] else ""))
            cases.append({
                "folder": "moe-recipes", "framework": framework, "name": r["id"].lower(),
                "origin": "scenarios/validation/moe-recipes.csv row " + r["id"],
                "source": "%s, %s: %s TFLOP/s/GPU = %.0f tokens/s/GPU at Megatron-LM's %.2f GFLOP a token (%s)" % (
                    RECIPES_SOURCE, r["recipe"], r["tflops_per_gpu"], tokens,
                    megatron_flops_per_token(m, seq) / 1e9, r["id"]),
                "model": {"preset": m["preset"], "seq_len": seq, "attention": "flash", "mtp_layers": m["mtp_layers"],
                          "routing": "force-balanced"},
                "cluster": {"node": r["node"], "nodes": gpus // int(r["gpus_per_node"]),
                            "gpus_per_node": int(r["gpus_per_node"])},
                "parallelism": {"tp": tp, "pp": pp, "dp": gpus // (tp * pp), "ep": ep, "expert_folding": True,
                                "expert_tp": 1, "schedule": "interleaved" if chunks > 1 else "1f1b",
                                "virtual_stages": chunks, "stage_layers": stage_layers,
                                "micro_batch": int(r["micro_batch"]), "sequence_parallel": tp > 1,
                                "recompute": "{modules: [%s]}" % ", ".join(modules) if modules else "none",
                                "offload": "{modules: [%s]}" % ", ".join(r["offload_modules"].split())
                                if r["offload_modules"] else None,
                                "zero": 1, "overlap_grad_reduce": r["overlap_grad_reduce"] == "true"},
                "training": {"global_batch": int(r["global_batch"]), "precision": r["precision"],
                             "fp8_recipe": r["fp8_recipe"] or None,
                             "state_precision": "bf16" if r["moments"] == "bf16" else None},
                "measured": [("tokens_per_s_per_gpu", round(tokens, 1))],
            })
    return cases


def read_tolerances(out):
    path = os.path.join(out, "tolerances.csv")
    result = {}
    if os.path.exists(path):
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if not r["reason"].strip():
                    sys.exit("%s: case %s has no reason for its tolerance" % (path, r["case"]))
                result[r["case"]] = float(r["tolerance"])
    return result


def write_tolerances(results_csv, out):
    """tolerances.csv from `trainsim validate --format csv` output (worst metric per case)."""
    import math
    worst = {}
    with open(results_csv, newline="") as f:
        for r in csv.DictReader(f):
            if not r["error"]:
                sys.exit("%s: case %s was not evaluated (%s); fix it before setting tolerances" %
                         (results_csv, r["case"], r["failure"]))
            e = float(r["error"])
            if r["case"] not in worst or abs(e) > abs(worst[r["case"]][0]):
                worst[r["case"]] = (e, r["group"])
    rows = []
    for case, (e, group) in sorted(worst.items()):
        tol = math.ceil(round((abs(e) + MARGIN) * 100, 6) / 5) * 5 / 100
        if tol > DEFAULT_TOLERANCE[group] + 1e-9:
            rows.append((case, "%.2f" % tol, "measured error %+.1f%% at calibration; %s" %
                         (100 * e, OUTLIER_REASON[group])))
    with open(os.path.join(out, "tolerances.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["case", "tolerance", "reason"])
        w.writerows(rows)
    print("wrote %d per-case tolerances to %s" % (len(rows), os.path.join(out, "tolerances.csv")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared", "validation"))
    ap.add_argument("--out", default=os.path.join(ROOT, "scenarios", "validation"))
    ap.add_argument("--tolerances-from", metavar="RESULTS.csv",
                    help="first write tolerances.csv from `trainsim validate --format csv` output")
    args = ap.parse_args()
    if args.tolerances_from:
        write_tolerances(args.tolerances_from, args.out)

    with open(os.path.join(args.shared, "published-measurements.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    cases = korthikanti_cases(rows) + megatron2020_cases(rows)
    cases += vtrain_cases(os.path.join(args.shared, "vtrain", "ground_truth_single.csv"), "vtrain-single")
    cases += vtrain_cases(os.path.join(args.shared, "vtrain", "ground_truth_multi.csv"), "vtrain-multi")
    cases += collective_cases(rows)
    cases += published_cases(PUBLISHED_CSV)
    cases += dispatch_cases(DISPATCH_CSV)
    cases += recipe_cases(RECIPES_CSV)

    overrides = read_tolerances(args.out)
    names = set()
    for folder in sorted({c["folder"] for c in cases}):
        shutil.rmtree(os.path.join(args.out, folder), ignore_errors=True)
        os.makedirs(os.path.join(args.out, folder))
    for c in cases:
        if c["name"] in names:
            sys.exit("gen_validation_cases: duplicate case name " + c["name"])
        names.add(c["name"])
        c["tolerance"] = overrides.pop(c["name"], DEFAULT_TOLERANCE[c["folder"]])
        with open(os.path.join(args.out, c["folder"], c["name"] + ".yaml"), "w") as f:
            f.write(component_text(c) if "component" in c else scenario_text(c))
    if overrides:
        sys.exit("tolerances.csv names cases that do not exist: " + ", ".join(sorted(overrides)))
    counts = {}
    for c in cases:
        counts[c["folder"]] = counts.get(c["folder"], 0) + 1
    print("wrote %d cases: %s" % (len(cases), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))


if __name__ == "__main__":
    main()
