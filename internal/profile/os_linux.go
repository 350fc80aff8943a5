package profile

// errNotLinux is nil: perf record runs here.
var errNotLinux error
