"""The reward formula on hand-computed examples (seed spec, "Reward")."""

import pytest

from grader import reward


def test_mean_of_empty_family_is_one():
    assert reward.mean([]) == 1.0


def test_alert_q_multiplies_families_and_weights_labels():
    # E=1, dup 1, fire/timing 3 of 4, silent 1, labels 1 of 2: 0.75 * (0.7 + 0.3 * 0.5)
    q = reward.alert_q(True, [1.0], [1, 1, 1, 0], [1, 1], [1, 0])
    assert q == pytest.approx(0.75 * 0.85)


def test_alert_q_is_zero_when_the_rule_does_not_exist():
    assert reward.alert_q(False, [1.0], [1.0], [1.0], [1.0]) == 0.0


def test_always_firing_rule_scores_zero():
    assert reward.alert_q(True, [1.0], [1.0, 1.0], [0.0, 0.0, 0.0], [1.0]) == 0.0


def test_missing_continue_gives_jaccard_one_half():
    assert reward.jaccard({"a", "b"}, {"a"}) == 0.5
    assert reward.route_q([0.5], [1.0]) == 0.5


def test_normalized_score_against_pristine():
    assert reward.normalized_score(0.0, 0.0) == 0.0
    assert reward.normalized_score(1.0, 0.4) == 1.0
    assert reward.normalized_score(0.7, 0.4) == pytest.approx(0.5)
    assert reward.normalized_score(0.0, 0.5) == -0.25  # clipped regression


def test_progress_and_reward_by_hand():
    # alert s=1 (w3), recording s=1 (w2), route s=0 (w2), inhibit s=0.5 (w2), preservation 1
    scores = [(3, 1.0), (2, 1.0), (2, 0.0), (2, 0.5)]
    p = reward.progress(scores, 1.0)
    assert p == pytest.approx(6.0 / 9.0)
    value, solved = reward.reward([s for _, s in scores], 1.0, True, False, p)
    assert not solved and value == pytest.approx(0.4 * 6.0 / 9.0)
    # preservation 0.5 scales progress by 0.75
    assert reward.progress(scores, 0.5) == pytest.approx(0.75 * 6.0 / 9.0)


def test_solved_needs_everything_and_tamper_zeroes():
    value, solved = reward.reward([1.0, 1.0], 1.0, True, False, 1.0)
    assert solved and value == 1.0
    assert reward.reward([1.0, 1.0], 1.0, False, False, 1.0) == (0.4, False)
    assert reward.reward([1.0, 1.0], 1.0, True, True, 1.0) == (0.0, False)
