namespace snowflake::pg {
int setting() { return 1; }
}  // namespace snowflake::pg
