"""Kernel-grounded efficiencies: closed-form latency curves fitted on measured kernel tables.

The tables (docs/kernels.md says where to get them, NVIDIA aiconfigurator collectors, Apache-2.0, commit
095f58a51c4ca8e61b66ec108d86f223f8d559ce) are not shipped; only the fitted parameters are written into the
catalog (``perfmodel kernels --write``). One module per kernel family (gemm, moe, attention, mla, collectives),
``loader`` reads the tables, ``fitting`` holds the least-squares fit and the held-out split shared by all.
"""
