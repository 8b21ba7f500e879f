"""The schedule of faults of test/chaos/run: pure code, a seed gives one schedule.

Nodes: a (snowflake.worker_id set by hand), b and c (claiming from the
registry; c has a streaming standby). A fault is (at, lane, kind, target,
params): at is seconds into the run, when it starts at the earliest. Faults run
in up to `overlap` lanes at once, one after another in each lane (each for its
duration); two faults that need one resource (a node, the registry, a node's
link to it: resources()) wait for each other. The last `quiet` seconds of a run
have no fault: the final phase, in which every node must issue ids again.
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
    # an operator's copy, as dimensions: how it is made, when, what the operator
    # does with it next (test/chaos/run's fault_copy)
    "copy": (("a", "b"), lambda r: copy_recipe(r)),
    # not detectable by design (docs/ha-and-copies.md): the source stopped and
    # given a new worker id before a cold copy, both then running it
    "copy_renumbered": (("a", "b"), lambda r: {**copy_recipe(r, "cold_cp"), "renumber": True}),
    # the registry begins a new life (its standby promoted, or its server
    # restored from a base backup taken before the nodes' grants, at the same
    # address), then a new node claims beside the holders (their links to the
    # registry cut or not until it holds a worker id), or every claiming node
    # restarts (stopped before: kill -9, or cleanly, releasing its worker id)
    # and claims again
    "registry_life": (("registry",), lambda r: {"how": r.choice(("failover", "restore")),
                                                "then": r.choice(("newcomer", "fleet_restart")),
                                                "cut": r.random() < 0.5, "stop": r.choice(("crash", "clean")),
                                                "seconds": round(r.uniform(4, 10), 1)}),
    # the registry's standby promoted while its primary runs, b following to
    # it; after seconds (b's grant lapsed on the old primary) a new node claims
    # from the old one
    "registry_split": (("registry",), lambda r: {"seconds": round(r.uniform(12, 18), 1)}),
    # not detectable by design (docs/ha-and-copies.md): c's streaming standby
    # promoted by hand while c runs, with clients on both
    "standby_promoted_by_hand": (("c",), lambda r: {"seconds": round(r.uniform(2, 6), 1)}),
    # The registry's paths of issue 46: test/chaos/run's fault_<kind> says each
    # recipe. The holder X (b or c) cut off (its proxy) or paused (SIGSTOP) past
    # its window's end, its worker id released by hand and claimed by a new
    # node; the registry restored from a base backup taken after X's grant; X
    # presents its ended window first, the new node's link still cut for
    # `seconds`
    "ended_window_presented": (CLAIMING, lambda r: {"how": r.choice(("cut", "pause")), "seconds": round(r.uniform(2, 4), 1)}),
    # snowflake_registry_raise_floor(now() + ahead s): a new node's window
    # starts ahead and ends later than a new life's grace; that node cut off,
    # the registry restored from a base backup taken before the raise, or
    # created again; another new node claims its worker id
    "window_dated_ahead": (("registry",), lambda r: {"ahead": r.randrange(20, 31), "then": r.choice(("restore", "recreate"))}),
    # pg_dump -Fc of the registry's database; a new node claims, is cut off;
    # pg_restore --clean into the running registry (no start); another new
    # node claims; the first one's link healed after `seconds`
    "rollback_without_start": (("registry",), lambda r: {"seconds": round(r.uniform(2, 4), 1)}),
    # the same with a data-only dump of the worker and grant tables only,
    # restored into the emptied tables, the settings untouched (issue 56: R9)
    "partial_restore": (("registry",), lambda r: {"seconds": round(r.uniform(2, 4), 1)}),
    # a new node granted a 6 s window, cut off; the registry created again
    # with a maximum window `lower` s shorter; a second new node steered to
    # its worker id (issue 56: R2')
    "registry_recreated_smaller": (("registry",), lambda r: {"lower": r.randrange(2, 5)}),
    # the same rollback with two new nodes of one holder name (host name,
    # port and data directory path as the registry sees them)
    "twin_holder_names": (("registry",), lambda r: {"seconds": round(r.uniform(2, 4), 1)}),
    # the registry's server under libfaketime: its clock `offset` s ahead
    # while a new node renews, then stepped back, the registry restored from
    # a base backup taken before that node's grant, the node cut off; or
    # restored with its clock `offset` s behind, then corrected; another new
    # node claims after the grace
    "registry_clock_ahead": (("registry",), lambda r: {"offset": r.randrange(10, 21)}),
    "registry_clock_behind": (("registry",), lambda r: {"offset": r.randrange(10, 31)}),
    # a container recreated (docs/containers.md): the node stopped (cleanly or
    # by kill -9), then started in a UTS namespace of its own under a new
    # kernel host name (ctr-SEED-N), its snowflake.host_name fixed (set at
    # its creation when this kind runs: test/chaos/run's node_conf); it must
    # issue ids again within the bound (the checker's restarts), under load
    # through its seconds after
    "container_restart": (NODES, lambda r: {"stop": r.choice(("clean", "crash")), "seconds": round(r.uniform(1, 4), 1)}),
    # a cold copy of the node started with standby.signal and nothing to
    # follow (primary_conninfo and restore_command empty), promoted beside
    # its source (docs/ha-and-copies.md): a restore, fenced (rule F14)
    "standby_copy": (NODES, lambda r: {"seconds": round(r.uniform(2, 5), 1)}),
    # not detectable by design (docs/ha-and-copies.md, docs/containers.md): a
    # block-level clone of a's volume started under its host name beside it
    # (a cold copy whose statx() of its data directory answers a's inode and
    # birth time: test/chaos/same_volume.c; one file system cannot hold a
    # second directory of one inode), under load for `seconds`
    "same_name_clone": (("a",), lambda r: {"seconds": round(r.uniform(2, 5), 1)}),
}

# The kinds of issue 46's registry paths (above).
REGISTRY_PATHS = ("ended_window_presented", "window_dated_ahead", "rollback_without_start", "twin_holder_names",
                  "registry_clock_ahead", "registry_clock_behind", "partial_restore", "registry_recreated_smaller")
REGISTRY_CLOCK = ("registry_clock_ahead", "registry_clock_behind")
# The kinds of issue 47: a data directory under ephemeral host names, and a
# copy started as a standby with nothing to follow.
CONTAINERS = ("container_restart", "standby_copy")


def copy_recipe(r, how=None):
    """how: pg_basebackup, cp -a of the running server with pg_snowflake/
    copied first and the rest a moment later (its lease file older than its
    WAL), cp -a of the stopped server; when: now (under load) or before the
    source's first id (a backup or a golden image taken at setup); label:
    backup_label kept or removed; renumber: never here (copy_renumbered, not
    detectable, sets it); then: the operator's next
    step (nothing, or pg_snowflake/lease removed and the copy restarted, as
    docs/troubleshooting.md advises for a lease it refuses); restarts: the
    copy restarted 0 to 2 more times, clean or by kill -9."""
    how = how or r.choice(("basebackup", "hot_cp", "cold_cp"))
    when = "now" if how == "hot_cp" else r.choice(("now", "before_first_id"))
    return {"how": how, "when": when,
            "label": r.choice(("kept", "removed")) if how == "basebackup" else "none",
            "renumber": False,
            "then": r.choice(("nothing", "rm_lease")),
            "restarts": r.choice((0, 1, 2)), "restart_by": r.choice(("clean", "crash")),
            "seconds": round(r.uniform(2, 5), 1)}

# Kinds that find known holes on today's code. A kind goes here, with its
# reason, while its fix is made; its fix takes it out. Empty: the registry
# paths of issue 46 make no id twice under R1-R8 (test/chaos/FINDINGS.md,
# "Registry paths of issue 46 (on the fixed code)").
KNOWN_HOLES = ()

# Kinds that run in a run of their own (`--faults registry_paths`; CI's
# second chaos run, test/run), not in `default`: each holds the registry, both
# claiming nodes and their links for 30 to 60 s and starts new nodes, so that
# among the default kinds they would crowd the others out of CI's 150 s (seed
# 16 would draw four of them and none of its copies or registry lives).
# CONTAINERS too (`--faults containers`, CI's third run): among the default
# kinds they would change every seed's schedule, CI's seed 16 among them.
OWN_RUN = REGISTRY_PATHS + CONTAINERS

# What docs/ha-and-copies.md lists as not detectable: run only under --faults all
# (or named), and named in the run's summary.
NOT_DETECTABLE = (
    "standby_promoted_by_hand",
    "copy_renumbered",  # the copy's files name the old worker id, its settings the new one
    "registry_split",   # two registries after a promotion with asynchronous replication both grant
    "same_name_clone",  # a block clone under its source's host name: the same host name, volume, birth time and inode
)

DEFAULT = tuple(k for k in KINDS if k not in KNOWN_HOLES and k not in NOT_DETECTABLE and k not in OWN_RUN)

# Resources a fault holds while it runs: another fault that needs one waits.
NODE_KINDS_ON_PROXY = ("partition", "delay")


def resources(fault):
    kind, target = fault["kind"], fault["target"]
    if kind in NODE_KINDS_ON_PROXY:
        return {"link-" + target}
    if kind == "registry_failover_async" and fault.get("lag"):
        return {"registry", *CLAIMING}
    if kind == "registry_split":
        return {"registry", *CLAIMING, "link-b"}
    if kind == "registry_life" or kind in REGISTRY_PATHS:
        return {"registry", *CLAIMING, *("link-" + slot for slot in CLAIMING)}
    if kind in ("base_backup", "cold_copy", "pitr", "pitr_before_first_id", "copy", "pg_upgrade", "same_name_clone",
                "standby_copy"):
        return {target, "copies"}  # copies of one run one at a time (disk, CPU)
    return {target}


def parse_kinds(text):
    """The kinds of a --faults list (comma-separated; 'all', 'default',
    'registry_paths', 'containers')."""
    kinds = []
    for word in text.split(","):
        word = word.strip()
        if word == "all":
            kinds.extend(KINDS)
        elif word == "default":
            kinds.extend(DEFAULT)
        elif word == "registry_paths":
            kinds.extend(REGISTRY_PATHS)
        elif word == "containers":
            kinds.extend(CONTAINERS)
        elif word in KINDS:
            kinds.append(word)
        elif word:
            raise ValueError(f"unknown fault kind \"{word}\" (kinds: {', '.join(KINDS)}, all, default, registry_paths, containers)")
    return list(dict.fromkeys(kinds))


QUIET = 30  # seconds without a fault at the end of a run: the final phase


def make(seed, seconds, kinds, overlap=2, quiet=QUIET):
    """The schedule: in each of `overlap` lanes, every kind once, in an order
    drawn from the seed, then again in another order, ... until the run's
    time but its last `quiet` seconds is spent (a fault too long for the time
    left is passed over, until as many in a row as there are kinds); a pause of 0.5 to 2 s between
    faults of a lane, lanes after the first starting 0 to 10 s late.
    Durations are planned; real ones may be longer."""
    rng = random.Random(seed)
    faults = []
    for lane in range(overlap):
        at = 3.0 + (rng.uniform(0, 10) if lane else 0)
        round_ = []
        misfits = 0
        while misfits < len(kinds):
            if not round_:
                round_ = list(kinds)
                rng.shuffle(round_)
            kind = round_.pop()
            targets, params = KINDS[kind]
            fault = {"at": round(at, 1), "lane": lane, "kind": kind, "target": rng.choice(targets), **params(rng)}
            duration = planned(fault)
            if at + duration > seconds - quiet:
                misfits += 1  # too long for the time left: another kind may fit
                continue
            misfits = 0
            faults.append(fault)
            at += duration + rng.uniform(0.5, 2)
    faults.sort(key=lambda f: (f["at"], f["lane"]))
    return faults


def planned(fault):
    """A fault's planned duration, s (a copy: each phase, and a start or a
    restart between them; the registry's new life: a promotion or restore)."""
    seconds = fault.get("seconds", 1)
    if fault["kind"] in ("copy", "copy_renumbered"):
        phases = 1 + (fault["then"] == "rm_lease") + fault["restarts"]
        return phases * (seconds + 2) + 2
    if fault["kind"] == "registry_life":
        return seconds + 10
    if fault["kind"] == "registry_split":
        return 2 * seconds + 10
    if fault["kind"] == "ended_window_presented":
        return 2 * seconds + 24
    if fault["kind"] == "window_dated_ahead":
        return fault["ahead"] + 12
    if fault["kind"] in ("rollback_without_start", "twin_holder_names"):
        return 2 * seconds + 12
    if fault["kind"] == "container_restart":
        return seconds + 4  # the stop, the start, the first id
    if fault["kind"] == "standby_copy":
        return seconds + 6  # the source stopped, copied, started; the copy started and promoted
    if fault["kind"] in REGISTRY_CLOCK:
        return fault["offset"] + 14 if fault["kind"] == "registry_clock_ahead" else 22
    return seconds + 1


def describe(fault):
    params = " ".join(f"{k}={v}" for k, v in fault.items() if k not in ("at", "lane", "kind", "target"))
    return (f"+{fault['at']:.1f} s" + (f" [{fault['lane'] + 1}]" if fault.get("lane") else "")
            + f" {fault['kind']} {fault['target']}" + (f" {params}" if params else ""))
