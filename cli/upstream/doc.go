// Package upstream is `nodeproof upstream`: it runs the conformance module
// against upstream kubelet releases and prints and writes the release
// matrix (package upstream holds the logic).
package upstream
