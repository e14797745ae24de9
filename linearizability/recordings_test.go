package linearizability

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/anishathalye/porcupine"

	"github.com/nodeproof/nodeproof/models/deviceagent"
)

// recordingsDir keeps BenchmarkCheckRecorded's recordings between runs:
// recording 10^5 operations through sockets takes minutes, checking one
// seconds, and a profile of the check is comparable only on one history.
var recordingsDir = flag.String("lin.recordings", "", "directory where BenchmarkCheckRecorded reads each recording if present and writes it otherwise (default: record afresh)")

// savedRecording is a Recording as JSON: porcupine's operations hold the
// model's types behind interfaces, which JSON cannot read back.
type savedRecording struct {
	Workload Workload
	Initial  map[string][]deviceagent.Device
	Clients  int
	Unknown  int
	History  []savedOperation
}

type savedOperation struct {
	ClientID     int
	Input        deviceagent.Input
	Output       deviceagent.Output
	Call, Return int64
}

// recordOrLoad records w, or reads the recording of w that an earlier run
// left in *recordingsDir.
func recordOrLoad(w Workload) (Recording, error) {
	if *recordingsDir == "" {
		return Record(context.Background(), w)
	}
	path := filepath.Join(*recordingsDir, fmt.Sprintf("seed-%d-pods-%d-ops-%d.json", w.Seed, w.PodClients, w.OpsPerClient))
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		rec, err := Record(context.Background(), w)
		if err != nil {
			return rec, err
		}
		saved := savedRecording{Workload: rec.Workload, Initial: rec.Initial, Clients: rec.Clients, Unknown: rec.Unknown}
		saved.Workload.Logger = nil
		for _, op := range rec.History {
			saved.History = append(saved.History, savedOperation{op.ClientId, op.Input.(deviceagent.Input), op.Output.(deviceagent.Output), op.Call, op.Return})
		}
		data, err := json.Marshal(saved)
		if err != nil {
			return rec, err
		}
		return rec, os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		return Recording{}, err
	}
	var saved savedRecording
	if err := json.Unmarshal(data, &saved); err != nil {
		return Recording{}, fmt.Errorf("%s: %w", path, err)
	}
	rec := Recording{Workload: saved.Workload, Init: deviceagent.Init(saved.Initial), Initial: saved.Initial, Clients: saved.Clients, Unknown: saved.Unknown}
	for _, op := range saved.History {
		rec.History = append(rec.History, porcupine.Operation{ClientId: op.ClientID, Input: op.Input, Output: op.Output, Call: op.Call, Return: op.Return})
	}
	return rec, nil
}
