// snowflake in core's integer_ops families across pg_upgrade.
//
// PostgreSQL keeps a cross-type operator and an optional support function
// loose in a family (btadjustmembers, hashadjustmembers), and pg_dump never
// dumps a core family: --binary-upgrade writes only the members bound to a
// class (an internal dependency) into that class's definition. The install
// script binds ours to our classes, but the restore, running those
// definitions, leaves the cross-type ones loose again, so the next upgrade's
// dump would lose them. In pg_upgrade's new cluster (binary-upgrade mode),
// once our btree and hash classes of integer_ops are both restored, this hook
// runs snowflake_repair_integer_ops(), which binds them again (and adds any
// member an earlier upgrade lost). The restore loads this library with the
// first C function it creates, preloaded or not; an error fails pg_upgrade.
#include "edge.hpp"

extern "C" {
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
}

#include <cstring>

namespace {

ProcessUtility_hook_type previous_process_utility = nullptr;

// The repair's call in the extension's schema, once both its classes are in
// core's integer_ops; no row before that, or without the extension.
constexpr const char* kRepairCall = R"(
SELECT pg_catalog.format('SELECT %I.snowflake_repair_integer_ops()', n.nspname)
  FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
 WHERE e.extname = 'snowflake'
   AND (SELECT pg_catalog.count(DISTINCT c.opcmethod)
          FROM pg_catalog.pg_opclass c JOIN pg_catalog.pg_opfamily f ON f.oid = c.opcfamily
         WHERE f.opfname = 'integer_ops' AND f.opfnamespace = 'pg_catalog'::pg_catalog.regnamespace
           AND c.opcintype = pg_catalog.to_regtype(pg_catalog.format('%I.snowflake', n.nspname))) = 2)";

// CREATE OPERATOR CLASS ... FAMILY [pg_catalog.]integer_ops, as pg_dump writes ours.
bool creates_integer_class(const Node* statement) {
    if (!IsA(statement, CreateOpClassStmt)) return false;
    const List* family = reinterpret_cast<const CreateOpClassStmt*>(statement)->opfamilyname;
    return family != NIL && strcmp(strVal(llast(family)), "integer_ops") == 0;
}

void repair_restored_members() {
    SPI_connect();
    // not read-only: a new snapshot, after the class just created
    if (SPI_execute(kRepairCall, false, 1) != SPI_OK_SELECT)
        elog(ERROR, "could not look for snowflake's operator classes");
    if (SPI_processed == 1) {
        const char* call = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
        if (SPI_execute(call, false, 0) != SPI_OK_SELECT)
            elog(ERROR, "could not run snowflake_repair_integer_ops()");
    }
    SPI_finish();
}

void process_utility(PlannedStmt* statement, const char* query, bool read_only_tree,
                     ProcessUtilityContext context, ParamListInfo params,
                     QueryEnvironment* environment, DestReceiver* destination,
                     QueryCompletion* completion) {
    const bool restoring = IsBinaryUpgrade && creates_integer_class(statement->utilityStmt);
    (previous_process_utility != nullptr ? previous_process_utility : standard_ProcessUtility)(
        statement, query, read_only_tree, context, params, environment, destination, completion);
    if (restoring) repair_restored_members();
}

}  // namespace

namespace snowflake::pg {

void install_family_hook() {
    previous_process_utility = ProcessUtility_hook;
    ProcessUtility_hook = SNOWFLAKE_CALLBACK(process_utility, ERROR);
}

}  // namespace snowflake::pg
