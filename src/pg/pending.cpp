// A worker-id change waiting for its reload (pending.hpp).
#include "pending.hpp"

#include "lease_write.hpp"

extern "C" {
#include "access/xlog.h"
#include "nodes/parsenodes.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "pgstat.h"
#include "tcop/utility.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/memutils.h"
}

namespace snowflake::pg {
namespace {

constexpr char kWorkerIdSetting[] = "snowflake.worker_id";
ProcessUtility_hook_type previous_process_utility = nullptr;

// A worker id as a setting gives it (kNoWorker: -1, unset); false when it is
// not a whole number in range (the setting's own check refuses it).
bool worker_of(const char* text, std::uint32_t& worker) {
    int value = 0;
    if (text == nullptr || !parse_int(text, &value, 0, nullptr) || value < -1 ||
        value > static_cast<int>(kMaxAnyWorker))
        return false;
    worker = value < 0 ? kNoWorker : static_cast<std::uint32_t>(value);
    return true;
}

// The value the settings' files give `setting`: postgresql.conf and what it
// includes, then, `with_auto`, postgresql.auto.conf, the last line naming it
// winning, as a reload reads them, copied into `value` ("" when none names
// it); false when a file cannot be read or parsed (a reload would refuse it
// too) or the value does not fit in `size` bytes.
bool setting_in_files(const char* setting, bool with_auto, char* value, std::size_t size) {
    MemoryContext files = AllocSetContextCreate(CurrentMemoryContext, "snowflake settings files", ALLOCSET_SMALL_SIZES);
    MemoryContext caller = MemoryContextSwitchTo(files);
    ConfigVariable *head = nullptr, *tail = nullptr;
    bool ok = ParseConfigFile(ConfigFileName, true, nullptr, 0, 0, DEBUG1, &head, &tail) &&
              (!with_auto || ParseConfigFile(PG_AUTOCONF_FILENAME, false, nullptr, 0, 0, DEBUG1, &head, &tail));
    const char* last = "";  // a reload takes the last line, whatever the ones before say
    for (ConfigVariable* item = head; ok && item != nullptr; item = item->next)
        if (pg_strcasecmp(item->name, setting) == 0) last = item->value;
    ok = ok && strlcpy(value, last, size) < size;
    MemoryContextSwitchTo(caller);
    MemoryContextDelete(files);
    return ok;
}

// The worker id the settings' files name (kNoWorker: none); false as
// setting_in_files, or when it is not one.
bool worker_in_files(bool with_auto, std::uint32_t& worker) {
    char value[32];
    worker = kNoWorker;
    return setting_in_files(kWorkerIdSetting, with_auto, value, sizeof value) &&
           (value[0] == '\0' || worker_of(value, worker));
}


// Whether this server records a pending worker id: a primary, generating (a
// standby writes no WAL; it takes its settings' worker id at its promotion).
// Also under a registry: a snowflake.worker_id the files name there is the
// source switched, taken at the next start (test/t/059_pending_source.pl).
bool records(const SharedState& state) {
    return state.blocked == Blocked::No && !RecoveryInProgress();
}

// Records `files`, the worker id the settings' files name, as pending when
// another is in effect (or nothing pending when it is the one in effect): in
// the lease, its fence's copy and its WAL record, written at once. False when
// that write failed (the record as it was). Called holding settings_busy.
bool record_pending(SharedState& state, std::uint32_t files) {
    const std::uint32_t in_effect = worker_in_effect(state.generator);
    const std::uint32_t pending = files == in_effect ? kNoWorker : files;
    if (pending == state.pending_worker.load()) return true;
    if (!rewrite_lease_pending(state, pending)) return false;
    char in_effect_text[16] = "none";  // (not palloc'd: the lease writer's memory lives as long as it)
    if (in_effect != kNoWorker) snprintf(in_effect_text, sizeof in_effect_text, "%u", in_effect);
    if (pending != kNoWorker && registry_mode())
        ereport(LOG, (errmsg("snowflake: worker id %u waits for a restart of the server, whose settings name it "
                             "in place of the registry", pending),
                      errdetail("Worker id %s, granted by the registry, is in effect until then. A copy of this data "
                                "directory taken before the restart refuses worker id %u, as it refuses the one in "
                                "effect.", in_effect_text, pending)));
    else if (pending != kNoWorker)
        ereport(LOG, (errmsg("snowflake: worker id %u waits for a reload of the settings, which name it", pending),
                      errdetail("Worker id %s is in effect until then. A copy of this data directory taken "
                                "before the reload refuses worker id %u, as it refuses the one in effect.",
                                in_effect_text, pending)));
    return true;
}

// settings_busy: one process at a time records a change of the settings'
// files, given back at its exit too (a FATAL error or proc_exit() runs no
// PG_FINALLY).
void release_settings(SharedState& state) {
    state.settings_busy.store(0);
    ConditionVariableBroadcast(&state.settings_free);
}

void release_settings_at_exit(int, Datum) {
    SharedState* state = shared_state();
    if (state != nullptr && state->settings_busy.load() == MyProcPid) release_settings(*state);
}

bool take_settings(SharedState& state) {
    static bool registered = false;
    if (!registered) {
        before_shmem_exit(SNOWFLAKE_CALLBACK(release_settings_at_exit, FATAL), 0);
        registered = true;
    }
    std::int32_t idle = 0;
    return state.settings_busy.compare_exchange_strong(idle, MyProcPid);
}

// Waits for another change being recorded, interruptibly: cancel and
// statement_timeout end the wait.
void hold_settings(SharedState& state) {
    ConditionVariablePrepareToSleep(&state.settings_free);
    while (!take_settings(state)) (void)ConditionVariableTimedSleep(&state.settings_free, 100, PG_WAIT_EXTENSION);
    ConditionVariableCancelSleep();
}

// ALTER SYSTEM SET, RESET or SET DEFAULT of snowflake.worker_id, or RESET
// ALL: its statement, else null.
VariableSetStmt* alters_worker_id(const Node* statement) {
    if (!IsA(statement, AlterSystemStmt)) return nullptr;
    VariableSetStmt* set = reinterpret_cast<const AlterSystemStmt*>(statement)->setstmt;
    const bool ours = set->kind == VAR_RESET_ALL || (set->name != nullptr && pg_strcasecmp(set->name, kWorkerIdSetting) == 0);
    // (a role that may not change it changes nothing: the statement fails)
    const bool may = ours && (superuser() || (set->kind != VAR_RESET_ALL &&
                                              pg_parameter_aclcheck(kWorkerIdSetting, GetUserId(),
                                                                    ACL_ALTER_SYSTEM) == ACLCHECK_OK));
    return may ? set : nullptr;
}

// The worker id the files name once `set` has run: its value, or, reset,
// postgresql.conf's (and its includes'), if any; false when not known.
bool worker_after(VariableSetStmt* set, std::uint32_t& after) {
    return set->kind == VAR_SET_VALUE ? worker_of(ExtractSetVariableArgs(set), after) : worker_in_files(false, after);
}

// ALTER SYSTEM changing snowflake.worker_id: the worker id it leaves pending
// recorded before postgresql.auto.conf is written (an ERROR, and the file
// unchanged, when that fails), then what the files name once it is. Changes
// of the files are recorded one at a time (settings_busy), so that the record
// never names an older one than the files. No LWLock is held: the waits (for
// another ALTER SYSTEM, for the writer's place) end by cancel and
// statement_timeout, and a wait ended so changes nothing.
void process_utility(PlannedStmt* statement, const char* query, bool read_only_tree, ProcessUtilityContext context,
                     ParamListInfo params, QueryEnvironment* environment, DestReceiver* destination,
                     QueryCompletion* completion) {
    SharedState* state = shared_state();
    VariableSetStmt* set = state != nullptr && records(*state) ? alters_worker_id(statement->utilityStmt) : nullptr;
    const ProcessUtility_hook_type next =
        previous_process_utility != nullptr ? previous_process_utility : standard_ProcessUtility;
    if (set == nullptr) {
        next(statement, query, read_only_tree, context, params, environment, destination, completion);
        return;
    }
    hold_settings(*state);
    PG_TRY();
    {
        std::uint32_t after = kNoWorker;
        if (worker_after(set, after) && !record_pending(*state, after))
            ereport(ERROR, (errcode(ERRCODE_IO_ERROR),
                            errmsg("could not record the worker id this ALTER SYSTEM leaves pending in the "
                                   "snowflake lease file"),
                            errdetail("The settings were not changed: a copy of this data directory taken "
                                      "before their reload would not know worker id %u is its source's.", after),
                            errhint("The server log says why the lease file could not be written.")));
        next(statement, query, read_only_tree, context, params, environment, destination, completion);
        std::uint32_t files = kNoWorker;
        if (worker_in_files(true, files) && !record_pending(*state, files))
            ereport(WARNING, (errmsg("could not record the worker id the settings now name in the snowflake "
                                     "lease file"),
                              errdetail("The lease writer tries again within a second.")));
    }
    PG_FINALLY();
    {
        release_settings(*state);
    }
    PG_END_TRY();
}

}  // namespace

void install_pending_hook() {
    previous_process_utility = ProcessUtility_hook;
    ProcessUtility_hook = SNOWFLAKE_CALLBACK(process_utility, ERROR);
}

void poll_pending_worker(SharedState& state) {
    // (an ALTER SYSTEM in progress records what the files name when it ends:
    // the lease writer does not wait for it)
    if (!records(state) || !take_settings(state)) return;
    std::uint32_t files = kNoWorker;
    if (worker_in_files(true, files)) (void)record_pending(state, files);
    release_settings(state);
}

bool rename_at_shutdown(SharedState& state) {
    char next[kHostNameMax + 1];
    if (!state.names_from_files || state.blocked != Blocked::No || state.moved_worker.load() != kNoWorker ||
        state.lease_elsewhere.load() || !name_in_files(next) || std::strcmp(next, server_host_name()) == 0)
        return false;
    strlcpy(state.renaming_to, next, sizeof state.renaming_to);
    return true;
}

bool name_in_files(char* name) {
    char value[kHostNameMax + 2];  // (one more: a longer name does not fit, and is refused)
    if (!setting_in_files("snowflake.host_name", true, value, sizeof value)) return false;
    strlcpy(name, value[0] != '\0' ? value : kernel_host_name(), kHostNameMax + 1);
    return recordable_host_name(name);
}

}  // namespace snowflake::pg
