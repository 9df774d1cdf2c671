"""GEMM shape: the compute a GEMM really issues for its per-GPU shape (tile padding and SM waves).

A GEMM of M tokens x N output columns x K reduction, on a GPU of n_sm SMs, runs output tiles of M_t x N_t
(profile ``gemm_tile_m`` / ``gemm_tile_n``):

- **Token padding.** Every tile computes M_t rows, so a GEMM issues rows_pad = M_t ceil(M / M_t) rows.
  A grouped (MoE) GEMM pads each expert's tokens separately. Routing makes an active expert's token count random,
  so the expected padding of an expert with mean m tokens is about half a tile, and never less than one tile:
      rows_pad = max(D M_t, A + D M_t / 2)        (A routed token-expert pairs over D active experts)
  (DeepGEMM aligns each expert's segment of its contiguous grouped layout to 128 rows and runs masked decode
  layouts with 64- or 128-row blocks; Hopper's wgmma issues 64 rows per warpgroup.)
  Its tile count is random for the same reason, so its waves use the expected last wave, half empty:
      u_grouped = w / (w + n_sm / 2),  w = max(tiles, n_sm)   (split-K fills the first wave)
- **Waves.** tiles = (rows_pad / M_t) ceil(N / N_t) are scheduled on n_sm SMs in ceil(tiles / n_sm) waves; the
  last wave may leave SMs idle. When there are fewer tiles than SMs, kernels split the reduction (split-K, or a
  persistent stream-K schedule) into s = max(1, floor(n_sm / tiles)) parts, so
      u = tiles s / (n_sm ceil(tiles s / n_sm))   (achieved share of the SMs, 1/2 < u <= 1 below one wave)
- compute time = 2 K N rows_pad / (F e u); the memory time is unchanged (split-K keeps weight streaming at
  full bandwidth; the padding computes on zeros that are never loaded).

The useful FLOPs (2 K N M) still count in the FLOP tallies; only the time uses the issued work.
In decode a GEMM is usually memory-bound, so the padding is visible only near and above the ridge point
(large batches, prefill, 4-bit formats whose ridge is high).
"""

from __future__ import annotations

from .roofline import ceil_, floor_, smax
from .symbols import S


def wave_utilization(tiles):
    """Achieved share of the SMs for ``tiles`` output tiles: split-K below one wave, last-wave quantization above.

        s = max(1, floor(n_sm / tiles)),   u = tiles s / (n_sm ceil(tiles s / n_sm))
    """
    n = S["n_sm"]
    tiles = smax(tiles, 1)   # a pass with no tokens (no draft) issues no work; keeps u finite
    work = tiles * smax(1, floor_(n / tiles))
    return work / (n * ceil_(work / n))


def dense_issued_flops(weights, tokens, k_dim):
    """Issued FLOP-equivalents of a GEMM over ``weights`` = K x N weight elements (per GPU) for ``tokens`` rows:
    2 K N M_t ceil(M / M_t) / u, with N = weights / k_dim and u the wave utilization."""
    mt, nt = S["M_t"], S["N_t"]
    m_tiles = ceil_(tokens / mt)
    tiles = m_tiles * ceil_(weights / k_dim / nt)
    return 2 * weights * mt * m_tiles / wave_utilization(tiles)


def grouped_issued_flops(weights_per_expert, pairs, experts, k_dim):
    """Issued FLOP-equivalents of a grouped GEMM: ``experts`` active experts of ``weights_per_expert`` (K x N per
    GPU) elements share ``pairs`` routed tokens. rows_pad = max(D M_t, A + D M_t / 2);
    2 K N rows_pad / u_grouped with tiles = (rows_pad / M_t) ceil(N / N_t) over the whole grouped launch."""
    mt, nt = S["M_t"], S["N_t"]
    rows = smax(experts * mt, pairs + experts * mt / 2)
    tiles = rows / mt * ceil_(weights_per_expert / k_dim / nt)
    return 2 * weights_per_expert * rows / expected_wave_utilization(tiles)


def expected_wave_utilization(tiles):
    """Mean SM share over a random tile count (a grouped GEMM's tiles vary with routing): the last wave is half
    empty on average and split-K fills a first wave,  u = w / (w + n_sm / 2), w = max(tiles, n_sm)."""
    n = S["n_sm"]
    w = smax(tiles, n)
    return w / (w + n / 2)
