package engine

// ProviderFor is the provider that runs n: the node's own (a council
// member's), else the quest's provider for n's role, else the quest's.
func (q *Quest) ProviderFor(n *Node) string {
	if n.Provider != "" {
		return n.Provider
	}
	if p := q.RoleProviders[n.Role]; p != "" {
		return p
	}
	return q.Provider
}
