// Package registration fuzzes the device plugin registration check against
// an independent, regular-expression statement of upstream's rules. It is a
// lean package of its own, without testify, for the reasons given in
// fuzz/doc.go.
package registration
