/* A library that takes RM_EXPERIMENTAL_ID (128), as another extension
 * testing a custom WAL resource manager would (test/t/098_rmgr.pl). */
#include "postgres.h"

#include "access/xlog_internal.h"
#include "fmgr.h"

PG_MODULE_MAGIC;

void _PG_init(void);

static void squatter_redo(XLogReaderState *record) { (void) record; }
static void squatter_desc(StringInfo buf, XLogReaderState *record) { (void) buf; (void) record; }
static const char *squatter_identify(uint8 info) { (void) info; return NULL; }

static RmgrData squatter = {
    .rm_name = "squatter",
    .rm_redo = squatter_redo,
    .rm_desc = squatter_desc,
    .rm_identify = squatter_identify,
};

void _PG_init(void) { RegisterCustomRmgr(RM_EXPERIMENTAL_ID, &squatter); }
