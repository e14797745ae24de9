// Package plugincheck is `nodeproof plugin-check`: it plays the kubelet
// against a device plugin (agent/plugincheck), starting and stopping the
// plugin for --exec, prints the run's summary and writes its report with
// --out.
package plugincheck
