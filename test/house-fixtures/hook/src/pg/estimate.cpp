// A hook given a bare function: an exception in it would unwind through PostgreSQL.
#include "edge.hpp"

namespace snowflake::pg {
get_relation_stats_hook_type previous_relation_stats_hook = nullptr;

bool relation_stats(PlannerInfo* root, RangeTblEntry* rte, AttrNumber attnum, VariableStatData* vardata) {
    return previous_relation_stats_hook != nullptr && previous_relation_stats_hook(root, rte, attnum, vardata);
}

void install_estimate_hook() {
    previous_relation_stats_hook = get_relation_stats_hook;
    get_relation_stats_hook = relation_stats;
}
}  // namespace snowflake::pg
