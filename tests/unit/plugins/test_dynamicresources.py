"""DynamicResources: PreFilter, PostFilter, Score and the args for pods without claims and for
claims PreFilter cannot find, from kube-scheduler v1.36.3's dynamicresources_test.go (TestPlugin;
the whole table is in test_dynamicresources_plugin.py), and the
FailedScheduling message its PostFilter and DefaultPreemption's compose (framework.go
RunPostFilterPlugins joins the PostFilter plugins' reasons with ", ", in profile order)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.plugins.dynamicresources import DynamicResources
from kubesched.sdk import ArgsError, Code, CycleState, Pod, Status, hookimpl
from kubesched.testing import build_plugin, make_pod

#: the claim lister's NotFound (PreFilter's foreachPodResourceClaim)
MISSING = 'could not find ResourceClaim "default/my-pod-my-resource"'


def _claim_pod() -> Pod:
    w = make_pod().name("my-pod").uid("my-pod").namespace("default")
    o = w.obj()
    o["spec"]["resourceClaims"] = [{"name": "my-resource", "resourceClaimName": "my-pod-my-resource"}]
    return Pod(o)


def test_empty_pod_skips_prefilter_and_has_no_claims_to_deallocate() -> None:
    """TestPlugin/empty: PreFilter Skip, PostFilter Unschedulable (no new claims to deallocate)."""
    pl = build_plugin(DynamicResources)
    state = CycleState()
    p = Pod(make_pod().name("foo").namespace("default").obj())
    assert pl.pre_filter(state, p).code is Code.SKIP
    result, st = pl.post_filter(state, p)
    assert result is None
    assert (st.code, st.message) == (Code.UNSCHEDULABLE, "no new claims to deallocate")


def test_empty_pod_pre_bind_pre_flight_skips() -> None:
    """TestPlugin/empty: preBindPreFlightStatus Skip (no claims: PreBind has nothing to do),
    and PreBind itself succeeds without work."""
    pl = build_plugin(DynamicResources)
    state = CycleState()
    p = Pod(make_pod().name("foo").namespace("default").obj())
    pl.pre_filter(state, p)
    assert pl.pre_bind_pre_flight(state) == Status.skip()
    assert pl.pre_bind(state, p, "n1") is None


def test_pre_bind_pre_flight_without_prefilter_state_is_an_error() -> None:
    """getStateData's ErrNotFound, as PostFilter's."""
    pl = build_plugin(DynamicResources)
    st = pl.pre_bind_pre_flight(CycleState())
    assert (st.code, st.message) == (Code.ERROR, "not found")
    st = pl.pre_bind(CycleState(), Pod(make_pod().name("foo").obj()), "n1")
    assert (st.code, st.message) == (Code.ERROR, "not found")


def test_pod_with_claims_is_rejected_and_has_no_claims_to_deallocate() -> None:
    """TestPlugin/missing-class: a PreFilter that stops before recording the claims leaves the
    state empty, so PostFilter has no new claims to deallocate. Here the claim does not exist."""
    pl = build_plugin(DynamicResources)
    state = CycleState()
    st = pl.pre_filter(state, _claim_pod())
    assert (st.code, st.message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, MISSING)
    _, st = pl.post_filter(state, _claim_pod())
    assert (st.code, st.message) == (Code.UNSCHEDULABLE, "no new claims to deallocate")


def test_post_filter_without_prefilter_state_is_an_error() -> None:
    """getStateData: CycleState.Read's ErrNotFound ("not found") as an Error status, when an
    earlier PreFilter plugin ended the cycle before DynamicResources' PreFilter ran."""
    _, st = build_plugin(DynamicResources).post_filter(CycleState(), _claim_pod())
    assert (st.code, st.message) == (Code.ERROR, "not found")


def test_prefilter_state_survives_cycle_state_clone() -> None:
    """Preemption clones the CycleState; the clone still has the plugin's state."""
    pl = build_plugin(DynamicResources)
    state = CycleState()
    p = Pod(make_pod().name("foo").obj())
    pl.pre_filter(state, p)
    _, st = pl.post_filter(state.clone(), p)
    assert st.message == "no new claims to deallocate"


# --- the PostFilter plugins together (RunPostFilterPlugins, FitError.Error) -------------------------


def _full(calls: list) -> type:
    class Full:
        @hookimpl
        def filter(self, node_info):
            calls.append(("filter", node_info.name))
            return Status.unschedulable("Insufficient cpu")

    return Full


POST_FILTER = {"postFilter": ["DynamicResources", "DefaultPreemption"]}


def test_message_joins_dynamic_resources_before_preemption(ks, calls) -> None:
    """kube-scheduler 1.36 with the default profile: DynamicResources' reason comes first, then
    DefaultPreemption's, joined with ", " (fwk.NewStatus(Unschedulable, reasons...).Message())."""
    r = ks.run(
        {"Full": _full(calls)},
        {"preFilter": ["DynamicResources"], "filter": ["Full"], **POST_FILTER},
        ks.nodes(2) + [ks.pod("p", cpu="1")],
    )
    expected = (
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert r.result("p").message == expected
    (ev,) = r.events("FailedScheduling")
    assert ev.note == expected


def test_message_of_a_pod_with_claims(ks, calls) -> None:
    """A pod with claims: every node UnschedulableAndUnresolvable from PreFilter, so preemption is
    not helpful; DynamicResources' PostFilter still speaks first."""
    p = ks.pod("p")
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "no-such-claim"}]
    r = ks.run({"Full": _full(calls)}, {"preFilter": ["DynamicResources"], "filter": ["Full"], **POST_FILTER},
               ks.nodes(2) + [p])
    assert r.result("p").message == (
        '0/2 nodes are available: could not find ResourceClaim "default/no-such-claim". no new claims to deallocate, '
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    assert calls == []  # no Filter ran


def test_preemption_success_drops_the_earlier_reason(ks) -> None:
    """A Success from DefaultPreemption ends RunPostFilterPlugins with its own (empty) message:
    the preemptor's FailedScheduling has no PostFilter part, then it is bound."""
    r = ks.run(
        {},
        {"preFilter": ["NodeResourcesFit", "DynamicResources"], "filter": ["NodeResourcesFit"], **POST_FILTER},
        [ks.node("n1", cpu="2"), ks.pod("low", cpu="2", priority=1, node_name="n1"), ks.pod("high", cpu="1", priority=10)],
    )
    assert [e.note for e in r.events("FailedScheduling")] == ["0/1 nodes are available: 1 Insufficient cpu."]
    assert r.result("high").node == "n1"


def test_missing_state_stops_the_postfilter_plugins(ks) -> None:
    """An earlier PreFilter ended the cycle UnschedulableAndUnresolvable, so DynamicResources'
    PreFilter did not run: its PostFilter Error stops RunPostFilterPlugins (no preemption) and
    the status names the plugin."""
    seen: list[Any] = []

    class Gate:
        @hookimpl
        def pre_filter(self):
            return Status.unresolvable("no ticket")

    class Spy:
        @hookimpl
        def post_filter(self):
            seen.append("Spy")
            return Status.unschedulable("spy")

    r = ks.build({"Gate": Gate, "Spy": Spy},
                 {"preFilter": ["Gate", "DynamicResources"], "postFilter": ["DynamicResources", "Spy"]},
                 ks.nodes(1)).start()
    fw = r.framework
    pod = Pod(ks.pod("p"))
    state = CycleState()
    _, st, _ = fw.run_pre_filter(state, pod, list(r.scheduler.cache.update_snapshot().list()))
    assert (st.code, st.message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no ticket")
    result, st = fw.run_post_filter(state, pod, {"n1": st})
    assert result is None
    assert (st.code, st.message, st.plugin) == (Code.ERROR, "not found", "DynamicResources")
    assert seen == []


# --- Score (v1.36, weight 2 in the default profile) ---------------------------------------------


def test_score_is_zero_on_every_node_for_a_pod_without_claims() -> None:
    """dynamicresources.go Score: ``state.claims.empty()`` -> 0; the batch form gives the same
    column; NormalizeScore (DefaultNormalizeScore of zeros) leaves it."""
    from kubesched.sdk import NodeScore

    pl = build_plugin(DynamicResources)
    state = CycleState()
    p = Pod(make_pod().name("foo").obj())
    pl.pre_filter(state, p)
    assert pl.score(state, object()) == 0
    assert pl.score_batch(state, [object(), object(), object()]) == [0, 0, 0]
    scores = [NodeScore("a", 0), NodeScore("b", 0)]
    assert pl.normalize_score(state, scores) is None
    assert [s.score for s in scores] == [0, 0]


def test_sign_pod_as_go_signs_it() -> None:
    """SignPod: a pod with claims is not signable; any other pod signs with no fragment."""
    pl = build_plugin(DynamicResources)
    assert pl.sign_pod(_claim_pod()) is None
    assert pl.sign_pod(Pod(make_pod().name("foo").obj())) == ()


def test_default_profile_scores_dynamic_resources_zero_with_weight_two(tmp_path) -> None:
    """kube-scheduler 1.36 logs a DynamicResources score of 0 for every feasible node; so does
    explain (weight 2: weighted 0), and the totals are those of the other plugins."""
    import json

    import yaml
    from click.testing import CliRunner

    from kubesched.runtime.cli import main

    docs = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
        for n in ("node-a", "node-b")
    ] + [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
          "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}]
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    r = CliRunner().invoke(main, ["explain", "default/p", "--cluster", str(f), "-o", "json"])
    assert r.exit_code == 0, r.output
    ex = json.loads(r.output)
    for node in ("node-a", "node-b"):
        assert ex["scores"][node]["DynamicResources"] == {"raw": 0, "normalized": 0, "weighted": 0}
        assert ex["totals"][node] == sum(s["weighted"] for s in ex["scores"][node].values())


# --- DynamicResourcesArgs (v1.36.3 types_pluginargs.go, defaults.go, validation_pluginargs.go) ---


def test_args_defaults() -> None:
    """SetDefaults_DynamicResourcesArgs with 1.36's gates on: filterTimeout 10s, bindingTimeout 10m."""
    pl = build_plugin(DynamicResources)
    assert (pl.args.filter_timeout, pl.args.binding_timeout) == ("10s", "10m0s")


@pytest.mark.parametrize(
    "args, want",
    [
        pytest.param({"filterTimeout": "10s", "bindingTimeout": "10m0s"}, None,
                     id="TestValidateDynamicResourcesArgs/valid args (default)"),
        pytest.param({"filterTimeout": "-1s"}, 'filterTimeout: Invalid value: "-1s": must be zero or positive',
                     id="TestValidateDynamicResourcesArgs/negative FilterTimeout"),
        pytest.param({"bindingTimeout": "30s"}, None, id="TestValidateDynamicResourcesArgs/valid BindingTimeout"),
        pytest.param({"bindingTimeout": "0s"}, 'bindingTimeout: Invalid value: "0s": must be at least 1 second',
                     id="TestValidateDynamicResourcesArgs/BindingTimeout < 1s (0s)"),
        pytest.param({"bindingTimeout": "-1s"}, 'bindingTimeout: Invalid value: "-1s": must be at least 1 second',
                     id="TestValidateDynamicResourcesArgs/BindingTimeout < 1s (negative)"),
        # kube-scheduler v1.36.3 itself prints these (its value as Duration.String()):
        pytest.param({"filterTimeout": "-1s", "bindingTimeout": "100ms"},
                     '[filterTimeout: Invalid value: "-1s": must be zero or positive, '
                     'bindingTimeout: Invalid value: "100ms": must be at least 1 second]',
                     id="both invalid"),
        pytest.param({"bindingTimeout": "0.5m"}, None, id="fractional minutes"),
        pytest.param({"bindingTimeout": "abc"}, 'bindingTimeout: Invalid value: "abc": time: invalid duration "abc"',
                     id="not a duration"),
    ],
)
def test_args_validation(args: dict[str, Any], want: str | None) -> None:
    if want is None:
        build_plugin(DynamicResources, args)
        return
    with pytest.raises(ArgsError) as e:
        build_plugin(DynamicResources, args)
    assert str(e.value) in ("args." + want, "args: " + want)


def test_args_in_a_configuration_are_validated(tmp_path) -> None:
    """The same file kube-scheduler v1.36.3 rejects with
    ``profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: "0s": must be at least 1 second``."""
    from click.testing import CliRunner

    from kubesched.runtime.cli import main

    f = tmp_path / "config.yaml"
    f.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  pluginConfig:\n  - name: DynamicResources\n"
        "    args: {filterTimeout: 10s, bindingTimeout: 0s}\n"
    )
    r = CliRunner().invoke(main, ["config", "validate", str(f)])
    assert r.exit_code != 0
    assert r.output.strip().endswith(
        'profiles[0].pluginConfig[0].args.bindingTimeout: Invalid value: "0s": must be at least 1 second'
    )
