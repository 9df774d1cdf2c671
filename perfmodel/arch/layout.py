"""Layout validity: whether a model can be split over a deployment's GPUs (attention heads over TP, expert width
over expert-TP, routed experts over EP), the one set of rules ``predict``, validation and the frontier's enumeration
(analyses/deployments.parallelism) share."""

from __future__ import annotations

from ..errors import SpecError
from ..model import attention_families, ffn_families
from ..specs.deployment import Deployment


def layout_problem(model, gpus: int, tp: int, ep: int, pp: int = 1) -> tuple[str, str] | None:
    """(message, field) if the model cannot be split this way (attention heads over tp, expert width over
    expert-TP = gpus / (pp ep), ep without MoE layers), else None."""
    moes = [F.spec for F in ffn_families(model).values() if F.is_moe]
    if ep > 1 and not moes:
        return f"ep={ep} but {model.id} has no MoE layers", "deployment.ep"
    for name, A in attention_families(model).items():
        heads = A.tp_heads
        if heads and heads % tp:
            return (f"tp={tp} does not divide the {heads} heads of attention {name!r} (attention TP shards whole "
                    "heads)", "deployment.tp")
    if moes and gpus % (pp * ep):
        return (f"pp x ep = {pp} x {ep} does not divide the instance's {gpus} GPUs (each GPU holds one expert "
                "shard of one stage)", "deployment.ep")
    expert_tp = gpus // (pp * ep)
    for f in moes:
        if expert_tp < 1 or f.expert_intermediate % expert_tp:
            return (f"expert-TP gpus/(pp x ep) = {gpus}/({pp} x {ep}) = {expert_tp} does not divide the expert "
                    f"width {f.expert_intermediate} (expert TP shards each expert's intermediate dimension); "
                    "raise ep", "deployment.ep")
    return None


def expert_problem(model, ep: int) -> str | None:
    """Why ``ep`` ranks cannot hold the routed experts evenly (uneven or redundant placement is not modelled)."""
    for name, F in ffn_families(model).items():
        if F.is_moe and ep > 1 and F.experts % ep:
            return (f"ep={ep} does not divide the {F.experts} routed experts of ffn {name!r} "
                    "(uneven or redundant expert placement is not modelled)")
    return None


def check_layout(model, dep: Deployment) -> None:
    """Reject layouts the model cannot be split into (``layout_problem``, ``expert_problem``), the prefill
    pool's included, with a one-line SpecError."""
    problem = layout_problem(model, dep.gpus, dep.tp, dep.ep, dep.pp)
    if problem:
        raise SpecError(problem[0], field=problem[1])
    ep_problem = expert_problem(model, dep.ep)
    if ep_problem:
        raise SpecError(ep_problem, field="deployment.ep")
    p = dep.prefill
    if p is not None and dep.serving == "disaggregated":
        if p.gpus % p.tp or (not p.dp_attention and p.gpus != p.tp):
            raise SpecError(f"gpus={p.gpus} must equal tp={p.tp} (or be a multiple of it with dp_attention)",
                            field="deployment.prefill.gpus")
        if p.gpus % p.ep:
            raise SpecError(f"ep={p.ep} must divide gpus={p.gpus}", field="deployment.prefill.ep")
        ep_problem = expert_problem(model, p.ep)
        problem = layout_problem(model, p.gpus, p.tp, p.ep) or ((ep_problem, "deployment.ep") if ep_problem else None)
        if problem:
            raise SpecError(problem[0], field=problem[1].replace("deployment.", "deployment.prefill."))
