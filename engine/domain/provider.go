package domain

// ProviderExternal is the built-in provider that spawns nothing: an outside
// agent pulls work with Next and answers with Submit.
const ProviderExternal = "external"
