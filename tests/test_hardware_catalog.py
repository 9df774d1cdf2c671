"""The hardware catalog: every system loads, every number is sourced, key numbers match the
reference sheet (/work/shared/reference/hardware.md), and every variant validates."""

from __future__ import annotations

import pytest

from perfmodel import catalog
from perfmodel.specs.hardware import HARDWARE_FIELDS, HardwareSpecs

REQUIRED_IDS = [
    "h100-sxm", "h200-sxm", "h800-sxm", "b200", "b300",
    "gb200-nvl72", "gb300-nvl72", "vr200-nvl72", "mi355x",
]
HGX_IDS = ["h100-sxm", "h200-sxm", "h800-sxm", "b200", "b300"]
NVL72_IDS = ["gb200-nvl72", "gb300-nvl72", "vr200-nvl72"]
STATUSES = {"datasheet", "announced", "estimate"}


def _all_ids() -> list[str]:
    return catalog.ids("hardware")


def _sourced_values(spec):
    for name in HARDWARE_FIELDS:
        sv = getattr(spec.specs, name)
        if sv is not None:
            yield name, sv
    for vname, variant in spec.variants.items():
        for name, sv in variant.specs.items():
            yield f"{vname}:{name}", sv


def hw(name: str):
    return catalog.load("hardware", name)


@pytest.mark.parametrize("hid", REQUIRED_IDS)
def test_required_ids_load(hid):
    spec = hw(hid)
    assert spec.id == hid
    for name, (_lo, _hi, _unit, required) in HARDWARE_FIELDS.items():
        if required:
            assert getattr(spec.specs, name) is not None, f"{hid}: {name} missing"


def test_catalog_has_all_required_ids():
    assert set(REQUIRED_IDS) <= set(_all_ids())


@pytest.mark.parametrize("hid", _all_ids())
def test_every_value_has_status_and_http_url(hid):
    spec = hw(hid)
    for name, sv in _sourced_values(spec):
        assert sv.status in STATUSES, f"{hid} {name}: status {sv.status!r}"
        assert "http://" in sv.source or "https://" in sv.source, f"{hid} {name}: no URL"
        for part in sv.source.split(";"):
            assert part.strip().startswith(("http://", "https://")), f"{hid} {name}: {part!r}"


@pytest.mark.parametrize("hid", _all_ids())
def test_every_variant_validates(hid):
    spec = hw(hid)
    for vname in spec.variants:
        v = hw(f"{hid}@{vname}")
        assert v.id == f"{hid}@{vname}"
        HardwareSpecs.model_validate(v.specs.model_dump())
        for field, sv in spec.variants[vname].specs.items():
            assert getattr(v.specs, field).value == sv.value


@pytest.mark.parametrize("hid", _all_ids())
def test_derived_notes_present_for_estimates(hid):
    """Every estimate says how it was obtained."""
    for name, sv in _sourced_values(hw(hid)):
        if sv.status == "estimate":
            assert sv.note, f"{hid} {name}: estimate without a note"


# --- key numbers from the reference sheet -------------------------------------------------

def test_h100_dense_not_sparse():
    h = hw("h100-sxm")
    assert h.value("hbm_capacity_gb") == 80
    assert h.value("hbm_bandwidth_tbps") == 3.35
    assert h.value("bf16_dense_pflops") == pytest.approx(0.99)   # not the 1.98 sparse figure
    assert h.value("fp8_dense_pflops") == pytest.approx(1.98)    # not the 3.958 sparse figure
    assert h.value("fp4_dense_pflops") is None                   # Hopper: no native FP4
    assert h.value("gpu_tdp_w") == 700


def test_h200_and_h800():
    assert hw("h200-sxm").value("hbm_capacity_gb") == 141
    assert hw("h200-sxm").value("hbm_bandwidth_tbps") == 4.8
    assert hw("h200-sxm").value("bf16_dense_pflops") == pytest.approx(0.99)
    assert hw("h800-sxm").value("scaleup_bandwidth_gbps") == 200   # 400 GB/s bidirectional / 2
    assert hw("h800-sxm").value("fp8_dense_pflops") == pytest.approx(1.98)


def test_nvlink_halving_per_direction():
    assert hw("h100-sxm").value("scaleup_bandwidth_gbps") == 450    # 900 bidir
    assert hw("h200-sxm").value("scaleup_bandwidth_gbps") == 450
    for hid in ("b200", "b300", "gb200-nvl72", "gb300-nvl72"):
        assert hw(hid).value("scaleup_bandwidth_gbps") == 900       # 1.8 TB/s bidir
    assert hw("vr200-nvl72").value("scaleup_bandwidth_gbps") == 1800  # 3.6 TB/s bidir


def test_nic_per_direction():
    assert hw("h100-sxm").value("nic_bandwidth_gbps") == 50        # CX-7 400G
    assert hw("gb200-nvl72").value("nic_bandwidth_gbps") == 50
    assert hw("b300").value("nic_bandwidth_gbps") == 100           # CX-8 800G
    assert hw("gb300-nvl72").value("nic_bandwidth_gbps") == 100
    assert hw("vr200-nvl72").value("nic_bandwidth_gbps") == 200    # 2 x CX-9 800G


def test_blackwell_numbers():
    b200 = hw("b200")
    assert (b200.value("hbm_capacity_gb"), b200.value("hbm_bandwidth_tbps")) == (180, 7.7)
    assert b200.value("fp4_dense_pflops") == 9
    assert b200.value("fp8_dense_pflops") == 4.5
    assert b200.value("bf16_dense_pflops") == 2.25
    marketed = hw("b200@marketed-192gb")
    assert (marketed.value("hbm_capacity_gb"), marketed.value("hbm_bandwidth_tbps")) == (192, 8)

    b300 = hw("b300")
    assert b300.value("fp4_dense_pflops") == 14
    assert hw("b300@fp4-13.1pf").value("fp4_dense_pflops") == pytest.approx(13.1)
    assert b300.value("hbm_capacity_gb") == 288
    assert b300.value("hbm_visible_gib") == 270
    assert b300.value("gpu_tdp_w") == 1100

    gb200 = hw("gb200-nvl72")
    assert gb200.value("hbm_capacity_gb") == 186
    assert gb200.value("fp4_dense_pflops") == 10
    assert gb200.value("gpu_tdp_w") == 1200

    gb300 = hw("gb300-nvl72")
    assert gb300.value("fp4_dense_pflops") == 15
    assert gb300.value("fp8_dense_pflops") == 5
    assert gb300.value("bf16_dense_pflops") == 2.5
    assert gb300.value("hbm_capacity_gb") == 288
    assert gb300.value("hbm_visible_gib") == 279
    assert gb300.value("hbm_bandwidth_tbps") == 8
    assert gb300.value("gpu_tdp_w") == 1400
    assert gb300.value("host_memory_gb") == 240                    # 480 GB Grace / 2 GPUs


def test_rubin_base_and_variants():
    vr = hw("vr200-nvl72")
    assert vr.specs.hbm_bandwidth_tbps.value == 22
    assert vr.specs.hbm_bandwidth_tbps.status == "announced"
    assert vr.value("hbm_capacity_gb") == 288
    assert vr.value("fp4_dense_pflops") == 35
    assert vr.value("fp8_dense_pflops") == pytest.approx(1200 / 72, rel=1e-3)
    assert vr.value("gpu_tdp_w") == 1800
    assert vr.value("host_memory_gb") == 750                       # 1.5 TB Vera / 2
    assert vr.value("host_link_bandwidth_gbps") == 450             # 1.8 TB/s C2C bidir, 2 GPUs
    assert hw("vr200-nvl72@hbm-20tbps").specs.hbm_bandwidth_tbps.value == 20
    assert hw("vr200-nvl72@first-shipments").specs.hbm_bandwidth_tbps.value == 20
    assert hw("vr200-nvl72@fp4-50pf").value("fp4_dense_pflops") == 50
    assert hw("vr200-nvl72@tdp-2.3kw").value("gpu_tdp_w") == 2300
    # the variant changes only what it names
    assert hw("vr200-nvl72@hbm-20tbps").value("fp4_dense_pflops") == 35


def test_seed_ratios_not_encoded():
    """2.4x memory bandwidth and 1.7x NVLink (seed article) match no published pair."""
    vr, gb = hw("vr200-nvl72"), hw("gb300-nvl72")
    for v in ("", "@hbm-20tbps"):
        ratio = hw("vr200-nvl72" + v).value("hbm_bandwidth_tbps") / gb.value("hbm_bandwidth_tbps")
        assert ratio != pytest.approx(2.4, abs=0.05)
    assert vr.value("scaleup_bandwidth_gbps") / gb.value("scaleup_bandwidth_gbps") == pytest.approx(2.0)
    assert vr.value("fp4_dense_pflops") / gb.value("fp4_dense_pflops") == pytest.approx(2.33, abs=0.01)


def test_mi355x():
    mi = hw("mi355x")
    assert (mi.value("hbm_capacity_gb"), mi.value("hbm_bandwidth_tbps")) == (288, 8)
    assert (mi.value("fp4_dense_pflops"), mi.value("fp8_dense_pflops"), mi.value("bf16_dense_pflops")) == (10, 5, 2.5)
    assert mi.value("scaleup_domain_gpus") == 8
    assert mi.value("gpu_tdp_w") == 1400


@pytest.mark.parametrize("hid", HGX_IDS)
def test_hgx_domain_is_8(hid):
    assert hw(hid).value("scaleup_domain_gpus") == 8
    assert hw(hid).host_link_kind == "pcie"


@pytest.mark.parametrize("hid", NVL72_IDS)
def test_nvl72_domain_is_72(hid):
    spec = hw(hid)
    assert spec.value("scaleup_domain_gpus") == 72
    assert spec.host_link_kind == "nvlink-c2c"
    assert spec.host_memory_kind == "LPDDR5X"


def test_unknown_variant_is_an_error():
    from perfmodel.errors import SpecError
    with pytest.raises(SpecError):
        hw("vr200-nvl72@no-such-variant")
