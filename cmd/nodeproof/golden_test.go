package main

import "flag"

// update rewrites the package's golden files (testdata/admit,
// testdata/cgroups, testdata/checkpoint) from what the code produces now,
// as -update does in every package of the module that keeps golden files.
// Look at the diff before committing it.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current output")
