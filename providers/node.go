package providers

// Node is where a step runs. Root confines every relative path and a
// command's working directory; "" means the control plane with absolute
// paths taken as given.
type Node struct {
	Name string `json:"name"`
	Root string `json:"root,omitempty"`
}
