package engine

// SealExport signs batch b, whose lines (each ending in "\n") the export
// writes, with the device key (ledger.Box.SealBatch). A box that has no
// key, or does not sign its ledger's heads, returns the seal unsigned,
// saying why.
func (e *Engine) SealExport(b ExportBatch, lines []string) ExportSeal {
	return e.store.box.SealBatch(b.Quest, b.From, b.Upto, b.Head(), lines)
}
