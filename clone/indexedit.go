package clone

// Exported forms of the byte-preserving sessions-index.json edits, for the
// planners of other packages (rm, archive, restore).

// ReadIndex reads a folder's sessions-index.json: nil and no error when
// there is none, an error when it cannot be parsed.
func ReadIndex(path string) ([]byte, error) { return readIndex(path) }

// IndexEntry returns the raw bytes of the entry of session id, or nil.
func IndexEntry(raw []byte, id string) []byte { return indexEntry(raw, id) }

// IndexRemove removes the entry of session id; it reports whether there
// was one.
func IndexRemove(raw []byte, id string) ([]byte, bool, error) { return indexRemove(raw, id) }

// IndexAppend adds entries (JSON objects) at the end of the entries array.
func IndexAppend(raw []byte, add [][]byte) ([]byte, error) { return indexAppend(raw, add) }
