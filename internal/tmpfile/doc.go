// Package tmpfile names, creates and sweeps the hidden temporary files a
// flush writes a file through before renaming it into place, and makes
// the random suffix (Suffix) that ends both their names and the files'.
//
// A temporary of a file named prefix+… is "." + prefix + pid + "-" + six
// random letters or digits + ".tmp", where pid is the writer's process
// id (Create). Its writer holds an exclusive flock(2) on it from creation
// until it has renamed (or removed) it and closed it. A process killed
// mid-flush (SIGKILL, the OOM killer, a machine crash) leaves its
// temporary behind; the kernel releases its lock.
//
// Sweep (and RemoveStale, for a caller that reads the directory itself)
// removes a temporary of prefix only when all of these hold:
//
//   - nobody holds its lock. A live writer does, from before its first
//     byte to after its rename; locks are the kernel's, so this holds
//     across processes, sessions with the same prefix, pid namespaces
//     (containers sharing a volume), and on NFS where locks reach the
//     server (the sweep opens a temporary for writing, as an emulated
//     flock needs). A file system that refuses locks leaves every temporary in
//     place.
//   - its writer is gone: no process here has its pid (kill(pid, 0) says
//     ESRCH), or the pid is the sweeper's own (its own writers hold their
//     locks, so an unlocked temporary with its pid is a predecessor's: a
//     container restarted as pid 1 after a crash), or the file was last
//     modified StaleAge ago or more. The last case is for a pid reused
//     since, or one of another pid namespace that happens to run here: no
//     flush leaves its temporary untouched for an hour, since it writes it
//     from start to end and then syncs and renames it.
//
// The lock is what protects a live writer; the pid and the age are a
// second, independent sign, which matters where a file system's locks do
// not reach other machines (NFS mounted with local_lock or nolock): there
// a writer on another machine whose pid does not run here, or is the
// sweeper's own (containers whose process is pid 1 share every pid), can
// lose its temporary, and then its rename fails and its flush returns the
// error. Do not share such a directory between machines. No file is ever
// reported written that is not.
//
// Create closes the window between creating a file and locking it: after
// locking, it checks that the name still leads to the file it locked and
// tries another name if a sweep removed it meanwhile.
package tmpfile
