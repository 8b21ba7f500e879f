"""The checker of test/chaos/run: pure code over the histories of a run, no server.

A history is what the run recorded and read back:
  acks    every insert whose commit was acknowledged: dicts with node, session,
          id, start and end (a monotonic clock of the run, ns)
  rows    node -> the ids read back from that node's table at the end (the
          rows the node made itself), or None when it could not be read
  grants  every row of snowflake_registry.grants of every registry the run had
          (worker_id, fencing_epoch, holder_name, from_ms, until_ms)
  static  the worker ids set by hand (snowflake.worker_id): no window to check
  epoch_ms, worker_bits, sequence_bits: the layout the nodes generate in
The verdict counts duplicates, lost rows, ids outside windows, decreases, and
overlapping grants, each with examples.
"""

import collections

DEFAULT_EPOCH_MS = 1704067200000  # 2024-01-01 00:00:00 UTC


def decode(id_, epoch_ms=DEFAULT_EPOCH_MS, worker_bits=10, sequence_bits=12):
    """(unix ms, worker id) of an id."""
    return ((id_ >> (worker_bits + sequence_bits)) + epoch_ms,
            (id_ >> sequence_bits) & ((1 << worker_bits) - 1))


def merged_grants(grants):
    """One window per grant of the union of every registry's table: a grant
    copied to a standby appears in both, with the later until_ms (renewals
    only raise it) or the earlier (a clean release lowers it): the widest."""
    merged = {}
    for g in grants:
        key = (g["worker_id"], g["fencing_epoch"], g["holder_name"], g["from_ms"])
        if key in merged:
            merged[key] = max(merged[key], g["until_ms"])
        else:
            merged[key] = g["until_ms"]
    by_worker = collections.defaultdict(list)
    for (worker, epoch, holder, from_ms), until_ms in merged.items():
        by_worker[worker].append((from_ms, until_ms, epoch, holder))
    for windows in by_worker.values():
        windows.sort()
    return by_worker


def overlaps(by_worker):
    """Pairs of grants of one worker id, to two grants, whose windows overlap."""
    found = []
    for worker, windows in sorted(by_worker.items()):
        for i, (from_i, until_i, epoch_i, holder_i) in enumerate(windows):
            for from_j, until_j, epoch_j, holder_j in windows[i + 1:]:
                if from_j >= until_i:
                    break
                if from_j < until_j and from_i < until_i:
                    found.append((worker, (epoch_i, holder_i, from_i, until_i), (epoch_j, holder_j, from_j, until_j)))
    return found


def inside(windows, ms):
    for from_ms, until_ms, _, _ in windows:
        if from_ms > ms:
            return False
        if ms < until_ms:
            return True
    return False


def decreases(acks):
    """Acks whose id is not above one acknowledged before it started, on its
    node (across sessions, restarts and crashes) or in its session."""
    found = []
    by_node = collections.defaultdict(list)
    for ack in acks:
        by_node[ack["node"]].append(ack)
    for node, node_acks in sorted(by_node.items()):
        ended = sorted(node_acks, key=lambda a: a["end"])
        started = sorted(node_acks, key=lambda a: a["start"])
        highest, highest_ack, i = None, None, 0
        for ack in started:
            # every ack that ended before this one started
            while i < len(ended) and ended[i]["end"] < ack["start"]:
                if highest is None or ended[i]["id"] > highest:
                    highest, highest_ack = ended[i]["id"], ended[i]
                i += 1
            if highest is not None and ack["id"] <= highest:
                found.append((ack, highest_ack))
    return found


def check(history):
    acks = history["acks"]
    rows = history["rows"]
    static = set(history.get("static", ()))
    layout = dict(epoch_ms=history.get("epoch_ms", DEFAULT_EPOCH_MS),
                  worker_bits=history.get("worker_bits", 10),
                  sequence_bits=history.get("sequence_bits", 12))
    verdict = {"ids": len(acks), "examples": []}

    # duplicates: every id made once, over acks and the rows read back
    # (a row of an ack is that ack; a row without one committed unacknowledged)
    occurrences = collections.Counter()
    acked_on = collections.defaultdict(collections.Counter)
    for ack in acks:
        acked_on[ack["node"]][ack["id"]] += 1
    for node in set(acked_on) | {n for n, r in rows.items() if r is not None}:
        read = collections.Counter(rows.get(node) or ())
        for id_ in set(acked_on[node]) | set(read):
            occurrences[id_] += max(acked_on[node][id_], read[id_])
    duplicated = {i: n for i, n in occurrences.items() if n > 1}
    verdict["duplicates"] = sum(n - 1 for n in duplicated.values())
    for id_ in sorted(duplicated)[:5]:
        where = sorted(f"acknowledged in session {a['session']}" for a in acks if a["id"] == id_)
        where += sorted(f"{n} (row read back)" for n, r in rows.items() if r is not None and id_ in r)
        verdict["examples"].append(f"duplicate: id {id_} made {duplicated[id_]} times: {', '.join(where)}")

    # lost: an acknowledged id missing from its node's table
    read_sets = {n: set(r) for n, r in rows.items() if r is not None}
    lost = [a for a in acks if a["node"] in read_sets and a["id"] not in read_sets[a["node"]]]
    verdict["lost"] = len(lost)
    for a in lost[:5]:
        verdict["examples"].append(f"lost: id {a['id']} acknowledged in session {a['session']}, not in {a['node']}'s table")
    verdict["unread"] = sorted(n for n in acked_on if rows.get(n) is None)

    # outside windows: every id of a claimed worker id inside one of its grants
    by_worker = merged_grants(history.get("grants", ()))
    outside = []
    for id_ in sorted(occurrences):
        ms, worker = decode(id_, **layout)
        if worker not in static and not inside(by_worker.get(worker, ()), ms):
            outside.append((id_, ms, worker))
    verdict["outside"] = len(outside)
    for id_, ms, worker in outside[:5]:
        verdict["examples"].append(f"outside windows: id {id_} (worker id {worker}, time {ms} ms) in no window granted to worker id {worker}")

    found = decreases(acks)
    verdict["decreases"] = len(found)
    for ack, before in found[:5]:
        verdict["examples"].append(
            f"decrease: id {ack['id']} in session {ack['session']} is not above id {before['id']} "
            f"acknowledged in session {before['session']} before it started (node {ack['node']})")

    found = overlaps(by_worker)
    verdict["overlaps"] = len(found)
    for worker, first, second in found[:5]:
        verdict["examples"].append(f"overlapping grants of worker id {worker}: {first} and {second} (fencing epoch, holder, from ms, until ms)")
    return verdict


def violations(verdict):
    return (verdict["duplicates"] + verdict["lost"] + verdict["outside"] + verdict["decreases"]
            + verdict["overlaps"] + len(verdict["unread"]))


def summary(seed, verdict, kinds):
    return (f"chaos: seed {seed}, {verdict['ids']} ids, {kinds} kinds of fault, {verdict['duplicates']} duplicates, "
            f"{verdict['lost']} lost, {verdict['outside']} outside windows, {verdict['decreases']} decreases")


# --- the self-test: planted histories, each violation caught

def _ack(node, session, id_, start, end):
    return {"node": node, "session": session, "id": id_, "start": start, "end": end}


def _make_id(ms, worker, sequence):
    return ((ms - DEFAULT_EPOCH_MS) << 22) | (worker << 12) | sequence


def planted():
    """(name, history, the counter that must be non-zero) for each planted
    violation, after a clean history that must pass."""
    t0 = DEFAULT_EPOCH_MS + 10 ** 9
    grants = [
        {"worker_id": 1, "fencing_epoch": 1, "holder_name": "b", "from_ms": t0, "until_ms": t0 + 6000},
        {"worker_id": 2, "fencing_epoch": 1, "holder_name": "c", "from_ms": t0, "until_ms": t0 + 6000},
    ]
    acks = []
    for k in range(100):
        acks.append(_ack("b", "b/1.1", _make_id(t0 + 10 * k, 1, 0), 2 * k, 2 * k + 1))
        acks.append(_ack("c", "c/1.1", _make_id(t0 + 10 * k, 2, 0), 2 * k, 2 * k + 1))
        acks.append(_ack("a", "a/1.1", _make_id(t0 + 10 * k, 1000 % 1024, 0), 2 * k, 2 * k + 1))
    unacked = _make_id(t0 + 5, 1, 7)  # committed, its ack lost with the connection

    def history(**changes):
        h = {"acks": [dict(a) for a in acks], "grants": [dict(g) for g in grants], "static": [1000],
             "rows": {"a": [a["id"] for a in acks if a["node"] == "a"],
                      "b": [a["id"] for a in acks if a["node"] == "b"] + [unacked],
                      "c": [a["id"] for a in acks if a["node"] == "c"]}}
        h.update(changes)
        return h

    cases = [("clean", history(), None)]
    # a duplicate: c makes an id b made (only as a row read back, unacknowledged)
    dup = history()
    dup["rows"]["c"].append(acks[0]["id"])
    cases.append(("a duplicate (a row read back on another node)", dup, "duplicates"))
    dup = history()
    dup["acks"].append(_ack("c", "c/2.1", unacked, 0, 10 ** 6))  # concurrent with every other: no decrease
    dup["rows"]["c"].append(unacked)
    cases.append(("a duplicate (an acknowledged id and an unacknowledged row)", dup, "duplicates"))
    # a decrease across sessions of one node: started after an ack of a higher id ended
    dec = history()
    dec["acks"].append(_ack("b", "b/2.1", _make_id(t0 + 15, 1, 3), 50, 51))
    dec["rows"]["b"].append(_make_id(t0 + 15, 1, 3))
    cases.append(("a decrease (another session of the node)", dec, "decreases"))
    # an id outside every window of its worker id
    out = history()
    out["acks"].append(_ack("c", "c/1.1", _make_id(t0 + 7000, 2, 0), 300, 301))
    out["rows"]["c"].append(_make_id(t0 + 7000, 2, 0))
    cases.append(("an id outside its window", out, "outside"))
    # a lost row: acknowledged, not in the table
    lost = history()
    lost["rows"]["b"] = lost["rows"]["b"][1:]
    cases.append(("a lost row", lost, "lost"))
    # two grants of one worker id overlapping
    over = history()
    over["grants"].append({"worker_id": 2, "fencing_epoch": 1, "holder_name": "d", "from_ms": t0 + 3000, "until_ms": t0 + 9000})
    cases.append(("overlapping grants", over, "overlaps"))
    return cases


def selftest(out):
    failures = 0
    for name, history, counter in planted():
        verdict = check(history)
        if counter is None:
            ok = violations(verdict) == 0
            out(f"chaos selftest: {name}: {'passes' if ok else 'FAILED'} ({violations(verdict)} violations)")
        else:
            ok = verdict[counter] > 0 and violations(verdict) == verdict[counter]
            out(f"chaos selftest: {name}: {'caught' if ok else 'NOT CAUGHT'} ({counter} {verdict[counter]}"
                + (f": {verdict['examples'][0]}" if verdict["examples"] else "") + ")")
        failures += not ok
    return failures
