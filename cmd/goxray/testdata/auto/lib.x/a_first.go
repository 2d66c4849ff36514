package lib

// First is initialized, in the first file of the package, by a function
// declared in its last file: the ids of that file must exist already.
var First = late()
