#!/usr/bin/env python3
"""Splits the test suites into their tiers, for scripts/run-tests.sh.

Input: the event stream that `<tests>.xctest --testing-library swift-testing --list-tests
--event-stream-output-path FILE --event-stream-version 0` writes: a record per suite and per test
function, each with the tags written on it (not the ones it inherits).

A test's tier is the first of TIERS among its own tags and those of the suites around it; a test
with none is "unit". swift-testing's --filter takes regular expressions over test IDs, not tags,
so each tier becomes a list of --filter arguments: a suite as a whole when every test under it is
of that tier, else its tests one by one.

Usage: test-tiers.py PLAN TIER     the --filter arguments of TIER, one per line
       test-tiers.py PLAN --counts  how many tests each tier has
       test-tiers.py PLAN --untagged  the tests with no tier tag (they run as "unit")
       test-tiers.py --tiers        the tiers, in TIERS' order
"""

import json
import re
import sys

# Most demanding first: a test with several of these tags is in the first.
TIERS = ["huge", "postgres", "namespace", "childProcess", "nginx", "loopback", "unit"]


def load(path):
    """{id: (kind, own tags)} for every suite and test function of the plan."""
    nodes = {}
    with open(path) as stream:
        for line in stream:
            record = json.loads(line)
            payload = record.get("payload", {})
            if record.get("kind") != "test":
                continue
            tags = [tag.lstrip(".") for tag in payload.get("_tags", [])]
            nodes[payload["id"]] = (payload["kind"], tags)
    return nodes


def name_of(test_id):
    """A function's id ends with its source location ("/File.swift:12:6"): the filter's name has none."""
    return test_id.rsplit("/", 1)[0]


def ancestors(test_id):
    """The ids of the suites around a test id, outermost first ("M.A", "M.A/B", ...)."""
    parts = name_of(test_id).split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def tags_around(nodes, test_id, tags):
    """A test's own tags and those of the suites around it."""
    seen = set(tags)
    for suite in ancestors(test_id):
        seen.update(nodes.get(suite, ("suite", []))[1])
    return seen


def untagged(nodes):
    """The names of tests with no tier tag of their own or of a suite around them."""
    return sorted(name_of(test_id) for test_id, (kind, tags) in nodes.items()
                  if kind == "function" and not tags_around(nodes, test_id, tags) & set(TIERS))


def tiers_of(nodes):
    """{function name: tier}."""
    result = {}
    for test_id, (kind, tags) in nodes.items():
        if kind != "function":
            continue
        seen = tags_around(nodes, test_id, tags)
        result[name_of(test_id)] = next((tier for tier in TIERS if tier in seen), "unit")
    return result


def filters(tier_of, tier):
    """Regular expressions that select exactly the tests of `tier`: whole suites where possible."""
    chosen = []
    by_suite = {}
    for name, its_tier in tier_of.items():
        for suite in ancestors(name + "/x"):
            by_suite.setdefault(suite, set()).add(its_tier)
    covered = set()
    for suite in sorted(by_suite, key=lambda s: s.count("/")):
        if by_suite[suite] == {tier} and not any(suite.startswith(c + "/") for c in covered):
            covered.add(suite)
            chosen.append(suite)
    for name, its_tier in sorted(tier_of.items()):
        if its_tier == tier and not any(name.startswith(c + "/") for c in covered):
            chosen.append(name)
    # Anchored, so that suite "A" does not also select suite "AB".
    return ["^" + re.escape(item) + "(/|$)" for item in chosen]


def main():
    if sys.argv[1] == "--tiers":
        print("\n".join(TIERS))
        return
    nodes = load(sys.argv[1])
    tier_of = tiers_of(nodes)
    if sys.argv[2] == "--untagged":
        print("\n".join(untagged(nodes)))
        return
    if sys.argv[2] == "--counts":
        for tier in TIERS:
            print(tier, sum(1 for t in tier_of.values() if t == tier))
        return
    for expression in filters(tier_of, sys.argv[2]):
        print(expression)


if __name__ == "__main__":
    main()
