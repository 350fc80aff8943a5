package engine

import (
	"database/sql/driver"
	"fmt"
	"io"
	"time"
)

// DrainRows reads every row of a database/sql/driver result, of all its
// result sets (a procedure's CALL answers with one per SELECT), and returns
// how many there were, then closes it. Rows are read into *buf, which is
// grown and kept for the next call when buf is not nil, so that a prepared
// statement's repeated executions allocate nothing here.
func DrainRows(rows driver.Rows, buf *[]driver.Value) (int64, error) {
	var n int64
	for {
		dest := rowBuffer(len(rows.Columns()), buf)
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
		more, err := nextResultSet(rows)
		if err != nil {
			rows.Close()
			return n, err
		}
		if !more {
			return n, rows.Close()
		}
	}
}

// rowBuffer is a row of ncol values, *buf's when it is large enough (and
// then kept in *buf when buf is not nil).
func rowBuffer(ncol int, buf *[]driver.Value) []driver.Value {
	if buf != nil && cap(*buf) >= ncol {
		return (*buf)[:ncol]
	}
	dest := make([]driver.Value, ncol)
	if buf != nil {
		*buf = dest
	}
	return dest
}

// nextResultSet moves rows to its next result set and reports whether there
// was one.
func nextResultSet(rows driver.Rows) (bool, error) {
	rs, ok := rows.(driver.RowsNextResultSet)
	if !ok || !rs.HasNextResultSet() {
		return false, nil
	}
	switch err := rs.NextResultSet(); err {
	case nil:
		return true, nil
	case io.EOF:
		return false, nil
	default:
		return false, fmt.Errorf("next result set: %w", err)
	}
}

// ReadValues reads every row of a database/sql/driver result, of all its
// result sets, as text (NULL as "") and closes it; see Conn.Values.
func ReadValues(rows driver.Rows) ([][]string, error) {
	defer rows.Close()
	var out [][]string
	for {
		dest := make([]driver.Value, len(rows.Columns()))
		for {
			err := rows.Next(dest)
			if err == io.EOF {
				break
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
		if more, err := nextResultSet(rows); err != nil || !more {
			return out, err
		}
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
