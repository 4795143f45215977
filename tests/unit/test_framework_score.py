"""PreScore / Score / NormalizeScore semantics: weights, Skip, ranges, in-place normalization."""

from __future__ import annotations

from kubesched.sdk import MAX_NODE_SCORE, Code, CycleState, NodeScore, Pod, Status, hookimpl


def _table_score(table: dict[str, int], calls: list | None = None, tag: str = "") -> type:
    class S:
        @hookimpl
        def score(self, state, pod, node_info):
            if calls is not None:
                calls.append((tag, node_info.name))
            return table[node_info.name]

    return S


def test_scores_are_weighted_and_summed(ks):
    A = _table_score({"n1": 90, "n2": 0, "n3": 10})
    B = _table_score({"n1": 0, "n2": 40, "n3": 30})
    # unweighted: n1=90, n2=40, n3=40 -> n1; with B weighted 3: n1=90, n2=120, n3=100 -> n2
    r = ks.run({"A": A, "B": B}, {"score": [("A", 1), ("B", 3)]}, ks.nodes(3) + [ks.pod("p")])
    assert r.result("p").node == "n2"
    r = ks.run({"A": A, "B": B}, {"score": [("A", 1), ("B", 1)]}, ks.nodes(3) + [ks.pod("p")])
    assert r.result("p").node == "n1"


def test_weighted_totals_per_node(ks):
    A = _table_score({"n1": 90, "n2": 0, "n3": 10})
    B = _table_score({"n1": 0, "n2": 40, "n3": 30})
    r = ks.build({"A": A, "B": B}, {"score": [("A", 2), ("B", 3)]}, ks.nodes(3)).start()
    fw = r.framework
    assert fw.score_weights == {"A": 2, "B": 3}
    nodes = r.scheduler.cache.update_snapshot().list()
    scores, st = fw.run_score_plugins(CycleState(), Pod(ks.pod("p")), nodes, details=True)
    assert st.is_success()
    totals = {s.name: s.total_score for s in scores}
    assert totals == {"n1": 180, "n2": 120, "n3": 20 + 90}
    per = {
        s.name: {ps.name: (ps.raw, ps.normalized, ps.weighted) for ps in s.scores} for s in scores
    }
    assert per["n2"] == {"A": (0, 0, 0), "B": (40, 40, 120)}


def test_default_weight_is_one(ks):
    A = _table_score({"n1": 5, "n2": 6})
    r = ks.build({"A": A}, {"score": ["A"]}, ks.nodes(2))
    assert r.framework.score_weights == {"A": 1}


def test_normalize_score_rewrites_in_place(ks):
    seen: list = []

    class S:
        @hookimpl
        def score(self, node_info):
            return {"n1": 1000, "n2": 5000, "n3": 3000}[node_info.name]

        @hookimpl
        def normalize_score(self, state, pod, scores):
            seen.append([(s.name, s.score) for s in scores])
            hi = max(s.score for s in scores)
            for s in scores:
                s.score = s.score * MAX_NODE_SCORE // hi

    r = ks.build({"S": S}, {"score": ["S"]}, ks.nodes(3)).start()
    nodes = r.scheduler.cache.update_snapshot().list()
    scores, st = r.framework.run_score_plugins(CycleState(), Pod(ks.pod("p")), nodes, details=True)
    assert st.is_success(), st
    assert sorted(seen[0]) == [("n1", 1000), ("n2", 5000), ("n3", 3000)]
    assert {s.name: s.total_score for s in scores} == {"n1": 20, "n2": 100, "n3": 60}
    raw = {s.name: s.scores[0].raw for s in scores}
    assert raw == {"n1": 1000, "n2": 5000, "n3": 3000}
    r = ks.run({"S": S}, {"score": ["S"]}, ks.nodes(3) + [ks.pod("p")])
    assert r.result("p").node == "n2"


def test_normalize_score_out_of_range_is_an_error(ks):
    class S:
        @hookimpl
        def score(self, node_info):
            return 50

        @hookimpl
        def normalize_score(self, scores):
            for s in scores:
                s.score = 101 if s.name == "n2" else 0

    r = ks.run({"S": S}, {"score": ["S"]}, ks.nodes(3) + [ks.pod("p")])
    res = r.result("p")
    assert res.status == "Error"
    assert "invalid score 101" in res.message
    assert '"S"' in res.message
    assert r.cluster.binds == []


def test_negative_normalized_score_is_an_error(ks):
    class S:
        @hookimpl
        def score(self, node_info):
            return 50

        @hookimpl
        def normalize_score(self, scores):
            scores[0].score = -1

    r = ks.run({"S": S}, {"score": ["S"]}, ks.nodes(2) + [ks.pod("p")])
    assert r.result("p").status == "Error"
    assert "invalid score -1" in r.result("p").message


def test_score_out_of_range_without_normalize_is_an_error(ks):
    S = _table_score({"n1": 1000, "n2": 0})
    r = ks.run({"S": S}, {"score": ["S"]}, ks.nodes(2) + [ks.pod("p")])
    assert r.result("p").status == "Error"
    assert "invalid score 1000" in r.result("p").message


def test_normalize_returning_error_status_fails_cycle(ks):
    class S:
        @hookimpl
        def score(self, node_info):
            return 1

        @hookimpl
        def normalize_score(self, scores):
            return Status.failed("cannot normalize")

    r = ks.run({"S": S}, {"score": ["S"]}, ks.nodes(2) + [ks.pod("p")])
    assert r.result("p").status == "Error"
    assert "cannot normalize" in r.result("p").message


def test_score_status_other_than_success_fails_cycle(ks):
    class S:
        @hookimpl
        def score(self, node_info):
            return 0, Status.unschedulable("nope")

    r = ks.run({"S": S}, {"score": ["S"]}, ks.nodes(2) + [ks.pod("p")])
    assert r.result("p").status == "Error"
    assert "nope" in r.result("p").message


def test_prescore_skip_disables_its_score(ks, calls):
    class A:
        @hookimpl
        def pre_score(self, state, pod, nodes):
            return Status.skip()

        @hookimpl
        def score(self, node_info):
            calls.append(("A", node_info.name))
            return 100 if node_info.name == "n1" else 0

    class B:
        @hookimpl
        def pre_score(self, state, pod, nodes):
            calls.append(("B-prescore", tuple(sorted(n.name for n in nodes))))

        @hookimpl
        def score(self, node_info):
            calls.append(("B", node_info.name))
            return 100 if node_info.name == "n3" else 0

    r = ks.run(
        {"A": A, "B": B}, {"preScore": ["A", "B"], "score": ["A", "B"]}, ks.nodes(3) + [ks.pod("p")]
    )
    assert not [c for c in calls if c[0] == "A"]
    assert ("B-prescore", ("n1", "n2", "n3")) in calls
    assert r.result("p").node == "n3"


def test_prescore_skip_is_per_cycle(ks, calls):
    class A:
        @hookimpl
        def pre_score(self, pod):
            return Status.skip() if pod.name == "first" else None

        @hookimpl
        def score(self, pod, node_info):
            calls.append(pod.name)
            return 1

    ks.run(
        {"A": A},
        {"preScore": ["A"], "score": ["A"]},
        ks.nodes(2) + [ks.pod("first"), ks.pod("second")],
    )
    assert set(calls) == {"second"}


def test_prescore_error_fails_cycle(ks):
    class A:
        @hookimpl
        def pre_score(self):
            return Status.unschedulable("should not be here")

        @hookimpl
        def score(self):
            return 1

    r = ks.run({"A": A}, {"preScore": ["A"], "score": ["A"]}, ks.nodes(2) + [ks.pod("p")])
    assert r.result("p").status == "Error"
    assert "should not be here" in r.result("p").message


def test_prescore_only_sees_feasible_nodes(ks, calls):
    class F:
        @hookimpl
        def filter(self, node_info):
            return Status.unschedulable("no") if node_info.name == "n2" else None

    class A:
        @hookimpl
        def pre_score(self, nodes):
            calls.append(sorted(n.name for n in nodes))

        @hookimpl
        def score(self, node_info):
            calls.append(node_info.name)
            return 1

    ks.run(
        {"F": F, "A": A},
        {"filter": ["F"], "preScore": ["A"], "score": ["A"]},
        ks.nodes(3) + [ks.pod("p")],
    )
    assert calls[0] == ["n1", "n3"]
    assert sorted(calls[1:]) == ["n1", "n3"]


def test_node_score_is_mutable_dataclass():
    s = NodeScore("n1", 5)
    s.score = 7
    assert s.score == 7 and s.name == "n1"


def test_scoring_skipped_for_single_feasible_node(ks, calls):
    """kube-scheduler skips scoring when only one node is feasible."""
    S = _table_score({"n1": 1}, calls, "S")
    r = ks.run({"S": S}, {"score": ["S"]}, ks.nodes(1) + [ks.pod("p")])
    assert calls == []
    assert r.result("p").node == "n1"


def test_score_error_code_is_error(ks):
    class S:
        @hookimpl
        def score(self, node_info):
            return 500

    r = ks.build({"S": S}, {"score": ["S"]}, ks.nodes(2)).start()
    nodes = r.scheduler.cache.update_snapshot().list()
    _, st = r.framework.run_score_plugins(CycleState(), Pod(ks.pod("p")), nodes, details=True)
    assert st.code is Code.ERROR


class _FloatNormalizer:
    @hookimpl
    def score(self, node_info):
        return {"n1": 1, "n2": 7}[node_info.name]

    @hookimpl
    def normalize_score(self, scores):
        for s in scores:
            s.score = s.score * MAX_NODE_SCORE / 7


_FLOAT_MESSAGE = 'plugin "F" hook normalize_score set the score of node "n1" to float 14.285714285714286; expected an int'


def test_normalize_score_setting_a_float_is_a_contract_error(ks):
    r = ks.run({"F": _FloatNormalizer}, {"score": ["F"]}, ks.nodes(2) + [ks.pod("p")])
    res = r.result("p")
    assert res.status == "Error"
    assert res.message == _FLOAT_MESSAGE
    assert r.cluster.binds == []


def test_normalize_score_float_is_an_error_in_score_totals_with_reuse(ks):
    r = ks.build({"F": _FloatNormalizer}, {"score": ["F"]}, ks.nodes(2)).start()
    nodes = r.scheduler.cache.update_snapshot().list()
    reuse: dict = {}
    for _ in range(2):  # computed, then from the reuse table
        totals, st = r.framework.score_totals(CycleState(), Pod(ks.pod("p")), nodes, reuse=reuse)
        assert (totals, st.code, st.message, st.plugin) == ([], Code.ERROR, _FLOAT_MESSAGE, "F")


def test_normalize_score_may_set_integers_of_other_int_types(ks):
    class Index:
        def __init__(self, v):
            self.v = v

        def __index__(self):
            return self.v

    class N:
        @hookimpl
        def score(self, node_info):
            return {"n1": 1, "n2": 7}[node_info.name]

        @hookimpl
        def normalize_score(self, scores):
            for s in scores:
                s.score = Index(s.score * 10)

    r = ks.build({"N": N}, {"score": ["N"]}, ks.nodes(2)).start()
    nodes = r.scheduler.cache.update_snapshot().list()
    for reuse in (None, {}):
        totals, st = r.framework.score_totals(CycleState(), Pod(ks.pod("p")), nodes, reuse=reuse)
        assert st.is_success(), st
        assert [(type(t), t) for t in totals] == [(int, 10), (int, 70)]
