/*
 * The clone fence of snowflake (src/pg/fence.cpp, startup.cpp, identity.cpp, lease_file.cpp, lease_wal.cpp,
 * lease_writer.cpp, module.cpp, src/core/generator.hpp), as SPIN checks it.
 * test/model/fence/RULES.md states the assumptions, the invariants and the
 * rules F1..F14; docs/development.md ("The fence's model") maps each action to its
 * functions.
 *
 * Data directories 0..D-1: directory 0 exists at the start (never started, no
 * lease file, snowflake.worker_id = 1); 1..D-1 are made by copies, in order.
 * Worker ids 1..W; 0 is "no worker id". A set of worker ids is a bit mask
 * (bit w), bit 0 unused.
 *
 * Compile-time switches:
 *   NO_F1 .. NO_F14   remove that rule (mutation); NO_F13W: F13 but in the
 *                     lease's WAL record; NO_F14L: F14 taking a directory
 *                     without a lease for one with a lease of its own
 *   STRICT            the invariant holds for every pair of directories, also
 *                     the pairs the environment cannot tell apart
 *   KNOWN_47          pg_basebackup may be taken while a worker-id change of
 *                     its source waits for its reload (issue 47)
 *   KNOWN_47_REWIND   pg_rewind of an old primary from the new one while a
 *                     worker-id change of the new one waits for its reload
 *   KNOWN_47_CP_LEASE_FIRST  a file copy of a running server, pg_snowflake/
 *                     first: the server renumbered and reloaded before its
 *                     pg_wal and settings are copied (issue 47)
 *   KNOWN_47_CP_WAL_FIRST    the same, pg_wal and the settings first
 *   KNOWN_NEVER       a copy of a directory that never ran with snowflake (no
 *                     lease file, no fence file), started without a restore
 *   NEVER_RESTORE     a base backup of a directory that never ran with
 *                     snowflake, restored (backup_label, recovery.signal, or
 *                     standby.signal with a target): fenced by F3 and F5
 *   CP_NO_CHECKPOINT  with KNOWN_47_CP_LEASE_FIRST: no checkpoint of the source
 *                     while it is copied: fenced by F7 and F8
 *   KNOWN_47_CP_COPY_STOPPED  with CP_NO_CHECKPOINT: the copy stopped or killed
 *                     during its first recovery, before it replayed its
 *                     source's records (issue 47)
 *   UNDET_OFFLINE_STARTED  a stopped source renumbered, started, stopped
 *                     again before its end of recovery, copied
 *   UNDET_CLONE       a block clone that keeps the identity (same host, or a
 *                     host of the same name)
 *   UNDET_PROMOTE     a standby promoted by hand beside its running primary,
 *                     a second standby of one primary promoted (split brain),
 *                     an old primary restarted without pg_rewind
 *   UNDET_OFFLINE     a stopped source renumbered, copied before its next start
 *                     (or after a start stopped before its end of recovery)
 *   UNDET_RMDIR       a copy made without pg_snowflake/ (removed as a whole)
 *   RO_RESTART        the first directory started read-only with nothing to
 *                     follow, once (an HA manager's crash path), then promoted
 *   MOVES             a directory moved to a host of another name, its
 *                     snowflake.host_name set (stopped) to the name its lease
 *                     records, to a name that stays, or unset (F13), or set
 *                     in the files while it runs: a rename (F13R) (the block
 *                     clone on a host of another name, in every run, takes
 *                     F13's other path)
 *   NO_F13R           (mutation) a rename given while it ran not recorded at
 *                     its clean stop; NO_F13RW: recorded in the lease file
 *                     only, not in the fence's copy
 */

#ifndef D
#define D 3
#endif
#define DMAX 3
#ifndef NREN
#define NREN 2
#endif
#ifndef NFAIL
#define NFAIL 1
#endif
#define W 2
#define NONE 255
#define BIT(hw) (1 << (hw))
#define IDS(hm) ((hm) & 14)            /* the worker ids of a mask, bit 0 off */

#define MISSING 0
#define OK 1
#define CORRUPT 2

/* identity of a directory: host name << 6 | volume << 4 | birth time << 2 | inode;
 * host names 0 and 1 are the kernel's names of the two hosts, 2 a name only
 * snowflake.host_name gives (a name that stays) */
#define IDENT(h, v, b, hi) ((h) * 64 + (v) * 16 + (b) * 4 + (hi))
#define HOST(x) ((x) / 64)
#define REST(x) ((x) % 64)


/* a lease written by this directory's volume, directory and birth time under
 * another host name (F13) */
#define MOVED(d) (L_ex && L_id != idn[d] && REST(L_id) == REST(idn[d]))
/* no other existing directory has identity x */
#define IDN_FREE(x, d) ((0 == (d) || !ex[0] || idn[0] != (x)) && (1 == (d) || !ex[1] || idn[1] != (x)) && \
                        (2 == (d) || !ex[2] || idn[2] != (x)))

/* ---- the directories' files ---- */
bit  ex[DMAX];                 /* exists, not gone for good */
byte idn[DMAX];                /* its identity (datadir: own_directory) */
byte src[DMAX];                /* the directory it was copied from */
byte lf[DMAX], lw[DMAX], lfen[DMAX], lid[DMAX], lpen[DMAX];   /* pg_snowflake/lease: state, worker id, fence, writer, pending worker id */
byte ff[DMAX], fw[DMAX], ffen[DMAX], fid[DMAX], fpen[DMAX];   /* pg_snowflake/fence */
byte wrw[DMAX], wrf[DMAX], wlast[DMAX];        /* lease records past the last checkpoint: worker ids, fences, last worker id */
bit  bl[DMAX], rs[DMAX], ss[DMAX], tgt[DMAX];     /* backup_label (or pg_control's backup end), recovery.signal, standby.signal, a recovery target */
byte up[DMAX];                 /* a standby's primary */
byte conf[DMAX];               /* snowflake.worker_id in postgresql(.auto).conf */
/* (the identity's host name is snowflake.host_name's, nm, or else the
 * kernel's name of the host the directory is on, kern: a directory moved to
 * a host of another name, or its snowflake.host_name set, changes idn) */
byte kern[DMAX];               /* the kernel's host name of its host (0 or 1) */
byte nm[DMAX];                 /* snowflake.host_name (NONE: unset) */
#define EFF(d) (nm[d] != NONE -> nm[d] : kern[d])
byte guc[DMAX];                /* as the server last loaded it */
bit  demoted[DMAX];            /* an old primary after a failover */
byte succ[DMAX];               /* the standby promoted in its place */

/* ---- the running servers (shared memory) ---- */
bit  on[DMAX], inrec[DMAX], wst[DMAX], replayed[DMAX], issrun[DMAX];
bit  restore[DMAX], elsewhere[DMAX], blocked[DMAX];
byte weff[DMAX], fen[DMAX], lwid[DMAX];
/* F15: the worker id the settings' files name while another is in effect, as
 * the running server knows it (ALTER SYSTEM at once, a hand edit at the lease
 * writer's next poll): written into the lease and its records */
byte pen[DMAX];
/* F13: the worker id a lease written under another host name named (the
 * directory moved, or a block clone), its identity, and whether its fence is
 * this start's only (kept out of the lease file, stamped with that identity,
 * while the worker id in effect is that one) */
byte mvw[DMAX], mvid[DMAX];
bit  mvt[DMAX];

/* ---- ghosts ---- */
byte issued[W + 1];         /* directories that issued under each worker id */
byte decided[DMAX];            /* the fence each directory decided */
byte same[DMAX];               /* directories the environment cannot tell from it */
byte ncop, nren, ndmg, nfail, nmov, nro;
bit  rnm;                      /* the first directory renamed while it ran, then stopped cleanly (L13R) */
byte cpd = NONE, cps, cpfirst;   /* a file copy of a running server in progress */

/* scratch, 0 between actions */
byte hi, he, ht, hs, hw, hm, L_ex, L_w, L_fen, L_id, L_pen, source, grew, sf, si;

/* a standby that follows its source as the code tells it (standby_following):
 * standby.signal, no recovery target (F4), something to stream from
 * (primary_conninfo or restore_command; up[d], the directory it follows) */
#define FOLLOWING(d) (ss[d] && (!tgt[d] ALT_F4) && (up[d] != NONE ALT_F14))
/* a standby whose promotion is failover (streaming_standby): one that follows,
 * or, with nothing to follow, one with a lease of its own or its own under
 * another host name (the same server restarted read-only: an HA manager's
 * crash path); a copy with nothing to follow, or a directory without a lease,
 * is a restore (F14) */
#ifdef NO_F14L
#define OWN_LEASE(d) (!elsewhere[d])
#else
#define OWN_LEASE(d) (L_ex && !elsewhere[d])
#endif
#define STREAMING(d) (ss[d] && (!tgt[d] ALT_F4) && (up[d] != NONE || OWN_LEASE(d) || MOVED(d) ALT_F14))
/* a streaming standby as it behaves: standby.signal with a recovery target ends
 * its recovery at the target (the environment, whatever the code makes of it) */
#define LIVE_STANDBY(d) (ss[d] && !tgt[d])
#ifdef NO_F4
#define ALT_F4 || 1
#else
#define ALT_F4
#endif
#ifdef NO_F14
#define ALT_F14 || 1
#else
#define ALT_F14
#endif

inline ghost() {
    hi = 0;
    do
    :: hi < D ->
        if
        :: on[hi] ->
            /* I2: a fence decided is never cleared (but by adoption); a moved
             * directory's fence of this start only (F13) is not decided */
            assert((decided[hi] & ~fen[hi]) == 0);
            if
            :: mvt[hi] -> decided[hi] = decided[hi] | (fen[hi] & ~BIT(mvw[hi]))
            :: else -> decided[hi] = decided[hi] | fen[hi]
            fi;
#ifdef MOVES
            /* L13: the first directory, never a copy, moved or not (no failover
             * at these bounds), refuses its worker id only at a start under a
             * host name its lease does not record (F13): after the name is set
             * back, it issues */
            assert(hi != 0 || mvt[0] || (fen[0] & BIT(weff[0])) == 0);
            /* L13R: nor after a rename given while it ran and a clean stop
             * (F13R), until it is moved, killed or its name set again */
            assert(hi != 0 || !rnm || mvw[0] == 0);
#endif
            skip
        :: else
        fi;
        hi++
    :: else -> break
    od;
    hi = 0; he = 0; ht = 0; hs = 0; hw = 0; hm = 0; L_ex = 0; L_w = 0; L_fen = 0; L_id = 0; L_pen = 0; source = 0; grew = 0; sf = 0; si = 0
}

/* the lease's identity and fence as stamp() (lease_file.cpp) writes them:
 * this directory's, but while a moved directory's worker id is in effect its
 * lease's, without the fence this start added (F13); a lease written under
 * another worker id ends the move (its fence is kept from then on) */
inline stamp(d, worker) {
#ifndef NO_F13
    if
    :: mvw[d] != 0 && worker == mvw[d] ->
        si = mvid[d]; sf = fen[d];
        if
        :: mvt[d] -> sf = sf & ~BIT(mvw[d])
        :: else
        fi
    :: else -> si = idn[d]; sf = fen[d]; mvw[d] = 0; mvt[d] = 0
    fi
#else
    si = idn[d]; sf = fen[d]
#endif
}

/* write_lease: the lease file stamped with this directory */
inline write_lease(d, worker) {
    stamp(d, worker); lf[d] = OK; lw[d] = worker; lfen[d] = sf; lid[d] = si; lpen[d] = pen[d]
}
/* write_fence_copy */
inline write_fence(d, worker) {
    stamp(d, worker); ff[d] = OK; fw[d] = worker; ffen[d] = sf; fid[d] = si; fpen[d] = pen[d]
}
/* log_lease: a lease record in the WAL */
inline log_lease(d) {
    stamp(d, weff[d]);   /* as written (as_written): a move's fence of this start left out (F13) */
#ifdef NO_F13W
    sf = fen[d];         /* (mutation) the record holds the fence of this start */
#endif
    wrw[d] = wrw[d] | BIT(weff[d]) | BIT(pen[d]); wrf[d] = wrf[d] | sf; wlast[d] = weff[d]
}

/* record_worker_id (lease_writer.cpp): the worker id in effect written at once */
inline record_worker_id(d) {
#ifndef NO_F12
    if
    :: !blocked[d] && weff[d] != 0 && !inrec[d] ->
        write_lease(d, weff[d]); log_lease(d); elsewhere[d] = 0;
        write_fence(d, weff[d])
    :: else
    fi
#else
    skip            /* the worker id written at the next id issued only */
#endif
}

/* the lease writer starts once recovery ends: apply_worker_id, record_worker_id */
inline writer_starts(d) {
    wst[d] = 1; weff[d] = guc[d]; record_worker_id(d)
}

/* load_lease (startup.cpp) then fence_if_copy (fence.cpp) */
inline start(d) {
    on[d] = 1; wst[d] = 0; issrun[d] = 0; replayed[d] = 0;
    blocked[d] = 0; restore[d] = 0; elsewhere[d] = 0; fen[d] = 0; lwid[d] = 0;
    mvw[d] = 0; mvid[d] = 0; mvt[d] = 0; pen[d] = 0;
    guc[d] = conf[d]; weff[d] = conf[d];
#ifdef MOVES
    /* the start runs under the name its settings' files give, or its host's */
    idn[d] = IDENT(EFF(d), 0, 0, 0) + REST(idn[d]);
#endif
    /* load_lease: the fence's copy stands in for a missing lease file (F10) */
    L_ex = 0;
    if
    :: lf[d] == OK -> L_ex = 1; L_w = lw[d]; L_fen = lfen[d]; L_id = lid[d]; L_pen = lpen[d]
    :: lf[d] == CORRUPT -> blocked[d] = 1
#ifndef NO_F10
    :: lf[d] == MISSING && ff[d] == OK -> L_ex = 1; L_w = fw[d]; L_fen = ffen[d]; L_id = fid[d]; L_pen = fpen[d]
#endif
    :: else
    fi;
    if
    :: L_ex -> fen[d] = fen[d] | L_fen; lwid[d] = L_w
    :: else
    fi;
#ifndef NO_F10
    if
    :: ff[d] == OK -> fen[d] = fen[d] | ffen[d]
    :: else
    fi;
#endif
#ifndef NO_F2
    elsewhere[d] = L_ex && L_id != idn[d];      /* written_here (F2) */
#endif
#ifdef NO_F13
    /* (mutation) a lease that differs only by its host name taken as this directory's */
    elsewhere[d] = elsewhere[d] && !MOVED(d);
#endif
    /* fence_if_copy: restores() (F3), streaming_standby() (F4) */
#ifndef NO_F3
    restore[d] = !STREAMING(d) && (bl[d] || rs[d] || ss[d]);
#endif
    if
    :: !blocked[d] && (restore[d] || (L_ex && elsewhere[d] && !FOLLOWING(d))) ->
        /* fence_copy: the source's worker id (F5: the configured one without a lease's) */
        source = 0;
        if
        :: L_ex -> source = L_w
        :: else
        fi;
#ifndef NO_F5
        if
        :: source == 0 -> source = conf[d]
        :: else
        fi;
#endif
        if
        :: !restore[d] && MOVED(d) ->
            /* F13 (moved): the worker id refused at this start, kept out of the files */
#ifndef NO_F15M
            /* the lease's pending worker id taken at this start: its source's next (F15) */
            if
            :: L_ex && L_pen != 0 && L_pen == conf[d] -> source = L_pen
            :: else
            fi;
#endif
            if
            :: source != 0 && (fen[d] & BIT(source)) == 0 -> fen[d] = fen[d] | BIT(source); mvt[d] = 1
            :: else
            fi;
            mvw[d] = source; mvid[d] = L_id
        :: else ->
        if
        :: source != 0 -> fen[d] = fen[d] | BIT(source)
        :: else
        fi;
        if
        :: L_ex -> fen[d] = fen[d] | L_fen
        :: else
        fi;
#ifndef NO_F15
        /* the source's pending worker id, which it takes at its reload (F15) */
        if
        :: L_ex -> fen[d] = fen[d] | IDS(BIT(L_pen))
        :: else
        fi;
#endif
#ifndef NO_F9
        if
        :: source != 0 || (L_ex && IDS(L_fen | BIT(L_pen)) != 0) ->
            /* keep_fence */
            write_fence(d, source); write_lease(d, source); elsewhere[d] = 0
        :: else
        fi;
#endif
#ifndef NO_F7
        restore[d] = 1
#endif
        fi
    :: else
    fi;
    /* recovery: from a backup, the archive, as a standby, or after a crash */
    inrec[d] = bl[d] || rs[d] || ss[d] || wrw[d] != 0 || wrf[d] != 0;
    if
    :: !inrec[d] -> writer_starts(d)
    :: else
    fi
}

/* lease_redo (lease_wal.cpp), records with worker ids rw, fences rf, last worker id rl */
inline redo(d, rw, rf, rl) {
    if
    :: blocked[d] -> skip           /* the lease units only: no fence */
    :: !blocked[d] && restore[d] ->
        /* fence_replayed: the source's worker ids and fence (F8) */
#ifndef NO_F8
        hm = IDS(rw | rf);
#else
        hm = IDS(rf);
#endif
        grew = (hm & ~fen[d]) != 0;
        fen[d] = fen[d] | hm;
        if
        :: grew -> write_fence(d, rl); write_lease(d, rl); elsewhere[d] = 0
        :: !grew -> write_lease(d, rl); elsewhere[d] = 0   /* the lease rose */
        :: !grew -> skip                                   /* it did not */
        fi
    :: !blocked[d] && !restore[d] ->
        /* a standby, or crash recovery of this directory: the fence held is kept */
        grew = (IDS(rf) & ~fen[d]) != 0;
        fen[d] = fen[d] | IDS(rf);
        /* the worker id written: the record's, or a move's of this start, so
         * that the move goes on (its pending worker id taken: F15M) */
        hw = rl;
#ifndef NO_F15M
        if
        :: mvw[d] != 0 -> hw = mvw[d]
        :: else
        fi;
#endif
        if
        :: grew -> write_fence(d, hw); write_lease(d, hw)
        :: !grew && lpen[d] != pen[d] -> write_lease(d, hw)   /* the pending worker id replayed changed (F15) */
        :: !grew && lpen[d] == pen[d] -> write_lease(d, hw)
        :: !grew && lpen[d] == pen[d] -> skip
        fi
    fi
}

/* the operator's pair of directories that the environment cannot tell apart */
inline mark_same(a, b) {
    same[a] = same[a] | BIT(b) | same[b]; same[b] = same[b] | BIT(a)
}

/* reserve refuses a fenced worker id (F1) */
#ifdef NO_F1
#define FENCE_CHECK(d) 1
#else
#define FENCE_CHECK(d) ((fen[d] & BIT(weff[d])) == 0)
#endif

/* repair_lease (lease_file.cpp): a damaged lease cannot say whose it was (F11) */
inline repair(d) {
#ifndef NO_F11
    if
    :: weff[d] != 0 -> fen[d] = fen[d] | BIT(weff[d])
    :: else
    fi;
#endif
    if
    :: lwid[d] != 0 && (elsewhere[d] || restore[d]) -> fen[d] = fen[d] | BIT(lwid[d])
    :: else
    fi;
    if
    :: IDS(fen[d]) != 0 -> write_fence(d, weff[d])
    :: else
    fi;
    write_lease(d, weff[d]); blocked[d] = 0
}

/* the end of a standby's recovery at its promotion */
inline promote(d) {
    ss[d] = 0; tgt[d] = 0; rs[d] = 0; bl[d] = 0; wrw[d] = 0; wrf[d] = 0; inrec[d] = 0;
    writer_starts(d)
}

/* an id issued under worker id w by directory d: I1 */
inline issue(d) {
    hw = weff[d];
    he = 0;
    do
    :: he < D ->
        if
        :: he != d && ex[he] && (issued[hw] & BIT(he)) != 0 ->
            printf("ACT both issue under %d\n", hw);
#ifdef STRICT
            assert(false)
#else
            assert((same[d] & BIT(he)) != 0 || (same[he] & BIT(d)) != 0)
#endif
        :: else
        fi;
        he++
    :: else -> break
    od;
    issued[hw] = issued[hw] | BIT(d); issrun[d] = 1
}

/* copies: the files of s into t */
inline copy_lease_files(hs, ht) {
    lf[ht] = lf[hs]; lw[ht] = lw[hs]; lfen[ht] = lfen[hs]; lid[ht] = lid[hs]; lpen[ht] = lpen[hs];
    ff[ht] = ff[hs]; fw[ht] = fw[hs]; ffen[ht] = ffen[hs]; fid[ht] = fid[hs]; fpen[ht] = fpen[hs]
}
inline copy_wal_conf(hs, ht) {
    wrw[ht] = wrw[hs]; wrf[ht] = wrf[hs]; wlast[ht] = wlast[hs];
    conf[ht] = conf[hs]; guc[ht] = conf[hs]
}
inline copy_signals(hs, ht) {
    bl[ht] = bl[hs]; rs[ht] = rs[hs]; ss[ht] = ss[hs]; tgt[ht] = tgt[hs]; up[ht] = up[hs]
}
inline new_directory(hs, ht) {
    ex[ht] = 1; src[ht] = hs; ncop++; kern[ht] = kern[hs]; nm[ht] = nm[hs];
    demoted[ht] = 0; succ[ht] = NONE; same[ht] = 0; decided[ht] = 0
}
inline finish_running_copy() {
    bl[ht] = 0; rs[ht] = 0; ss[ht] = 0; tgt[ht] = 0; up[ht] = NONE;
    idn[ht] = IDENT(HOST(idn[hs]), REST(idn[hs]) / 16, ht, ht);
    new_directory(hs, ht); cpd = NONE
}
/* the worker id the files of s name: its lease's, or the fence's copy's standing in */
#define FILES_W(s) (lf[s] == OK -> lw[s] : (lf[s] == MISSING && ff[s] == OK -> fw[s] : 0))
/* whether the settings of s name the worker id its files and WAL name (A4):
 * not while a reload is pending (issue 47), not while running before its
 * lease writer started, and, stopped, not while its files name another worker
 * id than its settings: renumbered while stopped and not started since, or
 * started but stopped again before the end of its recovery (the worker id
 * takes effect there, record_worker_id), the listed undetectable pair */
#define SETTLED(hs) (conf[hs] == guc[hs] && (on[hs] -> (wst[hs] || LIVE_STANDBY(hs) && (FILES_W(hs) == 0 || FILES_W(hs) == conf[hs])) : (FILES_W(hs) == 0 || FILES_W(hs) == conf[hs])))

/* the operator's choice of a worker id no other node uses (nor used) */
#define CLASH(d, he, nw) ((he) != (d) && ((ex[he] && (conf[he] == (nw) || guc[he] == (nw))) || (issued[nw] & BIT(he)) != 0))
#define FREE(d, nw) (!CLASH(d, 0, nw) && !CLASH(d, 1, nw) && !CLASH(d, 2, nw))
/* the promoted successor of an old primary */
#define IS_SUCC(d) ((demoted[0] && succ[0] == (d)) || (demoted[1] && succ[1] == (d)) || (demoted[2] && succ[2] == (d)))

#ifdef UNDET_PROMOTE
#define UNDET_PROMOTE_ON 1
#else
#define UNDET_PROMOTE_ON 0
#endif
#ifdef UNDET_CLONE
#define UNDET_CLONE_ON 1
#else
#define UNDET_CLONE_ON 0
#endif
/* a file copy of a running server: its settings changed and reloaded while it
 * is copied, between pg_snowflake/ and pg_wal (either order) */
#ifdef KNOWN_47_CP_LEASE_FIRST
#define CHG_LEASE_FIRST 1
#else
#define CHG_LEASE_FIRST 0
#endif
#ifdef KNOWN_47_CP_WAL_FIRST
#define CHG_WAL_FIRST 1
#else
#define CHG_WAL_FIRST 0
#endif
#define RUNNING_SETTLED(hs) SETTLED(hs)
#define RELOAD_OK(d) (cpd == NONE || cps != (d) || (CHG_LEASE_FIRST && cpfirst == 0) || (CHG_WAL_FIRST && cpfirst == 1))
#ifdef UNDET_OFFLINE
#define STOPPED_SETTLED(hs) 1
#else
#define STOPPED_SETTLED(hs) SETTLED(hs)
#endif
/* the source's files name a worker id: it started once with snowflake (or is a copy of one that did) */
#ifdef KNOWN_NEVER
#define HAS_LEASE(s) 1
#else
#define HAS_LEASE(s) (lf[s] != MISSING || ff[s] != MISSING)
#endif
/* scenarios of the rules F3, F5 (NEVER_RESTORE) and F7, F8 (CP_NO_CHECKPOINT):
 * the code's rules hold, each of the rules removed does not */
#ifdef NEVER_RESTORE
#define NEVER_RESTORE_ON 1
#else
#define NEVER_RESTORE_ON 0
#endif
#ifdef CP_NO_CHECKPOINT
#define CKPT_OK(d) (cpd == NONE || cps != (d))
#else
#define CKPT_OK(d) 1
#endif
/* ... and the copy not stopped during its first recovery (a copy restarted
 * before it replayed its source's records replays them as its own: the
 * worker id they name is not fenced, KNOWN_47_CP_COPY_STOPPED) */
#if defined(CP_NO_CHECKPOINT) && !defined(KNOWN_47_CP_COPY_STOPPED)
#define STOP_OK(d) (!(restore[d] && inrec[d]))
#else
#define STOP_OK(d) 1
#endif
#ifdef UNDET_OFFLINE_STARTED
#undef FILES_W
#define FILES_W(s) 0
#endif
/* a worker-id change waiting for its reload, known to the running server
 * (F15: ALTER SYSTEM, or a hand edit the lease writer has polled) and
 * written into its lease and records: a copy may be taken */
#define PENDING_KNOWN(hs) (on[hs] && wst[hs] && conf[hs] != guc[hs] && pen[hs] == conf[hs] && (lf[hs] != OK || lpen[hs] == conf[hs]) && (ff[hs] != OK || fpen[hs] == conf[hs]))
#ifdef KNOWN_47
#define BACKUP_SETTLED(hs) 1
#else
#define BACKUP_SETTLED(hs) (SETTLED(hs) || PENDING_KNOWN(hs))
#endif
#ifdef KNOWN_47_REWIND
#define REWIND_SETTLED(hs) 1
#else
#define REWIND_SETTLED(hs) (SETTLED(hs) || PENDING_KNOWN(hs))
#endif

active proctype world() {
    ex[0] = 1; idn[0] = IDENT(0, 0, 0, 0); src[0] = NONE; conf[0] = 1; guc[0] = 1; kern[0] = 0; nm[0] = NONE;
    hi = 0;
    do
    :: hi < D -> succ[hi] = NONE; up[hi] = NONE; hi++
    :: else -> break
    od;
    do
#define d 0
#include "actions.pml"
#undef d
#define d 1
#include "actions.pml"
#undef d
#if D > 2
#define d 2
#include "actions.pml"
#undef d
#endif
    /* the second part of a file copy of a running server */
    :: atomic { cpd != NONE && cpfirst == 0 && RUNNING_SETTLED(cps) -> printf("ACT cp -a running: then pg_wal and settings %d\n", cpd);
        hs = cps; ht = cpd; copy_wal_conf(hs, ht); finish_running_copy(); ghost() }
    :: atomic { cpd != NONE && cpfirst == 1 -> printf("ACT cp -a running: then pg_snowflake %d\n", cpd);
        hs = cps; ht = cpd; copy_lease_files(hs, ht); finish_running_copy(); ghost() }
    od
}
