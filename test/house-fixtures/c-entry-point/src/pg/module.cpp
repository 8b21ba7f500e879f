// C entry points that do more than one boundary call: the work before or
// after it runs outside the boundary.
#include "edge.hpp"

extern "C" {
PG_MODULE_MAGIC;
void _PG_init(void);
PGDLLEXPORT void snowflake_lease_worker_main(Datum argument);
PGDLLEXPORT void snowflake_registry_worker_main(Datum argument);
}

namespace snowflake::pg {
void init() {}
void lease_worker(Datum argument) { (void)argument; }
}  // namespace snowflake::pg

void _PG_init(void) {
    snowflake::pg::define_settings();
    SNOWFLAKE_CALLBACK(snowflake::pg::init, FATAL)();
}

void snowflake_lease_worker_main(Datum argument) { snowflake::pg::lease_worker(argument); }

void snowflake_registry_worker_main(Datum argument) {
    SNOWFLAKE_CALLBACK(snowflake::pg::lease_worker, FATAL)(argument);
    snowflake::pg::lease_worker(argument);
}
