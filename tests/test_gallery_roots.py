"""Cause pages of the failure gallery group by the mistake, not by the alert or receiver it hit
(issue 32: 129 groups for 24 runs of one catch-all route): names, label values, quoted values
and numbers vary inside one group; a route with no matchers stays apart from one with some."""

from __future__ import annotations

from exporter.gallery import CAUSE, FailureKind, root_signature

CATCH_ALL = [
    ("route.routes[0] {} -> core-services-pager matched {alertname=BackupJobFailed, severity=page, team=unassigned}, "
    "adding receiver core-services-pager; amtool path: default-route > x"),
    ("route.routes[2] {} -> growth-pager matched {alertname=MediaEdgeDown, service=media-edge, severity=page}, "
    "adding receiver growth-pager; amtool path: default-route > y"),
]


def test_one_mistake_on_different_alerts_and_receivers_is_one_root():
    assert root_signature(CATCH_ALL[0]) == root_signature(CATCH_ALL[1])
    assert "{}" in root_signature(CATCH_ALL[0]) and "amtool path" not in root_signature(CATCH_ALL[0])
    scoped = CATCH_ALL[0].replace("{} ->", '{severity="page"} ->')
    assert root_signature(scoped) != root_signature(CATCH_ALL[0])  # a route with matchers is another mistake
    assert root_signature("HighErrorRatio fires at 70m with labels {service=a}") == \
        root_signature("ProfileApiDown fires at 85m with labels {team=b, severity=page}")
    assert root_signature("HighErrorRatio fires at 70m") != root_signature("HighErrorRatio is pending at 70m")


def test_a_cause_page_counts_every_failure_in_its_root_group():
    page = FailureKind(axis=CAUSE, name="route-overmatched", file="gallery/cause-route-overmatched.html")
    for number, cause in enumerate(CATCH_ALL * 3):
        page.add_failure(f"run-{number % 4}", cause, {"n": number}, signature=root_signature(cause))
    data = page.as_dict()
    assert len(data["groups"]) == 1
    group = data["groups"][0]
    assert group["count"] == 6 and group["runs"] == 4 and group["detail"] == CATCH_ALL[0]
