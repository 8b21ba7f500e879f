/*
 * The actions on directory d (fence.pml includes this once for each d): each
 * an atomic step whose guard is its first statement. For a copy, d is its
 * source.
 */

/* ---- the server ---- */
    :: atomic { ex[d] && !on[d] && cpd != d && !demoted[d] -> printf("ACT start %d\n", d);
        start(d); ghost() }
    :: atomic { UNDET_PROMOTE_ON && ex[d] && !on[d] && demoted[d] -> printf("ACT start without rewind (old primary) %d\n", d);
        mark_same(d, succ[d]); demoted[d] = 0;      /* an old primary started without pg_rewind */
        start(d); ghost() }
    :: atomic { on[d] && inrec[d] && !replayed[d] && (wrw[d] != 0 || wrf[d] != 0) -> printf("ACT replay own WAL %d\n", d);
        /* crash recovery, or a restore's replay of its WAL */
        redo(d, wrw[d], wrf[d], wlast[d]); replayed[d] = 1; ghost() }
    :: atomic { on[d] && inrec[d] && !LIVE_STANDBY(d) && (replayed[d] || (wrw[d] == 0 && wrf[d] == 0)) -> printf("ACT end of recovery %d\n", d);
        /* the end of recovery: backup_label renamed, signal files removed, a checkpoint */
        promote(d); ghost() }
    :: atomic { on[d] && inrec[d] && LIVE_STANDBY(d) && up[d] != NONE && on[up[d]] && !inrec[up[d]] -> printf("ACT standby replays primary record %d\n", d);
        /* a streaming standby replays its primary's lease record, its pending
         * worker id written into the standby's lease (F15) */
        hs = up[d];
        pen[d] = pen[hs];
        redo(d, BIT(weff[hs]), fen[hs], weff[hs]); ghost() }
    :: atomic { on[d] && !inrec[d] && !blocked[d] && weff[d] != 0 && (FENCE_CHECK(d)) &&
                (issued[weff[d]] & BIT(d)) == 0 -> printf("ACT issue %d\n", d);
        /* an id issued (reserve), the lease extended first (write_lease_once) */
        write_lease(d, weff[d]); log_lease(d); elsewhere[d] = 0;
        issue(d); ghost() }
    :: atomic { on[d] && !inrec[d] && (wrw[d] != 0 || wrf[d] != 0) && CKPT_OK(d) -> printf("ACT checkpoint %d\n", d);
        /* a checkpoint */
        wrw[d] = 0; wrf[d] = 0; ghost() }
    :: atomic { on[d] && CKPT_OK(d) && STOP_OK(d) -> printf("ACT clean stop %d\n", d);
        /* a clean shutdown: the lease shrinks (shrink_lease_at_shutdown), a checkpoint */
        if
        :: issrun[d] && !blocked[d] -> write_lease(d, weff[d])
        :: else
        fi;
        if
        :: !inrec[d] -> wrw[d] = 0; wrf[d] = 0
        :: else
        fi;
#ifdef MOVES
        /* F13R: the settings' files naming it otherwise (a rename given while
         * it ran), its lease its own: the lease file and the fence's copy
         * stamped with the new name (rename_at_shutdown), the last write */
        if
        :: !blocked[d] && mvw[d] == 0 && !elsewhere[d] && HOST(idn[d]) != EFF(d) ->
            rnm = rnm || d == 0;
#ifndef NO_F13R
            idn[d] = IDENT(EFF(d), 0, 0, 0) + REST(idn[d]);
            if
            :: lf[d] == OK -> lid[d] = idn[d]
            :: else
            fi;
#ifndef NO_F13RW
            if
            :: ff[d] == OK -> fid[d] = idn[d]
            :: else
            fi;
#endif
#endif
            skip
        :: else
        fi;
#endif
        on[d] = 0; ghost() }
    :: atomic { on[d] && STOP_OK(d) -> printf("ACT kill -9 %d\n", d);
        /* kill -9 (a rename given while it ran is not recorded: L13R holds
         * after a clean stop only) */
        on[d] = 0;
#ifdef MOVES
        rnm = rnm && d != 0;
#endif
        ghost() }

/* ---- the operator ---- */
    :: atomic { ex[d] && nren < NREN && cpd != d && RELOAD_OK(d) && conf[d] != 1 && FREE(d, 1) -> printf("ACT renumber to 1 %d\n", d); conf[d] = 1; nren++; ghost() }
    :: atomic { ex[d] && nren < NREN && cpd != d && RELOAD_OK(d) && conf[d] != 2 && FREE(d, 2) -> printf("ACT renumber to 2 %d\n", d); conf[d] = 2; nren++; ghost() }
    :: atomic { on[d] && wst[d] && !blocked[d] && nren < NREN && cpd != d && RELOAD_OK(d) && conf[d] != 1 && FREE(d, 1) -> printf("ACT ALTER SYSTEM to 1 %d\n", d);
        /* ALTER SYSTEM: the pending worker id recorded before the file is written (F15) */
        conf[d] = 1; nren++; pen[d] = 1; write_lease(d, weff[d]); write_fence(d, weff[d]); log_lease(d); ghost() }
    :: atomic { on[d] && wst[d] && !blocked[d] && nren < NREN && cpd != d && RELOAD_OK(d) && conf[d] != 2 && FREE(d, 2) -> printf("ACT ALTER SYSTEM to 2 %d\n", d);
        conf[d] = 2; nren++; pen[d] = 2; write_lease(d, weff[d]); write_fence(d, weff[d]); log_lease(d); ghost() }
    :: atomic { on[d] && wst[d] && !blocked[d] && conf[d] != guc[d] && pen[d] != conf[d] -> printf("ACT lease writer polls the settings %d\n", d);
        /* a hand edit seen at the lease writer's poll (F15) */
        pen[d] = conf[d]; write_lease(d, weff[d]); write_fence(d, weff[d]); log_lease(d); ghost() }
    :: atomic { on[d] && wst[d] && !blocked[d] && conf[d] == guc[d] && pen[d] != 0 -> printf("ACT lease writer polls the settings, change undone %d\n", d);
        /* the files name the worker id in effect again: nothing pending (F15) */
        pen[d] = 0; write_lease(d, weff[d]); write_fence(d, weff[d]); log_lease(d); ghost() }
    :: atomic { on[d] && guc[d] != conf[d] && RELOAD_OK(d) -> printf("ACT reload %d\n", d);
        /* a reload; the lease writer applies the worker id (apply_worker_id) */
        guc[d] = conf[d]; pen[d] = 0;
        if
        :: wst[d] -> weff[d] = guc[d]; record_worker_id(d)
        :: else
        fi; ghost() }
    :: atomic { on[d] && !inrec[d] && blocked[d] -> printf("ACT repair_lease %d\n", d);
        /* snowflake_repair_lease() */
        repair(d); ghost() }
    :: atomic { on[d] && !inrec[d] && !blocked[d] && weff[d] != 0 && (fen[d] & BIT(weff[d])) != 0 &&
                FREE(d, weff[d]) -> printf("ACT adopt_worker_id %d\n", d);
        /* snowflake_adopt_worker_id(), the source gone for good */
        fen[d] = fen[d] & ~BIT(weff[d]); decided[d] = decided[d] & ~BIT(weff[d]);
        mvw[d] = 0; mvt[d] = 0;     /* adopted under this host name: the move ends (F13) */
        write_lease(d, weff[d]); write_fence(d, weff[d]); ghost() }
#ifdef RO_RESTART
    :: atomic { d == 0 && nro < 1 && ex[d] && !on[d] && !demoted[d] && cpd != d && !ss[d] -> printf("ACT standby.signal, nothing to follow %d\n", d);
        /* the first directory started read-only with nothing to follow (an HA
         * manager's crash path: no leader known), then promoted; once */
        ss[d] = 1; tgt[d] = 0; up[d] = NONE; nro++; ghost() }
#endif
#ifdef MOVES
    :: atomic { d == 0 && ex[d] && !on[d] && nmov < 2 && cpd != d &&
                IDN_FREE(IDENT(nm[d] != NONE -> nm[d] : 1 - kern[d], 0, 0, 0) + REST(idn[d]), d) -> rnm = 0;
        printf("ACT moved to a host of another name %d\n", d);
        /* the same directory on a host of another name: a container recreated,
         * a pod rescheduled, a disk failed over (its snowflake.host_name, if
         * set, stays; no other directory has that identity: else the listed
         * undetectable pair of block clones under one name) */
        kern[d] = 1 - kern[d]; idn[d] = IDENT(EFF(d), 0, 0, 0) + REST(idn[d]); nmov++; ghost() }
    :: atomic { ex[d] && !on[d] && nmov < 2 && lf[d] == OK && lid[d] != idn[d] && REST(lid[d]) == REST(idn[d]) &&
                IDN_FREE(lid[d], d) && FREE(d, lw[d]) && FREE(d, conf[d]) -> printf("ACT host_name set to the lease's %d\n", d);
        /* snowflake.host_name set to the name the lease records, as the refusal
         * says, no other directory using the worker id it names nor the one
         * it is configured with (A3: a source renamed since runs under
         * another name; the refusal names its pending one, F15M) */
        nm[d] = HOST(lid[d]); idn[d] = lid[d]; nmov++; rnm = 0; ghost() }
    :: atomic { d == 0 && ex[d] && !on[d] && nmov < 2 && nm[d] != 2 && IDN_FREE(IDENT(2, 0, 0, 0) + REST(idn[d]), d) ->
        printf("ACT host_name set to a name that stays %d\n", d);
        /* snowflake.host_name given a name no host has, the server stopped */
        nm[d] = 2; idn[d] = IDENT(2, 0, 0, 0) + REST(idn[d]); nmov++; rnm = 0; ghost() }
    :: atomic { d == 0 && ex[d] && !on[d] && nmov < 2 && nm[d] != NONE && IDN_FREE(IDENT(kern[d], 0, 0, 0) + REST(idn[d]), d) ->
        printf("ACT host_name unset %d\n", d);
        nm[d] = NONE; idn[d] = IDENT(kern[d], 0, 0, 0) + REST(idn[d]); nmov++; rnm = 0; ghost() }
    :: atomic { d == 0 && on[d] && nmov < 2 && cpd != d && nm[d] != 2 && IDN_FREE(IDENT(2, 0, 0, 0) + REST(idn[d]), d) ->
        printf("ACT host_name set to a name that stays, running %d\n", d);
        /* snowflake.host_name given a name in the settings' files while the
         * server runs: it runs under its old name until it stops; a clean
         * stop records the rename (F13R) */
        nm[d] = 2; nmov++; ghost() }
#endif
    :: atomic { d != 0 && ex[d] && !on[d] && (cpd == NONE || cps != d) && !IS_SUCC(d) -> printf("ACT gone for good %d\n", d);
        /* the directory gone for good */
        ex[d] = 0; ghost() }
    :: atomic { d != 0 && ndmg < 1 && ex[d] && lf[d] == OK && cpd != d -> printf("ACT lease file damaged %d\n", d);
        /* a copy's lease file damaged */
        lf[d] = CORRUPT; ndmg++; ghost() }
    :: atomic { d != 0 && ndmg < 1 && ex[d] && lf[d] != MISSING && cpd != d -> printf("ACT lease file removed %d\n", d);
        /* a copy's lease file removed */
        lf[d] = MISSING; ndmg++; ghost() }

/* ---- promotion, pg_rewind ---- */
    :: atomic { on[d] && inrec[d] && LIVE_STANDBY(d) && up[d] == NONE -> printf("ACT promote, nothing streamed %d\n", d);
        /* a standby with nothing to stream from (no primary_conninfo, no
         * restore_command) promoted: pg_ctl promote beside its source */
        promote(d); ghost() }
    :: atomic { nfail < NFAIL && on[d] && inrec[d] && LIVE_STANDBY(d) && up[d] != NONE && !on[up[d]] && !demoted[up[d]] -> printf("ACT failover promote %d\n", d);
        /* failover: promoted with its primary stopped; it continues its primary's ids */
        hs = up[d]; demoted[hs] = 1; succ[hs] = d; nfail++;
        hi = 0;
        do
        :: hi <= W ->
            if
            :: (issued[hi] & BIT(hs)) != 0 -> issued[hi] = (issued[hi] & ~BIT(hs)) | BIT(d)
            :: else
            fi; hi++
        :: else -> break
        od;
        promote(d); ghost() }
    :: atomic { UNDET_PROMOTE_ON && on[d] && inrec[d] && LIVE_STANDBY(d) && up[d] != NONE &&
                (on[up[d]] || demoted[up[d]]) -> printf("ACT promote by hand / split brain %d\n", d);
        /* promoted by hand beside its running primary, or a second standby promoted (split brain) */
        hs = up[d]; mark_same(d, hs);
        if
        :: demoted[hs] -> mark_same(d, succ[hs])
        :: else
        fi;
        promote(d); ghost() }
    :: atomic { ex[d] && !on[d] && demoted[d] && on[succ[d]] && !inrec[succ[d]] && REWIND_SETTLED(succ[d]) -> printf("ACT pg_rewind from successor %d\n", d);
        /* pg_rewind of the old primary from the new one */
        hs = succ[d];
        copy_lease_files(hs, d); conf[d] = conf[hs]; guc[d] = conf[hs];
        wrw[d] = BIT(weff[hs]) | BIT(pen[hs]); wrf[d] = fen[hs]; wlast[d] = weff[hs];
        bl[d] = 1; rs[d] = 0; tgt[d] = 0; demoted[d] = 0; decided[d] = 0;
        if
        :: ss[d] = 1; up[d] = hs      /* then a standby of the new primary */
        :: ss[d] = 0; up[d] = NONE
        fi;
        ghost() }

/* ---- copies of d ---- */
    :: atomic { on[d] && (!inrec[d] || LIVE_STANDBY(d)) && ncop < D - 1 && cpd == NONE && BACKUP_SETTLED(d) -> printf("ACT pg_basebackup of %d\n", d);
        /* pg_basebackup; a restore of a base backup and the archive */
        ht = ncop + 1;
        copy_lease_files(d, ht); conf[ht] = conf[d]; guc[ht] = conf[d];
        idn[ht] = IDENT(HOST(idn[d]), REST(idn[d]) / 16, ht, ht);
        wrw[ht] = 0; wrf[ht] = 0; wlast[ht] = 0;
        bl[ht] = 1; rs[ht] = 0; ss[ht] = 0; tgt[ht] = 0; up[ht] = NONE;
        if
        :: !inrec[d] -> wrw[ht] = BIT(weff[d]) | BIT(pen[d]); wrf[ht] = fen[d]; wlast[ht] = weff[d]  /* a lease record in the backup's WAL */
        :: true
        fi;
        if
        :: true                             /* started as a primary, with its backup_label */
        :: HAS_LEASE(d) -> bl[ht] = 0        /* its backup_label removed */
        :: rs[ht] = 1                        /* point-in-time restore: recovery.signal */
        :: ss[ht] = 1; tgt[ht] = 1; up[ht] = d  /* standby.signal with a recovery target (restore_command: its source's archive) */
        :: ss[ht] = 1; up[ht] = d             /* a streaming standby (-R) */
        :: ss[ht] = 1                         /* standby.signal, nothing to stream from (F14) */
        fi;
        new_directory(d, ht); ghost() }
    :: atomic { ex[d] && !on[d] && ncop < D - 1 && cpd == NONE && STOPPED_SETTLED(d) && (HAS_LEASE(d) || NEVER_RESTORE_ON) -> printf("ACT cp -a stopped of %d\n", d);
        /* cp -a of a stopped server, a copy of a copy */
        ht = ncop + 1;
        copy_lease_files(d, ht); copy_wal_conf(d, ht); copy_signals(d, ht);
        if
        :: HAS_LEASE(d)
        :: !HAS_LEASE(d) ->     /* (NEVER_RESTORE) a base backup of it running without snowflake, restored */
            if
            :: bl[ht] = 1
            :: rs[ht] = 1
            :: ss[ht] = 1; tgt[ht] = 1; up[ht] = d
            fi
        fi;
        if
        :: idn[ht] = IDENT(HOST(idn[d]), REST(idn[d]) / 16, ht, ht)   /* on the same volume */
        :: idn[ht] = IDENT(HOST(idn[d]), ht, ht, 0)                   /* the root of another volume */
        fi;
#ifdef UNDET_RMDIR
        if
        :: lf[ht] = MISSING; ff[ht] = MISSING; mark_same(ht, d)        /* without pg_snowflake/ */
        :: true
        fi;
#endif
        new_directory(d, ht); ghost() }
    :: atomic { ex[d] && ncop < D - 1 && cpd == NONE && (SETTLED(d) || PENDING_KNOWN(d)) && HAS_LEASE(d) &&
                (UNDET_CLONE_ON || IDENT(1 - kern[d], 0, 0, 0) + REST(idn[d]) != lid[d]) -> printf("ACT clone on other host of %d\n", d);
        /* a block-level clone of the volume, of a running or a stopped server, on a host of another name
         * (under the name its lease still records, after a move: the listed undetectable pair) */
        ht = ncop + 1;
        copy_lease_files(d, ht); copy_wal_conf(d, ht); copy_signals(d, ht);
        new_directory(d, ht);
        /* (its snowflake.host_name unset: the kernel's name of its host) */
        kern[ht] = 1 - kern[d]; nm[ht] = NONE; idn[ht] = IDENT(kern[ht], 0, 0, 0) + REST(idn[d]);
        if
        :: idn[ht] == lid[d] -> mark_same(ht, d)
        :: else
        fi; ghost() }
    :: atomic { UNDET_CLONE_ON && ex[d] && ncop < D - 1 && cpd == NONE && SETTLED(d) && HAS_LEASE(d) -> printf("ACT clone same host of %d\n", d);
        /* a block-level clone mounted on the same host, or a host of the same name */
        ht = ncop + 1;
        copy_lease_files(d, ht); copy_wal_conf(d, ht); copy_signals(d, ht);
        new_directory(d, ht);
        idn[ht] = idn[d]; mark_same(ht, d); ghost() }
    :: atomic { on[d] && ncop < D - 1 && cpd == NONE && HAS_LEASE(d) && RUNNING_SETTLED(d) -> printf("ACT cp -a running (pg_snowflake first) of %d\n", d);
        /* cp -a / rsync of a running server: pg_snowflake/ first */
        ht = ncop + 1; cpd = ht; cps = d; cpfirst = 0; copy_lease_files(d, ht); ghost() }
    :: atomic { on[d] && ncop < D - 1 && cpd == NONE && RUNNING_SETTLED(d) && HAS_LEASE(d) -> printf("ACT cp -a running (pg_wal first) of %d\n", d);
        /* ... or pg_wal, global/ and the settings first */
        ht = ncop + 1; cpd = ht; cps = d; cpfirst = 1; copy_wal_conf(d, ht); ghost() }
