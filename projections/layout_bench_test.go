package projections

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

// echoRecords are the records an echo run adds to the runtime projection file, bucket by
// bucket, with their sizes there (a file of 39,000 echo runs: each bucket's bytes in use over its
// keys).
var echoRecords = []struct {
	bucket string
	n      int // records of one run
	size   int // bytes each
}{
	{"threads", 1, 405}, {"thread_values", 1, 383}, {"thread_heads", 1, 96}, {"runs", 1, 1080},
	{"run_index", 1, 96}, {"run_state", 1, 135}, {"checkpoints", 3, 865}, {"checkpoint_blobs", 5, 220},
	{"_versions", 1, 75},
}

// BenchmarkBucketLayout measures what storing an echo run's records costs in bbolt as the
// runtime projection lays them out (a bucket per kind of record, ten touched a run with the
// stream's cursor), against the same records in one bucket with the run's keys side by side
// ("together": a thread's records stored together), by how many runs a write transaction holds
// (the runtime projector's hold about 2.4 at 16 clients). Bytes and keys are the projection's,
// the folds are left out: it prices the layout alone, a design not built (README, Performance).
//
//	go test ./projections -run '^$' -bench BucketLayout -benchtime 3000x
func BenchmarkBucketLayout(b *testing.B) {
	value := make([]byte, 2048)
	for i := range value {
		value[i] = byte(i * 7) // not all zeros, as no record is
	}
	for _, together := range []bool{false, true} {
		for _, perTx := range []int{1, 2, 4, 16} {
			b.Run(fmt.Sprintf("together=%v/runs-per-tx=%d", together, perTx), func(b *testing.B) {
				db, err := bbolt.Open(filepath.Join(b.TempDir(), "layout.db"), 0o600,
					&bbolt.Options{NoFreelistSync: true, FreelistType: bbolt.FreelistMapType, NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				run := uint64(1)
				add := func(runs int) {
					err := db.Update(func(tx *bbolt.Tx) error {
						for range runs {
							if err := putEchoRun(tx, run, together, value); err != nil {
								return err
							}
							run++
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				for range 400 {
					add(100) // a file of 40,000 runs, as after a few minutes of load
				}
				before := db.Stats()
				b.ResetTimer()
				for range b.N {
					add(perTx)
				}
				b.StopTimer()
				after := db.Stats()
				tx := after.TxStats.Sub(&before.TxStats)
				runs := float64(b.N * perTx)
				b.ReportMetric(float64(b.Elapsed().Microseconds())/runs, "µs/run")
				b.ReportMetric(float64(tx.GetWrite())/runs, "writes/run")
			})
		}
	}
}

// putEchoRun stores the records of echo run number run: under a key of the run's thread (a
// time-ordered id, so a new run's keys come last, as UUIDv7 ids do), in a bucket of their kind or,
// together, in one bucket after a byte naming their kind. The stream's cursor is written too.
func putEchoRun(tx *bbolt.Tx, run uint64, together bool, value []byte) error {
	for kind, r := range echoRecords {
		name := r.bucket
		if together {
			name = "together"
		}
		bk, err := tx.CreateBucketIfNotExists([]byte(name))
		if err != nil {
			return err
		}
		for i := range r.n {
			key := binary.BigEndian.AppendUint64([]byte("default\x00"), run)
			key = append(key, make([]byte, 8)...) // the rest of a 16-byte id
			if together {
				key = append(key, byte(kind))
			}
			if err := bk.Put(append(key, byte(i)), value[:r.size]); err != nil {
				return err
			}
		}
	}
	cursors, err := tx.CreateBucketIfNotExists([]byte("_cursors"))
	if err != nil {
		return err
	}
	return cursors.Put([]byte("JG_RUNTIME"), binary.BigEndian.AppendUint64(nil, run))
}
