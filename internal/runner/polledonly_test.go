package runner

import "testing"

// driverDB is a remote DB on the driver client: its sockets are Go's.
type driverDB struct{ kindDB }

func (driverDB) PolledOnly() bool { return true }

// TestDriverClientPlansPolledIO: a DB whose connections wait through Go's
// poller whatever they are told (client = "driver") is planned as polled
// IO at any worker count, so no worker locks a thread to wait in the
// poller and its results record client_polled_io = 1.
func TestDriverClientPlansPolledIO(t *testing.T) {
	for _, total := range []int{1, 2, 64} {
		if got := planIO(driverDB{kindDB{remote: true}}, total, 2, 2); !got.polled || got.lockThreads {
			t.Errorf("%d workers on the driver client: %+v; want polled IO, no locked threads", total, got)
		}
	}
	if got := planIO(kindDB{remote: true}, 1, 2, 2); got.polled {
		t.Errorf("1 worker on the fast client: %+v; want blocking reads", got)
	}
}
