// Layers without a cycle: module -> lease_writer -> lease_file -> state, and
// module -> state. test/house passes it.
namespace snowflake::pg {
int setting();
void register_lease_worker();
int init() {
    register_lease_worker();
    return setting();
}
}  // namespace snowflake::pg
