"""FFN cost per operator family.

Dense (gated) MLP with P = 3 h I weights: 2 P FLOPs per token, P weight elements streamed per step.

MoE with E routed experts, top-k, P_e weights per expert (3 d I_e, d = latent dim or h):
- expected distinct experts touched by T routed tokens (uniform routing):
      D(T) = E (1 - (1 - k/E)^T)
  (the mean over EP ranks is D(T)/ep experts);
- the step waits for the busiest EP rank (E/ep experts each). Routing is random per token, so ranks differ:
      distinct experts on the busiest rank  D_max = min(E/ep, mu_D + z(ep) sigma_D),
          mu_D = (E/ep) p_T, sigma_D^2 = (E/ep) p_T (1 - p_T), p_T = 1 - (1 - k/E)^T  (P[an expert is touched])
      routed tokens on the busiest rank    A_max = (T k / ep) (1 + z(ep) sqrt((1 - 1/ep) ep / (T k))) imb
  with z(n) the expected maximum of n standard normals (z(1) = 0; ``expected_max_normal``) and imb the
  structural routing skew (hot experts), a profile parameter; the statistical term vanishes as T grows;
- expert FLOPs per GPU: 2 P_e A_max / moe_tp; expert weights streamed: D_max P_e / moe_tp elements;
- grouped (expert) GEMM rate relative to a dense GEMM of the same format, a function of the tokens per active
  local expert per step tpe = A_max / D_max and of the expert-TP width (``grouped_gemm_efficiency``):
      e_grouped = ((1 - q_ggf) e_gg + q_ggf e_ggk) / (1 + tpe_h / tpe) moe_tp^(-g_etp)
  where the GPU has a fused-MoE fit for the engine (q_ggf = 1) e_ggk, tpe_h and g_etp are pinned by its kernel
  tables (perfmodel kernels; e_ggk = the MoE fit's plateau over the dense GEMM fit's) and the profile's e_gg
  is not used; without a fit q_ggf = 0, tpe_h = 0, g_etp = 0 and e_gg (profile) is the whole rate;
- shared experts, router and latent projections run on every token like a dense layer;
- EP dispatch + combine (with attention-DP only): each GPU receives the non-local tokens routed to its expert
  group, T (1 - (1 - 1/ep)^k)(1 - 1/dp) d elements each way (dispatch in b_dsp bytes, combine in b_act bytes);
  equations/step.py builds it.
"""

from __future__ import annotations

# the terms themselves: perfmodel/model/ (dense, moe), one class per kind
from ..model.moe import MOE_KERNELS
from .roofline import smax
from .symbols import S

__all__ = ["MOE_KERNELS", "grouped_gemm_efficiency"]


def grouped_gemm_efficiency(pairs, active, moe_tp):
    """Grouped-GEMM rate over the dense GEMM rate of the same format for ``pairs`` routed token-expert pairs on
    ``active`` experts of one rank, experts split over ``moe_tp`` GPUs (tokens per active expert tpe = pairs /
    active):  e = ((1 - q_ggf) e_gg + q_ggf e_ggk) / (1 + tpe_h / tpe) moe_tp^(-g_etp)."""
    s = S
    tpe = smax(pairs / smax(active, 1e-9), 1e-9)
    plateau = (1 - s["q_ggf"]) * s["e_gg"] + s["q_ggf"] * s["e_ggk"]
    return plateau / (1 + s["tpe_h"] / tpe) * moe_tp ** (-s["g_etp"])
