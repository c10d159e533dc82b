package judge

import "sync"

// MemCache is an in-memory Cache. The zero value is ready to use.
type MemCache struct {
	mu sync.Mutex // guards m
	m  map[string]Result
}

// Get implements [Cache].
func (c *MemCache) Get(key string) (Result, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[key]
	return r, ok, nil
}

// Put implements [Cache].
func (c *MemCache) Put(key string, r Result) error {
	if !r.Decided {
		return ErrUndecided
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]Result{}
	}
	c.m[key] = r
	return nil
}

// Len returns the number of entries.
func (c *MemCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
