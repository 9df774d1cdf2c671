"""Every catalog model validates, and its derived figures match the published ones."""

import pytest

from perfmodel import catalog
from perfmodel.arch import model_summary

REQUIRED = [
    "deepseek-v3", "deepseek-r1", "deepseek-v3.2", "deepseek-v4-flash", "deepseek-v4-pro", "deepseek-v4.1-flash",
    "kimi-k2", "kimi-k3", "glm-4.5", "glm-5", "glm-5.2", "qwen3-235b-a22b", "qwen3-next-80b-a3b", "gpt-oss-120b",
    "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.3-70b", "llama-3.1-405b", "llama-4-maverick",
    "mixtral-8x7b",
]


def _published():
    out = []
    for mid in catalog.ids("models"):
        m = catalog.model(mid)
        if m.published.total_params_b:
            out.append(pytest.param(mid, "total_params", m.published.total_params_b.value * 1e9, id=f"{mid}-total"))
        if m.published.active_params_b:
            out.append(pytest.param(mid, "active_params_per_token", m.published.active_params_b.value * 1e9,
                                    id=f"{mid}-active"))
    return out


@pytest.mark.parametrize("mid", REQUIRED)
def test_required_models_load(mid):
    m = catalog.model(mid)
    assert m.num_layers > 0 and m.sources


@pytest.mark.parametrize("mid,key,published", _published())
def test_params_within_3pct_of_published(mid, key, published):
    derived = model_summary(catalog.model(mid))[key]
    assert abs(derived / published - 1) <= 0.03, f"{mid} {key}: derived {derived/1e9:.2f}B vs published {published/1e9:.2f}B"


def test_published_kv_bytes_exact():
    checked = 0
    for mid in catalog.ids("models"):
        m = catalog.model(mid)
        if m.published.kv_bytes_per_token_bf16:
            assert model_summary(m)["kv_bytes_per_token"]["bf16"] == m.published.kv_bytes_per_token_bf16.value, mid
            checked += 1
    assert checked >= 2


def test_reference_kv_goldens():
    """Figures from ../shared/reference/models.md."""
    assert model_summary(catalog.model("deepseek-v3"))["kv_bytes_per_token"] == pytest.approx(
        {"bf16": 70272, "fp8": 40016, "fp4": model_summary(catalog.model("deepseek-v3"))["kv_bytes_per_token"]["fp4"]})
    assert model_summary(catalog.model("llama-3.1-70b"))["kv_bytes_per_token"]["bf16"] == 327680
    assert model_summary(catalog.model("deepseek-r1"))["id"] == "deepseek-v3"
