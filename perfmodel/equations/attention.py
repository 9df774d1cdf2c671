"""Attention cost per operator family: FLOPs and KV bytes as sympy expressions of the context.

Per query token attending ``n`` keys (FLOPs = 2 x MACs; docs/reference/models.md):
- GQA/MHA: 4 H d per key (QK^T and PV); a sliding window caps n at W.
- MLA expanded (prefill): 2 H (d_n + d_r) + 2 H d_v per key.  Absorbed (decode, MQA form): 2 H (2 d_c + d_r).
- DSA (MLA + indexer): keys capped at top_k, absorbed form in both phases; the indexer adds 2 H_i d_i L
  FP8 FLOPs per query over all L keys.
- DeepSeek-V4 (dsv4): 4 H d per attended entry; entries per query: CSA min(k, L/4) + W, HCA L/128 + W,
  SWA-only min(L, W); indexer 2 H_i d_i L/4 on CSA layers.
- Linear (GDN/KDA): 4 H_v d_k d_v per token (state update and read-out), independent of L.
- GQA with a block indexer (MiniMax-M3 MSA): 4 H d per key over min(L, k_b s_b) keys (k_b blocks of s_b keys,
  the local block among them); the indexer adds 2 H_i d_i L FP8 FLOPs per query over all L keys.
- Grouped latent attention (gla, Motif-3): MLA's forms over G groups: expanded 2 H (d_n + d_r) + 2 H d_v, absorbed
  2 H (2 d_c + d_r) per key; a sliding window caps the keys at W.
- Issued decode FLOPs of MLA (absorbed and sparse): the decode kernels (FlashMLA, FlashInfer MLA, TensorRT-LLM's
  MLA kernels) put the q_len x H/tp query rows of a sequence (all heads share the latent KV) in MMA tiles of
  MLA_ROW_TILE = 64 rows, so a rank with fewer rows issues a whole tile:
      issued / useful = 64 ceil(r / 64) / r,   r = q_len H / tp
  (DeepSeek-V3 at TP8 without drafts: r = 16, 4x; with attention-DP, r = 128, 1x). The measured MLA decode tables
  (the aiconfigurator kernel tables of docs/kernels.md, generation_mla) are fitted with this padding (kernels/mla.py, HEAD_TILE).

KV bytes (entry sizes E_j, I_j, R_j are bound per number format from perfmodel.arch.kv):
- read per sequence per decode step: GQA min(L, W) E (block indexer: min(L, k_b s_b) E, plus L I read in full by
  every TP rank); gla min(L, W) E; MLA L E; DSA min(L, k) E + L I;
  dsv4 W E + CSA (min(k, L/4) E + L/4 I) | HCA L/128 E; linear 2 R (read + write the state).
- stored per sequence at context L: GQA min(L, W) E (block indexer: L E split, L I in full per rank); gla
  min(L, W) E; MLA/DSA L (E + I); dsv4 W E + L/c (E + I); linear R.
- shard across attention TP: GQA min(tp, n_kv) (KV heads split); MLA / gla / dsv4 1 (latent replicated);
  linear tp (heads split).
"""

from __future__ import annotations

# the terms themselves: perfmodel/model/ (gqa, mla, dsv4, linear), one class per kind
from ..model.mla import MLA_ROW_TILE

__all__ = ["MLA_ROW_TILE"]
