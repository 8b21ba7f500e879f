-- Row estimates on a snowflake column are bigint's: for range and equality
-- conditions with snowflake, bigint and integer constants and
-- snowflake_from_timestamp() bounds, the planner's estimate is within 2x of the
-- same query on a bigint column holding the same values. 200000 ids, one a
-- second from 2024-06-01 00:00:00 UTC; windows of 1 minute, 10 minutes, 1 hour.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS snowflake;

BEGIN;
SELECT plan(42);

CREATE TABLE est_b (id bigint PRIMARY KEY, small integer NOT NULL);
CREATE TABLE est_s (id snowflake PRIMARY KEY, small snowflake NOT NULL);
INSERT INTO est_b
SELECT snowflake_from_timestamp('2024-06-01 00:00:00+00'::timestamptz + g * interval '1 second')
       + (7 << 12) + g % 5, g
FROM generate_series(0, 199999) g;
INSERT INTO est_s SELECT id, small FROM est_b;
ANALYZE est_b, est_s;

-- The planner's row estimate for a query.
CREATE FUNCTION pg_temp.estimate(query text) RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::double precision;
END $$;

-- Each condition, {T} the table; {lo} {hi} the window's bounds as ids.
CREATE TEMP TABLE est_case (name text, condition text);
INSERT INTO est_case VALUES
    ('from_timestamp bounds',
     'id >= snowflake_from_timestamp(''{t1}'') AND id < snowflake_from_timestamp(''{t2}'')'),
    ('bigint constants', 'id >= {lo}::bigint AND id < {hi}::bigint'),
    ('snowflake constants', 'id >= ''{lo}''::snowflake AND id < ''{hi}''::snowflake'),
    ('quoted constants, BETWEEN', 'id BETWEEN ''{lo}'' AND ''{hi}'''),
    ('bounds on the right', '{hi}::bigint > id AND snowflake_from_timestamp(''{t1}'') <= id');
CREATE TEMP TABLE est_window (length interval, t1 timestamptz, t2 timestamptz);
INSERT INTO est_window VALUES
    ('1 minute', '2024-06-01 10:00:00+00', '2024-06-01 10:01:00+00'),
    ('10 minutes', '2024-06-01 20:00:00+00', '2024-06-01 20:10:00+00'),
    ('1 hour', '2024-06-02 05:30:00+00', '2024-06-02 06:30:00+00');

CREATE TEMP TABLE est_result AS
SELECT c.name, w.length, q.condition,
       pg_temp.estimate('SELECT * FROM est_s WHERE ' || q.condition) AS snowflake_rows,
       pg_temp.estimate('SELECT * FROM est_b WHERE ' || q.condition) AS bigint_rows
FROM est_case c CROSS JOIN est_window w,
     LATERAL (SELECT replace(replace(replace(replace(c.condition,
                 '{t1}', w.t1::text), '{t2}', w.t2::text),
                 '{lo}', snowflake_from_timestamp(w.t1)::text),
                 '{hi}', snowflake_from_timestamp(w.t2)::text) AS condition) q;

SELECT ok(snowflake_rows / bigint_rows BETWEEN 0.5 AND 2,
          format('%s, %s: snowflake estimate %s rows, bigint %s', name, length, snowflake_rows, bigint_rows))
FROM est_result ORDER BY name, length;
-- and the bigint estimates are close to the truth (so the comparison means something)
SELECT ok(bigint_rows BETWEEN extract(epoch FROM length) / 2 AND extract(epoch FROM length) * 2,
          format('%s, %s: bigint estimate %s rows for %s', name, length, bigint_rows, extract(epoch FROM length)))
FROM est_result ORDER BY name, length;

-- equality and one-sided ranges with integer, bigint and snowflake constants,
-- on the id and on a column of small values
CREATE TEMP TABLE est_other (condition text);
INSERT INTO est_other VALUES
    ('id = 55233950515204102'), ('id = ''55233950515204102'''), ('id = ''55233950515204102''::snowflake'),
    ('id > 55300000000000000'), ('id <= ''55200000000000000''::snowflake'),
    ('small = 5'), ('small = 5::bigint'), ('small < 1000'), ('small >= 150000::bigint'),
    ('small > 2000::smallint'), ('small BETWEEN 1000 AND 1100'), ('small IN (5, 6, 7)');
SELECT ok(s / b BETWEEN 0.5 AND 2, format('%s: snowflake estimate %s rows, bigint %s', condition, s, b))
FROM (SELECT condition, pg_temp.estimate('SELECT * FROM est_s WHERE ' || condition) AS s,
             pg_temp.estimate('SELECT * FROM est_b WHERE ' || condition) AS b
      FROM est_other) e
ORDER BY condition;

SELECT * FROM finish();
ROLLBACK;
