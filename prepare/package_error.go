package prepare

import "errors"

// PackageError is a failure of a package run that no retry fixes: a stack,
// cluster or snapshot that is not there, a package that does not load or
// plan. Its message is what the execution reports. Store failures are
// never a PackageError: retrying may help them.
type PackageError struct{ msg string }

func (e *PackageError) Error() string { return e.msg }

func packageError(msg string) error { return &PackageError{msg: msg} }

// IsPackageError reports whether err is (or wraps) a PackageError.
func IsPackageError(err error) bool {
	var pe *PackageError
	return errors.As(err, &pe)
}
