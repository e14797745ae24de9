// Package commands is nodeproof's command tree with what each command runs
// in production: the suites, the simulation, upstream's findings, the
// campaign's recorder that keeps a shard's runs as report sections. Tests
// of a single command build it from its own package with stand-ins;
// cmd/nodeproof only hands All to cli.Execute.
package commands
