"""GEMM shape: the compute a GEMM really issues for its per-GPU shape (tile padding and SM waves).

A GEMM of M tokens x N output columns x K reduction, on a GPU of n_sm SMs, runs output tiles of m x N_t rows x
columns. Kernels choose the row tile from what the tokens need, between the smallest tile m_min (tokens in the
MMA's narrow dimension: swap-AB / 8-16-row tiles for small batches) and the largest M_t (profile
``gemm_tile_m_min``, ``gemm_tile_m``, ``gemm_tile_n``):
    m = min(M_t, max(m_min, A / D))                  (grouped: A / D tokens per active expert, one tile per launch)

- **Token padding.** Every tile computes m rows. A dense GEMM of M tokens runs whole M_t-row tiles and its
  remainder r in the smallest tile that holds it: rows_pad = M_t floor(M / M_t) + max(m_min, r) [r > 0].
  A grouped (MoE) GEMM pads each expert's tokens separately. Routing makes an active expert's token count random,
  so the expected padding of an expert is about half a tile, and never less than one tile:
      rows_pad = max(D m, A + D m / 2)        (A routed token-expert pairs over D active experts)
  (DeepGEMM: 64-256-row blocks for normal GEMMs, 64/128 for masked decode layouts, 128-row alignment of
  contiguous grouped layouts; Triton's MoE kernels pick 16-128-row blocks from the tokens per expert.)
  Its tile count is random for the same reason, so its waves use the expected last wave, half empty:
      u_grouped = tiles / (tiles + n_sm / 2)     (grouped kernels do not split the reduction)
- **Waves.** tiles = ceil(M / M_t) ceil(N / N_t) (grouped: (rows_pad / m) ceil(N / N_t)) are scheduled on n_sm
  SMs in ceil(tiles / n_sm) waves; the last wave may leave SMs idle. With fewer tiles than SMs, kernels split the
  reduction (split-K, stream-K) over the idle SMs:
      u = 1 if tiles <= n_sm, else tiles / (n_sm ceil(tiles / n_sm))
- compute time = 2 K N rows_pad / (F e u); the memory time is unchanged (split-K keeps weight streaming at
  full bandwidth; the padding computes on zeros that are never loaded).

- **Small-M loss (mechanism ``gemm_kernel_band``).** The measured GEMM tables (kernels/gemm.py) fit a dense GEMM's
  compute efficiency as e_c k / (k + k_half) m / (m + m_half) occ^beta_c, occ = min(1, tiles / n_sm). With the
  mechanism on, e_mm is the plateau (searched inside the tables' band, validation/kernel_bands.py) and the part
  the plateau lacks at decode shapes is computed from the tables (medians m_half = g_mh, beta_c = g_bc of the
  engine's GEMM fits on the GPU, engine/kernel_bind.py), not fitted:
      s(M, N) = M / (M + g_mh) min(1, tiles / n_sm)^g_bc      (dense GEMMs only: the grouped GEMM has its own
                                                               law by tokens per expert, ffn.grouped_gemm_efficiency)
  Off (g_mh = g_bc = 0), s = 1 exactly.

The useful FLOPs (2 K N M) still count in the FLOP tallies; only the time uses the issued work.
In decode a GEMM is usually memory-bound, so the padding is visible only near and above the ridge point
(large batches, prefill, 4-bit formats whose ridge is high, 4-bit weights computed at the BF16 rate).
"""

from __future__ import annotations

from .roofline import ceil_, floor_, smax, smin
from .symbols import S


def wave_utilization(tiles):
    """Achieved share of the SMs for ``tiles`` output tiles: 1 below one wave (split-K / stream-K schedules
    spread the reduction over idle SMs), then last-wave quantization:

        u = 1 if tiles <= n_sm, else tiles / (n_sm ceil(tiles / n_sm))
    """
    n = S["n_sm"]
    tiles = smax(tiles, 1)   # a pass with no tokens (no draft) issues no work; keeps u finite
    return smin(1, tiles / (n * ceil_(tiles / n)) + floor_(n / tiles))


def padded_rows(tokens):
    """Rows a dense GEMM issues for ``tokens`` rows: whole M_t-row tiles, and the remainder r in the smallest tile
    that holds it (kernel heuristics pick a smaller tile for a short last block; at least m_min rows):
        rows = M_t floor(M / M_t) + max(m_min, r) [r > 0],   r = M - M_t floor(M / M_t)."""
    mt = S["M_t"]
    full = floor_(tokens / mt)
    r = tokens - mt * full
    return mt * full + smax(S["m_min"], r) * ceil_(r / mt)


def row_tile(tokens):
    """The row tile a grouped GEMM launch picks for ``tokens`` rows per expert: m = min(M_t, max(m_min, tokens))."""
    return smin(S["M_t"], smax(S["m_min"], tokens))


def dense_issued_flops(weights, tokens, k_dim):
    """Issued FLOP-equivalents of a GEMM over ``weights`` = K x N weight elements (per GPU) for ``tokens`` rows:
    2 K N rows_pad / u, N = weights / k_dim, u the wave utilization of ceil(M / M_t) ceil(N / N_t) tiles."""
    tiles = ceil_(tokens / S["M_t"]) * ceil_(weights / k_dim / S["N_t"])
    return 2 * weights * padded_rows(tokens) / wave_utilization(tiles)


def grouped_issued_flops(weights_per_expert, pairs, experts, k_dim):
    """Issued FLOP-equivalents of a grouped GEMM: ``experts`` active experts of ``weights_per_expert`` (K x N per
    GPU) elements share ``pairs`` routed tokens. m = row_tile(A / D), rows_pad = max(D m, A + D m / 2);
    2 K N rows_pad / u_grouped with tiles = (rows_pad / m) ceil(N / N_t) over the whole grouped launch."""
    m = row_tile(pairs / smax(experts, 1e-9))
    rows = smax(experts * m, pairs + experts * m / 2)
    tiles = rows / m * ceil_(weights_per_expert / k_dim / S["N_t"])
    return 2 * weights_per_expert * rows / expected_wave_utilization(tiles)


def expected_wave_utilization(tiles):
    """Mean SM share over a random tile count (a grouped GEMM's tiles vary with routing; grouped kernels do not
    split the reduction): the last wave is half empty on average,  u = tiles / (tiles + n_sm / 2)."""
    return tiles / (tiles + S["n_sm"] / 2)


def small_m_efficiency(weights, tokens, k_dim):
    """Share of the plateau GEMM efficiency a dense GEMM of ``tokens`` rows over ``weights`` = K x N weight
    elements keeps (kernel tables' law, mechanism ``gemm_kernel_band``; 1 where g_mh = g_bc = 0):

        s = M / (M + g_mh) min(1, tiles / n_sm)^g_bc,   tiles = ceil(M / M_t) ceil(N / N_t),  N = weights / k_dim
    """
    rows = smax(tokens, 1e-9)   # a pass with no tokens issues no work; keeps s finite (and 1 with g_mh = 0)
    tiles = ceil_(rows / S["M_t"]) * ceil_(weights / k_dim / S["N_t"])
    return rows / (rows + S["g_mh"]) * smin(1, tiles / S["n_sm"]) ** S["g_bc"]
