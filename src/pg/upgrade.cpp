// pg_upgrade's marks (upgrade.hpp).
#include "upgrade.hpp"

#include "lease_file.hpp"

extern "C" {
#include "miscadmin.h"
#include "parser/analyze.h"
#include "utils/builtins.h"
}

#include <sys/stat.h>

namespace snowflake::pg {
namespace {

// Removes the upgrade mark durably; false, reported at LOG, when that fails.
bool forget_upgrade() {
    if (remove_durably(kUpgradedPath)) return true;
    ereport(LOG, (errcode_for_file_access(), errmsg("snowflake: could not remove file \"%s\": %m", kUpgradedPath)));
    return false;
}

// At start-up in a data directory pg_upgrade made: the lease copied in from
// the old data directory (written there, so not this directory's) is taken
// as this directory's own, without the clone fence: the upgrade replaces the
// old cluster. Without it, no id is issued.
void carry_upgraded_lease(SharedState& state, const Lease& lease, bool exists) {
    if (state.blocked != Blocked::No) return;  // refused for another reason, said already
    if (!exists || !state.lease_elsewhere) {
        state.blocked = Blocked::LeaseNotCarried;
        ereport(LOG, (errmsg("snowflake: this data directory was made by pg_upgrade without the old "
                             "data directory's lease; no id is issued"),
                      errhint("%s", kCarryLeaseHint)));
        return;
    }
    // The mark goes first: a crash before the lease is rewritten leaves a
    // lease written elsewhere and no mark, which the clone fence refuses.
    if (!forget_upgrade()) {
        state.blocked = Blocked::LeaseNotCarried;
        return;
    }
    state.lease_elsewhere = false;
    (void)write_lease(lease_of(state, units_of(state, lease.lease_ms), units_of(state, lease.clock_ms)), LOG);
    ereport(LOG, (errmsg("snowflake: the lease of the data directory this one was upgraded from is "
                         "carried over; ids continue above those issued before the upgrade")));
}

// Writes a mark file durably (also in _PG_init); FATAL when that fails.
void write_mark(const char* path, const char* text, const char* why) {
    if (!write_durably(path, text, strlen(text)))
        ereport(FATAL, (errcode_for_file_access(), errmsg("could not write file \"%s\": %m", path),
                        errdetail("%s", why)));
}

post_parse_analyze_hook_type previous_post_parse_analyze_hook = nullptr;
bool marked_away = false;  // by this backend

// In pg_upgrade's old cluster: once its schema is being dumped, the data
// directory is marked: the new one continues its ids. pg_upgrade runs
// pg_dumpall and pg_dump with --quote-all-identifiers, which set
// quote_all_identifiers in their sessions, and only in a real upgrade (never
// for --check, and none of its own sessions set it).
void mark_old_when_dumped(ParseState* parse, Query* query, JumbleStateArg jumble) {
    if (previous_post_parse_analyze_hook) previous_post_parse_analyze_hook(parse, query, jumble);
    if (!quote_all_identifiers || marked_away) return;
    struct stat st;
    // another of pg_upgrade's parallel pg_dump sessions marked it already
    if (stat(kUpgradedAwayPath, &st) == 0) {
        marked_away = true;
        return;
    }
    write_mark(kUpgradedAwayPath,
               "This data directory was upgraded by pg_upgrade: its ids continue in the new data\n"
               "directory, and snowflake issues none here. If the upgrade was abandoned and the new\n"
               "cluster never issued an id, remove this file.\n",
               "In pg_upgrade's old data directory, snowflake marks that the new one continues its ids.");
    marked_away = true;
}

}  // namespace

void mark_if_upgrading() {
    if (!IsBinaryUpgrade) return;
    struct stat st;
    // pg_upgrade keeps its output in the new data directory while it runs
    if (stat("pg_upgrade_output.d", &st) != 0 || !S_ISDIR(st.st_mode)) {
        // the old cluster: marked when pg_upgrade dumps it (only if preloaded)
        if (process_shared_preload_libraries_in_progress) {
            previous_post_parse_analyze_hook = post_parse_analyze_hook;
            post_parse_analyze_hook = SNOWFLAKE_CALLBACK(mark_old_when_dumped, FATAL);
        }
        return;
    }
    if (stat(kUpgradedPath, &st) == 0) return;
    write_mark(kUpgradedPath,
               "This data directory was made by pg_upgrade. Copy pg_snowflake/lease from the old data\n"
               "directory into this directory's pg_snowflake before starting the server; until then\n"
               "snowflake issues no id.\n",
               "In pg_upgrade's new data directory, snowflake marks that the old data directory's "
               "lease must be carried over.");
}

void check_upgrade_marks(SharedState& state, const Lease& lease, bool exists) {
    if (IsBinaryUpgrade) return;
    struct stat st;
    if (stat(kUpgradedPath, &st) == 0) carry_upgraded_lease(state, lease, exists);
    if (state.blocked == Blocked::No && stat(kUpgradedAwayPath, &st) == 0) {
        state.blocked = Blocked::UpgradedAway;
        ereport(LOG, (errmsg("snowflake: this data directory was upgraded by pg_upgrade; no id is issued"),
                      errhint("%s", kUpgradedAwayHint)));
    }
}

}  // namespace snowflake::pg
