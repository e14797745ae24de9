// Package phrase writes counts in words for messages, reports and verdicts
// ("1 finding", "3 findings"), and figures (rates, statistics, seconds in
// JSON) with the same precision, so that every command and report says
// them the same way. It is pure: no I/O, usable from any layer.
package phrase
