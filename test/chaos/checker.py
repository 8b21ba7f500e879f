"""The checker of test/chaos/run: pure code over the histories of a run, no server.

A history is what the run recorded and read back:
  acks    every insert whose commit was acknowledged: dicts with node, session,
          id, start and end (a monotonic clock of the run, ns)
  rows    node -> the ids read back from that node's table at the end (the
          rows the node made itself), or None when it could not be read
  grants  every row of snowflake_registry.grants of every registry the run had
          (worker_id, fencing_epoch, holder_name, from_ms, until_ms)
  static  the worker ids set by hand (snowflake.worker_id): no window to check
  held    grants renewed by a registry whose clock was ahead (the nemesis
          registry_clock_ahead): dicts with worker_id, fencing_epoch,
          holder_name and until_ms, the end of the window as the holder held
          it (on its own clock, R4): the grant's until_ms is dated on the
          registry's clock, later than the holder's bound
  load    the batches of the full-load clients (snowflake_nextvals(n), every id
          acknowledged): lists [slot, node, session, start, end, runs, dups],
          runs a flat sequence key, lo, hi, ... (key: the id above its sequence
          bits, i.e. its millisecond and worker id; lo..hi: the sequences it
          holds, each once), dups the ids the batch itself held twice
  liveness  healed (the run's clock, ns, when the last fault was healed), end
          (the end of the final phase) and bounds (slot -> seconds): every slot
          must have an id acknowledged within its bound after healed
  restarts  the nodes started again under a new kernel host name (the nemesis
          container_restart): dicts with slot, server, host, stopped and
          started (ns) and bound (s): the slot must have an id acknowledged
          within its bound after started
  acks and batches carry the slot (a, b, c: the node, whichever server it is now)
  epoch_ms, worker_bits, sequence_bits: the layout the nodes generate in
The verdict counts duplicates, lost rows, ids outside windows, decreases,
overlapping grants and slots that did not recover, each with examples.
"""

import collections

DEFAULT_EPOCH_MS = 1704067200000  # 2024-01-01 00:00:00 UTC


def decode(id_, epoch_ms=DEFAULT_EPOCH_MS, worker_bits=10, sequence_bits=12):
    """(unix ms, worker id) of an id."""
    return ((id_ >> (worker_bits + sequence_bits)) + epoch_ms,
            (id_ >> sequence_bits) & ((1 << worker_bits) - 1))


def merged_grants(grants, held=()):
    """One window per grant of the union of every registry's table: a grant
    copied to a standby appears in both, with the later until_ms (renewals
    only raise it) or the earlier (a clean release lowers it): the widest;
    a grant its holder held to an earlier end (held) ends there."""
    merged = {}
    for g in grants:
        key = (g["worker_id"], g["fencing_epoch"], g["holder_name"], g["from_ms"])
        if key in merged:
            merged[key] = max(merged[key], g["until_ms"])
        else:
            merged[key] = g["until_ms"]
    for h in held:
        for key in merged:
            if key[:3] == (h["worker_id"], h["fencing_epoch"], h["holder_name"]):
                merged[key] = min(merged[key], h["until_ms"])
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
                top = ended[i].get("max", ended[i]["id"])
                if highest is None or top > highest:
                    highest, highest_ack = top, ended[i]
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

    # duplicates: every id made once, over acks, the rows read back and the
    # load's runs (a row of an ack is that ack; a row without one committed
    # unacknowledged): intervals of sequences per key, their overlaps counted
    occurrences = collections.defaultdict(collections.Counter)  # node -> id -> times made there
    acked_on = collections.defaultdict(collections.Counter)
    for ack in acks:
        acked_on[ack["node"]][ack["id"]] += 1
    for node in set(acked_on) | {n for n, r in rows.items() if r is not None}:
        read = collections.Counter(rows.get(node) or ())
        for id_ in set(acked_on[node]) | set(read):
            occurrences[node][id_] = max(acked_on[node][id_], read[id_])
    sbits, mask = layout["sequence_bits"], (1 << layout["sequence_bits"]) - 1
    intervals = [(id_ >> sbits, id_ & mask, id_ & mask, n, -1, node)
                 for node, made in occurrences.items() for id_, n in made.items()]
    batches = history.get("load", ())
    within = 0
    for b, batch in enumerate(batches):
        runs = batch[5]
        within += batch[6]
        intervals += [(runs[i], runs[i + 1], runs[i + 2], 1, b, batch[1]) for i in range(0, len(runs), 3)]
    intervals.sort()
    duplicates, dup_examples = within, []
    by_pair = collections.Counter()  # (node, node) -> ids both made (the first two found)
    i = 0
    while i < len(intervals):
        j = i + 1
        while j < len(intervals) and intervals[j][0] == intervals[i][0]:
            j += 1
        group = intervals[i:j]
        if j - i > 1 or group[0][3] > 1:
            covered, reach, reacher = 0, -1, None
            for key, lo, hi, n, source, node in group:
                duplicates += (hi - lo + 1) * n
                if n > 1:
                    by_pair[(node, node)] += (hi - lo + 1) * (n - 1)
                if lo <= reach:
                    by_pair[tuple(sorted((reacher, node)))] += min(hi, reach) - lo + 1
                if hi > reach:
                    covered += hi - max(lo, reach + 1) + 1
                    reach, reacher = hi, node
            duplicates -= covered
            # an example: the first sequence of this key made twice
            for (_, lo1, hi1, n1, s1, _), (_, lo2, hi2, n2, s2, _) in zip(group, group[1:]):
                if lo2 <= hi1 or n1 > 1:
                    dup_examples.append(((group[0][0] << sbits) | lo2 if lo2 <= hi1 else (group[0][0] << sbits) | lo1,
                                         {s1, s2} if lo2 <= hi1 else {s1}))
                    break
        i = j
    verdict["duplicates"] = duplicates
    verdict["duplicates_by"] = dict(by_pair)
    verdict["load_ids"] = sum(sum(r[k + 2] - r[k + 1] + 1 for k in range(0, len(r), 3)) for r in (b[5] for b in batches))
    verdict["ids"] = len(acks) + verdict["load_ids"]
    if within:
        verdict["examples"].append(f"duplicate: {within} ids held twice inside one batch of snowflake_nextvals()")
    for id_, sources in dup_examples[:5]:
        where = sorted(f"acknowledged in session {a['session']}" for a in acks if a["id"] == id_)
        where += sorted(f"{n} (row read back)" for n, r in rows.items() if r is not None and id_ in r)
        where += sorted(f"a batch of session {batches[s][2]} on {batches[s][1]}" for s in sources if s >= 0)
        verdict["examples"].append(f"duplicate: id {id_} made more than once: {', '.join(where)}")

    # lost: an acknowledged id missing from its node's table
    read_sets = {n: set(r) for n, r in rows.items() if r is not None}
    lost = [a for a in acks if a["node"] in read_sets and a["id"] not in read_sets[a["node"]]]
    verdict["lost"] = len(lost)
    for a in lost[:5]:
        verdict["examples"].append(f"lost: id {a['id']} acknowledged in session {a['session']}, not in {a['node']}'s table")
    verdict["unread"] = sorted(n for n in acked_on if rows.get(n) is None)

    # outside windows: every id of a claimed worker id inside one of its grants
    by_worker = merged_grants(history.get("grants", ()), history.get("held", ()))
    outside, outside_ids, wbits = [], 0, layout["worker_bits"]
    seen = set()
    for key, lo, hi, _, _, _ in intervals:
        if (key, lo) in seen:
            continue
        seen.add((key, lo))
        ms, worker = (key >> wbits) + layout["epoch_ms"], key & ((1 << wbits) - 1)
        if worker not in static and not inside(by_worker.get(worker, ()), ms):
            outside_ids += hi - lo + 1
            outside.append(((key << sbits) | lo, ms, worker))
    verdict["outside"] = outside_ids
    for id_, ms, worker in outside[:5]:
        verdict["examples"].append(f"outside windows: id {id_} (worker id {worker}, time {ms} ms) in no window granted to worker id {worker}")

    found = decreases(acks + [{"node": b[1], "session": b[2], "start": b[3], "end": b[4], "id": (b[5][0] << sbits) | b[5][1],
                               "max": (b[5][-3] << sbits) | b[5][-1]} for b in batches if len(b[5])])
    verdict["decreases"] = len(found)
    for ack, before in found[:5]:
        verdict["examples"].append(
            f"decrease: id {ack['id']} in session {ack['session']} is not above id {before['id']} "
            f"acknowledged in session {before['session']} before it started (node {ack['node']})")

    found = overlaps(by_worker)
    verdict["overlaps"] = len(found)
    for worker, first, second in found[:5]:
        verdict["examples"].append(f"overlapping grants of worker id {worker}: {first} and {second} (fencing epoch, holder, from ms, until ms)")

    # liveness: after the last fault was healed, every slot has an id
    # acknowledged (an insert or a batch) within its bound
    live = history.get("liveness")
    verdict["not_recovered"], verdict["longest_recovery"] = 0, 0.0
    if live:
        first = {}
        for slot, end in [(a.get("slot"), a["end"]) for a in acks] + [(b[0], b[4]) for b in batches]:
            if end > live["healed"] and end <= live["end"] and (slot not in first or end < first[slot]):
                first[slot] = end
        for slot, bound in sorted(live["bounds"].items()):
            if slot not in first:
                verdict["not_recovered"] += 1
                verdict["longest_recovery"] = max(verdict["longest_recovery"], (live["end"] - live["healed"]) / 1e9)
                verdict["examples"].append(f"not recovered: node {slot} issued no id in the {(live['end'] - live['healed']) / 1e9:.1f} s "
                                           f"after the last fault was healed (bound {bound} s)")
                continue
            took = (first[slot] - live["healed"]) / 1e9
            verdict["longest_recovery"] = max(verdict["longest_recovery"], took)
            if took > bound:
                verdict["not_recovered"] += 1
                verdict["examples"].append(f"not recovered: node {slot} issued its first id {took:.1f} s after the last fault "
                                           f"was healed, past its bound of {bound} s")

    # liveness of each restart under a new host name: the node's first id
    # after that start, within its bound
    restarts = history.get("restarts", ())
    verdict["restarts"], verdict["longest_restart"] = len(restarts), 0.0
    ends = [(a.get("slot"), a["end"]) for a in acks] + [(b[0], b[4]) for b in batches]
    for restart in restarts:
        first = min((end for slot, end in ends if slot == restart["slot"] and end > restart["started"]), default=None)
        took = None if first is None else (first - restart["started"]) / 1e9
        if took is not None:
            verdict["longest_restart"] = max(verdict["longest_restart"], took)
        if took is None or took > restart["bound"]:
            verdict["not_recovered"] += 1
            verdict["examples"].append(
                f"not recovered: node {restart['slot']} ({restart['server']}), started again under host name {restart['host']}, "
                + ("issued no id after it" if took is None else f"issued its first id {took:.1f} s after that start")
                + f" (bound {restart['bound']} s)")
    return verdict


def violations(verdict):
    return (verdict["duplicates"] + verdict["lost"] + verdict["outside"] + verdict["decreases"]
            + verdict["overlaps"] + len(verdict["unread"]) + verdict["not_recovered"])


def summary(seed, verdict, kinds):
    return (f"chaos: seed {seed}, {verdict['ids']} ids, {kinds} kinds of fault, {verdict['duplicates']} duplicates, "
            f"{verdict['lost']} lost, {verdict['outside']} outside windows, {verdict['decreases']} decreases, "
            f"{verdict['not_recovered']} not recovered, longest recovery {verdict['longest_recovery']:.1f} s"
            + (f", {verdict['restarts']} restarts under new host names, the longest to an id {verdict['longest_restart']:.1f} s"
               if verdict.get("restarts") else ""))


# --- the self-test: planted histories, each violation caught

def _ack(node, session, id_, start, end):
    return {"node": node, "slot": node, "session": session, "id": id_, "start": start, "end": end}


def _make_id(ms, worker, sequence):
    return ((ms - DEFAULT_EPOCH_MS) << 22) | (worker << 12) | sequence


def _run(ms, worker, lo, hi):
    return [((ms - DEFAULT_EPOCH_MS) << 10) | worker, lo, hi]


def planted():
    """(name, history, the counter that must be non-zero) for each planted
    violation, after a clean history that must pass. Times: an insert every
    0.1 s on each node for 10 s, the last fault healed at 5 s, then a batch
    of 4,196 ids on b and c at 10 s; the final phase ends at 11 s; a
    restarted under a new host name at 2 s (its next insert 0.1 s later)."""
    t0 = DEFAULT_EPOCH_MS + 10 ** 9
    s = 10 ** 9
    healed = 5 * s
    grants = [
        {"worker_id": 1, "fencing_epoch": 1, "holder_name": "b", "from_ms": t0, "until_ms": t0 + 6000},
        {"worker_id": 2, "fencing_epoch": 1, "holder_name": "c", "from_ms": t0, "until_ms": t0 + 6000},
    ]
    acks = []
    for k in range(100):
        for node, worker in (("b", 1), ("c", 2), ("a", 1000 % 1024)):
            acks.append(_ack(node, f"{node}/1.1", _make_id(t0 + 10 * k, worker, 0), k * s // 10, k * s // 10 + 10 ** 6))
    unacked = _make_id(t0 + 5, 1, 7)  # committed, its ack lost with the connection
    load = [["b", "b", "b/load.1", 10 * s, 10 * s + 10 ** 7, _run(t0 + 2000, 1, 0, 4095) + _run(t0 + 2001, 1, 0, 99), 0],
            ["c", "c", "c/load.1", 10 * s, 10 * s + 10 ** 7, _run(t0 + 2000, 2, 0, 4095) + _run(t0 + 2001, 2, 0, 99), 0]]

    def history(**changes):
        h = {"acks": [dict(a) for a in acks], "grants": [dict(g) for g in grants], "static": [1000],
             "rows": {"a": [a["id"] for a in acks if a["node"] == "a"],
                      "b": [a["id"] for a in acks if a["node"] == "b"] + [unacked],
                      "c": [a["id"] for a in acks if a["node"] == "c"]},
             "load": [list(b) for b in load],
             "liveness": {"healed": healed, "end": 11 * s, "bounds": {"a": 3, "b": 3, "c": 3}},
             "restarts": [{"slot": "a", "server": "a", "host": "ctr-0-1", "stopped": 2 * s - 10 ** 7, "started": 2 * s, "bound": 3}]}
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
    # two full-load batches on two nodes overlapping in 96 ids (a copy under b's worker id)
    dup = history()
    dup["load"].append(["c", "c.2", "c.2/load.1", 10 * s, 10 * s + 10 ** 7, _run(t0 + 2000, 1, 4000, 4095), 0])
    cases.append(("96 duplicates (two nodes' batches of snowflake_nextvals)", dup, "duplicates"))
    # a decrease across sessions of one node: started after an ack of a higher id ended
    dec = history()
    dec["acks"].append(_ack("b", "b/2.1", _make_id(t0 + 15, 1, 3), 5 * s // 10, 5 * s // 10 + 1))
    dec["rows"]["b"].append(_make_id(t0 + 15, 1, 3))
    cases.append(("a decrease (another session of the node)", dec, "decreases"))
    # a decrease after a batch: an insert started after b's batch ended, below its highest id
    dec = history()
    dec["acks"].append(_ack("b", "b/2.1", _make_id(t0 + 1999, 1, 5), 10 * s + 2 * 10 ** 7, 10 * s + 3 * 10 ** 7))
    dec["rows"]["b"].append(_make_id(t0 + 1999, 1, 5))
    cases.append(("a decrease (an insert below a batch acknowledged before it)", dec, "decreases"))
    # an id outside every window of its worker id
    out = history()
    out["acks"].append(_ack("c", "c/1.1", _make_id(t0 + 7000, 2, 0), 10 * s + 2 * 10 ** 7, 10 * s + 3 * 10 ** 7))
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
    # the same grant renewed by a registry clock ahead: held by c to its own
    # end, before d's window: no overlap; an id of c after that end is outside
    ahead = history(held=[{"worker_id": 2, "fencing_epoch": 1, "holder_name": "c", "until_ms": t0 + 2500}])
    ahead["grants"].append({"worker_id": 2, "fencing_epoch": 2, "holder_name": "d", "from_ms": t0 + 3000, "until_ms": t0 + 9000})
    ahead["grants"][1]["until_ms"] = t0 + 12000
    ahead["acks"].append(_ack("c", "c/1.1", _make_id(t0 + 2600, 2, 0), 10 * s + 2 * 10 ** 7, 10 * s + 3 * 10 ** 7))
    ahead["rows"]["c"].append(_make_id(t0 + 2600, 2, 0))
    cases.append(("a grant dated on a registry clock ahead, held to its holder's end: an id of c past it", ahead, "outside"))
    # liveness: c issues nothing after the last fault was healed (its acks and batch gone, its rows left)
    stuck = history()
    stuck["acks"] = [a for a in stuck["acks"] if not (a["slot"] == "c" and a["end"] > healed)]
    stuck["load"] = [b for b in stuck["load"] if b[0] != "c"]
    cases.append(("a node that never recovers", stuck, "not_recovered"))
    # liveness: b's first id after the heal is its batch at 10 s, 5 s after: past its bound of 3 s
    late = history()
    late["acks"] = [a for a in late["acks"] if not (a["slot"] == "b" and a["end"] > healed)]
    cases.append(("a recovery past its bound", late, "not_recovered"))
    # a restart under a new host name refused: a issues nothing from 2 s (its
    # start under ctr-0-1) to 6 s, past the restart's bound of 3 s (and
    # within the final phase's: its first id after the heal at 5 s is at 6 s)
    refused = history()
    refused["acks"] = [a for a in refused["acks"] if not (a["slot"] == "a" and 2 * s < a["end"] < 6 * s)]
    cases.append(("a node started under a new host name that issues no id within its bound", refused, "not_recovered"))
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
