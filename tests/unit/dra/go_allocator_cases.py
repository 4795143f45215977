"""TestAllocator of dynamic-resource-allocation v0.36.3
(``structured/internal/allocatortesting/allocator_testing.go``), transcribed case by case with
the builders of :mod:`dra_builders` (Go's helper functions under the same names), run against
kubesched's port of the incubating allocator. Ids: ``GoTestAllocator/<case name>``.

Left out: the cases that enable ListTypeAttributes (alpha, off in kube-scheduler 1.36):
``list-attributes-match-constaint-scalar-string-values``
``list-attributes-match-constaint-list-of-string-values-with-common-elements``
``list-attributes-match-constaint-list-of-string-values-with-partially-common-elements``
``list-attributes-match-constaint-list-of-string-values-without-common-elements``
``list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-common-elements``
``list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-partially-common-elements``
``list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-elements``
``list-attributes-match-constaint-list-of-int-values-with-common-elements``
``list-attributes-match-constaint-list-of-bool-values-with-common-elements``
``list-attributes-match-constaint-list-of-version-values-with-common-elements``
``list-attributes-match-constaint-with-empty-or-unknown-type``
``list-attributes-distinct-constraint-scalar-string-values-all-distinct``
``list-attributes-distinct-constraint-scalar-string-values-not-distinct``
``list-attributes-distinct-constraint-list-of-string-values-all-distinct``
``list-attributes-distinct-constraint-list-of-string-values-with-common-elements``
``list-attributes-distinct-constraint-mixed-scalar-and-list-all-distinct``
``list-attributes-distinct-constraint-mixed-scalar-and-list-with-common-elements``
``list-attributes-distinct-constraint-list-of-int-values-all-distinct``
``list-attributes-distinct-constraint-list-of-bool-values-all-distinct``
``list-attributes-distinct-constraint-list-of-version-values-all-distinct``
``list-attributes-distinct-constaint-with-empty-or-unknown-type``.
"""
# ruff: noqa: F403, F405

from __future__ import annotations

from dra_builders import *


def _f0():  # obsolete-slice
    v_slice = sliceWithDevices("slice-1-obsolete", node1, resourcePool(pool1, 2), driverA, device(device2, None, None))
    incp(v_slice, "spec.pool.generation", 1)
    return v_slice


def _f1():  # duplicate-slice
    v_sliceA = sliceWithOneDevice(slice1, node1, pool1, driverA)
    setp(v_sliceA, "spec.pool.resourceSliceCount", 2)
    v_sliceB = deepcopy(v_sliceA)
    incp(v_sliceB, "metadata.name", "-2")
    return [v_sliceA, v_sliceB]


def _f2():  # all-devices-of-the-incomplete-pool
    v_slice = sliceWithOneDevice(slice1, node1, pool1, driverA)
    incp(v_slice, "spec.pool.resourceSliceCount", 1)
    return v_slice


def _f3():  # all-devices-some-allocated-admin-access
    v_c = claimWithRequest(claim0, req0, classA)
    setp(v_c, "spec.devices.requests.0.exactly.adminAccess", True)
    setp(v_c, "spec.devices.requests.0.exactly.allocationMode", "All")
    return [v_c]


def _f4():  # all-devices-some-allocating-admin-access
    v_c = claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))
    setp(v_c, "spec.devices.requests.0.exactly.adminAccess", True)
    setp(v_c, "spec.devices.requests.1.exactly.adminAccess", True)
    setp(v_c, "spec.devices.requests.1.exactly.allocationMode", "All")
    return [v_c]


def _f5():  # count-devices-some-allocated-admin-access
    v_c = claimWithRequest(claim0, req0, classA)
    setp(v_c, "spec.devices.requests.0.exactly.adminAccess", True)
    setp(v_c, "spec.devices.requests.0.exactly.allocationMode", "ExactCount")
    setp(v_c, "spec.devices.requests.0.exactly.count", 2)
    return [v_c]


def _f6():  # separate-claims-share-device-admin-access
    v_c1 = claimWithRequest(claim0, req0, classA)
    setp(v_c1, "spec.devices.requests.0.exactly.adminAccess", True)
    v_c2 = claimWithRequest(claim1, req0, classA)
    setp(v_c2, "spec.devices.requests.0.exactly.adminAccess", True)
    return [v_c1, v_c2]


def _f7():  # admin-access-claims-device-allocating-for-non-admin-access
    v_admin = claimWithRequest(claim1, req0, classA)
    setp(v_admin, "spec.devices.requests.0.exactly.adminAccess", True)
    return [claimWithRequest(claim0, req0, classA), v_admin]


def _f8():  # all-devices-slice-without-devices-prioritized-list
    v_claim = claim(claim0).withRequests(
        requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 1))
    )
    setp(v_claim, "spec.devices.requests.0.firstAvailable.0.allocationMode", "All")
    setp(v_claim, "spec.devices.requests.0.firstAvailable.0.count", 0)
    return v_claim


def _f9():  # all-devices-no-slices-prioritized-list
    v_claim = claim(claim0).withRequests(
        requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 1))
    )
    setp(v_claim, "spec.devices.requests.0.firstAvailable.0.allocationMode", "All")
    setp(v_claim, "spec.devices.requests.0.firstAvailable.0.count", 0)
    return v_claim


def _f10():  # all-devices-some-allocated-prioritized-list
    v_claim = claim(claim0).withRequests(
        requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 1))
    )
    setp(v_claim, "spec.devices.requests.0.firstAvailable.0.allocationMode", "All")
    setp(v_claim, "spec.devices.requests.0.firstAvailable.0.count", 0)
    return v_claim


def _f11():  # admin-access-disabled
    v_c = claimWithRequest(claim0, req0, classA)
    setp(v_c, "spec.devices.requests.0.exactly.adminAccess", True)
    return [v_c]


def _f12():  # admin-access-enabled
    v_c = claimWithRequest(claim0, req0, classA)
    setp(v_c, "spec.devices.requests.0.exactly.adminAccess", True)
    return [v_c]


def _f13():  # with-constraint-not-matching-int-attribute-all-devices
    v_claim = claimWithRequests(claim0, [{"matchAttribute": intAttribute}], request(req0, classA, 0))
    setp(v_claim, "spec.devices.requests.0.exactly.allocationMode", "All")
    return v_claim


def _f14():  # partitionable-all-mode-constraint-must-error-with-reserved-counter
    v_claim = claimWithRequests(claim0, [{"matchAttribute": intAttribute}], request(req0, classA, 0))
    setp(v_claim, "spec.devices.requests.0.exactly.allocationMode", "All")
    return v_claim


def _f15():  # unknown-selector
    v_claim = claimWithRequest(claim0, req0, classA)
    setp(v_claim, "spec.devices.requests.0.exactly.selectors", [{}])
    return v_claim


def _f16():  # unknown-allocation-mode
    v_claim = claimWithRequest(claim0, req0, classA)
    setp(v_claim, "spec.devices.requests.0.exactly.allocationMode", "future-mode")
    return v_claim


def _f17():  # unknown-constraint
    v_claim = claimWithRequest(claim0, req0, classA)
    setp(v_claim, "spec.devices.constraints", [{}])
    return v_claim


def _f18():  # invalid-CEL-one-device
    v_claim = claimWithRequest(claim0, req0, classA)
    setp(v_claim, "spec.devices.requests.0.exactly.selectors", [{"cel": {"expression": "noSuchVar"}}])
    return v_claim


def _f19():  # invalid-CEL-one-device-class
    v_c = class_(classA, driverA)
    setp(v_c, "spec.selectors.0.cel.expression", "noSuchVar")
    return v_c


def _f20():  # invalid-CEL-all-devices
    v_claim = claimWithRequest(claim0, req0, classA)
    setp(v_claim, "spec.devices.requests.0.exactly.selectors", [{"cel": {"expression": "noSuchVar"}}])
    setp(v_claim, "spec.devices.requests.0.exactly.allocationMode", "All")
    return v_claim


def _f21():  # prioritized-list-subrequests-with-allocation-mode-all
    v_claim = claim(claim0).withRequests(
        requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classA, 1))
    )
    setp(v_claim, "spec.devices.requests.0.firstAvailable.0.allocationMode", "All")
    setp(v_claim, "spec.devices.requests.0.firstAvailable.0.count", 0)
    return v_claim


def _f22():  # prioritized-list-disabled
    v_claim = claim(claim0).withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1)))
    return v_claim


def _f23():  # tainted-admin-access
    v_c = claimWithRequest(claim0, req0, classA)
    setp(v_c, "spec.devices.requests.0.exactly.adminAccess", True)
    return [v_c]


def _f24():  # tainted-admin-access-disabled
    v_c = claimWithRequest(claim0, req0, classA)
    setp(v_c, "spec.devices.requests.0.exactly.adminAccess", True)
    return [v_c]


def _f25():  # multi-host-resource-pool-with-stale-slice-for-current-node
    v_s = sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None))
    setp(v_s, "spec.pool.generation", 1)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f26():  # multi-host-resource-pool-with-stale-slice-for-current-node
    v_s = sliceWithDevices(slice2, node2, pool1, driverA, device(device2, None, None))
    setp(v_s, "spec.pool.generation", 2)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f27():  # multi-host-resource-pool-complete-update-from-node-1-to-node-2
    v_s = sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None))
    setp(v_s, "spec.pool.generation", 1)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f28():  # multi-host-resource-pool-complete-update-from-node-1-to-node-2
    v_s = sliceWithDevices(slice1, node1, pool1, driverA, device(device2, None, None))
    setp(v_s, "spec.pool.generation", 1)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f29():  # multi-host-resource-pool-complete-update-from-node-1-to-node-2
    v_s = sliceWithDevices(slice2, node2, pool1, driverA, device(device1, None, None))
    setp(v_s, "spec.pool.generation", 2)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f30():  # multi-host-resource-pool-complete-update-from-node-1-to-node-2
    v_s = sliceWithDevices(slice2, node2, pool1, driverA, device(device2, None, None))
    setp(v_s, "spec.pool.generation", 2)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f31():  # multi-host-resource-pool-complete-update-from-node-2-to-node-1
    v_s = sliceWithDevices(slice1, node2, pool1, driverA, device(device1, None, None))
    setp(v_s, "spec.pool.generation", 1)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f32():  # multi-host-resource-pool-complete-update-from-node-2-to-node-1
    v_s = sliceWithDevices(slice1, node2, pool1, driverA, device(device2, None, None))
    setp(v_s, "spec.pool.generation", 1)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f33():  # multi-host-resource-pool-complete-update-from-node-2-to-node-1
    v_s = sliceWithDevices(slice2, node1, pool1, driverA, device(device1, None, None))
    setp(v_s, "spec.pool.generation", 2)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f34():  # multi-host-resource-pool-complete-update-from-node-2-to-node-1
    v_s = sliceWithDevices(slice2, node1, pool1, driverA, device(device2, None, None))
    setp(v_s, "spec.pool.generation", 2)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f35():  # multi-host-resource-pool-incomplete-update-from-node-1-to-node-2
    v_s = sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None))
    setp(v_s, "spec.pool.generation", 1)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f36():  # multi-host-resource-pool-incomplete-update-from-node-1-to-node-2
    v_s = sliceWithDevices(slice1, node1, pool1, driverA, device(device2, None, None))
    setp(v_s, "spec.pool.generation", 1)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f37():  # multi-host-resource-pool-incomplete-update-from-node-1-to-node-2
    v_s = sliceWithDevices(slice2, node2, pool1, driverA, device(device1, None, None))
    setp(v_s, "spec.pool.generation", 2)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f38():  # multi-host-resource-pool-incomplete-update-from-node-2-to-node-1
    v_s = sliceWithDevices(slice1, node2, pool1, driverA, device(device1, None, None))
    setp(v_s, "spec.pool.generation", 1)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f39():  # multi-host-resource-pool-incomplete-update-from-node-2-to-node-1
    v_s = sliceWithDevices(slice1, node2, pool1, driverA, device(device2, None, None))
    setp(v_s, "spec.pool.generation", 1)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


def _f40():  # multi-host-resource-pool-incomplete-update-from-node-2-to-node-1
    v_s = sliceWithDevices(slice2, node1, pool1, driverA, device(device1, None, None))
    setp(v_s, "spec.pool.generation", 2)
    setp(v_s, "spec.pool.resourceSliceCount", 2)
    return v_s


CASES = {
    "empty": case(),
    "simple": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "other-node": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverB), sliceWithOneDevice(slice2, node2, pool2, driverA)],
        node=node(node2, region2),
        expectResults=[allocationResult(localNodeSelector(node2), deviceAllocationResult(req0, driverA, pool2, device1, False))],
    ),
    "small-and-large": case(
        claimsToAllocate=[
            claimWithRequests(
                claim0,
                None,
                request(
                    req0,
                    classA,
                    1,
                    {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA)}},
                ),
                request(
                    req1,
                    classA,
                    1,
                    {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)}},
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, {"memory": "1Gi"}, None), device(device2, {"memory": "2Gi"}, None)
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    ),
    "small-and-large-backtrack-requests": case(
        claimsToAllocate=[
            claimWithRequests(
                claim0,
                None,
                request(
                    req0,
                    classA,
                    1,
                    {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA)}},
                ),
                request(
                    req1,
                    classA,
                    1,
                    {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)}},
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device2, {"memory": "2Gi"}, None), device(device1, {"memory": "1Gi"}, None)
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    ),
    "small-and-large-backtrack-claims": case(
        claimsToAllocate=[
            claimWithRequests(
                claim0,
                None,
                request(
                    req0,
                    classA,
                    1,
                    {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA)}},
                ),
            ),
            claimWithRequests(
                claim1,
                None,
                request(
                    req1,
                    classA,
                    1,
                    {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)}},
                ),
            ),
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device2, {"memory": "2Gi"}, None), device(device1, {"memory": "1Gi"}, None)
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req1, driverA, pool1, device2, False)),
        ],
    ),
    "devices-split-across-different-slices": case(
        claimsToAllocate=[
            claimWithRequests(
                claim0, None, {"name": req0, "exactly": {"count": 2, "allocationMode": "ExactCount", "deviceClassName": classA}}
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA), sliceWithOneDevice(slice2, node1, pool2, driverA)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
            )
        ],
    ),
    "obsolete-slice": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices("slice-1-obsolete", node1, resourcePool(pool1, 2), driverA, device(device1, None, None)), _f0()],
        node=node(node1, region1),
        expectResults=[],
    ),
    "duplicate-slice": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=_f1(),
        node=node(node1, region1),
        expectError=error("invalid resource pools were encountered"),
    ),
    "no-slices": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=None,
        node=node(node1, region1),
        expectResults=None,
    ),
    "not-enough-suitable-devices": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA), claimWithRequest(claim0, req1, classA)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
    ),
    "no-classes": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=None,
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
        expectError=error("could not retrieve device class class-a"),
    ),
    "unknown-class": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, "unknown-class")],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
        expectError=error("could not retrieve device class unknown-class"),
    ),
    "empty-class": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, "")],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
        expectError=error("claim claim-0, request req-0: missing device class name (unsupported request type?)"),
    ),
    "no-claims-to-allocate": case(
        claimsToAllocate=None,
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
    ),
    "all-devices-single": case(
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}})
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "all-devices-with-consumed-counters": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}})
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "all-devices-many": case(
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}})
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA), sliceWithOneDevice(slice1, node1, pool2, driverA)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
            )
        ],
    ),
    "all-devices-of-the-incomplete-pool": case(
        claimsToAllocate=[
            claimWithRequests(
                claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "count": 1, "deviceClassName": classA}}
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[_f2()],
        node=node(node1, region1),
        expectResults=None,
        expectError=error(
            "claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being updated"
        ),
    ),
    "all-devices-plus-another": case(
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}}),
            claimWithRequests(
                claim1, None, {"name": req0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": classB}}
            ),
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA), sliceWithOneDevice(slice1, node1, pool1, driverB)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverB, pool1, device1, False)),
        ],
    ),
    "all-devices-plus-another-reversed": case(
        claimsToAllocate=[
            claimWithRequests(
                claim1, None, {"name": req0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": classB}}
            ),
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}}),
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA), sliceWithOneDevice(slice1, node1, pool1, driverB)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverB, pool1, device1, False)),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)),
        ],
    ),
    "all-devices-many-plus-another": case(
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}}),
            claimWithRequests(
                claim1, None, {"name": req0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": classB}}
            ),
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None)),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            ),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverB, pool1, device1, False)),
        ],
    ),
    "all-devices-many-plus-another-reversed": case(
        claimsToAllocate=[
            claimWithRequests(
                claim1, None, {"name": req0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": classB}}
            ),
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}}),
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None)),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverB, pool1, device1, False)),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
            ),
        ],
    ),
    "all-devices-no-solution": case(
        claimsToAllocate=[
            claimWithRequests(
                claim1, None, {"name": req0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": classA}}
            ),
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}}),
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
    ),
    "all-devices-no-solution-reversed": case(
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}}),
            claimWithRequests(
                claim1, None, {"name": req0, "exactly": {"allocationMode": "ExactCount", "count": 1, "deviceClassName": classA}}
            ),
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
    ),
    "all-devices-slice-without-devices": case(
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}})
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithNoDevices(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
    ),
    "all-devices-no-slices": case(
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}})
        ],
        classes=[class_(classA, driverA)],
        slices=None,
        node=node(node1, region1),
        expectResults=None,
    ),
    "all-devices-some-allocated": case(
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}})
        ],
        allocatedDevices=[(driverA, pool1, device1)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))],
        node=node(node1, region1),
        expectResults=None,
    ),
    "all-devices-some-allocated-admin-access": case(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f3(),
        allocatedDevices=[(driverA, pool1, device1)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, True),
                deviceAllocationResult(req0, driverA, pool1, device2, True),
            )
        ],
    ),
    "all-devices-some-allocating-admin-access": case(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f4(),
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))],
        node=node(node1, region1),
        expectResults=None,
    ),
    "count-devices-some-allocated-admin-access": case(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f5(),
        allocatedDevices=[(driverA, pool1, device1)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, True),
                deviceAllocationResult(req0, driverA, pool1, device2, True),
            )
        ],
    ),
    "separate-claims-share-device-admin-access": case(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f6(),
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, True)),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, True)),
        ],
    ),
    "admin-access-claims-device-allocating-for-non-admin-access": case(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f7(),
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, True)),
        ],
    ),
    "all-devices-slice-without-devices-prioritized-list": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[_f8()],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[sliceWithNoDevices(slice1, node1, pool1, driverA), sliceWithOneDevice(slice2, node1, pool2, driverB)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverB, pool2, device1, False))
        ],
    ),
    "all-devices-no-slices-prioritized-list": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[_f9()],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[sliceWithOneDevice(slice2, node1, pool2, driverB)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverB, pool2, device1, False))
        ],
    ),
    "all-devices-some-allocated-prioritized-list": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[_f10()],
        allocatedDevices=[(driverA, pool1, device1)],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None)),
            sliceWithOneDevice(slice2, node1, pool2, driverB),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverB, pool2, device1, False))
        ],
    ),
    "network-attached-device": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(nodeLabelSelector(regionKey, region1), deviceAllocationResult(req0, driverA, pool1, device1, False))
        ],
    ),
    "unsuccessful-allocation-network-attached-device": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA)],
        node=node(node2, region2),
        expectResults=None,
    ),
    "many-network-attached-devices": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 4))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA),
            sliceWithOneDevice(slice1, nodeSelectionAll, pool2, driverA),
            sliceWithOneDevice(slice1, nodeLabelSelector(planetKey, planetValueEarth), pool3, driverA),
            sliceWithOneDevice(slice1, localNodeSelector(node1), pool4, driverA),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": regionKey, "operator": "In", "values": [region1]},
                                {"key": planetKey, "operator": "In", "values": [planetValueEarth]},
                            ],
                            "matchFields": [{"key": fieldNameKey, "operator": "In", "values": [node1]}],
                        }
                    ]
                },
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
                deviceAllocationResult(req0, driverA, pool3, device1, False),
                deviceAllocationResult(req0, driverA, pool4, device1, False),
            )
        ],
    ),
    "local-and-network-attached-devices": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 2))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithOneDevice(slice1, nodeLabelSelector(regionKey, region1), pool1, driverA),
            sliceWithOneDevice(slice1, node1, pool2, driverA),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool2, device1, False),
            )
        ],
    ),
    "several-different-drivers": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA), claimWithRequest(claim0, req0, classB)],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None)),
            sliceWithOneDevice(slice1, node1, pool1, driverB),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False)),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverB, pool1, device1, False)),
        ],
    ),
    "already-allocated-devices": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        allocatedDevices=[(driverA, pool1, device1), (driverA, pool1, device2)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
    ),
    "admin-access-disabled": case(
        features=Features(AdminAccess=False),
        claimsToAllocate=_f11(),
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
        expectError=error("claim claim-0, request req-0: admin access is requested, but the feature is disabled"),
    ),
    "admin-access-enabled": case(
        features=Features(AdminAccess=True),
        claimsToAllocate=_f12(),
        allocatedDevices=[(driverA, pool1, device1), (driverA, pool1, device2)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, True))],
    ),
    "with-constraint": case(
        claimsToAllocate=[
            claimWithRequests(
                claim0,
                [
                    {"matchAttribute": intAttribute},
                    {"matchAttribute": versionAttribute},
                    {"matchAttribute": stringAttribute},
                    {"matchAttribute": boolAttribute},
                ],
                request(req0, classA, 1),
                request(req1, classA, 1),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1,
                    None,
                    {
                        "driverVersion": {"version": "1.0.0"},
                        "numa": {"int": 1},
                        "stringAttribute": {"string": "stringAttributeValue"},
                        "boolAttribute": {"bool": True},
                    },
                ),
                device(
                    device2,
                    None,
                    {
                        "driverVersion": {"version": "1.0.0"},
                        "numa": {"int": 1},
                        "stringAttribute": {"string": "stringAttributeValue"},
                        "boolAttribute": {"bool": True},
                    },
                ),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    ),
    "with-constraint-non-existent-attribute": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA, {"matchAttribute": nonExistentAttribute})],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-int-attribute": case(
        claimsToAllocate=[claimWithRequests(claim0, [{"matchAttribute": intAttribute}], request(req0, classA, 2))],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"numa": {"int": 1}}),
                device(device2, None, {"numa": {"int": 2}}),
            )
        ],
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-int-attribute-all-devices": case(
        claimsToAllocate=[_f13()],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"numa": {"int": 1}}),
                device(device2, None, {"numa": {"int": 2}}),
            )
        ],
        node=node(node1, region1),
        expectError=error(
            "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied"
        ),
    ),
    "partitionable-all-mode-constraint-must-error-with-reserved-counter": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[_f14()],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, {"numa": {"int": 1}}),
                device(device2, None, {"numa": {"int": 2}}).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": "1"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"c": "1"})),
        ],
        node=node(node1, region1),
        expectError=error(
            "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would not be satisfied"
        ),
    ),
    "with-constraint-not-matching-string-attribute": case(
        claimsToAllocate=[claimWithRequests(claim0, [{"matchAttribute": stringAttribute}], request(req0, classA, 2))],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"stringAttribute": {"string": "stringAttributeValue"}}),
                device(device2, None, {"stringAttribute": {"string": "stringAttributeValue2"}}),
            )
        ],
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-bool-attribute": case(
        claimsToAllocate=[claimWithRequests(claim0, [{"matchAttribute": boolAttribute}], request(req0, classA, 2))],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"boolAttribute": {"bool": True}}),
                device(device2, None, {"boolAttribute": {"bool": False}}),
            )
        ],
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-not-matching-version-attribute": case(
        claimsToAllocate=[claimWithRequests(claim0, [{"matchAttribute": versionAttribute}], request(req0, classA, 2))],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"driverVersion": {"version": "1.0.0"}}),
                device(device2, None, {"driverVersion": {"version": "2.0.0"}}),
            )
        ],
        node=node(node1, region1),
        expectResults=None,
    ),
    "with-constraint-for-request": case(
        claimsToAllocate=[
            claimWithRequests(
                claim0,
                [{"requests": [req0], "matchAttribute": versionAttribute}],
                request(req0, classA, 1),
                request(req1, classA, 1),
            )
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"driverVersion": {"version": "1.0.0"}}),
                device(device2, None, {"driverVersion": {"version": "2.0.0"}}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
            )
        ],
    ),
    "with-constraint-for-request-retry": case(
        claimsToAllocate=[
            claimWithRequests(
                claim0,
                [{"requests": [req0], "matchAttribute": versionAttribute}, {"matchAttribute": stringAttribute}],
                request(req0, classA, 1),
                request(req1, classA, 1),
            )
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"driverVersion": {"version": "1.0.0"}, "stringAttribute": {"string": "a"}}),
                device(device2, None, {"driverVersion": {"version": "2.0.0"}, "stringAttribute": {"string": "b"}}),
                device(device3, None, {"driverVersion": {"version": "3.0.0"}, "stringAttribute": {"string": "b"}}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
            )
        ],
    ),
    "with-class-device-config": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[classWithConfig(classA, driverA, "classAttribute")],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                [deviceAllocationResult(req0, driverA, pool1, device1, False)],
                [{"source": "FromClass", "requests": [req0], **deviceConfiguration(driverA, "classAttribute")}],
            )
        ],
    ),
    "with-class-device-config-with-multiple-request-and-configs": case(
        claimsToAllocate=[
            claimWithRequests(claim0, [], request(req0, classA, 1), request(req1, classA, 1), request(req2, classB, 1))
        ],
        classes=[classWithConfig(classA, driverA, "classAttribute-A"), classWithConfig(classB, driverB, "classAttribute-B")],
        slices=[sliceWithMultipleDevices(slice1, node1, pool1, driverA, 2), sliceWithOneDevice(slice2, node1, pool1, driverB)],
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                [
                    deviceAllocationResult(req0, driverA, pool1, device0, False),
                    deviceAllocationResult(req1, driverA, pool1, device1, False),
                    deviceAllocationResult(req2, driverB, pool1, device1, False),
                ],
                [
                    {"source": "FromClass", "requests": [req0, req1], **deviceConfiguration(driverA, "classAttribute-A")},
                    {"source": "FromClass", "requests": [req2], **deviceConfiguration(driverB, "classAttribute-B")},
                ],
            )
        ],
    ),
    "claim-with-device-config": case(
        claimsToAllocate=[claimWithDeviceConfig(claim0, req0, classA, driverA, "deviceAttribute")],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfig(
                localNodeSelector(node1),
                driverA,
                "FromClaim",
                "deviceAttribute",
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "unknown-selector": case(
        claimsToAllocate=[_f15()],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectError=error("CEL expression empty (unsupported selector type?)"),
    ),
    "unknown-allocation-mode": case(
        claimsToAllocate=[_f16()],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectError=error("unsupported count mode future-mode"),
    ),
    "unknown-constraint": case(
        claimsToAllocate=[_f17()],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectError=error("empty constraint (unsupported constraint type?)"),
    ),
    "invalid-CEL-one-device": case(
        claimsToAllocate=[_f18()],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectError=error("undeclared reference"),
    ),
    "invalid-CEL-one-device-class": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[_f19()],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectError=error("undeclared reference"),
    ),
    "invalid-CEL-all-devices": case(
        claimsToAllocate=[_f20()],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectError=error("undeclared reference"),
    ),
    "too-many-devices-single-request": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 500))],
        classes=[class_(classA, driverA)],
        expectError=error("exceeds the claim limit"),
    ),
    "many-devices-okay": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 32))], classes=[class_(classA, driverA)]
    ),
    "too-many-devices-total": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 32), request(req1, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[sliceWithMultipleDevices(slice1, node1, pool1, driverA, 32 + 1)],
        node=node(node1, region1),
        expectError=error("exceeds the claim limit"),
    ),
    "all-devices-invalid-CEL": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 500))],
        classes=[class_(classA, driverA)],
        expectError=error("exceeds the claim limit"),
    ),
    "prioritized-list-first-unavailable": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(req0, subRequest(subReq0, classB, 1), subRequest(subReq1, classA, 1))
            )
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))
        ],
    ),
    "prioritized-list-non-available": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(req0, subRequest(subReq0, classB, 2), subRequest(subReq1, classA, 2))
            )
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA), sliceWithOneDevice(slice2, node1, pool2, driverB)],
        node=node(node1, region1),
        expectResults=None,
    ),
    "prioritized-list-device-config": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0)
            .withRequests(requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classB, 2)))
            .withConfigs(
                [
                    deviceClaimConfig([req0SubReq0], deviceConfiguration(driverA, "foo")),
                    deviceClaimConfig([req0SubReq1], deviceConfiguration(driverB, "bar")),
                ]
            )
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverB, device(device1, None, {}), device(device2, None, {}))],
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                [
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device1, False),
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device2, False),
                ],
                [{"source": "FromClaim", "requests": [req0SubReq1], **deviceConfiguration(driverB, "bar")}],
            )
        ],
    ),
    "prioritized-list-class-config": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(req0, subRequest(subReq0, classA, 2), subRequest(subReq1, classB, 2))
            )
        ],
        classes=[classWithConfig(classA, driverA, "foo"), classWithConfig(classB, driverB, "bar")],
        slices=[
            sliceWithDevices(slice1, node1, pool1, driverB, device(device1, None, None), device(device2, None, None)),
            sliceWithDevices(slice2, node1, pool2, driverA, device(device3, None, None)),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResultWithConfigs(
                localNodeSelector(node1),
                [
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device1, False),
                    deviceAllocationResult(req0SubReq1, driverB, pool1, device2, False),
                ],
                [{"source": "FromClass", "requests": [req0SubReq1], **deviceConfiguration(driverB, "bar")}],
            )
        ],
    ),
    "prioritized-list-subrequests-with-expressions": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withSelectors(
                    {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA)}}
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA)}},
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        2,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)}},
                    ),
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {"memory": "2Gi"}, None),
                device(device2, {"memory": "2Gi"}, None),
                device(device3, {"memory": "1Gi"}, None),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False),
            )
        ],
    ),
    "prioritized-list-subrequests-with-constraints-ref-parent-request": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0)
            .withConstraints({"requests": [req0, req1], "matchAttribute": versionAttribute})
            .withRequests(
                deviceRequest(req0, classA, 1).withSelectors(
                    {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)}}
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)}},
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA)}},
                    ),
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, {"memory": "8Gi"}, {"driverVersion": {"version": "1.0.0"}})
            ),
            sliceWithDevices(
                slice2,
                node1,
                pool2,
                driverA,
                device(device2, {"memory": "2Gi"}, {"driverVersion": {"version": "2.0.0"}}),
                device(device3, {"memory": "1Gi"}, {"driverVersion": {"version": "1.0.0"}}),
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool2, device3, False),
            )
        ],
    ),
    "prioritized-list-subrequests-with-constraints-ref-sub-request": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0)
            .withConstraints({"requests": [req0, req1SubReq0], "matchAttribute": versionAttribute})
            .withRequests(
                deviceRequest(req0, classA, 1).withSelectors(
                    {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)}}
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)}},
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("1Gi")) >= 0', driverA)}},
                    ),
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, {"memory": "8Gi"}, {"driverVersion": {"version": "1.0.0"}})
            ),
            sliceWithDevices(
                slice2, node1, pool2, driverA, device(device2, {"memory": "2Gi"}, {"driverVersion": {"version": "2.0.0"}})
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool2, device2, False),
            )
        ],
    ),
    "prioritized-list-subrequests-with-allocation-mode-all": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[_f21()],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))],
        allocatedDevices=[(driverA, pool1, device1)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device2, False))
        ],
    ),
    "prioritized-list-allocation-mode-all-multiple-requests": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1, subRequest(subReq0, classA, 0).withAllocationMode("All"), subRequest(subReq1, classA, 1)
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False),
            )
        ],
    ),
    "prioritized-list-disabled": case(
        features=Features(PrioritizedList=False),
        claimsToAllocate=[_f22()],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
        expectError=error("claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled"),
    ),
    "prioritized-list-multi-request": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                deviceRequest(req1, classA, 1).withSelectors(
                    {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)}}
                ),
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)}},
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA)}},
                    ),
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {"memory": "8Gi"}, {})),
            sliceWithDevices(slice2, node1, pool2, driverA, device(device2, {"memory": "4Gi"}, {})),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device1, False),
                deviceAllocationResult(req0SubReq1, driverA, pool2, device2, False),
            )
        ],
    ),
    "prioritized-list-with-backtracking": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)}},
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA)}},
                    ),
                ),
                deviceRequest(req1, classA, 1).withSelectors(
                    {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("8Gi")) >= 0', driverA)}}
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {"memory": "8Gi"}, {})),
            sliceWithDevices(slice2, node1, pool2, driverA, device(device2, {"memory": "4Gi"}, {})),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool2, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device1, False),
            )
        ],
    ),
    "prioritized-list-too-many-in-first-subrequest": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(req0, subRequest(subReq0, classB, 500), subRequest(subReq1, classA, 1))
            )
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))
        ],
    ),
    "partitionable-devices-single-device": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "partitionable-devices-taint-releases-counter": case(
        features=Features(PartitionableDevices=True, DeviceTaints=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None)
                .withTaints(taintNoSchedule)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"c": "1"})),
                device(device2, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"c": "1"})),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"c": "1"})),
        ],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "partitionable-devices-constraint-releases-counter": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claimWithRequests(claim0, [{"matchAttribute": stringAttribute}], request(req0, classA, 2))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, {"stringAttribute": {"string": "red"}}).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": "1"})
                ),
                device(device2, None, {"stringAttribute": {"string": "blue"}}).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": "1"})
                ),
                device(device3, None, {"stringAttribute": {"string": "blue"}}).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": "1"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"c": "2"})),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-consumable-capacity-backtrack-releases-counter": case(
        features=Features(PartitionableDevices=True, ConsumableCapacity=True),
        claimsToAllocate=[
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].kind == "shared"', driverA)}}),
                request(
                    req1, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].kind == "counteronly"', driverA)}}
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, {"kind": {"string": "shared"}})
                .withAllowMultipleAllocations()
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"c": "1"})),
                device(device2, None, {"kind": {"string": "shared"}}),
                device(device3, None, {"kind": {"string": "counteronly"}}).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"c": "1"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"c": "1"})),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
            )
        ],
    ),
    "consumable-capacity-rejection-rolls-back-constraints": case(
        features=Features(ConsumableCapacity=True, PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1)
                .withCapacityRequest(two)
                .withSelectors({"cel": {"expression": sprintf('device.attributes["%s"].stringAttribute == "cap"', driverA)}})
            ),
            claim(claim1)
            .withConstraints({"matchAttribute": stringAttribute})
            .withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.attributes["%s"].stringAttribute == "cap"', driverA)}},
                    )
                    .withAllocationMode("All")
                    .withCapacityRequest(two),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.attributes["%s"].stringAttribute == "fb"', driverA)}},
                    ),
                )
            ),
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, {"stringAttribute": {"string": "cap"}}).withAllowMultipleAllocations(),
                device(device2, None, {"stringAttribute": {"string": "fb"}}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
            ),
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device2, False)),
        ],
    ),
    "partitionable-empty-capacity-multiple-share-backtrack-keeps-counter-ownership": case(
        features=Features(PartitionableDevices=True, ConsumableCapacity=True),
        claimsToAllocate=[
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].kind == "shared"', driverA)}}),
            ),
            claimWithRequests(
                claim1,
                [{"matchAttribute": stringAttribute, "requests": [req1, req2]}],
                request(
                    req1,
                    classA,
                    1,
                    {
                        "cel": {
                            "expression": sprintf(
                                'device.attributes["%s"].kind == "shared" || device.attributes["%s"].kind == "fallback"',
                                driverA,
                                driverA,
                            )
                        }
                    },
                ),
                request(req2, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].kind == "gate"', driverA)}}),
                request(req3, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].kind == "shared"', driverA)}}),
            ),
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, {"kind": {"string": "shared"}, "stringAttribute": {"string": "red"}})
                .withAllowMultipleAllocations()
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"c": "1"})),
                device(device2, None, {"kind": {"string": "fallback"}, "stringAttribute": {"string": "blue"}}),
                device(device3, None, {"kind": {"string": "gate"}, "stringAttribute": {"string": "blue"}}),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"c": "1"})),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
                deviceAllocationResult(req2, driverA, pool1, device3, False),
                deviceRequestAllocationResult(req3, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
            ),
        ],
    ),
    "partitionable-devices-prioritized-list": case(
        features=Features(PrioritizedList=True, PartitionableDevices=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0', driverA)}},
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA)}},
                    ),
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "6Gi"})
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-devices-multiple-devices": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "6Gi"})
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-devices-multiple-capacity-pools": case(
        features=Features(PrioritizedList=True, PartitionableDevices=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0', driverA)}},
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA)}},
                    ),
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"}), deviceCounterConsumption(counterSet2, {"cpus": "4"})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "6Gi"}), deviceCounterConsumption(counterSet2, {"cpus": "6"})
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"}), deviceCounterConsumption(counterSet2, {"cpus": "4"})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"memory": "18Gi"}),
                counterSet(counterSet2, {"cpus": "8"}),
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-devices-multiple-counters": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi", "cpus": "6"}),
                    deviceCounterConsumption(counterSet2, {"cpus": "4", "memory": "2Gi"}),
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "6Gi", "cpus": "4"}),
                    deviceCounterConsumption(counterSet2, {"cpus": "6", "memory": "6Gi"}),
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi", "cpus": "4"}),
                    deviceCounterConsumption(counterSet2, {"cpus": "4", "memory": "4Gi"}),
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"cpus": "8", "memory": "18Gi"}),
                counterSet(counterSet2, {"cpus": "12", "memory": "18Gi"}),
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-devices-multiple-pools": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpus": "6", "memory": "4Gi"})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpus": "4", "memory": "6Gi"})
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpus": "4", "memory": "4Gi"})
                ),
            ),
            sliceWithCounterSets(
                slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"cpus": "8", "memory": "18Gi"})
            ),
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool2, 2),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpus": "6", "memory": "4Gi"})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpus": "1", "memory": "7Gi"})
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpus": "1", "memory": "7Gi"})
                ),
            ),
            sliceWithCounterSets(
                slice4, node1, resourcePool(pool2, 2), driverA, counterSet(counterSet1, {"cpus": "8", "memory": "18Gi"})
            ),
        ],
        allocatedDevices=[(driverA, pool1, device2), (driverA, pool1, device3), (driverA, pool2, device1)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool2, device2, False),
                deviceAllocationResult(req1, driverA, pool2, device3, False),
            )
        ],
    ),
    "partitionable-devices-unused-counters-in-counter-set": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 2))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "5Gi"})
                ),
                device(device2, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
                device(device3, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
            ),
            sliceWithCounterSets(
                slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi", "unused": "1Gi"})
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
            )
        ],
    ),
    "partitionable-devices-no-capacity-available": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "16Gi"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": "18Gi"})),
        ],
        allocatedDevices=[(driverA, pool1, device2)],
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-overallocated-capacity-pool": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "20Gi"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": "18Gi"})),
        ],
        allocatedDevices=[(driverA, pool1, device2)],
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-disabled-device-consumes-counters": case(
        features=Features(PartitionableDevices=False),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": "18Gi"})),
        ],
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-disabled-other-device-do-not-consume-counters": case(
        features=Features(PartitionableDevices=False),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
                device(device2, None, None),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "18Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "partitionable-devices-disabled-per-device-node-selection": case(
        features=Features(PartitionableDevices=False),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, nodeSelectionPerDevice, pool1, driverA, device(device2, None, None).withNodeSelection(node1))
        ],
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-per-device-node-selection-nodename": case(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0', driverA)}},
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA)}},
                    ),
                )
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withNodeSelection(node1),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "6Gi"}))
                .withNodeSelection(node2),
            ),
            sliceWithCounterSets(
                slice2, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "18Gi"})
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))
        ],
    ),
    "partitionable-devices-per-device-node-selection-node-selector": case(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withNodeSelection(nodeLabelSelector(regionKey, region1)),
            ),
            sliceWithCounterSets(
                slice2, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "18Gi"})
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                {"nodeSelectorTerms": [{"matchExpressions": [{"key": regionKey, "operator": "In", "values": [region1]}]}]},
                deviceAllocationResult(req0, driverA, pool1, device1, False),
            )
        ],
    ),
    "partitionable-devices-per-device-node-selection-node-selector-multiple-devices": case(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 3), request(req1, classB, 3))],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithDevices(
                slice1,
                nodeSelectionPerDevice,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withNodeSelection(nodeLabelSelector(regionKey, region1)),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withNodeSelection(node1),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withNodeSelection(nodeSelectionAll),
            ),
            sliceWithCounterSets(
                slice2, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "18Gi"})
            ),
            sliceWithDevices(
                slice3,
                node1,
                resourcePool(pool2, 2),
                driverB,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {"memory": "4Gi"})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {"memory": "4Gi"})
                ),
                device(device3, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {"memory": "4Gi"})
                ),
            ),
            sliceWithCounterSets(slice4, node1, resourcePool(pool2, 2), driverB, counterSet(counterSet2, {"memory": "12Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                {"nodeSelectorTerms": [{"matchFields": [{"key": fieldNameKey, "operator": "In", "values": [node1]}]}]},
                deviceAllocationResult(req0, driverA, pool1, device1, False),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
                deviceAllocationResult(req1, driverB, pool2, device1, False),
                deviceAllocationResult(req1, driverB, pool2, device2, False),
                deviceAllocationResult(req1, driverB, pool2, device3, False),
            )
        ],
    ),
    "tainted-two-devices": case(
        features=Features(DeviceTaints=True),
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
                device(device2, None, None).withTaints(taintNoExecute),
            )
        ],
        node=node(node1, region1),
    ),
    "tainted-one-device-two-taints": case(
        features=Features(DeviceTaints=True),
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute)
            )
        ],
        node=node(node1, region1),
    ),
    "tainted-two-devices-tolerated": case(
        features=Features(DeviceTaints=True),
        claimsToAllocate=[claimWithRequest(claim0, req0, classA).withTolerations(tolerationNoExecute)],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
                device(device2, None, None).withTaints(taintNoExecute),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False, tolerationNoExecute)
            )
        ],
    ),
    "tainted-two-devices-prioritized-list-tolerated": case(
        features=Features(DeviceTaints=True, PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classA, 1), subRequest(subReq1, classA, 1, tolerationNoExecute)
                )
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withTaints(taintNoSchedule),
                device(device2, None, None).withTaints(taintNoExecute),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device2, False, tolerationNoExecute)
            )
        ],
    ),
    "tainted-no-effect": case(
        features=Features(DeviceTaints=True),
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNone))],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "tainted-one-device-two-taints-both-tolerated": case(
        features=Features(DeviceTaints=True),
        claimsToAllocate=[claimWithRequest(claim0, req0, classA).withTolerations(tolerationNoSchedule, tolerationNoExecute)],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute)
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device1, False, tolerationNoSchedule, tolerationNoExecute),
            )
        ],
    ),
    "tainted-disabled": case(
        features=Features(DeviceTaints=False),
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule, taintNoExecute)
            )
        ],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "tainted-prioritized-list": case(
        features=Features(DeviceTaints=True, PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(req0, subRequest(subReq0, classB, 1), subRequest(subReq1, classA, 1))
            )
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule))],
        node=node(node1, region1),
    ),
    "tainted-prioritized-list-disabled": case(
        features=Features(DeviceTaints=False, PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(req0, subRequest(subReq0, classB, 1), subRequest(subReq1, classA, 1))
            )
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule))],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))
        ],
    ),
    "tainted-admin-access": case(
        features=Features(DeviceTaints=True, AdminAccess=True),
        claimsToAllocate=_f23(),
        allocatedDevices=[(driverA, pool1, device1), (driverA, pool1, device2)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule))],
        node=node(node1, region1),
    ),
    "tainted-admin-access-disabled": case(
        features=Features(DeviceTaints=False, AdminAccess=True),
        claimsToAllocate=_f24(),
        allocatedDevices=[(driverA, pool1, device1), (driverA, pool1, device2)],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule))],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, True))],
    ),
    "tainted-all-devices-single": case(
        features=Features(DeviceTaints=True),
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}})
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule))],
        node=node(node1, region1),
    ),
    "tainted-all-devices-single-disabled": case(
        features=Features(DeviceTaints=False),
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}})
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withTaints(taintNoSchedule))],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "prioritized-list-allocation-mode-all": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classA, 0).withAllocationMode("All"), subRequest(subReq1, classA, 1)
                )
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None), device(device2, None, None))],
        allocatedDevices=[(driverA, pool1, device2)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))
        ],
    ),
    "prioritized-list-allocation-mode-all-with-selectors": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v6"', driverA)}},
                    ).withAllocationMode("All"),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v5"', driverA)}},
                    ).withAllocationMode("All"),
                )
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"generation": {"string": "v5"}}))],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))
        ],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v6"', driverA)}},
                    ).withAllocationMode("All"),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v5"', driverA)}},
                    ).withAllocationMode("All"),
                )
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"generation": {"string": "v5"}})),
            sliceWithDevices(slice2, node1, pool2, driverA, device(device1, None, {"generation": {"string": "v5"}})),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False),
                deviceAllocationResult(req0SubReq1, driverA, pool2, device1, False),
            )
        ],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-multiple-pools-across-nodes": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v6"', driverA)}},
                    ).withAllocationMode("All"),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v5"', driverA)}},
                    ).withAllocationMode("All"),
                )
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, {"generation": {"string": "v5"}})),
            sliceWithDevices(
                slice2,
                node2,
                pool2,
                driverA,
                device(device1, None, {"generation": {"string": "v5"}}),
                device(device2, None, {"generation": {"string": "v6"}}),
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))
        ],
    ),
    "prioritized-list-allocation-mode-all-with-selectors-deviceclass-subset": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        0,
                        {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v6"', driverA)}},
                    ).withAllocationMode("All"),
                    subRequest(
                        subReq1,
                        classA,
                        0,
                        {"cel": {"expression": sprintf('device.attributes["%s"].generation == "v5"', driverA)}},
                    ).withAllocationMode("All"),
                )
            )
        ],
        classes=[
            {
                "metadata": {"name": classA},
                "spec": {
                    "selectors": [
                        {
                            "cel": {
                                "expression": sprintf(
                                    'device.driver == "%s" && device.attributes["%s"].selected', driverA, driverA
                                )
                            }
                        }
                    ]
                },
            }
        ],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"generation": {"string": "v6"}, "selected": {"bool": False}}),
                device(device2, None, {"generation": {"string": "v5"}, "selected": {"bool": False}}),
                device(device3, None, {"generation": {"string": "v5"}, "selected": {"bool": True}}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device3, False))
        ],
    ),
    "max-number-devices": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 32))],
        classes=[class_(classA, driverA)],
        slices=[sliceWithMultipleDevices(slice1, node1, pool1, driverA, 32)],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), *multipleDeviceAllocationResults(req0, driverA, pool1, 32, 0))],
    ),
    "partitionable-devices-with-attribute-selector": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[
            claimWithRequests(
                claim0,
                None,
                request(req0, classA, 2),
                request(req1, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].special', driverA)}}),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, {"special": {"bool": True}}).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpu1": "1"}), deviceCounterConsumption(counterSet2, {"mem": "10Gi"})
                ),
                device(device2, None, {"special": {"bool": False}}).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpu2": "1"}), deviceCounterConsumption(counterSet2, {"mem": "10Gi"})
                ),
                device(device3, None, {"special": {"bool": False}}).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"cpu3": "1"}), deviceCounterConsumption(counterSet2, {"mem": "10Gi"})
                ),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {"cpu1": "1", "cpu2": "1", "cpu3": "1"}),
                counterSet(counterSet2, {"mem": "30Gi"}),
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0, driverA, pool1, device2, False),
                deviceAllocationResult(req0, driverA, pool1, device3, False),
                deviceAllocationResult(req1, driverA, pool1, device1, False),
            )
        ],
    ),
    "prioritized-list-max-allocation-limit-request": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(req0, subRequest(subReq0, classA, 32), subRequest(subReq1, classA, 32 // 2)),
                requestWithPrioritizedList(req1, subRequest(subReq0, classA, 32), subRequest(subReq1, classA, 32 // 2)),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithMultipleDevices(slice1, node1, pool1, driverA, 32 * 2)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                *multipleDeviceAllocationResults(req0SubReq1, driverA, pool1, 32 // 2, 0)
                + multipleDeviceAllocationResults(req1SubReq1, driverA, pool1, 32 // 2, 32 // 2),
            )
        ],
        expectNumAllocateOneInvocations=75,
    ),
    "prioritized-list-max-allocation-allocation-mode-all": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0, subRequest(subReq0, classA, 0).withAllocationMode("All"), subRequest(subReq1, classA, 2)
                ),
                deviceRequest(req1, classB, 2),
            )
        ],
        classes=[class_(classA, driverA), class_(classB, driverB)],
        slices=[
            sliceWithMultipleDevices(slice1, node1, pool1, driverA, 32 - 1),
            sliceWithMultipleDevices(slice2, node1, pool2, driverB, 2),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req0SubReq1, driverA, pool1, "device-0", False),
                deviceAllocationResult(req0SubReq1, driverA, pool1, "device-1", False),
                deviceAllocationResult(req1, driverB, pool2, "device-0", False),
                deviceAllocationResult(req1, driverB, pool2, "device-1", False),
            )
        ],
        expectNumAllocateOneInvocations=42,
    ),
    "device-binding-conditions": case(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"])
            )
        ],
        node=node(node1, region1),
        expectResults=[
            {
                "devices": {
                    "results": [
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        )
                    ]
                },
                "nodeSelector": localNodeSelector(node1),
            }
        ],
    ),
    "binding-conditions-multiple-devices": case(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 2), request(req1, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]),
                device(device2, None, None).withBindingConditions(["IsPrepare2"], ["BindingFailed2"]),
                device(device3, None, None).withBindingConditions(["IsPrepare3"], ["BindingFailed3"]),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            {
                "devices": {
                    "results": [
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device2, ["IsPrepare2"], ["BindingFailed2"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req1, driverA, pool1, device3, ["IsPrepare3"], ["BindingFailed3"]
                        ),
                    ]
                },
                "nodeSelector": localNodeSelector(node1),
            }
        ],
    ),
    "binding-conditions-with-and-without": case(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            {
                "devices": {
                    "results": [
                        deviceAllocationResult(req0, driverA, pool1, device1, False),
                        deviceRequestAllocationResultWithBindingConditions(
                            req1, driverA, pool1, device2, ["IsPrepare"], ["BindingFailed"]
                        ),
                    ]
                },
                "nodeSelector": localNodeSelector(node1),
            }
        ],
    ),
    "binding-conditions-without-feature-gate": case(
        features=Features(DeviceBindingAndStatus=False),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, None, None).withBindingConditions(["IsPrepare"], ["BindingFailed"])
            )
        ],
        node=node(node1, region1),
        expectResults=None,
    ),
    "node-restriction": case(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                nodeLabelSelector(planetKey, planetValueEarth),
                pool1,
                driverA,
                device(device1, None, None).withBindsToNode(True),
            )
        ],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "partitionable-devices-with-binding-conditions": case(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[
            {
                "devices": {
                    "results": [
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        )
                    ]
                },
                "nodeSelector": localNodeSelector(node1),
            }
        ],
    ),
    "partitionable-devices-with-binding-conditions-multiple": case(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 2))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withBindingConditions(["IsPrepare2"], ["BindingFailed2"]),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[
            {
                "devices": {
                    "results": [
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device2, ["IsPrepare2"], ["BindingFailed2"]
                        ),
                    ]
                },
                "nodeSelector": localNodeSelector(node1),
            }
        ],
    ),
    "partitionable-devices-with-binding-conditions-some-devices-no-conditions": case(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 3))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "2Gi"}))
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "2Gi"})
                ),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withBindingConditions(["IsReady"], ["BindingTimeout"]),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[
            {
                "devices": {
                    "results": [
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                        deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device2, None, None),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device3, ["IsReady"], ["BindingTimeout"]
                        ),
                    ]
                },
                "nodeSelector": localNodeSelector(node1),
            }
        ],
    ),
    "partitionable-devices-with-binding-conditions-multi-slices": case(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 2))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice4,
                node1,
                resourcePool(pool1, 4),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withBindingConditions(["IsPrepare"], ["BindingFailed"]),
            ),
            sliceWithCounterSets(slice3, node1, resourcePool(pool1, 4), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 4),
                driverA,
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {"memory": "4Gi"})
                ),
            ),
            sliceWithCounterSets(slice1, node1, resourcePool(pool1, 4), driverA, counterSet(counterSet2, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[
            {
                "devices": {
                    "results": [
                        deviceRequestAllocationResultWithBindingConditions(req0, driverA, pool1, device2, None, None),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"]
                        ),
                    ]
                },
                "nodeSelector": localNodeSelector(node1),
            }
        ],
    ),
    "partitionable-devices-with-binding-conditions-and-taints": case(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True, DeviceTaints=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 2))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withBindingConditions(["IsPrepare"], ["BindingFailed"])
                .withTaints({"key": "key1", "value": "value1", "effect": "NoSchedule"}),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectResults=None,
    ),
    "partitionable-devices-with-binding-conditions-and-taints-tolerated": case(
        features=Features(PartitionableDevices=True, DeviceBindingAndStatus=True, DeviceTaints=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 2)).withTolerations(tolerationNoScheduleKey1)],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withBindingConditions(["IsPrepare"], ["BindingFailed"])
                .withTaints({"key": "key1", "value": "value1", "effect": "NoSchedule"}),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "4Gi"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[
            {
                "devices": {
                    "results": [
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device1, ["IsPrepare"], ["BindingFailed"], tolerationNoScheduleKey1
                        ),
                        deviceRequestAllocationResultWithBindingConditions(
                            req0, driverA, pool1, device2, None, None, tolerationNoScheduleKey1
                        ),
                    ]
                },
                "nodeSelector": localNodeSelector(node1),
            }
        ],
    ),
    "consumable-capacity-disabled-feature": case(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
        expectError=error(
            "claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"
        ),
    ),
    "consumable-capacity-disabled-feature-with-prioritized-list": case(
        features=Features(PrioritizedList=True, DeviceBindingAndStatus=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 1).withCapacityRequest(one),
                    subRequest(subReq1, classA, 1).withCapacityRequest(one),
                )
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
        node=node(node1, region1),
        expectResults=None,
        expectError=error(
            "claim claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"
        ),
    ),
    "consumable-capacity-multi-allocatable-device-with-missing-capacity-request": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, {capacity1: one}, None).withAllowMultipleAllocations()
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(one))],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, {capacity1: one}, None).withAllowMultipleAllocations()
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1)),
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations())],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1)),
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1)),
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, {capacity0: two}, None).withAllowMultipleAllocations()
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, {capacity0: two}, None).withAllowMultipleAllocations()
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claimWithRequests(claim0, None, request(req0, classA, 1)),
            claimWithRequests(claim1, None, request(req0, classA, 1)),
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-zero-request-policy": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claimWithRequests(claim0, None, request(req0, classA, 1)),
            claimWithRequests(claim1, None, request(req0, classA, 1)),
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(zero, {capacity0: one}, None),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: zero}
                ),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: zero}
                ),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-violates-zero-request-policy": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(zero, {capacity0: one}, None),
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-range-policy-step": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(3))],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: four}
                ),
            )
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(2))],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(one, {capacity0: four}, [two]),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
            )
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(2))],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None)
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyValidValues(one, {capacity0: three}, [three]),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: three}
                ),
            )
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two)),
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}),
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(6))],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: 10}),
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))],
        allocatedCapacityDevices={(driverA, pool1, device1): {capacity0: two}},
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
            )
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))],
        allocatedCapacityDevices={(driverA, pool1, device1): {capacity0: two}},
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}),
                device(device2, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: two}),
            )
        ],
    ),
    "consumable-capacity-with-multi-allocatable-device-backtrack": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0)
            .withConstraints({"matchAttribute": stringAttribute})
            .withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(two), deviceRequest(req1, classA, 1).withCapacityRequest(two)
            ),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two)),
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device2, None, {"stringAttribute": {"string": "stringAttributeValue1"}})
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
                device(device1, None, {"stringAttribute": {"string": "stringAttributeValue2"}})
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
                deviceRequestAllocationResult(req1, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
            ),
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: two}),
            ),
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-subrequest": case(
        features=Features(ConsumableCapacity=True, PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(subReq0, classA, 1).withCapacityRequest(four),
                    subRequest(subReq1, classA, 1).withCapacityRequest(two),
                    subRequest(subReq1, classA, 1),
                )
            )
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0SubReq1, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: two}
                ),
            )
        ],
    ),
    "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))],
        allocatedCapacityDevices={(driverA, pool1, device1): {capacity0: two}},
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}),
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(two))],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, None, None).withAllowMultipleAllocations(),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
            )
        ],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(two))],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
            )
        ],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(one), allDeviceRequest(req1, classA).withCapacityRequest(one)
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}),
                deviceRequestAllocationResult(req1, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}),
                deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}),
            )
        ],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient": case(
        features=Features(ConsumableCapacity=True),
        allocatedCapacityDevices={(driverA, pool1, device1): {capacity0: one}},
        claimsToAllocate=[claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(one))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}),
            )
        ],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(one), allDeviceRequest(req1, classA).withCapacityRequest(one)
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient": case(
        features=Features(ConsumableCapacity=True),
        allocatedCapacityDevices={(driverA, pool1, device1): {capacity0: one}},
        claimsToAllocate=[claim(claim0).withRequests(allDeviceRequest(req0, classA).withCapacityRequest(one))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                device(device2, {capacity0: one}, None).withAllowMultipleAllocations(),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}),
            )
        ],
    ),
    "consumable-capacity-dedicated-device-with-consumable-capacity-request": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
        classes=[classWithAllowMultipleAllocations(classA, driverA, False)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: one}, None))],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
            claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, False)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, None, None).withCapacityRequestPolicyRange({capacity0: two})
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
        classes=[classWithAllowMultipleAllocations(classA, driverA, False)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, {capacity0: one}, None).withAllowMultipleAllocations()
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated": case(
        features=Features(ConsumableCapacity=True),
        allocatedDevices=[(driverA, pool1, device1)],
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}),
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
        allocatedCapacityDevices={(driverA, pool1, device1): {capacity0: one}},
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, None, None).withCapacityRequestPolicyRange({capacity0: two})
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "allow-multiple-allocations-with-partitionable-device": case(
        features=Features(PrioritizedList=True, PartitionableDevices=True, ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0', driverA)}},
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("4Gi")) >= 0', driverA)}},
                    ),
                ),
            )
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withAllowMultipleAllocations(),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "6Gi"}))
                .withAllowMultipleAllocations(),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))
                .withAllowMultipleAllocations(),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {"memory": "4Gi"}
                ),
                deviceRequestAllocationResult(req1SubReq1, driverA, pool1, device3).withConsumedCapacity(
                    fixedShareID, {"memory": "4Gi"}
                ),
            )
        ],
    ),
    "allow-multiple-allocations-with-shared-device-counter-cross-cycle": case(
        features=Features(PartitionableDevices=True, ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1)
                .withCapacityRequest(one)
                .withSelectors({"cel": {"expression": sprintf('device.attributes["%s"].mode == "b"', driverA)}})
            )
        ],
        allocatedSharedDeviceIDs={sharedID((driverA, pool1, device1), fixedShareID)},
        allocatedCapacityDevices={(driverA, pool1, device1): {capacity0: one}},
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, {"mode": {"string": "a"}})
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {capacity0: one}))
                .withAllowMultipleAllocations(),
                device(device2, fromCounters, {"mode": {"string": "b"}})
                .withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {capacity0: one}))
                .withAllowMultipleAllocations(),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {capacity0: one})),
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "consumable-capacity-with-partitionable-device-multiple-capacity-pools": case(
        features=Features(PrioritizedList=True, PartitionableDevices=True, ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(one),
                deviceRequest(req2, classA, 1).withCapacityRequest(two),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {
                            "cel": {
                                "expression": sprintf(
                                    'device.capacity["%s"]["%s"].compareTo(quantity("4")) >= 0', driverA, capacity0
                                )
                            }
                        },
                    ).withCapacityRequest(one),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        {
                            "cel": {
                                "expression": sprintf(
                                    'device.capacity["%s"]["%s"].compareTo(quantity("2")) >= 0', driverA, capacity0
                                )
                            }
                        },
                    ).withCapacityRequest(one),
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {capacity0: two}),
                    deviceCounterConsumption(counterSet2, {capacity1: four}),
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity1: four}),
                device(device2, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {capacity0: four}),
                    deviceCounterConsumption(counterSet2, {capacity1: four}),
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity1: four}),
                device(device3, fromCounters, None)
                .withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {capacity0: two}),
                    deviceCounterConsumption(counterSet2, {capacity1: four}),
                )
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity1: four}),
            ),
            sliceWithCounterSets(
                slice2,
                node1,
                resourcePool(pool1, 2),
                driverA,
                counterSet(counterSet1, {capacity0: four}),
                counterSet(counterSet2, {capacity1: "8"}),
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one, capacity1: two}
                ),
                deviceRequestAllocationResult(req2, driverA, pool1, device3).withConsumedCapacity(
                    fixedShareID, {capacity0: two, capacity1: two}
                ),
                deviceRequestAllocationResult(req1SubReq1, driverA, pool1, device1).withConsumedCapacity(
                    fixedShareID, {capacity0: one, capacity1: two}
                ),
            )
        ],
    ),
    "with-distinct-constraints": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0)
            .withConstraints(
                {"distinctAttribute": boolAttribute, "requests": [req0, req1]},
                {"distinctAttribute": versionAttribute, "requests": [req0, req1, req2]},
                {"distinctAttribute": intAttribute, "requests": [req0, req1, req2, req3]},
            )
            .withRequests(
                deviceRequest(req0, classA, 1),
                deviceRequest(req1, classA, 1),
                deviceRequest(req2, classA, 1),
                deviceRequest(req3, classA, 1),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(
                    device1, None, {"driverVersion": {"version": "1.0.0"}, "numa": {"int": 0}, "boolAttribute": {"bool": True}}
                ).withAllowMultipleAllocations(),
                device(
                    device2, None, {"driverVersion": {"version": "1.0.1"}, "numa": {"int": 1}, "boolAttribute": {"bool": False}}
                ).withAllowMultipleAllocations(),
                device(
                    device3, None, {"driverVersion": {"version": "1.0.2"}, "numa": {"int": 2}, "boolAttribute": {"bool": True}}
                ).withAllowMultipleAllocations(),
                device(
                    device4, None, {"driverVersion": {"version": "1.0.0"}, "numa": {"int": 3}, "boolAttribute": {"bool": True}}
                ).withAllowMultipleAllocations(),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
                deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(fixedShareID, None),
                deviceRequestAllocationResult(req2, driverA, pool1, device3).withConsumedCapacity(fixedShareID, None),
                deviceRequestAllocationResult(req3, driverA, pool1, device4).withConsumedCapacity(fixedShareID, None),
            )
        ],
    ),
    "with-distinct-constraints-attribute-not-set": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0)
            .withConstraints({"distinctAttribute": boolAttribute, "requests": [req0]})
            .withRequests(deviceRequest(req0, classA, 1))
        ],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations())],
        node=node(node1, region1),
        expectResults=[],
    ),
    "with-distinct-constraints-unknown-type-attribute": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0)
            .withConstraints({"distinctAttribute": boolAttribute, "requests": [req0]})
            .withRequests(deviceRequest(req0, classA, 1))
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, pool1, driverA, device(device1, None, {"boolAttribute": {}}).withAllowMultipleAllocations()
            )
        ],
        node=node(node1, region1),
        expectResults=[],
        expectError=error("unsupported attribute value"),
    ),
    "with-distinct-constraints-with-subrequests": case(
        features=Features(ConsumableCapacity=True, PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0)
            .withConstraints({"distinctAttribute": boolAttribute, "requests": [req0, req1]})
            .withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].boolAttribute', driverA)}}
                    ),
                    subRequest(subReq1, classA, 1),
                ),
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].boolAttribute', driverA)}}
                    ),
                    subRequest(subReq1, classA, 1),
                ),
                requestWithPrioritizedList(
                    req2,
                    subRequest(
                        subReq0, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].boolAttribute', driverA)}}
                    ),
                    subRequest(subReq1, classA, 1),
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"boolAttribute": {"bool": True}}).withAllowMultipleAllocations(),
                device(device2, None, {"boolAttribute": {"bool": False}}).withAllowMultipleAllocations(),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0SubReq0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
                deviceRequestAllocationResult(req1SubReq1, driverA, pool1, device2).withConsumedCapacity(fixedShareID, None),
                deviceRequestAllocationResult(req2SubReq0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None),
            )
        ],
    ),
    "distinct-constraint-one-multi-allocatable-device-with-distinct-constraint": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0)
            .withConstraints({"distinctAttribute": stringAttribute})
            .withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(one), deviceRequest(req1, classA, 1).withCapacityRequest(one)
            )
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"stringAttribute": {"string": "stringAttributeValue"}})
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: two}),
            )
        ],
        node=node(node1, region1),
        expectResults=[],
    ),
    "distinct-constraint-two-multi-allocatable-devices-with-distinct-constraint": case(
        features=Features(ConsumableCapacity=True),
        claimsToAllocate=[
            claim(claim0)
            .withConstraints({"distinctAttribute": stringAttribute})
            .withRequests(
                deviceRequest(req0, classA, 1).withCapacityRequest(two), deviceRequest(req1, classA, 1).withCapacityRequest(two)
            )
        ],
        classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, {"stringAttribute": {"string": "stringAttributeValue1"}})
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device2, None, {"stringAttribute": {"string": "stringAttributeValue2"}})
                .withAllowMultipleAllocations()
                .withCapacityRequestPolicyRange({capacity0: four}),
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}),
                deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: two}),
            )
        ],
    ),
    "list-attributes-disabled-match-constraint-with-lists": case(
        features=Features(ListTypeAttributes=False),
        claimsToAllocate=[claimWithRequests(claim0, [{"matchAttribute": stringAttribute}], request(req0, classA, 2))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"stringAttribute": {"stringValues": ["value1", "value2", "value3"]}}),
                device(device2, None, {"stringAttribute": {"stringValues": ["value2", "value3", "value4"]}}),
            )
        ],
        node=node(node1, region1),
        expectResults=[],
        expectError=error("unsupported attribute value"),
    ),
    "list-attributes-disabled-distinct-constraint-with-lists": case(
        features=Features(ListTypeAttributes=False, ConsumableCapacity=True),
        claimsToAllocate=[claimWithRequests(claim0, [{"distinctAttribute": stringAttribute}], request(req0, classA, 2))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"stringAttribute": {"stringValues": ["value1", "value2", "value3"]}}),
                device(device2, None, {"stringAttribute": {"stringValues": ["value2", "value3", "value4"]}}),
            )
        ],
        node=node(node1, region1),
        expectResults=[],
        expectError=error("unsupported attribute value"),
    ),
    "allocation-mode-all-with-multi-host-resource-pool": case(
        claimsToAllocate=[
            claimWithRequests(claim0, None, {"name": req0, "exactly": {"allocationMode": "All", "deviceClassName": classA}})
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)),
            sliceWithDevices(slice2, node2, resourcePool(pool1, 2), driverA, device(device2, None, None)),
        ],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "multi-host-resource-pool-with-stale-slice-for-current-node": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[_f25(), _f26()],
        node=node(node1, region1),
    ),
    "multi-host-resource-pool-complete-update-from-node-1-to-node-2": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[_f27(), _f28(), _f29(), _f30()],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "multi-host-resource-pool-complete-update-from-node-2-to-node-1": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[_f31(), _f32(), _f33(), _f34()],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[_f35(), _f36(), _f37()],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))],
    ),
    "multi-host-resource-pool-incomplete-update-from-node-2-to-node-1": case(
        claimsToAllocate=[claimWithRequest(claim0, req0, classA)],
        classes=[class_(classA, driverA)],
        slices=[_f38(), _f39(), _f40()],
        node=node(node1, region1),
    ),
    "partitionable-devices-same-counter-set-name-in-different-resource-slices": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node1, resourcePool(pool1, 4), driverA, device(device1, None, None)),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 4), driverA, counterSet(counterSet1, None)),
            sliceWithDevices(slice3, node1, resourcePool(pool1, 4), driverA, device(device2, None, None)),
            sliceWithCounterSets(slice4, node1, resourcePool(pool1, 4), driverA, counterSet(counterSet1, None)),
        ],
        node=node(node1, region1),
        expectError=error("invalid resource pools were encountered"),
    ),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-set": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet2, None)),
            ),
            sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, None)),
        ],
        node=node(node1, region1),
        expectError=error("invalid resource pools were encountered"),
    ),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                resourcePool(pool1, 2),
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "8Gi"})
                ),
            ),
            sliceWithCounterSets(
                slice2, node1, resourcePool(pool1, 2), driverA, counterSet(counterSet1, {"other-memory": "8Gi"})
            ),
        ],
        node=node(node1, region1),
        expectError=error("invalid resource pools were encountered"),
    ),
    "partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "8Gi"})
                ),
            ),
            sliceWithCounterSets(slice2, node1, pool2, driverA, counterSet(counterSet1, {"memory": "8Gi"})),
        ],
        node=node(node1, region1),
        expectError=error("invalid resource pools were encountered"),
    ),
    "partitionable-devices-devices-on-different-nodes-consume-same-counter-set": case(
        features=Features(PartitionableDevices=True, PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req0,
                    subRequest(
                        subReq0,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("6Gi")) >= 0', driverA)}},
                    ),
                    subRequest(
                        subReq1,
                        classA,
                        1,
                        {"cel": {"expression": sprintf('device.capacity["%s"].memory.compareTo(quantity("2Gi")) >= 0', driverA)}},
                    ),
                )
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithCounterSets(slice1, node1, resourcePool(pool1, 3), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 3),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "6Gi"})
                ),
                device(device2, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "2Gi"})
                ),
            ),
            sliceWithDevices(
                slice3,
                node2,
                resourcePool(pool1, 3),
                driverA,
                device(device3, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "6Gi"})
                ),
            ),
        ],
        allocatedDevices=[(driverA, pool1, device3)],
        node=node(node1, region1),
        expectResults=[
            allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device2, False))
        ],
    ),
    "partitionable-devices-validation-error-on-non-targeting-slice": case(
        features=Features(PartitionableDevices=True),
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithCounterSets(slice1, node1, resourcePool(pool1, 3), driverA, counterSet(counterSet1, {"memory": "8Gi"})),
            sliceWithDevices(
                slice2,
                node1,
                resourcePool(pool1, 3),
                driverA,
                device(device1, fromCounters, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet1, {"memory": "6Gi"})
                ),
            ),
            sliceWithDevices(
                slice3,
                node2,
                resourcePool(pool1, 3),
                driverA,
                device(device3, None, None).withDeviceCounterConsumption(
                    deviceCounterConsumption(counterSet2, {"memory": "6Gi"})
                ),
            ),
        ],
        node=node(node1, region1),
        expectError=error("invalid resource pools were encountered"),
    ),
    "different-resourceslices-in-pool-can-target-different-nodes": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node2, resourcePool(pool1, 2), driverA, device(device1, None, None)),
            sliceWithDevices(slice2, node1, resourcePool(pool1, 2), driverA, device(device2, None, None)),
        ],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False))],
    ),
    "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)),
            sliceWithDevices(slice2, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)),
            sliceWithDevices(slice3, node1, resourcePool(pool2, 1), driverA, device(device2, None, None)),
        ],
        node=node(node1, region1),
        expectResults=[allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool2, device2, False))],
    ),
    "invalid-pool-is-error-if-no-other-device-can-be-allocated": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)),
            sliceWithDevices(slice2, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)),
            sliceWithDevices(slice3, node1, resourcePool(pool2, 1), driverA, device(device2, None, None)),
        ],
        allocatedDevices=[(driverA, pool2, device2)],
        node=node(node1, region1),
        expectError=error("invalid resource pools were encountered"),
    ),
    "no-allocation-from-incomplete-pools": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
        classes=[class_(classA, driverA)],
        slices=[sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None))],
        node=node(node1, region1),
    ),
    "check-combinations-within-single-request-single-pool-single-slice": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 5))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, None),
                device(device2, None, None),
                device(device3, None, None),
                device(device4, None, None),
            )
        ],
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={"stable": 65},
    ),
    "check-combinations-within-single-request-single-pool-multiple-slices": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 5))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None), device(device2, None, None)
            ),
            sliceWithDevices(
                slice2, node1, resourcePool(pool1, 2), driverA, device(device3, None, None), device(device4, None, None)
            ),
        ],
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={"stable": 65},
    ),
    "check-combinations-within-single-request-multiple-pools-multiple-slices": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 5))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, None)),
            sliceWithDevices(slice2, node1, resourcePool(pool1, 2), driverA, device(device2, None, None)),
            sliceWithDevices(slice3, node1, pool2, driverA, device(device3, None, None), device(device4, None, None)),
        ],
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={"stable": 65},
    ),
    "check-combinations-within-single-request-many-pools": case(
        claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 5))],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)),
            sliceWithDevices(slice2, node1, pool2, driverA, device(device2, None, None)),
            sliceWithDevices(slice3, node1, pool3, driverA, device(device3, None, None)),
            sliceWithDevices(slice4, node1, pool4, driverA, device(device4, None, None)),
        ],
        node=node(node1, region1),
        expectResults=None,
        expectNumAllocateOneInvocations=16,
        expectNumAllocateOneInvocationsByChannel={"stable": 65},
    ),
    "check-combinations-with-backtracking": case(
        claimsToAllocate=[
            claimWithRequests(
                claim0,
                None,
                request(req1, classA, 2),
                request(req2, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].type == "X"', driverA)}}),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"type": {"string": "X"}}),
                device(device2, None, {"type": {"string": "Y"}}),
                device(device3, None, {"type": {"string": "Y"}}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
                deviceAllocationResult(req1, driverA, pool1, device3, False),
                deviceAllocationResult(req2, driverA, pool1, device1, False),
            )
        ],
        expectNumAllocateOneInvocations=12,
        expectNumAllocateOneInvocationsByChannel={"stable": 14},
    ),
    "check-combinations-with-backtracking-across-slices-and-pools": case(
        features=Features(DeviceBindingAndStatus=True),
        claimsToAllocate=[
            claimWithRequests(
                claim0,
                None,
                request(req1, classA, 2),
                request(req2, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].type == "X"', driverA)}}),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA, device(device1, None, {"type": {"string": "X"}})),
            sliceWithDevices(slice2, node1, resourcePool(pool1, 2), driverA, device(device2, None, {"type": {"string": "Y"}})),
            sliceWithDevices(
                slice3,
                node1,
                pool2,
                driverA,
                device(device3, None, {"type": {"string": "Y"}}).withBindingConditions(["IsPrepare"], []),
            ),
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1, driverA, pool1, device2, False),
                deviceRequestAllocationResultWithBindingConditions(req1, driverA, pool2, device3, ["IsPrepare"], []),
                deviceAllocationResult(req2, driverA, pool1, device1, False),
            )
        ],
        expectNumAllocateOneInvocations=12,
        expectNumAllocateOneInvocationsByChannel={"stable": 14},
    ),
    "check-combinations-with-prioritized-list": case(
        features=Features(PrioritizedList=True),
        claimsToAllocate=[
            claim(claim0).withRequests(
                requestWithPrioritizedList(
                    req1,
                    subRequest(
                        subReq0, classA, 3, {"cel": {"expression": sprintf('device.attributes["%s"].type == "Y"', driverA)}}
                    ),
                    subRequest(subReq1, classA, 2),
                ),
                requestWithPrioritizedList(
                    req2,
                    subRequest(subReq0, classA, 2),
                    subRequest(
                        subReq1, classA, 1, {"cel": {"expression": sprintf('device.attributes["%s"].type == "X"', driverA)}}
                    ),
                ),
            )
        ],
        classes=[class_(classA, driverA)],
        slices=[
            sliceWithDevices(
                slice1,
                node1,
                pool1,
                driverA,
                device(device1, None, {"type": {"string": "X"}}),
                device(device2, None, {"type": {"string": "Y"}}),
                device(device3, None, {"type": {"string": "Y"}}),
            )
        ],
        node=node(node1, region1),
        expectResults=[
            allocationResult(
                localNodeSelector(node1),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device2, False),
                deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False),
                deviceAllocationResult(req2SubReq1, driverA, pool1, device1, False),
            )
        ],
        expectNumAllocateOneInvocations=26,
        expectNumAllocateOneInvocationsByChannel={"stable": 32},
    ),
}
