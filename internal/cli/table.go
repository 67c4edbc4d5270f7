package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// printTable prints rows in the boxed format of cliff/prettytable, which the
// Magnum management commands use.
func printTable(w io.Writer, header []string, rows [][]string) {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if n := utf8.RuneCountInString(c); n > widths[i] {
				widths[i] = n
			}
		}
	}
	sep := "+"
	for _, n := range widths {
		sep += strings.Repeat("-", n+2) + "+"
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range cells {
			b.WriteString(" " + c + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)) + " |")
		}
		fmt.Fprintln(w, b.String())
	}
	fmt.Fprintln(w, sep)
	line(header)
	fmt.Fprintln(w, sep)
	for _, r := range rows {
		line(r)
	}
	fmt.Fprintln(w, sep)
}
