// A cycle through three files (module -> lease_writer -> lease_file -> module);
// state.cpp, which all of them use, is in none.
namespace snowflake::pg {
int setting();
void register_lease_worker();
void shared_state_ready() { register_lease_worker(); }
int init() { return setting(); }
}  // namespace snowflake::pg
