// The lease file needs the fence, and the fence needs the lease file.
namespace snowflake::pg {
bool fence_if_copy(int lease);
int write_lease(int lease) { return lease + 1; }
bool load_lease(int lease) { return fence_if_copy(lease); }
}  // namespace snowflake::pg
