// The module's start-up (the top of src/pg): settings, shared memory, the
// lease and its background workers, hooks.
#include "edge.hpp"
#include "lease_file.hpp"
#include "lease_wal.hpp"
#include "lease_writer.hpp"
#include "pending.hpp"
#include "registry.hpp"
#include "registry_client.hpp"
#include "registry_release.hpp"
#include "registry_settings.hpp"
#include "startup.hpp"
#include "upgrade.hpp"

extern "C" {
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void _PG_init(void);
}

#include <new>

namespace snowflake::pg {
namespace {

shmem_startup_hook_type previous_shmem_startup_hook = nullptr;
shmem_request_hook_type previous_shmem_request_hook = nullptr;

std::size_t shared_size() { return MAXALIGN(sizeof(SharedState)); }

void request_shared_memory() {
    if (previous_shmem_request_hook) previous_shmem_request_hook();
    RequestAddinShmemSpace(shared_size());
}

// At the postmaster's exit: the lease shrinks first (stamped with a rename's
// name: F13R), then the registry's grant is released, every id issued being
// below the shrunk lease.
void shut_down(int code, Datum) {
    SharedState* state = shared_state();
    const bool renamed = code == 0 && state != nullptr && rename_at_shutdown(*state);
    const std::int64_t used_until_ms = shrink_lease_at_shutdown(code, renamed);
    if (used_until_ms >= 0) release_registry_grant(*shared_state(), used_until_ms);
}

void startup_shared_memory() {
    if (previous_shmem_startup_hook) previous_shmem_startup_hook();
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    bool found;
    auto* shared = static_cast<SharedState*>(ShmemInitStruct("snowflake", shared_size(), &found));
    set_shared_state(shared);
    if (!found) {
        new (shared) SharedState();  // plain data and atomics, value-initialized
        shared->epoch_unix_ms = epoch_unix_ms();
        shared->lease_epoch_unix_ms = epoch_unix_ms();
        shared->layout = node_layout();
        shared->lease_layout = node_layout();
        shared->blocked = Blocked::No;
        ConditionVariableInit(&shared->lease_written);
        shared->registry.previous = kNoWorker;
        shared->lease_worker_id = kNoWorker;
        shared->moved_worker = kNoWorker;
        shared->pending_worker = kNoWorker;
        ConditionVariableInit(&shared->settings_free);
        shared->registry.worker_id = kNoWorker;
        SpinLockInit(&shared->registry.lock);
        decide_at_start(*shared);
    }
    LWLockRelease(AddinShmemInitLock);
    if (!IsUnderPostmaster) on_shmem_exit(SNOWFLAKE_CALLBACK(shut_down, FATAL), 0);
}

void init() {
    // the registry before the worker id: they are exclusive
    define_registry_settings(process_shared_preload_libraries_in_progress ? PGC_POSTMASTER : PGC_SIGHUP);
    define_settings();
    define_public_key_setting();
    MarkGUCPrefixReserved("snowflake");
    install_estimate_hook();  // estimates on snowflake columns, also when not preloaded
    mark_if_upgrading();      // also when loaded by pg_upgrade's check of libraries
    install_family_hook();    // also when loaded by pg_upgrade's restore of a C function
    if (!process_shared_preload_libraries_in_progress) return;
    previous_shmem_request_hook = shmem_request_hook;
    shmem_request_hook = SNOWFLAKE_CALLBACK(request_shared_memory, FATAL);
    previous_shmem_startup_hook = shmem_startup_hook;
    shmem_startup_hook = SNOWFLAKE_CALLBACK(startup_shared_memory, FATAL);
    register_lease_wal();
    register_lease_worker();
    install_pending_hook();
    if (registry_mode() && !IsBinaryUpgrade) {  // pg_upgrade's servers claim nothing
        make_incarnation();
        register_registry_worker();
    }
    install_log_throttle();
}

}  // namespace
}  // namespace snowflake::pg

void _PG_init(void) { SNOWFLAKE_CALLBACK(snowflake::pg::init, FATAL)(); }
