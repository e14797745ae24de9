package frontier

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// registerOp is an operation on one integer register: a write of Value, or
// a read that answered Value. A write with Lost set may or may not have
// happened, which makes the model nondeterministic as the device agent's is.
type registerOp struct {
	Write bool
	Value int
	Lost  bool
}

// register is the model: the register's value; a read must see it.
var register = porcupine.NondeterministicModel{
	Init: func() []any { return []any{0} },
	Step: func(state, in, _ any) []any {
		op := in.(registerOp)
		switch {
		case op.Write && op.Lost:
			return []any{state, op.Value}
		case op.Write:
			return []any{op.Value}
		case op.Value == state.(int):
			return []any{state}
		}
		return nil
	},
}

// randomRegisterHistory makes a history of n operations from the given
// number of clients, each client's operations one after the other, with
// random values, so that some histories are linearizable and most are not.
func randomRegisterHistory(rng *rand.Rand, n, clients int) []porcupine.Operation {
	cursor := make([]int64, clients)
	history := make([]porcupine.Operation, 0, n)
	for range n {
		c := rng.IntN(clients)
		call := cursor[c] + rng.Int64N(5)
		ret := call + rng.Int64N(20)
		cursor[c] = ret + 1
		op := registerOp{Write: rng.IntN(2) == 0, Value: rng.IntN(3), Lost: rng.IntN(8) == 0}
		op.Lost = op.Lost && op.Write
		history = append(history, porcupine.Operation{ClientId: c, Input: op, Output: nil, Call: call, Return: ret})
	}
	return history
}

// TestAgreesWithPorcupineOnARegister holds Check to porcupine's verdict on
// random histories of a register, whose reads are the filters: once with
// no filters (the search differs from porcupine's only in its order and
// its memo) and once with every read marked a filter, which is right for
// this model (a read changes no state, in any state). Each is run without
// a hash, with one that tells every value apart, and with one that makes
// half the values collide, so that Equal must tell them apart.
func TestAgreesWithPorcupineOnARegister(t *testing.T) {
	exact, colliding := register, register
	exact.Hash = func(state any) uint64 { return uint64(state.(int)) }
	colliding.Hash = func(state any) uint64 { return uint64(state.(int) % 2) }
	models := map[string]porcupine.NondeterministicModel{"no hash": register, "exact hash": exact, "colliding hash": colliding}
	reads := func(partition []porcupine.Operation) []bool {
		marks := make([]bool, len(partition))
		for i, op := range partition {
			marks[i] = !op.Input.(registerOp).Write
		}
		return marks
	}
	verdicts := map[porcupine.CheckResult]int{}
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 3))
		history := randomRegisterHistory(rng, 2+rng.IntN(14), 1+rng.IntN(4))
		want := porcupine.CheckOperationsTimeout(register.ToModel(), history, 10*time.Second)
		require.NotEqual(t, porcupine.Unknown, want, "seed %d: porcupine ran out of time", seed)
		for name, model := range models {
			assert.Equal(t, want, Check(model, nil, history, 10*time.Second), "seed %d, %s, no filters", seed, name)
			assert.Equal(t, want, Check(model, reads, history, 10*time.Second), "seed %d, %s, reads as filters", seed, name)
		}
		verdicts[want]++
	}
	assert.Greater(t, verdicts[porcupine.Ok], 40, "linearizable histories")
	assert.Greater(t, verdicts[porcupine.Illegal], 40, "illegal histories")
}

// TestWrongFilterMarksCanOnlyRefuse shows what the Filters contract
// guards: marking a write a filter can make a linearizable history illegal.
// A write of the value the register holds changes nothing and returns
// first, so it is tried first and placed for good; but the history needs it
// after the other write.
func TestWrongFilterMarksCanOnlyRefuse(t *testing.T) {
	history := []porcupine.Operation{
		{ClientId: 0, Input: registerOp{Write: true, Value: 0}, Call: 0, Return: 15},
		{ClientId: 1, Input: registerOp{Write: true, Value: 1}, Call: 10, Return: 20},
		{ClientId: 1, Input: registerOp{Value: 0}, Call: 150, Return: 160},
	}
	everything := func(partition []porcupine.Operation) []bool {
		marks := make([]bool, len(partition))
		for i := range marks {
			marks[i] = true
		}
		return marks
	}
	require.Equal(t, porcupine.Ok, porcupine.CheckOperationsTimeout(register.ToModel(), history, 0), "porcupine")
	assert.Equal(t, porcupine.Ok, Check(register, nil, history, time.Second), "no filters")
	assert.Equal(t, porcupine.Illegal, Check(register, everything, history, time.Second), "every operation a filter")
}

// TestTimeout answers Unknown when the search cannot end in time.
func TestTimeout(t *testing.T) {
	// Many overlapping lost writes and reads that no order explains make
	// the search try every subset before it gives up.
	var history []porcupine.Operation
	for i := range 60 {
		history = append(history, porcupine.Operation{ClientId: i, Input: registerOp{Write: true, Value: i % 7, Lost: true}, Call: 0, Return: 1000})
	}
	history = append(history, porcupine.Operation{ClientId: 61, Input: registerOp{Value: 99}, Call: 0, Return: 1000})
	assert.Equal(t, porcupine.Unknown, Check(register, nil, history, time.Millisecond))
}
