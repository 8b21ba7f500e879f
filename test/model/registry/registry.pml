/*
 * The registry of worker ids (snowflake_registry_*) and its holders, for SPIN.
 * test/model/RULES.md names the assumptions, invariants and rules; this model
 * has an action or a guard for each, under 1.1's rules (-DRULES_11: O1..O10)
 * or the current ones (R1..R7, R9, R2', R10 and end_grace's refusal, each
 * removed by -DNO_...).
 *
 * Time is discrete: `tick` is true time, each clock reads tick + its offset
 * (offset OB means no error). Ids are time units: a holder issues at most one
 * id time per tick, at its clock, inside its generator's window; iss[] records
 * which incarnation issued each (worker id, time). Every action is one d_step.
 *
 * Processes: Holder(h) for each server h (its incarnation changes at each
 * restart), Clock (advances tick once every running holder made its call of
 * the tick), Nemesis (the faults, at most FB of them, restricted to the
 * actions a scenario enables with -DF_...). The registry is the data `db`
 * and the inlines below it, run atomically inside the caller's call: a call
 * is one step (the registry answers, the answer waits in the holder's slot)
 * and its answer another (the holder applies it with its clock at the send).
 */

/* ---- bounds ---- */
#ifndef NH
#define NH 2            /* servers */
#endif
#ifndef NW
#define NW 1            /* worker ids */
#endif
#ifndef M
#define M 3             /* the registry's maximum window as created first */
#endif
#ifndef M2
#define M2 M            /* the maximum window of a registry created again (F_CREATE) */
#endif
#ifndef WASK
#define WASK M          /* the window nodes ask, at every claim and presentation */
#endif
#ifndef S
#define S 1             /* its skew bound */
#endif
#ifndef E
#define E 0             /* A1: clocks within E of true time (2E <= S); -DF_SKEW moves them within it */
#endif
#ifndef Q
#define Q 1             /* quarantine */
#endif
#ifndef TMAX
#define TMAX 16         /* ticks explored */
#endif
#ifndef FB
#define FB 3            /* fault budget */
#endif
#ifndef STEP
#define STEP 3          /* a holder's clock step beyond A1, in ticks */
#endif
#ifndef RSTEP
#define RSTEP 3         /* the registry's clock step ahead */
#endif
#ifndef RBACK
#define RBACK 2         /* the registry's clock step behind */
#endif
#ifndef FLOOR_AHEAD
#define FLOOR_AHEAD M   /* raise_floor sets the floor this far ahead of the registry's clock */
#endif
#ifndef EMAX
#define EMAX 4          /* fencing epochs per worker id (more: the claim is not made) */
#endif
#ifndef NINC
#define NINC 3          /* incarnations per server */
#endif
#ifndef LIVE_B
#define LIVE_B (2*M + S + 2)  /* L1's bound after the faults stop: 2M + S + 2 renewal periods */
#endif
#define T0 6            /* true time starts here: a clock behind stays >= 0 */
#define OB 8            /* the offset of a correct clock */
#define TT 8            /* iss[] keeps the id times a clock may still read: [tick - IWIN, tick + STEP], mod TT */
#define NONE 255
#if defined(F_HCLOCK)
#define IWIN STEP       /* how far behind true time a holder's clock may read */
#else
#define IWIN E
#endif
/* -DL1_TRUE: L1 measured from the faults' end in true time alone (the
 * registry's record of a gone holder's window, dated by a clock that may have
 * been ahead, excuses nothing) */
#ifdef L1_TRUE
#define L1TRUE 1
#else
#define L1TRUE 0
#endif
#define P 1             /* renewal period: a call of every running holder each tick */

/* ---- the rule set ---- */
#ifdef RULES_11
#define R1 0
#define R2 0
#define R3 0
#define R4 0
#define R5 0
#define R6 0
#define R7 0
#define R9 0
#define R2W 0
#define R10 0
#define EG 0
#else
#ifdef NO_R1
#define R1 0
#else
#define R1 1
#endif
#ifdef NO_R2
#define R2 0
#else
#define R2 1
#endif
#ifdef NO_R3
#define R3 0
#else
#define R3 1
#endif
#ifdef NO_R4
#define R4 0
#else
#define R4 1
#endif
#ifdef NO_R5
#define R5 0
#else
#define R5 1
#endif
#ifdef NO_R6
#define R6 0
#else
#define R6 1
#endif
#ifdef NO_R7
#define R7 0
#else
#define R7 1
#endif
#ifdef NO_R9
#define R9 0
#else
#define R9 1
#endif
#ifdef NO_R2W
#define R2W 0
#else
#define R2W 1
#endif
#ifdef NO_R10
#define R10 0
#else
#define R10 1
#endif
#ifdef NO_END_GRACE
#define EG 0
#else
#define EG 1
#endif
#endif
/* 1.2's rules (each removed by its -DNO_...; 1.1 has none): R9 ROWS: a
 * worker id's rows written otherwise than by the registry's functions
 * (Wk.unw) are seen by the next call that reads them, which marks the
 * sequence rows_unwritten (Db.un): the next call begins a new life. R2W
 * (R2'): a new life's grace lasts the longest window a node asked (Db.lw),
 * if longer than the maximum window. R10: a new life whose clock is behind
 * the latest time the lost life wrote (Db.ev) raises the floor past it. EG:
 * snowflake_registry_end_grace() refuses a life not begun by creation, or
 * one in which a window of another registry was presented (the operator
 * gives no reason: A2 may not hold). */
/* parts of R1, R2 and R6 added after the review (each removed by its -DNO_...):
 * R1FC: a life begun by a restore into the running registry counts its grace
 * from the call that saw it, whatever first-call mark (the sequence
 * life_first_call) the restore left; LG: snowflake_registry_add_lives()
 * begins a life with a grace; HWL: a renewal sets the high water to what the
 * holder holds (its window presented and this answer) */
#if defined(RULES_11) || defined(NO_R1_FIRST_CALL)
#define R1FC 0
#else
#define R1FC 1
#endif
#if defined(RULES_11) || defined(NO_LIVES_GRACE)
#define LG 0
#else
#define LG 1
#endif
#if defined(RULES_11) || defined(NO_HW_LOWERED)
#define HWL 0
#else
#define HWL 1
#endif

/* the holder names: with -DSAME_NAME servers 0 and 1 have one host:port and data directory */
#ifdef SAME_NAME
#define NAMEOF(h) ((h) == 1 -> 0 : (h))
#else
#define NAMEOF(h) (h)
#endif
#define HID(h) ((h) * 16 + hs[h].inc + 1)   /* the incarnation: the holder */
/* the clock the grace is measured on: the registry's elapsed time since the
 * life began (R2: a monotonic clock, which no clock step moves), or its wall
 * clock alone (1.1, and -DNO_R2_ELAPSED: R2 without its monotonic clock) */
#if R2 && !defined(NO_R2_ELAPSED)
#define GNOW tick
#else
#define GNOW rnow
#endif
#define HCLOCK(h) (tick + hs[h].off - OB)
#define RCLOCK (tick + roff - OB)
#define MIN(a, b) ((a) < (b) -> (a) : (b))
#define MAX(a, b) ((a) > (b) -> (a) : (b))
#define MW db.mw                /* the registry's maximum window */
#define WIN MIN(WASK, MW)       /* the window it grants: the one asked, at most its maximum */
/* the grace in force: R2' extends one not ended by hand by the longest window asked beyond MW */
#define GRACE (db.grace + ((R2W && !db.ended && db.lw > MW) -> db.lw - MW : 0))
/* the holder a grant is compared by: its name (1.1), its incarnation (R5) */
#if R5
#define SAMEHOLDER(gid, gname, pid, pname) ((gid) == (pid))
#else
#define SAMEHOLDER(gid, gname, pid, pname) ((gname) == (pname))
#endif

/* ---- the registry's durable state (its tables) ---- */
typedef Wk {            /* snowflake_registry.workers */
    byte hid;           /* holder incarnation, 0: none (released) */
    byte name;          /* holder_name */
    byte ep;            /* fencing_epoch */
    byte from;          /* window_from_ms */
    byte exp;           /* expires_ms */
    byte hw;            /* high_water_ms */
    bit clean;          /* its last holder released it cleanly */
    bit unw             /* R9: a row of it written otherwise than by the functions, or a grant gone (xmin <> written_xid, grants_count) */
}
typedef Gr {            /* snowflake_registry.grants, at [w * EMAX + epoch - 1] */
    byte hid;           /* 0: no such grant */
    byte name;
    byte from;
    byte upto
}
typedef Db {
    byte life;          /* settings.life */
    byte grace;         /* settings.grace_until_ms */
    byte started;       /* the server start its identity records */
    bit rolled;         /* its tables were restored into the running server (their oids differ) */
    byte began;         /* settings.life_began_ms (GNOW) */
    byte fm;            /* the sequence life_first_call: the first call of a life (GNOW); a restore may leave it out */
    byte floor;
    byte ev;            /* R10: the latest clock reading written into the rows (life began, renewed, released, granted, reinstated) */
    byte mw;            /* settings.max_window_ms */
    byte lw;            /* the sequence longest_window: the longest window a node asked (R2') */
    bit un;             /* the sequence rows_unwritten: a call saw a row written otherwise (R9) */
    bit created;        /* settings.life_change = 'created': the life began by creation */
    bit reinst;         /* a window of another registry reinstated in this life */
    bit ended;          /* its grace ended by hand (grace_monotonic_ms NULL: no R2' extension) */
    Wk wk[NW];
    Gr g[NW * EMAX]
}
Db db;
Db saved;               /* a base backup (or an earlier state a failover or PITR returns to) */
bit have_saved;
byte rstart = 1;        /* the registry server's start (each start: a new one) */
byte rctr = 1;          /* starts handed out */
byte start_at[8];       /* the time (GNOW) of each start */
#ifdef F_SNAPSHOT
byte srstart;           /* the server's start in the memory snapshot */
#endif
byte lifectr = 1;       /* life ids handed out (random in the code) */
byte roff = OB;         /* the registry's clock offset */

/* ---- the holders (one per server) ---- */
typedef Hd {
    byte inc;           /* incarnation (restarts) */
    byte rw;            /* the worker id held at the registry, NONE: claims */
    byte ep;
    byte life;          /* the life that granted or reinstated it */
    byte gw;            /* the generator's grant (apply_grant): worker id, [gfrom, guntil) */
    byte gfrom;
    byte guntil;
    byte last;          /* the last id time issued (the lease: kept across restarts) */
    byte off;           /* clock offset */
    bit cut;            /* its calls fail */
    bit lose;           /* its next call reaches the registry, its answer is lost, then it is cut off */
    bit paused;         /* takes no step */
    bit slow;           /* its next answer arrives after a pause (it pauses with the call in flight) */
    bit called;         /* made its call of this tick */
    bit down;           /* stopped for good (a clean shutdown without a restart) */
    byte ak;            /* the answer: 0 none (refused), 1 granted, 2 renewed/reinstated, 3 lost, 4 conflict */
    byte aw;
    byte aep;
    byte afrom;
    byte auntil;
    byte alife;
    byte asend;         /* its clock at the send */
    byte amw;           /* the registry's maximum window the answer names */
    bit anamed          /* R7: the answer named the registry's clock out of bounds */
}
Hd hs[NH];

byte tick = T0;
byte iss[NW * TT];      /* the incarnation (HID) that issued each (worker id, time mod TT) */
byte faults;            /* spent of FB */
bit quiet;              /* the faults stopped (clocks within A1, every holder reachable and running) */
byte quiet_at;

hidden byte rnow, t1, t2, i, j, k, w, found, pe, lo, hi;
hidden byte ok;

/* the standby replicated the lost life's writes up to S before the latest
 * any life wrote (evtop, its clock): what R10 can see; -DLAG_ANY: any lag
 * (KNOWN, not detectable) */
byte evtop;
#ifdef LAG_ANY
#define LAG_OK 1
#else
#define LAG_OK (evtop <= saved.ev + S)
#endif
/* R10's record (Db.ev), kept in the scenarios of a failover only (-DF_FAILOVER):
 * elsewhere it would only grow the state */
#ifdef F_FAILOVER
#define TRACK_EV 1
#else
#define TRACK_EV 0
#endif
#define EVW if :: TRACK_EV -> db.ev = MAX(db.ev, rnow); evtop = MAX(evtop, rnow) :: else -> skip fi

/* ---- the registry's functions ---- */

/* db := src (a restore) / saved := db (a backup) */
#define COPYDB(dst, src) \
    dst.life = src.life; dst.grace = src.grace; dst.started = src.started; dst.rolled = src.rolled; \
    dst.began = src.began; dst.fm = src.fm; \
    dst.floor = src.floor; dst.ev = src.ev; dst.mw = src.mw; dst.lw = src.lw; dst.un = src.un; \
    dst.created = src.created; dst.reinst = src.reinst; dst.ended = src.ended; \
    for (i : 0 .. NW - 1) { \
        dst.wk[i].hid = src.wk[i].hid; dst.wk[i].name = src.wk[i].name; dst.wk[i].ep = src.wk[i].ep; \
        dst.wk[i].from = src.wk[i].from; dst.wk[i].exp = src.wk[i].exp; dst.wk[i].hw = src.wk[i].hw; \
        dst.wk[i].clean = src.wk[i].clean; dst.wk[i].unw = src.wk[i].unw \
    }; \
    for (i : 0 .. NW * EMAX - 1) { \
        dst.g[i].hid = src.g[i].hid; dst.g[i].name = src.g[i].name; dst.g[i].from = src.g[i].from; \
        dst.g[i].upto = src.g[i].upto \
    }; \
    skip

/* snowflake_registry_create(): empty tables, a new life whose grace starts now */
inline create_db(mwv) {
    rnow = RCLOCK;
    db.floor = 0; db.rolled = 0; db.started = rstart;
    db.ev = (TRACK_EV -> rnow : 0); db.mw = mwv; db.lw = 0; db.un = 0; db.created = 1; db.reinst = 0; db.ended = 0;
    for (i : 0 .. NW - 1) {
        db.wk[i].hid = 0; db.wk[i].name = 0; db.wk[i].ep = 0; db.wk[i].from = 0; db.wk[i].exp = 0;
        db.wk[i].hw = 0; db.wk[i].clean = 1; db.wk[i].unw = 0
    };
    for (i : 0 .. NW * EMAX - 1) { db.g[i].hid = 0; db.g[i].name = 0; db.g[i].from = 0; db.g[i].upto = 0 };
    lifectr++; db.life = lifectr;
    db.grace = GNOW + MW + S; db.began = GNOW; db.fm = GNOW
}

/* a new start of the registry's server */
#define NEWSTART rnow = RCLOCK; rctr++; rstart = rctr; start_at[rstart] = GNOW

/* snowflake_registry_life(), at the start of every call: a new life when the
 * server's start differs from the one its identity records (O1, R1), or (R1)
 * its tables were restored into the running server; its grace ends one
 * maximum window plus the skew bound after the first call (O2, R2); R2
 * lowers it to one grace from now at every call. */
inline reg_life() {
    rnow = RCLOCK;
    if
    :: db.started != rstart || (R1 && db.rolled) || (R9 && db.un) ->
        /* the first call: the sequence's mark, unless it is from before this
         * start, not after the life the settings row records began, or (R1FC)
         * the tables were restored into the running registry */
        if
        :: (R1FC && db.rolled) || (R9 && db.un) || db.fm < start_at[rstart] || db.fm <= db.began -> db.fm = GNOW
        :: else -> skip
        fi;
        /* R10: the lost life's clock ahead of this one's (the latest time it
         * wrote into the rows, past now): no window starts before it plus a grace */
        if
        :: R10 && db.ev > rnow ->
            db.floor = MAX(db.floor, db.ev + MAX(MW, db.lw) + S);
            printf("MSC: %d: the lost life wrote time %d, past the clock %d: floor %d\n", tick, db.ev, rnow, db.floor)
        :: else -> skip
        fi;
        EVW;
        lifectr++; db.life = lifectr; db.started = rstart; db.rolled = 0; db.began = GNOW;
        db.created = 0; db.reinst = 0; db.ended = 0;
        /* R9: the rows as they are are this life's */
        if
        :: R9 -> db.un = 0; for (i : 0 .. NW - 1) { db.wk[i].unw = 0 }
        :: else -> skip
        fi;
        db.grace = MAX(db.grace, MIN(db.fm, GNOW) + MW + S); db.grace = MIN(db.grace, GNOW + MW + S)
    :: else -> skip
    fi;
    if
    :: R2 && db.grace > rnow + MW + S -> db.grace = GNOW + MW + S
    :: else -> skip
    fi
}

/* the next fencing epoch of worker id w: above every grant recorded */
inline next_epoch() {
    pe = db.wk[w].ep;
    for (j : 0 .. EMAX - 1) { if :: db.g[w * EMAX + j].hid != 0 && j + 1 > pe -> pe = j + 1 :: else -> skip fi };
    pe++
}

/* snowflake_registry_claim() for holder h: its answer in hs[h].a* (ak 0: refused) */
inline claim(h) {
    db.lw = MAX(db.lw, WASK);     /* R2': the window asked, recorded whatever the answer */
    reg_life();
    /* R7 (and O4): the claim is not made while the clocks differ by more than S */
    if
    :: HCLOCK(h) > rnow + S || rnow > HCLOCK(h) + S -> goto claimed
    :: else -> skip
    fi;
    /* R2: in the grace no window is granted to a holder that holds none, not
     * even the grant the row names it holder of (a restore brings such rows back) */
    if
    :: R2 && GNOW < GRACE -> goto claimed
    :: else -> skip
    fi;
    /* the grant this incarnation holds already (its answer was lost) */
    found = NONE;
    for (k : 0 .. NW - 1) { if :: db.wk[k].hid == HID(h) -> found = k :: else -> skip fi };
    if
    :: R9 && found != NONE && db.wk[found].unw -> db.un = 1; goto claimed   /* R9: seen, refused; the next call begins a life */
    :: else -> skip
    fi;
    if
    :: found != NONE ->
        w = found;
        db.wk[w].exp = MAX(db.wk[w].exp, rnow + WIN); db.wk[w].hw = MAX(db.wk[w].hw, rnow + WIN); EVW;
        db.g[w * EMAX + db.wk[w].ep - 1].upto = db.wk[w].exp;
        hs[h].ak = 1; hs[h].aw = w; hs[h].aep = db.wk[w].ep; hs[h].afrom = db.wk[w].from;
        hs[h].auntil = (R3 -> MIN(db.wk[w].exp, rnow + MW) : db.wk[w].exp);
        hs[h].alife = db.life;
        goto claimed
    :: else -> skip
    fi;
    if
    :: GNOW < GRACE -> goto claimed         /* in the grace: no new window */
    :: else -> skip
    fi;
    /* a free worker id: released, or its window and quarantine over; any of them (the order is the code's) */
    found = NONE;
    for (k : 0 .. NW - 1) {
        if
        :: found == NONE && (db.wk[k].hid == 0 || db.wk[k].exp + Q <= rnow) -> found = k
        :: else -> skip
        fi
    };
    if
    :: found == NONE -> goto claimed
    :: else -> skip
    fi;
    w = found;
    if
    :: R9 && db.wk[w].unw -> db.un = 1; goto claimed   /* R9: seen, refused; the next call begins a life */
    :: else -> skip
    fi;
    next_epoch();
    if
    :: pe > EMAX -> goto claimed          /* the model's bound on epochs */
    :: else -> skip
    fi;
    /* O6: from the high water, the floor or now; R6: a gap of M + S after an unclean end */
    t1 = db.wk[w].hw;
    if
    :: R6 && !db.wk[w].clean -> t1 = t1 + MW + S
    :: else -> skip
    fi;
    t1 = MAX(t1, db.floor); t1 = MAX(t1, rnow);
    t2 = t1 + WIN;                          /* O3: max(rnow, from) + window */
    if
    :: R3 && t2 > rnow + MW -> t2 = MAX(rnow + MW, t1)   /* R3: at most rnow + M, empty when from is later */
    :: else -> skip
    fi;
    db.wk[w].hid = HID(h); db.wk[w].name = NAMEOF(h); db.wk[w].ep = pe; db.wk[w].from = t1;
    db.wk[w].exp = t2; db.wk[w].hw = t2; db.wk[w].clean = 0; EVW;
    db.g[w * EMAX + pe - 1].hid = HID(h); db.g[w * EMAX + pe - 1].name = NAMEOF(h);
    db.g[w * EMAX + pe - 1].from = t1; db.g[w * EMAX + pe - 1].upto = t2;
    hs[h].ak = 1; hs[h].aw = w; hs[h].aep = pe; hs[h].afrom = t1; hs[h].auntil = t2; hs[h].alife = db.life;
claimed:
    hs[h].amw = MW;
    if
    :: hs[h].ak == 1 -> printf("MSC: %d: server %d claims (clock %d, registry %d, life %d): worker id %d epoch %d [%d,%d)\n", tick, h, HCLOCK(h), rnow, db.life, hs[h].aw, hs[h].aep, hs[h].afrom, hs[h].auntil)
    :: else -> printf("MSC: %d: server %d claims (clock %d, registry %d, life %d, grace until %d): refused\n", tick, h, HCLOCK(h), rnow, db.life, GRACE)
    fi
}

/* whether a grant of worker id w other than (pe, holder h) overlaps [lo, hi): found = its epoch */
inline overlapping(h) {
    found = NONE;
    for (j : 0 .. EMAX - 1) {
        if
        :: found == NONE && db.g[w * EMAX + j].hid != 0 && db.g[w * EMAX + j].from < hi && lo < db.g[w * EMAX + j].upto &&
           (j + 1 != pe || !SAMEHOLDER(db.g[w * EMAX + j].hid, db.g[w * EMAX + j].name, HID(h), NAMEOF(h))) ->
            found = j
        :: else -> skip
        fi
    }
}

/* snowflake_registry_present() for holder h: a renewal of a grant of this
 * life, or the presentation of a window of another life (O5, R5) */
inline present(h) {
    db.lw = MAX(db.lw, WASK);     /* R2': the window asked, recorded whatever the answer */
    reg_life();
    w = hs[h].rw; pe = hs[h].ep; lo = hs[h].gfrom; hi = hs[h].guntil;
    if
    :: R9 && db.wk[w].unw -> db.un = 1; reg_life()    /* R9: seen; a new life, the window presented to it */
    :: else -> skip
    fi;
    hs[h].anamed = R7 && (HCLOCK(h) > rnow + S || rnow > HCLOCK(h) + S);
    if
    :: hs[h].life == db.life ->
        if
        :: db.wk[w].ep == pe && db.wk[w].hid == HID(h) ->     /* renewed */
            t2 = MAX(db.wk[w].exp, rnow + WIN);
            if
            :: R3 -> t2 = MIN(t2, rnow + MW)         /* R3: the expiry at most now + M */
            :: else -> skip
            fi;
            db.wk[w].exp = t2; EVW;
            if
            :: HWL -> db.wk[w].hw = MAX(db.wk[w].from, MAX(hi, t2))   /* what the holder holds */
            :: else -> db.wk[w].hw = MAX(db.wk[w].hw, rnow + WIN)
            fi;
            db.g[w * EMAX + pe - 1].upto = MAX(db.g[w * EMAX + pe - 1].upto, t2);
            hs[h].ak = 2; hs[h].auntil = t2; hs[h].alife = db.life;
            goto presented
        :: else -> skip
        fi;
        /* a grant of this life the registry does not know, or granted again to another holder: a new life */
        ok = 0;
        for (j : 0 .. EMAX - 1) { if :: db.g[w * EMAX + j].hid != 0 && j + 1 >= pe -> ok = 1 :: else -> skip fi };
        if
        :: ok ->
            found = NONE;
            for (j : 0 .. EMAX - 1) {
                if
                :: db.g[w * EMAX + j].hid != 0 && j + 1 >= pe && db.g[w * EMAX + j].from < hi && lo < db.g[w * EMAX + j].upto &&
                   !SAMEHOLDER(db.g[w * EMAX + j].hid, db.g[w * EMAX + j].name, HID(h), NAMEOF(h)) -> found = j
                :: else -> skip
                fi
            };
            if
            :: found == NONE -> hs[h].ak = 3; goto presented      /* lost */
            :: else -> skip
            fi
        :: else -> skip
        fi;
        lifectr++; db.life = lifectr; db.grace = GNOW + MW + S; db.began = GNOW;
        db.created = 0; db.reinst = 0; db.ended = 0
    :: else -> skip
    fi;
    /* presented to another life */
    overlapping(h);
    if
    :: found != NONE -> hs[h].ak = 4; goto presented           /* conflict */
    :: else -> skip
    fi;
    if
    :: db.wk[w].hid != 0 && (db.wk[w].hid != HID(h) || db.wk[w].ep != pe) && db.wk[w].exp > rnow ->
        hs[h].ak = 3; goto presented                            /* lost: another holds it after the window */
    :: else -> skip
    fi;
    if
    :: R5 && hi <= rnow -> hs[h].ak = 3; goto presented          /* R5: an ended window is not reinstated */
    :: else -> skip
    fi;
    t2 = MAX(hi, rnow + WIN);                                    /* O5: extended, whether or not it ended */
    if
    :: !(db.wk[w].hid == HID(h) && db.wk[w].ep == pe) -> db.wk[w].from = lo
    :: else -> skip
    fi;
    db.wk[w].hid = HID(h); db.wk[w].name = NAMEOF(h); db.wk[w].ep = pe;
    db.wk[w].hw = MAX(db.wk[w].hw, t2); db.wk[w].exp = MAX(db.wk[w].exp, t2); db.wk[w].clean = 0;
    if
    :: pe <= EMAX ->
        if
        :: db.g[w * EMAX + pe - 1].hid == 0 ->
            db.g[w * EMAX + pe - 1].from = lo; db.g[w * EMAX + pe - 1].upto = db.wk[w].exp
        :: else ->
            db.g[w * EMAX + pe - 1].from = MIN(db.g[w * EMAX + pe - 1].from, lo);
            db.g[w * EMAX + pe - 1].upto = MAX(db.g[w * EMAX + pe - 1].upto, db.wk[w].exp)
        fi;
        db.g[w * EMAX + pe - 1].hid = HID(h); db.g[w * EMAX + pe - 1].name = NAMEOF(h)
    :: else -> skip
    fi;
    hs[h].ak = 2; hs[h].auntil = (R3 -> MIN(db.wk[w].exp, rnow + MW) : db.wk[w].exp); hs[h].alife = db.life;
    db.reinst = 1; EVW;
presented:
    hs[h].amw = MW;
    hs[h].aw = w; hs[h].aep = pe; hs[h].afrom = lo;
    printf("MSC: %d: server %d presents worker id %d epoch %d [%d,%d) of life %d to life %d (registry clock %d): %d until %d (2 renewed or reinstated, 3 lost, 4 conflict)\n", tick, h, w, pe, lo, hi, hs[h].life, db.life, rnow, hs[h].ak, hs[h].auntil)
}

/* snowflake_registry_release(w, epoch, holder, used_until): holder h's clean release */
inline release_clean(h) {
    w = hs[h].rw;
    if
    :: R9 && w != NONE && db.wk[w].unw -> db.un = 1    /* R9: seen before the life */
    :: else -> skip
    fi;
    reg_life();
    if
    :: w != NONE && db.wk[w].hid == HID(h) && db.wk[w].ep == hs[h].ep ->
        t1 = hs[h].last + 1;
        db.wk[w].hid = 0; db.wk[w].exp = MIN(db.wk[w].exp, rnow); EVW;
        db.wk[w].hw = MAX(db.wk[w].from, MIN(db.wk[w].hw, t1)); db.wk[w].clean = 1;
        db.g[w * EMAX + db.wk[w].ep - 1].upto = db.wk[w].hw
    :: else -> skip
    fi
}

/* ---- the holder ---- */

/* issue an id at the generator's time max(clock, last) if its window covers it (reserve(), apply_grant()) */
inline try_issue(h) {
    if
    :: !hs[h].paused && !hs[h].down && hs[h].gw != NONE ->
        t1 = MAX(HCLOCK(h), hs[h].last);
        if
        :: t1 >= hs[h].gfrom && t1 < hs[h].guntil ->
#ifndef NO_I1
            assert(iss[hs[h].gw * TT + t1 % TT] == 0 || iss[hs[h].gw * TT + t1 % TT] == HID(h));   /* I1, per incarnation */
#endif
            iss[hs[h].gw * TT + t1 % TT] = HID(h); hs[h].last = t1;
            printf("MSC: %d: server %d issues worker id %d time %d\n", tick, h, hs[h].gw, t1)
        :: else -> skip
        fi
    :: else -> skip
    fi
}

/* the answer applied: publish() with R4's cap, lost (the generator goes on
 * to its window's end), conflict (it stops now) */
inline receive(h) {
#ifdef CHECK_NAMED
    /* R7: a renewal answered with an ended window names the registry's clock */
    assert(!(hs[h].ak == 2 && hs[h].auntil <= hs[h].asend && !hs[h].anamed));
#endif
    if
    :: hs[h].ak == 1 || hs[h].ak == 2 ->
        t2 = hs[h].auntil;
        if
        :: R4 && t2 > hs[h].asend + MIN(WASK, hs[h].amw) -> t2 = hs[h].asend + MIN(WASK, hs[h].amw)   /* R4: cap_window() */
        :: else -> skip
        fi;
        hs[h].rw = hs[h].aw; hs[h].ep = hs[h].aep; hs[h].life = hs[h].alife;
        hs[h].gw = hs[h].aw; hs[h].gfrom = hs[h].afrom; hs[h].guntil = t2;
        printf("MSC: %d: server %d applies worker id %d [%d,%d)\n", tick, h, hs[h].gw, hs[h].gfrom, hs[h].guntil)
    :: hs[h].ak == 3 -> hs[h].rw = NONE
    :: hs[h].ak == 4 -> hs[h].rw = NONE; hs[h].guntil = MIN(hs[h].guntil, HCLOCK(h))
    :: else -> skip
    fi;
    hs[h].ak = 0; hs[h].anamed = 0; hs[h].aw = 0; hs[h].aep = 0; hs[h].afrom = 0; hs[h].auntil = 0;
    hs[h].alife = 0; hs[h].asend = 0; hs[h].amw = 0
}

inline clear_answer(h) {
    hs[h].ak = 0; hs[h].anamed = 0; hs[h].aw = 0; hs[h].aep = 0; hs[h].afrom = 0; hs[h].auntil = 0;
    hs[h].alife = 0; hs[h].asend = 0; hs[h].amw = 0
}

inline resume(h) {     /* the answer in flight applied, with the clock at its send */
    if
    :: hs[h].asend != 0 -> receive(h)
    :: else -> skip
    fi;
    try_issue(h)
}

inline restart(h) {     /* a new incarnation: the generator holds no grant; the lease keeps `last` */
    hs[h].inc++; hs[h].rw = NONE; hs[h].gw = NONE; hs[h].life = 0; hs[h].lose = 0; hs[h].slow = 0;
    clear_answer(h)
}

/* A call (claim() or renew()) and its answer in one step, once a tick
 * (the renewal period); a lost answer cuts the holder off, a slow one
 * arrives when the holder resumes. */
proctype Holder(byte h) {
end:
    do
    :: d_step {
        !hs[h].paused && !hs[h].cut && !hs[h].down && !hs[h].called ->
        hs[h].called = 1; hs[h].asend = HCLOCK(h);
        if
        :: hs[h].rw == NONE -> claim(h)
        :: else -> present(h)
        fi;
        if
        :: hs[h].lose -> hs[h].lose = 0; hs[h].cut = 1; printf("MSC: %d: server %d: the answer is lost\n", tick, h); clear_answer(h)
        :: !hs[h].lose && hs[h].slow -> hs[h].slow = 0; hs[h].paused = 1; printf("MSC: %d: server %d paused, the answer in flight\n", tick, h)
        :: else -> receive(h); try_issue(h)
        fi
       }
    od
}

/* ---- time ---- */
hidden byte live_n, live_want;
byte live_from;         /* L1 counts from here (kept: it only rises) */
proctype Clock() {
end:
    do
    :: d_step {
        tick < T0 + TMAX && (NH < 1 || hs[0].paused || hs[0].cut || hs[0].down || hs[0].called) &&
                         (NH < 2 || hs[1].paused || hs[1].cut || hs[1].down || hs[1].called) &&
                         (NH < 3 || hs[2].paused || hs[2].cut || hs[2].down || hs[2].called) ->
        tick++;
        /* id times no clock can reach again are forgotten (the state stays small) */
        for (k : 0 .. NW - 1) { iss[k * TT + (tick - IWIN - 1) % TT] = 0 };
        for (k : 0 .. NH - 1) {
            hs[k].called = 0;
            if :: hs[k].last + IWIN < tick -> hs[k].last = 0 :: else -> skip fi;
            if :: hs[k].rw == NONE && hs[k].guntil + IWIN <= tick -> hs[k].gw = NONE; hs[k].gfrom = 0; hs[k].guntil = 0 :: else -> skip fi;
            try_issue(k)
        };
#ifdef CHECK_LIVE
        /* L1: once the faults stopped, every worker id a running server can
         * take is issued under within LIVE_B ticks of the later of: the
         * faults' end, the floor, and the end of the window and quarantine
         * of a worker id whose holder is gone (the registry's record of it) */
        live_from = MAX(live_from, quiet_at); live_from = MAX(live_from, db.floor);
        for (k : 0 .. NW - 1) {
            if
            :: !L1TRUE && quiet && db.wk[k].hid != 0 && db.wk[k].hid != HID(0) && (NH < 2 || db.wk[k].hid != HID(1)) && (NH < 3 || db.wk[k].hid != HID(2)) ->
                live_from = MAX(live_from, db.wk[k].exp + Q)
            :: else -> skip
            fi
        };
        if
        :: quiet && tick >= live_from + LIVE_B ->
            live_n = 0; live_want = 0;
            for (k : 0 .. NH - 1) {
                if :: !hs[k].down -> live_want++ :: else -> skip fi;
                if :: !hs[k].down && hs[k].last == HCLOCK(k) -> live_n++ :: else -> skip fi
            };
            assert(live_n >= MIN(live_want, NW))
        :: else -> skip
        fi;
#endif
        skip
       }
    od
}

/* ---- faults ---- */
#define SKEW(o) \
    :: d_step { !quiet && AT && o >= OB - E && o < OB + E -> o++ } \
    :: d_step { !quiet && AT && o > OB - E && o <= OB + E -> o-- }
/* the operator ends the grace of a created life only for a new fleet: no
 * server holds a window of another life nor issued an id at or past the
 * registry's clock (snowflake_registry_end_grace()'s hint); the code
 * refuses a life not created, or one that reinstated a window */
#define NEWFLEET_H(k) (NH <= (k) || (hs[k].last < RCLOCK && \
                       (hs[k].gw == NONE || hs[k].guntil <= HCLOCK(k) || hs[k].life == db.life)))
#define new_fleet() (NEWFLEET_H(0) && NEWFLEET_H(1) && NEWFLEET_H(2))
/* worker id wv's row set back to the backup's (data-only restore, COPY, UPDATE),
 * with its grants, or its grants deleted (TRUNCATE): R9 sees it (unw) */
#define PARTIAL(wv) \
    :: d_step { SPEND && have_saved -> faults++; \
        db.wk[wv].hid = saved.wk[wv].hid; db.wk[wv].name = saved.wk[wv].name; db.wk[wv].ep = saved.wk[wv].ep; \
        db.wk[wv].from = saved.wk[wv].from; db.wk[wv].exp = saved.wk[wv].exp; db.wk[wv].hw = saved.wk[wv].hw; \
        db.wk[wv].clean = saved.wk[wv].clean; db.wk[wv].unw = 1; \
        printf("MSC: %d: worker id %d's row set back to the backup's\n", tick, wv) } \
    :: d_step { SPEND && have_saved -> faults++; \
        db.wk[wv].hid = saved.wk[wv].hid; db.wk[wv].name = saved.wk[wv].name; db.wk[wv].ep = saved.wk[wv].ep; \
        db.wk[wv].from = saved.wk[wv].from; db.wk[wv].exp = saved.wk[wv].exp; db.wk[wv].hw = saved.wk[wv].hw; \
        db.wk[wv].clean = saved.wk[wv].clean; db.wk[wv].unw = 1; \
        for (i : 0 .. EMAX - 1) { \
            db.g[wv * EMAX + i].hid = saved.g[wv * EMAX + i].hid; db.g[wv * EMAX + i].name = saved.g[wv * EMAX + i].name; \
            db.g[wv * EMAX + i].from = saved.g[wv * EMAX + i].from; db.g[wv * EMAX + i].upto = saved.g[wv * EMAX + i].upto \
        }; \
        printf("MSC: %d: worker id %d's row and grants set back to the backup's\n", tick, wv) } \
    :: d_step { SPEND && db.g[wv * EMAX].hid + db.g[wv * EMAX + 1].hid + db.g[wv * EMAX + 2].hid + db.g[wv * EMAX + 3].hid != 0 -> faults++; \
        for (i : 0 .. EMAX - 1) { db.g[wv * EMAX + i].hid = 0; db.g[wv * EMAX + i].name = 0; db.g[wv * EMAX + i].from = 0; db.g[wv * EMAX + i].upto = 0 }; \
        db.wk[wv].unw = 1; \
        printf("MSC: %d: worker id %d's grants deleted\n", tick, wv) }
/* the nemesis acts at the start of a tick, before the holders' calls of it
 * (-DNEMESIS_ANYTIME: between any two calls) */
#ifdef NEMESIS_ANYTIME
#define AT 1
#else
#define AT (!hs[0].called && (NH < 2 || !hs[1].called) && (NH < 3 || !hs[2].called))
#endif
#define SPEND (faults < FB && !quiet && AT)
/* -DLOSE_CLAIM: only a claim's answer is lost */
#ifdef LOSE_CLAIM
#define LOSE_OK(h) (hs[h].rw == NONE)
#else
#define LOSE_OK(h) 1
#endif
proctype Nemesis() {
end:
    do
    :: faults > FB -> skip     /* never: the loop has an option whatever the scenario enables */
#ifdef F_SAVE
    :: d_step { !quiet && AT && !have_saved -> COPYDB(saved, db); have_saved = 1;
#ifdef F_SNAPSHOT
        srstart = rstart;
#endif
        printf("MSC: %d: a base backup of the registry\n", tick) }
#endif
/* a restore brings back the first-call mark (the sequence life_first_call)
 * with the tables, or leaves it out (pg_restore -t of the tables alone): the
 * nemesis' choice */
#ifdef F_RESTORE    /* restored and started; a failover losing a suffix */
    :: d_step { SPEND && have_saved -> faults++; COPYDB(db, saved); NEWSTART; printf("MSC: %d: the registry restored from the backup and started\n", tick) }
    :: d_step { SPEND && have_saved -> faults++; t1 = db.fm; COPYDB(db, saved); db.fm = t1; NEWSTART; printf("MSC: %d: the registry's tables restored from the backup without their first-call mark, and started\n", tick) }
#endif
#ifdef F_ROLLBACK   /* pg_restore --clean into the running registry: no start */
    :: d_step { SPEND && have_saved -> faults++; COPYDB(db, saved); db.rolled = 1; printf("MSC: %d: pg_restore --clean of the backup into the running registry\n", tick) }
    :: d_step { SPEND && have_saved -> faults++; t1 = db.fm; COPYDB(db, saved); db.fm = t1; db.rolled = 1; printf("MSC: %d: pg_restore --clean of the backup's tables into the running registry, without their first-call mark (mark %d kept)\n", tick, db.fm) }
#endif
#ifdef F_LIVES      /* a 1.0 registry's tables restored into a database at 1.1, given lives by snowflake_registry_add_lives() */
    :: d_step { SPEND && have_saved -> faults++; rnow = RCLOCK; COPYDB(db, saved); db.started = rstart; db.rolled = 0; db.fm = 0;
        lifectr++; db.life = lifectr; db.began = GNOW; db.grace = (LG -> GNOW + MW + S : 0);
        db.created = 0; db.reinst = 0; db.ended = !LG;
        printf("MSC: %d: 1.0's tables of the backup restored, lives added (life %d, grace until %d)\n", tick, db.life, db.grace) }
#endif
#ifdef F_SNAPSHOT   /* a VM memory snapshot of the registry resumed: its rows consistent with their writers, no start (R1 cannot see it) */
    :: d_step { SPEND && have_saved -> faults++; COPYDB(db, saved); rstart = srstart; printf("MSC: %d: a memory snapshot of the registry resumed\n", tick) }
#endif
#ifdef F_CREATE     /* created again at its address */
    :: d_step { SPEND -> faults++; NEWSTART; create_db(M2); printf("MSC: %d: the registry created again (maximum window %d)\n", tick, M2) }
#endif
#ifdef F_HAND       /* snowflake_registry_release(worker_id) */
    :: d_step { SPEND && db.wk[0].hid != 0 -> faults++;
        if :: R9 && db.wk[0].unw -> db.un = 1 :: else -> skip fi;
        if :: R9 -> reg_life() :: else -> skip fi;     /* 1.2 calls snowflake_registry_life() first, 1.1 does not */
        db.wk[0].hid = 0; db.wk[0].clean = 0; EVW; printf("MSC: %d: worker id 0 released by hand\n", tick) }
#endif
#ifdef F_PARTIAL    /* a subset of the rows restored into the running registry (a data-only restore, COPY, a hand write, TRUNCATE): settings untouched */
    PARTIAL(0)
#if NW > 1
    PARTIAL(1)
#endif
#endif
#ifdef F_END        /* snowflake_registry_end_grace() in a grace (the operator gives no reason: A2 may not hold) */
    :: d_step { SPEND && (!EG || new_fleet()) -> faults++;
        reg_life();
        if
        :: GNOW >= GRACE -> skip
        :: GNOW < GRACE && (!EG || (db.created && !db.reinst)) -> db.grace = GNOW; db.ended = 1; printf("MSC: %d: the grace ended by hand\n", tick)
        :: else -> printf("MSC: %d: snowflake_registry_end_grace() refused\n", tick)
        fi }
#endif
#ifdef F_SKEW       /* A1: every clock moves within E of true time (no fault; 2 servers) */
    SKEW(roff)
    SKEW(hs[0].off)
    SKEW(hs[1].off)
#endif
#ifdef F_FAILOVER   /* (R10) the registry's clock and server 0's D (RSTEP) ahead together, beyond A1 but agreeing;
                     * an asynchronous failover to the standby (the backup: what it replicated),
                     * whose clock is right, server 0 left on the old side (cut off) */
    :: d_step { SPEND && roff == OB && hs[0].off == OB -> faults++; roff = OB + RSTEP; hs[0].off = OB + RSTEP;
        printf("MSC: %d: the registry's clock and server 0's %d ahead\n", tick, RSTEP) }
    :: d_step { SPEND && have_saved && LAG_OK -> faults++; COPYDB(db, saved); roff = OB; NEWSTART; hs[0].cut = 1;
        printf("MSC: %d: failover to the standby (the backup), its clock right; server 0 cut off\n", tick) }
#endif
#ifdef F_FLOOR      /* snowflake_registry_raise_floor() ahead */
    :: d_step { SPEND -> faults++; db.floor = MAX(db.floor, RCLOCK + FLOOR_AHEAD); printf("MSC: %d: floor raised to %d\n", tick, db.floor) }
#endif
#ifdef F_CUT        /* a server cut off (-DNO_UNCUT: for good), or its next answer lost (-DNO_LOSE: not) */
#ifndef NO_CUT
    :: d_step { SPEND && !hs[0].cut && !hs[0].lose -> faults++; hs[0].cut = 1; printf("MSC: %d: server 0 cut off\n", tick) }
#endif
#ifndef NO_LOSE
    :: d_step { SPEND && !hs[0].cut && !hs[0].lose && LOSE_OK(0) -> faults++; hs[0].lose = 1 }
#endif
#ifndef NO_UNCUT
    :: d_step { !quiet && AT && hs[0].cut -> hs[0].cut = 0; printf("MSC: %d: server 0 reachable\n", tick) }
#endif
#ifndef F_CUT0
#ifndef NO_CUT
    :: d_step { SPEND && !hs[1].cut && !hs[1].lose -> faults++; hs[1].cut = 1; printf("MSC: %d: server 1 cut off\n", tick) }
#endif
#ifndef NO_LOSE
    :: d_step { SPEND && !hs[1].cut && !hs[1].lose && LOSE_OK(1) -> faults++; hs[1].lose = 1 }
#endif
#ifndef NO_UNCUT
    :: d_step { !quiet && AT && hs[1].cut -> hs[1].cut = 0; printf("MSC: %d: server 1 reachable\n", tick) }
#endif
#endif
#endif
#ifdef F_PAUSE      /* server 0 paused: no step while time passes */
    :: d_step { SPEND && !hs[0].paused && !hs[0].slow -> faults++; hs[0].paused = 1; printf("MSC: %d: server 0 paused\n", tick) }
    :: d_step { SPEND && !hs[0].paused && !hs[0].slow && hs[0].rw != NONE -> faults++; hs[0].slow = 1 }
    :: d_step { !quiet && AT && hs[0].paused -> hs[0].paused = 0; printf("MSC: %d: server 0 resumed\n", tick); resume(0) }
#endif
#ifdef F_RAHEAD     /* the registry's clock stepped ahead beyond A1, and back */
    :: d_step { SPEND && roff == OB && hs[0].off == OB -> faults++; roff = OB + RSTEP; printf("MSC: %d: the registry's clock %d ahead\n", tick, RSTEP) }
#endif
#ifdef F_RBEHIND    /* the registry's clock stepped behind beyond A1, and back */
    :: d_step { SPEND && roff == OB && hs[0].off == OB -> faults++; roff = OB - RBACK; printf("MSC: %d: the registry's clock %d behind\n", tick, RBACK) }
#endif
#if defined(F_RAHEAD) || defined(F_RBEHIND)
    :: d_step { !quiet && AT && roff != OB -> roff = OB; printf("MSC: %d: the registry's clock right again\n", tick) }
#endif
#ifdef F_HCLOCK     /* server 0's clock stepped beyond A1, and back */
    :: d_step { SPEND && hs[0].off == OB && roff == OB -> faults++; hs[0].off = OB + STEP; printf("MSC: %d: server 0's clock %d ahead\n", tick, STEP); try_issue(0) }
    :: d_step { SPEND && hs[0].off == OB && roff == OB -> faults++; hs[0].off = OB - STEP; printf("MSC: %d: server 0's clock %d behind\n", tick, STEP) }
    :: d_step { !quiet && AT && hs[0].off != OB -> hs[0].off = OB; printf("MSC: %d: server 0's clock right again\n", tick); try_issue(0) }
#endif
#ifdef F_CRASH      /* server 0 killed and started: a new incarnation */
    :: d_step { SPEND && hs[0].inc < NINC - 1 && !hs[0].paused -> faults++; restart(0); printf("MSC: %d: server 0 killed and started\n", tick) }
#endif
#ifdef F_CLEAN      /* server 0's clean restart: its release, then a new incarnation */
    :: d_step { SPEND && hs[0].inc < NINC - 1 && !hs[0].paused && !hs[0].cut -> faults++; release_clean(0); restart(0); printf("MSC: %d: server 0 restarted cleanly\n", tick) }
#endif
#ifdef CHECK_LIVE
    :: d_step {     /* the faults stop: clocks within A1, every holder reachable and running */
        !quiet && AT ->
        quiet = 1; quiet_at = tick; roff = OB;
        printf("MSC: %d: the faults stop\n", tick);
        for (k : 0 .. NH - 1) { hs[k].cut = 0; hs[k].lose = 0; hs[k].slow = 0; hs[k].off = OB; if :: hs[k].paused -> hs[k].paused = 0; resume(k) :: else -> skip fi };
        skip
       }
#endif
    od
}

init {
    d_step {
        create_db(M); db.grace = 0; db.ended = 1;    /* a new fleet: snowflake_registry_end_grace() */
        start_at[rstart] = GNOW;
        for (k : 0 .. NH - 1) { hs[k].rw = NONE; hs[k].gw = NONE; hs[k].off = OB; hs[k].last = 0 }
    };
    atomic {
        for (k : 0 .. NH - 1) { run Holder(k) };
        run Clock();
        run Nemesis()
    }
}
