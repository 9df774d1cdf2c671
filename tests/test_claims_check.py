"""Claim checks: verdict logic, arithmetic, spec ratios, the CLI (fast: one small model evaluation, cached)."""

import json
import math

import pytest

from perfmodel import catalog
from perfmodel.claims import CurveStore, arithmetic_checks, check, spec_ratio_check
from perfmodel.cli.main import main
from perfmodel.specs.claim import ClaimSpec


@pytest.fixture(scope="module")
def store():
    return CurveStore(space=dict(batch_points=8, spec_tokens=(0, 3)))


def _with(claim_id, **upd):
    c = catalog.claim(claim_id)
    return c.model_copy(update=upd)


def test_claim_equal_to_model_is_consistent_and_absurd_is_implausible(store):
    base = check("vllm-2.7x-at-peak", store)
    own = base["model"]["value"]
    same = check(_with("vllm-2.7x-at-peak", claimed=own), store)
    assert same["verdict"] == "consistent"
    absurd = check(_with("vllm-2.7x-at-peak", claimed=1000.0), store)
    assert absurd["verdict"] == "implausible"
    assert "1,000" in absurd["reason"] and absurd["distance"]["z"] > 1
    # the result carries what a skeptic asks for
    assert len(base["systems"]) == 2 and all(s["max_tps_per_user"] > 0 for s in base["systems"])
    assert base["hardware_only"]["ratio"] > 0
    lo, hi = base["model"]["band"]
    assert lo <= own <= hi


def test_arithmetic_checks_recompute_the_claims_numbers():
    rows = {r["expression"]: r for r in arithmetic_checks(catalog.claim("vllm-2.7x-at-peak"))}
    r = rows["2.52e6 / 2.7"]
    assert r["computed"] == pytest.approx(933_333, rel=1e-4) and r["ok"]


def test_spec_ratio_hbm_2_4_is_aisimulates_inferred_peak_not_a_datasheet_pair():
    r = spec_ratio_check(catalog.claim("spec-hbm-bandwidth-2.4x"))
    ratios = sorted(p["ratio"] for p in r["pairs"])
    assert pytest.approx(22 / 8) in ratios and pytest.approx(20 / 8) in ratios
    # 2.4x is no rounding of 20/8 = 2.5 or 22/8 = 2.75, but of AISimulate's inferred 19.16 TB/s (an estimate, not a
    # stated spec): consistent only with that estimate
    m = [p for p in r["pairs"] if p["matches"]]
    assert m and m[0]["ratio"] == pytest.approx(19.16 / 8) and not m[0]["stated"]
    assert r["verdict"] == "consistent only if" and "estimate" in r["condition"] and "2.5x, 2.75x" in r["condition"]
    assert spec_ratio_check(catalog.claim("spec-nvfp4-2.3x"))["verdict"] == "consistent"
    nv = spec_ratio_check(catalog.claim("spec-nvlink-1.7x"))
    assert nv["verdict"] == "inconsistent with the published specs" and nv["pairs"][0]["ratio"] == pytest.approx(2.0)


def test_a_point_beyond_a_curve_end_names_the_curve_end_it_needs(store):
    base = check("vllm-58x-at-387", store)
    end_a, end_b = (s["max_tps_per_user"] for s in base["systems"])
    c = catalog.claim("vllm-58x-at-387")
    if end_a > 1.02 * end_b:            # beyond B's end only: B's curve end is the condition
        at = c.at.model_copy(update={"tps_per_user": (end_b + min(end_a, 1.2 * end_b)) / 2})
        r = check(_with("vllm-58x-at-387", at=at), store)
        # on a jump (B's curve ends within the speed error of the point): two conditions, or not decidable
        assert r["verdict"] in ("consistent only if", "not decidable by this model")
        if r["verdict"] == "not decidable by this model":
            assert r["implausible"] == "on a jump" and "gb300-nvl72's curve ends" in r["condition"]
        gb = [k for k in r["conditions"] if "gb300-nvl72" in k.get("system", "")]
        assert gb and "gb300-nvl72" in gb[0]["text"]
    # beyond both ends: no single named condition, both ends named
    at = c.at.model_copy(update={"tps_per_user": 1.5 * max(end_a, end_b)})
    r = check(_with("vllm-58x-at-387", at=at), store)
    assert r["verdict"] == "not decidable by this model" and "gb300-nvl72" in r["condition"]
    assert "vr200-nvl72" in r["condition"]


def test_a_matched_claim_is_read_at_the_models_median_never_at_the_claim(store):
    c = _with("vllm-7.8x-vs-gb200", model="deepseek-v4.1-flash")
    r1, r2 = check(c, store), check(c.model_copy(update={"claimed": 3.0}), store)
    m = r1["model"]
    assert m["central"] == r2["model"]["central"] and m["ratio_min"] <= m["central"] <= m["ratio_max"]
    assert r1["distance"]["z"] != r2["distance"]["z"]
    assert m["grid_step"] < r1["interval"]["down"] + r1["interval"]["up"]   # finer than the interval


def test_an_unstated_model_is_under_specified_when_candidates_disagree(store):
    c = _with("vllm-7.8x-vs-gb200")
    r = check(c, store, models=("deepseek-v4.1-flash", "glm-5.2"))
    assert set(r["per_model"]) == {"deepseek-v4.1-flash", "glm-5.2"}
    verdicts = {p["verdict"] for p in r["per_model"].values()}
    if len(verdicts) > 1:      # never the candidate that fits: the range over candidates
        assert r["verdict"] == "not checkable (under-specified)" and len(r["candidate_range"]) == 2
        assert "candidates disagree" in r["condition"]
    elif verdicts == {"consistent only if"}:     # every candidate's condition, none picked
        assert r["verdict"] == "consistent only if"
        assert "deepseek-v4.1-flash:" in r["condition"] and "glm-5.2:" in r["condition"]
    else:
        assert r["verdict"] == verdicts.pop()


def test_cli_check_json_has_the_fields(capsys):
    assert main(["check", "spec-nvfp4-2.3x", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for k in ("id", "verdict", "condition", "reason", "claimed", "arithmetic", "spec", "assumptions"):
        assert k in out
    assert out["verdict"] == "consistent"


def test_bad_claim_file_is_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: bad\ntitle: t\nkind: ratio\nclaimed: -3\n")
    assert main(["check", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("perfmodel: error:") and "\n" not in err and "bad.yaml" in err
    assert main(["check", "no-such-claim"]) == 2


def test_an_e2e_comparison_inherits_not_checkable_from_its_ttft_claims(monkeypatch):
    import importlib
    ck = importlib.import_module("perfmodel.claims.check")
    claim = catalog.claim("aa-e2e-gb300-matches-rubin")
    assert set(ck._ttft_siblings(claim)) == {"aa-ttft-gb300-1.08s-at-165", "aa-ttft-rubin-1.65s-at-165"}
    monkeypatch.setattr(ck, "check", lambda i, store=None: {"verdict": "not checkable"})
    out = {"verdict": "implausible", "condition": None, "reason": "r"}
    r = ck._inherit_ttft(claim, dict(out), None)
    assert r["verdict"] == "not checkable" and len(r["inherited_from"]) == 2 and "Without the TTFT check" in r["reason"]
    # a consistent comparison, an ITL-axis one, or checkable TTFT claims inherit nothing
    assert ck._inherit_ttft(claim, {**out, "verdict": "consistent"}, None)["verdict"] == "consistent"
    itl = claim.model_copy(update={"at": claim.at.model_copy(update={"interactivity": "itl"})})
    assert ck._inherit_ttft(itl, dict(out), None)["verdict"] == "implausible"
    monkeypatch.setattr(ck, "check", lambda i, store=None: {"verdict": "implausible"})
    assert ck._inherit_ttft(claim, dict(out), None)["verdict"] == "implausible"


def test_a_claim_above_the_interval_names_the_steps_it_needs_bounded_by_speed_of_light(store):
    base = check("vllm-2.7x-at-peak", store)
    own, up = base["model"]["central"], base["interval"]["up"]
    r = check(_with("vllm-2.7x-at-peak", claimed=own * math.exp(up) * 1.3), store)   # 30% above the interval
    a = next(c for c in r["conditions"] if c["system"] == "vr200-nvl72")
    assert 0.6 < a["edge"] < 1 and a["sol_factor"] < a["edge"]     # faster, short of SoL
    assert "faster" in r["condition"] and "speed of light" in a["text"]
    # the ratio it implies (1.3 x exp(up) x the model's) is beyond the ratio's held-out error: never within error;
    # past the profile's fitted fast corner with no record it is implausible on the evidence, not beyond physics
    assert a["ratio_shift"]["multiple"] == pytest.approx(1.3 * math.exp(up), rel=1e-6)
    assert a["tag"] != "within error"
    if a["beyond_fit"]:
        assert r["verdict"] == "implausible" and r["implausible"] == "on the evidence"
    else:
        assert r["verdict"] == "consistent only if" and a["tag"] == "software headroom"


def test_every_unknown_id_of_a_claim_is_named_at_once(tmp_path, capsys):
    """Issue 56 item 5: a claim naming an unknown hardware and an unknown model reports both in one line."""
    import yaml

    from perfmodel.errors import SpecError
    data = yaml.safe_load((catalog.builtin_root() / "claims" / "vllm-2.7x-at-peak.yaml").read_text())
    data["systems"][1] = {"hardware": "gb400-nvl144"}
    data["model"] = "deepseek-v9-flash"
    with pytest.raises(SpecError) as exc:
        check(ClaimSpec.model_validate(data))
    msg = str(exc.value)
    assert "2 unknown ids" in msg and "'gb400-nvl144'" in msg and "'deepseek-v9-flash'" in msg
    assert "systems[1].hardware" in msg and "model:" in msg and "\n" not in msg
    f = tmp_path / "mine.yaml"
    f.write_text(yaml.safe_dump({**data, "source": "my own notes"}))
    assert main(["check", str(f)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gb400-nvl144" in err[0] and "deepseek-v9-flash" in err[0]


def test_an_unstated_models_candidates_are_reported_one_per_line():
    """Issue 56 item 5: each candidate model on its own short line under the verdict, never one long line."""
    from perfmodel.claims.describe import format_check
    per = {m: {"verdict": "consistent only if", "condition": f"{m} needs x" * 3, "reason": "r" * 2000,
               "model": {"value": 2.0 + i}, "interval": {"low": 1.5, "high": 3.0 + i}}
           for i, m in enumerate(["deepseek-v4.1-flash", "deepseek-v4-pro", "glm-5.2", "kimi-k3"])}
    r = {"id": "mine", "title": "Model X at 3x", "verdict": "consistent only if", "condition": "; ".join(
        f"{m}: c" for m in per), "reason": "r" * 3000, "per_model": per, "claimed": 3.0}
    lines = format_check(r).splitlines()
    cand = [ln for ln in lines if ln.startswith("    if model ")]
    assert [ln.split(":")[0].split()[-1] for ln in cand] == list(per)
    assert "(model 2, interval 1.5-3)" in cand[0] and all(len(ln) < 300 for ln in lines)
    assert "not stated by the claim" in lines[2]


def test_a_claim_is_checked_in_the_number_format_it_quotes(store):
    """Issue 56 item 4: a claim quoting fp8 is read from fp8 curves (a sibling store of the same space), not the
    nvfp4 default; a format the catalog does not know is one clear error."""
    c = _with("vllm-2.7x-at-peak", weights="fp8")
    r8, r4 = check(c, store), check("vllm-2.7x-at-peak", store)
    assert r8["weights"] == "fp8" and r8["weights_stated"] and r4["weights"] == "nvfp4" and not r4["weights_stated"]
    assert store._by_weights["fp8"].space == store.space and store._by_weights["fp8"].weights == "fp8"
    assert r8["model"]["value"] != pytest.approx(r4["model"]["value"], rel=1e-3)
    import yaml

    from perfmodel.errors import SpecError
    data = yaml.safe_load((catalog.builtin_root() / "claims" / "vllm-2.7x-at-peak.yaml").read_text())
    with pytest.raises(SpecError, match="unknown weight format 'fp7'"):
        catalog.validate("claims", {**data, "weights": "fp7"}, file="bad.yaml")
