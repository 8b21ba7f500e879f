namespace snowflake::pg {
int write_lease(int lease);
void register_lease_worker() { write_lease(0); }
}  // namespace snowflake::pg
