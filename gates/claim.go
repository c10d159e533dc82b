package gates

import (
	"crypto/sha256"
	"encoding/hex"
)

// ClaimHash returns the lower-case hex SHA-256 of the raw answer, exactly as
// received. L3 consent is bound to this hash: if a single byte of the claim
// changes, the hash changes and an earlier consent no longer applies.
func ClaimHash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
