package domain

// VendorLocal is the vendor of a provider on the box or the LAN: prompts
// to it are never redacted, and every quest allows it unless its egress
// says otherwise.
const VendorLocal = "local"
