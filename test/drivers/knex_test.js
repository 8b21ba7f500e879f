// knex (npm, on node-postgres) against a server with snowflake preloaded and
// the table orders (id bigint, sid snowflake, sids snowflake[]: made by
// test/t/100_drivers.pl, which runs this with NODE_PATH set; connection from
// PGHOST, PGPORT, PGDATABASE). Prints one "ok - ..." or "not ok - ..." line a
// check; exits 1 if any failed.
'use strict';
const { types } = require('pg');

let failed = 0;
function check(condition, description) {
  console.log(`${condition ? 'ok' : 'not ok'} - knex: ${description}`);
  if (!condition) failed++;
}

const ODD = [2n ** 53n + 1n, 2n ** 63n - 1n]; // no double holds these

// docs/drivers.md: BigInt for bigint, snowflake and their arrays (pg's types are global)
async function registerSnowflake(knex) {
  const { rows: [{ oid, array_oid: arrayOid }] } = await knex.raw(
    "SELECT 'snowflake'::regtype::oid AS oid, 'snowflake[]'::regtype::oid AS array_oid");
  const bigintArray = (text) => types.arrayParser.create(text, BigInt).parse();
  types.setTypeParser(20, BigInt);                    // bigint
  types.setTypeParser(1016, bigintArray);             // bigint[]
  types.setTypeParser(Number(oid), BigInt);           // snowflake
  types.setTypeParser(Number(arrayOid), bigintArray); // snowflake[]
}

// JSON for a browser: every BigInt as a string (JSON.stringify throws on BigInt)
const jsonIds = (key, value) => (typeof value === 'bigint' ? value.toString() : value);

async function main() {
  const knex = require('knex')({
    client: 'pg',
    connection: { host: process.env.PGHOST, port: Number(process.env.PGPORT), database: process.env.PGDATABASE },
    pool: { min: 1, max: 1 },
  });

  const [before] = await knex('orders').insert({ sids: ODD }).returning(['id', 'sid', 'sids']);
  check(typeof before.id === 'string' && typeof before.sid === 'string' && before.sids === `{${ODD.join(',')}}`,
    `before registration: bigint and snowflake are strings, snowflake[] the raw string ${before.sids}`);
  let threw = false;
  try { JSON.stringify({ id: 1n }); } catch (e) { threw = e instanceof TypeError; }
  check(threw, 'JSON.stringify of a BigInt throws a TypeError (hence the replacer)');

  await registerSnowflake(knex);
  const [row] = await knex('orders').insert({ sids: ODD }).returning(['id', 'sid', 'sids', knex.raw('sid::text AS sid_text')]);
  check(typeof row.id === 'bigint' && typeof row.sid === 'bigint' && row.sid.toString() === row.sid_text,
    `after: bigint and snowflake defaults are BigInts (${row.id}, ${row.sid})`);
  check(row.id > 2n ** 53n && row.sid > 2n ** 53n, 'the ids are above 2^53');
  check(Array.isArray(row.sids) && row.sids.length === 2 && row.sids.every((v, i) => v === ODD[i]),
    'after: snowflake[] is an array of BigInts, 2^53+1 and 2^63-1 exact');

  const [given] = await knex('orders').insert({ id: ODD[0], sid: ODD[1] }).returning(['id', 'sid']);
  check(given.id === ODD[0] && given.sid === ODD[1], '2^53+1 and 2^63-1 as parameters into bigint and snowflake, exact');

  for (const [column, index] of [['id', 'orders_pkey'], ['sid', 'orders_sid_key']]) {
    const plan = (await knex.raw(`EXPLAIN SELECT note FROM orders WHERE ${column} = ?`, [row.sid])).rows
      .map((r) => r['QUERY PLAN']).join('\n');
    check(plan.includes(`Index Scan using ${index}`), `lookup by ${column} as a BigInt parameter uses ${index}`);
  }
  const found = await knex('orders').where('sid', row.sid).first('id', 'sid', 'sids');
  check(found && found.id === row.id, 'lookup by sid returns the row');

  const json = JSON.stringify(found, jsonIds);
  check(json === `{"id":"${row.id}","sid":"${row.sid}","sids":["${ODD[0]}","${ODD[1]}"]}`,
    `JSON.stringify with the replacer writes every id as a string: ${json}`);
  const parsed = JSON.parse(json);
  check(BigInt(parsed.sid) === row.sid && BigInt(parsed.sids[1]) === ODD[1], 'JSON.parse in a browser keeps every digit');

  // the schema builder: a snowflake key with its default; columnInfo says USER-DEFINED
  await knex.schema.dropTableIfExists('knex_items');
  await knex.schema.createTable('knex_items', (t) => {
    t.specificType('id', 'snowflake').primary().defaultTo(knex.raw('snowflake_nextval()'));
    t.specificType('refs', 'snowflake[]');
  });
  const [item] = await knex('knex_items').insert({ refs: [row.sid] }).returning('*');
  check(typeof item.id === 'bigint' && item.refs[0] === row.sid, 'specificType snowflake key: its default returned as a BigInt');
  const info = await knex('knex_items').columnInfo();
  check(info.id.type === 'USER-DEFINED' && info.refs.type === 'ARRAY',
    `columnInfo reports the information schema's data_type (${info.id.type}, ${info.refs.type})`);
  await knex.schema.dropTable('knex_items');
  await knex.destroy();
}

main().then(() => process.exit(failed ? 1 : 0), (error) => {
  console.log(`not ok - knex: ${error.stack}`);
  process.exit(1);
});
