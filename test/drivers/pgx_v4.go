// pgx v4 (Debian golang-github-jackc-pgx-v4-dev) against a server with
// snowflake preloaded and the table orders (id bigint, sid snowflake, sids
// snowflake[]: made by test/t/100_drivers.pl, which builds and runs this;
// connection from PGHOST, PGPORT, PGDATABASE). Prints one "ok - ..." or
// "not ok - ..." line a check; exits 1 if any failed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgtype"
	"github.com/jackc/pgx/v4"
)

var failed = 0

func check(condition bool, format string, args ...interface{}) {
	status := "ok"
	if !condition {
		status = "not ok"
		failed++
	}
	fmt.Printf("%s - pgx: %s\n", status, fmt.Sprintf(format, args...))
}

// registerSnowflake (docs/drivers.md): snowflake and snowflake[] as int8 and
// int8[] on this connection (in a pool: pgxpool.Config.AfterConnect).
func registerSnowflake(ctx context.Context, conn *pgx.Conn) error {
	var oid, arrayOid uint32
	err := conn.QueryRow(ctx, "SELECT 'snowflake'::regtype::oid, 'snowflake[]'::regtype::oid").Scan(&oid, &arrayOid)
	if err != nil {
		return err
	}
	conn.ConnInfo().RegisterDataType(pgtype.DataType{Value: &pgtype.Int8{}, Name: "snowflake", OID: oid})
	conn.ConnInfo().RegisterDataType(pgtype.DataType{Value: &pgtype.Int8Array{}, Name: "_snowflake", OID: arrayOid})
	return nil
}

// Order as sent to a browser: ",string" writes each int64 as a JSON string.
type Order struct {
	ID   int64  `json:"id,string"`
	SID  int64  `json:"sid,string"`
	Note string `json:"note"`
}

func main() {
	ctx := context.Background()
	odd := []int64{1<<53 + 1, 1<<63 - 1} // no float64 holds these
	conn, err := pgx.Connect(ctx, "")
	if err != nil {
		fmt.Printf("not ok - pgx: connect: %v\n", err)
		os.Exit(1)
	}
	defer conn.Close(ctx)

	// before: scanning fails, text or interface{} alike
	var id, sid int64
	var sids []int64
	err = conn.QueryRow(ctx, "SELECT id, sid FROM orders LIMIT 1").Scan(&id, &sid)
	check(err != nil && strings.Contains(err.Error(), "cannot be scanned into *int64"), "before registration: Scan(&int64) of a snowflake fails: %v", err)
	var any interface{}
	err = conn.QueryRow(ctx, "SELECT sid FROM orders LIMIT 1").Scan(&any)
	check(err != nil && strings.Contains(err.Error(), "cannot be scanned into *interface {}"), "before registration: Scan(&interface{}) fails too: %v", err)
	err = conn.QueryRow(ctx, "SELECT $1::snowflake[]", odd).Scan(&sids)
	check(err != nil, "before registration: snowflake[] fails: %v", err)

	if err := registerSnowflake(ctx, conn); err != nil {
		fmt.Printf("not ok - pgx: register: %v\n", err)
		os.Exit(1)
	}
	var idText, sidText string
	err = conn.QueryRow(ctx, "INSERT INTO orders (sids) VALUES ($1) RETURNING id, sid, sids, id::text, sid::text", odd).
		Scan(&id, &sid, &sids, &idText, &sidText)
	check(err == nil && fmt.Sprint(id) == idText && fmt.Sprint(sid) == sidText, "after: bigint and snowflake defaults are int64s (%d, %d) %v", id, sid, err)
	check(id > 1<<53 && sid > 1<<53, "the ids are above 2^53")
	check(len(sids) == 2 && sids[0] == odd[0] && sids[1] == odd[1], "after: snowflake[] is a []int64, 2^53+1 and 2^63-1 exact: %v", sids)

	// text and binary result formats, both columns and the array
	for _, format := range []struct {
		name string
		code int16
	}{{"binary", pgx.BinaryFormatCode}, {"text", pgx.TextFormatCode}} {
		var gotID, gotSID int64
		var gotSIDs []int64
		err := conn.QueryRow(ctx, "SELECT id, sid, sids FROM orders WHERE sid = $1",
			pgx.QueryResultFormats{format.code, format.code, format.code}, sid).Scan(&gotID, &gotSID, &gotSIDs)
		check(err == nil && gotID == id && gotSID == sid && len(gotSIDs) == 2 && gotSIDs[1] == odd[1],
			"%s format: bigint, snowflake and snowflake[] read back exactly %v", format.name, err)
	}
	var a, b int64
	err = conn.QueryRow(ctx, "INSERT INTO orders (id, sid) VALUES ($1, $2) RETURNING id, sid", odd[0], odd[1]).Scan(&a, &b)
	check(err == nil && a == odd[0] && b == odd[1], "2^53+1 and 2^63-1 as parameters into bigint and snowflake, exact %v", err)

	for _, c := range [][2]string{{"id", "orders_pkey"}, {"sid", "orders_sid_key"}} {
		rows, err := conn.Query(ctx, "EXPLAIN SELECT note FROM orders WHERE "+c[0]+" = $1", sid)
		plan := ""
		for err == nil && rows.Next() {
			var line string
			rows.Scan(&line)
			plan += line + "\n"
		}
		check(err == nil && strings.Contains(plan, "Index Scan using "+c[1]), "lookup by %s as an int64 parameter uses %s", c[0], c[1])
	}

	var order Order
	err = conn.QueryRow(ctx, "SELECT id, sid, coalesce(note, '') FROM orders WHERE id = $1", id).Scan(&order.ID, &order.SID, &order.Note)
	check(err == nil && order.SID == sid, "lookup by id returns the row %v", err)
	text, _ := json.Marshal(order)
	check(string(text) == fmt.Sprintf(`{"id":"%d","sid":"%d","note":""}`, id, sid), "encoding/json with ,string writes the ids as strings: %s", text)

	if failed > 0 {
		os.Exit(1)
	}
}
