// What the rules allow, close to what they refuse: test/house passes it.
// (A comment may say planner_hook = bare_planner; or PG_FUNCTION_INFO_V1(f).)
#include "edge.hpp"

extern "C" {
PG_MODULE_MAGIC;
void _PG_init(void);
PGDLLEXPORT void snowflake_lease_worker_main(Datum argument);
}

namespace snowflake::pg {
shmem_startup_hook_type previous_shmem_startup_hook = nullptr;
int max_lead_setting = 1000;

void startup_shared_memory() {
    if (previous_shmem_startup_hook) previous_shmem_startup_hook();
}
void forget_writer_latch(int, Datum) {}
void lease_redo(XLogReaderState*) {}
void assign_max_lead(int, void*) {}
void lease_worker(Datum) {}

void init() {
    previous_shmem_startup_hook = shmem_startup_hook;
    shmem_startup_hook = SNOWFLAKE_CALLBACK(startup_shared_memory, FATAL);
    before_shmem_exit(SNOWFLAKE_CALLBACK(forget_writer_latch, FATAL), 0);
    DefineCustomIntVariable("snowflake.max_lead", "Sets how far ids may run ahead of the clock.", nullptr,
                            &max_lead_setting, 1000, 0, 3600000, PGC_SIGHUP, GUC_UNIT_MS, nullptr,
                            SNOWFLAKE_CALLBACK(assign_max_lead, LOG), nullptr);
    static const RmgrData rmgr = {
        .rm_name = "snowflake",
        .rm_redo = SNOWFLAKE_CALLBACK(lease_redo, PANIC),
    };
    RegisterCustomRmgr(kRmgrId, &rmgr);
}
}  // namespace snowflake::pg

SNOWFLAKE_FUNCTION(snowflake_id_span) { PG_RETURN_INT64(PG_GETARG_INT64(0) << 22); }

void _PG_init(void) { SNOWFLAKE_CALLBACK(snowflake::pg::init, FATAL)(); }

void snowflake_lease_worker_main(Datum argument) {
    SNOWFLAKE_CALLBACK(snowflake::pg::lease_worker, FATAL)(argument);
}
