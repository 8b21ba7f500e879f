-- Run once, by the postgres image's entrypoint, when it initialises a data directory:
-- the extension in POSTGRES_DB (other databases: CREATE EXTENSION snowflake there).
CREATE EXTENSION IF NOT EXISTS snowflake;
