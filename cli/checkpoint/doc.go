// Package checkpoint is `nodeproof checkpoint FILE`: it reads a device
// manager checkpoint file, or stdin, and prints what agent/checkpointfile
// finds in it, as text or JSON, with an exit status a script can act on.
package checkpoint
