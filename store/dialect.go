package store

import (
	"database/sql"
	"fmt"
	"time"
)

// dialect holds what differs between SQLite and PostgreSQL. Queries
// themselves are shared: both accept $N placeholders, ON CONFLICT upserts
// and RETURNING.
type dialect struct {
	name string
	// migrations is the folder of migrations/ with this dialect's files.
	migrations string
	// readTx is used for reads that span several statements.
	readTx *sql.TxOptions
	// timeArg converts a timestamp to the value bound for a time column.
	timeArg func(time.Time) any
}

// sqliteTimeLayout is fixed width, so stored timestamps sort as text.
const sqliteTimeLayout = "2006-01-02T15:04:05.000000Z"

var (
	sqliteDialect = dialect{
		name:       "sqlite",
		migrations: "migrations/sqlite",
		readTx:     &sql.TxOptions{ReadOnly: true},
		timeArg:    func(t time.Time) any { return t.UTC().Format(sqliteTimeLayout) },
	}
	postgresDialect = dialect{
		name:       "postgres",
		migrations: "migrations/postgres",
		readTx:     &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead},
		timeArg:    func(t time.Time) any { return t.UTC() },
	}
)

// now is the store's clock: UTC at the microsecond, the precision both
// databases keep, so a value read back compares equal to the one written.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// normTime brings a caller's timestamp to the stored precision.
func normTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// timeCol scans a time column of either dialect into a UTC time.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		*c.t = v.UTC()
	case string:
		return c.parse(v)
	case []byte:
		return c.parse(string(v))
	case nil:
		*c.t = time.Time{}
	default:
		return fmt.Errorf("scan time: unexpected %T", src)
	}
	return nil
}

func (c timeCol) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("scan time: %w", err)
	}
	*c.t = t.UTC()
	return nil
}
