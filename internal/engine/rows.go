package engine

import (
	"database/sql/driver"
	"io"
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
