// Package registration fuzzes the device plugin registration check against
// an independent, regular-expression statement of upstream's rules. It is a
// lean package of its own for the reason given in fuzz/checkpointdecode.
package registration
