// Package linearizability checks that the device plugin agent behaves as if
// concurrent clients' operations happened one at a time, in an order that
// respects real time: clients drive a real agent and real test plugins over
// Unix sockets, every operation is recorded with its call and return times,
// and porcupine checks the history against models/deviceagent.
//
// Record makes one history and CheckRecording checks it; RecordHistories
// does both for the default seeds and writes the visualizations, which is
// what `nodeproof report` runs in-process and the tests run under go test.
package linearizability
