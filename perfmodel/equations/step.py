"""Step time of decode and prefill, summed over the model's layer schedule.

Per GPU of an instance with G GPUs, attention TP ``tp``, expert parallel ``ep``, pipeline ``pp``:
    dp = G / (tp pp)      attention data-parallel groups      moe_tp = G / (pp ep)
A decode step processes, per pipeline micro-batch, B/pp sequences x q tokens plus n_pf mixed-in prefill
tokens, n_pf = mix (B - 1) acc new / osl: the other B - 1 requests finishing per step times their replacements'
uncached input (a request's own prefill is in its TTFT, not in the steps it decodes in; at B = 1 there is none).
Attention-DP ranks: decode tokens split evenly, T_gpu = T_dec/dp + n_pf/dp_pf with
dp_pf = min(dp, max(1, n_pf/new)): a request is prefilled on one rank and the ranks synchronize at each
MoE all-to-all, so the step waits for the busiest rank.
For each layer group (n layers of attention kind A and FFN kind F):
    GEMM rates F e, e = e_mm, or e_mm4 for formats on FP4 tensor cores (gemm_eff); a GEMM's compute time is
                           its issued work (token rows padded to M_t-row tiles, tiles over n_sm SMs in waves:
                           gemm_shape.py) over F e (dense GEMMs: F e s, s the kernel tables' small-M loss,
                           1 unless the profile switches on gemm_kernel_band); its FLOP tally counts the useful work
    attention projections: 2 P_A T/(dp tp) FLOPs at F_a;   P_A b_a / tp bytes
    attention core:        [B q core_A(L) + n_pf core_A(L_pf)] / (pp dp tp) FLOPs at F_bf16, indexer at F_fp8;
                           B/(pp dp) kv_read_A(L) / shard_A + T/dp kv_write_A / shard_A bytes, plus the bytes
                           every TP rank reads and writes in full (a block indexer's index keys): B/(pp dp)
                           rep_read_A(L) + T/dp rep_write_A
    dense FFN / shared:    2 P_d T/(dp tp) FLOPs at F_x;       P_d b_x / tp bytes
    routed experts:        2 P_e T k imb l(T) / (ep moe_tp) FLOPs at F e e_grouped;  D_max(T) P_e b_x / moe_tp
                           bytes (busiest EP rank: l = random-routing load spread, D_max = its distinct experts;
                           ffn.py; the hot-expert skew imb applies across EP ranks only, ep > 1; e_grouped = the
                           grouped GEMM's rate relative to a dense GEMM of the same format, a function of the
                           tokens per active local expert and the expert-TP width: ffn.grouped_gemm_efficiency)
    links: TP all-reduce after attention and after the FFN when tp > 1. The MoE exchange exists only with
           attention-DP (dp > 1; under TP attention every GPU already holds every token). Decode (flat
           all-to-all): each GPU receives T (1 - (1 - 1/ep)^k)(1 - 1/dp) d (b_dsp + b_act) bytes, the non-local
           tokens routed to its expert group, at the blended scale-up/NIC bandwidth. Prefill (throughput
           all-to-all, e.g. DeepEP normal mode): each token crosses the NIC once per remote domain it is routed
           to (r_dom, bounded by group-limited routing) and the same deduplicated copies as in decode fan out
           over the scale-up link; t = max(T_gpu r_dom d b / BW_nic, a2a / BW_link) / e_ln
    layer = max(t_floor, kernels / s_dec) + link (1 - overlap share) + 2 lat_AR(tp, T_gpu d b_act)
            + 2 [dp > 1] lat_A2A + (collectives - q_arf 2 [tp > 1]) t_coll + t_kern n_kern + r_kf kernel floors
            (kernel floors = t_gemm0 n_kern + (t_attn0 - t_gemm0) + [MoE] (t_moe0 - 7 t_gemm0): the launch floors
            of the layer's kernels fitted on the kernel tables of the GPU and engine, 0 without a fit; r_kf the
            share of them a step pays in series (profile kernel_floor_share, calibrated; 0 = hidden by CUDA graphs
            and overlapped launches), t_kern the per-kernel cost on top; a fitted custom all-reduce (q_arf = 1)
            carries its own software latency, so t_coll applies to the other collectives)
            (lat_AR: the fastest all-reduce algorithm the engine has for that group and message, lat_A2A: one
            scale-up hop plus a NIC hop across domains; collectives.py)   (n_kern = kernels the layer launches: attention + FFN + norms; layer_kernels)
step = gpu + cpu - q_os min(cpu, gpu),  gpu = sum over layers (each pipeline stage in turn) + LM head + draft passes
       + (pp-1) lat_link,  cpu = t_step + (B/dp) t_seq (each attention-DP rank schedules its own B/dp sequences, the
       ranks in parallel; an overlap scheduler, q_os = 1, prepares the next step while the GPU runs this one)
       + host-link time (Engram lookups, KV reloads, cold KV reads; overlapped like links)
       + pooled-HBM reloads over the scale-up link.
Draft passes (speculative decoding): ceil((q-1)/block) passes of the MTP layers and the LM head.
Prefill of T_pf tokens (sequences of S_pf new tokens after P_pf cached) uses the same terms in
prefill form (expanded MLA), attention context P_pf + S_pf/2, kernels divided by s_pf.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..model import FFNFamily, attention_families, ffn_families
from ..model.ffn import RoutedExperts
from ..model.moe import MOE_KERNELS
from ..model.residual import ResidualFamily
from ..specs.model import ModelSpec
from .collectives import allreduce_latency, alltoall_latency
from .ffn import grouped_gemm_efficiency
from .gemm_shape import dense_issued_flops, grouped_issued_flops, small_m_efficiency
from .roofline import Tally, allreduce_bytes, collective_bandwidth, indicator_gt1, smax, smin
from .symbols import S

NORM_KERNELS = 2   # pre-attention and pre-FFN RMSNorm, each fused with its residual add


@dataclass
class Phase:
    """Token counts of one pass through the layers, per pipeline micro-batch and instance."""

    seqs: sp.Expr        # sequences whose KV is read (decode) or prefilled
    dec_tokens: sp.Expr  # query tokens in decode form (absorbed MLA), context L_dec
    pf_tokens: sp.Expr   # query tokens in prefill form, context L_pf
    L_dec: sp.Expr
    L_pf: sp.Expr
    kv_ctx: sp.Expr      # context whose KV each sequence reads
    logits: sp.Expr      # tokens that need the LM head
    speedup: sp.Expr
    hierarchical_ep: bool = False  # EP all-to-all in throughput form (one NIC copy per remote domain)
    pf_unit: sp.Expr = sp.Integer(1)  # prefill tokens per request (a request is prefilled on one DP rank)
    cold: sp.Expr = sp.Integer(0)     # share of KV read from the host tier (decode)


@dataclass
class Links:
    """The collectives of one layer, per GPU: bytes sent, transfer time (s), collective count, software latency
    (s)."""

    bytes: sp.Expr
    time: sp.Expr
    count: sp.Expr
    latency: sp.Expr

    def plus(self, other: Links) -> Links:
        """Both sets of collectives, term by term."""
        return Links(self.bytes + other.bytes, self.time + other.time, self.count + other.count,
                     self.latency + other.latency)


class StepBuilder:
    """Builds sympy expressions for one model. Architecture numbers are constants; the rest are symbols."""

    def __init__(self, m: ModelSpec):
        self.m = m
        self.h = m.hidden_size
        self.attn = attention_families(m)
        self.attn_params = {n: A.params(self.h) for n, A in self.attn.items()}
        self.ffn = ffn_families(m)
        self.residual = ResidualFamily(m.residual, m.hidden_size)
        s = S
        self.dp = s["G"] / (s["tp"] * s["pp"])
        self.moe_tp = s["G"] / (s["pp"] * s["ep"])
        self.bw_coll = collective_bandwidth()

    # ------------------------------------------------------------------ one layer
    def layer(self, attn: str, ffn: str, ph: Phase, tally: Tally, weight,
              mhc: bool = True) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
        """Adds ``weight`` layers' kernels to ``tally``; returns (floor excess, link time, latency), seconds.
        ``mhc`` False: a block without the model's mHC stream mixing (a plain pre-norm MTP block, Motif-3).

        The busiest GPU's tokens through attention and the dense blocks: decode tokens split evenly over the dp
        ranks, a prefill request stays on one rank (``prefill_ranks``):  T_gpu = T_dec / dp + T_pf / dp_pf.
        Kernels: attention (``attention_kernels``), dense FFN, routed experts, mHC; links: the TP all-reduces
        (``tp_allreduce``) plus, for MoE, the expert exchange (``moe_exchange``); the fixed part: ``layer_latency``.
        """
        F = self.ffn[ffn]
        dp_pf = self.prefill_ranks(ph)
        T_gpu = ph.dec_tokens / self.dp + ph.pf_tokens / dp_pf
        kernels = self.attention_kernels(attn, ph, dp_pf, T_gpu, tally, weight)
        if F.dense_params:
            kernels.append(self.dense_ffn_kernel(F, T_gpu, tally, weight))
        links = self.tp_allreduce(T_gpu)
        moe = F.routed()
        if moe is not None:
            kernels.append(self.expert_kernel(moe, ph, tally, weight))
            links = links.plus(self.moe_exchange(moe, ph, T_gpu))
        if self.residual.is_mhc and mhc:
            kernels.append(self.mhc_kernel(T_gpu, tally, weight))
        kern_time = 0
        for name, c, mem in kernels:
            tally.add(name, c / ph.speedup, mem / ph.speedup, weight)
            kern_time += smax(c, mem) / ph.speedup
        return self.layer_latency(attn, ffn, kern_time, links, tally, weight, mhc)

    def gemm_rate(self, F_):
        """Achieved GEMM rate for the rate symbol F_x or F_a, FLOP/s:  F e  (e = ``gemm_eff``)."""
        return F_ * self.gemm_eff(F_)

    def attention_kernels(self, attn: str, ph: Phase, dp_pf, T_gpu, tally: Tally, weight) -> list:
        """The attention kernels of one layer, [(name, compute s, memory s)] at unit speedup, and their tallies.

        Projections: issued GEMM work of P_A/tp weights over T_gpu rows at F_a e s (s the small-M loss,
        gemm_shape.small_m_efficiency; useful 2 P_A T_gpu / tp FLOPs), P_A b_a / tp bytes at BW_hbm e_w. Core (per busiest rank): decode tokens T_dec/dp at context L_dec in
        decode form, padded to whole MMA row tiles, at e_atd; prefill tokens T_pf/dp_pf at L_pf in prefill form at
        e_at; core FLOPs at tp F_bf16, indexer FLOPs at tp F_fp8. KV bytes (BW_hbm e_kv):
            [seqs/dp kv_read(kv_ctx) (1 - f_cold) + T_gpu kv_write] / shard
        the share f_cold read from the host tier instead (tallied as bytes_host_cold).
        """
        s, A, tp, dp = S, self.attn[attn], S["tp"], self.dp
        p_a = self.attn_params[attn]
        kernels = [("attn_proj", dense_issued_flops(p_a / tp, T_gpu, self.h)
                    / (self.gemm_rate(s["F_a"]) * small_m_efficiency(p_a / tp, T_gpu, self.h)),
                    p_a * s["b_a"] / tp / (s["BW_hbm"] * s["e_w"]))]
        tally.count("flops_gemm_attn", 2 * p_a * T_gpu / tp, weight)
        tally.count("bytes_weights", p_a * s["b_a"] / tp, weight)
        core_dec = ph.dec_tokens / dp * A.core_flops(ph.L_dec, "decode")       # per rank, busiest
        core_pf = ph.pf_tokens / dp_pf * A.core_flops(ph.L_pf, "prefill")
        idx_dec = ph.dec_tokens / dp * A.index_flops(ph.L_dec)
        idx_pf = ph.pf_tokens / dp_pf * A.index_flops(ph.L_pf)
        # decode attention issues whole MMA row tiles (MLA: q_len x H/tp rows per sequence, 64 a tile)
        # (q_mlapad = 1 where the profile switches on mla_decode_row_tiles, else 0: the useful FLOPs)
        pad_dec = sp.Integer(1) if ph.dec_tokens == 0 else A.decode_row_padding(ph.dec_tokens / ph.seqs, tp)
        issued_dec = core_dec + s["q_mlapad"] * (core_dec * pad_dec - core_dec)
        shard = A.shard(tp)
        # a share f_cold of each sequence's KV is read from the host tier (over the host link) instead of HBM
        kv_hbm = ph.seqs / dp * A.kv_read(ph.kv_ctx) * (1 - ph.cold)
        # bytes every rank holds in full beside the split ones (a block indexer's index keys; 0 for other kinds)
        rep_read = ph.seqs / dp * A.replicated_read(ph.kv_ctx) * (1 - ph.cold)
        rep_write = T_gpu * A.replicated_write()
        kv_bytes = (kv_hbm + T_gpu * A.kv_write()) / shard + rep_read + rep_write
        tally.count("bytes_host_cold", ph.seqs / dp * (A.kv_read(ph.kv_ctx) / shard + A.replicated_read(ph.kv_ctx))
                    * ph.cold, weight)
        tally.count("flops_attention_core", (core_dec + core_pf) / tp, weight)
        tally.count("flops_indexer", (idx_dec + idx_pf) / tp, weight)
        tally.count("bytes_kv_read", kv_hbm / shard + rep_read, weight)
        tally.count("bytes_kv_write", T_gpu * A.kv_write() / shard + rep_write, weight)
        # decode and prefill attention at their own efficiencies (profile eff_attention_decode, eff_attention)
        kernels.append(("attn_core",
                        (issued_dec / s["e_atd"] + core_pf / s["e_at"]) / (tp * s["F_bf16"])
                        + (idx_dec / s["e_atd"] + idx_pf / s["e_at"]) / (tp * s["F_fp8"]),
                        kv_bytes / (s["BW_hbm"] * s["e_kv"])))
        return kernels

    def dense_ffn_kernel(self, F: FFNFamily, T_gpu, tally: Tally, weight) -> tuple:
        """The dense FFN (or shared experts) of one layer, (name, compute s, memory s), and its tallies:
        issued GEMM work of P_d/tp weights over T_gpu rows at F_x e s (useful 2 P_d T_gpu / tp FLOPs);
        P_d b_x / tp bytes at BW_hbm e_w."""
        s, tp = S, S["tp"]
        kernel = ("ffn", dense_issued_flops(F.dense_params / tp, T_gpu, self.h)
                  / (self.gemm_rate(s["F_x"]) * small_m_efficiency(F.dense_params / tp, T_gpu, self.h)),
                  F.dense_params * s["b_x"] / tp / (s["BW_hbm"] * s["e_w"]))
        tally.count("flops_gemm_ffn", 2 * F.dense_params * T_gpu / tp, weight)
        tally.count("bytes_weights", F.dense_params * s["b_x"] / tp, weight)
        return kernel

    def expert_kernel(self, F: RoutedExperts, ph: Phase, tally: Tally, weight) -> tuple:
        """The routed experts on the busiest EP rank, (name, compute s, memory s), and their tallies.

        Routed pairs there: T k imb' l(T) / ep, imb' = 1 + (imb - 1)[ep > 1] (the hot-expert skew exists only
        across EP ranks; with ep = 1 every GPU holds a slice of every expert and the load is even), l the random
        routing spread (ffn.py). Compute: the grouped GEMM's issued work over F_x e e_grouped (useful
        2 P_e pairs / moe_tp FLOPs); memory: D_max(T) P_e b_x / moe_tp bytes at BW_hbm e_w."""
        s, ep, mtp = S, S["ep"], self.moe_tp
        T = ph.dec_tokens + ph.pf_tokens
        skew = 1 + (s["imb"] - 1) * indicator_gt1(ep)
        pairs = T * F.f.top_k * skew * F.busiest_rank_load(T, ep) / ep
        active = F.busiest_rank_experts(T, ep)
        ex_flops = 2 * F.expert_params * pairs / mtp
        ex_bytes = active * F.expert_params * s["b_x"] / mtp
        ex_issued = grouped_issued_flops(F.expert_params / mtp, pairs, active, F.dispatch_dim)
        e_grouped = grouped_gemm_efficiency(pairs, active, mtp)
        tally.count("flops_gemm_ffn", ex_flops, weight)
        tally.count("bytes_weights", ex_bytes, weight)
        return ("experts", ex_issued / (self.gemm_rate(s["F_x"]) * e_grouped), ex_bytes / (s["BW_hbm"] * s["e_w"]))

    def mhc_kernel(self, T_gpu, tally: Tally, weight) -> tuple:
        """mHC's extra residual traffic, (name, 0, memory s): (streams - 1) streams read and written around
        attention and the FFN, (streams - 1) 4 d b_act T_gpu bytes at BW_hbm e_w."""
        s = S
        extra = self.residual.extra_bytes_per_token(s["b_act"]) * T_gpu
        tally.count("bytes_activations", extra, weight)
        return ("mhc", 0, extra / (s["BW_hbm"] * s["e_w"]))

    def tp_allreduce(self, T_gpu) -> Links:
        """The TP all-reduces after attention and after the FFN (none at tp = 1): 2 ring all-reduces of
        T_gpu d b_act bytes at the collective bandwidth times e_ln, 2 [tp > 1] collectives, latency
        2 lat_AR(tp, T_gpu d b_act)."""
        s, tp = S, S["tp"]
        nbytes = allreduce_bytes(tp, T_gpu * self.h * s["b_act"]) * 2
        return Links(nbytes, nbytes / (self.bw_coll * s["e_ln"]), 2 * indicator_gt1(tp),
                     2 * allreduce_latency(tp, T_gpu * self.h * s["b_act"]))

    def moe_exchange(self, F: RoutedExperts, ph: Phase, T_gpu) -> Links:
        """The MoE all-to-all (dispatch and combine), which exists only with attention-DP (dp > 1).

        Tokens live on their attention-DP rank; with dp = 1 (TP attention) every GPU already holds every token
        and the FFN all-reduce is the only exchange. With dp > 1 each GPU receives the tokens routed to its
        expert group that are not local, and returns their partial outputs (flat all-to-all):
            a2a = T (1 - (1 - 1/ep)^k) (1 - 1/dp) d (b_dsp + b_act)  bytes per GPU,  time a2a / (BW_coll e_ln)
        (ep = 1: an all-gather of all tokens for the expert slices; ep = G: one copy per distinct rank).
        Throughput form (``hierarchical_ep``): each token crosses the NIC once per remote domain,
        nic = [dp > 1] T_gpu / tp d (b_dsp + b_act) r_dom, and the same copies fan out over the scale-up link:
        time max(nic / (BW_nic e_ln), a2a / (BW_link e_ln)). Collectives 2 [dp > 1], latency 2 [dp > 1] lat_A2A.
        """
        s, ep, dp = S, S["ep"], self.dp
        T = ph.dec_tokens + ph.pf_tokens
        needs = indicator_gt1(dp)
        reach = 1 - (1 - 1 / ep) ** F.f.top_k    # share of tokens routed to a given expert group
        a2a = T * reach * (1 - 1 / dp) * F.dispatch_dim * (s["b_dsp"] + s["b_act"])
        if ph.hierarchical_ep:
            nic = needs * T_gpu / s["tp"] * F.dispatch_dim * (s["b_dsp"] + s["b_act"]) * self.remote_domains(F)
            nbytes = nic + a2a
            time = smax(nic / (s["BW_nic"] * s["e_ln"]), a2a / (s["BW_link"] * s["e_ln"]))
        else:
            nbytes = a2a
            time = a2a / (self.bw_coll * s["e_ln"])
        return Links(nbytes, time, 2 * needs, 2 * needs * alltoall_latency())

    def layer_latency(self, attn: str, ffn: str, kern_time, links: Links, tally: Tally,
                      weight, mhc: bool = True) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
        """(floor excess, visible link time, latency) of ``weight`` layers, seconds, and their tallies:
            floor excess = max(0, t_floor - kernels)
            link         = t_link - ovl min(t_link, kernels)
            latency      = lat + (n_coll - q_arf 2 [tp > 1]) t_coll + t_kern n_kern + r_kf kernel floors
        (a fitted custom all-reduce, q_arf = 1, carries its own software latency: t_coll stays on the other
        collectives; the kernels' fitted launch floors count with the profile's share r_kf: kernel_bind.py)."""
        s = S
        floor_excess = smax(0, s["t_floor"] - kern_time)
        tally.count("bytes_link", links.bytes, weight)
        tally.count("collectives", links.count, weight)
        link_visible = links.time - s["ovl"] * smin(links.time, kern_time)
        n_ar = 2 * indicator_gt1(s["tp"])
        coll = links.latency + (links.count - s["q_arf"] * n_ar) * s["t_coll"]
        # the fixed part of the layer, part by part: gaps between its kernels as the engine launches them (profile)
        # and the kernels' execution floors measured on this GPU (hardware kernel tables, share r_kf in series)
        gap = s["t_kern"] * self.layer_kernels(attn, ffn, mhc)
        kfloor = s["r_kf"] * self.kernel_floors(attn, ffn, mhc)
        launch = gap + kfloor
        tally.count("lat_collective", coll, weight)      # the latency split, for the curve-end contributors
        tally.count("lat_launch", launch, weight)
        tally.count("lat_kernel_gap", gap, weight)
        tally.count("lat_kernel_floor", kfloor, weight)
        tally.count("lat_floor_excess", floor_excess, weight)
        return weight * floor_excess, weight * link_visible, weight * (coll + launch)

    def kernel_floors(self, attn: str, ffn: str, mhc: bool = True):
        """Launch floors of one layer's kernels from the kernel fits (0 without a fit): every kernel at the GEMM
        floor, except the attention core at the decode-attention floor and the routed MoE block at the fused-MoE
        floor:  t_gemm0 n_kern + (t_attn0 - t_gemm0) + [MoE] (t_moe0 - MOE_KERNELS t_gemm0)."""
        s = S
        out = s["t_gemm0"] * self.layer_kernels(attn, ffn, mhc) + (s["t_attn0"] - s["t_gemm0"])
        if self.ffn[ffn].is_moe:
            out += s["t_moe0"] - MOE_KERNELS * s["t_gemm0"]
        return out

    @staticmethod
    def gemm_eff(F_):
        """Achieved GEMM efficiency for the rate symbol F_x or F_a: e_mm, or e_mm4 where that format runs on FP4
        tensor cores (q = 1):  e = e_mm + q (e_mm4 - e_mm)."""
        s = S
        q = s["q_x"] if F_ == s["F_x"] else s["q_a"]
        return s["e_mm"] + q * (s["e_mm4"] - s["e_mm"])

    def layer_kernels(self, attn: str, ffn: str, mhc: bool = True) -> int:
        """Kernels of one layer: its attention and FFN kernels plus NORM_KERNELS (the two RMSNorm + residual
        adds) and, with mHC, MHC_KERNELS (stream mixing before attention and before the FFN)."""
        n = self.attn[attn].kernels + self.ffn[ffn].kernels + NORM_KERNELS
        return n + (self.residual.kernels if mhc else 0)

    def lm_head(self, ph: Phase, tally: Tally, weight=1):
        s = S
        p = self.m.vocab_size * self.h
        tally.count("flops_gemm_attn", 2 * p * ph.logits / self.dp / S["tp"], weight)
        tally.count("bytes_weights", p * s["b_e"] / s["tp"], weight)
        issued = dense_issued_flops(p / s["tp"], ph.logits / self.dp, self.h)
        small_m = small_m_efficiency(p / s["tp"], ph.logits / self.dp, self.h)
        tally.add("lm_head", issued / (s["F_a"] * self.gemm_eff(s["F_a"]) * small_m) / ph.speedup,
                  p * s["b_e"] / s["tp"] / (s["BW_hbm"] * s["e_w"]) / ph.speedup, weight)

    def prefill_ranks(self, ph: Phase):
        """Attention-DP ranks that share a step's prefill tokens: min(dp, max(1, requests in the step)).

        Each prefill request (pf_unit tokens) runs on one DP rank and the ranks synchronize at every MoE
        all-to-all, so when fewer requests than ranks are prefilled per step the busiest rank carries them.
        """
        return smin(self.dp, smax(1, ph.pf_tokens / ph.pf_unit))

    def remote_domains(self, F: RoutedExperts):
        """Expected scale-up domains other than its own that one token is sent to (throughput all-to-all).

        The instance spans n = max(1, G / D_dom) domains. A token's experts are m draws over them,
        m = min(k, route_groups max(1, n / expert_groups)) under group-limited routing, else k;
        distinct remote domains touched = (n - 1) (1 - (1 - 1/n)^m)  (uniform routing).
        """
        s, f = S, F.f
        n = smax(1, s["G"] / s["D_dom"])
        m = sp.Integer(f.top_k)
        if f.route_groups and f.expert_groups:
            m = smin(m, f.route_groups * smax(1, n / f.expert_groups))
        return (n - 1) * (1 - (1 - 1 / n) ** m)

    # ------------------------------------------------------------------ whole passes
    def _pass(self, ph: Phase, layers, tally: Tally):
        floor = link = lat = 0
        for attn, ffn, n in layers:
            f, l_, la = self.layer(attn, ffn, ph, tally, n)
            floor, link, lat = floor + f, link + l_, lat + la
        return floor, link, lat

    def schedule(self):
        return [(g.attention, g.ffn, g.count) for g in self.m.layers]

    def decode(self) -> dict[str, sp.Expr]:
        """One decode step (step_s) and its breakdown, seconds; plus throughput per GPU. TPOT = step_s / acc."""
        s = S
        B, q, pp = s["B"], s["q"], s["pp"]
        n_pf = s["mix"] * (B - 1) * s["acc"] * s["new"] / s["osl"]
        ph = Phase(seqs=B / pp, dec_tokens=B * q / pp, pf_tokens=n_pf / pp, L_dec=s["L"],
                   L_pf=s["isl"] - s["new"] / 2, kv_ctx=s["L"], logits=B * q / pp, speedup=s["s_dec"],
                   pf_unit=smax(s["new"], 1), cold=s["f_cold"])
        main = Tally()
        floor, link, lat = self._pass(ph, self.schedule(), main)
        self.lm_head(ph, main)
        # draft passes (MTP / DSpark / EAGLE-style head): ceil((q-1)/block) passes
        draft = Tally()
        mtp = self.m.mtp
        if mtp is not None:
            d_attn, d_ffn, d_layers, block = mtp.attention, mtp.ffn, mtp.layers, mtp.draft_block or 1
        else:
            g0 = self.m.layers[-1]
            d_attn, d_ffn, d_layers, block = g0.attention, g0.ffn, 1, 1
        d_mhc = mtp.mhc if mtp is not None else True
        # drafts and block are integers; the 1e-9 keeps float rounding ((1/5) q - 1/5 = 1.0000000000000002)
        # from adding a pass
        passes = sp.ceiling((q - 1) / block - sp.Float(1e-9))
        dph = Phase(seqs=B / pp, dec_tokens=B / pp * smin(q - 1, block), pf_tokens=0, L_dec=s["L"], L_pf=0,
                    kv_ctx=s["L"], logits=B / pp * smin(q - 1, block), speedup=s["s_dec"])
        dfloor, dlink, dlat = self.layer(d_attn, d_ffn, dph, draft, d_layers, d_mhc)
        self.lm_head(dph, draft)
        draft_s = passes * (draft.time() + dfloor + dlink + dlat)

        host = self.host_link(B, s["acc"], n_pf, q) + main.counts.get("bytes_host_cold", 0) / (
            smin(s["BW_host"], s["BW_hmem"]) * s["e_ln"])
        # Mooncake-style pool: prefixes parked in spare HBM of other GPUs in the domain come back over scale-up
        pool_bytes = s["f_rp"] * B * s["acc"] / s["osl"] * self.prefix_kv() / self.dp
        pool = pool_bytes / (s["BW_link"] * s["e_ln"])
        link += pool - s["ovl"] * smin(pool, main.time())
        kernels = main.time()
        pipeline_lat = (pp - 1) * s["lat_link"]
        host_visible = host - s["ovl"] * smin(host, kernels)
        sched = s["t_step"] + B / self.dp * s["t_seq"]   # each attention-DP rank runs its own scheduler, in parallel
        gpu = kernels + floor + link + lat + draft_s + pipeline_lat + host_visible
        # an overlap scheduler prepares step n+1 on the CPU while the GPU runs step n: q_os = 1 hides the CPU time
        # behind the GPU's (the step is the longer of the two), q_os = 0 adds it
        sched = sched - s["q_os"] * smin(sched, gpu)
        tpot = gpu + sched
        comp, mem = main.by_resource()
        out = {"step_s": tpot}
        for key, e in main.counts.items():
            out[f"n_{key}"] = e
        out["n_bytes_host"] = host * smin(s["BW_host"], s["BW_hmem"]) * s["e_ln"]   # incl. cold KV reads
        for name, e in main.by_name().items():
            out[f"t_{name}_s"] = e
        out.update({
            "t_link_s": link + host_visible, "t_host_link_s": host_visible,
            "t_latency_s": lat + floor + pipeline_lat, "t_draft_s": draft_s,
            "t_overhead_s": sched,
            "r_compute_s": comp, "r_memory_s": mem,
            "output_tps_per_gpu": B * s["acc"] / (tpot * s["G"]),
        })
        return out

    def host_link(self, B, acc, n_pf, q):
        """Host-link time per decode step per GPU, seconds (one direction, at min(link, host memory)):
            Engram lookups  B q n_layers lookups row_dim b_act / dp
          + KV reload       f_rl (B acc / osl) kv_stored(isl - new) / dp   (prefixes of resuming requests)
        (prefixes parked in pooled HBM of other GPUs, share f_rp, come back over the scale-up link instead)
        """
        s, m = S, self.m
        bw = smin(s["BW_host"], s["BW_hmem"]) * s["e_ln"]
        tokens = (B * q + n_pf) / self.dp
        byts = 0
        if m.engram is not None:
            byts += tokens * m.engram.layers * m.engram.lookups_per_token * m.engram.row_dim * s["b_act"]
        byts += s["f_rl"] * B * acc / s["osl"] * self.prefix_kv() / self.dp
        return byts / bw

    def prefix_kv(self):
        """KV bytes per GPU of one request's cached prefix (isl - new tokens), summed over the layers."""
        s = S
        prefix = s["isl"] - s["new"]
        return sum(g.count * self.attn[g.attention].stored_per_rank(prefix, s["tp"]) for g in self.m.layers)

    def prefill(self) -> dict[str, sp.Expr]:
        """Time of one prefill step of T_pf tokens (sequences of S_pf new tokens after P_pf cached), seconds."""
        s = S
        T, Snew, P = s["T_pf"], s["S_pf"], s["P_pf"]
        seqs = T / Snew
        ph = Phase(seqs=seqs, dec_tokens=0, pf_tokens=T, L_dec=0, L_pf=P + Snew / 2, kv_ctx=P,
                   logits=seqs, speedup=s["s_pf"], hierarchical_ep=True, pf_unit=Snew)
        tally = Tally()
        floor, link, lat = self._pass(ph, self.schedule(), tally)
        self.lm_head(ph, tally)
        t = tally.time() + floor + link + lat + s["t_step"]
        return {"prefill_s": t, "input_tps_per_gpu_prefill": T / (t * s["G"])}
