package model

// ListQuery selects the existing objects of a kind an export lists
// (Puppet's get, whole or filtered by name).
type ListQuery struct {
	// Dir is the directory listed by the file and directory kinds, as a
	// spec would write it (inside the node's root on a local node).
	Dir string `json:"dir,omitempty"`
	// Names, when given, are the only objects wanted: paths relative to
	// Dir. Names that do not exist are left out.
	Names []string `json:"names,omitempty"`
	// Recursive descends into subdirectories.
	Recursive bool `json:"recursive,omitempty"`
	// Spec configures kinds that need it to list anything (which program
	// an external kind runs, which API an http kind talks to).
	Spec Spec `json:"spec,omitempty"`
	// IDs, when given, keep only the objects of these platform ids
	// (Listed.ID); ids no object has are left out.
	IDs []string `json:"ids,omitempty"`
	// Labels, when given, keep only the objects linked to one of these
	// platform labels (Listed.Labels).
	Labels []string `json:"labels,omitempty"`
}

// Listed is one existing object in the form of a resource: a name and the
// spec that would reproduce it.
type Listed struct {
	Name string `json:"name"`
	// ID is the object's id on its platform, for kinds whose objects have
	// one (an http object's id, an external instance's id or name).
	ID string `json:"id,omitempty"`
	// Labels are the ids of the platform's labels the object is linked
	// to, for kinds that know them (an http object's links), and
	// LabelNames their names where the platform says them: a label
	// selector matches either.
	Labels     []string `json:"labels,omitempty"`
	LabelNames []string `json:"labelNames,omitempty"`
	Spec       Spec     `json:"spec"`
}
