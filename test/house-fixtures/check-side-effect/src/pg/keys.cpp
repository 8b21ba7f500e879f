// A check hook that writes a file through a helper (the bindings of
// public.cpp once did): PostgreSQL runs check hooks for values it never assigns.
#include "edge.hpp"

namespace snowflake::pg {
char* key_file_setting = nullptr;

bool write_bindings(const char* path) { return path != nullptr; }
bool bind_keys(const char* path) { return write_bindings(path); }
bool check_key_file(char** newval, void** extra, GucSource source) { return bind_keys(*newval); }
void assign_key_file(const char* newval, void* extra) { (void)newval; }

void define_settings() {
    DefineCustomStringVariable("snowflake.public_key_file", "Names the key file.", nullptr, &key_file_setting,
                               "", PGC_SIGHUP, 0, SNOWFLAKE_CALLBACK(check_key_file, LOG),
                               SNOWFLAKE_CALLBACK(assign_key_file, LOG), nullptr);
}
}  // namespace snowflake::pg
