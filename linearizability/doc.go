// Package linearizability checks that the device plugin agent behaves as if
// concurrent clients' operations happened one at a time, in an order that
// respects real time: clients drive a real agent and real test plugins over
// Unix sockets, every operation is recorded with its call and return times,
// and porcupine checks the history against models/deviceagent.
//
// The glue here turns recorded operations into porcupine's (Split, the
// partitioning) and writes the visualization of a failed check; the tests
// make the histories.
package linearizability
