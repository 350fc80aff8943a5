package engine

import (
	"database/sql/driver"
	"fmt"
	"io"
	"time"
)

// DrainRows reads every row of a database/sql/driver result and returns how
// many there were, then closes it. Rows are read into *buf, which is grown
// and kept for the next call when buf is not nil, so that a prepared
// statement's repeated executions allocate nothing here.
func DrainRows(rows driver.Rows, buf *[]driver.Value) (int64, error) {
	ncol := len(rows.Columns())
	var dest []driver.Value
	if buf != nil && cap(*buf) >= ncol {
		dest = (*buf)[:ncol]
	} else {
		dest = make([]driver.Value, ncol)
		if buf != nil {
			*buf = dest
		}
	}
	var n int64
	for {
		err := rows.Next(dest)
		if err == io.EOF {
			break
		}
		if err != nil {
			rows.Close()
			return n, err
		}
		n++
	}
	return n, rows.Close()
}

// ReadValues reads every row of a database/sql/driver result as text (NULL
// as "") and closes it; see Conn.Values.
func ReadValues(rows driver.Rows) ([][]string, error) {
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	var out [][]string
	for {
		err := rows.Next(dest)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		row := make([]string, len(dest))
		for i, v := range dest {
			row[i] = Text(v)
		}
		out = append(out, row)
	}
}

// Text renders a driver value as the text a client would print: NULL as "",
// bytes as a string, times as "2006-01-02 15:04:05".
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	case time.Time:
		return x.Format("2006-01-02 15:04:05")
	default:
		return fmt.Sprint(x)
	}
}
