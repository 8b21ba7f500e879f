namespace snowflake::pg {
int setting();
int write_lease(int lease) { return lease + setting(); }
}  // namespace snowflake::pg
