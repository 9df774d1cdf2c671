"""The claims catalog: every claim validates, names existing catalog entries, and bad claims fail clearly."""


import pytest
import yaml

from perfmodel import catalog
from perfmodel.errors import SpecError
from perfmodel.specs.claim import ClaimSpec, eval_arithmetic

CLAIM_IDS = catalog.ids("claims")
CLAIMS_DIR = catalog.builtin_root() / "claims"


def _exists(kind: str, name: str) -> bool:
    try:
        catalog.resolve_path(kind, name.split("@", 1)[0])
        return True
    except SpecError:
        return False


def test_at_least_20_claims():
    assert len(CLAIM_IDS) >= 20


@pytest.mark.parametrize("cid", CLAIM_IDS)
def test_claim_loads(cid):
    c = catalog.claim(cid)
    assert isinstance(c, ClaimSpec)
    assert c.id == cid
    assert c.quote and c.source and c.title
    assert c.published, f"{cid}: a catalog claim names its publication (a URL or seeds/<file>)"


def test_a_users_own_claim_needs_no_url():
    """Issue 56 item 5: a planner's own claim loads with any text as its source (and is marked unpublished)."""
    c = ClaimSpec.model_validate({**_base(), "source": "our load test on 3 Dec (internal)"})
    assert c.source.startswith("our load test") and not c.published


def test_file_names_are_ids():
    for f in sorted(CLAIMS_DIR.glob("*.yaml")):
        assert yaml.safe_load(f.read_text())["id"] == f.stem, f"{f.name}: id differs from the file name"


def test_every_named_catalog_entry_exists():
    """Hardware, models, profiles and workloads a claim names are in the catalogs (unstated ones are None)."""
    named = []
    for cid in CLAIM_IDS:
        c = catalog.claim(cid)
        named += [(cid, "hardware", h) for h in c.system_ids]
        named += [(cid, "profiles", s.profile) for s in c.systems if s.profile]
        named += [(cid, kind, v) for kind, v in (("models", c.model), ("workloads", c.workload)) if v is not None]
    missing = [(cid, kind, v) for cid, kind, v in named if not _exists(kind, v)]
    assert not missing, missing
    assert {kind for _, kind, _ in named} == {"hardware", "profiles", "models", "workloads"}


def test_the_required_claims_are_present():
    by = {cid: catalog.claim(cid) for cid in CLAIM_IDS}

    def find(kind, claimed, **kw):
        hits = [c for c in by.values() if c.kind == kind and c.claimed == pytest.approx(claimed)
                and all(getattr(c, k) == v for k, v in kw.items())]
        assert hits, f"no {kind} claim of {claimed} with {kw}"
        return hits[0]

    c58 = find("ratio", 58, model="deepseek-v4.1-flash", workload="agentx")
    assert c58.system_ids == ["vr200-nvl72", "gb300-nvl72"]
    assert c58.at.tps_per_user == 387 and c58.at.percentile == 90
    assert c58.metric.column == "total_tps_per_gpu"
    assert find("ratio", 2.7, model="deepseek-v4.1-flash").at.point == "peak"
    find("absolute", 2.52e6)
    find("absolute", 1.7e6)
    find("absolute", 1810)
    assert find("ratio", 7.8).system_ids == ["vr200-nvl72", "gb200-nvl72"]
    find("ratio", 12.9)
    assert find("ratio", 21).claimed_range == (9, 21)
    for model, up, peak in [("deepseek-v4-pro", 5.7, 1.14), ("deepseek-v4.1-flash", 5.4, 1.45),
                            ("glm-5.2", 3.0, 1.35), ("kimi-k3", 2.8, 1.26)]:
        u = find("ratio", up, model=model, workload="aa-agentperf")
        assert u.metric.column == "total_tps_per_mw" and u.at.point == "fastest_common" and u.qualifier == "up_to"
        p = find("ratio", peak, model=model, workload="aa-agentperf")
        assert p.metric.column == "total_tps_per_mw" and p.at.point == "peak"
    g = find("delta", -0.81, model="deepseek-v4-pro")
    assert g.system_ids == ["gb300-nvl72"] and (g.from_.tps_per_user, g.to.tps_per_user) == (120, 165)
    assert find("delta", -0.16, model="deepseek-v4-pro").system_ids == ["vr200-nvl72"]
    f906 = find("max_interactivity", 906, model="deepseek-v4.1-flash")
    assert f906.hints_for("vr200-nvl72")[0].gpus == 4
    find("max_interactivity", 408, model="glm-5.2")
    assert find("max_interactivity", 255, model="kimi-k3").hints_for("vr200-nvl72")[0].gpus == 8
    for field, ratio in [("hbm_bandwidth_tbps", 2.4), ("scaleup_bandwidth_gbps", 1.7), ("fp4_dense_pflops", 2.3),
                         ("host_link_bandwidth_gbps", 2.0), ("hbm_capacity_gb", 1.0)]:
        find("spec_ratio", ratio, spec_field=field)


def _base() -> dict:
    return yaml.safe_load((CLAIMS_DIR / "vllm-2.7x-at-peak.yaml").read_text())


def _reject(data: dict) -> str:
    with pytest.raises(SpecError) as exc:
        catalog.validate("claims", data, file="bad.yaml")
    return str(exc.value)


def test_ratio_with_one_system_is_rejected():
    msg = _reject({**_base(), "systems": ["vr200-nvl72"]})
    assert "bad.yaml" in msg and "systems" in msg and "two systems" in msg


@pytest.mark.parametrize("patch,expect", [
    ({"systems": ["vr200-nvl72", "vr200-nvl72"]}, "two different systems"),
    ({"kind": "delta"}, "one system"),
    ({"model": None}, "list 'model' under unstated"),
    ({"at": {"point": "speed"}}, "needs tps_per_user"),
    ({"at": {"point": "speed", "tps_per_user": 387}}, "at.interactivity is not set"),
    ({"metric": {"quantity": "throughput", "tokens": "total"}}, "metric.per is required"),
    ({"metric": {"quantity": "tps_per_user", "per": "gpu"}}, "takes no 'tokens' or 'per'"),
    ({"claimed_range": [3, 4]}, "outside claimed_range"),
    ({"source": "  "}, "source is empty"),
    ({"unstated": ["at.bogus"]}, "names no field"),
    ({"arithmetic": [{"expression": "2.52e6 / 2.7", "value": 5e5, "meaning": "x"}]}, "not the stated"),
    ({"arithmetic": [{"expression": "open('x')", "value": 1, "meaning": "x"}]}, "only numbers"),
    ({"deployment_hints": {"system": "h100-sxm", "gpus": 4}}, "not one of the claim's systems"),
    ({"kind": "spec_ratio"}, "spec_field"),
    ({"spec_field": "hbm_bandwidth_tbps"}, "only for spec_ratio"),
    ({"typo_field": 1}, "typo_field"),
])
def test_bad_claims_fail_clearly(patch, expect):
    assert expect in _reject({**_base(), **patch})


def test_spec_ratio_rejects_unknown_field():
    data = yaml.safe_load((CLAIMS_DIR / "spec-nvlink-1.7x.yaml").read_text())
    msg = _reject({**data, "spec_field": "nvlink_tbps"})
    assert "unknown hardware field" in msg and "scaleup_bandwidth_gbps" in msg


def test_delta_needs_both_points():
    data = yaml.safe_load((CLAIMS_DIR / "aa-gb300-minus-81pct-120-to-165.yaml").read_text())
    del data["to"]
    assert "'from' and a 'to'" in _reject(data)


def test_assumptions_are_reported():
    c = catalog.claim("vllm-58x-at-387")
    assert c.assumed == ["at.interactivity"]
    assert catalog.claim("vllm-2.7x-at-peak").assumed == []


def test_eval_arithmetic():
    assert eval_arithmetic("(1 - 0.16) / (1 - 0.81)") == pytest.approx(4.421, rel=1e-3)
    with pytest.raises(ValueError):
        eval_arithmetic("1 / 0")
