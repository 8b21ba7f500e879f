// A WAL resource manager whose redo is a bare function: an exception in
// replay would unwind through the startup process.
#include "edge.hpp"

namespace snowflake::pg {
void lease_redo(XLogReaderState* record) { (void)record; }
void lease_desc(StringInfo buffer, XLogReaderState* record) { (void)buffer, (void)record; }
const char* lease_identify(uint8 info) { return info == 0 ? "LEASE" : nullptr; }

void register_lease_wal() {
    static const RmgrData rmgr = {
        .rm_name = "snowflake",
        .rm_redo = lease_redo,
        .rm_desc = SNOWFLAKE_CALLBACK(lease_desc, ERROR),
        .rm_identify = SNOWFLAKE_CALLBACK(lease_identify, ERROR),
    };
    RegisterCustomRmgr(kRmgrId, &rmgr);
}
}  // namespace snowflake::pg
