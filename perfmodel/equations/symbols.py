"""Notation table: every symbol of the equations, named once, with its unit.

Hardware and profile symbols are bound from specs at evaluation time; operating-point symbols are
numpy arrays (one element per operating point). Architecture numbers (hidden size, heads, ...) are
substituted as integers when an expression is built for a model.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..model.vocabulary import kv_symbols  # noqa: F401 - re-exported for the equations


@dataclass(frozen=True)
class Sym:
    name: str
    unit: str
    meaning: str
    group: str  # operating_point | hardware | fabric | profile | format

    @property
    def s(self) -> sp.Symbol:
        return sp.Symbol(self.name, positive=True)


_TABLE = [
    # operating point
    Sym("B", "sequences", "sequences in flight per instance (decode batch)", "operating_point"),
    Sym("L", "tokens", "mean context length attended by a decode token", "operating_point"),
    Sym("q", "tokens", "tokens per sequence per decode step (1 + draft tokens)", "operating_point"),
    Sym("acc", "tokens", "accepted tokens per decode step (acceptance length, incl. bonus token)", "operating_point"),
    Sym("G", "GPUs", "GPUs per instance (one model replica)", "operating_point"),
    Sym("tp", "GPUs", "attention tensor-parallel degree", "operating_point"),
    Sym("ep", "GPUs", "expert-parallel degree", "operating_point"),
    Sym("pp", "stages", "pipeline-parallel stages", "operating_point"),
    Sym("isl", "tokens", "input tokens per request, cached prefix included", "operating_point"),
    Sym("osl", "tokens", "output tokens per request", "operating_point"),
    Sym("new", "tokens", "uncached input tokens per request (prefilled)", "operating_point"),
    Sym("f_cold", "1", "share of each decoding sequence's KV read straight from the host tier", "operating_point"),
    Sym("f_rp", "1", "share of requests whose cached prefix is reloaded from pooled HBM of other GPUs (scale-up)",
        "operating_point"),
    Sym("f_rl", "1", "share of requests whose cached prefix is reloaded from the host tier", "operating_point"),
    Sym("mix", "1", "1 = prefill mixed into decode steps (aggregated, chunked prefill); 0 = decode only", "operating_point"),
    Sym("T_pf", "tokens", "tokens per prefill step, per instance", "operating_point"),
    Sym("S_pf", "tokens", "new (uncached) tokens per prefilled sequence", "operating_point"),
    Sym("P_pf", "tokens", "cached prefix tokens per prefilled sequence", "operating_point"),
    Sym("L_max", "tokens", "context a sequence may reach (KV capacity per sequence)", "operating_point"),
    # hardware (per GPU, SI units)
    Sym("BW_hbm", "B/s", "HBM bandwidth", "hardware"),
    Sym("C_hbm", "B", "usable HBM capacity", "hardware"),
    Sym("F_bf16", "FLOP/s", "dense BF16 tensor throughput", "hardware"),
    Sym("F_fp8", "FLOP/s", "dense FP8 tensor throughput", "hardware"),
    Sym("F_x", "FLOP/s", "dense tensor throughput in the FFN/expert weight format", "hardware"),
    Sym("F_a", "FLOP/s", "dense tensor throughput in the attention weight format", "hardware"),
    Sym("q_x", "1", "1 if FFN/expert GEMMs run on FP4 tensor cores, else 0", "hardware"),
    Sym("q_a", "1", "1 if attention-format GEMMs run on FP4 tensor cores, else 0", "hardware"),
    Sym("n_sm", "SMs", "streaming multiprocessors (compute units) that GEMM tiles are scheduled on", "hardware"),
    Sym("BW_link", "B/s", "scale-up bandwidth per direction", "hardware"),
    Sym("lat_link", "s", "scale-up one-way latency", "hardware"),
    Sym("BW_nic", "B/s", "scale-out NIC bandwidth per direction", "hardware"),
    Sym("D_dom", "GPUs", "GPUs in one scale-up domain", "hardware"),
    Sym("BW_host", "B/s", "GPU-host link bandwidth per direction", "hardware"),
    Sym("BW_hmem", "B/s", "host memory bandwidth per GPU", "hardware"),
    # collective algorithm latencies per fabric (NCCL's tuning model; equations/collectives.py)
    Sym("a_ring", "s", "base latency of an NCCL ring all-reduce", "fabric"),
    Sym("h_nvl", "s", "latency per NCCL ring step over the scale-up link", "fabric"),
    Sym("h_net", "s", "latency per NCCL ring step (and per all-to-all hop) over the scale-out network", "fabric"),
    Sym("a_nvls", "s", "latency of an in-switch (NVLS) all-reduce inside one scale-up domain", "fabric"),
    # kernel floors and shapes fitted on the measured kernel tables (perfmodel kernels; engine/kernel_bind.py);
    # without a fit for the GPU and engine they take the values that leave the equations as before
    Sym("q_arf", "1", "1 where the GPU has a custom all-reduce fit for the engine (it replaces t_coll on "
        "all-reduces), else 0", "kernel"),
    Sym("q_ggf", "1", "1 where the GPU has a fused-MoE fit for the engine (e_ggk replaces e_gg), else 0", "kernel"),
    Sym("t_gemm0", "s", "launch floor of one GEMM-class kernel (the engine's BF16 GEMM fit at zero size)", "kernel"),
    Sym("t_attn0", "s", "launch floor of the decode attention kernel (its fit at zero size)", "kernel"),
    Sym("t_moe0", "s", "launch floor of the fused MoE block (routing + grouped GEMMs, its fit at zero size)",
        "kernel"),
    Sym("a_1s", "s", "one-shot all-reduce latency at n = 1 (n^g_1s growth); default 2 lat_link", "kernel"),
    Sym("g_1s", "1", "growth exponent of the one-shot latency with the group", "kernel"),
    Sym("a_2s", "s", "two-shot all-reduce latency at n = 1 (n^g_2s growth); default 3 lat_link", "kernel"),
    Sym("g_2s", "1", "growth exponent of the two-shot latency with the group", "kernel"),
    Sym("e_ggk", "1", "grouped-GEMM plateau rate over the dense GEMM rate of the same format (MoE fit / GEMM fit)",
        "kernel"),
    Sym("tpe_h", "tokens", "tokens per active local expert at half grouped-GEMM efficiency", "kernel"),
    Sym("g_etp", "1", "expert-TP penalty exponent of the grouped GEMM: efficiency x moe_tp^-g_etp", "kernel"),
    Sym("g_mh", "rows", "rows at half dense-GEMM compute efficiency (narrow MMA), the median m_half of the engine's "
        "GEMM fits on the GPU in the format; 0 where the profile does not switch on gemm_kernel_band", "kernel"),
    Sym("g_bc", "1", "compute loss exponent of a dense GEMM launch with fewer tiles than SMs (median beta_c of the "
        "same fits): efficiency x min(1, tiles / n_sm)^g_bc; 0 without gemm_kernel_band", "kernel"),
    # profile
    Sym("e_w", "1", "achieved fraction of HBM bandwidth streaming weights", "profile"),
    Sym("e_kv", "1", "achieved fraction of HBM bandwidth reading KV", "profile"),
    Sym("e_mm", "1", "achieved fraction of tensor FLOP/s in GEMMs", "profile"),
    Sym("e_mm4", "1", "achieved fraction of FP4 tensor FLOP/s in 4-bit GEMMs", "profile"),
    Sym("e_at", "1", "achieved fraction of tensor FLOP/s in prefill (context) attention", "profile"),
    Sym("e_atd", "1", "achieved fraction of tensor FLOP/s in decode attention (on the MMA rows issued)", "profile"),
    Sym("q_mlapad", "1", "1 where the profile switches on mla_decode_row_tiles (MLA decode issues 64-row MMA "
        "tiles), else 0", "profile"),
    Sym("e_gg", "1", "grouped (MoE expert) GEMM rate relative to a dense GEMM of the same format", "profile"),
    Sym("M_t", "tokens", "largest row tile of a GEMM (a GEMM's rows are padded to a multiple above it)", "profile"),
    Sym("m_min", "tokens", "smallest row tile of a GEMM (fewer tokens are padded to it)", "profile"),
    Sym("N_t", "columns", "output columns per GEMM tile", "profile"),
    Sym("e_ln", "1", "achieved fraction of link bandwidth", "profile"),
    Sym("ovl", "1", "share of link time hidden behind compute", "profile"),
    Sym("t_coll", "s", "software latency per collective", "profile"),
    Sym("n_cus", "GPUs", "largest group the engine's custom one-/two-shot all-reduce serves (larger: NCCL)", "profile"),
    Sym("t_floor", "s", "minimum time of one layer per step", "profile"),
    Sym("t_kern", "s", "fixed cost per kernel launched (launch gap, tail, sync), x kernels per layer", "profile"),
    Sym("r_kf", "1", "share of the kernels' fitted launch floors a step pays in series (kernel_floor_share)",
        "profile"),
    Sym("t_step", "s", "CPU/scheduler overhead per step", "profile"),
    Sym("q_os", "1", "share of the CPU step time the engine's overlap scheduler hides behind the GPU's (0: it adds)", "profile"),
    Sym("t_seq", "s", "CPU time per sequence in flight per step (scheduling, sampling, detokenization)", "profile"),
    Sym("t_req", "s", "request overhead outside the GPU before the first token (API, tokenization, admission)",
        "profile"),
    Sym("N_ch", "tokens", "chunked-prefill token budget per step", "profile"),
    Sym("phi", "1", "share of closed-loop arrivals in synchronized waves of all clients (TTFT queueing)", "profile"),
    Sym("imb", "1", "MoE routing skew: busiest EP rank load / mean at large batch (hot experts)", "profile"),
    Sym("s_dec", "1", "decode kernel speed-up factor", "profile"),
    Sym("s_pf", "1", "prefill kernel speed-up factor", "profile"),
    Sym("N_run", "1", "most sequences one scheduler (attention-DP rank) runs at once (max_num_seqs, max_running_requests, max_batch_size)", "profile"),
    Sym("C_ws", "B", "HBM workspace per GPU", "profile"),
    Sym("f_mem", "1", "the engine's memory fraction (of all HBM, or with q_free = 1 of what weights leave)", "profile"),
    Sym("q_free", "1", "1 if the memory fraction applies to HBM left after weights and workspace (TensorRT-LLM)",
        "profile"),
    Sym("q_res", "1", "1 if a request reserves KV for isl + osl on admission (no-evict scheduling), 0 if paged "
        "on demand", "profile"),
    # number formats
    Sym("b_x", "B/elem", "bytes per FFN/expert weight element", "format"),
    Sym("b_a", "B/elem", "bytes per attention/dense weight element", "format"),
    Sym("b_e", "B/elem", "bytes per embedding / LM-head element", "format"),
    Sym("b_act", "B/elem", "bytes per activation element on links (combine, all-reduce)", "format"),
    Sym("b_dsp", "B/elem", "bytes per activation element in EP dispatch", "format"),
]

TABLE: dict[str, Sym] = {s.name: s for s in _TABLE}
S = {name: sym.s for name, sym in TABLE.items()}


def notation_markdown() -> str:
    """The notation table as Markdown (for docs and `perfmodel explain`)."""
    rows = ["| symbol | unit | meaning | bound from |", "|---|---|---|---|"]
    rows += [f"| `{s.name}` | {s.unit} | {s.meaning} | {s.group} |" for s in _TABLE]
    rows.append("| `E_j`, `I_j`, `R_j` | B | KV entry, indexer key and fixed state bytes of attention kind j | format |")
    return "\n".join(rows)
