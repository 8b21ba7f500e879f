namespace snowflake::pg {
int setting();
void shared_state_ready();
int write_lease(int lease) {
    shared_state_ready();
    return lease + setting();
}
}  // namespace snowflake::pg
