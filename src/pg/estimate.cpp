// Row estimates on snowflake columns, as for bigint.
//
// PostgreSQL interpolates within a histogram bucket only for the types it
// knows: convert_to_scalar() (selfuncs.c) switches on the type of the constant
// and on the exposed type of the column. For any other type it takes the
// middle of the bucket, and a window narrower than a bucket collapses to one
// row. Our operators keep PostgreSQL's own estimators (scalarltsel & co.,
// which clauselist_selectivity() also pairs into ranges), and two small
// adjustments give them what they need:
//   - a statistics hook shows a snowflake column to the estimators as bigint
//     (vartype; the statistics, index and operator are untouched), and
//   - the comparisons' planner support rewrites a comparison with a
//     snowflake constant into the same comparison with a bigint constant
//     (snowflake < snowflake becomes snowflake < bigint, our own operator;
//     bigint < snowflake becomes core's bigint < bigint); a bound computed at
//     run time is relabeled to bigint likewise.
// The support function is called while the planner simplifies the query,
// before any estimate, so it also loads this library where it is not preloaded.
#include "edge.hpp"

extern "C" {
#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_language_d.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"
}

#include <cstring>

namespace {

get_relation_stats_hook_type previous_relation_stats_hook = nullptr;

// One remembered answer to "is this type snowflake?"; forgotten on any change to pg_type.
Oid remembered_type = InvalidOid;
bool remembered_is_snowflake = false;

void forget_type(Datum, snowflake::pg::SyscacheId, uint32) { remembered_type = InvalidOid; }

bool is_core_integer(Oid type) { return type == INT2OID || type == INT4OID || type == INT8OID; }

// Our type is the one whose input function is this library's snowflake_in.
bool is_snowflake_type(Oid type) {
    if (type < FirstNormalObjectId) return false;
    if (type == remembered_type) return remembered_is_snowflake;
    bool ours = false;
    HeapTuple type_tuple = SearchSysCache1(TYPEOID, ObjectIdGetDatum(type));
    if (HeapTupleIsValid(type_tuple)) {
        const Oid input = reinterpret_cast<Form_pg_type>(GETSTRUCT(type_tuple))->typinput;
        ReleaseSysCache(type_tuple);
        HeapTuple proc_tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(input));
        if (HeapTupleIsValid(proc_tuple)) {
            bool src_null = true, bin_null = true;
            const Datum src = SysCacheGetAttr(PROCOID, proc_tuple, Anum_pg_proc_prosrc, &src_null);
            const Datum bin = SysCacheGetAttr(PROCOID, proc_tuple, Anum_pg_proc_probin, &bin_null);
            ours = reinterpret_cast<Form_pg_proc>(GETSTRUCT(proc_tuple))->prolang == ClanguageId &&
                   !src_null && !bin_null &&
                   strcmp(TextDatumGetCString(src), "snowflake_in") == 0 &&
                   strcmp(TextDatumGetCString(bin), "$libdir/snowflake") == 0;
            ReleaseSysCache(proc_tuple);
        }
    }
    remembered_type = type;
    remembered_is_snowflake = ours;
    return ours;
}

// Statistics are found as usual; a snowflake column is only shown as bigint.
bool relation_stats(PlannerInfo* root, RangeTblEntry* rte, AttrNumber attnum,
                    VariableStatData* vardata) {
    const bool found =
        previous_relation_stats_hook != nullptr &&
        previous_relation_stats_hook(root, rte, attnum, vardata);
    if (vardata->vartype == vardata->atttype && is_snowflake_type(vardata->vartype))
        vardata->vartype = INT8OID;
    return found;
}

// A support function's "no change": a null pointer (typed, as PostgreSQL 19's
// PointerGetDatum() takes no nullptr in C++).
Datum unchanged() { return PointerGetDatum(static_cast<Node*>(nullptr)); }

}  // namespace

namespace snowflake::pg {

void install_estimate_hook() {
    previous_relation_stats_hook = get_relation_stats_hook;
    get_relation_stats_hook = SNOWFLAKE_CALLBACK(relation_stats, ERROR);
    CacheRegisterSyscacheCallback(TYPEOID, forget_type, 0);
}

}  // namespace snowflake::pg

// snowflake OP snowflake-constant -> snowflake OP bigint-constant (and mirrored).
SNOWFLAKE_FUNCTION(snowflake_comparison_support) {
    Node* request = reinterpret_cast<Node*>(PG_GETARG_POINTER(0));
    if (!IsA(request, SupportRequestSimplify)) return unchanged();
    FuncExpr* call = reinterpret_cast<SupportRequestSimplify*>(request)->fcall;
    if (list_length(call->args) != 2) return unchanged();
    Node* args[2] = {static_cast<Node*>(linitial(call->args)),
                     static_cast<Node*>(lsecond(call->args))};
    Oid types[2] = {exprType(args[0]), exprType(args[1])};
    bool changed = false;
    for (int i = 0; i < 2; ++i) {
        if (is_core_integer(types[i])) continue;
        if (IsA(args[i], Const)) {
            Const* retyped = static_cast<Const*>(copyObjectImpl(args[i]));
            retyped->consttype = INT8OID;
            retyped->consttypmod = -1;
            args[i] = reinterpret_cast<Node*>(retyped);
        } else if (!contain_var_clause(args[i]) && !contain_volatile_functions(args[i])) {
            // a bound computed at run time, such as snowflake_from_timestamp(t)::snowflake
            args[i] = reinterpret_cast<Node*>(makeRelabelType(
                reinterpret_cast<Expr*>(args[i]), INT8OID, -1, InvalidOid, COERCE_IMPLICIT_CAST));
        } else {
            continue;
        }
        types[i] = INT8OID;
        changed = true;
    }
    if (!changed) return unchanged();

    // The operator of the new types, in the schema of the one being simplified.
    const Oid current = get_func_namespace(call->funcid);
    const char* name = get_func_name(call->funcid);
    const char* op = name == nullptr                        ? nullptr
                     : strcmp(name, "_snowflake_eq") == 0 ? "="
                     : strcmp(name, "_snowflake_lt") == 0 ? "<"
                     : strcmp(name, "_snowflake_le") == 0 ? "<="
                     : strcmp(name, "_snowflake_gt") == 0 ? ">"
                     : strcmp(name, "_snowflake_ge") == 0 ? ">="
                                                          : nullptr;
    if (op == nullptr) return unchanged();
    // Between two core integers the operator is core's (a bigint column
    // compared with a snowflake constant then also uses its index); otherwise
    // ours. A snowflake = stays as it is: it is the one that merges
    // equivalence classes.
    const bool core = is_core_integer(types[0]) && is_core_integer(types[1]);
    if (!core && strcmp(op, "=") == 0) return unchanged();
    const Oid operator_oid = OpernameGetOprid(
        list_make2(makeString(core ? pstrdup("pg_catalog") : get_namespace_name(current)),
                   makeString(pstrdup(op))),
        types[0], types[1]);
    if (!OidIsValid(operator_oid)) return unchanged();
    OpExpr* clause = reinterpret_cast<OpExpr*>(
        make_opclause(operator_oid, BOOLOID, false, reinterpret_cast<Expr*>(args[0]),
                      reinterpret_cast<Expr*>(args[1]), InvalidOid, call->inputcollid));
    clause->opfuncid = get_opcode(operator_oid);
    clause->location = call->location;
    PG_RETURN_POINTER(clause);
}
