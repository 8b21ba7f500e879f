#!/usr/bin/env python3
"""The registry at fleet scale, across a new life: not a test, a measurement
(docs/registry.md, "The registry at fleet scale").

A throwaway PostgreSQL server holds a registry with the defaults (90 s maximum
window, 1 s skew bound: a 91 s grace); HOLDERS simulated nodes claim a worker
id each, then the server restarts (a new life, as after a restore or a
failover). The holders then renew as nodes do, every RENEW seconds at evenly
spread phases, presenting their windows (snowflake_registry_present); CLAIMERS
new nodes ask the registry's life and claim as a node does, every RETRY
seconds while the grace lasts. Printed: the time from the restart until every
holder is reinstated and every claimer granted, the calls' latency (p50, p99,
max), calls a second and WAL bytes a second.

    sudo -u postgres test/bench/registry_fleet.py [PG_BIN]   (psycopg 3: python3-psycopg)
"""
import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import psycopg

PG_BIN = sys.argv[1] if len(sys.argv) > 1 else "/usr/lib/postgresql/15/bin"
HOLDERS = int(os.environ.get("HOLDERS", 1000))
CLAIMERS = int(os.environ.get("CLAIMERS", 100))
RENEW = float(os.environ.get("RENEW", 30))
RETRY = float(os.environ.get("RETRY", 5))
CONNECTIONS = int(os.environ.get("CONNECTIONS", 40))
LAYOUT, EPOCH, MAX_WORKER = "time=41 worker=11 sequence=11", 1704067200000, 2047


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg(*args):
    subprocess.run([os.path.join(PG_BIN, args[0]), *args[1:]], check=True, stdout=subprocess.DEVNULL)


async def main():
    work = tempfile.mkdtemp(prefix="snowflake-fleet.")
    data, port = os.path.join(work, "data"), free_port()
    pg("initdb", "-D", data, "-A", "trust", "-U", "postgres")
    with open(os.path.join(data, "postgresql.conf"), "a") as conf:
        conf.write(f"port = {port}\nlisten_addresses = ''\nunix_socket_directories = '{work}'\n"
                   "max_connections = 200\nlog_statement = none\n")
    dsn = f"host={work} port={port} user=postgres dbname=postgres"
    start = lambda: pg("pg_ctl", "-D", data, "-l", os.path.join(work, "log"), "-w", "start")
    start()
    try:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE EXTENSION snowflake")
            c.execute("SELECT snowflake_registry_create('[0,2048)', '10 min', '90 s')")
            c.execute("SELECT snowflake_registry_end_grace()")
            holders = c.execute(
                "SELECT c.worker_id, c.fencing_epoch, 'holder-' || n, 'node ' || n, c.from_ms, c.until_ms, "
                "l.registry_id, l.life FROM generate_series(1, %s) n, "
                "LATERAL snowflake_registry_claim('holder-' || n, 'node ' || n, NULL, %s, 90000, %s, %s) c, "
                "LATERAL snowflake_registry_life() l", (HOLDERS, MAX_WORKER, EPOCH, LAYOUT)).fetchall()
        pg("pg_ctl", "-D", data, "-m", "fast", "-w", "stop")
        start()  # a new life
        restarted = time.monotonic()
        connections = [await psycopg.AsyncConnection.connect(dsn, autocommit=True) for _ in range(CONNECTIONS)]
        pool = asyncio.Queue()
        for conn in connections:
            pool.put_nowait(conn)
        latencies = []

        async def call(sql, args):
            conn = await pool.get()
            try:
                began = time.monotonic()
                try:
                    row = await (await conn.execute(sql, args)).fetchone()
                except psycopg.Error as e:
                    row = e
                latencies.append(time.monotonic() - began)
                return row
            finally:
                pool.put_nowait(conn)

        lsn = (await (await connections[0].execute("SELECT pg_current_wal_lsn()")).fetchone())[0]
        reinstated_at, granted_at = [], []

        async def holder(i, h):
            await asyncio.sleep(RENEW * i / HOLDERS)
            held = h
            while not done.is_set():
                row = await call("SELECT outcome, registry_id, life FROM snowflake_registry_present("
                                 "%s, %s, %s, %s, %s, %s, 90000, %s, %s)", held)
                if not isinstance(row, Exception) and row[0] in ("reinstated", "renewed"):
                    if row[0] == "reinstated":
                        reinstated_at.append(time.monotonic() - restarted)
                    held = (*held[:6], row[1], row[2])
                await asyncio.sleep(RENEW)

        async def claimer(i):
            while True:
                life = await call("SELECT now_ms < grace_until_ms FROM snowflake_registry_life()", ())
                if not isinstance(life, Exception) and not life[0]:
                    row = await call("SELECT worker_id FROM snowflake_registry_claim(%s, %s, NULL, %s, 90000, %s, %s)",
                                     (f"claimer-{i}", f"new node {i}", MAX_WORKER, EPOCH, LAYOUT))
                    if not isinstance(row, Exception):
                        granted_at.append(time.monotonic() - restarted)
                        return
                await asyncio.sleep(RETRY)

        done = asyncio.Event()
        tasks = [asyncio.create_task(holder(i, h)) for i, h in enumerate(holders)]
        await asyncio.gather(*(claimer(i) for i in range(CLAIMERS)))
        while len(reinstated_at) < HOLDERS:
            await asyncio.sleep(0.1)
        elapsed = time.monotonic() - restarted
        done.set()
        for t in tasks:
            t.cancel()
        wal = (await (await connections[0].execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)",
                                                   (lsn,))).fetchone())[0]
        latencies.sort()
        pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
        print(f"{HOLDERS} holders renewing every {RENEW:g} s, {CLAIMERS} new nodes retrying every {RETRY:g} s, "
              f"after the registry's restart (a new life, 91 s grace):")
        print(f"  every holder reinstated {max(reinstated_at):.1f} s after the restart")
        print(f"  every new node granted {max(granted_at):.1f} s after it (first {min(granted_at):.1f} s)")
        print(f"  {len(latencies)} calls in {elapsed:.0f} s ({len(latencies) / elapsed:.1f} a second): "
              f"latency p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {latencies[-1] * 1000:.1f} ms")
        print(f"  WAL {int(wal) / elapsed / 1024:.1f} kB a second ({int(wal) / len(latencies):.0f} bytes a call)")
        for conn in connections:
            await conn.close()
    finally:
        subprocess.run([os.path.join(PG_BIN, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


asyncio.run(main())
