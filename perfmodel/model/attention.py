"""The attention operator family: what every attention kind states about itself.

A family object wraps one attention spec ``a`` (perfmodel.specs.model) named ``name`` in the model's attention
table. Units: parameters in elements; KV bytes in B (per context token, per sequence); FLOPs per query token
(2 x MACs); the sympy terms use the per-kind byte symbols E_name (KV entry), I_name (indexer key), R_name (fixed
state), bound per number format by ``entry_bytes`` (engine/bind.py). The subclasses (gqa, mla, dsv4, linear)
state the equations; equations/attention.py summarises them.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sympy as sp

# sympy and the vocabulary (model/vocabulary.py) are imported where a term is built, not with the family (a cached,
# compiled model evaluates without them)


class AttentionFamily:
    """Costs and facts of one attention kind. Defaults here are those of a kind without an indexer, without a
    recurrent state, whose KV the TP ranks replicate; subclasses override what differs."""

    kernel_family = "attention"
    """The kernel-fit family its decode attention runs on (hardware kernel_fits: 'attention' or 'mla')."""
    has_linear_state = False
    """True where the layer keeps a constant recurrent state per sequence instead of a growing KV cache."""

    def __init__(self, a, name: str = ""):
        self.a = a
        self.spec = a
        self.name = name

    @cached_property
    def E(self) -> sp.Symbol:
        """Bytes of one KV entry of this kind (symbol E_name), B."""
        from .vocabulary import kv_symbols
        return kv_symbols(self.name)["E"]

    @cached_property
    def I(self) -> sp.Symbol:  # noqa: E743 - the notation's name
        """Bytes of one indexer key of this kind (symbol I_name), B."""
        from .vocabulary import kv_symbols
        return kv_symbols(self.name)["I"]

    @cached_property
    def R(self) -> sp.Symbol:
        """Fixed state bytes per sequence of this kind (symbol R_name), B."""
        from .vocabulary import kv_symbols
        return kv_symbols(self.name)["R"]

    # ---- facts of the architecture
    def params(self, h: int) -> int:
        """Weight elements of one attention block at hidden size ``h``."""
        raise NotImplementedError

    @property
    def tp_heads(self) -> int:
        """Heads attention TP splits (a TP degree must divide it)."""
        return self.a.heads

    @property
    def label(self) -> str:
        """Short name of the kind for listings (gqa, mha, swa4096, mla, dsa, csa, hca, gdn, ...)."""
        raise NotImplementedError

    @property
    def kernels(self) -> int:
        """Kernels one decode pass launches for this kind (before cross-layer fusion)."""
        raise NotImplementedError

    # ---- KV bytes of a number format (floats, B)
    def kv_per_token(self, fmt: str) -> float:
        """Growing KV bytes per context token of one layer, B."""
        raise NotImplementedError

    def kv_fixed(self, fmt: str) -> float:
        """KV/state bytes per sequence that do not grow with context (window rings, recurrent state), B."""
        return 0.0

    def entry_bytes(self, fmt: str) -> tuple[float, float, float]:
        """(E, I, R): KV entry, indexer-key and fixed-state bytes the symbols E_name, I_name, R_name bind to."""
        raise NotImplementedError

    # ---- sympy terms
    def core_flops(self, n_ctx, phase: str):
        """Attention-core FLOPs of one query token with context ``n_ctx`` (tensor-core BF16)."""
        raise NotImplementedError

    def decode_row_padding(self, q_len, tp):
        """Issued over useful decode attention FLOPs (whole MMA row tiles); 1 unless the kind pads."""
        import sympy as sp
        return sp.Integer(1)

    def index_flops(self, n_ctx):
        """FP8 indexer FLOPs of one query token (0 where the layer has no own indexer)."""
        import sympy as sp
        return sp.Integer(0)

    def kv_read(self, n_ctx):
        """Bytes of KV/state read per sequence per step at context ``n_ctx`` (before TP sharding)."""
        raise NotImplementedError

    def kv_stored(self, n_ctx):
        """Bytes stored per sequence at context ``n_ctx`` (before TP sharding)."""
        raise NotImplementedError

    def kv_write(self):
        """Bytes written per new token: E + I."""
        return self.E + self.I

    def shard(self, tp):
        """How many ways attention TP splits this layer's KV/state (1: replicated)."""
        import sympy as sp
        return sp.Integer(1)

    # ---- bytes every attention-TP rank holds in full whatever ``shard`` splits (0 unless the kind has them:
    # the block indexer's single index-key head beside GQA's split KV heads). 0 leaves the step and memory
    # expressions as they were: sympy drops x + 0.
    def replicated_read(self, n_ctx):
        """Bytes per sequence per step every TP rank reads in full (not divided by ``shard``)."""
        import sympy as sp
        return sp.Integer(0)

    def replicated_write(self):
        """Bytes per new token every TP rank writes in full."""
        import sympy as sp
        return sp.Integer(0)

    def replicated_stored(self, n_ctx):
        """Bytes per sequence at context ``n_ctx`` every TP rank stores in full."""
        import sympy as sp
        return sp.Integer(0)

    def stored_per_rank(self, n_ctx, tp):
        """Bytes one attention-TP rank stores per sequence at context ``n_ctx``:
        kv_stored / shard + replicated_stored."""
        return self.kv_stored(n_ctx) / self.shard(tp) + self.replicated_stored(n_ctx)


def own_indexer(ix) -> bool:
    """True where a layer computes and caches its own indexer (it has one and does not share another's)."""
    return ix is not None and not ix.shared


def indexer_flops(ix, n_ctx, ratio):
    """FP8 indexer FLOPs of one query token scoring ``n_ctx / ratio`` keys: 2 H_i d_i n_ctx / ratio
    (0 without an own indexer)."""
    if ix is None or ix.shared:
        import sympy as sp
        return sp.Integer(0)
    return 2 * ix.heads * ix.head_dim * n_ctx / ratio
