"""Closed-form cost equations (sympy). The single source of truth for every number the engine reports.

Modules: ``symbols`` (the notation table), ``attention`` and ``ffn`` (the derivations of the operator families'
FLOPs and bytes per token, whose terms perfmodel/model/ states per kind), ``roofline`` (time of a kernel and of a
collective), ``step`` (decode and prefill step time over the layer schedule), ``memory``
(bytes per GPU and the batch cap).
"""
