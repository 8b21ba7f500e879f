"""The schedule of faults of test/chaos/run: pure code, a seed gives one schedule.

Nodes: a (snowflake.worker_id set by hand), b and c (claiming from the
registry; c has a streaming standby). A fault is (at, kind, target, params):
at is seconds into the run, when it starts at the earliest (faults run one
after another, each for its duration).
"""

import random

NODES = ("a", "b", "c")
CLAIMING = ("b", "c")

# kind: (targets, parameters drawn from the seed)
KINDS = {
    "kill_postmaster": (NODES, lambda r: {}),
    "kill_backend": (NODES, lambda r: {}),
    "kill_bgworker": (NODES, lambda r: {"worker": r.choice(("registry", "lease"))}),
    "stop_node": (NODES, lambda r: {"seconds": round(r.uniform(0.5, 8), 1)}),
    "stop_registry": (("registry",), lambda r: {"seconds": round(r.uniform(0.5, 8), 1)}),
    "stop_bgworker": (CLAIMING, lambda r: {"worker": r.choice(("registry", "lease")), "seconds": round(r.uniform(1, 10), 1)}),
    "clock_step": (NODES, lambda r: {"offset": round(r.choice((-1, 1)) * r.uniform(0.2, 5), 2), "seconds": round(r.uniform(1, 8), 1)}),
    "clock_drift": (NODES, lambda r: {"rate": round(r.choice((-1, 1)) * r.uniform(0.02, 0.3), 3), "seconds": round(r.uniform(2, 10), 1)}),
    "partition": (CLAIMING, lambda r: {"seconds": round(r.uniform(1, 10), 1)}),
    "delay": (CLAIMING, lambda r: {"ms": r.randrange(50, 1500), "seconds": round(r.uniform(2, 8), 1)}),
    "registry_failover_async": (("registry",), lambda r: {"lag": round(r.uniform(0, 5), 1)}),
    "registry_failover_sync": (("registry",), lambda r: {}),
    "standby_promotion": (("c",), lambda r: {}),
    "base_backup": (NODES, lambda r: {"seconds": round(r.uniform(2, 6), 1)}),
    "cold_copy": (NODES, lambda r: {"seconds": round(r.uniform(2, 6), 1)}),
    "pitr": (NODES, lambda r: {"seconds": round(r.uniform(2, 6), 1)}),
    "pitr_before_first_id": (("a", "b"), lambda r: {"seconds": round(r.uniform(2, 6), 1)}),
    "fsync_fail": (NODES, lambda r: {"seconds": round(r.uniform(1, 6), 1)}),
    "disk_full": (NODES, lambda r: {"seconds": round(r.uniform(1, 6), 1)}),
    "pg_upgrade": (("a", "b"), lambda r: {"seconds": round(r.uniform(2, 6), 1)}),
}

# Kinds that find known holes on today's code (none: the registry's lives,
# the restore fence and pg_upgrade's mark of the old cluster closed the three
# the run first found). A kind goes here, with its reason, while its fix is made.
KNOWN_HOLES = ()

DEFAULT = tuple(k for k in KINDS if k not in KNOWN_HOLES)


def parse_kinds(text):
    """The kinds of a --faults list (comma-separated; 'all', 'default')."""
    kinds = []
    for word in text.split(","):
        word = word.strip()
        if word == "all":
            kinds.extend(KINDS)
        elif word == "default":
            kinds.extend(DEFAULT)
        elif word in KINDS:
            kinds.append(word)
        elif word:
            raise ValueError(f"unknown fault kind \"{word}\" (kinds: {', '.join(KINDS)}, all, default)")
    return list(dict.fromkeys(kinds))


def make(seed, seconds, kinds):
    """The schedule: every kind once, in an order drawn from the seed, then
    again in another order, ... until the run's time is spent; a pause of 0.5
    to 2 s between faults. Durations are planned; real ones may be longer."""
    rng = random.Random(seed)
    faults = []
    at = 3.0
    round_ = []
    while True:
        if not round_:
            round_ = list(kinds)
            rng.shuffle(round_)
        kind = round_.pop()
        targets, params = KINDS[kind]
        fault = {"at": round(at, 1), "kind": kind, "target": rng.choice(targets), **params(rng)}
        duration = fault.get("seconds", 1) + 1
        if at + duration > seconds - 2:
            break
        faults.append(fault)
        at += duration + rng.uniform(0.5, 2)
    return faults


def describe(fault):
    params = " ".join(f"{k}={v}" for k, v in fault.items() if k not in ("at", "kind", "target"))
    return f"+{fault['at']:.1f} s {fault['kind']} {fault['target']}" + (f" {params}" if params else "")
