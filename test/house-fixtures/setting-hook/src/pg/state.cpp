// Settings whose check, assign and show hooks are bare functions.
#include "edge.hpp"

namespace snowflake::pg {
int worker_id_setting = -1;
int max_lead_setting = 1000;
char* epoch_setting = nullptr;

bool check_worker_id(int* newval, void** extra, GucSource source) { return *newval < 1024; }
void assign_max_lead(int newval, void* extra) { (void)newval, (void)extra; }
const char* show_epoch() { return epoch_setting; }

void define_settings() {
    DefineCustomIntVariable("snowflake.worker_id", "Sets this node's worker id.", nullptr, &worker_id_setting,
                            -1, -1, 1023, PGC_SIGHUP, 0, check_worker_id, nullptr, nullptr);
    DefineCustomIntVariable("snowflake.max_lead", "Sets how far ids may run ahead of the clock.", nullptr,
                            &max_lead_setting, 1000, 0, 3600000, PGC_SIGHUP, GUC_UNIT_MS, nullptr,
                            assign_max_lead, nullptr);
    DefineCustomStringVariable("snowflake.epoch", "Sets the epoch.", nullptr, &epoch_setting,
                               "2024-01-01 00:00:00+00", PGC_POSTMASTER, 0, nullptr, nullptr, show_epoch);
}
}  // namespace snowflake::pg
