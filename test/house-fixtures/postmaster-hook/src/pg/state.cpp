// Hooks the postmaster runs too, wrapped at a level that would end it.
#include "edge.hpp"

namespace snowflake::pg {
int worker_id_setting = -1;
emit_log_hook_type previous_emit_log_hook = nullptr;

bool check_worker_id(int* newval, void** extra, GucSource source) { return *newval < 1024; }
void throttle(ErrorData* edata) { (void)edata; }

void define_settings() {
    DefineCustomIntVariable("snowflake.worker_id", "Sets this node's worker id.", nullptr, &worker_id_setting,
                            -1, -1, 1023, PGC_SIGHUP, 0, SNOWFLAKE_CALLBACK(check_worker_id, ERROR), nullptr, nullptr);
    previous_emit_log_hook = emit_log_hook;
    emit_log_hook = SNOWFLAKE_CALLBACK(throttle, FATAL);
}
}  // namespace snowflake::pg
