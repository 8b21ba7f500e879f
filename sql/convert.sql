-- snowflake_convert_column: the conversion matrix (serial, bigserial,
-- identity by default and always, a plain nextval() default; integer keys
-- widened with single, multi-level and self foreign keys; partitioned tables;
-- dry run) and the refusals, each of which changes nothing. Ids are never
-- printed, only facts about them.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowflake;
RESET client_min_messages;

-- Each table's columns as the conversion sees them, and the constraints
-- (name, definition, validated) of a set of tables.
CREATE FUNCTION pg_temp.column_of(t regclass, c name) RETURNS text LANGUAGE sql AS $$
    SELECT format_type(a.atttypid, a.atttypmod)
           || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
           || CASE a.attidentity WHEN 'a' THEN ' identity always' WHEN 'd' THEN ' identity by default' ELSE '' END
      FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = t AND a.attname = c $$;
CREATE FUNCTION pg_temp.constraints_of(tables regclass[])
    RETURNS TABLE (tab regclass, name name, def text, valid boolean) LANGUAGE sql AS $$
    SELECT conrelid::regclass, conname, pg_get_constraintdef(oid), convalidated
      FROM pg_constraint WHERE conrelid = ANY (tables) AND conparentid = 0 ORDER BY 1, 2 $$;
-- the error a statement raises: SQLSTATE, message, detail, hint
\getenv abs_srcdir PG_ABS_SRCDIR
\set error_of :abs_srcdir '/test/pgtap/error_of.sql'
\i :error_of

--
-- serial, with an integer foreign key: both widened, values kept, the
-- foreign key as it was, the sequence dropped
--
CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL);
CREATE TABLE orders (id bigserial PRIMARY KEY,
                     customer_id integer NOT NULL CONSTRAINT orders_customer REFERENCES customers ON DELETE CASCADE);
INSERT INTO customers (name) SELECT 'c' || g FROM generate_series(1, 100) g;
INSERT INTO orders (customer_id) SELECT 1 + g % 100 FROM generate_series(1, 300) g;
CREATE TEMP TABLE before_rows AS SELECT id, name FROM customers;
CREATE TEMP TABLE before_constraints AS SELECT * FROM pg_temp.constraints_of('{customers,orders}');
SELECT relfilenode AS customers_file FROM pg_class WHERE oid = 'customers'::regclass \gset
SELECT relfilenode AS orders_file FROM pg_class WHERE oid = 'orders'::regclass \gset
-- the dry run shows every statement and changes nothing
SELECT step, table_name, column_name, old_type, new_type, action, statement, lock_mode, rewrite
  FROM snowflake_convert_column('customers', 'id', dry_run => true);
SELECT pg_temp.column_of('customers', 'id') AS customers_id, pg_temp.column_of('orders', 'customer_id') AS orders_customer_id,
       to_regclass('customers_id_seq') IS NOT NULL AS sequence_exists;
-- the conversion itself, one transaction: the locks it reports are the locks it takes
BEGIN;
CREATE TEMP TABLE report AS SELECT * FROM snowflake_convert_column('customers', 'id');
SELECT step, table_name, column_name, old_type, new_type, action, lock_mode, rewrite FROM report ORDER BY step, table_name::text;
SELECT r.table_name, bool_or(l.mode = 'AccessExclusiveLock') AS access_exclusive_held
  FROM report r LEFT JOIN pg_locks l ON l.relation = r.table_name AND l.pid = pg_backend_pid() AND l.locktype = 'relation'
 GROUP BY 1 ORDER BY r.table_name::text;
COMMIT;
SELECT pg_temp.column_of('customers', 'id') AS customers_id, pg_temp.column_of('orders', 'customer_id') AS orders_customer_id,
       to_regclass('customers_id_seq') IS NULL AS sequence_dropped;
-- a rewrite where the report says so, and only there
SELECT relfilenode <> :customers_file AS customers_rewritten FROM pg_class WHERE oid = 'customers'::regclass;
SELECT relfilenode <> :orders_file AS orders_rewritten FROM pg_class WHERE oid = 'orders'::regclass;
(SELECT * FROM before_rows EXCEPT SELECT id, name FROM customers) UNION ALL
(SELECT id, name FROM customers EXCEPT SELECT * FROM before_rows);
(SELECT * FROM before_constraints EXCEPT SELECT * FROM pg_temp.constraints_of('{customers,orders}')) UNION ALL
(SELECT * FROM pg_temp.constraints_of('{customers,orders}') EXCEPT SELECT * FROM before_constraints);
-- new ids come from the generator and sort after every old one; the foreign key holds them
INSERT INTO customers (name) VALUES ('new') RETURNING (snowflake_decode(id)).worker_id,
       id > (SELECT max(id) FROM before_rows) AS above_old_ids, id > 2147483647 AS needs_bigint;
INSERT INTO orders (customer_id) SELECT id FROM customers WHERE name = 'new';
SELECT count(*) AS orders_of_new FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.name = 'new';
INSERT INTO orders (customer_id) VALUES (123456789012);  -- still checked

--
-- bigserial: no type change, no rewrite
--
CREATE TABLE events (id bigserial PRIMARY KEY, body text);
INSERT INTO events (body) VALUES ('a'), ('b');
SELECT relfilenode AS events_file FROM pg_class WHERE oid = 'events'::regclass \gset
SELECT step, table_name, column_name, old_type, new_type, action, rewrite FROM snowflake_convert_column('events', 'id');
SELECT pg_temp.column_of('events', 'id') AS events_id, to_regclass('events_id_seq') IS NULL AS sequence_dropped,
       relfilenode = :events_file AS not_rewritten FROM pg_class WHERE oid = 'events'::regclass;

--
-- identity, by default (integer) and always (bigint, once made BY DEFAULT):
-- the identity and its sequence go
--
CREATE TABLE tags (id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, tag text);
CREATE TABLE notes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, note text);
INSERT INTO tags (tag) VALUES ('x'), ('y');
INSERT INTO notes (note) VALUES ('x'), ('y');
SELECT step, table_name, column_name, old_type, new_type, action, statement FROM snowflake_convert_column('tags', 'id');
-- ALWAYS refuses the ids an INSERT gives, a default cannot (regression: it
-- silently became insertable): refused, with the way to accept it
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('notes', 'id')$$);
SELECT pg_temp.column_of('notes', 'id') AS notes_id;
ALTER TABLE notes ALTER COLUMN id SET GENERATED BY DEFAULT;
SELECT step, table_name, column_name, old_type, new_type, action, statement FROM snowflake_convert_column('notes', 'id');
SELECT pg_temp.column_of('tags', 'id') AS tags_id, pg_temp.column_of('notes', 'id') AS notes_id,
       to_regclass('tags_id_seq') IS NULL AND to_regclass('notes_id_seq') IS NULL AS sequences_gone;
-- an id may now be given explicitly, as the hint said
INSERT INTO notes (id, note) VALUES (snowflake_nextval(), 'explicit') RETURNING id > 2 AS explicit_id_taken;
SELECT array_agg(id ORDER BY id) AS old_ids FROM tags;

--
-- a plain DEFAULT nextval() of a shared sequence: the sequence stays
--
CREATE SEQUENCE shared_seq;
CREATE TABLE shared_a (id integer PRIMARY KEY DEFAULT nextval('shared_seq'));
CREATE TABLE shared_b (id integer PRIMARY KEY DEFAULT nextval('shared_seq'));
INSERT INTO shared_a DEFAULT VALUES; INSERT INTO shared_b DEFAULT VALUES;
SELECT step, action, statement FROM snowflake_convert_column('shared_a', 'id');
SELECT pg_temp.column_of('shared_a', 'id') AS shared_a_id, pg_temp.column_of('shared_b', 'id') AS shared_b_id,
       to_regclass('shared_seq') IS NOT NULL AS sequence_kept;
-- a serial whose sequence another table's default also uses: kept too
CREATE TABLE owner_t (id serial PRIMARY KEY);
CREATE TABLE borrower_t (id integer PRIMARY KEY DEFAULT nextval('owner_t_id_seq'));
SELECT count(*) FILTER (WHERE action LIKE 'drop sequence%') AS drops FROM snowflake_convert_column('owner_t', 'id');
SELECT to_regclass('owner_t_id_seq') IS NOT NULL AS sequence_kept, pg_temp.column_of('borrower_t', 'id') AS borrower_id;

--
-- multi-level and self references: regions(id) <- branches(region_id, a
-- UNIQUE key) <- desks(branch_region); staff(manager) -> staff(id)
--
CREATE TABLE regions (id smallserial PRIMARY KEY);
CREATE TABLE branches (id serial PRIMARY KEY, region_id smallint UNIQUE REFERENCES regions);
CREATE TABLE desks (id bigserial PRIMARY KEY, branch_region integer REFERENCES branches (region_id));
CREATE TABLE staff (id serial PRIMARY KEY, manager integer CONSTRAINT staff_manager REFERENCES staff,
                    region smallint REFERENCES regions);
INSERT INTO regions SELECT FROM generate_series(1, 3);
INSERT INTO branches (region_id) VALUES (1), (2);
INSERT INTO desks (branch_region) VALUES (1), (2), (2);
INSERT INTO staff (manager, region) VALUES (NULL, 1), (1, 2), (2, 3);
CREATE TEMP TABLE before_multi AS SELECT * FROM pg_temp.constraints_of('{regions,branches,desks,staff}');
SELECT step, table_name, column_name, old_type, new_type, action, statement, rewrite
  FROM snowflake_convert_column('regions', 'id') ORDER BY step, table_name::text, column_name;
SELECT pg_temp.column_of('branches', 'region_id') AS branch_region, pg_temp.column_of('desks', 'branch_region') AS desk_region,
       pg_temp.column_of('staff', 'region') AS staff_region, pg_temp.column_of('staff', 'manager') AS staff_manager;
(SELECT * FROM before_multi EXCEPT SELECT * FROM pg_temp.constraints_of('{regions,branches,desks,staff}')) UNION ALL
(SELECT * FROM pg_temp.constraints_of('{regions,branches,desks,staff}') EXCEPT SELECT * FROM before_multi);
-- the self reference: key and referencing column widened in one statement
SELECT step, table_name, column_name, old_type, new_type, action, statement, rewrite
  FROM snowflake_convert_column('staff', 'id') ORDER BY step, table_name::text, column_name;
INSERT INTO staff (manager) SELECT max(id) FROM staff RETURNING manager = 3 AS managed_by_old_id, id > 3 AS new_id_above;
SELECT count(*) AS staff_rows, count(manager) AS with_manager FROM staff;

--
-- partitioned tables: ALTER on the parent reaches every partition
--
CREATE TABLE accounts (id serial PRIMARY KEY);
CREATE TABLE ledger (id bigserial, account_id integer REFERENCES accounts, booked date NOT NULL,
                     PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE TABLE ledger_old PARTITION OF ledger FOR VALUES FROM (0) TO (1000000);
CREATE TABLE ledger_new PARTITION OF ledger FOR VALUES FROM (1000000) TO (MAXVALUE);
INSERT INTO accounts SELECT FROM generate_series(1, 5);
INSERT INTO ledger (account_id, booked) SELECT 1 + g % 5, '2026-01-01' FROM generate_series(1, 50) g;
-- the integer key referenced by a partitioned table: the partitioned column is widened
SELECT step, table_name, column_name, old_type, new_type, action, rewrite
  FROM snowflake_convert_column('accounts', 'id') ORDER BY step, table_name::text;
SELECT c.relname, pg_temp.column_of(c.oid, 'account_id') AS account_id
  FROM pg_class c WHERE c.relname LIKE 'ledger%' AND c.relkind IN ('r', 'p') ORDER BY 1;
-- the partitioned table's own bigserial key: every partition gets the new default
SELECT step, table_name, action, statement FROM snowflake_convert_column('ledger', 'id');
SELECT c.relname, pg_temp.column_of(c.oid, 'id') AS id
  FROM pg_class c WHERE c.relname LIKE 'ledger%' AND c.relkind IN ('r', 'p') ORDER BY 1;
INSERT INTO ledger (account_id, booked) SELECT max(id), '2026-11-22' FROM accounts RETURNING tableoid::regclass;
SELECT count(*) AS old_rows_kept FROM ledger_old;
-- a partition is converted through its parent
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('ledger_old', 'id')$$);
-- an integer partition key cannot be widened (PostgreSQL refuses): refused first
CREATE TABLE readings (id serial PRIMARY KEY) PARTITION BY RANGE (id);
CREATE TABLE readings_1 PARTITION OF readings FOR VALUES FROM (0) TO (100);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('readings', 'id')$$);
SELECT pg_temp.column_of('readings', 'id') AS readings_id;

--
-- refusals: each changes nothing
--
CREATE TABLE products (id serial PRIMARY KEY, sku text UNIQUE, code integer, pair_a integer, pair_b integer,
                       stamp bigint UNIQUE DEFAULT 7, UNIQUE (pair_a, pair_b));
CREATE TABLE product_parts (id serial PRIMARY KEY, product_id integer REFERENCES products);
CREATE VIEW product_ids AS SELECT p.id FROM products p;
-- a view on the key
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('products', 'id')$$);
-- a view on a referencing column
DROP VIEW product_ids;
CREATE VIEW part_products AS SELECT product_id FROM product_parts;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('products', 'id')$$);
DROP VIEW part_products;
-- a rule on the key's table that uses it
CREATE TABLE product_log (id integer);
CREATE RULE log_products AS ON INSERT TO products DO ALSO INSERT INTO product_log VALUES (NEW.id);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('products', 'id')$$);
DROP RULE log_products ON products;
-- a policy, a trigger's WHEN, a generated column (a dry run refuses alike)
CREATE POLICY positive_products ON products USING (id > 0);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('products', 'id', dry_run => true)$$);
DROP POLICY positive_products ON products;
CREATE FUNCTION pg_temp.noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER product_parts_noop BEFORE UPDATE ON product_parts FOR EACH ROW
    WHEN (NEW.product_id IS DISTINCT FROM OLD.product_id) EXECUTE FUNCTION pg_temp.noop();
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('products', 'id')$$);
DROP TRIGGER product_parts_noop ON product_parts;
CREATE TABLE doubled (id serial PRIMARY KEY, twice bigint GENERATED ALWAYS AS (id * 2) STORED);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('doubled', 'id')$$);
SELECT pg_temp.column_of('products', 'id') AS products_id, pg_temp.column_of('product_parts', 'product_id') AS parts_product_id,
       to_regclass('products_id_seq') IS NOT NULL AS sequence_kept;
-- not a key, part of a key only, not an integer, another default, no such column, not a table
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('products', 'code')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('products', 'pair_a')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('products', 'sku')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('products', 'stamp')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('products', 'nope')$$);
CREATE VIEW just_a_view AS SELECT 1 AS id;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('just_a_view', 'id')$$);
-- existing ids at or above the first new id would not sort below the new ones
CREATE TABLE future (id bigserial PRIMARY KEY);
INSERT INTO future VALUES (snowflake_from_timestamp(now() + interval '1 hour'));
SELECT state, regexp_replace(message, '\d{12,}', 'N', 'g') AS message, detail
  FROM pg_temp.error_of($$SELECT snowflake_convert_column('future', 'id')$$);
SELECT pg_temp.column_of('future', 'id') AS future_id;

-- ownership: of the table, and of every table whose integer column would be widened
CREATE ROLE snowflake_convert_owner;
CREATE ROLE snowflake_convert_other;
GRANT CREATE ON SCHEMA public TO snowflake_convert_owner, snowflake_convert_other;
SET ROLE snowflake_convert_owner;
CREATE TABLE owned (id serial PRIMARY KEY);
GRANT REFERENCES ON owned TO snowflake_convert_other;
SET ROLE snowflake_convert_other;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('owned', 'id')$$);
CREATE TABLE others_int (owned_id integer REFERENCES owned);
CREATE TABLE others_big (owned_id bigint CONSTRAINT others_big_fk REFERENCES owned);
SET ROLE snowflake_convert_owner;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('owned', 'id')$$);
SELECT pg_temp.column_of('owned', 'id') AS owned_id;
-- a bigint column in another's table needs no widening: its foreign key is checked again
SET ROLE snowflake_convert_other;
DROP TABLE others_int;
SET ROLE snowflake_convert_owner;
SELECT step, table_name, column_name, old_type, new_type, action, lock_mode, rewrite
  FROM snowflake_convert_column('owned', 'id') ORDER BY step, table_name::text;
RESET ROLE;
SELECT name, def, valid FROM pg_temp.constraints_of('{others_big}');
DROP TABLE others_big, owned;
REVOKE CREATE ON SCHEMA public FROM snowflake_convert_owner, snowflake_convert_other;
DROP ROLE snowflake_convert_owner, snowflake_convert_other;

-- the next files share this database
DROP VIEW just_a_view;
DROP TABLE customers, orders, events, tags, notes, shared_a, shared_b, owner_t, borrower_t, regions, branches,
           desks, staff, accounts, ledger, readings, products, product_parts, product_log, doubled, future;
DROP SEQUENCE shared_seq;

--
-- CHECK constraints a snowflake id would violate (regression: CHECK (id > 0 AND
-- id < 1000000) converted, then every insert failed): refused, on the key and
-- on a referencing column, nothing changed; a CHECK ids pass converts
--
CREATE TABLE small_ids (id serial PRIMARY KEY CHECK (id > 0 AND id < 1000000), note text NOT NULL);
INSERT INTO small_ids (note) VALUES ('one');
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('small_ids', 'id')$$);
CREATE TABLE positive_ids (id serial PRIMARY KEY CHECK (id > 0), note text CHECK (note <> ''));
CREATE TABLE capped_refs (id serial PRIMARY KEY, ref integer REFERENCES positive_ids CHECK (ref < 100000));
INSERT INTO positive_ids (note) VALUES ('one');
INSERT INTO capped_refs (ref) VALUES (1);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('positive_ids', 'id')$$);
SELECT pg_temp.column_of('small_ids', 'id') AS small_ids_id, pg_temp.column_of('positive_ids', 'id') AS positive_ids_id,
       pg_temp.column_of('capped_refs', 'ref') AS capped_refs_ref;
ALTER TABLE capped_refs DROP CONSTRAINT capped_refs_ref_check;
SELECT count(*) AS steps FROM snowflake_convert_column('positive_ids', 'id');
SELECT pg_temp.column_of('positive_ids', 'id') AS positive_ids_id, pg_temp.column_of('capped_refs', 'ref') AS capped_refs_ref;
INSERT INTO positive_ids (note) VALUES ('two') RETURNING id > 1000000 AS snowflake_id;
DROP TABLE capped_refs, positive_ids, small_ids;

--
-- a published table (regression: its subscribers failed to apply the new ids
-- and replication stopped): refused, saying what each subscriber must do
-- first, unless subscribers_widened
--
SET client_min_messages = error;
CREATE TABLE published (id serial PRIMARY KEY);
CREATE PUBLICATION pub_all_of_it FOR TABLE published;
RESET client_min_messages;
INSERT INTO published DEFAULT VALUES;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('published', 'id')$$);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('published', 'id', dry_run => true)$$);
SELECT pg_temp.column_of('published', 'id') AS published_id;
SELECT count(*) AS steps FROM snowflake_convert_column('published', 'id', subscribers_widened => true);
SELECT pg_temp.column_of('published', 'id') AS published_id;
DROP PUBLICATION pub_all_of_it;
DROP TABLE published;

--
-- the report names every table a step rewrites or re-defaults, partitions
-- and inheritance children included (regression: only the parent was listed,
-- and a child's own DEFAULT 42 was overwritten unreported), with its rows and
-- how long the locks have been held
--
CREATE TABLE animals (id serial PRIMARY KEY, name text);
CREATE TABLE cats (whiskers integer) INHERITS (animals);
CREATE TABLE dogs () INHERITS (animals);
ALTER TABLE dogs ALTER COLUMN id SET DEFAULT 42;
CREATE TABLE visits (id bigserial, animal_id integer REFERENCES animals, at date NOT NULL, PRIMARY KEY (id, at))
    PARTITION BY RANGE (at);
CREATE TABLE visits_2025 PARTITION OF visits FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
CREATE TABLE visits_2026 PARTITION OF visits FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
INSERT INTO animals (name) SELECT 'a' || g FROM generate_series(1, 3) g;
INSERT INTO cats (name) VALUES ('tom'), ('felix');
INSERT INTO visits (animal_id, at) SELECT 1, '2025-06-01' FROM generate_series(1, 4);
INSERT INTO visits (animal_id, at) SELECT 2, '2026-06-01' FROM generate_series(1, 7);
ANALYZE animals, cats, dogs, visits;
-- a dry run: the planner's row estimates, no lock time
SELECT step, table_name, column_name, action, rewrite, table_rows, locked_ms
  FROM snowflake_convert_column('animals', 'id', dry_run => true) ORDER BY step, table_name::text;
-- the conversion: counted rows, and the lock time grows step by step
BEGIN;
CREATE TEMP TABLE family_report AS SELECT * FROM snowflake_convert_column('animals', 'id');
SELECT step, table_name, column_name, action, rewrite, table_rows, statement FROM family_report ORDER BY step, table_name::text;
SELECT bool_and(locked_ms >= 0) AS lock_times_given,
       bool_and(locked_ms >= coalesce((SELECT max(p.locked_ms) FROM family_report p WHERE p.step < r.step), 0)) AS lock_times_grow
  FROM family_report r WHERE step < (SELECT max(step) FROM family_report);
COMMIT;
SELECT c.relname, pg_temp.column_of(c.oid, 'id') AS id
  FROM pg_class c WHERE c.relname IN ('animals', 'cats', 'dogs') ORDER BY 1;
SELECT c.relname, pg_temp.column_of(c.oid, 'animal_id') AS animal_id
  FROM pg_class c WHERE c.relname LIKE 'visits%' AND c.relkind IN ('r', 'p') ORDER BY 1;
DROP TABLE visits, cats, dogs, animals;

--
-- domains: a referencing column of a domain over integer cannot
-- be widened through its domain; a domain over bigint whose constraint
-- refuses snowflake ids is refused; one that takes them converts
--
CREATE DOMAIN small_ref AS integer CHECK (VALUE > 0);
CREATE DOMAIN capped_ref AS bigint CHECK (VALUE < 1000000000);
CREATE DOMAIN positive_ref AS bigint CHECK (VALUE > 0);
CREATE TABLE houses (id serial PRIMARY KEY);
CREATE TABLE rooms (id serial PRIMARY KEY, house_id small_ref REFERENCES houses);
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('houses', 'id')$$);
ALTER TABLE rooms ALTER COLUMN house_id TYPE capped_ref;
SELECT * FROM pg_temp.error_of($$SELECT snowflake_convert_column('houses', 'id')$$);
ALTER TABLE rooms ALTER COLUMN house_id TYPE positive_ref;
SELECT step, table_name, column_name, old_type, new_type, action FROM snowflake_convert_column('houses', 'id')
 ORDER BY step, table_name::text;
DROP TABLE rooms, houses;
DROP DOMAIN small_ref, capped_ref, positive_ref;

--
-- a dry run works in a read-only transaction (regression: it made temporary
-- tables), as on a hot standby; the conversion itself is refused there
--
CREATE TABLE readonly_t (id serial PRIMARY KEY);
BEGIN TRANSACTION READ ONLY;
SELECT step, action FROM snowflake_convert_column('readonly_t', 'id', dry_run => true);
SELECT state, message FROM pg_temp.error_of($$SELECT snowflake_convert_column('readonly_t', 'id')$$);
ROLLBACK;
DROP TABLE readonly_t;

-- the function's labels: it runs DDL
SELECT p.provolatile, p.proparallel, p.prosecdef, p.proconfig
  FROM pg_proc p WHERE p.oid = 'snowflake_convert_column(regclass, name, boolean, boolean)'::regprocedure;
