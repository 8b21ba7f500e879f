namespace snowflake::pg {
int setting();
int write_lease(int lease);
void register_lease_worker() { write_lease(setting()); }
}  // namespace snowflake::pg
