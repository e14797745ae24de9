// Package fuzz holds nodeproof's native Go fuzz targets and the cross-checks
// of core codecs against the real libraries they imitate.
package fuzz
