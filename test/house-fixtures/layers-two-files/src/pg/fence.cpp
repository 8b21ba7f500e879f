namespace snowflake::pg {
int write_lease(int lease);
bool fence_if_copy(int lease) { return write_lease(lease) > 1; }
}  // namespace snowflake::pg
