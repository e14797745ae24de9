// Package phrase writes counts in words for messages, reports and verdicts
// ("1 finding", "3 findings"), so that every command and report says them
// the same way. It is pure: no I/O, usable from any layer.
package phrase
