// Package frontier decides whether a history is linearizable with respect
// to a nondeterministic sequential model, the question porcupine answers,
// with memory that grows linearly with the history's length.
//
// The search is porcupine's (Lowe's refinement of Wing and Gong's): walk
// the calls and returns in time order, linearize the first call that the
// model accepts, backtrack at a return whose operation is not linearized
// yet, and remember every (set of linearized operations, state) visited so
// that no such pair is searched twice. The difference is how a set is
// remembered. Porcupine keeps a bitset as long as the history per pair, so
// its memory and the time to hash and copy it grow with the square of the
// history. Here a set is named by its frontier: the latest operation (in
// call order) it holds and the holes below it, the operations called
// earlier that it does not hold. Every hole is an operation still pending
// when the latest one was called, so a frontier is about as long as the
// number of clients, however long the history.
//
// The package knows nothing of the model: it takes porcupine's
// NondeterministicModel and Operation, so the same model and history can
// go to both checkers, and the tests of package linearizability show that
// the two agree on many histories, linearizable and not.
package frontier
