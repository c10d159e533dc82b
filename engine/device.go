package engine

// RecordDeviceEvent appends a device event (button press, network or
// broker up and down) to the outbox: one commit, shared with the writes
// that arrive at the same time.
func (e *Engine) RecordDeviceEvent(d DeviceEvent) error {
	if err := d.Check(); err != nil {
		return err
	}
	return e.batch(func(t *txn) error {
		return t.Emit(Event{Kind: KindDevice, Outcome: d.What, Detail: d.Summary(), Device: &d})
	}, nil)
}
