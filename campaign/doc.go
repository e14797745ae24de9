// Package campaign splits a long verification run across many machines and
// puts it back together: `nodeproof campaign` runs one shard, `nodeproof
// report --merge` merges the shards into one report.
//
// A Plan (read strictly, as every manifest is, by agent/manifest) names what
// the whole campaign runs: simulation seeds, property suites at a budget of
// their own from a range of seeds, and native fuzz targets from prebuilt test
// binaries. Resolve makes every choice (suite names and fuzz targets listed,
// ranges read), so that the Resolved plan alone decides the Units, and each
// shard records it. The units are dealt round-robin (ShardUnits): each unit
// falls in exactly one shard, and every shard gets a like mix.
//
// Run runs one shard's units in plan order. The fuzz targets are the
// campaign's own (RunFuzz); the simulation seeds and suite runs go through a
// Recorder, which keeps them in the report's schema: the "suites" and "sim"
// keys of a shard file are report.json's own sections, whose types the
// report owns. The Recorder is the one seam between the two packages, so
// that the campaign never depends on how the report shows a suite.
//
// Merge reads the shard files of a results directory (again through the
// report, which decodes its sections and hands back a Record), checks that
// together they are one whole campaign (one plan, one build, each shard once,
// each unit in its own shard's share) and returns the Section report.json
// shows under "campaign": one row per shard, every failure with the shard
// that found it and its replay line, the fuzz targets.
package campaign
