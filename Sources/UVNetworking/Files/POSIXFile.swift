#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The file calls uploads, downloads and multipart bodies share. Plain POSIX rather than
/// FileHandle: every failure has an errno (which picks the error code), nothing is read whole,
/// and every call runs where its caller runs: a worker thread, or the caller's thread when a
/// task is made; never the loop.
enum POSIXFile {
    /// What `stat(2)` says about a path.
    struct Status {
        var isRegularFile: Bool
        var isDirectory: Bool
        var size: Int64
    }

    /// The path's status, or nil with errno set.
    static func status(atPath path: String) -> Status? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return status(info)
    }

    /// The status of the open descriptor `fd`, or nil with errno set.
    static func status(of fd: Int32) -> Status? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return status(info)
    }

    private static func status(_ info: stat) -> Status {
        Status(isRegularFile: info.st_mode & S_IFMT == S_IFREG, isDirectory: info.st_mode & S_IFMT == S_IFDIR,
               size: Int64(info.st_size))
    }

    /// A read-only, close-on-exec descriptor, or -1 with errno set.
    static func openForReading(_ path: String) -> Int32 {
        open(path, O_RDONLY | O_CLOEXEC)
    }

    /// A write-only, close-on-exec descriptor; `create` makes the file (owner-only, 0600) or
    /// empties an existing one. -1 with errno set on failure.
    static func openForWriting(_ path: String, create: Bool) -> Int32 {
        create ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) : open(path, O_WRONLY | O_CLOEXEC)
    }

    /// An unnamed regular file in `directory` (Linux's O_TMPFILE), write-only, owner-only: it is
    /// gone when its descriptor is closed, or when the process ends however it ends, unless
    /// `link(unnamed:to:)` gave it a name first. -1 where that cannot be (a file system without
    /// O_TMPFILE, no /proc to name it through): the caller makes a named file instead.
    static func openUnnamed(inDirectory directory: String) -> Int32 {
        #if os(Linux)
        guard canNameUnnamedFiles else { return -1 }
        // O_TMPFILE is __O_TMPFILE | O_DIRECTORY; Swift does not import the macro.
        return open(directory, O_WRONLY | O_CLOEXEC | O_DIRECTORY | 0o20000000, 0o600)
        #else
        return -1
        #endif
    }

    /// Unnamed files are named through their /proc/self/fd entry (linkat with AT_EMPTY_PATH would
    /// need CAP_DAC_READ_SEARCH).
    private static let canNameUnnamedFiles = access("/proc/self/fd", F_OK) == 0

    /// Gives the unnamed file open as `fd` the name `path`, replacing a file of that name; the
    /// errno on failure.
    static func link(unnamed fd: Int32, to path: String) -> Int32? {
        let source = "/proc/self/fd/\(fd)"
        if linkat(AT_FDCWD, source, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 { return nil }
        guard errno == EEXIST else { return errno }
        // A resumed download that started over: its new body replaces the partial file.
        _ = unlink(path)
        return linkat(AT_FDCWD, source, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 ? nil : errno
    }

    /// close(2), for types whose own `close()` hides it; returns the errno on failure.
    @discardableResult
    static func closeDescriptor(_ fd: Int32) -> Int32? {
        close(fd) == 0 ? nil : errno
    }

    /// read(2) retried on EINTR: bytes read, 0 at end of file, -1 with errno set.
    static func readSome(_ fd: Int32, into pointer: UnsafeMutableRawPointer, count: Int) -> Int {
        while true {
            let result = read(fd, pointer, count)
            if result >= 0 || errno != EINTR { return result }
        }
    }

    /// write(2) of all `count` bytes, retried on EINTR and short writes; false with errno set on
    /// failure.
    static func writeAll(_ fd: Int32, _ pointer: UnsafeRawPointer, count: Int) -> Bool {
        var done = 0
        while done < count {
            let result = write(fd, pointer + done, count - done)
            if result < 0 {
                if errno == EINTR { continue }
                return false
            }
            done += result
        }
        return true
    }

    /// Cuts the open file to `length` bytes and puts the write position there; the errno on
    /// failure.
    static func truncateAndSeek(_ fd: Int32, to length: Int64) -> Int32? {
        guard ftruncate(fd, off_t(length)) == 0, lseek(fd, off_t(length), SEEK_SET) == off_t(length) else { return errno }
        return nil
    }

    /// Removes the file at `path`; a file that is already gone is not an error.
    static func remove(_ path: String) {
        _ = unlink(path)
    }

    /// The system's text for `code`.
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
