# Active Record 6.1 on the pg gem against a server with snowflake preloaded
# and the table orders (id bigint, sid snowflake, both DEFAULT
# snowflake_nextval(), and sids snowflake[]: test/t/100_drivers.pl makes it;
# connection from PGHOST, PGPORT, PGDATABASE). Prints one "ok - ..." or
# "not ok - ..." line a check; exits 1 if any failed.
require "active_record"
require "json"
require "stringio"

$failed = 0

def check(condition, description)
  puts "#{condition ? 'ok' : 'not ok'} - activerecord: #{description}"
  $stdout.flush
  $failed += 1 unless condition
end

# what a block warns on $stderr
def warnings
  saved = $stderr
  $stderr = StringIO.new
  yield
  $stderr.string
ensure
  $stderr = saved
end

ODD = [2**53 + 1, 2**63 - 1].freeze # no double holds these

ActiveRecord::Base.establish_connection(adapter: "postgresql", host: ENV["PGHOST"], port: ENV["PGPORT"],
                                        database: ENV["PGDATABASE"])

class Order < ActiveRecord::Base
end

# before
sid = nil
warned = warnings { sid = Order.order(:id).first.sid }
check(sid.is_a?(String) && warned.include?("unknown OID") && warned.include?("failed to recognize type of 'sid'"),
      "before: snowflake is a String, with a warning: #{warned.lines.first&.strip}")
order = Order.create!(note: "before")
check(order.id.is_a?(Integer) && order.sid.nil?, "create: the bigint key comes back, the snowflake default does not")
json = order.to_json
check(json.start_with?("{\"id\":#{order.id},"), "before: as_json writes a bigint id as a JSON number: #{json}")

# docs/drivers.md: the type map knows snowflake as a 64-bit integer (its array follows)
module SnowflakeType
  private

  def initialize_type_map(m = type_map)
    super
    m.register_type "snowflake", ActiveRecord::Type::Integer.new(limit: 8)
  end
end
ActiveRecord::ConnectionAdapters::PostgreSQLAdapter.prepend(SnowflakeType)

# as_json (and to_json) with bigint and snowflake columns as strings: a JSON
# number above 2^53 is rounded by JavaScript
module IdsAsStrings
  STRING = ->(value) { value.is_a?(Array) ? value.map(&STRING) : value&.to_s }

  def serializable_hash(options = nil)
    hash = super
    self.class.columns.each do |column|
      next unless hash.key?(column.name) && %w[bigint snowflake].include?(column.sql_type.delete_suffix("[]"))

      hash[column.name] = STRING.call(hash[column.name])
    end
    hash
  end
end
Order.include(IdsAsStrings)

ActiveRecord::Base.connection_pool.disconnect! # new connections, new type maps
Order.reset_column_information

warned = warnings do
  order = Order.create!(note: "after", sids: ODD)
  order.reload # Active Record 6.1 returns only the primary key from an INSERT
end
texts = Order.connection.select_rows("SELECT id::text, sid::text FROM orders WHERE id = #{order.id}").first
check(warned.empty? && order.id.is_a?(Integer) && order.sid.is_a?(Integer) && [order.id.to_s, order.sid.to_s] == texts,
      "after: bigint and snowflake are Integers, exact (#{order.id}, #{order.sid}), no warning")
check(order.id > 2**53 && order.sid > 2**53, "the ids are above 2^53")
found = Order.find_by(sid: order.sid)
check(found&.id == order.id && found.sids == ODD, "lookup by sid; snowflake[] is an Array of Integers, 2^53+1 and 2^63-1 exact")
Order.create!(id: ODD[0], sid: ODD[1], note: "odd")
check(Order.find(ODD[0]).sid == ODD[1], "2^53+1 and 2^63-1 as parameters into bigint and snowflake, exact")
[%w[id orders_pkey], %w[sid orders_sid_key]].each do |column, index|
  plan = Order.where(column => order.sid).explain
  check(plan.include?("Index Scan using #{index}"), "lookup by #{column} as a parameter uses #{index}")
end

json = found.to_json
expected = %({"id":"#{order.id}","sid":"#{order.sid}","sids":["#{ODD[0]}","#{ODD[1]}"],"note":"after"})
check(json == expected, "as_json writes every id as a string: #{json}")
check(JSON.parse(json)["sid"].to_i == order.sid, "the JSON parses back to the ids")

exit($failed.zero? ? 0 : 1)
