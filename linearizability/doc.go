// Package linearizability checks that the device plugin agent behaves as if
// concurrent clients' operations happened one at a time, in an order that
// respects real time: clients drive a real agent and real test plugins over
// Unix sockets, every operation is recorded with its call and return times,
// and the history is checked against models/deviceagent: by the frontier
// checker (package linearizability/frontier), which answers what porcupine
// answers in about linear time and is cross-checked against it, while
// porcupine draws the visualization of a failure.
//
// Record makes one history and CheckRecording checks it; RecordHistories
// does both for the default seeds and writes the visualizations, which is
// what `nodeproof report` runs in-process and the tests run under go test.
package linearizability
