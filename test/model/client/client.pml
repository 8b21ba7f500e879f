/*
 * The registry's client (src/pg/registry_client.cpp) over a multi-host
 * snowflake.registry, for SPIN. RULES.md names the assumption (A1), the rules
 * (C1..C3) and the properties (P0..P2); -DOLD_RULES gives 1.1's client
 * (libpq's own multi-host attempt), -DNO_C1, -DNO_C2, -DNO_C3 remove one rule.
 *
 * Time is counted in ticks within one call, whose time-out is T. Each host is
 * up (read-write, answers within NEED ticks), down (refuses at once: stopped,
 * or a standby under target_session_attrs=read-write), frozen (SIGSTOP: it
 * accepts the connection, never answers) or hanging (it answers the
 * connection, never a commit: an old primary resumed, waiting for the
 * synchronous standby that was promoted). Processes: Client (CALLS calls, one
 * host attempt a step), Nemesis (at most FB faults, at any moment: a host's
 * state changed, or the kept connection lost).
 */

#ifndef NH
#define NH 3            /* hosts in the conninfo */
#endif
#ifndef T
#define T 6             /* a call's time-out, in ticks */
#endif
#ifndef NEED
#define NEED 1          /* A1: an up host answers a call within NEED <= T / NH ticks */
#endif
#ifndef CALLS
#define CALLS 4
#endif
#ifndef FB
#define FB 2            /* fault budget */
#endif

#define UP 0
#define DOWN 1
#define FROZEN 2
#define HANG 3
#define NONE 255

byte state[NH];
byte conn = NONE;        /* the host of the kept connection */
byte cur = 0;            /* C2: the host tried first by the next connection */
byte now;                /* ticks spent in the current call */
bool changed;            /* a host changed state during the current call */
bool changed_since;      /* a host changed state since the last answer */
byte last = NONE;        /* the host that answered last */
byte faults = 0;
bool ready;              /* the hosts' first states set (init) */
bool unreplicated;       /* a call answered by a hanging host: its commit not replicated */

/* the outcome of an attempt on host h within `share` ticks: true when it answered */
inline attempt(h, share, ok) {
    if
    :: state[h] == UP && NEED <= share -> now = now + NEED; ok = true; conn = h
    :: state[h] == UP && NEED > share -> now = now + share; ok = false
    :: state[h] == DOWN -> ok = false
    :: state[h] == FROZEN -> now = now + share; ok = false
#ifdef NO_C3
    /* canceled at the deadline: the wait for the standby ends, the commit,
       local only, is answered (with a WARNING) */
    :: state[h] == HANG -> now = now + share; ok = true; conn = h; unreplicated = true
#else
    :: state[h] == HANG -> now = now + share; ok = false   /* C3: dropped at the deadline, never canceled */
#endif
    fi
}

active proctype Client() {
    byte calls = 0, tried, start, h, i, share, prev;
    bool ok, up_at_start, steady;
    ready;
    do
    :: calls < CALLS ->
        d_step {
            now = 0; changed = false; ok = false; tried = 0; prev = last;
            up_at_start = false;
            i = 0;
            do
            :: i < NH -> up_at_start = up_at_start || state[i] == UP; i++
            :: else -> break
            od;
            /* P2's premise: the host that answered last is up, nothing changed since */
            steady = last != NONE && state[last] == UP && !changed_since;
#ifdef NO_C2
            start = (conn != NONE -> conn : 0);   /* every new connection from the first host */
#else
            start = cur;                          /* C2: from the last that answered, or the one after a failure */
#endif
            printf("MSC: call %d: hosts", calls);
            i = 0;
            do
            :: i < NH -> printf(" %d", state[i]); i++
            :: else -> break
            od;
            printf(" (0 up, 1 down, 2 frozen, 3 hanging), kept connection %d, first host %d\n", conn, start)
        }
#ifdef OLD_RULES
        /* 1.1: the kept connection, else libpq's attempt over every host from the
           first, one deadline for all, no time-out for a host that never answers */
        d_step {
            if
            :: conn != NONE ->
                h = conn; attempt(h, T, ok);
                if :: !ok -> conn = NONE :: else -> skip fi
            :: else ->
                h = 0;
                do
                :: h < NH && state[h] == DOWN -> h++
                :: h < NH && state[h] != DOWN -> attempt(h, T, ok); break
                :: h >= NH -> break
                od;
                if :: !ok -> conn = NONE :: else -> skip fi
            fi;
            printf("MSC: call %d: host %d answers %d (1 yes, 0 no), tick %d (1.1: one deadline, libpq's hosts from the first)\n",
                   calls, h, ok, now);
            tried = 1
        }
#else
        do
        :: !ok && tried < NH && now < T ->
            d_step {
                h = (start + tried) % NH;
#ifdef NO_C1
                share = T - now;                  /* one deadline for every host */
#else
                share = (T - now) / (NH - tried); /* C1: an equal share of what is left */
#endif
                attempt(h, share, ok);
                if
                :: ok -> cur = h
                :: else -> conn = NONE; cur = (h + 1) % NH   /* C2: the next host first next time */
                fi;
                printf("MSC: call %d: host %d answers %d (1 yes, 0 no), tick %d\n", calls, h, ok, now);
                tried++
            }
        :: else -> break
        od;
        skip;   /* (a break may not jump into the d_step below) */
#endif
        d_step {
            if
            :: ok -> last = h; changed_since = false
            :: else -> skip
            fi;
            printf("MSC: call %d: answered %d (1 yes, 0 no) after %d ticks\n", calls, ok, now);
            /* P0: no call is answered by a commit its registry did not replicate */
            assert(!unreplicated);
            /* P1: a call that begins with a host up, none changing during it, is answered within its time-out */
            assert(!(up_at_start && !changed) || (ok && now <= T));
            /* P2: steady, it is answered by the host that answered last, at once */
            assert(!(steady && !changed) || (ok && last == prev && now == NEED));
            calls++
        }
    :: else -> break
    od
}

active proctype Nemesis() {
    byte h, s;
    ready;
    do
    :: faults < FB ->
        atomic {
            select(h : 0 .. NH - 1);
            select(s : UP .. HANG);
            if
            :: state[h] != s ->
                state[h] = s; changed = true; changed_since = true; faults++;
                printf("MSC: host %d becomes %d (0 up, 1 down, 2 frozen, 3 hanging)\n", h, s)
            :: else -> skip
            fi;
            h = 0; s = 0
        }
    :: faults < FB && conn != NONE ->
        d_step { conn = NONE; faults++; printf("MSC: the kept connection is lost\n") }
    :: faults >= FB -> break
    od
}

/* the hosts' states when the first call begins: any (a scenario fixes them) */
init {
    byte h, s;
    atomic {
#if defined(FROZEN_FIRST)
        state[0] = FROZEN;
        h = 1; do :: h < NH -> state[h] = (h == 1 -> UP : DOWN); h++ :: else -> break od;
#elif defined(HANG_FIRST)
        state[0] = HANG;
        h = 1; do :: h < NH -> state[h] = (h == 1 -> UP : DOWN); h++ :: else -> break od;
#else
        h = 0;
        do
        :: h < NH -> select(s : UP .. HANG); state[h] = s; h++
        :: else -> break
        od;
        skip;   /* (a break may not jump into the d_step below) */
#endif
        ready = true
    }
}
