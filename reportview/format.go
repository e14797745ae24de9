package reportview

// orDash writes an empty string as "-".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
