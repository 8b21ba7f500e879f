// node-postgres (npm pg, pg-copy-streams) against a server with snowflake
// preloaded (test/t/100_drivers.pl runs it with NODE_PATH set; connection
// from PGHOST, PGPORT, PGDATABASE). Prints one "ok - ..." or "not ok - ..."
// line a check; exits 1 if any failed.
'use strict';
const { Client, TypeOverrides, types } = require('pg');
const { from: copyFrom, to: copyTo } = require('pg-copy-streams');
const { pipeline } = require('node:stream/promises');
const { Readable, Writable } = require('node:stream');

let failed = 0;
function check(condition, description) {
  console.log(`${condition ? 'ok' : 'not ok'} - node-postgres: ${description}`);
  if (!condition) failed++;
}

async function copyOut(client, sql) {
  const chunks = [];
  await pipeline(client.query(copyTo(sql)), new Writable({
    write(chunk, _encoding, done) { chunks.push(chunk); done(); },
  }));
  return Buffer.concat(chunks).toString();
}

async function copyIn(client, sql, text) {
  await pipeline(Readable.from([text]), client.query(copyFrom(sql)));
}

async function main() {
  const plain = new Client();
  await plain.connect();
  await plain.query('CREATE EXTENSION IF NOT EXISTS snowflake');
  await plain.query('DROP TABLE IF EXISTS js_orders');
  await plain.query(`CREATE TABLE js_orders (
      id snowflake PRIMARY KEY DEFAULT snowflake_nextval(),
      ref bigint NOT NULL DEFAULT snowflake_nextval(),
      note text)`);

  // Defaults: int8 and unknown types (snowflake) arrive as strings, exact.
  const first = (await plain.query(
    'INSERT INTO js_orders (note) VALUES ($1) RETURNING id, ref, id::text AS id_text', ['plain'])).rows[0];
  check(typeof first.id === 'string' && first.id === first.id_text, 'unadapted snowflake arrives as its exact decimal string');
  check(typeof first.ref === 'string', 'unadapted bigint arrives as a string (pg default for int8)');
  check(BigInt(first.id) > 2n ** 53n, `a fresh id is above 2^53 (${first.id})`);
  // Ids of a millisecond's first sequence number have 12 low zero bits and fit
  // a double; an odd id above 2^53 never does.
  const oddId = (BigInt(first.id) | 1n).toString();
  check(String(Number(oddId)) !== oddId, 'the same id (low bit set) as a JavaScript number loses digits');

  // to_json: a snowflake is a JSON string and keeps every digit in JavaScript;
  // the same value as a JSON number does not. (A fresh id may have enough
  // trailing zero bits to survive as a double: these odd ones cannot.)
  await plain.query("INSERT INTO js_orders (id, note) VALUES (9007199254740993, 'odd'), (7167350074945572865, 'odd')");
  const json = (await plain.query(
    "SELECT to_json(id) AS as_snowflake, to_json(id::bigint) AS as_bigint, id::text AS exact FROM js_orders WHERE note <> 'odd' OR id % 2 = 1 ORDER BY id")).rows;
  check(json.length === 3 && json.every((r) => typeof r.as_snowflake === 'string' && r.as_snowflake === r.exact),
    'to_json(snowflake) parsed by JavaScript keeps every digit');
  const odd = json.filter((r) => BigInt(r.exact) % 2n === 1n);
  check(odd.length === 2 && odd.every((r) => typeof r.as_bigint === 'number' && BigInt(r.as_bigint) !== BigInt(r.exact)),
    `to_json(bigint) parsed by JavaScript loses digits (${odd.map((r) => `${r.as_bigint} != ${r.exact}`).join(', ')})`);
  await plain.query("DELETE FROM js_orders WHERE note = 'odd'");
  const rawArray = (await plain.query('SELECT ARRAY[9007199254740993, 9223372036854775807]::snowflake[] AS ids')).rows[0].ids;
  check(rawArray === '{9007199254740993,9223372036854775807}', `unadapted snowflake[] arrives as the raw string ${rawArray}`);
  const object = (await plain.query(
    'SELECT row_to_json(o)::text AS doc FROM js_orders o WHERE id = $1', [first.id])).rows[0].doc;
  check(JSON.parse(object).id === first.id, 'row_to_json: the snowflake column survives JSON.parse');
  await plain.end();

  // The adapter (README): BigInt for int8 and for the type's OID. Text
  // protocol only: node-postgres reads every row value as a UTF-8 string
  // (pg-protocol: "Binary mode not supported yet"), which mangles binary int8.
  const client = new Client();
  await client.connect();
  const { rows: [oids] } = await client.query(
    "SELECT 'snowflake'::regtype::oid AS oid, 'snowflake[]'::regtype::oid AS array_oid");
  const bigintArray = (text) => types.arrayParser.create(text, BigInt).parse();
  const adapted = new TypeOverrides();
  adapted.setTypeParser(20, BigInt);
  adapted.setTypeParser(1016, bigintArray);
  adapted.setTypeParser(Number(oids.oid), BigInt);
  adapted.setTypeParser(Number(oids.array_oid), bigintArray);

  const inserted = (await client.query({
    text: "INSERT INTO js_orders (note) SELECT 'row ' || g FROM generate_series(1, 100) g RETURNING id",
    types: adapted,
  })).rows.map((r) => r.id);
  check(inserted.length === 100 && inserted.every((id, i) => typeof id === 'bigint' && (i === 0 || id > inserted[i - 1])),
    'DEFAULT snowflake_nextval() RETURNING gives 100 increasing BigInt ids');

  // simple (no parameters) and extended (parameters) query protocol
  for (const values of [undefined, [0]]) {
    const mode = values ? 'extended' : 'simple';
    const rows = (await client.query({
      text: `SELECT id, id::bigint AS id_bigint, id::text AS id_text, ref, ref::text AS ref_text
               FROM js_orders WHERE id >= ${values ? '$1' : '0'} ORDER BY id`,
      values, types: adapted,
    })).rows;
    check(rows.length === 101 && rows.every((r) => r.id === r.id_bigint && r.id === BigInt(r.id_text)),
      `${mode} protocol: snowflake reads back exactly as BigInt`);
    check(rows.every((r) => r.ref === BigInt(r.ref_text)), `${mode} protocol: bigint reads back exactly as BigInt`);
  }
  {
    const found = (await client.query({
      text: 'SELECT id FROM js_orders WHERE id = $1', values: [inserted[99]], types: adapted,
    })).rows;
    check(found.length === 1 && found[0].id === inserted[99], 'lookup by a BigInt parameter');
    const extreme = (await client.query({
      text: 'SELECT $1::bigint::snowflake AS id', values: [2n ** 63n - 1n], types: adapted,
    })).rows[0].id;
    check(extreme === 2n ** 63n - 1n, '2^63-1 round-trips as a parameter and a result');
    const ids = [2n ** 53n + 1n, null, 2n ** 63n - 1n];
    const arrays = (await client.query({
      text: 'SELECT $1::snowflake[] AS ids, $1::bigint[] AS bigints', values: [ids], types: adapted,
    })).rows[0];
    check(['ids', 'bigints'].every((k) => arrays[k].length === 3 && arrays[k].every((v, i) => v === ids[i])),
      'snowflake[] and bigint[] arrive as arrays of BigInt (and null), 2^53+1 and 2^63-1 exact');
  }

  // COPY out and in (text), every id exact, including 0, 2^63-1 and the sentinels -1 and -2^63
  const out = await copyOut(client, 'COPY (SELECT id, ref FROM js_orders ORDER BY id) TO STDOUT');
  const expected = (await client.query({ text: 'SELECT id, ref FROM js_orders ORDER BY id', types: adapted })).rows;
  const lines = out.trimEnd().split('\n').map((line) => line.split('\t').map(BigInt));
  check(lines.length === expected.length && lines.every(([id, ref], i) => id === expected[i].id && ref === expected[i].ref),
    'COPY TO: every id exact');
  await client.query('CREATE TEMP TABLE js_copy (id snowflake, ref bigint)');
  const extremes = '0\t0\n9007199254740993\t9007199254740993\n9223372036854775807\t9223372036854775807\n'
    + '-1\t-1\n-9223372036854775808\t-9223372036854775808\n';
  await copyIn(client, 'COPY js_copy FROM STDIN', extremes + out);
  const back = await copyOut(client, 'COPY js_copy TO STDOUT');
  check(back === extremes + out, 'COPY FROM then TO: every id exact');

  await client.query('DROP TABLE js_orders');
  await client.end();
}

main().then(() => process.exit(failed ? 1 : 0), (error) => {
  console.log(`not ok - node-postgres: ${error.stack}`);
  process.exit(1);
});
