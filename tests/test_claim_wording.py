"""Issue 56 item 4 (review of the regenerated report): wording a planner reads one way."""

from perfmodel.claims.fmt import faster_slower


def test_a_speed_factor_below_one_reads_slower_never_a_fraction_faster():
    # the Kimi K3 curve-end need: 255 tok/s/user against a modeled 364 needs a 16.3 ms step instead of 11.4 ms,
    # 11.4 / 16.3 = 0.70 of the speed: '1.43x slower' (it printed '0.70x faster')
    assert faster_slower(11.4 / 16.3) == "1.43x slower"
    assert faster_slower(7.2 / 4.59) == "1.57x faster"
    assert faster_slower(1.0) == "1.00x faster"
