"""The measured envelope (analyses/measured_envelope.py): each derived quantity hand-checked on records built here,
the maxima and the ids that set them, the verdicts, and the plan's widening factor."""

import math

import pytest

from perfmodel.analyses import envelope_error as ee
from perfmodel.analyses import measured_envelope as me
from perfmodel.specs.records import read_records

HEADER = ("id,kind,hardware,model,workload,engine,serving,gpus,prefill_gpus,decode_gpus,decode_workers,tp,ep,isl,osl,"
          "concurrency,batch_per_gpu,kv_cache,hardware_b,metric,value")
ROWS = [
    # aggregated: 64 clients on 8 GPUs, TP 4 (two instances of 4)
    "r1,point,h100-sxm,llama-3.3-70b,,vllm,aggregated,8,,,,4,,1000,100,64,,fp8,,tpot_ms,10",
    # disaggregated, decode pool stated: 4 decode instances of 32 / 4 = 8 GPUs
    "r2,point,gb200-nvl72,deepseek-v3,,dynamo-sglang,disaggregated,40,8,32,4,8,8,2000,100,640,,,,tpot_ms,10",
    # disaggregated, decode pool not stated: 2 decode workers x TP 4 = 8 decode GPUs (gpus blank)
    "r3,point,gb300-nvl72,qwen3.5-397b-a17b,agentx,dynamo-sglang,disaggregated,,,,2,4,,,,704,,,,tpot_ms,10",
    # agentic aggregated on 8 GPUs, 96 sessions, TP 8 EP 8, batch_per_gpu published (it wins over concurrency / gpus)
    "r4,point,b200,deepseek-v4-pro,agentx,sglang,aggregated,8,,,,8,8,,,96,5,,,tpot_ms,10",
    # the same configuration's second metric row: the same maxima, a second id
    "r5,point,b200,deepseek-v4-pro,agentx,sglang,aggregated,8,,,,8,8,,,96,5,,,ttft_ms,10",
    # a ratio row and a prefill-only row are left out
    "r6,ratio,gb300-nvl72,deepseek-v3,,sglang,,72,,,,1,72,1000,1000,9999,,,gb200-nvl72,total_tps_per_gpu,1.2",
    "r7,point,gb200-nvl72,deepseek-v3,,sglang,prefill_only,72,,,,1,72,8000,1,9999,,,,input_tps_per_gpu,10",
]


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    p = tmp_path_factory.mktemp("rec") / "r.csv"
    p.write_text("\n".join([HEADER, *ROWS]) + "\n")
    return me.record_frame(read_records(p)).set_index("id", drop=False)


AGENTX_CONTEXT = 142_000.0     # workloads/agentx.yaml: the mean context of a turn (serving/lengths)


def test_agentx_mean_context_is_the_one_the_hand_checks_use():
    from perfmodel.analyses.evaluation import workload_info
    assert workload_info("agentx").lengths["isl"] == AGENTX_CONTEXT


def test_each_quantity_by_hand(frame):
    assert set(frame.index) == {"r1", "r2", "r3", "r4", "r5"}          # ratio and prefill-only rows left out
    r1, r2, r3, r4 = (frame.loc[i] for i in ("r1", "r2", "r3", "r4"))
    # r1: 64 / 8 = 8 per GPU; 64 x 1000 / 8 = 8,000 tokens; x 163,840 B/token (Llama-3.3-70B fp8 KV, models list)
    assert r1.batch_per_gpu == 8 and r1.context_per_gpu == 8_000 and r1.span_gpus == 4 and math.isnan(r1.ep)
    assert r1.kv_demand_gb_per_gpu == pytest.approx(8_000 * 163_840 / 1e9)
    assert math.isnan(r1.sessions_per_gpu)                                   # not agentic
    # r2: per decode GPU: 640 / 32 = 20; 640 x 2000 / 32 = 40,000 tokens; span 32 / 4 = 8
    assert r2.decode_gpus_used == 32 and r2.batch_per_gpu == 20 and r2.context_per_gpu == 40_000
    assert r2.span_gpus == 8 and r2.ep == 8 and r2.engine_family == "sglang"
    # r3: decode GPUs 2 x 4 = 8; 704 / 8 = 88 sessions per decode GPU; 704 x 142,000 / 8 = 12,496,000 tokens;
    # no gpus stated: no sessions per GPU of both pools
    assert r3.decode_gpus_used == 8 and r3.batch_per_gpu == 88 and r3.context_per_gpu == 704 * AGENTX_CONTEXT / 8
    assert r3.span_gpus == 4 and math.isnan(r3.sessions_per_gpu) and r3.agentic
    # r4: batch_per_gpu as published (5, not 96 / 8); sessions 96 / 8 = 12 per GPU; 96 x 142,000 / 8 tokens
    assert r4.batch_per_gpu == 5 and r4.sessions_per_gpu == 12 and r4.context_per_gpu == 96 * AGENTX_CONTEXT / 8
    assert r4.span_gpus == 8


def test_families():
    assert me.engine_family("dynamo-sglang") == "sglang" and me.engine_family("trtllm") == "trtllm"
    assert me.engine_family("none") is None and me.engine_family(None) is None
    assert me.hardware_family("gb200-nvl72") == me.hardware_family("gb300-nvl72") == "nvidia-scaleup72"
    assert me.hardware_family("b200") == "nvidia-scaleup8" != me.hardware_family("mi355x")


def test_envelope_maxima_and_ids(frame):
    env = me.envelope("gb300-nvl72", "dynamo-sglang", frame.reset_index(drop=True))
    hw, fam = env["hardware"], env["hardware_family"]
    assert hw["batch_per_gpu"].value == 88 and hw["batch_per_gpu"].record_ids == ("r3",)
    assert hw["ep"] is None                                      # r3 states no EP
    # the family adds GB200's r2: EP 8, span 8 beats r3's 4; batch 88 still r3's
    assert fam["ep"].value == 8 and fam["ep"].record_ids == ("r2",)
    assert fam["span_gpus"].value == 8 and fam["batch_per_gpu"].record_ids == ("r3",)
    # b200 with sglang: r4 and r5 (one configuration, two metrics) both set each maximum
    b = me.envelope("b200", "sglang", frame.reset_index(drop=True))["hardware"]
    assert b["sessions_per_gpu"].value == 12 and b["sessions_per_gpu"].record_ids == ("r4", "r5")
    assert b["sessions_per_gpu"].records == 2
    # another engine family sees none of them; no engine (the roofline profile) sees every engine's
    assert me.envelope("b200", "vllm", frame.reset_index(drop=True))["hardware"]["batch_per_gpu"] is None
    assert me.envelope("h100-sxm", None, frame.reset_index(drop=True))["hardware"]["batch_per_gpu"].value == 8


def test_extrapolation_ratios_and_verdicts(frame):
    row = {"hardware": "gb300-nvl72", "model": "deepseek-v3", "kv_cache": "fp8", "gpus": 16, "batch": 320, "ep": 16,
           "isl": 2000.0, "sessions": 800.0, "sessions_per_gpu": 10.0, "concurrency": 500.0}
    ext = me.extrapolation(row, engine="dynamo-sglang", frame=frame.reset_index(drop=True)).set_index("quantity")
    # batch 320 / 16 = 20 per GPU against r3's 88 (hardware level): inside, ratio 20 / 88
    assert ext.loc["batch_per_gpu", "model"] == 20
    assert ext.loc["batch_per_gpu", "hardware_ratio"] == pytest.approx(20 / 88)
    assert ext.loc["batch_per_gpu", "hardware_verdict"] == "inside"
    # EP 16: nothing on gb300 states EP; the family's largest is r2's 8: outside by 2x
    assert ext.loc["ep", "hardware_verdict"] == "nothing measured"
    assert ext.loc["ep", "hardware_family_ratio"] == 2 and ext.loc["ep", "hardware_family_verdict"] == "outside by 2x"
    assert ext.loc["ep", "hardware_family_ids"] == "r2"
    # context held: sessions 800 x 2000 / 16 = 100,000 tokens per GPU (the sessions, not the clients, hold it)
    assert ext.loc["context_per_gpu", "model"] == 100_000
    assert ext.loc["kv_demand_gb_per_gpu", "model"] == pytest.approx(100_000 * 40_016 / 1e9)   # DeepSeek-V3 fp8 MLA
    assert ext.loc["span_gpus", "hardware_family_verdict"] == "outside by 2x"
    assert ext.loc["sessions_per_gpu", "hardware_family_verdict"] == "nothing measured"
    # a point that is not agentic has no sessions: the quantity does not apply
    fixed = {k: v for k, v in row.items() if k not in ("sessions", "sessions_per_gpu")}
    ext2 = me.extrapolation(fixed, engine="sglang", frame=frame.reset_index(drop=True)).set_index("quantity")
    assert ext2.loc["sessions_per_gpu", "hardware_verdict"] == "not applicable"
    assert ext2.loc["context_per_gpu", "model"] == 500 * 2000 / 16          # clients in the loop hold the context


def test_verdict_text():
    assert me.verdict(1.0) == "inside" and me.verdict(0.3) == "inside"
    assert me.verdict(1.5) == "outside by 1.5x" and me.verdict(16.0) == "outside by 16x"
    assert me.verdict(float("nan")) == "nothing measured"


def test_distance_ratio_rule():
    # the largest ratio beyond the envelope, never below 1; NaN (nothing measured, not applicable) skipped
    assert ee.distance_ratio({"batch_per_gpu": 0.5, "ep": 2.0, "context_per_gpu": 3.0, "x": float("nan")}) == 3.0
    assert ee.distance_ratio([0.2, 0.9]) == 1.0
    assert ee.distance_ratio([]) == 1.0 and ee.distance_ratio([float("nan")]) == 1.0


def test_band_widening_reads_a_rows_ratios(frame):
    row = {"hardware": "gb300-nvl72", "profile": "dynamo-sglang", "model": "deepseek-v3", "kv_cache": "fp8",
           "gpus": 16, "batch": 320, "ep": 16, "isl": 2000.0, "sessions": 800.0, "sessions_per_gpu": 10.0}
    f = frame.reset_index(drop=True)
    ev = {"slope_pessimistic": 0.5, "slope_optimistic": -1.0, "reach": 100.0}
    # family level: each maximum alone gives 2 (EP and span 16 vs r2's 8), but no run reached them together:
    # the joint ratio 2.5 (r2, KV demand; test_joint_nearest_run) is the distance
    ext = me.extrapolation(row, frame=f).set_index("quantity")
    assert ee.distance_ratio(ext.loc[ext.index != "joint", "hardware_family_ratio"]) == 2.0
    r, w_low, w_high, text = ee.band_widening(row, frame=f, ev=ev)
    assert r == pytest.approx(2.5)
    assert w_low == pytest.approx(2.5 ** 0.5) and w_high == pytest.approx(2.5)       # exp(0.5 ln 2.5), exp(ln 2.5)
    assert "distance 2.5x; 80% band: low end / 1.58, high end x 2.5" in text
    # hardware level: only r3, whose blank EP reads as 1 in the joint: 16 / 1; the evidence reaching 4x reads it there
    r, w_low, w_high, text = ee.band_widening(row, level="hardware", frame=f, ev={**ev, "reach": 4.0})
    assert r == 16.0 and w_low == pytest.approx(2.0) and w_high == pytest.approx(4.0)
    assert "distance 16x, read at 4x (the held-out evidence reaches 4x" in text


def test_joint_nearest_run(frame):
    """Point: 20 per GPU, EP 16, KV demand 800 x 2000 / 16 tokens x 40,016 B = 4.0016 GB, span 16.
    r2: 20 per GPU, EP 8, 40,000 tokens x 40,016 B = 1.60064 GB, span 8 -> worst 4.0016 / 1.60064 = 2.5 (KV).
    r3: 88 per GPU, EP blank (1), 12,496,000 tokens x 15,360 B (Qwen3.5 fp8) = 191.9 GB, span 4 -> worst 16 (EP)."""
    model = {"batch_per_gpu": 20.0, "ep": 16.0, "kv_demand_gb_per_gpu": 4.0016, "span_gpus": 16.0,
             "sessions_per_gpu": 10.0}
    fam = frame[frame["hardware_family"] == "nvidia-scaleup72"].reset_index(drop=True)
    ratio, rid, binds = me.joint(model, fam)
    assert ratio == pytest.approx(2.5) and rid == "r2" and binds == "kv_demand_gb_per_gpu"
    ratio, rid, binds = me.joint(model, fam[fam["id"] == "r3"])
    assert ratio == 16 and rid == "r3" and binds == "ep"
    # a point every run dominates is inside; quantities the point lacks are skipped; no records: nan
    small = {"batch_per_gpu": 1.0, "ep": 1.0, "kv_demand_gb_per_gpu": 0.1, "span_gpus": math.nan}
    assert me.joint(small, fam)[0] <= 1
    assert math.isnan(me.joint(model, fam.iloc[:0])[0])
    ext = me.extrapolation({"hardware": "gb300-nvl72", "model": "deepseek-v3", "gpus": 16, "batch": 320, "ep": 16,
                            "isl": 2000.0, "sessions": 800.0, "sessions_per_gpu": 10.0},
                           engine="sglang", frame=frame.reset_index(drop=True)).set_index("quantity")
    assert ext.loc["joint", "hardware_family_verdict"] == "outside by 2.5x"
    assert ext.loc["joint", "hardware_family_ids"] == "nearest r2 (kv_demand_gb_per_gpu)"


def test_shipped_records_hand_checked_row():
    """s00609 (data/shared/inferencex-silicon.csv): GB300, SGLang, disaggregated, 7,680 clients on 8 decode GPUs
    (one decode worker, DEP8), 1k/1k: 960 per decode GPU, 7,680 x 1,024 / 8 tokens, span 8."""
    f = me.shipped_frame().set_index("id")
    r = f.loc["s00609"]
    assert r.batch_per_gpu == 960 and r.context_per_gpu == 7680 * 1024 / 8 and r.span_gpus == 8 and r.ep == 8
    assert len(f) > 3000 and f.index.is_unique
