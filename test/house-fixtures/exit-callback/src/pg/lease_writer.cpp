// Exit callbacks given bare functions, one of each kind.
#include "edge.hpp"

namespace snowflake::pg {
void forget_writer_latch(int code, Datum argument) { (void)code, (void)argument; }

void start_writer() {
    before_shmem_exit(forget_writer_latch, 0);
    on_shmem_exit(&forget_writer_latch, 0);
    on_proc_exit(SNOWFLAKE_CALLBACK(forget_writer_latch, FATAL), 0);
    on_proc_exit(forget_writer_latch, Int32GetDatum(1));
}
}  // namespace snowflake::pg
