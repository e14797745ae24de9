package verify

import "fmt"

// Kind says what a property is measured against.
type Kind int

const (
	// Fidelity: the property states what upstream's kubelet (or nodeproof's
	// plainly written model of it) does, and nodeproof's core must match it.
	Fidelity Kind = iota
	// Contract: the property states what Kubernetes promises its users, in
	// the documentation, the API reference or a KEP.
	Contract
)

// String is the kind's name as the catalogue, the report and report.json
// spell it.
func (k Kind) String() string {
	switch k {
	case Fidelity:
		return "fidelity"
	case Contract:
		return "contract"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// MarshalText writes the kind by name in JSON.
func (k Kind) MarshalText() ([]byte, error) {
	switch k {
	case Fidelity, Contract:
		return []byte(k.String()), nil
	}
	return nil, fmt.Errorf("kind %d is neither fidelity nor contract", int(k))
}

// UnmarshalText reads a kind by name, refusing any other word.
func (k *Kind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "fidelity":
		*k = Fidelity
	case "contract":
		*k = Contract
	default:
		return fmt.Errorf("kind %q: want fidelity or contract", b)
	}
	return nil
}
