// Package report turns stored results into typed tables and renders them as
// text (with terminal colours) or Markdown. Building a table and formatting it
// are separate: renderers only format.
package report

// Report is everything shown for one experiment.
type Report struct {
	Title string
	// Summary is what a busy reader reads first: what changed beyond
	// noise, by how much, how sure, and the strongest reason measured.
	Summary []string
	// Header lines describe what ran: experiment, targets, host, preset.
	Header []string
	Tables []Table
	// Notes are warnings and caveats shown after the tables.
	Notes []string
}

// toneMark is the sign shown after a toned value, so the tone does not rely
// on colour alone.
func toneMark(t Tone) string {
	switch t {
	case ToneGood:
		return "+"
	case ToneBad:
		return "-"
	case ToneIgnore:
		return "x"
	}
	return ""
}
