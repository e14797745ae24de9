// Package cite names where an invariant comes from, in a form a reviewer can
// follow from the catalogue and the report: upstream Kubernetes code and API
// definitions at the release tag nodeproof reproduces, upstream issues, pull requests and KEPs,
// sections of the seed articles (named in English and not linked, because the
// articles are not public) and nodeproof's own documents, linked relative to
// the repository root.
//
// Sources are plain values built with the constructors (Code, API, Issue, PR,
// KEP, Seed, Doc). Validate says whether one is well formed, so that a test can hold
// every invariant's sources to the same rules.
package cite
